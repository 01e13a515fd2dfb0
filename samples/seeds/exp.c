/*
** exp.c -- the seed `c = exp(a)` over 10 million float32 elements: PyCUDA's
** cumath.exp on the GPU against NumPy's np.exp on the CPU.  Here the same
** one-line program runs on the cpu target (vectorised, on every core) and
** on the cuda target, from host arrays and from device buffers, and the
** times come out side by side (seed.h does the measuring;
** samples/seeds/README.md shows the same with the jitc command).
**
**   cc -o exp samples/seeds/exp.c $(pkg-config --cflags --libs jitc) -lm
**   ./exp [ELEMENTS]
*/
#include "seed.h"

/* Uniform values in [-10, 10) from a fixed xorshift sequence: the same
** input on every machine, over most of exp's useful float32 range. */
static void fill(void *a, int64_t n) {
  uint64_t x = 88172645463325252u;
  for (int64_t e = 0; e < n; e++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    ((float *)a)[e] = (float)((double)(x >> 11) * 0x1p-53 * 20 - 10);
  }
}

/* exp in float64, rounded once to float32: within half an ulp of float32,
** nearly always the correctly rounded result. */
static void expect(const void *a, void *want, int64_t n) {
  for (int64_t e = 0; e < n; e++)
    ((float *)want)[e] = (float)exp((double)((const float *)a)[e]);
}

int main(int argc, char **argv) {
  /* c is a new array: the kernel's arrays are c (output) and a (input), in
  ** the order they appear in the program; seed.h finds each by name. */
  Seed s = {"c = exp(a)", "c", JITC_FLOAT32, fill, expect, 4,
            "C's exp in float64, rounded to float32"};
  return seed_main(&s, argc, argv);
}
