/*
** embed.c -- using jitc as a library: compile `y = alpha * x + y` once, run
** it on two sizes and two values of alpha without recompiling, and show how
** errors come back as values.
**
**   cc -o embed samples/embed.c $(pkg-config --cflags --libs jitc)
**   (in the source tree: make, then see tests/t_lib.sh for the command)
*/
#include "jitc.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  jitc_context *ctx = jitc_context_new();
  if (!ctx)
    return 1;

  /* The signature: the dtype of each array we provide, and the scalars. */
  jitc_array_decl arrays[] = {{"x", JITC_FLOAT32}, {"y", JITC_FLOAT32}};
  jitc_scalar_decl scalars[] = {{"alpha", JITC_FLOAT64, 1}}; /* weak, like a literal */
  jitc_options opt;
  jitc_options_init(&opt); /* the cpu target when jitc has LLVM, else interp */

  jitc_kernel *k;
  jitc_status st = jitc_compile(ctx, "y = alpha * x + y", arrays, 2, scalars, 1, &opt, &k);
  if (st) {
    fprintf(stderr, "%s", jitc_errmsg(ctx));
    jitc_context_free(ctx);
    return jitc_exit_code(st);
  }

  /* The kernel tells which arrays it uses, in the order jitc_run takes them. */
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dtype;
    jitc_kernel_array(k, a, &name, &role, &dtype);
    printf("array %s: %s, %s\n", name, jitc_dtype_name(dtype),
           role == JITC_INPUT ? "input" : role == JITC_OUTPUT ? "output" : "updated in place");
  }

  /* Run twice on new data and a new alpha: no recompilation. */
  for (int round = 1; round <= 2; round++) {
    int64_t n = round * 1000 + 1;
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    if (!x || !y)
      return 1;
    for (int64_t e = 0; e < n; e++) {
      x[e] = (float)e;
      y[e] = 1.0f;
    }
    void *ptrs[2] = {x, y}; /* kernel order: x, y */
    jitc_value alpha = {JITC_FLOAT64, {.f = 0.5 * round}};
    st = jitc_run(ctx, k, n, ptrs, &alpha, NULL);
    if (st) {
      fprintf(stderr, "%s", jitc_errmsg(ctx));
      return jitc_exit_code(st);
    }
    printf("n=%lld alpha=%g: y[0]=%g y[%lld]=%g\n", (long long)n, alpha.u.f, y[0],
           (long long)(n - 1), y[n - 1]);
    free(x);
    free(y);
  }
  jitc_kernel_free(k);

  /* A program error is a value with a position, never a crash or an exit. */
  st = jitc_compile(ctx, "y = exq(x)", arrays, 2, NULL, 0, &opt, &k);
  jitc_error e;
  if (st == JITC_E_PROGRAM && jitc_error_get(ctx, 0, &e) == JITC_OK)
    printf("error %d at %d:%d: %s\n", (int)e.code, e.line, e.col, e.message);

  jitc_context_free(ctx);
  return 0;
}
