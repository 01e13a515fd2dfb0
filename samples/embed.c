/*
** embed.c -- using jitc as a library: compile `y = alpha * x + y` once, run
** it on three pairs of arrays of different sizes with a new alpha each time
** (no recompilation), then show how mistakes in a program come back: as
** values with a line and a column, never as a message on the terminal or an
** exit.
**
**   cc -o embed samples/embed.c $(pkg-config --cflags --libs jitc)
**   (in the source tree: samples/README.md gives the command)
*/
#include "jitc.h"

#include <stdio.h>
#include <stdlib.h>

/* Prints the context's diagnostics and returns the exit code for `st`. */
static int fail(jitc_context *ctx, jitc_status st) {
  fprintf(stderr, "embed: %s: %s", jitc_status_name(st), jitc_errmsg(ctx));
  return jitc_exit_code(st);
}

/* Runs the kernel on fresh arrays x = 0, 1, 2, ... and y = 1 of n elements
** and prints the first and last y. */
static jitc_status run_once(jitc_context *ctx, const jitc_kernel *k, int64_t n, double alpha) {
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  jitc_status st = JITC_E_NOMEM;
  if (x && y) {
    for (int64_t e = 0; e < n; e++) {
      x[e] = (float)e;
      y[e] = 1.0f;
    }
    /* One pointer per kernel array, in the kernel's order (x, y here). */
    void *ptrs[2] = {x, y};
    /* A value per kernel scalar; a float64 value goes into a weak float
    ** scalar, which then takes float32 from x and y as a literal would. */
    jitc_value value = {JITC_FLOAT64, {.f = alpha}};
    st = jitc_run(ctx, k, n, ptrs, &value, NULL);
    if (!st)
      printf("n=%lld alpha=%g: y[0]=%g y[%lld]=%g\n", (long long)n, alpha, y[0],
             (long long)(n - 1), y[n - 1]);
  }
  free(x);
  free(y);
  return st;
}

int main(void) {
  jitc_context *ctx = jitc_context_new();
  if (!ctx)
    return jitc_exit_code(JITC_E_NOMEM);

  /* The signature: the dtype of each array we provide, and the scalars. */
  jitc_array_decl arrays[] = {{"x", JITC_FLOAT32}, {"y", JITC_FLOAT32}};
  jitc_scalar_decl scalars[] = {{"alpha", JITC_FLOAT64, 1}}; /* weak, like a literal */
  jitc_options opt;
  jitc_options_init(&opt); /* the cpu target when jitc has LLVM, else interp */

  jitc_kernel *k;
  jitc_status st = jitc_compile(ctx, "y = alpha * x + y", arrays, 2, scalars, 1, &opt, &k);
  if (st) {
    int code = fail(ctx, st);
    jitc_context_free(ctx);
    return code;
  }
  printf("compiled for %s (cache: %s)\n", jitc_target_name(opt.target),
         jitc_kernel_compile_info(k)->cache);

  /* The kernel tells which arrays it uses, in the order jitc_run takes them. */
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dtype;
    jitc_kernel_array(k, a, &name, &role, &dtype);
    printf("array %s: %s, %s\n", name, jitc_dtype_name(dtype),
           role == JITC_INPUT ? "input" : role == JITC_OUTPUT ? "output" : "updated in place");
  }

  /* Three runs on new arrays of new sizes, each with its own alpha: the
  ** kernel is compiled once; sizes and scalar values are run-time data. */
  for (int round = 1; round <= 3 && !st; round++)
    st = run_once(ctx, k, round * 1000 + 1, 0.5 * round);
  jitc_kernel_free(k);
  if (st) {
    int code = fail(ctx, st);
    jitc_context_free(ctx);
    return code;
  }

  /* A program error is a status plus diagnostics kept in the context: each
  ** one a code, a position and a short message for programs that react to
  ** it, and jitc_errmsg() the same formatted for people, with the source
  ** line and a caret.  The checker goes on after an error, so one compile
  ** reports every line that has one.  Nothing was printed and k is NULL. */
  opt.source_name = "axpy.jitc";
  const char *typos = "y = alpha * exq(x) + y\ny = sinn(y)";
  st = jitc_compile(ctx, typos, arrays, 2, scalars, 1, &opt, &k);
  printf("\ncompiling two typos: %s (exit code %d), kernel %s\n", jitc_status_name(st),
         jitc_exit_code(st), k ? "made" : "NULL");
  for (int d = 0; d < jitc_error_count(ctx); d++) {
    jitc_error e;
    if (jitc_error_get(ctx, d, &e) == JITC_OK)
      printf("error %d of %d: %s at line %d, column %d: %s\n", d + 1, jitc_error_count(ctx),
             jitc_status_name(e.code), e.line, e.col, e.message);
  }
  printf("jitc_errmsg:\n%s", jitc_errmsg(ctx));

  jitc_context_free(ctx);
  return st == JITC_E_PROGRAM ? 0 : 1; /* the error was the one we expected */
}
