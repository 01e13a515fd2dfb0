/*
** run.c -- a kernel's run over host arrays as NumPy holds them: any shape
** and strides, in place (jitc_run_arrays), broadcast by NumPy's rules.
**
** What NumPy's ufuncs do around the loop, done here around the run:
** - the shape of the run is the broadcast shape of the inputs, or of an
**   output given that is larger (np.add(row, 1, out=matrix) fills every
**   row; `o = 1.5` fills an o given), as the library takes it
**   (jitc_run_arrays); an output given must have the shape, said here in
**   NumPy's words;
** - outputs not given are allocated with that shape in the memory order
**   asked: 'C', 'F', or 'A' and 'K' as NumPy's own iterator lays them out
**   (NpyIter allocating them beside the operands, as a ufunc does), the
**   common cases (every operand C-contiguous, or every one Fortran) without
**   the iterator;
** - an input whose memory overlaps an array the program writes, but is not
**   the very same elements (`a[1:] = a[:-1] + 1`), is copied first, as
**   NumPy's ufuncs copy such an operand; the same elements (`a = a * 2`
**   through two names) run in place.
*/
#include "pyjitc.h"

_Static_assert(sizeof(npy_intp) == sizeof(int64_t), "shapes and strides are handed over as they are");

static int reads(jitc_role r) { return r == JITC_INPUT || r == JITC_INOUT; }

/* NumPy's spelling of a shape: "(2,3)", "(4,)", "()". */
const char *shape_text(char *buf, size_t cap, int nd, const npy_intp *s) {
  size_t at = (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < nd && at < cap; d++)
    at += (size_t)snprintf(buf + at, cap - at, d ? ",%lld" : "%lld", (long long)s[d]);
  if (at < cap) snprintf(buf + at, cap - at, nd == 1 ? ",)" : ")");
  return buf;
}

/* Broadcasts shape xs of xnd axes into (*nd, shape): 0, or -1 where an
** axis has two extents neither of which is 1. */
static int broadcast_into(int *nd, npy_intp *shape, int xnd, const npy_intp *xs) {
  if (xnd > *nd) {
    int add = xnd - *nd;
    memmove(shape + add, shape, sizeof(npy_intp) * (size_t)*nd);
    for (int d = 0; d < add; d++) shape[d] = 1;
    *nd = xnd;
  }
  for (int e = 0; e < xnd; e++) {
    npy_intp *m = &shape[*nd - xnd + e];
    if (xs[e] == 1 || xs[e] == *m) continue;
    if (*m != 1) return -1;
    *m = xs[e];
  }
  return 0;
}

/* The library's error for inputs that do not broadcast: its message names
** both arrays, their shapes and the axis. */
static PyObject *raise_broadcast(const KernelObject *K, const Bound *arrs) {
  jitc_array arrays[MAXNAMES];
  for (int i = 0; i < K->narrays; i++) {
    int bound = KIND(arrs[i].code) == K_HOST || KIND(arrs[i].code) == K_DEV;
    arrays[i] = (jitc_array){(void *)(uintptr_t)arrs[i].ptr, bound ? arrs[i].ndim : 0,
                             (const int64_t *)arrs[i].shape, (const int64_t *)arrs[i].strides};
  }
  ModuleState *st = mod_state();
  Failure f = {0};
  int nd;
  int64_t shape[JITC_MAXDIMS];
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = jitc_broadcast_shape(st->ctx, K->k, arrays, &nd, shape);
  if (s) failure_take(&f, s);
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s) return failure_raise(&f);
  return raise_status(JITC_E_INTERNAL, "the inputs' shapes do not broadcast, but the library "
                      "found no error");
}

/* The steps of an array of shape xs and strides xst in the frame of nd
** axes of extents shape (0 on an axis it is broadcast over). */
void frame_strides(int xnd, const npy_intp *xs, const npy_intp *xst, int nd,
                          const npy_intp *shape, npy_intp *out) {
  for (int d = 0; d < nd; d++) {
    int e = d - (nd - xnd);
    out[d] = e < 0 || (xs[e] == 1 && shape[d] != 1) ? 0 : xst[e];
  }
}

/* The bytes [*lo, *hi) an array's elements occupy; empty when it has none. */
static void extent(const PyArrayObject *a, char **lo, char **hi) {
  char *p = PyArray_BYTES((PyArrayObject *)a);
  npy_intp l = 0, h = PyArray_ITEMSIZE(a);
  for (int d = 0; d < PyArray_NDIM(a); d++) {
    npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
    if (n == 0) h = 0;
    else if (s < 0) l += s * (n - 1);
    else h += s * (n - 1);
  }
  *lo = p + l;
  *hi = h > 0 ? p + h : *lo;
}

/* Whether input q, seen in the run's frame, is the very elements of the
** written array w (which has the run's shape): same address and step on
** every axis of more than one element, same element size. */
static int same_elements(PyArrayObject *w, PyArrayObject *q, int nd, const npy_intp *shape) {
  if (PyArray_DATA(w) != PyArray_DATA(q) || PyArray_ITEMSIZE(w) != PyArray_ITEMSIZE(q))
    return 0;
  npy_intp fs[NPY_MAXDIMS];
  frame_strides(PyArray_NDIM(q), PyArray_DIMS(q), PyArray_STRIDES(q), nd, shape, fs);
  for (int d = 0; d < nd; d++)
    if (shape[d] > 1 && fs[d] != PyArray_STRIDE(w, d)) return 0;
  return 1;
}

/* Copies each input that overlaps a given written array without being its
** very elements, as NumPy's ufuncs do: use[q] becomes the copy, a new
** reference (else use[q] is the Bound's array, borrowed). */
static int copy_overlapping(const KernelObject *K, const Bound *arrs, const int *alloc,
                            PyArrayObject **use, int *copied, int nd, const npy_intp *shape) {
  int given = 0; /* written arrays given: those the call made overlap nothing */
  for (int w = 0; w < K->narrays; w++)
    given |= K->aroles[w] != JITC_INPUT && K->aroles[w] != JITC_RESULT && !alloc[w];
  for (int q = 0; q < K->narrays && given; q++) {
    if (K->aroles[q] != JITC_INPUT || !use[q]) continue;
    char *qlo, *qhi;
    extent(use[q], &qlo, &qhi);
    for (int w = 0; w < K->narrays && qlo < qhi; w++) {
      if (w == q || K->aroles[w] == JITC_INPUT || K->aroles[w] == JITC_RESULT || alloc[w])
        continue;
      char *wlo, *whi;
      extent(arrs[w].arr, &wlo, &whi);
      if (!(wlo < qhi && qlo < whi) || same_elements(arrs[w].arr, use[q], nd, shape))
        continue;
      PyObject *c = PyArray_NewCopy(use[q], NPY_KEEPORDER);
      if (!c) return -1;
      use[q] = (PyArrayObject *)c;
      copied[q] = 1;
      break;
    }
  }
  return 0;
}

/* Whether every array operand is C- (flag NPY_ARRAY_C_CONTIGUOUS) or
** Fortran-contiguous (F_CONTIGUOUS) in its own shape.  NumPy's iterator
** orders the axes by the operands' strides, a broadcast axis (stride 0)
** saying nothing: operands all C-contiguous leave C order, all Fortran-
** contiguous (and not all C) give Fortran order. */
static int all_contiguous(const KernelObject *K, const Bound *arrs, int flag) {
  for (int j = 0; j < K->narrays; j++) {
    PyArrayObject *a = arrs[j].arr;
    if (a && K->aroles[j] != JITC_RESULT && !PyArray_CHKFLAGS(a, flag)) return 0;
  }
  return 1;
}

/* Allocates the outputs not given (alloc[j]), of the run's shape, laid out
** as NumPy's iterator lays out a ufunc's for `order`. */
static int allocate_outputs(const KernelObject *K, Bound *arrs, const int *alloc, int nd,
                            const npy_intp *shape, NPY_ORDER order) {
  int fortran = -1;
  if (nd <= 1 || order == NPY_CORDER) fortran = 0;
  else if (order == NPY_FORTRANORDER) fortran = 1;
  else if (order == NPY_ANYORDER) fortran = all_contiguous(K, arrs, NPY_ARRAY_F_CONTIGUOUS);
  else if (all_contiguous(K, arrs, NPY_ARRAY_C_CONTIGUOUS)) fortran = 0;
  else if (all_contiguous(K, arrs, NPY_ARRAY_F_CONTIGUOUS)) fortran = 1;
  if (fortran >= 0) {
    for (int j = 0; j < K->narrays; j++) {
      if (!alloc[j]) continue;
      PyArray_Descr *d = mod_descr(K->adtypes[j]); /* stolen by PyArray_Empty */
      PyObject *a = d ? PyArray_Empty(nd, (npy_intp *)shape, d, fortran) : NULL;
      if (!a) return -1;
      arrs[j].arr = (PyArrayObject *)a;
    }
    return 0;
  }
  /* NumPy's iterator over the operands, the outputs to make among them. */
  PyArrayObject *ops[NPY_MAXARGS];
  npy_uint32 flags[NPY_MAXARGS];
  PyArray_Descr *dts[NPY_MAXARGS];
  int map[NPY_MAXARGS], nop = 0, rc = -1;
  for (int j = 0; j < K->narrays && nop < NPY_MAXARGS; j++) {
    if (K->aroles[j] == JITC_RESULT || (!arrs[j].arr && !alloc[j])) continue;
    map[nop] = j;
    ops[nop] = alloc[j] ? NULL : arrs[j].arr;
    dts[nop] = alloc[j] ? mod_descr(K->adtypes[j]) : NULL;
    if (alloc[j] && !dts[nop]) goto out;
    flags[nop] = alloc[j] ? NPY_ITER_WRITEONLY | NPY_ITER_ALLOCATE | NPY_ITER_NO_SUBTYPE
               : K->aroles[j] == JITC_INPUT ? NPY_ITER_READONLY
               : K->aroles[j] == JITC_INOUT ? NPY_ITER_READWRITE | NPY_ITER_NO_BROADCAST
               : NPY_ITER_WRITEONLY | NPY_ITER_NO_BROADCAST;
    nop++;
  }
  /* The operands broadcast to the run's shape (an output given larger than
  ** the inputs is among them). */
  NpyIter *it = NpyIter_AdvancedNew(nop, ops, NPY_ITER_ZEROSIZE_OK, order, NPY_UNSAFE_CASTING,
                                    flags, dts, -1, NULL, NULL, 0);
  if (!it) goto out;
  PyArrayObject **made = NpyIter_GetOperandArray(it);
  for (int o = 0; o < nop; o++)
    if (alloc[map[o]]) arrs[map[o]].arr = (PyArrayObject *)Py_NewRef(made[o]);
  NpyIter_Deallocate(it);
  rc = 0;
out:
  for (int o = 0; o < nop; o++) Py_XDECREF(dts[o]);
  return rc;
}

/* Whether result j reduces over axes (`sum(m, axis=0)`, `prod(m,
** keepdims=True)`): its result is an array of jitc_array_shape()'s shape,
** not the one element of a reduction over every element. */
int over_axes(const KernelObject *K, int j) {
  int naxes = -1, keep = 0;
  return K->aroles[j] == JITC_RESULT &&
         jitc_kernel_reduction_axes(K->k, j, &naxes, NULL, &keep) == JITC_OK &&
         (naxes >= 0 || keep);
}

/* The shape of result j over axes in a run over the arrays ja (the
** library's, jitc_array_shape).  -1 with an exception set (an axis out of
** bounds is the library's input error). */
int result_shape(const KernelObject *K, const jitc_array *ja, int j, int *nd, int64_t *shape) {
  ModuleState *st = mod_state();
  Failure f = {0};
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = jitc_array_shape(st->ctx, K->k, ja, j, nd, shape);
  if (s) failure_take(&f, s);
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s) {
    failure_raise(&f);
    return -1;
  }
  return 0;
}

/* Allocates each result over axes (C order, of the shape the library
** gives it for the arrays ja, the inputs as the run takes them) and points
** ja[j] at it; the array is owned by its Bound.  -1 with an exception set
** (an axis out of bounds is the library's input error). */
static int allocate_axis_results(const KernelObject *K, Bound *arrs, jitc_array *ja) {
  for (int j = 0; j < K->narrays; j++) {
    if (!over_axes(K, j)) continue;
    int nd = 0;
    int64_t shape[JITC_MAXDIMS];
    if (result_shape(K, ja, j, &nd, shape)) return -1;
    PyArray_Descr *d = mod_descr(K->adtypes[j]); /* stolen by PyArray_Empty */
    PyObject *old = d ? pinned_use(K) : NULL;
    PyArrayObject *a = d ? (PyArrayObject *)PyArray_Empty(nd, (npy_intp *)shape, d, 0) : NULL;
    pinned_restore(old);
    if (!a) return -1;
    Bound *b = &arrs[j];
    b->arr = a;
    b->obj = b->own = Py_NewRef((PyObject *)a);
    b->ptr = (uint64_t)(uintptr_t)PyArray_DATA(a);
    b->ndim = nd;
    memcpy(b->shape, PyArray_DIMS(a), sizeof(npy_intp) * (size_t)nd);
    b->strides = PyArray_STRIDES(a);
    ja[j] = (jitc_array){PyArray_DATA(a), nd, (const int64_t *)PyArray_DIMS(a),
                         (const int64_t *)PyArray_STRIDES(a)};
  }
  return 0;
}

/* The run's shape (*ndim axes into shape): the inputs' broadcast shape,
** or an output given that is larger; each output given has it.  -1 with
** NumPy's error (the library's for inputs that do not broadcast). */
int run_shape(const KernelObject *K, const Bound *arrs, int *ndim, npy_intp *shape) {
  int na = K->narrays, nd = 0;
  /* The inputs' broadcast shape. */
  for (int j = 0; j < na; j++) {
    if (!reads(K->aroles[j]) || KIND(arrs[j].code) == K_NONE) continue;
    if (broadcast_into(&nd, shape, arrs[j].ndim, arrs[j].shape) == 0) continue;
    raise_broadcast(K, arrs);
    return -1;
  }
  /* An output given may be larger: the run is then its shape (the
  ** library's rule, NumPy's; here for NumPy's message and to allocate the
  ** outputs not given).  Each output given has the run's shape. */
  int in_nd = nd;
  npy_intp in_shape[NPY_MAXDIMS];
  memcpy(in_shape, shape, sizeof(npy_intp) * (size_t)nd);
  int outs_broadcast = 1;
  for (int j = 0; j < na; j++)
    if (K->aroles[j] == JITC_OUTPUT && KIND(arrs[j].code) != K_NONE && outs_broadcast)
      outs_broadcast = broadcast_into(&nd, shape, arrs[j].ndim, arrs[j].shape) == 0;
  for (int j = 0; j < na; j++) {
    if (K->aroles[j] != JITC_OUTPUT || KIND(arrs[j].code) == K_NONE) continue;
    if (outs_broadcast && arrs[j].ndim == nd && PyArray_CompareLists(arrs[j].shape, shape, nd))
      continue;
    char s1[256], s2[256];
    raise_input("non-broadcastable output operand with shape %s doesn't match the broadcast "
                "shape %s ('%U' is the output)", shape_text(s1, sizeof s1, arrs[j].ndim,
                arrs[j].shape), outs_broadcast ? shape_text(s2, sizeof s2, nd, shape)
                : shape_text(s2, sizeof s2, in_nd, in_shape), K->anames[j]);
    return -1;
  }
  *ndim = nd;
  return 0;
}

int run_locked(const KernelObject *K, int64_t n, const void *ptrs, const jitc_array *ja,
               const jitc_value *vals, int device, void *stream) {
  ModuleState *st = mod_state();
  Failure f = {0};
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  if (device)
    s = ptrs ? jitc_run_device(st->ctx, K->k, n, ptrs, vals, stream)
             : jitc_run_device_arrays(st->ctx, K->k, ja, vals, stream);
  else
    s = ptrs ? jitc_run(st->ctx, K->k, n, (void *const *)ptrs, vals, NULL)
             : jitc_run_arrays(st->ctx, K->k, ja, vals, NULL);
  if (s) failure_take(&f, s);
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  /* A run fails with JITC_E_PROGRAM only for min, max, argmin or argmax of
  ** no elements: NumPy raises ValueError there, so the error is one too. */
  if (s) failure_raise_as(&f, s == JITC_E_PROGRAM ? st->empty_exc : NULL);
  return s ? -1 : 0;
}

/* Runs K over host arrays arrs (outputs not given have code K_NONE) and
** scalars, outputs laid out as `order` says; the outputs made are owned by
** their Bound (b->own).  -1 with an exception set. */
int run_host(KernelObject *K, Bound *arrs, const jitc_value *vals, NPY_ORDER order) {
  int na = K->narrays, nd = 0;
  npy_intp shape[NPY_MAXDIMS];
  if (run_shape(K, arrs, &nd, shape)) return -1;
  int alloc[MAXNAMES], nalloc = 0;
  for (int j = 0; j < na; j++)
    nalloc += alloc[j] = K->aroles[j] == JITC_OUTPUT && !arrs[j].arr;
  PyObject *old = nalloc ? pinned_use(K) : NULL;
  int bad = nalloc && allocate_outputs(K, arrs, alloc, nd, shape, order);
  pinned_restore(old);
  if (bad) return -1;
  for (int j = 0; j < na; j++) {
    if (!alloc[j]) continue;
    Bound *b = &arrs[j];
    b->obj = b->own = Py_NewRef((PyObject *)b->arr);
    b->ptr = (uint64_t)(uintptr_t)PyArray_DATA(b->arr);
    b->ndim = nd;
    memcpy(b->shape, shape, sizeof(npy_intp) * (size_t)nd);
    b->strides = PyArray_STRIDES(b->arr);
    b->code = K_HOST | K->adtypes[j];
  }
  PyArrayObject *use[MAXNAMES];
  int copied[MAXNAMES];
  for (int j = 0; j < na; j++) {
    use[j] = arrs[j].arr;
    copied[j] = 0;
  }
  if (copy_overlapping(K, arrs, alloc, use, copied, nd, shape)) goto fail;
  /* The arrays as they are: the library broadcasts the inputs to the run's
  ** shape, a larger output's included. */
  jitc_array ja[MAXNAMES];
  for (int j = 0; j < na; j++) {
    PyArrayObject *a = use[j];
    ja[j] = K->aroles[j] == JITC_RESULT
                ? (jitc_array){(void *)(uintptr_t)arrs[j].ptr, 0, NULL, NULL}
                : (jitc_array){PyArray_DATA(a), PyArray_NDIM(a), (const int64_t *)PyArray_DIMS(a),
                               (const int64_t *)PyArray_STRIDES(a)};
  }
  if (allocate_axis_results(K, arrs, ja)) goto fail;
  /* Every array one aligned C-contiguous run of the run's shape: the flat
  ** run jitc_run_arrays would make of it, without making its layout (a
  ** result over axes is more than the one element jitc_run writes). */
  int flat = 1;
  void *ptrs[MAXNAMES];
  for (int j = 0; j < na && flat; j++) {
    ptrs[j] = ja[j].data;
    if (K->aroles[j] == JITC_RESULT) {
      flat = !over_axes(K, j);
      continue;
    }
    /* NumPy's aligned is to the part for complex (8 bytes for complex128);
    ** the flat run wants the whole element's, else jitc_run_arrays gathers. */
    flat = PyArray_CHKFLAGS(use[j], NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED) &&
           (uintptr_t)ja[j].data % (uintptr_t)PyArray_ITEMSIZE(use[j]) == 0 &&
           ja[j].ndim == nd && PyArray_CompareLists(PyArray_DIMS(use[j]), shape, nd);
  }
  /* Two written arrays that overlap: the library's run refuses them. */
  for (int w = 0; w < na && flat; w++)
    for (int q = 0; q < w && flat && K->aroles[w] != JITC_INPUT && K->aroles[w] != JITC_RESULT;
         q++)
      if (K->aroles[q] != JITC_INPUT && K->aroles[q] != JITC_RESULT) {
        char *wlo, *whi, *qlo, *qhi;
        extent(use[w], &wlo, &whi);
        extent(use[q], &qlo, &qhi);
        flat = !(wlo < qhi && qlo < whi);
      }
  pinned_prepare(K, arrs);
  run_locked(K, PyArray_MultiplyList(shape, nd), flat ? ptrs : NULL, ja, vals, 0, NULL);
fail:
  for (int j = 0; j < na; j++)
    if (copied[j]) Py_DECREF(use[j]);
  return PyErr_Occurred() ? -1 : 0;
}
