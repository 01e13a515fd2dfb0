/*
** host_gpu.c -- the host pipeline of the cuda target (src/cuda/host.c) on a
** GPU, against interp: every way an array travels (pageable and staged,
** pinned by the caller and used in place, registered for the call, mixed
** in one run), programs of several inputs and outputs, in-place updates,
** reductions with outputs and a split program; sizes 0 to 10,000,019 and
** 2^31 + 4099; chunks of 64 KiB to 8 MiB, 2 to 8 slots, 1 to 16 threads,
** plain and streaming stores, misaligned pointers; then the trace's record
** of the overlap, and timings against the copy engines' one-way limit.
**
** Modes:
**   host_gpu check   all of the above
**   host_gpu quick   the small cases, for compute-sanitizer
** Prints "ok NAME", "FAIL NAME: why", "skip NAME: why" and "time NAME value".
** Sets CudaTune and CudaTrace through the target's header, as the
** benchmarks do.
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
static CUcontext pctx;
static int nfail, nok;

static void fail(const char *name, const char *fmt, ...) PRINTF(2, 3);
static void fail(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL host.%s: ", name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  nfail++;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return v[n / 2];
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
    printf("FAIL host.compile: %s: %s: %s\n", jitc_target_name(t), src, jitc_errmsg(ctx));
    nfail++;
    return NULL;
  }
  return k;
}

static void fill(void *p, jitc_dtype t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 20;
    if (r % 31 == 0)
      d = r & 32 ? NAN : -0.0;
    switch (t) {
    case JITC_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
    case JITC_INT32: ((int32_t *)p)[i] = (int32_t)(r % 41) - 20; break;
    case JITC_INT64: ((int64_t *)p)[i] = (int64_t)(r % 81) - 40; break;
    case JITC_FLOAT32: ((float *)p)[i] = (float)d; break;
    case JITC_FLOAT64: ((double *)p)[i] = d; break;
    default: break;
    }
  }
}

/* Bytes equal, or both NaN (float), or within `ulps` for the libm cases. */
static int64_t ndiff(const void *x, const void *y, jitc_dtype t, int64_t n, int64_t *first) {
  int64_t bad = 0;
  size_t s = jitc_dtype_size(t);
  *first = -1;
  for (int64_t i = 0; i < n; i++) {
    const char *a = (const char *)x + (size_t)i * s, *b = (const char *)y + (size_t)i * s;
    bool same = !memcmp(a, b, s);
    if (!same && t == JITC_FLOAT64) {
      double u, v;
      memcpy(&u, a, 8), memcpy(&v, b, 8);
      same = (isnan(u) && isnan(v)) || fabs(u - v) <= 4e-16 * fabs(u);
    } else if (!same && t == JITC_FLOAT32) {
      float u, v;
      memcpy(&u, a, 4), memcpy(&v, b, 4);
      same = (isnan(u) && isnan(v)) || fabsf(u - v) <= 4e-7f * fabsf(u);
    }
    if (!same) {
      if (*first < 0)
        *first = i;
      bad++;
    }
  }
  return bad;
}

/* How a case's arrays are held: PAGEABLE (malloc), PINNED (cuMemHostAlloc),
** or by a mask of arrays pinned (the others pageable). */
enum { PAGEABLE = 0, PINNED_ALL = -1 };

typedef struct Setup {
  const char *label;
  CudaTune tune;
  int pinned; /* PAGEABLE, PINNED_ALL, or a bit mask of arrays */
  int shift;  /* elements the host pointers are moved by */
} Setup;

static void *host_alloc(size_t bytes, bool pinned) {
  void *p = NULL;
  if (pinned) {
    A.cuCtxSetCurrent(pctx);
    if (A.cuMemHostAlloc(&p, bytes ? bytes : 1, 0) != CUDA_SUCCESS)
      return NULL;
    return p;
  }
  return malloc(bytes ? bytes : 1);
}
static void host_free(void *p, bool pinned) {
  if (pinned)
    A.cuMemFreeHost(p);
  else
    free(p);
}

/* Runs src over n elements on interp and on cuda with setup U; 0 when
** every array agrees. */
static int diff_case(jitc_context *ctx, const char *src, jitc_dtype dt, int64_t n,
                     const Setup *U) {
  char name[240];
  snprintf(name, sizeof name, "%s[%s] n=%lld '%.48s'", U->label, jitc_dtype_name(dt),
           (long long)n, src);
  jitc_kernel *ki = compile(ctx, src, dt, JITC_TARGET_INTERP);
  jitc_kernel *kc = compile(ctx, src, dt, JITC_TARGET_CUDA);
  if (!ki || !kc) {
    jitc_kernel_free(ki);
    jitc_kernel_free(kc);
    return 1;
  }
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  S->tune = U->tune;
  int na = jitc_kernel_array_count(ki);
  void *bi[MAXA], *bc[MAXA], *pi[MAXA], *pc[MAXA];
  bool pin[MAXA];
  jitc_dtype t[MAXA];
  size_t es[MAXA];
  int bad = 0;
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_kernel_array(ki, a, &an, &role, &t[a]);
    es[a] = jitc_dtype_size(t[a]);
    int64_t cnt = role == JITC_RESULT ? 1 : n;
    size_t bytes = (size_t)(cnt + U->shift) * es[a];
    pin[a] = U->pinned == PINNED_ALL || (U->pinned > 0 && (U->pinned >> a & 1));
    bi[a] = malloc(bytes ? bytes : 1);
    bc[a] = host_alloc(bytes, pin[a]);
    if (!bi[a] || !bc[a]) {
      printf("skip host.%s: no memory for %zu bytes\n", name, bytes);
      for (int q = 0; q <= a; q++)
        free(bi[q]), host_free(bc[q], pin[q]);
      jitc_kernel_free(ki);
      jitc_kernel_free(kc);
      return 0;
    }
    pi[a] = (char *)bi[a] + (size_t)U->shift * es[a];
    pc[a] = (char *)bc[a] + (size_t)U->shift * es[a];
    if (role == JITC_INPUT || role == JITC_INOUT)
      fill(pi[a], t[a], cnt);
    else
      memset(pi[a], 0x5a, (size_t)cnt * es[a]); /* poison: every element must be written */
    memcpy(pc[a], pi[a], (size_t)cnt * es[a]);
  }
  jitc_status si = jitc_run(ctx, ki, n, pi, NULL, NULL);
  jitc_status sc = jitc_run(ctx, kc, n, pc, NULL, NULL);
  if (si != sc) {
    fail(name, "interp gives %s, cuda %s: %s", jitc_status_name(si), jitc_status_name(sc),
         jitc_errmsg(ctx));
    bad = 1;
  }
  for (int a = 0; a < na && !bad && si == JITC_OK; a++) {
    const char *an;
    jitc_role role;
    jitc_kernel_array(ki, a, &an, &role, &t[a]);
    int64_t first, d = ndiff(pi[a], pc[a], t[a], role == JITC_RESULT ? 1 : n, &first);
    if (d) {
      fail(name, "array '%s': %lld elements differ, the first at %lld", an, (long long)d,
           (long long)first);
      bad = 1;
    }
  }
  if (!bad) {
    printf("ok host.%s\n", name);
    nok++;
  }
  S->tune = (CudaTune){0};
  for (int a = 0; a < na; a++) {
    free(bi[a]);
    host_free(bc[a], pin[a]);
  }
  jitc_kernel_free(ki);
  jitc_kernel_free(kc);
  return bad;
}

static const struct {
  const char *src;
  jitc_dtype t;
} progs[] = {
    {"a[i] += 1", JITC_FLOAT64},
    {"c = a * 2.5 + b // 3 - b % 2 + a / b", JITC_FLOAT64},
    {"let h = sqrt(a*a + b*b); r = h; c = a / h; s = b / h", JITC_FLOAT32},
    {"a[i] = a * b + float32(i); c = a - b", JITC_FLOAT32},
    {"s = sum(a * b); m = max(abs(a - b)); k = argmin(a); c = a - b", JITC_FLOAT64},
    {"c = (a << 3) ^ b; d = a + b; s = sum(d)", JITC_INT32},
    {"c = a & ~b; d = a ^ b", JITC_BOOL},
};
enum { NPROGS = (int)(sizeof progs / sizeof *progs) };

static void check_paths(jitc_context *ctx, bool quick) {
  const int64_t KB = 1024, MB = 1 << 20;
  Setup setups[] = {
      {"pageable", {0}, PAGEABLE, 0},
      {"pinned", {0}, PINNED_ALL, 0},
      {"registered", {.reg = 2}, PAGEABLE, 0},
      {"mixed-first-pinned", {0}, 1, 0},
      {"mixed-second-pinned", {0}, 2, 0},
      {"misaligned", {.chunk_bytes = 256 * KB}, PAGEABLE, 1},
      {"chunks-64K-slots-2-threads-1", {.chunk_bytes = 64 * KB, .slots = 2, .threads = 1}, PAGEABLE, 0},
      {"chunks-64K-slots-3-threads-3", {.chunk_bytes = 64 * KB, .slots = 3, .threads = 3}, PAGEABLE, 0},
      {"chunks-256K-slots-8-threads-16-plain",
       {.chunk_bytes = 256 * KB, .slots = 8, .threads = 16, .streaming = 1}, PAGEABLE, 0},
      {"chunks-1M-registered-misaligned", {.chunk_bytes = MB, .reg = 2}, PAGEABLE, 3},
      {"chunks-8M-pinned-slots-4", {.chunk_bytes = 8 * MB, .slots = 4}, PINNED_ALL, 0},
  };
  int nsetups = (int)(sizeof setups / sizeof *setups);
  const int64_t sizes[] = {0, 1, 4095, 4097, 1000003, 10000019};
  int nsizes = quick ? 4 : 6;
  for (int u = 0; u < nsetups; u++)
    for (int p = 0; p < NPROGS; p++)
      for (int s = 0; s < nsizes; s++) {
        /* The large sizes for the defaults and the small chunks only. */
        if (sizes[s] > 1000003 && u != 0 && u != 1 && u != 2 && u != 6)
          continue;
        diff_case(ctx, progs[p].src, progs[p].t, sizes[s], &setups[u]);
      }
  /* A split program: one kernel per group, scratch per slot. */
  Setup split = {"split-chunks-256K", {.chunk_bytes = 256 * KB, .slots = 5}, PAGEABLE, 0};
  diff_case(ctx, many_statements(), JITC_FLOAT64, quick ? 40009 : 3000017, &split);
}

/* One array of 2^31 + 4099 elements through the pipeline. */
static void check_huge(jitc_context *ctx) {
  int64_t n = ((int64_t)1 << 31) + 4099;
  jitc_kernel *k = compile(ctx, "c = ~a; s = sum(a)", JITC_BOOL, JITC_TARGET_CUDA);
  uint8_t *a = malloc((size_t)n), *c = malloc((size_t)n);
  int64_t s = -1;
  if (!k || !a || !c) {
    printf("skip host.huge: %s\n", k ? "no host memory" : jitc_errmsg(ctx));
  } else {
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++)
      want += a[i] = (uint8_t)(i % 3 == 0 || i == n - 1);
    void *arr[4];
    arr[jitc_kernel_find_array(k, "a")] = a;
    arr[jitc_kernel_find_array(k, "c")] = c;
    arr[jitc_kernel_find_array(k, "s")] = &s;
    jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
    int64_t bad = 0;
    for (int64_t i = 0; i < n && st == JITC_OK; i++)
      bad += c[i] != (uint8_t)!a[i];
    if (st || bad || s != want)
      fail("huge", "2^31 + 4099 bools: %s; %lld wrong, sum %lld (want %lld)", jitc_errmsg(ctx),
           (long long)bad, (long long)s, (long long)want);
    else
      printf("ok host.huge n=2^31+4099 'c = ~a; s = sum(a)'\n"), nok++;
  }
  free(a);
  free(c);
  jitc_kernel_free(k);
}

/* The trace of one pinned run of many chunks: the uploads, kernels and
** downloads of different chunks overlap (chunk k + 1's upload starts before
** chunk k's download ends), and every chunk is recorded in order. */
static void check_overlap(jitc_context *ctx) {
  int64_t n = 10000000;
  jitc_kernel *k = compile(ctx, "a[i] += 1", JITC_FLOAT64, JITC_TARGET_CUDA);
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  void *h = host_alloc((size_t)n * 8, true);
  if (!k || !h) {
    printf("skip host.overlap: no pinned memory\n");
    jitc_kernel_free(k);
    return;
  }
  memset(h, 0, (size_t)n * 8);
  void *arr[1] = {h};
  CudaTrace T = {.cap = 1024};
  T.c = calloc((size_t)T.cap, sizeof *T.c);
  jitc_run(ctx, k, n, arr, NULL, NULL);
  S->trace = &T;
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  S->trace = NULL;
  int64_t overlaps = 0, order = 0;
  for (int64_t c = 0; c + 1 < T.n; c++) {
    overlaps += T.c[c + 1].up0 < T.c[c].down1;
    order += T.c[c + 1].off != T.c[c].off + T.c[c].m;
  }
  if (st || T.n < 4 || overlaps == 0 || order)
    fail("overlap", "%lld chunks, %lld overlapping their successor, %lld out of order (%s)",
         (long long)T.n, (long long)overlaps, (long long)order, jitc_errmsg(ctx));
  else
    printf("ok host.overlap (%lld chunks of %lld, %lld of them overlapping the next)\n",
           (long long)T.n, (long long)T.chunk, (long long)overlaps), nok++;
  free(T.c);
  host_free(h, true);
  jitc_kernel_free(k);
}

/* Host to host against the copy engines: `a[i] += 1` float64, 10M
** elements, pageable (staged, registered) and pinned; the one-way limit is
** a pinned upload of the same 80 MB. */
static void timings(jitc_context *ctx) {
  int64_t n = 10000000;
  size_t bytes = (size_t)n * 8;
  jitc_kernel *k = compile(ctx, "a[i] += 1", JITC_FLOAT64, JITC_TARGET_CUDA);
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  double *pg = malloc(bytes);
  void *pin = host_alloc(bytes, true);
  CUdeviceptr d = 0;
  A.cuCtxSetCurrent(pctx);
  if (!k || !pg || !pin || A.cuMemAlloc(&d, bytes) != CUDA_SUCCESS) {
    printf("skip host.timings: no memory\n");
  } else {
    memset(pg, 0, bytes);
    memset(pin, 0, bytes);
    double t[20];
    for (int r = 0; r < 12; r++) {
      double t0 = now_ms();
      A.cuMemcpyHtoD(d, pin, bytes);
      t[r] = now_ms() - t0;
    }
    double one_way = median(t, 12);
    printf("time h2d_pinned_80MB_ms %.3f\n", one_way);
    const char *how[] = {"pageable", "registered", "pinned"};
    for (int w = 0; w < 3; w++) {
      S->tune = (CudaTune){.reg = w == 1 ? 2 : 0};
      void *arr[1] = {w == 2 ? pin : (void *)pg};
      jitc_run_info info;
      for (int r = 0; r < 14; r++) {
        double t0 = now_ms();
        jitc_run(ctx, k, n, arr, NULL, &info);
        if (r >= 2)
          t[r - 2] = now_ms() - t0;
      }
      double ms = median(t, 12);
      printf("time h2h_inc_f64_%s_ms %.3f (%.2fx the one-way limit)\n", how[w], ms, ms / one_way);
    }
    S->tune = (CudaTune){0};
  }
  if (d)
    A.cuMemFree(d);
  free(pg);
  if (pin)
    host_free(pin, true);
  jitc_kernel_free(k);
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && !strcmp(argv[1], "quick");
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip host: %s\n", jitc_errmsg(ctx));
    jitc_context_free(ctx);
    return 0;
  }
  char err[512];
  CUdevice dev;
  if (cuda_load_driver(&A, NULL, err, sizeof err) || A.cuDeviceGet(&dev, 0) ||
      A.cuDevicePrimaryCtxRetain(&pctx, dev)) {
    printf("FAIL host.driver: %s\n", err);
    return 1;
  }
  check_paths(ctx, quick);
  if (!quick) {
    check_huge(ctx);
    check_overlap(ctx);
    timings(ctx);
  }
  jitc_context_free(ctx);
  printf("host: %d ok, %d failed\n", nok, nfail);
  return nfail ? 1 : 0;
}
