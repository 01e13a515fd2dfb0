/*
** host_pipe_check.c -- the cuda target's host pipeline (src/cuda/host.c)
** moving every byte to its place, on a machine without a GPU: run with
** JITC_LIBCUDA and JITC_LIBNVRTC naming tests/cuda_fake.c's library (see
** tests/t_host_pipe.sh), where a kernel does nothing and queued work is done
** only when waited for.  In-place programs must give back their inputs,
** for every way an array travels (staged, pinned by the caller, registered
** for the call, mixed), chunk sizes, slot and thread counts, plain and
** streaming stores, odd sizes and misaligned pointers; the registrations a
** run makes are undone when it ends, and the caller's own stay; the chunks
** (which set the bits of float sums) are the same on every path and call.
** Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why".
*/
#include "../src/jitc_int.h"
#include "../src/cuda/cuda.h"
#include "../runtime/cuda_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static bool pinned(const void *p) {
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned long long t = 0;
  void *d = &t;
  return A.cuPointerGetAttributes(1, &attr, &d, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
         (unsigned)t == CU_MEMORYTYPE_HOST;
}

/* One case: program src (float64 a, b) over n elements; `pin`: bit k pins
** array k in the caller's memory. */
static void one(jitc_context *ctx, const char *src, int nb, int64_t n, int pin, int shift,
                CudaTune tune, const char *label) {
  char name[200];
  snprintf(name, sizeof name, "host_pipe.%s n=%lld '%s'", label, (long long)n, src);
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, nb, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
    nfail++;
    return;
  }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = tune;
  int na = jitc_kernel_array_count(k);
  void *base[2], *arr[2], *want[2];
  size_t bytes = (size_t)(n + shift + 1) * 8;
  for (int a = 0; a < na; a++) {
    if (pin >> a & 1)
      A.cuMemHostAlloc(&base[a], bytes, 0);
    else
      base[a] = malloc(bytes);
    arr[a] = (double *)base[a] + shift;
    want[a] = malloc(bytes);
    for (int64_t i = 0; i < n; i++)
      ((double *)arr[a])[i] = (double)(next() >> 11);
    memcpy(want[a], arr[a], (size_t)n * 8);
  }
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  int bad = st != JITC_OK;
  for (int a = 0; a < na && !bad; a++) {
    if (memcmp(want[a], arr[a], (size_t)n * 8)) {
      int64_t i = 0;
      while (((double *)want[a])[i] == ((double *)arr[a])[i])
        i++;
      printf("FAIL %s: array %d differs first at element %lld\n", name, a, (long long)i);
      bad = 1;
    }
    if (n && pinned(arr[a]) != (pin >> a & 1)) {
      printf("FAIL %s: array %d is %spinned after the run\n", name, a,
             pinned(arr[a]) ? "" : "not ");
      bad = 1;
    }
  }
  if (st != JITC_OK)
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
  else if (!bad)
    printf("ok %s\n", name);
  nfail += bad;
  for (int a = 0; a < na; a++) {
    if (pin >> a & 1)
      A.cuMemFreeHost(base[a]);
    else
      free(base[a]);
    free(want[a]);
  }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = (CudaTune){0};
  jitc_kernel_free(k);
}

/* The chunks of a run of n elements, as its trace records them, into
** off[] (their starts; the count is returned). */
static int64_t chunks_of(jitc_context *ctx, jitc_kernel *k, int64_t n, void **arr,
                         int64_t *off, int64_t cap) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  CudaTrace T = {.cap = cap};
  T.c = calloc((size_t)cap, sizeof *T.c);
  S->trace = &T;
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  S->trace = NULL;
  for (int64_t c = 0; c < T.n; c++)
    off[c] = T.c[c].off;
  free(T.c);
  return st == JITC_OK ? T.n : -1;
}

/* The chunks set the partials of reductions, so the bits of a float sum:
** they must be the same whatever the memory of the arrays (pageable, pinned,
** registered for the call) and on every call. */
static void same_chunks(void) {
  const int64_t n = 3000017, cap = 4096;
  int64_t off[4][4096], cnt[4];
  const char *how[4] = {"first call (registered)", "second call (staged)", "pinned",
                        "first array pinned"};
  jitc_context *ctx = jitc_context_new();
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, "a[i] = a; b[i] = b", d, 2, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL host_pipe.same_chunks: %s\n", jitc_errmsg(ctx));
    nfail++;
    return;
  }
  void *pg[2] = {calloc((size_t)n, 8), calloc((size_t)n, 8)}, *pin[2];
  A.cuMemHostAlloc(&pin[0], (size_t)n * 8, 0);
  A.cuMemHostAlloc(&pin[1], (size_t)n * 8, 0);
  void *mixed[2] = {pin[0], pg[1]};
  cnt[0] = chunks_of(ctx, k, n, pg, off[0], cap);
  cnt[1] = chunks_of(ctx, k, n, pg, off[1], cap);
  cnt[2] = chunks_of(ctx, k, n, pin, off[2], cap);
  cnt[3] = chunks_of(ctx, k, n, mixed, off[3], cap);
  int bad = 0;
  for (int q = 1; q < 4 && !bad; q++)
    if (cnt[q] != cnt[0] || cnt[0] < 2 || memcmp(off[q], off[0], (size_t)cnt[0] * sizeof **off)) {
      printf("FAIL host_pipe.same_chunks: %s: %lld chunks, %s: %lld, or other boundaries\n",
             how[0], (long long)cnt[0], how[q], (long long)cnt[q]);
      bad = 1;
    }
  if (!bad)
    printf("ok host_pipe.same_chunks (%lld chunks on every path)\n", (long long)cnt[0]);
  nfail += bad;
  free(pg[0]);
  free(pg[1]);
  A.cuMemFreeHost(pin[0]);
  A.cuMemFreeHost(pin[1]);
  jitc_kernel_free(k);
  jitc_context_free(ctx);
}

int main(void) {
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip host_pipe: %s\n", jitc_errmsg(ctx));
    return 0;
  }
  char err[256];
  if (cuda_load_driver(&A, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("FAIL host_pipe.driver: %s\n", err);
    return 1;
  }
  const int64_t KB = 1024;
  static const struct {
    const char *label;
    CudaTune tune;
    int pin, shift;
  } setups[] = {
      {"default", {0}, 0, 0},
      {"chunks-64K", {.chunk_bytes = 64 * KB}, 0, 0},
      {"chunks-64K-slots-2-threads-1-plain", {64 * KB, 2, 1, 0, 1}, 0, 0},
      {"chunks-64K-slots-3-threads-3", {64 * KB, 3, 3, 0, 0}, 0, 0},
      {"chunks-256K-slots-8-threads-16", {256 * KB, 8, 16, 0, 2}, 0, 0},
      {"chunks-64K-pinned", {.chunk_bytes = 64 * KB}, 3, 0},
      {"chunks-64K-first-pinned", {.chunk_bytes = 64 * KB}, 1, 0},
      {"chunks-64K-second-pinned-misaligned", {.chunk_bytes = 64 * KB}, 2, 1},
      {"chunks-64K-registered", {.chunk_bytes = 64 * KB, .reg = 2}, 0, 0},
      {"chunks-128K-registered-misaligned", {.chunk_bytes = 128 * KB, .reg = 2}, 0, 3},
      {"chunks-64K-registered-first-pinned", {.chunk_bytes = 64 * KB, .reg = 2}, 1, 0},
  };
  static const struct {
    const char *src;
    int nb;
  } progs[] = {{"a[i] = a", 1}, {"a[i] = a; b[i] = b", 2}, {"a[i] = a + 0 * b", 2}};
  static const int64_t sizes[] = {0, 1, 4095, 4097, 100003, 1000003};
  for (size_t u = 0; u < sizeof setups / sizeof *setups; u++)
    for (size_t p = 0; p < sizeof progs / sizeof *progs; p++)
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        one(ctx, progs[p].src, progs[p].nb, sizes[s], setups[u].pin, setups[u].shift,
            setups[u].tune, setups[u].label);
  jitc_context_free(ctx);
  same_chunks();
  return nfail ? 1 : 0;
}
