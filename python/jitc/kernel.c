/*
** kernel.c -- the Kernel type: a compiled program, its arrays and scalars,
** and a call: checking the bound values against it, allocating outputs,
** running with the GIL released and the context's lock held.
*/
#include "pyjitc.h"

/* Frees a kernel under the lock: safe with the GIL held, as a holder of
** the lock never waits for the GIL. */
static void kernel_free_locked(jitc_kernel *k) {
  ModuleState *st = mod_state();
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  jitc_kernel_free(k);
  PyThread_release_lock(st->lock);
}

static void kernel_dealloc(KernelObject *K) {
  if (K->k) kernel_free_locked(K->k);
  for (int j = 0; j < K->narrays; j++) Py_XDECREF(K->anames[j]);
  for (int j = 0; j < K->nscalars; j++) Py_XDECREF(K->snames[j]);
  PyMem_Free(K->anames);
  PyMem_Free(K->snames);
  PyMem_Free(K->aroles);
  PyMem_Free(K->adtypes);
  PyMem_Free(K->areds);
  PyMem_Free(K->sdtypes);
  Py_XDECREF(K->program);
  Py_XDECREF(K->params);
  Py_TYPE(K)->tp_free((PyObject *)K);
}

/* Compiles with the GIL released and the lock held. */
jitc_status compile_locked(const char *src, const jitc_array_decl *ad, int na,
                           const jitc_scalar_decl *sd, int ns, const jitc_options *o,
                           jitc_kernel **out, Failure *f) {
  ModuleState *st = mod_state();
  jitc_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = jitc_compile(st->ctx, src, ad, na, sd, ns, o, out);
  if (s) {
    failure_take(f, s);
    failure_classify(f, src);
  }
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s) failure_confirm(f, src);
  return s;
}

/* Wraps a compiled kernel; params: the positional names (new ref taken). */
KernelObject *kernel_wrap(jitc_kernel *k, PyObject *program, jitc_target t, int device,
                          PyObject *params) {
  KernelObject *K = PyObject_New(KernelObject, kernel_type());
  if (!K) {
    kernel_free_locked(k);
    Py_XDECREF(params);
    return NULL;
  }
  K->k = k;
  K->vectorcall = kernel_vcall;
  K->program = Py_NewRef(program);
  K->target = t;
  K->device = device;
  K->params = params;
  K->narrays = jitc_kernel_array_count(k);
  K->nscalars = jitc_kernel_scalar_count(k);
  K->anames = PyMem_Calloc(K->narrays + 1, sizeof *K->anames);
  K->aroles = PyMem_Calloc(K->narrays + 1, sizeof *K->aroles);
  K->adtypes = PyMem_Calloc(K->narrays + 1, sizeof *K->adtypes);
  K->areds = PyMem_Calloc(K->narrays + 1, sizeof *K->areds);
  K->snames = PyMem_Calloc(K->nscalars + 1, sizeof *K->snames);
  K->sdtypes = PyMem_Calloc(K->nscalars + 1, sizeof *K->sdtypes);
  if (!K->anames || !K->aroles || !K->adtypes || !K->areds || !K->snames || !K->sdtypes) {
    K->narrays = K->nscalars = 0;
    Py_DECREF(K);
    return (KernelObject *)PyErr_NoMemory();
  }
  for (int j = 0; j < K->narrays; j++) {
    const char *nm;
    jitc_kernel_array(k, j, &nm, &K->aroles[j], &K->adtypes[j]);
    K->areds[j] = jitc_kernel_reduction(k, j);
    K->anames[j] = PyUnicode_InternFromString(nm);
  }
  for (int j = 0; j < K->nscalars; j++) {
    const char *nm;
    jitc_kernel_scalar(k, j, &nm, &K->sdtypes[j]);
    K->snames[j] = PyUnicode_InternFromString(nm);
  }
  if (K->params) {
    /* The signature's order, less the results: a result there states its
    ** dtype, and the call makes it. */
    PyObject *l = PyList_New(0);
    for (Py_ssize_t j = 0; l && j < PyTuple_GET_SIZE(K->params); j++) {
      PyObject *nm = PyTuple_GET_ITEM(K->params, j);
      int slot = kernel_slot(K, nm);
      if ((slot < 0 || K->aroles[slot] != JITC_RESULT) && PyList_Append(l, nm)) Py_CLEAR(l);
    }
    Py_SETREF(K->params, l ? PyList_AsTuple(l) : NULL);
    Py_XDECREF(l);
  } else {
    /* Positional order: the arrays the kernel reads, then its scalars. */
    PyObject *l = PyList_New(0);
    for (int j = 0; l && j < K->narrays; j++)
      if ((K->aroles[j] == JITC_INPUT || K->aroles[j] == JITC_INOUT) && K->anames[j])
        PyList_Append(l, K->anames[j]);
    for (int j = 0; l && j < K->nscalars; j++)
      if (K->snames[j]) PyList_Append(l, K->snames[j]);
    K->params = l ? PyList_AsTuple(l) : NULL;
    Py_XDECREF(l);
  }
  if (PyErr_Occurred()) {
    Py_DECREF(K);
    return NULL;
  }
  return K;
}

/* A reduction's one element: on the host the Bound's own cell, made a NumPy
** scalar after the run; for device arrays a 0-d array of the kind of
** `like` on its device (what cupy.sum gives), written on the call's stream. */
static int result_alloc(const KernelObject *K, int j, Bound *b, int dev, PyObject *like) {
  b->code = (dev ? K_DEV : K_HOST) | K->adtypes[j];
  if (!dev) {
    memset(b->cell, 0, sizeof b->cell);
    b->ptr = (uint64_t)(uintptr_t)b->cell;
    return 0;
  }
  return device_alloc(b, like, 0, NULL, K->adtypes[j], NULL);
}

int name_eq(PyObject *a, PyObject *b) {
  return a == b || PyUnicode_Compare(a, b) == 0;
}

/* Runs K on bound values: arrs[j] for kernel array j (code K_NONE for an
** output or result to allocate), scals[j] for scalar j; host outputs not
** given are laid out as `order` says (NumPy's order= of a ufunc).  Returns
** what the program assigns: one array or reduction's result as itself,
** several as a dict by name. */
PyObject *kernel_run(KernelObject *K, Bound *arrs, Bound *scals, NPY_ORDER order) {
  int na = K->narrays, dev = -1, first = -1;
  for (int j = 0; j < na; j++) {
    Bound *b = &arrs[j];
    /* A 0-d array is a typed scalar where the kernel takes a scalar, and an
    ** array of shape () where it takes an array. */
    if (K->aroles[j] != JITC_RESULT && bind_zero_d(b, PyUnicode_AsUTF8(K->anames[j]), 1))
      return NULL;
    if (KIND(b->code) == K_NONE) continue;
    const char *nm = PyUnicode_AsUTF8(K->anames[j]);
    if (K->aroles[j] == JITC_RESULT)
      return raise_usage("'%s' is the result of %s(): the call returns it, it is not given", nm,
                         K->areds[j]);
    if (KIND(b->code) != K_HOST && KIND(b->code) != K_DEV)
      return raise_input("'%s' is an array in this kernel; got a scalar", nm);
    int isdev = KIND(b->code) == K_DEV;
    if (dev >= 0 && dev != isdev)
      return raise_input("'%s' is a %s array and '%s' a %s one: jitc does not mix host and "
                         "device arrays in one call", nm, isdev ? "device" : "host",
                         PyUnicode_AsUTF8(K->anames[first]), isdev ? "host" : "device");
    if (dev < 0) first = j;
    dev = isdev;
    if (isdev && first != j) {
      PyObject *d1 = PyTuple_GET_SIZE(arrs[first].dev) > 5 ? PyTuple_GET_ITEM(arrs[first].dev, 5)
                                                            : Py_None;
      PyObject *d2 = PyTuple_GET_SIZE(b->dev) > 5 ? PyTuple_GET_ITEM(b->dev, 5) : Py_None;
      if (d1 != Py_None && d2 != Py_None && PyObject_RichCompareBool(d1, d2, Py_NE) == 1)
        return raise_input("'%s' is on device %R and '%s' on device %R: the arrays of a call "
                           "are on one device", PyUnicode_AsUTF8(K->anames[first]), d1, nm, d2);
    }
    if (DT(b->code) != K->adtypes[j])
      return raise_input("'%s' is %s; the kernel takes %s (compile it for %s, or convert with "
                         ".astype())", nm, dt_name(DT(b->code)), dt_name(K->adtypes[j]),
                         dt_name(DT(b->code)));
    if (K->aroles[j] != JITC_INPUT && !b->writable)
      return raise_input(PyList_Check(b->obj) || PyTuple_Check(b->obj)
                             ? "'%s' is written by the program and is a list or tuple: pass an "
                               "array (np.array(...)) to be written in place"
                         : PyArray_Check(b->obj) && PyArray_ISBYTESWAPPED((PyArrayObject *)b->obj)
                             ? "'%s' is written by the program and is not in this machine's "
                               "byte order: write into an array that is (.astype(x.dtype."
                               "newbyteorder('=')))"
                             : "'%s' is written by the program and is read-only", nm);
  }
  if (dev == 1 && !K->device)
    return raise_input("device arrays given to a kernel for the %s target: use target='cuda'",
                       jitc_target_name(K->target));
  if (dev == 0 && K->device)
    return raise_input("host arrays given to a kernel for device arrays");
  if (dev < 0 && K->device)
    return raise_status(JITC_E_USAGE, "no device array gives the shape: pass at least one "
                        "input array, or the output arrays");
  for (int j = 0; j < K->nscalars; j++)
    if (KIND(scals[j].code) != K_WEAK && KIND(scals[j].code) != K_STRONG)
      return raise_input("'%s' is a scalar in this kernel; got an array",
                         PyUnicode_AsUTF8(K->snames[j]));
  for (int j = 0; j < na; j++) {
    if (KIND(arrs[j].code) != K_NONE) continue;
    if (K->aroles[j] == JITC_RESULT) {
      /* Results over axes are made by the run, of the shape it finds. */
      if (dev == 1 && over_axes(K, j)) continue;
      if (result_alloc(K, j, &arrs[j], dev == 1, dev == 1 ? arrs[first].obj : NULL)) return NULL;
    } else if (K->aroles[j] != JITC_OUTPUT) {
      return raise_status(JITC_E_USAGE, "an input array is missing");
    }
  }
  jitc_value vals_stack[16];
  jitc_value *vals = K->nscalars <= 16 ? vals_stack
                                       : PyMem_Malloc(sizeof(jitc_value) * K->nscalars);
  if (!vals) return PyErr_NoMemory();
  for (int j = 0; j < K->nscalars; j++) vals[j] = scals[j].val;
  int rc = dev == 1 ? run_device(K, arrs, vals, first, order) : run_host(K, arrs, vals, order);
  if (vals != vals_stack) PyMem_Free(vals);
  if (rc) return NULL;
  /* A reduction's result: a NumPy scalar, as np.sum gives one, unless it
  ** is over axes and has axes left (run_host made it an array). */
  for (int j = 0; j < na && dev != 1; j++)
    if (K->aroles[j] == JITC_RESULT) {
      PyArrayObject *a = arrs[j].arr;
      if (a && PyArray_NDIM(a) > 0) continue;
      PyArray_Descr *d = mod_descr(K->adtypes[j]);
      PyObject *v = d ? PyArray_Scalar(a ? PyArray_DATA(a) : (void *)arrs[j].cell, d,
                                       (PyObject *)a)
                      : NULL;
      Py_XDECREF(d);
      if (!v) return NULL;
      Py_XSETREF(arrs[j].own, v);
      arrs[j].obj = v;
    }
  /* The result: every array the program assigns. */
  int count = 0, last = -1;
  for (int j = 0; j < na; j++)
    if (K->aroles[j] != JITC_INPUT) {
      count++;
      last = j;
    }
  if (count == 0) Py_RETURN_NONE;
  if (count == 1) return Py_NewRef(arrs[last].obj);
  PyObject *dict = PyDict_New();
  for (int j = 0; dict && j < na; j++)
    if (K->aroles[j] != JITC_INPUT && PyDict_SetItem(dict, K->anames[j], arrs[j].obj))
      Py_CLEAR(dict);
  return dict;
}

/* The index of `name` among K's arrays (>= 0) or scalars (-1 - index), or
** INT32_MIN when the kernel does not use it. */
int kernel_slot(const KernelObject *K, PyObject *name) {
  for (int j = 0; j < K->narrays; j++)
    if (name_eq(K->anames[j], name)) return j;
  for (int j = 0; j < K->nscalars; j++)
    if (name_eq(K->snames[j], name)) return -1 - j;
  return INT32_MIN;
}

int parse_target(PyObject *t, int device, jitc_target *out) {
  if (!t || t == Py_None) {
    *out = device ? JITC_TARGET_CUDA : mod_state()->default_target;
    return 0;
  }
  const char *s = PyUnicode_Check(t) ? PyUnicode_AsUTF8(t) : NULL;
  if (!s || jitc_target_parse(s, out)) {
    PyErr_Clear();
    raise_status(JITC_E_USAGE, "target: give 'interp', 'cpu', 'cuda' or None");
    return -1;
  }
  if (device && *out != JITC_TARGET_CUDA) {
    raise_input("device arrays run on target 'cuda', not '%s'", s);
    return -1;
  }
  return 0;
}

/* The declarations jitc_compile takes for the bound values names[j] ->
** b[j]: arrays and scalars (K_NONE: not declared). */
int decls_of(int n, PyObject *const *names, const Bound *b, jitc_array_decl *ad, int *na,
             jitc_scalar_decl *sd, int *ns) {
  *na = *ns = 0;
  for (int j = 0; j < n; j++) {
    const char *nm = PyUnicode_AsUTF8(names[j]);
    if (!nm) return -1;
    int kind = KIND(b[j].code);
    if (kind == K_HOST || kind == K_DEV)
      ad[(*na)++] = (jitc_array_decl){nm, DT(b[j].code)};
    else if (kind == K_WEAK || kind == K_STRONG)
      sd[(*ns)++] = (jitc_scalar_decl){nm, DT(b[j].code), kind == K_WEAK};
  }
  return 0;
}

/* Compiles `program` for target t with the declarations of the bound
** values names[j] -> b[j] (K_NONE: not declared). */
KernelObject *compile_bound(PyObject *program, jitc_target t, int device, int nnames,
                            PyObject *const *names, const Bound *b, PyObject *params,
                            int threads) {
  jitc_array_decl ad[MAXNAMES];
  jitc_scalar_decl sd[MAXNAMES];
  int na, ns;
  if (decls_of(nnames, names, b, ad, &na, sd, &ns)) return NULL;
  const char *src = program_text(program);
  if (!src) return NULL;
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  o.threads = threads;
  jitc_kernel *k = NULL;
  Failure f = {0};
  if (compile_locked(src, ad, na, sd, ns, &o, &k, &f)) {
    Py_XDECREF(params);
    return (KernelObject *)failure_raise(&f);
  }
  mod_state()->compiles++;
  return kernel_wrap(k, program, t, device, params);
}

/* ---- calling a Kernel ---- */

PyObject *kernel_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                       PyObject *kwnames) {
  KernelObject *K = (KernelObject *)self;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (K->narrays > MAXNAMES || K->nscalars > MAXNAMES)
    return raise_status(JITC_E_USAGE, "too many names");
  if (nargs > PyTuple_GET_SIZE(K->params))
    return raise_status(JITC_E_USAGE, "too many arguments: the kernel's parameters are "
                        "its signature's names");
  Bound ka[MAXNAMES], ks[MAXNAMES];
  if (K->narrays) memset(ka, 0, sizeof(Bound) * K->narrays); /* not 0 bytes: evaluate.c */
  if (K->nscalars) memset(ks, 0, sizeof(Bound) * K->nscalars);
  PyObject *result = NULL;
  for (Py_ssize_t j = 0; j < nargs + nkw; j++) {
    PyObject *nm = j < nargs ? PyTuple_GET_ITEM(K->params, j) : PyTuple_GET_ITEM(kwnames, j - nargs);
    int s = kernel_slot(K, nm);
    if (s == INT32_MIN) {
      raise_usage("'%U' is not a name of the kernel", nm);
      goto out;
    }
    Bound *b = s >= 0 ? &ka[s] : &ks[-1 - s];
    if (b->code != K_NONE) {
      raise_usage("'%U' is given twice", nm);
      goto out;
    }
    if (bind_value(b, PyUnicode_AsUTF8(nm), args[j])) goto out;
  }
  for (int j = 0; j < K->narrays; j++)
    if (ka[j].code == K_NONE && (K->aroles[j] == JITC_INPUT || K->aroles[j] == JITC_INOUT)) {
      raise_usage("missing array '%U'", K->anames[j]);
      goto out;
    }
  for (int j = 0; j < K->nscalars; j++)
    if (ks[j].code == K_NONE) {
      raise_usage("missing scalar '%U'", K->snames[j]);
      goto out;
    }
  result = kernel_run(K, ka, ks, NPY_KEEPORDER);
out:
  for (int j = 0; j < K->narrays; j++) bound_clear(&ka[j]);
  for (int j = 0; j < K->nscalars; j++) bound_clear(&ks[j]);
  return result;
}

static PyObject *kernel_get_program(KernelObject *K, void *c) { return Py_NewRef(K->program); }
static PyObject *kernel_get_target(KernelObject *K, void *c) {
  return PyUnicode_FromString(jitc_target_name(K->target));
}
static PyObject *kernel_get_params(KernelObject *K, void *c) { return Py_NewRef(K->params); }

static PyObject *kernel_get_arrays(KernelObject *K, void *c) {
  static const char *roles[] = {"input", "output", "inout", "result"};
  PyObject *t = PyTuple_New(K->narrays);
  for (int j = 0; t && j < K->narrays; j++) {
    PyObject *e = Py_BuildValue("(Oss)", K->anames[j], roles[K->aroles[j]],
                                dt_name(K->adtypes[j]));
    if (!e) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, j, e);
  }
  return t;
}

static PyObject *kernel_get_reductions(KernelObject *K, void *c) {
  PyObject *d = PyDict_New();
  for (int j = 0; d && j < K->narrays; j++) {
    PyObject *op = K->areds[j] ? PyUnicode_FromString(K->areds[j]) : NULL;
    if (K->areds[j] && (!op || PyDict_SetItem(d, K->anames[j], op))) Py_CLEAR(d);
    Py_XDECREF(op);
  }
  return d;
}

static PyObject *kernel_get_reduction_axes(KernelObject *K, void *c) {
  PyObject *d = PyDict_New();
  for (int j = 0; d && j < K->narrays; j++) {
    int naxes, keep, axes[JITC_MAXDIMS];
    if (!K->areds[j] || jitc_kernel_reduction_axes(K->k, j, &naxes, axes, &keep)) continue;
    PyObject *t = naxes < 0 ? Py_NewRef(Py_None) : PyTuple_New(naxes);
    for (int a = 0; t && a < naxes; a++) {
      PyObject *v = PyLong_FromLong(axes[a]);
      if (!v) Py_CLEAR(t);
      else PyTuple_SET_ITEM(t, a, v);
    }
    PyObject *e = t ? Py_BuildValue("(NO)", t, keep ? Py_True : Py_False) : NULL;
    if (!e || PyDict_SetItem(d, K->anames[j], e)) Py_CLEAR(d);
    Py_XDECREF(e);
  }
  return d;
}

static PyObject *kernel_get_scalars(KernelObject *K, void *c) {
  PyObject *t = PyTuple_New(K->nscalars);
  for (int j = 0; t && j < K->nscalars; j++) {
    PyObject *e = Py_BuildValue("(Os)", K->snames[j], dt_name(K->sdtypes[j]));
    if (!e) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, j, e);
  }
  return t;
}

static PyObject *kernel_get_language_names(KernelObject *K, void *c) {
  int n = jitc_kernel_language_name_count(K->k);
  PyObject *t = PyTuple_New(n);
  for (int j = 0; t && j < n; j++) {
    PyObject *s = PyUnicode_FromString(jitc_kernel_language_name(K->k, j));
    if (!s) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, j, s);
  }
  return t;
}

static PyObject *kernel_get_info(KernelObject *K, void *c) {
  const jitc_compile_info *i = jitc_kernel_compile_info(K->k);
  return Py_BuildValue("{sdsdsdsdsdsdss}", "total_ms", i->total_ms, "frontend_ms",
                       i->frontend_ms, "ir_ms", i->ir_ms, "optimize_ms", i->optimize_ms,
                       "codegen_ms", i->codegen_ms, "load_ms", i->load_ms, "cache",
                       i->cache ? i->cache : "none");
}

static PyObject *kernel_repr(KernelObject *K) {
  return PyUnicode_FromFormat("<jitc.Kernel %R for %s, parameters %R>", K->program,
                              jitc_target_name(K->target), K->params);
}

static PyGetSetDef kernel_getset[] = {
  {"program", (getter)kernel_get_program, NULL, "The program's text.", NULL},
  {"target", (getter)kernel_get_target, NULL, "The target it runs on: 'interp', 'cpu' or 'cuda'.",
   NULL},
  {"params", (getter)kernel_get_params, NULL,
   "The names positional arguments bind, in order.", NULL},
  {"arrays", (getter)kernel_get_arrays, NULL,
   "The arrays, in the program's order: (name, role, dtype), role 'input', 'output', "
   "'inout' or 'result' (a reduction's, returned as a scalar, or an array over axes).", NULL},
  {"reductions", (getter)kernel_get_reductions, NULL,
   "The reductions' results by name: {name: 'sum', 'prod', 'min', 'max', 'mean', 'any', "
   "'all', 'argmin' or 'argmax'}.", NULL},
  {"reduction_axes", (getter)kernel_get_reduction_axes, NULL,
   "The reductions' axes by name: {name: (axes, keepdims)}, axes a tuple of ints as the "
   "program gives them (negative ones count from the end), or None for every axis.", NULL},
  {"scalars", (getter)kernel_get_scalars, NULL,
   "The scalars the program uses: (name, dtype inside the kernel).", NULL},
  {"language_names", (getter)kernel_get_language_names, NULL,
   "The names the program reads with the language's meaning because the signature binds "
   "none of that name: 'i' (the element index), 'pi', 'inf', 'nan', 'true', 'false'.", NULL},
  {"compile_info", (getter)kernel_get_info, NULL,
   "Times of the compile in milliseconds, and whether a cache served it.", NULL},
  {NULL},
};

static PyTypeObject KernelType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "jitc.Kernel",
  .tp_basicsize = sizeof(KernelObject),
  .tp_dealloc = (destructor)kernel_dealloc,
  .tp_repr = (reprfunc)kernel_repr,
  .tp_call = PyVectorcall_Call,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
  .tp_vectorcall_offset = offsetof(KernelObject, vectorcall),
  .tp_getset = kernel_getset,
  .tp_doc = "A compiled program: call it with its arrays and scalars.\n\n"
            "kernel(*args, **names): positional arguments bind kernel.params in\n"
            "order, keywords bind by name.  Arrays must have the dtypes the kernel\n"
            "was compiled for; scalars are converted to the type they have in the\n"
            "kernel.  Outputs not given are allocated.  Returns what jitc.evaluate\n"
            "returns: the array the program assigns (a reduction's result: a NumPy\n"
            "scalar, or a 0-d device array), or a dict by name when it assigns\n"
            "several.\n\n"
            "Made by jitc.compile(); jitc.evaluate keeps its own in a cache.",
};

PyTypeObject *kernel_type(void) { return &KernelType; }
