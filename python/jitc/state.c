/*
** state.c -- the extension's state, one struct, and its errors.
**
** Everything kept between calls lives in the ModuleState that mod_state()
** returns (the module is single-phase: one state per process): the
** library's context and its lock, the evaluate cache, what __init__.py
** hands over by _init(), and the types' NumPy dtypes.  The errors a call
** raises are made here from the library's statuses with the exception
** classes of the state.  This file calls no other file of the extension.
*/
#include "pyjitc.h"

#include <stdio.h>
#include <stdlib.h>

static ModuleState the_state;

ModuleState *mod_state(void) { return &the_state; }

/* The order messages list the types in: by kind, then size, then number
** (a void kind is ml_dtypes' bfloat16, a float: after float16). */
static int rank(const ModuleState *st, int t) {
  const char *p = strchr("biufV", st->kind[t]);
  int k = p ? (int)(p - "biufV") : 5;
  return (k == 4 ? 3 : k) * 1000 + st->size[t] * 32 + t;
}

static void type_list(ModuleState *st) {
  int order[JITC_NDTYPES];
  for (int t = 0; t < JITC_NDTYPES; t++) { /* insertion sort */
    int j = t;
    while (j > 0 && rank(st, order[j - 1]) > rank(st, t)) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = t;
  }
  size_t k = 0;
  for (int j = 0; j < JITC_NDTYPES && k < sizeof st->type_list; j++)
    k += (size_t)snprintf(st->type_list + k, sizeof st->type_list - k, "%s%s",
                          j == 0 ? "" : j == JITC_NDTYPES - 1 ? " and " : ", ",
                          jitc_dtype_name((jitc_dtype)order[j]));
}

int mod_state_init(void) {
  ModuleState *st = &the_state;
  st->ctx = jitc_context_new();
  st->lock = PyThread_allocate_lock();
  st->progs = PyDict_New();
  st->s_target = PyUnicode_InternFromString("target");
  st->s_cai = PyUnicode_InternFromString("__cuda_array_interface__");
  st->s_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  st->s_array_interface = PyUnicode_InternFromString("__array_interface__");
  st->s_threads = PyUnicode_InternFromString("threads");
  st->s_local_dict = PyUnicode_InternFromString("local_dict");
  st->s_global_dict = PyUnicode_InternFromString("global_dict");
  st->s_out = PyUnicode_InternFromString("out");
  st->s_order = PyUnicode_InternFromString("order");
  st->s_casting = PyUnicode_InternFromString("casting");
  st->s_sanitize = PyUnicode_InternFromString("sanitize");
  st->s_optimization = PyUnicode_InternFromString("optimization");
  st->s_truediv = PyUnicode_InternFromString("truediv");
  st->s_disable_cache = PyUnicode_InternFromString("disable_cache");
  if (!st->ctx || !st->lock || !st->progs || !st->s_target || !st->s_cai ||
      !st->s_dlpack_device || !st->s_array_interface || !st->s_threads || !st->s_local_dict ||
      !st->s_global_dict || !st->s_out || !st->s_order || !st->s_casting || !st->s_sanitize ||
      !st->s_optimization || !st->s_truediv || !st->s_disable_cache) {
    PyErr_NoMemory();
    return -1;
  }
  jitc_options o;
  jitc_options_init(&o);
  st->default_target = o.target;
  st->threads = o.threads;
  /* The types as NumPy sees them: "<u2" is kind 'u', 2 bytes. */
  for (int t = 0; t < JITC_NDTYPES; t++) {
    const char *ts = jitc_dtype_typestr((jitc_dtype)t);
    st->kind[t] = ts ? ts[1] : 0;
    st->size[t] = ts ? atoi(ts + 2) : 0;
  }
  type_list(st);
  return 0;
}

PyArray_Descr *mod_descr(jitc_dtype t) {
  ModuleState *st = &the_state;
  if ((unsigned)t >= JITC_NDTYPES) {
    PyErr_SetString(PyExc_SystemError, "jitc: bad dtype");
    return NULL;
  }
  if (!st->descr[t]) {
    if (!st->numpy_dtype) {
      PyErr_SetString(PyExc_SystemError, "jitc: _init() was not called");
      return NULL;
    }
    PyObject *d = PyObject_CallFunction(st->numpy_dtype, "s", jitc_dtype_name(t));
    if (!d)
      return NULL;
    if (!PyArray_DescrCheck(d)) {
      Py_DECREF(d);
      PyErr_SetString(PyExc_SystemError, "jitc: _numpy_dtype gave no dtype");
      return NULL;
    }
    st->descr[t] = (PyArray_Descr *)d;
  }
  Py_INCREF(st->descr[t]);
  return st->descr[t];
}

/* ---- errors ---- */

PyObject *raise_status(jitc_status s, const char *msg) {
  PyObject *cls = the_state.exc[(unsigned)s < N_STATUS ? s : JITC_E_INTERNAL];
  PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg);
  return NULL;
}

/* Raises the exception of status s with a message formatted as by
** PyUnicode_FromFormat (%U, %R, %S take objects). */
static PyObject *raise_fmtv(jitc_status s, const char *fmt, va_list ap) {
  PyObject *m = PyUnicode_FromFormatV(fmt, ap);
  if (m) {
    PyObject *cls = the_state.exc[(unsigned)s < N_STATUS ? s : JITC_E_INTERNAL];
    PyErr_SetObject(cls ? cls : PyExc_ValueError, m);
    Py_DECREF(m);
  }
  return NULL;
}

const char *program_text(PyObject *program) {
  Py_ssize_t len;
  const char *src = PyUnicode_AsUTF8AndSize(program, &len);
  if (src && strlen(src) != (size_t)len) { /* the C string would end at the NUL */
    PyObject *cls = the_state.program_exc[P_SYNTAX];
    PyErr_SetString(cls ? cls : PyExc_SyntaxError,
                    "source code string cannot contain null bytes");
    return NULL;
  }
  return src;
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
  f->boolean = 0;
  f->msg = strdup(jitc_errmsg(the_state.ctx));
  for (size_t l = f->msg ? strlen(f->msg) : 0; l && (f->msg[l - 1] == '\n' || f->msg[l - 1] == ' ');)
    f->msg[--l] = 0;
  jitc_error e;
  f->line = f->col = 0;
  if (s == JITC_E_PROGRAM && jitc_error_get(the_state.ctx, 0, &e) == JITC_OK) {
    f->line = e.line;
    f->col = e.col;
  }
}

/* Whether a checker's message is about a value that NumPy or Python
** refuses with a ValueError: the checker's and the constant folder's words
** for them. */
static int value_message(const char *m) {
  static const char *const says[] = {
    "integers to negative integer powers are not allowed", /* type.c: NumPy's ValueError */
    "negative shift count of weak values",                 /* fold.c: Python's ValueError */
  };
  for (size_t k = 0; k < sizeof says / sizeof says[0]; k++)
    if (!strncmp(m, says[k], strlen(says[k]))) return 1;
  return 0;
}

/* Whether a parser's message is about one of Python's boolean operators,
** which the language lacks (use &, |, ~): where Python parses the program,
** it fails on the operands, as numexpr's raises a TypeError there (its
** nodes have no truth value). */
static int boolean_message(const char *m) {
  static const char *const says[] = {"'and' is not an operator", "'or' is not an operator",
                                     "'not' is not an operator"};
  for (size_t k = 0; k < sizeof says / sizeof says[0]; k++)
    if (!strncmp(m, says[k], strlen(says[k]))) return 1;
  return 0;
}

/* Sets f->kind of a program error, with the lock held and right after
** failure_take (it replaces the context's errors): a syntax error when the
** program does not parse alone (unless every error is about Python's
** boolean operators: f->boolean, for failure_confirm); a name error when a
** diagnostic is about an unknown name (the names are looked up before the
** types are checked, as numexpr and Python do), a value error when the
** first is about a value (value_message), else a type error. */
void failure_classify(Failure *f, const char *src) {
  if (f->status != JITC_E_PROGRAM) return;
  int n = jitc_error_count(the_state.ctx), name = 0, value = 0, boolean = n > 0;
  for (int e = 0; e < n; e++) {
    jitc_error er;
    if (jitc_error_get(the_state.ctx, e, &er) != JITC_OK || !er.message) continue;
    name |= !strncmp(er.message, "unknown name '", 14);
    boolean &= boolean_message(er.message);
    if (e == 0) value = value_message(er.message);
  }
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_INTERP;
  char *ast = NULL;
  jitc_status s = jitc_emit(the_state.ctx, src, NULL, 0, NULL, 0, &o, "ast", &ast);
  jitc_free(ast);
  f->kind = s == JITC_E_PROGRAM ? P_SYNTAX : name ? P_NAME : value ? P_VALUE : P_TYPE;
  f->boolean = s == JITC_E_PROGRAM && boolean;
}

/* A program whose only errors are Python's and, or, not (the parser goes
** on after each, but may not report every other mistake): a type error
** where Python's parser takes the text (numexpr's TypeError), else a syntax
** error, as numexpr's compile() gives. */
void failure_confirm(Failure *f, const char *src) {
  if (f->status != JITC_E_PROGRAM || !f->boolean) return;
  PyCompilerFlags flags = {PyCF_ONLY_AST, PY_MINOR_VERSION};
  PyObject *ast = Py_CompileStringFlags(src, "<program>", Py_file_input, &flags);
  if (ast) f->kind = P_TYPE;
  Py_XDECREF(ast);
  PyErr_Clear();
}

PyObject *failure_raise(Failure *f) { return failure_raise_as(f, NULL); }

/* Raises f as an instance of cls (a subclass of its status's class), or of
** its status's class when cls is NULL. */
PyObject *failure_raise_as(Failure *f, PyObject *cls) {
  const char *m = f->msg && f->msg[0] ? f->msg : jitc_status_name(f->status);
  if (!cls && f->status == JITC_E_PROGRAM && f->kind > P_OTHER && f->kind < P_KINDS)
    cls = the_state.program_exc[f->kind];
  if (!cls) cls = the_state.exc[(unsigned)f->status < N_STATUS ? f->status : JITC_E_INTERNAL];
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
