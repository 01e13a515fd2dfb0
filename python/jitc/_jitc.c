/*
** _jitc.c -- the compiled half of the Python package, over the C library
** (jitc.h): the module, its functions and its start.  state.c is its
** state and its errors, values.c turns Python values into arrays and
** scalars, kernel.c is the Kernel type and its call, names.c finds a
** program's names in the caller's variables, last.c keeps each thread's
** last call, evaluate.c is jitc.evaluate and its cache, reeval.c
** jitc.validate and jitc.re_evaluate (pyjitc.h: each calls only those before
** it).
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
  return (PyObject *)compile_bound(program, t, device, (int)n, names, b, params,
                                   mod_state()->threads);
}

static PyObject *py_init(PyObject *self, PyObject *args) {
  ModuleState *st = mod_state();
  PyObject *excs, *kinds, *info, *empty, *empty_exc, *numpy_dtype, *note;
  if (!PyArg_ParseTuple(args, "O!O!OOOOO", &PyTuple_Type, &excs, &PyTuple_Type, &kinds, &info,
                        &empty, &empty_exc, &numpy_dtype, &note))
    return NULL;
  /* kinds: the classes of a syntax, name and type error, P_SYNTAX's first. */
  for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kinds) && j + P_SYNTAX < P_KINDS; j++)
    Py_XSETREF(st->program_exc[j + P_SYNTAX], Py_NewRef(PyTuple_GET_ITEM(kinds, j)));
  Py_XSETREF(st->missing_note, Py_NewRef(note));
  Py_XSETREF(st->empty_exc, Py_NewRef(empty_exc));
  for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(excs) && j < N_STATUS; j++)
    Py_XSETREF(st->exc[j], Py_NewRef(PyTuple_GET_ITEM(excs, j)));
  Py_XSETREF(st->device_info, Py_NewRef(info));
  Py_XSETREF(st->device_empty, Py_NewRef(empty));
  Py_XSETREF(st->numpy_dtype, Py_NewRef(numpy_dtype));
  Py_RETURN_NONE;
}

/* _set_cupy(ndarray, empty, get_current_stream, getDevice): CuPy's, from
** __init__.py when it first meets a cupy.ndarray: its arrays are then read
** and made here (values.c's cupy_info, device.c's device_alloc). */
static PyObject *py_set_cupy(PyObject *self, PyObject *args) {
  ModuleState *st = mod_state();
  PyObject *type, *empty, *stream, *device;
  if (!PyArg_ParseTuple(args, "O!OOO", &PyType_Type, &type, &empty, &stream, &device))
    return NULL;
  const char *names[] = {"data", "ptr", "shape", "strides", "dtype", "device", "id",
                         "transpose"};
  PyObject **slots[] = {&st->s_data, &st->s_ptr, &st->s_shape, &st->s_strides, &st->s_dtype,
                        &st->s_device, &st->s_id, &st->s_transpose};
  for (int k = 0; k < 8; k++)
    if (!*slots[k] && !(*slots[k] = PyUnicode_InternFromString(names[k]))) return NULL;
  Py_XSETREF(st->cupy_empty, Py_NewRef(empty));
  Py_XSETREF(st->cupy_stream, Py_NewRef(stream));
  Py_XSETREF(st->cupy_device, Py_NewRef(device));
  Py_XSETREF(st->cupy_type, Py_NewRef(type));
  Py_RETURN_NONE;
}

static PyObject *py_available(PyObject *self, PyObject *arg) {
  jitc_target t;
  if (parse_target(arg, 0, &t)) return NULL;
  jitc_status s;
  Failure f = {0};
  ModuleState *st = mod_state();
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = jitc_target_available(st->ctx, t);
  if (s) failure_take(&f, s);
  PyThread_release_lock(st->lock);
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

/* _dtype_parse(name): the number of the type jitc_dtype_parse reads in
** name (a type's name, NumPy's code such as "f4", a short name), or None. */
static PyObject *py_dtype_parse(PyObject *self, PyObject *arg) {
  const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
  jitc_dtype t;
  if (!s || jitc_dtype_parse(s, &t) != JITC_OK) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  return PyLong_FromLong((long)t);
}

/* _set_threads(n): the cpu target's thread count for kernels compiled from
** now on (0: every core); returns the count it replaces. */
static PyObject *py_set_threads(PyObject *self, PyObject *arg) {
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0 || n > 1 << 16) return raise_usage("threads: give a number from 1 to 65536");
  ModuleState *st = mod_state();
  int old = st->threads;
  st->threads = (int)n;
  return PyLong_FromLong(old);
}

static PyObject *py_default_target(PyObject *self, PyObject *noargs) {
  return PyUnicode_FromString(jitc_target_name(mod_state()->default_target));
}

static PyMethodDef methods[] = {
  {"evaluate", (PyCFunction)(void (*)(void))evaluate, METH_FASTCALL | METH_KEYWORDS,
   "evaluate(ex, local_dict=None, global_dict=None, out=None, order='K', casting='same_kind', "
   "*, target=None, threads=None, sanitize=None, optimization='aggressive', truediv='auto', "
   "disable_cache=False, **names)\n--\n\n"
   "Runs an element-wise program on arrays and scalars and returns what it\n"
   "assigns, as numexpr.evaluate does.\n"
   "\n"
   "ex: the program's text, e.g. 'c = 2*a + b', 'a[i] += 1', or an\n"
   "  expression alone: '2*a + b' (its result is the array `out`).\n"
   "local_dict, global_dict: where the names not given by keyword are looked\n"
   "  up, in that order; None: the caller's local, then global variables (as\n"
   "  numexpr.evaluate does; not builtins, and of an enclosing function only\n"
   "  the variables the caller's own code uses). A name found nowhere raises\n"
   "  UnknownNameError, a KeyError.\n"
   "out: an array to write the result into, and return: the one array the\n"
   "  program assigns, of the broadcast shape (or larger: the inputs broadcast\n"
   "  to it, as NumPy's out= does). It may be an input's very elements ('a * 2'\n"
   "  with out=a runs in place); an input that overlaps it otherwise is copied\n"
   "  first, as NumPy's ufuncs do.\n"
   "order: the memory layout of the arrays the call makes: 'C', 'F', 'A' (F\n"
   "  when every array is Fortran-contiguous) or 'K' (as NumPy's iterator lays\n"
   "  out a ufunc's result after the operands' strides), as NumPy's order=.\n"
   "casting: NumPy's rule ('no', 'equiv', 'safe', 'same_kind', 'unsafe') for\n"
   "  writing the result into an out= of another dtype (a TypeError when it\n"
   "  does not allow it); 'same_kind' as NumPy's ufuncs' and numexpr's.\n"
   "target: 'interp', 'cpu' or 'cuda'; None: 'cuda' for device arrays, else\n"
   "  jitc.default_target(). (A string as the second argument is the target,\n"
   "  as before local_dict was.)\n"
   "threads: how many threads the cpu target runs the call on; None: the\n"
   "  count set_num_threads set (every core at the start).\n"
   "sanitize: numexpr's, taken and not used: numexpr checks the text before\n"
   "  Python's eval runs it; jitc parses its own language and never hands the\n"
   "  text to Python, so no text runs Python code. What numexpr's check refuses\n"
   "  is a ProgramSyntaxError (a SyntaxError and a ValueError) unless it is a\n"
   "  program of the language ('a[i] += 1', two statements 'c = a; d = b').\n"
   "optimization, truediv, disable_cache: numexpr's, taken and not used: they\n"
   "  tune numexpr's own compiler and cache. Their values are checked as numexpr\n"
   "  checks them (a ValueError for optimization outside 'none', 'moderate',\n"
   "  'aggressive', or truediv outside False, True, 'auto'); '/' is always\n"
   "  true division, as numexpr's is.\n"
   "names: the arrays and scalars by name. An array the program only assigns\n"
   "  is allocated, unless given (then it is written in place). The caller's\n"
   "  names win: a name given, or a variable of the caller, is that value even\n"
   "  where the language has the name: with the caller's i, pi or sum, 'a + i'\n"
   "  adds the caller's i, not the element index; a call, sum(a), stays the\n"
   "  function.\n"
   "\n"
   "Arrays are of any shape and strides, used in place: slices, reversed and\n"
   "transposed views, columns, Fortran order, record fields, unaligned\n"
   "buffers. Their shapes broadcast as NumPy's (shapes that do not are a\n"
   "ValueError naming both arrays and the axis); the element index i counts in\n"
   "C order in the broadcast shape. A program of scalars alone gives a 0-d\n"
   "array, as numexpr's does.\n"
   "\n"
   "Returns the array the program assigns (a new one, or out; or the array\n"
   "passed, updated in place, for 'a[i] += 1'), or a dict by name when it\n"
   "assigns several. A reduction ('s = sum(a*b)', prod, min, max, mean, any,\n"
   "all, argmin, argmax) gives a NumPy scalar of NumPy's type (np.sum of\n"
   "float32: np.float32; of int32: np.int64), or for device arrays a 0-d array\n"
   "of their kind on their device, on the current stream.\n"
   "\n"
   "Python int, float, complex and bool are weak scalars (they take the type\n"
   "of the array they meet, as in NumPy 2: float32 array + 1j is complex64);\n"
   "NumPy scalars (np.float32(2), np.complex64(1j)) and 0-d arrays are typed\n"
   "scalars. Device arrays (CuPy, PyTorch, DLPack) run on cuda in place, on\n"
   "their stream, as host arrays do: any strides, broadcast, outputs of their\n"
   "kind laid out as order says, reductions over axes; never copied (a device\n"
   "array written over another's memory, but its very elements, is refused).\n"
   "The kernel is compiled on the first call and kept: later calls\n"
   "with the same program, target, types and threads only run it.\n"
   "\n"
   "Raises jitc.ProgramError (the program: ProgramSyntaxError, a SyntaxError\n"
   "and a ValueError; UnknownNameError, a KeyError, for a name that is\n"
   "nowhere, the message saying where it was looked for; ProgramValueError, a\n"
   "ValueError, for a value NumPy refuses, such as an integer to a negative\n"
   "integer power; ProgramTypeError, a TypeError, for the rest, Python's and,\n"
   "or and not included), jitc.InputError (the values;\n"
   "a ValueError and a TypeError), jitc.UsageError (a ValueError),\n"
   "jitc.TargetUnavailable; jitc.EmptyReductionError (a ProgramError and a\n"
   "ValueError) for min, max, argmin or argmax of no elements."},
  {"validate", (PyCFunction)(void (*)(void))py_validate, METH_FASTCALL | METH_KEYWORDS,
   "validate(ex, local_dict=None, global_dict=None, out=None, order='K', casting='same_kind', "
   "*, target=None, threads=None, sanitize=None, optimization='aggressive', truediv='auto', "
   "disable_cache=False, **names)\n--\n\n"
   "Checks a call of evaluate without running it, as numexpr.validate does: finds the\n"
   "names, compiles the kernel for their types (or finds it in the cache) and keeps the\n"
   "call for re_evaluate. Returns None, or the exception evaluate would raise (it\n"
   "raises none). The shapes are checked when the program runs."},
  {"re_evaluate", (PyCFunction)(void (*)(void))py_re_evaluate, METH_FASTCALL | METH_KEYWORDS,
   "re_evaluate(local_dict=None, global_dict=None, **names)\n--\n\n"
   "Runs the last evaluate or validate call of this thread again, as numexpr.re_evaluate\n"
   "does: the same program, target, threads, order, casting and out= (while that array\n"
   "lives: the call is kept with a weak reference to it), on the values its names have\n"
   "now: given by keyword (those of the last call are not kept), else in local_dict and\n"
   "global_dict, else the caller's variables. An option given by keyword replaces the\n"
   "last call's. Raises UsageError when this thread has made no call to run again."},
  {"_compile", py_compile, METH_VARARGS, "_compile(program, target, decls) -> Kernel"},
  {"_init", py_init, METH_VARARGS,
   "_init(exceptions, program_error_kinds, device_info, device_empty, "
   "empty_reduction_error, numpy_dtype, missing_note)"},
  {"cache_info", py_cache_info, METH_NOARGS,
   "cache_info() -> dict\n--\n\n"
   "The evaluate cache: programs and kernels held, compiles made and cache hits since the "
   "start (or clear_cache())."},
  {"clear_cache", py_clear_cache, METH_NOARGS,
   "clear_cache()\n--\n\nEmpties the evaluate cache and zeroes its counters."},
  {"_available", py_available, METH_O, "_available(target) -> True or (False, reason)"},
  {"_nearest_name", py_nearest_name, METH_VARARGS,
   "_nearest_name(name, names) -> the likely typo's fix among names, or None"},
  {"_dtype_parse", py_dtype_parse, METH_O, "_dtype_parse(name) -> the type's number, or None"},
  {"_set_cupy", py_set_cupy, METH_VARARGS, NULL},
  {"_set_threads", py_set_threads, METH_O,
   "_set_threads(n) -> the thread count it replaces (0: every core)"},
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
  PyTypeObject *kt = kernel_type();
  if (PyType_Ready(kt) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  /* The types and statuses with their numbers, as JSON (jitc --list):
  ** __init__.py reads them from here and keeps no list of its own. */
  if (mod_state_init() || pinned_init() ||
      PyModule_AddStringConstant(m, "vocabulary", jitc_vocabulary())) {
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(kt);
  PyModule_AddObject(m, "Kernel", (PyObject *)kt);
  PyModule_AddStringConstant(m, "version", JITC_VERSION);
  PyModule_AddIntConstant(m, "HOST", K_HOST);
  PyModule_AddIntConstant(m, "DEVICE", K_DEV);
  PyModule_AddIntConstant(m, "WEAK", K_WEAK);
  PyModule_AddIntConstant(m, "STRONG", K_STRONG);
  return m;
}
