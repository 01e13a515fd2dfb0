/*
** bench/pcie_multi.c -- what the host's links move with no jitc at all:
** pinned copies host to device, device to host, and both at once (two
** streams), on the first 1, 2, ... GPUs together, one host thread per GPU.
** The ceiling of a host-to-host run split over several GPUs
** (bench/gpu_multi.sh): where two GPUs together move less than twice what
** one moves, the split cannot scale by two either.
**
**   cc -O2 -o pcie_multi bench/pcie_multi.c -I/usr/local/cuda/include -lcuda -lpthread
**   ./pcie_multi [MiB per copy, default 1024] [repeats, default 5]
**
** Prints one line per (GPUs, direction): the bytes all GPUs moved over the
** wall time from a common start to the last GPU's end, the median of the
** repeats, in GB/s.
*/
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *s_ = "?";                                                    \
      cuGetErrorName(r_, &s_);                                                 \
      fprintf(stderr, "%s: %s\n", #x, s_);                                     \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

enum { H2D = 1, D2H = 2, BOTH = 3 };

typedef struct Gpu {
  int ordinal;
  CUcontext cx;
  CUstream s[2];
  void *host[2];
  CUdeviceptr dev[2];
  size_t bytes;
  int mode;
  pthread_barrier_t *go;
  double end;
} Gpu;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *copy_main(void *arg) {
  Gpu *G = arg;
  CK(cuCtxSetCurrent(G->cx));
  pthread_barrier_wait(G->go);
  if (G->mode & H2D)
    CK(cuMemcpyHtoDAsync(G->dev[0], G->host[0], G->bytes, G->s[0]));
  if (G->mode & D2H)
    CK(cuMemcpyDtoHAsync(G->host[1], G->dev[1], G->bytes, G->s[1]));
  CK(cuStreamSynchronize(G->s[0]));
  CK(cuStreamSynchronize(G->s[1]));
  G->end = now();
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  size_t bytes = mib << 20;
  CK(cuInit(0));
  int n = 0;
  CK(cuDeviceGetCount(&n));
  Gpu *gpu = calloc((size_t)n, sizeof *gpu);
  for (int g = 0; g < n; g++) {
    CUdevice d;
    CK(cuDeviceGet(&d, g));
    gpu[g].ordinal = g;
    CK(cuDevicePrimaryCtxRetain(&gpu[g].cx, d));
    CK(cuCtxSetCurrent(gpu[g].cx));
    for (int k = 0; k < 2; k++) {
      CK(cuStreamCreate(&gpu[g].s[k], CU_STREAM_NON_BLOCKING));
      CK(cuMemHostAlloc(&gpu[g].host[k], bytes, 0));
      memset(gpu[g].host[k], 1 + k, bytes); /* not zeros, and every page touched */
      CK(cuMemAlloc(&gpu[g].dev[k], bytes));
      CK(cuMemsetD8(gpu[g].dev[k], 3, bytes));
    }
    gpu[g].bytes = bytes;
  }
  printf("%d GPUs, %zu MiB per copy, median of %d\n", n, mib, reps);
  static const char *const names[] = {"", "h2d", "d2h", "both"};
  for (int used = 1; used <= n; used *= 2)
    for (int mode = H2D; mode <= BOTH; mode++) {
      double *gbs = calloc((size_t)reps + 1, sizeof *gbs);
      for (int r = -1; r < reps; r++) { /* r = -1: a warm-up */
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, (unsigned)used + 1);
        pthread_t *th = calloc((size_t)used, sizeof *th);
        for (int g = 0; g < used; g++) {
          gpu[g].mode = mode;
          gpu[g].go = &go;
          pthread_create(&th[g], NULL, copy_main, &gpu[g]);
        }
        pthread_barrier_wait(&go);
        double t0 = now(), end = t0;
        for (int g = 0; g < used; g++) {
          pthread_join(th[g], NULL);
          if (gpu[g].end > end)
            end = gpu[g].end;
        }
        pthread_barrier_destroy(&go);
        free(th);
        double moved = (double)bytes * used * (mode == BOTH ? 2 : 1);
        if (r >= 0)
          gbs[r] = moved / (end - t0) / 1e9;
      }
      qsort(gbs, (size_t)reps, sizeof *gbs, cmp);
      printf("pcie gpus=%d dir=%s GBps=%.1f (min %.1f max %.1f)\n", used, names[mode],
             gbs[reps / 2], gbs[0], gbs[reps - 1]);
      free(gbs);
    }
  return 0;
}
