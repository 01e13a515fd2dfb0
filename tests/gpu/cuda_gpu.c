/*
** cuda_gpu.c -- checks and timings of the cuda target on a real GPU.
**
** Modes:
**   cuda_gpu check     differential checks against interp (sizes 0, 1, 7,
**                      4096, 10000019; misaligned host arrays; the scalar
**                      path; launches cut into slices; device buffers; one
**                      array above 2^32 elements; device out of memory; a
**                      device number beyond the count) and timings.
**   cuda_gpu compile   one cold or warm compile in this process: prints the
**                      driver start-up time and the compile's stages.
** Prints "ok NAME", "FAIL NAME: why", "skip NAME: why" and "time NAME value".
** Uses the internal header for the target's buffer hooks, the target's own
** header to make launches slice small arrays, and the loader for the
** reference device-to-device copy.  The environment is read when a context
** is made: a setting is tried in a new context (context_with).
*/
#include "../../src/jitc_int.h"
#include "../../src/cuda/cuda.h"
#include "../../runtime/cuda_api.h"
#include "../../cli/cli.h"
#include "gpu_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int nfail;

static void fail(const char *name, const char *fmt, ...) PRINTF(2, 3);
static void fail(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL %s: ", name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  nfail++;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, const jitc_array_decl *a, int na,
                            jitc_target t) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, a, na, NULL, 0, &o, &k) != JITC_OK) {
    printf("compile error (%s): %s\n", jitc_target_name(t), jitc_errmsg(ctx));
    return NULL;
  }
  return k;
}

/* Deterministic inputs with special values sprinkled in. */
static void fill(void *p, jitc_dtype t, int64_t n) {
  static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e308, -1e-310,
                                    0.5, 1.5, 2.5, -2.5, 3e9, -3e9, 1e20};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 20;
    if (r % 17 == 0)
      d = specials[(r >> 8) % (sizeof specials / sizeof *specials)];
    switch (t) {
    case JITC_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
    case JITC_INT32: ((int32_t *)p)[i] = r % 13 == 0 ? (int32_t)(uint32_t)r : (int32_t)(r % 41) - 20; break;
    case JITC_INT64: ((int64_t *)p)[i] = r % 13 == 0 ? (int64_t)r : (int64_t)(r % 81) - 40; break;
    case JITC_FLOAT32: ((float *)p)[i] = (float)d; break;
    case JITC_FLOAT64: ((double *)p)[i] = d; break;
    default: break;
    }
  }
}

/* Elements differing by more than `ulps` (NaN matches NaN). */
static int64_t ndiff(const void *x, const void *y, jitc_dtype t, int64_t n, int ulps, int64_t *first) {
  int64_t bad = 0;
  *first = -1;
  for (int64_t i = 0; i < n; i++) {
    bool same;
    if (t == JITC_FLOAT32) {
      float a = ((const float *)x)[i], b = ((const float *)y)[i];
      int32_t ia, ib;
      memcpy(&ia, &a, 4);
      memcpy(&ib, &b, 4);
      if (ia < 0) ia = INT32_MIN - ia;
      if (ib < 0) ib = INT32_MIN - ib;
      same = (isnan(a) && isnan(b)) || llabs((long long)ia - ib) <= ulps;
    } else if (t == JITC_FLOAT64) {
      double a = ((const double *)x)[i], b = ((const double *)y)[i];
      int64_t ia, ib;
      memcpy(&ia, &a, 8);
      memcpy(&ib, &b, 8);
      if (ia < 0) ia = INT64_MIN - ia;
      if (ib < 0) ib = INT64_MIN - ib;
      same = (isnan(a) && isnan(b)) || (ia - ib <= ulps && ib - ia <= ulps);
    } else {
      size_t s = jitc_dtype_size(t);
      same = !memcmp((const char *)x + (size_t)i * s, (const char *)y + (size_t)i * s, s);
    }
    if (!same) {
      if (*first < 0) *first = i;
      bad++;
    }
  }
  return bad;
}

typedef struct Case {
  const char *src;
  jitc_dtype t;
  int ulps;
} Case;

static const Case cases[] = {
    {"c = a * 2.5 + b // 3 - b % 2 + a / b", JITC_FLOAT64, 0},
    {"b = exp(a)", JITC_FLOAT32, 4},
    {"c = hypot(a, b); d = a ** 2 + b ** 2.0", JITC_FLOAT64, 4},
    {"a[i] += 1", JITC_FLOAT64, 0},
    {"o = where(a > 0, sqrt(a), -a) + float32(i) + rint(a) + floor(a) + abs(a)", JITC_FLOAT32, 0},
    {"c = minimum(a, b) + fmax(a, b) + clip(a, -1, b) + copysign(a, b) + sign(a) + int64(a) + int32(b)",
     JITC_FLOAT64, 0},
    {"c = (a << b) ^ (b >> a) + a // b - a % b + a * b + a ** 3 + abs(b) + fmod(a, b)", JITC_INT32, 0},
    {"c = (a << b) ^ (b >> a) + a // b - a % b + a * b + a ** 3 - int64(float32(b))", JITC_INT64, 0},
    {"c = a & ~b | (a ^ b); d = a + b; e = a * b; f = where(a, b, ~b); g = float32(a) + 1", JITC_BOOL, 0},
    {"c = isnan(a) | isinf(b) & isfinite(a); d = int32(a); e = int64(b); f = bool(a) ^ bool(b)",
     JITC_FLOAT32, 0},
    {"c = sin(a); d = cos(b); e = log1p(abs(a)); f = tanh(b); g = hypot(a, b); h = arctan2(a, b); "
     "k = cbrt(a); l = exp(b); m = log(abs(a)); o = sinh(b); p = arcsinh(a); q = expm1(b)",
     JITC_FLOAT64, 4},
    {"c = sin(a); d = cos(b); e = log1p(abs(a)); f = tanh(b); g = hypot(a, b); h = arctan2(a, b); "
     "k = cbrt(a); l = exp(b); m = log(abs(a)); o = sinh(b); p = arcsinh(a); q = expm1(b)",
     JITC_FLOAT32, 4},
};
#define NCASES (int)(sizeof cases / sizeof *cases)

/* Runs case c over n elements on interp and cuda, with host pointers offset by
** `shift` elements; returns the number of arrays that differ. */
static int diff_case(jitc_context *ctx, const Case *c, int64_t n, int shift, const char *label) {
  jitc_array_decl decl[2] = {{"a", c->t}, {"b", c->t}};
  jitc_kernel *ki = compile(ctx, c->src, decl, 2, JITC_TARGET_INTERP);
  jitc_kernel *kc = compile(ctx, c->src, decl, 2, JITC_TARGET_CUDA);
  char name[200];
  snprintf(name, sizeof name, "diff[%s] n=%lld %s '%.40s'", jitc_dtype_name(c->t), (long long)n,
           label, c->src);
  if (!ki || !kc) {
    fail(name, "compile failed");
    jitc_kernel_free(ki);
    jitc_kernel_free(kc);
    return 1;
  }
  int na = jitc_kernel_array_count(ki);
  void *base_i[16], *base_c[16], *pi[16], *pc[16];
  jitc_dtype dt[16];
  size_t es[16];
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_kernel_array(ki, a, &an, &role, &dt[a]);
    es[a] = jitc_dtype_size(dt[a]);
    size_t bytes = (size_t)(n + shift + 1) * es[a];
    base_i[a] = malloc(bytes);
    base_c[a] = malloc(bytes);
    pi[a] = (char *)base_i[a] + (size_t)shift * es[a];
    pc[a] = (char *)base_c[a] + (size_t)shift * es[a];
    if (role != JITC_OUTPUT)
      fill(pi[a], dt[a], n);
    else
      memset(pi[a], 0x5a, (size_t)n * es[a]); /* poison: every element must be written */
    memcpy(pc[a], pi[a], (size_t)n * es[a]);
  }
  int bad = 0;
  jitc_run_info info;
  if (jitc_run(ctx, ki, n, pi, NULL, &info) != JITC_OK ||
      jitc_run(ctx, kc, n, pc, NULL, &info) != JITC_OK) {
    fail(name, "run failed: %s", jitc_errmsg(ctx));
    bad = 1;
  }
  for (int a = 0; a < na && !bad; a++) {
    int64_t first;
    int64_t d = ndiff(pi[a], pc[a], dt[a], n, c->ulps, &first);
    if (d) {
      char x[64] = "", y[64] = "";
      char *fx = format_value((char *)pi[a] + (size_t)first * es[a], dt[a]);
      char *fy = format_value((char *)pc[a] + (size_t)first * es[a], dt[a]);
      snprintf(x, sizeof x, "%s", fx ? fx : "?");
      snprintf(y, sizeof y, "%s", fy ? fy : "?");
      free(fx);
      free(fy);
      fail(name, "array %d: %lld elements differ; first at %lld: interp %s, cuda %s", a,
           (long long)d, (long long)first, x, y);
      bad++;
    }
  }
  if (!bad)
    printf("ok %s\n", name);
  for (int a = 0; a < na; a++) {
    free(base_i[a]);
    free(base_c[a]);
  }
  jitc_kernel_free(ki);
  jitc_kernel_free(kc);
  return bad;
}

/* A new context that sees var=val. */
static jitc_context *context_with(const char *var, const char *val) {
  setenv(var, val, 1);
  jitc_context *c = jitc_context_new();
  unsetenv(var);
  return c;
}

static jitc_buffer *bnew(jitc_context *ctx, jitc_dtype t, int64_t n) {
  jitc_buffer *b = calloc(1, sizeof *b);
  b->ctx = ctx;
  b->target = JITC_TARGET_CUDA;
  b->dtype = t;
  b->n = n;
  if (target_cuda.buffer_new(ctx, b) != JITC_OK) {
    free(b);
    return NULL;
  }
  return b;
}
static void bfree(jitc_buffer *b) {
  if (b) {
    target_cuda.buffer_free(b);
    free(b);
  }
}

/* The driver API, for references the library does not offer. */
static CudaApi api;
static CUcontext pctx;
static bool api_init(void) {
  char err[512];
  if (cuda_load_driver(&api, NULL, err, sizeof err)) {
    printf("driver: %s\n", err);
    return false;
  }
  CUdevice d;
  api.cuDeviceGet(&d, 0);
  api.cuDevicePrimaryCtxRetain(&pctx, d);
  api.cuCtxSetCurrent(pctx);
  return true;
}

static double devcopy_ms(size_t bytes, int reps) {
  CUdeviceptr a, b;
  CUstream s;
  CUevent e0, e1;
  api.cuCtxSetCurrent(pctx);
  if (api.cuMemAlloc(&a, bytes) || api.cuMemAlloc(&b, bytes))
    return -1;
  api.cuStreamCreate(&s, 1);
  api.cuEventCreate(&e0, 0);
  api.cuEventCreate(&e1, 0);
  api.cuMemsetD8Async(a, 1, bytes, s);
  double t[200];
  for (int r = 0; r < reps + 3; r++) {
    api.cuEventRecord(e0, s);
    api.cuMemcpyDtoDAsync(b, a, bytes, s);
    api.cuEventRecord(e1, s);
    api.cuEventSynchronize(e1);
    float ms;
    api.cuEventElapsedTime(&ms, e0, e1);
    if (r >= 3) t[r - 3] = ms;
  }
  api.cuMemFree(a);
  api.cuMemFree(b);
  api.cuStreamDestroy(s);
  api.cuEventDestroy(e0);
  api.cuEventDestroy(e1);
  return median(t, reps);
}

/* Median kernel time of k over device buffers. */
static double kernel_ms(jitc_context *ctx, jitc_kernel *k, jitc_buffer **bufs, int64_t n, int reps) {
  double t[200];
  jitc_run_info info;
  for (int r = 0; r < reps + 3; r++) {
    if (target_cuda.run_buffers(ctx, k, n, bufs, NULL, &info) != JITC_OK) {
      printf("run_buffers: %s\n", jitc_errmsg(ctx));
      return -1;
    }
    if (r >= 3) t[r - 3] = info.kernel_ms;
  }
  return median(t, reps);
}

static void run_checks(void) {
  jitc_context *ctx = jitc_context_new();
  double t0 = now_ms();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip cuda_gpu: %s\n", jitc_errmsg(ctx));
    jitc_context_free(ctx);
    return;
  }
  printf("time driver_init_ms %.1f\n", now_ms() - t0);
  printf("device: %s\n", jitc_target_device(ctx, JITC_TARGET_CUDA));
  if (!api_init())
    return;

  /* Differential: every case at every size; misaligned; scalar and 64-bit paths. */
  static const int64_t sizes[] = {0, 1, 7, 4096, 10000019};
  for (int c = 0; c < NCASES; c++)
    for (int s = 0; s < 5; s++)
      diff_case(ctx, &cases[c], sizes[s], 0, "");
  for (int c = 0; c < NCASES; c++)
    diff_case(ctx, &cases[c], 100003, 1, "misaligned");
  jitc_context *c2 = context_with("JITC_CUDA_VEC", "0");
  for (int c = 0; c < NCASES; c++)
    diff_case(c2, &cases[c], 4099, 0, "scalar-path");
  jitc_context_free(c2);
  c2 = context_with("JITC_CUDA_CHUNK_MB", "1"); /* many chunks: the two-stream pipeline */
  diff_case(c2, &cases[0], 3000017, 0, "chunks-of-1MB");
  diff_case(c2, &cases[7], 3000017, 3, "chunks-of-1MB");
  jitc_context_free(c2);

  /* Launches cut into slices of 8192 elements (2^30 normally), so that the
  ** pointers and `base` of every slice after the first are checked at
  ** small sizes: aligned, misaligned, the scalar path, a split program. */
  c2 = context_with("JITC_CUDA_CHUNK_MB", "1");
  jitc_context *c3 = context_with("JITC_CUDA_VEC", "0");
  if (jitc_target_available(c2, JITC_TARGET_CUDA) == JITC_OK &&
      jitc_target_available(c3, JITC_TARGET_CUDA) == JITC_OK) {
    ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->slice = 8192;
    ((CudaState *)c2->target_state[JITC_TARGET_CUDA])->slice = 8192;
    ((CudaState *)c3->target_state[JITC_TARGET_CUDA])->slice = 8192;
    for (int c = 0; c < NCASES; c++) {
      diff_case(ctx, &cases[c], 40009, 0, "sliced");
      diff_case(ctx, &cases[c], 40009, 1, "sliced-misaligned");
      diff_case(c3, &cases[c], 40009, 0, "sliced-scalar-path");
    }
    diff_case(c2, &cases[0], 3000017, 0, "sliced-chunks-of-1MB");
    const Case split = {many_statements(), JITC_FLOAT64, 0};
    diff_case(ctx, &split, 40009, 0, "sliced");
    diff_case(ctx, &split, 3000017, 0, "sliced-large");
    ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->slice = (int64_t)1 << 30;
  }
  jitc_context_free(c2);
  jitc_context_free(c3);

  /* A device number beyond the count: the target is unavailable, not
  ** another device. */
  c2 = context_with("JITC_CUDA_DEVICE", "4096");
  if (jitc_target_available(c2, JITC_TARGET_CUDA) == JITC_E_UNAVAILABLE &&
      strstr(jitc_errmsg(c2), "JITC_CUDA_DEVICE=4096"))
    printf("ok device_beyond_count (%s)\n", jitc_errmsg(c2));
  else
    fail("device_beyond_count", "'%s'", jitc_errmsg(c2));
  jitc_context_free(c2);

  /* Pinned user memory: DMA straight from it. */
  {
    int64_t n = 10000019;
    jitc_array_decl d = {"a", JITC_FLOAT64};
    jitc_kernel *k = compile(ctx, "a[i] += 1", &d, 1, JITC_TARGET_CUDA);
    double *h = NULL;
    api.cuCtxSetCurrent(pctx);
    if (k && api.cuMemHostAlloc((void **)&h, (size_t)n * 8, 0) == CUDA_SUCCESS) {
      for (int64_t i = 0; i < n; i++) h[i] = (double)i;
      void *arr[1] = {h};
      jitc_run_info info;
      jitc_status st = jitc_run(ctx, k, n, arr, NULL, &info);
      int64_t bad = 0;
      for (int64_t i = 0; i < n; i++) bad += h[i] != (double)i + 1;
      if (st || bad) fail("pinned_host", "%s, %lld wrong", jitc_errmsg(ctx), (long long)bad);
      else printf("ok pinned_host\n");
      double t[20];
      for (int r = 0; r < 12; r++) {
        jitc_run(ctx, k, n, arr, NULL, &info);
        t[r] = info.run_ms;
      }
      printf("time h2h_pinned_ms %.3f\n", median(t, 12));
      api.cuMemFreeHost(h);
    }
    jitc_kernel_free(k);
  }

  /* Device buffers. */
  {
    int64_t n = 10000019;
    jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
    const char *src = cases[0].src;
    jitc_kernel *ki = compile(ctx, src, d, 2, JITC_TARGET_INTERP);
    jitc_kernel *kc = compile(ctx, src, d, 2, JITC_TARGET_CUDA);
    double *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *c = malloc((size_t)n * 8),
           *c2 = malloc((size_t)n * 8);
    fill(a, JITC_FLOAT64, n);
    fill(b, JITC_FLOAT64, n);
    void *arr[3] = {a, b, c};
    jitc_run(ctx, ki, n, arr, NULL, NULL);
    jitc_buffer *ba = bnew(ctx, JITC_FLOAT64, n), *bb = bnew(ctx, JITC_FLOAT64, n),
                *bc = bnew(ctx, JITC_FLOAT64, n);
    jitc_buffer *bufs[3] = {ba, bb, bc};
    int64_t first;
    if (!ba || !bb || !bc || target_cuda.buffer_copy(ctx, ba, a, 0, n, true) ||
        target_cuda.buffer_copy(ctx, bb, b, 0, n, true) ||
        target_cuda.run_buffers(ctx, kc, n, bufs, NULL, NULL) ||
        target_cuda.buffer_copy(ctx, bc, c2, 0, n, false))
      fail("buffers", "%s", jitc_errmsg(ctx));
    else if (ndiff(c, c2, JITC_FLOAT64, n, 0, &first))
      fail("buffers", "differs from interp at %lld", (long long)first);
    else
      printf("ok buffers\n");
    /* A buffer of the wrong dtype is refused. */
    jitc_buffer *bf = bnew(ctx, JITC_FLOAT32, n);
    jitc_buffer *wrong[3] = {ba, bf, bc};
    if (bf && target_cuda.run_buffers(ctx, kc, n, wrong, NULL, NULL) == JITC_E_USAGE)
      printf("ok buffers_dtype_checked\n");
    else
      fail("buffers_dtype_checked", "accepted a float32 buffer");
    bfree(bf);
    bfree(ba);
    bfree(bb);
    bfree(bc);
    free(a);
    free(b);
    free(c);
    free(c2);
    jitc_kernel_free(ki);
    jitc_kernel_free(kc);
  }

  /* Device out of memory: a clear error, nothing left allocated. */
  {
    size_t free0 = 0, free1 = 0, total = 0;
    api.cuCtxSetCurrent(pctx);
    api.cuMemGetInfo(&free0, &total);
    jitc_buffer *b = bnew(ctx, JITC_FLOAT64, (int64_t)1 << 40);
    const char *msg = jitc_errmsg(ctx);
    api.cuCtxSetCurrent(pctx);
    api.cuMemGetInfo(&free1, &total);
    if (!b && strstr(msg, "device memory") && free1 + (64u << 20) >= free0)
      printf("ok device_oom (%s)\n", msg);
    else
      fail("device_oom", "buffer %p, message '%s', free %zu -> %zu", (void *)b, msg, free0, free1);
    bfree(b);
    /* After the failure the context still works. */
    if (diff_case(ctx, &cases[2], 1000, 0, "after-oom") == 0)
      printf("ok usable_after_oom\n");
  }

  /* One array above 2^32 elements: five launches of 2^30. */
  if (!getenv("GPU_NO_BIG")) {
    int64_t n = ((int64_t)1 << 32) + 37;
    jitc_array_decl d = {"a", JITC_BOOL};
    jitc_kernel *k = compile(ctx, "b = ~a", &d, 1, JITC_TARGET_CUDA);
    uint8_t *h = malloc((size_t)n);
    jitc_buffer *ba = bnew(ctx, JITC_BOOL, n), *bb = bnew(ctx, JITC_BOOL, n);
    if (!k || !h || !ba || !bb) {
      printf("skip big_2^32: %s\n", jitc_errmsg(ctx));
    } else {
      for (int64_t i = 0; i < n; i++) h[i] = (uint8_t)(i % 3 == 0);
      jitc_buffer *bufs[2] = {ba, bb};
      jitc_run_info info;
      jitc_status st = target_cuda.buffer_copy(ctx, ba, h, 0, n, true);
      if (!st) st = target_cuda.run_buffers(ctx, k, n, bufs, NULL, &info);
      if (!st) st = target_cuda.buffer_copy(ctx, bb, h, 0, n, false);
      int64_t bad = 0;
      for (int64_t i = 0; i < n && !st; i++) bad += h[i] != (uint8_t)(i % 3 != 0);
      if (st || bad) fail("big_2^32", "%s; %lld wrong", jitc_errmsg(ctx), (long long)bad);
      else printf("ok big_2^32+37 (kernel %.2f ms)\n", info.kernel_ms);
    }
    bfree(ba);
    bfree(bb);
    free(h);
    jitc_kernel_free(k);
  }

  /* ---- timings ---- */
  const int64_t N = 10000000;
  printf("time devcopy_80MB_ms %.4f\n", devcopy_ms((size_t)N * 8, 50));
  printf("time devcopy_1GiB_ms %.4f (%.0f GB/s r+w)\n", devcopy_ms((size_t)1 << 30, 10),
         2.0 * (double)((size_t)1 << 30) / devcopy_ms((size_t)1 << 30, 10) / 1e6);
  /* Kernel times over device buffers, for each grid size: 0 is one thread
  ** per vector (the default), 8 a grid of 8 waves striding. */
  const char *waves[] = {"0", "8"};
  for (int w = 0; w < 2; w++) {
    jitc_context *cw = context_with("JITC_CUDA_WAVES", waves[w]);
    jitc_array_decl d64 = {"a", JITC_FLOAT64}, d32 = {"a", JITC_FLOAT32};
    jitc_kernel *k1 = compile(cw, "a[i] += 1", &d64, 1, JITC_TARGET_CUDA);
    jitc_kernel *k2 = compile(cw, "b = exp(a)", &d32, 1, JITC_TARGET_CUDA);
    jitc_buffer *a64 = bnew(cw, JITC_FLOAT64, N), *a32 = bnew(cw, JITC_FLOAT32, N),
                *b32 = bnew(cw, JITC_FLOAT32, N);
    double *h = malloc((size_t)N * 8);
    if (!k1 || !k2 || !a64 || !a32 || !b32 || !h) {
      fail("kernel_timings", "%s", jitc_errmsg(cw));
    } else {
      fill(h, JITC_FLOAT64, N);
      target_cuda.buffer_copy(cw, a64, h, 0, N, true);
      target_cuda.buffer_copy(cw, a32, h, 0, N / 2, true);
      jitc_buffer *b1[1] = {a64}, *b2[2] = {a32, b32};
      printf("time kernel_inc_f64_ms[waves=%s] %.4f\n", waves[w], kernel_ms(cw, k1, b1, N, 50));
      printf("time kernel_exp_f32_ms[waves=%s] %.4f\n", waves[w], kernel_ms(cw, k2, b2, N, 50));
    }
    free(h);
    bfree(a64);
    bfree(a32);
    bfree(b32);
    jitc_kernel_free(k1);
    jitc_kernel_free(k2);
    jitc_context_free(cw);
  }

  /* Host to host, pageable memory, a[i] += 1 float64. */
  {
    jitc_array_decl d = {"a", JITC_FLOAT64};
    jitc_kernel *k = compile(ctx, "a[i] += 1", &d, 1, JITC_TARGET_CUDA);
    double *h = aligned_alloc(64, (size_t)N * 8);
    for (int64_t i = 0; i < N; i++) h[i] = 1;
    void *arr[1] = {h};
    /* The pipeline's own choices (tests/gpu/host_gpu.c times its paths
    ** against the copy engines). */
    double t[20], hd[20], kd[20], dh[20];
    jitc_run_info info;
    for (int r = 0; r < 13; r++) {
      jitc_run(ctx, k, N, arr, NULL, &info);
      if (r) {
        t[r - 1] = info.run_ms;
        hd[r - 1] = info.h2d_ms;
        kd[r - 1] = info.kernel_ms;
        dh[r - 1] = info.d2h_ms;
      }
    }
    printf("time h2h_inc_f64_ms %.3f (sums over chunks: h2d %.3f kernel %.3f d2h %.3f)\n",
           median(t, 12), median(hd, 12), median(kd, 12), median(dh, 12));
    int64_t bad = 0;
    for (int64_t i = 0; i < N; i++) bad += h[i] != 1 + 13;
    if (bad) fail("h2h_result", "%lld wrong (a[0] = %g)", (long long)bad, h[0]);
    else printf("ok h2h_result\n");
    /* Reference: plain synchronous copies of pageable memory. */
    CUdeviceptr dp;
    api.cuCtxSetCurrent(pctx);
    api.cuMemAlloc(&dp, (size_t)N * 8);
    for (int r = 0; r < 6; r++) {
      double s = now_ms();
      api.cuMemcpyHtoD(dp, h, (size_t)N * 8);
      api.cuMemcpyDtoH(h, dp, (size_t)N * 8);
      t[r] = now_ms() - s;
    }
    printf("time ref_pageable_htod_dtoh_80MB_ms %.3f\n", median(t, 6));
    api.cuMemFree(dp);
    free(h);
    jitc_kernel_free(k);
  }
  jitc_context_free(ctx);
}

/* The process's CPU time (ms) and page faults that read from disk so far
** (and, *minflt, those that did not). */
static double cpu_ms(long *majflt, long *minflt) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *majflt = ru.ru_majflt;
  *minflt = ru.ru_minflt;
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* One compile in a fresh process (cold or warm disk cache, by the caller's
** JITC_CACHE_DIR): prints its stages, and the CPU time and the page faults
** that read from disk during it (a compile waiting for the disk takes wall
** time that is not CPU time). */
static void compile_once(const char *src) {
  jitc_context *ctx = jitc_context_new();
  double t0 = now_ms();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip compile: %s\n", jitc_errmsg(ctx));
    return;
  }
  long f1, f2, m1, m2;
  double t1 = now_ms(), c1 = cpu_ms(&f1, &m1);
  jitc_array_decl d = {"a", JITC_FLOAT64};
  jitc_kernel *k = compile(ctx, src, &d, 1, JITC_TARGET_CUDA);
  double t2 = now_ms(), c2 = cpu_ms(&f2, &m2);
  if (k) {
    const jitc_compile_info *ci = jitc_kernel_compile_info(k);
    printf("time compile_ms %.2f (cache %s: frontend %.2f emit %.2f nvrtc %.2f load %.2f; "
           "cpu %.1f ms, %ld faults from disk, %ld others) after driver init %.1f (cpu %.1f ms, "
           "%ld faults from disk)\n",
           t2 - t1, ci->cache, ci->frontend_ms, ci->ir_ms, ci->codegen_ms, ci->load_ms, c2 - c1,
           f2 - f1, m2 - m1, t1 - t0, c1, f1);
    /* The same again in this context: the memory cache. */
    jitc_kernel *k2 = compile(ctx, src, &d, 1, JITC_TARGET_CUDA);
    double t3 = now_ms();
    if (k2)
      printf("time compile_again_ms %.3f (cache %s)\n", t3 - t2, jitc_kernel_compile_info(k2)->cache);
    jitc_kernel_free(k2);
  }
  jitc_kernel_free(k);
  jitc_context_free(ctx);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "compile")) {
    compile_once(argc > 2 ? argv[2] : "a[i] += 1");
    return 0;
  }
  run_checks();
  return nfail ? 1 : 0;
}
