/*
** gpu_common.h -- what the GPU test programs (cuda_gpu.c, devptr_gpu.c)
** share: a deterministic random sequence and a program large enough to be
** split into several kernels.  Each program includes it once.
*/
#ifndef JITC_GPU_COMMON_H
#define JITC_GPU_COMMON_H

#include <stdint.h>
#include <stdio.h>

/* xorshift64: the same inputs on every run. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A program of many statements, above the size that makes one kernel per
** group of statements (cuda/plan.c). */
static const char *many_statements(void) {
  static char src[20000];
  if (!src[0]) {
    size_t n = 0;
    n += (size_t)snprintf(src + n, sizeof src - n, "let t0 = a * 1.5 + b\n");
    for (int k = 1; k < 150; k++)
      n += (size_t)snprintf(src + n, sizeof src - n, "let t%d = t%d * 0.75 + a - b * %d\n", k,
                            k - 1, k);
    snprintf(src + n, sizeof src - n, "c = t149 + t3; d = t75 - b");
  }
  return src;
}

#endif
