/*
** inputs.c -- what a run reads: the program text, the input arrays from
** .npy files or generators, the shape they fix, the signature (each
** array's dtype, each -D scalar), and each target's arrays filled from
** them.  Every target starts from the same data: the first target's inputs
** are kept and copied for the others and for each --repeat.
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
bool enough_memory(const Run *r, const jitc_kernel *k) {
  int64_t n = r->n;
  int ntargets = r->ntargets;
  double need = 0;
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, NULL, &role, &dt);
    double bytes = (double)(role == JITC_RESULT ? 1 : n) * (double)jitc_dtype_size(dt);
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

/* Inputs from files first: they fix the shape, the memory order and their
** dtypes. */
int load_inputs(Run *r) {
  Cli *cli = &r->cli;
  char err[1024];
  for (int k = 0; k < cli->nins; k++) {
    if (gen_is_spec(cli->ins[k].value))
      continue;
    /* --dtype NAME=T for a file says what it holds (a '<V2' file is
    ** bfloat16 only when T says so); declare_signature checks the rest. */
    jitc_dtype named, *said = NULL;
    for (int q = 0; q < cli->ndtypes; q++)
      if (!strcmp(cli->dtypes[q].name, cli->ins[k].name) &&
          jitc_dtype_parse(cli->dtypes[q].value, &named) == JITC_OK)
        said = &named;
    int rc = npy_read(cli->ins[k].value, said, &r->files[k], err, sizeof err);
    if (rc) {
      fprintf(stderr, "jitc: %s%s\n", err, rc == -2 ? " for its data" : "");
      return rc == -2 ? EX_OSERR : EX_NOINPUT;
    }
    const HostArray *f = &r->files[k], *s = r->shape_from;
    if (!s) {
      r->shape_from = f;
      r->shape_name = cli->ins[k].name;
      continue;
    }
    bool same = f->ndim == s->ndim;
    for (int d = 0; same && d < f->ndim; d++)
      same = f->shape[d] == s->shape[d];
    if (!same) {
      char s1[256], s2[256];
      shape_text(s->shape, s->ndim, s1, sizeof s1);
      shape_text(f->shape, f->ndim, s2, sizeof s2);
      fprintf(stderr, "jitc: arrays must have the same shape: '%s' is %s but '%s' is %s\n",
              r->shape_name, s1, cli->ins[k].name, s2);
      return EX_NOINPUT;
    }
  }
  r->n = cli->n;
  if (!r->shape_from)
    return EX_OK;
  /* Arrays are processed flat in memory order, so all must share one order:
  ** the first file's.  Others are rewritten into it. */
  for (int k = 0; k < cli->nins; k++)
    if (r->files[k].data && reorder(&r->files[k], r->shape_from->fortran)) {
      fprintf(stderr, "jitc: out of memory: cannot reorder '%s'\n", cli->ins[k].name);
      return EX_OSERR;
    }
  if (cli->n_given && cli->n != r->shape_from->n) {
    char s1[256];
    shape_text(r->shape_from->shape, r->shape_from->ndim, s1, sizeof s1);
    fprintf(stderr, "jitc: --size %lld disagrees with input '%s' of shape %s\n",
            (long long)cli->n, r->shape_name, s1);
    return EX_NOINPUT;
  }
  r->n = r->shape_from->n;
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
void declare_signature(Run *r) {
  Cli *cli = &r->cli;
  for (int k = 0; k < cli->nins; k++) {
    jitc_dtype t = cli->dtype;
    for (int q = 0; q < cli->ndtypes; q++)
      if (!strcmp(cli->dtypes[q].name, cli->ins[k].name)) {
        jitc_dtype_parse(cli->dtypes[q].value, &t);
        if (r->files[k].data && t != r->files[k].dtype)
          die_usage("--dtype %s=%s: '%s' comes from a file of %s, whose dtype it keeps",
                    cli->ins[k].name, cli->dtypes[q].value, cli->ins[k].name,
                    jitc_dtype_name(r->files[k].dtype));
      }
    r->decls[r->ndecls++] =
        (jitc_array_decl){cli->ins[k].name, r->files[k].data ? r->files[k].dtype : t};
    if (!r->files[k].data)
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
  for (int k = 0; k < cli->ndefs; k++)
    parse_def(&cli->defs[k], &r->sdecls[k], &r->svals[k]);
  cli->opt.implicit_dtype = cli->dtype;
}

/* One array's data for the first target: a file's, a generator's, or (an
** output) poison. */
static int fill_first(Run *r, Arr *A) {
  Cli *cli = &r->cli;
  char err[1024];
  size_t bytes = (size_t)r->n * jitc_dtype_size(A->dtype);
  int in = -1;
  for (int q = 0; q < cli->nins; q++)
    if (!strcmp(cli->ins[q].name, A->name))
      in = q;
  if (A->role == JITC_RESULT) { /* one element, written by every run */
    A->source = "new";
    memset(A->data.data, 0xff, jitc_dtype_size(A->dtype));
    return EX_OK;
  }
  if (A->role == JITC_OUTPUT) {
    A->source = in >= 0 ? cli->ins[in].value : "new";
    if (in >= 0 && r->files[in].data)
      memcpy(A->data.data, r->files[in].data, bytes);
    else /* poison (an unwritten element shows), and fault the pages in before timing */
      memset(A->data.data, 0xff, bytes);
    return EX_OK;
  }
  if (in >= 0 && r->files[in].data) {
    memcpy(A->data.data, r->files[in].data, bytes);
    A->source = cli->ins[in].value;
  } else {
    const char *spec = in >= 0 ? cli->ins[in].value : "ones";
    A->defaulted = in < 0;
    A->source = spec;
    /* Generated data follows NumPy's C order (np.arange(n).reshape(shape)). */
    bool want_fortran = A->data.fortran;
    A->data.fortran = false;
    if (gen_fill(&A->data, spec, err, sizeof err)) { /* check_spec has tried it */
      fprintf(stderr, "jitc: input '%s': %s\n", A->name, err);
      return EX_USAGE;
    }
    if (reorder(&A->data, want_fortran)) {
      fprintf(stderr, "jitc: out of memory: cannot reorder '%s'\n", A->name);
      return EX_OSERR;
    }
  }
  /* Keep the starting data: repeats and other targets start from it. */
  if (host_array_alloc(&A->initial, A->dtype, r->n, err, sizeof err)) {
    fprintf(stderr, "jitc: %s for '%s' (its starting data)\n", err, A->name);
    return EX_OSERR;
  }
  memcpy(A->initial.data, A->data.data, bytes);
  return EX_OK;
}

/* The arrays of res's kernel, allocated and filled, their data pointers in
** ptrs[] (the kernel's order): from the inputs for the first target, copies
** of the first target's starting data for the others. */
int make_arrays(Run *r, Result *res, void **ptrs) {
  char err[1024];
  const Arr *first = r->results[0].arrs;
  for (int a = 0; a < r->narrs; a++) {
    Arr *A = &res->arrs[a];
    jitc_kernel_array(res->kernel, a, &A->name, &A->role, &A->dtype);
    bool result = A->role == JITC_RESULT; /* a reduction's: one element, shape () */
    if (host_array_alloc(&A->data, A->dtype, result ? 1 : r->n, err, sizeof err)) {
      fprintf(stderr, "jitc: %s for '%s'\n", err, A->name);
      return EX_OSERR;
    }
    if (result) {
      A->data.ndim = 0;
    } else if (r->shape_from) {
      A->data.ndim = r->shape_from->ndim;
      memcpy(A->data.shape, r->shape_from->shape, sizeof A->data.shape);
      A->data.fortran = r->shape_from->fortran;
    }
    if (res != &r->results[0]) {
      if (A->role != JITC_OUTPUT && !result)
        memcpy(A->data.data, first[a].initial.data, (size_t)r->n * jitc_dtype_size(A->dtype));
      A->source = first[a].source;
      A->defaulted = first[a].defaulted;
    } else {
      int st = fill_first(r, A);
      if (st)
        return st;
    }
    ptrs[a] = A->data.data;
  }
  return EX_OK;
}

void free_inputs(Run *r) {
  for (int k = 0; k < r->cli.nins; k++)
    host_array_free(&r->files[k]);
}
