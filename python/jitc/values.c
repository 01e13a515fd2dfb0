/*
** values.c -- what a Python value is to a kernel: a host array (an ndarray,
** or a view of a buffer or __array_interface__), a device array (through
** __init__.py's _device_info), or a scalar, weak (Python's numbers) or
** strong (NumPy's scalars, 0-d arrays).  Views only: nothing is copied.
*/
#include "pyjitc.h"

void bound_clear(Bound *b) {
  Py_CLEAR(b->arr);
  Py_CLEAR(b->dev);
  Py_CLEAR(b->own);
  b->code = K_NONE;
}

int dtype_of_descr(PyArray_Descr *d, jitc_dtype *out) {
  const ModuleState *st = mod_state();
  int size = (int)PyDataType_ELSIZE(d);
  for (int t = 0; t < JITC_NDTYPES; t++) {
    if (st->kind[t] != d->kind || st->size[t] != size) continue;
    if (d->kind == 'V') {
      /* A bare void ('<V2') is any two bytes: the type's name must say
      ** which (ml_dtypes.bfloat16's scalar type is named bfloat16). */
      const char *nm = d->typeobj ? d->typeobj->tp_name : "";
      const char *dot = strrchr(nm, '.');
      if (strcmp(dot ? dot + 1 : nm, jitc_dtype_name((jitc_dtype)t))) continue;
    }
    *out = (jitc_dtype)t;
    return 0;
  }
  return -1;
}

/* Whether a strided layout is C- (1) or Fortran- (2) contiguous, both, or
** neither (0): device arrays of either run as one flat run (device.c). */
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

const char *dt_name(jitc_dtype t) { return jitc_dtype_name(t); }

/* A host ndarray of any shape and strides: checks its dtype and fills the
** array fields (shape and strides are the array's own, in place). */
static int bind_ndarray(Bound *b, const char *name, PyArrayObject *a) {
  PyArray_Descr *d = PyArray_DESCR(a);
  jitc_dtype t;
  if (PyArray_ISBYTESWAPPED(a) || dtype_of_descr(d, &t)) {
    PyObject *r = PyObject_Str((PyObject *)d);
    raise_input("'%s' is an array of %S; jitc takes %s (convert it with .astype())", name,
                r ? r : Py_None, mod_state()->type_list);
    Py_XDECREF(r);
    return -1;
  }
  b->ndim = PyArray_NDIM(a);
  memcpy(b->shape, PyArray_SHAPE(a), sizeof(npy_intp) * b->ndim);
  b->strides = PyArray_STRIDES(a);
  b->n = PyArray_SIZE(a);
  b->ptr = (uint64_t)(uintptr_t)PyArray_DATA(a);
  b->writable = PyArray_ISWRITEABLE(a);
  b->code = K_HOST | t;
  return 0;
}

/* A 0-d ndarray bound as a typed scalar (b's code K_STRONG), made an array
** of shape () for a name the kernel takes as an array; `own`: b owns the
** reference it takes as its output's (b->own too, as for an output made
** by the call).  Else nothing changes.  -1 with an exception set. */
int bind_zero_d(Bound *b, const char *name, int own) {
  if (KIND(b->code) != K_STRONG || !b->obj || !PyArray_Check(b->obj) ||
      PyArray_NDIM((PyArrayObject *)b->obj) != 0)
    return 0;
  PyObject *o = b->obj;
  memset(b, 0, sizeof *b);
  b->obj = o;
  b->arr = (PyArrayObject *)Py_NewRef(o);
  if (own) b->own = Py_NewRef(o);
  return bind_ndarray(b, name, b->arr);
}

/* A strong scalar of type t: a 0-d array or a NumPy scalar `o`, whose
** element is at p.  Integers are read as their bytes say (a uint64's bits
** in u.i), floats as doubles: float32 and float64 from their bytes, the
** 16-bit ones through Python's float, which holds them exactly; complex
** values as their two parts (jitc_value's c.re and c.im), widened exactly. */
static int bind_strong(Bound *b, jitc_dtype t, const void *p, PyObject *o) {
  const ModuleState *st = mod_state();
  b->code = K_STRONG | t;
  b->val.dtype = t;
  int size = st->size[t];
  switch (st->kind[t]) {
  case 'b':
    b->val.u.i = *(const npy_bool *)p != 0;
    return 0;
  case 'c':
    if (size == 2 * (int)sizeof(float)) {
      float part[2];
      memcpy(part, p, sizeof part);
      b->val.u.c.re = part[0];
      b->val.u.c.im = part[1];
    } else {
      memcpy(&b->val.u.c.re, p, sizeof(double));
      memcpy(&b->val.u.c.im, (const char *)p + sizeof(double), sizeof(double));
    }
    return 0;
  case 'i':
  case 'u': {
    uint64_t u = 0;
    memcpy(&u, p, (size_t)size); /* little-endian: the low bytes */
    if (st->kind[t] == 'i' && size < 8 && (u >> (8 * size - 1) & 1))
      u |= ~0ull << (8 * size); /* sign-extend */
    memcpy(&b->val.u.i, &u, sizeof u);
    return 0;
  }
  default:
    if (size == 4) {
      b->val.u.f = *(const float *)p;
    } else if (size == 8) {
      b->val.u.f = *(const double *)p;
    } else {
      double v = PyFloat_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) return -1;
      b->val.u.f = v;
    }
    return 0;
  }
}

/* A Python complex: weak, as Python's float is (NEP 50): complex128 with
** integers, the complex type of a float's width (float32 + 1j is complex64). */
static int bind_weak_complex(Bound *b, PyObject *o) {
  Py_complex c = PyComplex_AsCComplex(o);
  if (c.real == -1.0 && PyErr_Occurred()) return -1;
  b->code = K_WEAK | JITC_COMPLEX128;
  b->val.dtype = JITC_COMPLEX128;
  b->val.u.c.re = c.real;
  b->val.u.c.im = c.imag;
  return 0;
}

/* Classifies a value: array (host or device) or scalar (weak or strong). */
int bind_value(Bound *b, const char *name, PyObject *o) {
  memset(b, 0, sizeof *b);
  b->obj = o;
  if (PyArray_CheckExact(o) || PyArray_Check(o)) {
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) == 0) {
      jitc_dtype t;
      PyArray_Descr *d = PyArray_DESCR(a);
      if (PyArray_ISBYTESWAPPED(a) || dtype_of_descr(d, &t))
        return bind_ndarray(b, name, a); /* for its message */
      if (mod_state()->size[t] != 2) return bind_strong(b, t, PyArray_DATA(a), o);
      PyObject *item = PyArray_GETITEM(a, PyArray_DATA(a)); /* a 16-bit float's value */
      int rc = item ? bind_strong(b, t, PyArray_DATA(a), item) : -1;
      Py_XDECREF(item);
      return rc;
    }
    PyArray_Descr *nd = PyArray_ISBYTESWAPPED(a)
                            ? PyArray_DescrNewByteorder(PyArray_DESCR(a), NPY_NATIVE) : NULL;
    jitc_dtype nt;
    if (nd && dtype_of_descr(nd, &nt))
      Py_CLEAR(nd); /* a type jitc lacks: bind_ndarray says so */
    if (nd) {
      /* Not in this machine's byte order: a copy in it, as numexpr reads
      ** one, which the program may only read (kernel.c refuses a write). */
      PyObject *c = PyArray_CastToType(a, nd, 0);
      if (!c) return -1;
      b->arr = (PyArrayObject *)c;
      if (bind_ndarray(b, name, b->arr)) return -1;
      b->writable = 0;
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
  if (PyComplex_CheckExact(o))
    return bind_weak_complex(b, o);
  if (PyArray_IsScalar(o, Generic)) {
    PyArray_Descr *d = PyArray_DescrFromScalar(o);
    jitc_dtype t;
    int bad = !d || dtype_of_descr(d, &t);
    Py_XDECREF(d);
    if (bad) {
      if (!PyErr_Occurred())
        raise_input("'%s' is a %s scalar; jitc takes %s", name, Py_TYPE(o)->tp_name,
                    mod_state()->type_list);
      return -1;
    }
    /* A 16-bit float's value comes from Python's float (bind_strong); every
    ** other type's element is copied out, a 16-bit integer's included. */
    const ModuleState *st = mod_state();
    char buf[16] = {0};
    if (st->size[t] != 2 || st->kind[t] == 'i' || st->kind[t] == 'u')
      PyArray_ScalarAsCtype(o, buf);
    return bind_strong(b, t, buf, o);
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
    if (over > 0) {
      /* 2**63 or more: a uint64 value, which the kernel takes where the
      ** int meets uint64 alone (as NumPy's u + 2**63 does). */
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        raise_input("'%s' = %S does not fit in int64 or uint64", name, o);
        return -1;
      }
      b->code = K_WEAK | JITC_INT64;
      b->val.dtype = JITC_UINT64;
      b->val.u.i = (int64_t)u;
      return 0;
    }
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
  if (PyComplex_Check(o))
    return bind_weak_complex(b, o);
  if (PyList_Check(o) || PyTuple_Check(o)) {
    /* A list or tuple, as numexpr and NumPy's ufuncs take one: made an
    ** array (the one copy of an input jitc makes), which the program may
    ** only read (kernel.c refuses to write into it). */
    PyObject *a = PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_DEFAULT, NULL);
    if (!a) return -1;
    b->arr = (PyArrayObject *)a;
    if (bind_ndarray(b, name, b->arr)) return -1;
    b->writable = 0;
    return 0;
  }
  /* Device arrays first: a CuPy array also has the buffer protocol's
  ** absence, but a PyTorch CPU tensor has DLPack and no buffer. */
  ModuleState *st = mod_state();
  if (st->cupy_type && (PyObject *)Py_TYPE(o) == st->cupy_type) {
    PyObject *info = cupy_info(o);
    if (!info) return -1;
    b->dev = info;
    return bind_device(b, name, info);
  }
  int known = 0;
  for (int k = 0; k < 4 && !known; k++) known = Py_TYPE(o) == st->dev_types[k];
  if (st->device_info && (known || PyObject_HasAttr(o, st->s_cai) ||
                          PyObject_HasAttr(o, st->s_dlpack_device))) {
    PyObject *info = PyObject_CallOneArg(st->device_info, o);
    if (!info) return -1;
    for (int k = 0; k < 4 && !known && (PyArray_Check(info) || PyTuple_Check(info)); k++)
      if (!st->dev_types[k]) {
        st->dev_types[k] = (PyTypeObject *)Py_NewRef((PyObject *)Py_TYPE(o));
        known = 1;
      }
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
  if (PyObject_CheckBuffer(o) || PyObject_HasAttr(o, st->s_array_interface)) {
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

PyObject *cupy_info(PyObject *o) {
  ModuleState *st = mod_state();
  PyObject *data = PyObject_GetAttr(o, st->s_data);
  PyObject *ptr = data ? PyObject_GetAttr(data, st->s_ptr) : NULL;
  PyObject *shape = ptr ? PyObject_GetAttr(o, st->s_shape) : NULL;
  PyObject *strides = shape ? PyObject_GetAttr(o, st->s_strides) : NULL;
  PyObject *dtype = strides ? PyObject_GetAttr(o, st->s_dtype) : NULL;
  PyObject *stream = dtype ? PyObject_CallNoArgs(st->cupy_stream) : NULL;
  PyObject *sptr = stream ? PyObject_GetAttr(stream, st->s_ptr) : NULL;
  PyObject *dev = sptr ? PyObject_GetAttr(o, st->s_device) : NULL;
  PyObject *id = dev ? PyObject_GetAttr(dev, st->s_id) : NULL;
  PyObject *name = NULL, *info = NULL;
  jitc_dtype t;
  if (id)
    name = PyArray_DescrCheck(dtype) && !dtype_of_descr((PyArray_Descr *)dtype, &t)
               ? PyUnicode_FromString(jitc_dtype_name(t))
               : PyObject_Str(dtype);
  if (name) info = PyTuple_Pack(7, ptr, shape, strides, name, sptr, id, o);
  Py_XDECREF(data);
  Py_XDECREF(ptr);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(dtype);
  Py_XDECREF(stream);
  Py_XDECREF(sptr);
  Py_XDECREF(dev);
  Py_XDECREF(id);
  Py_XDECREF(name);
  return info;
}

int strides_of(int nd, const npy_intp *shape, npy_intp item, PyObject *strides, npy_intp *st) {
  for (int d = nd - 1; d >= 0; d--) {
    st[d] = item;
    item *= shape[d];
  }
  for (int d = 0; strides != Py_None && d < nd; d++)
    st[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, d));
  return PyErr_Occurred() ? -1 : 0;
}

/* _device_info's tuple: (ptr, shape, strides in bytes or None, dtype,
** stream, device, keepalive); dtype is the name of one of the types
** (__init__.py found it from the array's own dtype, "bfloat16"), or what
** the array said when it is none of them (a typestr, "<c8"). */
int bind_device(Bound *b, const char *name, PyObject *info) {
  PyObject *shape, *strides, *ts, *rest1, *rest2, *rest3;
  unsigned long long ptr;
  if (!PyArg_ParseTuple(info, "KO!OU|OOO", &ptr, &PyTuple_Type, &shape, &strides, &ts, &rest1,
                        &rest2, &rest3))
    return -1;
  const char *s = PyUnicode_AsUTF8(ts);
  if (!s) return -1;
  jitc_dtype t;
  int known = 0;
  for (int k = 0; k < JITC_NDTYPES && !known; k++)
    if (!strcmp(s, jitc_dtype_name((jitc_dtype)k))) {
      t = (jitc_dtype)k;
      known = 1;
    }
  if (!known) {
    raise_input("'%s' is a device array of %s; jitc takes %s", name, s,
                mod_state()->type_list);
    return -1;
  }
  int size = mod_state()->size[t];
  int nd = (int)PyTuple_GET_SIZE(shape);
  if (nd > NPY_MAXDIMS) {
    raise_input("'%s' has %d dimensions", name, nd);
    return -1;
  }
  npy_intp st[NPY_MAXDIMS];
  b->n = 1;
  for (int d = 0; d < nd; d++) {
    b->shape[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
    if (b->shape[d] < 0 && !PyErr_Occurred()) return raise_input("'%s': bad shape", name), -1;
    b->n *= b->shape[d];
  }
  if (strides != Py_None && (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd))
    return raise_input("'%s': bad strides", name), -1;
  if (PyErr_Occurred() || strides_of(nd, b->shape, size, strides, st)) return -1;
  /* Any strides: the run addresses the array through them (device.c). */
  b->ndim = nd;
  b->layout = layout_of(nd, b->shape, st, size);
  b->ptr = ptr;
  b->writable = 1;
  b->code = K_DEV | t;
  return 0;
}

