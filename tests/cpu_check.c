/*
** cpu_check.c -- checks of the cpu target through the public API, run by
** tests/t_cpu.sh.  Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why".
**
**   cpu_check diff        every operator and function on every dtype, on
**                         random data and edge values, cpu against interp
**                         (bit for bit, except math functions: 4 ulp)
**   cpu_check sizes       sizes 0, 1, 7, 64, 1000003 and thread counts
**   cpu_check accuracy    math functions against a higher-precision
**                         reference: at most 4 ulp (prints the table);
**                         special values (NaN, inf, -0.0, subnormals) as
**                         interp gives them, the sign of zero included
**   cpu_check cache DIR   memory and disk cache, corrupt entries, bad dir
**   cpu_check emit        --emit llvm, llvm-opt, asm: the registers and
**                         vector math of each x86-64 level, no scalar expf
**   cpu_check levels      prints the x86-64 levels this host runs, one a line
**   cpu_check machine     the CPU option: unknown names, levels the host
**                         cannot run (emit only), the cache key
**   cpu_check nansign     the sign of NaN through copysign, -, abs, where
**
** $JITC_CPU (read by the library) chooses the CPU compiled for.
*/
#include "jitc.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define FAIL(name, ...)                                                        \
  do {                                                                         \
    printf("FAIL %s: ", name);                                                 \
    printf(__VA_ARGS__);                                                       \
    printf("\n");                                                              \
    failures++;                                                                \
  } while (0)

/* ---- data ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unif(void) { return (double)(next64() >> 11) / 9007199254740992.0; }

static const double fedge[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0,
                               INFINITY, -INFINITY, NAN, -NAN, 1e30, -1e30, 1e-40, -1e-40,
                               1e300, -1e300, 5e-324, 710.0, -746.0, 89.0, -104.0, 1e-8,
                               0.9999999, 1.0000001, 3.1415926535897931, 1e20, 2147483648.0,
                               -2147483649.0, 9.3e18, -9.3e18, 4.5, 127.0, 64.0};
static const int64_t iedge[] = {0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 33, 63, 64, 65, 100, -100,
                                INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1, INT64_MAX,
                                INT64_MIN, INT64_MIN + 1, 1000000007, -123456789};

/* Fills n elements: edge values first (in a rotation given by `rot`), then
** random values of several scales. */
static void fill(void *p, jitc_dtype t, int64_t n, int rot) {
  int nf = sizeof fedge / sizeof fedge[0], ni = sizeof iedge / sizeof iedge[0];
  for (int64_t k = 0; k < n; k++) {
    double f;
    int64_t i;
    int r = (int)(next64() % 4);
    if (k < 3 * nf) f = fedge[(k + rot) % nf];
    else if (r == 0) f = (unif() - 0.5) * 8;
    else if (r == 1) f = (unif() - 0.5) * 200;
    else if (r == 2) f = unif() * 1.2 - 0.1;
    else f = ldexp(unif() - 0.5, (int)(next64() % 120) - 60);
    if (k < 3 * ni) i = iedge[(k + rot) % ni];
    else if (r == 0) i = (int64_t)(next64() % 21) - 10;
    else if (r == 1) i = (int64_t)(next64() % 130) - 65;
    else i = (int64_t)next64();
    switch (t) {
    case JITC_BOOL: ((uint8_t *)p)[k] = (uint8_t)(next64() & 1); break;
    case JITC_INT32: ((int32_t *)p)[k] = (int32_t)(uint32_t)(uint64_t)i; break;
    case JITC_INT64: ((int64_t *)p)[k] = i; break;
    case JITC_FLOAT32: ((float *)p)[k] = (float)f; break;
    case JITC_FLOAT64: ((double *)p)[k] = f; break;
    default: break;
    }
  }
}

/* Distance in units in the last place between two floats of one type. */
static int64_t ord64(double x) {
  int64_t b;
  memcpy(&b, &x, 8);
  return b < 0 ? INT64_MIN - b : b;
}
static int64_t ord32(float x) {
  int32_t b;
  memcpy(&b, &x, 4);
  return b < 0 ? (int64_t)INT32_MIN - b : b;
}
static double ulps(double x, double y, jitc_dtype t) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y) ? 0 : INFINITY;
  if (x == y) return 0;
  if (isinf(x) || isinf(y)) return INFINITY;
  if (t == JITC_FLOAT32) return fabs((double)(ord32((float)x) - ord32((float)y)));
  int64_t p = ord64(x), q = ord64(y);
  /* Both finite and of one sign class here: the difference fits. */
  return p > q ? (double)(uint64_t)(p - q) : (double)(uint64_t)(q - p);
}

static double get_f(const void *p, jitc_dtype t, int64_t k) {
  switch (t) {
  case JITC_BOOL: return ((const uint8_t *)p)[k];
  case JITC_INT32: return ((const int32_t *)p)[k];
  case JITC_INT64: return (double)((const int64_t *)p)[k];
  case JITC_FLOAT32: return ((const float *)p)[k];
  default: return ((const double *)p)[k];
  }
}

/* ---- one program on both targets ---- */

typedef struct Case {
  const char *src;
  int ulp; /* 0: bit for bit (NaNs of any payload compare equal) */
} Case;

/* Compiles src for `target` with arrays a, b, c of the given dtypes and
** scalars s (float64, weak) and k (int64, weak); runs it over n elements
** of copies of `in`.  Returns the kernel's outputs in out[] (malloc'ed). */
typedef struct Result {
  int narrays;
  char names[8][16];
  jitc_dtype dtypes[8];
  void *data[8];
} Result;

static void result_free(Result *r) {
  for (int j = 0; j < r->narrays; j++) free(r->data[j]);
  memset(r, 0, sizeof *r);
}

static int run_on(jitc_context *ctx, jitc_target target, int threads, const char *src,
                  const jitc_dtype *dt, void *const *in, int64_t n, Result *res,
                  const char *cache_dir, const char **cache) {
  /* c is not declared: its dtype is the program's. */
  jitc_array_decl ad[2] = {{"a", dt[0]}, {"b", dt[1]}};
  jitc_scalar_decl sd[2] = {{"s", JITC_FLOAT64, 1}, {"k", JITC_INT64, 1}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = target;
  o.threads = threads;
  o.no_cache = cache_dir == NULL;
  o.cache_dir = cache_dir;
  jitc_kernel *k;
  jitc_status s = jitc_compile(ctx, src, ad, 2, sd, 2, &o, &k);
  if (s) return s;
  if (cache) *cache = jitc_kernel_compile_info(k)->cache;
  memset(res, 0, sizeof *res);
  int na = jitc_kernel_array_count(k);
  void *ptrs[8];
  for (int j = 0; j < na && j < 8; j++) {
    const char *name;
    jitc_role role;
    jitc_dtype t;
    jitc_kernel_array(k, j, &name, &role, &t);
    size_t sz = jitc_dtype_size(t);
    void *p = aligned_alloc(64, ((size_t)n * sz + 64) / 64 * 64);
    int src_idx = name[0] - 'a';
    if (role != JITC_OUTPUT && src_idx >= 0 && src_idx < 3 && name[1] == '\0')
      memcpy(p, in[src_idx], (size_t)n * sz);
    else
      memset(p, 0xA5, (size_t)n * sz); /* outputs: garbage that must be overwritten */
    snprintf(res->names[j], sizeof res->names[j], "%s", name);
    res->dtypes[j] = t;
    res->data[j] = p;
    ptrs[j] = p;
  }
  res->narrays = na;
  jitc_value sv[2];
  int nsc = jitc_kernel_scalar_count(k);
  for (int j = 0; j < nsc; j++) {
    const char *name;
    jitc_kernel_scalar(k, j, &name, NULL);
    if (name[0] == 's') {
      sv[j].dtype = JITC_FLOAT64;
      sv[j].u.f = 2.5;
    } else {
      sv[j].dtype = JITC_INT64;
      sv[j].u.i = 3;
    }
  }
  s = jitc_run(ctx, k, n, ptrs, sv, NULL);
  jitc_kernel_free(k);
  if (s) result_free(res);
  return s;
}

/* Compares the outputs of two runs; returns a message or NULL. */
static const char *compare(const Result *x, const Result *y, int64_t n, int ulp, char *msg,
                           size_t len, const Result *inputs) {
  if (x->narrays != y->narrays) return "different array counts";
  for (int j = 0; j < x->narrays; j++) {
    jitc_dtype t = x->dtypes[j];
    size_t sz = jitc_dtype_size(t);
    for (int64_t k = 0; k < n; k++) {
      const char *p = (const char *)x->data[j] + k * sz, *q = (const char *)y->data[j] + k * sz;
      if (memcmp(p, q, sz) == 0) continue;
      double a = get_f(x->data[j], t, k), b = get_f(y->data[j], t, k);
      if ((t == JITC_FLOAT32 || t == JITC_FLOAT64) && isnan(a) && isnan(b)) continue;
      if (ulp && (t == JITC_FLOAT32 || t == JITC_FLOAT64) && ulps(a, b, t) <= ulp) continue;
      char ins[200] = "";
      if (inputs)
        snprintf(ins, sizeof ins, " (a=%.17g b=%.17g)", get_f(inputs->data[0], inputs->dtypes[0], k),
                 get_f(inputs->data[1], inputs->dtypes[1], k));
      snprintf(msg, len, "%s[%lld]: interp %.17g, cpu %.17g%s", x->names[j], (long long)k, a, b, ins);
      return msg;
    }
  }
  return NULL;
}

static const Case cases[] = {
  {"c = a + b", 0}, {"c = a - b", 0}, {"c = a * b", 0}, {"c = a / b", 0},
  {"c = a // b", 0}, {"c = a % b", 0}, {"c = a ** b", 4}, {"c = a & b", 0},
  {"c = a | b", 0}, {"c = a ^ b", 0}, {"c = a << b", 0}, {"c = a >> b", 0},
  {"c = a < b", 0}, {"c = a <= b", 0}, {"c = a > b", 0}, {"c = a >= b", 0},
  {"c = a == b", 0}, {"c = a != b", 0}, {"c = -a", 0}, {"c = ~a", 0},
  {"c = abs(a)", 0}, {"c = sqrt(a)", 0}, {"c = cbrt(a)", 4}, {"c = square(a)", 0},
  {"c = reciprocal(a)", 0}, {"c = exp(a)", 4}, {"c = exp2(a)", 4}, {"c = expm1(a)", 4},
  {"c = log(a)", 4}, {"c = log2(a)", 4}, {"c = log10(a)", 4}, {"c = log1p(a)", 4},
  {"c = sin(a)", 4}, {"c = cos(a)", 4}, {"c = tan(a)", 4}, {"c = arcsin(a)", 4},
  {"c = arccos(a)", 4}, {"c = arctan(a)", 4}, {"c = sinh(a)", 4}, {"c = cosh(a)", 4},
  {"c = tanh(a)", 4}, {"c = arcsinh(a)", 4}, {"c = arccosh(a)", 4}, {"c = arctanh(a)", 4},
  {"c = floor(a)", 0}, {"c = ceil(a)", 0}, {"c = trunc(a)", 0}, {"c = rint(a)", 0},
  {"c = sign(a)", 0}, {"c = arctan2(a, b)", 4}, {"c = hypot(a, b)", 4}, {"c = fmod(a, b)", 0},
  {"c = copysign(a, b)", 0}, {"c = minimum(a, b)", 0}, {"c = maximum(a, b)", 0},
  {"c = fmin(a, b)", 0}, {"c = fmax(a, b)", 0}, {"c = clip(a, b, a * 2)", 0},
  {"c = fma(a, b, a)", 0}, {"c = where(a > b, a, b)", 0}, {"c = where(a, b, 7)", 0},
  {"c = isnan(a)", 0}, {"c = isinf(a)", 0}, {"c = isfinite(a)", 0},
  {"c = float32(a)", 0}, {"c = float64(a)", 0}, {"c = int32(a)", 0}, {"c = int64(a)", 0},
  {"c = bool(a)", 0}, {"c = a + s", 0}, {"c = a * k", 0}, {"c = a + i", 0},
  {"a[i] += 1", 0}, {"a += b; c = a * 2", 0}, {"let t = a * b; c = t + t; b = t - a", 0},
  {"c = 2*a*a + 3*a + 1", 0}, {"c = sin(a)**2 + cos(a)**2", 8}, {"b = s * a + b", 0},
  {"c = a ** 2", 4}, {"c = a ** 3", 4}, {"c = a ** k", 4}, {"c = (a > 0) & (b < 0)", 0},
  {"c = a // 0", 0}, {"c = a % -1", 0}, {"c = a >> 100", 0}, {"c = a << -1", 0},
};

static void check_diff(void) {
  const jitc_dtype all[] = {JITC_BOOL, JITC_INT32, JITC_INT64, JITC_FLOAT32, JITC_FLOAT64};
  int64_t n = 517; /* a vector tail, edge values in several rotations */
  jitc_context *ctx = jitc_context_new();
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    int ran = 0, bad = 0;
    char msg[512], why[640] = "";
    for (int ta = 0; ta < 5; ta++)
      for (int tb = 0; tb < 5; tb++) {
        /* Mixed types: all pairs for binary programs is 25 compiles per
        ** case; keep it to same types plus a few mixes. */
        if (ta != tb && !((ta == 3 && tb == 4) || (ta == 1 && tb == 3) || (ta == 2 && tb == 1) ||
                          (ta == 0 && tb == 4) || (ta == 4 && tb == 2)))
          continue;
        jitc_dtype dt[3] = {all[ta], all[tb], all[ta]};
        void *in[3];
        Result rin = {0};
        for (int j = 0; j < 3; j++) {
          in[j] = malloc((size_t)n * 8);
          fill(in[j], dt[j], n, j * 5 + ta);
        }
        rin.narrays = 2;
        rin.dtypes[0] = dt[0];
        rin.dtypes[1] = dt[1];
        rin.data[0] = in[0];
        rin.data[1] = in[1];
        Result x, y;
        if (run_on(ctx, JITC_TARGET_INTERP, 1, cases[ci].src, dt, in, n, &x, NULL, NULL) == 0) {
          int s = run_on(ctx, JITC_TARGET_CPU, 0, cases[ci].src, dt, in, n, &y, NULL, NULL);
          ran++;
          if (s) {
            bad++;
            snprintf(why, sizeof why, "%s %s: cpu failed: %s", jitc_dtype_name(dt[0]),
                     jitc_dtype_name(dt[1]), jitc_errmsg(ctx));
          } else {
            const char *m = compare(&x, &y, n, cases[ci].ulp, msg, sizeof msg, &rin);
            if (m && !bad) snprintf(why, sizeof why, "%s %s: %s", jitc_dtype_name(dt[0]),
                                    jitc_dtype_name(dt[1]), m);
            if (m) bad++;
            result_free(&y);
          }
          result_free(&x);
        }
        for (int j = 0; j < 3; j++) free(in[j]);
      }
    char name[128];
    snprintf(name, sizeof name, "diff '%s'", cases[ci].src);
    if (!ran) printf("skip %s: no dtype compiles\n", name);
    else if (bad) FAIL(name, "%s", why);
    else printf("ok %s (%d dtype combinations)\n", name, ran);
  }
  jitc_context_free(ctx);
}

/* Tails and thread splits: the same output for every size and thread count. */
static void check_sizes(void) {
  static const int64_t sizes[] = {0, 1, 7, 15, 16, 17, 64, 65, 1000003};
  static const char *srcs[] = {"c = a * 2 + b", "a[i] += 1", "c = exp(a) * 3", "c = a // b"};
  jitc_context *ctx = jitc_context_new();
  for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++)
    for (int ti = 0; ti < 2; ti++) {
      jitc_dtype t = ti ? JITC_FLOAT64 : JITC_INT32;
      if (strstr(srcs[si], "exp") && t == JITC_INT32) t = JITC_FLOAT32;
      jitc_dtype dt[3] = {t, t, t};
      int bad = 0;
      char why[700] = "";
      for (size_t zi = 0; zi < sizeof sizes / sizeof sizes[0]; zi++) {
        int64_t n = sizes[zi];
        void *in[3];
        for (int j = 0; j < 3; j++) {
          in[j] = malloc((size_t)n * 8 + 8);
          fill(in[j], t, n, j);
        }
        Result x, y;
        if (run_on(ctx, JITC_TARGET_INTERP, 1, srcs[si], dt, in, n, &x, NULL, NULL)) {
          bad++;
          snprintf(why, sizeof why, "interp: %s", jitc_errmsg(ctx));
        } else {
          for (int th = 1; th <= 3 && !bad; th++) {
            if (run_on(ctx, JITC_TARGET_CPU, th, srcs[si], dt, in, n, &y, NULL, NULL)) {
              bad++;
              snprintf(why, sizeof why, "cpu: %s", jitc_errmsg(ctx));
              break;
            }
            char msg[400];
            const char *m = compare(&x, &y, n, strstr(srcs[si], "exp") ? 4 : 0, msg, sizeof msg, NULL);
            if (m) {
              bad++;
              snprintf(why, sizeof why, "n=%lld threads=%d: %s", (long long)n, th, m);
            }
            result_free(&y);
          }
          result_free(&x);
        }
        for (int j = 0; j < 3; j++) free(in[j]);
      }
      char name[128];
      snprintf(name, sizeof name, "sizes '%s' %s", srcs[si], jitc_dtype_name(t));
      if (bad) FAIL(name, "%s", why);
      else printf("ok %s\n", name);
    }
  jitc_context_free(ctx);
}

/* ---- accuracy against a higher-precision reference ---- */

typedef struct Fn {
  const char *name;
  long double (*ref)(long double);
  double lo, hi; /* sampled range */
} Fn;

static long double r_exp(long double x) { return expl(x); }
static long double r_exp2(long double x) { return exp2l(x); }
static long double r_expm1(long double x) { return expm1l(x); }
static long double r_log(long double x) { return logl(x); }
static long double r_log2(long double x) { return log2l(x); }
static long double r_log10(long double x) { return log10l(x); }
static long double r_log1p(long double x) { return log1pl(x); }
static long double r_sin(long double x) { return sinl(x); }
static long double r_cos(long double x) { return cosl(x); }
static long double r_tan(long double x) { return tanl(x); }
static long double r_asin(long double x) { return asinl(x); }
static long double r_acos(long double x) { return acosl(x); }
static long double r_atan(long double x) { return atanl(x); }
static long double r_sinh(long double x) { return sinhl(x); }
static long double r_cosh(long double x) { return coshl(x); }
static long double r_tanh(long double x) { return tanhl(x); }
static long double r_asinh(long double x) { return asinhl(x); }
static long double r_acosh(long double x) { return acoshl(x); }
static long double r_atanh(long double x) { return atanhl(x); }
static long double r_cbrt(long double x) { return cbrtl(x); }

static const Fn fns[] = {
  {"exp", r_exp, -80, 80}, {"exp2", r_exp2, -120, 120}, {"expm1", r_expm1, -10, 10},
  {"log", r_log, 1e-30, 1e30}, {"log2", r_log2, 1e-30, 1e30}, {"log10", r_log10, 1e-30, 1e30},
  {"log1p", r_log1p, -0.99, 1e10}, {"sin", r_sin, -100, 100}, {"cos", r_cos, -100, 100},
  {"tan", r_tan, -100, 100}, {"arcsin", r_asin, -1, 1}, {"arccos", r_acos, -1, 1},
  {"arctan", r_atan, -1e4, 1e4}, {"sinh", r_sinh, -80, 80}, {"cosh", r_cosh, -80, 80},
  {"tanh", r_tanh, -20, 20}, {"arcsinh", r_asinh, -1e10, 1e10}, {"arccosh", r_acosh, 1, 1e10},
  {"arctanh", r_atanh, -1, 1}, {"cbrt", r_cbrt, -1e30, 1e30},
  /* Where SLEEF's own range ends and the identities take over. */
  {"sinh", r_sinh, 85, 89.4}, {"cosh", r_cosh, -89.4, -85}, {"sinh", r_sinh, -710.4, -700},
  {"cosh", r_cosh, 700, 710.4}, {"arcsinh", r_asinh, 1e17, 1e38}, {"arccosh", r_acosh, 1e17, 1e38},
  {"arcsinh", r_asinh, -1e300, -1e140}, {"arccosh", r_acosh, 1e140, 1e300},
  {"log1p", r_log1p, 1e25, 3e38}, {"log1p", r_log1p, 1e290, 1e308},
  /* Edges: huge arguments of the trigonometric functions (float32 inputs
  ** round to multiples of large powers of two: the whole reduction is
  ** tested), results near overflow and in the subnormals, tiny inputs. */
  {"sin", r_sin, 1e4, 1e22}, {"cos", r_cos, 1e4, 1e22}, {"tan", r_tan, 1e4, 1e22},
  {"sin", r_sin, -1e300, -1e22}, {"cos", r_cos, 1e22, 1e300}, {"tan", r_tan, 1e22, 1e300},
  {"sin", r_sin, 1e-300, 1e-4}, {"tan", r_tan, -1e-4, -1e-300},
  {"exp", r_exp, 700, 709.78}, {"exp", r_exp, -745.1, -708}, {"exp", r_exp, 80, 88.72},
  {"exp", r_exp, -103.9, -87.3}, {"exp2", r_exp2, 1000, 1023.99}, {"exp2", r_exp2, -1074, -1022},
  {"exp2", r_exp2, -149, -126}, {"expm1", r_expm1, 1e-300, 1e-5}, {"expm1", r_expm1, 700, 709.78},
  {"log", r_log, 5e-324, 2.2e-308}, {"log2", r_log2, 5e-324, 2.2e-308},
  {"log10", r_log10, 1.4e-45, 1.2e-38}, {"log", r_log, 0.9, 1.1}, {"log1p", r_log1p, 1e-300, 1e-5},
  {"arctan", r_atan, 1e10, 1e300}, {"arcsin", r_asin, 1e-300, 1e-5}, {"arctanh", r_atanh, 0.999, 1},
  {"tanh", r_tanh, 1e-300, 1e-5}, {"cbrt", r_cbrt, 5e-324, 1e-300}, {"cbrt", r_cbrt, 1e300, 1.7e308},
  {"arccosh", r_acosh, 1, 1.001},
};

static void check_accuracy(void) {
  jitc_context *ctx = jitc_context_new();
  const int64_t n = 200000;
  printf("# max error in ulp (float32, float64), %lld points per function\n", (long long)n);
  for (size_t fi = 0; fi < sizeof fns / sizeof fns[0]; fi++) {
    double worst[2] = {0, 0};
    for (int ti = 0; ti < 2; ti++) {
      jitc_dtype t = ti ? JITC_FLOAT64 : JITC_FLOAT32;
      jitc_dtype dt[3] = {t, t, t};
      double *xs = malloc((size_t)n * sizeof *xs);
      void *in[3] = {malloc((size_t)n * 8), NULL, NULL};
      in[1] = in[0];
      in[2] = in[0];
      const Fn *f = &fns[fi];
      for (int64_t k = 0; k < n; k++) {
        double x;
        /* Half uniform, half log-uniform in magnitude, within [lo, hi]. */
        if (k % 2 == 0 || f->lo <= 0 || f->hi <= 0) x = f->lo + (f->hi - f->lo) * unif();
        else x = exp(log(f->lo) + (log(f->hi) - log(f->lo)) * unif());
        if (t == JITC_FLOAT32) {
          ((float *)in[0])[k] = (float)x;
          xs[k] = (float)x;
        } else {
          ((double *)in[0])[k] = x;
          xs[k] = x;
        }
      }
      char src[64];
      snprintf(src, sizeof src, "c = %s(a)", f->name);
      Result y;
      if (run_on(ctx, JITC_TARGET_CPU, 0, src, dt, in, n, &y, NULL, NULL)) {
        FAIL("accuracy", "%s: %s", src, jitc_errmsg(ctx));
        continue;
      }
      for (int64_t k = 0; k < n; k++) {
        long double r = f->ref(xs[k]);
        double got = get_f(y.data[y.narrays - 1], t, k);
        double e;
        if (t == JITC_FLOAT32) {
          float rr = (float)r;
          if (isinf(rr) || isnan((float)got)) e = ulps(got, rr, t);
          else {
            /* Error against the exact value, in ulps of the result's binade;
            ** below the normal range, in ulps of the subnormals. */
            int ex;
            frexpf(fabsf(rr) < FLT_MIN ? FLT_MIN : rr, &ex);
            e = fabsl((long double)got - r) / ldexpl(1, ex - 24);
          }
        } else {
          double rr = (double)r;
          if (isinf(rr) || isnan(got)) e = ulps(got, rr, t);
          else {
            int ex;
            frexp(fabs(rr) < DBL_MIN ? DBL_MIN : rr, &ex);
            e = (double)(fabsl((long double)got - r) / ldexpl(1, ex - 53));
          }
        }
        if (e > worst[ti]) worst[ti] = e;
      }
      result_free(&y);
      free(xs);
      free(in[0]);
    }
    char name[64];
    snprintf(name, sizeof name, "accuracy %s", fns[fi].name);
    if (worst[0] > 4 || worst[1] > 4)
      FAIL(name, "max error %.2f ulp (float32), %.2f ulp (float64); limit 4", worst[0], worst[1]);
    else
      printf("ok %s: %.2f ulp float32, %.2f ulp float64\n", name, worst[0], worst[1]);
  }
  jitc_context_free(ctx);
}

/* ---- special values ---- */

/* The special results of every math function on cpu are interp's: NaN where
** it gives NaN, the same infinities and the same signed zeros (the
** accuracy groups' ulp distances take 0.0 and -0.0 for equal), and finite
** values within 4 ulp.  Inputs: every pair of the values below for the
** two-argument functions. */
static const double specials[] = {
  NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310,
  2.2250738585072014e-308, 1.4e-45, -1.4e-45, 1e-40, 1.1754943508222875e-38, 1.7976931348623157e308,
  -1.7976931348623157e308, 3.4028234663852886e38, 1e300, -1e300, 1e22, -1e22, 1.0, -1.0, 0.5,
  -0.5, 2.0, 3.0, -3.0, 0.9999999999999999, 1.0000000000000002, 88.72, 89.5, -103.97, -150.0,
  709.78, 710.5, -745.2, -746.0, 1024.0, -1075.0, 1.5707963267948966, 3.141592653589793,
  /* Just below overflow: exp of the largest arguments with a finite
  ** result, bases whose cube is next to the largest finite value. */
  709.7827128933826, 88.72283, 127.99999, 1023.9999999999999, 5.6438030941222e102,
  -5.6438030941222e102, 6.98146e12, 1.3407807929942596e154,
};

static void check_specials(void) {
  static const char *const fns1[] = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                                     "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
                                     "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt",
                                     "sqrt"};
  static const char *const fns2[] = {"arctan2", "hypot", "power"};
  const int ns = (int)(sizeof specials / sizeof specials[0]);
  const int64_t n = (int64_t)ns * ns;
  jitc_context *ctx = jitc_context_new();
  for (int fi = 0; fi < 24; fi++) {
    int two = fi >= 21;
    const char *fn = two ? fns2[fi - 21] : fns1[fi];
    char src[64], why[300] = "";
    snprintf(src, sizeof src, two ? "c = %s(a, b)" : "c = %s(a)", fn);
    int bad = 0;
    for (int ti = 0; ti < 2; ti++) {
      jitc_dtype t = ti ? JITC_FLOAT64 : JITC_FLOAT32;
      jitc_dtype dt[3] = {t, t, t};
      void *in[3] = {malloc((size_t)n * 8), malloc((size_t)n * 8), NULL};
      in[2] = in[0];
      for (int64_t k = 0; k < n; k++) {
        double x = specials[k / ns], y = specials[k % ns];
        if (ti) ((double *)in[0])[k] = x, ((double *)in[1])[k] = y;
        else ((float *)in[0])[k] = (float)x, ((float *)in[1])[k] = (float)y;
      }
      Result x, y;
      if (run_on(ctx, JITC_TARGET_INTERP, 1, src, dt, in, n, &x, NULL, NULL) ||
          run_on(ctx, JITC_TARGET_CPU, 0, src, dt, in, n, &y, NULL, NULL)) {
        bad++;
        snprintf(why, sizeof why, "%s: %s", src, jitc_errmsg(ctx));
      } else {
        void *px = x.data[x.narrays - 1], *py = y.data[y.narrays - 1];
        for (int64_t k = 0; k < n; k++) {
          double u = get_f(px, t, k), v = get_f(py, t, k);
          int same = isnan(u) || isnan(v) ? isnan(u) && isnan(v)
                     : u == v             ? signbit(u) == signbit(v)
                     : !isinf(u) && !isinf(v) && u != 0 && v != 0 && signbit(u) == signbit(v) &&
                           ulps(u, v, t) <= 4;
          if (!same && !bad++) {
            char args[64];
            if (two) snprintf(args, sizeof args, "%.9g, %.9g", get_f(in[0], t, k), get_f(in[1], t, k));
            else snprintf(args, sizeof args, "%.17g", get_f(in[0], t, k));
            snprintf(why, sizeof why, "%s %s(%s): interp %.17g, cpu %.17g", jitc_dtype_name(t), fn,
                     args, u, v);
          }
        }
        result_free(&x);
        result_free(&y);
      }
      free(in[0]);
      free(in[1]);
    }
    char name[64];
    snprintf(name, sizeof name, "special values %s", fn);
    if (bad) FAIL(name, "%d unlike interp; first: %s", bad, why);
    else printf("ok %s\n", name);
  }
  jitc_context_free(ctx);
}

/* ---- the compile cache ---- */

static const char *compile_cache(jitc_context *ctx, const char *src, const char *dir,
                                 int no_cache, jitc_status *st) {
  jitc_array_decl ad[1] = {{"a", JITC_FLOAT64}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CPU;
  o.cache_dir = dir;
  o.no_cache = no_cache;
  jitc_kernel *k;
  *st = jitc_compile(ctx, src, ad, 1, NULL, 0, &o, &k);
  if (*st) return "error";
  /* The kernel must work, whichever way it was made. */
  double a[100], b[100];
  for (int j = 0; j < 100; j++) a[j] = j;
  void *arr[2] = {a, b};
  const char *c = jitc_kernel_compile_info(k)->cache;
  if (jitc_run(ctx, k, 100, arr, NULL, NULL) != 0) c = "run failed";
  for (int j = 0; j < 100; j++)
    if (b[j] != j * 3.0 + 1) c = "wrong result";
  jitc_kernel_free(k);
  return c;
}

static int count_entries(const char *dir, char *path, size_t len) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls %s/cpu/*.bin 2>/dev/null", dir);
  FILE *p = popen(cmd, "r");
  int n = 0;
  char line[512];
  while (p && fgets(line, sizeof line, p)) {
    line[strcspn(line, "\n")] = 0;
    snprintf(path, len, "%s", line);
    n++;
  }
  if (p) pclose(p);
  return n;
}

static void expect(const char *name, const char *got, const char *want) {
  if (strcmp(got, want) != 0) FAIL(name, "cache '%s', expected '%s'", got, want);
  else printf("ok %s\n", name);
}

static void check_cache(const char *dir) {
  char src[128], path[600];
  jitc_status st;
  /* A program no earlier run has cached. */
  snprintf(src, sizeof src, "b = a * 3 + 1 + 0 * %u", (unsigned)getpid());
  jitc_context *ctx = jitc_context_new();
  expect("cache first compile is a miss", compile_cache(ctx, src, dir, 0, &st), "miss");
  expect("cache same context: memory", compile_cache(ctx, src, dir, 0, &st), "memory");
  jitc_context_free(ctx);
  if (count_entries(dir, path, sizeof path) != 1) FAIL("cache entry written", "no entry in %s", dir);
  else printf("ok cache entry written\n");
  struct stat sb;
  if (stat(path, &sb) == 0 && (sb.st_mode & 077)) FAIL("cache entry private", "mode %o", sb.st_mode & 0777);
  else printf("ok cache entry private\n");
  ctx = jitc_context_new();
  expect("cache new context: disk", compile_cache(ctx, src, dir, 0, &st), "disk");
  jitc_context_free(ctx);
  ctx = jitc_context_new();
  expect("cache --no-cache", compile_cache(ctx, src, dir, 1, &st), "none");
  jitc_context_free(ctx);

  /* Corruptions: each is detected, recompiled and replaced. */
  const char *how[] = {"truncated", "flipped byte", "empty", "foreign"};
  for (int h = 0; h < 4; h++) {
    FILE *f = fopen(path, "r+b");
    if (!f) {
      FAIL("cache corrupt", "cannot open %s", path);
      break;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (h == 1) {
      fseek(f, size - 7, SEEK_SET);
      int c = fgetc(f);
      fseek(f, size - 7, SEEK_SET);
      fputc(c ^ 0x5a, f);
    }
    fclose(f);
    if (h == 0 && truncate(path, size / 2) != 0) FAIL("cache corrupt", "truncate");
    if (h == 2 && truncate(path, 0) != 0) FAIL("cache corrupt", "truncate");
    if (h == 3) {
      f = fopen(path, "wb");
      fputs("\177ELF not a cache entry at all, just some bytes of another format", f);
      fclose(f);
    }
    char name[80];
    snprintf(name, sizeof name, "cache %s entry: recompiled", how[h]);
    ctx = jitc_context_new();
    expect(name, compile_cache(ctx, src, dir, 0, &st), "miss");
    jitc_context_free(ctx);
    snprintf(name, sizeof name, "cache %s entry: replaced", how[h]);
    ctx = jitc_context_new();
    expect(name, compile_cache(ctx, src, dir, 0, &st), "disk");
    jitc_context_free(ctx);
  }

  /* A directory others may write to is refused: compile without it. */
  char open_dir[600];
  snprintf(open_dir, sizeof open_dir, "%s/open", dir);
  mkdir(open_dir, 0700);
  chmod(open_dir, 0777);
  ctx = jitc_context_new();
  expect("cache world-writable dir refused", compile_cache(ctx, src, open_dir, 0, &st), "none");
  jitc_context_free(ctx);
  if (count_entries(open_dir, path, sizeof path) != 0)
    FAIL("cache world-writable dir unused", "an entry was written");
  else
    printf("ok cache world-writable dir unused\n");
  /* A fresh directory is made private. */
  snprintf(open_dir, sizeof open_dir, "%s/new/sub", dir);
  ctx = jitc_context_new();
  expect("cache new dir created", compile_cache(ctx, src, open_dir, 0, &st), "miss");
  jitc_context_free(ctx);
  if (stat(open_dir, &sb) != 0 || (sb.st_mode & 0777) != 0700)
    FAIL("cache new dir mode", "not 0700");
  else
    printf("ok cache new dir mode 0700\n");
}

/* ---- the CPU compiled for ---- */

static char *emit_on(jitc_context *ctx, const char *src, jitc_dtype t, const char *stage,
                     int fast, const char *cpu) {
  jitc_array_decl ad[2] = {{"a", t}, {"b", t}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CPU;
  o.fast_math = fast;
  o.cpu = cpu;
  char *text = NULL;
  if (jitc_emit(ctx, src, ad, 2, NULL, 0, &o, stage, &text)) {
    printf("# %s\n", jitc_errmsg(ctx));
    return NULL;
  }
  return text;
}

static char *emit(jitc_context *ctx, const char *src, jitc_dtype t, const char *stage, int fast) {
  return emit_on(ctx, src, t, stage, fast, NULL);
}

/* The vector registers level l implies: xmm alone up to v2, ymm on v3,
** zmm on v4.  Returns why t does not fit, or NULL. */
static const char *const regs[5] = {"", "xmm", "xmm", "ymm", "zmm"};
static const char *const exp_fn[5] = {"", "Sleef_expf4_u10sse2", "Sleef_expf4_u10sse4",
                                      "Sleef_expf8_u10avx2", "Sleef_expf16_u10avx512f"};
static const char *register_check(const char *t, int l) {
  if (!t) return "emit failed";
  if (!strstr(t, regs[l])) return "no register of the level";
  if (l < 4 && strstr(t, "zmm")) return "zmm register above the level";
  if (l < 3 && strstr(t, "ymm")) return "ymm register above the level";
  return NULL;
}


static const char *const levels[5] = {"", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

/* Compiles a small program for `cpu`; the status. */
static jitc_status compile_for(jitc_context *ctx, const char *cpu, const char *src,
                               const char **cache) {
  jitc_array_decl ad[1] = {{"a", JITC_FLOAT64}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CPU;
  o.no_cache = 1;
  o.cpu = cpu;
  jitc_kernel *k;
  jitc_status s = jitc_compile(ctx, src, ad, 1, NULL, 0, &o, &k);
  if (!s && cache) *cache = jitc_kernel_compile_info(k)->cache;
  if (!s) jitc_kernel_free(k);
  return s;
}

/* The highest level whose code this host runs, as the library finds it
** (0: none, not an x86-64 host). */
static int host_level(void) {
  jitc_context *ctx = jitc_context_new();
  int best = 0;
  for (int l = 1; l <= 4; l++)
    if (compile_for(ctx, levels[l], "b = a + 1", NULL) == JITC_OK) best = l;
  jitc_context_free(ctx);
  return best;
}

static void check_machine(void) {
  jitc_context *ctx = jitc_context_new();
  int hl = host_level();
  jitc_status s = compile_for(ctx, "pentium-ultra", "b = a + 1", NULL);
  if (s != JITC_E_USAGE || !strstr(jitc_errmsg(ctx), "x86-64-v4") ||
      !strstr(jitc_errmsg(ctx), "pentium-ultra"))
    FAIL("cpu unknown name", "status %d: %s", s, jitc_errmsg(ctx));
  else
    printf("ok cpu unknown name: usage error listing the levels\n");
  char *t = emit_on(ctx, "b = a + 1", JITC_FLOAT64, "asm", 0, "pentium-ultra");
  if (t) FAIL("cpu unknown name, emit", "accepted");
  else printf("ok cpu unknown name, emit: refused\n");
  jitc_free(t);
  for (int l = 1; l <= 4; l++) {
    char name[80];
    snprintf(name, sizeof name, "cpu %s run %s", levels[l], l <= hl ? "allowed" : "refused");
    s = compile_for(ctx, levels[l], "b = a * 2", NULL);
    if (l <= hl ? s != JITC_OK : s != JITC_E_UNAVAILABLE || !strstr(jitc_errmsg(ctx), levels[l]))
      FAIL(name, "status %d: %s", s, jitc_errmsg(ctx));
    else
      printf("ok %s\n", name);
    t = emit_on(ctx, "b = a * 2", JITC_FLOAT64, "asm", 0, levels[l]);
    snprintf(name, sizeof name, "cpu %s emit", levels[l]);
    if (!t) FAIL(name, "refused: %s", jitc_errmsg(ctx));
    else printf("ok %s\n", name);
    jitc_free(t);
  }
  /* The CPU is part of the cache key: the same program for two CPUs is
  ** two compiles, and each is found again. */
  const char *c1 = "", *c2 = "", *c3 = "";
  const char *src = "b = a * 5 - 1";
  compile_for(ctx, "x86-64", src, &c1);
  compile_for(ctx, "x86-64-v2", src, &c2);
  compile_for(ctx, "x86-64", src, &c3);
  if (hl < 2) printf("skip cpu cache key: the host does not run x86-64-v2\n");
  else if (strcmp(c1, "none") || strcmp(c2, "none") || strcmp(c3, "memory"))
    FAIL("cpu cache key", "x86-64 '%s', x86-64-v2 '%s', x86-64 again '%s'", c1, c2, c3);
  else
    printf("ok cpu cache key: one entry per CPU\n");
  /* The kernel names the machine its code is for, as asked, and the same
  ** program compiled again for another is another; the device is the host. */
  const char *env = getenv("JITC_CPU");
  const char *asked[2] = {"x86-64", NULL}, *want[2] = {"x86-64", env && *env ? env : "native"};
  for (int m = 0; m < 2; m++) {
    jitc_array_decl ad[1] = {{"a", JITC_FLOAT64}};
    jitc_options o;
    jitc_options_init(&o);
    o.target = JITC_TARGET_CPU;
    o.cpu = asked[m];
    jitc_kernel *k = NULL;
    char name[80];
    snprintf(name, sizeof name, "cpu machine %s", want[m]);
    s = jitc_compile(ctx, src, ad, 1, NULL, 0, &o, &k);
    const char *got = s ? NULL : jitc_kernel_compile_info(k)->machine;
    if (s || !got || strcmp(got, want[m]))
      FAIL(name, "status %d, machine '%s': %s", s, got ? got : "(null)", jitc_errmsg(ctx));
    else
      printf("ok %s\n", name);
    jitc_kernel_free(k);
  }
  if (strstr(jitc_target_device(ctx, JITC_TARGET_CPU), "code for"))
    FAIL("cpu device", "names a machine code is for: %s", jitc_target_device(ctx, JITC_TARGET_CPU));
  else
    printf("ok cpu device: the host alone\n");
  jitc_context_free(ctx);
}

/* ---- the sign of NaN ---- */

/* copysign, -, abs and choosing (where, minimum, fmax) move a NaN's sign
** bit as they move any other: bit for bit what interp gives, also for a
** NaN literal and a NaN input. */
static void check_nansign(void) {
  static const char *const srcs[] = {
    "c = copysign(1.0, -nan)", "c = copysign(1.0, nan)", "c = copysign(1.0, a)",
    "c = copysign(1.0, -a)", "c = copysign(a, -1.0)", "c = -a", "c = abs(a)",
    "c = where(b > 0, a, -a)", "c = minimum(a, b)", "c = fmax(b, a)", "c = copysign(1.0, -(-a))",
    "c = float32(a)", "c = copysign(a, b)",
  };
  jitc_context *ctx = jitc_context_new();
  const int64_t n = 37;
  for (int ti = 0; ti < 2; ti++) {
    jitc_dtype t = ti ? JITC_FLOAT64 : JITC_FLOAT32;
    jitc_dtype dt[3] = {t, t, t};
    void *in[3] = {malloc(n * 8), malloc(n * 8), NULL};
    in[2] = in[0];
    for (int64_t k = 0; k < n; k++) {
      double x = k % 3 == 0 ? NAN : k % 3 == 1 ? -NAN : (double)k - 20;
      double y = k % 2 ? -NAN : (double)k - 18;
      if (ti) ((double *)in[0])[k] = x, ((double *)in[1])[k] = y;
      else ((float *)in[0])[k] = (float)x, ((float *)in[1])[k] = (float)y;
    }
    for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++) {
      char name[128];
      snprintf(name, sizeof name, "nan sign '%s' %s", srcs[si], jitc_dtype_name(t));
      Result x, y;
      if (run_on(ctx, JITC_TARGET_INTERP, 1, srcs[si], dt, in, n, &x, NULL, NULL) ||
          run_on(ctx, JITC_TARGET_CPU, 0, srcs[si], dt, in, n, &y, NULL, NULL)) {
        FAIL(name, "%s", jitc_errmsg(ctx));
        continue;
      }
      size_t sz = jitc_dtype_size(x.dtypes[x.narrays - 1]);
      const unsigned char *p = x.data[x.narrays - 1], *q = y.data[y.narrays - 1];
      int64_t bad = -1;
      for (int64_t k = 0; k < n && bad < 0; k++)
        if ((p[k * sz + sz - 1] ^ q[k * sz + sz - 1]) & 0x80) bad = k;
      if (bad >= 0)
        FAIL(name, "sign bit of element %lld: interp %d (%g), cpu %d (%g)", (long long)bad,
             p[bad * sz + sz - 1] >> 7, get_f(p, x.dtypes[x.narrays - 1], bad),
             q[bad * sz + sz - 1] >> 7, get_f(q, y.dtypes[y.narrays - 1], bad));
      else
        printf("ok %s\n", name);
      result_free(&x);
      result_free(&y);
    }
    free(in[0]);
    free(in[1]);
  }
  jitc_context_free(ctx);
}

/* ---- emit ---- */

static void check_emit(void) {
  jitc_context *ctx = jitc_context_new();
  char *t;
  /* Each level (emitted whatever the host runs): its registers, and its
  ** own variant of the vector math; native: the host's level. */
  for (int l = 0; l <= 4; l++) {
    int lv = l ? l : host_level();
    const char *cpu = l ? levels[l] : "native";
    char name[128];
    snprintf(name, sizeof name, "emit asm exp float32 %s", cpu);
    t = emit_on(ctx, "c = exp(a)", JITC_FLOAT32, "asm", 0, cpu);
    const char *why = register_check(t, lv);
    if (!why && (strstr(t, "\texpf") || strstr(t, " expf") || strstr(t, "expf@"))) why = "calls scalar expf";
    if (!why && !strstr(t, exp_fn[lv])) why = "not the level's vector exp";
    if (why) FAIL(name, "%s (want %s, %s)", why, regs[lv], exp_fn[lv]);
    else printf("ok %s: %s, %s, no scalar expf\n", name, regs[lv], exp_fn[lv]);
    jitc_free(t);
    snprintf(name, sizeof name, "emit asm a += 1 %s", cpu);
    t = emit_on(ctx, "a[i] += 1", JITC_FLOAT64, "asm", 0, cpu);
    why = register_check(t, lv);
    if (!why && !strstr(t, "addpd")) why = "no addpd";
    if (why) FAIL(name, "%s (want addpd on %s)", why, regs[lv]);
    else printf("ok %s: addpd on %s\n", name, regs[lv]);
    jitc_free(t);
  }
  /* A math function is computed once per distinct argument: sin(a) *
  ** sin(a) makes as many calls as sin(a). */
  {
    int calls[2] = {0, 0};
    const char *srcs[2] = {"c = sin(a)", "c = sin(a) * sin(a) + cos(a) * cos(a)"};
    for (int j = 0; j < 2; j++) {
      char *ir = emit(ctx, srcs[j], JITC_FLOAT64, "llvm-opt", 0);
      for (char *l = ir; l && (l = strstr(l, "call ")) != NULL; l++) {
        char *eol = strchr(l, '\n');
        char *sn = strstr(l, "sin");
        if (sn && (!eol || sn < eol) && !strncmp(l, "call ", 5)) calls[j]++;
      }
      jitc_free(ir);
    }
    if (calls[0] == 0 || calls[0] != calls[1])
      FAIL("emit llvm-opt one call per sin(a)", "%d calls for sin(a), %d for sin(a) * sin(a) + ...",
           calls[0], calls[1]);
    else
      printf("ok emit llvm-opt one call per sin(a) (%d)\n", calls[0]);
  }
  t = emit(ctx, "c = a + b", JITC_FLOAT64, "llvm", 0);
  if (!t || !strstr(t, "define void @kernel(i64 %begin, i64 %end, ptr noalias %arrays, ptr noalias %params)") ||
      !strstr(t, "fadd <16 x double>") || !strstr(t, "llvm.masked.store"))
    FAIL("emit llvm", "unexpected IR:\n%s", t ? t : "(none)");
  else
    printf("ok emit llvm\n");
  jitc_free(t);
  t = emit(ctx, "c = a + b", JITC_FLOAT64, "llvm-opt", 0);
  if (!t || !strstr(t, "fadd <16 x double>") || strstr(t, "fadd fast"))
    FAIL("emit llvm-opt", "unexpected IR");
  else
    printf("ok emit llvm-opt\n");
  jitc_free(t);
  t = emit(ctx, "c = a * b + a", JITC_FLOAT64, "llvm-opt", 1);
  if (!t || !strstr(t, "contract")) FAIL("emit llvm-opt fast-math", "no fast-math flags");
  else printf("ok emit llvm-opt fast-math flags\n");
  jitc_free(t);
  t = emit(ctx, "c = a + b", JITC_FLOAT64, "nonsense", 0);
  if (t) FAIL("emit unknown stage", "accepted");
  else printf("ok emit unknown stage refused\n");
  jitc_free(t);
  /* No fast-math by default: a * b + a must not become an fma. */
  t = emit(ctx, "c = a * b + a", JITC_FLOAT64, "asm", 0);
  if (!t || strstr(t, "vfmadd")) FAIL("emit asm no contraction", "fma without --fast-math");
  else printf("ok emit asm no contraction by default\n");
  jitc_free(t);
  jitc_context_free(ctx);
}

int main(int argc, char **argv) {
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CPU) != JITC_OK) {
    printf("skip cpu: %s\n", jitc_errmsg(ctx));
    jitc_context_free(ctx);
    return 0;
  }
  if (argc < 2 || strcmp(argv[1], "levels"))
    printf("# device: %s; JITC_CPU=%s\n", jitc_target_device(ctx, JITC_TARGET_CPU),
           getenv("JITC_CPU") ? getenv("JITC_CPU") : "");
  jitc_context_free(ctx);
  const char *what = argc > 1 ? argv[1] : "diff";
  if (!strcmp(what, "diff")) check_diff();
  else if (!strcmp(what, "sizes")) check_sizes();
  else if (!strcmp(what, "accuracy")) {
    check_accuracy();
    check_specials();
  }
  else if (!strcmp(what, "cache") && argc > 2) check_cache(argv[2]);
  else if (!strcmp(what, "emit")) check_emit();
  else if (!strcmp(what, "machine")) check_machine();
  else if (!strcmp(what, "nansign")) check_nansign();
  else if (!strcmp(what, "levels")) {
    for (int l = 1, hl = host_level(); l <= hl; l++) printf("%s\n", levels[l]);
  }
  else {
    fprintf(stderr, "usage: cpu_check diff|sizes|accuracy|emit|machine|nansign|levels|cache DIR\n");
    return 2;
  }
  return failures ? 1 : 0;
}
