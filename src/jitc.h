/*
** jitc.h -- the whole public API of jitc, a JIT compiler for element-wise
** array programs such as `a[i] += 1` or `c = exp(a) * b`.
**
** Use:
**   1. jitc_context_new() makes a context (one per thread, or shared with the
**      rules in "Threads" below).
**   2. jitc_compile() turns a program plus a signature (the dtype of every
**      array the caller provides, and the scalars it will bind) into a kernel
**      for one target.  Compile once, run many times.
**   3. jitc_kernel_array_count()/jitc_kernel_array() tell which arrays the
**      kernel reads and writes, in the order jitc_run() takes them.
**   4. jitc_run() runs the kernel over n elements of caller-owned buffers.
**   5. jitc_kernel_free() and jitc_context_free() release everything.
**
** Errors are values.  Functions that can fail return a jitc_status; the
** context keeps the details (jitc_errmsg(), jitc_error_count(),
** jitc_error_get()).  The library never prints, never exits and never aborts
** on a user error.  Destroying NULL does nothing.
**
** Threads: separate contexts are independent and may be used from different
** threads at once.  A context, and the kernels and buffers made from it, must
** be used by one thread at a time (a run writes the context's error state and
** uses its thread pool or GPU streams): give each thread its own context, or
** hand one context from thread to thread under a lock of your own.  The
** library keeps no per-thread state and takes no locks for the caller.
** Kernels and buffers must be freed before their context.  The CUDA context
** current on the calling thread (the driver's per-thread state) stays the
** caller's: every call returns with the one it found current, or none, on
** errors too.  The cuda target works in the primary context of its device
** (jitc_run_device: in the arrays' context) and makes that current only
** while a call lasts.
**
** The environment (docs/environment.md) is read once, by jitc_context_new().
*/
#ifndef JITC_H
#define JITC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* JITC_API marks the functions of this header: the only symbols the
** library exports.  It is built with -fvisibility=hidden and its static
** archive has every other name made local, so that a program's own `parse`
** or `check` never meets one of jitc's internal functions. */
#ifndef JITC_API
#if defined(__GNUC__) || defined(__clang__)
#define JITC_API __attribute__((visibility("default")))
#else
#define JITC_API
#endif
#endif

#define JITC_VERSION_MAJOR 0
#define JITC_VERSION_MINOR 1
#define JITC_VERSION_PATCH 0
#define JITC_VERSION "0.1.0"
#define JITC_VERSION_NUMBER \
  (JITC_VERSION_MAJOR * 10000 + JITC_VERSION_MINOR * 100 + JITC_VERSION_PATCH)

/* The element types of the language.  The numbering is stable. */
typedef enum jitc_dtype {
  JITC_BOOL = 0,
  JITC_INT32 = 1,
  JITC_INT64 = 2,
  JITC_FLOAT32 = 3,
  JITC_FLOAT64 = 4,
  JITC_INT8 = 5,
  JITC_INT16 = 6,
  JITC_UINT8 = 7,
  JITC_UINT16 = 8,
  JITC_UINT32 = 9,
  JITC_UINT64 = 10,
  JITC_FLOAT16 = 11,
  JITC_BFLOAT16 = 12, /* ml_dtypes.bfloat16 */
  JITC_COMPLEX64 = 13, /* two float32: real, imaginary (jitc_c64) */
  JITC_COMPLEX128 = 14, /* two float64 (jitc_c128) */
  JITC_NDTYPES
} jitc_dtype;

/* How a kernel uses an array, inferred from the program. */
typedef enum jitc_role {
  JITC_INPUT = 0,  /* only read */
  JITC_OUTPUT = 1, /* only assigned: a new array the caller allocates */
  JITC_INOUT = 2,  /* read, then assigned: updated in place */
  JITC_RESULT = 3  /* a reduction's result (`s = sum(a * b)`): one element,
                      written by the run; see "Reductions" at jitc_run() */
} jitc_role;

/* Status codes.  jitc_exit_code() maps them to sysexits-style exit codes. */
typedef enum jitc_status {
  JITC_OK = 0,
  JITC_E_USAGE = 1,       /* bad argument to the API (exit 64) */
  JITC_E_PROGRAM = 2,     /* syntax, name or type error in the program (65) */
  JITC_E_INPUT = 3,       /* input data missing, unreadable or malformed (66) */
  JITC_E_UNAVAILABLE = 4, /* target not available on this machine (69) */
  JITC_E_INTERNAL = 5,    /* a bug in jitc, or a back end failure (70) */
  JITC_E_OUTPUT = 6,      /* output cannot be written (73) */
  JITC_E_NOMEM = 7        /* out of host or device memory (71) */
} jitc_status;

typedef enum jitc_target {
  JITC_TARGET_INTERP = 0, /* reference interpreter: defines the semantics */
  JITC_TARGET_CPU = 1,    /* LLVM JIT, vectorised and threaded */
  JITC_TARGET_CUDA = 2,   /* NVRTC + CUDA Driver API */
  JITC_NTARGETS
} jitc_target;

typedef struct jitc_context jitc_context;
typedef struct jitc_kernel jitc_kernel;

/* One diagnostic.  line and col are 1-based; 0 when there is no position. */
typedef struct jitc_error {
  jitc_status code;
  int line;
  int col;
  const char *message; /* short text, without position; owned by the context */
} jitc_error;

/* A scalar value bound at run time (`-D alpha=2.5` on the CLI). */
typedef struct jitc_value {
  jitc_dtype dtype; /* JITC_BOOL, JITC_INT64, JITC_FLOAT64 or JITC_COMPLEX128
                       for plain values */
  union {
    int64_t i;
    double f;
    struct {
      double re, im;
    } c; /* a complex value (dtype JITC_COMPLEX64 or JITC_COMPLEX128) */
  } u;
} jitc_value;

/* An array the caller provides, by name. */
typedef struct jitc_array_decl {
  const char *name;
  jitc_dtype dtype;
} jitc_array_decl;

/* A scalar the program may use, by name.  A weak scalar acts like a literal
** of its kind (int, float, complex or bool, taken from dtype) and takes the type of
** the other operand, as NumPy's Python scalars do; a strong one has exactly
** `dtype`.  Changing the value bound at run time never recompiles. */
typedef struct jitc_scalar_decl {
  const char *name;
  jitc_dtype dtype;
  int weak;
} jitc_scalar_decl;

/* Compile options.  Fill with jitc_options_init() and change what you need. */
typedef struct jitc_options {
  jitc_target target;
  int threads;           /* cpu: worker threads; 0 = all cores */
  int fast_math;         /* allow less accurate math functions */
  int no_cache;          /* skip the disk cache */
  const char *cache_dir; /* NULL: $JITC_CACHE_DIR, $XDG_CACHE_HOME/jitc or ~/.cache/jitc */
  const char *cuda_arch; /* e.g. "sm_90" for --emit without a GPU; NULL: the device's */
  int implicit_inputs;   /* an undeclared array read before it is assigned is an
                            input of dtype implicit_dtype (the CLI's mode), unless
                            its name is one slip from a name defined before the read
                            (a likely typo: "did you mean"); when 0 it is an error
                            ("unknown name") */
  jitc_dtype implicit_dtype;
  const char *cpu;         /* cpu: the CPU to compile for: "native" (the host), an LLVM CPU
                              name ("znver3", "skylake-avx512") or an x86-64 level ("x86-64",
                              "x86-64-v2", "x86-64-v3", "x86-64-v4"); NULL: $JITC_CPU, else
                              "native" */
  const char *source_name; /* names the program in messages ("prog.jitc"); NULL: "<program>" */
  /* Fields are only ever added here, at the end: a caller that fills the
  ** options with jitc_options_init() and sets fields by name keeps working. */
  const char *devices;     /* cuda: the GPUs a jitc_run() over host arrays is split over:
                              "all", or ordinals as the driver numbers them (after
                              CUDA_VISIBLE_DEVICES), separated by commas: "0,1"; the first
                              combines the partials of reductions, and each gets a
                              contiguous share of the elements in proportion to its link's
                              measured speed; results are bit-identical whatever the GPUs.
                              A device named twice runs two pipelines on it.  A run moving
                              under 64 MiB per GPU uses fewer.  NULL: $JITC_DEVICES, else
                              the device $JITC_CUDA_DEVICE names, else all, where a GPU
                              whose context is not made yet (about 250 ms to make and
                              release) joins from the second run that would use it, so
                              that a single call stays on one GPU, and one that cannot be
                              used (taken in exclusive mode) is left out; a device given
                              that cannot be used fails the run.  Buffers and
                              jitc_run_device stay on their own device. */
} jitc_options;

/* Times of the last compile, in milliseconds, whether the cache served it and
** what machine the code is for. */
typedef struct jitc_compile_info {
  double total_ms;
  double frontend_ms;  /* lex, parse, check */
  double ir_ms;        /* back end: building its code */
  double optimize_ms;  /* back end: optimiser */
  double codegen_ms;   /* back end: machine code (or NVRTC) */
  double load_ms;      /* back end: loading the code */
  const char *cache;   /* "none", "memory", "disk" or "miss" */
  const char *machine; /* cpu: the machine the code was compiled for, as asked
                          (jitc_options.cpu, else $JITC_CPU, else "native"), e.g.
                          "native", "x86-64-v3", "znver3"; NULL for other targets;
                          owned by the kernel */
} jitc_compile_info;

/* Times of the last run, in milliseconds (0 where a stage does not apply). */
typedef struct jitc_run_info {
  double run_ms;     /* the whole jitc_run() call */
  double h2d_ms;     /* cuda: host to device */
  double kernel_ms;  /* cuda: kernel time measured with events */
  double d2h_ms;     /* cuda: device to host */
  int threads;       /* host threads that ran the kernel: cpu at most
                        jitc_options.threads, fewer where n is too small to
                        be worth splitting (0 when n is 0); interp 1; cuda 0 */
} jitc_run_info;

/* ---- contexts ---- */

/* Makes a context, or returns NULL when out of memory. */
JITC_API jitc_context *jitc_context_new(void);

/* Frees a context and everything it owns.  NULL does nothing. */
JITC_API void jitc_context_free(jitc_context *ctx);

/* Fills *opt with the defaults: the cpu target when jitc was built with
** LLVM, else interp; all cores; precise math; disk cache on. */
JITC_API void jitc_options_init(jitc_options *opt);

/* ---- errors ---- */

/* All diagnostics of the last failed call, formatted for people: each with
** its position, the source line and a caret under the spot.  Never NULL. */
JITC_API const char *jitc_errmsg(const jitc_context *ctx);

/* How many diagnostics the last failed call left. */
JITC_API int jitc_error_count(const jitc_context *ctx);

/* Diagnostic k (0-based) of the last failed call; JITC_E_USAGE if k is out of range. */
JITC_API jitc_status jitc_error_get(const jitc_context *ctx, int k, jitc_error *out);

/* The status's name, e.g. "program error". */
JITC_API const char *jitc_status_name(jitc_status s);

/* The process exit code (sysexits.h) that a command line tool should use. */
JITC_API int jitc_exit_code(jitc_status s);

/* ---- targets ---- */

/* The target's name ("interp", "cpu", "cuda"). */
JITC_API const char *jitc_target_name(jitc_target t);

/* Parses a target name; returns JITC_E_USAGE for an unknown name. */
JITC_API jitc_status jitc_target_parse(const char *name, jitc_target *out);

/* JITC_OK when the target can run here; otherwise JITC_E_UNAVAILABLE with
** the reason in jitc_errmsg(ctx).  May load libraries (LLVM, CUDA). */
JITC_API jitc_status jitc_target_available(jitc_context *ctx, jitc_target t);

/* A short description of the device the target runs on (CPU or GPU model). */
JITC_API const char *jitc_target_device(jitc_context *ctx, jitc_target t);

/* What the target is built on, for version reports: "built in" (interp),
** "LLVM 19.1.7" (cpu; "not built: no LLVM" without it), "NVRTC and CUDA
** driver, loaded at run time" (cuda).  Static text; loads nothing. */
JITC_API const char *jitc_target_version(jitc_target t);

/* The name in names[0..n) closest to `name` by edit distance, or NULL when
** none is close enough to be a likely typo (for "did you mean" messages). */
JITC_API const char *jitc_nearest_name(const char *name, const char *const *names, int n);

/* ---- dtypes ---- */

/* The types are numbered 0 to JITC_NDTYPES - 1: a program lists them with
** a loop over the numbers. */

/* NumPy's name of the type ("float64"); "unknown" for a number that is
** not a type. */
JITC_API const char *jitc_dtype_name(jitc_dtype t);

/* Bytes per element. */
JITC_API size_t jitc_dtype_size(jitc_dtype t);

/* NumPy's array-interface type string of the type in little-endian order,
** as in a .npy header's descr: "|b1", "<i4", "<f8"; NULL if unknown. */
JITC_API const char *jitc_dtype_typestr(jitc_dtype t);

/* Parses a type's name as NumPy spells it (its name "float32", character
** "f", code "f4", or an alias such as "double") or as the language does
** ("f32"); JITC_E_USAGE if unknown. */
JITC_API jitc_status jitc_dtype_parse(const char *name, jitc_dtype *out);

/* The language's vocabulary as one JSON text, for tools that generate
** programs or bind values (`jitc --list` prints it): "types" (each dtype's
** number, NumPy name, short name, kind, size, character code, typestr and
** integer range), "ops" (each operator, function, cast and reduction with
** its arity, typing rule, spelling, C library function, LLVM intrinsic and
** flags of ops.h; a function of two results says
** "results": 2, and the op of its second result, which is no name of the
** language, "second_result_of"), "aliases" (other names of
** functions) and "statuses" (number, name, exit code).  Static; never NULL. */
JITC_API const char *jitc_vocabulary(void);

/* ---- compiling ---- */

/* Compiles `source` for opt->target (opt NULL: the defaults).  `arrays`
** gives the dtype of each array the caller will provide (inputs, and
** optionally outputs whose dtype it wants to fix); `scalars` declares the
** scalars the program may use.  A declared name is the caller's, also one
** the language gives a meaning: an array or scalar `i`, `pi` or `sum` is
** what a bare `i`, `pi` or `sum` reads, and `sum(x)` stays the function;
** only the keywords (let, and, or, not, True, False) cannot be declared.
** On success *out is the kernel; on failure *out is NULL and the context
** holds the diagnostics. */
JITC_API jitc_status jitc_compile(jitc_context *ctx, const char *source,
                                  const jitc_array_decl *arrays, int narrays,
                                  const jitc_scalar_decl *scalars, int nscalars,
                                  const jitc_options *opt, jitc_kernel **out);

/* Frees a kernel.  NULL does nothing. */
JITC_API void jitc_kernel_free(jitc_kernel *k);

/* Times and cache result of the compile that made k. */
JITC_API const jitc_compile_info *jitc_kernel_compile_info(const jitc_kernel *k);

/* The number of arrays the kernel uses, and array k's name, role and dtype
** (k in the order of first appearance in the program, which is the order
** jitc_run() takes). */
JITC_API int jitc_kernel_array_count(const jitc_kernel *k);
JITC_API jitc_status jitc_kernel_array(const jitc_kernel *k, int index, const char **name,
                                       jitc_role *role, jitc_dtype *dtype);

/* The number of scalars the program uses, and scalar k's name and the type
** its value takes inside the kernel. */
JITC_API int jitc_kernel_scalar_count(const jitc_kernel *k);
JITC_API jitc_status jitc_kernel_scalar(const jitc_kernel *k, int index, const char **name,
                                        jitc_dtype *dtype);

/* The reduction that writes array `index` ("sum", "prod", "min", "max",
** "mean", "any", "all", "argmin" or "argmax") when its role is JITC_RESULT,
** else NULL.  A binding combining partial results of several runs (a sum of
** sums, a mean from sums and counts) needs it; the role alone does not say. */
JITC_API const char *jitc_kernel_reduction(const jitc_kernel *k, int index);

/* The axes of the reduction that writes array `index` (role JITC_RESULT),
** as the program gives them (`sum(x, axis=(0, -1), keepdims=True)`):
** *naxes of them in axes[] (room for JITC_MAXDIMS; a negative axis counts
** from the end of the broadcast shape), or *naxes = -1 for a reduction over
** every axis (no axis argument); *keepdims is 1 when the reduced axes stay
** in the result's shape as extents of 1.  A reduction without either is
** over every element into one value of shape ().  JITC_E_USAGE when the
** array is not a result; each out pointer may be NULL. */
JITC_API jitc_status jitc_kernel_reduction_axes(const jitc_kernel *k, int index, int *naxes,
                                                int *axes, int *keepdims);

/* The names the program reads with the language's meaning because no
** array or scalar of that name was declared: the element index `i` and the
** constants `pi`, `inf`, `nan`, `true`, `false` (not `True` and `False`,
** which cannot be declared), each once, in the order of first use; index
** out of range: NULL.  A declared array or scalar takes its name over from
** the language wherever the name is not called (docs/language.md, "Names
** the caller binds"): a binding that looks names up in its caller's
** variables, as numexpr does, looks these up too and compiles again with
** the ones its caller has. */
JITC_API int jitc_kernel_language_name_count(const jitc_kernel *k);
JITC_API const char *jitc_kernel_language_name(const jitc_kernel *k, int index);

/* The index of the array or scalar called `name`, or -1. */
JITC_API int jitc_kernel_find_array(const jitc_kernel *k, const char *name);
JITC_API int jitc_kernel_find_scalar(const jitc_kernel *k, const char *name);

/* 1 if some value the program reads, computes or writes has type t (a cast
** to it included; float32 anywhere means results carry float32's rounding),
** else 0. */
JITC_API int jitc_kernel_uses_dtype(const jitc_kernel *k, jitc_dtype t);

/* Writes a stage of the compilation as text: one of jitc_target_stages()
** of opt->target ("tokens", "ast", "types", then the target's own: "llvm",
** "llvm-opt", "asm" for cpu; "cuda", "ptx" for cuda).  *text is malloc'ed;
** free it with jitc_free(). */
JITC_API jitc_status jitc_emit(jitc_context *ctx, const char *source,
                               const jitc_array_decl *arrays, int narrays,
                               const jitc_scalar_decl *scalars, int nscalars,
                               const jitc_options *opt, const char *stage, char **text);

/* The stages jitc_emit() writes for target t, in pipeline order: the front
** end's, then the target's; a NULL-terminated list owned by the library
** (NULL for an unknown target). */
JITC_API const char *const *jitc_target_stages(jitc_target t);

/* The compile cache's directory for `dir` (NULL: the default, from the
** environment: docs/environment.md), created if missing and checked to be
** the caller's alone; NULL when unusable, with the reason in jitc_errmsg().
** The text stays valid until the next call with ctx. */
JITC_API const char *jitc_cache_dir(jitc_context *ctx, const char *dir);

/* Frees memory the library handed out (jitc_emit text). */
JITC_API void jitc_free(void *p);

/* ---- running ---- */

/* Runs the kernel over elements [0, n) of the arrays, given in the kernel's
** order (host pointers to n elements each, suitably aligned for their
** dtype; arrays must not overlap).  `scalars` gives a value per kernel
** scalar, in the kernel's order; values are converted to the scalar's type
** (an integer that does not fit is an error).  `info` may be NULL.
**
** Reductions: an array of role JITC_RESULT (`s` in `s = sum(a * b)`) is
** one element of its dtype, never NULL, even when n is 0: the run writes
** the reduction of all n elements there (a reduction over axes runs as
** over arrays of shape (n,): axis 0 or -1 is every element, and a result
** of more than one element needs jitc_run_arrays()) (NumPy's result type: sum of int32
** is int64, mean of integers float64, argmax int64, any and all bool).
** Over n == 0, sum is 0, prod 1, any false, all true and mean NaN; min, max,
** argmin and argmax have no value and the run fails with JITC_E_PROGRAM,
** writing nothing.  The same inputs give bit-identical results on every
** run of a target, whatever jitc_options.threads is; float sums may differ
** between targets in the last bits (docs/language.md, "Reductions"). */
JITC_API jitc_status jitc_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                              void *const *arrays, const jitc_value *scalars,
                              jitc_run_info *info);

/* ---- arrays of any shape ----
** NumPy's array model: an array is a data address, a shape and strides in
** bytes.  Operands broadcast by NumPy's rules (shapes aligned on their last
** axis; an axis of extent 1 stretches to the other's extent), and the
** program runs element-wise over the broadcast shape.  Views run in place,
** without a copy: a slice, a reversed array, a transposed or Fortran-order
** one, a column, a field of a record array, an unaligned one.  Where every
** array is one contiguous, aligned run of the same length, the run is
** jitc_run()'s, with no cost added. */

/* NumPy's limit on the number of dimensions. */
#define JITC_MAXDIMS 64

typedef struct jitc_array {
  void *data;             /* the address of element (0, ..., 0) */
  int ndim;               /* 0 (one element) to JITC_MAXDIMS */
  const int64_t *shape;   /* ndim extents, each >= 0; NULL when ndim is 0 */
  const int64_t *strides; /* ndim steps in bytes, of any sign (0 repeats an
                             element along the axis); NULL: C order, contiguous */
} jitc_array;

/* The broadcast shape of the kernel's arrays of role JITC_INPUT and
** JITC_INOUT in arrays[] (the kernel's order; the entries of the other
** roles are not read and may be zeroed): *ndim and shape[0..*ndim), shape
** having room for JITC_MAXDIMS.  A program with no such array has the
** shape () of one element, as NumPy's scalar expressions do.  Shapes that
** do not broadcast are JITC_E_INPUT, the message naming both arrays, their
** shapes and the axis.  A caller allocates the outputs with this shape. */
JITC_API jitc_status jitc_broadcast_shape(jitc_context *ctx, const jitc_kernel *k,
                                          const jitc_array *arrays, int *ndim, int64_t *shape);

/* The shape of kernel array `index` in a run over the inputs of arrays[]
** (read as jitc_broadcast_shape() reads them, and the outputs given
** there as jitc_run_arrays() does: an output's entry of ndim 0, or zeroed,
** adds nothing): an output or an array updated in place has the run's
** shape (the broadcast shape, widened to the outputs given); a reduction's
** result (role JITC_RESULT) the shape () of one element, or, over axes,
** the run's shape without its reduced axes (with extents of 1 for them under
** keepdims: NumPy's np.sum(x, axis=..., keepdims=...)); an input the shape
** arrays[index] gives it.  Errors as jitc_broadcast_shape()'s, and
** JITC_E_INPUT for an axis out of bounds for the broadcast shape (NumPy's
** AxisError) or two axes naming one, the message naming the reduction. */
JITC_API jitc_status jitc_array_shape(jitc_context *ctx, const jitc_kernel *k,
                                      const jitc_array *arrays, int index, int *ndim,
                                      int64_t *shape);

/* jitc_run() over arrays of any shape: arrays[j] is array j in the
** kernel's order.  The run's shape is NumPy's for a ufunc with out=: the
** broadcast shape of the inputs and the outputs, an output never being
** broadcast itself.  So inputs broadcast to the shape
** jitc_broadcast_shape() gives, or to a larger output's (np.add(row, 1,
** out=matrix) fills every row; a program of no input array, `o = 1.5`,
** fills its outputs); every output and in-place array has exactly the
** run's shape, and writes no element twice (no zero stride on an axis
** longer than 1); a JITC_RESULT array has the shape jitc_array_shape()
** gives (ndim 0 for a reduction over every element of the run's shape;
** over axes, any strides, each element written once).
** Written arrays must not overlap other arrays in memory, except an output
** whose elements are the same as an input's, as NumPy allows (`a = a * 2`),
** where no later statement reads that input (JITC_E_INPUT: NumPy's
** statements one after the other would read the new values there);
** a result over axes overlaps none.  The element index `i` is the
** element's position in C order in the run's shape.  Reductions over
** axes reduce each segment of the run's shape (the elements that give
** one element of the results) as jitc_run() reduces all n, with the same
** determinism; argmin and argmax give the index along the axis; over a
** reduced axis of extent 0, min, max, argmin and argmax fail with
** JITC_E_PROGRAM as over n == 0.  Errors as jitc_run()'s, and JITC_E_INPUT
** for shapes that do not fit. */
JITC_API jitc_status jitc_run_arrays(jitc_context *ctx, const jitc_kernel *k,
                                     const jitc_array *arrays, const jitc_value *scalars,
                                     jitc_run_info *info);

/* ---- device-resident arrays ----
** A buffer holds n elements of one dtype in the target's memory (GPU memory
** for cuda), so that a sequence of kernels can run without copying through
** the host, as CuPy arrays are used: upload once, run many kernels,
** download once.  Targets without separate memory return JITC_E_USAGE. */

typedef struct jitc_buffer jitc_buffer;

/* Allocates n elements of dtype on target t; JITC_E_NOMEM with the sizes
** in the message when the device is full. */
JITC_API jitc_status jitc_buffer_new(jitc_context *ctx, jitc_target t, jitc_dtype dtype, int64_t n,
                                     jitc_buffer **out);

/* Copies n elements from host memory into the buffer's first n elements,
** or the buffer's first n elements to host memory. */
JITC_API jitc_status jitc_buffer_upload(jitc_context *ctx, jitc_buffer *b, const void *host,
                                        int64_t n);
JITC_API jitc_status jitc_buffer_download(jitc_context *ctx, const jitc_buffer *b, void *host,
                                          int64_t n);

/* Frees a buffer.  NULL does nothing.  Buffers must be freed before their context. */
JITC_API void jitc_buffer_free(jitc_buffer *b);

/* jitc_run() over buffers of the kernel's target instead of host pointers:
** bufs[k] holds array k (its dtype, at least n elements; a JITC_RESULT
** array at least one).  Outputs, in-place arrays and results are written
** in the buffers.  A program reducing over an axis is refused
** (JITC_E_USAGE): it runs over arrays of a shape, jitc_run_arrays() or
** jitc_run_device_arrays(). */
JITC_API jitc_status jitc_run_buffers(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                      jitc_buffer *const *bufs, const jitc_value *scalars,
                                      jitc_run_info *info);

/* ---- host memory the GPU copies in place ---- */

/* Pins the bytes [p, p + bytes) of host memory for target t (cuda), for
** every GPU a run may use: a run over arrays that lie in them copies them by
** DMA in place, as over memory the caller pinned itself with
** cuMemHostRegister, where pageable memory goes through the host's copies
** into staging.  Pinning costs about 0.1 ms per MB and locks the pages in
** RAM until jitc_host_unpin(): it pays for arrays a program runs over again
** and again (the Python package pins the outputs it makes for the cuda
** target so, and reuses them: README.md, "Python").  JITC_E_USAGE for a target
** that works on host memory; JITC_E_UNAVAILABLE without a GPU; the driver's
** refusal (pages another registration holds) as JITC_E_INTERNAL. */
JITC_API jitc_status jitc_host_pin(jitc_context *ctx, jitc_target t, void *p, size_t bytes);

/* Undoes jitc_host_pin(ctx, t, p, ...): before the memory is freed, and
** before the context. */
JITC_API jitc_status jitc_host_unpin(jitc_context *ctx, jitc_target t, void *p);

/* ---- the caller's device memory ---- */

/* Runs a cuda kernel over elements [0, n) of device memory the caller owns
** (cuMemAlloc, cudaMalloc, a CuPy array's or a PyTorch tensor's data), with
** no copy.  ptrs[j] is the device address (a CUdeviceptr) of array j in the
** kernel's order, n elements of its dtype, aligned to the dtype's size;
** arrays must not overlap (an in-place array is one pointer).  A JITC_RESULT
** array is the address of one element, which the queued work writes (also
** when n == 0: then the only work queued; a reduction over axes runs as
** over arrays of shape (n,), as in jitc_run()).  `scalars` as for jitc_run().  stream is a CUstream of the context the arrays are used
** in; NULL is that context's legacy default stream, and CU_STREAM_LEGACY
** (0x1) and CU_STREAM_PER_THREAD (0x2) are taken too.
**
** Asynchronous: the kernels are queued on the stream and the call returns
** without waiting for them; they run after the work queued before them on
** that stream, and work queued after them sees their results.  The call
** itself never synchronises (no copy, no wait on the host); an error while
** the kernel runs shows on the stream later (cuStreamSynchronize), not in
** this status.  Nothing compiles: the kernel's module is loaded in each
** context on first use there.
**
** Context and device: the arrays' own.  Their device is the one their
** memory is on (all device arrays must be on one; managed memory is taken
** and counts as on every device).  The kernel runs in the CUDA context
** current on the calling thread when it is on that device (CuPy and PyTorch
** leave the device's primary context current), else in the context that
** allocated the first array, else in the device's primary context, which
** jitc then retains until jitc_context_free().  (As every call does, it
** returns with the caller's current context: see Threads.)  A kernel
** compiled once runs on every
** device of the arch it was compiled for (the device of JITC_CUDA_DEVICE);
** on a device of another arch the load fails with JITC_E_INTERNAL.  Queued
** work must be complete before jitc_context_free(), and a CUDA context the
** caller made and used here must outlive the jitc context.
**
** Returns JITC_OK when the work is queued (n == 0 queues nothing and looks
** at no pointer, unless the kernel has reductions).  JITC_E_USAGE: ctx or k NULL, n < 0, ptrs NULL or an
** array's address NULL (n > 0), an address not a multiple of its dtype's
** size, a bad scalar, a kernel compiled for another target, a stream of
** another context.  JITC_E_INPUT, naming the array: memory that is not
** device or managed memory (a host address; page-locked host memory from
** cuMemHostAlloc or cudaMallocHost is refused too, mapped or not: a kernel
** would read it over the bus), or arrays on two devices.
** JITC_E_UNAVAILABLE: the cuda target cannot run here (no driver or GPU),
** whatever k is.  JITC_E_INTERNAL or JITC_E_NOMEM: a driver call failed. */
JITC_API jitc_status jitc_run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                     const uint64_t *ptrs, const jitc_value *scalars,
                                     void *stream);

/* jitc_run_device() over device arrays of any shape and strides, as
** jitc_run_arrays() takes host arrays: arrays[j] is array j in the kernel's
** order, its data the device address of element (0, ..., 0)
** (__cuda_array_interface__'s data, a DLPack tensor's data plus its
** byte_offset), its strides in bytes (__cuda_array_interface__'s strides;
** DLPack counts them in elements: times the element size), NULL for C
** order.  Inputs broadcast, outputs have the broadcast shape, written
** arrays neither repeat an element nor overlap another array but an input's
** own elements, and `i` is the position in C order, as for
** jitc_run_arrays(); every element must be aligned to its size (base and
** strides multiples of it).  Nothing is copied and nothing waits: the
** kernels read and write the arrays where they are, on the caller's stream.
** Where every array is one contiguous run of its memory the call is
** jitc_run_device()'s, the same kernel; otherwise the kernel addresses each
** array through its strides (passed as a kernel parameter), one kernel per
** pattern of the arrays (the number of axes left once the axes that every
** array steps over alike are merged, and which arrays are contiguous,
** broadcast along the last axis or strided), compiled on the first run of
** each pattern and cached as the kernel itself is: that first run
** compiles.  Reductions give the bits of the same program over contiguous
** copies of the arrays.  Errors as jitc_run_device()'s and
** jitc_run_arrays()'s; JITC_E_INPUT also for elements not aligned to
** their size and for more strides than a kernel's parameters hold (when
** the axes left after merging, times one more than the strided arrays,
** pass 256). */
JITC_API jitc_status jitc_run_device_arrays(jitc_context *ctx, const jitc_kernel *k,
                                            const jitc_array *arrays,
                                            const jitc_value *scalars, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* JITC_H */
