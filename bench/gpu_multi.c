/*
** gpu_multi.c -- host to host on 1, 2, ... GPUs: one program over host
** arrays, split over the first k GPUs (jitc_options.devices "0", "0,1",
** ...), wall clock per call.  One JSON object per line, which
** bench/gpu_multi.py turns into the scaling table.
**
**   gpu_multi PROGRAM DTYPE N GPUS [pinned]
**
** PROGRAM over arrays of DTYPE (its inputs filled with values in [-1, 1),
** its outputs allocated), N elements, for each k in GPUS ("1,2,4"): two
** warm-up calls (the first registers the arrays, the second grows the
** staging: cuda/host.c, register_now), then timed calls, at least 5 and
** up to 2 s of them; the median and the fastest.  `pinned` registers the
** arrays once (cuMemHostRegister, every context) before the calls, so
** that every copy is DMA; without it they are pageable, as NumPy's are
** (huge pages where the kernel gives them, touched before the calls).
** Bytes: every input read and every output written, once.
*/
#include "../src/jitc.h"
#include "../runtime/cuda_api.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Filling on every core: an array of 8 GB takes seconds on one. */
typedef struct Fill {
  void *p;
  jitc_dtype t;
  int64_t from, to;
} Fill;

static void *fill_main(void *arg) {
  Fill *f = arg;
  uint64_t r = 0x9e3779b97f4a7c15ull ^ (uint64_t)f->from;
  for (int64_t i = f->from; i < f->to; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    double d = (double)(r >> 11) / 4503599627370496.0 - 1.0;
    if (f->t == JITC_FLOAT32)
      ((float *)f->p)[i] = (float)d;
    else if (f->t == JITC_FLOAT64)
      ((double *)f->p)[i] = d;
  }
  return NULL;
}

static void fill(void *p, jitc_dtype t, int64_t n) {
  enum { T = 16 };
  pthread_t th[T];
  Fill f[T];
  for (int k = 0; k < T; k++) {
    f[k] = (Fill){p, t, n * k / T, n * (k + 1) / T};
    pthread_create(&th[k], NULL, fill_main, &f[k]);
  }
  for (int k = 0; k < T; k++)
    pthread_join(th[k], NULL);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: gpu_multi PROGRAM DTYPE N GPUS [pinned]\n");
    return 64;
  }
  const char *prog = argv[1];
  jitc_dtype dt;
  if (jitc_dtype_parse(argv[2], &dt) != JITC_OK) {
    fprintf(stderr, "gpu_multi: unknown dtype %s\n", argv[2]);
    return 64;
  }
  int64_t n = (int64_t)atof(argv[3]);
  bool pinned = argc > 5 && !strcmp(argv[5], "pinned");
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    return 69;
  }
  CudaApi api = {0}; /* cuda_load_driver loads once: a zeroed table */
  char err[256];
  if (pinned && cuda_load_driver(&api, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("{\"error\": \"%s\"}\n", err);
    return 69;
  }
  /* Registering needs a context current; PORTABLE pins for every context. */
  CUdevice dev0;
  CUcontext cx0 = NULL;
  if (pinned && (api.cuDeviceGet(&dev0, 0) != CUDA_SUCCESS ||
                 api.cuDevicePrimaryCtxRetain(&cx0, dev0) != CUDA_SUCCESS ||
                 api.cuCtxSetCurrent(cx0) != CUDA_SUCCESS)) {
    printf("{\"error\": \"no context on device 0\"}\n");
    return 69;
  }
  jitc_array_decl decl[1] = {{"a", dt}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.devices = "0";
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, prog, decl, 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("{\"error\": \"%s\"}\n", jitc_errmsg(ctx));
    return 65;
  }
  int na = jitc_kernel_array_count(k);
  void *arr[8];
  size_t bytes = 0;
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype t;
    jitc_kernel_array(k, a, &name, &role, &t);
    size_t sz = (size_t)n * jitc_dtype_size(t), huge = (size_t)2 << 20;
    sz = (sz + huge - 1) / huge * huge;
    arr[a] = aligned_alloc(huge, sz);
    if (!arr[a]) {
      printf("{\"error\": \"no memory for %zu bytes\"}\n", sz);
      return 71;
    }
    madvise(arr[a], sz, MADV_HUGEPAGE);
    fill(arr[a], t, n); /* outputs too: their pages touched, as a caller's are */
    bytes += (size_t)n * jitc_dtype_size(t) * ((role == JITC_INOUT) + 1);
    if (pinned && api.cuMemHostRegister(arr[a], sz, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS) {
      printf("{\"error\": \"cuMemHostRegister failed\"}\n");
      return 71;
    }
  }
  jitc_kernel_free(k);
  char gpus[256];
  snprintf(gpus, sizeof gpus, "%s", argv[4]);
  for (char *tok = strtok(gpus, ","); tok; tok = strtok(NULL, ",")) {
    int g = atoi(tok);
    char list[256] = "";
    for (int d = 0; d < g; d++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", d ? "," : "", d);
    o.devices = list;
    if (jitc_compile(ctx, prog, decl, 1, NULL, 0, &o, &k) != JITC_OK) {
      printf("{\"error\": \"%s\", \"gpus\": %d}\n", jitc_errmsg(ctx), g);
      continue;
    }
    double t[200];
    int reps = 0;
    jitc_status st = JITC_OK;
    for (int w = 0; w < 2 && st == JITC_OK; w++)
      st = jitc_run(ctx, k, n, arr, NULL, NULL);
    double start = now_ms();
    while (st == JITC_OK && reps < 200 && (reps < 5 || now_ms() - start < 2000)) {
      double t0 = now_ms();
      st = jitc_run(ctx, k, n, arr, NULL, NULL);
      t[reps++] = now_ms() - t0;
    }
    if (st != JITC_OK) {
      printf("{\"error\": \"%s\", \"gpus\": %d}\n", jitc_errmsg(ctx), g);
    } else {
      qsort(t, (size_t)reps, sizeof *t, cmpd);
      printf("{\"program\": \"%s\", \"dtype\": \"%s\", \"n\": %lld, \"gpus\": %d, \"devices\": "
             "\"%s\", \"memory\": \"%s\", \"median_ms\": %.4f, \"min_ms\": %.4f, \"reps\": %d, "
             "\"bytes\": %zu, \"gbps\": %.2f, \"device\": \"%s\"}\n",
             prog, jitc_dtype_name(dt), (long long)n, g, list, pinned ? "pinned" : "pageable",
             t[reps / 2], t[0], reps, bytes, (double)bytes / t[reps / 2] / 1e6,
             jitc_target_device(ctx, JITC_TARGET_CUDA));
    }
    fflush(stdout);
    jitc_kernel_free(k);
  }
  for (int a = 0; a < na; a++) {
    if (pinned) {
      api.cuCtxSetCurrent(cx0);
      api.cuMemHostUnregister(arr[a]);
    }
    free(arr[a]);
  }
  jitc_context_free(ctx);
  if (cx0)
    api.cuDevicePrimaryCtxRelease(dev0);
  return 0;
}
