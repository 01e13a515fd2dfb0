/*
** cpu/cpu.h -- the interface between the files of the cpu target, included by
** them alone.  The target is eleven files, one idea each, read in this order:
**
**   cpu/gen.c    generation: typed IR -> LLVM IR (the Gen builder, the
**                operators, the vector loop, split groups).  Pure: it knows
**                no context, JIT, cache, environment or thread.
**   cpu/convert.c the conversions of that IR: casts between the types, and
**                the 16-bit floats' bits to and from float32.  Equally pure.
**   cpu/half.c   the operations of the 16-bit floats: in float32, or on
**                their bits.  Equally pure.
**   cpu/complex.c complex64 and complex128: a value as its real parts then
**                its imaginary parts, their arithmetic, order, casts and
**                functions.  Equally pure.
**   cpu/reduce.c the reductions of that IR: the lanes each keeps in the
**                loop, and the partial result of each block.  Equally pure.
**   cpu/rowacc.c the row form of a kernel reducing over outer axes: rows
**                folded into an accumulator per column, a vector across
**                the columns.  Equally pure.
**   cpu/math.c   the math functions of that IR: which vector library (or
**                libm) computes each, and the fixes at the ends of ranges.
**                Part of generation, equally pure.
**   cpu/build.c  building: the machine compiled for, the optimiser, object
**                code, the code cache (code_get) and the ORC JIT.
**   cpu/host.c   the library's functions that the kernels call, which
**                build.c shows the JIT (the semantics of an operation).
**   cpu/rowrun.c running the row form: where it applies, blocks of rows,
**                tiles, threads.
**   cpu/run.c    running: the per-context state, the thread pool, and
**                target_cpu, the struct Target that jitc.c calls.
*/
#ifndef JITC_CPU_H
#define JITC_CPU_H

#include "../jitc_int.h"
#include "../layout.h"

/* Elements per loop iteration.  16 fills a 512-bit register with float32
** and two with float64; narrower hosts split the vectors in legalisation. */
#define W 16

/* Reductions: the elements are cut into blocks of RB, fixed by the element
** count alone (chunks of threads begin on multiples of RB), and each block
** gives one Partial (reduce.c) per reduction, so the thread count never
** changes a result.  A power of two and a multiple of W.  Chosen by
** measurement (docs/PERFORMANCE.md, "Reductions"): a larger block spends
** less on each block's reduction across lanes, a smaller one balances the
** threads better. */
#define RB 4096

/* The arrays (bit = slot) that a variant of the kernel reads otherwise,
** for blocks where they lie so (cpu/run.c): `one`, as the one element at
** their address in every lane (a broadcast column, a 0-d array, over the
** block); `two`, as every other element from their address (x[::2]). */
typedef struct Reads {
  uint64_t one, two;
} Reads;

/* ---- cpu/gen.c and cpu/math.c: generation ---- */

#ifdef JITC_HAVE_LLVM
#include <llvm-c/Core.h>
#include <string.h>

/* The vector math libraries the process has loaded, as generation sees
** them: mvec and sleef say which are loaded, and has(host, lib, name)
** whether loaded library lib (VL_MVEC: glibc's libmvec, VL_SLEEF) defines
** the function `name`.  The building side answers (cpu/build.c, dlsym). */
enum { VL_MVEC, VL_SLEEF };
typedef struct VecLibs {
  bool (*has)(const void *host, int lib, const char *name);
  const void *host;
  bool mvec, sleef; /* which of them are loaded */
} VecLibs;

/* What code is generated for: the machine's LLVM names, its x86-64 level
** (1..4, 0: not x86-64; it picks the vector math) and vector width. */
typedef struct Gen Gen;
typedef struct GenTarget {
  const char *cpu, *features;
  int level;
  int vec_bits; /* 128, 256 or 512 */
  VecLibs libs;
  bool fast;    /* --fast-math */
  Reads reads;  /* arrays a variant of the kernel (cpu/run.c) reads
                   otherwise than as W contiguous elements */
  /* The row form of a kernel reducing over outer axes instead of the
  ** kernel: its builder (rows_gen, cpu/rowacc.c, which builds on gen.c's
  ** pieces, so that gen.c names it not), or NULL. */
  int (*rows)(Gen *G, const char *fname);
} GenTarget;

/* Builds the kernel `fname` of p in a new LLVM context (*C, which the
** caller disposes of, also on failure).  NULL when out of memory.  The
** caller sets the module's triple and data layout. */
LLVMModuleRef cpu_gen_module(const GenTarget *gt, const Program *p, const char *fname,
                             LLVMContextRef *C);

/* A reduction's running state in the kernel: W lanes, lane k taking the
** elements k, k + W, ... of the block. */
typedef struct RAcc {
  const IrStmt *st;
  bool indexed;            /* keeps the offset of each lane's element: argmin,
                              argmax, and float min/max (ties of 0.0 and -0.0,
                              NaN payloads: the first element wins) */
  int64_t scr;             /* split kernels: its state's offset in the scratch */
  LLVMValueRef val, off;   /* the lanes' values and offsets in the block (-1: none);
                              the row form's: indices in the segment, i64 */
  LLVMValueRef pval, poff; /* their phis in the loop's head */
  int64_t roff;            /* the row form: its accumulators' offset in a chunk */
} RAcc;

/* The row form's state for the row at hand (cpu/rowacc.c): the columns'
** accumulators in memory, the row's index.  An iteration of the loop over
** the columns folds several rows in turn into the accumulators held in
** registers: the first of them loads them, the last stores them. */
typedef struct RowGen {
  LLVMValueRef acc;   /* chunk q of W columns at acc + q * red_row_bytes() */
  LLVMValueRef c0;    /* the call's first column */
  LLVMValueRef off;   /* i64: the row's index in the segment */
  LLVMValueRef first; /* i1: the row is its block's first (the identity, not memory) */
  bool load, store;   /* the row loads the accumulators, stores them */
  int64_t chunk;      /* red_row_bytes() */
} RowGen;

/* The generator's state, shared by cpu/gen.c and cpu/math.c. */
struct Gen {
  const GenTarget *gt;
  const Program *prog;
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  LLVMTypeRef ti1, ti8, ti16, ti32, ti64, tf32, tf64, tptr, tvoid;
  LLVMValueRef *arr;   /* array base pointers, loaded in the entry block */
  LLVMValueRef *par;   /* parameters as splat vectors */
  LLVMValueRef *tmp;   /* temporaries of the current body */
  LLVMValueRef *load;  /* loads of the current body, by array */
  int64_t *scr_off;    /* per temporary: its offset in the scratch when several
                          groups read it, else -1 */
  LLVMValueRef scratch, blk; /* split kernels: the scratch, the block's first element */
  LLVMValueRef i;      /* index of the first element of the iteration */
  LLVMValueRef mask;   /* lanes in range, or NULL for a full iteration */
  RAcc *racc;          /* per reduction, in statement order */
  int *rnum;           /* per statement: its reduction's number, or -1 */
  LLVMValueRef rb;     /* the first element of the current block of RB */
  LLVMValueRef part, nblocks; /* the Partials and their count per reduction */
  RowGen *row;         /* the row form (cpu/rowacc.c): accumulators in memory */
};

/* cpu/gen.c's pieces that cpu/rowacc.c builds its form of: gen_body, the
** statements [from, to) on the W elements at G->i (under G->mask), the
** body of the vector loop; new_fn, a kernel function (nptrs < 0) or a group's;
** load_array_ptr, array s's address from the table `arrays`; load_params,
** the parameters as splat vectors (par_used NULL: all of them).  rows_gen
** (cpu/rowacc.c) builds the row form as the kernel `fname`; -1 when out
** of memory. */
void gen_body(Gen *G, int from, int to);
LLVMValueRef new_fn(Gen *G, const char *name, int nptrs);
LLVMValueRef load_array_ptr(Gen *G, LLVMValueRef arrays, int s);
void load_params(Gen *G, LLVMValueRef pars, const int *par_used, int stamp);
int rows_gen(Gen *G, const char *fname);

/* Small builders of W-lane values, for the generation files. */

/* The 16-bit floats (float16, bfloat16): their bits, in memory and in
** registers; they compute in float32 (cpu/half.c). */
static inline bool is_half(jitc_dtype t) {
  return type_info[t].kind == T_FLOAT && type_info[t].size == 2;
}
/* The type whose operations compute t's: float32 for the 16-bit floats. */
static inline jitc_dtype compute_type(jitc_dtype t) { return is_half(t) ? JITC_FLOAT32 : t; }
/* Whether integer compares of t are unsigned (the unsigned types, bool). */
static inline bool is_unsigned(jitc_dtype t) {
  return type_info[t].kind == T_UINT || type_info[t].kind == T_BOOL;
}
/* A value of type t in a register, from the table's kind and size: bool is
** i1, integers iN (signedness is in the operations), floats float or
** double, the 16-bit floats their bits (i16), a complex type the float type
** of its parts (cpu/complex.c: W elements are 2W parts). */
static inline LLVMTypeRef scalar_type(Gen *G, jitc_dtype t) {
  const TypeInfo *ti = &type_info[t];
  switch (ti->kind) {
  case T_BOOL: return G->ti1;
  case T_SINT: case T_UINT: return LLVMIntTypeInContext(G->C, 8u * (unsigned)ti->size);
  case T_FLOAT: return ti->size == 8 ? G->tf64 : ti->size == 4 ? G->tf32 : G->ti16;
  case T_COMPLEX: return ti->size == 16 ? G->tf64 : G->tf32;
  default: unreachable();
  }
}
/* In memory a bool is a byte, 0 or 1. */
static inline LLVMTypeRef mem_type(Gen *G, jitc_dtype t) {
  return t == JITC_BOOL ? G->ti8 : scalar_type(G, t);
}
static inline LLVMTypeRef vec_type(Gen *G, jitc_dtype t) {
  return LLVMVectorType(scalar_type(G, t), type_info[t].kind == T_COMPLEX ? 2 * W : W);
}
static inline LLVMValueRef splat_const(LLVMValueRef c) {
  LLVMValueRef v[W];
  for (int k = 0; k < W; k++) v[k] = c;
  return LLVMConstVector(v, W);
}
static inline LLVMValueRef vconst_f(Gen *G, jitc_dtype t, double x) {
  return splat_const(LLVMConstReal(scalar_type(G, t), x));
}
/* A call of the LLVM intrinsic `name` overloaded on types[0..ntypes). */
static inline LLVMValueRef intrinsic(Gen *G, const char *name, LLVMTypeRef *types, int ntypes,
                                     LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) unreachable();
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(G->M, id, types, (size_t)ntypes);
  LLVMTypeRef ft = LLVMIntrinsicGetType(G->C, id, types, (size_t)ntypes);
  return LLVMBuildCall2(G->B, ft, f, args, (unsigned)nargs, "");
}
static inline LLVMValueRef intr1(Gen *G, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return intrinsic(G, name, &t, 1, &a, 1);
}
static inline LLVMValueRef intr2(Gen *G, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[2] = {a, b};
  return intrinsic(G, name, &t, 1, args, 2);
}
static inline LLVMValueRef fcmp(Gen *G, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(G->B, p, a, b, "");
}
static inline LLVMValueRef sel(Gen *G, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(G->B, c, a, b, "");
}
static inline LLVMValueRef isnan_v(Gen *G, LLVMValueRef a) { return fcmp(G, LLVMRealUNO, a, a); }
static inline LLVMValueRef icmp(Gen *G, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(G->B, p, a, b, "");
}
/* Lanes idx[0..n) of a and b (b's lanes numbered after a's; b NULL: a alone). */
static inline LLVMValueRef shuffle(Gen *G, LLVMValueRef a, LLVMValueRef b, const unsigned *idx,
                                   unsigned n) {
  LLVMValueRef m[2 * W];
  for (unsigned k = 0; k < n; k++) m[k] = LLVMConstInt(G->ti32, idx[k], 0);
  return LLVMBuildShuffleVector(G->B, a, b ? b : LLVMGetPoison(LLVMTypeOf(a)),
                                LLVMConstVector(m, n), "");
}
/* A run-time scalar broadcast to every lane. */
static inline LLVMValueRef splat(Gen *G, LLVMValueRef s) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), W);
  LLVMValueRef v = LLVMBuildInsertElement(G->B, LLVMGetPoison(vt), s,
                                          LLVMConstInt(G->ti32, 0, 0), "");
  return LLVMBuildShuffleVector(G->B, v, LLVMGetPoison(vt),
                                LLVMConstNull(LLVMVectorType(G->ti32, W)), "");
}

/* cpu/reduce.c: the reductions' lanes, which cpu/gen.c's loops carry.
** red_init fills G->racc and G->rnum; red_load_out loads the Partials'
** address and count (G->part, G->nblocks) from the parameter slots;
** red_start sets every reduction's lanes to the identity at the start of
** the block of RB at G->rb, and red_end writes the Partials of the
** reductions among statements [from, to) at its end (bend); red_update
** folds statement s's value at G->i into its lanes; red_phis carries the
** lanes of statements [from, to) through gen_loop's blocks; red_move moves
** them between the lanes and a split kernel's scratch, and red_resume
** starts a group's call from there, or from the identity when `first` (the
** call that begins a block of RB); red_finish_fn builds the body of a
** function (rb, block end, params, scratch) that writes the Partials of
** the reductions among [from, to) from the scratch; red_some tells whether
** statements [from, to) hold a reduction. */
void red_init(Gen *G);
void red_load_out(Gen *G, LLVMValueRef pars);
void red_start(Gen *G);
void red_end(Gen *G, int from, int to, LLVMValueRef bend);
void red_update(Gen *G, int s, LLVMValueRef x);
void red_phis(Gen *G, int from, int to, LLVMBasicBlockRef bb, int step);
void red_move(Gen *G, int from, int to, bool store);
void red_resume(Gen *G, int from, int to, LLVMValueRef first);
void red_finish_fn(Gen *G, LLVMValueRef fn, int from, int to);
bool red_some(Gen *G, int from, int to);
/* The row form (cpu/rowacc.c): the accumulators of W columns that the
** reductions keep in memory instead of registers, one per column (a vector
** across them).  red_row_bytes: the bytes of one chunk of W columns (every
** reduction's W values, then of an indexed one W indices, i64), setting
** each RAcc.roff when racc is not NULL.  red_row_combine: reduction r's
** accumulators of the chunk at a combined with those of the chunk at b (of
** later rows), into a.  red_row_finish: its Partials for the W columns of
** the chunk at `chunk`, column j's at dst + j * cstride bytes. */
size_t red_row_bytes(const Program *p, RAcc *racc);
void red_row_combine(Gen *G, int r, LLVMValueRef a, LLVMValueRef b);
void red_row_finish(Gen *G, int r, LLVMValueRef chunk, LLVMValueRef dst, int64_t cstride);
/* red_row_direct: whether the row form finishes every reduction of p into
** its results itself (ROWS_RESULT): sums, products, means, minima and
** maxima held as float32 or float64 whose results are float32 or float64,
** finished by one conversion (a mean divided by its n first), as
** reduce_finish finishes them.  red_row_result: reduction r's results for
** the W columns of the chunk at `chunk` (n elements a column), stored at
** dst[q] on (under G->mask). */
bool red_row_direct(const Program *p);
void red_row_result(Gen *G, int r, LLVMValueRef chunk, LLVMValueRef dst, LLVMValueRef q,
                    LLVMValueRef n);
/* Scratch bytes of one reduction's lanes in a split kernel (red_move): W
** values of up to 16 bytes (complex128), W offsets. */
#define RSTATE (W * 16 + W * 4)

/* cpu/convert.c: conversions.  conv_widen gives the float32 values of the
** bits of a 16-bit float type t, conv_narrow the bits of float32 values
** rounded to t (ties to even), conv_round float32 values rounded to t (on
** vectors of any width); conv_cast is the cast between any two types
** (OP_CAST, W lanes). */
LLVMValueRef conv_widen(Gen *G, jitc_dtype t, LLVMValueRef bits);
LLVMValueRef conv_narrow(Gen *G, jitc_dtype t, LLVMValueRef v);
LLVMValueRef conv_round(Gen *G, jitc_dtype t, LLVMValueRef v);
/* W lanes of the bits of x rounded to 16-bit float type t, a constant. */
LLVMValueRef conv_const(Gen *G, jitc_dtype t, double x);
LLVMValueRef conv_cast(Gen *G, LLVMValueRef v, jitc_dtype from, jitc_dtype to);

/* cpu/half.c: operation n whose operands are of a 16-bit float type, given
** their bits a and float32 values w.  half_bits_op: the operations that
** work on the bits (moving a value, F_STEP's step), else NULL;
** half_result: the bits of the float32 result r of any other. */
LLVMValueRef half_bits_op(Gen *G, const Node *n, LLVMValueRef *a, LLVMValueRef *w);
LLVMValueRef half_result(Gen *G, const Node *n, LLVMValueRef r, LLVMValueRef *a, LLVMValueRef *w);

/* cpu/math.c: float function op (a row of ops.h with a libm name) on the
** nargs vectors args of type t, from the library chosen for the machine,
** NaN arguments and range ends made right. */
LLVMValueRef math_gen(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args, int nargs);
/* ldexp, frexp, modf and their second results (ops.h) on the float
** vector args[0] of type t (ldexp: args[1] int32). */
LLVMValueRef math_mixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef *args);
/* x ** y for floats (the vector library's pow, with its top-of-range fix). */
LLVMValueRef math_pow(Gen *G, jitc_dtype t, LLVMValueRef x, LLVMValueRef y);
/* exp, sin or cos (op) of the float64 vector a within 1 ulp: SLEEF's
** 1.0-ulp function of the level where SLEEF is loaded, else the C
** library's, one lane at a time. */
LLVMValueRef math_accurate(Gen *G, OpId op, LLVMValueRef a);

/* cpu/memory.c: W elements of type t at base[idx] as a vector (under
** G->mask, lanes out of range read as zero), stored likewise; and array
** s's value at the iteration, by load_vec or as GenTarget.reads says. */
LLVMValueRef load_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx);
void store_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v);
LLVMValueRef load_array(Gen *G, int s);

/* cpu/complex.c: complex64 and complex128.  W elements of a complex type
** are one vector of 2W parts, the real parts first; cx_part takes half k
** (0 real, 1 imaginary) of such a vector of any width, cx_pack makes one
** of two halves, cx_both widens an m-lane condition to both halves.
** cx_load and cx_store move W elements at element idx of base (under
** G->mask), in memory's order (each element's parts side by side);
** cx_const is a constant, cx_param a parameter's slot splat.  cx_involved
** tells whether node n has a complex operand or result, and cx_op computes
** it (casts included).  cx_mul and
** cx_compare are the product and the comparisons, for the reductions. */
LLVMValueRef cx_part(Gen *G, LLVMValueRef v, int k);
LLVMValueRef cx_pack(Gen *G, LLVMValueRef re, LLVMValueRef im);
LLVMValueRef cx_both(Gen *G, LLVMValueRef c);
LLVMValueRef cx_load(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx);
void cx_store(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v);
LLVMValueRef cx_const(Gen *G, jitc_dtype t, double re, double im);
LLVMValueRef cx_param(Gen *G, jitc_dtype t, LLVMValueRef slot, const char *name);
bool cx_involved(const Node *n);
LLVMValueRef cx_op(Gen *G, const Node *n, LLVMValueRef *args);
LLVMValueRef cx_mul(Gen *G, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cx_compare(Gen *G, OpId op, LLVMValueRef a, LLVMValueRef b);
#endif

/* cpu/host.c: the library's functions that generated code calls, which
** cpu/build.c shows the JIT by their addresses (the library exports
** jitc.h's names only).  CPU_HOST_SEM(code, dst, a0, a1, a2, m) runs the
** semantics (semantics.h, interp's code) of the operation that
** cpu_host_code(op, result type, operand type) encodes on m elements of
** arrays in memory's layout. */
#define CPU_HOST_SEM "jitc_cpu_sem"
static inline uint32_t cpu_host_code(OpId op, jitc_dtype r, jitc_dtype t) {
  return (uint32_t)op | (uint32_t)r << 16 | (uint32_t)t << 24;
}
typedef struct HostFn {
  const char *name;
  void (*fn)(void);
} HostFn;
extern const HostFn cpu_host_fns[];

/* What changes the code generated, besides the program and the machine,
** for the cache key: the constants and the build of each file. */
#define STR_(x) #x
#define STR(x) STR_(x)
extern const char cpu_gen_stamp[], cpu_math_stamp[], cpu_reduce_stamp[], cpu_convert_stamp[],
    cpu_complex_stamp[], cpu_rowacc_stamp[];

/* The scratch bytes a call of p's kernel needs (0: none; SIZE_MAX: out of
** memory): a split kernel keeps there the temporaries that cross groups,
** and the state of its reductions.
**
** A kernel with scratch or reductions finds, after its nparams parameter
** slots: the scratch's address (slot nparams), then for reductions the
** address of the Partials (nparams + 1) and their count per reduction, the
** number of blocks (nparams + 2).  Block b of reduction r writes Partial
** r * nblocks + b. */
size_t cpu_gen_scratch(const Program *p);

/* ---- cpu/build.c: building ---- */

/* The host, its machines, the vector libraries and the JIT of one context. */
typedef struct CpuBuild CpuBuild;
/* NULL with the reason in ctx's diagnostics (no LLVM, out of memory). */
CpuBuild *cpu_build_new(jitc_context *ctx);
void cpu_build_free(CpuBuild *b);
/* "znver3, x86-64-v3": the host's LLVM CPU and its level, for the device
** line (what a kernel's code is for is its compile info's `machine`). */
void cpu_build_describe(const CpuBuild *b, char *out, size_t n);
/* The vector width, in bits, of the machine k is compiled for: 512, 256 or
** 128 on x86-64 (by its level), 0 elsewhere. */
int cpu_build_vec_bits(jitc_context *ctx, CpuBuild *b, const jitc_kernel *k);
/* Compiles k (through the code cache) and loads it: *fn is its entry, and
** a call needs *scratch bytes of scratch memory (cpu_gen_scratch).  reads:
** {0, 0}, or the variant reading those arrays so (GenTarget.reads);
** rows: the row form (GenTarget.rows, cpu/rowacc.c) instead. */
jitc_status cpu_build_kernel(jitc_context *ctx, CpuBuild *b, jitc_kernel *k, Reads reads,
                             bool rows, KernelFn *fn, size_t *scratch);
/* ---- cpu/rowrun.c: the row form's runs ---- */

/* The row form's calls (cpu/rowacc.c): fold rows into the accumulators,
** combine two blocks' accumulators, finish them into Partials, or into the
** results (where red_row_direct); its parameter slots after the program's. */
enum { ROWS_FOLD, ROWS_COMBINE, ROWS_FINISH, ROWS_RESULT };
#define ROWS_SLOTS 6
/* Rows that one iteration of the row form's loop over the columns folds
** in turn, the accumulators held in registers: they are loaded and stored
** once for all of them, so that the loop is bound by the reads of the rows
** (measured: docs/PERFORMANCE.md, "Reductions over an axis on the CPU"). */
#define ROWS_AT_ONCE 8

/* Where the row form runs: the layout's kept axes [0, nk), the innermost
** of `cols` columns (each input's elements contiguous along it) within
** `outer` runs of the others; tiles of `tile` columns, ntiles per run, each
** tile's accumulators tile / W chunks of `chunk` bytes (red_row_bytes). */
typedef struct RowPlan {
  int nk;
  int64_t cols, outer, tile, ntiles;
  size_t chunk;
  bool direct; /* red_row_direct: the results written by the row form */
} RowPlan;
/* Fewer columns than this: the kernel, segment by segment. */
#define ROWS_MIN_COLS 4
/* Whether a run of p over L takes the row form, and its plan. */
bool rows_plan(const Layout *L, const Program *p, RowPlan *rp);
/* Runs the row form fn of p over L on the pool (threads as jitc_options
** says, `most` the most it may use), writing the results; *used: the
** threads that took part. */
jitc_status rows_run(jitc_context *ctx, Pool *pool, int threads, int most, KernelFn fn,
                     const Program *p, const Layout *L, const RowPlan *rp,
                     const ParamSlot *params, int *used);

/* --emit stage `stage` of target_cpu.stages. */
jitc_status cpu_build_emit(jitc_context *ctx, CpuBuild *b, jitc_kernel *k, int stage, Buf *out);

#endif
