/*
** main.c -- the jitc command line tool, a client of the public library
** (jitc.h) and the runtime (runtime.h) with no private back doors.
**
**   jitc [options] PROGRAM        jitc [options] -f FILE
**
** It reads the inputs (.npy files or generators), compiles the program for
** the chosen target(s), runs it, reports what happened and writes the
** requested outputs -- all of them or none: outputs go to temporary files
** that are renamed into place only once everything has succeeded.
*/
#include "jitc.h"
#include "../runtime/runtime.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EX_OK = 0, EX_USAGE = 64, EX_DATAERR = 65, EX_NOINPUT = 66, EX_UNAVAILABLE = 69,
       EX_SOFTWARE = 70, EX_CANTCREAT = 73 };

#define MAX_NAMED 1024

typedef struct Named {
  const char *name;
  const char *value;
} Named;

typedef struct Cli {
  const char *program;
  const char *program_file;
  const char *target; /* NULL: the library's default */
  int64_t n;
  bool n_given;
  jitc_dtype dtype;
  Named ins[MAX_NAMED], outs[MAX_NAMED], defs[MAX_NAMED], dtypes[MAX_NAMED];
  int nins, nouts, ndefs, ndtypes;
  const char *emit;
  int repeat;
  bool json, quiet;
  jitc_options opt;
} Cli;

/* One array of the run, with where its data came from. */
typedef struct Arr {
  const char *name;
  jitc_role role;
  jitc_dtype dtype;
  const char *source; /* file name, generator spec, or "new" */
  bool defaulted;     /* an input not given with --in: ones */
  HostArray data;     /* the data this target runs on */
  HostArray initial;  /* inputs and in-place arrays: the data before any run */
} Arr;

static double process_start_ms;

static void die_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "jitc: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'jitc --help'.\n");
  va_end(ap);
  exit(EX_USAGE);
}

static void usage(void) {
  printf(
      "usage: jitc [options] PROGRAM\n"
      "       jitc [options] -f FILE\n"
      "\n"
      "Compiles an element-wise array program and runs it, e.g.\n"
      "  jitc 'a[i] += 1'      jitc -t cuda 'c = exp(a) * b'\n"
      "\n"
      "options:\n"
      "  -t, --target T     interp, cpu, cuda or all (default: cpu when built with LLVM)\n"
      "  -f FILE            read the program from FILE\n"
      "  -n, --size N       element count when no input file fixes it (default 10000000)\n"
      "      --dtype T      type of generated inputs: bool, int32, int64, float32, float64\n"
      "                     (short: b1, i32, i64, f32, f64; default float64)\n"
      "      --dtype NAME=T type of one generated input\n"
      "      --in NAME=SPEC input NAME from FILE.npy, ones, zeros, arange, linspace:LO:HI,\n"
      "                     full:VALUE, rand[:SEED] or randn[:SEED] (inputs not named: ones)\n"
      "      --out NAME=FILE.npy  write array NAME after the run\n"
      "  -D NAME=VALUE[:TYPE]  bind a scalar (weak like a literal unless TYPE is given)\n"
      "      --emit STAGE   print a stage and stop: tokens, ast, types; cpu: llvm, llvm-opt,\n"
      "                     asm; cuda: cuda, ptx\n"
      "      --repeat R     run R times, report the median\n"
      "      --threads N    cpu worker threads (default: all cores)\n"
      "      --fast-math    allow less accurate math functions\n"
      "      --no-cache     do not use the disk cache\n"
      "      --cache-dir D  disk cache directory (default $JITC_CACHE_DIR, $XDG_CACHE_HOME/jitc\n"
      "                     or ~/.cache/jitc)\n"
      "      --arch sm_XY   cuda: GPU architecture for --emit without a GPU\n"
      "      --json         print one JSON object per target\n"
      "  -q, --quiet        print no report (errors still go to stderr)\n"
      "      --version      print the version\n"
      "  -h, --help         print this help\n"
      "\n"
      "exit status: 0 ok, 64 usage, 65 program error, 66 bad input, 69 target not\n"
      "available, 70 internal error, 73 output cannot be written\n");
}

/* ---- argument parsing ---- */

static bool parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end)
    return false;
  *out = v;
  return true;
}

static void add_named(Named *v, int *n, const char *opt, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    die_usage("%s needs NAME=VALUE, got '%s'", opt, arg);
  if (*n == MAX_NAMED)
    die_usage("too many %s options (at most %d)", opt, MAX_NAMED);
  char *name = strndup(arg, (size_t)(eq - arg));
  if (!name) {
    fprintf(stderr, "jitc: out of memory\n");
    exit(EX_SOFTWARE);
  }
  for (int k = 0; k < *n; k++)
    if (!strcmp(v[k].name, name))
      die_usage("%s for '%s' is given twice", opt, name);
  v[*n].name = name;
  v[*n].value = eq + 1;
  (*n)++;
}

/* Whether option `a` is longname (also as "longname=VALUE", setting *val) or shortname. */
static bool takes(const char *a, const char *longname, const char *shortname, const char **val) {
  size_t n = strlen(longname);
  if ((shortname && !strcmp(a, shortname)) || !strcmp(a, longname))
    return true;
  if (!strncmp(a, longname, n) && a[n] == '=') {
    *val = a + n + 1;
    return true;
  }
  return false;
}

static void parse_args(Cli *cli, int argc, char **argv) {
  jitc_options_init(&cli->opt);
  cli->opt.implicit_inputs = 1;
  cli->n = 10000000;
  cli->dtype = JITC_FLOAT64;
  cli->repeat = 1;
  for (int k = 1; k < argc; k++) {
    const char *a = argv[k];
    const char *val = NULL;
    /* Options that take a value accept "--opt VALUE" and "--opt=VALUE". */
#define TAKES(longname, shortname) takes(a, longname, shortname, &val)
#define VALUE() (val ? val : (k + 1 < argc ? argv[++k] : (die_usage("%s needs a value", a), "")))
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage();
      exit(EX_OK);
    } else if (!strcmp(a, "--version")) {
      printf("jitc %s\n", JITC_VERSION);
      exit(EX_OK);
    } else if (TAKES("--target", "-t")) {
      cli->target = VALUE();
    } else if (TAKES("--file", "-f")) {
      cli->program_file = VALUE();
    } else if (TAKES("--size", "-n")) {
      const char *v = VALUE();
      if (!parse_i64(v, &cli->n) || cli->n < 0)
        die_usage("--size needs a non-negative integer, got '%s'", v);
      cli->n_given = true;
    } else if (TAKES("--dtype", NULL)) {
      const char *v = VALUE();
      jitc_dtype t;
      if (strchr(v, '=')) { /* --dtype NAME=T: one generated array */
        add_named(cli->dtypes, &cli->ndtypes, "--dtype", v);
        v = cli->dtypes[cli->ndtypes - 1].value;
        if (jitc_dtype_parse(v, &t))
          die_usage("unknown dtype '%s' (use bool, int32, int64, float32 or float64)", v);
      } else if (jitc_dtype_parse(v, &cli->dtype)) {
        die_usage("unknown dtype '%s' (use bool, int32, int64, float32 or float64)", v);
      }
    } else if (TAKES("--in", NULL)) {
      add_named(cli->ins, &cli->nins, "--in", VALUE());
    } else if (TAKES("--out", NULL)) {
      add_named(cli->outs, &cli->nouts, "--out", VALUE());
    } else if (!strncmp(a, "-D", 2)) {
      add_named(cli->defs, &cli->ndefs, "-D", a[2] ? a + 2 : VALUE());
    } else if (TAKES("--emit", NULL)) {
      cli->emit = VALUE();
    } else if (TAKES("--repeat", NULL)) {
      const char *v = VALUE();
      int64_t r;
      if (!parse_i64(v, &r) || r < 1 || r > 1000000)
        die_usage("--repeat needs a count from 1 to 1000000, got '%s'", v);
      cli->repeat = (int)r;
    } else if (TAKES("--threads", NULL)) {
      const char *v = VALUE();
      int64_t t;
      if (!parse_i64(v, &t) || t < 0 || t > 4096)
        die_usage("--threads needs a count from 0 to 4096, got '%s'", v);
      cli->opt.threads = (int)t;
    } else if (!strcmp(a, "--fast-math")) {
      cli->opt.fast_math = 1;
    } else if (!strcmp(a, "--no-cache")) {
      cli->opt.no_cache = 1;
    } else if (TAKES("--cache-dir", NULL)) {
      cli->opt.cache_dir = VALUE();
    } else if (TAKES("--arch", NULL)) {
      cli->opt.cuda_arch = VALUE();
    } else if (!strcmp(a, "--json")) {
      cli->json = true;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      cli->quiet = true;
    } else if (!strcmp(a, "--")) {
      if (k + 1 < argc && !cli->program)
        cli->program = argv[++k];
      if (k + 1 < argc)
        die_usage("unexpected argument '%s'", argv[k + 1]);
      break;
    } else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
      die_usage("unknown option '%s'", a);
    } else if (!cli->program) {
      cli->program = a;
    } else {
      die_usage("more than one program given ('%s' and '%s'); quote the program", cli->program,
                a);
    }
#undef TAKES
#undef VALUE
  }
  if (cli->program && cli->program_file)
    die_usage("give the program either as an argument or with -f, not both");
  if (!cli->program && !cli->program_file)
    die_usage("no program given");
}

/* Reads the whole program file; exits 66 on failure. */
static char *read_program_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "jitc: cannot read program file '%s': %s\n", path, strerror(errno));
    exit(EX_NOINPUT);
  }
  size_t cap = 4096, len = 0;
  char *s = malloc(cap);
  for (;;) {
    if (!s) {
      fprintf(stderr, "jitc: out of memory reading '%s'\n", path);
      exit(EX_SOFTWARE);
    }
    len += fread(s + len, 1, cap - len - 1, f);
    if (ferror(f)) {
      fprintf(stderr, "jitc: cannot read program file '%s': %s\n", path, strerror(errno));
      exit(EX_NOINPUT);
    }
    if (feof(f))
      break;
    if (cap > (64u << 20)) {
      fprintf(stderr, "jitc: program file '%s' is larger than 64 MiB\n", path);
      exit(EX_NOINPUT);
    }
    cap *= 2;
    s = realloc(s, cap);
  }
  fclose(f);
  s[len] = '\0';
  if (strlen(s) != len) {
    fprintf(stderr, "jitc: program file '%s' contains a NUL byte\n", path);
    exit(EX_NOINPUT);
  }
  return s;
}

/* -D NAME=VALUE[:TYPE]: a weak literal, or a typed scalar. */
static void parse_def(const Named *d, jitc_scalar_decl *decl, jitc_value *val) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", d->value);
  char *colon = strrchr(buf, ':');
  decl->name = d->name;
  decl->weak = 1;
  if (colon) {
    *colon = '\0';
    if (jitc_dtype_parse(colon + 1, &decl->dtype))
      die_usage("-D %s: unknown type '%s' (use bool, int32, int64, float32 or float64)",
                d->name, colon + 1);
    decl->weak = 0;
  }
  const char *v = buf;
  int64_t i;
  char *end;
  if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "False") || !strcmp(v, "false")) {
    val->dtype = JITC_BOOL;
    val->u.i = v[0] == 'T' || v[0] == 't';
  } else if (parse_i64(v, &i)) {
    val->dtype = JITC_INT64;
    val->u.i = i;
  } else {
    errno = 0;
    double f = strtod(v, &end);
    if (end == v || *end || !*v)
      die_usage("-D %s: '%s' is not a number (use an integer, a float, True or False)",
                d->name, v);
    val->dtype = JITC_FLOAT64;
    val->u.f = f;
  }
  if (decl->weak)
    decl->dtype = val->dtype;
}

/* ---- reporting ---- */

static const char *role_name(jitc_role r) {
  return r == JITC_INPUT ? "input" : r == JITC_OUTPUT ? "output" : "inout";
}

static void shape_text(char *buf, size_t size, const HostArray *a) {
  size_t len = (size_t)snprintf(buf, size, "(");
  for (int d = 0; d < a->ndim && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "", (long long)a->shape[d]);
  if (len < size)
    snprintf(buf + len, size - len, a->ndim == 1 ? ",)" : ")");
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static double median(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rewrites a's elements from one memory order to the other (C <-> Fortran),
** so that arrays of mixed orders pair their elements by index.  Returns -1
** on out of memory. */
static int reorder(HostArray *a, bool to_fortran) {
  if (a->fortran == to_fortran)
    return 0;
  if (a->ndim > 1 && a->n > 1) {
    size_t esize = jitc_dtype_size(a->dtype);
    char *tmp = malloc((size_t)a->n * esize);
    if (!tmp)
      return -1;
    /* Walk the elements in the source order with an index counter; the
    ** destination offset follows from the other order's strides. */
    int64_t idx[NPY_MAXDIMS] = {0}, dstride[NPY_MAXDIMS];
    int nd = a->ndim;
    if (to_fortran) {
      dstride[0] = 1;
      for (int d = 1; d < nd; d++)
        dstride[d] = dstride[d - 1] * a->shape[d - 1];
    } else {
      dstride[nd - 1] = 1;
      for (int d = nd - 2; d >= 0; d--)
        dstride[d] = dstride[d + 1] * a->shape[d + 1];
    }
    for (int64_t e = 0; e < a->n; e++) {
      int64_t off = 0;
      for (int d = 0; d < nd; d++)
        off += idx[d] * dstride[d];
      memcpy(tmp + off * (int64_t)esize, (char *)a->data + e * (int64_t)esize, esize);
      /* Next index in the source order: C varies the last dimension fastest. */
      for (int q = 0; q < nd; q++) {
        int d = a->fortran ? q : nd - 1 - q;
        if (++idx[d] < a->shape[d])
          break;
        idx[d] = 0;
      }
    }
    memcpy(a->data, tmp, (size_t)a->n * esize);
    free(tmp);
  }
  a->fortran = to_fortran;
  return 0;
}

/* Whether the arrays of every target fit in the memory available now.
** Linux grants allocations it cannot back, and the out-of-memory killer
** then ends the process half-way; refusing up front gives a clear message
** before anything is touched.  Without /proc/meminfo it assumes they fit. */
static bool enough_memory(const jitc_kernel *k, int64_t n, int ntargets) {
  double need = 0;
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, NULL, &role, &dt);
    double bytes = (double)n * (double)jitc_dtype_size(dt);
    need += bytes * ntargets + (role == JITC_OUTPUT ? 0 : bytes); /* + the kept inputs */
  }
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f)
    return true;
  char line[256];
  double avail = -1, swap = 0;
  while (fgets(line, sizeof line, f)) {
    long long kb;
    if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
      avail = (double)kb * 1024;
    else if (sscanf(line, "SwapFree: %lld kB", &kb) == 1)
      swap = (double)kb * 1024;
  }
  fclose(f);
  if (avail < 0 || need <= avail + swap)
    return true;
  fprintf(stderr, "jitc: %lld elements need %.1f GiB of memory for the arrays but %.1f GiB is "
          "available; use a smaller -n\n", (long long)n, need / 1073741824.0,
          (avail + swap) / 1073741824.0);
  return false;
}

/* ---- one target's run ---- */

typedef struct Result {
  jitc_target target;
  bool ran;
  jitc_status status;
  double compile_ms, run_ms, total_ms;
  jitc_compile_info cinfo;
  jitc_run_info rinfo;
  Arr *arrs;
} Result;

/* Bytes a run moves: each array read or written once, in-place ones both. */
static double moved_bytes(const Arr *arrs, int narrs, int64_t n) {
  double bytes = 0;
  for (int a = 0; a < narrs; a++)
    bytes += (double)n * (double)jitc_dtype_size(arrs[a].dtype) *
             (arrs[a].role == JITC_INOUT ? 2 : 1);
  return bytes;
}

static int fail_status(jitc_context *ctx, jitc_status st) {
  fprintf(stderr, "%s", jitc_errmsg(ctx));
  return jitc_exit_code(st);
}

int main(int argc, char **argv) {
  static Cli cli;
  process_start_ms = rt_now_ms();
  parse_args(&cli, argc, argv);
  /* Static, so that what a usage error's exit() leaves is still reachable. */
  static char *source;
  source = cli.program_file ? read_program_file(cli.program_file) : (char *)cli.program;
  static jitc_context *ctx;
  ctx = jitc_context_new();
  if (!ctx) {
    fprintf(stderr, "jitc: out of memory\n");
    return EX_SOFTWARE;
  }
  char err[1024];
  static HostArray files[MAX_NAMED];
  Result results[JITC_NTARGETS];
  memset(results, 0, sizeof results);
  jitc_kernel *kernels[JITC_NTARGETS] = {0};
  int exit_status = EX_OK;
  int nres = 0;
  int narrs = 0;

  /* Inputs from files first: they fix the shape and their dtypes. */
  const HostArray *shape_from = NULL;
  const char *shape_name = NULL;
  for (int k = 0; k < cli.nins; k++) {
    if (gen_is_spec(cli.ins[k].value))
      continue;
    if (npy_read(cli.ins[k].value, &files[k], err, sizeof err)) {
      fprintf(stderr, "jitc: %s\n", err);
      exit_status = EX_NOINPUT;
      goto finish;
    }
    if (!shape_from) {
      shape_from = &files[k];
      shape_name = cli.ins[k].name;
    } else {
      bool same = files[k].ndim == shape_from->ndim;
      for (int d = 0; same && d < files[k].ndim; d++)
        same = files[k].shape[d] == shape_from->shape[d];
      if (!same) {
        char s1[256], s2[256];
        shape_text(s1, sizeof s1, shape_from);
        shape_text(s2, sizeof s2, &files[k]);
        fprintf(stderr, "jitc: arrays must have the same shape: '%s' is %s but '%s' is %s\n",
                shape_name, s1, cli.ins[k].name, s2);
        exit_status = EX_NOINPUT;
        goto finish;
      }
    }
  }
  int64_t n = cli.n;
  /* Arrays are processed flat in memory order, so all must share one order:
  ** the first file's.  Others are rewritten into it. */
  for (int k = 0; shape_from && k < cli.nins; k++)
    if (files[k].data && reorder(&files[k], shape_from->fortran)) {
      fprintf(stderr, "jitc: out of memory reordering '%s'\n", cli.ins[k].name);
      exit_status = EX_SOFTWARE;
      goto finish;
    }
  if (shape_from) {
    if (cli.n_given && cli.n != shape_from->n) {
      char s1[256];
      shape_text(s1, sizeof s1, shape_from);
      fprintf(stderr, "jitc: --size %lld disagrees with input '%s' of shape %s\n",
              (long long)cli.n, shape_name, s1);
      exit_status = EX_NOINPUT;
      goto finish;
    }
    n = shape_from->n;
  }

  /* The signature: given inputs, and scalars. */
  jitc_array_decl decls[2 * MAX_NAMED];
  int ndecls = 0;
  for (int k = 0; k < cli.nins; k++) {
    jitc_dtype t = cli.dtype;
    for (int q = 0; q < cli.ndtypes; q++)
      if (!strcmp(cli.dtypes[q].name, cli.ins[k].name)) {
        if (files[k].data)
          die_usage("--dtype %s: '%s' comes from a file, whose dtype it keeps", cli.ins[k].name,
                    cli.ins[k].name);
        jitc_dtype_parse(cli.dtypes[q].value, &t);
      }
    decls[ndecls++] = (jitc_array_decl){cli.ins[k].name, files[k].data ? files[k].dtype : t};
  }
  /* --dtype NAME=T for an input not given with --in: a default input of that type. */
  for (int q = 0; q < cli.ndtypes; q++) {
    bool found = false;
    for (int k = 0; k < cli.nins; k++)
      found |= !strcmp(cli.dtypes[q].name, cli.ins[k].name);
    if (!found) {
      jitc_dtype t;
      jitc_dtype_parse(cli.dtypes[q].value, &t);
      decls[ndecls++] = (jitc_array_decl){cli.dtypes[q].name, t};
    }
  }
  jitc_scalar_decl sdecls[MAX_NAMED];
  jitc_value svals[MAX_NAMED];
  for (int k = 0; k < cli.ndefs; k++)
    parse_def(&cli.defs[k], &sdecls[k], &svals[k]);
  cli.opt.implicit_dtype = cli.dtype;

  /* Targets to run. */
  jitc_target tlist[JITC_NTARGETS];
  int ntargets = 0;
  bool all = cli.target && !strcmp(cli.target, "all");
  if (all) {
    for (int t = 0; t < JITC_NTARGETS; t++)
      if (jitc_target_available(ctx, (jitc_target)t) == JITC_OK)
        tlist[ntargets++] = (jitc_target)t;
      else if (!cli.quiet && !cli.emit)
        fprintf(stderr, "jitc: skipping target %s: %s", jitc_target_name((jitc_target)t),
                jitc_errmsg(ctx));
  } else {
    jitc_target t = cli.opt.target;
    /* --emit of a back end's stage picks that back end unless -t says otherwise. */
    if (!cli.target && cli.emit)
      t = !strcmp(cli.emit, "cuda") || !strcmp(cli.emit, "ptx") ? JITC_TARGET_CUDA
          : !strcmp(cli.emit, "llvm") || !strcmp(cli.emit, "llvm-opt") ||
                  !strcmp(cli.emit, "asm") ? JITC_TARGET_CPU : t;
    if (cli.target && jitc_target_parse(cli.target, &t))
      die_usage("unknown target '%s' (use interp, cpu, cuda or all)", cli.target);
    tlist[ntargets++] = t;
  }

  if (cli.emit) {
    for (int j = 0; j < ntargets; j++) {
      cli.opt.target = tlist[j];
      char *text = NULL;
      jitc_status st = jitc_emit(ctx, source, decls, ndecls, sdecls, cli.ndefs, &cli.opt,
                                 cli.emit, &text);
      if (st) {
        exit_status = fail_status(ctx, st);
        goto finish;
      }
      fputs(text, stdout);
      jitc_free(text);
      bool frontend = !strcmp(cli.emit, "tokens") || !strcmp(cli.emit, "ast") ||
                      !strcmp(cli.emit, "types");
      if (frontend)
        break;
    }
    goto finish;
  }

  /* Every target runs on copies of the same inputs, made for the first. */
  Arr *ref_arrs = NULL;

  for (int j = 0; j < ntargets; j++) {
    Result *r = &results[nres++];
    r->target = tlist[j];
    cli.opt.target = tlist[j];
    double t0 = rt_now_ms();
    jitc_status st = jitc_compile(ctx, source, decls, ndecls, sdecls, cli.ndefs, &cli.opt,
                                  &kernels[j]);
    r->compile_ms = rt_now_ms() - t0;
    if (st) {
      exit_status = fail_status(ctx, st);
      goto finish;
    }
    jitc_kernel *k = kernels[j];
    r->cinfo = *jitc_kernel_compile_info(k);
    narrs = jitc_kernel_array_count(k);
    if (j == 0 && !enough_memory(k, n, ntargets)) {
      exit_status = EX_SOFTWARE;
      goto finish;
    }
    Arr *arrs = calloc((size_t)narrs + 1, sizeof *arrs);
    r->arrs = arrs;
    if (!arrs) {
      fprintf(stderr, "jitc: out of memory\n");
      exit_status = EX_SOFTWARE;
      goto finish;
    }
    void **ptrs = calloc((size_t)narrs + 1, sizeof *ptrs);
    if (!ptrs) {
      fprintf(stderr, "jitc: out of memory\n");
      exit_status = EX_SOFTWARE;
      goto finish;
    }
    for (int a = 0; a < narrs; a++) {
      Arr *A = &arrs[a];
      jitc_kernel_array(k, a, &A->name, &A->role, &A->dtype);
      int in = -1;
      for (int q = 0; q < cli.nins; q++)
        if (!strcmp(cli.ins[q].name, A->name))
          in = q;
      if (host_array_alloc(&A->data, A->dtype, n, err, sizeof err)) {
        fprintf(stderr, "jitc: array '%s': %s\n", A->name, err);
        exit_status = EX_SOFTWARE;
        free(ptrs);
        goto finish;
      }
      if (shape_from) {
        A->data.ndim = shape_from->ndim;
        memcpy(A->data.shape, shape_from->shape, sizeof A->data.shape);
        A->data.fortran = shape_from->fortran;
      }
      if (ref_arrs) {
        /* Later targets: copies of the first target's inputs. */
        if (A->role != JITC_OUTPUT)
          memcpy(A->data.data, ref_arrs[a].initial.data, (size_t)n * jitc_dtype_size(A->dtype));
        A->source = ref_arrs[a].source;
        A->defaulted = ref_arrs[a].defaulted;
      } else if (A->role == JITC_OUTPUT) {
        A->source = in >= 0 ? cli.ins[in].value : "new";
        if (in >= 0 && files[in].data)
          memcpy(A->data.data, files[in].data, (size_t)n * jitc_dtype_size(A->dtype));
        else /* poison (an unwritten element shows), and fault the pages in before timing */
          memset(A->data.data, 0xff, (size_t)n * jitc_dtype_size(A->dtype));
      } else if (in >= 0 && files[in].data) {
        memcpy(A->data.data, files[in].data, (size_t)n * jitc_dtype_size(A->dtype));
        A->source = cli.ins[in].value;
      } else {
        const char *spec = in >= 0 ? cli.ins[in].value : "ones";
        A->defaulted = in < 0;
        A->source = spec;
        /* Generated data follows NumPy's C order (np.arange(n).reshape(shape)). */
        bool want_fortran = A->data.fortran;
        A->data.fortran = false;
        if (gen_fill(&A->data, spec, err, sizeof err)) {
          fprintf(stderr, "jitc: input '%s': %s\n", A->name, err);
          exit_status = EX_NOINPUT;
          free(ptrs);
          goto finish;
        }
        if (reorder(&A->data, want_fortran)) {
          fprintf(stderr, "jitc: out of memory\n");
          exit_status = EX_SOFTWARE;
          free(ptrs);
          goto finish;
        }
      }
      if (A->role != JITC_OUTPUT && !ref_arrs) {
        /* Keep the starting data: repeats and other targets start from it. */
        if (host_array_alloc(&A->initial, A->dtype, n, err, sizeof err)) {
          fprintf(stderr, "jitc: array '%s': %s\n", A->name, err);
          exit_status = EX_SOFTWARE;
          free(ptrs);
          goto finish;
        }
        memcpy(A->initial.data, A->data.data, (size_t)n * jitc_dtype_size(A->dtype));
      }
      ptrs[a] = A->data.data;
    }
    if (!ref_arrs)
      ref_arrs = arrs;
    int nsc = jitc_kernel_scalar_count(k);
    jitc_value vals[MAX_NAMED];
    for (int s = 0; s < nsc; s++) {
      const char *sname;
      jitc_kernel_scalar(k, s, &sname, NULL);
      for (int q = 0; q < cli.ndefs; q++)
        if (!strcmp(cli.defs[q].name, sname))
          vals[s] = svals[q];
    }
    double *times = calloc((size_t)cli.repeat, sizeof *times);
    if (!times) {
      free(ptrs);
      exit_status = EX_SOFTWARE;
      goto finish;
    }
    for (int rep = 0; rep < cli.repeat; rep++) {
      if (rep > 0)
        for (int a = 0; a < narrs; a++)
          if (arrs[a].role == JITC_INOUT)
            memcpy(arrs[a].data.data, ref_arrs[a].initial.data,
                   (size_t)n * jitc_dtype_size(arrs[a].dtype));
      double t1 = rt_now_ms();
      st = jitc_run(ctx, k, n, ptrs, vals, &r->rinfo);
      times[rep] = rt_now_ms() - t1;
      if (st) {
        free(times);
        free(ptrs);
        exit_status = fail_status(ctx, st);
        goto finish;
      }
    }
    r->run_ms = median(times, cli.repeat);
    r->ran = true;
    r->total_ms = rt_now_ms() - process_start_ms;
    free(times);
    free(ptrs);
  }

  /* Check that every target agrees with the first: the largest difference in
  ** ulps, and a failure when an element differs by more than 4 ulps and by
  ** more than 8 machine epsilons of the output's largest magnitude (the
  ** second allowance absorbs cancellation in sums of rounded terms). */
  if (nres > 1) {
    for (int j = 1; j < nres; j++)
      for (int a = 0; a < narrs; a++) {
        Arr *A = &results[0].arrs[a], *B = &results[j].arrs[a];
        if (A->role == JITC_INPUT)
          continue;
        size_t esize = jitc_dtype_size(A->dtype);
        bool f32 = A->dtype == JITC_FLOAT32, fp = f32 || A->dtype == JITC_FLOAT64;
        double scale = 0;
        for (int64_t e = 0; fp && e < n; e++) {
          double x = f32 ? ((float *)A->data.data)[e] : ((double *)A->data.data)[e];
          if (isfinite(x) && fabs(x) > scale)
            scale = fabs(x);
        }
        double abs_tol = 8 * (f32 ? 0x1p-23 : 0x1p-52) * scale;
        double ulps = 0;
        int64_t where = -1, bad = -1;
        for (int64_t e = 0; e < n; e++) {
          double d = 0, x = 0, y = 0;
          if (fp) {
            x = f32 ? ((float *)A->data.data)[e] : ((double *)A->data.data)[e];
            y = f32 ? ((float *)B->data.data)[e] : ((double *)B->data.data)[e];
            if ((isnan(x) && isnan(y)) || x == y)
              continue;
            if (!isfinite(x) || !isfinite(y)) {
              d = INFINITY;
            } else {
              double ax = fabs(x);
              double u = f32 ? (double)(nextafterf((float)ax, INFINITY) - (float)ax)
                             : nextafter(ax, INFINITY) - ax;
              d = fabs(x - y) / u;
            }
          } else if (memcmp((char *)A->data.data + e * (int64_t)esize,
                            (char *)B->data.data + e * (int64_t)esize, esize)) {
            d = INFINITY;
          }
          if (d > ulps) {
            ulps = d;
            where = e;
          }
          double tol = cli.opt.fast_math ? 1e6 : 4;
          if (bad < 0 && d > tol && !(fp && isfinite(d) && fabs(x - y) <= abs_tol))
            bad = e;
        }
        if (!cli.quiet)
          printf("%s: %s vs %s: largest difference %.3g ulp%s\n", A->name,
                 jitc_target_name(results[0].target), jitc_target_name(results[j].target), ulps,
                 where >= 0 ? "" : " (identical)");
        if (bad >= 0) {
          char *x = format_value((char *)A->data.data + bad * (int64_t)esize, A->dtype);
          char *y = format_value((char *)B->data.data + bad * (int64_t)esize, A->dtype);
          fprintf(stderr, "jitc: targets disagree on '%s' at element %lld: %s gives %s, %s "
                  "gives %s\n", A->name, (long long)bad, jitc_target_name(results[0].target),
                  x ? x : "?", jitc_target_name(results[j].target), y ? y : "?");
          free(x);
          free(y);
          exit_status = EX_SOFTWARE;
        }
      }
  }

  /* Report. */
  for (int j = 0; j < nres && !cli.quiet; j++) {
    Result *r = &results[j];
    if (!r->ran)
      continue;
    double bytes = moved_bytes(r->arrs, narrs, n);
    double gbps = r->run_ms > 0 ? bytes / (r->run_ms * 1e6) : 0;
    const char *device = jitc_target_device(ctx, r->target);
    if (cli.json) {
      printf("{\"target\": ");
      json_string(stdout, jitc_target_name(r->target));
      printf(", \"device\": ");
      json_string(stdout, device);
      printf(", \"n\": %lld, \"program\": ", (long long)n);
      json_string(stdout, source);
      printf(", \"arrays\": [");
      for (int a = 0; a < narrs; a++) {
        Arr *A = &r->arrs[a];
        printf("%s{\"name\": ", a ? ", " : "");
        json_string(stdout, A->name);
        printf(", \"role\": \"%s\", \"dtype\": \"%s\", \"shape\": [", role_name(A->role),
               jitc_dtype_name(A->dtype));
        for (int d = 0; d < A->data.ndim; d++)
          printf("%s%lld", d ? ", " : "", (long long)A->data.shape[d]);
        printf("], \"source\": ");
        json_string(stdout, A->source);
        printf("}");
      }
      printf("], \"compile_ms\": %.4f, \"cache\": \"%s\", \"frontend_ms\": %.4f, \"ir_ms\": %.4f, "
             "\"optimize_ms\": %.4f, \"codegen_ms\": %.4f, \"load_ms\": %.4f",
             r->compile_ms, r->cinfo.cache ? r->cinfo.cache : "none", r->cinfo.frontend_ms,
             r->cinfo.ir_ms, r->cinfo.optimize_ms, r->cinfo.codegen_ms, r->cinfo.load_ms);
      if (r->target == JITC_TARGET_CUDA)
        printf(", \"nvrtc_ms\": %.4f, \"h2d_ms\": %.4f, \"kernel_ms\": %.4f, \"d2h_ms\": %.4f",
               r->cinfo.codegen_ms, r->rinfo.h2d_ms, r->rinfo.kernel_ms, r->rinfo.d2h_ms);
      printf(", \"run_ms\": %.4f, \"runs\": %d, \"bytes\": %.0f, \"gbps\": %.3f, \"total_ms\": "
             "%.4f}\n", r->run_ms, cli.repeat, bytes, gbps, r->total_ms);
      continue;
    }
    printf("target   %s (%s)\n", jitc_target_name(r->target), device);
    for (int a = 0; a < narrs; a++) {
      Arr *A = &r->arrs[a];
      char shape[256];
      shape_text(shape, sizeof shape, &A->data);
      printf("%-8s %-7s %-8s %-12s %s\n", a == 0 ? "arrays" : "", A->name, role_name(A->role),
             jitc_dtype_name(A->dtype), shape);
      if (A->role != JITC_OUTPUT)
        printf("%-8s %-7s from %s%s\n", "", "", A->source,
               A->defaulted ? " (not given with --in: default)" : "");
    }
    printf("compile  %.3f ms (cache: %s)\n", r->compile_ms, r->cinfo.cache ? r->cinfo.cache : "none");
    if (cli.repeat > 1)
      printf("run      %.3f ms (median of %d), %.2f GB/s\n", r->run_ms, cli.repeat, gbps);
    else
      printf("run      %.3f ms, %.2f GB/s\n", r->run_ms, gbps);
    for (int a = 0; a < narrs; a++) {
      Arr *A = &r->arrs[a];
      if (A->role == JITC_INPUT)
        continue;
      char *text = format_array(A->data.data, A->dtype, n);
      printf("%-8s %s = %s\n", "", A->name, text ? text : "(out of memory)");
      free(text);
    }
  }
  if (nres > 1 && !cli.quiet && !cli.json) {
    printf("\n%-8s %12s %12s %10s\n", "target", "compile ms", "run ms", "GB/s");
    for (int j = 0; j < nres; j++) {
      Result *r = &results[j];
      double bytes = moved_bytes(r->arrs, narrs, n);
      printf("%-8s %12.3f %12.3f %10.2f\n", jitc_target_name(r->target), r->compile_ms, r->run_ms,
             r->run_ms > 0 ? bytes / (r->run_ms * 1e6) : 0);
    }
  }

  /* Outputs: all written to temporary files first, then renamed. */
  if (exit_status == EX_OK && cli.nouts) {
    Arr *arrs = results[nres - 1].arrs;
    char *tmpnames[MAX_NAMED] = {0};
    int written = 0;
    /* SIGINT or SIGTERM from here on would leave temporary files, or some
    ** outputs renamed and others not: they are held until every output is in
    ** place or every temporary file is gone, then take effect as usual. */
    sigset_t hold, old_mask, pending;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigprocmask(SIG_BLOCK, &hold, &old_mask);
    for (int o = 0; o < cli.nouts && exit_status == EX_OK; o++) {
      int a = -1;
      for (int q = 0; q < narrs; q++)
        if (!strcmp(arrs[q].name, cli.outs[o].name))
          a = q;
      if (a < 0) {
        fprintf(stderr, "jitc: --out %s: the program has no array '%s'\n", cli.outs[o].name,
                cli.outs[o].name);
        exit_status = EX_USAGE;
        break;
      }
      size_t len = strlen(cli.outs[o].value) + 32;
      tmpnames[o] = malloc(len);
      if (!tmpnames[o]) {
        exit_status = EX_SOFTWARE;
        break;
      }
      snprintf(tmpnames[o], len, "%s.jitc-%ld.tmp", cli.outs[o].value, (long)getpid());
      if (npy_write(tmpnames[o], &arrs[a].data, err, sizeof err)) {
        fprintf(stderr, "jitc: cannot write '%s': %s\n", cli.outs[o].value, err);
        exit_status = EX_CANTCREAT;
        break;
      }
      written = o + 1;
    }
    sigpending(&pending);
    if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM))
      exit_status = 128 + (sigismember(&pending, SIGINT) ? SIGINT : SIGTERM);
    /* A rename can still fail over a directory: find that before renaming any. */
    for (int o = 0; o < written && exit_status == EX_OK; o++) {
      struct stat st_dir;
      if (stat(cli.outs[o].value, &st_dir) == 0 && S_ISDIR(st_dir.st_mode)) {
        fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", cli.outs[o].value);
        exit_status = EX_CANTCREAT;
      }
    }
    for (int o = 0; o < written; o++) {
      struct stat st_old; /* an existing output keeps its permissions */
      if (exit_status == EX_OK && stat(cli.outs[o].value, &st_old) == 0)
        chmod(tmpnames[o], st_old.st_mode & 07777);
      if (exit_status == EX_OK && rename(tmpnames[o], cli.outs[o].value)) {
        fprintf(stderr, "jitc: cannot write '%s': %s\n", cli.outs[o].value, strerror(errno));
        exit_status = EX_CANTCREAT;
      }
    }
    for (int o = 0; o < cli.nouts; o++) {
      if (tmpnames[o])
        unlink(tmpnames[o]); /* after a successful rename this fails harmlessly */
      free(tmpnames[o]);
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
  }

finish:
  for (int j = 0; j < nres; j++) {
    if (results[j].arrs) {
      for (int a = 0; a < narrs; a++) {
        host_array_free(&results[j].arrs[a].data);
        host_array_free(&results[j].arrs[a].initial);
      }
      free(results[j].arrs);
    }
    jitc_kernel_free(kernels[j]);
  }
  for (int k = 0; k < cli.nins; k++)
    host_array_free(&files[k]);
  for (int k = 0; k < cli.nins; k++)
    free((char *)cli.ins[k].name);
  for (int k = 0; k < cli.nouts; k++)
    free((char *)cli.outs[k].name);
  for (int k = 0; k < cli.ndefs; k++)
    free((char *)cli.defs[k].name);
  for (int k = 0; k < cli.ndtypes; k++)
    free((char *)cli.dtypes[k].name);
  if (cli.program_file)
    free(source);
  jitc_context_free(ctx);
  return exit_status;
}
