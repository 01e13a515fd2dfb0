/*
** args.c -- the command line's arguments: the options and their values,
** --help, the -D scalar values, and the rule that every name given with
** --in, --out, --dtype NAME= or -D is one the program uses.
*/
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void die_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "jitc: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'jitc --help'.\n");
  va_end(ap);
  exit(EX_USAGE);
}

/* "bool, int8, ... or float64": every type of jitc.h, for messages. */
static const char *dtypes_or(void) {
  static char text[512];
  if (!text[0])
    dtype_list(text, sizeof text, " or ");
  return text;
}

static void usage(void) {
  printf(
      "usage: jitc [options] PROGRAM\n"
      "       jitc [options] -f FILE\n"
      "\n"
      "Compiles an element-wise array program and runs it, e.g.\n"
      "  jitc 'a[i] += 1'      jitc -t cuda 'c = exp(a) * b'\n"
      "An array the program reads that no --in gives is an input of ones, and a note on\n"
      "standard error says so (-q does not hide it); --strict makes it an error.  A\n"
      "name one slip from a name defined before it ('tpm' after 'tmp = ...') is an\n"
      "error, 'did you mean', unless --in gives it.  A program that starts with '-'\n"
      "goes after '--': jitc -- '-a * 2'.  Arrays have shapes and broadcast as NumPy's\n"
      "do: a (2, 3) matrix plus a (3,) row adds the row to each row; outputs have the\n"
      "broadcast shape, in NumPy's order (C, or Fortran where np.add would give it),\n"
      "and print as NumPy prints them.  A program of scalars alone gives a 0-d result.\n"
      "\n"
      "options (short options bundle, -n3 and -qn3 work; a long option may be\n"
      "shortened to any unique prefix, --rep 3; --opt=VALUE also works):\n"
      "  -t, --target T       interp, cpu, cuda or all (default: cpu when built with LLVM);\n"
      "                       all: every target here, checked to agree (see exit 1)\n"
      "  -f, --file FILE      read the program from FILE ('-': standard input)\n"
      "  -n, --size SHAPE     the shape of generated inputs: N elements (default 10000000;\n"
      "                       also 10_000_000 or 1e7) or axes joined by 'x' (1000x1000);\n"
      "                       without -n, the broadcast shape of the inputs from files\n");
  /* The types from the library; T may also be NumPy's code (read as
  ** np.dtype reads it: i8 is int64, u8 uint64) or the language's short name. */
  char types[512], text[800];
  dtype_list(types, sizeof types, ", ");
  snprintf(text, sizeof text, "%s (default float64); also NumPy's codes, as np.dtype reads "
           "them (f4, u1, c8, D; i8 is int64), and the short names (f32, bf16, c64)", types);
  wrap_help(stdout, "      --dtype T        type of generated inputs:", text, 23, 88);
  printf(
      "      --dtype NAME=T   type of one generated input (a FILE.npy's own type, or bfloat16\n"
      "                       for a '<V2' file: ml_dtypes saves bfloat16 so)\n"
      "      --in NAME=SPEC   input NAME from FILE.npy (any shape, C or Fortran order),\n"
      "                       FILE.npz[:KEY] (its array KEY, by default NAME), ones, zeros,\n"
      "                       arange, linspace:LO:HI, full:VALUE, rand[:SEED] or\n"
      "                       randn[:SEED] (generated in C order, as NumPy reshapes them);\n"
      "                       of a complex type these are the real parts and the imaginary\n"
      "                       parts are 0, but full:1+2j gives both, and rand and randn\n"
      "                       draw n real parts, then n imaginary parts (rand(n) +\n"
      "                       1j*rand(n))\n"
      "      --in FILE.npz    every array of the archive (np.savez or np.savez_compressed)\n"
      "                       as the input of its name, where the program reads that name\n"
      "      --out NAME=FILE.npy  write array NAME after the run (all outputs or none)\n"
      "      --out NAME=FILE.npz[:KEY]\n"
      "                       write array NAME into an archive as KEY (by default NAME);\n"
      "                       the --out naming one archive go into it together\n"
      "      --out FILE.npz   write every array the program writes into one archive, each\n"
      "                       by its name (as np.savez writes it)\n"
      "      --strict         every array the program reads must be given with --in\n"
      "                       (else exit 65: no input of ones)\n"
      "  -D NAME=VALUE[:TYPE] bind a scalar, weak like a literal unless TYPE is given.\n"
      "                       VALUE: a Python literal: an integer (1_000, 0x1f, 0o17, 0b101;\n"
      "                       untyped it must fit int64), a float (2.5, 1e-3, inf, nan), a\n"
      "                       complex as complex() reads it (1+2j, -2.5j, nan+infj), True\n"
      "                       or False.  With TYPE an integer must be exact in it, a float\n"
      "                       must be finite in it (rounded to nearest; a complex value's\n"
      "                       parts too, and its TYPE complex) and an integer type needs an\n"
      "                       integral value; bool needs 0 or 1\n");
  stage_help(stdout, "      --emit STAGE     print a stage and stop:", 23, 88);
  printf(
      "      --repeat R       run R times, report the median\n"
      "      --threads N      cpu worker threads (default: all cores); the report says\n"
      "                       how many a run used\n"
      "      --cpu NAME       cpu: the CPU to compile for: native, an LLVM CPU name (znver3)\n"
      "                       or x86-64, x86-64-v2, -v3, -v4 (default $JITC_CPU, else native)\n"
      "      --fast-math      allow less accurate math functions\n"
      "      --no-cache       do not use the disk cache\n"
      "      --cache-dir D    disk cache directory (default $JITC_CACHE_DIR, $XDG_CACHE_HOME/jitc\n"
      "                       or ~/.cache/jitc)\n"
      "      --arch sm_XY     cuda: GPU architecture for --emit without a GPU\n"
      "      --devices LIST   cuda: the GPUs a run is split over: all, or numbers such as 0,1\n"
      "                       (default $JITC_DEVICES, else $JITC_CUDA_DEVICE's, else all)\n"
      "      --json           print one JSON object per line, one per target (with\n"
      "                       --emit: {\"target\", \"emit\", \"text\"}); each array of at\n"
      "                       most 1000 elements the program writes has its \"value\", as\n"
      "                       NumPy's tolist() gives it (nested lists); a value that is NaN\n"
      "                       or infinite is \"nan\", \"inf\" or \"-inf\", a complex one\n"
      "                       [real, imag]\n"
      "  -q, --quiet          print no report (errors still go to stderr)\n"
      "      --list           print the language's vocabulary as JSON: types (number, kind,\n"
      "                       size, range), operators and functions (arity, typing rule),\n"
      "                       aliases and statuses (exit codes), as jitc_vocabulary() gives it\n"
      "      --version        print the version and the targets of this build\n"
      "      --info           also what this machine has: CPU, libraries, GPUs, cache\n"
      "  -h, --help           print this help\n"
      "\n"
      "Every name given with --in, --out, --dtype NAME= or -D must be one the program\n"
      "uses.  A name --in, --dtype NAME= or -D gives is the program's array or scalar\n"
      "even where the language has one (-D i=2 'c = a*i' is a*2; --in pi=F), but a\n"
      "call (sum(a)) stays the function.  Messages read 'jitc: ...', or\n"
      "'FILE:LINE:COL: error: ...' for the program (FILE is <program>, or the -f path).\n"
      "\n"
      "-t all: targets agree when every element differs by at most 4 ulp (1e6 with\n"
      "--fast-math) or by at most 8 epsilons of the array's largest magnitude; ulps\n"
      "are those of the array's type, or of a narrower float type the program\n"
      "computes anything in (float32 for f64(sin(x)) of float32 x; float16 and\n"
      "bfloat16 in their own precision).  A complex output compares each part so,\n"
      "in ulps of its part type (float32 for complex64).  Integers and bools must\n"
      "be equal.\n"
      "\n"
      "exit status:\n"
      "   0  ok\n"
      "   1  targets disagree (-t all) beyond the accuracy above; nothing is written\n"
      "  64  usage error (bad option, unknown name, bad -D value, bad --in generator)\n"
      "  65  program error (with --strict: an input no --in gives)\n"
      "  66  input missing or bad (a file, an archive), or shapes that do not broadcast\n"
      "  69  target not available (or a compressed .npz, in a build without zlib)\n"
      "  70  internal error\n"
      "  71  out of memory: an allocation that cannot be made (its size is said)\n"
      "  73  output cannot be written\n"
      "  74  standard output cannot be written\n");
}

/* ---- argument parsing ---- */

/* --devices: "all", or device numbers separated by commas (the library
** checks that the devices exist). */
static bool device_list(const char *s) {
  if (!strcmp(s, "all"))
    return true;
  for (;;) {
    if (!isdigit((unsigned char)*s) || strspn(s, "0123456789") > 7)
      return false;
    s += strspn(s, "0123456789");
    if (!*s)
      return true;
    if (*s++ != ',')
      return false;
  }
}

/* Python's number literals, with a sign: decimal integers (no leading zeros),
** 0x / 0o / 0b integers, floats (digits with '.' or an exponent), inf and
** nan; '_' may separate digits.  What strtod() also takes (hex floats,
** "infinity", spaces) is refused.  An integer above INT64_MAX that fits
** uint64 is NUM_UINT64, its bits in *iv. */
typedef enum { NUM_BAD, NUM_INT, NUM_FLOAT, NUM_INT_RANGE, NUM_UINT64, NUM_FLOAT_RANGE } NumKind;

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
    if (!neg && errno != ERANGE && u > 9223372036854775807ull) {
      uint64_t w = u;
      memcpy(iv, &w, sizeof *iv);
      return NUM_UINT64;
    }
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

/* A count: a non-negative integer, also written 10_000_000 or 1e7 when exact. */
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

/* -n: a count, or a shape: counts joined by 'x' (1000x1000, 2x3x4), at
** most NumPy's 64 axes, whose product fits int64. */
static bool parse_shape(const char *s, Cli *cli) {
  if (!strchr(s, 'x')) {
    cli->ndim = 1;
    return parse_count(s, &cli->shape[0]) && (cli->n = cli->shape[0], true);
  }
  char part[64];
  int nd = 0;
  bool zero = false, over = false;
  int64_t n = 1;
  for (const char *p = s;; p++) {
    size_t len = strcspn(p, "x");
    if (len == 0 || len >= sizeof part || nd == NPY_MAXDIMS)
      return false;
    memcpy(part, p, len);
    part[len] = '\0';
    int64_t d;
    if (!parse_count(part, &d))
      return false;
    cli->shape[nd++] = d;
    zero |= d == 0;
    if (d > 0 && n > INT64_MAX / d)
      over = true;
    else
      n *= d;
    p += len;
    if (!*p)
      break;
  }
  if (over && !zero)
    return false;
  cli->ndim = nd;
  cli->n = zero ? 0 : n;
  return true;
}

/* --in FILE.npz and --out FILE.npz: every array of the archive. */
static void add_archive(const char **v, int *n, const char *opt, const char *arg) {
  if (*n == MAX_NAMED)
    die_usage("too many %s options (at most %d)", opt, MAX_NAMED);
  for (int k = 0; k < *n; k++)
    if (!strcmp(v[k], arg))
      die_usage("%s %s is given twice", opt, arg);
  v[(*n)++] = arg;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && !strcmp(s + n - t, tail);
}

static void add_named(Named *v, int *n, const char *opt, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    if (!strcmp(opt, "--in") || !strcmp(opt, "--out"))
      die_usage("%s needs NAME=%s or FILE.npz, got '%s'", opt,
                opt[2] == 'i' ? "SPEC" : "FILE", arg);
    die_usage("%s needs NAME=VALUE, got '%s'", opt, arg);
  }
  if (*n == MAX_NAMED)
    die_usage("too many %s options (at most %d)", opt, MAX_NAMED);
  char *name = strndup(arg, (size_t)(eq - arg));
  if (!name) {
    fprintf(stderr, "jitc: out of memory\n");
    exit(EX_OSERR);
  }
  for (int k = 0; k < *n; k++)
    if (!strcmp(v[k].name, name))
      die_usage("%s for '%s' is given twice", opt, name);
  v[*n].name = name;
  v[*n].value = eq + 1;
  (*n)++;
}

enum { OPT_DTYPE = 256, OPT_IN, OPT_OUT, OPT_EMIT, OPT_REPEAT, OPT_THREADS, OPT_FAST_MATH,
       OPT_NO_CACHE, OPT_CACHE_DIR, OPT_ARCH, OPT_DEVICES, OPT_CPU, OPT_JSON, OPT_VERSION, OPT_INFO,
       OPT_STRICT, OPT_LIST };

static const struct option long_options[] = {
    {"target", required_argument, NULL, 't'},     {"file", required_argument, NULL, 'f'},
    {"size", required_argument, NULL, 'n'},       {"dtype", required_argument, NULL, OPT_DTYPE},
    {"in", required_argument, NULL, OPT_IN},      {"out", required_argument, NULL, OPT_OUT},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"emit", required_argument, NULL, OPT_EMIT},  {"repeat", required_argument, NULL, OPT_REPEAT},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"fast-math", no_argument, NULL, OPT_FAST_MATH},
    {"no-cache", no_argument, NULL, OPT_NO_CACHE},
    {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
    {"arch", required_argument, NULL, OPT_ARCH},  {"cpu", required_argument, NULL, OPT_CPU},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"json", no_argument, NULL, OPT_JSON},        {"quiet", no_argument, NULL, 'q'},
    {"version", no_argument, NULL, OPT_VERSION},  {"info", no_argument, NULL, OPT_INFO},
    {"list", no_argument, NULL, OPT_LIST},
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

void parse_args(Cli *cli, int argc, char **argv) {
  jitc_options_init(&cli->opt);
  cli->opt.implicit_inputs = 1;
  cli->n = cli->shape[0] = 10000000;
  cli->ndim = 1;
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
    case OPT_LIST: /* for the tools that generate programs: tests/fuzz_diff.py */
      fputs(jitc_vocabulary(), stdout);
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
      if (!parse_shape(v, cli))
        die_usage("--size needs a non-negative integer (such as 1000, 10_000_000 or 1e7) "
                  "or a shape (such as 1000x1000, at most %d axes), got '%s'", NPY_MAXDIMS, v);
      cli->n_given = true;
      break;
    case OPT_DTYPE: {
      jitc_dtype t;
      if (strchr(v, '=')) { /* --dtype NAME=T: one generated array */
        add_named(cli->dtypes, &cli->ndtypes, "--dtype", v);
        v = cli->dtypes[cli->ndtypes - 1].value;
        if (jitc_dtype_parse(v, &t))
          die_usage("unknown dtype '%s' (use %s)", v, dtypes_or());
      } else if (jitc_dtype_parse(v, &cli->dtype)) {
        die_usage("unknown dtype '%s' (use %s)", v, dtypes_or());
      }
      break;
    }
    case OPT_IN:
      if (!strchr(v, '=') && ends_with(v, ".npz"))
        add_archive(cli->in_archives, &cli->nin_archives, "--in", v);
      else
        add_named(cli->ins, &cli->nins, "--in", v);
      break;
    case OPT_OUT:
      if (!strchr(v, '=') && ends_with(v, ".npz"))
        add_archive(cli->out_archives, &cli->nout_archives, "--out", v);
      else
        add_named(cli->outs, &cli->nouts, "--out", v);
      break;
    case OPT_STRICT:
      cli->strict = true;
      cli->opt.implicit_inputs = 0; /* an undeclared name is the library's "unknown name" */
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
    case OPT_DEVICES:
      if (!device_list(v))
        die_usage("--devices needs 'all' or device numbers separated by commas (0,1), got '%s'",
                  v);
      cli->opt.devices = v;
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


/* -D NAME=VALUE[:TYPE]: a weak literal, or a typed scalar whose value must
** be representable in TYPE (the library would otherwise round or refuse it
** only when the kernel runs). */
void parse_def(const Named *d, jitc_scalar_decl *decl, jitc_value *val) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", d->value);
  char *colon = strrchr(buf, ':');
  decl->name = d->name;
  decl->weak = 1;
  if (colon) {
    *colon = '\0';
    if (jitc_dtype_parse(colon + 1, &decl->dtype))
      die_usage("-D %s: unknown type '%s' (use %s)", d->name, colon + 1, dtypes_or());
    decl->weak = 0;
  }
  const char *v = buf;
  int64_t i = 0;
  double f = 0, re, im;
  if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "False") || !strcmp(v, "false")) {
    val->dtype = JITC_BOOL;
    val->u.i = i = v[0] == 'T' || v[0] == 't';
  } else if (gen_parse_complex(v, &re, &im)) { /* Python's complex: complex128 */
    val->dtype = JITC_COMPLEX128;
    val->u.c.re = re;
    val->u.c.im = im;
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
    case NUM_UINT64: /* a value of uint64 alone: a Python int the library takes
                        where it meets uint64 alone, as NumPy's u + 2**63 */
      if (decl->weak || (elem_kind(decl->dtype) == EK_UINT && jitc_dtype_size(decl->dtype) == 8)) {
        val->dtype = decl->weak ? JITC_UINT64 : decl->dtype;
        val->u.i = i;
        break;
      }
      /* fall through */
    case NUM_INT_RANGE:
      if (!decl->weak && (elem_kind(decl->dtype) == EK_SINT || elem_kind(decl->dtype) == EK_UINT))
        die_usage("-D %s: %s is out of range for %s", d->name, v, jitc_dtype_name(decl->dtype));
      die_usage("-D %s: %s does not fit in int64 (NumPy raises OverflowError for such a "
                "Python int); write it as a float, such as %s.0", d->name, v, v);
    case NUM_FLOAT_RANGE:
      die_usage("-D %s: %s is beyond the range of float64", d->name, v);
    default:
      die_usage("-D %s: '%s' is not a number (use a Python literal: an integer, a float, inf, "
                "nan, a complex such as 1+2j, True or False)", d->name, v);
    }
  }
  if (decl->weak) {
    decl->dtype = val->dtype;
    return;
  }
  /* The value must be one of the type's: checked by a round trip through
  ** one element of it (elem.c converts as astype does). */
  jitc_dtype t = decl->dtype;
  bool is_float = val->dtype == JITC_FLOAT64;
  const char *name = jitc_dtype_name(t);
  char why[96] = "";
  if (elem_kind(val->dtype) == EK_COMPLEX) {
    /* A complex value: each part finite in the part type where it is finite. */
    jitc_dtype p = elem_part_type(t);
    if (elem_kind(t) != EK_COMPLEX)
      snprintf(why, sizeof why, "%s has no imaginary part", name);
    else if ((isfinite(re) && isinf(elem_round(p, re))) ||
             (isfinite(im) && isinf(elem_round(p, im))))
      snprintf(why, sizeof why, "it is beyond the range of %s", name);
    if (why[0])
      die_usage("-D %s: %s cannot be %s: %s", d->name, v, name, why);
    return;
  }
  switch (elem_kind(t)) {
  case EK_BOOL:
    if (is_float ? !(f == 0 || f == 1) : !(i == 0 || i == 1))
      snprintf(why, sizeof why, "a bool needs 0 or 1, True or False");
    break;
  case EK_SINT:
  case EK_UINT: {
    /* [lo, end) as doubles, both exact: -2^(bits-1) or 0, 2^(bits-1) or 2^bits */
    int bits = 8 * (int)jitc_dtype_size(t), sign = elem_kind(t) == EK_SINT;
    double lo = sign ? -ldexp(1.0, bits - 1) : 0, end = ldexp(1.0, bits - sign);
    if (is_float && f != floor(f))
      snprintf(why, sizeof why, "an integer type needs an integral value");
    else if (is_float ? !(f >= lo && f < end) : !elem_int_fits(t, i, val->dtype == JITC_UINT64))
      snprintf(why, sizeof why, "it is out of range");
    break;
  }
  default:
    if (is_float) {
      if (isfinite(f) && isinf(elem_round(t, f))) /* rounds to inf */
        snprintf(why, sizeof why, "it is beyond the range of %s", name);
    } else {
      unsigned char cell[16]; /* the widest element: complex128 */
      elem_set_int(cell, t, 0, i);
      double back = elem_get(cell, t, 0);
      if (!(back >= -0x1p63 && back < 0x1p63) || (int64_t)back != i)
        snprintf(why, sizeof why, "%s cannot hold it exactly", name);
    }
  }
  if (why[0])
    die_usage("-D %s: %s cannot be %s: %s", d->name, v, name, why);
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
** silently ignored.  The names are those of the compiled kernel k. */
int check_names(const Cli *cli, const jitc_kernel *k) {
  static const char *names[2 * MAX_NAMED];
  int n = 0;
  for (int a = 0; a < jitc_kernel_array_count(k) && n < 2 * MAX_NAMED; a++)
    jitc_kernel_array(k, a, &names[n++], NULL, NULL);
  for (int s = 0; s < jitc_kernel_scalar_count(k) && n < 2 * MAX_NAMED; s++)
    jitc_kernel_scalar(k, s, &names[n++], NULL);
  int status = EX_OK;
  for (int q = 0; q < cli->nins && !status; q++)
    if (!cli->ins[q].whole && jitc_kernel_find_array(k, cli->ins[q].name) < 0)
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
  return status;
}
