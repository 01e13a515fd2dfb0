/*
** last.c -- each thread's last call that found its kernel (evaluate's or
** validate's), kept for re_evaluate (reeval.c), as numexpr keeps its own.
**
** The record holds the program and the options as they were given, and
** out= by a weak reference: it keeps no array alive (numexpr's record holds
** out so too, and its suite checks it).  Names given by keyword are not
** kept, for the same reason: re_evaluate finds the names anew, as evaluate
** does (keywords, local_dict and global_dict, or the caller's variables).
** A call in a loop finds the record as it left it and changes nothing.
*/
#include "pyjitc.h"

static void last_free(PyObject *cap) {
  LastCall *L = PyCapsule_GetPointer(cap, "jitc.LastCall");
  if (!L) return;
  PyObject **f[] = {&L->program, &L->target, &L->threads, &L->order, &L->casting, &L->out};
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) Py_CLEAR(*f[k]);
  PyMem_Free(L);
}

/* This thread's record (create: made where there is none; NULL with no
** exception where it cannot be).  One per thread, as numexpr's is
** (threading.local): in the thread state's dict, which Python clears when
** the thread ends, and the record with it.  The last thread's is at hand in
** the module state: a thread's id (PyThreadState_GetID) is never another's,
** so while it is the caller's, the record it names is alive. */
static LastCall *mine(int create) {
  ModuleState *st = mod_state();
  uint64_t id = PyThreadState_GetID(PyThreadState_Get());
  if (id == st->last_id) return st->last;
  PyObject *d = PyThreadState_GetDict(), *key = PyUnicode_InternFromString("jitc.LastCall");
  PyObject *cap = d && key ? PyDict_GetItemWithError(d, key) : NULL; /* borrowed */
  if (!cap && create && d && key && !PyErr_Occurred()) {
    LastCall *L = PyMem_Calloc(1, sizeof *L);
    PyObject *c = L ? PyCapsule_New(L, "jitc.LastCall", last_free) : NULL;
    if (!c) PyMem_Free(L);
    else if (!PyDict_SetItem(d, key, c)) cap = c;
    Py_XDECREF(c);
  }
  Py_XDECREF(key);
  PyErr_Clear(); /* no memory for it: nothing recorded, nothing to run again */
  if (!cap) return NULL;
  st->last_id = id;
  st->last = PyCapsule_GetPointer(cap, "jitc.LastCall");
  return st->last;
}

const LastCall *last_get(void) { return mine(0); }

/* The object weak reference ref refers to (a new reference), or NULL: no
** reference, or its object is gone. */
static PyObject *referent(PyObject *ref) {
  if (!ref) return NULL;
#if PY_VERSION_HEX >= 0x030D0000
  PyObject *obj = NULL;
  if (PyWeakref_GetRef(ref, &obj) < 0) PyErr_Clear();
  return obj;
#else
  PyObject *obj = PyWeakref_GetObject(ref);
  return obj && obj != Py_None ? Py_NewRef(obj) : NULL;
#endif
}

PyObject *last_out(const LastCall *L) { return referent(L->out); }

void last_record(PyObject *program, const Options *o) {
  LastCall *L = mine(1);
  if (!L) return;
  if (L->program == program && L->target == o->target && L->threads == o->threads &&
      L->order == o->order && L->casting == o->casting && !L->out == !o->out) {
    /* The same call as the last (a loop's): the record stands. */
    PyObject *out = referent(L->out);
    Py_XDECREF(out);
    if (out == o->out) return;
  }
  PyObject *out = NULL;
  if (o->out) {
    out = PyWeakref_NewRef(o->out, NULL);
    if (!out) PyErr_Clear(); /* no weak reference to it: as if it were gone */
  }
  Py_XSETREF(L->out, out);
  Py_XSETREF(L->program, Py_NewRef(program));
  Py_XSETREF(L->target, Py_XNewRef(o->target));
  Py_XSETREF(L->threads, Py_XNewRef(o->threads));
  Py_XSETREF(L->order, Py_XNewRef(o->order));
  Py_XSETREF(L->casting, Py_XNewRef(o->casting));
}
