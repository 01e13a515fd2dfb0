/*
** inc.c -- the seed `a[i] += 1` over 10 million float64 elements: numba's
** first example of a CUDA kernel, timed on the CPU against the GPU.  Here
** the same one-line program runs on the cpu target and on the cuda target,
** from host arrays and from device buffers, and the times come out side by
** side (seed.h does the measuring; samples/seeds/README.md shows the same
** with the jitc command).
**
**   cc -o inc samples/seeds/inc.c $(pkg-config --cflags --libs jitc)
**   ./inc [ELEMENTS]
*/
#include "seed.h"

/* a = 0, 1, 2, ...: every element distinct, all exact in float64. */
static void fill(void *a, int64_t n) {
  for (int64_t e = 0; e < n; e++)
    ((double *)a)[e] = (double)e;
}

static void expect(const void *a, void *want, int64_t n) {
  for (int64_t e = 0; e < n; e++)
    ((double *)want)[e] = ((const double *)a)[e] + 1;
}

int main(int argc, char **argv) {
  /* One update in place: the kernel reads a and writes it back. */
  Seed s = {"a[i] += 1", "a", JITC_FLOAT64, fill, expect, 0, "a + 1 computed in C"};
  return seed_main(&s, argc, argv);
}
