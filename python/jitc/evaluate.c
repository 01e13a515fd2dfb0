/*
** evaluate.c -- jitc.evaluate and its cache: program text -> the names the
** program reads and assigns, for the names its caller has (a Prog, found
** by names.c; a text has one per set of names its callers had: the
** caller's `i` makes another than the element index) -> one kernel per
** signature.
*/
#include "pyjitc.h"

static void prog_free(PyObject *cap) { prog_release(PyCapsule_GetPointer(cap, "jitc.Prog")); }

/* The Progs kept for one text: one per set of names its callers had. */
#define MAXPROGS 8

/* Whether Prog p is the program's meaning for this call: the caller has
** none of the names p read as the language's, and has every name p reads.
** vals[j]: the value of p->names[j] (new references; NULL for an output
** not given).  1: yes; 0: no (vals cleared); -1: an error. */
static int prog_match(const Prog *p, PyObject *const *kwv, PyObject *kwnames, Scope *sc,
                      PyObject **vals) {
  for (int j = 0; j < p->nlang; j++) {
    if (kw_lookup(kwv, kwnames, p->lang[j])) return 0;
    PyObject *v = scope_lookup(sc, p->lang[j]);
    if (v || PyErr_Occurred()) {
      Py_XDECREF(v);
      return v ? 0 : -1;
    }
  }
  int j = 0;
  for (; j < p->nnames; j++) {
    PyObject *v = kw_lookup(kwv, kwnames, p->names[j]);
    if (v) Py_INCREF(v);
    else if (p->roles[j] != JITC_OUTPUT && p->roles[j] != JITC_RESULT) {
      v = scope_lookup(sc, p->names[j]);
      if (!v) break;
    }
    vals[j] = v;
  }
  if (j == p->nnames) return 1;
  while (j) Py_XDECREF(vals[--j]);
  return PyErr_Occurred() ? -1 : 0;
}

/* The Prog of `program` for this call (its capsule: a new reference), from
** the cache or resolved now and kept; vals as for prog_match. */
static PyObject *prog_for(PyObject *program, PyObject *const *kwv, PyObject *kwnames,
                          Scope *sc, PyObject **vals) {
  ModuleState *st = mod_state();
  PyObject *list = PyDict_GetItemWithError(st->progs, program);
  if (!list && PyErr_Occurred()) return NULL;
  Py_XINCREF(list); /* a clear_cache() (a lookup may run Python code) must not free it */
  for (Py_ssize_t j = 0; list && j < PyList_GET_SIZE(list); j++) {
    PyObject *cap = Py_NewRef(PyList_GET_ITEM(list, j));
    int m = prog_match(PyCapsule_GetPointer(cap, "jitc.Prog"), kwv, kwnames, sc, vals);
    if (m) {
      Py_DECREF(list);
      if (m < 0) Py_CLEAR(cap);
      return cap;
    }
    Py_DECREF(cap);
  }
  Py_XDECREF(list);
  Prog *p = prog_resolve(program, kwv, kwnames, sc);
  if (!p) return NULL;
  PyObject *cap = PyCapsule_New(p, "jitc.Prog", prog_free);
  if (!cap) {
    prog_release(p);
    return NULL;
  }
  int m = prog_match(p, kwv, kwnames, sc, vals);
  if (m == 0)
    raise_status(JITC_E_INTERNAL, "jitc.evaluate: the caller's variables changed while "
                 "the program's names were found");
  list = m > 0 ? PyDict_GetItemWithError(st->progs, program) : NULL;
  if (m > 0 && !list && !PyErr_Occurred()) {
    PyObject *l = PyList_New(0);
    if (l && !PyDict_SetItem(st->progs, program, l)) list = l;
    Py_XDECREF(l);
  }
  if (list && PyList_GET_SIZE(list) >= MAXPROGS) PySequence_DelItem(list, 0);
  if (PyErr_Occurred() || !list || PyList_Append(list, cap)) {
    if (m > 0)
      for (int j = 0; j < p->nnames; j++) Py_XDECREF(vals[j]);
    Py_DECREF(cap);
    return NULL;
  }
  return cap;
}

/* evaluate(program, target=None, **names) */
PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  ModuleState *st = mod_state();
  if (nargs < 1 || nargs > 2 || !PyUnicode_Check(args[0]))
    return raise_status(JITC_E_USAGE, "evaluate(program, target=None, **names): give the "
                        "program as a string");
  PyObject *program = args[0];
  PyObject *const *kwv = args + nargs;
  PyObject *target = nargs > 1 ? args[1] : kw_lookup(kwv, kwnames, st->s_target);
  PyObject *result = NULL, *vals[MAXNAMES];
  Scope sc = {0};
  Bound b[MAXNAMES];
  int nb = 0, nvals = 0;
  PyObject *cap = prog_for(program, kwv, kwnames, &sc, vals);
  if (!cap) goto out;
  Prog *p = PyCapsule_GetPointer(cap, "jitc.Prog");
  nvals = p->nnames;
  /* Every name given must be the program's. */
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwnames, j);
    int known = nm == st->s_target || name_eq(nm, st->s_target);
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
    if (vals[i] && bind_value(&b[i], PyUnicode_AsUTF8(p->names[i]), vals[i])) goto out;
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
      st->hits++;
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
    /* No memset of 0 bytes: glibc's AVX-512 memset stores 64 masked bytes
    ** for it, which costs a microcode assist where they cross a page. */
    if (K->narrays) memset(ka, 0, sizeof(Bound) * K->narrays);
    if (K->nscalars) memset(ks, 0, sizeof(Bound) * K->nscalars);
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
  for (int i = 0; i < nvals; i++) Py_XDECREF(vals[i]);
  scope_clear(&sc);
  Py_XDECREF(cap);
  return result;
}

PyObject *py_cache_info(PyObject *self, PyObject *noargs) {
  ModuleState *st = mod_state();
  Py_ssize_t kernels = 0, pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(st->progs, &pos, &k, &v))
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(v); j++) {
      Prog *p = PyCapsule_GetPointer(PyList_GET_ITEM(v, j), "jitc.Prog");
      if (p) kernels += p->nentries;
    }
  return Py_BuildValue("{snsnsLsL}", "programs", PyDict_Size(st->progs), "kernels", kernels,
                       "compiles", st->compiles, "hits", st->hits);
}

PyObject *py_clear_cache(PyObject *self, PyObject *noargs) {
  ModuleState *st = mod_state();
  PyDict_Clear(st->progs);
  st->compiles = st->hits = 0;
  Py_RETURN_NONE;
}

