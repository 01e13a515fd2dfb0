/*
** fuzz_jitc.c -- a fuzz target over everything jitc does to a program:
** lex, parse, check, the dumps of every front-end stage, both code
** generators' emit paths (LLVM IR for cpu, CUDA C for cuda), and a run on
** interp over a few elements.  No GPU, NVRTC or JIT is needed.
**
** One input is one program, then optionally a NUL byte and bytes that
** choose types and data (a text seed has none):
**
**   PROGRAM [ NUL T0 T1 ... Tm N DATA... ]
**
** A first line "# args: ..." (the convention of tests/golden/) sets the
** signature with the CLI's spellings: `--dtype T` (the type of undeclared
** inputs), `--dtype NAME=T` (one array), and `-D NAME=VALUE[:TYPE]` (a
** scalar, weak unless TYPE is given).  After the NUL, T0 chooses the type
** of undeclared inputs and Tk that of the k-th input the program reads
** without a declaration, each by its number in jitc.h (the table of
** src/types.h: the byte modulo JITC_NDTYPES), so that every type of the
** table, and every mix of them, meets every program.  N (modulo 17) is the
** element count of the run on interp and DATA the bytes of the inputs'
** elements and the scalars' values, in the kernel's order (used again from
** the start when they run out).  N / 17 (modulo 4) chooses a view of the
** same elements through which the run is made again with jitc_run_arrays
** (reversed, every other element, a matrix in Fortran order, unaligned:
** run_views), which must write the same bytes; N / 68 (0 to 3) chooses
** how one input, the (N / 17 modulo 4)-th modulo their count, is given
** again as a row or one element that the run broadcasts to the shape
** (r, N / r) of the other arrays (r the largest of 1 to 4 dividing N), and
** that run must write the bytes of a run over it repeated to that shape
** (run_broadcast).  Without the tail, a hash
** of the input chooses the type of undeclared inputs, and nothing runs.
**
** Built two ways (tests/fuzz/build.sh):
**   - with clang -fsanitize=fuzzer,address,undefined: a libFuzzer target
**     (`make fuzz`);
**   - with any C compiler, defining FUZZ_REPLAY: a plain driver whose main()
**     feeds it each file named on the command line (directories are walked
**     one level deep), which is how tests/t_fuzz.sh replays the regression
**     corpus under the build being tested.
** Either way a crash, a sanitizer report, an abort from internal_error(), or
** a result that breaks an invariant checked below is a failure.
**
** `FUZZ_JITC_STATS=1` counts the inputs the front end refuses and those
** run on interp (a line every 10000 inputs).
** `FUZZ_JITC_PRINT_DICT=1 fuzz_jitc` prints the names of the vocabulary
** (jitc_vocabulary(): types, functions, aliases, reductions, operators and
** their augmented forms) as a libFuzzer dictionary and exits;
** tests/fuzz/run.sh adds them to tests/fuzz/jitc.dict's syntax.
*/
#include "../../src/jitc.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_DECLS = 16 };

typedef struct Sig {
  jitc_array_decl arrays[MAX_DECLS];
  jitc_scalar_decl scalars[MAX_DECLS];
  int narrays, nscalars;
  char names[2 * MAX_DECLS][64];
  int nnames;
  jitc_options opt;
} Sig;

/* An invariant broke: report and abort, so that libFuzzer keeps the input. */
static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_jitc: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  abort();
}

static char *save_name(Sig *s, const char *p, size_t n) {
  if (s->nnames == 2 * MAX_DECLS || n >= sizeof s->names[0])
    return NULL;
  char *d = s->names[s->nnames++];
  memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

/* Parses the optional "# args:" line into the signature. */
static void parse_args_line(Sig *s, const char *src) {
  if (strncmp(src, "# args:", 7))
    return;
  char line[512];
  size_t n = strcspn(src, "\n");
  if (n >= sizeof line)
    n = sizeof line - 1;
  memcpy(line, src, n);
  line[n] = '\0';
  char *save = NULL;
  const char *prev = "";
  for (char *w = strtok_r(line + 7, " \t", &save); w; prev = w, w = strtok_r(NULL, " \t", &save)) {
    if (!strcmp(prev, "--dtype")) {
      char *eq = strchr(w, '=');
      jitc_dtype t;
      if (!eq) {
        if (!jitc_dtype_parse(w, &t))
          s->opt.implicit_dtype = t;
      } else if (s->narrays < MAX_DECLS && !jitc_dtype_parse(eq + 1, &t)) {
        const char *name = save_name(s, w, (size_t)(eq - w));
        if (name)
          s->arrays[s->narrays++] = (jitc_array_decl){name, t};
      }
    } else if (!strncmp(w, "-D", 2) || !strcmp(prev, "-D")) {
      const char *d = !strncmp(w, "-D", 2) ? w + 2 : w;
      const char *eq = strchr(d, '=');
      if (!eq || s->nscalars == MAX_DECLS)
        continue;
      const char *name = save_name(s, d, (size_t)(eq - d));
      if (!name)
        continue;
      jitc_scalar_decl *sc = &s->scalars[s->nscalars++];
      sc->name = name;
      const char *colon = strrchr(eq, ':');
      jitc_dtype t;
      if (colon && !jitc_dtype_parse(colon + 1, &t)) {
        sc->dtype = t;
        sc->weak = 0;
      } else {
        sc->weak = 1;
        sc->dtype = strchr(eq, '.') || strstr(eq, "inf") || strstr(eq, "nan") ? JITC_FLOAT64
                    : (eq[1] == 'T' || eq[1] == 't' || eq[1] == 'F' || eq[1] == 'f') ? JITC_BOOL
                                                                                   : JITC_INT64;
      }
    }
  }
}

/* Checks the invariants of a failed call: a known status, a message, and
** diagnostics whose positions are sane. */
static void check_failure(jitc_context *ctx, jitc_status st, const char *src) {
  if (st < JITC_E_USAGE || st > JITC_E_NOMEM)
    fail("unknown status", jitc_status_name(st));
  const char *msg = jitc_errmsg(ctx);
  if (!msg || !*msg)
    fail("a failure without a message", jitc_status_name(st));
  int n = jitc_error_count(ctx);
  if (n < 1)
    fail("a failure without diagnostics", msg);
  int lines = 1;
  for (const char *p = src; *p; p++)
    lines += *p == '\n';
  for (int k = 0; k < n; k++) {
    jitc_error e;
    if (jitc_error_get(ctx, k, &e) || !e.message)
      fail("jitc_error_get failed", msg);
    if (e.line < 0 || e.line > lines || e.col < 0)
      fail("a diagnostic outside the source", msg);
  }
}

static jitc_context *ctx;

/* With FUZZ_JITC_STATS set, every 10000 inputs a line on standard error:
** how many the front end refused and how many ran on interp. */
static void count_input(bool accepted, bool ran) {
  static unsigned long inputs, refused, runs;
  static int on = -1;
  if (on < 0)
    on = getenv("FUZZ_JITC_STATS") != NULL;
  inputs++;
  refused += !accepted;
  runs += accepted && ran;
  if (on && inputs % 10000 == 0)
    fprintf(stderr, "fuzz_jitc: %lu inputs, %lu refused by the front end, %lu run on interp\n",
            inputs, refused, runs);
}

/* A byte as a type: its number in jitc.h, which is the row of types.h. */
static jitc_dtype type_of_byte(uint8_t b) { return (jitc_dtype)(b % JITC_NDTYPES); }

/* Declares each input the program reads without a declaration with the
** type the next byte chooses, in the order the kernel lists them (a compile
** for interp finds them).  Returns the bytes used. */
static size_t type_inputs(Sig *s, const char *src, const uint8_t *b, size_t nb) {
  jitc_kernel *k = NULL;
  s->opt.target = JITC_TARGET_INTERP;
  if (!nb || jitc_compile(ctx, src, s->arrays, s->narrays, s->scalars, s->nscalars, &s->opt, &k))
    return 0;
  size_t used = 0;
  for (int a = 0; a < jitc_kernel_array_count(k) && used < nb; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    if (jitc_kernel_array(k, a, &name, &role, &dt) || (role != JITC_INPUT && role != JITC_INOUT))
      continue;
    bool declared = false;
    for (int d = 0; d < s->narrays; d++)
      declared |= !strcmp(s->arrays[d].name, name);
    const char *saved = declared || s->narrays == MAX_DECLS ? NULL
                        : save_name(s, name, strlen(name));
    if (saved)
      s->arrays[s->narrays++] = (jitc_array_decl){saved, type_of_byte(b[used++])};
  }
  jitc_kernel_free(k);
  return used;
}

/* The next n bytes of the data, from the start again when they run out
** (zeros when there are none). */
static void take(uint8_t *out, size_t n, const uint8_t *d, size_t nd, size_t *at) {
  for (size_t j = 0; j < n; j++, (*at)++)
    out[j] = nd ? d[*at % nd] : 0;
}

enum { MAX_RUN = 16 };

/* Where element k of n lies in a view of mode m (run_views): 0 reversed,
** 1 every other element, 2 a matrix (r, n / r) in Fortran order, 3 one
** byte off alignment; its byte offset from the view's memory. */
static size_t view_at(int m, int64_t n, int64_t r, int64_t k, size_t size) {
  switch (m) {
  case 0: return (size_t)(n - 1 - k) * size;
  case 1: return (size_t)(2 * k) * size;
  case 2: return (size_t)((k % (n / r)) * r + k / (n / r)) * size;
  default: return 1 + (size_t)k * size;
  }
}

/* The run jitc_run made, again with jitc_run_arrays over the same elements
** held as a view (view_at): element k keeps its place in C order, so `i`
** and the reductions' blocks do too, and every array written must hold
** what jitc_run wrote, byte for byte. */
static void run_views(const jitc_kernel *k, const char *src, int64_t n, int m,
                      uint8_t *const *first, void *const *want, const jitc_value *vals) {
  int na = jitc_kernel_array_count(k);
  int64_t r = 1;
  for (int64_t d = 2; d < n && r == 1; d++)
    if (n % d == 0) r = d;
  int64_t shape1[1] = {n}, shape2[2] = {r, n / r};
  jitc_array *views = calloc((size_t)na + 1, sizeof *views);
  uint8_t **mem = calloc((size_t)na + 1, sizeof *mem);
  int64_t (*st)[2] = calloc((size_t)na + 1, sizeof *st);
  bool ok = views && mem && st, reads = false;
  for (int a = 0; ok && a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    size_t size = jitc_dtype_size(dt), bytes = (size_t)(2 * n + 1) * size + 1;
    int64_t sz = (int64_t)size;
    reads |= role == JITC_INPUT || role == JITC_INOUT;
    if (!(mem[a] = malloc(bytes))) {
      ok = false;
      break;
    }
    if (role == JITC_RESULT) {
      views[a] = (jitc_array){mem[a], 0, NULL, NULL};
      continue;
    }
    memset(mem[a], 0xa5, bytes);
    for (int64_t e = 0; e < n && role != JITC_OUTPUT; e++)
      memcpy(mem[a] + view_at(m, n, r, e, size), first[a] + (size_t)e * size, size);
    st[a][0] = m == 0 ? -sz : m == 1 ? 2 * sz : sz;
    st[a][1] = r * sz;
    size_t at = m == 0 && n ? (size_t)(n - 1) * size : m == 3;
    views[a] = (jitc_array){mem[a] + at, m == 2 ? 2 : 1, m == 2 ? shape2 : shape1, st[a]};
  }
  /* A program of no input runs over the shape () of one element. */
  jitc_status s = ok && reads ? jitc_run_arrays(ctx, k, views, vals, NULL) : JITC_OK;
  if (s)
    fail("jitc_run_arrays failed where jitc_run ran", jitc_errmsg(ctx));
  for (int a = 0; ok && reads && a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    size_t size = jitc_dtype_size(dt);
    if (role == JITC_RESULT ? memcmp(mem[a], want[a], size) != 0 : false)
      fail("a reduction over a view differs from the contiguous run's", src);
    for (int64_t e = 0; e < n && (role == JITC_OUTPUT || role == JITC_INOUT); e++)
      if (memcmp(mem[a] + view_at(m, n, r, e, size), (const uint8_t *)want[a] + (size_t)e * size,
                 size))
        fail("an element written through a view differs from the contiguous run's", src);
  }
  for (int a = 0; mem && a < na; a++)
    free(mem[a]);
  free(mem);
  free(views);
  free(st);
}

/* The run again with one input given as fewer elements that NumPy
** broadcasts, against the same program over contiguous
** arrays in which that input is repeated to the run's shape (r, m), its
** row or its one element in every place: the two runs must write the same
** bytes.  `i` is the position in C order in the broadcast shape, which is
** the flat index of the repeated run, and a reduction over every element
** counts each repeated element as the repeated run does; so any program
** jitc_run runs (a reduction over axes is refused there) qualifies, save
** one that updates an array in place (no input may be written).  form
** (run_interp) chooses the way, view % (inputs) the input.  The input's
** memory holds only the elements it gives, so that reading past them is
** a sanitizer's report. */
enum {
  BCAST_ROW2,   /* a row of shape (1, m) */
  BCAST_ROW1,   /* a row of shape (m,) */
  BCAST_SCALAR, /* shape (): one element */
  BCAST_STRIDE0 /* shape (r, m), strides (0, size): np.broadcast_to's row, or (0, 0) */
};

static void run_broadcast(const jitc_kernel *k, const char *src, int64_t n, int form, int view,
                          uint8_t *const *first, const jitc_value *vals) {
  int na = jitc_kernel_array_count(k), ninputs = 0, b = -1;
  bool outputs = false, results = false;
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    if (role == JITC_INOUT)
      return;
    ninputs += role == JITC_INPUT;
    outputs |= role == JITC_OUTPUT;
    results |= role == JITC_RESULT;
  }
  if (n == 0 || ninputs == 0)
    return;
  for (int a = 0, c = view % ninputs; a < na && b < 0; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    if (role == JITC_INPUT && c-- == 0)
      b = a;
  }
  /* Alone, the input sets the run's shape unless outputs widen it
  ** (NumPy's out=), which a reduction may not: then a stride 0. */
  if (ninputs == 1 && (results || !outputs))
    form = BCAST_STRIDE0;
  int64_t r = 4;
  while (n % r)
    r--;
  int64_t m = n / r;
  /* Repeated: every place holds the row's element or the one element. */
  bool one = form == BCAST_SCALAR || (form == BCAST_STRIDE0 && view % 2);
  int64_t full[2] = {r, m}, row[2] = {1, m};
  jitc_array *arrays = calloc((size_t)na, sizeof *arrays);
  void **mat = calloc((size_t)na, sizeof *mat), **got = calloc((size_t)na, sizeof *got);
  int64_t (*st)[2] = calloc((size_t)na, sizeof *st);
  bool ok = arrays && mat && got && st;
  for (int a = 0; ok && a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    size_t size = jitc_dtype_size(dt), bytes = size * (size_t)(role == JITC_RESULT ? 1 : n);
    size_t given = a != b ? bytes : size * (size_t)(one ? 1 : m);
    if (!(mat[a] = malloc(bytes)) || !(got[a] = malloc(given))) {
      ok = false;
      break;
    }
    if (role != JITC_INPUT) {
      memset(mat[a], 0xa5, bytes);
      memset(got[a], 0xa5, bytes);
      arrays[a] = role == JITC_RESULT ? (jitc_array){got[a], 0, NULL, NULL}
                                      : (jitc_array){got[a], 2, full, NULL};
      continue;
    }
    memcpy(got[a], first[a], given);
    for (int64_t e = 0; e < n; e++)
      memcpy((uint8_t *)mat[a] + (size_t)e * size,
             first[a] + (size_t)(a != b ? e : one ? 0 : e % m) * size, size);
    arrays[a] = (jitc_array){got[a], 2, full, NULL};
    if (a != b)
      continue;
    st[a][0] = 0;
    st[a][1] = one ? 0 : (int64_t)size;
    arrays[a] = form == BCAST_ROW2     ? (jitc_array){got[a], 2, row, NULL}
                : form == BCAST_ROW1   ? (jitc_array){got[a], 1, row + 1, NULL}
                : form == BCAST_SCALAR ? (jitc_array){got[a], 0, NULL, NULL}
                                       : (jitc_array){got[a], 2, full, st[a]};
  }
  /* The repeated run first: a failure there is the data's (a run may
  ** refuse its values), and then there is nothing to compare. */
  if (ok && !jitc_run(ctx, k, n, mat, vals, NULL)) {
    if (jitc_run_arrays(ctx, k, arrays, vals, NULL))
      fail("a run over a broadcast input failed where its repeated run ran", jitc_errmsg(ctx));
    for (int a = 0; a < na; a++) {
      const char *name;
      jitc_role role;
      jitc_dtype dt;
      jitc_kernel_array(k, a, &name, &role, &dt);
      size_t bytes = jitc_dtype_size(dt) * (size_t)(role == JITC_RESULT ? 1 : n);
      if (role != JITC_INPUT && memcmp(mat[a], got[a], bytes))
        fail("a run over a broadcast input differs from the run over it repeated", src);
    }
  }
  for (int a = 0; a < na && mat && got; a++) {
    free(mat[a]);
    free(got[a]);
  }
  free(arrays);
  free(mat);
  free(got);
  free(st);
}

/* Runs k on interp over the elements and scalar values the bytes give,
** twice: a failure must be one the caller caused, and a second run on
** the same inputs must write the same bytes (docs/language.md: every run
** of a target gives bit-identical results). */
static void run_interp(const jitc_kernel *k, const char *src, const uint8_t *d, size_t nd) {
  int na = jitc_kernel_array_count(k), ns = jitc_kernel_scalar_count(k);
  int64_t n = nd ? d[0] % (MAX_RUN + 1) : 0;
  int view = nd ? d[0] / (MAX_RUN + 1) % 4 : 0;
  int form = nd ? d[0] / (4 * (MAX_RUN + 1)) : 0;
  size_t at = 0;
  d += nd != 0, nd -= nd != 0;
  void **arrays = calloc((size_t)na + 1, sizeof *arrays);
  uint8_t **first = calloc((size_t)na + 1, sizeof *first);
  size_t *bytes = calloc((size_t)na + 1, sizeof *bytes);
  jitc_value *vals = calloc((size_t)ns + 1, sizeof *vals);
  if (!arrays || !first || !bytes || !vals)
    goto out;
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    bytes[a] = jitc_dtype_size(dt) * (size_t)(role == JITC_RESULT ? 1 : n ? n : 1);
    arrays[a] = malloc(bytes[a]);
    first[a] = malloc(bytes[a]);
    if (!arrays[a] || !first[a])
      goto out;
    if (role == JITC_INPUT || role == JITC_INOUT)
      take(arrays[a], bytes[a], d, nd, &at);
    else
      memset(arrays[a], 0xa5, bytes[a]);
    memcpy(first[a], arrays[a], bytes[a]);
  }
  for (int j = 0; j < ns; j++) {
    const char *name;
    jitc_dtype dt;
    jitc_kernel_scalar(k, j, &name, &dt);
    vals[j].dtype = dt;
    if (dt == JITC_BOOL) {
      uint8_t b;
      take(&b, 1, d, nd, &at);
      vals[j].u.i = b & 1;
    } else {
      take((uint8_t *)&vals[j].u, sizeof vals[j].u, d, nd, &at);
    }
  }
  jitc_status st = jitc_run(ctx, k, n, arrays, vals, NULL);
  if (st) {
    check_failure(ctx, st, src);
    if (st != JITC_E_USAGE && st != JITC_E_PROGRAM && st != JITC_E_NOMEM)
      fail("a run failed with an unexpected status", jitc_errmsg(ctx));
    goto out;
  }
  run_views(k, src, n, view, first, arrays, vals);
  run_broadcast(k, src, n, form, view, first, vals);
  /* Again from the same inputs: the same bytes in every array. */
  uint8_t **again = calloc((size_t)na + 1, sizeof *again);
  for (int a = 0; again && a < na; a++) {
    again[a] = malloc(bytes[a]);
    if (again[a])
      memcpy(again[a], arrays[a], bytes[a]);
    memcpy(arrays[a], first[a], bytes[a]);
#ifdef FUZZ_REPLAY
    /* tests/t_fuzz.sh: a changed input must show as two runs that differ. */
    const char *self = getenv("FUZZ_JITC_SELFTEST");
    jitc_role role;
    const char *name;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    if (self && !strcmp(self, "run") && n && role == JITC_INPUT)
      ((uint8_t *)arrays[a])[0] ^= 1;
#endif
  }
  if (again && (st = jitc_run(ctx, k, n, arrays, vals, NULL)))
    fail("a second run of the same inputs failed", jitc_errmsg(ctx));
  for (int a = 0; again && a < na; a++) {
    if (again[a] && memcmp(again[a], arrays[a], bytes[a]))
      fail("two runs of the same inputs differ", src);
    free(again[a]);
  }
  free(again);
out:
  for (int a = 0; a < na; a++) {
    if (arrays)
      free(arrays[a]);
    if (first)
      free(first[a]);
  }
  free(arrays);
  free(first);
  free(bytes);
  free(vals);
}

/* Prints one dictionary entry, the len bytes at p and then suffix, unless
** printed before or holding a space (the statuses' names). */
static void put_entry(const char *p, size_t len, const char *suffix) {
  static char seen[4096];
  char entry[80];
  int n = snprintf(entry, sizeof entry, "\"%.*s%s\"\n", (int)len, p, suffix);
  if (n <= 0 || (size_t)n >= sizeof entry || memchr(p, ' ', len) || strstr(seen, entry))
    return;
  if (strlen(seen) + (size_t)n < sizeof seen)
    strcat(seen, entry);
  fputs(entry, stdout);
}

/* Prints as a dictionary entry the string after each `"KEY": "` of v; with
** aug, also with `=` appended where its object says "augmented": true. */
static void print_values(const char *v, const char *key, bool aug) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  for (const char *p = strstr(v, pat); p; p = strstr(p, pat)) {
    p += strlen(pat);
    size_t len = strcspn(p, "\"");
    put_entry(p, len, "");
    const char *on = strstr(p, "\"augmented\": true"), *close = strchr(p, '}');
    if (aug && on && close && on < close)
      put_entry(p, len, "=");
  }
}

/* The vocabulary's names as dictionary entries: the types' names and
** short names, every op's name and spelling (with augmented forms), and
** the aliases (the keys of "aliases"). */
static void print_dict(void) {
  const char *v = jitc_vocabulary();
  print_values(v, "name", false);
  print_values(v, "short", false);
  print_values(v, "spelling", true);
  const char *p = strstr(v, "\"aliases\": {");
  const char *end = p ? strchr(p, '}') : NULL;
  for (p = p ? strchr(p + 12, '"') : NULL; p && p < end; p = strchr(p, ',')) {
    p = strchr(p, '"');
    if (!p || p > end)
      break;
    put_entry(p + 1, strcspn(p + 1, "\""), "");
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (getenv("FUZZ_JITC_PRINT_DICT")) {
    print_dict();
    exit(0);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20))
    return 0;
  char *src = malloc(size + 1);
  if (!src)
    return 0;
  memcpy(src, data, size);
  src[size] = '\0';
  if (!ctx && !(ctx = jitc_context_new()))
    fail("jitc_context_new", NULL);

  Sig sig;
  memset(&sig, 0, sizeof sig);
  jitc_options_init(&sig.opt);
  sig.opt.implicit_inputs = 1;
  sig.opt.no_cache = 1;
  sig.opt.cuda_arch = "sm_90";
  uint64_t h = 1469598103934665603u;
  for (size_t k = 0; k < size; k++)
    h = (h ^ data[k]) * 1099511628211u;
  /* The tail after the first NUL: T0, the inputs' types, N and the data. */
  size_t len = strlen(src);
  const uint8_t *tail = len < size ? data + len + 1 : NULL;
  size_t ntail = len < size ? size - len - 1 : 0;
  sig.opt.implicit_dtype = ntail ? type_of_byte(tail[0]) : (jitc_dtype)(h % JITC_NDTYPES);
  sig.opt.fast_math = (h >> 8) & 1;
  parse_args_line(&sig, src);
  size_t typed = ntail ? 1 + type_inputs(&sig, src, tail + 1, ntail - 1) : 0;

  /* The front end, one stage at a time: each dump must succeed or fail
  ** like the stage after it would. */
  static const char *const front[] = {"tokens", "ast", "types"};
  jitc_status prev = JITC_OK;
  bool ok = true;
  for (int s = 0; s < 3; s++) {
    sig.opt.target = JITC_TARGET_INTERP;
    char *text = NULL;
    jitc_status st = jitc_emit(ctx, src, sig.arrays, sig.narrays, sig.scalars, sig.nscalars,
                               &sig.opt, front[s], &text);
    if (st) {
      if (text)
        fail("text returned with an error", front[s]);
      check_failure(ctx, st, src);
      if (prev == JITC_OK && st != JITC_E_PROGRAM && st != JITC_E_USAGE && st != JITC_E_NOMEM)
        fail("front-end stage failed with an unexpected status", jitc_status_name(st));
      ok = false;
    } else {
      if (!text)
        fail("no text from a successful emit", front[s]);
      if (prev != JITC_OK)
        fail("a later stage succeeded where an earlier one failed", front[s]);
      jitc_free(text);
    }
    /* tokens can succeed where ast fails; types cannot succeed after ast failed. */
    if (s > 0)
      prev = st;
  }
  if (!ok)
    goto done;

  /* Both code generators, without running anything. */
  static const struct {
    jitc_target t;
    const char *stage;
  } back[] = {{JITC_TARGET_CPU, "llvm"}, {JITC_TARGET_CUDA, "cuda"}};
  for (size_t b = 0; b < sizeof back / sizeof back[0]; b++) {
    sig.opt.target = back[b].t;
    char *text = NULL;
    jitc_status st = jitc_emit(ctx, src, sig.arrays, sig.narrays, sig.scalars, sig.nscalars,
                               &sig.opt, back[b].stage, &text);
    if (st == JITC_E_UNAVAILABLE)
      continue;
    if (st) {
      check_failure(ctx, st, src);
      /* The front end accepted it: a back end may not call it a program error. */
      fail("back end refused a checked program", jitc_errmsg(ctx));
    }
    if (!text || !*text)
      fail("empty back-end text", back[b].stage);
    jitc_free(text);
  }

  /* A kernel for interp, queried: compiles (no execution). */
  sig.opt.target = JITC_TARGET_INTERP;
  jitc_kernel *k = NULL;
  jitc_status st = jitc_compile(ctx, src, sig.arrays, sig.narrays, sig.scalars, sig.nscalars,
                                &sig.opt, &k);
  if (st)
    fail("compile failed after emit succeeded", jitc_errmsg(ctx));
  int na = jitc_kernel_array_count(k);
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    if (jitc_kernel_array(k, a, &name, &role, &dt) || jitc_kernel_find_array(k, name) != a ||
        (unsigned)dt >= JITC_NDTYPES || (unsigned)role > JITC_RESULT)
      fail("inconsistent kernel arrays", name);
  }
  for (int s = 0; s < jitc_kernel_scalar_count(k); s++) {
    const char *name;
    jitc_dtype dt;
    if (jitc_kernel_scalar(k, s, &name, &dt) || jitc_kernel_find_scalar(k, name) != s)
      fail("inconsistent kernel scalars", name);
  }
  if (tail)
    run_interp(k, src, tail + typed, ntail - typed);
  jitc_kernel_free(k);
done:
  count_input(ok, tail != NULL);
  free(src);
  return 0;
}

#ifdef FUZZ_REPLAY
static int replay_file(const char *path, int *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "%s: out of memory\n", path);
    return 1;
  }
  fprintf(stderr, "replay %s\n", path);
  /* Lets tests/t_fuzz.sh see that a broken invariant fails the replay. */
  if (getenv("FUZZ_JITC_SELFTEST") && len >= 8 && !memcmp(buf, "selftest", 8))
    fail("self-test input", path);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  (*count)++;
  return 0;
}

/* Usage: fuzz_jitc_replay FILE_OR_DIR... -- runs every input, then exits 0
** (a failing input aborts, naming itself on stderr first). */
int main(int argc, char **argv) {
  int count = 0, bad = 0;
  for (int a = 1; a < argc; a++) {
    struct stat sb;
    if (stat(argv[a], &sb)) {
      perror(argv[a]);
      bad++;
      continue;
    }
    if (!S_ISDIR(sb.st_mode)) {
      bad += replay_file(argv[a], &count);
      continue;
    }
    struct dirent **ents;
    int n = scandir(argv[a], &ents, NULL, alphasort);
    for (int e = 0; e < n; e++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], ents[e]->d_name);
      if (ents[e]->d_name[0] != '.' && !stat(path, &sb) && S_ISREG(sb.st_mode))
        bad += replay_file(path, &count);
      free(ents[e]);
    }
    free(ents);
  }
  jitc_context_free(ctx);
  printf("replayed %d inputs\n", count);
  return bad ? 1 : 0;
}
#endif
