/*
** cpu_bench.c -- the cpu target against hand-written C loops, 10,000,000
** elements, data in memory, median of repeats, compile excluded.  The C
** loops are compiled with this file's flags (-ffast-math, so that expf
** and exp vectorise with libmvec) and run on as many OpenMP threads as
** jitc uses.
**
**   gcc -O3 -march=native -fopenmp -ffast-math -Isrc -o cpu_bench bench/cpu_bench.c \
**     build/libjitc.a $(sed -n 's/^Libs.private: //p' build/jitc.pc)
**
**   cpu_bench run            the speed table
**   cpu_bench compile DIR    compile times of a program new to the cache in
**                            DIR, then of the same program in this process
**                            (memory), printed as "first" and "memory"
**   cpu_bench warm DIR       compile time of a program DIR already has
*/
#include "jitc.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 10000000
#define REPS 21

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return v[n / 2];
}

static jitc_context *ctx;

static jitc_kernel *compile(const char *src, jitc_dtype t, const char *cache_dir) {
  jitc_array_decl ad[2] = {{"x", t}, {"y", t}};
  jitc_scalar_decl sd[1] = {{"alpha", t, 0}};
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CPU;
  o.cache_dir = cache_dir;
  o.no_cache = cache_dir == NULL;
  jitc_kernel *k;
  if (jitc_compile(ctx, src, ad, 2, sd, 1, &o, &k)) {
    fprintf(stderr, "%s\n", jitc_errmsg(ctx));
    exit(1);
  }
  return k;
}

/* Median time of jitc_run of k over arrays in its order (x, y, out). */
static double time_jitc(jitc_kernel *k, void *x, void *y, void *out) {
  void *arr[3];
  int na = jitc_kernel_array_count(k);
  for (int j = 0; j < na; j++) {
    const char *name;
    jitc_kernel_array(k, j, &name, NULL, NULL);
    arr[j] = !strcmp(name, "x") ? x : !strcmp(name, "y") ? y : out;
  }
  jitc_value alpha = {JITC_FLOAT64, {.f = 0.5}};
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    jitc_run(ctx, k, N, arr, &alpha, NULL);
    t[r] = now() - t0;
  }
  return median(t, REPS);
}

/* The hand-written loops. */
static double *xd, *yd, *od;
static float *xf, *yf, *of;
static void c_inc(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) xd[i] += 1;
}
static void c_expf(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) of[i] = expf(xf[i]);
}
static void c_exp(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) od[i] = exp(xd[i]);
}
static void c_poly(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) od[i] = 2 * xd[i] * xd[i] + 3 * xd[i] + 1;
}
static void c_sincos(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) od[i] = sin(xd[i]) * sin(xd[i]) + cos(xd[i]) * cos(xd[i]);
}
static void c_axpy(void) {
#pragma omp parallel for simd
  for (long i = 0; i < N; i++) yf[i] = 0.5f * xf[i] + yf[i];
}
static double time_c(void (*f)(void)) {
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    f();
    t[r] = now() - t0;
  }
  return median(t, REPS);
}

static void row(const char *name, double c, double j, double goal) {
  printf("| %-32s | %7.2f | %7.2f | %5.2fx | %s |\n", name, c, j, j / c,
         j / c <= goal ? "met" : "not met");
}

static void run(void) {
  xd = aligned_alloc(64, N * 8), yd = aligned_alloc(64, N * 8), od = aligned_alloc(64, N * 8);
  xf = aligned_alloc(64, N * 4), yf = aligned_alloc(64, N * 4), of = aligned_alloc(64, N * 4);
  for (long i = 0; i < N; i++) {
    xd[i] = (double)(i % 1000) / 250.0 - 2;
    yd[i] = 1;
    xf[i] = (float)xd[i];
    yf[i] = 1;
    od[i] = of[i] = 0;
  }
  printf("threads: %d (OpenMP and jitc)\n", omp_get_max_threads());
  printf("| workload (10M elements) | C ms | jitc ms | ratio | goal |\n|---|---|---|---|---|\n");
  double c, j;
  jitc_kernel *k;

  k = compile("x[i] += 1", JITC_FLOAT64, NULL);
  c = time_c(c_inc);
  j = time_jitc(k, xd, yd, od);
  row("a[i] += 1 float64", c, j, 1.1);
  jitc_kernel_free(k);

  k = compile("out = exp(x)", JITC_FLOAT32, NULL);
  c = time_c(c_expf);
  j = time_jitc(k, xf, yf, of);
  row("exp(a) float32", c, j, 1.25);
  jitc_kernel_free(k);

  k = compile("out = exp(x)", JITC_FLOAT64, NULL);
  c = time_c(c_exp);
  j = time_jitc(k, xd, yd, od);
  row("exp(a) float64", c, j, 1.25);
  jitc_kernel_free(k);

  k = compile("out = 2*x*x + 3*x + 1", JITC_FLOAT64, NULL);
  c = time_c(c_poly);
  j = time_jitc(k, xd, yd, od);
  row("2*a*a + 3*a + 1 float64", c, j, 1.25);
  jitc_kernel_free(k);

  k = compile("out = sin(x)**2 + cos(x)**2", JITC_FLOAT64, NULL);
  c = time_c(c_sincos);
  j = time_jitc(k, xd, yd, od);
  row("sin(a)**2 + cos(a)**2 float64", c, j, 1.25);
  jitc_kernel_free(k);

  k = compile("y = alpha*x + y", JITC_FLOAT32, NULL);
  c = time_c(c_axpy);
  j = time_jitc(k, xf, yf, of);
  row("y = alpha*x + y float32", c, j, 1.25);
  jitc_kernel_free(k);
  free(xd); free(yd); free(od); free(xf); free(yf); free(of);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "run";
  ctx = jitc_context_new();
  if (!strcmp(what, "run")) {
    run();
  } else if (argc > 2 && (!strcmp(what, "compile") || !strcmp(what, "warm"))) {
    /* A program unique to this process, unless warm, which reuses DIR's. */
    char src[128];
    snprintf(src, sizeof src, "out = exp(x) * %d.5 + y", !strcmp(what, "warm") ? 7 : (int)(now()) % 100000);
    double t0 = now();
    jitc_kernel *k = compile(src, JITC_FLOAT32, argv[2]);
    double t1 = now();
    const jitc_compile_info *ci = jitc_kernel_compile_info(k);
    printf("%s: %.2f ms wall, cache %s (front end %.2f, IR %.2f, optimise %.2f, codegen %.2f, load %.2f)\n",
           what, t1 - t0, ci->cache, ci->frontend_ms, ci->ir_ms, ci->optimize_ms, ci->codegen_ms, ci->load_ms);
    jitc_kernel_free(k);
    t0 = now();
    k = compile(src, JITC_FLOAT32, argv[2]);
    printf("again in this process: %.3f ms, cache %s\n", now() - t0, jitc_kernel_compile_info(k)->cache);
    jitc_kernel_free(k);
  }
  jitc_context_free(ctx);
  return 0;
}
