/*
** cuda/plan.c -- the cuda target's plan for a large program: one kernel per
** group of statements.
**
** NVRTC's time grows with the square of the arrays one kernel touches (a
** thousand outputs took 5 s, two thousand 29 s), and a kernel's
** parameters are limited to 32 KB.  A program above SPLIT_COST (split.c
** cuts it) becomes one kernel per group, jitc_g0, jitc_g1, ..., each over
** the elements with one thread per element and its own arrays, launched
** one after the other on the stream for each range of elements; a
** temporary that a later group reads goes through scratch in device
** memory, one value per element of the range.  A group's reductions are
** its kernel's: each block writes their partials, and jitc_r0, jitc_r1,
** ... (cuda/reduce.c) finish them, a chunk of reductions each.
**
** The plan says which statements each group computes, which arrays and
** temporaries it touches and where each temporary lies in the scratch:
** cuda/gen.c writes the kernels from it, cuda/run.c launches them.  Pure,
** like the rest of generation; start at cuda_plan_new().
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdlib.h>

#define SPLIT_COST 256

void cuda_plan_free(CudaPlan *P) {
  if (!P)
    return;
  for (int g = 0; g < P->ng; g++) {
    if (P->arr)
      free(P->arr[g]);
    if (P->arr_use)
      free(P->arr_use[g]);
    if (P->tmp)
      free(P->tmp[g]);
    if (P->tmp_use)
      free(P->tmp_use[g]);
    if (P->red)
      free(P->red[g]);
  }
  free(P->red);
  free(P->nred);
  free(P->arr);
  free(P->arr_use);
  free(P->narr);
  free(P->tmp);
  free(P->tmp_use);
  free(P->ntmp);
  free(P->start);
  free(P->cross);
  free(P->temp_off);
  free(P);
}

static void plan_walk(const Node *n, int g, const int *def_group, int *amark, int *tmark) {
  if (n->kind == N_LOAD)
    amark[n->slot] |= 1;
  if (n->kind == N_TEMP && def_group[n->slot] != g)
    tmark[n->slot] |= 1;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++)
      plan_walk(n->args[k], g, def_group, amark, tmark);
}

/* Collects the marked slots of one group into *list and *use. */
static int plan_collect(int *mark, int n, int **list, int **use) {
  int c = 0;
  for (int k = 0; k < n; k++)
    c += mark[k] != 0;
  *list = malloc(sizeof(int) * (size_t)(c + 1));
  *use = malloc(sizeof(int) * (size_t)(c + 1));
  if (!*list || !*use)
    return -1;
  c = 0;
  for (int k = 0; k < n; k++)
    if (mark[k]) {
      (*list)[c] = k;
      (*use)[c++] = mark[k];
      mark[k] = 0;
    }
  return c;
}

static int by_value(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* P->red[g] and P->nred[g]: the numbers of group g's reductions (rnum: per
** array slot, its result's number). */
static int plan_reductions(CudaPlan *P, const Program *p, int g, const int *rnum) {
  int n = 0;
  P->red[g] = malloc(sizeof(int) * ((size_t)(P->start[g + 1] - P->start[g]) + 1));
  if (!P->red[g])
    return -1;
  for (int q = P->start[g]; q < P->start[g + 1]; q++)
    if (p->stmts[q].kind == IR_REDUCE)
      P->red[g][n++] = rnum[p->stmts[q].slot];
  qsort(P->red[g], (size_t)n, sizeof(int), by_value);
  P->nred[g] = n;
  return n;
}

/* The plan of p, or NULL with *oom false when p is one group. */
CudaPlan *cuda_plan_new(const Program *p, bool *oom) {
  *oom = false;
  if (p->by_axis) /* one kernel of segments (cuda/axis.c) */
    return NULL;
  CudaPlan *P = calloc(1, sizeof *P);
  int *amark = calloc((size_t)p->narrays + 1, sizeof(int));
  int *tmark = calloc((size_t)p->ntemps + 1, sizeof(int));
  int *def_group = calloc((size_t)p->ntemps + 1, sizeof(int));
  int *rnum = malloc(sizeof(int) * ((size_t)p->narrays + 1));
  if (!P || !amark || !tmark || !def_group || !rnum)
    goto fail;
  for (int k = 0, r = 0; k < p->narrays; k++)
    rnum[k] = p->arrays[k].role == JITC_RESULT ? r++ : -1;
  P->start = malloc(sizeof(int) * ((size_t)p->nstmts + 2));
  P->cross = calloc((size_t)p->ntemps + 1, sizeof(bool));
  if (!P->start || !P->cross)
    goto fail;
  P->ng = split_program(p, SPLIT_COST, P->start, P->cross, &P->per_elem);
  if (P->ng < 0)
    goto fail;
  if (P->ng == 1) {
    cuda_plan_free(P);
    P = NULL;
    goto done;
  }
  int ng = P->ng;
  P->temp_off = calloc((size_t)p->ntemps + 1, sizeof(size_t));
  P->arr = calloc((size_t)ng, sizeof(int *));
  P->arr_use = calloc((size_t)ng, sizeof(int *));
  P->narr = calloc((size_t)ng, sizeof(int));
  P->tmp = calloc((size_t)ng, sizeof(int *));
  P->tmp_use = calloc((size_t)ng, sizeof(int *));
  P->ntmp = calloc((size_t)ng, sizeof(int));
  P->red = calloc((size_t)ng, sizeof(int *));
  P->nred = calloc((size_t)ng, sizeof(int));
  if (!P->temp_off || !P->arr || !P->arr_use || !P->narr || !P->tmp || !P->tmp_use || !P->ntmp ||
      !P->red || !P->nred)
    goto fail;
  size_t off = 0;
  for (int t = 0; t < p->ntemps; t++)
    if (P->cross[t]) {
      P->temp_off[t] = off;
      off += jitc_dtype_size(p->temps[t]);
    }
  for (int g = 0; g < ng; g++) {
    for (int q = P->start[g]; q < P->start[g + 1]; q++) {
      const IrStmt *st = &p->stmts[q];
      plan_walk(st->value, g, def_group, amark, tmark);
      if (st->kind == IR_STORE)
        amark[st->slot] |= 2;
      else if (st->kind == IR_LET) { /* a reduction's result is written by jitc_r only */
        def_group[st->slot] = g;
        if (P->cross[st->slot])
          tmark[st->slot] |= 2;
      }
    }
    if ((P->narr[g] = plan_collect(amark, p->narrays, &P->arr[g], &P->arr_use[g])) < 0 ||
        (P->ntmp[g] = plan_collect(tmark, p->ntemps, &P->tmp[g], &P->tmp_use[g])) < 0 ||
        plan_reductions(P, p, g, rnum) < 0)
      goto fail;
  }
  goto done;
fail:
  *oom = true;
  cuda_plan_free(P);
  P = NULL;
done:
  free(amark);
  free(tmark);
  free(def_group);
  free(rnum);
  return P;
}
