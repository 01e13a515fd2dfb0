/*
** tsan_check.c -- the library under concurrency, for ThreadSanitizer
** (tests/t_tsan.sh builds it and the library with -fsanitize=thread).
**
** Part 1, separate contexts: THREADS threads each make a context and, for
** every target given, compile and run kernels of their own (programs that
** differ per thread and per round, so compiles really happen), through one
** disk cache directory that all of them share, and check every result.
** Part 2, one context shared as jitc.h allows, by one thread at a time:
** a kernel compiled once is run from THREADS threads on their own arrays,
** each run holding the context (a mutex hands it over), and checked.  The
** context may keep no thread's state past a call.
**
** Usage: tsan_check CACHE_DIR TARGET...   Prints "ok tsan.NAME" or
** "FAIL tsan.NAME: why"; exits 1 on a failure.  Races are ThreadSanitizer's
** reports (t_tsan.sh makes them fatal).
*/
#include "jitc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 3, N = 5000 };

static const char *cache_dir;
static jitc_target targets[JITC_NTARGETS];
static int ntargets;
static int failures;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void failf(const char *test, const char *fmt, const char *detail, long a, long b) {
  pthread_mutex_lock(&print_lock);
  printf("FAIL tsan.%s: ", test);
  printf(fmt, detail, a, b);
  printf("\n");
  failures++;
  pthread_mutex_unlock(&print_lock);
}

/* Runs `c = a * K + b` style kernels (K = the thread and round) and checks them. */
static void *separate(void *arg) {
  int id = (int)(long)arg;
  jitc_context *ctx = jitc_context_new();
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  if (!ctx || !a || !b || !c) {
    failf("separate", "%s", "out of memory", 0, 0);
    goto out;
  }
  for (int r = 0; r < ROUNDS; r++)
    for (int t = 0; t < ntargets; t++) {
      char src[128];
      int K = id * 10 + r + 1;
      snprintf(src, sizeof src, "let t = a * %d\nc = t + b - %d", K, t);
      jitc_array_decl decls[] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
      jitc_options opt;
      jitc_options_init(&opt);
      opt.target = targets[t];
      opt.cache_dir = cache_dir;
      opt.threads = 2;
      jitc_kernel *k = NULL;
      if (jitc_compile(ctx, src, decls, 2, NULL, 0, &opt, &k)) {
        failf("separate", "compile: %s", jitc_errmsg(ctx), 0, 0);
        continue;
      }
      for (int e = 0; e < N; e++) {
        a[e] = e;
        b[e] = id - e;
        c[e] = -1;
      }
      /* The kernel's order: a, b, c (first appearance). */
      void *arrays[] = {a, b, c};
      if (jitc_run(ctx, k, N, arrays, NULL, NULL)) {
        failf("separate", "run: %s", jitc_errmsg(ctx), 0, 0);
      } else {
        for (int e = 0; e < N; e++)
          if (c[e] != (double)e * K + (id - e) - t) {
            failf("separate", "%s: element %ld is wrong (thread %ld)",
                  jitc_target_name(targets[t]), e, id);
            break;
          }
      }
      jitc_kernel_free(k);
    }
out:
  free(a);
  free(b);
  free(c);
  jitc_context_free(ctx);
  return NULL;
}

/* Whoever holds it uses the shared context. */
static pthread_mutex_t hand = PTHREAD_MUTEX_INITIALIZER;

typedef struct Shared {
  jitc_context *ctx;
  jitc_kernel *k;
  jitc_target target;
  int id;
} Shared;

/* Runs one kernel of a shared context on this thread's own arrays, holding
** the context for each run. */
static void *shared_run(void *arg) {
  Shared *s = arg;
  int32_t *x = malloc(N * sizeof *x);
  int64_t *y = malloc(N * sizeof *y);
  if (!x || !y) {
    failf("shared", "%s", "out of memory", 0, 0);
  } else {
    for (int rep = 0; rep < 20; rep++) {
      for (int e = 0; e < N; e++)
        x[e] = e * (s->id + 1) + rep;
      void *arrays[] = {x, y};
      jitc_value v = {JITC_INT64, {.i = s->id}};
      pthread_mutex_lock(&hand);
      jitc_status st = jitc_run(s->ctx, s->k, N, arrays, &v, NULL);
      pthread_mutex_unlock(&hand);
      if (st) {
        failf("shared", "run: %s", jitc_target_name(s->target), 0, 0);
        break;
      }
      int bad = -1;
      for (int e = 0; e < N && bad < 0; e++)
        if (y[e] != (int64_t)x[e] * 3 + s->id)
          bad = e;
      if (bad >= 0) {
        failf("shared", "%s: element %ld is wrong (thread %ld)", jitc_target_name(s->target), bad,
              s->id);
        break;
      }
    }
  }
  free(x);
  free(y);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tsan_check CACHE_DIR TARGET...\n");
    return 2;
  }
  cache_dir = argv[1];
  for (int a = 2; a < argc && ntargets < JITC_NTARGETS; a++)
    if (jitc_target_parse(argv[a], &targets[ntargets]) == JITC_OK)
      ntargets++;

  pthread_t th[THREADS];
  int before = failures;
  for (long t = 0; t < THREADS; t++)
    pthread_create(&th[t], NULL, separate, (void *)t);
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  if (failures == before)
    printf("ok tsan.separate_contexts (%d threads x %d rounds x %d targets)\n", THREADS, ROUNDS,
           ntargets);

  for (int t = 0; t < ntargets; t++) {
    before = failures;
    jitc_context *ctx = jitc_context_new();
    jitc_array_decl decls[] = {{"x", JITC_INT32}};
    jitc_scalar_decl sdecls[] = {{"s", JITC_INT64, 0}};
    jitc_options opt;
    jitc_options_init(&opt);
    opt.target = targets[t];
    opt.cache_dir = cache_dir;
    jitc_kernel *k = NULL;
    if (jitc_compile(ctx, "y = i64(x) * 3 + s", decls, 1, sdecls, 1, &opt, &k)) {
      failf("shared", "compile: %s", jitc_errmsg(ctx), 0, 0);
    } else {
      Shared s[THREADS];
      for (int j = 0; j < THREADS; j++) {
        s[j] = (Shared){ctx, k, targets[t], j};
        pthread_create(&th[j], NULL, shared_run, &s[j]);
      }
      for (int j = 0; j < THREADS; j++)
        pthread_join(th[j], NULL);
      if (failures == before)
        printf("ok tsan.shared_context.%s (%d threads running one kernel in turn)\n",
               jitc_target_name(targets[t]), THREADS);
    }
    jitc_kernel_free(k);
    jitc_context_free(ctx);
  }
  return failures ? 1 : 0;
}
