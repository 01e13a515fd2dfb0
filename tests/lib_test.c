/*
** lib_test.c -- tests of the public library (jitc.h): errors as values,
** kernel queries, runs on many sizes and scalar values, usage errors,
** jitc_run_device's checks (tests/gpu/devptr_gpu.c runs it on a GPU),
** jitc_host_pin, emit,
** and independent contexts on several threads.  Prints "ok NAME" or
** "FAIL NAME: why" per check (tests/run.sh protocol).  Target from argv[1]
** (default interp).
*/
#include "jitc.h"

#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(name, cond, ...)                                                               \
  do {                                                                                       \
    if (cond)                                                                                \
      printf("ok %s\n", name);                                                               \
    else {                                                                                   \
      printf("FAIL %s: ", name);                                                             \
      printf(__VA_ARGS__);                                                                   \
      printf("\n");                                                                          \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

static jitc_options opts(jitc_target t) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  return o;
}

static void test_errors(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(t);
  jitc_array_decl arrays[] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = (jitc_kernel *)1;
  jitc_status st = jitc_compile(ctx, "c = exq(a) * b\nd = a +* b", arrays, 2, NULL, 0, &o, &k);
  jitc_error e0 = {0}, e1 = {0};
  CHECK("errors.status", st == JITC_E_PROGRAM && k == NULL, "status %d", (int)st);
  CHECK("errors.count", jitc_error_count(ctx) == 2, "count %d", jitc_error_count(ctx));
  jitc_error_get(ctx, 0, &e0);
  jitc_error_get(ctx, 1, &e1);
  CHECK("errors.first", e0.code == JITC_E_PROGRAM && e0.line == 1 && e0.col == 5 &&
        strstr(e0.message, "did you mean 'exp'"), "%d:%d %s", e0.line, e0.col, e0.message);
  CHECK("errors.second", e1.line == 2 && e1.col == 8, "%d:%d %s", e1.line, e1.col, e1.message);
  CHECK("errors.text", strstr(jitc_errmsg(ctx), "  c = exq(a) * b\n      ^\n") != NULL, "%s",
        jitc_errmsg(ctx));
  CHECK("errors.get_range", jitc_error_get(ctx, 2, &e0) == JITC_E_USAGE, "no usage error");
  CHECK("errors.default_name", !strncmp(jitc_errmsg(ctx), "<program>:1:5: error: ", 22), "%s",
        jitc_errmsg(ctx));
  o.source_name = "prog.jitc";
  st = jitc_compile(ctx, "c = a +", arrays, 2, NULL, 0, &o, &k);
  CHECK("errors.source_name", st == JITC_E_PROGRAM &&
        !strncmp(jitc_errmsg(ctx), "prog.jitc:1:8: error: ", 22), "%s", jitc_errmsg(ctx));
  o.source_name = NULL;
  jitc_scalar_decl kw = {"True", JITC_FLOAT64, 1};
  st = jitc_compile(ctx, "c = a * True", arrays, 2, &kw, 1, &o, &k);
  CHECK("errors.keyword_scalar", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "keyword"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  const char *names[] = {"alpha", "beta"};
  CHECK("errors.nearest_name", jitc_nearest_name("alpah", names, 2) == names[0] &&
        jitc_nearest_name("zzz", names, 2) == NULL, "wrong suggestion");
  const char *tmp_names[] = {"tmp", "a"};
  CHECK("errors.nearest_name_swap", jitc_nearest_name("tpm", tmp_names, 2) == tmp_names[0],
        "two swapped letters are one slip");
  /* Implicit inputs: a name one slip from a name defined before it is a typo. */
  o.implicit_inputs = 1;
  st = jitc_compile(ctx, "tmp = a * 2\nc = tpm + 1", arrays, 2, NULL, 0, &o, &k);
  jitc_error_get(ctx, 0, &e0);
  CHECK("errors.implicit_typo", st == JITC_E_PROGRAM && e0.line == 2 && e0.col == 5 &&
        strstr(e0.message, "did you mean 'tmp'"), "%s", jitc_errmsg(ctx));
  st = jitc_compile(ctx, "ypos = xpos + 1", arrays, 2, NULL, 0, &o, &k);
  CHECK("errors.implicit_not_typo", st == JITC_OK, "%s", jitc_errmsg(ctx));
  jitc_kernel_free(k);
  o.implicit_inputs = 0;
  const char *letters[] = {"i", "a"};
  CHECK("errors.nearest_name_letter", jitc_nearest_name("q", letters, 2) == NULL &&
        jitc_nearest_name("A", letters, 2) == letters[1], "a letter for another");
  /* A bare unknown name gets no function for a suggestion: a function there
  ** would be an error too. */
  st = jitc_compile(ctx, "c = a + ex", arrays, 2, NULL, 0, &o, &k);
  CHECK("errors.bare_no_function", st == JITC_E_PROGRAM && strstr(jitc_errmsg(ctx), "'ex'") &&
        !strstr(jitc_errmsg(ctx), "did you mean"), "%s", jitc_errmsg(ctx));
  CHECK("version.targets", strstr(jitc_target_version(JITC_TARGET_INTERP), "built in") &&
        jitc_target_version(JITC_TARGET_CPU)[0], "no target versions");
  CHECK("errors.exit_code", jitc_exit_code(JITC_E_PROGRAM) == 65 &&
        jitc_exit_code(JITC_E_INPUT) == 66 && jitc_exit_code(JITC_E_UNAVAILABLE) == 69 &&
        jitc_exit_code(JITC_E_INTERNAL) == 70 && jitc_exit_code(JITC_E_NOMEM) == 71,
        "wrong exit codes");

  /* Without implicit inputs an unknown array is an error with a suggestion. */
  st = jitc_compile(ctx, "c = a + bb", arrays, 2, NULL, 0, &o, &k);
  jitc_error_get(ctx, 0, &e0);
  CHECK("errors.unknown_name", st == JITC_E_PROGRAM && strstr(e0.message, "unknown name 'bb'") &&
        strstr(e0.message, "did you mean 'b'"), "%s", e0.message);
  st = jitc_compile(ctx, "c = a + d\nd = b", arrays, 2, NULL, 0, &o, &k);
  jitc_error_get(ctx, 0, &e0);
  CHECK("errors.read_before_assign", st == JITC_E_PROGRAM &&
        strstr(e0.message, "'d' is read before it is assigned"), "%s", e0.message);
  /* A let that failed defines its name: its uses add nothing, other errors stay. */
  st = jitc_compile(ctx, "let t = exq(a)\nc = t + 1\nd = t * sinn(b)", arrays, 2, NULL, 0, &o,
                    &k);
  jitc_error_get(ctx, 1, &e1);
  CHECK("errors.failed_let", st == JITC_E_PROGRAM && jitc_error_count(ctx) == 2 &&
        e1.line == 3 && strstr(e1.message, "'sinn'"), "%s", jitc_errmsg(ctx));
  /* So does a new output, or an in-place update of an unknown name (no "unknown name"
  ** again at each use); a declared array keeps its type, so its uses are still checked. */
  st = jitc_compile(ctx, "c = exq(a)\nd = c + 1\ne = c * sinn(b)", arrays, 2, NULL, 0, &o, &k);
  jitc_error_get(ctx, 1, &e1);
  CHECK("errors.failed_output", st == JITC_E_PROGRAM && jitc_error_count(ctx) == 2 &&
        e1.line == 3 && strstr(e1.message, "'sinn'"), "%s", jitc_errmsg(ctx));
  st = jitc_compile(ctx, "c[i] += exq(a)\nd = c * 2", arrays, 2, NULL, 0, &o, &k);
  CHECK("errors.failed_update", st == JITC_E_PROGRAM && jitc_error_count(ctx) == 2,
        "%s", jitc_errmsg(ctx));
  st = jitc_compile(ctx, "a = exq(b)\nc = a << 1", arrays, 2, NULL, 0, &o, &k);
  jitc_error_get(ctx, 1, &e1);
  CHECK("errors.failed_declared", st == JITC_E_PROGRAM && jitc_error_count(ctx) == 2 &&
        e1.line == 2 && strstr(e1.message, "'<<'"), "%s", jitc_errmsg(ctx));

  /* Usage errors. */
  st = jitc_compile(ctx, NULL, arrays, 2, NULL, 0, &o, &k);
  CHECK("usage.null_source", st == JITC_E_USAGE, "status %d", (int)st);
  jitc_array_decl bad[] = {{"a", (jitc_dtype)99}};
  st = jitc_compile(ctx, "a + 1", bad, 1, NULL, 0, &o, &k);
  CHECK("usage.bad_dtype", st == JITC_E_USAGE, "status %d", (int)st);
  jitc_array_decl twice[] = {{"a", JITC_INT32}, {"a", JITC_INT32}};
  st = jitc_compile(ctx, "a + 1", twice, 2, NULL, 0, &o, &k);
  CHECK("usage.declared_twice", st == JITC_E_USAGE, "status %d", (int)st);
  CHECK("usage.null_ctx", jitc_compile(NULL, "a", NULL, 0, NULL, 0, &o, &k) == JITC_E_USAGE,
        "no usage error");
  jitc_kernel_free(NULL);
  jitc_context_free(NULL);
  printf("ok usage.free_null\n");
  jitc_context_free(ctx);
}

static void test_run(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(t);
  jitc_array_decl arrays[] = {{"x", JITC_FLOAT32}, {"y", JITC_FLOAT32}, {"n", JITC_INT32}};
  jitc_scalar_decl scalars[] = {{"alpha", JITC_FLOAT64, 1}, {"k", JITC_INT64, 1}};
  jitc_kernel *kern;
  jitc_status st = jitc_compile(ctx, "y = alpha * x + y\nm = n + k\nz = i", arrays, 3, scalars,
                                2, &o, &kern);
  CHECK("run.compile", st == JITC_OK, "%s", jitc_errmsg(ctx));
  if (st) {
    jitc_context_free(ctx);
    return;
  }
  CHECK("run.array_count", jitc_kernel_array_count(kern) == 5, "%d",
        jitc_kernel_array_count(kern));
  /* Only the cpu target compiles for a machine (cpu_check.c checks which). */
  const char *machine = jitc_kernel_compile_info(kern)->machine;
  CHECK("run.machine", (t == JITC_TARGET_CPU) == (machine != NULL), "%s",
        machine ? machine : "(null)");
  const char *name;
  jitc_role role;
  jitc_dtype dt;
  jitc_kernel_array(kern, 1, &name, &role, &dt);
  CHECK("run.array_y", !strcmp(name, "y") && role == JITC_INOUT && dt == JITC_FLOAT32, "%s %d %d",
        name, (int)role, (int)dt);
  jitc_kernel_array(kern, 3, &name, &role, &dt);
  CHECK("run.array_m", !strcmp(name, "m") && role == JITC_OUTPUT && dt == JITC_INT32, "%s %d %d",
        name, (int)role, (int)dt);
  CHECK("run.find", jitc_kernel_find_array(kern, "z") == 4 &&
        jitc_kernel_find_scalar(kern, "k") == 1 && jitc_kernel_find_array(kern, "q") == -1,
        "find failed");
  int64_t sizes[] = {0, 1, 7, 64, 1000003};
  for (int s = 0; s < 5; s++) {
    int64_t n = sizes[s];
    float *x = malloc((size_t)(n + 1) * 4), *y = malloc((size_t)(n + 1) * 4);
    int32_t *nn = malloc((size_t)(n + 1) * 4), *m = malloc((size_t)(n + 1) * 4);
    int64_t *z = malloc((size_t)(n + 1) * 8);
    for (int64_t e = 0; e < n; e++) {
      x[e] = (float)e * 0.5f;
      y[e] = 1.0f;
      nn[e] = (int32_t)e - 3;
    }
    void *ptrs[] = {x, y, nn, m, z};
    jitc_value vals[] = {{JITC_FLOAT64, {.f = 2.5}}, {JITC_INT64, {.i = 40}}};
    st = jitc_run(ctx, kern, n, ptrs, vals, NULL);
    int bad = 0;
    for (int64_t e = 0; e < n && !bad; e++) {
      float want = (float)2.5 * ((float)e * 0.5f) + 1.0f;
      bad = y[e] != want || m[e] != (int32_t)e - 3 + 40 || z[e] != e;
    }
    char label[64];
    snprintf(label, sizeof label, "run.size_%lld", (long long)n);
    CHECK(label, st == JITC_OK && !bad, "status %d: %s", (int)st, jitc_errmsg(ctx));
    free(x), free(y), free(nn), free(m), free(z);
  }
  /* Scalar conversions: a weak int meeting int32 must fit. */
  float x1[1] = {1}, y1[1] = {1};
  int32_t n1[1] = {1}, m1[1];
  int64_t z1[1];
  void *p1[] = {x1, y1, n1, m1, z1};
  jitc_value big[] = {{JITC_FLOAT64, {.f = 1}}, {JITC_INT64, {.i = 5000000000}}};
  st = jitc_run(ctx, kern, 1, p1, big, NULL);
  CHECK("run.scalar_does_not_fit", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "int32"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  jitc_value frac[] = {{JITC_FLOAT64, {.f = 1}}, {JITC_FLOAT64, {.f = 2.5}}};
  st = jitc_run(ctx, kern, 1, p1, frac, NULL);
  CHECK("run.scalar_fraction_for_int", st == JITC_E_USAGE, "status %d", (int)st);
  CHECK("run.negative_n", jitc_run(ctx, kern, -1, p1, frac, NULL) == JITC_E_USAGE, "accepted");
  CHECK("run.no_scalars", jitc_run(ctx, kern, 1, p1, NULL, NULL) == JITC_E_USAGE, "accepted");
  jitc_kernel_free(kern);
  jitc_context_free(ctx);
  /* The threads a run used: as many as asked where the elements are
  ** enough to split (cpu), one for few elements, one on interp.  (A fresh
  ** context each: its pool, made by the first run, sets how many it has.) */
  int64_t big_n = 1000000;
  double *xs = calloc((size_t)big_n, sizeof *xs);
  for (int want = 1; want <= 3 && xs; want += 2) {
    ctx = jitc_context_new();
    o.threads = want;
    jitc_array_decl one[] = {{"x", JITC_FLOAT64}};
    jitc_run_info info;
    void *px[] = {xs};
    int got[2] = {-1, -1};
    if (jitc_compile(ctx, "x += 1", one, 1, NULL, 0, &o, &kern) == JITC_OK) {
      jitc_run(ctx, kern, big_n, px, NULL, &info);
      got[0] = info.threads;
      jitc_run(ctx, kern, 100, px, NULL, &info);
      got[1] = info.threads;
      jitc_kernel_free(kern);
    }
    int expect = t == JITC_TARGET_CPU ? want : t == JITC_TARGET_INTERP ? 1 : 0;
    char label[64];
    snprintf(label, sizeof label, "run.threads_%d", want);
    CHECK(label, got[0] == expect && got[1] == (t == JITC_TARGET_CUDA ? 0 : 1),
          "threads %d over %lld elements, %d over 100; want %d", got[0], (long long)big_n,
          got[1], expect);
    jitc_context_free(ctx);
  }
  free(xs);
}

/* jitc_run_device's checks that need no GPU, on any target's kernel; with
** a GPU and a cuda kernel, pointers that are not device memory. */
static void test_run_device(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(t);
  jitc_array_decl arrays[] = {{"x", JITC_FLOAT64}, {"y", JITC_INT32}};
  jitc_scalar_decl scalars[] = {{"k", JITC_INT64, 1}};
  jitc_kernel *kern;
  jitc_status st = jitc_compile(ctx, "y[i] += k\nz = x * 2", arrays, 2, scalars, 1, &o, &kern);
  CHECK("device.compile", st == JITC_OK, "%s", jitc_errmsg(ctx));
  if (st) {
    jitc_context_free(ctx);
    return;
  }
  jitc_value v[] = {{JITC_INT64, {.i = 3}}};
  uint64_t fake[] = {0x10000, 0x20000, 0x30000}; /* aligned, never device memory */
  CHECK("device.null_ctx", jitc_run_device(NULL, kern, 4, fake, v, NULL) == JITC_E_USAGE &&
        jitc_run_device(ctx, NULL, 4, fake, v, NULL) == JITC_E_USAGE, "accepted");
  st = jitc_run_device(ctx, kern, -1, fake, v, NULL);
  CHECK("device.negative_n", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "negative"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  st = jitc_run_device(ctx, kern, 4, NULL, v, NULL);
  CHECK("device.null_ptrs", st == JITC_E_USAGE, "status %d %s", (int)st, jitc_errmsg(ctx));
  /* The kernel's order is not the declarations': place each by name. */
  int iy = jitc_kernel_find_array(kern, "y"), iz = jitc_kernel_find_array(kern, "z");
  uint64_t null_y[3], odd_z[3], odd_y[3], host[3];
  memcpy(null_y, fake, sizeof fake);
  null_y[iy] = 0;
  memcpy(odd_z, fake, sizeof fake);
  odd_z[iz] += 4; /* z is float64: 4 is not a multiple of 8 */
  memcpy(odd_y, fake, sizeof fake);
  odd_y[iy] += 2; /* y is int32: 2 is not a multiple of 4 */
  memcpy(host, fake, sizeof fake);
  st = jitc_run_device(ctx, kern, 4, null_y, v, NULL);
  CHECK("device.null_array", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "array 'y' is NULL"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  st = jitc_run_device(ctx, kern, 4, odd_z, v, NULL);
  CHECK("device.misaligned", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "array 'z'") &&
        strstr(jitc_errmsg(ctx), "aligned"), "status %d %s", (int)st, jitc_errmsg(ctx));
  st = jitc_run_device(ctx, kern, 4, odd_y, v, NULL);
  CHECK("device.misaligned_int32", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "array 'y'"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  st = jitc_run_device(ctx, kern, 4, fake, NULL, NULL);
  CHECK("device.no_scalars", st == JITC_E_USAGE, "status %d %s", (int)st, jitc_errmsg(ctx));
  jitc_context *probe = jitc_context_new();
  bool gpu = jitc_target_available(probe, JITC_TARGET_CUDA) == JITC_OK;
  jitc_context_free(probe);
  st = jitc_run_device(ctx, kern, 4, fake, v, NULL);
  if (!gpu)
    CHECK("device.no_gpu", st == JITC_E_UNAVAILABLE && strstr(jitc_errmsg(ctx), "cuda"),
          "status %d %s", (int)st, jitc_errmsg(ctx));
  else if (t != JITC_TARGET_CUDA)
    CHECK("device.other_target", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "compiled for"),
          "status %d %s", (int)st, jitc_errmsg(ctx));
  else /* y is read first: the first array in the kernel's order, the one named */
    CHECK("device.not_device_memory", iy == 0 && st == JITC_E_INPUT &&
          strstr(jitc_errmsg(ctx), "array 'y'"), "status %d %s", (int)st, jitc_errmsg(ctx));
  if (t == JITC_TARGET_CUDA) {
    st = jitc_run_device(ctx, kern, 0, NULL, v, NULL);
    CHECK("device.n_zero", st == JITC_OK, "status %d %s", (int)st, jitc_errmsg(ctx));
    double *hx = calloc(4, 8);
    host[iy] = (uint64_t)(uintptr_t)hx;
    st = jitc_run_device(ctx, kern, 4, host, v, NULL);
    CHECK("device.host_pointer", st == JITC_E_INPUT && strstr(jitc_errmsg(ctx), "array 'y'") &&
          strstr(jitc_errmsg(ctx), "not CUDA device memory"),
          "status %d %s", (int)st, jitc_errmsg(ctx));
    free(hx);
  }
  jitc_kernel_free(kern);
  jitc_context_free(ctx);
}

static void test_emit(void) {
  jitc_context *ctx = jitc_context_new();
  char *text = NULL;
  jitc_options o = opts(JITC_TARGET_INTERP);
  jitc_status st = jitc_emit(ctx, "a[i] += 1", NULL, 0, NULL, 0, &o, "types", &text);
  CHECK("emit.types_needs_declared", st == JITC_E_PROGRAM, "status %d", (int)st);
  o.implicit_inputs = 1;
  o.implicit_dtype = JITC_INT32;
  st = jitc_emit(ctx, "a[i] += 1", NULL, 0, NULL, 0, &o, "types", &text);
  CHECK("emit.types", st == JITC_OK && text &&
        !strcmp(text, "array a: int32 inout\nlet t0: int32 = (+:i32 a 1:i32)\nstore a[i] = t0\n"),
        "%s", text ? text : jitc_errmsg(ctx));
  jitc_free(text);
  st = jitc_emit(ctx, "a", NULL, 0, NULL, 0, &o, "nonsense", &text);
  CHECK("emit.unknown_stage", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "stage"),
        "status %d %s", (int)st, jitc_errmsg(ctx));
  jitc_context_free(ctx);
}

/* Separate contexts on separate threads, each compiling and running its own kernel. */
typedef struct Job {
  jitc_target target;
  int id;
  int ok;
} Job;

static void *worker(void *arg) {
  Job *job = arg;
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(job->target);
  jitc_array_decl arrays[] = {{"a", JITC_INT64}};
  char src[64];
  snprintf(src, sizeof src, "b = a * %d + i", job->id);
  jitc_kernel *k;
  job->ok = 0;
  if (jitc_compile(ctx, src, arrays, 1, NULL, 0, &o, &k) == JITC_OK) {
    enum { N = 10000 };
    int64_t *a = malloc(N * 8), *b = malloc(N * 8);
    for (int r = 0; r < 20; r++) {
      for (int e = 0; e < N; e++)
        a[e] = e + r;
      void *p[] = {a, b};
      if (jitc_run(ctx, k, N, p, NULL, NULL))
        break;
      int good = 1;
      for (int e = 0; e < N; e++)
        good &= b[e] == (int64_t)(e + r) * job->id + e;
      job->ok += good;
    }
    free(a);
    free(b);
    jitc_kernel_free(k);
  }
  jitc_context_free(ctx);
  return NULL;
}

static void test_threads(jitc_target t) {
  pthread_t th[4];
  Job jobs[4];
  for (int j = 0; j < 4; j++) {
    jobs[j] = (Job){t, j + 2, 0};
    pthread_create(&th[j], NULL, worker, &jobs[j]);
  }
  int ok = 1;
  for (int j = 0; j < 4; j++) {
    pthread_join(th[j], NULL);
    ok &= jobs[j].ok == 20;
  }
  CHECK("threads.separate_contexts", ok, "a thread got wrong results");
}

/* jitc_kernel_reduction names the reduction of each result (an alias by
** its own name), and nothing for another array, a bad index or no kernel. */
static void test_reduction_names(void) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(JITC_TARGET_INTERP);
  jitc_array_decl arrays[] = {{"a", JITC_FLOAT64}};
  jitc_kernel *k;
  jitc_status st = jitc_compile(ctx, "c = a + 1\ns = sum(a)\nlo = amin(a)\nat = argmax(a)",
                                arrays, 1, NULL, 0, &o, &k);
  CHECK("reduction.compile", st == JITC_OK, "%s", jitc_errmsg(ctx));
  if (!st) {
    const char *r[6];
    for (int j = 0; j < 6; j++) r[j] = jitc_kernel_reduction(k, j - 1);
    CHECK("reduction.names", !r[0] && !r[1] && !r[2] && r[3] && !strcmp(r[3], "sum") && r[4] &&
          !strcmp(r[4], "min") && r[5] && !strcmp(r[5], "argmax") &&
          !jitc_kernel_reduction(k, 5) && !jitc_kernel_reduction(NULL, 0),
          "%s %s %s", r[3] ? r[3] : "-", r[4] ? r[4] : "-", r[5] ? r[5] : "-");
    jitc_kernel_free(k);
  }
  jitc_context_free(ctx);
}

/* The last line of every run that reaches its end: tests/t_lib.sh fails a
** run that stops before it, whatever its exit status. */
#define END_LINE "lib_test: end"
/* A declared name is the caller's wherever the program does not call it,
** also `i`, a constant or a function's name; the kernel lists the ones the
** program read with the language's meaning. */
static void test_bound_names(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(t);
  jitc_array_decl arrays[] = {{"a", JITC_FLOAT64}, {"i", JITC_FLOAT64}, {"sum", JITC_FLOAT64}};
  jitc_scalar_decl scalars[] = {{"pi", JITC_FLOAT64, 1}, {"nan", JITC_FLOAT64, 1}};
  jitc_kernel *k;
  jitc_status st = jitc_compile(ctx, "c = a + i + pi + nan + sum\ns = sum(sum)\nd = inf + a",
                                arrays, 3, scalars, 2, &o, &k);
  CHECK("bound.compile", st == JITC_OK, "%s", jitc_errmsg(ctx));
  if (st)
    goto out;
  int ai = jitc_kernel_find_array(k, "i"), asum = jitc_kernel_find_array(k, "sum");
  int ac = jitc_kernel_find_array(k, "c"), as = jitc_kernel_find_array(k, "s");
  int ad = jitc_kernel_find_array(k, "d");
  CHECK("bound.language_names", jitc_kernel_language_name_count(k) == 1 &&
        !strcmp(jitc_kernel_language_name(k, 0), "inf") && !jitc_kernel_language_name(k, 1) &&
        !jitc_kernel_language_name(k, -1) && jitc_kernel_language_name_count(NULL) == 0,
        "%d names", jitc_kernel_language_name_count(k));
  double a[3] = {1, 2, 3}, iv[3] = {10, 20, 30}, sv[3] = {100, 200, 300}, c[3], d[3], s = 0;
  void *ptrs[6];
  ptrs[jitc_kernel_find_array(k, "a")] = a;
  ptrs[ai] = iv;
  ptrs[asum] = sv;
  ptrs[ac] = c;
  ptrs[as] = &s;
  ptrs[ad] = d;
  jitc_value vals[2];
  vals[jitc_kernel_find_scalar(k, "pi")] = (jitc_value){JITC_FLOAT64, {.f = 5}};
  vals[jitc_kernel_find_scalar(k, "nan")] = (jitc_value){JITC_FLOAT64, {.f = 0.5}};
  st = jitc_run(ctx, k, 3, ptrs, vals, NULL);
  CHECK("bound.values", st == JITC_OK && c[0] == 116.5 && c[2] == 338.5 && s == 600 &&
        isinf(d[1]), "%s: c %g %g s %g", jitc_errmsg(ctx), c[0], c[2], s);
  jitc_kernel_free(k);
  /* Undeclared, the same names are the language's, listed once each in order. */
  jitc_array_decl a_only[] = {{"a", JITC_FLOAT64}};
  st = jitc_compile(ctx, "c = a + i + pi + i\nd = nan + true", a_only, 1, NULL, 0, &o, &k);
  CHECK("bound.language_names_undeclared", st == JITC_OK &&
        jitc_kernel_language_name_count(k) == 4 &&
        !strcmp(jitc_kernel_language_name(k, 0), "i") &&
        !strcmp(jitc_kernel_language_name(k, 1), "pi") &&
        !strcmp(jitc_kernel_language_name(k, 2), "nan") &&
        !strcmp(jitc_kernel_language_name(k, 3), "true"), "%s", jitc_errmsg(ctx));
  jitc_kernel_free(k);
  /* A declared array named like a constant can be assigned; a scalar cannot. */
  jitc_array_decl pi_out[] = {{"a", JITC_FLOAT64}, {"pi", JITC_FLOAT32}};
  st = jitc_compile(ctx, "pi = a + 1", pi_out, 2, NULL, 0, &o, &k);
  jitc_role role = JITC_INPUT;
  jitc_dtype dt = JITC_BOOL;
  if (!st)
    jitc_kernel_array(k, jitc_kernel_find_array(k, "pi"), NULL, &role, &dt);
  CHECK("bound.assign_array", st == JITC_OK && role == JITC_OUTPUT && dt == JITC_FLOAT32, "%s",
        jitc_errmsg(ctx));
  jitc_kernel_free(k);
  st = jitc_compile(ctx, "pi = a + 1", a_only, 1, scalars, 1, &o, &k);
  CHECK("bound.assign_scalar", st == JITC_E_PROGRAM &&
        strstr(jitc_errmsg(ctx), "'pi': it is a scalar parameter"), "%s", jitc_errmsg(ctx));
out:
  jitc_context_free(ctx);
}

/* Runs `src` (arrays a, c and d) over a = 0 1 2 3 with c given a's own
** memory; a4 is a afterwards. */
static jitc_status alias_run(jitc_context *ctx, const jitc_options *o, const char *src,
                             double *a4) {
  jitc_kernel *k = NULL;
  jitc_status st = jitc_compile(ctx, src, (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0,
                                o, &k);
  if (st)
    return st;
  double d4[4] = {0};
  int64_t s4[1] = {4};
  for (int q = 0; q < 4; q++)
    a4[q] = q;
  jitc_array av[3];
  av[jitc_kernel_find_array(k, "a")] = (jitc_array){a4, 1, s4, NULL};
  av[jitc_kernel_find_array(k, "c")] = (jitc_array){a4, 1, s4, NULL};
  av[jitc_kernel_find_array(k, "d")] = (jitc_array){d4, 1, s4, NULL};
  st = jitc_run_arrays(ctx, k, av, NULL, NULL);
  jitc_kernel_free(k);
  return st;
}

/* Bad arguments: a usage error with a message of this call, never a crash
** or undefined behaviour (implicit_dtype out of range once shifted by it). */
static void test_bad_arguments(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o = opts(t);
  jitc_kernel *k = NULL;
  o.implicit_inputs = 1;
  o.implicit_dtype = (jitc_dtype)99;
  jitc_status st = jitc_compile(ctx, "b = zz + 1", NULL, 0, NULL, 0, &o, &k);
  CHECK("bad_args.implicit_dtype", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "unknown dtype"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  o = opts(t);
  o.threads = -3;
  st = jitc_compile(ctx, "b = a + 1", (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0, &o, &k);
  CHECK("bad_args.threads", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "threads"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  o = opts(t);
  st = jitc_compile(ctx, "b = a + 1", (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0, &o, NULL);
  CHECK("bad_args.compile_out", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "out is NULL") &&
        !strstr(jitc_errmsg(ctx), "threads"), "status %d: %s", (int)st, jitc_errmsg(ctx));
  st = jitc_run(ctx, NULL, 3, NULL, NULL, NULL);
  CHECK("bad_args.run_kernel", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "no kernel"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  st = jitc_compile(ctx, "b = a + 1", (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0, &o, &k);
  st = st ? st : jitc_run_arrays(ctx, k, NULL, NULL, NULL);
  CHECK("bad_args.run_arrays", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "no arrays"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  char *text = NULL;
  st = jitc_emit(ctx, "b = a + 1", (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0, &o, NULL,
                 &text);
  CHECK("bad_args.emit_stage", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "no stage"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  jitc_target tg;
  jitc_dtype dt;
  CHECK("bad_args.parse_null", jitc_target_parse("cpu", NULL) == JITC_E_USAGE &&
        jitc_dtype_parse("f4", NULL) == JITC_E_USAGE && jitc_target_parse(NULL, &tg) &&
        jitc_dtype_parse(NULL, &dt), "a parse with NULL did not refuse");
  jitc_options_init(NULL);
  const char *names[3] = {"abc", NULL, "abd"};
  CHECK("bad_args.nearest_null", jitc_nearest_name("abx", names, 3) == NULL, "a name");
  /* Shapes whose product overflows: an input error, no overflow (UBSan). */
  double x = 1, y = 0;
  int64_t big[2] = {(int64_t)1 << 40, (int64_t)1 << 40}, zs[2] = {0, 0};
  jitc_array arr[2] = {{&x, 2, big, zs}, {&y, 2, big, zs}};
  st = jitc_run_arrays(ctx, k, arr, NULL, NULL);
  CHECK("bad_args.shape_overflow", st == JITC_E_INPUT && strstr(jitc_errmsg(ctx), "2^63"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  /* Any stride on an axis of one element, INT64_MIN too. */
  double xs[3] = {1, 2, 3}, ys[3] = {0, 0, 0};
  int64_t sh[2] = {1, 3}, st1[2] = {INT64_MIN, 8};
  jitc_array arr2[2] = {{xs, 2, sh, st1}, {ys, 2, sh, NULL}};
  st = jitc_run_arrays(ctx, k, arr2, NULL, NULL);
  CHECK("bad_args.stride_min", st == JITC_OK && ys[0] == 2 && ys[2] == 4, "status %d: %s",
        (int)st, jitc_errmsg(ctx));
  jitc_kernel_free(k);
  /* An output of more axes than the inputs would move a reduction's axis:
  ** sum(a, axis=0) of a (3,) beside a (1, 3) output reduced the axis of one. */
  st = jitc_compile(ctx, "c = a + 1\nr = sum(a, axis=0)", (jitc_array_decl[]){{"a", JITC_FLOAT64}},
                    1, NULL, 0, &o, &k);
  if (st == JITC_OK) {
    double a3[3] = {1, 2, 3}, c3[3], r = 0;
    int64_t s3[1] = {3}, s13[2] = {1, 3};
    jitc_array av[3];
    av[jitc_kernel_find_array(k, "a")] = (jitc_array){a3, 1, s3, NULL};
    av[jitc_kernel_find_array(k, "c")] = (jitc_array){c3, 2, s13, NULL};
    av[jitc_kernel_find_array(k, "r")] = (jitc_array){&r, 0, NULL, NULL};
    st = jitc_run_arrays(ctx, k, av, NULL, NULL);
    CHECK("bad_args.output_axes", st == JITC_E_INPUT && strstr(jitc_errmsg(ctx), "axes"),
          "status %d, r %g: %s", (int)st, r, jitc_errmsg(ctx));
    av[jitc_kernel_find_array(k, "c")] = (jitc_array){c3, 1, s3, NULL};
    st = jitc_run_arrays(ctx, k, av, NULL, NULL);
    CHECK("bad_args.output_axes_same", st == JITC_OK && r == 6, "status %d, r %g: %s", (int)st,
          r, jitc_errmsg(ctx));
    jitc_kernel_free(k);
  }
  /* An output given an input's memory, the input read by a later
  ** statement: NumPy's order would read the new values (interp did, cpu
  ** the old ones); refused.  Read in the same statement only: allowed. */
  double a4[4];
  st = alias_run(ctx, &o, "c = a + 1\nd = a * 2", a4);
  CHECK("bad_args.alias_read_later", st == JITC_E_INPUT &&
        strstr(jitc_errmsg(ctx), "same memory") && a4[1] == 1,
        "status %d, a %g: %s", (int)st, a4[1], jitc_errmsg(ctx));
  st = alias_run(ctx, &o, "d = a * 2\nc = a + 1", a4);
  CHECK("bad_args.alias_read_before", st == JITC_OK && a4[1] == 2, "status %d, a %g: %s",
        (int)st, a4[1], jitc_errmsg(ctx));
  jitc_context_free(ctx);
}

/* jitc_host_pin: refused on a target of host memory and on bad arguments;
** on cuda, a run over pinned arrays (copied in place) gives the same as
** over pageable ones, and the memory unpins once; without a GPU, cuda says
** so. */
static void test_host_pin(jitc_target t) {
  jitc_context *ctx = jitc_context_new();
  size_t n = 1 << 18;
  double *m = malloc(2 * n * sizeof *m);
  jitc_status st = jitc_host_pin(ctx, JITC_TARGET_INTERP, m, n);
  CHECK("host_pin.host_target", st == JITC_E_USAGE && strstr(jitc_errmsg(ctx), "nothing to pin"),
        "status %d: %s", (int)st, jitc_errmsg(ctx));
  st = jitc_host_pin(ctx, JITC_TARGET_CUDA, NULL, n);
  CHECK("host_pin.null", st == JITC_E_USAGE, "status %d: %s", (int)st, jitc_errmsg(ctx));
  st = jitc_host_pin(ctx, JITC_TARGET_CUDA, m, 2 * n * sizeof *m);
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    CHECK("host_pin.no_gpu", st == JITC_E_UNAVAILABLE, "status %d: %s", (int)st,
          jitc_errmsg(ctx));
  } else if (t == JITC_TARGET_CUDA) {
    CHECK("host_pin.pin", st == JITC_OK, "status %d: %s", (int)st, jitc_errmsg(ctx));
    jitc_options o = opts(t);
    jitc_kernel *k = NULL;
    for (size_t i = 0; i < n; i++)
      m[i] = (double)i * 0.5 - 7;
    st = jitc_compile(ctx, "b = a * 3 + 1", (jitc_array_decl[]){{"a", JITC_FLOAT64}}, 1, NULL, 0,
                      &o, &k);
    void *ptrs[2] = {m, m + n};
    if (st == JITC_OK)
      st = jitc_run(ctx, k, (int64_t)n, ptrs, NULL, NULL);
    bool same = st == JITC_OK;
    for (size_t i = 0; i < n && same; i++)
      same = m[n + i] == m[i] * 3 + 1;
    CHECK("host_pin.run", same, "status %d: %s", (int)st, jitc_errmsg(ctx));
    jitc_kernel_free(k);
    st = jitc_host_unpin(ctx, JITC_TARGET_CUDA, m);
    CHECK("host_pin.unpin", st == JITC_OK, "status %d: %s", (int)st, jitc_errmsg(ctx));
    st = jitc_host_unpin(ctx, JITC_TARGET_CUDA, m);
    CHECK("host_pin.unpin_twice", st == JITC_E_INTERNAL && strstr(jitc_errmsg(ctx), "unpin"),
          "status %d: %s", (int)st, jitc_errmsg(ctx));
  } else if (st == JITC_OK) {
    jitc_host_unpin(ctx, JITC_TARGET_CUDA, m);
  }
  free(m);
  jitc_context_free(ctx);
}

int main(int argc, char **argv) {
  jitc_target t = JITC_TARGET_INTERP;
  if (argc > 1 && jitc_target_parse(argv[1], &t)) {
    fprintf(stderr, "unknown target %s\n", argv[1]);
    return 2;
  }
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, t) != JITC_OK) {
    printf("skip lib.%s: %s", argv[1], jitc_errmsg(ctx));
    jitc_context_free(ctx);
    puts(END_LINE);
    return 0;
  }
  jitc_context_free(ctx);
  test_errors(t);
  test_run(t);
  test_run_device(t);
  test_emit();
  test_reduction_names();
  test_bound_names(t);
  test_bad_arguments(t);
  test_host_pin(t);
  test_threads(t);
  puts(END_LINE);
  return failures ? 1 : 0;
}
