/*
** fuzz_jitc.c -- a fuzz target over everything jitc does to a program
** before it runs: lex, parse, check, the dumps of every front-end stage,
** and both code generators' emit paths (LLVM IR for cpu, CUDA C for cuda).
** Nothing is executed and no GPU or NVRTC is needed.
**
** One input is one program.  A first line "# args: ..." (the convention of
** tests/golden/) sets the signature with the CLI's spellings: `--dtype T`
** (the type of undeclared inputs), `--dtype NAME=T` (one array), and
** `-D NAME=VALUE[:TYPE]` (a scalar, weak unless TYPE is given).  Without
** it, the type of undeclared inputs comes from a hash of the input, so that
** every dtype meets every program.
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
  sig.opt.implicit_dtype = (jitc_dtype)(h % JITC_NDTYPES);
  sig.opt.fast_math = (h >> 8) & 1;
  parse_args_line(&sig, src);

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
  jitc_kernel_free(k);
done:
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
