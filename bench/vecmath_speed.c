/*
** vecmath_speed.c -- the vector math libraries the cpu target can call,
** side by side: SLEEF's 1.0-ulp (u10) and 3.5-ulp (u35) functions and
** glibc's libmvec (_ZGVeN8v_exp, _ZGVeN16v_expf, ...), on 512-bit vectors
** and on 256-bit ones (Sleef_expd4_u10, _ZGVdN4v_exp, ...).  It is how the
** cpu target's choice of library per function (src/cpu/math.c, math_fns) was
** made; bench/README.md has the results.
**
** For every function and both float types it measures
**   - speed: 10M elements, all cores (OpenMP; -t N), median and fastest
**     of repeats, ms; inputs standard normal for exp, sin, cos and the
**     like (as the benchmark's), else uniform over a typical domain;
**   - accuracy: the largest error in ulp against a long double reference
**     over a few hundred thousand points: uniform and log-uniform samples
**     of the domain, and the edges (huge arguments of sin/cos/tan, near
**     overflow and underflow of exp, subnormals);
**   - special values: NaN, +-inf, +-0, subnormals, DBL_MAX, domain edges,
**     compared with the scalar C library (what the interp target computes):
**     both NaN, the same value (the sign of zero included), or both finite
**     and within 4 ulp.  A mismatch is counted and the first ones shown.
** The libraries are loaded with dlopen, as the cpu target loads them.
**
**   gcc -O2 -march=native -fopenmp -o vecmath_speed bench/vecmath_speed.c -ldl -lm
**   ./vecmath_speed [-n N] [-r REPEATS] [-a POINTS] [-t THREADS] [FUNCTION...]
*/
#include <dlfcn.h>
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __m512d (*Fd1)(__m512d);
typedef __m512d (*Fd2)(__m512d, __m512d);
typedef __m512 (*Ff1)(__m512);
typedef __m512 (*Ff2)(__m512, __m512);

typedef struct Fn {
  const char *name;  /* SLEEF and libmvec base name */
  int nargs;
  long double (*ref1)(long double);
  long double (*ref2)(long double, long double);
  double (*libm1)(double);
  float (*libm1f)(float);
  double (*libm2)(double, double);
  float (*libm2f)(float, float);
  double slo, shi;   /* speed data: uniform in [slo, shi]; both 0: standard normal */
  double ranges[4][2]; /* accuracy: sampled ranges (log-uniform when lo > 0) */
} Fn;

#define U(g) g##l, NULL, g, g##f, NULL, NULL
#define B(g) NULL, g##l, NULL, NULL, g, g##f
static const Fn fns[] = {
  {"exp", 1, U(exp), 0, 0, {{-745.2, 709.8}, {-30, 30}, {700, 709.78}, {-745.1, -708}}},
  {"exp2", 1, U(exp2), 0, 0, {{-1075, 1024}, {-30, 30}, {1000, 1023.9}, {-1074, -1020}}},
  {"expm1", 1, U(expm1), 0, 0, {{-40, 709.7}, {-1, 1}, {1e-300, 1e-5}, {-1e-5, 1e-5}}},
  {"log", 1, U(log), 1e-3, 1e3, {{1e-320, 1e308}, {0.5, 2}, {4.9e-324, 2.2e-308}, {1e300, 1.79e308}}},
  {"log2", 1, U(log2), 1e-3, 1e3, {{1e-320, 1e308}, {0.5, 2}, {4.9e-324, 2.2e-308}, {1e300, 1.79e308}}},
  {"log10", 1, U(log10), 1e-3, 1e3, {{1e-320, 1e308}, {0.5, 2}, {4.9e-324, 2.2e-308}, {1e300, 1.79e308}}},
  {"log1p", 1, U(log1p), -0.5, 10, {{-0.999999, 1}, {1e-300, 1e308}, {-1e-10, 1e-10}, {1e-10, 1e10}}},
  {"sin", 1, U(sin), 0, 0, {{-100, 100}, {1e-300, 1e22}, {-1e300, -1e4}, {-1e-3, 1e-3}}},
  {"cos", 1, U(cos), 0, 0, {{-100, 100}, {1e-300, 1e22}, {-1e300, -1e4}, {-1e-3, 1e-3}}},
  {"tan", 1, U(tan), 0, 0, {{-100, 100}, {1e-300, 1e22}, {-1e300, -1e4}, {-1e-3, 1e-3}}},
  {"asin", 1, U(asin), -1, 1, {{-1, 1}, {1e-300, 1}, {0.99, 1}, {-1e-3, 1e-3}}},
  {"acos", 1, U(acos), -1, 1, {{-1, 1}, {1e-300, 1}, {0.99, 1}, {-1, -0.99}}},
  {"atan", 1, U(atan), -10, 10, {{-1e4, 1e4}, {1e-300, 1e300}, {-1, 1}, {-1e-3, 1e-3}}},
  {"sinh", 1, U(sinh), -10, 10, {{-710.4, 710.4}, {-1, 1}, {1e-300, 1e-3}, {700, 710.4}}},
  {"cosh", 1, U(cosh), -10, 10, {{-710.4, 710.4}, {-1, 1}, {-710.4, -700}, {700, 710.4}}},
  {"tanh", 1, U(tanh), -10, 10, {{-20, 20}, {1e-300, 1e3}, {-1, 1}, {-1e-3, 1e-3}}},
  {"asinh", 1, U(asinh), -10, 10, {{-1e10, 1e10}, {1e-300, 1e300}, {-1, 1}, {-1e-3, 1e-3}}},
  {"acosh", 1, U(acosh), 1, 20, {{1, 1e10}, {1, 1e300}, {1, 1.01}, {1, 3}}},
  {"atanh", 1, U(atanh), -0.99, 0.99, {{-1, 1}, {1e-300, 1}, {0.99, 1}, {-1e-3, 1e-3}}},
  {"cbrt", 1, U(cbrt), -10, 10, {{-1e30, 1e30}, {1e-320, 1e300}, {-1, 1}, {-1e-300, -1e-320}}},
  {"atan2", 2, B(atan2), -10, 10, {{-1e4, 1e4}, {1e-300, 1e300}, {-1, 1}, {-1e-3, 1e-3}}},
  {"hypot", 2, B(hypot), -10, 10, {{-1e4, 1e4}, {1e-300, 1e300}, {-1, 1}, {1e-320, 1e-300}}},
  {"pow", 2, B(pow), 0, 10, {{0, 10}, {1e-3, 1e3}, {0.5, 2}, {1e-30, 1e30}}},
};

/* ---- random numbers (xorshift64*, reproducible) ---- */
static uint64_t rng = 88172645463325252ull;
static double unif(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) * 0x1p-53;
}
/* Standard normal (Box-Muller), as the benchmark's inputs. */
static double normal(void) {
  return sqrt(-2 * log(1 - unif())) * cos(6.283185307179586 * unif());
}
static double sample(double lo, double hi, int k) {
  if (lo > 0 && hi > 0 && k % 2) return exp(log(lo) + (log(hi) - log(lo)) * unif());
  return lo + (hi - lo) * unif();
}

/* ---- the implementations ---- */

typedef struct Impl {
  const char *label;
  int bits;        /* vector width: 512 or 256 */
  void *f64, *f32; /* NULL when the library lacks it */
} Impl;

static void *lib_sleef, *lib_mvec;

static void *sym(void *lib, const char *fmt, const char *name) {
  char s[64];
  if (!lib) return NULL;
  snprintf(s, sizeof s, fmt, name);
  return dlsym(lib, s);
}

/* Every implementation of f at both widths: SLEEF u10 (u05 for hypot), u35
** and libmvec; 256-bit vectors too, as on Zen 4 a 512-bit operation is two
** 256-bit ones and the narrower code can be as fast. */
static int impls_of(const Fn *f, Impl *out) {
  int n = 0;
  const char *nm = f->name;
  const char *v = f->nargs == 2 ? "vv" : "v";
  const char *hi = !strcmp(nm, "hypot") ? "u05" : "u10";
  for (int w = 0; w < 2; w++) {
    int bits = w ? 256 : 512, ld = w ? 4 : 8;
    char fd[64], ff[64];
    snprintf(fd, sizeof fd, "Sleef_%%sd%d_%s", ld, hi);
    snprintf(ff, sizeof ff, "Sleef_%%sf%d_%s", 2 * ld, hi);
    Impl u10 = {w ? "sleef u10 avx2" : "sleef u10", bits, sym(lib_sleef, fd, nm), sym(lib_sleef, ff, nm)};
    snprintf(fd, sizeof fd, "Sleef_%%sd%d_u35", ld);
    snprintf(ff, sizeof ff, "Sleef_%%sf%d_u35", 2 * ld);
    Impl u35 = {w ? "sleef u35 avx2" : "sleef u35", bits, sym(lib_sleef, fd, nm), sym(lib_sleef, ff, nm)};
    snprintf(fd, sizeof fd, "_ZGV%cN%d%s_%%s", w ? 'd' : 'e', ld, v);
    snprintf(ff, sizeof ff, "_ZGV%cN%d%s_%%sf", w ? 'd' : 'e', 2 * ld, v);
    Impl mv = {w ? "libmvec avx2" : "libmvec", bits, sym(lib_mvec, fd, nm), sym(lib_mvec, ff, nm)};
    if (u10.f64 || u10.f32) out[n++] = u10;
    if (u35.f64 || u35.f32) out[n++] = u35;
    if (mv.f64 || mv.f32) out[n++] = mv;
  }
  return n;
}

typedef __m256d (*Gd1)(__m256d);
typedef __m256d (*Gd2)(__m256d, __m256d);
typedef __m256 (*Gf1)(__m256);
typedef __m256 (*Gf2)(__m256, __m256);

/* Applies impl to n elements (n a multiple of 16) of x (and y) into r,
** 16 elements at a time as the cpu target does. */
static void apply(const Fn *f, const Impl *im, int f32, int64_t n, const void *x, const void *y,
                  void *r, int threads) {
  int64_t nb = n / 16;
  void *impl = f32 ? im->f32 : im->f64;
  int two = f->nargs == 2;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < nb; b++) {
    if (im->bits == 512 && f32) {
      const float *xs = (const float *)x + 16 * b, *ys = y ? (const float *)y + 16 * b : NULL;
      __m512 a = _mm512_loadu_ps(xs), v;
      v = two ? ((Ff2)impl)(a, _mm512_loadu_ps(ys)) : ((Ff1)impl)(a);
      _mm512_storeu_ps((float *)r + 16 * b, v);
    } else if (im->bits == 512) {
      for (int h = 0; h < 2; h++) {
        const double *xs = (const double *)x + 16 * b + 8 * h;
        const double *ys = y ? (const double *)y + 16 * b + 8 * h : NULL;
        __m512d a = _mm512_loadu_pd(xs), v;
        v = two ? ((Fd2)impl)(a, _mm512_loadu_pd(ys)) : ((Fd1)impl)(a);
        _mm512_storeu_pd((double *)r + 16 * b + 8 * h, v);
      }
    } else if (f32) {
      for (int h = 0; h < 2; h++) {
        const float *xs = (const float *)x + 16 * b + 8 * h;
        const float *ys = y ? (const float *)y + 16 * b + 8 * h : NULL;
        __m256 a = _mm256_loadu_ps(xs), v;
        v = two ? ((Gf2)impl)(a, _mm256_loadu_ps(ys)) : ((Gf1)impl)(a);
        _mm256_storeu_ps((float *)r + 16 * b + 8 * h, v);
      }
    } else {
      for (int h = 0; h < 4; h++) {
        const double *xs = (const double *)x + 16 * b + 4 * h;
        const double *ys = y ? (const double *)y + 16 * b + 4 * h : NULL;
        __m256d a = _mm256_loadu_pd(xs), v;
        v = two ? ((Gd2)impl)(a, _mm256_loadu_pd(ys)) : ((Gd1)impl)(a);
        _mm256_storeu_pd((double *)r + 16 * b + 4 * h, v);
      }
    }
  }
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Error of got against the exact r, in ulps of r's binade in the type. */
static double err_ulp(double got, long double r, int f32) {
  int mant = f32 ? 24 : 53;
  double rr = f32 ? (double)(float)r : (double)r;
  if (isnan(got) || isnan(rr)) return isnan(got) && isnan(rr) ? 0 : INFINITY;
  if (isinf(rr) || isinf(got)) return got == rr ? 0 : INFINITY;
  int ex;
  long double ar = fabsl(r);
  long double minn = f32 ? FLT_MIN : DBL_MIN;
  if (ar < minn) ar = minn; /* subnormal results: ulps of the smallest binade */
  frexpl(ar, &ex);
  return (double)(fabsl((long double)got - r) / ldexpl(1, ex - mant));
}

static int64_t ord(double x, int f32) {
  if (f32) {
    float fx = (float)x;
    int32_t b;
    memcpy(&b, &fx, 4);
    return b < 0 ? (int64_t)INT32_MIN - b : b;
  }
  int64_t b;
  memcpy(&b, &x, 8);
  return b < 0 ? INT64_MIN - b : b;
}

/* The same special-value result as the C library: both NaN, equal with the
** same sign, or both finite, non-zero, of one sign and within 4 ulp. */
static int same_special(double got, double want, int f32) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (got == want) return signbit(got) == signbit(want);
  if (isinf(got) || isinf(want) || got == 0 || want == 0) return 0;
  if (signbit(got) != signbit(want)) return 0;
  int64_t d = ord(got, f32) - ord(want, f32);
  return d >= -4 && d <= 4;
}

static const double specials[] = {
  NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 4.9406564584124654e-324, -4.9406564584124654e-324,
  2.2250738585072014e-308, -2.2250738585072014e-308, 1e-310, -1e-310, 1.401298464324817e-45,
  -1.401298464324817e-45, 1.1754943508222875e-38, 1e-40, DBL_MAX, -DBL_MAX, FLT_MAX, -FLT_MAX,
  1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 0x1.fffffffffffffp-1, -0x1.fffffffffffffp-1, 1e300,
  -1e300, 1e22, -1e22, 1e38, 88.72, 89.0, -87.4, -103.9, -104.0, 709.78, 710.0, -745.13, -746.0,
  1024.0, -1075.0, 128.0, -150.0, 3.14159265358979, 1.5707963267948966, 1e-20, -1e-20,
};
#define NSPEC (int)(sizeof specials / sizeof specials[0])

static void report(const Fn *f, int f32, int64_t n, int reps, int64_t na, int threads) {
  Impl impls[8];
  int ni = impls_of(f, impls);
  size_t es = f32 ? 4 : 8;
  /* Speed data. */
  void *x = aligned_alloc(64, (size_t)n * es), *y = aligned_alloc(64, (size_t)n * es);
  void *r = aligned_alloc(64, (size_t)n * es);
  for (int64_t k = 0; k < n; k++) {
    double v = f->slo + (f->shi - f->slo) * unif(), w = f->slo + (f->shi - f->slo) * unif();
    if (f->slo == 0 && f->shi == 0) v = normal(), w = normal();
    if (!strcmp(f->name, "pow")) w = -4 + 8 * unif();
    if (f32) ((float *)x)[k] = (float)v, ((float *)y)[k] = (float)w;
    else ((double *)x)[k] = v, ((double *)y)[k] = w;
  }
  memset(r, 0, (size_t)n * es);
  /* Accuracy points: na over the ranges, then the specials (and their
  ** pairs for two-argument functions). */
  int64_t nacc = (na + NSPEC * NSPEC + 15) / 16 * 16;
  double *ax = malloc((size_t)nacc * 8), *ay = malloc((size_t)nacc * 8);
  void *bx = malloc((size_t)nacc * es), *by = malloc((size_t)nacc * es), *br = malloc((size_t)nacc * es);
  int64_t nspec0 = na, k = 0;
  for (; k < na; k++) {
    const double *rg = f->ranges[k % 4];
    ax[k] = sample(rg[0], rg[1], (int)(k / 4));
    ay[k] = f->nargs == 2 ? sample(rg[0], rg[1], (int)(k / 4) + 1) : 0;
    if (!strcmp(f->name, "pow")) ay[k] = -20 + 40 * unif();
  }
  for (int i = 0; i < NSPEC; i++)
    for (int j = 0; j < (f->nargs == 2 ? NSPEC : 1); j++, k++) ax[k] = specials[i], ay[k] = specials[j];
  int64_t nend = k;
  for (; k < nacc; k++) ax[k] = ay[k] = 1.0;
  for (k = 0; k < nacc; k++) {
    if (f32) ((float *)bx)[k] = (float)ax[k], ((float *)by)[k] = (float)ay[k];
    else ((double *)bx)[k] = ax[k], ((double *)by)[k] = ay[k];
  }
  for (int i = 0; i < ni; i++) {
    void *impl = f32 ? impls[i].f32 : impls[i].f64;
    if (!impl) continue;
    double t[64];
    for (int rep = 0; rep < reps; rep++) {
      double t0 = omp_get_wtime();
      apply(f, &impls[i], f32, n, x, f->nargs == 2 ? y : NULL, r, threads);
      t[rep] = (omp_get_wtime() - t0) * 1e3;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmpd);
    apply(f, &impls[i], f32, nacc, bx, f->nargs == 2 ? by : NULL, br, threads);
    double worst = 0, wx = 0, wy = 0;
    int bad = 0;
    char ex[3][120] = {"", "", ""};
    for (k = 0; k < nend; k++) {
      double xv = f32 ? (double)((float *)bx)[k] : ax[k];
      double yv = f32 ? (double)((float *)by)[k] : ay[k];
      double got = f32 ? (double)((float *)br)[k] : ((double *)br)[k];
      if (k < nspec0) {
        long double rv = f->nargs == 2 ? f->ref2(xv, yv) : f->ref1(xv);
        double e = err_ulp(got, rv, f32);
        if (e > worst) worst = e, wx = xv, wy = yv;
      } else {
        double want = f32 ? (f->nargs == 2 ? f->libm2f((float)xv, (float)yv) : f->libm1f((float)xv))
                          : (f->nargs == 2 ? f->libm2(xv, yv) : f->libm1(xv));
        if (!same_special(got, want, f32)) {
          if (bad < 3)
            snprintf(ex[bad], sizeof ex[0], f->nargs == 2 ? "(%g,%g)->%g want %g" : "(%g)->%g want %g",
                     xv, f->nargs == 2 ? yv : got, f->nargs == 2 ? got : want, want);
          bad++;
        }
      }
    }
    char at[80];
    if (f->nargs == 2) snprintf(at, sizeof at, "%.17g, %.17g", wx, wy);
    else snprintf(at, sizeof at, "%.17g", wx);
    printf("| %s | %s | %s | %.2f | %.2f | %.3g at %s | %d %s %s %s |\n", f->name,
           f32 ? "f32" : "f64", impls[i].label, t[reps / 2], t[0], worst, at, bad, ex[0], ex[1],
           ex[2]);
    fflush(stdout);
  }
  free(x), free(y), free(r), free(ax), free(ay), free(bx), free(by), free(br);
}

int main(int argc, char **argv) {
  int64_t n = 10000000, na = 300000;
  int reps = 11, threads = omp_get_num_procs();
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first += 2) {
    if (first + 1 >= argc) break;
    if (!strcmp(argv[first], "-n")) n = atoll(argv[first + 1]);
    else if (!strcmp(argv[first], "-r")) reps = atoi(argv[first + 1]);
    else if (!strcmp(argv[first], "-a")) na = atoll(argv[first + 1]);
    else if (!strcmp(argv[first], "-t")) threads = atoi(argv[first + 1]);
  }
  n = n / 16 * 16;
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  lib_sleef = dlopen("libsleef.so.3", RTLD_NOW);
  lib_mvec = dlopen("libmvec.so.1", RTLD_NOW);
  printf("# %lld elements, %d threads, median (min) of %d runs; accuracy: %lld points + specials\n",
         (long long)n, threads, reps, (long long)na);
  printf("# sleef: %s, libmvec: %s\n", lib_sleef ? "yes" : "no", lib_mvec ? "yes" : "no");
  printf("| fn | type | impl | ms | min ms | max ulp (at) | special values unlike libm |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    int want = first >= argc;
    for (int a = first; a < argc; a++) want |= !strcmp(argv[a], fns[i].name);
    if (!want) continue;
    for (int f32 = 0; f32 < 2; f32++) report(&fns[i], f32, n, reps, na, threads);
  }
  return 0;
}
