/*
** inputs.c -- what a run reads: the program text, the input arrays from
** .npy files, .npz archives or generators, each in its own shape and order
** (shape.c makes the run's shape of them), the signature (each array's
** dtype, each -D scalar), and each target's arrays filled from them.
** Every target starts from the same data: the first target's inputs are
** kept and copied for the others and for each --repeat.
*/
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
      fprintf(stderr, "jitc: out of memory: cannot allocate %zu bytes for program file '%s'\n",
              cap, path);
      exit(EX_OSERR);
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

/* The program text (from the argument, a file or standard input). */
int read_program(Run *r) {
  Cli *cli = &r->cli;
  r->source = cli->program_file ? read_program_file(cli->program_file) : (char *)cli->program;
  if (cli->program_file)
    cli->opt.source_name = strcmp(cli->program_file, "-") ? cli->program_file : "<stdin>";
  return EX_OK;
}

/* Whether the arrays of every target fit in the memory available now.
** Linux grants allocations it cannot back, and the out-of-memory killer
** then ends the process half-way; refusing up front gives a clear message
** before anything is touched.  Without /proc/meminfo it assumes they fit. */
bool enough_memory(const Run *r, const jitc_kernel *k) {
  int64_t n = r->n;
  int ntargets = r->ntargets;
  double need = 0;
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    int ndim;
    const int64_t *shape;
    bool fortran;
    array_shape(r, a, role, input_index(&r->cli, name), &ndim, &shape, &fortran);
    double count = 1;
    for (int d = 0; d < ndim; d++)
      count *= (double)shape[d];
    double bytes = count * (double)jitc_dtype_size(dt);
    need += bytes * ntargets + (role == JITC_OUTPUT || role == JITC_RESULT ? 0 : bytes);
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
  char want[32], have[32];
  size_text(need, want, sizeof want);
  size_text(avail + swap, have, sizeof have);
  fprintf(stderr, "jitc: out of memory: cannot allocate %.0f bytes (%s) for the arrays of %lld "
          "elements: %s is available; use a smaller -n\n", need, want, (long long)n, have);
  return false;
}

/* The inputs of kernel k that no --in gives: they will be ones.  That
** serves `jitc 'a[i] += 1'`, so it is said on standard error even under -q
** (a silent default would hide a name the program did not mean to read);
** under --strict it is an error, exit 65.  (With --strict the library
** refuses undeclared names itself; what is left is an array declared by
** --dtype NAME= alone.) */
int default_inputs(const Run *r, const jitc_kernel *k) {
  const Cli *cli = &r->cli;
  const char *names[8];
  int n = 0;
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    const char *name;
    jitc_role role;
    jitc_kernel_array(k, a, &name, &role, NULL);
    if (role != JITC_INPUT && role != JITC_INOUT)
      continue;
    bool given = false;
    for (int q = 0; q < cli->nins; q++)
      given |= !strcmp(cli->ins[q].name, name);
    if (given)
      continue;
    if (cli->strict) {
      fprintf(stderr, "jitc: --strict: input '%s' is not given with --in (--dtype %s= gives "
              "only its type)\n", name, name);
      return EX_DATAERR;
    }
    if (n < 8)
      names[n] = name;
    n++;
  }
  if (n == 1)
    fprintf(stderr, "jitc: note: input '%s' is ones (no --in %s=...)\n", names[0], names[0]);
  else if (n > 1) {
    fprintf(stderr, "jitc: note: inputs");
    for (int q = 0; q < n && q < 8; q++)
      fprintf(stderr, "%s '%s'", q ? "," : "", names[q]);
    fprintf(stderr, "%s are ones (no --in for them)\n", n > 8 ? ", ..." : "");
  }
  return EX_OK;
}

/* Whether a name of an archive can be an array of a program: a name of
** the language that is not one of its keywords (the library's rule for
** what a caller may bind); the others can only be named (--in a=F.npz:x). */
static bool bindable(const char *s) {
  static const char *const keywords[] = {"let", "and", "or", "not", "True", "False"};
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
          (*p >= '0' && *p <= '9')))
      return false;
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
    if (!strcmp(s, keywords[k]))
      return false;
  return true;
}

/* The status of a failed npy_read / npz_read. */
static int read_status(int rc, const char *err) {
  fprintf(stderr, "jitc: %s%s\n", err, rc == -2 ? " for its data" : "");
  return rc == -2 ? EX_OSERR : rc == -3 ? EX_UNAVAILABLE : EX_NOINPUT;
}

/* --in FILE.npz: each array of the archive becomes an --in NAME=FILE.npz:NAME
** (marked whole: the program need not use it), unless --in, -D or another
** archive gives that name. */
static int expand_archives(Run *r) {
  Cli *cli = &r->cli;
  char err[1024];
  int given = cli->nins;
  for (int f = 0; f < cli->nin_archives; f++) {
    Zip z;
    if (zip_open(&z, cli->in_archives[f], err, sizeof err))
      return read_status(-1, err);
    for (int k = 0; k < z.n; k++) {
      char name[1024];
      if (!npz_array_name(&z.e[k], name, sizeof name) || !bindable(name) ||
          npz_find(&z, name) != k) /* of equal names, the last (np.load's) */
        continue;
      int q = input_index(cli, name);
      bool defined = false;
      for (int d = 0; d < cli->ndefs; d++)
        defined |= !strcmp(cli->defs[d].name, name);
      if (q >= given) {
        fprintf(stderr, "jitc: --in %s and --in %s both hold an array '%s'; give it with "
                "--in %s=FILE.npz:%s\n", cli->ins[q].value, cli->in_archives[f], name, name,
                name);
        zip_close(&z);
        return EX_USAGE;
      }
      if (q >= 0 || defined)
        continue;
      if (cli->nins == MAX_NAMED) {
        zip_close(&z);
        die_usage("too many --in arrays (at most %d)", MAX_NAMED);
      }
      Named *in = &cli->ins[cli->nins];
      size_t len = strlen(cli->in_archives[f]) + strlen(name) + 2;
      char *value = malloc(len);
      if (value)
        snprintf(value, len, "%s:%s", cli->in_archives[f], name);
      in->name = strdup(name);
      in->value = value;
      in->whole = true;
      if (!in->name || !value) {
        zip_close(&z);
        fprintf(stderr, "jitc: out of memory\n");
        return EX_OSERR;
      }
      cli->nins++;
    }
    zip_close(&z);
  }
  return EX_OK;
}

/* "FILE.npz" or "FILE.npz:MEMBER" (--in NAME=SPEC, --out NAME=SPEC): the
** archive's path into path and the member's name (the array's own name
** when the spec names none); false for anything else (a .npy file). */
bool archive_spec(const char *spec, const char *name, char *path, size_t pathsz,
                  const char **member) {
  size_t len = strlen(spec);
  const char *at = NULL;
  for (const char *p = strstr(spec, ".npz:"); p; p = strstr(p + 1, ".npz:"))
    at = p; /* the last: a path may hold ".npz:" itself */
  if (len >= 4 && !strcmp(spec + len - 4, ".npz")) {
    snprintf(path, pathsz, "%s", spec);
    *member = name;
  } else if (at && at[5]) {
    snprintf(path, pathsz, "%.*s", (int)(at + 4 - spec), spec);
    *member = at + 5;
  } else {
    return false;
  }
  return strlen(path) < pathsz - 1;
}

/* Reads input k: a .npy file, or an array of a .npz archive (whose data,
** for an array of a --in FILE.npz, waits until the program uses it). */
static int read_input(Run *r, int k, bool header_only) {
  Cli *cli = &r->cli;
  const Named *in = &cli->ins[k];
  char err[1400], path[4096];
  /* --dtype NAME=T for a file says what it holds (a '<V2' file is
  ** bfloat16 only when T says so); declare_signature checks the rest. */
  jitc_dtype named, *said = NULL;
  for (int q = 0; q < cli->ndtypes; q++)
    if (!strcmp(cli->dtypes[q].name, in->name) &&
        jitc_dtype_parse(cli->dtypes[q].value, &named) == JITC_OK)
      said = &named;
  const char *member;
  if (!archive_spec(in->value, in->name, path, sizeof path, &member)) {
    int rc = npy_read(in->value, said, &r->files[k], err, sizeof err);
    return rc ? read_status(rc, err) : EX_OK;
  }
  Zip z;
  if (zip_open(&z, path, err, sizeof err))
    return read_status(-1, err);
  int m = npz_find(&z, member), rc = 0;
  if (m < 0) {
    char names[512];
    npz_names(&z, names, sizeof names);
    fprintf(stderr, "jitc: --in %s=%s: %s holds no array '%s' (it holds %s)\n", in->name,
            in->value, path, member, names);
    zip_close(&z);
    return EX_NOINPUT;
  }
  HostArray *f = &r->files[k];
  rc = npz_read(&z, m, said, header_only, f, err, sizeof err);
  zip_close(&z);
  return rc ? read_status(rc, err) : EX_OK;
}

/* Inputs from files first: their shapes and dtypes are the program's. */
int load_inputs(Run *r) {
  Cli *cli = &r->cli;
  int status = expand_archives(r);
  for (int k = 0; k < cli->nins && status == EX_OK; k++) {
    if (gen_is_spec(cli->ins[k].value))
      continue;
    r->isfile[k] = true;
    status = read_input(r, k, cli->ins[k].whole);
  }
  return status;
}

/* The data of the arrays of --in FILE.npz that kernel k uses. */
int load_used(Run *r, const jitc_kernel *k) {
  Cli *cli = &r->cli;
  for (int q = 0; q < cli->nins; q++) {
    if (!cli->ins[q].whole || jitc_kernel_find_array(k, cli->ins[q].name) < 0)
      continue;
    int st = read_input(r, q, false);
    if (st)
      return st;
  }
  return EX_OK;
}

/* A generator's spec is checked before anything runs: a bad one (an
** unknown generator, linspace:1, full:VALUE that does not fit the dtype)
** is a usage error, as a bad -D value is, by filling one element. */
static void check_spec(const Named *in, jitc_dtype t) {
  char err[1024];
  uint64_t one[2]; /* the widest element: complex128 */
  HostArray a = {.dtype = t, .ndim = 1, .shape = {1}, .n = 1, .data = one};
  if (gen_fill(&a, in->value, err, sizeof err))
    die_usage("--in %s=%s: %s", in->name, in->value, err);
}

/* The signature: the given inputs' dtypes (a file's own, which a --dtype
** NAME= may repeat but not change, else --dtype), a default input for each
** --dtype NAME= not given with --in, and -D scalars. */
static void declare(Run *r) {
  Cli *cli = &r->cli;
  r->ndecls = 0;
  for (int k = 0; k < cli->nins; k++) {
    jitc_dtype t = cli->dtype;
    for (int q = 0; q < cli->ndtypes; q++)
      if (!strcmp(cli->dtypes[q].name, cli->ins[k].name)) {
        jitc_dtype_parse(cli->dtypes[q].value, &t);
        if (r->isfile[k] && t != r->files[k].dtype)
          die_usage("--dtype %s=%s: '%s' comes from a file of %s, whose dtype it keeps",
                    cli->ins[k].name, cli->dtypes[q].value, cli->ins[k].name,
                    jitc_dtype_name(r->files[k].dtype));
      }
    r->decls[r->ndecls++] =
        (jitc_array_decl){cli->ins[k].name, r->isfile[k] ? r->files[k].dtype : t};
    if (!r->isfile[k])
      check_spec(&cli->ins[k], t);
  }
  for (int q = 0; q < cli->ndtypes; q++) {
    bool found = false;
    for (int k = 0; k < cli->nins; k++)
      found |= !strcmp(cli->dtypes[q].name, cli->ins[k].name);
    if (!found) {
      jitc_dtype t;
      jitc_dtype_parse(cli->dtypes[q].value, &t);
      r->decls[r->ndecls++] = (jitc_array_decl){cli->dtypes[q].name, t};
    }
  }
}

/* The arrays of a --in FILE.npz bind the names the program reads, and no
** other: one the program writes first (a `c` of the archive, and `c = a +
** 1`) stays a new array of its own type.  A front-end compile with every
** name declared says which are read; without it (a program error, which
** the real compile reports) all stay. */
static void keep_read_archive_arrays(Run *r) {
  Cli *cli = &r->cli;
  bool any = false;
  for (int k = 0; k < cli->nins; k++)
    any |= cli->ins[k].whole;
  jitc_kernel *kern = NULL;
  if (!any || frontend_compile(r, &kern) != JITC_OK)
    return;
  int kept = 0;
  for (int k = 0; k < cli->nins; k++) {
    int a = jitc_kernel_find_array(kern, cli->ins[k].name);
    jitc_role role = JITC_OUTPUT;
    if (a >= 0)
      jitc_kernel_array(kern, a, NULL, &role, NULL);
    if (cli->ins[k].whole && role != JITC_INPUT && role != JITC_INOUT) {
      free((char *)cli->ins[k].name);
      free((char *)cli->ins[k].value);
      continue;
    }
    cli->ins[kept] = cli->ins[k];
    r->files[kept] = r->files[k]; /* an array of an archive has no data yet */
    r->isfile[kept++] = r->isfile[k];
  }
  cli->nins = kept;
  jitc_kernel_free(kern);
  declare(r);
}

void declare_signature(Run *r) {
  Cli *cli = &r->cli;
  for (int k = 0; k < cli->ndefs; k++)
    parse_def(&cli->defs[k], &r->sdecls[k], &r->svals[k]);
  cli->opt.implicit_dtype = cli->dtype;
  declare(r);
  keep_read_archive_arrays(r);
}

/* One array's data for the first target: a file's, a generator's, or (an
** output) poison. */
static int fill_first(Run *r, Arr *A) {
  Cli *cli = &r->cli;
  char err[1024];
  size_t bytes = (size_t)A->data.n * jitc_dtype_size(A->dtype);
  int in = input_index(cli, A->name);
  if (A->role == JITC_RESULT) { /* one element, written by every run */
    A->source = "new";
    memset(A->data.data, 0xff, jitc_dtype_size(A->dtype));
    return EX_OK;
  }
  if (A->role == JITC_OUTPUT) { /* every element is written */
    A->source = in >= 0 ? cli->ins[in].value : "new";
    /* poison (an unwritten element shows), and fault the pages in before timing */
    memset(A->data.data, 0xff, bytes);
    return EX_OK;
  }
  if (in >= 0 && r->isfile[in]) {
    memcpy(A->data.data, r->files[in].data, bytes); /* in the file's own order */
    A->source = cli->ins[in].value;
  } else {
    /* Generated data is in C order (np.arange(n).reshape(shape)). */
    const char *spec = in >= 0 ? cli->ins[in].value : "ones";
    A->defaulted = in < 0;
    A->source = spec;
    if (gen_fill(&A->data, spec, err, sizeof err)) { /* check_spec has tried it */
      fprintf(stderr, "jitc: input '%s': %s\n", A->name, err);
      return EX_USAGE;
    }
  }
  /* Keep the starting data: repeats and other targets start from it. */
  if (host_array_alloc(&A->initial, A->dtype, A->data.n, err, sizeof err)) {
    fprintf(stderr, "jitc: %s for '%s' (its starting data)\n", err, A->name);
    return EX_OSERR;
  }
  memcpy(A->initial.data, A->data.data, bytes);
  return EX_OK;
}

/* The arrays of res's kernel, allocated in their shapes and orders (shape.c)
** and filled: from the inputs for the first target, copies of the first
** target's starting data for the others. */
int make_arrays(Run *r, Result *res) {
  char err[1024];
  const Arr *first = r->results[0].arrs;
  for (int a = 0; a < r->narrs; a++) {
    Arr *A = &res->arrs[a];
    jitc_kernel_array(res->kernel, a, &A->name, &A->role, &A->dtype);
    int ndim;
    const int64_t *shape;
    bool fortran;
    array_shape(r, a, A->role, input_index(&r->cli, A->name), &ndim, &shape, &fortran);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
      n *= shape[d];
    if (host_array_alloc(&A->data, A->dtype, n, err, sizeof err)) {
      fprintf(stderr, "jitc: %s for '%s'\n", err, A->name);
      return EX_OSERR;
    }
    A->data.ndim = ndim;
    memcpy(A->data.shape, shape, sizeof(int64_t) * (size_t)ndim);
    A->data.fortran = fortran;
    if (res != &r->results[0]) {
      if (A->role != JITC_OUTPUT && A->role != JITC_RESULT)
        memcpy(A->data.data, first[a].initial.data, (size_t)n * jitc_dtype_size(A->dtype));
      A->source = first[a].source;
      A->defaulted = first[a].defaulted;
    } else {
      int st = fill_first(r, A);
      if (st)
        return st;
    }
  }
  return EX_OK;
}

void free_inputs(Run *r) {
  for (int k = 0; k < r->cli.nins; k++)
    host_array_free(&r->files[k]);
}
