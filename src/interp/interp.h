/*
** interp/interp.h -- the plan of the interp target: the instructions that
** interp/plan.c builds from the typed IR and interp/exec.c runs, block by
** block.  Private to the three interp files.
*/
#ifndef JITC_INTERP_H
#define JITC_INTERP_H

#include "../jitc_int.h"
#include "../layout.h"

/* A constant's value, as its Node holds it (jitc_int.h: N_CONST). */
typedef union ConstVal {
  int64_t i;
  double f;
  double z[2];
} ConstVal;

typedef enum InsKind {
  I_OP,    /* op over args, into dst */
  I_COPY,  /* dst = args[0] (elements of `type`) */
  I_CONST, /* dst = constant value (per block: not hoisted) */
  I_PARAM, /* dst = params[slot] (per block: not hoisted) */
  I_INDEX, /* dst = begin + j */
  I_BOOL,  /* dst = args[0] != 0: a bool array as loaded, normalised to 0/1 */
  I_REDUCE /* the block's partial of reduction `slot` (op, over args[0] of
              type atype); dst unused */
} InsKind;

/* A buffer id: >= 0 is scratch buffer `id`; < 0 is array -id-1 itself at
** the block's offset.  NO_BUF: no buffer (yet). */
enum { NO_BUF = -0x7fffffff };

typedef struct Ins {
  uint8_t kind;
  uint8_t op;
  uint8_t type;  /* result type */
  uint8_t atype; /* operand type (of args[1] for where) */
  int nargs;
  int dst;
  int arg[3];
  int slot;      /* I_PARAM */
  ConstVal k;    /* I_CONST */
} Ins;

/* A constant or parameter filled once per run. */
typedef struct Init {
  int buf;
  uint8_t type;
  bool param;
  int slot;
  ConstVal k;
} Init;

typedef struct Plan {
  Ins *ins;
  int nins, cap;
  Init *init;
  int ninit, initcap;
  int nbufs;       /* scratch buffers */
  int blk;         /* elements per block */
  int esz;         /* bytes per element of a scratch buffer: the widest type's */
  int narrays;
  uint8_t *esize;  /* per array: bytes per element */
  int nreduce;     /* reductions: I_REDUCE slot r, in statement order (reduce_results) */
} Plan;

/* interp/plan.c: the plan of a program (JITC_OK, or an error added to ctx). */
jitc_status interp_plan(jitc_context *ctx, const Program *prog, Plan **out);
void interp_plan_free(Plan *p);
/* The value of constant n. */
ConstVal const_val(const Node *n);
/* The element constant value k of type t stands for, by the cast rules. */
void const_elem(jitc_dtype t, const ConstVal *k, ParamSlot *elem);

/* interp/exec.c: runs the plan over elements [0, n); a reduction's result
** is combined from the partials of the blocks (reduce.c) and written to its
** array's one element.  With a layout L (layout.c; NULL: every array
** contiguous), the arrays that are not direct are gathered into, and
** scattered from, a block of their own around each block; with L->axes
** each segment runs as a whole run does, its blocks from its start, and
** its reductions are finished into the results' elements of it. */
jitc_status interp_exec(jitc_context *ctx, const Plan *p, const Program *prog, int64_t n,
                        void *const *arrays, const ParamSlot *params, const Layout *L);

#endif /* JITC_INTERP_H */
