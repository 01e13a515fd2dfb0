/*
** names.c -- the names of a program jitc.evaluate runs: those given by
** keyword, then the caller's variables, looked up as numexpr looks them up
** (the calling frame's locals, then its globals; not builtins).
**
** The program is checked on interp (the front end only) with the names
** known so far declared; each name the check could not resolve, and each
** it read as the language's (`i`, `pi`, ...; jitc_kernel_language_name),
** is looked up in the caller's variables, and the program is checked
** again, until no name is added.  A name the caller has is the caller's,
** whatever the language calls it (docs/language.md, "Names the caller
** binds"); one it lacks keeps the language's meaning, or is an error that
** names it alone.
*/
#include "pyjitc.h"

static void scope_get(Scope *sc) {
  if (sc->got) return;
  sc->got = 1;
  if (sc->local_dict) {
    sc->locals = Py_NewRef(sc->local_dict);
  } else {
#if PY_VERSION_HEX >= 0x030D0000
    sc->locals = PyEval_GetFrameLocals(); /* new reference */
#else
    sc->locals = PyEval_GetLocals();
    Py_XINCREF(sc->locals);
#endif
    if (!sc->locals) PyErr_Clear();
  }
  sc->globals = sc->global_dict ? sc->global_dict : PyEval_GetGlobals();
}

void scope_clear(Scope *sc) {
  Py_CLEAR(sc->locals);
  sc->globals = NULL;
  sc->got = 0;
}

/* The caller's variable `name` (a new reference), or NULL: not a variable
** (no exception set) or an error. */
/* `name` in a dict or another mapping (a new reference), or NULL: not
** there (no exception set) or an error. */
static PyObject *mapping_get(PyObject *m, PyObject *name) {
  if (!m) return NULL;
  if (PyDict_Check(m)) return Py_XNewRef(PyDict_GetItemWithError(m, name));
  PyObject *v = PyObject_GetItem(m, name);
  if (!v && PyErr_ExceptionMatches(PyExc_KeyError)) PyErr_Clear();
  return v;
}

PyObject *scope_lookup(Scope *sc, PyObject *name) {
  scope_get(sc);
  PyObject *v = mapping_get(sc->locals, name);
  if (v || PyErr_Occurred()) return v;
  return mapping_get(sc->globals, name);
}

PyObject *kw_lookup(PyObject *const *kwv, PyObject *kwnames, PyObject *name) {
  if (!kwnames) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t j = 0; j < n; j++)
    if (PyTuple_GET_ITEM(kwnames, j) == name) return kwv[j];
  for (Py_ssize_t j = 0; j < n; j++)
    if (name_eq(PyTuple_GET_ITEM(kwnames, j), name)) return kwv[j];
  return NULL;
}

void prog_release(Prog *p) {
  if (!p) return;
  for (int j = 0; j < p->nnames; j++) Py_XDECREF(p->names[j]);
  for (int j = 0; j < p->nlang; j++) Py_XDECREF(p->lang[j]);
  for (int j = 0; j < p->nentries; j++) Py_XDECREF(p->entries[j].K);
  PyMem_Free(p->entries);
  PyMem_Free(p);
}

/* What a checker message says of a name the caller may have. */
enum { N_NONE, N_UNKNOWN, N_LATE, N_LANGUAGE };

/* The name a checker message is about, and what it says (N_UNKNOWN:
** "unknown name 'x'"; N_LATE: "'x' is read before it is assigned";
** N_LANGUAGE: the language's `i`, constant or function where the program
** needs an array or a value), or NULL. */
static PyObject *message_name(const char *msg, int *says) {
  static const struct { const char *tail; int says; } forms[] = {
    {"' is read before it is assigned", N_LATE},
    {"' is a function; call it as ", N_LANGUAGE},
    {"' is the element index, not an array", N_LANGUAGE},
    {"' is a constant, not an array", N_LANGUAGE},
  };
  const char *p = NULL, *q = NULL;
  *says = N_NONE;
  if (!strncmp(msg, "unknown name '", 14)) {
    p = msg + 14;
    *says = N_UNKNOWN;
  } else if (msg[0] == '\'') {
    p = msg + 1;
    for (size_t k = 0; k < sizeof forms / sizeof forms[0] && !*says; k++)
      if ((q = strchr(p, '\'')) && !strncmp(q, forms[k].tail, strlen(forms[k].tail)))
        *says = forms[k].says;
  }
  if (!*says) return NULL;
  q = strchr(p, '\'');
  return q ? PyUnicode_FromStringAndSize(p, q - p) : NULL;
}

/* What one check found, copied while the lock is held (the GIL is not). */
typedef struct Checked {
  jitc_status status;
  Failure f;
  int n;                    /* OK: the arrays, then the scalars */
  char *names[MAXNAMES];
  jitc_role roles[MAXNAMES];
  int nlang;                /* OK: the names read as the language's */
  char *lang[MAXNAMES];
  int nmsg;                 /* a program error: each diagnostic's message */
  char *msgs[MAXNAMES];
} Checked;

static void checked_free(Checked *c) {
  for (int j = 0; j < c->n; j++) free(c->names[j]);
  for (int j = 0; j < c->nlang; j++) free(c->lang[j]);
  for (int j = 0; j < c->nmsg; j++) free(c->msgs[j]);
  free(c->f.msg);
  memset(c, 0, sizeof *c);
}

/* Checks the program on interp with the names bound so far declared. */
static int check_program(const char *src, int nn, PyObject *const *names, const Bound *b,
                         Checked *c) {
  ModuleState *st = mod_state();
  jitc_array_decl ad[MAXNAMES];
  jitc_scalar_decl sd[MAXNAMES];
  int na, ns;
  if (decls_of(nn, names, b, ad, &na, sd, &ns)) return -1;
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_INTERP;
  memset(c, 0, sizeof *c);
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  jitc_kernel *k = NULL;
  c->status = jitc_compile(st->ctx, src, ad, na, sd, ns, &o, &k);
  if (c->status) failure_take(&c->f, c->status);
  if (c->status == JITC_OK) {
    for (int j = 0; j < jitc_kernel_array_count(k) && c->n < MAXNAMES; j++) {
      const char *nm;
      jitc_dtype dt;
      jitc_kernel_array(k, j, &nm, &c->roles[c->n], &dt);
      c->names[c->n++] = strdup(nm);
    }
    for (int j = 0; j < jitc_kernel_scalar_count(k) && c->n < MAXNAMES; j++) {
      const char *nm;
      jitc_dtype dt;
      jitc_kernel_scalar(k, j, &nm, &dt);
      c->roles[c->n] = JITC_INPUT;
      c->names[c->n++] = strdup(nm);
    }
    for (int j = 0; j < jitc_kernel_language_name_count(k) && j < MAXNAMES; j++)
      c->lang[c->nlang++] = strdup(jitc_kernel_language_name(k, j));
    jitc_kernel_free(k);
  } else if (c->status == JITC_E_PROGRAM) {
    for (int e = 0; e < jitc_error_count(st->ctx) && c->nmsg < MAXNAMES; e++) {
      jitc_error er;
      if (jitc_error_get(st->ctx, e, &er) == JITC_OK) c->msgs[c->nmsg++] = strdup(er.message);
    }
    failure_classify(&c->f, src);
  }
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (c->status == JITC_E_PROGRAM) failure_confirm(&c->f, src);
  return 0;
}

/* The Prog of a check that found every name. */
static Prog *prog_of(const Checked *c) {
  Prog *p = PyMem_Calloc(1, sizeof *p);
  if (!p) return (Prog *)PyErr_NoMemory();
  for (int j = 0; j < c->n; j++) {
    p->roles[j] = c->roles[j];
    p->names[p->nnames++] = PyUnicode_InternFromString(c->names[j] ? c->names[j] : "?");
  }
  for (int j = 0; j < c->nlang; j++)
    p->lang[p->nlang++] = PyUnicode_InternFromString(c->lang[j] ? c->lang[j] : "?");
  for (int j = 0; j < p->nnames; j++) if (!p->names[j]) PyErr_NoMemory();
  for (int j = 0; j < p->nlang; j++) if (!p->lang[j]) PyErr_NoMemory();
  if (PyErr_Occurred()) {
    prog_release(p);
    return NULL;
  }
  return p;
}

/* Raises the check's error; names that are nowhere (a tuple, or NULL) get
** __init__.py's note: where jitc looked, and what to do. */
static void raise_missing(Checked *c, PyObject *missing, Scope *sc) {
  ModuleState *st = mod_state();
  if (missing && PyTuple_GET_SIZE(missing) && st->missing_note && c->f.msg) {
    PyObject *r = PyObject_CallFunction(st->missing_note, "sOOOs(OO)", c->f.msg, missing,
                                        sc->locals ? sc->locals : Py_None,
                                        sc->globals ? sc->globals : Py_None, "jitc.evaluate",
                                        sc->local_dict ? Py_True : Py_False,
                                        sc->global_dict ? Py_True : Py_False);
    const char *m = r && PyUnicode_Check(r) ? PyUnicode_AsUTF8(r) : NULL;
    char *msg = m ? strdup(m) : NULL;
    if (msg) {
      free(c->f.msg);
      c->f.msg = msg;
    }
    Py_XDECREF(r);
    PyErr_Clear(); /* without the note, the check's message still says it */
  }
  failure_raise(&c->f);
}

/* Adds `name` -> v to the names bound; -1 on an error (raised). */
static int bind_name(PyObject **names, PyObject **held, Bound *b, int *nn, PyObject *name,
                     PyObject *v) {
  if (*nn == MAXNAMES) {
    raise_status(JITC_E_USAGE, "too many names");
    return -1;
  }
  if (bind_value(&b[*nn], PyUnicode_AsUTF8(name), v)) {
    bound_clear(&b[*nn]); /* what it holds of a value it refused */
    return -1;
  }
  names[*nn] = Py_NewRef(name);
  held[*nn] = Py_NewRef(v);
  (*nn)++;
  return 0;
}

static int bound_already(PyObject *const *names, int nn, PyObject *name) {
  for (int j = 0; j < nn; j++)
    if (name_eq(names[j], name)) return 1;
  return 0;
}

/* Finds what the program's names are for this caller (see the top). */
Prog *prog_resolve(PyObject *program, PyObject *const *kwv, PyObject *kwnames, Scope *sc) {
  ModuleState *st = mod_state();
  PyObject *names[MAXNAMES], *held[MAXNAMES];
  Bound b[MAXNAMES];
  int nn = 0;
  Prog *p = NULL;
  Checked c = {0};
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwnames, j);
    if (nm == st->s_target || name_eq(nm, st->s_target)) continue;
    if (bind_name(names, held, b, &nn, nm, kwv[j])) goto out;
  }
  const char *src = program_text(program);
  if (!src) goto out;
  /* Each round binds a name more, or is the last. */
  for (int round = 0; round <= MAXNAMES; round++) {
    checked_free(&c);
    if (check_program(src, nn, names, b, &c)) goto out;
    if (c.status != JITC_OK && c.status != JITC_E_PROGRAM) {
      failure_raise(&c.f);
      goto out;
    }
    int added = 0, nmissing = 0;
    PyObject *missing[MAXNAMES];
    /* OK: the names read as the language's; else the names the errors are about. */
    int nlook = c.status == JITC_OK ? c.nlang : c.nmsg;
    for (int j = 0; j < nlook; j++) {
      int says = N_LANGUAGE;
      PyObject *nm = c.status == JITC_OK ? PyUnicode_FromString(c.lang[j])
                                         : message_name(c.msgs[j], &says);
      if (!nm) {
        if (PyErr_Occurred()) goto out;
        continue;
      }
      PyUnicode_InternInPlace(&nm);
      PyObject *v = bound_already(names, nn, nm) ? NULL : scope_lookup(sc, nm);
      /* A function where the program needs a value is the program's
      ** mistake, whatever the caller calls that name: the check says so. */
      if (v && says == N_LANGUAGE && c.status != JITC_OK && PyCallable_Check(v)) Py_CLEAR(v);
      int bad = PyErr_Occurred() || (v && bind_name(names, held, b, &nn, nm, v));
      if (v) added++;
      else if (!bad && says == N_UNKNOWN && nmissing < MAXNAMES)
        missing[nmissing++] = Py_NewRef(nm);
      Py_XDECREF(v);
      Py_DECREF(nm);
      if (bad) {
        while (nmissing) Py_DECREF(missing[--nmissing]);
        goto out;
      }
    }
    if (added) { /* again, so that an error names only what is still missing */
      while (nmissing) Py_DECREF(missing[--nmissing]);
      continue;
    }
    if (c.status == JITC_OK) {
      p = prog_of(&c);
    } else {
      PyObject *t = PyTuple_New(nmissing);
      for (int j = 0; j < nmissing; j++)
        if (t) PyTuple_SET_ITEM(t, j, missing[j]);
        else Py_DECREF(missing[j]);
      raise_missing(&c, t, sc);
      Py_XDECREF(t);
    }
    goto out;
  }
  raise_status(JITC_E_INTERNAL, "jitc.evaluate: the names of the program did not settle");
out:
  checked_free(&c);
  for (int j = 0; j < nn; j++) {
    bound_clear(&b[j]);
    Py_DECREF(names[j]);
    Py_DECREF(held[j]);
  }
  if (p && PyErr_Occurred()) {
    prog_release(p);
    p = NULL;
  }
  return p;
}
