/*
** layout.c -- NumPy's array model for a run: broadcasting the arrays'
** shapes, ordering and coalescing the axes, as NumPy's iterator does
** (numpy/core/src/multiarray/nditer_*.c); move.c moves the blocks.
**
** Every target runs over a flat index k in [0, n), in fixed blocks, as it
** always has.  Here k is the position of an element in C order in the
** broadcast shape, so the element index `i`, the reductions' blocks and
** argmin/argmax mean what they mean over a contiguous run.  What changes
** is where an array's element k lives: base + sum over axes of
** index[d] * strides[d].  The shape is first simplified without changing
** that order: axes of extent 1 are dropped and an axis is merged with the
** one inside it where every array steps over both alike (stride of the
** outer = stride of the inner times its extent).  A contiguous program
** ends with one axis and every array `direct`, which is jitc_run().
*/
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "(2,3)", NumPy's spelling of a shape; "(4,)" for one axis. */
static const char *shape_text(char *buf, size_t cap, int nd, const int64_t *shape) {
  size_t at = 0;
  at += (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < nd && at < cap; d++)
    at += (size_t)snprintf(buf + at, cap - at, d ? ",%lld" : "%lld", (long long)shape[d]);
  if (at < cap) snprintf(buf + at, cap - at, nd == 1 ? ",)" : ")");
  return buf;
}

static bool reads(jitc_role r) { return r == JITC_INPUT || r == JITC_INOUT; }
static bool writes(jitc_role r) { return r == JITC_OUTPUT || r == JITC_INOUT; }

static jitc_status check_shape(jitc_context *ctx, const IrArray *a, const jitc_array *x) {
  if (x->ndim < 0 || x->ndim > JITC_MAXDIMS)
    return ctx_error(ctx, JITC_E_USAGE, "array '%s' has %d dimensions; jitc takes 0 to %d",
                     a->name, x->ndim, JITC_MAXDIMS);
  if (x->ndim && !x->shape)
    return ctx_error(ctx, JITC_E_USAGE, "array '%s' has %d dimensions and no shape", a->name,
                     x->ndim);
  for (int d = 0; d < x->ndim; d++)
    if (x->shape[d] < 0)
      return ctx_error(ctx, JITC_E_USAGE, "array '%s' has a negative extent %lld on axis %d",
                       a->name, (long long)x->shape[d], d);
  return JITC_OK;
}

/* The broadcast shape of the inputs. */
static jitc_status inputs_shape(jitc_context *ctx, const Program *p, const jitc_array *arrays,
                                int *ndim, int64_t *shape) {
  int nd = 0;
  int from[JITC_MAXDIMS]; /* the array that set each axis's extent, or -1 */
  for (int j = 0; j < p->narrays; j++) {
    if (!reads(p->arrays[j].role)) continue;
    jitc_status st = check_shape(ctx, &p->arrays[j], &arrays[j]);
    if (st) return st;
    if (arrays[j].ndim > nd) nd = arrays[j].ndim;
  }
  for (int d = 0; d < nd; d++) shape[d] = 1, from[d] = -1;
  for (int j = 0; j < p->narrays; j++) {
    const jitc_array *x = &arrays[j];
    if (!reads(p->arrays[j].role)) continue;
    for (int e = 0; e < x->ndim; e++) {
      int d = nd - x->ndim + e;
      int64_t m = x->shape[e];
      if (m == 1 || m == shape[d]) continue;
      if (shape[d] == 1) {
        shape[d] = m, from[d] = j;
        continue;
      }
      const jitc_array *y = &arrays[from[d]];
      char s1[160], s2[160];
      return ctx_error(ctx, JITC_E_INPUT, "operands could not be broadcast together: '%s' has "
                       "shape %s and '%s' has shape %s (axis %d of the result: %lld against %lld)",
                       p->arrays[from[d]].name, shape_text(s1, sizeof s1, y->ndim, y->shape),
                       p->arrays[j].name, shape_text(s2, sizeof s2, x->ndim, x->shape), d,
                       (long long)shape[d], (long long)m);
    }
  }
  *ndim = nd;
  return JITC_OK;
}

/* The steps of x in the broadcast frame of nd axes (0 where it repeats). */
static void frame_strides(const jitc_array *x, size_t esize, int nd, const int64_t *shape,
                          int64_t *out) {
  int64_t c = (int64_t)esize; /* C order's steps, from the last axis */
  int64_t cs[JITC_MAXDIMS];
  for (int e = x->ndim - 1; e >= 0; e--) {
    cs[e] = c;
    c *= x->shape[e] ? x->shape[e] : 1;
  }
  for (int d = 0; d < nd; d++) {
    int e = d - (nd - x->ndim);
    if (e < 0 || (x->shape[e] == 1 && shape[d] != 1)) out[d] = 0;
    else out[d] = x->strides ? x->strides[e] : cs[e];
  }
}

/* Whether the byte ranges of arrays a and b meet. */
static bool meet(const Layout *L, int a, int b) {
  int64_t lo[2], hi[2];
  for (int q = 0; q < 2; q++) {
    const LayoutArray *x = &L->a[q ? b : a];
    int64_t l = 0, h = 0;
    int nd = x->kept ? L->kdim : L->ndim;
    for (int d = 0; d < nd; d++) {
      int64_t span = x->kept ? x->kstrides[d] * (L->kshape[d] - 1)
                             : x->strides[d] * (L->shape[d] - 1);
      if (span < 0) l += span;
      else h += span;
    }
    lo[q] = (int64_t)(intptr_t)x->base + l;
    hi[q] = (int64_t)(intptr_t)x->base + h + (int64_t)x->esize;
  }
  return lo[0] < hi[1] && lo[1] < hi[0];
}

/* Whether a and b hold the same elements: element k at the same address. */
static bool same(const Layout *L, int a, int b) {
  const LayoutArray *x = &L->a[a], *y = &L->a[b];
  if (x->base != y->base || x->esize != y->esize) return false;
  for (int d = 0; d < L->ndim; d++)
    if (x->strides[d] != y->strides[d]) return false;
  return true;
}

/* Whether e reads element i of array `slot`. */
static bool loads(const Node *e, int slot) {
  if (e->kind == N_LOAD) return e->slot == slot;
  for (int k = 0; k < e->nargs; k++)
    if (loads(e->args[k], slot)) return true;
  return false;
}

/* Whether a statement after the first that writes array w reads array r:
** where w and r are the same memory, NumPy's statements one after the
** other would read w's new values there, which a kernel that loads each
** element once would not. */
static bool read_after_write(const Program *p, int w, int r) {
  int k = 0;
  while (k < p->nstmts && !(p->stmts[k].kind == IR_STORE && p->stmts[k].slot == w)) k++;
  for (k++; k < p->nstmts; k++)
    if (loads(p->stmts[k].value, r)) return true;
  return false;
}

/* Checks a written array's shape against the run's (widened: by the
** outputs, beyond the inputs' broadcast shape). */
static jitc_status check_written(jitc_context *ctx, const IrArray *a, const jitc_array *x, int nd,
                                 const int64_t *shape, bool widened) {
  bool ok = x->ndim == nd;
  for (int d = 0; ok && d < nd; d++) ok = x->shape[d] == shape[d];
  if (ok) return JITC_OK;
  char s1[160], s2[160];
  return ctx_error(ctx, JITC_E_INPUT, "%s '%s' has shape %s; the broadcast shape of the inputs "
                   "%sis %s, and a written array is not broadcast (NumPy's out=)",
                   a->role == JITC_INOUT ? "the array updated in place," : "output", a->name,
                   shape_text(s1, sizeof s1, x->ndim, x->shape), widened ? "and outputs " : "",
                   shape_text(s2, sizeof s2, nd, shape));
}

/* With outs, the run's shape, NumPy's rule for a ufunc's out=: the
** broadcast shape of the inputs, widened to the outputs' (np.add(row, 1,
** out=matrix) fills every row; a program of no input array takes its
** outputs' shape); with outs == 2, each written array must have it
** exactly: it is never broadcast. */
jitc_status layout_broadcast(jitc_context *ctx, const Program *p, const jitc_array *arrays,
                             int outs, int *ndim, int64_t *shape) {
  int nd = 0;
  jitc_status st = inputs_shape(ctx, p, arrays, &nd, shape);
  if (st) return st;
  if (!outs) {
    *ndim = nd;
    return JITC_OK;
  }
  bool widened = false;
  int nd_in = nd;
  int64_t in_shape[JITC_MAXDIMS];
  memcpy(in_shape, shape, (size_t)nd * sizeof *shape);
  int64_t n_in = 1; /* the inputs' elements, each once */
  for (int d = 0; d < nd; d++)
    if (__builtin_mul_overflow(n_in, shape[d], &n_in))
      return ctx_error(ctx, JITC_E_INPUT, "the broadcast shape has more than 2^63 elements");
  for (int j = 0; j < p->narrays; j++) {
    const jitc_array *x = &arrays[j];
    if (p->arrays[j].role != JITC_OUTPUT) continue;
    if ((st = check_shape(ctx, &p->arrays[j], x))) return st;
    if (x->ndim > nd) { /* more axes: the inputs' are the last ones */
      int add = x->ndim - nd;
      memmove(shape + add, shape, (size_t)nd * sizeof *shape);
      for (int d = 0; d < add; d++) shape[d] = 1;
      nd = x->ndim;
      widened = true;
    }
    for (int e = 0; e < x->ndim; e++) {
      int d = nd - x->ndim + e;
      if (shape[d] == 1 && x->shape[e] != 1) /* else equal, or check_written refuses it */
        shape[d] = x->shape[e], widened = true;
    }
  }
  for (int j = 0; j < p->narrays && outs == 2; j++)
    if (writes(p->arrays[j].role) &&
        (st = check_written(ctx, &p->arrays[j], &arrays[j], nd, shape, widened)))
      return st;
  /* A reduction over a run that outputs widened would count the inputs'
  ** elements more than once, where np.sum(a) counts each once. */
  int64_t n_run = 1;
  for (int d = 0; d < nd; d++)
    if (__builtin_mul_overflow(n_run, shape[d], &n_run))
      return ctx_error(ctx, JITC_E_INPUT, "the broadcast shape has more than 2^63 elements");
  /* Axes count in the inputs' broadcast shape: an output of more axes
  ** would move them (sum(a, axis=0) of a (3,) input beside a (1, 3)
  ** output would reduce the output's axis of one). */
  if (p->by_axis && nd > nd_in) {
    char s1[160], s2[160];
    return ctx_error(ctx, JITC_E_INPUT, "the outputs give the run %d axes, shape %s, where the "
                     "inputs' broadcast shape %s has %d, and a reduction's axis counts in the "
                     "inputs' shape: give the outputs no more axes than the inputs",
                     nd, shape_text(s1, sizeof s1, nd, shape),
                     shape_text(s2, sizeof s2, nd_in, in_shape), nd_in);
  }
  for (int j = 0; j < p->narrays && n_run != n_in && p->nreduce; j++)
    if (p->arrays[j].role == JITC_INPUT || p->arrays[j].role == JITC_INOUT) {
      char s1[160];
      return ctx_error(ctx, JITC_E_INPUT, "the outputs widen the run to shape %s, beyond the "
                       "inputs' broadcast shape, and the program's reductions would count "
                       "the inputs' elements more than once: give the inputs that shape "
                       "(np.broadcast_to), or reduce in a program of its own",
                       shape_text(s1, sizeof s1, nd, shape));
    }
  *ndim = nd;
  return JITC_OK;
}

/* The reduction giving result array j, for messages. */
static const char *reduction_name(const Program *p, int j) {
  for (int s = 0; s < p->nstmts; s++)
    if (p->stmts[s].kind == IR_REDUCE && p->stmts[s].slot == j)
      return op_info[p->stmts[s].op].name;
  return "?";
}

/* Checks result array j of a program reducing over axes (red[d]: axis d of
** the broadcast shape is reduced) against the shape its reduction gives,
** and sets its steps in the broadcast frame: 0 along the reduced axes. */
static jitc_status result_frame(jitc_context *ctx, const Program *p, int j, const jitc_array *x,
                                int nd, const int64_t *shape, const bool *red, LayoutArray *la) {
  const IrArray *a = &p->arrays[j];
  jitc_status st = check_shape(ctx, a, x);
  if (st) return st;
  int rnd;
  int64_t rshape[JITC_MAXDIMS];
  axes_result_shape(p, j, nd, shape, red, &rnd, rshape);
  bool ok = x->ndim == rnd;
  for (int d = 0; ok && d < rnd; d++) ok = x->shape[d] == rshape[d];
  if (!ok) {
    char s1[160], s2[160], s3[160];
    return ctx_error(ctx, JITC_E_INPUT, "result '%s' has shape %s; %s() over the broadcast "
                     "shape %s gives shape %s", a->name, shape_text(s1, sizeof s1, x->ndim,
                     x->shape), reduction_name(p, j), shape_text(s2, sizeof s2, nd,
                     shape), shape_text(s3, sizeof s3, rnd, rshape));
  }
  int64_t rs[JITC_MAXDIMS], c = (int64_t)la->esize;
  for (int e = rnd - 1; e >= 0; e--) {
    rs[e] = x->strides ? x->strides[e] : c;
    c *= rshape[e] ? rshape[e] : 1;
  }
  bool keep = rnd == nd && nd > 0, empty = false;
  for (int d = 0; d < rnd; d++) empty |= rshape[d] == 0;
  for (int d = 0, e = 0; d < nd; d++) {
    bool has = keep || !red[d]; /* the result has an axis for d */
    la->strides[d] = red[d] || rshape[e] == 1 ? 0 : rs[e];
    if (!red[d] && rshape[e] > 1 && rs[e] == 0 && !empty)
      return ctx_error(ctx, JITC_E_INPUT, "result '%s' repeats one element along its axis %d "
                       "(stride 0): an element would be written %lld times", a->name, e,
                       (long long)rshape[e]);
    e += has;
  }
  return JITC_OK;
}

/* Takes the reduced axes (red[d]) innermost, each group in its order, so
** that k runs segment after segment (Layout), and sets the results' kept
** frame, coalesced. */
static jitc_status take_inner(jitc_context *ctx, const Program *p, Layout *L, const bool *red) {
  int nd = L->ndim, order[JITC_MAXDIMS], nk = 0;
  for (int d = 0; d < nd; d++)
    if (!red[d]) order[nk++] = d;
  for (int d = 0, k = nk; d < nd; d++)
    if (red[d]) order[k++] = d;
  int64_t t[JITC_MAXDIMS];
  for (int j = -1; j < L->narrays; j++) {
    int64_t *v = j < 0 ? L->shape : L->a[j].strides;
    for (int d = 0; d < nd; d++) t[d] = v[order[d]];
    memcpy(v, t, (size_t)nd * sizeof *t);
  }
  L->axes = true;
  L->seg = L->nseg = 1;
  for (int d = 0; d < nd; d++)
    if (__builtin_mul_overflow(d < nk ? L->nseg : L->seg, L->shape[d], d < nk ? &L->nseg : &L->seg))
      return ctx_error(ctx, JITC_E_INPUT, "the broadcast shape has more than 2^63 elements");
  int kd = 0;
  for (int d = 0; d < nk; d++) {
    if (L->shape[d] == 1) continue;
    bool merge = kd > 0;
    for (int j = 0; j < L->narrays && merge; j++)
      merge = p->arrays[j].role != JITC_RESULT ||
              L->a[j].kstrides[kd - 1] == L->a[j].strides[d] * L->shape[d];
    if (merge) L->kshape[kd - 1] *= L->shape[d];
    else L->kshape[kd++] = L->shape[d];
    for (int j = 0; j < L->narrays; j++)
      if (p->arrays[j].role == JITC_RESULT) L->a[j].kstrides[kd - 1] = L->a[j].strides[d];
  }
  L->kdim = kd;
  for (int j = 0; j < L->narrays; j++) L->a[j].kept = p->arrays[j].role == JITC_RESULT;
  return JITC_OK;
}

char *layout_result(const Layout *L, int j, int64_t s) {
  const LayoutArray *x = &L->a[j];
  int64_t off = 0;
  for (int d = L->kdim - 1; d >= 0; d--) {
    off += s % L->kshape[d] * x->kstrides[d];
    s /= L->kshape[d];
  }
  return x->base + off;
}

/* Drops the axes of extent 1 and merges the ones every array steps over
** alike; L->ndim >= 1 after. */
static void coalesce(Layout *L) {
  int nd = 0;
  for (int d = 0; d < L->ndim; d++) {
    if (L->shape[d] == 1) continue;
    L->shape[nd] = L->shape[d];
    for (int j = 0; j < L->narrays; j++) L->a[j].strides[nd] = L->a[j].strides[d];
    nd++;
  }
  if (nd == 0) { /* one element */
    L->shape[0] = 1;
    for (int j = 0; j < L->narrays; j++) L->a[j].strides[0] = 0;
    nd = 1;
  }
  int out = 0; /* axes [0, out] kept; d the next to merge or keep */
  for (int d = 1; d < nd; d++) {
    bool merge = true;
    for (int j = 0; j < L->narrays && merge; j++)
      merge = L->a[j].kept || L->a[j].strides[out] == L->a[j].strides[d] * L->shape[d];
    if (merge) {
      L->shape[out] *= L->shape[d];
      for (int j = 0; j < L->narrays; j++) L->a[j].strides[out] = L->a[j].strides[d];
    } else {
      out++;
      L->shape[out] = L->shape[d];
      for (int j = 0; j < L->narrays; j++) L->a[j].strides[out] = L->a[j].strides[d];
    }
  }
  L->ndim = out + 1;
}

/* Whether p's elements may run in any order: it reads no `i`, finds no
** argmin or argmax (positions in C order), and reduces over no axes (whose
** segments take the reduced axes innermost, in C order).  A whole sum,
** mean or max runs in the memory's order too, as NumPy's does: its bits are
** those of the same program over contiguous copies laid out in that order. */
static bool any_order(const Program *p) {
  for (int q = 0; q < p->nlang; q++)
    if (!strcmp(p->lang[q], "i")) return false;
  for (int q = 0; q < p->nstmts; q++)
    if (p->stmts[q].kind == IR_REDUCE && op_info[p->stmts[q].op].rule == R_RARG) return false;
  return !p->by_axis;
}

/* Orders L's axes as NumPy's iterator does (npyiter_find_best_axis_ordering):
** an axis goes inside another where every array that steps over both steps
** less over it, so that arrays laid out alike in any order (a transpose and
** a result in its order, Fortran-order arrays) are run along their memory,
** and coalesce makes one run of them; where the arrays disagree, the axes
** keep C order.  An insertion sort of the axes, innermost first.  With
** `reads`, the arrays read decide first, and the others only where no
** array read steps over both axes: a transposed input beside a C-order
** output is then read along its memory and the output scattered in tiles
** (tiles.c), which took less than half the time of gathering the input
** (docs/PERFORMANCE.md).  Without reductions the order changes no result;
** whole reductions keep NumPy's order, which sets their bits. */
static void memory_order(Layout *L, bool reads) {
  int nd = L->ndim, in[JITC_MAXDIMS];
  for (int k = 0; k < nd; k++) in[k] = nd - 1 - k;
  for (int i0 = 1; i0 < nd; i0++) {
    int pos = i0, ax0 = in[i0];
    for (int i1 = i0 - 1; i1 >= 0; i1--) {
      bool ambiguous = true, swap = false;
      for (int pass = reads ? 0 : 1; pass < 2 && ambiguous; pass++)
        for (int j = 0; j < L->narrays; j++) {
          uint64_t s0 = stride_mag(L->a[j].strides[ax0]), s1 = stride_mag(L->a[j].strides[in[i1]]);
          if (!s0 || !s1 || (pass == 0 && !L->a[j].read)) continue;
          if (s1 <= s0) swap = false;
          else if (ambiguous) swap = true;
          ambiguous = false;
        }
      if (ambiguous) continue;
      if (!swap) break;
      pos = i1;
    }
    memmove(in + pos + 1, in + pos, sizeof(int) * (size_t)(i0 - pos));
    in[pos] = ax0;
  }
  int64_t was[JITC_MAXDIMS];
  memcpy(was, L->shape, (size_t)nd * sizeof *was);
  for (int d = 0; d < nd; d++) L->shape[d] = was[in[nd - 1 - d]];
  for (int j = 0; j < L->narrays; j++) {
    memcpy(was, L->a[j].strides, (size_t)nd * sizeof *was);
    for (int d = 0; d < nd; d++) L->a[j].strides[d] = was[in[nd - 1 - d]];
  }
}

jitc_status layout_new(jitc_context *ctx, const Program *p, const jitc_array *arrays, bool bands,
                       Layout *L, bool *contig) {
  memset(L, 0, sizeof *L);
  int nd;
  int64_t shape[JITC_MAXDIMS];
  bool red[JITC_MAXDIMS];
  jitc_status st = layout_broadcast(ctx, p, arrays, 2, &nd, shape);
  if (!st && p->by_axis) st = axes_resolve(ctx, p, nd, red);
  if (st) return st;
  int64_t n = 1;
  for (int d = 0; d < nd; d++)
    if (__builtin_mul_overflow(n, shape[d], &n))
      return ctx_error(ctx, JITC_E_INPUT, "the broadcast shape has more than 2^63 elements");
  int na = p->narrays, dims = nd ? nd : 1;
  size_t bytes = (size_t)na * (sizeof(LayoutArray) + sizeof(void *)) +
                 (size_t)dims * sizeof(int64_t) * (size_t)(2 * na + 2);
  char *mem = calloc(1, bytes ? bytes : 1);
  if (!mem) return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  L->mem = mem;
  L->a = (LayoutArray *)mem;
  L->shape = (int64_t *)(mem + (size_t)na * sizeof(LayoutArray));
  L->bases = (void **)(void *)(L->shape + (size_t)dims * (size_t)(2 * na + 2));
  L->kshape = L->shape + (size_t)dims * (size_t)(na + 1);
  L->narrays = na;
  L->ndim = nd;
  L->n = n;
  memcpy(L->shape, shape, (size_t)nd * sizeof *shape);
  for (int j = 0; j < na; j++) {
    const IrArray *a = &p->arrays[j];
    const jitc_array *x = &arrays[j];
    LayoutArray *la = &L->a[j];
    la->strides = L->shape + (size_t)dims * (size_t)(j + 1);
    la->kstrides = L->kshape + (size_t)dims * (size_t)(j + 1);
    la->base = x->data;
    L->bases[j] = x->data;
    la->esize = jitc_dtype_size(a->dtype);
    la->read = reads(a->role);
    la->written = writes(a->role);
    if (a->role == JITC_RESULT) {
      if (!x->data) st = ctx_error(ctx, JITC_E_USAGE, "array '%s' is NULL", a->name);
      else if ((uintptr_t)x->data % la->esize)
        st = ctx_error(ctx, JITC_E_USAGE, "array '%s' is not aligned to its element size",
                       a->name);
      if (!st && p->by_axis) st = result_frame(ctx, p, j, x, nd, shape, red, la);
      if (st) break;
      continue; /* never gathered: its elements are written by the reductions */
    }
    if (n && !x->data) {
      st = ctx_error(ctx, JITC_E_USAGE, "array '%s' is NULL", a->name);
      break;
    }
    frame_strides(x, la->esize, nd, shape, la->strides);
    for (int d = 0; d < nd && la->written && n; d++)
      if (la->strides[d] == 0 && shape[d] > 1)
        st = ctx_error(ctx, JITC_E_INPUT, "array '%s' is written, and its axis %d repeats one "
                       "element (stride 0): an element would be written %lld times", a->name, d,
                       (long long)shape[d]);
    if (st) break;
  }
  if (st) {
    layout_free(L);
    return st;
  }
  L->ndim = nd;
  if (p->by_axis && (st = take_inner(ctx, p, L, red))) {
    layout_free(L);
    return st;
  }
  L->bands = bands;
  if (any_order(p)) memory_order(L, bands && !p->nreduce);
  coalesce(L);
  *contig = !p->by_axis; /* segments: run_layout, always */
  for (int j = 0; j < na; j++) {
    LayoutArray *la = &L->a[j];
    la->zrun = 0;
    for (int d = L->ndim - 1; d >= 0 && la->strides[d] == 0; d--)
      la->zrun = (la->zrun ? la->zrun : 1) * L->shape[d];
    la->run = 0;
    for (int d = L->ndim - 1; d >= 0 && la->strides[d] == (int64_t)la->esize * (la->run ? la->run : 1); d--)
      la->run = (la->run ? la->run : 1) * L->shape[d];
    if (p->arrays[j].role == JITC_RESULT || n == 0) {
      la->direct = true;
      continue;
    }
    la->direct = (uintptr_t)la->base % la->esize == 0 &&
                 (n == 1 || (L->ndim == 1 && la->strides[0] == (int64_t)la->esize));
    *contig = *contig && la->direct;
    int last = L->ndim - 1;
    if (last > 0 && la->strides[last - 1] &&
        stride_mag(la->strides[last - 1]) < stride_mag(la->strides[last]))
      L->transposed = true;
  }
  /* A written array overlapping another is refused unless both are the
  ** same elements (each block gathers every input before it scatters).
  ** A result over axes is written as its segments end: it may overlap no
  ** other array. */
  for (int j = 0; j < na && n; j++) {
    bool result = p->arrays[j].role == JITC_RESULT;
    if (!L->a[j].written && !(result && p->by_axis)) continue;
    for (int q = 0; q < na; q++) {
      bool rq = p->arrays[q].role == JITC_RESULT;
      if (q == j || (rq && !p->by_axis) || !meet(L, j, q))
        continue;
      if (!result && !rq && same(L, j, q)) {
        if (!read_after_write(p, j, q)) continue;
        st = ctx_error(ctx, JITC_E_INPUT, "arrays '%s' and '%s' are the same memory, and '%s' "
                       "is read after '%s' is assigned: run one statement after the other, "
                       "as NumPy does, it would read the new values; give '%s' memory of its "
                       "own, or use one name",
                       p->arrays[j].name, p->arrays[q].name, p->arrays[q].name,
                       p->arrays[j].name, p->arrays[j].name);
        layout_free(L);
        return st;
      }
      st = ctx_error(ctx, JITC_E_INPUT, "arrays '%s' and '%s' overlap in memory, and '%s' is "
                     "written: an element would be read after it was overwritten",
                     p->arrays[j].name, p->arrays[q].name, p->arrays[j].name);
      layout_free(L);
      return st;
    }
  }
  return JITC_OK;
}

void layout_free(Layout *L) {
  free(L->mem);
  memset(L, 0, sizeof *L);
}
