/*
** symbols_check.c -- a program that defines functions called parse, check
** and tokenize, with signatures of its own, and uses jitc beside them.
** jitc's internal functions have the same names; when the library exports
** them, one side silently calls the other's (the dynamic linker binds jitc's
** calls to the program's parse) or the static link fails with duplicate
** definitions.  tests/t_symbols.sh links this against both libraries.
**
**   symbols_check TARGET...   compiles and runs `z = x * 2 + y` on each
**                             target; prints "ok NAME" or "FAIL NAME: why"
**                             and exits 1 after a failure.
*/
#include "jitc.h"

#include <stdio.h>
#include <string.h>

/* The program's own functions: nothing like jitc's. */
int parse(const char *s, int base) {
  int v = 0;
  for (; *s >= '0' && *s < '0' + base; s++) v = v * base + (*s - '0');
  return v;
}

double check(double lo, double x, double hi) { return x < lo ? lo : x > hi ? hi : x; }

int tokenize(char *s, char sep, char **out, int max) {
  int n = 0;
  while (n < max) {
    out[n++] = s;
    s = strchr(s, sep);
    if (!s) break;
    *s++ = '\0';
  }
  return n;
}

static int failures;

static void report(const char *name, int ok, const char *why) {
  if (ok)
    printf("ok %s\n", name);
  else {
    int len = (int)strlen(why);
    while (len > 0 && why[len - 1] == '\n') len--;
    printf("FAIL %s: %.*s\n", name, len, why);
    failures++;
  }
}

static void run_on(const char *tname) {
  char name[128], why[512];
  jitc_target t;
  snprintf(name, sizeof name, "%s", tname);
  if (jitc_target_parse(tname, &t) != JITC_OK) {
    report(name, 0, "unknown target");
    return;
  }
  jitc_context *ctx = jitc_context_new();
  if (!ctx) {
    report(name, 0, "jitc_context_new failed");
    return;
  }
  jitc_options opt;
  jitc_options_init(&opt);
  opt.target = t;
  opt.no_cache = 1;
  jitc_array_decl arrays[] = {{"x", JITC_FLOAT64}, {"y", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  jitc_status st = jitc_compile(ctx, "z = x * 2 + y", arrays, 2, NULL, 0, &opt, &k);
  if (st != JITC_OK) {
    snprintf(why, sizeof why, "compile: %s: %s", jitc_status_name(st), jitc_errmsg(ctx));
    report(name, 0, why);
    jitc_context_free(ctx);
    return;
  }
  enum { N = 1001 };
  static double x[N], y[N], z[N];
  for (int i = 0; i < N; i++) {
    x[i] = i * 0.5;
    y[i] = 1;
    z[i] = -1;
  }
  /* The kernel takes its arrays in its own order: place each by name. */
  const char *names[] = {"x", "y", "z"};
  double *data[] = {x, y, z};
  void *ptrs[3] = {NULL, NULL, NULL};
  for (int j = 0; j < 3; j++) {
    int at = jitc_kernel_find_array(k, names[j]);
    if (at >= 0 && at < 3) ptrs[at] = data[j];
  }
  if (jitc_kernel_array_count(k) != 3 || !ptrs[0] || !ptrs[1] || !ptrs[2]) {
    report(name, 0, "the kernel's arrays are not x, y and z");
    jitc_kernel_free(k);
    jitc_context_free(ctx);
    return;
  }
  st = jitc_run(ctx, k, N, ptrs, NULL, NULL);
  int bad = -1;
  for (int i = 0; i < N && st == JITC_OK && bad < 0; i++)
    if (z[i] != i + 1) bad = i;
  if (st != JITC_OK)
    snprintf(why, sizeof why, "run: %s: %s", jitc_status_name(st), jitc_errmsg(ctx));
  else if (bad >= 0)
    snprintf(why, sizeof why, "z[%d] = %g, want %d", bad, z[bad], bad + 1);
  report(name, st == JITC_OK && bad < 0, why);
  jitc_kernel_free(k);
  jitc_context_free(ctx);
}

int main(int argc, char **argv) {
  char text[] = "7,11,x";
  char *parts[4];
  int own = parse("777", 8) == 511 && check(0, 5, 3) == 3 &&
            tokenize(text, ',', parts, 4) == 3 && strcmp(parts[1], "11") == 0;
  report("own_functions", own, "the program's parse, check or tokenize is not its own");
  for (int i = 1; i < argc; i++) run_on(argv[i]);
  return failures != 0;
}
