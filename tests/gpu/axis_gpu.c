/*
** axis_gpu.c -- reductions over axes on a GPU (cuda/axis.c, cuda/axisrun.c):
** jitc_run_device_arrays over random views of device memory against
** interp's jitc_run_arrays over the same views of host copies.
**
**   axis_gpu check   everything below
**   axis_gpu quick   fewer trials, no large runs (for compute-sanitizer)
**
** Each trial draws a frame of 1 to 4 axes, a reduction (all nine), its
** axes (one, maybe negative, or a tuple, keepdims or not) and views of every
** array as tests/gpu/nd_gpu.c does (steps, reversed axes, permuted storage,
** an offset of one element, broadcast inputs), the result a strided view of
** its shape too, and an element-wise output beside the reduction.  The
** output and the exact reductions (min, max, argmin, argmax, any, all,
** integer sums and products) must be interp's bytes, what lies around the
** views included; float sums, means and products within rounding of
** interp's (the pieces add in another order).  Each cuda run is done twice:
** the same bits.  check also runs long segments of several pieces, many
** long segments of one piece each (host and device arrays, the same bits),
** millions of two-element segments and columns, and C-order views reduced over outer
** axes, the column form's case (cuda/axiscol.c).  Prints "ok NAME", "FAIL NAME: why",
** "skip NAME: why" (tests/run.sh protocol).
*/
#include "../../src/jitc_int.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;

typedef struct View {
  int nd;
  int64_t shape[5], strides[5], off;
  size_t bytes, es;
  char *host;
  CUdeviceptr dev;
} View;

static void fill(char *p, jitc_dtype t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 10;
    int32_t k = (int32_t)(r % 13) - 6;
    switch (t) {
    case JITC_FLOAT32: ((float *)(void *)p)[i] = (float)d; break;
    case JITC_FLOAT64: ((double *)(void *)p)[i] = d; break;
    case JITC_INT64: ((int64_t *)(void *)p)[i] = k; break;
    case JITC_INT32: ((int32_t *)(void *)p)[i] = k; break;
    default: memset(p + i * (int64_t)jitc_dtype_size(t), (int)(r & 1), jitc_dtype_size(t)); break;
    }
  }
}

/* Views in C order, whole (no step, reversal, offset or zero stride), for
** the trials of the column form (cuda/axiscol.c). */
static bool c_order;

/* A view of `shape` laid out alike on the host and the device: steps of 1
** or 2, reversed axes, a random storage order, zero strides where bcast. */
static View view_new(int nd, const int64_t *shape, jitc_dtype t, bool bcast) {
  size_t es = jitc_dtype_size(t);
  View v = {.nd = nd, .es = es};
  int64_t ext[5], step[5], order[5];
  bool zero[5], rev[5];
  for (int d = 0; d < nd; d++) {
    v.shape[d] = shape[d];
    zero[d] = bcast && shape[d] > 1 && next() % 5 == 0;
    step[d] = next() % 3 == 0 ? 2 : 1;
    rev[d] = next() % 4 == 0;
    ext[d] = zero[d] ? 1 : shape[d] * step[d];
    order[d] = d;
    if (c_order)
      zero[d] = rev[d] = false, step[d] = 1, ext[d] = shape[d];
  }
  for (int d = nd - 1; d > 0 && !c_order; d--) {
    int e = (int)(next() % (uint64_t)(d + 1));
    int64_t x = order[d];
    order[d] = order[e], order[e] = x;
  }
  int64_t c = (int64_t)es, total = 1;
  for (int q = nd - 1; q >= 0; q--) {
    int d = (int)order[q];
    v.strides[d] = zero[d] ? 0 : c * step[d];
    c *= ext[d];
    total *= ext[d];
  }
  v.off = next() % 2 && !c_order ? (int64_t)es : 0;
  for (int d = 0; d < nd; d++)
    if (rev[d] && v.strides[d]) {
      v.off += (shape[d] - 1) * v.strides[d];
      v.strides[d] = -v.strides[d];
    }
  v.bytes = (size_t)total * es + 2 * es;
  v.host = malloc(v.bytes);
  fill(v.host, t, total + 2);
  if (A.cuMemAlloc(&v.dev, v.bytes) != CUDA_SUCCESS)
    v.dev = 0;
  else
    A.cuMemcpyHtoD(v.dev, v.host, v.bytes);
  return v;
}

static void view_free(View *v) {
  free(v->host);
  if (v->dev)
    A.cuMemFree(v->dev);
}

/* The byte offset of element k (C order) of view v. */
static int64_t at_of(const View *v, int64_t k) {
  int64_t off = v->off;
  for (int d = v->nd - 1; d >= 0; d--) {
    off += k % v->shape[d] * v->strides[d];
    k /= v->shape[d];
  }
  return off;
}

static double as_double(const char *p, jitc_dtype t) {
  switch (t) {
  case JITC_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
  case JITC_FLOAT64: { double f; memcpy(&f, p, 8); return f; }
  default: return 0;
  }
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, jitc_dtype t, jitc_target tg) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = tg;
  jitc_array_decl d[2] = {{"a", t}, {"b", t}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, 2, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL axis_gpu.compile: %s: %s\n", src, jitc_errmsg(ctx));
    nfail++;
  }
  return k;
}

static const char *const OPS[] = {"sum", "prod", "mean", "min", "max", "any", "all", "argmin",
                                  "argmax"};

/* One trial: reduction `op` over views of a frame of fnd axes `given`
** (drawn when fnd is 0) in dtype t, over axis `axis` (-1: drawn). */
static void trial(jitc_context *ctx, CUstream s, int op, jitc_dtype t, int fnd,
                  const int64_t *given, int axis, int q) {
  int64_t fshape[5], n = 1;
  static const int64_t sizes[] = {1, 2, 3, 5, 17, 64, 129, 300, 5000};
  if (!fnd) {
    fnd = 1 + (int)(next() % 4);
    for (int d = 0; d < fnd; d++) {
      fshape[d] = sizes[next() % 9];
      while (n * fshape[d] > 300000)
        fshape[d] = 1 + fshape[d] / 7;
      n *= fshape[d];
    }
  } else {
    for (int d = 0; d < fnd; d++)
      n *= fshape[d] = given[d];
  }
  bool arg = op >= 7, fl = t == JITC_FLOAT32 || t == JITC_FLOAT64;
  char axes[64];
  int a0 = (int)(next() % (uint64_t)fnd), a1 = (int)(next() % (uint64_t)fnd);
  if (axis >= 10) /* a tuple of the first two */
    snprintf(axes, sizeof axes, "axis=(0, 1)");
  else if (axis >= 0)
    snprintf(axes, sizeof axes, "axis=%d", axis);
  else if (arg || a0 == a1 || next() % 2)
    snprintf(axes, sizeof axes, "axis=%d", next() % 2 ? a0 - fnd : a0);
  else
    snprintf(axes, sizeof axes, "axis=(%d, %d)", a0, a1 - fnd);
  const char *expr = op == 1 && fl ? "1 + (a + b) / 64" : "a + b";
  char prog[200];
  snprintf(prog, sizeof prog, "c = a - b\ns = %s(%s, %s%s)", OPS[op], expr, axes,
           next() % 3 == 0 ? ", keepdims=True" : "");
  char name[300];
  snprintf(name, sizeof name, "axis_gpu.trial %d %s '%s' over %lld elements", q,
           jitc_dtype_name(t), strchr(prog, '\n') + 1, (long long)n);
  jitc_kernel *kc = compile(ctx, prog, t, JITC_TARGET_CUDA);
  jitc_kernel *ki = compile(ctx, prog, t, JITC_TARGET_INTERP);
  if (!kc || !ki) {
    jitc_kernel_free(kc);
    jitc_kernel_free(ki);
    return;
  }
  int ia = jitc_kernel_find_array(kc, "a"), ib = jitc_kernel_find_array(kc, "b");
  int ic = jitc_kernel_find_array(kc, "c"), is = jitc_kernel_find_array(kc, "s");
  View v[4];
  jitc_array hc[4], dc[4];
  int64_t bshape[5];
  int bnd = c_order ? fnd : fnd - (int)(next() % (uint64_t)(fnd + 1)) / 2;
  for (int d = 0; d < bnd; d++)
    bshape[d] = next() % 4 == 0 && !c_order ? 1 : fshape[fnd - bnd + d];
  v[ia] = view_new(fnd, fshape, t, false);
  v[ib] = view_new(bnd, bshape, t, true);
  v[ic] = view_new(fnd, fshape, t, false);
  hc[ia] = (jitc_array){v[ia].host + v[ia].off, fnd, v[ia].shape, v[ia].strides};
  hc[ib] = (jitc_array){v[ib].host + v[ib].off, bnd, v[ib].shape, v[ib].strides};
  hc[ic] = (jitc_array){v[ic].host + v[ic].off, fnd, v[ic].shape, v[ic].strides};
  int rnd;
  int64_t rshape[5];
  jitc_dtype rt;
  jitc_kernel_array(kc, is, NULL, NULL, &rt);
  hc[is] = (jitc_array){NULL, 0, NULL, NULL};
  jitc_status sh = jitc_array_shape(ctx, ki, hc, is, &rnd, rshape);
  if (sh != JITC_OK) { /* an axis out of bounds (the tuple's second may repeat the first) */
    printf("ok %s (refused: %s)\n", name, jitc_errmsg(ctx));
    for (int a = 0; a < 3; a++)
      view_free(&v[a == 0 ? ia : a == 1 ? ib : ic]);
    jitc_kernel_free(kc);
    jitc_kernel_free(ki);
    return;
  }
  v[is] = view_new(rnd, rshape, rt, false);
  hc[is] = (jitc_array){v[is].host + v[is].off, rnd, v[is].shape, v[is].strides};
  for (int a = 0; a < 4; a++)
    dc[a] = (jitc_array){(void *)(uintptr_t)(v[a].dev + (CUdeviceptr)v[a].off), hc[a].ndim,
                         hc[a].shape, hc[a].strides};
  /* Twice on the GPU, the first result kept. */
  char *first = malloc(v[is].bytes), *got = malloc(v[is].bytes > v[ic].bytes ? v[is].bytes
                                                                              : v[ic].bytes);
  jitc_status st = jitc_run_device_arrays(ctx, kc, dc, NULL, s);
  A.cuStreamSynchronize(s);
  A.cuMemcpyDtoH(first, v[is].dev, v[is].bytes);
  A.cuMemcpyHtoD(v[is].dev, v[is].host, v[is].bytes);
  jitc_status st2 = st == JITC_OK ? jitc_run_device_arrays(ctx, kc, dc, NULL, s) : st;
  A.cuStreamSynchronize(s);
  jitc_status si = st == JITC_OK ? jitc_run_arrays(ctx, ki, hc, NULL, NULL) : JITC_OK;
  int bad = 0;
  if (st != JITC_OK || st2 != JITC_OK || si != JITC_OK) {
    jitc_status sj = jitc_run_arrays(ctx, ki, hc, NULL, NULL);
    if (!(st == sj && st2 == sj)) {
      printf("FAIL %s: cuda %s, interp %s: %s\n", name, jitc_status_name(st),
             jitc_status_name(sj), jitc_errmsg(ctx));
      bad = 1;
    } else {
      printf("ok %s (refused alike)\n", name);
      goto done;
    }
  }
  A.cuMemcpyDtoH(got, v[ic].dev, v[ic].bytes);
  if (!bad && memcmp(got, v[ic].host, v[ic].bytes)) {
    printf("FAIL %s: the output c differs from interp's\n", name);
    bad = 1;
  }
  A.cuMemcpyDtoH(got, v[is].dev, v[is].bytes);
  if (!bad && memcmp(got, first, v[is].bytes)) {
    printf("FAIL %s: two runs gave other bits\n", name);
    bad = 1;
  }
  bool approx = (op <= 2) && (rt == JITC_FLOAT32 || rt == JITC_FLOAT64);
  int64_t nres = 1;
  for (int d = 0; d < rnd; d++)
    nres *= rshape[d];
  int64_t seg = nres ? n / nres : 0;
  if (!bad && !approx && memcmp(got, v[is].host, v[is].bytes)) {
    printf("FAIL %s: the result differs from interp's\n", name);
    bad = 1;
  }
  for (int64_t r = 0; r < nres && approx && !bad; r++) {
    int64_t o = at_of(&v[is], r);
    double g = as_double(got + o, rt), w = as_double(v[is].host + o, rt);
    double eps = rt == JITC_FLOAT32 ? 1.2e-7 : 2.3e-16;
    double mag = op == 0 ? 10.0 * (double)seg : op == 2 ? 10.0 : 2 * fabs(w);
    if (!(fabs(g - w) <= (double)(seg + 8) * eps * mag) && !(g == w)) {
      printf("FAIL %s: result %lld: %.17g, interp %.17g\n", name, (long long)r, g, w);
      bad = 1;
    }
  }
  if (!bad)
    printf("ok %s (%d axes, segments of %lld)\n", name, fnd, (long long)seg);
done:
  nfail += bad;
  free(first);
  free(got);
  for (int a = 0; a < 4; a++)
    view_free(&v[a]);
  jitc_kernel_free(kc);
  jitc_kernel_free(ki);
}

/* Segments reduced by jitc_a256: `s = sum(a, axis=1)` of a (rows, cols)
** matrix of type t over host arrays (the host pipeline's chunks of whole
** pieces), over device arrays, and over a device copy one element off 16
** bytes, which loads each group of elements one by one where the aligned
** copy loads it as one vector (cuda/axis.c, cuda_axis_group): the same bits
** all three ways, within rounding of interp's (integers: interp's bits).
** Many rows of one piece each (up to 16 of CUDA_APIECE: cuda_axis_plan),
** or, below 1024 rows, pieces of CUDA_APIECE and a shorter last one. */
static void whole_segments(jitc_context *ctx, CUstream st, int64_t rows, int64_t cols,
                           jitc_dtype t) {
  char name[120];
  snprintf(name, sizeof name, "axis_gpu.whole_segments %s (%lld, %lld)", jitc_dtype_name(t),
           (long long)rows, (long long)cols);
  jitc_kernel *kc = compile(ctx, "s = sum(a, axis=1)", t, JITC_TARGET_CUDA);
  jitc_kernel *ki = compile(ctx, "s = sum(a, axis=1)", t, JITC_TARGET_INTERP);
  bool fl = t == JITC_FLOAT32 || t == JITC_FLOAT64;
  jitc_dtype rt = fl ? t : JITC_INT64;
  size_t es = jitc_dtype_size(t), rs = jitc_dtype_size(rt), n = (size_t)(rows * cols);
  char *a = malloc(n * es), *sh = calloc((size_t)rows, rs), *sd = calloc((size_t)rows, rs),
       *so = calloc((size_t)rows, rs), *si = calloc((size_t)rows, rs);
  CUdeviceptr da = 0, dm = 0, ds = 0, dso = 0;
  if (!kc || !ki || !a || !sh || !sd || !so || !si ||
      A.cuMemAlloc(&da, n * es) != CUDA_SUCCESS || A.cuMemAlloc(&dm, n * es + 16) != CUDA_SUCCESS ||
      A.cuMemAlloc(&ds, (size_t)rows * rs) != CUDA_SUCCESS ||
      A.cuMemAlloc(&dso, (size_t)rows * rs) != CUDA_SUCCESS) {
    printf("skip %s: no memory\n", name);
    goto out;
  }
  fill(a, t, (int64_t)n);
  A.cuMemcpyHtoD(da, a, n * es);
  A.cuMemcpyHtoD(dm + es, a, n * es);
  int64_t shape[2] = {rows, cols};
  jitc_array hh[2] = {{a, 2, shape, NULL}, {sh, 1, shape, NULL}};
  jitc_array hi[2] = {{a, 2, shape, NULL}, {si, 1, shape, NULL}};
  jitc_array dd[2] = {{(void *)(uintptr_t)da, 2, shape, NULL}, {(void *)(uintptr_t)ds, 1, shape, NULL}};
  jitc_array dmis[2] = {{(void *)(uintptr_t)(dm + es), 2, shape, NULL},
                        {(void *)(uintptr_t)dso, 1, shape, NULL}};
  if (jitc_run_arrays(ctx, kc, hh, NULL, NULL) != JITC_OK ||
      jitc_run_arrays(ctx, ki, hi, NULL, NULL) != JITC_OK ||
      jitc_run_device_arrays(ctx, kc, dd, NULL, st) != JITC_OK ||
      jitc_run_device_arrays(ctx, kc, dmis, NULL, st) != JITC_OK) {
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
    nfail++;
    goto out;
  }
  A.cuStreamSynchronize(st);
  A.cuMemcpyDtoH(sd, ds, (size_t)rows * rs);
  A.cuMemcpyDtoH(so, dso, (size_t)rows * rs);
  for (int64_t r = 0; r < rows; r++) {
    const char *h = sh + r * (int64_t)rs, *d = sd + r * (int64_t)rs, *o = so + r * (int64_t)rs,
               *w = si + r * (int64_t)rs;
    double bound = (rt == JITC_FLOAT32 ? 1e-6 : 1e-14) * (double)cols * 5;
    bool near = fl ? fabs(as_double(h, rt) - as_double(w, rt)) <= bound : !memcmp(h, w, rs);
    if (memcmp(h, d, rs) || memcmp(h, o, rs) || !near) {
      printf("FAIL %s: row %lld: host %.9g, device %.9g, device one element off %.9g, "
             "interp %.9g (integers: bytes %s)\n",
             name, (long long)r, as_double(h, rt), as_double(d, rt), as_double(o, rt),
             as_double(w, rt), near ? "alike" : "differ");
      nfail++;
      goto out;
    }
  }
  printf("ok %s\n", name);
out:
  if (da)
    A.cuMemFree(da);
  if (dm)
    A.cuMemFree(dm);
  if (ds)
    A.cuMemFree(ds);
  if (dso)
    A.cuMemFree(dso);
  free(a);
  free(sh);
  free(sd);
  free(so);
  free(si);
  jitc_kernel_free(kc);
  jitc_kernel_free(ki);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && !strcmp(argv[1], "quick");
  char err[512];
  if (cuda_load_driver(&A, NULL, err, sizeof err)) {
    printf("skip axis_gpu: %s\n", err);
    return 0;
  }
  CUdevice d0;
  CUcontext prim0;
  A.cuDeviceGet(&d0, 0);
  A.cuDevicePrimaryCtxRetain(&prim0, d0);
  A.cuCtxSetCurrent(prim0);
  jitc_context *ctx = jitc_context_new();
  CUstream s;
  A.cuStreamCreate(&s, 0);
  static const jitc_dtype types[] = {JITC_FLOAT32, JITC_FLOAT64, JITC_INT32, JITC_INT64};
  int trials = quick ? 27 : 270;
  for (int q = 0; q < trials; q++)
    trial(ctx, s, q % 9, types[(q / 9) % 4], 0, NULL, -1, q);
  /* jitc_a256's vector loads and their one-by-one twins (under
  ** compute-sanitizer too): a row a piece, and rows of several pieces */
  whole_segments(ctx, s, 1024, 4096, JITC_FLOAT32);
  whole_segments(ctx, s, 64, 8200, JITC_FLOAT64);
  if (!quick) { /* several pieces a segment; many segments of 2; columns */
    trial(ctx, s, 0, JITC_FLOAT32, 2, (int64_t[]){2, 5000003}, 1, 1000);
    trial(ctx, s, 8, JITC_FLOAT64, 2, (int64_t[]){3, 1000003}, 1, 1001);
    trial(ctx, s, 2, JITC_FLOAT64, 2, (int64_t[]){2000003, 2}, 1, 1002);
    trial(ctx, s, 3, JITC_INT32, 2, (int64_t[]){40001, 300}, 0, 1003);
    trial(ctx, s, 4, JITC_FLOAT32, 3, (int64_t[]){7, 9000, 5}, 1, 1004);
    /* many segments, each one piece (1024 or more of up to 65536) */
    trial(ctx, s, 0, JITC_FLOAT32, 2, (int64_t[]){1100, 5000}, 1, 1005);
    trial(ctx, s, 7, JITC_FLOAT64, 2, (int64_t[]){1024, 20001}, 1, 1006);
    trial(ctx, s, 2, JITC_FLOAT64, 3, (int64_t[]){1030, 3, 4099}, 10, 1007);
    whole_segments(ctx, s, 1100, 5000, JITC_FLOAT32);
    whole_segments(ctx, s, 1024, 65536, JITC_FLOAT32);
    whole_segments(ctx, s, 4096, 8192, JITC_FLOAT32);
    whole_segments(ctx, s, 2048, 4096, JITC_FLOAT32);
    whole_segments(ctx, s, 1100, 8192, JITC_FLOAT64);
    whole_segments(ctx, s, 1030, 9000, JITC_INT8);
    whole_segments(ctx, s, 300, 10004, JITC_FLOAT32);
    whole_segments(ctx, s, 1100, 4098, JITC_FLOAT32);
  }
  /* The column form: whole C-order views reduced over outer axes, every
  ** reduction and type; columns not a multiple of a warp, pieces of rows
  ** that do not divide them, blocks of 1, 2, 4 and 8 pieces, the last
  ** block's short, a tuple of axes, kept axes on both sides. */
  c_order = true;
  for (int q = 0; q < (quick ? 9 : 36); q++) {
    jitc_dtype t = types[(q / 9) % 4];
    trial(ctx, s, q % 9, t, 2, (int64_t[]){3001, 333}, 0, 2000 + q);
    if (!quick) {
      trial(ctx, s, q % 9, t, 2, (int64_t[]){100, 64}, 0, 2100 + q);
      trial(ctx, s, q % 9, t, 3, (int64_t[]){50, 41, 70}, q % 9 < 7 ? 10 : 0, 2200 + q);
      trial(ctx, s, q % 9, t, 3, (int64_t[]){7, 500, 40}, 1, 2300 + q);
      /* 3 and 4 pieces a column: blocks of 2 and 4 pieces (pw) */
      trial(ctx, s, q % 9, t, 2, (int64_t[]){200, 5000}, 0, 2500 + q);
      trial(ctx, s, q % 9, t, 2, (int64_t[]){300, 2000}, 0, 2600 + q);
    }
  }
  if (!quick)
    trial(ctx, s, 0, JITC_FLOAT32, 2, (int64_t[]){4096, 4096}, 0, 2400);
  c_order = false;
  A.cuStreamDestroy(s);
  jitc_context_free(ctx);
  A.cuDevicePrimaryCtxRelease(d0);
  return nfail ? 1 : 0;
}
