/*
** _jitc.c -- the compiled half of the Python package, over the C library
** (jitc.h): the module, its state and its errors.  values.c turns Python
** values into arrays and scalars, kernel.c is the Kernel type and its call,
** names.c finds a program's names in the caller's variables, evaluate.c is
** jitc.evaluate and its cache.
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
** The cache: program text -> Progs (the names the program reads and
** assigns, found by a check of the program, names.c; one Prog per set of
** names its callers had: a caller's `i` is not the element index) -> a
** list of kernels, one per signature (target, and per name: array dtype,
** weak or strong scalar kind).  A call whose names and signature were seen
** runs the kernel without checking the program again.
*/
#define JITC_MODULE_INIT
#include "pyjitc.h"

/* ---- module state ---- */

jitc_context *g_ctx;
PyThread_type_lock g_lock;
jitc_target g_default_target;
PyObject *g_progs;          /* dict: program text -> list of Prog capsules */
long long g_compiles, g_hits;
/* Set by __init__.py through _init(): the exception classes (indexed by
** jitc_status) and the device-array helpers. */
PyObject *g_exc[8];
PyObject *g_empty_exc;    /* a reduction without identity over no elements */
PyObject *g_device_info;  /* obj -> None | ndarray (host view) | tuple */
PyObject *g_device_empty; /* (like, shape, dtype name, fortran) -> array */
PyObject *g_missing_note; /* (message, names, locals, globals, caller) -> message */
PyObject *s_target, *s_cai, *s_dlpack_device, *s_array_interface;

PyObject *raise_status(jitc_status s, const char *msg) {
  PyObject *cls = g_exc[s < 8 ? s : JITC_E_INTERNAL];
  PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg);
  return NULL;
}

/* Raises the exception of status s with a message formatted as by
** PyUnicode_FromFormat (%U, %R, %S take objects). */
static PyObject *raise_fmtv(jitc_status s, const char *fmt, va_list ap) {
  PyObject *m = PyUnicode_FromFormatV(fmt, ap);
  if (m) {
    PyErr_SetObject(g_exc[s] ? g_exc[s] : PyExc_ValueError, m);
    Py_DECREF(m);
  }
  return NULL;
}

PyObject *raise_input(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_fmtv(JITC_E_INPUT, fmt, ap);
  va_end(ap);
  return NULL;
}

PyObject *raise_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_fmtv(JITC_E_USAGE, fmt, ap);
  va_end(ap);
  return NULL;
}

/* The library's error after a failed call, copied while the lock is held:
** raising it needs the GIL, which a holder of the lock must not wait for. */

void failure_take(Failure *f, jitc_status s) {
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

PyObject *failure_raise(Failure *f) { return failure_raise_as(f, NULL); }

/* Raises f as an instance of cls (a subclass of its status's class), or of
** its status's class when cls is NULL. */
PyObject *failure_raise_as(Failure *f, PyObject *cls) {
  const char *m = f->msg && f->msg[0] ? f->msg : jitc_status_name(f->status);
  if (!cls) cls = g_exc[f->status < 8 ? f->status : JITC_E_INTERNAL];
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
  return (PyObject *)compile_bound(program, t, device, (int)n, names, b, params);
}

static PyObject *py_init(PyObject *self, PyObject *args) {
  PyObject *excs, *info, *empty, *empty_exc, *note;
  if (!PyArg_ParseTuple(args, "O!OOOO", &PyTuple_Type, &excs, &info, &empty, &empty_exc,
                        &note))
    return NULL;
  Py_XSETREF(g_missing_note, Py_NewRef(note));
  Py_XSETREF(g_empty_exc, Py_NewRef(empty_exc));
  for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(excs) && j < 8; j++)
    Py_XSETREF(g_exc[j], Py_NewRef(PyTuple_GET_ITEM(excs, j)));
  Py_XSETREF(g_device_info, Py_NewRef(info));
  Py_XSETREF(g_device_empty, Py_NewRef(empty));
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

/* _nearest_name(name, names): jitc_nearest_name over a sequence of str. */
static PyObject *py_nearest_name(PyObject *self, PyObject *args) {
  const char *name;
  PyObject *seq;
  if (!PyArg_ParseTuple(args, "sO", &name, &seq)) return NULL;
  PyObject *fast = PySequence_Fast(seq, "_nearest_name: names must be a sequence");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  const char **names = PyMem_Calloc(n + 1, sizeof *names);
  int k = 0;
  for (Py_ssize_t j = 0; names && j < n && k < INT32_MAX; j++) {
    PyObject *o = PySequence_Fast_GET_ITEM(fast, j);
    const char *u = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (u) names[k++] = u;
    else PyErr_Clear();
  }
  const char *best = names ? jitc_nearest_name(name, names, k) : NULL;
  PyObject *r = best ? PyUnicode_FromString(best) : names ? Py_NewRef(Py_None) : PyErr_NoMemory();
  PyMem_Free(names);
  Py_DECREF(fast);
  return r;
}

static PyObject *py_default_target(PyObject *self, PyObject *noargs) {
  return PyUnicode_FromString(jitc_target_name(g_default_target));
}

static PyMethodDef methods[] = {
  {"evaluate", (PyCFunction)(void (*)(void))evaluate, METH_FASTCALL | METH_KEYWORDS,
   "evaluate(program, target=None, **names)\n--\n\n"
   "Runs an element-wise program on arrays and scalars and returns what it\n"
   "assigns.\n"
   "\n"
   "program: the program's text, e.g. 'c = 2*a + b' or 'a[i] += 1'.\n"
   "target: 'interp', 'cpu' or 'cuda'; None: 'cuda' for device arrays, else\n"
   "  jitc.default_target().\n"
   "names: the arrays and scalars the program reads, by name. A name the\n"
   "  program reads that is not given is taken from the caller's local, then\n"
   "  global variables (as numexpr.evaluate does; not builtins, and of an\n"
   "  enclosing function only the variables the caller's own code uses). An\n"
   "  array the program only assigns is allocated, unless given (then it is\n"
   "  written in place).\n"
   "  The caller's names win: a name given, or a variable of the caller, is\n"
   "  that value even where the language has the name: with the caller's i,\n"
   "  pi or sum, 'a + i' adds the caller's i, not the element index; a call,\n"
   "  sum(a), stays the function.\n"
   "\n"
   "Returns the array the program assigns (a new one; or the array passed,\n"
   "updated in place, for 'a[i] += 1'), or a dict by name when it assigns\n"
   "several. A reduction ('s = sum(a*b)', prod, min, max, mean, any, all,\n"
   "argmin, argmax) gives a NumPy scalar of NumPy's type (np.sum of float32:\n"
   "np.float32; of int32: np.int64), or for device arrays a 0-d array of\n"
   "their kind on their device, on the current stream.\n"
   "\n"
   "Python int, float and bool are weak scalars (they take the type of the\n"
   "array they meet, as in NumPy 2); NumPy scalars (np.float32(2)) and 0-d\n"
   "arrays are typed scalars. Arrays must have one shape and one memory\n"
   "order (C or Fortran) and be contiguous: jitc does not broadcast or copy.\n"
   "The kernel is compiled on the first call and kept: later calls with the\n"
   "same program, target and types only run it.\n"
   "\n"
   "Raises jitc.ProgramError (the program; a name that is nowhere: the message\n"
   "says where it was looked for), jitc.InputError (the values),\n"
   "jitc.UsageError, jitc.TargetUnavailable; jitc.EmptyReductionError (a\n"
   "ProgramError and a ValueError) for min, max, argmin or argmax of no\n"
   "elements."},
  {"_compile", py_compile, METH_VARARGS, "_compile(program, target, decls) -> Kernel"},
  {"_init", py_init, METH_VARARGS,
   "_init(exceptions, device_info, device_empty, empty_reduction_error, missing_note)"},
  {"cache_info", py_cache_info, METH_NOARGS,
   "cache_info() -> dict\n--\n\n"
   "The evaluate cache: programs and kernels held, compiles made and cache hits since the "
   "start (or clear_cache())."},
  {"clear_cache", py_clear_cache, METH_NOARGS,
   "clear_cache()\n--\n\nEmpties the evaluate cache and zeroes its counters."},
  {"_available", py_available, METH_O, "_available(target) -> True or (False, reason)"},
  {"_nearest_name", py_nearest_name, METH_VARARGS,
   "_nearest_name(name, names) -> the likely typo's fix among names, or None"},
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
