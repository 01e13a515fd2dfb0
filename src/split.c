/*
** split.c -- cutting a large program into groups of consecutive statements.
**
** Compilers take time superlinear in the size of one function or loop body
** (LLVM's schedulers, NVRTC's alias analysis over many arrays), so a large
** program compiles in time quadratic in its size.  The back ends cut a
** program above a budget into groups, each compiled as its own function or
** kernel and run over the elements one group after another.  Every element
** still sees the statements in program order: arrays do not overlap, element
** i touches only element i of each array, and a group runs over a range of
** elements before the next group starts on it.  What crosses groups is the
** temporaries computed by one group and read by a later one: the back ends
** keep those in scratch memory, one value per element of the range; and
** the running state of the reductions, which each back end keeps between
** its group's calls and finishes group by group, so that no function or
** kernel holds more than one group's reductions.
*/
#include "jitc_int.h"

#include <stdlib.h>

/* A statement's cost: its node count, integer power (a loop over the bits,
** unrolled on the cpu) counting for 64. */
static int node_cost(const Node *n) {
  bool ipow = n->kind == N_OP && n->op == OP_POW && dtype_is_int(n->type);
  int c = ipow ? 64 : 1;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++) c += node_cost(n->args[k]);
  return c;
}

static void mark_reads(const Node *n, int g, const int *def_group, bool *cross) {
  if (n->kind == N_TEMP && def_group[n->slot] != g) cross[n->slot] = true;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++) mark_reads(n->args[k], g, def_group, cross);
}

int split_program(const Program *p, int budget, int *start, bool *cross, size_t *per_elem) {
  int ng = 0, cost = 0;
  *per_elem = 0;
  start[0] = 0;
  for (int s = 0; s < p->nstmts; s++) {
    int c = node_cost(p->stmts[s].value);
    if (p->stmts[s].kind == IR_REDUCE) c += SPLIT_REDUCE_COST;
    /* A store stays with the let before it (the checker emits each
    ** assignment as that pair); a group may start at a let or a
    ** reduction. */
    if (cost > 0 && cost + c > budget && p->stmts[s].kind != IR_STORE) {
      start[++ng] = s;
      cost = 0;
    }
    cost += c;
  }
  start[++ng] = p->nstmts;
  for (int t = 0; t < p->ntemps; t++) cross[t] = false;
  if (ng == 1) return 1;
  int *def_group = malloc(sizeof(int) * ((size_t)p->ntemps + 1));
  if (!def_group) return -1;
  for (int g = 0; g < ng; g++)
    for (int s = start[g]; s < start[g + 1]; s++) {
      mark_reads(p->stmts[s].value, g, def_group, cross);
      if (p->stmts[s].kind == IR_LET) def_group[p->stmts[s].slot] = g;
    }
  free(def_group);
  for (int t = 0; t < p->ntemps; t++)
    if (cross[t]) *per_elem += jitc_dtype_size(p->temps[t]);
  return ng;
}
