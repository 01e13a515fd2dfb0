/*
** device.c -- a kernel's run over device arrays (CuPy arrays, PyTorch
** tensors, __cuda_array_interface__ and DLPack arrays) of any shape and
** strides, in place, on the first array's stream.
**
** What run.c does around a run over host arrays, done here for device
** memory, with one difference: nothing is copied behind the caller's back.
** - The run's shape is NumPy's, as for host arrays (run_shape): inputs
**   broadcast, an output given may be larger, each output given has it.
** - Outputs not given are made of the first array's kind on its device,
**   laid out as NumPy lays out a ufunc's for `order`: 'K' follows the
**   operands' strides as NumPy's iterator orders the axes.
** - Arrays that are all one contiguous run of the run's shape, in C order
**   (or all in Fortran order, where the program reads neither `i` nor an
**   argmin or argmax, which count in C order) run as one flat run in memory
**   order (jitc_run_device); any other run addresses each array through its
**   strides (jitc_run_device_arrays), its results over axes made here.
** - A written array may share memory with another only by being its very
**   elements (`a = a * 2` through two names); any other overlap is refused,
**   where NumPy would copy the input first.
*/
#include "pyjitc.h"

static int writes(jitc_role r) { return r == JITC_OUTPUT || r == JITC_INOUT; }
static int bound(const Bound *b) { return KIND(b->code) == K_DEV; }

/* Device array b's strides in bytes: those it gives, or C order's. */
static int device_strides(const Bound *b, npy_intp *st) {
  return strides_of(b->ndim, b->shape, mod_state()->size[DT(b->code)],
                    PyTuple_GET_ITEM(b->dev, 2), st);
}

/* NumPy's iterator's order of the axes for the operands' strides in the
** run's frame (st[op][axis], 0 where an operand is broadcast), innermost
** first, as npyiter_find_best_axis_ordering finds it: an insertion sort by
** the strides' sizes, where an operand with a zero stride on either axis
** says nothing and, where operands disagree, C order wins. */
static void k_order(int nop, npy_intp (*st)[NPY_MAXDIMS], int nd, int *perm) {
  for (int k = 0; k < nd; k++) perm[k] = nd - 1 - k;
  for (int i0 = 1; i0 < nd; i0++) {
    int pos = i0, ax0 = perm[i0];
    for (int i1 = i0 - 1; i1 >= 0; i1--) {
      int ambig = 1, swap = 0, ax1 = perm[i1];
      for (int op = 0; op < nop; op++) {
        npy_intp s0 = st[op][ax0], s1 = st[op][ax1];
        if (!s0 || !s1) continue;
        if ((s1 < 0 ? -s1 : s1) <= (s0 < 0 ? -s0 : s0)) swap = 0;
        else if (ambig) swap = 1;
        ambig = 0;
      }
      if (ambig) continue;
      if (!swap) break;
      pos = i1;
    }
    memmove(perm + pos + 1, perm + pos, sizeof(int) * (size_t)(i0 - pos));
    perm[pos] = ax0;
  }
}

/* A new cupy.ndarray on the current device, of nd axes of extents shape,
** laid out as perm says (NULL: C order): made in C order with its axes so
** ordered (cupy.empty), then transposed back.  NULL with an exception set. */
static PyObject *cupy_new(int nd, const npy_intp *shape, jitc_dtype t, const int *perm) {
  const ModuleState *st = mod_state();
  npy_intp laid[NPY_MAXDIMS];
  for (int d = 0; d < nd; d++) laid[d] = shape[perm ? perm[d] : d];
  PyObject *sh = PyArray_IntTupleFromIntp(nd, laid);
  PyArray_Descr *dt = sh ? mod_descr(t) : NULL;
  PyObject *a = dt ? PyObject_CallFunctionObjArgs(st->cupy_empty, sh, (PyObject *)dt, NULL) : NULL;
  Py_XDECREF(sh);
  Py_XDECREF(dt);
  if (!a || !perm) return a;
  PyObject *back = PyTuple_New(nd);
  for (int d = 0; back && d < nd; d++) PyTuple_SET_ITEM(back, perm[d], PyLong_FromLong(d));
  PyObject *v = back ? PyObject_CallMethodOneArg(a, st->s_transpose, back) : NULL;
  Py_XDECREF(back);
  Py_DECREF(a);
  return v;
}

/* Whether `like` is a cupy.ndarray on CuPy's current device: its outputs
** are then made by cupy_new, without __init__.py's _device_empty. */
static int cupy_here(PyObject *like) {
  const ModuleState *st = mod_state();
  if (!st->cupy_type || (PyObject *)Py_TYPE(like) != st->cupy_type) return 0;
  PyObject *dev = PyObject_GetAttr(like, st->s_device);
  PyObject *id = dev ? PyObject_GetAttr(dev, st->s_id) : NULL;
  PyObject *cur = id ? PyObject_CallNoArgs(st->cupy_device) : NULL;
  int here = cur ? PyObject_RichCompareBool(id, cur, Py_EQ) : -1;
  Py_XDECREF(dev);
  Py_XDECREF(id);
  Py_XDECREF(cur);
  if (here < 0) PyErr_Clear(); /* _device_empty then says what is wrong */
  return here == 1;
}

/* A new device array of the kind of `like`, on its device, of nd axes of
** extents shape, its axes laid out outermost first as perm says (NULL: C
** order), bound into b and owned by it.  -1 with an exception set. */
int device_alloc(Bound *b, PyObject *like, int nd, const npy_intp *shape, jitc_dtype t,
                 const int *perm) {
  const ModuleState *st = mod_state();
  int identity = 1;
  for (int d = 0; perm && d < nd; d++) identity &= perm[d] == d;
  if (identity) perm = NULL;
  PyObject *a, *info;
  if (cupy_here(like)) {
    a = cupy_new(nd, shape, t, perm);
    info = a ? cupy_info(a) : NULL;
  } else {
    PyObject *sh = PyArray_IntTupleFromIntp(nd, shape), *order = Py_None;
    if (perm) order = PyTuple_New(nd);
    for (int d = 0; perm && order && d < nd; d++)
      PyTuple_SET_ITEM(order, d, PyLong_FromLong(perm[d]));
    a = sh && order ? PyObject_CallFunction(st->device_empty, "OOsO", like, sh, dt_name(t),
                                            order)
                    : NULL;
    Py_XDECREF(sh);
    if (order != Py_None) Py_XDECREF(order);
    info = a ? PyObject_CallOneArg(st->device_info, a) : NULL;
  }
  if (!info || !PyTuple_Check(info) || bind_device(b, "output", info)) {
    Py_XDECREF(info);
    Py_XDECREF(a);
    if (!PyErr_Occurred()) raise_input("could not allocate a device output");
    return -1;
  }
  b->dev = info;
  b->obj = b->own = a;
  return 0;
}

/* The bytes [*lo, *hi) the elements of an array occupy (empty: none). */
static void extent(const Bound *b, const npy_intp *st, uint64_t *lo, uint64_t *hi) {
  npy_intp l = 0, h = mod_state()->size[DT(b->code)];
  for (int d = 0; d < b->ndim; d++) {
    if (b->shape[d] == 0) h = 0;
    else if (st[d] < 0) l += st[d] * (b->shape[d] - 1);
    else h += st[d] * (b->shape[d] - 1);
  }
  *lo = b->ptr + (uint64_t)l;
  *hi = h > 0 ? b->ptr + (uint64_t)h : *lo;
}

/* Refuses a written array that shares memory with another array, unless
** the other is an input of the very same elements (same address, element
** size and step on every axis of more than one element, in the run's
** frame).  fs: each array's strides in the run's frame. */
static int check_overlap(const KernelObject *K, const Bound *arrs, npy_intp (*st)[NPY_MAXDIMS],
                         npy_intp (*fs)[NPY_MAXDIMS], int nd, const npy_intp *shape) {
  for (int w = 0; w < K->narrays; w++) {
    if (!writes(K->aroles[w]) || !bound(&arrs[w])) continue;
    uint64_t wlo, whi;
    extent(&arrs[w], st[w], &wlo, &whi);
    for (int q = 0; q < K->narrays && wlo < whi; q++) {
      if (q == w || K->aroles[q] == JITC_RESULT || !bound(&arrs[q])) continue;
      uint64_t qlo, qhi;
      extent(&arrs[q], st[q], &qlo, &qhi);
      if (!(wlo < qhi && qlo < whi)) continue;
      int same = K->aroles[q] == JITC_INPUT && arrs[q].ptr == arrs[w].ptr &&
                 K->adtypes[q] == K->adtypes[w];
      for (int d = 0; d < nd && same; d++)
        same = shape[d] <= 1 || fs[q][d] == fs[w][d];
      if (same) continue;
      raise_input("'%U' and '%U' share memory: a device array the program writes may share "
                  "memory with another only by being its very elements, and jitc copies "
                  "nothing behind your back (copy one first, or update an array in place "
                  "with a[i] = ...)", K->anames[w], K->anames[q]);
      return -1;
    }
  }
  return 0;
}

/* Whether the program's element order matters beyond its elements: it
** reads `i`, or an argmin or argmax counts positions (both in C order). */
static int counts_positions(const KernelObject *K) {
  for (int j = 0; j < K->narrays; j++)
    if (K->areds[j] && !strncmp(K->areds[j], "arg", 3)) return 1;
  for (int j = 0, n = jitc_kernel_language_name_count(K->k); j < n; j++)
    if (!strcmp(jitc_kernel_language_name(K->k, j), "i")) return 1;
  return 0;
}

/* 1 where every array bound (results aside) is one contiguous run of the
** run's shape in C order, 2 where every one is in Fortran order (either:
** each array's memory order is the run's), 0 otherwise. */
static int flat_order(const KernelObject *K, const Bound *arrs, int nd, const npy_intp *shape) {
  int flat = 3;
  for (int j = 0; j < K->narrays && flat; j++) {
    const Bound *b = &arrs[j];
    if (K->aroles[j] == JITC_RESULT || !bound(b)) continue;
    int full = b->ndim == nd && PyArray_CompareLists(b->shape, shape, nd);
    flat &= full ? b->layout : 0;
  }
  return flat == 3 ? 1 : flat;
}

/* The layout of the outputs not given: perm, the run's axes outermost
** first, as NumPy's ufunc lays out its output for `order` over the
** operands given (fs: their strides in the run's frame). */
static void layout_outputs(const KernelObject *K, const Bound *arrs, npy_intp (*fs)[NPY_MAXDIMS],
                           int nd, const npy_intp *shape, NPY_ORDER order, int *perm) {
  int flat = flat_order(K, arrs, nd, shape), fortran = 0;
  if (nd > 1 && order == NPY_FORTRANORDER) fortran = 1;
  else if (nd > 1 && (order == NPY_ANYORDER || order == NPY_KEEPORDER)) fortran = flat == 2;
  for (int d = 0; d < nd; d++) perm[d] = fortran ? nd - 1 - d : d;
  if (order != NPY_KEEPORDER || flat || nd < 2) return;
  int nop = 0, inner[NPY_MAXDIMS];
  npy_intp ops[MAXNAMES][NPY_MAXDIMS];
  for (int j = 0; j < K->narrays; j++)
    if (K->aroles[j] != JITC_RESULT && bound(&arrs[j]))
      memcpy(ops[nop++], fs[j], sizeof(npy_intp) * (size_t)nd);
  k_order(nop, ops, nd, inner);
  for (int d = 0; d < nd; d++) perm[d] = inner[nd - 1 - d];
}

/* Allocates each result over axes on the device, C order, of the shape the
** library gives it for the arrays ja, and points ja[j] at it. */
static int axis_results(const KernelObject *K, Bound *arrs, jitc_array *ja, PyObject *like) {
  for (int j = 0; j < K->narrays; j++) {
    if (!over_axes(K, j)) continue;
    int nd = 0;
    int64_t shape[JITC_MAXDIMS];
    if (result_shape(K, ja, j, &nd, shape) ||
        device_alloc(&arrs[j], like, nd, (const npy_intp *)shape, K->adtypes[j], NULL))
      return -1;
    ja[j] = (jitc_array){(void *)(uintptr_t)arrs[j].ptr, nd, (const int64_t *)arrs[j].shape, NULL};
  }
  return 0;
}

/* Runs the kernel on the stream of the first array: ptrs for the flat
** run, else ja. */
static int launch(const KernelObject *K, const Bound *first, int64_t n, const uint64_t *ptrs,
                  const jitc_array *ja, const jitc_value *vals) {
  void *stream = NULL;
  PyObject *s = PyTuple_GET_SIZE(first->dev) > 4 ? PyTuple_GET_ITEM(first->dev, 4) : Py_None;
  if (s != Py_None) stream = PyLong_AsVoidPtr(s);
  if (PyErr_Occurred()) return -1;
  return run_locked(K, n, ptrs, ja, vals, 1, stream);
}

/* Runs K over device arrays arrs (outputs not given have code K_NONE;
** results over every element are made already, 0-d) and scalars; arrs[first]
** is the first device array.  -1 with an exception set. */
int run_device(KernelObject *K, Bound *arrs, const jitc_value *vals, int first,
               NPY_ORDER order) {
  int na = K->narrays, nd = 0, rc = -1;
  npy_intp shape[NPY_MAXDIMS];
  /* Each array's strides, its own (st) and in the run's frame (fs). */
  npy_intp (*st)[NPY_MAXDIMS] = PyMem_Calloc((size_t)na + 1, sizeof *st);
  npy_intp (*fs)[NPY_MAXDIMS] = PyMem_Calloc((size_t)na + 1, sizeof *fs);
  if (!st || !fs) {
    PyErr_NoMemory();
    goto out;
  }
  for (int j = 0; j < na; j++)
    if (bound(&arrs[j]) && K->aroles[j] != JITC_RESULT) {
      if (device_strides(&arrs[j], st[j])) goto out;
      arrs[j].strides = st[j];
    }
  if (run_shape(K, arrs, &nd, shape)) goto out;
  for (int j = 0; j < na; j++)
    if (bound(&arrs[j]) && K->aroles[j] != JITC_RESULT)
      frame_strides(arrs[j].ndim, arrs[j].shape, st[j], nd, shape, fs[j]);
  if (check_overlap(K, arrs, st, fs, nd, shape)) goto out;
  int perm[NPY_MAXDIMS];
  layout_outputs(K, arrs, fs, nd, shape, order, perm);
  for (int j = 0; j < na; j++) {
    if (KIND(arrs[j].code) != K_NONE || K->aroles[j] != JITC_OUTPUT) continue;
    if (device_alloc(&arrs[j], arrs[first].obj, nd, shape, K->adtypes[j], perm) ||
        device_strides(&arrs[j], st[j]))
      goto out;
    arrs[j].strides = st[j];
  }
  int flat = flat_order(K, arrs, nd, shape);
  if (flat == 2 && counts_positions(K)) flat = 0;
  for (int j = 0; j < na; j++)
    if (over_axes(K, j)) flat = 0;
  int64_t n = PyArray_MultiplyList(shape, nd);
  if (flat) {
    uint64_t ptrs[MAXNAMES];
    for (int j = 0; j < na; j++) ptrs[j] = arrs[j].ptr;
    rc = launch(K, &arrs[first], n, ptrs, NULL, vals);
    goto out;
  }
  jitc_array ja[MAXNAMES];
  for (int j = 0; j < na; j++)
    ja[j] = (jitc_array){(void *)(uintptr_t)arrs[j].ptr, bound(&arrs[j]) ? arrs[j].ndim : 0,
                         (const int64_t *)arrs[j].shape,
                         bound(&arrs[j]) ? (const int64_t *)st[j] : NULL};
  if (axis_results(K, arrs, ja, arrs[first].obj)) goto out;
  rc = launch(K, &arrs[first], n, NULL, ja, vals);
out:
  for (int j = 0; j < na; j++) arrs[j].strides = NULL;
  PyMem_Free(st);
  PyMem_Free(fs);
  return rc;
}
