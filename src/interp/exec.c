/*
** interp/exec.c -- runs an interp plan (interp/interp.h) over the elements, one
** block at a time: each instruction is a tight loop of sem_exec over a
** plain C array, so the dispatch cost is paid once per block rather than
** once per element.
*/
#include "interp.h"

#include <stdlib.h>
#include <string.h>

#include "../semantics.h"

/* One instruction: sem_exec with the instruction's op and types. */
static bool exec_op(const Ins *in, void *dst, const void *a0, const void *a1,
                    const void *a2, int m) {
  return sem_exec((OpId)in->op, (jitc_dtype)in->type, (jitc_dtype)in->atype, dst, a0, a1, a2, m);
}

/* A run's state: the scratch memory and where each array's block is. */
typedef struct RunState {
  const Plan *p;
  unsigned char *scratch;
  size_t stride;           /* bytes per scratch buffer */
  void *const *arrays;
  int64_t begin;
  int64_t first;           /* the block's first element's index in its segment
                              (Layout.axes), else begin */
  Partial *part;           /* reductions: nblocks partials per reduction */
  int64_t nblocks;
  const Layout *L;         /* NULL: every array contiguous */
  char **at;               /* with L: where each array's block is */
  char *own;               /* with L: a block of blk elements per array */
} RunState;

static inline void *buf_ptr(const RunState *rs, int id) {
  if (id == NO_BUF) return NULL;
  if (id >= 0) return rs->scratch + (size_t)id * rs->stride;
  int a = -id - 1;
  if (rs->L) return rs->at[a];
  return (unsigned char *)rs->arrays[a] + (size_t)rs->begin * rs->p->esize[a];
}

/* With a layout: each array's block of m elements at rs->begin, in place
** where it is one contiguous run, else gathered into its own block. */
static void blocks_in(RunState *rs, int m) {
  const Layout *L = rs->L;
  for (int j = 0; j < L->narrays; j++) {
    if (layout_block(L, j, rs->begin, m, &rs->at[j])) continue;
    rs->at[j] = rs->own + (size_t)j * (size_t)rs->p->blk * 16;
    if (L->a[j].read) layout_gather(L, j, rs->begin, m, rs->at[j]);
  }
}

static void blocks_out(RunState *rs, int m) {
  const Layout *L = rs->L;
  for (int j = 0; j < L->narrays; j++)
    if (L->a[j].written && rs->at[j] == rs->own + (size_t)j * (size_t)rs->p->blk * 16)
      layout_scatter(L, j, rs->begin, m, rs->at[j]);
}

/* Fills m elements of type t with one element's bytes. */
static void fill_value(void *dst, jitc_dtype t, const void *elem, int m) {
  size_t size = jitc_dtype_size(t);
  unsigned char *r = dst;
  for (int j = 0; j < m; j++) memcpy(r + (size_t)j * size, elem, size);
}

/* fold.c's rule: ints in i, uint64 as its bits, floats in f, complex
** values in c. */
void const_elem(jitc_dtype t, const ConstVal *k, ParamSlot *elem) {
  memset(elem, 0, sizeof *elem);
  if (dtype_is_float(t))
    sem_cast(elem, t, &k->f, JITC_FLOAT64, 1);
  else if (dtype_is_complex(t))
    sem_cast(elem, t, k->z, JITC_COMPLEX128, 1);
  else
    sem_cast(elem, t, &k->i, JITC_INT64, 1);
}

/* A parameter's element: the slot holds it at offset 0; a bool is 0 or 1. */
static void param_elem(const ParamSlot *ps, jitc_dtype t, ParamSlot *elem) {
  *elem = *ps;
  if (t == JITC_BOOL) elem->b = ps->b != 0;
}

static bool exec_block(const RunState *rs, const ParamSlot *params, int m) {
  const Plan *p = rs->p;
  for (int k = 0; k < p->nins; k++) {
    const Ins *in = &p->ins[k];
    void *dst = buf_ptr(rs, in->dst);
    switch ((InsKind)in->kind) {
    case I_OP: {
      const void *a0 = buf_ptr(rs, in->arg[0]);
      const void *a1 = in->nargs > 1 ? buf_ptr(rs, in->arg[1]) : NULL;
      const void *a2 = in->nargs > 2 ? buf_ptr(rs, in->arg[2]) : NULL;
      if (!exec_op(in, dst, a0, a1, a2, m)) return false;
      break;
    }
    case I_COPY: {
      const void *src = buf_ptr(rs, in->arg[0]);
      if (src != dst) memcpy(dst, src, (size_t)m * jitc_dtype_size((jitc_dtype)in->type));
      break;
    }
    case I_CONST: {
      ParamSlot e;
      const_elem((jitc_dtype)in->type, &in->k, &e);
      fill_value(dst, (jitc_dtype)in->type, &e, m);
      break;
    }
    case I_PARAM: {
      ParamSlot e;
      param_elem(&params[in->slot], (jitc_dtype)in->type, &e);
      fill_value(dst, (jitc_dtype)in->type, &e, m);
      break;
    }
    case I_INDEX: {
      int64_t *r = dst;
      for (int j = 0; j < m; j++) r[j] = rs->begin + j;
      break;
    }
    case I_BOOL: {
      uint8_t *r = dst;
      const uint8_t *x = buf_ptr(rs, in->arg[0]);
      for (int j = 0; j < m; j++) r[j] = x[j] != 0;
      break;
    }
    case I_REDUCE: {
      Partial *acc = &rs->part[in->slot * rs->nblocks + rs->first / p->blk];
      *acc = reduce_identity((OpId)in->op, (jitc_dtype)in->atype);
      reduce_step((OpId)in->op, (jitc_dtype)in->atype, acc, buf_ptr(rs, in->arg[0]), rs->first, m);
      break;
    }
    }
  }
  return true;
}

/* Runs p over [0, n), in blocks of p->blk elements. */
jitc_status interp_exec(jitc_context *ctx, const Plan *p, const Program *prog, int64_t n,
                        void *const *arrays, const ParamSlot *params, const Layout *L) {
  if (n <= 0 || p->nins == 0) {
    reduce_results(prog, 0, NULL, 0, arrays);
    return JITC_OK;
  }
  RunState rs = {.p = p, .arrays = arrays, .L = L};
  rs.stride = (size_t)p->blk * (size_t)p->esz;
  /* 64-byte aligned scratch; at least one byte so malloc never sees 0.
  ** With a layout, after it: a block of 16-byte elements per array, then
  ** the arrays' block addresses. */
  size_t own = L ? (size_t)p->blk * 16 * (size_t)L->narrays : 0;
  size_t bytes = rs.stride * (size_t)p->nbufs + 64 + own + (L ? (size_t)L->narrays * sizeof(char *) : 0);
  /* Over axes, each segment is reduced as a whole run is, its partials
  ** finished into its results before the next. */
  int64_t seg = L && L->axes ? L->seg : n;
  int64_t nblocks = (seg + p->blk - 1) / p->blk;
  void *raw = malloc(bytes);
  rs.part = p->nreduce ? malloc((size_t)nblocks * (size_t)p->nreduce * sizeof(Partial)) : NULL;
  if (!raw || (p->nreduce && !rs.part)) {
    free(raw);
    free(rs.part);
    return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory (%zu bytes of scratch)", bytes);
  }
  rs.scratch = (unsigned char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
  rs.nblocks = nblocks;
  if (L) {
    rs.own = (char *)rs.scratch + rs.stride * (size_t)p->nbufs;
    rs.at = (char **)(void *)(rs.own + own);
  }

  for (int q = 0; q < p->ninit; q++) {
    const Init *it = &p->init[q];
    ParamSlot e;
    if (it->param)
      param_elem(&params[it->slot], (jitc_dtype)it->type, &e);
    else
      const_elem((jitc_dtype)it->type, &it->k, &e);
    fill_value(rs.scratch + (size_t)it->buf * rs.stride, (jitc_dtype)it->type, &e, p->blk);
  }
  jitc_status st = JITC_OK;
  for (int64_t g = 0, b = 0; b < n && !st; g++) { /* segment g, from element b */
    for (int64_t e = 0; e < seg; e += p->blk) {
      int m = seg - e < p->blk ? (int)(seg - e) : p->blk;
      rs.begin = b + e;
      rs.first = e;
      if (L) blocks_in(&rs, m);
      if (!exec_block(&rs, params, m)) {
        st = ctx_error(ctx, JITC_E_INTERNAL, "interp: an operation of the program has no implementation");
        break;
      }
      if (L) blocks_out(&rs, m);
    }
    if (!st && L && L->axes) reduce_segment(prog, seg, rs.part, nblocks, L, g);
    b += seg;
  }
  if (!st && !(L && L->axes)) reduce_results(prog, n, rs.part, nblocks, arrays);
  free(rs.part);
  free(raw);
  return st;
}

