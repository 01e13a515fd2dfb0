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

/* The kernel of Prog p for a signature (key: target, then the code of each
** name; threads: the cpu target's thread count), from p's entries or
** compiled now and kept. */
static Entry *entry_for(Prog *p, PyObject *program, const uint8_t *key, int threads,
                        const Bound *b, int device) {
  ModuleState *st = mod_state();
  for (int j = 0; j < p->nentries; j++)
    if (p->entries[j].threads == threads && !memcmp(p->entries[j].key, key, 1 + p->nnames)) {
      st->hits++;
      return &p->entries[j];
    }
  KernelObject *K = compile_bound(program, (jitc_target)key[0], device, p->nnames, p->names, b,
                                  NULL, threads);
  if (!K) return NULL;
  if (p->nentries == p->cap) {
    int cap2 = p->cap ? 2 * p->cap : 4;
    Entry *ne = PyMem_Realloc(p->entries, sizeof *ne * cap2);
    if (!ne) {
      Py_DECREF(K);
      return (Entry *)PyErr_NoMemory();
    }
    p->entries = ne;
    p->cap = cap2;
  }
  Entry *e = &p->entries[p->nentries++];
  memcpy(e->key, key, 1 + p->nnames);
  e->threads = threads;
  e->K = K;
  for (int i = 0; i < p->nnames; i++) e->slot[i] = kernel_slot(K, p->names[i]);
  return e;
}

/* Runs entry e's kernel on the bound values b (by p's names). */
static PyObject *entry_run(const Prog *p, const Entry *e, Bound *b, NPY_ORDER order) {
  KernelObject *K = e->K;
  PyObject *result = NULL;
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
    result = kernel_run(K, ka, ks, order);
    /* Outputs allocated by the run are owned by ka; the rest by b. */
    for (int j = 0; j < K->narrays; j++)
      if (ka[j].own) bound_clear(&ka[j]);
  }
  Py_DECREF(K);
  return result;
}

/* numexpr's optimization= and truediv=, which tune its own compiler and
** mean nothing here, checked as numexpr's getContext checks them (by ==,
** so truediv=0 is False), with its message: a ValueError. */
static int numexpr_context(const Options *o) {
  static const char *const names[] = {"optimization", "truediv"};
  static const char *const allowed[] = {"('none', 'moderate', 'aggressive')",
                                        "(False, True, 'auto')"};
  PyObject *given[] = {o->optimization, o->truediv};
  for (int k = 0; k < 2; k++) {
    if (!given[k]) continue;
    PyObject *ok = k == 0 ? Py_BuildValue("(sss)", "none", "moderate", "aggressive")
                          : Py_BuildValue("(OOs)", Py_False, Py_True, "auto");
    int in = ok ? PySequence_Contains(ok, given[k]) : -1;
    Py_XDECREF(ok);
    if (in < 0) return -1;
    if (!in) {
      raise_usage("'%s' must be one of %s", names[k], allowed[k]);
      return -1;
    }
  }
  return 0;
}

/* Splits evaluate's arguments: the options (positional as numexpr's
** evaluate takes them: local_dict, global_dict, out, order, casting; or,
** as before them, the target alone) and the keywords that are names, into
** kwv2/kwnames2 (a new tuple, or kwnames itself when it has no option). */
int split_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Options *o,
               PyObject **kwv2, PyObject **kwnames2) {
  ModuleState *st = mod_state();
  memset(o, 0, sizeof *o);
  PyObject **pos[] = {&o->local_dict, &o->global_dict, &o->out, &o->order, &o->casting};
  if (nargs < 1 || nargs > 6 || !PyUnicode_Check(args[0])) {
    raise_status(JITC_E_USAGE, "evaluate(ex, local_dict=None, global_dict=None, out=None, "
                 "order='K', casting='same_kind', target=None, threads=None, **names): give the "
                 "program as a string, and at most five more arguments by position");
    return -1;
  }
  if (nargs == 2 && PyUnicode_Check(args[1])) o->target = args[1]; /* evaluate(ex, 'cpu') */
  else
    for (Py_ssize_t j = 1; j < nargs; j++) *pos[j - 1] = args[j];
  PyObject *const *kwv = args + nargs;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, nnames = 0;
  PyObject *keys[] = {st->s_target, st->s_threads, st->s_local_dict, st->s_global_dict,
                      st->s_out, st->s_order, st->s_casting, st->s_sanitize,
                      st->s_optimization, st->s_truediv, st->s_disable_cache};
  PyObject **slots[] = {&o->target, &o->threads, &o->local_dict, &o->global_dict, &o->out,
                        &o->order, &o->casting, &o->sanitize, &o->optimization,
                        &o->truediv, &o->disable_cache};
  enum { NOPT = sizeof keys / sizeof keys[0] };
  int isopt[MAXNAMES + NOPT];
  if (nkw > MAXNAMES + NOPT) {
    raise_status(JITC_E_USAGE, "too many names");
    return -1;
  }
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwnames, j);
    isopt[j] = -1;
    for (int k = 0; k < NOPT && isopt[j] < 0; k++)
      if (nm == keys[k]) isopt[j] = k;
    /* An interned name (a keyword written in the call) equals an option
    ** only by being it; another string is compared. */
    for (int k = 0; k < NOPT && isopt[j] < 0 && !PyUnicode_CHECK_INTERNED(nm); k++)
      if (name_eq(nm, keys[k])) isopt[j] = k;
    if (isopt[j] < 0) {
      if (nnames == MAXNAMES) {
        raise_status(JITC_E_USAGE, "too many names");
        return -1;
      }
      kwv2[nnames++] = kwv[j];
      continue;
    }
    if (*slots[isopt[j]]) { /* given by position too */
      raise_usage("evaluate() got multiple values for argument '%U'", nm);
      return -1;
    }
    *slots[isopt[j]] = kwv[j];
  }
  if (numexpr_context(o)) return -1;
  if (nnames == nkw) {
    *kwnames2 = Py_XNewRef(kwnames);
    return 0;
  }
  *kwnames2 = nnames ? PyTuple_New(nnames) : NULL;
  if (nnames && !*kwnames2) return -1;
  for (Py_ssize_t j = 0, k = 0; j < nkw; j++)
    if (isopt[j] < 0) PyTuple_SET_ITEM(*kwnames2, k++, Py_NewRef(PyTuple_GET_ITEM(kwnames, j)));
  return 0;
}

/* order= as NumPy and numexpr take it: 'C', 'F', 'A' or 'K' (None: 'K'). */
static int parse_order(PyObject *o, NPY_ORDER *out) {
  *out = NPY_KEEPORDER;
  if (!o || o == Py_None) return 0;
  const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
  static const char names[] = "CFAK";
  static const NPY_ORDER orders[] = {NPY_CORDER, NPY_FORTRANORDER, NPY_ANYORDER, NPY_KEEPORDER};
  const char *at = s && s[0] && !s[1] ? strchr(names, s[0] & ~0x20) : NULL;
  if (!at) {
    PyErr_Clear();
    raise_usage("order must be one of 'C', 'F', 'A', or 'K' (got %R)", o);
    return -1;
  }
  *out = orders[at - names];
  return 0;
}

/* threads=: the cpu target's thread count, >= 1 (None: set_num_threads's). */
static int parse_threads(PyObject *o, int *out) {
  *out = mod_state()->threads;
  if (!o || o == Py_None) return 0;
  long v = PyLong_Check(o) && !PyBool_Check(o) ? PyLong_AsLong(o) : 0;
  if (v < 1 || v > 1 << 16) {
    PyErr_Clear();
    raise_usage("threads: give a number of threads from 1 to 65536, or None (got %R)", o);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* The one array the program assigns, which out= takes: its index among
** p's names; -1 with an error when there is not exactly one, or it is an
** array updated in place, or it is given by name too. */
static int out_slot(const Prog *p, PyObject *const *vals) {
  int at = -1, n = 0;
  for (int j = 0; j < p->nnames; j++)
    if (p->roles[j] != JITC_INPUT) {
      n++;
      at = j;
    }
  if (n != 1) {
    PyObject *names = PyList_New(0);
    for (int j = 0; names && j < p->nnames; j++)
      if (p->roles[j] != JITC_INPUT && PyList_Append(names, p->names[j])) Py_CLEAR(names);
    raise_usage("out= takes the one array a program assigns; this one assigns %R: give each "
                "by name instead", names ? names : Py_None);
    Py_XDECREF(names);
    return -1;
  }
  if (p->roles[at] == JITC_INOUT) {
    raise_usage("out=: the program updates '%U' in place; it has no new array to write "
                "into out", p->names[at]);
    return -1;
  }
  if (vals[at]) {
    raise_usage("'%U' is given by name and as out=: give it once", p->names[at]);
    return -1;
  }
  return at;
}

/* Whether a result of type t may be written into out (of type ot) under
** NumPy's casting rule; raises NumPy's error (a TypeError) when not. */
static int check_cast(PyObject *name, jitc_dtype t, jitc_dtype ot, NPY_CASTING casting) {
  PyArray_Descr *from = mod_descr(t), *to = from ? mod_descr(ot) : NULL;
  int ok = to && PyArray_CanCastTypeTo(from, to, casting);
  if (to && !ok) {
    static const char *rules[] = {"no", "equiv", "safe", "same_kind", "unsafe"};
    raise_input("Cannot cast the result '%U' from %R to %R with casting rule '%s' (out= of "
                "another dtype: pass casting='unsafe' or 'same_kind' to allow it)", name, from,
                to, (unsigned)casting < 5 ? rules[casting] : "?");
  }
  Py_XDECREF(from);
  Py_XDECREF(to);
  return ok ? 0 : -1;
}

/* evaluate's work after split_args: the program's kernel for these values,
** compiled or from the cache, then (run) its run; run == 0 (validate) stops
** before the run and gives None.  Either records the call for re_evaluate
** once the kernel is there. */
PyObject *run_call(PyObject *program, Options o, PyObject *const *kwv, PyObject *kwn, int run) {
  PyObject *result = NULL, *vals[MAXNAMES], *cap = NULL;
  Scope sc = {0};
  Bound b[MAXNAMES];
  int nb = 0, nvals = 0, threads, at = -1;
  NPY_ORDER order;
  NPY_CASTING casting = NPY_SAME_KIND_CASTING; /* NumPy's ufuncs' and numexpr's default */
  if (o.out == Py_None) o.out = NULL;
  if (parse_order(o.order, &order) || parse_threads(o.threads, &threads) ||
      (o.casting && !PyArray_CastingConverter(o.casting, &casting)))
    goto out;
  sc.local_dict = o.local_dict == Py_None ? NULL : o.local_dict;
  sc.global_dict = o.global_dict == Py_None ? NULL : o.global_dict;
  cap = prog_for(program, kwv, kwn, &sc, vals);
  if (!cap) goto out;
  Prog *p = PyCapsule_GetPointer(cap, "jitc.Prog");
  nvals = p->nnames;
  /* Every name given must be the program's. */
  Py_ssize_t nkw = kwn ? PyTuple_GET_SIZE(kwn) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *nm = PyTuple_GET_ITEM(kwn, j);
    int known = 0;
    for (int i = 0; !known && i < p->nnames; i++) known = name_eq(nm, p->names[i]);
    if (!known) {
      raise_usage("'%U' is not a name the program uses", nm);
      goto out;
    }
  }
  if (o.out && (at = out_slot(p, vals)) < 0) goto out;
  /* Bind each name: given, else (read names only) the caller's. */
  uint8_t key[MAXNAMES + 1];
  int device = 0, host = 0;
  for (int i = 0; i < p->nnames; i++) {
    memset(&b[i], 0, sizeof b[i]);
    nb = i + 1;
    const char *nm = PyUnicode_AsUTF8(p->names[i]);
    if (vals[i] && bind_value(&b[i], nm, vals[i])) goto out;
    /* A 0-d array the program writes is an array of shape (). */
    if (vals[i] && p->roles[i] != JITC_INPUT && bind_zero_d(&b[i], nm, 0)) goto out;
    key[1 + i] = b[i].code;
    device |= KIND(b[i].code) == K_DEV;
    host |= KIND(b[i].code) == K_HOST;
  }
  Bound ob = {0};
  if (o.out) {
    if (bind_value(&ob, "out", o.out) || bind_zero_d(&ob, "out", 0)) goto out_ob;
    if (KIND(ob.code) != K_HOST && KIND(ob.code) != K_DEV) {
      raise_input("out= is an array to write the result into; got %s", Py_TYPE(o.out)->tp_name);
      goto out_ob;
    }
    device |= KIND(ob.code) == K_DEV;
    host |= KIND(ob.code) == K_HOST;
  }
  if (device && host) {
    raise_input("host and device arrays in one call: jitc does not mix them (copy one side, "
                "e.g. with cupy.asarray or .get())");
    goto out_ob;
  }
  jitc_target t;
  if (parse_target(o.target, device, &t)) goto out_ob;
  key[0] = (uint8_t)t;
  Entry *e = entry_for(p, program, key, threads, b, device);
  if (!e) goto out_ob;
  if (o.out && p->roles[at] == JITC_RESULT) {
    /* A reduction's value, written into out as NumPy's out= of np.sum
    ** writes it: out has the result's shape (() for a whole reduction). */
    int slot = e->slot[at];
    if (check_cast(p->names[at], e->K->adtypes[slot], DT(ob.code), casting)) goto out_ob;
    last_record(program, &o);
    if (!run) {
      result = Py_NewRef(Py_None);
      goto out_ob;
    }
    PyObject *v = entry_run(p, e, b, order);
    PyObject *vs = v ? PyObject_GetAttrString(v, "shape") : NULL;
    PyObject *os = vs ? PyObject_GetAttrString(o.out, "shape") : NULL;
    int same = os ? PyObject_RichCompareBool(vs, os, Py_EQ) : -1;
    if (same == 0)
      raise_input("out= has shape %R where the reduction's result has shape %R", os, vs);
    else if (same == 1 && PyObject_SetItem(o.out, Py_Ellipsis, v) == 0)
      result = Py_NewRef(o.out);
    Py_XDECREF(os);
    Py_XDECREF(vs);
    Py_XDECREF(v);
    goto out_ob;
  }
  if (o.out) {
    /* The result's type is the kernel's without out; another dtype of out
    ** is a kernel that stores into it, where the casting rule allows. */
    jitc_dtype rt = e->K->adtypes[e->slot[at]];
    if (DT(ob.code) != rt) {
      if (check_cast(p->names[at], rt, DT(ob.code), casting)) goto out_ob;
      key[1 + at] = ob.code;
      b[at] = ob;
      e = entry_for(p, program, key, threads, b, device);
      b[at] = (Bound){0};
      if (!e) goto out_ob;
    }
    b[at] = ob;
    ob = (Bound){0}; /* b[at] holds it now */
  }
  last_record(program, &o);
  result = run ? entry_run(p, e, b, order) : Py_NewRef(Py_None);
out_ob:
  bound_clear(&ob);
out:
  for (int i = 0; i < nb; i++) bound_clear(&b[i]);
  for (int i = 0; i < nvals; i++) Py_XDECREF(vals[i]);
  scope_clear(&sc);
  Py_XDECREF(cap);
  return result;
}

/* Byte strings (NumPy's 'S' arrays, bytes, b'...' in the text) are no
** jitc type, and a call of them fails with an InputError or a syntax
** error; jitc/_strings.py's evaluate then rewrites their comparisons into
** comparisons of their bytes and calls evaluate again.  Where nothing of
** the call is a string it returns NotImplemented: the first error stands. */
static PyObject *with_strings(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  ModuleState *st = mod_state();
  if (!PyErr_ExceptionMatches(st->exc[JITC_E_INPUT]) &&
      !PyErr_ExceptionMatches(st->program_exc[P_SYNTAX]))
    return NULL;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *mod = PyImport_ImportModule("jitc._strings");
  PyObject *fn = mod ? PyObject_GetAttrString(mod, "evaluate") : NULL;
  PyObject *r = fn ? PyObject_Vectorcall(fn, args, (size_t)nargs, kwnames) : NULL;
  Py_XDECREF(fn);
  Py_XDECREF(mod);
  if (r != Py_NotImplemented) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return r;
  }
  Py_DECREF(r);
  PyErr_Restore(type, value, tb);
  return NULL;
}

/* evaluate(ex, local_dict=None, global_dict=None, out=None, order='K',
**          casting='same_kind', *, target=None, threads=None, sanitize=None,
**          **names); sanitize is numexpr's, and means nothing here: the
** text is jitc's language, parsed by jitc, never Python's eval. */
PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames) {
  Options o;
  PyObject *kwv[MAXNAMES], *kwn = NULL;
  if (split_args(args, nargs, kwnames, &o, kwv, &kwn)) return NULL;
  PyObject *result = run_call(args[0], o, kwv, kwn, 1);
  Py_XDECREF(kwn);
  return result ? result : with_strings(args, nargs, kwnames);
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

