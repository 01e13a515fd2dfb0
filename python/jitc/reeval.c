/*
** reeval.c -- numexpr's validate() and re_evaluate(): a call checked and
** kept without its run, and the kept call (last.c) run again on the values
** the caller has now.
*/
#include "pyjitc.h"

/* The exception being raised, taken (a new reference). */
static PyObject *take_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value && tb) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
#endif
}

/* validate(ex, ...): evaluate's arguments; finds or compiles the kernel for
** the values, records the call for re_evaluate and runs nothing.  Returns
** None, or the exception evaluate would raise (numexpr's validate returns
** it too); the shapes are checked by the run. */
PyObject *py_validate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames) {
  Options o;
  PyObject *kwv[MAXNAMES], *kwn = NULL, *r = NULL;
  if (!split_args(args, nargs, kwnames, &o, kwv, &kwn)) r = run_call(args[0], o, kwv, kwn, 0);
  Py_XDECREF(kwn);
  if (r || !PyErr_ExceptionMatches(PyExc_Exception)) return r;
  return take_exception();
}

/* re_evaluate(local_dict=None, global_dict=None, **names): the last call's
** program with its options (another given by keyword replaces its own), on
** the names found now. */
PyObject *py_re_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  enum { ROOM = MAXNAMES + 16 };
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  const LastCall *L = last_get();
  if (!L || !L->program)
    return raise_usage("re_evaluate(): this thread has made no evaluate() or validate() call "
                       "to run again");
  if (nargs > 2 || nkw > ROOM)
    return raise_usage("re_evaluate(local_dict=None, global_dict=None, **names): at most two "
                       "arguments by position, and at most %d names", MAXNAMES);
  for (Py_ssize_t j = 0; j < nargs; j++)
    if (PyUnicode_Check(args[j])) /* evaluate would take a string there as the target */
      return raise_usage("re_evaluate(): local_dict and global_dict are dicts, not %R", args[j]);
  /* evaluate's arguments: the program, then re_evaluate's own.  The
  ** record's objects are held for the call, which replaces them. */
  PyObject *v[1 + 2 + ROOM], *program = Py_NewRef(L->program);
  v[0] = program;
  for (Py_ssize_t j = 0; j < nargs + nkw; j++) v[1 + j] = args[j];
  Options o;
  PyObject *kwv[MAXNAMES], *kwn = NULL;
  if (split_args(v, 1 + nargs, kwnames, &o, kwv, &kwn)) {
    Py_DECREF(program);
    return NULL;
  }
  PyObject **opts[] = {&o.target, &o.threads, &o.order, &o.casting};
  PyObject *const kept[] = {L->target, L->threads, L->order, L->casting};
  for (int k = 0; k < 4; k++) *opts[k] = Py_XNewRef(*opts[k] ? *opts[k] : kept[k]);
  o.out = o.out ? Py_NewRef(o.out) : last_out(L);
  PyObject *result = run_call(program, o, kwv, kwn, 1);
  for (int k = 0; k < 4; k++) Py_XDECREF(*opts[k]);
  Py_XDECREF(o.out);
  Py_DECREF(program);
  Py_XDECREF(kwn);
  return result;
}
