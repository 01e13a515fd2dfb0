/*
** seed.h -- what the two seed programs share (inc.c: `a[i] += 1` over 10M
** float64; exp.c: `c = exp(a)` over 10M float32): run one program on the cpu
** target, and on the cuda target both from host arrays and from device
** buffers; time the compile, the first run and the median of several runs;
** check every result against the same computation done in plain C on the
** host; and print the times side by side, one column each.
**
** A target this machine lacks (no GPU, or a jitc built without LLVM) is not
** a failure: its column is left out, with the reason on a line
** "skipping TARGET: why".  Exit status: 0 when every column that ran is
** right, 1 when one is wrong, 69 (jitc_exit_code(JITC_E_UNAVAILABLE)) when
** no column could run.  Header-only: each seed is one program.
*/
#ifndef SEED_H
#define SEED_H

#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "jitc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SEED_RUNS = 10 }; /* timed runs after the first */

/* One seed: a program whose input array is `a` and whose result is the
** array `result` (`a` itself for an update in place). */
typedef struct Seed {
  const char *program;
  const char *result;
  jitc_dtype dtype;                                   /* of a and of the result */
  void (*fill)(void *a, int64_t n);                   /* a's values before the run */
  void (*expect)(const void *a, void *want, int64_t n); /* the result, computed in C */
  double tolerance;                                   /* ulps allowed against expect */
  const char *reference;                              /* what expect computes, in words */
} Seed;

/* One column of the table. */
typedef struct Column {
  const char *title;
  int ran;
  double compile_ms, first_ms, median_ms, kernel_ms, copy_ms; /* negative: does not apply */
  double ulps;                                                /* largest error found */
} Column;

static double seed_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int seed_cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double seed_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, seed_cmp);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* The distance from x to y in units in the last place of dtype: how many
** representable values lie between them (-0.0 and 0.0 are one value; a NaN
** is only equal to a NaN).  The bits of a float, read as a sign and a
** magnitude, are mapped to integers in the floats' order. */
static double seed_ulps(const void *xs, const void *ys, int64_t e, jitc_dtype dtype) {
  int64_t i, j;
  double x, y;
  if (dtype == JITC_FLOAT32) {
    float fx = ((const float *)xs)[e], fy = ((const float *)ys)[e];
    int32_t a, b;
    memcpy(&a, &fx, 4);
    memcpy(&b, &fy, 4);
    x = fx, y = fy;
    i = a < 0 ? INT32_MIN - (int64_t)a : a;
    j = b < 0 ? INT32_MIN - (int64_t)b : b;
  } else {
    x = ((const double *)xs)[e], y = ((const double *)ys)[e];
    memcpy(&i, &x, 8);
    memcpy(&j, &y, 8);
    i = i < 0 ? INT64_MIN - i : i;
    j = j < 0 ? INT64_MIN - j : j;
  }
  if (isnan(x) || isnan(y))
    return isnan(x) && isnan(y) ? 0 : INFINITY;
  /* Unsigned, so that the difference of two int64 values cannot overflow. */
  return (double)(i > j ? (uint64_t)i - (uint64_t)j : (uint64_t)j - (uint64_t)i);
}

static double seed_error(const Seed *s, const void *got, const void *want, int64_t n) {
  double worst = 0;
  for (int64_t e = 0; e < n; e++) {
    double d = seed_ulps(got, want, e, s->dtype);
    if (d > worst)
      worst = d;
  }
  return worst;
}

/* The state of one seed run: the context, the host arrays and the kernel
** of the target being measured. */
typedef struct SeedRun {
  const Seed *s;
  jitc_context *ctx;
  int64_t n;
  size_t bytes;     /* of one array */
  void *in, *want;  /* a's initial values; the expected result */
  void *host[2];    /* the kernel's arrays, in its order */
  int result;       /* the result's index among them */
  int narrays;
  double moved;     /* bytes read and written by one run */
} SeedRun;

/* Compiles the program for target t and binds the host arrays to the
** kernel's order.  The disk cache is off, so that the time is a real
** compile every time the program runs. */
static jitc_status seed_compile(SeedRun *r, jitc_target t, jitc_kernel **k, Column *c) {
  jitc_array_decl decl[] = {{"a", r->s->dtype}};
  jitc_options opt;
  jitc_options_init(&opt);
  opt.target = t;
  opt.no_cache = 1;
  jitc_status st = jitc_compile(r->ctx, r->s->program, decl, 1, NULL, 0, &opt, k);
  if (st)
    return st;
  c->compile_ms = jitc_kernel_compile_info(*k)->total_ms;
  r->narrays = jitc_kernel_array_count(*k);
  r->result = jitc_kernel_find_array(*k, r->s->result);
  r->moved = 0;
  for (int j = 0; j < r->narrays; j++) {
    jitc_role role;
    jitc_kernel_array(*k, j, NULL, &role, NULL);
    r->moved += (double)r->bytes * (role == JITC_INOUT ? 2 : 1);
  }
  return JITC_OK;
}

/* The first run (checked) and SEED_RUNS timed runs on host arrays. */
static jitc_status seed_host(SeedRun *r, const jitc_kernel *k, Column *c) {
  double t[SEED_RUNS], kt[SEED_RUNS];
  jitc_run_info info;
  int a = jitc_kernel_find_array(k, "a");
  memcpy(r->host[a], r->in, r->bytes);
  jitc_status st = jitc_run(r->ctx, k, r->n, r->host, NULL, &info);
  if (st)
    return st;
  c->first_ms = info.run_ms;
  c->ulps = seed_error(r->s, r->host[r->result], r->want, r->n);
  for (int j = 0; j < SEED_RUNS && !st; j++) {
    st = jitc_run(r->ctx, k, r->n, r->host, NULL, &info);
    t[j] = info.run_ms;
    kt[j] = info.kernel_ms;
  }
  c->median_ms = seed_median(t, SEED_RUNS);
  c->kernel_ms = info.kernel_ms > 0 ? seed_median(kt, SEED_RUNS) : -1;
  c->copy_ms = -1;
  return st;
}

/* The same on device buffers: one upload before the runs, one download of
** the first run's result to check it; the runs move no data to the host. */
static jitc_status seed_device(SeedRun *r, jitc_target t, const jitc_kernel *k, Column *c) {
  jitc_buffer *buf[2] = {NULL, NULL};
  double rt[SEED_RUNS], kt[SEED_RUNS];
  jitc_run_info info = {0};
  int a = jitc_kernel_find_array(k, "a");
  jitc_status st = JITC_OK;
  for (int j = 0; j < r->narrays && !st; j++)
    st = jitc_buffer_new(r->ctx, t, r->s->dtype, r->n, &buf[j]);
  double t0 = seed_now_ms();
  if (!st)
    st = jitc_buffer_upload(r->ctx, buf[a], r->in, r->n);
  c->copy_ms = seed_now_ms() - t0;
  if (!st)
    st = jitc_run_buffers(r->ctx, k, r->n, buf, NULL, &info);
  c->first_ms = info.run_ms;
  t0 = seed_now_ms();
  if (!st)
    st = jitc_buffer_download(r->ctx, buf[r->result], r->host[r->result], r->n);
  c->copy_ms += seed_now_ms() - t0;
  if (!st)
    c->ulps = seed_error(r->s, r->host[r->result], r->want, r->n);
  for (int j = 0; j < SEED_RUNS && !st; j++) {
    st = jitc_run_buffers(r->ctx, k, r->n, buf, NULL, &info);
    rt[j] = info.run_ms;
    kt[j] = info.kernel_ms;
  }
  if (!st) {
    c->median_ms = seed_median(rt, SEED_RUNS);
    c->kernel_ms = seed_median(kt, SEED_RUNS);
  }
  for (int j = 0; j < r->narrays; j++)
    jitc_buffer_free(buf[j]);
  return st;
}

/* Measures target t into cols[0] (host arrays) and, for cuda, cols[1]
** (device buffers); a target this machine lacks is skipped with its reason. */
static jitc_status seed_target(SeedRun *r, jitc_target t, Column *cols) {
  const char *name = jitc_target_name(t);
  if (jitc_target_available(r->ctx, t) != JITC_OK) {
    printf("skipping %s: %s", name, jitc_errmsg(r->ctx));
    return JITC_OK;
  }
  jitc_kernel *k;
  jitc_status st = seed_compile(r, t, &k, &cols[0]);
  if (!st)
    st = seed_host(r, k, &cols[0]);
  cols[0].ran = !st;
  if (!st && t == JITC_TARGET_CUDA) {
    cols[1].compile_ms = -1; /* the same kernel */
    st = seed_device(r, t, k, &cols[1]);
    cols[1].ran = !st;
  }
  jitc_kernel_free(k);
  return st;
}

/* One row of the table: a label and a figure per column that ran
** (`-` where the figure does not apply). */
static void seed_row(const char *label, const Column *cols, int ncols, size_t field, int digits) {
  printf("%-22s", label);
  for (int j = 0; j < ncols; j++) {
    if (!cols[j].ran)
      continue;
    double v = *(const double *)((const char *)&cols[j] + field);
    if (v < 0)
      printf(" %16s", "-");
    else
      printf(" %16.*f", digits, v);
  }
  printf("\n");
}

static void seed_table(const SeedRun *r, const Column *cols, int ncols) {
  printf("%-22s", "");
  for (int j = 0; j < ncols; j++)
    if (cols[j].ran)
      printf(" %16s", cols[j].title);
  printf("\n");
  seed_row("compile ms", cols, ncols, offsetof(Column, compile_ms), 3);
  seed_row("first run ms", cols, ncols, offsetof(Column, first_ms), 3);
  seed_row("median run ms", cols, ncols, offsetof(Column, median_ms), 3);
  seed_row("median kernel ms", cols, ncols, offsetof(Column, kernel_ms), 3);
  seed_row("upload+download ms", cols, ncols, offsetof(Column, copy_ms), 3);
  Column gbps[3];
  for (int j = 0; j < ncols; j++) {
    gbps[j] = cols[j];
    gbps[j].median_ms = r->moved / (cols[j].median_ms * 1e6);
  }
  seed_row("GB/s (median run)", gbps, ncols, offsetof(Column, median_ms), 1);
  seed_row("largest error ulp", cols, ncols, offsetof(Column, ulps), 0);
}

/* Runs seed s over argv[1] elements (default 10_000_000); main() of a seed. */
static int seed_main(const Seed *s, int argc, char **argv) {
  SeedRun r = {.s = s, .n = argc > 1 ? strtoll(argv[1], NULL, 10) : 10000000};
  if (r.n < 1) {
    fprintf(stderr, "usage: %s [ELEMENTS]\n", argv[0]);
    return jitc_exit_code(JITC_E_USAGE);
  }
  r.bytes = (size_t)r.n * jitc_dtype_size(s->dtype);
  r.ctx = jitc_context_new();
  r.in = malloc(r.bytes);
  r.want = malloc(r.bytes);
  r.host[0] = malloc(r.bytes);
  r.host[1] = malloc(r.bytes);
  jitc_status st = r.ctx && r.in && r.want && r.host[0] && r.host[1] ? JITC_OK : JITC_E_NOMEM;
  Column cols[3] = {{.title = "cpu"}, {.title = "cuda, host"}, {.title = "cuda, device"}};
  if (!st) {
    s->fill(r.in, r.n);
    s->expect(r.in, r.want, r.n);
    printf("%s over %lld %s elements; median of %d runs after the first\n", s->program,
           (long long)r.n, jitc_dtype_name(s->dtype), SEED_RUNS);
    st = seed_target(&r, JITC_TARGET_CPU, &cols[0]);
  }
  if (!st)
    st = seed_target(&r, JITC_TARGET_CUDA, &cols[1]);
  int code = 0, ran = 0;
  if (st) {
    fprintf(stderr, "%s: %s: %s", argv[0], jitc_status_name(st),
            r.ctx ? jitc_errmsg(r.ctx) : "out of memory\n");
    code = jitc_exit_code(st);
  } else {
    seed_table(&r, cols, 3);
    for (int j = 0; j < 3; j++) {
      ran += cols[j].ran;
      if (cols[j].ran && !(cols[j].ulps <= s->tolerance)) {
        printf("WRONG: %s differs from %s by %.0f ulp (at most %.0f allowed)\n", cols[j].title,
               s->reference, cols[j].ulps, s->tolerance);
        code = 1;
      }
    }
    if (!ran) {
      fprintf(stderr, "%s: no target to run on\n", argv[0]);
      code = jitc_exit_code(JITC_E_UNAVAILABLE);
    } else if (!code) {
      printf("every result within %.0f ulp of %s\n", s->tolerance, s->reference);
    }
  }
  free(r.in);
  free(r.want);
  free(r.host[0]);
  free(r.host[1]);
  jitc_context_free(r.ctx);
  return code;
}

#endif /* SEED_H */
