/*
** axis_fake_check.c -- reductions over axes on the target cuda, on a machine
** without a GPU: the host side of cuda/axisrun.c (the plan of segments and
** pieces, the host pipeline's chunks of whole pieces, the launches' shapes
** and parameters, the results brought back and scattered) and of
** jitc_run_device_arrays over axes (strided inputs through jitc_nd, results
** through jitc_kept).  Run with JITC_LIBCUDA and JITC_LIBNVRTC naming
** tests/cuda_fake.c's library (tests/t_host_pipe.sh), whose axis kernels
** run the body given here: a plain C copy of what cuda/axis.c's kernels do
** for `s = sum(x, axis=...)` over float64 (a piece's elements, the element
** of the flat index unravelled by jitc_nd, the result's place unravelled by
** jitc_kept, the partials of pieces combined in order), checking each
** launch's kernel (G threads per piece, chosen by the segment's length)
** and grid.  The inputs are small integers, so every sum is exact whatever
** the order, and each result is compared with the sum of its segment
** computed here from the views' strides.
** Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why".
*/
#include "../src/jitc_int.h"
#include "../src/cuda/cuda.h"
#include "../runtime/cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;

typedef void (*AxisFn)(void *arg, const char *name, unsigned gx, unsigned gy, unsigned bx,
                       void **params);
static void (*fake_axis_kernel)(AxisFn fn, void *arg, int n, const int *sizes, int cn,
                                const int *csizes, int ln, const int *lsizes);

/* What the kernels' bodies know of a case, and what they saw. */
typedef struct Emu {
  int nd, kd;            /* jitc_nd's axes and jitc_kept's (0: not a parameter) */
  int64_t visited;       /* elements folded */
  int units, combines;   /* launches */
  int cols;              /* of which the column form's (jitc_acol) */
  int64_t pcs;           /* the column form's pieces per segment, as launched */
  int64_t nseg;          /* the case's segments (the results' elements) */
  char why[240];         /* the first wrong launch */
} Emu;

typedef struct Part { /* jitc_part<f64> */
  double v;
  int64_t idx;
} Part;

static void wrong(Emu *E, const char *fmt, long long a, long long b) {
  if (!E->why[0])
    snprintf(E->why, sizeof E->why, fmt, a, b);
}

/* jitc_kofs: segment s's offset by the kept axes n[kd], strides st[kd]. */
static int64_t kofs(int64_t s, int kd, const int64_t *n, const int64_t *st) {
  int64_t o = 0;
  for (int d = kd - 1; d >= 0; d--) {
    o += s % n[d] * st[d];
    s /= n[d];
  }
  return o;
}

static int64_t result_at(const Emu *E, const int64_t *kp, int64_t s) {
  return E->kd ? kofs(s, E->kd, kp, kp + E->kd) : s;
}

/* cuda_access_unravel's offset of flat element g in x (row 0 of jitc_nd),
** or g - off for a contiguous x. */
static int64_t x_at(const Emu *E, const int64_t *nd, int64_t g, int64_t off) {
  if (!nd)
    return g - off;
  int64_t o = 0;
  for (int d = E->nd - 1; d >= 0; d--) {
    o += g % nd[d] * nd[E->nd + d];
    g /= nd[d];
  }
  return o;
}

/* The column form, cuda/axiscol.c's jitc_acol(seg, pcs, nseg, pw, a0, q1,
** a1, cnt[, nd][, kp]) over a grid of (gx, gy) blocks of 256 threads:
** warp w of block (bx, by) holds segments 32 (bx 8 / pw + w / pw) + lane
** and piece pw by + w % pw of each, its elements unravelled where a run
** along the innermost axis starts, then stepped by x's innermost stride;
** a block's pw pieces of a segment combined in order, then, where gy > 1,
** the blocks' partials of a column of blocks in the order of by (the
** counters must be zero when the kernel starts). */
static void column(Emu *E, unsigned gx, unsigned gy, void **pp) {
  int64_t seg = *(int64_t *)pp[0], pcs = *(int64_t *)pp[1], nseg = *(int64_t *)pp[2];
  int pw = *(int *)pp[3];
  const double *x = *(const double **)pp[4];
  Part *qp = *(Part **)pp[5];
  double *res = *(double **)pp[6];
  const unsigned *cnt = *(const unsigned **)pp[7];
  const int64_t *nd = E->nd ? (const int64_t *)pp[8] : NULL;
  const int64_t *kp = E->kd ? (const int64_t *)pp[8 + (E->nd > 0)] : NULL;
  int64_t rows = (seg - 1) / pcs + 1;
  int want = 1;
  while (want < 8 && want * 2 <= pcs)
    want *= 2;
  if (pw != want)
    wrong(E, "jitc_acol: blocks of %lld pieces where %lld fit", pw, pcs);
  if ((int64_t)gx != (nseg - 1) / (256 / pw) + 1 || (int64_t)gy != (pcs - 1) / pw + 1)
    wrong(E, "jitc_acol: a grid of %lld by %lld blocks", gx, gy);
  if ((pcs - 1) * rows >= seg) /* every piece holds an element */
    wrong(E, "jitc_acol: %lld pieces of segments of %lld", pcs, seg);
  if (!nd)
    wrong(E, "jitc_acol without jitc_nd (%lld, %lld)", 0, 0);
  for (unsigned b = 0; b < gx && gy > 1; b++)
    if (!cnt || cnt[b] != 0)
      wrong(E, "jitc_acol: counter %lld not zero (%lld)", b, cnt ? (long long)cnt[b] : -1);
  E->pcs = pcs;
  for (int64_t s = 0; s < nseg && nd; s++) {
    double total = 0;
    for (unsigned by = 0; by < gy; by++) {
      double block = 0;
      for (int v = 0; v < pw; v++) {
        int64_t q = (int64_t)by * pw + v, lo = q * rows;
        int64_t hi = q >= pcs ? lo : seg - lo < rows ? seg : lo + rows;
        double acc = 0;
        for (int64_t e = lo; e < hi;) {
          int64_t g = s * seg + e, last = nd[E->nd - 1], run = hi - e;
          if (last - g % last < run)
            run = last - g % last;
          int64_t w = x_at(E, nd, g, 0);
          for (int64_t i = 0; i < run; i++, w += nd[2 * E->nd - 1]) {
            acc += x[w];
            E->visited++;
          }
          e += run;
        }
        block += acc;
      }
      if (gy > 1)
        qp[(int64_t)by * nseg + s] = (Part){block, -1};
      total += block;
    }
    res[result_at(E, kp, s)] = total;
  }
  E->units++;
  E->cols++;
}

/* The kernels of cuda/axis.c for `s = sum(x, ...)`, x float64 (array 0),
** s float64 (array 1): jitc_aG(q0, nq, seg, pps, off, va, a0, q1, a1[, nd][, kp]),
** jitc_ac(s0, ns, seg, pps, q1, a1[, kp]) and the column form's
** jitc_acol. */
static void body(void *arg, const char *name, unsigned gx, unsigned gy, unsigned bx, void **pp) {
  Emu *E = arg;
  int64_t a = *(int64_t *)pp[0], n = *(int64_t *)pp[1], seg = *(int64_t *)pp[2],
          pps = *(int64_t *)pp[3];
  if (bx != 256)
    wrong(E, "a block of %lld threads (%lld)", bx, 0);
  if (!strcmp(name, "jitc_acol")) {
    column(E, gx, gy, pp);
    return;
  }
  if (!strcmp(name, "jitc_ac")) {
    Part *q = *(Part **)pp[4];
    double *res = *(double **)pp[5];
    const int64_t *kp = E->kd ? (const int64_t *)pp[6] : NULL;
    if ((int64_t)gx * 256 < n || (int64_t)(gx - 1) * 256 >= n)
      wrong(E, "jitc_ac: %lld blocks for %lld segments", gx, n);
    if (E->cols)
      wrong(E, "jitc_ac after the column form, which finishes its segments (%lld, %lld)", 0, 0);
    for (int64_t t = 0; t < n; t++) {
      double acc = 0;
      for (int64_t j = 0; j < pps; j++)
        acc += q[(a + t) * pps + j].v;
      res[result_at(E, kp, a + t)] = acc;
    }
    E->combines++;
    return;
  }
  int G = atoi(name + 6);
  int64_t off = *(int64_t *)pp[4];
  int va = *(int *)pp[5];
  const double *x = *(const double **)pp[6];
  Part *q = *(Part **)pp[7];
  double *res = *(double **)pp[8];
  const int64_t *nd = E->nd ? (const int64_t *)pp[9] : NULL;
  const int64_t *kp = E->kd ? (const int64_t *)pp[9 + (E->nd > 0)] : NULL;
  /* Groups of 2 float64 loaded as vectors only where x is contiguous and
  ** every piece starts on 16 bytes (cuda/axisrun.c, groups_aligned). */
  int want_va = !E->nd && seg % 2 == 0 && off % 2 == 0 && (uintptr_t)x % 16 == 0;
  if (va != want_va)
    wrong(E, "va %lld where the pieces' alignment says %lld", va, want_va);
  int64_t plen = seg < CUDA_APIECE ? seg : CUDA_APIECE;
  int want = plen < 32 ? 1 : plen < 1024 ? 32 : 256, per = 256 / G;
  if (G != want)
    wrong(E, "jitc_a%lld for pieces of %lld elements", G, plen);
  if ((int64_t)gx * per < n || (int64_t)(gx - 1) * per >= n)
    wrong(E, "%lld blocks for %lld pieces", gx, n);
  /* Pieces of CUDA_APIECE, or a segment of up to 16 of them one piece
  ** where there are 1024 segments or more. */
  int64_t want_pps = (seg - 1) / CUDA_APIECE + 1;
  if (E->nseg >= 1024 && seg <= 16 * CUDA_APIECE)
    want_pps = 1;
  if (pps != want_pps)
    wrong(E, "pps %lld for segments of %lld", pps, seg);
  for (int64_t u = 0; u < n; u++) {
    int64_t qq = a + u, s = qq / pps, lo = (qq - s * pps) * CUDA_APIECE;
    int64_t hi = pps == 1 || seg - lo < CUDA_APIECE ? seg : lo + CUDA_APIECE;
    double acc = 0;
    for (int64_t e = lo; e < hi; e++) {
      acc += x[x_at(E, nd, s * seg + e, off)];
      E->visited++;
    }
    if (pps == 1)
      res[result_at(E, kp, s)] = acc;
    else
      q[qq] = (Part){acc, -1};
  }
  E->units++;
}

/* Arms the fake's axis kernels for a case of nd and kd axes. */
static void arm(Emu *E, int nd, int kd) {
  memset(E, 0, sizeof *E);
  E->nd = nd;
  E->kd = kd;
  int sizes[11] = {8, 8, 8, 8, 8, (int)sizeof(int), 8, 8, 8}, csizes[9] = {8, 8, 8, 8, 8, 8};
  int lsizes[10] = {8, 8, 8, (int)sizeof(int), 8, 8, 8, 8};
  int n = 9, cn = 6, ln = 8;
  if (nd)
    sizes[n++] = 16 * nd, lsizes[ln++] = 16 * nd;
  if (kd)
    sizes[n++] = 16 * kd, csizes[cn++] = 16 * kd, lsizes[ln++] = 16 * kd;
  fake_axis_kernel(body, E, n, sizes, cn, csizes, ln, lsizes);
}

static jitc_kernel *compile(jitc_context *ctx, const char *src) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  jitc_array_decl d[1] = {{"x", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL axis_fake.compile: %s: %s\n", src, jitc_errmsg(ctx));
    nfail++;
  }
  return k;
}

/* The sums over reduced axes red[] of view x (nd axes) into want, in C
** order of the kept axes. */
static void reference(const char *base, int nd, const int64_t *shape, const int64_t *strides,
                      const bool *red, double *want, int64_t nwant) {
  memset(want, 0, (size_t)nwant * sizeof *want);
  int64_t n = 1;
  for (int d = 0; d < nd; d++)
    n *= shape[d];
  for (int64_t k = 0; k < n; k++) {
    int64_t r = k, off = 0, w = 0, mul = 1;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t i = r % shape[d];
      r /= shape[d];
      off += i * strides[d];
      if (!red[d]) {
        w += i * mul;
        mul *= shape[d];
      }
    }
    double v;
    memcpy(&v, base + off, sizeof v);
    want[w] += v;
  }
}

static double value(int64_t i) { return (double)(i * 7 % 11 - 5); }

/* Why a run over n elements failed, or "" (status, the fake kernels'
** complaint, the elements they folded). */
static void run_verdict(char *why, size_t size, jitc_context *ctx, jitc_status st,
                        const Emu *E, int64_t n) {
  if (st != JITC_OK)
    snprintf(why, size, "status %d: %s", st, jitc_errmsg(ctx));
  else if (E->why[0])
    snprintf(why, size, "%s", E->why);
  else if (E->visited != n)
    snprintf(why, size, "%lld elements folded of %lld", (long long)E->visited, (long long)n);
}

/* One case over host arrays (jitc_run_arrays): x a view of `shape` and
** byte `strides` over a buffer of `cap` doubles from element `at`; the
** result of rshape (rnd axes) written with rstrides (NULL: C order) into
** a buffer of rcap doubles from element rat. */
static void host_case(jitc_context *ctx, const char *label, const char *src, int nd,
                      const int64_t *shape, const int64_t *strides, int64_t cap, int64_t at,
                      const bool *red, int rnd, const int64_t *rshape, const int64_t *rstrides,
                      int64_t rcap, int64_t rat, int64_t chunk_bytes) {
  jitc_kernel *k = compile(ctx, src);
  if (!k)
    return;
  double *xb = malloc((size_t)cap * sizeof *xb), *rb = malloc((size_t)rcap * sizeof *rb);
  for (int64_t i = 0; i < cap; i++)
    xb[i] = value(i);
  for (int64_t i = 0; i < rcap; i++)
    rb[i] = -999;
  int64_t nres = 1, n = 1;
  for (int d = 0; d < rnd; d++)
    nres *= rshape[d];
  for (int d = 0; d < nd; d++)
    n *= shape[d];
  double *want = malloc((size_t)(nres ? nres : 1) * sizeof *want);
  int64_t cs[8], c = 8; /* C order's strides where strides is NULL */
  for (int d = nd - 1; d >= 0; d--)
    cs[d] = strides ? strides[d] : c, c *= shape[d];
  reference((const char *)(xb + at), nd, shape, cs, red, want, nres);
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = (CudaTune){.chunk_bytes = chunk_bytes};
  Emu E;
  arm(&E, 0, 0);
  E.nseg = nres;
  jitc_array arr[2] = {{xb + at, nd, shape, strides}, {rb + rat, rnd, rshape, rstrides}};
  jitc_status st = jitc_run_arrays(ctx, k, arr, NULL, NULL);
  char why[300] = "";
  run_verdict(why, sizeof why, ctx, st, &E, n);
  int64_t placed = 0;
  for (int64_t r = 0; r < nres && !why[0]; r++) {
    int64_t w = r, off = rat, mul = 1;
    for (int d = rnd - 1; d >= 0; d--) {
      off += w % rshape[d] * (rstrides ? rstrides[d] / 8 : mul);
      mul *= rshape[d];
      w /= rshape[d];
    }
    if (rb[off] != want[r])
      snprintf(why, sizeof why, "result %lld: %g, want %g", (long long)r, rb[off], want[r]);
    placed++;
  }
  for (int64_t i = 0; i < rcap && !why[0]; i++) /* nothing else written */
    placed -= rb[i] != -999;
  if (!why[0] && placed != 0 && nres > 0)
    snprintf(why, sizeof why, "%lld elements written beside the result", (long long)-placed);
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = (CudaTune){0};
  if (why[0]) {
    printf("FAIL axis_fake.host %s: %s\n", label, why);
    nfail++;
  } else {
    printf("ok axis_fake.host %s (%d launches, %d combines)\n", label, E.units, E.combines);
  }
  free(xb);
  free(rb);
  free(want);
  jitc_kernel_free(k);
}

static void host_cases(jitc_context *ctx) {
  const int64_t KB = 1024;
  bool r01[2] = {false, true}, r10[2] = {true, false}, r101[3] = {true, false, true};
  /* Two pieces a segment, chunks of two pieces cutting segments. */
  host_case(ctx, "(40,5000) axis 1", "s = sum(x, axis=1)", 2, (int64_t[]){40, 5000}, NULL,
            200000, 0, r01, 1, (int64_t[]){40}, NULL, 40, 0, 64 * KB);
  /* Five pieces a segment, the last short. */
  host_case(ctx, "(3,20000) axis -1", "s = sum(x, axis=-1)", 2, (int64_t[]){3, 20000}, NULL,
            60000, 0, r01, 1, (int64_t[]){3}, NULL, 3, 0, 64 * KB);
  /* A thread a segment, many chunks of whole segments. */
  host_case(ctx, "(30000,9) axis 1", "s = sum(x, axis=1)", 2, (int64_t[]){30000, 9}, NULL,
            270000, 0, r01, 1, (int64_t[]){30000}, NULL, 30000, 0, 64 * KB);
  /* A warp a segment, over a transposed view (gathered), keepdims. */
  host_case(ctx, "(50,300).T-view axis 0 keepdims", "s = sum(x, axis=0, keepdims=True)", 2,
            (int64_t[]){50, 300}, (int64_t[]){8, 400}, 15000, 0, r10, 2, (int64_t[]){1, 300},
            NULL, 300, 0, 64 * KB);
  /* A tuple of axes, keepdims, one chunk. */
  host_case(ctx, "(4,3,5) axis (0,2)", "s = sum(x, axis=(0, 2), keepdims=True)", 3,
            (int64_t[]){4, 3, 5}, NULL, 60, 0, r101, 3, (int64_t[]){1, 3, 1}, NULL, 3, 0, 0);
  /* The result into a reversed view with a step (scattered). */
  host_case(ctx, "(600,100) into a reversed view", "s = sum(x, axis=1)", 2,
            (int64_t[]){600, 100}, NULL, 60000, 0, r01, 1, (int64_t[]){600},
            (int64_t[]){-16}, 1202, 1199, 64 * KB);
  /* A reversed, stepped input of long segments, and 2-element segments. */
  host_case(ctx, "(2,9000)[::-1, ::2] axis 1", "s = sum(x, axis=1)", 2,
            (int64_t[]){2, 9000}, (int64_t[]){-144000, 16}, 36000, 18000, r01, 1,
            (int64_t[]){2}, NULL, 2, 0, 64 * KB);
  host_case(ctx, "(70000,2) axis 1", "s = sum(x, axis=1)", 2, (int64_t[]){70000, 2}, NULL,
            140000, 0, r01, 1, (int64_t[]){70000}, NULL, 70000, 0, 64 * KB);
  /* Segments of 5000, 1100 of them: each one piece, longer than the chunk
  ** asked for (8192 elements), which grows to hold one. */
  host_case(ctx, "(1100,5000) axis 1", "s = sum(x, axis=1)", 2, (int64_t[]){1100, 5000}, NULL,
            5500000, 0, r01, 1, (int64_t[]){1100}, NULL, 1100, 0, 64 * KB);
  host_case(ctx, "(1024,4100) axis 1, default chunks", "s = sum(x, axis=1)", 2,
            (int64_t[]){1024, 4100}, NULL, 4198400, 0, r01, 1, (int64_t[]){1024}, NULL, 1024, 0,
            0);
}

/* One case over device arrays (jitc_run_device_arrays): x a view of
** `shape` and byte `strides` (NULL: C order) over fake device memory of
** `cap` doubles from element `at`, reduced over red[]; the result of
** rshape with rstrides (NULL: C order); nd and kd the axes the kernels
** must get; pcs the column form's pieces per segment (0: not that form). */
typedef struct Dev {
  const char *label, *src;
  int ndim;
  const int64_t *shape, *strides;
  int64_t cap, at;
  const bool *red;
  int rnd;
  const int64_t *rshape, *rstrides;
  int nd, kd;
  int64_t pcs;
} Dev;

static void device_case(jitc_context *ctx, const Dev *c) {
  jitc_kernel *k = compile(ctx, c->src);
  if (!k)
    return;
  int64_t n = 1, nres = 1, cap = c->cap;
  for (int d = 0; d < c->ndim; d++)
    n *= c->shape[d];
  for (int d = 0; d < c->rnd; d++)
    nres *= c->rshape[d];
  if (!cap)
    cap = n;
  CUdeviceptr xd = 0, rd = 0;
  A.cuMemAlloc(&xd, (size_t)cap * 8);
  A.cuMemAlloc(&rd, (size_t)nres * 8);
  double *xb = (double *)(uintptr_t)xd, *rb = (double *)(uintptr_t)rd; /* the fake's: host memory */
  for (int64_t i = 0; i < cap; i++)
    xb[i] = value(i);
  for (int64_t i = 0; i < nres; i++)
    rb[i] = -999;
  int64_t cs[8], cc = 8;
  for (int d = c->ndim - 1; d >= 0; d--)
    cs[d] = c->strides ? c->strides[d] : cc, cc *= c->shape[d];
  double *want = malloc((size_t)nres * sizeof *want);
  reference((const char *)(xb + c->at), c->ndim, c->shape, cs, c->red, want, nres);
  Emu E;
  arm(&E, c->nd, c->kd);
  E.nseg = nres;
  jitc_array arr[2] = {{xb + c->at, c->ndim, c->shape, c->strides},
                       {rb, c->rnd, c->rshape, c->rstrides}};
  jitc_status st = jitc_run_device_arrays(ctx, k, arr, NULL, NULL);
  A.cuStreamSynchronize(NULL);
  char why[300] = "";
  run_verdict(why, sizeof why, ctx, st, &E, n);
  if (why[0])
    ; /* the run's own failure says it */
  else if (c->pcs ? E.cols != 1 || E.units != 1 || E.pcs != c->pcs : E.cols != 0)
    snprintf(why, sizeof why, "%d column launches of %d, %lld pieces a segment (want %lld)",
             E.cols, E.units, (long long)E.pcs, (long long)c->pcs);
  else if (c->pcs && E.combines != 0) /* the column form finishes its segments */
    snprintf(why, sizeof why, "%d combines for %lld pieces a segment", E.combines,
             (long long)c->pcs);
  for (int64_t r = 0; r < nres && !why[0]; r++) {
    int64_t w = r, off = 0, mul = 1;
    for (int d = c->rnd - 1; d >= 0; d--) {
      off += w % c->rshape[d] * (c->rstrides ? c->rstrides[d] / 8 : mul);
      mul *= c->rshape[d];
      w /= c->rshape[d];
    }
    if (rb[off] != want[r])
      snprintf(why, sizeof why, "result %lld: %g, want %g", (long long)r, rb[off], want[r]);
  }
  if (why[0]) {
    printf("FAIL axis_fake.device %s: %s\n", c->label, why);
    nfail++;
  } else {
    printf("ok axis_fake.device %s (%d launches, %d combines)\n", c->label, E.units,
           E.combines);
  }
  A.cuMemFree(xd);
  A.cuMemFree(rd);
  free(want);
  jitc_kernel_free(k);
}

#define SHAPE(...) (const int64_t[]){__VA_ARGS__}

static void device_cases(jitc_context *ctx) {
  static const bool r010[3] = {false, true, false}, r01[2] = {false, true},
                    r10[2] = {true, false}, r110[3] = {true, true, false},
                    r100[3] = {true, false, false}, r011[3] = {false, true, true};
  const Dev cases[] = {
      /* x strided in 3 axes (the reduced one taken innermost), the result
      ** a transposed view: jitc_nd of 3 axes, jitc_kept of 2. */
      {"(5,7,6) axis 1 into a transposed result", "s = sum(x, axis=1)", 3, SHAPE(5, 7, 6), NULL,
       0, 0, r010, 2, SHAPE(5, 6), SHAPE(8, 40), 3, 2, 0},
      /* Contiguous, two pieces a segment: the kernel's own module, jitc_ac. */
      {"(3,5000) axis 1", "s = sum(x, axis=1)", 2, SHAPE(3, 5000), NULL, 0, 0, r01, 1,
       SHAPE(3), NULL, 0, 0, 0},
      /* Columns too few rows to cut: the column form, one piece each,
      ** finished by its thread (1000 columns, 3 rows). */
      {"(3,1000) axis 0", "s = sum(x, axis=0)", 2, SHAPE(3, 1000), NULL, 0, 0, r10, 1,
       SHAPE(1000), NULL, 2, 0, 1},
      /* Columns not a multiple of a warp, rows cut into pieces whose
      ** count does not divide them: 70 columns, 1000 rows, 15 pieces of
      ** 67 rows (the last of 62). */
      {"(1000,70) axis 0", "s = sum(x, axis=0)", 2, SHAPE(1000, 70), NULL, 0, 0, r10, 1,
       SHAPE(70), NULL, 2, 0, 15},
      /* One row: a segment of one element, the kernels of segments. */
      {"(1,300) axis 0", "s = sum(x, axis=0)", 2, SHAPE(1, 300), NULL, 0, 0, r10, 1,
       SHAPE(300), NULL, 0, 0, 0},
      /* Two rows: the column form, a piece each. */
      {"(2,300) axis 0 keepdims", "s = sum(x, axis=0, keepdims=True)", 2, SHAPE(2, 300), NULL,
       0, 0, r10, 2, SHAPE(1, 300), NULL, 2, 0, 1},
      /* Fewer columns than a warp: the kernels of segments. */
      {"(500,20) axis 0", "s = sum(x, axis=0)", 2, SHAPE(500, 20), NULL, 0, 0, r10, 1,
       SHAPE(20), NULL, 2, 0, 0},
      /* Many rows, few columns: 64 columns, 1024 pieces wanted, 1000 / 64. */
      {"(1000,64) axis 0", "s = sum(x, axis=0)", 2, SHAPE(1000, 64), NULL, 0, 0, r10, 1,
       SHAPE(64), NULL, 2, 0, 15},
      /* Rows reversed and every other one: a negative row stride, the
      ** input from the end of its buffer. */
      {"(300,40)[::-2] axis 0", "s = sum(x, axis=0)", 2, SHAPE(150, 40), SHAPE(-640, 8),
       12000, 11960, r10, 1, SHAPE(40), NULL, 2, 0, 2},
      /* A tuple of outer axes whose strides do not merge (the first
      ** reversed): runs of 7 rows along the innermost reduced axis, pieces
      ** that cross them. */
      {"(9,7,40)[::-1] axis (0,1)", "s = sum(x, axis=(0, 1))", 3, SHAPE(9, 7, 40),
       SHAPE(-2240, 320, 8), 2520, 2240, r110, 1, SHAPE(40), NULL, 3, 0, 1},
      {"(90,7,40)[::-1] axis (0,1)", "s = sum(x, axis=(0, 1))", 3, SHAPE(90, 7, 40),
       SHAPE(-2240, 320, 8), 25200, 24920, r110, 1, SHAPE(40), NULL, 3, 0, 9},
      /* Outer kept axes: axis 0 of a 3-d array, the kept axes merged into
      ** 6 * 40 columns; into a transposed result (jitc_kept). */
      {"(200,6,40) axis 0", "s = sum(x, axis=0)", 3, SHAPE(200, 6, 40), NULL, 0, 0, r100, 2,
       SHAPE(6, 40), NULL, 2, 0, 3},
      {"(200,6,40) axis 0 into a transposed result", "s = sum(x, axis=0)", 3,
       SHAPE(200, 6, 40), NULL, 0, 0, r100, 2, SHAPE(6, 40), SHAPE(8, 48), 2, 2, 3},
      /* The middle axis of a 3-d array: kept axes 0 and 2, the column
      ** form over the 40 columns of each of the 5 outer ones. */
      {"(5,300,40) axis 1", "s = sum(x, axis=1)", 3, SHAPE(5, 300, 40), NULL, 0, 0, r010, 2,
       SHAPE(5, 40), NULL, 3, 0, 4},
      /* Many segments of two pieces' length: one piece each, no jitc_ac. */
      {"(1024,4200) axis 1", "s = sum(x, axis=1)", 2, SHAPE(1024, 4200), NULL, 0, 0, r01, 1,
       SHAPE(1024), NULL, 0, 0, 0},
      /* Inner axes reduced: contiguous segments, the kernels of segments. */
      {"(40,6,7) axis (1,2)", "s = sum(x, axis=(1, 2))", 3, SHAPE(40, 6, 7), NULL, 0, 0, r011,
       1, SHAPE(40), NULL, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    device_case(ctx, &cases[i]);
}

/* jitc_run_device of a program over axes: as over arrays of shape (n,);
** jitc_run_buffers refuses it. */
static void flat_cases(jitc_context *ctx) {
  jitc_kernel *k = compile(ctx, "s = sum(x, axis=0)");
  if (!k)
    return;
  const int64_t n = 10000;
  CUdeviceptr xd = 0, rd = 0;
  A.cuMemAlloc(&xd, (size_t)n * 8);
  A.cuMemAlloc(&rd, 8);
  double *xb = (double *)(uintptr_t)xd, want = 0;
  for (int64_t i = 0; i < n; i++)
    want += xb[i] = value(i);
  Emu E;
  arm(&E, 0, 0);
  uint64_t ptrs[2] = {xd, rd};
  jitc_status st = jitc_run_device(ctx, k, n, ptrs, NULL, NULL);
  A.cuStreamSynchronize(NULL);
  double got = *(double *)(uintptr_t)rd;
  if (st != JITC_OK || E.why[0] || got != want || E.combines != 1) {
    printf("FAIL axis_fake.run_device_flat: status %d, %g against %g, %d combines %s\n", st, got,
           want, E.combines, E.why);
    nfail++;
  } else {
    printf("ok axis_fake.run_device_flat\n");
  }
  jitc_buffer *b[2] = {NULL, NULL};
  jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT64, n, &b[0]);
  jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT64, 1, &b[1]);
  st = jitc_run_buffers(ctx, k, n, b, NULL, NULL);
  if (st != JITC_E_USAGE || !strstr(jitc_errmsg(ctx), "not buffers")) {
    printf("FAIL axis_fake.buffers_refused: status %d: %s\n", st, jitc_errmsg(ctx));
    nfail++;
  } else {
    printf("ok axis_fake.buffers_refused\n");
  }
  jitc_buffer_free(b[0]);
  jitc_buffer_free(b[1]);
  A.cuMemFree(xd);
  A.cuMemFree(rd);
  jitc_kernel_free(k);
}

/* cuda_axis_cut and cuda_axis_piece, without a driver: chunks of whole
** pieces, at most `chunk` elements, covering [0, n) in order. */
static void cut_unit(void) {
  static const int64_t segs[] = {1,    2,     31,    32,    1023,  1024,
                                 4095, 4096,  4097,  10000, 20000, 65536, 65537};
  static const int64_t chunks[] = {4096, 8192, 10000, 131072};
  int bad = 0, total = 0;
  static const int64_t nsegs[] = {7, 1024};
  for (size_t a = 0; a < sizeof segs / sizeof *segs; a++)
    for (size_t b = 0; b < sizeof chunks / sizeof *chunks; b++)
      for (size_t g = 0; g < 2; g++) {
        CudaAxisRun R;
        int64_t ns = nsegs[g];
        cuda_axis_plan(segs[a], ns, &R);
        /* A segment of 4097 to 65536 elements is one piece where there are
        ** 1024 segments; src/cuda/host.c's choose() grows the chunk to one piece. */
        int64_t want = segs[a] > 4096 && (ns < 1024 || segs[a] > 65536) ? (segs[a] + 4095) / 4096 : 1;
        int64_t plen = want == 1 ? segs[a] : 4096, chunk = chunks[b] < plen ? plen : chunks[b];
        int64_t nc = 0, *at = cuda_axis_cut(&R, chunk, &nc);
        total++;
        bool ok = R.pps == want && cuda_axis_plen(&R) == plen && at && at[0] == 0 &&
                  at[nc] == segs[a] * ns;
        for (int64_t c = 0; ok && c < nc; c++) {
          int64_t q0 = cuda_axis_piece(&R, at[c]), q1 = cuda_axis_piece(&R, at[c + 1]);
          ok = at[c + 1] > at[c] && at[c + 1] - at[c] <= chunk &&
               cuda_axis_start(&R, q0) == at[c] && (c + 1 < nc || q1 == ns * R.pps);
        }
        if (!ok && bad++ == 0)
          printf("FAIL axis_fake.cut: %lld segments of %lld, chunks of %lld: %lld pieces each\n",
                 (long long)ns, (long long)segs[a], (long long)chunks[b], (long long)R.pps);
        free(at);
      }
  CudaAxisRun R; /* the limits of one piece a segment */
  cuda_axis_plan(65536, 1024, &R);
  bad += R.pps != 1;
  cuda_axis_plan(65537, 1024, &R);
  bad += R.pps != 17;
  cuda_axis_plan(65536, 1023, &R);
  bad += R.pps != 16;
  total += 3;
  if (bad)
    nfail++;
  else
    printf("ok axis_fake.cut (%d cases)\n", total);
}

/* cuda_axis_col_plan, without a driver: for a C-order matrix of `rows` x
** `cols` reduced over axis 0, the column form's pieces per segment: a
** function of the shape, at least 64 elements a piece (one piece below
** 128), no piece empty, about 2^17 units where the rows allow; a block's
** pieces the largest power of 2 up to 8 that they fill, and blocks enough
** for every piece. */
static void col_plan_unit(void) {
  static const int64_t shp[][3] = {/* rows, cols, pcs */
                                   {4096, 4096, 32}, {4096, 256, 64}, {63, 1000, 1},
                                   {128, 1000, 2},   {100, 32, 1},     {1000, 70, 15},
                                   {2, 32, 1},       {200, 32768, 3},  {1 << 20, 1 << 18, 1},
                                   {5000, 3, 0},     {1, 4096, 0},     {1 << 20, 32, 4096},
                                   {300, 30000, 4},  {600, 20000, 7}};
  int bad = 0;
  for (size_t i = 0; i < sizeof shp / sizeof *shp; i++) {
    int64_t shape[2] = {shp[i][1], shp[i][0]}, xs[2] = {8, 8 * shp[i][1]}, rs[2] = {8, 0};
    LayoutArray a[2] = {{.esize = 8, .strides = xs}, {.esize = 8, .strides = rs}};
    Layout L = {.ndim = 2, .n = shp[i][0] * shp[i][1], .shape = shape, .narrays = 2, .a = a,
                .axes = true, .seg = shp[i][0], .nseg = shp[i][1]};
    Program p = {0};
    IrArray arr[2] = {{.role = JITC_INPUT}, {.role = JITC_RESULT}};
    p.arrays = arr;
    p.narrays = 2;
    CudaAxisRun R;
    cuda_axis_plan(L.seg, L.nseg, &R);
    bool col = cuda_axis_col_plan(&L, &p, (const char[]){CUDA_STRIDED, CUDA_CONTIG}, &R);
    int64_t rows = col ? (L.seg - 1) / R.pps + 1 : 0;
    int pw = 1;
    while (col && pw < 8 && pw * 2 <= R.pps)
      pw *= 2;
    bool ok = col == (shp[i][2] > 0) && (!col || (R.pps == shp[i][2] && R.col &&
                                                   (R.pps - 1) * rows < L.seg &&
                                                   (R.pps == 1 || rows >= 64) &&
                                                   R.warps == pw &&
                                                   R.groups == (R.pps - 1) / pw + 1));
    if (!ok && bad++ < 3)
      printf("FAIL axis_fake.col_plan: (%lld, %lld): column form %d, %lld pieces (want %lld)\n",
             (long long)shp[i][0], (long long)shp[i][1], col, (long long)(col ? R.pps : 0),
             (long long)shp[i][2]);
  }
  if (bad)
    nfail++;
  else
    printf("ok axis_fake.col_plan (%d cases)\n", (int)(sizeof shp / sizeof *shp));
}

int main(void) {
  cut_unit();
  col_plan_unit();
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip axis_fake: %s\n", jitc_errmsg(ctx));
    jitc_context_free(ctx);
    return nfail ? 1 : 0;
  }
  char err[256];
  void *fake = getenv("JITC_LIBCUDA") ? dlopen(getenv("JITC_LIBCUDA"), RTLD_LAZY | RTLD_NOLOAD)
                                      : NULL;
  if (fake)
    *(void **)&fake_axis_kernel = dlsym(fake, "fake_axis_kernel");
  if (!fake_axis_kernel || cuda_load_driver(&A, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("skip axis_fake: not the fake driver of tests/cuda_fake.c\n");
    jitc_context_free(ctx);
    return nfail ? 1 : 0;
  }
  host_cases(ctx);
  device_cases(ctx);
  flat_cases(ctx);
  fake_axis_kernel(NULL, NULL, 0, NULL, 0, NULL, 0, NULL);
  jitc_context_free(ctx);
  return nfail ? 1 : 0;
}
