/*
** gpu_host.c -- what the machine allows host to host, and what jitc's host
** pipeline does with it.  One mode per question; each prints one JSON object
** per line (bench/gpu_timeline.py and bench/docs.py read them):
**
**   gpu_host limits          the copy engines with pinned memory (each way
**                            alone, both ways at once, whole and in chunks),
**                            the host's memcpy over 1 to 16 threads, pinning
**                            (cuMemHostAlloc, cuMemHostRegister) and the
**                            driver's own pageable copies
**   gpu_host sweep N         jitc's pipeline on `a[i] += 1` float64 and a
**                            three-output float32 program, N elements, over
**                            chunk sizes, slots, threads, registration and
**                            streaming stores (CudaTune)
**   gpu_host trace N PROG    one run of PROG (float64 arrays, N elements)
**                            with the pipeline's trace: when each chunk's
**                            copies and kernel ran
**   gpu_host nvrtc MODE      NVRTC's first call in this fresh process (MODE
**                            0: none before; 1: jitc's warm-up first)
**   gpu_host process         the CLI's `jitc -t cuda 'a[i] += 1'` job step by
**                            step, in this fresh process
**   gpu_host driver          the driver's start step by step (NVRTC's and the
**                            driver's libraries, cuInit, the primary context)
**
** It includes the target's header to set CudaTune and read CudaTrace, as
** tests/gpu/cuda_gpu.c does; nothing else reaches inside the library.
*/
#include "../src/jitc_int.h"
#include "../src/cuda/cuda.h"
#include "../runtime/cuda_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define BENCH_HUGE ((size_t)2 << 20)

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static CudaApi api;
static CUcontext pctx;

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double med(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return v[n / 2];
}

static void die(const char *what, CUresult r) {
  printf("{\"error\": \"%s failed (%d)\"}\n", what, r);
  exit(1);
}
#define CK(x)                                                                                 \
  do {                                                                                        \
    CUresult r_ = (x);                                                                        \
    if (r_ != CUDA_SUCCESS) die(#x, r_);                                                      \
  } while (0)

static void driver(void) {
  char err[512];
  if (cuda_load_driver(&api, NULL, err, sizeof err)) {
    printf("{\"error\": \"%s\"}\n", err);
    exit(69);
  }
  CUdevice d;
  CK(api.cuDeviceGet(&d, 0));
  CK(api.cuDevicePrimaryCtxRetain(&pctx, d));
  CK(api.cuCtxSetCurrent(pctx));
}

/* Pageable memory as NumPy holds a large array: huge pages where granted, touched. */
static void *pageable(size_t bytes, bool huge) {
  size_t size = (bytes + BENCH_HUGE - 1) / BENCH_HUGE * BENCH_HUGE;
  void *p = aligned_alloc(BENCH_HUGE, size);
  if (!p)
    return NULL;
  madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  memset(p, 1, size);
  return p;
}

/* ---- limits ---- */

static CUstream st[4];

/* ms of `bytes` copied one way or both at once, in pieces of `piece` over 4 streams. */
static double copies(CUdeviceptr dup, const void *hup, void *hdown, CUdeviceptr ddown,
                     size_t bytes, size_t piece, bool up, bool down, int reps) {
  double t[40];
  for (int r = 0; r < reps + 2; r++) {
    CK(api.cuCtxSynchronize());
    double t0 = now_ms();
    int q = 0;
    for (size_t off = 0; off < bytes; off += piece, q = (q + 1) % 4) {
      size_t b = bytes - off < piece ? bytes - off : piece;
      if (up) CK(api.cuMemcpyHtoDAsync(dup + off, (const char *)hup + off, b, st[q]));
      if (down) CK(api.cuMemcpyDtoHAsync((char *)hdown + off, ddown + off, b, st[(q + 2) % 4]));
    }
    CK(api.cuCtxSynchronize());
    if (r >= 2) t[r - 2] = now_ms() - t0;
  }
  return med(t, reps);
}

typedef struct Cp {
  char *dst;
  const char *src;
  size_t n;
  int streaming;
} Cp;

static void *cp_main(void *arg) {
  Cp *c = arg;
#if defined(__x86_64__)
  if (c->streaming) {
    size_t i = 0;
    for (; i + 64 <= c->n; i += 64)
      for (int k = 0; k < 64; k += 16)
        _mm_stream_si128((__m128i *)(c->dst + i + k), _mm_loadu_si128((const __m128i *)(c->src + i + k)));
    memcpy(c->dst + i, c->src + i, c->n - i);
    _mm_sfence();
    return NULL;
  }
#endif
  memcpy(c->dst, c->src, c->n);
  return NULL;
}

/* ms of T threads copying bytes from src to dst (and, with dst2, the same
** number copying src2 to dst2 at the same time). */
static double par_memcpy(char *dst, const char *src, char *dst2, const char *src2, size_t bytes,
                         int T, int streaming, int reps) {
  double t[20];
  pthread_t th[64];
  Cp c[64];
  for (int r = 0; r < reps + 1; r++) {
    double t0 = now_ms();
    int nt = 0;
    for (int k = 0; k < T; k++) {
      size_t per = bytes / (size_t)T / 4096 * 4096;
      size_t b = k == T - 1 ? bytes - per * (size_t)k : per;
      c[nt] = (Cp){dst + per * (size_t)k, src + per * (size_t)k, b, 0};
      pthread_create(&th[nt], NULL, cp_main, &c[nt]);
      nt++;
      if (dst2) {
        c[nt] = (Cp){dst2 + per * (size_t)k, src2 + per * (size_t)k, b, streaming};
        pthread_create(&th[nt], NULL, cp_main, &c[nt]);
        nt++;
      }
    }
    for (int k = 0; k < nt; k++)
      pthread_join(th[k], NULL);
    if (r >= 1) t[r - 1] = now_ms() - t0;
  }
  return med(t, reps);
}

typedef struct Reg {
  char *p;
  size_t n;
  int unregister;
  CUresult r;
} Reg;

static void *reg_main(void *arg) {
  Reg *g = arg;
  api.cuCtxSetCurrent(pctx);
  g->r = g->unregister ? api.cuMemHostUnregister(g->p) : api.cuMemHostRegister(g->p, g->n, 0);
  return NULL;
}

static void limits_register(void);

static void limits(bool only_registration) {
  driver();
  for (int q = 0; q < 4; q++)
    CK(api.cuStreamCreate(&st[q], CU_STREAM_NON_BLOCKING));
  const size_t MB = (size_t)1 << 20;
  if (only_registration) {
    limits_register();
    return;
  }
  /* Pinning by allocation. */
  for (size_t mb = 4; mb <= 256; mb *= 4) {
    void *h;
    double t0 = now_ms();
    CK(api.cuMemHostAlloc(&h, mb * MB, CU_MEMHOSTALLOC_PORTABLE));
    double t1 = now_ms();
    CK(api.cuMemFreeHost(h));
    printf("{\"what\": \"cuMemHostAlloc\", \"MB\": %zu, \"alloc_ms\": %.3f, \"free_ms\": %.3f}\n", mb,
           t1 - t0, now_ms() - t1);
  }
  size_t big = 800 * MB;
  void *hin, *hout;
  CUdeviceptr din, dout;
  CK(api.cuMemHostAlloc(&hin, big, CU_MEMHOSTALLOC_PORTABLE));
  CK(api.cuMemHostAlloc(&hout, big, CU_MEMHOSTALLOC_PORTABLE));
  memset(hin, 1, big);
  memset(hout, 2, big);
  CK(api.cuMemAlloc(&din, big));
  CK(api.cuMemAlloc(&dout, big));
  CK(api.cuMemsetD8Async(dout, 3, big, st[0]));
  size_t sizes[] = {8 * MB, 80 * MB, 800 * MB};
  for (int s = 0; s < 3; s++) {
    size_t b = sizes[s];
    int reps = b > 100 * MB ? 5 : 15;
    double up = copies(din, hin, hout, dout, b, b, true, false, reps);
    double down = copies(din, hin, hout, dout, b, b, false, true, reps);
    double both = copies(din, hin, hout, dout, b, b, true, true, reps);
    printf("{\"what\": \"pinned\", \"MB\": %zu, \"h2d_ms\": %.4f, \"d2h_ms\": %.4f, \"both_ms\": %.4f, "
           "\"h2d_GBps\": %.1f, \"d2h_GBps\": %.1f}\n",
           b / MB, up, down, both, (double)b / up / 1e6, (double)b / down / 1e6);
    for (size_t piece = MB / 2; piece <= 16 * MB && b >= 80 * MB; piece *= 2)
      printf("{\"what\": \"pinned_pieces\", \"MB\": %zu, \"piece_KB\": %zu, \"h2d_ms\": %.4f, "
             "\"d2h_ms\": %.4f, \"both_ms\": %.4f}\n", b / MB, piece >> 10,
             copies(din, hin, hout, dout, b, piece, true, false, reps),
             copies(din, hin, hout, dout, b, piece, false, true, reps),
             copies(din, hin, hout, dout, b, piece, true, true, reps));
  }
  /* The host's memcpy: pageable to pinned (staging in), pinned to pageable
  ** (unstaging out, plain and streaming), both at once. */
  size_t mb80 = 80 * MB;
  char *pg = pageable(mb80, true), *pg2 = pageable(mb80, true);
  int threads[] = {1, 2, 4, 6, 8, 12, 16};
  for (int k = 0; k < 7; k++) {
    int T = threads[k];
    double in = par_memcpy(hin, pg, NULL, NULL, mb80, T, 0, 5);
    double out = par_memcpy(pg2, hout, NULL, NULL, mb80, T, 0, 5);
    double outs = 0;
    for (int r = 0; r < 1; r++) {
      /* streaming alone: as a second job with an empty first */
      double t[6];
      for (int q = 0; q < 6; q++) {
        pthread_t th[64];
        Cp c[64];
        double t0 = now_ms();
        for (int j = 0; j < T; j++) {
          size_t per = mb80 / (size_t)T / 4096 * 4096;
          c[j] = (Cp){pg2 + per * (size_t)j, (char *)hout + per * (size_t)j,
                      j == T - 1 ? mb80 - per * (size_t)j : per, 1};
          pthread_create(&th[j], NULL, cp_main, &c[j]);
        }
        for (int j = 0; j < T; j++)
          pthread_join(th[j], NULL);
        t[q] = now_ms() - t0;
      }
      outs = med(t, 6);
    }
    double both = par_memcpy(hin, pg, pg2, hout, mb80, T, 1, 5);
    printf("{\"what\": \"memcpy\", \"threads\": %d, \"MB\": 80, \"in_ms\": %.3f, \"out_ms\": %.3f, "
           "\"out_streaming_ms\": %.3f, \"both_ms\": %.3f, \"in_GBps\": %.1f, \"out_GBps\": %.1f, "
           "\"out_streaming_GBps\": %.1f, \"both_GBps_each\": %.1f}\n",
           T, in, out, outs, both, 80.0 * MB / in / 1e6, 80.0 * MB / out / 1e6,
           80.0 * MB / outs / 1e6, 80.0 * MB / both / 1e6);
  }
  free(pg);
  free(pg2);
  limits_register();
}

/* Pinning the caller's memory, and the driver's own pageable copies. */
static void limits_register(void) {
  const size_t MB = (size_t)1 << 20, big = 800 * MB, mb80 = 80 * MB;
  CUdeviceptr din;
  CK(api.cuMemAlloc(&din, big));
  char *pg = pageable(mb80, true), *pg2 = pageable(mb80, true);
  /* Registering pageable memory, and DMA from it. */
  for (int huge = 1; huge >= 0; huge--)
    for (size_t mb = 4; mb <= 800; mb = mb == 4 ? 80 : mb * 10) {
      char *p = pageable(mb * MB, huge);
      double t0 = now_ms();
      CUresult r = api.cuMemHostRegister(p, mb * MB, 0);
      double t1 = now_ms();
      double up = r == CUDA_SUCCESS ? copies(din, p, NULL, 0, mb * MB, mb * MB, true, false, 3) : 0;
      double t2 = now_ms();
      if (r == CUDA_SUCCESS)
        api.cuMemHostUnregister(p);
      double t3 = now_ms();
      printf("{\"what\": \"register\", \"MB\": %zu, \"huge_pages\": %d, \"result\": %d, "
             "\"register_ms\": %.3f, \"unregister_ms\": %.3f, \"h2d_ms\": %.4f, "
             "\"register_GBps\": %.1f}\n", mb, huge, r, t1 - t0, t3 - t2, up,
             (double)mb * MB / (t1 - t0) / 1e6);
      free(p);
    }
  /* Registering 80 MB as 1, 2, 4 or 8 pieces, each on its own thread at once. */
  for (int T = 1; T <= 8; T *= 2) {
    char *p = pageable(mb80, true);
    double t0 = now_ms();
    pthread_t th[8];
    Reg rg[8];
    for (int k = 0; k < T; k++) {
      rg[k] = (Reg){p + mb80 / (size_t)T * (size_t)k, mb80 / (size_t)T, 0, 0};
      pthread_create(&th[k], NULL, reg_main, &rg[k]);
    }
    for (int k = 0; k < T; k++)
      pthread_join(th[k], NULL);
    double t1 = now_ms();
    for (int k = 0; k < T; k++) {
      rg[k].unregister = 1;
      pthread_create(&th[k], NULL, reg_main, &rg[k]);
    }
    for (int k = 0; k < T; k++)
      pthread_join(th[k], NULL);
    printf("{\"what\": \"register_threads\", \"MB\": 80, \"threads\": %d, \"result\": %d, "
           "\"register_ms\": %.3f, \"unregister_ms\": %.3f}\n", T, rg[0].r, t1 - t0, now_ms() - t1);
    free(p);
  }
  /* The driver's own staging of pageable memory. */
  double t[8];
  for (int r = 0; r < 6; r++) {
    double t0 = now_ms();
    CK(api.cuMemcpyHtoD(din, pg, mb80));
    CK(api.cuMemcpyDtoH(pg2, din, mb80));
    t[r] = now_ms() - t0;
  }
  printf("{\"what\": \"pageable_sync\", \"MB\": 80, \"h2d_then_d2h_ms\": %.3f}\n", med(t, 6));
  free(pg);
  free(pg2);
}

/* ---- the pipeline ---- */

static jitc_kernel *compile(jitc_context *ctx, const char *src, jitc_dtype t) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  jitc_array_decl d[3] = {{"a", t}, {"x", t}, {"y", t}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, 3, NULL, 0, &o, &k) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(1);
  }
  return k;
}

/* Host arrays for kernel k over n elements: inputs filled, outputs touched. */
static void **arrays_for(jitc_kernel *k, int64_t n) {
  int na = jitc_kernel_array_count(k);
  void **p = calloc((size_t)na, sizeof *p);
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    size_t bytes = (size_t)n * jitc_dtype_size(dt);
    p[a] = pageable(bytes, true);
    if (dt == JITC_FLOAT64)
      for (int64_t i = 0; i < n; i++) ((double *)p[a])[i] = 1.0 + (double)(i % 7);
    else if (dt == JITC_FLOAT32)
      for (int64_t i = 0; i < n; i++) ((float *)p[a])[i] = 1.0f + (float)(i % 7);
  }
  return p;
}

static double h2h_ms(jitc_context *ctx, jitc_kernel *k, int64_t n, void **arr, int reps,
                     double *up, double *down) {
  double t[64], h[64], d[64];
  jitc_run_info info;
  for (int r = 0; r < reps + 2; r++) {
    double t0 = now_ms();
    if (jitc_run(ctx, k, n, arr, NULL, &info) != JITC_OK) {
      printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
      exit(1);
    }
    if (r >= 2) {
      t[r - 2] = now_ms() - t0;
      h[r - 2] = info.h2d_ms;
      d[r - 2] = info.d2h_ms;
    }
  }
  *up = med(h, reps);
  *down = med(d, reps);
  return med(t, reps);
}

static void sweep(int64_t n, bool pinned_only) {
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(69);
  }
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const char *progs[][2] = {{"inc_f64", "a[i] += 1"},
                            {"polar_f32", "let h = sqrt(x*x + y*y); r = h; c = x / h; s = y / h"}};
  int reps = n > 50000000 ? 5 : 15;
  for (int w = 0; w < 2; w++) {
    jitc_kernel *k = compile(ctx, progs[w][1], w ? JITC_FLOAT32 : JITC_FLOAT64);
    void **arr = arrays_for(k, n);
    int chunks[] = {2, 4, 8, 16};
    int slots[] = {3, 4, 6};
    int threads[] = {8, 12, 16};
    for (int c = 1; c < 4 && !pinned_only; c++)
      for (int sl = 0; sl < 3; sl++)
        for (int t = 0; t < 3; t++)
          for (int strm = 1; strm <= 2; strm++) {
            S->tune = (CudaTune){(int64_t)chunks[c] << 20, slots[sl], threads[t], 1, strm};
            double up, down, ms = h2h_ms(ctx, k, n, arr, reps, &up, &down);
            printf("{\"what\": \"sweep\", \"workload\": \"%s\", \"n\": %lld, \"pinned\": 0, "
                   "\"chunk_MB\": %d, \"slots\": %d, \"threads\": %d, \"streaming\": %d, "
                   "\"ms\": %.3f, \"h2d_sum_ms\": %.3f, \"d2h_sum_ms\": %.3f}\n",
                   progs[w][0], (long long)n, chunks[c], slots[sl], threads[t], strm, ms, up, down);
            fflush(stdout);
          }
    /* The same arrays pinned once (registered by the caller): DMA in place. */
    int na = jitc_kernel_array_count(k);
    bool pinned = S->api.cuCtxSetCurrent(S->pctx) == CUDA_SUCCESS;
    for (int a = 0; a < na; a++) {
      const char *name;
      jitc_role role;
      jitc_dtype dt;
      jitc_kernel_array(k, a, &name, &role, &dt);
      pinned &= S->api.cuMemHostRegister(arr[a], (size_t)n * jitc_dtype_size(dt), 0) == CUDA_SUCCESS;
    }
    for (int c = 0; c < 4 && pinned; c++)
      for (int sl = 0; sl < 3; sl++) {
        S->tune = (CudaTune){(int64_t)chunks[c] << 20, slots[sl], 0, 0, 0};
        double up, down, ms = h2h_ms(ctx, k, n, arr, reps, &up, &down);
        printf("{\"what\": \"sweep\", \"workload\": \"%s\", \"n\": %lld, \"pinned\": 1, "
               "\"chunk_MB\": %d, \"slots\": %d, \"ms\": %.3f}\n", progs[w][0], (long long)n,
               chunks[c], slots[sl], ms);
        fflush(stdout);
      }
    S->tune = (CudaTune){0};
    if (pinned) {
      double up, down, ms = h2h_ms(ctx, k, n, arr, reps, &up, &down);
      printf("{\"what\": \"sweep\", \"workload\": \"%s\", \"n\": %lld, \"pinned\": 1, "
             "\"auto\": 1, \"ms\": %.3f}\n", progs[w][0], (long long)n, ms);
      for (int a = 0; a < na; a++)
        S->api.cuMemHostUnregister(arr[a]);
    }
    S->tune = (CudaTune){0};
    double up, down, ms = h2h_ms(ctx, k, n, arr, reps, &up, &down);
    printf("{\"what\": \"sweep\", \"workload\": \"%s\", \"n\": %lld, \"auto\": 1, \"ms\": %.3f}\n",
           progs[w][0], (long long)n, ms);
    for (int a = 0; a < jitc_kernel_array_count(k); a++)
      free(arr[a]);
    free(arr);
    jitc_kernel_free(k);
  }
  jitc_context_free(ctx);
}

/* Small and middle sizes: where the pipeline's fixed costs (copy jobs,
** events, chunks) weigh most; chunk sizes and thread counts around the
** defaults, `a[i] += 1` float64 pageable. */
static void small(void) {
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK)
    exit(69);
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  jitc_kernel *k = compile(ctx, "a[i] += 1", JITC_FLOAT64);
  int64_t sizes[] = {100000, 1000000, 3000000, 10000000};
  int mb[] = {0, 1, 2, 4, 8, 16};
  int threads[] = {0, 1, 4};
  for (int z = 0; z < 4; z++) {
    void **arr = arrays_for(k, sizes[z]);
    for (int c = 0; c < 6; c++)
      for (int t = 0; t < 3; t++) {
        S->tune = (CudaTune){(int64_t)mb[c] << 20, 0, threads[t], 0, 0};
        double up, down, ms = h2h_ms(ctx, k, sizes[z], arr, 30, &up, &down);
        printf("{\"what\": \"small\", \"n\": %lld, \"chunk_MB\": %d, \"threads\": %d, "
               "\"ms\": %.4f}\n", (long long)sizes[z], mb[c], threads[t], ms);
      }
    free(arr[0]);
    free(arr);
  }
  S->tune = (CudaTune){0};
  jitc_context_free(ctx);
}

static void trace(int64_t n, const char *prog, bool pin) {
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(69);
  }
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  jitc_kernel *k = compile(ctx, prog, JITC_FLOAT64);
  void **arr = arrays_for(k, n);
  S->api.cuCtxSetCurrent(S->pctx);
  for (int a = 0; pin && a < jitc_kernel_array_count(k); a++)
    if (S->api.cuMemHostRegister(arr[a], (size_t)n * 8, 0) != CUDA_SUCCESS)
      pin = false;
  CudaTrace T = {.cap = 4096};
  T.c = calloc((size_t)T.cap, sizeof *T.c);
  double up, down;
  h2h_ms(ctx, k, n, arr, 5, &up, &down); /* warm: staging allocated */
  S->trace = &T;
  jitc_run_info info;
  jitc_run(ctx, k, n, arr, NULL, &info);
  S->trace = NULL;
  printf("{\"what\": \"trace\", \"program\": \"%s\", \"n\": %lld, \"pinned\": %d, \"chunk\": %lld, "
         "\"slots\": %d, \"threads\": %d, \"registered\": %d, \"total_ms\": %.4f, \"chunks\": [",
         prog, (long long)n, pin, (long long)T.chunk, T.slots, T.threads, T.registered, T.total_ms);
  for (int64_t c = 0; c < T.n; c++) {
    CudaTraceChunk *t = &T.c[c];
    printf("%s[%lld, %lld, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f]", c ? ", " : "",
           (long long)t->off, (long long)t->m, t->in0, t->in1, t->up0, t->up1, t->k1, t->down1,
           t->out0, t->out1);
  }
  printf("]}\n");
  jitc_context_free(ctx);
}

/* ---- NVRTC's first call ---- */

static double cpu_ms(long *faults) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  *faults = u.ru_minflt + u.ru_majflt;
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static void nvrtc_one(const char *what, const char *src, int nopt, const char **opt) {
  long f0, f1;
  double c0 = cpu_ms(&f0), t0 = now_ms();
  nvrtcProgram p;
  int r = api.nvrtcCreateProgram(&p, src, "jitc.cu", 0, NULL, NULL);
  if (!r)
    r = api.nvrtcCompileProgram(p, nopt, opt);
  size_t sz = 0;
  if (!r && api.nvrtcGetCUBINSize)
    api.nvrtcGetCUBINSize(p, &sz);
  api.nvrtcDestroyProgram(&p);
  double t1 = now_ms(), c1 = cpu_ms(&f1);
  printf("{\"what\": \"nvrtc\", \"step\": \"%s\", \"result\": %d, \"wall_ms\": %.2f, \"cpu_ms\": %.2f, "
         "\"faults\": %ld}\n", what, r, t1 - t0, c1 - c0, f1 - f0);
}

static const char *trace_opt = "-fdevice-time-trace=nvrtc_trace";

static void nvrtc(int mode) {
  char err[512];
  double t0 = now_ms();
  if (cuda_load_nvrtc(&api, NULL, NULL, err, sizeof err)) {
    printf("{\"error\": \"%s\"}\n", err);
    exit(69);
  }
  printf("{\"what\": \"nvrtc\", \"step\": \"dlopen\", \"wall_ms\": %.2f}\n", now_ms() - t0);
  jitc_context *ctx = jitc_context_new();
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.cuda_arch = "sm_90";
  jitc_array_decl d = {"a", JITC_FLOAT64};
  char *src = NULL;
  /* The generated source, through --emit's entry point (no NVRTC call). */
  if (jitc_emit(ctx, "a[i] = a * 3 + 1", &d, 1, NULL, 0, &o, "cuda", &src) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(1);
  }
  const char *opts[] = {"-arch=sm_90", "--fmad=false", "-minimal"};
  const char *warm75[] = {"-arch=sm_75"};
  if (mode == 1) /* what cuda_nvrtc_warm_up does */
    nvrtc_one("warm_sm75_empty", "extern \"C\" __global__ void jitc_warm(void) {}", 1, warm75);
  if (mode == 2)
    nvrtc_one("warm_sm90_empty", "extern \"C\" __global__ void jitc_warm(void) {}", 3, opts);
  if (mode == 3)
    nvrtc_one("warm_sm90_same", src, 3, opts);
  if (mode == 4) { /* where a warm compile's time goes: NVRTC's own trace (PTX: ptxas cannot take it) */
    const char *ptx[] = {"-arch=compute_90", "--fmad=false", "-minimal", trace_opt};
    nvrtc_one("warm_ptx", src, 3, ptx);
    nvrtc_one("traced_ptx", src, 4, ptx);
  }
  nvrtc_one("first", src, 3, opts);
  nvrtc_one("second", src, 3, opts);
  nvrtc_one("third", src, 3, opts);
  const char *o2[] = {"-arch=sm_90", "--fmad=false"};
  nvrtc_one("no_minimal", src, 2, o2);
  const char *o3[] = {"-arch=sm_90", "--fmad=false", "-minimal", "-Xptxas=-O1"};
  nvrtc_one("ptxas_O1", src, 4, o3);
  const char *o4[] = {"-arch=compute_90", "--fmad=false", "-minimal"};
  nvrtc_one("ptx_only", src, 3, o4);
  jitc_free(src);
  jitc_context_free(ctx);
}

/* ---- the CLI's job, step by step ---- */

/* The driver's own start, step by step, in this fresh process. */
static void driver_start(void) {
  char err[512];
  double t0 = now_ms();
  if (cuda_load_nvrtc(&api, NULL, NULL, err, sizeof err)) {
    printf("{\"error\": \"%s\"}\n", err);
    exit(69);
  }
  double t1 = now_ms();
  if (cuda_load_driver(&api, NULL, err, sizeof err)) { /* dlopen and cuInit */
    printf("{\"error\": \"%s\"}\n", err);
    exit(69);
  }
  double t2 = now_ms();
  CUdevice d;
  CK(api.cuDeviceGet(&d, 0));
  CK(api.cuDevicePrimaryCtxRetain(&pctx, d));
  double t3 = now_ms();
  CK(api.cuCtxSetCurrent(pctx));
  CUdeviceptr p;
  CK(api.cuMemAlloc(&p, 1 << 20));
  double t4 = now_ms();
  CK(api.cuMemFree(p));
  if (getenv("GPU_HOST_KEEP_CONTEXT")) /* leave the context to the process's exit */
    exit(0);
  CK(api.cuDevicePrimaryCtxRelease(d));
  double t5 = now_ms();
  printf("{\"what\": \"driver\", \"nvrtc_dlopen_ms\": %.2f, \"driver_dlopen_cuInit_ms\": %.2f, "
         "\"primary_context_ms\": %.2f, \"first_alloc_ms\": %.2f, \"context_release_ms\": %.2f}\n",
         t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
}

static void process(void) {
  double t0 = now_ms();
  jitc_context *ctx = jitc_context_new();
  jitc_status st = jitc_target_available(ctx, JITC_TARGET_CUDA);
  double t1 = now_ms();
  if (st != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(69);
  }
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  jitc_array_decl d = {"a", JITC_FLOAT64};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, "a[i] += 1", &d, 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    exit(1);
  }
  const jitc_compile_info *ci = jitc_kernel_compile_info(k);
  double t2 = now_ms();
  int64_t n = 10000000;
  double *a = pageable((size_t)n * 8, true); /* as the CLI holds its inputs */
  for (int64_t i = 0; i < n; i++)
    a[i] = 1;
  double t3 = now_ms();
  void *arr[1] = {a};
  jitc_run_info info;
  st = jitc_run(ctx, k, n, arr, NULL, &info);
  double t4 = now_ms();
  st = st ? st : jitc_run(ctx, k, n, arr, NULL, &info);
  double t5 = now_ms();
  jitc_kernel_free(k);
  double t6 = now_ms();
  jitc_context_free(ctx);
  double t7 = now_ms();
  free(a);
  printf("{\"what\": \"process\", \"ok\": %d, \"driver_start_ms\": %.2f, \"compile_ms\": %.2f, "
         "\"cache\": \"%s\", \"nvrtc_ms\": %.2f, \"load_ms\": %.2f, \"fill_ms\": %.2f, "
         "\"first_run_ms\": %.3f, \"second_run_ms\": %.3f, \"h2d_sum_ms\": %.3f, "
         "\"kernel_ms\": %.3f, \"d2h_sum_ms\": %.3f, \"kernel_free_ms\": %.2f, "
         "\"context_free_ms\": %.2f}\n",
         st == JITC_OK, t1 - t0, t2 - t1, ci->cache, ci->codegen_ms, ci->load_ms, t3 - t2,
         t4 - t3, t5 - t4, info.h2d_ms, info.kernel_ms, info.d2h_ms, t6 - t5, t7 - t6);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "limits"))
    limits(argc > 2 && !strcmp(argv[2], "register"));
  else if (!strcmp(mode, "sweep"))
    sweep(argc > 2 ? (int64_t)atof(argv[2]) : 10000000, argc > 3 && !strcmp(argv[3], "pinned"));
  else if (!strcmp(mode, "trace") && argc > 3)
    trace((int64_t)atof(argv[2]), argv[3], argc > 4 && !strcmp(argv[4], "pinned"));
  else if (!strcmp(mode, "nvrtc"))
    nvrtc(argc > 2 ? atoi(argv[2]) : 0);
  else if (!strcmp(mode, "process"))
    process();
  else if (!strcmp(mode, "small"))
    small();
  else if (!strcmp(mode, "driver"))
    driver_start();
  else {
    fprintf(stderr, "usage: gpu_host limits | sweep N | trace N PROGRAM | nvrtc MODE | process | driver\n");
    return 64;
  }
  return 0;
}
