/*
** pyjitc.h -- what the files of the extension jitc._jitc share.  They sit
** one on another, each calling only those below it:
**
**   state.c     the module state (one struct, reached by mod_state()) and
**               the errors raised from the library's statuses
**   values.c    a Python value as an array or a scalar of one of the types
**   run.c       a kernel's run over host arrays of any shape and strides:
**               broadcasting, the outputs' layout, overlaps
**   device.c    the same over device arrays (CuPy, PyTorch, DLPack), in
**               place, on their stream
**   kernel.c    the Kernel type: a compiled program and its call
**   names.c     a program's names in the caller's variables
**   last.c      each thread's last call, kept for re_evaluate
**   evaluate.c  jitc.evaluate and its cache
**   reeval.c    jitc.validate and jitc.re_evaluate
**   _jitc.c     the module: its functions and its start
*/
#ifndef PYJITC_H
#define PYJITC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL jitc_ARRAY_API
#ifndef JITC_MODULE_INIT
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <stdint.h>
#include <string.h>

#include "jitc.h"

/* Codes of a bound value, in cache keys: kind | dtype. */
enum { K_NONE = 0, K_HOST = 0x10, K_DEV = 0x20, K_WEAK = 0x30, K_STRONG = 0x40 };
#define KIND(c) ((c) & 0xf0)
#define DT(c) ((jitc_dtype)((c) & 0x0f))
_Static_assert(JITC_NDTYPES <= 16, "a dtype is the low four bits of a code");
#define MAXNAMES 64
/* How many statuses jitc.h has (JITC_E_NOMEM is the last, as the
** vocabulary's "statuses" lists them). */
enum { N_STATUS = JITC_E_NOMEM + 1 };

/* What a program error is, for the Python class that catches it: a syntax
** error (the program does not parse), a name the program reads that is
** nowhere (numexpr's KeyError), a value NumPy refuses (a ValueError, as an
** integer to a negative integer power), or any other (a type error). */
enum { P_OTHER, P_SYNTAX, P_NAME, P_TYPE, P_VALUE, P_KINDS };

/* The module state (state.c): everything the extension keeps between
** calls.  The library's rule is one thread at a time per context: `lock`
** guards ctx, taken with the GIL released (see _jitc.c). */
typedef struct ModuleState {
  jitc_context *ctx;
  PyThread_type_lock lock;
  jitc_target default_target;
  PyObject *progs;            /* evaluate's cache: program text -> list of Prog capsules */
  long long compiles, hits;
  /* Set by __init__.py through _init(): */
  PyObject *exc[N_STATUS];    /* the exception classes, by jitc_status */
  PyObject *program_exc[P_KINDS]; /* a program error's class by its kind (P_SYNTAX, ...) */
  PyObject *empty_exc;        /* a reduction without identity over no elements */
  PyObject *device_info;      /* obj -> None | ndarray (host view) | tuple */
  PyObject *device_empty;     /* (like, shape, dtype name, axes outermost first or None:
                                 C order) -> array */
  PyObject *missing_note;     /* (message, names, locals, globals, caller) -> message */
  PyObject *numpy_dtype;      /* dtype name -> np.dtype (bfloat16: ml_dtypes') */
  /* NumPy's dtype of each type, got from numpy_dtype when first needed. */
  PyArray_Descr *descr[JITC_NDTYPES];
  /* Each type's NumPy kind and size, from its typestr ("<u2": 'u', 2). */
  char kind[JITC_NDTYPES];
  int size[JITC_NDTYPES];
  char type_list[256];        /* "bool, int8, ..., float64", for messages */
  int threads;                /* the cpu target's threads (set_num_threads); 0: all cores */
  /* Types whose objects device_info described (CuPy's ndarray, torch.Tensor):
  ** their next objects go to it without a look for __cuda_array_interface__,
  ** which CuPy makes as a new dict on each look (values.c). */
  PyTypeObject *dev_types[4];
  /* CuPy, once __init__.py has met a cupy.ndarray (_set_cupy): the type,
  ** cupy.empty, cupy.cuda.get_current_stream, cupy.cuda.runtime.getDevice
  ** and the attribute names its arrays are read by (values.c, device.c). */
  PyObject *cupy_type, *cupy_empty, *cupy_stream, *cupy_device;
  PyObject *s_data, *s_ptr, *s_shape, *s_strides, *s_dtype, *s_device, *s_id, *s_transpose;
  /* Interned attribute and keyword names. */
  PyObject *s_target, *s_cai, *s_dlpack_device, *s_array_interface;
  PyObject *s_threads, *s_local_dict, *s_global_dict, *s_out, *s_order, *s_casting;
  PyObject *s_sanitize, *s_optimization, *s_truediv, *s_disable_cache;
  /* last.c: the last thread's record of its last call, at hand, and that
  ** thread's id (PyThreadState_GetID; 0: none). */
  uint64_t last_id;
  struct LastCall *last;
} ModuleState;

ModuleState *mod_state(void);
/* Fills the state at the module's start: -1 with an exception set. */
int mod_state_init(void);
/* NumPy's dtype of type t (a new reference), or NULL with an exception
** (bfloat16 without ml_dtypes). */
PyArray_Descr *mod_descr(jitc_dtype t);

typedef struct Failure {
  jitc_status status;
  char *msg;
  int line, col;
  int kind; /* JITC_E_PROGRAM: P_SYNTAX, P_NAME, P_TYPE or P_VALUE (failure_classify) */
  int boolean; /* every error is about Python's and, or, not (failure_confirm) */
} Failure;

typedef struct Bound {
  uint8_t code;
  PyObject *obj;        /* what the caller gave (borrowed) */
  PyArrayObject *arr;   /* host array: an ndarray on obj's memory (new ref) */
  PyObject *dev;        /* device array: _device_info's tuple (new ref) */
  PyObject *own;        /* an output allocated for the call (new ref) */
  jitc_value val;       /* scalar */
  /* arrays: data, shape, strides (host arrays: arr's own; NULL for device
  ** arrays), layout of a device array (1: C-contiguous, 2: F-contiguous) */
  uint64_t ptr;
  int ndim, layout, writable;
  npy_intp shape[NPY_MAXDIMS];
  const npy_intp *strides;
  int64_t n;
  _Alignas(16) uint64_t cell[2]; /* a reduction's result on the host, written by the run:
                           one element of any type (complex128's 16 bytes, aligned to them) */
} Bound;

typedef struct KernelObject {
  PyObject_HEAD
  jitc_kernel *k;
  PyObject *program;
  jitc_target target;
  int device;               /* runs on device arrays */
  int narrays, nscalars;
  PyObject **anames;        /* interned str */
  jitc_role *aroles;
  jitc_dtype *adtypes;
  const char **areds;       /* a result's reduction ("sum", ...), else NULL; k's */
  PyObject **snames;
  jitc_dtype *sdtypes;
  PyObject *params;         /* tuple: positional parameter names */
  vectorcallfunc vectorcall;
} KernelObject;

/* A kernel of evaluate's cache: the one for a signature of a Prog. */
typedef struct Entry {
  uint8_t key[MAXNAMES + 1]; /* target, then the code of each name */
  int threads;               /* the cpu target's thread count it was compiled for */
  KernelObject *K;
  int slot[MAXNAMES];        /* kernel_slot of each name */
} Entry;

/* What a program's text means for the names its caller has (names.c): the
** names it reads and assigns, and those it read as the language's (`i`,
** `pi`, ...) because the caller had no such variable; and its kernels, one
** per signature (evaluate.c).  A caller who has one of `lang`, or lacks one
** of `names` that the program reads, needs another Prog of the text. */
typedef struct Prog {
  int nnames;
  PyObject *names[MAXNAMES]; /* interned */
  jitc_role roles[MAXNAMES]; /* scalars: JITC_INPUT */
  int nlang;
  PyObject *lang[MAXNAMES];  /* interned */
  int nentries, cap;
  Entry *entries;
} Prog;

/* The caller's variables, as numexpr finds them: the locals of the Python
** frame that called (for a closure, the free variables its code uses),
** then its globals; got on the first lookup.  local_dict and global_dict,
** where the caller gives them, stand for the frame's locals and globals. */
typedef struct Scope {
  int got;
  PyObject *locals;  /* new ref, or NULL */
  PyObject *globals; /* borrowed from the frame or global_dict, or NULL */
  PyObject *local_dict, *global_dict; /* evaluate's arguments (borrowed), or NULL */
} Scope;

/* state.c: errors.  raise_input and raise_usage format as PyUnicode_FromFormat. */
PyObject *raise_status(jitc_status s, const char *msg);
/* A program's text as UTF-8; NULL with ProgramSyntaxError where it holds a
** NUL (the library would see a program cut there), as Python refuses. */
const char *program_text(PyObject *program);
PyObject *raise_input(const char *fmt, ...);
PyObject *raise_usage(const char *fmt, ...);
void failure_take(Failure *f, jitc_status s);
void failure_classify(Failure *f, const char *src);
/* With the GIL, after failure_classify: Python's parser's word on a program
** whose every error is about Python's boolean operators. */
void failure_confirm(Failure *f, const char *src);
PyObject *failure_raise(Failure *f);
PyObject *failure_raise_as(Failure *f, PyObject *cls);

/* values.c */
int bind_value(Bound *b, const char *name, PyObject *o);
int bind_device(Bound *b, const char *name, PyObject *info);
/* A device array's strides in bytes into st: those of `strides` (a tuple
** of nd, as _device_info gives it), or C order's where it is None. */
int strides_of(int nd, const npy_intp *shape, npy_intp item, PyObject *strides, npy_intp *st);
/* A cupy.ndarray's _device_info tuple, read from its attributes here (as
** _device_info reads them); NULL with an exception set. */
PyObject *cupy_info(PyObject *o);
int bind_zero_d(Bound *b, const char *name, int own);
void bound_clear(Bound *b);
const char *dt_name(jitc_dtype t);
/* The type of a NumPy dtype (by its kind and size; a void kind by name,
** as ml_dtypes' bfloat16), or -1. */
int dtype_of_descr(PyArray_Descr *d, jitc_dtype *out);

/* kernel.c */
PyTypeObject *kernel_type(void);
jitc_status compile_locked(const char *src, const jitc_array_decl *ad, int na,
                           const jitc_scalar_decl *sd, int ns, const jitc_options *o,
                           jitc_kernel **out, Failure *f);
KernelObject *kernel_wrap(jitc_kernel *k, PyObject *program, jitc_target t, int device,
                          PyObject *params);
KernelObject *compile_bound(PyObject *program, jitc_target t, int device, int nnames,
                            PyObject *const *names, const Bound *b, PyObject *params,
                            int threads);
int decls_of(int n, PyObject *const *names, const Bound *b, jitc_array_decl *ad, int *na,
             jitc_scalar_decl *sd, int *ns);
PyObject *kernel_run(KernelObject *K, Bound *arrs, Bound *scals, NPY_ORDER order);
PyObject *kernel_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                       PyObject *kwnames);
int kernel_slot(const KernelObject *K, PyObject *name);
int name_eq(PyObject *a, PyObject *b);
int parse_target(PyObject *t, int device, jitc_target *out);

/* run.c */
int run_host(KernelObject *K, Bound *arrs, const jitc_value *vals, NPY_ORDER order);

/* pinned.c: the outputs of runs on the cuda target over host arrays, in
** pinned memory kept for reuse.  pinned_use makes NumPy allocate with it
** while K's outputs are made (the previous allocator, for pinned_restore;
** NULL when K is not such a run); pinned_prepare pins, before the run, the
** blocks of arrs not pinned yet, and frees those past the pool's bound. */
int pinned_init(void);
PyObject *pinned_use(const KernelObject *K);
void pinned_restore(PyObject *old);
void pinned_prepare(const KernelObject *K, const Bound *arrs);
/* What device.c shares with the host's run: */
/* Runs K with the GIL released and the context's lock held, as one flat
** run of n elements at ptrs (host: void *const *; device: const uint64_t *)
** or, ptrs NULL, over the arrays ja; on device arrays (device, on stream)
** or host ones.  -1 with the library's error raised. */
int run_locked(const KernelObject *K, int64_t n, const void *ptrs, const jitc_array *ja,
               const jitc_value *vals, int device, void *stream);
int run_shape(const KernelObject *K, const Bound *arrs, int *ndim, npy_intp *shape);
int over_axes(const KernelObject *K, int j);
int result_shape(const KernelObject *K, const jitc_array *ja, int j, int *nd, int64_t *shape);
void frame_strides(int xnd, const npy_intp *xs, const npy_intp *xst, int nd,
                   const npy_intp *shape, npy_intp *out);
const char *shape_text(char *buf, size_t cap, int nd, const npy_intp *s);

/* device.c */
int device_alloc(Bound *b, PyObject *like, int nd, const npy_intp *shape, jitc_dtype t,
                 const int *perm);
int run_device(KernelObject *K, Bound *arrs, const jitc_value *vals, int first,
               NPY_ORDER order);

/* names.c */
PyObject *scope_lookup(Scope *sc, PyObject *name);
void scope_clear(Scope *sc);
PyObject *kw_lookup(PyObject *const *kwv, PyObject *kwnames, PyObject *name);
Prog *prog_resolve(PyObject *program, PyObject *const *kwv, PyObject *kwnames, Scope *sc);
void prog_release(Prog *p);

/* evaluate's arguments besides the program and its names (borrowed; NULL
** where not given).  sanitize, optimization, truediv and disable_cache are
** numexpr's, taken and not used (optimization's and truediv's values
** checked as numexpr checks them). */
typedef struct Options {
  PyObject *target, *threads, *local_dict, *global_dict, *out, *order, *casting, *sanitize;
  PyObject *optimization, *truediv, *disable_cache;
} Options;

/* last.c: a call as re_evaluate runs it again: its program and the options
** given (NULL where not), out= by a weak reference (new references). */
typedef struct LastCall {
  PyObject *program, *target, *threads, *order, *casting, *out;
} LastCall;
void last_record(PyObject *program, const Options *o);
/* This thread's record, or NULL: no call recorded. */
const LastCall *last_get(void);
/* The record's out= (a new reference), or NULL: none, or gone. */
PyObject *last_out(const LastCall *L);

/* evaluate.c */
int split_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Options *o,
               PyObject **kwv2, PyObject **kwnames2);
PyObject *run_call(PyObject *program, Options o, PyObject *const *kwv, PyObject *kwn, int run);
PyObject *evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *py_cache_info(PyObject *self, PyObject *noargs);
PyObject *py_clear_cache(PyObject *self, PyObject *noargs);

/* reeval.c */
PyObject *py_validate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *py_re_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);

#endif
