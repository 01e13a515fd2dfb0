/*
** reduce.c -- the semantics of reductions: sum, prod, min, max, mean, any,
** all, argmin and argmax over all the elements of a run.
**
** A target reduces in two steps.  Each fixed block of elements becomes a
** Partial (reduce_step, or the target's own vector loop computing the
** same thing), and the partials of the blocks are combined in a fixed
** pairwise tree (reduce_tree), then finished into the result's type
** (reduce_finish).  Blocks are fixed by the element count alone, never by
** the number of threads, and the tree is fixed by the number of blocks, so
** the same inputs give the same bits on every run.
**
** NumPy's rules, per op (docs/language.md, "Reductions"):
**   sum, prod  bool and signed integers accumulate in int64, unsigned ones
**              in uint64, wrapping; float32, float16 and bfloat16 sums in
**              float64 (a result at least as accurate as NumPy's pairwise
**              sum), float32 products in float32, float16 and bfloat16
**              products in float32 (as NumPy's float16 loops accumulate)
**   min, max   NaN wins; no identity; unsigned integers compare unsigned
**   mean       the sum in float64 over n
**   complex    sum and mean of complex64 in complex128, products in the
**              type; min, max, argmin and argmax in NumPy's complex order
** A wider accumulator becomes the result's type at the end, by the cast
** from float64 or float32 (semantics.h: to bfloat16 through float32, as
** ml_dtypes converts).
**   any, all   or, and of the elements' truth
**   argmin,    the index of the first extreme element, a NaN counting as
**   argmax     the extreme; no identity
** The interp target uses these functions on each block; the cpu target's
** kernels write Partials and combine them here; the cuda target computes the
** same on the GPU (cuda/gen.c).
*/
#include "jitc_int.h"
#include "layout.h"

#include <math.h>
#include <string.h>

#include "semantics.h"

static bool unsigned_int(jitc_dtype t) { return type_info[t].kind == T_UINT; }

static const OpInfo *red(OpId op) {
  if ((unsigned)op >= OP_COUNT || op_info[op].kind != K_REDUCE) unreachable();
  return &op_info[op];
}

jitc_dtype reduce_result(OpId op, jitc_dtype t) {
  switch (red(op)->rule) {
  case R_RSUM:
    return dtype_is_float(t) || dtype_is_complex(t) ? t
           : unsigned_int(t) ? JITC_UINT64 : JITC_INT64;
  case R_RSAME: return t;
  case R_RMEAN: return dtype_is_float(t) || dtype_is_complex(t) ? t : JITC_FLOAT64;
  case R_RBOOL: return JITC_BOOL;
  case R_RARG: return JITC_INT64;
  default: unreachable();
  }
}

jitc_dtype reduce_input(OpId op, jitc_dtype t) {
  switch (red(op)->rule) {
  case R_RSUM: case R_RMEAN: return reduce_result(op, t);
  case R_RBOOL: return JITC_BOOL;
  default: return t;
  }
}

jitc_dtype reduce_acc(OpId op, jitc_dtype in) {
  if (in == JITC_COMPLEX64 && (op == OP_SUM || op == OP_MEAN)) return JITC_COMPLEX128;
  if (!dtype_is_float(in)) return in;
  size_t size = jitc_dtype_size(in);
  if ((op == OP_SUM || op == OP_MEAN) && size < 8) return JITC_FLOAT64;
  if (op == OP_PROD && size < 4) return JITC_FLOAT32;
  return in;
}

/* ---- elements as Partial values ---- */

/* How a Partial holds values of type t: floats in f, unsigned integers in i
** as their bits (compared unsigned), bool and signed integers in i, complex
** values in f and im. */
typedef enum Held { H_SIGNED, H_UNSIGNED, H_FLOAT, H_COMPLEX } Held;

static Held held(jitc_dtype t) {
  return dtype_is_float(t)     ? H_FLOAT
         : dtype_is_complex(t) ? H_COMPLEX
         : unsigned_int(t)     ? H_UNSIGNED
                               : H_SIGNED;
}

/* The type a Partial's value is read as: float64, complex128, uint64 or int64. */
static jitc_dtype held_type(Held h) {
  return h == H_FLOAT ? JITC_FLOAT64 : h == H_COMPLEX ? JITC_COMPLEX128
         : h == H_UNSIGNED ? JITC_UINT64 : JITC_INT64;
}

/* Elements x[0..n) of type t as Partial values, into w (i or f; complex
** values as n complex128 elements from the start of w): the cast to the
** held type, which is exact. */
static void values(jitc_dtype t, const void *x, int n, Wide *w) {
  Held h = held(t);
  sem_cast(h == H_FLOAT || h == H_COMPLEX ? (void *)w->f : (void *)w->i, held_type(h), x, t, n);
  if (t == JITC_BOOL)
    for (int j = 0; j < n; j++) w->i[j] = w->i[j] != 0;
}

static jitc_c128 cval(Partial p) { return (jitc_c128){p.v.f, p.im}; }

/* Whether b's value comes before a's for argmin (less) or argmax: a NaN
** first of all; equal values are ordered by index elsewhere. */
static bool before(bool less, Held h, Partial b, Partial a) {
  if (h == H_COMPLEX) { /* NumPy's complex order; a NaN in either part first */
    jitc_c128 x = cval(b), y = cval(a);
    if (C_NAN(y)) return false;
    if (C_NAN(x)) return true;
    return less ? C_LT(x, y) : C_GT(x, y);
  }
  if (h == H_FLOAT) {
    if (isnan(a.v.f)) return false;
    if (isnan(b.v.f)) return true;
    return less ? b.v.f < a.v.f : b.v.f > a.v.f;
  }
  if (h == H_UNSIGNED) {
    uint64_t x = (uint64_t)b.v.i, y = (uint64_t)a.v.i;
    return less ? x < y : x > y;
  }
  return less ? b.v.i < a.v.i : b.v.i > a.v.i;
}

static bool equal(Held h, Partial a, Partial b) {
  if (h == H_COMPLEX)
    return (a.v.f == b.v.f && a.im == b.im) || (C_NAN(cval(a)) && C_NAN(cval(b)));
  if (h == H_FLOAT) return a.v.f == b.v.f || (isnan(a.v.f) && isnan(b.v.f));
  return a.v.i == b.v.i;
}

Partial reduce_identity(OpId op, jitc_dtype in) {
  Held h = held(reduce_acc(op, in));
  bool fl = h == H_FLOAT || h == H_COMPLEX; /* a complex identity's im is 0 */
  Partial p = {.idx = -1};
  switch (op) {
  case OP_PROD: if (fl) p.v.f = 1.0; else p.v.i = 1; break;
  case OP_ALL: p.v.i = 1; break;
  case OP_MIN: case OP_MAX: case OP_ARGMIN: case OP_ARGMAX: /* none: idx -1 says empty */
  default: if (fl) p.v.f = 0.0; else p.v.i = 0; break;
  }
  return p;
}

/* The product of two complex accumulators of type acc, its multiplication. */
static Partial cprod(jitc_dtype acc, Partial a, Partial b) {
  if (acc == JITC_COMPLEX64) {
    jitc_c64 x = {(float)a.v.f, (float)a.im}, y = {(float)b.v.f, (float)b.im};
    jitc_c64 z = c64_mul(x, y);
    a.v.f = z.re;
    a.im = z.im;
    return a;
  }
  jitc_c128 z = c128_mul(cval(a), cval(b));
  a.v.f = z.re;
  a.im = z.im;
  return a;
}

Partial reduce_combine(OpId op, jitc_dtype in, Partial a, Partial b) {
  jitc_dtype acc = reduce_acc(op, in);
  Held h = held(acc);
  bool fl = h == H_FLOAT;
  Partial r = a;
  switch (op) {
  case OP_SUM: case OP_MEAN:
    if (h == H_COMPLEX) {
      r.v.f = a.v.f + b.v.f;
      r.im = a.im + b.im;
    } else if (fl) r.v.f = a.v.f + b.v.f;
    else r.v.i = (int64_t)((uint64_t)a.v.i + (uint64_t)b.v.i); /* wraps, as NumPy */
    return r;
  case OP_PROD:
    if (h == H_COMPLEX) r = cprod(acc, a, b);
    else if (acc == JITC_FLOAT32) r.v.f = (float)a.v.f * (float)b.v.f;
    else if (fl) r.v.f = a.v.f * b.v.f;
    else r.v.i = (int64_t)((uint64_t)a.v.i * (uint64_t)b.v.i);
    return r;
  case OP_ANY: r.v.i = a.v.i | b.v.i; return r;
  case OP_ALL: r.v.i = a.v.i & b.v.i; return r;
  case OP_MIN: case OP_MAX: case OP_ARGMIN: case OP_ARGMAX: {
    if (a.idx < 0) return b;
    if (b.idx < 0) return a;
    bool less = op == OP_MIN || op == OP_ARGMIN;
    if (before(less, h, b, a)) return b;
    if (equal(h, a, b) && b.idx < a.idx) return b;
    return a;
  }
  default: unreachable();
  }
}

void reduce_step(OpId op, jitc_dtype in, Partial *acc, const void *x, int64_t first, int m) {
  Held h = held(in);
  bool fl = h == H_FLOAT;
  size_t size = jitc_dtype_size(in);
  Wide w;
  const jitc_c128 *wc = (const jitc_c128 *)w.f; /* values() of complex elements */
  switch (op) {
  case OP_SUM: case OP_MEAN:
    if (h == H_COMPLEX) { /* as below, each part */
      double s[8] = {0}, t[8] = {0};
      for (int j0 = 0; j0 < m; j0 += WIDE_CHUNK) {
        int n = m - j0 < WIDE_CHUNK ? m - j0 : WIDE_CHUNK;
        values(in, (const char *)x + (size_t)j0 * size, n, &w);
        for (int j = 0; j < n; j++) {
          s[(j0 + j) & 7] += wc[j].re;
          t[(j0 + j) & 7] += wc[j].im;
        }
      }
      acc->v.f += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
      acc->im += ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
      return;
    }
    if (fl) {
      /* Pairwise within the block too, so that interp's float64 sum is at
      ** least as accurate as NumPy's: eight running sums, element j adding
      ** to sum j % 8, then a tree. */
      double s[8] = {0};
      for (int j0 = 0; j0 < m; j0 += WIDE_CHUNK) {
        int n = m - j0 < WIDE_CHUNK ? m - j0 : WIDE_CHUNK;
        values(in, (const char *)x + (size_t)j0 * size, n, &w);
        for (int j = 0; j < n; j++) s[(j0 + j) & 7] += w.f[j];
      }
      acc->v.f += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
      return;
    }
    break;
  case OP_ANY:
    for (int j = 0; j < m && !acc->v.i; j++) acc->v.i = ((const uint8_t *)x)[j] != 0;
    return;
  case OP_ALL:
    for (int j = 0; j < m && acc->v.i; j++) acc->v.i = ((const uint8_t *)x)[j] != 0;
    return;
  default:
    break;
  }
  bool extreme = op == OP_MIN || op == OP_MAX || op == OP_ARGMIN || op == OP_ARGMAX;
  bool less = op == OP_MIN || op == OP_ARGMIN;
  for (int j0 = 0; j0 < m; j0 += WIDE_CHUNK) {
    int n = m - j0 < WIDE_CHUNK ? m - j0 : WIDE_CHUNK;
    values(in, (const char *)x + (size_t)j0 * size, n, &w);
    for (int j = 0; j < n; j++) {
      Partial e = {.idx = first + j0 + j};
      if (h == H_COMPLEX) {
        e.v.f = wc[j].re;
        e.im = wc[j].im;
      } else if (fl)
        e.v.f = w.f[j];
      else
        e.v.i = w.i[j];
      /* reduce_combine's rule, where e's index is always the greater */
      if (extreme) {
        if (acc->idx < 0 || before(less, h, e, *acc)) *acc = e;
      } else {
        *acc = reduce_combine(op, in, *acc, e);
      }
    }
  }
}

Partial reduce_tree(OpId op, jitc_dtype in, const Partial *p, int64_t np) {
  if (np <= 0) return reduce_identity(op, in);
  if (np == 1) return p[0];
  int64_t half = np / 2;
  return reduce_combine(op, in, reduce_tree(op, in, p, half),
                        reduce_tree(op, in, p + half, np - half));
}

/* The value of a float (complex) accumulator acc of n elements as the
** result's before its cast: a mean's divided by n, as NumPy divides. */
static double fvalue(OpId op, Partial acc, int64_t n) {
  return op == OP_MEAN ? (n > 0 ? acc.v.f / (double)n : NAN) : acc.v.f;
}
static jitc_c128 cvalue(OpId op, Partial acc, int64_t n) {
  jitc_c128 z = cval(acc);
  if (op == OP_MEAN) z = n > 0 ? c128_div(z, (jitc_c128){(double)n, 0}) : (jitc_c128){NAN, NAN};
  return z;
}

void reduce_finish(OpId op, jitc_dtype in, Partial acc, int64_t n, void *out) {
  jitc_dtype r = reduce_result(op, in);
  if (op == OP_ARGMIN || op == OP_ARGMAX) {
    *(int64_t *)out = acc.idx;
    return;
  }
  /* The accumulator's value, converted to the result's type by the cast
  ** rules: exact for min and max, the one rounding of a sum, product or
  ** mean accumulated wider; integers wrap to their type. */
  Held h = held(reduce_acc(op, in));
  if (h == H_COMPLEX) {
    jitc_c128 z = cvalue(op, acc, n);
    sem_cast(out, r, &z, JITC_COMPLEX128, 1);
  } else if (h == H_FLOAT) {
    double f = fvalue(op, acc, n);
    sem_cast(out, r, &f, JITC_FLOAT64, 1);
  } else {
    sem_cast(out, r, &acc.v.i, held_type(h), 1);
  }
}

/* Accumulators finished at a time by finish_n: its casts run on arrays
** of them, not element by element. */
#define FIN 64

/* reduce_finish() of the m accumulators acc[0], acc[step], ..., each of n
** elements, into m results side by side at out. */
static void finish_n(OpId op, jitc_dtype in, const Partial *acc, int64_t step, int m, int64_t n,
                     void *out) {
  jitc_dtype r = reduce_result(op, in);
  size_t rs = jitc_dtype_size(r);
  Held h = held(reduce_acc(op, in));
  union {
    int64_t i[FIN];
    double f[FIN];
    jitc_c128 z[FIN];
  } b;
  for (int j0 = 0; j0 < m; j0 += FIN) {
    int k = m - j0 < FIN ? m - j0 : FIN;
    char *o = (char *)out + (size_t)j0 * rs;
    const Partial *a = acc + j0 * step;
    if (op == OP_ARGMIN || op == OP_ARGMAX) {
      for (int j = 0; j < k; j++) b.i[j] = a[j * step].idx;
      memcpy(o, b.i, (size_t)k * sizeof(int64_t));
    } else if (h == H_COMPLEX) {
      for (int j = 0; j < k; j++) b.z[j] = cvalue(op, a[j * step], n);
      sem_cast(o, r, b.z, JITC_COMPLEX128, k);
    } else if (h == H_FLOAT) {
      for (int j = 0; j < k; j++) b.f[j] = fvalue(op, a[j * step], n);
      /* The common results cast here as sem_cast would, without its
      ** widened copy: a column's finish costs little beside its fold. */
      if (r == JITC_FLOAT64) memcpy(o, b.f, (size_t)k * sizeof(double));
      else if (r == JITC_FLOAT32)
        for (int j = 0; j < k; j++) ((float *)(void *)o)[j] = (float)b.f[j];
      else sem_cast(o, r, b.f, JITC_FLOAT64, k);
    } else {
      for (int j = 0; j < k; j++) b.i[j] = a[j * step].v.i;
      sem_cast(o, r, b.i, held_type(h), k);
    }
  }
}

void reduce_results(const Program *p, int64_t n, const Partial *part, int64_t nblocks,
                    void *const *arrays) {
  int r = 0;
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE) continue;
    jitc_dtype in = st->value->type;
    Partial acc = reduce_tree(st->op, in, part ? part + r * nblocks : NULL, part ? nblocks : 0);
    reduce_finish(st->op, in, acc, n, arrays[st->slot]);
    r++;
  }
}

void reduce_segments(const Program *p, int64_t seg, const Partial *part, int64_t nblocks,
                     const Layout *L, int64_t s0, int64_t count) {
  Partial acc[FIN];
  /* the results, then copied: a result's element may be unaligned (a record's field) */
  _Alignas(16) unsigned char v[FIN * 16];
  int64_t stride = (int64_t)p->nreduce * nblocks;
  int r = 0;
  for (int k = 0; k < p->nstmts; k++) {
    const IrStmt *st = &p->stmts[k];
    if (st->kind != IR_REDUCE) continue;
    jitc_dtype in = st->value->type;
    size_t es = jitc_dtype_size(p->arrays[st->slot].dtype);
    /* The segments' elements along the innermost kept axis are a step
    ** apart; at the end of a run of it, layout_result starts the next. */
    int64_t run = L->kdim ? L->kshape[L->kdim - 1] : 1, at = 0;
    int64_t step = L->kdim ? L->a[st->slot].kstrides[L->kdim - 1] : 0;
    char *dst = NULL;
    for (int64_t c0 = 0; c0 < count; c0 += FIN) {
      int m = count - c0 < FIN ? (int)(count - c0) : FIN;
      /* The accumulators: a segment's one Partial where it has one. */
      const Partial *a = acc;
      int64_t as = 1;
      if (part && nblocks == 1) {
        a = part + c0 * stride + r;
        as = stride;
      } else {
        for (int j = 0; j < m; j++)
          acc[j] = reduce_tree(st->op, in, part ? part + (c0 + j) * stride + r * nblocks : NULL,
                               part ? nblocks : 0);
      }
      if (!dst || at == run) {
        dst = layout_result(L, st->slot, s0 + c0);
        at = (s0 + c0) % run;
      }
      /* Straight into the results where they lie side by side (a run's
      ** step the element's size; the library takes results aligned to it). */
      if (step == (int64_t)es && at + m <= run && (uintptr_t)dst % es == 0) {
        finish_n(st->op, in, a, as, m, seg, dst);
        dst += (int64_t)m * step;
        at += m;
        continue;
      }
      finish_n(st->op, in, a, as, m, seg, v);
      for (int j = 0; j < m; j++) {
        if (at == run) {
          dst = layout_result(L, st->slot, s0 + c0 + j);
          at = (s0 + c0 + j) % run;
        }
        memcpy(dst, v + (size_t)j * es, es);
        dst += step;
        at++;
      }
    }
    r++;
  }
}

void reduce_segment(const Program *p, int64_t seg, const Partial *part, int64_t nblocks,
                    const Layout *L, int64_t s) {
  int r = 0;
  for (int k = 0; k < p->nstmts; k++) {
    const IrStmt *st = &p->stmts[k];
    if (st->kind != IR_REDUCE) continue;
    jitc_dtype in = st->value->type;
    Partial acc = reduce_tree(st->op, in, part ? part + r * nblocks : NULL, part ? nblocks : 0);
    ParamSlot v; /* then copied: a result's element may be unaligned (a record's field) */
    reduce_finish(st->op, in, acc, seg, &v);
    memcpy(layout_result(L, st->slot, s), &v, jitc_dtype_size(p->arrays[st->slot].dtype));
    r++;
  }
}
