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
#include "../runtime/cuda_api.h"
#include "../runtime/runtime.h"
int cache_dir_resolve(const char *dir, char *out, size_t outlen, char *err, size_t errlen); /* TRANSITIONAL */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EX_OK = 0, EX_DISAGREE = 1, EX_USAGE = 64, EX_DATAERR = 65, EX_NOINPUT = 66, EX_UNAVAILABLE = 69,
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

static _Noreturn void die_usage(const char *fmt, ...) {
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
      "An array the program reads that no --in gives is an input of ones. A program\n"
      "that starts with '-' goes after '--': jitc -- '-a * 2'.\n"
      "\n"
      "options (short options bundle, -n3 and -qn3 work; a long option may be\n"
      "shortened to any unique prefix, --rep 3; --opt=VALUE also works):\n"
      "  -t, --target T       interp, cpu, cuda or all (default: cpu when built with LLVM);\n"
      "                       all: every target here, checked to agree (see exit 1)\n"
      "  -f, --file FILE      read the program from FILE ('-': standard input)\n"
      "  -n, --size N         element count when no input file fixes it (default 10000000);\n"
      "                       an integer, also 10_000_000 or 1e7\n"
      "      --dtype T        type of generated inputs: bool, int32, int64, float32, float64\n"
      "                       (short: b1, i32, i64, f32, f64; default float64)\n"
      "      --dtype NAME=T   type of one generated input\n"
      "      --in NAME=SPEC   input NAME from FILE.npy, ones, zeros, arange, linspace:LO:HI,\n"
      "                       full:VALUE, rand[:SEED] or randn[:SEED]\n"
      "      --out NAME=FILE.npy  write array NAME after the run (all outputs or none)\n"
      "  -D NAME=VALUE[:TYPE] bind a scalar, weak like a literal unless TYPE is given.\n"
      "                       VALUE: a Python literal: an integer (1_000, 0x1f, 0o17, 0b101;\n"
      "                       untyped it must fit int64), a float (2.5, 1e-3, inf, nan), True\n"
      "                       or False.  With TYPE an integer must be exact in it, a float\n"
      "                       must be finite in it (rounded to nearest) and an integer type\n"
      "                       needs an integral value; bool needs 0 or 1\n"
      "      --emit STAGE     print a stage and stop: tokens, ast, types; cpu: llvm, llvm-opt,\n"
      "                       asm; cuda: cuda, ptx\n"
      "      --repeat R       run R times, report the median\n"
      "      --threads N      cpu worker threads (default: all cores)\n"
      "      --cpu NAME       cpu: the CPU to compile for: native, an LLVM CPU name (znver3)\n"
      "                       or x86-64, x86-64-v2, -v3, -v4 (default $JITC_CPU, else native)\n"
      "      --fast-math      allow less accurate math functions\n"
      "      --no-cache       do not use the disk cache\n"
      "      --cache-dir D    disk cache directory (default $JITC_CACHE_DIR, $XDG_CACHE_HOME/jitc\n"
      "                       or ~/.cache/jitc)\n"
      "      --arch sm_XY     cuda: GPU architecture for --emit without a GPU\n"
      "      --json           print one JSON object per line, one per target (with\n"
      "                       --emit: {\"target\", \"emit\", \"text\"})\n"
      "  -q, --quiet          print no report (errors still go to stderr)\n"
      "      --version        print the version and the targets of this build\n"
      "      --info           also what this machine has: CPU, libraries, GPUs, cache\n"
      "  -h, --help           print this help\n"
      "\n"
      "Every name given with --in, --out, --dtype NAME= or -D must be one the program\n"
      "uses; -D cannot bind i, a constant or a function.  Messages read 'jitc: ...', or\n"
      "'FILE:LINE:COL: error: ...' for the program (FILE is <program>, or the -f path).\n"
      "\n"
      "-t all: targets agree when every element differs by at most 4 ulp (1e6 with\n"
      "--fast-math) or by at most 8 epsilons of the array's largest magnitude; ulps\n"
      "are those of float32 when the program computes anything in float32, else of\n"
      "the array's type.  Integers and bools must be equal.\n"
      "\n"
      "exit status:\n"
      "   0  ok\n"
      "   1  targets disagree (-t all) beyond the accuracy above; nothing is written\n"
      "  64  usage error (bad option, unknown name, bad -D value)\n"
      "  65  program error\n"
      "  66  input missing or bad\n"
      "  69  target not available\n"
      "  70  internal error\n"
      "  73  output cannot be written\n");
}

/* ---- argument parsing ---- */

/* Python's number literals, with a sign: decimal integers (no leading zeros),
** 0x / 0o / 0b integers, floats (digits with '.' or an exponent), inf and
** nan; '_' may separate digits.  What strtod() also takes (hex floats,
** "infinity", spaces) is refused. */
typedef enum { NUM_BAD, NUM_INT, NUM_FLOAT, NUM_INT_RANGE, NUM_FLOAT_RANGE } NumKind;

static NumKind parse_number(const char *s, int64_t *iv, double *fv) {
  char buf[128];
  size_t len = 0;
  bool neg = *s == '-';
  if (*s == '+' || *s == '-')
    s++;
  if (!strcmp(s, "inf") || !strcmp(s, "nan")) {
    *fv = s[0] == 'i' ? (neg ? -INFINITY : INFINITY) : NAN;
    return NUM_FLOAT;
  }
  int base = 10;
  if (s[0] == '0' && s[1] && strchr("xXoObB", s[1])) {
    base = strchr("xX", s[1]) ? 16 : strchr("oO", s[1]) ? 8 : 2;
    s += 2;
    if (*s == '_')
      s++;
  }
  bool is_float = false, digit_before = false;
  for (const char *p = s; *p; p++) {
    char c = *p;
    bool digit = base == 16 ? isxdigit((unsigned char)c) : c >= '0' && c < '0' + (base < 10 ? base : 10);
    if (c == '_') {
      /* between two digits only */
      bool next = base == 16 ? isxdigit((unsigned char)p[1]) : p[1] >= '0' && p[1] <= '9';
      if (!digit_before || !next)
        return NUM_BAD;
      continue;
    }
    if (!digit) {
      if (base != 10 || !(c == '.' || c == 'e' || c == 'E' ||
                          ((c == '+' || c == '-') && (p[-1] == 'e' || p[-1] == 'E'))))
        return NUM_BAD;
      is_float = true;
    }
    digit_before = digit;
    if (len + 2 > sizeof buf)
      return NUM_BAD;
    buf[len++] = c;
  }
  buf[len] = '\0';
  if (!len)
    return NUM_BAD;
  if (!is_float) {
    if (base == 10 && buf[0] == '0' && strspn(buf, "0") != len)
      return NUM_BAD; /* Python: leading zeros in a decimal integer */
    errno = 0;
    char *end;
    unsigned long long u = strtoull(buf, &end, base);
    if (*end)
      return NUM_BAD;
    if (errno == ERANGE || u > (neg ? 9223372036854775808ull : 9223372036854775807ull))
      return NUM_INT_RANGE;
    *iv = neg ? (int64_t)(0 - u) : (int64_t)u;
    return NUM_INT;
  }
  /* A float: digits around at most one '.', then at most one exponent with digits. */
  const char *e = strpbrk(buf, "eE");
  size_t mant = e ? (size_t)(e - buf) : len;
  if (strspn(buf, "0123456789.") < mant ||
      strchr(buf, '.') != strrchr(buf, '.') || (e && strchr(e, '.')))
    return NUM_BAD;
  bool mant_digit = false;
  for (size_t k = 0; k < mant; k++)
    mant_digit |= buf[k] >= '0' && buf[k] <= '9';
  if (!mant_digit)
    return NUM_BAD;
  if (e) {
    const char *x = e + 1 + (e[1] == '+' || e[1] == '-');
    if (!*x || strspn(x, "0123456789") != strlen(x))
      return NUM_BAD;
  }
  errno = 0;
  char *end;
  double f = strtod(buf, &end);
  if (*end)
    return NUM_BAD;
  if (isinf(f))
    return NUM_FLOAT_RANGE;
  *fv = neg ? -f : f;
  return NUM_FLOAT;
}

/* -n: a non-negative integer, also written 10_000_000 or 1e7 when exact. */
static bool parse_count(const char *s, int64_t *out) {
  int64_t i;
  double f;
  switch (parse_number(s, &i, &f)) {
  case NUM_INT:
    *out = i;
    return i >= 0;
  case NUM_FLOAT:
    if (!(f >= 0 && f < 0x1p63 && f == floor(f)))
      return false;
    *out = (int64_t)f;
    return true;
  default:
    return false;
  }
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

enum { OPT_DTYPE = 256, OPT_IN, OPT_OUT, OPT_EMIT, OPT_REPEAT, OPT_THREADS, OPT_FAST_MATH,
       OPT_NO_CACHE, OPT_CACHE_DIR, OPT_ARCH, OPT_CPU, OPT_JSON, OPT_VERSION, OPT_INFO };

static const struct option long_options[] = {
    {"target", required_argument, NULL, 't'},     {"file", required_argument, NULL, 'f'},
    {"size", required_argument, NULL, 'n'},       {"dtype", required_argument, NULL, OPT_DTYPE},
    {"in", required_argument, NULL, OPT_IN},      {"out", required_argument, NULL, OPT_OUT},
    {"emit", required_argument, NULL, OPT_EMIT},  {"repeat", required_argument, NULL, OPT_REPEAT},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"fast-math", no_argument, NULL, OPT_FAST_MATH},
    {"no-cache", no_argument, NULL, OPT_NO_CACHE},
    {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
    {"arch", required_argument, NULL, OPT_ARCH},  {"cpu", required_argument, NULL, OPT_CPU},
    {"json", no_argument, NULL, OPT_JSON},        {"quiet", no_argument, NULL, 'q'},
    {"version", no_argument, NULL, OPT_VERSION},  {"info", no_argument, NULL, OPT_INFO},
    {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
};

/* getopt_long's '?': an unknown or ambiguous option, said plainly. */
static void bad_option(const char *arg, int optopt_char) {
  if (!strncmp(arg, "--", 2)) {
    size_t len = strcspn(arg + 2, "=");
    char cands[512] = "";
    int n = 0;
    for (const struct option *o = long_options; o->name; o++)
      if (len && !strncmp(o->name, arg + 2, len) && strlen(cands) + strlen(o->name) + 8 < sizeof cands)
        n++, strcat(strcat(cands, n > 1 ? ", --" : "--"), o->name);
    if (n > 1)
      die_usage("option '%.*s' is ambiguous: %s", (int)len + 2, arg, cands);
    if (n == 1)
      die_usage("option '%.*s' takes no value", (int)len + 2, arg);
    die_usage("unknown option '%.*s'", (int)len + 2, arg);
  }
  if (optopt_char)
    die_usage("unknown option '-%c' in '%s'; a program that starts with '-' goes after "
              "'--': jitc [options] -- '%s'", optopt_char, arg, arg);
  die_usage("unknown option '%s'", arg);
}

static void print_version(bool info, const char *cache_dir);

static void parse_args(Cli *cli, int argc, char **argv) {
  jitc_options_init(&cli->opt);
  cli->opt.implicit_inputs = 1;
  cli->n = 10000000;
  cli->dtype = JITC_FLOAT64;
  cli->repeat = 1;
  opterr = 0;
  int c, idx, version = 0;
  while ((c = getopt_long(argc, argv, ":ht:f:n:D:q", long_options, &idx)) != -1) {
    const char *v = optarg;
    switch (c) {
    case 'h':
      usage();
      exit(EX_OK);
    case OPT_VERSION:
    case OPT_INFO: /* after the other options: --cache-dir applies */
      version = c == OPT_INFO ? 2 : version ? version : 1;
      break;
    case 't':
      cli->target = v;
      break;
    case 'f':
      cli->program_file = v;
      break;
    case 'n':
      if (!parse_count(v, &cli->n))
        die_usage("--size needs a non-negative integer (such as 1000, 10_000_000 or 1e7), "
                  "got '%s'", v);
      cli->n_given = true;
      break;
    case OPT_DTYPE: {
      jitc_dtype t;
      if (strchr(v, '=')) { /* --dtype NAME=T: one generated array */
        add_named(cli->dtypes, &cli->ndtypes, "--dtype", v);
        v = cli->dtypes[cli->ndtypes - 1].value;
        if (jitc_dtype_parse(v, &t))
          die_usage("unknown dtype '%s' (use bool, int32, int64, float32 or float64)", v);
      } else if (jitc_dtype_parse(v, &cli->dtype)) {
        die_usage("unknown dtype '%s' (use bool, int32, int64, float32 or float64)", v);
      }
      break;
    }
    case OPT_IN:
      add_named(cli->ins, &cli->nins, "--in", v);
      break;
    case OPT_OUT:
      add_named(cli->outs, &cli->nouts, "--out", v);
      break;
    case 'D':
      add_named(cli->defs, &cli->ndefs, "-D", v);
      break;
    case OPT_EMIT:
      cli->emit = v;
      break;
    case OPT_REPEAT: {
      int64_t r;
      if (!parse_count(v, &r) || r < 1 || r > 1000000)
        die_usage("--repeat needs a count from 1 to 1000000, got '%s'", v);
      cli->repeat = (int)r;
      break;
    }
    case OPT_THREADS: {
      int64_t t;
      if (!parse_count(v, &t) || t > 4096)
        die_usage("--threads needs a count from 0 to 4096, got '%s'", v);
      cli->opt.threads = (int)t;
      break;
    }
    case OPT_FAST_MATH:
      cli->opt.fast_math = 1;
      break;
    case OPT_NO_CACHE:
      cli->opt.no_cache = 1;
      break;
    case OPT_CACHE_DIR:
      cli->opt.cache_dir = v;
      break;
    case OPT_ARCH:
      cli->opt.cuda_arch = v;
      break;
    case OPT_CPU:
      cli->opt.cpu = v;
      break;
    case OPT_JSON:
      cli->json = true;
      break;
    case 'q':
      cli->quiet = true;
      break;
    case ':':
      die_usage("option '%s' needs a value", argv[optind - 1]);
      break;
    default: /* '?' */
      bad_option(argv[optind - 1], optopt);
    }
  }
  if (version) {
    print_version(version == 2, cli->opt.cache_dir);
    exit(EX_OK);
  }
  for (int k = optind; k < argc; k++) {
    if (!cli->program)
      cli->program = argv[k];
    else
      die_usage("more than one program given ('%s' and '%s'); quote the program", cli->program,
                argv[k]);
  }
  if (cli->program && cli->program_file)
    die_usage("give the program either as an argument or with -f, not both");
  if (!cli->program && !cli->program_file)
    die_usage("no program given");
}

/* Reads the whole program file ("-": standard input); exits 66 on failure. */
static char *read_program_file(const char *path) {
  bool std_in = !strcmp(path, "-");
  FILE *f = std_in ? stdin : fopen(path, "rb");
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
  if (!std_in)
    fclose(f);
  s[len] = '\0';
  if (strlen(s) != len) {
    fprintf(stderr, "jitc: program file '%s' contains a NUL byte\n", path);
    exit(EX_NOINPUT);
  }
  return s;
}

/* -D NAME=VALUE[:TYPE]: a weak literal, or a typed scalar whose value must
** be representable in TYPE (the library would otherwise round or refuse it
** only when the kernel runs). */
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
  int64_t i = 0;
  double f = 0;
  if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "False") || !strcmp(v, "false")) {
    val->dtype = JITC_BOOL;
    val->u.i = i = v[0] == 'T' || v[0] == 't';
  } else {
    switch (parse_number(v, &i, &f)) {
    case NUM_INT:
      val->dtype = JITC_INT64;
      val->u.i = i;
      break;
    case NUM_FLOAT:
      val->dtype = JITC_FLOAT64;
      val->u.f = f;
      break;
    case NUM_INT_RANGE:
      if (!decl->weak && (decl->dtype == JITC_INT32 || decl->dtype == JITC_INT64))
        die_usage("-D %s: %s is out of range for %s", d->name, v, jitc_dtype_name(decl->dtype));
      die_usage("-D %s: %s does not fit in int64 (NumPy raises OverflowError for such a "
                "Python int); write it as a float, such as %s.0", d->name, v, v);
    case NUM_FLOAT_RANGE:
      die_usage("-D %s: %s is beyond the range of float64", d->name, v);
    default:
      die_usage("-D %s: '%s' is not a number (use a Python literal: an integer, a float, inf, "
                "nan, True or False)", d->name, v);
    }
  }
  if (decl->weak) {
    decl->dtype = val->dtype;
    return;
  }
  bool is_float = val->dtype == JITC_FLOAT64;
  const char *why = NULL;
  switch (decl->dtype) {
  case JITC_BOOL:
    if (is_float ? !(f == 0 || f == 1) : !(i == 0 || i == 1))
      why = "a bool needs 0 or 1, True or False";
    break;
  case JITC_INT32:
  case JITC_INT64: {
    double lim = decl->dtype == JITC_INT32 ? 0x1p31 : 0x1p63;
    if (is_float ? !(f == floor(f) && f >= -lim && f < lim)
                 : decl->dtype == JITC_INT32 && (i < INT32_MIN || i > INT32_MAX))
      why = is_float && f != floor(f) ? "an integer type needs an integral value"
                                      : "it is out of range";
    break;
  }
  case JITC_FLOAT32:
    if (is_float ? isfinite(f) && fabs(f) >= 0x1.ffffffp+127 /* rounds to inf */
                 : (double)(float)i != (double)i || (double)i >= 0x1p63 ||
                       (int64_t)(double)i != i)
      why = is_float ? "it is beyond the range of float32" : "float32 cannot hold it exactly";
    break;
  default: /* float64 */
    if (!is_float && ((double)i >= 0x1p63 || (int64_t)(double)i != i))
      why = "float64 cannot hold it exactly";
  }
  if (why)
    die_usage("-D %s: %s cannot be %s: %s", d->name, v, jitc_dtype_name(decl->dtype), why);
}

/* The text of the context's last error without the "jitc: STATUS: " the
** library puts before an error that has no position. */
static const char *errmsg_text(jitc_context *ctx, jitc_status st) {
  const char *m = jitc_errmsg(ctx);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "jitc: %s: ", jitc_status_name(st));
  if (!strncmp(m, prefix, strlen(prefix)))
    return m + strlen(prefix);
  return !strncmp(m, "jitc: ", 6) ? m + 6 : m;
}

/* ---- --version and --info ---- */

/* Bytes and files under `dir` (one level of subdirectories, as the cache has). */
static void dir_usage(const char *dir, int depth, double *bytes, long *files) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &st))
      continue;
    if (S_ISDIR(st.st_mode) && depth < 2) {
      dir_usage(path, depth + 1, bytes, files);
    } else if (S_ISREG(st.st_mode)) {
      *bytes += (double)st.st_size;
      (*files)++;
    }
  }
  closedir(d);
}

/* The host CPU's model and the SIMD features that matter to the cpu target. */
static void print_host_cpu(void) {
  static const char *const interesting[] = {
      "sse2", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq",
      "avx512bw", "avx512vl", "avx512_fp16", "asimd", "sve", "sve2"};
  char model[256] = "unknown", features[512] = "";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[8192];
  while (f && fgets(line, sizeof line, f)) {
    char *c = strchr(line, ':');
    if (!c)
      continue;
    c++;
    c += strspn(c, " \t");
    c[strcspn(c, "\n")] = '\0';
    if (!strncmp(line, "model name", 10) && !strcmp(model, "unknown"))
      snprintf(model, sizeof model, "%s", c);
    if ((!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) && !features[0]) {
      for (size_t k = 0; k < sizeof interesting / sizeof interesting[0]; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, " %s ", interesting[k]);
        char padded[8200];
        snprintf(padded, sizeof padded, " %s ", c);
        if (strstr(padded, pat) && strlen(features) + strlen(interesting[k]) + 2 < sizeof features)
          strcat(strcat(features, features[0] ? " " : ""), interesting[k]);
      }
      if (!features[0])
        snprintf(features, sizeof features, "(none of the SIMD features jitc uses)");
    }
  }
  if (f)
    fclose(f);
  printf("host cpu: %s, %ld cores\n", model, sysconf(_SC_NPROCESSORS_ONLN));
  printf("cpu features: %s\n", features[0] ? features : "unknown (no /proc/cpuinfo)");
}

/* NVRTC, the driver and every GPU, loaded here as the cuda target loads them. */
static void print_cuda(void) {
  CudaApi api;
  memset(&api, 0, sizeof api);
  char err[512];
  /* The paths the library takes from the same variables (env.c). */
  const char *home = getenv("CUDA_HOME") && *getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                                                  : getenv("CUDA_PATH");
  if (cuda_load_nvrtc(&api, getenv("JITC_LIBNVRTC"), home, err, sizeof err))
    printf("nvrtc: not found: %s\n", err);
  else
    printf("nvrtc: %d.%d (%s)\n", api.nvrtc_major, api.nvrtc_minor, api.nvrtc_path);
  if (cuda_load_driver(&api, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("cuda driver: none\n");
    printf("no GPU: %s\n", err);
  } else {
    printf("cuda driver: %d.%d\n", api.driver_version / 1000, api.driver_version % 1000 / 10);
    int count = 0;
    CUresult r = api.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count < 1)
      printf("no GPU: %s\n", r != CUDA_SUCCESS ? cuda_result_name(&api, r) : "the driver sees none");
    for (int g = 0; g < count; g++) {
      CUdevice dev;
      char name[256] = "?";
      int major = 0, minor = 0, sms = 0;
      size_t mem = 0;
      if (api.cuDeviceGet(&dev, g) != CUDA_SUCCESS)
        continue;
      api.cuDeviceGetName(name, (int)sizeof name, dev);
      api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      api.cuDeviceTotalMem(&mem, dev);
      printf("gpu %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", g, name, major, minor, sms,
             (double)mem / 1073741824.0);
    }
  }
  cuda_unload(&api);
}

/* --version: the version and this build's targets.  --info adds what this
** machine has, as a bug report wants it; it needs no GPU. */
static void print_version(bool info, const char *cache_dir) {
  printf("jitc %s\n", JITC_VERSION);
  for (int t = 0; t < JITC_NTARGETS; t++)
    printf("target %s: %s\n", jitc_target_name((jitc_target)t),
           jitc_target_version((jitc_target)t));
  if (!info)
    return;
  print_host_cpu();
  print_cuda();
  jitc_context *ctx = jitc_context_new();
  for (int t = 0; ctx && t < JITC_NTARGETS; t++) {
    if (jitc_target_available(ctx, (jitc_target)t) == JITC_OK) {
      printf("%s: available on %s\n", jitc_target_name((jitc_target)t),
             jitc_target_device(ctx, (jitc_target)t));
    } else {
      const char *why = errmsg_text(ctx, JITC_E_UNAVAILABLE);
      printf("%s: unavailable: %.*s\n", jitc_target_name((jitc_target)t),
             (int)strcspn(why, "\n"), why);
    }
  }
  jitc_context_free(ctx);
  char dir[4096], err[512];
  if (cache_dir_resolve(cache_dir, dir, sizeof dir, err, sizeof err)) {
    printf("cache: unusable: %s\n", err);
  } else {
    double bytes = 0;
    long files = 0;
    dir_usage(dir, 0, &bytes, &files);
    printf("cache: %s (%ld files, %.1f MiB)\n", dir, files, bytes / 1048576.0);
  }
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

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if the bytes
** there are not one (a stray continuation byte, a truncated or overlong
** sequence, a surrogate, or beyond U+10FFFF). */
static int utf8_length(const unsigned char *s) {
  int len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
          : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
  for (int k = 1; k < len; k++)
    if ((s[k] & 0xc0) != 0x80)
      return 0;
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
      (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
    return 0;
  return len;
}

/* A JSON string: valid UTF-8 copied, control characters escaped, and each
** byte that is not part of valid UTF-8 (a program's comment may hold any)
** replaced by U+FFFD, as decoders with errors="replace" do. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int len = utf8_length(p);
    if (len == 0) {
      fputs("\\ufffd", f);
      p++;
    } else if (*p == '"' || *p == '\\') {
      fprintf(f, "\\%c", *p++);
    } else if (*p == '\n' || *p == '\t' || *p == '\r') {
      fprintf(f, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
      p++;
    } else if (*p < 0x20 || *p == 0x7f) {
      fprintf(f, "\\u%04x", *p++);
    } else {
      fwrite(p, 1, (size_t)len, f);
      p += len;
    }
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

/* How a target's array compares with the first target's (-t all). */
typedef struct Agree {
  double ulps;       /* the largest difference */
  bool ulps_of_f32;  /* in ulps of float32 though the array is float64 */
  bool ok;           /* within the tolerance */
  bool identical;
} Agree;

typedef struct Result {
  jitc_target target;
  bool ran;
  jitc_status status;
  double compile_ms, run_ms, total_ms;
  jitc_compile_info cinfo;
  jitc_run_info rinfo;
  Arr *arrs;
  Agree *agree; /* per array, for targets after the first */
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

/* "--in A: the program has no array 'A'; did you mean 'a'?", exit 64. */
static int unknown_name(const char *opt, const char *name, const char *what,
                        const char *const *names, int n) {
  const char *near = jitc_nearest_name(name, names, n);
  fprintf(stderr, "jitc: %s %s: the program uses no %s '%s'", opt, name, what, name);
  if (near)
    fprintf(stderr, "; did you mean '%s'?\n", near);
  else {
    for (int k = 0; k < n && k < 8; k++)
      fprintf(stderr, "%s%s", k ? ", " : " (it uses ", names[k]);
    fprintf(stderr, "%s\n", n > 8 ? ", ...)" : n ? ")" : "");
  }
  return EX_USAGE;
}

/* Every name given with --in, --out, --dtype NAME= and -D must be one the
** program uses: a typo would otherwise become an input of ones, or a value
** silently ignored.  The names come from a front-end compile (interp). */
static int check_names(jitc_context *ctx, const Cli *cli, const char *source,
                       const jitc_array_decl *decls, int ndecls,
                       const jitc_scalar_decl *sdecls) {
  jitc_options o = cli->opt;
  o.target = JITC_TARGET_INTERP;
  jitc_kernel *k;
  jitc_status st = jitc_compile(ctx, source, decls, ndecls, sdecls, cli->ndefs, &o, &k);
  if (st)
    return fail_status(ctx, st);
  static const char *names[2 * MAX_NAMED];
  int n = 0;
  for (int a = 0; a < jitc_kernel_array_count(k) && n < 2 * MAX_NAMED; a++)
    jitc_kernel_array(k, a, &names[n++], NULL, NULL);
  for (int s = 0; s < jitc_kernel_scalar_count(k) && n < 2 * MAX_NAMED; s++)
    jitc_kernel_scalar(k, s, &names[n++], NULL);
  int status = EX_OK;
  for (int q = 0; q < cli->nins && !status; q++)
    if (jitc_kernel_find_array(k, cli->ins[q].name) < 0)
      status = unknown_name("--in", cli->ins[q].name, "array", names, n);
  for (int q = 0; q < cli->nouts && !status; q++)
    if (jitc_kernel_find_array(k, cli->outs[q].name) < 0)
      status = unknown_name("--out", cli->outs[q].name, "array", names, n);
  for (int q = 0; q < cli->ndtypes && !status; q++)
    if (jitc_kernel_find_array(k, cli->dtypes[q].name) < 0)
      status = unknown_name("--dtype", cli->dtypes[q].name, "array", names, n);
  for (int q = 0; q < cli->ndefs && !status; q++)
    if (jitc_kernel_find_scalar(k, cli->defs[q].name) < 0)
      status = unknown_name("-D", cli->defs[q].name, "name", names, n);
  jitc_kernel_free(k);
  return status;
}

/* ---- outputs ---- */

/* The temporary files the outputs are written to, made before any work so
** that an output that cannot be written fails first.  They are removed at
** exit and on SIGINT/SIGTERM unless renamed into place. */
static char *tmpnames[MAX_NAMED];
static int ntmpnames;

static void remove_temps(void) {
  for (int o = 0; o < ntmpnames; o++)
    if (tmpnames[o])
      unlink(tmpnames[o]); /* after a successful rename this fails harmlessly */
}

static void on_signal(int sig) {
  remove_temps(); /* unlink() is async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int make_temps(const Cli *cli) {
  atexit(remove_temps);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  for (int o = 0; o < cli->nouts; o++) {
    const char *path = cli->outs[o].value;
    if (is_dir(path)) {
      fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", path);
      return EX_CANTCREAT;
    }
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
      fprintf(stderr, "jitc: out of memory\n");
      return EX_SOFTWARE;
    }
    snprintf(tmp, len, "%s.jitc-%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", path, strerror(errno));
      free(tmp);
      return EX_CANTCREAT;
    }
    close(fd);
    tmpnames[ntmpnames++] = tmp;
  }
  return EX_OK;
}

int main(int argc, char **argv) {
  static Cli cli;
  process_start_ms = now_ms();
  parse_args(&cli, argc, argv);
  /* Static, so that what a usage error's exit() leaves is still reachable. */
  static char *source;
  source = cli.program_file ? read_program_file(cli.program_file) : (char *)cli.program;
  if (cli.program_file)
    cli.opt.source_name = strcmp(cli.program_file, "-") ? cli.program_file : "<stdin>";
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
                errmsg_text(ctx, JITC_E_UNAVAILABLE));
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
  bool frontend_only = cli.emit && (!strcmp(cli.emit, "tokens") || !strcmp(cli.emit, "ast"));
  if (!frontend_only) {
    exit_status = check_names(ctx, &cli, source, decls, ndecls, sdecls);
    if (exit_status == EX_OK && !cli.emit)
      exit_status = make_temps(&cli);
    if (exit_status != EX_OK)
      goto finish;
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
      if (cli.json) { /* one JSON object per line, as the run's records */
        printf("{\"target\": ");
        json_string(stdout, jitc_target_name(tlist[j]));
        printf(", \"emit\": ");
        json_string(stdout, cli.emit);
        printf(", \"text\": ");
        json_string(stdout, text);
        printf("}\n");
      } else {
        fputs(text, stdout);
      }
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
    double t0 = now_ms();
    jitc_status st = jitc_compile(ctx, source, decls, ndecls, sdecls, cli.ndefs, &cli.opt,
                                  &kernels[j]);
    r->compile_ms = now_ms() - t0;
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
      double t1 = now_ms();
      st = jitc_run(ctx, k, n, ptrs, vals, &r->rinfo);
      times[rep] = now_ms() - t1;
      if (st) {
        free(times);
        free(ptrs);
        exit_status = fail_status(ctx, st);
        goto finish;
      }
    }
    r->run_ms = median(times, cli.repeat);
    r->ran = true;
    r->total_ms = now_ms() - process_start_ms;
    free(times);
    free(ptrs);
  }

  /* Check that every target agrees with the first: the largest difference in
  ** ulps, and a disagreement when an element differs by more than 4 ulps and
  ** by more than 8 machine epsilons of the output's largest magnitude (the
  ** second allowance absorbs cancellation in sums of rounded terms).  A value
  ** that passed through float32 carries float32's error even when widened
  ** (f64(sin(x)) for float32 x): when the program computes anything in
  ** float32, ulps and epsilons are float32's. */
  if (nres > 1) {
    bool via_f32 = false;
    char *types = NULL;
    cli.opt.target = JITC_TARGET_INTERP;
    if (jitc_emit(ctx, source, decls, ndecls, sdecls, cli.ndefs, &cli.opt, "types", &types) ==
        JITC_OK)
      via_f32 = strstr(types, ":f32") || strstr(types, "(f32 ") || strstr(types, ": float32");
    jitc_free(types);
    for (int j = 1; j < nres; j++) {
      results[j].agree = calloc((size_t)narrs + 1, sizeof *results[j].agree);
      if (!results[j].agree) {
        fprintf(stderr, "jitc: out of memory\n");
        exit_status = EX_SOFTWARE;
        goto finish;
      }
      for (int a = 0; a < narrs; a++) {
        Arr *A = &results[0].arrs[a], *B = &results[j].arrs[a];
        if (A->role == JITC_INPUT)
          continue;
        size_t esize = jitc_dtype_size(A->dtype);
        bool f32 = A->dtype == JITC_FLOAT32, fp = f32 || A->dtype == JITC_FLOAT64;
        bool narrow = f32 || via_f32;
        double scale = 0;
        for (int64_t e = 0; fp && e < n; e++) {
          double x = f32 ? ((float *)A->data.data)[e] : ((double *)A->data.data)[e];
          if (isfinite(x) && fabs(x) > scale)
            scale = fabs(x);
        }
        double abs_tol = 8 * (narrow ? 0x1p-23 : 0x1p-52) * scale;
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
              double u = narrow && ax <= FLT_MAX
                             ? (double)(nextafterf((float)ax, INFINITY) - (float)ax)
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
        results[j].agree[a] = (Agree){ulps, narrow && !f32, bad < 0, where < 0};
        if (!cli.quiet && !cli.json)
          printf("%s: %s vs %s: largest difference %.3g ulp%s%s\n", A->name,
                 jitc_target_name(results[0].target), jitc_target_name(results[j].target), ulps,
                 narrow && !f32 ? " of float32" : "", where >= 0 ? "" : " (identical)");
        if (bad >= 0) {
          char *x = format_value((char *)A->data.data + bad * (int64_t)esize, A->dtype);
          char *y = format_value((char *)B->data.data + bad * (int64_t)esize, A->dtype);
          fprintf(stderr, "jitc: targets disagree on '%s' at element %lld: %s gives %s, %s "
                  "gives %s\n", A->name, (long long)bad, jitc_target_name(results[0].target),
                  x ? x : "?", jitc_target_name(results[j].target), y ? y : "?");
          free(x);
          free(y);
          exit_status = EX_DISAGREE;
        }
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
             "%.4f", r->run_ms, cli.repeat, bytes, gbps, r->total_ms);
      if (r->agree) {
        printf(", \"agreement\": {\"with\": ");
        json_string(stdout, jitc_target_name(results[0].target));
        printf(", \"arrays\": [");
        int shown = 0;
        for (int a = 0; a < narrs; a++) {
          const Agree *g = &r->agree[a];
          if (r->arrs[a].role == JITC_INPUT)
            continue;
          printf("%s{\"name\": ", shown++ ? ", " : "");
          json_string(stdout, r->arrs[a].name);
          if (isfinite(g->ulps))
            printf(", \"largest_ulp\": %.6g", g->ulps);
          else
            printf(", \"largest_ulp\": null"); /* JSON has no infinity */
          printf(", \"ulp_of\": \"%s\", \"identical\": %s, \"agree\": %s}",
                 g->ulps_of_f32 ? "float32" : jitc_dtype_name(r->arrs[a].dtype),
                 g->identical ? "true" : "false", g->ok ? "true" : "false");
        }
        printf("]}");
      }
      printf("}\n");
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

  /* Outputs: written into their temporary files (made by make_temps), then
  ** renamed into place. */
  if (exit_status == EX_OK && cli.nouts) {
    Arr *arrs = results[nres - 1].arrs;
    int written = 0;
    /* SIGINT or SIGTERM from here on would leave some outputs renamed and
    ** others not: they are held until every output is in place or every
    ** temporary file is gone, then take effect as usual. */
    sigset_t hold, old_mask, pending;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigprocmask(SIG_BLOCK, &hold, &old_mask);
    for (int o = 0; o < cli.nouts && exit_status == EX_OK; o++) {
      int a = 0; /* check_names() made sure the array exists */
      for (int q = 0; q < narrs; q++)
        if (!strcmp(arrs[q].name, cli.outs[o].name))
          a = q;
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
    /* A rename can still fail over a directory made since: find that before renaming any. */
    for (int o = 0; o < written && exit_status == EX_OK; o++)
      if (is_dir(cli.outs[o].value)) {
        fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", cli.outs[o].value);
        exit_status = EX_CANTCREAT;
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
    remove_temps();
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
    free(results[j].agree);
    jitc_kernel_free(kernels[j]);
  }
  for (int k = 0; k < cli.nins; k++)
    host_array_free(&files[k]);
  remove_temps();
  for (int o = 0; o < ntmpnames; o++) {
    free(tmpnames[o]);
    tmpnames[o] = NULL;
  }
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
