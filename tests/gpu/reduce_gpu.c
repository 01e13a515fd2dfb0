/*
** reduce_gpu.c -- reductions on the cuda target, on a GPU, against interp
** (whose semantics tests/t_reduce.py checks against NumPy) on every path a
** run takes: host arrays (the chunked two-stream pipeline), device buffers
** and the caller's device pointers on its streams.
**
** Modes:
**   reduce_gpu check   every op and dtype at sizes 0 to 3,000,017 (block,
**                      vector, chunk and slice boundaries), with and without
**                      NaN, inf, -0.0 and extreme values; fused programs;
**                      slices; chunks of 1 MB; misaligned pointers; a split
**                      program; two streams; 20 runs bit-identical per path;
**                      2^31 + 4099 bools
**   reduce_gpu quick   the small cases, for compute-sanitizer
** Prints "ok NAME", "FAIL NAME: why", "skip NAME: why".
*/
#include "../../src/jitc_int.h"
#include "../../src/cuda/cuda.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXA = 16 };
static CudaApi A;
static CUstream stream;
static int nfail, nok;
static bool quick;

static void fail(const char *name, const char *fmt, ...) PRINTF(2, 3);
static void fail(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL reduce.%s: ", name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  nfail++;
}

/* Whether the program reads an array b. */
static bool uses_b(const char *src) {
  for (const char *p = strchr(src, 'b'); p; p = strchr(p + 1, 'b'))
    if ((p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
        !(isalnum((unsigned char)p[1]) || p[1] == '_'))
      return true;
  return false;
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, jitc_dtype dt, jitc_target t) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  jitc_array_decl d[2] = {{"a", dt}, {"b", dt}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, uses_b(src) ? 2 : 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL reduce.compile: %s: %s: %s\n", jitc_target_name(t), src, jitc_errmsg(ctx));
    nfail++;
    return NULL;
  }
  return k;
}

/* Inputs: plain values, or with NaN, inf, -0.0 and the extremes mixed in. */
static void fill(void *p, jitc_dtype t, int64_t n, bool specials) {
  static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 3.4e38, -3.4e38, 1e-310};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 20;
    bool s = specials && r % 29 == 0;
    switch (t) {
    case JITC_BOOL: ((uint8_t *)p)[i] = (uint8_t)((r >> 5) % 7 != 0); break;
    case JITC_INT32:
      ((int32_t *)p)[i] = s ? (r & 64 ? INT32_MAX : INT32_MIN) : (int32_t)(r % 41) - 20;
      break;
    case JITC_INT64:
      ((int64_t *)p)[i] = s ? (r & 64 ? INT64_MAX : INT64_MIN + 1) : (int64_t)(r % 81) - 40;
      break;
    case JITC_FLOAT32: ((float *)p)[i] = (float)(s ? sp[(r >> 8) % 8] : d); break;
    default: ((double *)p)[i] = s ? sp[(r >> 8) % 8] : d; break;
    }
  }
}

/* A program's arrays on the host: inputs, outputs, and 8 bytes per result. */
typedef struct Host {
  int na;
  jitc_role role[MAXA];
  jitc_dtype dt[MAXA];
  size_t es[MAXA];
  void *p[MAXA];
} Host;

static size_t count_of(const Host *H, int a, int64_t n) {
  return H->role[a] == JITC_RESULT ? 1 : (size_t)n;
}

static bool host_new(const jitc_kernel *k, int64_t n, Host *H) {
  memset(H, 0, sizeof *H);
  H->na = jitc_kernel_array_count(k);
  for (int a = 0; a < H->na; a++) {
    const char *name;
    jitc_kernel_array(k, a, &name, &H->role[a], &H->dt[a]);
    H->es[a] = jitc_dtype_size(H->dt[a]);
    H->p[a] = calloc(count_of(H, a, n) + 1, H->role[a] == JITC_RESULT ? 8 : H->es[a]);
    if (!H->p[a])
      return false;
  }
  return true;
}

static void host_free(Host *H) {
  for (int a = 0; a < H->na; a++)
    free(H->p[a]);
  H->na = 0;
}

/* The same inputs in two Hosts of the same program. */
static void copy_inputs(Host *to, const Host *from, int64_t n) {
  for (int a = 0; a < from->na; a++)
    if (from->role[a] == JITC_INPUT || from->role[a] == JITC_INOUT)
      memcpy(to->p[a], from->p[a], (size_t)n * from->es[a]);
}

enum { P_HOST, P_BUFFERS, P_DEVICE, P_DEVICE_MISALIGNED, NPATHS };
static const char *const path_name[] = {"host", "buffers", "device", "device-misaligned"};

/* Runs k over H on one path; H's outputs and results receive what it wrote. */
static jitc_status run_path(jitc_context *ctx, const jitc_kernel *k, int64_t n, Host *H,
                            int path) {
  if (path == P_HOST)
    return jitc_run(ctx, k, n, H->p, NULL, NULL);
  jitc_status st = JITC_OK;
  if (path == P_BUFFERS) {
    jitc_buffer *b[MAXA] = {0};
    for (int a = 0; a < H->na && !st; a++) {
      size_t c = count_of(H, a, n);
      st = jitc_buffer_new(ctx, JITC_TARGET_CUDA, H->dt[a], (int64_t)(c ? c : 1), &b[a]);
      if (!st && H->role[a] != JITC_OUTPUT && H->role[a] != JITC_RESULT)
        st = jitc_buffer_upload(ctx, b[a], H->p[a], (int64_t)c);
    }
    if (!st)
      st = jitc_run_buffers(ctx, k, n, b, NULL, NULL);
    for (int a = 0; a < H->na && !st; a++)
      if (H->role[a] != JITC_INPUT)
        st = jitc_buffer_download(ctx, b[a], H->p[a], (int64_t)count_of(H, a, n));
    for (int a = 0; a < H->na; a++)
      jitc_buffer_free(b[a]);
    return st;
  }
  /* The caller's device memory, one element in when misaligned. */
  size_t shift = path == P_DEVICE_MISALIGNED;
  CUdeviceptr d[MAXA] = {0};
  uint64_t ptr[MAXA];
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < H->na && r == CUDA_SUCCESS; a++) {
    size_t c = count_of(H, a, n) + shift;
    r = A.cuMemAlloc(&d[a], c * H->es[a] + 8);
    ptr[a] = d[a] + shift * H->es[a];
    if (r == CUDA_SUCCESS && H->role[a] != JITC_OUTPUT && H->role[a] != JITC_RESULT)
      r = A.cuMemcpyHtoD(ptr[a], H->p[a], count_of(H, a, n) * H->es[a]);
  }
  if (r == CUDA_SUCCESS) {
    st = jitc_run_device(ctx, k, n, ptr, NULL, stream);
    r = A.cuStreamSynchronize(stream);
  }
  for (int a = 0; a < H->na && r == CUDA_SUCCESS && !st; a++)
    if (H->role[a] != JITC_INPUT)
      r = A.cuMemcpyDtoH(H->p[a], ptr[a], count_of(H, a, n) * H->es[a]);
  for (int a = 0; a < H->na; a++)
    if (d[a])
      A.cuMemFree(d[a]);
  return r != CUDA_SUCCESS ? JITC_E_INTERNAL : st;
}

/* Whether result x agrees with interp's y: bit for bit, or for a float
** sum, mean or product (tol > 0) within tol, NaN and inf alike. */
static bool agrees(jitc_dtype t, const void *x, const void *y, double tol) {
  if (!memcmp(x, y, jitc_dtype_size(t)))
    return true;
  if (!dtype_is_float(t))
    return false;
  double a = t == JITC_FLOAT32 ? *(const float *)x : *(const double *)x;
  double b = t == JITC_FLOAT32 ? *(const float *)y : *(const double *)y;
  if (isnan(a) && isnan(b))
    return true; /* the GPU's arithmetic makes its own NaN */
  if (tol <= 0)
    return false;
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b))
    return isnan(a) == isnan(b) && (isnan(a) || a == b);
  return fabs(a - b) <= tol;
}

static void show(char *out, size_t len, jitc_dtype t, const void *x) {
  switch (t) {
  case JITC_BOOL: snprintf(out, len, "%d", *(const uint8_t *)x); break;
  case JITC_INT32: snprintf(out, len, "%d", *(const int32_t *)x); break;
  case JITC_INT64: snprintf(out, len, "%lld", (long long)*(const int64_t *)x); break;
  case JITC_FLOAT32: snprintf(out, len, "%.9g", *(const float *)x); break;
  default: snprintf(out, len, "%.17g", *(const double *)x); break;
  }
}

/* The tolerance of a program's float results when it has a sum, mean or
** product: (n + 8) epsilons of the sum of the inputs' magnitudes and
** squares (which bound a * b); a float product is checked for NaN, inf
** and sign only, as its rounding depends on the order. */
static double tolerance(const char *src, const Host *H, int64_t n) {
  if (strstr(src, "prod(") && !strstr(src, "prod(b)"))
    return INFINITY;
  if (!strstr(src, "sum(") && !strstr(src, "mean("))
    return 0;
  double s = 0, eps = 0x1p-52;
  for (int a = 0; a < H->na; a++) {
    if (H->role[a] != JITC_INPUT)
      continue;
    if (H->dt[a] == JITC_FLOAT32)
      eps = 0x1p-23;
    for (int64_t i = 0; i < n; i++) {
      double v;
      switch (H->dt[a]) {
      case JITC_BOOL: v = ((uint8_t *)H->p[a])[i]; break;
      case JITC_INT32: v = ((int32_t *)H->p[a])[i]; break;
      case JITC_INT64: v = (double)((int64_t *)H->p[a])[i]; break;
      case JITC_FLOAT32: v = ((float *)H->p[a])[i]; break;
      default: v = ((double *)H->p[a])[i]; break;
      }
      if (isfinite(v) && fabs(v) < 1e150)
        s += fabs(v) + v * v;
    }
  }
  return ((double)n + 8) * eps * s + 1e-300;
}

/* One program at one size on every path against interp: results within
** the tolerance, outputs bit for bit.  Returns the failures. */
static int diff_case(jitc_context *ctx, const char *src, jitc_dtype dt, int64_t n, bool specials,
                     const char *tag, int paths) {
  jitc_kernel *ki = compile(ctx, src, dt, JITC_TARGET_INTERP);
  jitc_kernel *kc = compile(ctx, src, dt, JITC_TARGET_CUDA);
  int bad = 0;
  Host R, C;
  if (!ki || !kc || !host_new(ki, n, &R) || !host_new(kc, n, &C)) {
    jitc_kernel_free(ki);
    jitc_kernel_free(kc);
    return 1;
  }
  for (int a = 0; a < R.na; a++)
    if (R.role[a] == JITC_INPUT || R.role[a] == JITC_INOUT)
      fill(R.p[a], R.dt[a], n, specials);
  Host in;
  host_new(ki, n, &in);
  copy_inputs(&in, &R, n);
  jitc_status sr = jitc_run(ctx, ki, n, R.p, NULL, NULL);
  double tol = tolerance(src, &in, n);
  char name[300];
  for (int path = 0; path < NPATHS; path++) {
    if (!(paths & (1 << path)))
      continue;
    snprintf(name, sizeof name, "%s.%s.%s.n%lld%s", tag, jitc_dtype_name(dt), path_name[path],
             (long long)n, specials ? ".specials" : "");
    copy_inputs(&C, &in, n);
    jitc_status sc = run_path(ctx, kc, n, &C, path);
    if (sr != sc) {
      fail(name, "%s: interp gives status %d, cuda %d (%s)", src, sr, sc, jitc_errmsg(ctx));
      bad++;
      continue;
    }
    if (sr)
      continue; /* both refuse (min of nothing) */
    for (int a = 0; a < C.na; a++) {
      if (C.role[a] == JITC_INPUT)
        continue;
      bool ok;
      if (C.role[a] == JITC_RESULT) {
        ok = agrees(C.dt[a], C.p[a], R.p[a], tol);
      } else {
        ok = true;
        for (int64_t i = 0; i < n && ok; i++)
          ok = agrees(C.dt[a], (char *)C.p[a] + (size_t)i * C.es[a],
                      (char *)R.p[a] + (size_t)i * C.es[a], 0);
      }
      if (!ok) {
        char x[64] = "", y[64] = "";
        if (C.role[a] == JITC_RESULT) {
          show(x, sizeof x, C.dt[a], C.p[a]);
          show(y, sizeof y, R.dt[a], R.p[a]);
        }
        fail(name, "%s: array %d: cuda %s, interp %s (tolerance %g)", src, a, x, y, tol);
        bad++;
      }
    }
  }
  host_free(&in);
  host_free(&R);
  host_free(&C);
  jitc_kernel_free(ki);
  jitc_kernel_free(kc);
  return bad;
}

static const char *const ops[] = {"sum", "prod", "min", "max", "mean", "any", "all", "argmin",
                                  "argmax"};
static const jitc_dtype dtypes[] = {JITC_BOOL, JITC_INT32, JITC_INT64, JITC_FLOAT32,
                                    JITC_FLOAT64};
enum { ALL_PATHS = (1 << NPATHS) - 1 };

/* Every op and dtype over the sizes: one ok line per op and dtype. */
static void check_ops(jitc_context *ctx) {
  static const int64_t sizes[] = {0, 1, 2, 7, 31, 255, 256, 257, 1023, 1025, 4097, 65537,
                                  1048577, 2097153, 3000017};
  int nsizes = quick ? 9 : (int)(sizeof sizes / sizeof *sizes);
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
      char src[64];
      snprintf(src, sizeof src, "r = %s(a)", ops[o]);
      int bad = 0;
      for (int s = 0; s < nsizes; s++)
        for (int sp = 0; sp < 2; sp++)
          bad += diff_case(ctx, src, dtypes[t], sizes[s], sp, ops[o],
                           sizes[s] > 70000 ? (1 << P_HOST) | (1 << P_DEVICE) : ALL_PATHS);
      if (!bad) {
        printf("ok reduce.%s.%s (%d sizes, 4 paths)\n", ops[o], jitc_dtype_name(dtypes[t]),
               nsizes);
        nok++;
      }
    }
}

/* Several reductions and an output in one pass, per dtype. */
static const char *fused(jitc_dtype t) {
  if (t == JITC_BOOL)
    return "y = any(a & b); l = all(a | b); k = argmax(a ^ b); s = sum(a); c = a ^ b";
  if (dtype_is_int(t))
    return "s = sum(a * b); m = max(a - b); k = argmin(a); p = prod(b); c = a - b";
  return "s = sum(a * b); m = max(abs(a - b)); k = argmin(a); e = mean(b); c = a - b";
}

static void check_fused(jitc_context *ctx, jitc_context *chunky, jitc_context *scalar) {
  for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
    int bad = 0;
    static const int64_t sizes[] = {0, 1, 5, 1000, 40009, 3000017};
    for (int s = 0; s < (quick ? 4 : 6); s++)
      bad += diff_case(ctx, fused(dtypes[t]), dtypes[t], sizes[s], true, "fused", ALL_PATHS);
    if (!quick) {
      /* Launches cut into slices of 8192 elements (2^30 normally): partials of
      ** every slice, pointers and `base` advanced; and chunks of 1 MB. */
      CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
      S->slice = 8192;
      bad += diff_case(ctx, fused(dtypes[t]), dtypes[t], 40009, true, "sliced", ALL_PATHS);
      S->slice = (int64_t)1 << 30;
      bad += diff_case(chunky, fused(dtypes[t]), dtypes[t], 3000017, true, "chunks-1MB",
                       1 << P_HOST);
      bad += diff_case(scalar, fused(dtypes[t]), dtypes[t], 40009, true, "scalar-path",
                       ALL_PATHS);
    }
    if (!bad) {
      printf("ok reduce.fused.%s\n", jitc_dtype_name(dtypes[t]));
      nok++;
    }
  }
}

/* A program split into several kernels, reductions in its groups. */
static void check_split(jitc_context *ctx) {
  char *src = malloc(30000);
  snprintf(src, 30000, "%s\ns = sum(t149 * a); k = argmax(t75); z = min(t140 - b)",
           many_statements());
  int bad = 0;
  bad += diff_case(ctx, src, JITC_FLOAT64, 40009, false, "split", ALL_PATHS);
  if (!quick)
    bad += diff_case(ctx, src, JITC_FLOAT64, 3000017, false, "split", 1 << P_HOST | 1 << P_DEVICE);
  if (!bad) {
    printf("ok reduce.split\n");
    nok++;
  }
  free(src);
}

/* 20 runs of each path give the same bits; aligned and misaligned device
** pointers too (the same threads take the same elements). */
static void check_determinism(jitc_context *ctx) {
  const char *src = "s = sum(a * b); e = mean(a); p = prod(b * 0.001 + 1); m = min(a - b)";
  for (int ti = 0; ti < 2; ti++) {
    jitc_dtype dt = ti ? JITC_FLOAT64 : JITC_FLOAT32;
    int64_t n = quick ? 100003 : 10000019;
    jitc_kernel *k = compile(ctx, src, dt, JITC_TARGET_CUDA);
    Host H, first;
    if (!k || !host_new(k, n, &H) || !host_new(k, n, &first))
      return;
    for (int a = 0; a < H.na; a++)
      if (H.role[a] == JITC_INPUT)
        fill(H.p[a], H.dt[a], n, false);
    char name[100];
    for (int path = 0; path < NPATHS; path++) {
      snprintf(name, sizeof name, "determinism.%s.%s", jitc_dtype_name(dt), path_name[path]);
      int bad = 0;
      for (int rep = 0; rep < 20 && !bad; rep++) {
        if (run_path(ctx, k, n, &H, path) != JITC_OK) {
          fail(name, "run %d: %s", rep, jitc_errmsg(ctx));
          bad++;
          break;
        }
        /* Each path against its own first run; misaligned pointers against
        ** the aligned ones' (the same threads take the same elements). */
        for (int a = 0; a < H.na; a++)
          if (H.role[a] == JITC_RESULT) {
            if (rep == 0 && path != P_DEVICE_MISALIGNED) {
              memcpy(first.p[a], H.p[a], 8);
            } else if (memcmp(first.p[a], H.p[a], H.es[a])) {
              fail(name, "run %d: result %d differs from the first run's", rep, a);
              bad++;
            }
          }
      }
      if (!bad) {
        printf("ok reduce.%s (20 runs bit-identical)\n", name);
        nok++;
      }
    }
    host_free(&H);
    host_free(&first);
    jitc_kernel_free(k);
  }
}

/* Two runs queued on two streams before either is waited for: each has
** its own partials (stream-ordered scratch). */
static void check_streams(jitc_context *ctx) {
  const char *src = "s = sum(a * b); k = argmax(a); c = a + b";
  int64_t n = 1000003;
  jitc_kernel *k = compile(ctx, src, JITC_FLOAT64, JITC_TARGET_CUDA);
  jitc_kernel *ki = compile(ctx, src, JITC_FLOAT64, JITC_TARGET_INTERP);
  Host H[2], R[2];
  CUstream s[2];
  CUdeviceptr d[2][MAXA];
  uint64_t p[2][MAXA];
  if (!k || !ki)
    return;
  for (int q = 0; q < 2; q++) {
    host_new(k, n, &H[q]);
    host_new(k, n, &R[q]);
    A.cuStreamCreate(&s[q], 1 /* CU_STREAM_NON_BLOCKING */);
    for (int a = 0; a < H[q].na; a++) {
      if (H[q].role[a] == JITC_INPUT)
        fill(H[q].p[a], H[q].dt[a], n, false);
      A.cuMemAlloc(&d[q][a], count_of(&H[q], a, n) * 8);
      p[q][a] = d[q][a];
      if (H[q].role[a] == JITC_INPUT)
        A.cuMemcpyHtoD(d[q][a], H[q].p[a], (size_t)n * 8);
    }
    copy_inputs(&R[q], &H[q], n);
    jitc_run(ctx, ki, n, R[q].p, NULL, NULL);
  }
  A.cuCtxSynchronize(); /* the uploads, before streams that do not wait for them */
  jitc_status st0 = jitc_run_device(ctx, k, n, p[0], NULL, s[0]);
  jitc_status st1 = jitc_run_device(ctx, k, n, p[1], NULL, s[1]);
  jitc_status st2 = jitc_run_device(ctx, k, n, p[0], NULL, s[0]); /* again, behind the first */
  int bad = 0;
  for (int q = 0; q < 2; q++) {
    A.cuStreamSynchronize(s[q]);
    for (int a = 0; a < H[q].na; a++)
      if (H[q].role[a] == JITC_RESULT) {
        A.cuMemcpyDtoH(H[q].p[a], d[q][a], 8);
        if (!agrees(H[q].dt[a], H[q].p[a], R[q].p[a], 1e-9 * (double)n))
          bad++;
      }
    for (int a = 0; a < H[q].na; a++)
      A.cuMemFree(d[q][a]);
    A.cuStreamDestroy(s[q]);
    host_free(&H[q]);
    host_free(&R[q]);
  }
  if (st0 || st1 || st2 || bad)
    fail("two-streams", "status %d %d %d, %d results differ from interp's", st0, st1, st2, bad);
  else {
    printf("ok reduce.two-streams\n");
    nok++;
  }
  jitc_kernel_free(k);
  jitc_kernel_free(ki);
}

/* 2^31 + 4099 bools, past the 32-bit indices of one launch: every path,
** results known in closed form. */
static void check_huge(jitc_context *ctx) {
  const char *src = "s = sum(a); y = any(a); l = all(a); k = argmax(a); j = argmin(a)";
  int64_t n = ((int64_t)1 << 31) + 4099, at = ((int64_t)1 << 31) + 77;
  jitc_kernel *k = compile(ctx, src, JITC_BOOL, JITC_TARGET_CUDA);
  Host H;
  if (!k || !host_new(k, n, &H)) {
    printf("skip reduce.huge: no memory for %lld bools\n", (long long)n);
    jitc_kernel_free(k);
    return;
  }
  int ia = jitc_kernel_find_array(k, "a"), is = jitc_kernel_find_array(k, "s");
  int iy = jitc_kernel_find_array(k, "y"), il = jitc_kernel_find_array(k, "l");
  int ik = jitc_kernel_find_array(k, "k"), ij = jitc_kernel_find_array(k, "j");
  for (int fillv = 0; fillv < 2; fillv++) {
    /* All 0 but one 1 far past 2^31, then all 1 but one 0 there. */
    memset(H.p[ia], fillv, (size_t)n);
    ((uint8_t *)H.p[ia])[at] = (uint8_t)!fillv;
    for (int path = 0; path < 3; path++) {
      char name[80];
      snprintf(name, sizeof name, "huge.%s.%s", fillv ? "ones" : "zeros", path_name[path]);
      jitc_status st = run_path(ctx, k, n, &H, path);
      int64_t s = *(int64_t *)H.p[is], kk = *(int64_t *)H.p[ik], jj = *(int64_t *)H.p[ij];
      uint8_t y = *(uint8_t *)H.p[iy], l = *(uint8_t *)H.p[il];
      int64_t ws = fillv ? n - 1 : 1, wk = fillv ? 0 : at, wj = fillv ? at : 0;
      if (st || s != ws || kk != wk || jj != wj || y != 1 || l != 0)
        fail(name, "status %d (%s): sum %lld (want %lld), argmax %lld (%lld), argmin %lld "
             "(%lld), any %d, all %d", st, st ? jitc_errmsg(ctx) : "", (long long)s,
             (long long)ws, (long long)kk, (long long)wk, (long long)jj, (long long)wj, y, l);
      else {
        printf("ok reduce.%s (n = %lld)\n", name, (long long)n);
        nok++;
      }
    }
  }
  host_free(&H);
  jitc_kernel_free(k);
}

static jitc_context *context_with(const char *var, const char *val) {
  setenv(var, val, 1);
  jitc_context *c = jitc_context_new();
  unsetenv(var);
  return c;
}

int main(int argc, char **argv) {
  quick = argc > 1 && !strcmp(argv[1], "quick");
  setvbuf(stdout, NULL, _IOLBF, 0);
  char err[512];
  if (cuda_load_driver(&A, NULL, err, sizeof err)) {
    printf("skip reduce: %s\n", err);
    return 0;
  }
  CUdevice d0;
  CUcontext prim0;
  A.cuDeviceGet(&d0, 0);
  A.cuDevicePrimaryCtxRetain(&prim0, d0);
  A.cuCtxSetCurrent(prim0);
  A.cuStreamCreate(&stream, 0);
  jitc_context *ctx = jitc_context_new();
  jitc_context *chunky = context_with("JITC_CUDA_CHUNK_MB", "1");
  jitc_context *scalar = context_with("JITC_CUDA_VEC", "0");
  check_ops(ctx);
  check_fused(ctx, chunky, scalar);
  check_split(ctx);
  check_streams(ctx);
  check_determinism(ctx);
  if (!quick)
    check_huge(ctx);
  jitc_context_free(scalar);
  jitc_context_free(chunky);
  jitc_context_free(ctx);
  A.cuStreamDestroy(stream);
  A.cuDevicePrimaryCtxRelease(d0);
  printf("reduce_gpu: %d ok, %d failed\n", nok, nfail);
  return nfail ? 1 : 0;
}
