/*
** multi_gpu.c -- a run over host arrays split over several GPUs
** (src/cuda/multi.c), against interp and against the same run on one GPU:
** sizes not divisible by the GPU count, one element, none; several
** outputs, in place, the element index; reductions of every kind, whose
** results must be bit-identical to one GPU's; a split program (one kernel
** per group) with a reduction; pageable, pinned and registered arrays; the
** device lists "0,0" (two pipelines on one GPU: runs with one GPU), and
** with two GPUs "0,1", "1,0" and "0,1,0".  Splitting is forced down to one
** element (CudaTune.share_min = 1); then the default, which must split a
** large run and keep a small one on one GPU.
**
** Modes:
**   multi_gpu check   all of the above
**   multi_gpu quick   the small sizes, for compute-sanitizer
**   multi_gpu count   prints the number of devices the driver sees
** Prints "ok NAME", "FAIL NAME: why", "skip NAME: why".
*/
#include "../../src/jitc_int.h"
#include "../../src/cuda/cuda.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXA = 8 };
static CudaApi A;
static CUcontext pctx;
static int nfail, nok;

static void fill(void *p, jitc_dtype t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 20;
    if (r % 97 == 0)
      d = -0.0; /* no NaN: a NaN would make every sum NaN, and its bits too easy to match */
    switch (t) {
    case JITC_INT32: ((int32_t *)p)[i] = (int32_t)(r % 41) - 20; break;
    case JITC_FLOAT32: ((float *)p)[i] = (float)d; break;
    case JITC_FLOAT64: ((double *)p)[i] = d; break;
    default: break;
    }
  }
}

/* Elements that differ: bytes unequal and, against interp only, not both
** NaN nor within a few ulps (exp) or `tol` (a float sum in another order). */
static int64_t ndiff(const void *x, const void *y, jitc_dtype t, int64_t n, bool exact,
                     double tol, int64_t *first) {
  int64_t bad = 0;
  size_t s = jitc_dtype_size(t);
  *first = -1;
  for (int64_t i = 0; i < n; i++) {
    const char *a = (const char *)x + (size_t)i * s, *b = (const char *)y + (size_t)i * s;
    bool same = !memcmp(a, b, s);
    if (!same && !exact && t == JITC_FLOAT64) {
      double u, v;
      memcpy(&u, a, 8), memcpy(&v, b, 8);
      same = (isnan(u) && isnan(v)) || fabs(u - v) <= 4e-16 * fabs(u) || fabs(u - v) <= tol;
    } else if (!same && !exact && t == JITC_FLOAT32) {
      float u, v;
      memcpy(&u, a, 4), memcpy(&v, b, 4);
      same = (isnan(u) && isnan(v)) || fabsf(u - v) <= 4e-7f * fabsf(u) || fabs(u - v) <= tol;
    }
    if (!same) {
      if (*first < 0)
        *first = i;
      bad++;
    }
  }
  return bad;
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, jitc_dtype dt, jitc_target t,
                            const char *devices) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  o.devices = devices;
  jitc_array_decl d[2] = {{"a", dt}, {"b", dt}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, 2, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL multi.compile: %s [%s]: %.60s: %s\n", jitc_target_name(t),
           devices ? devices : "default", src, jitc_errmsg(ctx));
    nfail++;
    return NULL;
  }
  return k;
}

enum { PAGEABLE, PINNED, REGISTERED };
static const char *hows[] = {"pageable", "pinned", "registered"};

/* Runs src over n elements on interp, on cuda on device 0 alone and on
** cuda split over `devices` with `tune`; 0 when all agree (the two cuda
** runs bit for bit). */
static int one(jitc_context *ctx, const char *src, jitc_dtype dt, int64_t n, const char *devices,
               CudaTune tune, int how) {
  char name[300];
  snprintf(name, sizeof name, "multi.%s[%s] %s share_min=%lld chunk=%lld n=%lld '%.50s'",
           hows[how], jitc_dtype_name(dt), devices, (long long)tune.share_min,
           (long long)tune.chunk_bytes, (long long)n, src);
  jitc_kernel *ki = compile(ctx, src, dt, JITC_TARGET_INTERP, NULL);
  jitc_kernel *k1 = compile(ctx, src, dt, JITC_TARGET_CUDA, "0");
  jitc_kernel *km = compile(ctx, src, dt, JITC_TARGET_CUDA, devices);
  int bad = !ki || !k1 || !km;
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  int na = ki ? jitc_kernel_array_count(ki) : 0;
  void *v[3][MAXA] = {{0}};
  jitc_dtype t[MAXA];
  jitc_role role[MAXA];
  for (int a = 0; a < na && !bad; a++) {
    const char *an;
    jitc_kernel_array(ki, a, &an, &role[a], &t[a]);
    int64_t cnt = role[a] == JITC_RESULT ? 1 : n;
    size_t bytes = (size_t)(cnt > 0 ? cnt : 1) * jitc_dtype_size(t[a]);
    for (int r = 0; r < 3; r++) {
      if (r == 2 && how == PINNED) {
        A.cuCtxSetCurrent(pctx);
        if (A.cuMemHostAlloc(&v[r][a], bytes, 0) != CUDA_SUCCESS)
          v[r][a] = NULL;
      } else {
        v[r][a] = malloc(bytes);
      }
      if (!v[r][a]) {
        printf("skip %s: no memory\n", name);
        bad = -1;
        break;
      }
    }
    if (bad)
      break;
    if (role[a] == JITC_INPUT || role[a] == JITC_INOUT)
      fill(v[0][a], t[a], cnt);
    else
      memset(v[0][a], 0x5a, (size_t)cnt * jitc_dtype_size(t[a])); /* each element must be written */
    memcpy(v[1][a], v[0][a], (size_t)cnt * jitc_dtype_size(t[a]));
    memcpy(v[2][a], v[0][a], (size_t)cnt * jitc_dtype_size(t[a]));
  }
  if (!bad) {
    jitc_status si = jitc_run(ctx, ki, n, v[0], NULL, NULL);
    /* One GPU with the same chunks (they set the partials), split or not. */
    S->tune = (CudaTune){.chunk_bytes = tune.chunk_bytes, .reg = how == REGISTERED ? 2 : 0};
    jitc_status s1 = jitc_run(ctx, k1, n, v[1], NULL, NULL);
    S->tune = tune;
    S->tune.reg = how == REGISTERED ? 2 : 0;
    jitc_status sm = jitc_run(ctx, km, n, v[2], NULL, NULL);
    S->tune = (CudaTune){0};
    if (si != s1 || si != sm) {
      printf("FAIL %s: interp gives %s, cuda on one GPU %s, split %s: %s\n", name,
             jitc_status_name(si), jitc_status_name(s1), jitc_status_name(sm), jitc_errmsg(ctx));
      bad = 1;
    }
    for (int a = 0; a < na && !bad && si == JITC_OK; a++) {
      const char *an;
      jitc_kernel_array(ki, a, &an, &role[a], &t[a]);
      int64_t cnt = role[a] == JITC_RESULT ? 1 : n, first;
      /* A sum of n terms of at most 100 in another order: n ulps of 100. */
      double tol = role[a] == JITC_RESULT ? 2.3e-14 * (double)(n + 1) * 100 : 0;
      int64_t d = ndiff(v[0][a], v[2][a], t[a], cnt, false, tol, &first);
      if (d) {
        printf("FAIL %s: array '%s' against interp: %lld elements differ, the first at %lld\n",
               name, an, (long long)d, (long long)first);
        bad = 1;
      }
      d = ndiff(v[1][a], v[2][a], t[a], cnt, true, 0, &first);
      if (d && !bad) {
        printf("FAIL %s: array '%s' against one GPU: %lld elements differ in their bits, the "
               "first at %lld\n", name, an, (long long)d, (long long)first);
        bad = 1;
      }
    }
  }
  if (!bad)
    printf("ok %s\n", name), nok++;
  else if (bad > 0)
    nfail++;
  for (int a = 0; a < na; a++)
    for (int r = 0; r < 3; r++) {
      if (r == 2 && how == PINNED && v[r][a])
        A.cuMemFreeHost(v[r][a]);
      else
        free(v[r][a]);
    }
  jitc_kernel_free(ki);
  jitc_kernel_free(k1);
  jitc_kernel_free(km);
  return bad;
}

static const char *split_with_sum(void) {
  static char src[21000];
  snprintf(src, sizeof src, "%s; s = sum(c)", many_statements());
  return src;
}

/* Whether the default split a large run: its first GPU's chunks, as the
** trace records them, end before n (two GPUs), or one GPU took all (a
** small run). */
static void check_default(jitc_context *ctx, int ndev, int64_t n, bool want_split) {
  char name[160];
  snprintf(name, sizeof name, "multi.default n=%lld 'a[i] += 1; s = sum(a)': %s", (long long)n,
           want_split ? "split" : "one GPU");
  jitc_kernel *k = compile(ctx, "a[i] += 1; s = sum(a)", JITC_FLOAT64, JITC_TARGET_CUDA, NULL);
  jitc_kernel *k1 = compile(ctx, "a[i] += 1; s = sum(a)", JITC_FLOAT64, JITC_TARGET_CUDA, "0");
  double *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), s = 0, s1 = 0;
  if (!k || !k1 || !a || !b) {
    printf("skip %s: no memory\n", name);
    goto out;
  }
  fill(a, JITC_FLOAT64, n);
  for (int64_t i = 0; i < n; i++)
    a[i] = isnan(a[i]) ? 1 : a[i];
  memcpy(b, a, (size_t)n * 8);
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  CudaTrace T = {.cap = 1 << 16};
  T.c = calloc((size_t)T.cap, sizeof *T.c);
  int ia = jitc_kernel_find_array(k, "a"), is = jitc_kernel_find_array(k, "s");
  void *arr[2], *arr1[2];
  arr[ia] = a, arr[is] = &s;
  arr1[ia] = b, arr1[is] = &s1;
  S->trace = &T;
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  S->trace = NULL;
  jitc_status st1 = jitc_run(ctx, k1, n, arr1, NULL, NULL);
  int64_t lead = T.n ? T.c[T.n - 1].off + T.c[T.n - 1].m : 0;
  bool split = lead < n;
  if (st || st1 || memcmp(a, b, (size_t)n * 8) || memcmp(&s, &s1, 8) ||
      (ndev >= 2 && split != want_split) || (ndev < 2 && split))
    printf("FAIL %s: %s; the first GPU ran %lld of %lld elements; sums %.17g and %.17g on "
           "one GPU\n", name, jitc_errmsg(ctx), (long long)lead, (long long)n, s, s1), nfail++;
  else {
    char rates[300] = "";
    for (int g = 0; g < S->ngpu; g++)
      snprintf(rates + strlen(rates), sizeof rates - strlen(rates), "%sGPU %d lane %d %.1f GB/s",
               g ? ", " : "", S->gpu[g]->ordinal, S->gpu[g]->lane, S->gpu[g]->rate);
    printf("ok %s (the first GPU ran %lld of %lld; the sum's bits as one GPU's; links measured: "
           "%s)\n", name, (long long)lead, (long long)n, rates), nok++;
  }
  free(T.c);
out:
  free(a);
  free(b);
  jitc_kernel_free(k);
  jitc_kernel_free(k1);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "check";
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip multi: %s\n", jitc_errmsg(ctx));
    return 0;
  }
  char err[256];
  if (cuda_load_driver(&A, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("FAIL multi.driver: %s\n", err);
    return 1;
  }
  int ndev = 0;
  A.cuDeviceGetCount(&ndev);
  if (!strcmp(mode, "count")) {
    CUdevice d;
    char n0[128] = "?", n1[128] = "?";
    if (A.cuDeviceGet(&d, 0) == CUDA_SUCCESS)
      A.cuDeviceGetName(n0, sizeof n0, d);
    if (ndev > 1 && A.cuDeviceGet(&d, 1) == CUDA_SUCCESS)
      A.cuDeviceGetName(n1, sizeof n1, d);
    printf("devices %d (%s%s%s)\n", ndev, n0, ndev > 1 ? ", " : "", ndev > 1 ? n1 : "");
    jitc_context_free(ctx);
    return 0;
  }
  CUdevice dev0;
  A.cuDeviceGet(&dev0, 0);
  A.cuDevicePrimaryCtxRetain(&pctx, dev0);
  bool quick = !strcmp(mode, "quick");
  static const struct {
    const char *src;
    jitc_dtype t;
  } progs[] = {
      {"a[i] += 1", JITC_FLOAT64},
      {"c = a * 2 + float64(i); d = a - b", JITC_FLOAT64},
      {"a[i] = a * b + float32(i); c = a - b", JITC_FLOAT32},
      {"s = sum(a * b); m = max(a); k = argmin(b); t = mean(a); c = a - b", JITC_FLOAT64},
      {"s = sum(a); p = max(b); k = argmax(a); q = any(a > b); c = exp(a)", JITC_FLOAT32},
      {"s = prod(a * 0.0001 + 1); a[i] = a", JITC_FLOAT64},
      {"s = sum(a); m = min(b); k = argmin(a); w = all(a != 100); c = a + b", JITC_INT32},
  };
  const char *lists[4];
  int nlists = 0;
  lists[nlists++] = "0,0";
  if (ndev >= 2) {
    lists[nlists++] = "0,1";
    if (!quick) { /* compute-sanitizer: the two lists above suffice */
      lists[nlists++] = "1,0";
      lists[nlists++] = "0,1,0";
    }
  } else {
    printf("skip multi.two_gpus: the driver sees %d device\n", ndev);
  }
  const int64_t KB = 1024;
  CudaTune forced = {.share_min = 1}, small = {.share_min = 1, .chunk_bytes = 64 * KB};
  const int64_t sizes[] = {0, 1, 4097, 100003, 2, 4095, 12293, 1000003, 10000019};
  int nsizes = quick ? 4 : 9;
  for (int l = 0; l < nlists; l++)
    for (size_t p = 0; p < sizeof progs / sizeof *progs; p++)
      for (int s = 0; s < nsizes; s++) {
        one(ctx, progs[p].src, progs[p].t, sizes[s], lists[l], forced, PAGEABLE);
        one(ctx, progs[p].src, progs[p].t, sizes[s], lists[l], small, PAGEABLE);
        if (sizes[s] == 100003 || sizes[s] == 4097) {
          one(ctx, progs[p].src, progs[p].t, sizes[s], lists[l], small, PINNED);
          one(ctx, progs[p].src, progs[p].t, sizes[s], lists[l], small, REGISTERED);
        }
      }
  /* A split program (a kernel per group) with a reduction. */
  for (int l = 0; l < nlists; l++) {
    one(ctx, split_with_sum(), JITC_FLOAT64, quick ? 40009 : 3000017, lists[l], small, PAGEABLE);
    one(ctx, split_with_sum(), JITC_FLOAT64, 1, lists[l], forced, PAGEABLE);
  }
  if (!quick) {
    check_default(ctx, ndev, 50000000, true);   /* 800 MB both ways */
    check_default(ctx, ndev, 1000000, false);   /* 16 MB */
    /* A context that has not made GPU 1's: with no list, the first run
    ** stays on GPU 0, the second makes GPU 1's and splits. */
    jitc_context *fresh = jitc_context_new();
    check_default(fresh, ndev, 50000000, false);
    check_default(fresh, ndev, 50000000, true);
    jitc_context_free(fresh);
  }
  jitc_context_free(ctx);
  A.cuDevicePrimaryCtxRelease(dev0);
  printf("multi: %d ok, %d failed\n", nok, nfail);
  return nfail ? 1 : 0;
}
