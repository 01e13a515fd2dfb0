/*
** shape.c -- the shapes of a run, once the first kernel says which arrays
** it has and what each is for:
**
**   - the generated inputs (ones, rand, ...) have -n's shape, or, without
**     -n, the broadcast shape of the inputs from files (so that `--in
**     a=m.npy 'c = a + b'` gives b of a's shape), or -n's default;
**   - the run's shape is the broadcast shape of every input, by NumPy's
**     rules (the library's jitc_broadcast_shape, whose error names both
**     shapes and the axis); a program with no input array has the shape ()
**     of one element, as NumPy's scalar expressions do, unless -n gives it
**     one (then it runs flat over -n's elements, `i` numbering them);
**   - the outputs are in C order, or in Fortran order where NumPy's ufuncs
**     would give Fortran order (order='K': the axis order NumPy's iterator
**     picks from the inputs' strides, numexpr's evaluate too), so that a
**     written .npy is what np.save(np.add(a, b)) writes.
*/
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int input_index(const Cli *cli, const char *name) {
  for (int q = 0; q < cli->nins; q++)
    if (!strcmp(cli->ins[q].name, name))
      return q;
  return -1;
}

static bool is_input(jitc_role role) { return role == JITC_INPUT || role == JITC_INOUT; }

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* NumPy's order='K' for an output of shape[0..ndim) over operands op[0..n):
** true for Fortran order.  This is NumPy's iterator (its constructor's
** npyiter_find_best_axis_ordering): the axes, fastest first, are sorted by
** an insertion sort in which axis j0 goes before axis j1 when the strides
** of the operands that step along both (a zero stride, a broadcast or
** 1-long axis, says nothing) put it there, the first such operand deciding
** and any operand that disagrees keeping C order.  The output is allocated
** contiguous in that axis order; it is Fortran order for np.save when it is
** Fortran-contiguous and not C-contiguous (1-long axes ignored). */
static bool numpy_fortran(const jitc_array *op, int n, int ndim, const int64_t *shape) {
  if (ndim < 2)
    return false;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0)
      return false; /* an empty array is both */
  /* stride[o][d]: operand o's step along axis d of the output, 0 where it
  ** does not step. */
  int64_t(*stride)[NPY_MAXDIMS] = calloc((size_t)n + 1, sizeof *stride);
  if (!stride)
    return false;
  for (int o = 0; o < n; o++) {
    int off = ndim - op[o].ndim;
    for (int d = 0; d < op[o].ndim; d++)
      if (op[o].shape[d] != 1 && shape[off + d] != 1)
        stride[o][off + d] = op[o].strides[d];
  }
  int perm[NPY_MAXDIMS]; /* axes, fastest first */
  for (int k = 0; k < ndim; k++)
    perm[k] = ndim - 1 - k;
  for (int i0 = 1; i0 < ndim; i0++) {
    int ipos = i0, j0 = perm[i0];
    for (int i1 = i0 - 1; i1 >= 0; i1--) {
      int j1 = perm[i1];
      bool ambiguous = true, swap = false;
      for (int o = 0; o < n; o++) {
        int64_t s0 = stride[o][j0], s1 = stride[o][j1];
        if (s0 == 0 || s1 == 0)
          continue;
        if (abs64(s1) <= abs64(s0))
          swap = false; /* a conflict keeps C order */
        else if (ambiguous)
          swap = true;
        ambiguous = false;
      }
      if (ambiguous)
        continue;
      if (!swap)
        break;
      ipos = i1;
    }
    for (int k = i0; k > ipos; k--)
      perm[k] = perm[k - 1];
    perm[ipos] = j0;
  }
  free(stride);
  /* Contiguous in perm's order: C- and Fortran-contiguous as NumPy's flags
  ** say (1-long axes skipped). */
  int64_t out[NPY_MAXDIMS], s = 1;
  for (int k = 0; k < ndim; k++) {
    out[perm[k]] = s;
    s *= shape[perm[k]];
  }
  bool c = true, f = true;
  int64_t sc = 1, sf = 1;
  for (int d = 0; d < ndim; d++) {
    int dc = ndim - 1 - d;
    if (shape[dc] != 1) {
      c &= out[dc] == sc;
      sc *= shape[dc];
    }
    if (shape[d] != 1) {
      f &= out[d] == sf;
      sf *= shape[d];
    }
  }
  return f && !c;
}

/* The shape array a of the kernel has: a file's own, the generated
** inputs', the run's for outputs, a reduction's result its own (plan_shapes:
** () for a whole reduction). */
void array_shape(const Run *r, int a, jitc_role role, int in, int *ndim,
                 const int64_t **shape, bool *fortran) {
  *fortran = false;
  if (role == JITC_RESULT) {
    *ndim = r->res_ndim ? r->res_ndim[a] : 0;
    *shape = r->res_shape ? r->res_shape[a] : r->shape;
  } else if (is_input(role) && in >= 0 && r->isfile[in]) {
    *ndim = r->files[in].ndim;
    *shape = r->files[in].shape;
    *fortran = r->files[in].fortran;
  } else if (is_input(role)) {
    *ndim = r->gen_ndim;
    *shape = r->gen_shape;
  } else {
    *ndim = r->ndim;
    *shape = r->shape;
    *fortran = r->out_fortran;
  }
}

static int64_t count_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    n *= shape[d]; /* the library has checked that it fits */
  return n;
}

/* The inputs' arrays as the library sees them (generated ones of gen's
** shape, which plan_shapes sets first to () so as to learn the files'
** broadcast shape), with strides for the order rule. */
static void input_arrays(const Run *r, const jitc_kernel *k, jitc_array *arr, int64_t *strides) {
  static char dummy[16]; /* the library reads no data to broadcast */
  for (int a = 0; a < jitc_kernel_array_count(k); a++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &name, &role, &dt);
    arr[a] = (jitc_array){dummy, 0, NULL, NULL};
    if (!is_input(role))
      continue;
    HostArray h = {.dtype = dt};
    bool fortran;
    const int64_t *shape;
    array_shape(r, a, role, input_index(&r->cli, name), &h.ndim, &shape, &fortran);
    memcpy(h.shape, shape, sizeof(int64_t) * (size_t)h.ndim);
    h.fortran = fortran;
    host_strides(&h, strides + (size_t)a * NPY_MAXDIMS);
    arr[a] = (jitc_array){dummy, h.ndim, shape, strides + (size_t)a * NPY_MAXDIMS};
  }
}

/* The shape of each reduction's result, from the inputs' (NumPy's: the
** broadcast shape without the reduced axes, or with 1 for them under
** keepdims). */
static int result_shapes(Run *r, const jitc_kernel *k, jitc_array *arr, int64_t *strides) {
  int na = jitc_kernel_array_count(k);
  free(r->res_ndim);
  free(r->res_shape);
  r->res_ndim = calloc((size_t)na + 1, sizeof *r->res_ndim);
  r->res_shape = calloc((size_t)na + 1, sizeof *r->res_shape);
  if (!r->res_ndim || !r->res_shape) {
    fprintf(stderr, "jitc: out of memory\n");
    return EX_OSERR;
  }
  input_arrays(r, k, arr, strides);
  for (int a = 0; a < na; a++) {
    jitc_role role;
    jitc_kernel_array(k, a, NULL, &role, NULL);
    jitc_status st = role == JITC_RESULT ? jitc_array_shape(r->ctx, k, arr, a, &r->res_ndim[a],
                                                            r->res_shape[a]) : JITC_OK;
    if (st)
      return fail_status(r->ctx, st);
  }
  return EX_OK;
}

int plan_shapes(Run *r, const jitc_kernel *k) {
  const Cli *cli = &r->cli;
  int na = jitc_kernel_array_count(k);
  jitc_array *arr = calloc((size_t)na + 1, sizeof *arr);
  int64_t *strides = calloc((size_t)(na + 1) * NPY_MAXDIMS, sizeof *strides);
  if (!arr || !strides) {
    free(arr);
    free(strides);
    fprintf(stderr, "jitc: out of memory\n");
    return EX_OSERR;
  }
  bool any_input = false, any_file = false, any_gen = false;
  for (int a = 0; a < na; a++) {
    const char *name;
    jitc_role role;
    jitc_kernel_array(k, a, &name, &role, NULL);
    int in = input_index(cli, name);
    any_input |= is_input(role);
    any_file |= is_input(role) && in >= 0 && r->isfile[in];
    any_gen |= is_input(role) && !(in >= 0 && r->isfile[in]);
  }
  int status = EX_OK;
  jitc_status st = JITC_OK;
  r->gen_ndim = 0;
  if (any_file && !cli->n_given) { /* the files' broadcast shape */
    input_arrays(r, k, arr, strides);
    st = jitc_broadcast_shape(r->ctx, k, arr, &r->gen_ndim, r->gen_shape);
  } else {
    r->gen_ndim = cli->ndim;
    memcpy(r->gen_shape, cli->shape, sizeof r->gen_shape);
  }
  if (st == JITC_OK) {
    input_arrays(r, k, arr, strides);
    st = jitc_broadcast_shape(r->ctx, k, arr, &r->ndim, r->shape);
  }
  if (st) {
    status = fail_status(r->ctx, st);
  } else if (!any_input && cli->n_given) {
    r->flat = true;
    r->ndim = cli->ndim;
    memcpy(r->shape, cli->shape, sizeof r->shape);
  } else if (cli->n_given && any_file && !any_gen &&
             (r->ndim != cli->ndim ||
              memcmp(r->shape, cli->shape, sizeof(int64_t) * (size_t)r->ndim))) {
    char s1[NPY_MAXDIMS * 22], s2[NPY_MAXDIMS * 22];
    size_t len = 0;
    for (int d = 0; d < cli->ndim; d++) /* as -n takes it: 7, 2x3 */
      len += (size_t)snprintf(s1 + len, sizeof s1 - len, "%s%lld", d ? "x" : "",
                              (long long)cli->shape[d]);
    shape_text(r->shape, r->ndim, s2, sizeof s2);
    fprintf(stderr, "jitc: --size %s disagrees with the shape %s of the inputs from files "
            "(-n gives the shape of generated inputs; these have none)\n", s1, s2);
    status = EX_NOINPUT;
  }
  /* An output given with --in FILE is the array written into, as NumPy's
  ** out=: it must have the run's shape (NumPy: could not broadcast). */
  for (int a = 0; a < na && status == EX_OK && !r->flat; a++) {
    const char *name;
    jitc_role role;
    jitc_kernel_array(k, a, &name, &role, NULL);
    int in = input_index(cli, name);
    const HostArray *f = in >= 0 && r->isfile[in] ? &r->files[in] : NULL;
    if (role != JITC_OUTPUT || !f ||
        (f->ndim == r->ndim && !memcmp(f->shape, r->shape, sizeof(int64_t) * (size_t)r->ndim)))
      continue;
    char s1[NPY_MAXDIMS * 22], s2[NPY_MAXDIMS * 22];
    shape_text(r->shape, r->ndim, s1, sizeof s1);
    shape_text(f->shape, f->ndim, s2, sizeof s2);
    fprintf(stderr, "jitc: --in %s: the program writes '%s' of shape %s into the array given "
            "for it, of shape %s (NumPy: could not broadcast %s into %s)\n", name, name, s1, s2,
            s1, s2);
    status = EX_NOINPUT;
  }
  if (status == EX_OK && !r->flat)
    status = result_shapes(r, k, arr, strides);
  if (status == EX_OK) {
    int nops = 0;
    for (int a = 0; a < na; a++)
      if (arr[a].shape) /* an input (the others have no shape): to the front */
        arr[nops++] = arr[a];
    r->out_fortran = !r->flat && numpy_fortran(arr, nops, r->ndim, r->shape);
    r->n = count_of(r->ndim, r->shape);
  }
  free(arr);
  free(strides);
  return status;
}
