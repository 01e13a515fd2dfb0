/*
** nd_gpu.c -- jitc_run_device_arrays on a GPU: random views of device
** memory against interp's jitc_run_arrays over the same views of host
** copies.
**
**   nd_gpu check   everything below
**   nd_gpu quick   fewer trials, no large run (for compute-sanitizer)
**
** Each trial draws a shape of 1 to 5 axes and, per array, a view of it: a
** shape that broadcasts to it (leading axes dropped, axes of 1, zero
** strides), with steps, reversed axes, a permuted storage order, and an
** offset of one element (off the vector alignment); written arrays have the
** whole shape and no zero stride.  The same bytes are laid out on the
** device and on the host; the cuda kernel runs on the device views on a
** stream, interp on the host views, and every byte of every written buffer
** must agree (what lies around the views included).  Programs: element-wise
** ones with `i`, in place, a program split into several kernels, and
** reductions: exact ones against interp, float sums against the bits of
** the same cuda kernel over contiguous copies (jitc_run_device) laid out in
** the order the run takes (the arrays' memory order where the program
** finds no argmin or argmax), as the docs promise; then transposed views, which run in tiles.  check also runs
** 2^32 + 4102 uint8 elements of two axes (a 64-bit index) against the values
** they must have.  Prints "ok NAME",
** "FAIL NAME: why", "skip NAME: why" (tests/run.sh protocol).
*/
#include "../../src/jitc_int.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;

/* A view of `nd` axes over a buffer laid out alike on the host and the device. */
typedef struct NdView {
  int nd;
  int64_t shape[5], strides[5], off; /* off: bytes from the buffer to element 0 */
  size_t bytes, es;
  char *host;
  CUdeviceptr dev;
} NdView;

static int64_t pick(const int64_t *set, int n) { return set[next() % (uint64_t)n]; }

/* Fills n elements of type t: small integers, or floats of every bit. */
static void fill(char *p, jitc_dtype t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 10;
    int32_t k = (int32_t)(r % 13) - 6;
    switch (t) {
    case JITC_FLOAT32: ((float *)(void *)p)[i] = (float)d; break;
    case JITC_FLOAT64: ((double *)(void *)p)[i] = d; break;
    case JITC_INT64: ((int64_t *)(void *)p)[i] = k; break;
    default: ((int32_t *)(void *)p)[i] = k; break;
    }
  }
}

/* Views stored in the reverse order of their axes with no steps, of frames
** of 2 or 3 axes of 33 to 129: transposes, which the kernels run in tiles
** (cuda/access.c: cuda_access_tile_body). */
static bool transposes;

/* A view of `shape` (broadcasting to the frame when `bcast`): steps of 1 or
** 2, reversed axes, a random storage order, zero strides where bcast. */
static NdView view_new(int nd, const int64_t *shape, jitc_dtype t, bool bcast) {
  size_t es = jitc_dtype_size(t);
  NdView v = {.nd = nd, .es = es};
  int64_t ext[5], step[5], order[5];
  bool zero[5], rev[5];
  for (int d = 0; d < nd; d++) {
    v.shape[d] = shape[d];
    zero[d] = bcast && shape[d] > 1 && next() % 5 == 0;
    step[d] = next() % 3 == 0 ? 2 : 1;
    rev[d] = next() % 4 == 0;
    ext[d] = zero[d] ? 1 : shape[d] * step[d];
    order[d] = d;
  }
  for (int d = nd - 1; d > 0; d--) { /* a random storage order */
    int e = (int)(next() % (uint64_t)(d + 1));
    int64_t t = order[d];
    order[d] = order[e], order[e] = t;
  }
  for (int d = 0; d < nd && transposes; d++)
    order[d] = nd - 1 - d, step[d] = 1, ext[d] = zero[d] ? 1 : shape[d];
  int64_t c = (int64_t)es, total = 1;
  for (int q = nd - 1; q >= 0; q--) {
    int d = (int)order[q];
    v.strides[d] = zero[d] ? 0 : c * step[d];
    c *= ext[d];
    total *= ext[d];
  }
  v.off = next() % 2 ? (int64_t)es : 0;
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

static void view_free(NdView *v) {
  free(v->host);
  if (v->dev)
    A.cuMemFree(v->dev);
}

static jitc_array on_host(const NdView *v) {
  return (jitc_array){v->host + v->off, v->nd, v->shape, v->strides};
}
static jitc_array on_device(const NdView *v) {
  return (jitc_array){(void *)(uintptr_t)(v->dev + (CUdeviceptr)v->off), v->nd, v->shape,
                      v->strides};
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, jitc_dtype t, jitc_target tg) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = tg;
  jitc_array_decl d[2] = {{"a", t}, {"b", t}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, 2, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL nd_gpu.compile: %s: %s\n", src, jitc_errmsg(ctx));
    nfail++;
  }
  return k;
}

/* View v's stride over frame axis d (0 where it broadcasts). */
static int64_t frame_stride(const NdView *v, int fnd, const int64_t *fshape, int d) {
  int e = d - (fnd - v->nd);
  return e < 0 || (v->shape[e] == 1 && fshape[d] != 1) ? 0 : v->strides[e];
}

/* The order of the frame's axes (outermost first) that a run over views v
** takes where its order is free: src/layout.c's memory_order, NumPy's
** npyiter_find_best_axis_ordering, an insertion sort innermost first. */
static void memory_order(const NdView *v, int nv, int fnd, const int64_t *fshape, int *perm) {
  int in[5];
  for (int k = 0; k < fnd; k++)
    in[k] = fnd - 1 - k;
  for (int i0 = 1; i0 < fnd; i0++) {
    int pos = i0, ax0 = in[i0];
    for (int i1 = i0 - 1; i1 >= 0; i1--) {
      bool ambiguous = true, swap = false;
      for (int j = 0; j < nv; j++) {
        int64_t s0 = llabs(frame_stride(&v[j], fnd, fshape, ax0));
        int64_t s1 = llabs(frame_stride(&v[j], fnd, fshape, in[i1]));
        if (!s0 || !s1)
          continue;
        if (s1 <= s0)
          swap = false;
        else if (ambiguous)
          swap = true;
        ambiguous = false;
      }
      if (ambiguous)
        continue;
      if (!swap)
        break;
      pos = i1;
    }
    memmove(in + pos + 1, in + pos, sizeof(int) * (size_t)(i0 - pos));
    in[pos] = ax0;
  }
  for (int d = 0; d < fnd; d++)
    perm[d] = in[fnd - 1 - d];
}

/* A contiguous copy of view v broadcast to the frame, on the device, its
** axes in the order perm (outermost first). */
static CUdeviceptr contiguous(const NdView *v, int fnd, const int64_t *fshape, const int *perm,
                              int64_t n) {
  char *h = malloc((size_t)n * v->es + 1);
  for (int64_t k = 0; k < n; k++) {
    int64_t q = k, off = v->off;
    for (int d = fnd - 1; d >= 0; d--) {
      int64_t idx = q % fshape[perm[d]];
      q /= fshape[perm[d]];
      off += idx * frame_stride(v, fnd, fshape, perm[d]);
    }
    memcpy(h + (size_t)k * v->es, v->host + off, v->es);
  }
  CUdeviceptr d = 0;
  A.cuMemAlloc(&d, (size_t)n * v->es + 1);
  A.cuMemcpyHtoD(d, h, (size_t)n * v->es + 1);
  free(h);
  return d;
}

static const char *const PROGS[] = {
    "c = a + b * 2 - i",
    "c = where(a > b, a - b, b * 3)",
    "a[i] = a * 2 + b",
    "s = sum(a); m = max(b); k = argmin(a + b); c = a - b",
    "s = sum(a * b); t = mean(b)",
};

/* The results of k over contiguous copies of the views v (the same kernel
** through jitc_run_device, n elements), laid out in the order the run over
** the views takes (C order where it counts positions: c_order), into
** want[a] for each result a; false when it could not run. */
static bool over_copies(jitc_context *ctx, CUstream s, jitc_kernel *k, const NdView *v, int na,
                        int fnd, const int64_t *fshape, int64_t n, bool c_order,
                        char (*want)[16]) {
  uint64_t ptrs[8];
  NdView read[8];
  int nread = 0, perm[5];
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &an, &role, &dt);
    if (role != JITC_RESULT)
      read[nread++] = v[a];
  }
  for (int d = 0; d < fnd; d++)
    perm[d] = d;
  if (!c_order)
    memory_order(read, nread, fnd, fshape, perm);
  CUdeviceptr own[8] = {0};
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &an, &role, &dt);
    if (role == JITC_OUTPUT || role == JITC_RESULT)
      A.cuMemAlloc(&own[a], role == JITC_RESULT ? 16 : (size_t)n * v[a].es + 1);
    else
      own[a] = contiguous(&v[a], fnd, fshape, perm, n);
    ptrs[a] = own[a];
  }
  bool ok = jitc_run_device(ctx, k, n, ptrs, NULL, s) == JITC_OK;
  A.cuStreamSynchronize(s);
  for (int a = 0; a < na; a++) {
    if (ok && v[a].nd == 0)
      A.cuMemcpyDtoH(want[a], own[a], v[a].es);
    A.cuMemFree(own[a]);
  }
  return ok;
}

/* One trial: program `prog` in dtype t over random views. */
static void trial(jitc_context *ctx, CUstream s, const char *prog, jitc_dtype t, int q) {
  char name[200];
  snprintf(name, sizeof name, "nd_gpu.trial %d %s '%.60s'", q, jitc_dtype_name(t), prog);
  jitc_kernel *kc = compile(ctx, prog, t, JITC_TARGET_CUDA);
  jitc_kernel *ki = compile(ctx, prog, t, JITC_TARGET_INTERP);
  if (!kc || !ki) {
    jitc_kernel_free(kc);
    jitc_kernel_free(ki);
    return;
  }
  static const int64_t sizes[] = {1, 2, 3, 5, 8, 17, 64, 129}, tsizes[] = {33, 40, 64, 129};
  int fnd = transposes ? 2 + (int)(next() % 2) : 1 + (int)(next() % 5);
  int64_t fshape[5], n = 1;
  for (int d = 0; d < fnd; d++) {
    fshape[d] = transposes ? pick(tsizes, 4) : pick(sizes, 8);
    while (n * fshape[d] > 300000)
      fshape[d] = 1;
    n *= fshape[d];
  }
  int na = jitc_kernel_array_count(kc);
  NdView v[8];
  jitc_array hc[8], dc[8];
  bool written[8] = {0}, result[8] = {0}, any_result = false, full = false;
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(kc, a, &an, &role, &dt);
    int64_t shape[5];
    int nd = fnd;
    if (role == JITC_INPUT && full) { /* a shape that broadcasts to the frame */
      nd = fnd - (int)(next() % (uint64_t)(fnd + 1)) / 2;
      for (int d = 0; d < nd; d++)
        shape[d] = next() % 4 == 0 ? 1 : fshape[fnd - nd + d];
    } else { /* the first input has the frame's shape, which the outputs have */
      full |= role == JITC_INPUT || role == JITC_INOUT;
      memcpy(shape, fshape, sizeof shape);
    }
    result[a] = role == JITC_RESULT;
    any_result |= result[a];
    written[a] = role != JITC_INPUT;
    v[a] = view_new(result[a] ? 0 : nd, shape, dt, role == JITC_INPUT);
    hc[a] = on_host(&v[a]);
    dc[a] = on_device(&v[a]);
  }
  /* Results: the bits of the same kernel over contiguous copies, taken
  ** before the runs change the arrays updated in place. */
  char want[8][16];
  bool have = any_result && over_copies(ctx, s, kc, v, na, fnd, fshape, n,
                                        strstr(prog, "arg") != NULL, want);
  jitc_status st = jitc_run_device_arrays(ctx, kc, dc, NULL, s);
  jitc_status si = jitc_run_arrays(ctx, ki, hc, NULL, NULL);
  A.cuStreamSynchronize(s);
  int bad = 0;
  if (st != JITC_OK || si != JITC_OK || (any_result && !have)) {
    printf("FAIL %s: cuda %s, interp %s%s: %s\n", name, jitc_status_name(st),
           jitc_status_name(si), any_result && !have ? ", no run over copies" : "",
           jitc_errmsg(ctx));
    bad = 1;
  }
  char *got = NULL;
  for (int a = 0; a < na && !bad; a++) {
    if (!written[a])
      continue;
    got = realloc(got, v[a].bytes);
    A.cuMemcpyDtoH(got, v[a].dev, v[a].bytes);
    if (result[a]) {
      if (memcmp(want[a], got + v[a].off, v[a].es)) {
        printf("FAIL %s: result %d: other bits than over contiguous copies\n", name, a);
        bad = 1;
      }
    } else if (memcmp(got, v[a].host, v[a].bytes)) {
      size_t b = 0;
      while (got[b] == v[a].host[b])
        b++;
      printf("FAIL %s: array %d (frame of %d axes, %lld elements): byte %zu of its buffer "
             "differs from interp's\n", name, a, fnd, (long long)n, b);
      bad = 1;
    }
  }
  free(got);
  if (!bad)
    printf("ok %s (%d axes, %lld elements)\n", name, fnd, (long long)n);
  nfail += bad;
  for (int a = 0; a < na; a++)
    view_free(&v[a]);
  jitc_kernel_free(kc);
  jitc_kernel_free(ki);
}

/* 2^32 + 4102 uint8 elements of two axes: a contiguous, b a column, c
** contiguous: the kernel of pattern 2:cbc:64, its index unravelled in 64
** bits.  c[r][j] must be 3 + b[r] + (its index mod 256), mod 256. */
static void big(jitc_context *ctx, CUstream s) {
  const int64_t cols = ((int64_t)1 << 31) + 2051, n = 2 * cols;
  int64_t shape[2] = {2, cols}, colshape[2] = {2, 1};
  CUdeviceptr da = 0, db = 0, dc = 0;
  if (A.cuMemAlloc(&da, (size_t)n) || A.cuMemAlloc(&dc, (size_t)n) || A.cuMemAlloc(&db, 2)) {
    printf("skip nd_gpu.big: not 8.6 GB of device memory\n");
    A.cuMemFree(da), A.cuMemFree(dc);
    return;
  }
  uint8_t col[2] = {5, 7};
  A.cuMemsetD8Async(da, 3, (size_t)n, s);
  A.cuMemcpyHtoD(db, col, 2);
  jitc_kernel *k = compile(ctx, "c = a + b + u8(i % 256)", JITC_UINT8, JITC_TARGET_CUDA);
  jitc_array arr[3];
  if (k) {
    arr[jitc_kernel_find_array(k, "a")] = (jitc_array){(void *)(uintptr_t)da, 2, shape, NULL};
    arr[jitc_kernel_find_array(k, "b")] = (jitc_array){(void *)(uintptr_t)db, 2, colshape, NULL};
    arr[jitc_kernel_find_array(k, "c")] = (jitc_array){(void *)(uintptr_t)dc, 2, shape, NULL};
  }
  jitc_status st = k ? jitc_run_device_arrays(ctx, k, arr, NULL, s) : JITC_E_INTERNAL;
  A.cuStreamSynchronize(s);
  int64_t wrong = 0, first = -1;
  size_t piece = (size_t)1 << 28;
  uint8_t *h = malloc(piece);
  for (int64_t at = 0; st == JITC_OK && h && at < n; at += (int64_t)piece) {
    size_t m = n - at < (int64_t)piece ? (size_t)(n - at) : piece;
    A.cuMemcpyDtoH(h, dc + (CUdeviceptr)at, m);
    for (size_t j = 0; j < m; j++) {
      int64_t g = at + (int64_t)j;
      if (h[j] != (uint8_t)(3 + col[g / cols] + g % 256) && !wrong++)
        first = g;
    }
  }
  if (st != JITC_OK)
    printf("FAIL nd_gpu.big: %s\n", jitc_errmsg(ctx)), nfail++;
  else if (wrong)
    printf("FAIL nd_gpu.big: %lld of %lld elements wrong, the first at %lld\n", (long long)wrong,
           (long long)n, (long long)first), nfail++;
  else
    printf("ok nd_gpu.big (%lld uint8 elements of shape (2, %lld), a column broadcast)\n",
           (long long)n, (long long)cols);
  free(h);
  jitc_kernel_free(k);
  A.cuMemFree(da), A.cuMemFree(db), A.cuMemFree(dc);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && !strcmp(argv[1], "quick");
  char err[512];
  if (cuda_load_driver(&A, NULL, err, sizeof err)) {
    printf("skip nd_gpu: %s\n", err);
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
  int trials = quick ? 30 : 300;
  for (int q = 0; q < trials; q++) {
    const char *prog = q % 10 == 9 ? many_statements() : PROGS[q % 5];
    trial(ctx, s, prog, q % 10 == 9 ? JITC_FLOAT64 : types[(q / 5) % 4], q);
  }
  transposes = true;
  for (int q = 0; q < (quick ? 10 : 60); q++)
    trial(ctx, s, PROGS[q % 5], types[(q / 5) % 4], 1000 + q);
  transposes = false;
  if (!quick)
    big(ctx, s);
  A.cuStreamDestroy(s);
  jitc_context_free(ctx);
  A.cuDevicePrimaryCtxRelease(d0);
  return nfail ? 1 : 0;
}
