/*
** _jitc.c -- the compiled half of the Python package: jitc.evaluate, the
** Kernel type and the kernel cache, over the C library (jitc.h).
**
** Everything a call does on its way to jitc_run is here, in C, because at
** 1,000 elements the kernel takes a fraction of a microsecond and the call
** from Python is the cost: parsing the arguments, finding the kernel,
** getting the buffers, allocating the outputs.  python/jitc/__init__.py is
** the pure-Python layer: the exceptions, jitc.compile's signature, device
** arrays (CuPy, PyTorch, DLPack), docs.
**
** The library's rule is one thread at a time per context.  The package has
** one context and one lock: a call takes the lock with the GIL released, so
** that other Python threads run while a kernel compiles or runs, and never
** waits for the GIL while it holds the lock (so the two cannot deadlock).
**
** The cache: program text -> Prog (the names the program reads and
** assigns, found once by a check of the program) -> a list of kernels, one
** per signature (target, and per name: array dtype, weak or strong scalar
** kind).  A call whose signature was seen runs the kernel without checking
** the program again.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <stdint.h>
#include <string.h>

#include "jitc.h"

/* ---- module state ---- */

static jitc_context *g_ctx;
static PyThread_type_lock g_lock;
static jitc_target g_default_target;
static PyObject *g_progs;          /* dict: program text -> Prog capsule */
static long long g_compiles, g_hits;
/* Set by __init__.py through _init(): the exception classes (indexed by
** jitc_status) and the device-array helpers. */
static PyObject *g_exc[8];
static PyObject *g_device_info;  /* obj -> None | ndarray (host view) | tuple */
static PyObject *g_device_empty; /* (like, shape, dtype name, fortran) -> array */
static PyObject *s_target, *s_cai, *s_dlpack_device, *s_array_interface;

/* Codes of a bound value, in cache keys: kind | dtype. */
enum { K_NONE = 0, K_HOST = 0x10, K_DEV = 0x20, K_WEAK = 0x30, K_STRONG = 0x40 };
#define KIND(c) ((c) & 0xf0)
#define DT(c) ((jitc_dtype)((c) & 0x0f))
#define MAXNAMES 64

static PyObject *raise_status(jitc_status s, const char *msg) {
  PyObject *cls = g_exc[s < 8 ? s : JITC_E_INTERNAL];
  PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg);
  return NULL;
}

static PyObject *raise_input(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *m = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (m) {
    PyErr_SetObject(g_exc[JITC_E_INPUT] ? g_exc[JITC_E_INPUT] : PyExc_ValueError, m);
    Py_DECREF(m);
  }
  return NULL;
}

/* The library's error after a failed call, copied while the lock is held:
** raising it needs the GIL, which a holder of the lock must not wait for. */
typedef struct Failure {
  jitc_status status;
  char *msg;
  int line, col;
} Failure;

static void failure_take(Failure *f, jitc_status s) {
  f->status = s;
  f->msg = strdup(jitc_errmsg(g_ctx));
  for (size_t l = f->msg ? strlen(f->msg) : 0; l && (f->msg[l - 1] == '\n' || f->msg[l - 1] == ' ');)
    f->msg[--l] = 0;
  jitc_error e;
  f->line = f->col = 0;
  if (s == JITC_E_PROGRAM && jitc_error_get(g_ctx, 0, &e) == JITC_OK) {
    f->line = e.line;
    f->col = e.col;
  }
}

static PyObject *failure_raise(Failure *f) {
  const char *m = f->msg && f->msg[0] ? f->msg : jitc_status_name(f->status);
  PyObject *cls = g_exc[f->status < 8 ? f->status : JITC_E_INTERNAL];
  PyObject *exc = cls ? PyObject_CallFunction(cls, "s", m) : NULL;
  if (exc) {
    if (f->status == JITC_E_PROGRAM) {
      PyObject *l = PyLong_FromLong(f->line), *c = PyLong_FromLong(f->col);
      if (l && c) {
        PyObject_SetAttrString(exc, "line", l);
        PyObject_SetAttrString(exc, "col", c);
      }
      Py_XDECREF(l);
      Py_XDECREF(c);
    }
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  } else if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_RuntimeError, m);
  }
  free(f->msg);
  f->msg = NULL;
  return NULL;
}

/* ---- bound values ---- */

typedef struct Bound {
  uint8_t code;
  PyObject *obj;        /* what the caller gave (borrowed) */
  PyArrayObject *arr;   /* host array: an ndarray on obj's memory (new ref) */
  PyObject *dev;        /* device array: _device_info's tuple (new ref) */
  PyObject *own;        /* an output allocated for the call (new ref) */
  jitc_value val;       /* scalar */
  /* arrays: data, shape, layout (1: C-contiguous, 2: F-contiguous) */
  uint64_t ptr;
  int ndim, layout, writable;
  npy_intp shape[NPY_MAXDIMS];
  int64_t n;
} Bound;

static void bound_clear(Bound *b) {
  Py_CLEAR(b->arr);
  Py_CLEAR(b->dev);
  Py_CLEAR(b->own);
  b->code = K_NONE;
}

static int dtype_of_kind(char kind, int size, jitc_dtype *out) {
  if (kind == 'b' && size == 1) *out = JITC_BOOL;
  else if (kind == 'i' && size == 4) *out = JITC_INT32;
  else if (kind == 'i' && size == 8) *out = JITC_INT64;
  else if (kind == 'f' && size == 4) *out = JITC_FLOAT32;
  else if (kind == 'f' && size == 8) *out = JITC_FLOAT64;
  else return -1;
  return 0;
}

/* Whether a strided layout is C- (1) or Fortran- (2) contiguous, or both. */
static int layout_of(int ndim, const npy_intp *shape, const npy_intp *strides, npy_intp item) {
  int c = 1, f = 1;
  npy_intp s = item;
  for (int d = ndim - 1; d >= 0; d--) {
    if (shape[d] == 0) return 3;
    if (shape[d] != 1 && strides[d] != s) c = 0;
    s *= shape[d];
  }
  s = item;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] != 1 && strides[d] != s) f = 0;
    s *= shape[d];
  }
  return c | f << 1;
}

static const char *dt_name(jitc_dtype t) { return jitc_dtype_name(t); }

/* A host ndarray: checks its dtype and fills the array fields. */
static int bind_ndarray(Bound *b, const char *name, PyArrayObject *a) {
  PyArray_Descr *d = PyArray_DESCR(a);
  jitc_dtype t;
  if (PyArray_ISBYTESWAPPED(a) || dtype_of_kind(d->kind, (int)PyDataType_ELSIZE(d), &t)) {
    PyObject *r = PyObject_Str((PyObject *)d);
    raise_input("'%s' is an array of %S; jitc takes bool, int32, int64, float32 and float64 "
                "(convert it with .astype())", name, r ? r : Py_None);
    Py_XDECREF(r);
    return -1;
  }
  b->ndim = PyArray_NDIM(a);
  b->layout = layout_of(b->ndim, PyArray_SHAPE(a), PyArray_STRIDES(a), PyDataType_ELSIZE(d));
  if (!b->layout) {
    raise_input("'%s' is not contiguous: jitc takes C- or Fortran-contiguous arrays "
                "(copy it with np.ascontiguousarray)", name);
    return -1;
  }
  memcpy(b->shape, PyArray_SHAPE(a), sizeof(npy_intp) * b->ndim);
  b->n = PyArray_SIZE(a);
  b->ptr = (uint64_t)(uintptr_t)PyArray_DATA(a);
  b->writable = PyArray_ISWRITEABLE(a);
  b->code = K_HOST | t;
  return 0;
}

/* A 0-d array or NumPy scalar of dtype t at p: a strong scalar. */
static void bind_strong(Bound *b, jitc_dtype t, const void *p) {
  b->code = K_STRONG | t;
  b->val.dtype = t;
  switch (t) {
  case JITC_BOOL: b->val.u.i = *(const npy_bool *)p != 0; break;
  case JITC_INT32: b->val.u.i = *(const int32_t *)p; break;
  case JITC_INT64: b->val.u.i = *(const int64_t *)p; break;
  case JITC_FLOAT32: b->val.u.f = *(const float *)p; break;
  default: b->val.u.f = *(const double *)p; break;
  }
}

static int bind_device(Bound *b, const char *name, PyObject *info);

/* Classifies a value: array (host or device) or scalar (weak or strong). */
static int bind_value(Bound *b, const char *name, PyObject *o) {
  memset(b, 0, sizeof *b);
  b->obj = o;
  if (PyArray_CheckExact(o) || PyArray_Check(o)) {
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) == 0) {
      jitc_dtype t;
      PyArray_Descr *d = PyArray_DESCR(a);
      if (PyArray_ISBYTESWAPPED(a) || dtype_of_kind(d->kind, (int)PyDataType_ELSIZE(d), &t))
        return bind_ndarray(b, name, a); /* for its message */
      bind_strong(b, t, PyArray_DATA(a));
      return 0;
    }
    Py_INCREF(o);
    b->arr = a;
    return bind_ndarray(b, name, a);
  }
  if (PyFloat_CheckExact(o)) {
    b->code = K_WEAK | JITC_FLOAT64;
    b->val.dtype = JITC_FLOAT64;
    b->val.u.f = PyFloat_AS_DOUBLE(o);
    return 0;
  }
  if (PyArray_IsScalar(o, Generic)) {
    PyArray_Descr *d = PyArray_DescrFromScalar(o);
    jitc_dtype t;
    int bad = !d || dtype_of_kind(d->kind, (int)PyDataType_ELSIZE(d), &t);
    Py_XDECREF(d);
    if (bad) {
      raise_input("'%s' is a %s scalar; jitc takes bool, int32, int64, float32 and float64",
                  name, Py_TYPE(o)->tp_name);
      return -1;
    }
    char buf[16];
    PyArray_ScalarAsCtype(o, buf);
    bind_strong(b, t, buf);
    return 0;
  }
  if (PyBool_Check(o)) {
    b->code = K_WEAK | JITC_BOOL;
    b->val.dtype = JITC_BOOL;
    b->val.u.i = o == Py_True;
    return 0;
  }
  if (PyLong_Check(o)) {
    int over;
    long long v = PyLong_AsLongLongAndOverflow(o, &over);
    if (over) {
      raise_input("'%s' = %S does not fit in int64", name, o);
      return -1;
    }
    if (v == -1 && PyErr_Occurred()) return -1;
    b->code = K_WEAK | JITC_INT64;
    b->val.dtype = JITC_INT64;
    b->val.u.i = v;
    return 0;
  }
  if (PyFloat_Check(o)) {
    b->code = K_WEAK | JITC_FLOAT64;
    b->val.dtype = JITC_FLOAT64;
    b->val.u.f = PyFloat_AsDouble(o);
    return 0;
  }
  /* Device arrays first: a CuPy array also has the buffer protocol's
  ** absence, but a PyTorch CPU tensor has DLPack and no buffer. */
  if (g_device_info && (PyObject_HasAttr(o, s_cai) || PyObject_HasAttr(o, s_dlpack_device))) {
    PyObject *info = PyObject_CallOneArg(g_device_info, o);
    if (!info) return -1;
    if (PyArray_Check(info)) {
      b->arr = (PyArrayObject *)info;
      return bind_ndarray(b, name, b->arr);
    }
    if (PyTuple_Check(info)) {
      b->dev = info;
      return bind_device(b, name, info);
    }
    Py_DECREF(info);
  }
  if (PyObject_CheckBuffer(o) || PyObject_HasAttr(o, s_array_interface)) {
    /* A view of the object's memory, never a copy: the flags ask for none
    ** and the layout is checked as for an ndarray. */
    PyObject *a = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (!a) return -1;
    if (PyArray_NDIM((PyArrayObject *)a) == 0) {
      Py_DECREF(a);
      raise_input("'%s' is a 0-d buffer; pass a scalar or an array", name);
      return -1;
    }
    b->arr = (PyArrayObject *)a;
    return bind_ndarray(b, name, b->arr);
  }
  raise_input("'%s' is a %s, not an array or a number: jitc takes NumPy arrays, objects with "
              "the buffer protocol, __array_interface__, __cuda_array_interface__ or DLPack, "
              "and Python or NumPy scalars", name, Py_TYPE(o)->tp_name);
  return -1;
}

/* _device_info's tuple: (ptr, shape, strides in bytes or None, typestr,
** stream, device, keepalive). */
static int bind_device(Bound *b, const char *name, PyObject *info) {
  PyObject *shape, *strides, *ts, *rest1, *rest2, *rest3;
  unsigned long long ptr;
  if (!PyArg_ParseTuple(info, "KO!OU|OOO", &ptr, &PyTuple_Type, &shape, &strides, &ts, &rest1,
                        &rest2, &rest3))
    return -1;
  const char *s = PyUnicode_AsUTF8(ts);
  if (!s) return -1;
  jitc_dtype t;
  int size = atoi(s + 2);
  if (!(s[0] == '<' || s[0] == '|' || s[0] == '=') ||
      dtype_of_kind(s[1] == 'b' ? 'b' : s[1], size, &t)) {
    raise_input("'%s' is a device array of %s; jitc takes bool, int32, int64, float32 and "
                "float64", name, s);
    return -1;
  }
  int nd = (int)PyTuple_GET_SIZE(shape);
  if (nd > NPY_MAXDIMS) {
    raise_input("'%s' has %d dimensions", name, nd);
    return -1;
  }
  npy_intp st[NPY_MAXDIMS];
  b->n = 1;
  for (int d = 0; d < nd; d++) {
    b->shape[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
    b->n *= b->shape[d];
  }
  for (int d = nd - 1, acc = size; d >= 0; d--) { /* C order when strides is None */
    st[d] = acc;
    acc *= (int)b->shape[d];
  }
  if (strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd)
      return raise_input("'%s': bad strides", name), -1;
    for (int d = 0; d < nd; d++) st[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, d));
  }
  if (PyErr_Occurred()) return -1;
  b->ndim = nd;
  b->layout = layout_of(nd, b->shape, st, size);
  if (!b->layout) {
    raise_input("'%s' is not contiguous: jitc takes C- or Fortran-contiguous arrays (copy it "
                "with .copy() or cupy.ascontiguousarray)", name);
    return -1;
  }
  if (nd == 0) {
    raise_input("'%s' is a 0-d device array; pass a scalar or an array", name);
    return -1;
  }
  b->ptr = ptr;
  b->writable = 1;
  b->code = K_DEV | t;
  return 0;
}

/* ---- Kernel objects ---- */

typedef struct KernelObject {
  PyObject_HEAD
  jitc_kernel *k;
  PyObject *program;
  jitc_target target;
  int device;               /* runs on device arrays */
  int narrays, nscalars;
  PyObject **anames;        /* interned str */
  jitc_role *aroles;
  jitc_dtype *adtypes;
  PyObject **snames;
  jitc_dtype *sdtypes;
  PyObject *params;         /* tuple: positional parameter names */
  vectorcallfunc vectorcall;
} KernelObject;

static PyTypeObject KernelType;
static PyObject *kernel_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames);

static void kernel_dealloc(KernelObject *K) {
  if (K->k) {
    /* Safe with the GIL held: a holder of the lock never waits for it. */
    PyThread_acquire_lock(g_lock, WAIT_LOCK);
    jitc_kernel_free(K->k);
    PyThread_release_lock(g_lock);
  }
  for (int j = 0; j < K->narrays; j++) Py_XDECREF(K->anames[j]);
  for (int j = 0; j < K->nscalars; j++) Py_XDECREF(K->snames[j]);
  PyMem_Free(K->anames);
  PyMem_Free(K->snames);
  PyMem_Free(K->aroles);
  PyMem_Free(K->adtypes);
  PyMem_Free(K->sdtypes);
  Py_XDECREF(K->program);
  Py_XDECREF(K->params);
  Py_TYPE(K)->tp_free((PyObject *)K);
}

/* Compiles with the GIL released and the lock held. */
static jitc_status compile_locked(const char *src, const jitc_array_decl *ad, int na,
                                  const jitc_scalar_decl *sd, int ns, const jitc_options *o,
                                  jitc_kernel **out, Failure *f) {
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(g_lock, WAIT_LOCK);
  s = jitc_compile(g_ctx, src, ad, na, sd, ns, o, out);
  if (s) failure_take(f, s);
  PyThread_release_lock(g_lock);
  Py_END_ALLOW_THREADS
  return s;
}

/* Wraps a compiled kernel; params: the positional names (new ref taken). */
static KernelObject *kernel_wrap(jitc_kernel *k, PyObject *program, jitc_target t, int device,
                                 PyObject *params) {
  KernelObject *K = PyObject_New(KernelObject, &KernelType);
  if (!K) {
    jitc_kernel_free(k);
    Py_XDECREF(params);
    return NULL;
  }
  K->k = k;
  K->vectorcall = kernel_vcall;
  K->program = Py_NewRef(program);
  K->target = t;
  K->device = device;
  K->params = params;
  K->narrays = jitc_kernel_array_count(k);
  K->nscalars = jitc_kernel_scalar_count(k);
  K->anames = PyMem_Calloc(K->narrays + 1, sizeof *K->anames);
  K->aroles = PyMem_Calloc(K->narrays + 1, sizeof *K->aroles);
  K->adtypes = PyMem_Calloc(K->narrays + 1, sizeof *K->adtypes);
  K->snames = PyMem_Calloc(K->nscalars + 1, sizeof *K->snames);
  K->sdtypes = PyMem_Calloc(K->nscalars + 1, sizeof *K->sdtypes);
  if (!K->anames || !K->aroles || !K->adtypes || !K->snames || !K->sdtypes) {
    K->narrays = K->nscalars = 0;
    Py_DECREF(K);
    return (KernelObject *)PyErr_NoMemory();
  }
  for (int j = 0; j < K->narrays; j++) {
    const char *nm;
    jitc_kernel_array(k, j, &nm, &K->aroles[j], &K->adtypes[j]);
    K->anames[j] = PyUnicode_InternFromString(nm);
  }
  for (int j = 0; j < K->nscalars; j++) {
    const char *nm;
    jitc_kernel_scalar(k, j, &nm, &K->sdtypes[j]);
    K->snames[j] = PyUnicode_InternFromString(nm);
  }
  if (!K->params) {
    /* Positional order: the arrays the kernel reads, then its scalars. */
    PyObject *l = PyList_New(0);
    for (int j = 0; l && j < K->narrays; j++)
      if (K->aroles[j] != JITC_OUTPUT && K->anames[j]) PyList_Append(l, K->anames[j]);
    for (int j = 0; l && j < K->nscalars; j++)
      if (K->snames[j]) PyList_Append(l, K->snames[j]);
    K->params = l ? PyList_AsTuple(l) : NULL;
    Py_XDECREF(l);
  }
  if (PyErr_Occurred()) {
    Py_DECREF(K);
    return NULL;
  }
  return K;
}

static int name_eq(PyObject *a, PyObject *b) {
  return a == b || PyUnicode_Compare(a, b) == 0;
}

/* Runs K on bound values: arrs[j] for kernel array j (code K_NONE for an
** output to allocate), scals[j] for scalar j.  Returns the assigned arrays:
** one as itself, several as a dict by name. */
static PyObject *kernel_run(KernelObject *K, Bound *arrs, Bound *scals) {
  int na = K->narrays, dev = -1, first = -1, order = 3;
  int64_t n = -1;
  const Bound *shape_of = NULL;
  for (int j = 0; j < na; j++) {
    Bound *b = &arrs[j];
    if (KIND(b->code) == K_NONE) continue;
    const char *nm = PyUnicode_AsUTF8(K->anames[j]);
    if (KIND(b->code) != K_HOST && KIND(b->code) != K_DEV)
      return raise_input("'%s' is an array in this kernel; got a scalar", nm);
    int isdev = KIND(b->code) == K_DEV;
    if (dev >= 0 && dev != isdev)
      return raise_input("'%s' is a %s array and '%s' a %s one: jitc does not mix host and "
                         "device arrays in one call", nm, isdev ? "device" : "host",
                         PyUnicode_AsUTF8(K->anames[first]), isdev ? "host" : "device");
    if (dev < 0) first = j;
    dev = isdev;
    if (isdev && first != j) {
      PyObject *d1 = PyTuple_GET_SIZE(arrs[first].dev) > 5 ? PyTuple_GET_ITEM(arrs[first].dev, 5)
                                                            : Py_None;
      PyObject *d2 = PyTuple_GET_SIZE(b->dev) > 5 ? PyTuple_GET_ITEM(b->dev, 5) : Py_None;
      if (d1 != Py_None && d2 != Py_None && PyObject_RichCompareBool(d1, d2, Py_NE) == 1)
        return raise_input("'%s' is on device %R and '%s' on device %R: the arrays of a call "
                           "are on one device", PyUnicode_AsUTF8(K->anames[first]), d1, nm, d2);
    }
    if (DT(b->code) != K->adtypes[j])
      return raise_input("'%s' is %s; the kernel takes %s (compile it for %s, or convert with "
                         ".astype())", nm, dt_name(DT(b->code)), dt_name(K->adtypes[j]),
                         dt_name(DT(b->code)));
    if (K->aroles[j] != JITC_INPUT && !b->writable)
      return raise_input("'%s' is written by the program and is read-only", nm);
    if (!shape_of) {
      shape_of = b;
      n = b->n;
    } else if (b->ndim != shape_of->ndim ||
               memcmp(b->shape, shape_of->shape, sizeof(npy_intp) * b->ndim)) {
      PyObject *s1 = PyArray_IntTupleFromIntp(shape_of->ndim, shape_of->shape);
      PyObject *s2 = PyArray_IntTupleFromIntp(b->ndim, b->shape);
      raise_input("'%s' has shape %R and '%s' %R: the arrays of a program have one shape "
                  "(jitc does not broadcast)", PyUnicode_AsUTF8(K->anames[first]), s1, nm, s2);
      Py_XDECREF(s1);
      Py_XDECREF(s2);
      return NULL;
    }
    order &= b->layout;
    if (!order)
      return raise_input("'%s' is in %s order and another array in the other: the arrays of "
                         "a program have one memory order (copy one with np.asfortranarray or "
                         "np.ascontiguousarray)", nm, b->layout == 2 ? "Fortran" : "C");
  }
  if (dev == 1 && !K->device)
    return raise_input("device arrays given to a kernel for the %s target: use target='cuda'",
                       jitc_target_name(K->target));
  if (dev == 0 && K->device)
    return raise_input("host arrays given to a kernel for device arrays");
  if (!shape_of)
    return raise_status(JITC_E_USAGE, "no array gives the length: pass at least one input "
                        "array, or the output arrays");
  for (int j = 0; j < K->nscalars; j++)
    if (KIND(scals[j].code) != K_WEAK && KIND(scals[j].code) != K_STRONG)
      return raise_input("'%s' is a scalar in this kernel; got an array",
                         PyUnicode_AsUTF8(K->snames[j]));
  /* Outputs not given: new arrays of the inputs' shape and order. */
  int fortran = order == 2;
  for (int j = 0; j < na; j++) {
    Bound *b = &arrs[j];
    if (KIND(b->code) != K_NONE) continue;
    if (K->aroles[j] != JITC_OUTPUT)
      return raise_status(JITC_E_USAGE, "an input array is missing");
    if (!dev) {
      int tn[] = {NPY_BOOL, NPY_INT32, NPY_INT64, NPY_FLOAT32, NPY_FLOAT64};
      PyObject *a = PyArray_EMPTY(shape_of->ndim, (npy_intp *)shape_of->shape,
                                  tn[K->adtypes[j]], fortran);
      if (!a) return NULL;
      b->obj = b->own = a;
      b->arr = (PyArrayObject *)Py_NewRef(a);
      b->ptr = (uint64_t)(uintptr_t)PyArray_DATA(b->arr);
    } else {
      PyObject *shape = PyArray_IntTupleFromIntp(shape_of->ndim, shape_of->shape);
      PyObject *a = shape ? PyObject_CallFunction(g_device_empty, "OOsi", arrs[first].obj, shape,
                                                  dt_name(K->adtypes[j]), fortran)
                          : NULL;
      Py_XDECREF(shape);
      if (!a) return NULL;
      PyObject *info = PyObject_CallOneArg(g_device_info, a);
      if (!info || !PyTuple_Check(info) || bind_device(b, "output", info)) {
        Py_XDECREF(info);
        Py_DECREF(a);
        if (!PyErr_Occurred()) raise_input("could not allocate a device output");
        return NULL;
      }
      b->dev = info;
      b->obj = a;
      b->own = a;
    }
    b->code = (dev ? K_DEV : K_HOST) | K->adtypes[j];
  }
  /* The run. */
  void *ptrs_stack[16];
  jitc_value vals_stack[16];
  void **ptrs = na <= 16 ? ptrs_stack : PyMem_Malloc(sizeof(void *) * na);
  jitc_value *vals = K->nscalars <= 16 ? vals_stack : PyMem_Malloc(sizeof(jitc_value) * K->nscalars);
  if (!ptrs || !vals) {
    if (ptrs != ptrs_stack) PyMem_Free(ptrs);
    if (vals != vals_stack) PyMem_Free(vals);
    return PyErr_NoMemory();
  }
  for (int j = 0; j < na; j++) ptrs[j] = (void *)(uintptr_t)arrs[j].ptr;
  for (int j = 0; j < K->nscalars; j++) vals[j] = scals[j].val;
  void *stream = NULL;
  if (dev) {
    PyObject *s = PyTuple_GET_SIZE(arrs[first].dev) > 4 ? PyTuple_GET_ITEM(arrs[first].dev, 4)
                                                         : Py_None;
    if (s != Py_None) stream = PyLong_AsVoidPtr(s);
    if (PyErr_Occurred()) return NULL;
  }
  Failure f = {0};
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(g_lock, WAIT_LOCK);
  if (dev)
    s = jitc_run_device(g_ctx, K->k, n, (const uint64_t *)ptrs, vals, stream);
  else
    s = jitc_run(g_ctx, K->k, n, ptrs, vals, NULL);
  if (s) failure_take(&f, s);
  PyThread_release_lock(g_lock);
  Py_END_ALLOW_THREADS
  if (ptrs != ptrs_stack) PyMem_Free(ptrs);
  if (vals != vals_stack) PyMem_Free(vals);
  if (s) return failure_raise(&f);
  /* The result: every array the program assigns. */
  int count = 0, last = -1;
  for (int j = 0; j < na; j++)
    if (K->aroles[j] != JITC_INPUT) {
      count++;
      last = j;
    }
  if (count == 0) Py_RETURN_NONE;
  if (count == 1) return Py_NewRef(arrs[last].obj);
  PyObject *dict = PyDict_New();
  for (int j = 0; dict && j < na; j++)
    if (K->aroles[j] != JITC_INPUT && PyDict_SetItem(dict, K->anames[j], arrs[j].obj))
      Py_CLEAR(dict);
  return dict;
}

/* The index of `name` among K's arrays (>= 0) or scalars (-1 - index), or
** INT32_MIN when the kernel does not use it. */
static int kernel_slot(const KernelObject *K, PyObject *name) {
  for (int j = 0; j < K->narrays; j++)
    if (name_eq(K->anames[j], name)) return j;
  for (int j = 0; j < K->nscalars; j++)
    if (name_eq(K->snames[j], name)) return -1 - j;
  return INT32_MIN;
}

static int parse_target(PyObject *t, int device, jitc_target *out) {
  if (!t || t == Py_None) {
    *out = device ? JITC_TARGET_CUDA : g_default_target;
    return 0;
  }
  const char *s = PyUnicode_Check(t) ? PyUnicode_AsUTF8(t) : NULL;
  if (!s || jitc_target_parse(s, out)) {
    PyErr_Clear();
    raise_status(JITC_E_USAGE, "target: give 'interp', 'cpu', 'cuda' or None");
    return -1;
  }
  if (device && *out != JITC_TARGET_CUDA) {
    raise_input("device arrays run on target 'cuda', not '%s'", s);
    return -1;
  }
  return 0;
}

/* Compiles `program` for target t with the declarations of the bound
** values names[j] -> b[j] (K_NONE: not declared). */
static KernelObject *compile_bound(PyObject *program, jitc_target t, int device, int nnames,
                                   PyObject *const *names, const Bound *b, PyObject *params,
                                   int implicit) {
  jitc_array_decl ad[MAXNAMES];
  jitc_scalar_decl sd[MAXNAMES];
  int na = 0, ns = 0;
  for (int j = 0; j < nnames; j++) {
    const char *nm = PyUnicode_AsUTF8(names[j]);
    if (!nm) return NULL;
    int kind = KIND(b[j].code);
    if (kind == K_HOST || kind == K_DEV)
      ad[na++] = (jitc_array_decl){nm, DT(b[j].code)};
    else if (kind == K_WEAK || kind == K_STRONG)
      sd[ns++] = (jitc_scalar_decl){nm, DT(b[j].code), kind == K_WEAK};
  }
  const char *src = PyUnicode_AsUTF8(program);
  if (!src) return NULL;
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  o.implicit_inputs = implicit;
  jitc_kernel *k = NULL;
  Failure f = {0};
  if (compile_locked(src, ad, na, sd, ns, &o, &k, &f)) {
    Py_XDECREF(params);
    return (KernelObject *)failure_raise(&f);
  }
  g_compiles++;
  return kernel_wrap(k, program, t, device, params);
}

/* ---- the evaluate cache ---- */

typedef struct Entry {
  uint8_t key[MAXNAMES + 1]; /* target, then the code of each name */
  KernelObject *K;
  int slot[MAXNAMES];        /* kernel_slot of each name */
} Entry;

typedef struct Prog {
  int nnames;
  PyObject *names[MAXNAMES]; /* interned */
  jitc_role roles[MAXNAMES]; /* scalars: JITC_INPUT */
  int nentries, cap;
  Entry *entries;
} Prog;

static void prog_release(Prog *p) {
  if (!p) return;
  for (int j = 0; j < p->nnames; j++) Py_XDECREF(p->names[j]);
  for (int j = 0; j < p->nentries; j++) Py_XDECREF(p->entries[j].K);
  PyMem_Free(p->entries);
  PyMem_Free(p);
}

static void prog_free(PyObject *cap) { prog_release(PyCapsule_GetPointer(cap, "jitc.Prog")); }

/* The caller's variables: locals, then globals. */
static PyObject *frame_lookup(PyObject *name, PyObject **locals) {
  if (!*locals) {
#if PY_VERSION_HEX >= 0x030D0000
    *locals = PyEval_GetFrameLocals(); /* new reference, released by the caller */
#else
    *locals = PyEval_GetLocals();
    Py_XINCREF(*locals);
#endif
    if (!*locals) {
      PyErr_Clear();
      *locals = Py_NewRef(Py_None);
    }
  }
  PyObject *v = NULL;
  if (*locals != Py_None) {
    v = PyMapping_Check(*locals) ? PyObject_GetItem(*locals, name) : NULL;
    if (v) {
      Py_DECREF(v); /* the frame keeps it alive for the call */
      return v;
    }
    PyErr_Clear();
  }
  PyObject *g = PyEval_GetGlobals();
  return g ? PyDict_GetItemWithError(g, name) : NULL;
}

static PyObject *kw_lookup(PyObject *const *kwv, PyObject *kwnames, PyObject *name) {
  if (!kwnames) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t j = 0; j < n; j++)
    if (PyTuple_GET_ITEM(kwnames, j) == name) return kwv[j];
  for (Py_ssize_t j = 0; j < n; j++)
    if (name_eq(PyTuple_GET_ITEM(kwnames, j), name)) return kwv[j];
  return NULL;
}

/* The name in a checker message "unknown name 'x'..." or "'x' is read
** before it is assigned", or NULL. */
static PyObject *unknown_name(const char *msg) {
  const char *p = NULL;
  if (!strncmp(msg, "unknown name '", 14)) p = msg + 14;
  else if (msg[0] == '\'' && strstr(msg, "' is read before it is assigned")) p = msg + 1;
  if (!p) return NULL;
  const char *q = strchr(p, '\'');
  return q ? PyUnicode_FromStringAndSize(p, q - p) : NULL;
}

/* Finds the names a program reads and assigns: a check (the interp
** target: the front end only) with the names given to evaluate declared;
** each name the check finds unknown is looked up in the caller's
** variables, until the program checks or a name is nowhere. */
static Prog *prog_resolve(PyObject *program, PyObject *const *kwv, PyObject *kwnames,
                          PyObject **locals) {
  PyObject *names[MAXNAMES];
  Bound b[MAXNAMES];
  int nn = 0;
  Prog *p = NULL;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwnames, j);
    if (nm == s_target || name_eq(nm, s_target)) continue;
    if (nn == MAXNAMES) {
      raise_status(JITC_E_USAGE, "too many names");
      goto out;
    }
    names[nn] = Py_NewRef(nm);
    if (bind_value(&b[nn], PyUnicode_AsUTF8(nm), kwv[j])) {
      Py_DECREF(names[nn]);
      goto out;
    }
    nn++;
  }
  const char *src = PyUnicode_AsUTF8(program);
  for (int round = 0; round < MAXNAMES; round++) {
    jitc_array_decl ad[MAXNAMES];
    jitc_scalar_decl sd[MAXNAMES];
    int na = 0, ns = 0;
    for (int j = 0; j < nn; j++) {
      int kind = KIND(b[j].code);
      const char *nm = PyUnicode_AsUTF8(names[j]);
      if (kind == K_HOST || kind == K_DEV) ad[na++] = (jitc_array_decl){nm, DT(b[j].code)};
      else sd[ns++] = (jitc_scalar_decl){nm, DT(b[j].code), kind == K_WEAK};
    }
    jitc_options o;
    jitc_options_init(&o);
    o.target = JITC_TARGET_INTERP;
    jitc_kernel *k = NULL;
    jitc_status s;
    int added = 0;
    PyObject *found[MAXNAMES];
    int nfound = 0;
    Failure f = {0};
    /* What the check found, copied while the lock is held (the GIL is not). */
    char *cnames[MAXNAMES];
    jitc_role croles[MAXNAMES];
    int nc = 0;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(g_lock, WAIT_LOCK);
    s = jitc_compile(g_ctx, src, ad, na, sd, ns, &o, &k);
    if (s) failure_take(&f, s);
    if (s == JITC_OK) {
      for (int j = 0; j < jitc_kernel_array_count(k) && nc < MAXNAMES; j++) {
        const char *nm;
        jitc_dtype dt;
        jitc_kernel_array(k, j, &nm, &croles[nc], &dt);
        cnames[nc++] = strdup(nm);
      }
      for (int j = 0; j < jitc_kernel_scalar_count(k) && nc < MAXNAMES; j++) {
        const char *nm;
        jitc_dtype dt;
        jitc_kernel_scalar(k, j, &nm, &dt);
        croles[nc] = JITC_INPUT;
        cnames[nc++] = strdup(nm);
      }
      jitc_kernel_free(k);
    } else if (s == JITC_E_PROGRAM) {
      for (int e = 0; e < jitc_error_count(g_ctx) && nc < MAXNAMES; e++) {
        jitc_error er;
        if (jitc_error_get(g_ctx, e, &er) == JITC_OK) cnames[nc++] = strdup(er.message);
      }
    }
    PyThread_release_lock(g_lock);
    Py_END_ALLOW_THREADS
    if (s == JITC_OK && (p = PyMem_Calloc(1, sizeof *p))) {
      for (int j = 0; j < nc; j++) {
        p->roles[j] = croles[j];
        p->names[j] = PyUnicode_InternFromString(cnames[j] ? cnames[j] : "?");
      }
      p->nnames = nc;
    }
    for (int j = 0; j < nc; j++) {
      PyObject *nm = s == JITC_E_PROGRAM && cnames[j] ? unknown_name(cnames[j]) : NULL;
      if (nm && nfound < MAXNAMES) found[nfound++] = nm;
      free(cnames[j]);
    }
    if (s == JITC_OK) {
      free(f.msg);
      if (!p) PyErr_NoMemory();
      else for (int j = 0; j < p->nnames; j++) if (!p->names[j]) PyErr_NoMemory();
      goto out;
    }
    /* Look the unknown names up in the caller's variables. */
    int missing = 0;
    for (int j = 0; j < nfound; j++) {
      PyObject *v = missing || nn == MAXNAMES ? NULL : frame_lookup(found[j], locals);
      if (PyErr_Occurred()) missing = 1;
      if (!v) missing = 1;
      if (!missing) {
        PyUnicode_InternInPlace(&found[j]);
        if (bind_value(&b[nn], PyUnicode_AsUTF8(found[j]), v)) {
          missing = 1;
          free(f.msg);
          f.msg = NULL;
        } else {
          names[nn++] = Py_NewRef(found[j]);
          added++;
        }
      }
      Py_DECREF(found[j]);
    }
    if (missing || !added) {
      if (f.msg) {
        PyErr_Clear();
        failure_raise(&f);
      }
      goto out;
    }
    free(f.msg);
  }
out:
  for (int j = 0; j < nn; j++) {
    bound_clear(&b[j]);
    Py_DECREF(names[j]);
  }
  if (p && PyErr_Occurred()) {
    prog_release(p);
    p = NULL;
  }
  return p;
}

/* evaluate(program, target=None, **names) */
static PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  if (nargs < 1 || nargs > 2 || !PyUnicode_Check(args[0]))
    return raise_status(JITC_E_USAGE, "evaluate(program, target=None, **names): give the "
                        "program as a string");
  PyObject *program = args[0];
  PyObject *const *kwv = args + nargs;
  PyObject *target = nargs > 1 ? args[1] : kw_lookup(kwv, kwnames, s_target);
  PyObject *locals = NULL, *result = NULL;
  Bound b[MAXNAMES];
  int nb = 0;
  PyObject *cap = PyDict_GetItemWithError(g_progs, program);
  Prog *p;
  if (cap) {
    p = PyCapsule_GetPointer(cap, "jitc.Prog");
    Py_INCREF(cap); /* a clear_cache() in another thread must not free it under us */
  } else {
    if (PyErr_Occurred()) return NULL;
    if (!(p = prog_resolve(program, kwv, kwnames, &locals))) goto out;
    cap = PyCapsule_New(p, "jitc.Prog", prog_free);
    if (!cap || PyDict_SetItem(g_progs, program, cap)) {
      if (!cap) prog_release(p);
      goto out;
    }
  }
  /* Every name given must be the program's. */
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwnames, j);
    int known = nm == s_target || name_eq(nm, s_target);
    for (int i = 0; !known && i < p->nnames; i++) known = name_eq(nm, p->names[i]);
    if (!known) {
      PyObject *m = PyUnicode_FromFormat("'%U' is not a name the program uses", nm);
      if (m) PyErr_SetObject(g_exc[JITC_E_USAGE], m);
      Py_XDECREF(m);
      goto out;
    }
  }
  /* Bind each name: given, else (read names only) the caller's. */
  uint8_t key[MAXNAMES + 1];
  int device = 0, host = 0;
  for (int i = 0; i < p->nnames; i++) {
    memset(&b[i], 0, sizeof b[i]);
    nb = i + 1;
    PyObject *v = kw_lookup(kwv, kwnames, p->names[i]);
    if (!v && p->roles[i] != JITC_OUTPUT) {
      v = frame_lookup(p->names[i], &locals);
      if (!v) {
        if (!PyErr_Occurred())
          raise_input("'%U' is not given and is not a variable of the caller", p->names[i]);
        goto out;
      }
    }
    if (v && bind_value(&b[i], PyUnicode_AsUTF8(p->names[i]), v)) {
      goto out;
    }
    key[1 + i] = b[i].code;
    device |= KIND(b[i].code) == K_DEV;
    host |= KIND(b[i].code) == K_HOST;
  }
  if (device && host) {
    raise_input("host and device arrays in one call: jitc does not mix them (copy one side, "
                "e.g. with cupy.asarray or .get())");
    goto out;
  }
  jitc_target t;
  if (parse_target(target, device, &t)) goto out;
  key[0] = (uint8_t)t;
  Entry *e = NULL;
  for (int j = 0; j < p->nentries; j++)
    if (!memcmp(p->entries[j].key, key, 1 + p->nnames)) {
      e = &p->entries[j];
      g_hits++;
      break;
    }
  if (!e) {
    KernelObject *K = compile_bound(program, t, device, p->nnames, p->names, b, NULL, 0);
    if (!K) goto out;
    if (p->nentries == p->cap) {
      int cap2 = p->cap ? 2 * p->cap : 4;
      Entry *ne = PyMem_Realloc(p->entries, sizeof *ne * cap2);
      if (!ne) {
        Py_DECREF(K);
        PyErr_NoMemory();
        goto out;
      }
      p->entries = ne;
      p->cap = cap2;
    }
    e = &p->entries[p->nentries++];
    memcpy(e->key, key, 1 + p->nnames);
    e->K = K;
    for (int i = 0; i < p->nnames; i++) e->slot[i] = kernel_slot(K, p->names[i]);
  }
  {
    KernelObject *K = e->K;
    Py_INCREF(K); /* a concurrent clear_cache() must not free it under us */
    Bound ka[MAXNAMES], ks[MAXNAMES];
    memset(ka, 0, sizeof(Bound) * K->narrays);
    memset(ks, 0, sizeof(Bound) * K->nscalars);
    for (int i = 0; i < p->nnames; i++) {
      int s = e->slot[i];
      if (s >= 0) ka[s] = b[i];
      else if (s != INT32_MIN) ks[-1 - s] = b[i];
    }
    if (K->narrays <= MAXNAMES && K->nscalars <= MAXNAMES) {
      result = kernel_run(K, ka, ks);
      /* Outputs allocated by the run are owned by ka; the rest by b. */
      for (int j = 0; j < K->narrays; j++)
        if (ka[j].own) bound_clear(&ka[j]);
    }
    Py_DECREF(K);
  }
out:
  for (int i = 0; i < nb; i++) bound_clear(&b[i]);
  Py_XDECREF(locals);
  Py_XDECREF(cap);
  return result;
}

/* ---- calling a Kernel ---- */

static PyObject *kernel_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
  KernelObject *K = (KernelObject *)self;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (K->narrays > MAXNAMES || K->nscalars > MAXNAMES)
    return raise_status(JITC_E_USAGE, "too many names");
  if (nargs > PyTuple_GET_SIZE(K->params))
    return raise_status(JITC_E_USAGE, "too many arguments: the kernel's parameters are "
                        "its signature's names");
  Bound ka[MAXNAMES], ks[MAXNAMES];
  memset(ka, 0, sizeof(Bound) * K->narrays);
  memset(ks, 0, sizeof(Bound) * K->nscalars);
  PyObject *result = NULL;
  for (Py_ssize_t j = 0; j < nargs + nkw; j++) {
    PyObject *nm = j < nargs ? PyTuple_GET_ITEM(K->params, j) : PyTuple_GET_ITEM(kwnames, j - nargs);
    int s = kernel_slot(K, nm);
    if (s == INT32_MIN) {
      PyObject *m = PyUnicode_FromFormat("'%U' is not a name of the kernel", nm);
      if (m) PyErr_SetObject(g_exc[JITC_E_USAGE], m);
      Py_XDECREF(m);
      goto out;
    }
    Bound *b = s >= 0 ? &ka[s] : &ks[-1 - s];
    if (b->code != K_NONE) {
      PyObject *m = PyUnicode_FromFormat("'%U' is given twice", nm);
      if (m) PyErr_SetObject(g_exc[JITC_E_USAGE], m);
      Py_XDECREF(m);
      goto out;
    }
    if (bind_value(b, PyUnicode_AsUTF8(nm), args[j])) goto out;
  }
  for (int j = 0; j < K->narrays; j++)
    if (ka[j].code == K_NONE && K->aroles[j] != JITC_OUTPUT) {
      PyObject *m = PyUnicode_FromFormat("missing array '%U'", K->anames[j]);
      if (m) PyErr_SetObject(g_exc[JITC_E_USAGE], m);
      Py_XDECREF(m);
      goto out;
    }
  for (int j = 0; j < K->nscalars; j++)
    if (ks[j].code == K_NONE) {
      PyObject *m = PyUnicode_FromFormat("missing scalar '%U'", K->snames[j]);
      if (m) PyErr_SetObject(g_exc[JITC_E_USAGE], m);
      Py_XDECREF(m);
      goto out;
    }
  result = kernel_run(K, ka, ks);
out:
  for (int j = 0; j < K->narrays; j++) bound_clear(&ka[j]);
  for (int j = 0; j < K->nscalars; j++) bound_clear(&ks[j]);
  return result;
}

static PyObject *kernel_get_program(KernelObject *K, void *c) { return Py_NewRef(K->program); }
static PyObject *kernel_get_target(KernelObject *K, void *c) {
  return PyUnicode_FromString(jitc_target_name(K->target));
}
static PyObject *kernel_get_params(KernelObject *K, void *c) { return Py_NewRef(K->params); }

static PyObject *kernel_get_arrays(KernelObject *K, void *c) {
  static const char *roles[] = {"input", "output", "inout"};
  PyObject *t = PyTuple_New(K->narrays);
  for (int j = 0; t && j < K->narrays; j++) {
    PyObject *e = Py_BuildValue("(Oss)", K->anames[j], roles[K->aroles[j]],
                                dt_name(K->adtypes[j]));
    if (!e) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, j, e);
  }
  return t;
}

static PyObject *kernel_get_scalars(KernelObject *K, void *c) {
  PyObject *t = PyTuple_New(K->nscalars);
  for (int j = 0; t && j < K->nscalars; j++) {
    PyObject *e = Py_BuildValue("(Os)", K->snames[j], dt_name(K->sdtypes[j]));
    if (!e) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, j, e);
  }
  return t;
}

static PyObject *kernel_get_info(KernelObject *K, void *c) {
  const jitc_compile_info *i = jitc_kernel_compile_info(K->k);
  return Py_BuildValue("{sdsdsdsdsdsdss}", "total_ms", i->total_ms, "frontend_ms",
                       i->frontend_ms, "ir_ms", i->ir_ms, "optimize_ms", i->optimize_ms,
                       "codegen_ms", i->codegen_ms, "load_ms", i->load_ms, "cache",
                       i->cache ? i->cache : "none");
}

static PyObject *kernel_repr(KernelObject *K) {
  return PyUnicode_FromFormat("<jitc.Kernel %R for %s, parameters %R>", K->program,
                              jitc_target_name(K->target), K->params);
}

static PyGetSetDef kernel_getset[] = {
  {"program", (getter)kernel_get_program, NULL, "The program's text.", NULL},
  {"target", (getter)kernel_get_target, NULL, "The target it runs on: 'interp', 'cpu' or 'cuda'.",
   NULL},
  {"params", (getter)kernel_get_params, NULL,
   "The names positional arguments bind, in order.", NULL},
  {"arrays", (getter)kernel_get_arrays, NULL,
   "The arrays, in the program's order: (name, role, dtype), role 'input', 'output' or "
   "'inout'.", NULL},
  {"scalars", (getter)kernel_get_scalars, NULL,
   "The scalars the program uses: (name, dtype inside the kernel).", NULL},
  {"compile_info", (getter)kernel_get_info, NULL,
   "Times of the compile in milliseconds, and whether a cache served it.", NULL},
  {NULL},
};

static PyTypeObject KernelType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "jitc.Kernel",
  .tp_basicsize = sizeof(KernelObject),
  .tp_dealloc = (destructor)kernel_dealloc,
  .tp_repr = (reprfunc)kernel_repr,
  .tp_call = PyVectorcall_Call,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
  .tp_vectorcall_offset = offsetof(KernelObject, vectorcall),
  .tp_getset = kernel_getset,
  .tp_doc = "A compiled program: call it with its arrays and scalars.\n\n"
            "kernel(*args, **names): positional arguments bind kernel.params in order, "
            "keywords bind by name.  Arrays must have the dtypes the kernel was compiled for; "
            "scalars are converted to the type they have in the kernel.  Outputs not given "
            "are allocated.  Returns what jitc.evaluate returns: the array the program "
            "assigns, a dict by name when it assigns several, None when it assigns none.\n\n"
            "Made by jitc.compile(); jitc.evaluate keeps its own in a cache.",
};

/* ---- module functions ---- */

/* _compile(program, target, decls): decls a tuple of (name, code); codes
** as in the cache keys (kind | dtype). */
static PyObject *py_compile(PyObject *self, PyObject *args) {
  PyObject *program, *target, *decls;
  if (!PyArg_ParseTuple(args, "UOO!", &program, &target, &PyTuple_Type, &decls)) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(decls);
  if (n > MAXNAMES) return raise_status(JITC_E_USAGE, "too many names");
  PyObject *names[MAXNAMES];
  Bound b[MAXNAMES];
  int device = 0;
  PyObject *params = PyTuple_New(n);
  if (!params) return NULL;
  for (Py_ssize_t j = 0; j < n; j++) {
    PyObject *nm;
    int code;
    memset(&b[j], 0, sizeof b[j]);
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(decls, j), "Ui", &nm, &code)) {
      Py_DECREF(params);
      return NULL;
    }
    Py_INCREF(nm);
    PyUnicode_InternInPlace(&nm);
    PyTuple_SET_ITEM(params, j, nm);
    names[j] = nm;
    b[j].code = (uint8_t)code;
    device |= KIND(code) == K_DEV;
  }
  jitc_target t;
  if (parse_target(target, device, &t)) {
    Py_DECREF(params);
    return NULL;
  }
  return (PyObject *)compile_bound(program, t, device, (int)n, names, b, params, 0);
}

static PyObject *py_init(PyObject *self, PyObject *args) {
  PyObject *excs, *info, *empty;
  if (!PyArg_ParseTuple(args, "O!OO", &PyTuple_Type, &excs, &info, &empty)) return NULL;
  for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(excs) && j < 8; j++)
    Py_XSETREF(g_exc[j], Py_NewRef(PyTuple_GET_ITEM(excs, j)));
  Py_XSETREF(g_device_info, Py_NewRef(info));
  Py_XSETREF(g_device_empty, Py_NewRef(empty));
  Py_RETURN_NONE;
}

static PyObject *py_cache_info(PyObject *self, PyObject *noargs) {
  Py_ssize_t kernels = 0, pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(g_progs, &pos, &k, &v)) {
    Prog *p = PyCapsule_GetPointer(v, "jitc.Prog");
    if (p) kernels += p->nentries;
  }
  return Py_BuildValue("{snsnsLsL}", "programs", PyDict_Size(g_progs), "kernels", kernels,
                       "compiles", g_compiles, "hits", g_hits);
}

static PyObject *py_clear_cache(PyObject *self, PyObject *noargs) {
  PyDict_Clear(g_progs);
  g_compiles = g_hits = 0;
  Py_RETURN_NONE;
}

static PyObject *py_available(PyObject *self, PyObject *arg) {
  jitc_target t;
  if (parse_target(arg, 0, &t)) return NULL;
  jitc_status s;
  Failure f = {0};
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(g_lock, WAIT_LOCK);
  s = jitc_target_available(g_ctx, t);
  if (s) failure_take(&f, s);
  PyThread_release_lock(g_lock);
  Py_END_ALLOW_THREADS
  if (!s) Py_RETURN_TRUE;
  PyObject *r = Py_BuildValue("(Os)", Py_False, f.msg ? f.msg : "");
  free(f.msg);
  return r;
}

static PyObject *py_default_target(PyObject *self, PyObject *noargs) {
  return PyUnicode_FromString(jitc_target_name(g_default_target));
}

static PyMethodDef methods[] = {
  {"evaluate", (PyCFunction)(void (*)(void))evaluate, METH_FASTCALL | METH_KEYWORDS,
   "evaluate(program, target=None, **names)\n--\n\n"
   "Runs an element-wise program on arrays and scalars, and returns what it assigns.\n\n"
   "program: the program's text, e.g. 'c = 2*a + b' or 'a[i] += 1'.\n"
   "target: 'interp', 'cpu' or 'cuda'; None: 'cuda' for device arrays, else the default "
   "(jitc.default_target()).\n"
   "names: the arrays and scalars the program reads, by name.  A name the program reads that "
   "is not given is taken from the caller's local, then global variables (as "
   "numexpr.evaluate does).  An array the program only assigns is allocated, unless given.\n\n"
   "Returns the array the program assigns (a new one, or the array given and updated in "
   "place, as for 'a[i] += 1'), a dict by name when it assigns several, None when none.\n\n"
   "Python int, float and bool are weak scalars (they take the type of the array they meet, "
   "as in NumPy 2); NumPy scalars (np.float32(2)) and 0-d arrays are typed scalars.  Arrays "
   "must have one shape and one memory order (C or Fortran) and be contiguous; jitc does not "
   "broadcast.  The kernel is compiled on the first call and kept: later calls with the same "
   "program, target and types only run it.\n\n"
   "Raises jitc.ProgramError (the program), jitc.InputError (the values), "
   "jitc.UsageError, jitc.TargetUnavailable."},
  {"_compile", py_compile, METH_VARARGS, "_compile(program, target, decls) -> Kernel"},
  {"_init", py_init, METH_VARARGS, "_init(exceptions, device_info, device_empty)"},
  {"cache_info", py_cache_info, METH_NOARGS,
   "cache_info() -> dict\n--\n\n"
   "The evaluate cache: programs and kernels held, compiles made and cache hits since the "
   "start (or clear_cache())."},
  {"clear_cache", py_clear_cache, METH_NOARGS,
   "clear_cache()\n--\n\nEmpties the evaluate cache and zeroes its counters."},
  {"_available", py_available, METH_O, "_available(target) -> True or (False, reason)"},
  {"default_target", py_default_target, METH_NOARGS,
   "default_target() -> str\n--\n\n"
   "The target evaluate and compile use for host arrays when none is given: 'cpu' when jitc "
   "was built with LLVM, else 'interp'."},
  {NULL},
};

static struct PyModuleDef module = {
  PyModuleDef_HEAD_INIT, "jitc._jitc",
  "The compiled part of jitc: use the jitc package.", -1, methods,
};

PyMODINIT_FUNC PyInit__jitc(void) {
  import_array();
  if (PyType_Ready(&KernelType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  g_ctx = jitc_context_new();
  g_lock = PyThread_allocate_lock();
  g_progs = PyDict_New();
  s_target = PyUnicode_InternFromString("target");
  s_cai = PyUnicode_InternFromString("__cuda_array_interface__");
  s_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  s_array_interface = PyUnicode_InternFromString("__array_interface__");
  if (!g_ctx || !g_lock || !g_progs || !s_target || !s_cai || !s_dlpack_device ||
      !s_array_interface) {
    Py_DECREF(m);
    return PyErr_NoMemory();
  }
  jitc_options o;
  jitc_options_init(&o);
  g_default_target = o.target;
  Py_INCREF(&KernelType);
  PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType);
  PyModule_AddStringConstant(m, "version", JITC_VERSION);
  PyModule_AddIntConstant(m, "HOST", K_HOST);
  PyModule_AddIntConstant(m, "DEVICE", K_DEV);
  PyModule_AddIntConstant(m, "WEAK", K_WEAK);
  PyModule_AddIntConstant(m, "STRONG", K_STRONG);
  return m;
}
