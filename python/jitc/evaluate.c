/*
** evaluate.c -- jitc.evaluate and its cache: program text -> the names the
** program reads and assigns (found once, by a check of the program on
** interp with the caller's variables looked up for each unknown name) ->
** one kernel per signature.
*/
#include "pyjitc.h"

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
  if (!src) goto out;
  for (int round = 0; round < MAXNAMES; round++) {
    jitc_array_decl ad[MAXNAMES];
    jitc_scalar_decl sd[MAXNAMES];
    int na, ns;
    if (decls_of(nn, names, b, ad, &na, sd, &ns)) goto out;
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
      /* A name read in several places is unknown at each. */
      int seen = 0;
      for (int i = 0; i < nn && !seen; i++) seen = name_eq(names[i], found[j]);
      if (seen) {
        Py_DECREF(found[j]);
        continue;
      }
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
PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
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
      raise_usage("'%U' is not a name the program uses", nm);
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
    if (!v && p->roles[i] != JITC_OUTPUT && p->roles[i] != JITC_RESULT) {
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
    KernelObject *K = compile_bound(program, t, device, p->nnames, p->names, b, NULL);
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

PyObject *py_cache_info(PyObject *self, PyObject *noargs) {
  Py_ssize_t kernels = 0, pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(g_progs, &pos, &k, &v)) {
    Prog *p = PyCapsule_GetPointer(v, "jitc.Prog");
    if (p) kernels += p->nentries;
  }
  return Py_BuildValue("{snsnsLsL}", "programs", PyDict_Size(g_progs), "kernels", kernels,
                       "compiles", g_compiles, "hits", g_hits);
}

PyObject *py_clear_cache(PyObject *self, PyObject *noargs) {
  PyDict_Clear(g_progs);
  g_compiles = g_hits = 0;
  Py_RETURN_NONE;
}

