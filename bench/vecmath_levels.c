/*
** vecmath_levels.c -- the speed of the vector math libraries the cpu target
** can call on the x86-64 levels below AVX-512: for each function and float
** type, SLEEF's 1.0-ulp (u10; hypot u05) and 3.5-ulp (u35) variants of the
** level and glibc's libmvec variant of the level, side by side.  It is how
** the choices of x86-64, x86-64-v2 and x86-64-v3 in src/cpu/math.c (math_fns)
** were made; their accuracy and special values are checked by the tests
** at every level (tests/t_cpu.sh); vecmath_speed.c does the same on
** AVX-512 with accuracy.  One thread, best of 7 passes over 1M elements,
** ms; inputs standard normal, or uniform over the domain where it is
** bounded (log, arcsin, arccosh, ...).
**
**   gcc -O2 -mavx2 -mfma -o vecmath_levels bench/vecmath_levels.c -ldl -lm
**   ./vecmath_levels v3            # Sleef_expd4_u10avx2, _ZGVdN4v_exp, ...
**   ./vecmath_levels v2            # Sleef_expd2_u10sse4, _ZGVbN2v_exp, ...
**   ./vecmath_levels x86-64        # Sleef_expd2_u10sse2, _ZGVbN2v_exp, ...
** (v3 needs a host with AVX2 and FMA.)  The libraries are loaded with
** dlopen, as the cpu target loads them.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef double v4d __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef double v2d __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

#define N (1 << 20)
static double xd[N], yd[N];
static float xf[N], yf[N];
static void *sleef, *mvec;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One pass of f over the inputs, `bits` wide. */
#define PASS(VT, X, Y, STEP)                                                   \
  for (int i = 0; i < N; i += STEP) {                                          \
    VT a, b, c;                                                                \
    memcpy(&a, X + i, sizeof a);                                               \
    memcpy(&b, Y + i, sizeof b);                                               \
    c = two ? ((VT(*)(VT, VT))f)(a, b) : ((VT(*)(VT))f)(a);                    \
    memcpy(X + i, &c, sizeof c); /* in place: the inputs are restored below */ \
  }

/* Best time of 7 passes of `name`, ms; -1 if no library has it. */
static double best_ms(const char *name, int bits, int f32, int two) {
  void *f = dlsym(sleef, name);
  if (!f && mvec) f = dlsym(mvec, name);
  if (!f) return -1;
  static double sd[N];
  static float sf[N];
  memcpy(sd, xd, sizeof sd);
  memcpy(sf, xf, sizeof sf);
  double best = 1e30;
  for (int r = 0; r < 7; r++) {
    double t0 = now_ms();
    if (bits == 256 && f32) { PASS(v8f, xf, yf, 8) }
    else if (bits == 256) { PASS(v4d, xd, yd, 4) }
    else if (f32) { PASS(v4f, xf, yf, 4) }
    else { PASS(v2d, xd, yd, 2) }
    double t = now_ms() - t0;
    if (t < best) best = t;
    memcpy(xd, sd, sizeof sd);
    memcpy(xf, sf, sizeof sf);
  }
  return best;
}

static const char *const fns[] = {"cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
                                  "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
                                  "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                                  "atan2", "hypot", "pow"};

/* Inputs for fn: standard normal, or uniform where the domain is bounded. */
static void inputs(const char *fn) {
  srand(1);
  for (int i = 0; i < N; i++) {
    double u = (rand() + 1.0) / ((double)RAND_MAX + 2), v = (rand() + 1.0) / ((double)RAND_MAX + 2);
    double g = sqrt(-2 * log(u)) * cos(6.283185307179586 * v), x = g;
    if (!strcmp(fn, "acosh")) x = 1 + 10 * u;
    else if (!strncmp(fn, "log", 3) && strcmp(fn, "log1p")) x = 1e-3 + 10 * u;
    else if (!strcmp(fn, "log1p") || !strcmp(fn, "pow")) x = 10 * u;
    else if (!strcmp(fn, "asin") || !strcmp(fn, "acos") || !strcmp(fn, "atanh")) x = 1.98 * u - 0.99;
    xd[i] = x;
    xf[i] = (float)x;
    yd[i] = 0.5 + v;
    yf[i] = (float)yd[i];
  }
}

int main(int argc, char **argv) {
  const char *level = argc > 1 ? argv[1] : "v3";
  int bits = !strcmp(level, "v3") ? 256 : 128;
  const char *isa = bits == 256 ? "avx2" : !strcmp(level, "v2") ? "sse4" : "sse2";
  char letter = bits == 256 ? 'd' : 'b';
  sleef = dlopen("libsleef.so.3", RTLD_NOW);
  mvec = dlopen("libmvec.so.1", RTLD_NOW);
  if (!sleef) {
    fprintf(stderr, "vecmath_levels: libsleef.so.3 not found\n");
    return 1;
  }
  printf("# %s: %d-bit, SLEEF %s, libmvec '%c'; ms per 1M elements, best of 7, one thread\n",
         level, bits, isa, letter);
  printf("| function | f32 u10 | f32 u35 | f32 libmvec | f64 u10 | f64 u35 | f64 libmvec |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
    const char *fn = fns[k];
    int two = !strcmp(fn, "atan2") || !strcmp(fn, "hypot") || !strcmp(fn, "pow");
    inputs(fn);
    printf("| %s", fn);
    for (int f32 = 1; f32 >= 0; f32--) {
      int lanes = bits / (f32 ? 32 : 64);
      char n[3][80];
      snprintf(n[0], 80, "Sleef_%s%c%d_%s%s", fn, f32 ? 'f' : 'd', lanes,
               strcmp(fn, "hypot") ? "u10" : "u05", isa);
      snprintf(n[1], 80, "Sleef_%s%c%d_u35%s", fn, f32 ? 'f' : 'd', lanes, isa);
      snprintf(n[2], 80, "_ZGV%cN%d%s_%s%s", letter, lanes, two ? "vv" : "v", fn, f32 ? "f" : "");
      for (int j = 0; j < 3; j++) {
        double t = best_ms(n[j], bits, f32, two);
        if (t < 0) printf(" | -");
        else printf(" | %.2f", t);
      }
    }
    printf(" |\n");
  }
  return 0;
}
