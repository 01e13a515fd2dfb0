/*
** bench_util.h -- what the two benchmark drivers (jitc_bench.c, c_loops.c)
** share: the timing loop, the options that steer it, and JSON output.
**
** Both drivers print one JSON object on stdout and let bench/run.py compute
** the statistics, so that every implementation, C or Python, is summarised
** by the same code.  The timing rule is the same everywhere too: a few
** warm-up calls, then timed calls until at least `min_reps` were made and
** either `max_reps` were made or `budget_ms` of timed work has passed.
** Header-only (static functions): each driver is a single program.
*/
#ifndef JITC_BENCH_UTIL_H
#define JITC_BENCH_UTIL_H

#include "../cli/cli.h" /* now_ms (the clock), json_string */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct BenchOpts {
  int warmup;       /* untimed calls after the checked first call */
  int min_reps;
  int max_reps;
  double budget_ms; /* stop after this much timed work (once min_reps are done) */
} BenchOpts;

/* Timed samples; up to 3 extra figures per call (the cuda target's kernel,
** upload and download times). */
typedef struct Samples {
  double *t;
  double *x[3];
  int n;
  int cap;
} Samples;

static void bench_opts_init(BenchOpts *o) {
  o->warmup = 2;
  o->min_reps = 5;
  o->max_reps = 200;
  o->budget_ms = 300;
}

/* Parses one timing option at argv[*i]; returns 1 if it was one. */
static int bench_opts_arg(BenchOpts *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  if (*i + 1 >= argc)
    return 0;
  if (!strcmp(a, "--warmup"))
    o->warmup = atoi(argv[++*i]);
  else if (!strcmp(a, "--min-reps"))
    o->min_reps = atoi(argv[++*i]);
  else if (!strcmp(a, "--max-reps"))
    o->max_reps = atoi(argv[++*i]);
  else if (!strcmp(a, "--budget-ms"))
    o->budget_ms = atof(argv[++*i]);
  else
    return 0;
  if (o->min_reps < 1)
    o->min_reps = 1;
  if (o->max_reps < o->min_reps)
    o->max_reps = o->min_reps;
  return 1;
}

static void samples_free(Samples *s) {
  free(s->t);
  for (int j = 0; j < 3; j++)
    free(s->x[j]);
  memset(s, 0, sizeof *s);
}

static int samples_reserve(Samples *s, int cap) {
  s->t = calloc((size_t)cap, sizeof(double));
  for (int j = 0; j < 3; j++)
    s->x[j] = calloc((size_t)cap, sizeof(double));
  s->cap = cap;
  s->n = 0;
  return s->t && s->x[0] && s->x[1] && s->x[2] ? 0 : -1;
}

/* One call of the measured code: returns 0, or -1 on failure; may fill
** extra[0..2]. */
typedef int (*BenchFn)(void *arg, double extra[3]);

/* Warm-up, then the timed calls.  Returns 0, or -1 if a call failed. */
static int bench_measure(const BenchOpts *o, BenchFn fn, void *arg, Samples *s) {
  double extra[3];
  for (int w = 0; w < o->warmup; w++)
    if (fn(arg, extra) != 0)
      return -1;
  if (samples_reserve(s, o->max_reps) != 0)
    return -1;
  double spent = 0;
  while (s->n < o->min_reps || (s->n < o->max_reps && spent < o->budget_ms)) {
    extra[0] = extra[1] = extra[2] = 0;
    double t0 = now_ms();
    if (fn(arg, extra) != 0)
      return -1;
    double dt = now_ms() - t0;
    s->t[s->n] = dt;
    for (int j = 0; j < 3; j++)
      s->x[j][s->n] = extra[j];
    s->n++;
    spent += dt;
  }
  return 0;
}

/* An element-wise loop as a careful C programmer writes it: vectorised, on
** all cores (OpenMP, static schedule) from PAR_MIN elements, and without
** entering OpenMP at all below that (even a one-thread parallel region costs
** about half a microsecond, more than 1000 elements take). */
#define PAR_MIN 65536
#define ELEMENTWISE(n, i, ...)                                                   \
  do {                                                                           \
    if ((n) < PAR_MIN) {                                                         \
      _Pragma("omp simd") for (int64_t i = 0; i < (n); i++) { __VA_ARGS__ }      \
    } else {                                                                     \
      _Pragma("omp parallel for simd schedule(static)")                         \
      for (int64_t i = 0; i < (n); i++) { __VA_ARGS__ }                          \
    }                                                                            \
  } while (0)

/* Memory for an array, on transparent huge pages where the kernel offers
** them on request (madvise mode).  NumPy asks for huge pages for every array
** of 4 MiB or more, and a stream over 4 KiB pages pays TLB misses that one
** over 2 MiB pages does not: the C drivers ask too, so that every
** implementation reads and writes the same kind of memory.  Free with free(). */
#define BENCH_HUGE ((size_t)2 << 20)
static void *bench_alloc(size_t bytes) {
  if (bytes < BENCH_HUGE)
    return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  size_t size = (bytes + BENCH_HUGE - 1) / BENCH_HUGE * BENCH_HUGE;
  void *p = aligned_alloc(BENCH_HUGE, size);
#ifdef MADV_HUGEPAGE
  if (p)
    madvise(p, size, MADV_HUGEPAGE); /* a hint: failure only costs speed */
#endif
  return p;
}

/* Moves `*data` (bytes long, malloc'ed) to bench_alloc memory; 0 or -1. */
static int bench_rehome(void **data, size_t bytes) {
  void *p = bench_alloc(bytes);
  if (!p)
    return -1;
  memcpy(p, *data, bytes);
  free(*data);
  *data = p;
  return 0;
}

/* Prints `"key": [v, v, ...]` (no trailing comma). */
static void json_list(FILE *f, const char *key, const double *v, int n) {
  fprintf(f, "\"%s\": [", key);
  for (int i = 0; i < n; i++)
    fprintf(f, "%s%.6f", i ? ", " : "", v[i]);
  fprintf(f, "]");
}

#endif
