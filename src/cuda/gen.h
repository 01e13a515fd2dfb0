/*
** cuda/gen.h -- the cuda target's code generation, as the rest of the
** target sees it: typed IR (Program) in, CUDA C text out.
**
** Generation is pure: cuda/gen.c (expressions, statements, kernels),
** cuda/helpers.c (the device functions the kernels call) and cuda/plan.c
** (how a large program is cut into kernels) know nothing of devices,
** NVRTC, the environment or the cache.  Building
** (cuda/build.c) and running (cuda/run.c, cuda/host.c) include this file;
** generation never includes theirs.
*/
#ifndef JITC_CUDA_GEN_H
#define JITC_CUDA_GEN_H

#include "../jitc_int.h"

/* Threads per block: every kernel's __launch_bounds__ and every launch. */
enum { CUDA_BLOCK = 256 };

/* ---- cuda/helpers.c: the device functions ---- */

/* How every device function of the generated C begins. */
#define DEV "__device__ __forceinline__ "

/* The name generated code gives type t (types.h: CNAME), and that of the
** unsigned integer type of t's size, which holds its bits. */
static inline const char *cuda_ctype(jitc_dtype t) { return type_info[t].cname; }
const char *cuda_utype(jitc_dtype t);
/* The unsigned type integer arithmetic on t is done in: t's unsigned twin,
** or u32 for the types C promotes to int (whose products overflow int). */
const char *cuda_wtype(jitc_dtype t);
/* The typedefs of the types the code uses, and of their bits' types. */
void cuda_typedefs(Buf *b, unsigned dtypes);

/* A device function the generated code may call, emitted once per type
** and only when used.  The saturating casts (H_SAT32 from float32, H_SAT64
** from float64) are per integer type converted to; the 16-bit floats'
** conversions per 16-bit type: H_HALF to and from float32 exactly, NaN
** payloads included, for casts; H_HALFHW the hardware's, whose NaNs are
** its own, for arithmetic; H_HALF64 float16's from float64 (bfloat16's go
** through float32, as ml_dtypes'); H_ODD (an integer rounded
** to odd in float64) per 64-bit integer type.  For a 16-bit type, H_ISNAN,
** H_SIGNBIT, H_NANARG, H_STEP (ops.h's F_STEP) and the minimum family work on
** its bits.  H_MIXED: ldexp, frexp and modf.  From H_CARITH on, the helpers of a
** complex type (cuda/complex.c, cuda/cmath.c): H_CARITH its arithmetic,
** comparisons and picks; H_CEXP exp, H_CLOG log, H_CSQRT sqrt, H_CSINH sinh and
** sin, H_CCOSH cosh and cos, H_CTANH tanh and tan, H_CASINH arcsinh, arcsin,
** arccos and arccosh, H_CATANH arctanh and arctan, H_CPOW power, H_CFN expm1,
** log1p and sign. */
typedef enum CudaHelper { /* in the order of their texts, each after those it calls */
  H_HALF, H_HALFHW, H_HALF64, H_ODD, H_SAT32, H_SAT64, H_FLOORDIV, H_MOD, H_FMOD, H_POW,
  H_SHL, H_SHR, H_ISNAN, H_MINIMUM, H_MAXIMUM, H_FMIN, H_FMAX, H_CLIP, H_HYPOT, H_SIGNBIT,
  H_NANARG, H_STEP, H_MIXED, H_CARITH, H_CEXP, H_CLOG, H_CSQRT, H_CSINH, H_CCOSH, H_CTANH,
  H_CASINH, H_CATANH, H_CPOW, H_CFN, H_NHELPERS
} CudaHelper;

/* Marks helper h of type t used, with the helpers its text calls. */
void cuda_helper_use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t);
/* Appends the definition of helper h for type t (the conversions' are
** cuda_convert_text's). */
void cuda_helper_text(Buf *b, CudaHelper h, jitc_dtype t);

/* ---- cuda/convert.c: literals and conversions ---- */

/* float16 and bfloat16: held as their bits (struct f16 { u16 h; }), every
** operation done on their float32 values and rounded back. */
static inline bool cuda_is_half(jitc_dtype t) {
  return type_info[t].kind == T_FLOAT && type_info[t].size == 2;
}
/* Constant c as a C literal of its exact type and value (len >= 128: a
** complex one is c64{re, im}). */
void cuda_literal(char *out, size_t len, const Node *c);
/* v rounded to 16-bit float type t (nearest even, directly from double),
** as its bits and as a double. */
uint16_t cuda_half_bits(double v, jitc_dtype t);
double cuda_half_value(double v, jitc_dtype t);
/* The expression converting x (of type t) to type r: wrapping between
** integers, saturating from floats to integers, rounding once to 16-bit
** floats; the helpers it calls are marked in used. */
void cuda_cast(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], jitc_dtype r, jitc_dtype t,
               const char *x);
/* The text of helper h for type t if it is a conversion (H_SAT32, H_SAT64,
** H_HALF, H_HALFHW, H_HALF64, H_ODD), else nothing. */
void cuda_convert_text(Buf *b, CudaHelper h, jitc_dtype t);

/* ---- cuda/complex.c and cuda/cmath.c: complex64 and complex128 ---- */

/* The structs jitc_c64 and jitc_c128 (typedefs c64, c128) when dtypes has
** a complex type. */
void cuda_complex_typedefs(Buf *b, unsigned dtypes);
/* Marks complex helper h of complex type t used, with what its text calls. */
void cuda_complex_use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t);
/* Appends the text of complex helper h (H_CARITH, H_CPOW, H_CFN) for
** complex type t, and of the others (H_CEXP ... H_CATANH) cuda/cmath.c's. */
void cuda_complex_text(Buf *b, CudaHelper h, jitc_dtype t);
void cuda_cmath_text(Buf *b, CudaHelper h, jitc_dtype t);
/* Writes tpl for complex type t, its $ names replaced (see complex.c). */
void cuda_complex_tpl(Buf *b, const char *tpl, jitc_dtype t);
/* The cast of x from type t to r where either is complex (cuda_cast's). */
void cuda_complex_cast(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], jitc_dtype r, jitc_dtype t,
                       const char *x);
/* The expression of op n with a complex operand or result over operand
** expressions a[]; false for an op complex values do not have. */
bool cuda_complex_expr(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], const Node *n,
                       const char *const *a);
/* The functions of reduction st over complex elements (cuda/reduce.c's
** emit_one for them: jitc_pK, jitc_idK, jitc_stepK, jitc_cK, jitc_finK). */
void cuda_complex_reduce(Buf *b, const Program *p, const IrStmt *st);
/* ---- cuda/plan.c: a large program as several kernels ---- */

/* One kernel per group of statements: the groups, and what each touches. */
typedef struct CudaPlan {
  int ng;
  int *start;       /* group g is statements [start[g], start[g + 1]) */
  bool *cross;      /* per temporary: kept in scratch */
  size_t per_elem;  /* scratch bytes per element */
  size_t *temp_off; /* per temporary: its scratch offset per element of the range */
  /* Per group: the arrays it touches in slot order, with what it does
  ** (bit 1: loads, bit 2: stores), and the temporaries it reads from
  ** earlier groups or writes for later ones (bit 1: reads, bit 2: writes). */
  int **arr, *narr, **arr_use;
  int **tmp, *ntmp, **tmp_use;
  /* Per group: its reductions, by their numbers among the program's in the
  ** order of their result arrays (the order of their partials and of the
  ** kernel's parameters). */
  int **red, *nred;
} CudaPlan;

/* The plan of p, or NULL when p is one kernel (*oom tells out of memory). */
CudaPlan *cuda_plan_new(const Program *p, bool *oom);
void cuda_plan_free(CudaPlan *P);

/* ---- cuda/reduce.c: reductions in the kernels ---- */

/* Marks the helpers the reductions' functions call. */
void cuda_reduce_use(bool used[H_NHELPERS][JITC_NDTYPES], const Program *p);
/* Reductions a split program's combine kernel finishes: jitc_r0 the first
** CUDA_RCHUNK of them in the order of their arrays, jitc_r1 the next, ... */
enum { CUDA_RCHUNK = 16 };
/* A block's partial of one whole reduction (the kernels' jitc_part:
** accumulator and index) has a slot of CUDA_PART bytes whatever its type:
** the launcher places the partials of later launches by bytes
** (cuda/launch.c), and the kernels address them by the same bytes
** (jitc_at), so that a jitc_part keeps its own size: 16 bytes for most
** types (padding every partial to 32 doubled NVRTC's time on reductions).
** 32 holds a complex128 and its index.  A result is CUDA_RES bytes. */
enum { CUDA_PART = 32, CUDA_RES = 16 };
/* The typedef jitc_p<k> of a reduction's partial, accumulator type acc,
** and the assertion that it fits its slot. */
static inline void cuda_part_type(Buf *b, int k, const char *acc) {
  buf_printf(b, "typedef jitc_part<%s> jitc_p%d;\n"
                "static_assert(sizeof(jitc_p%d) <= %d && %d %% alignof(jitc_p%d) == 0, "
                "\"a partial fits its slot (cuda/gen.h)\");\n",
             acc, k, k, (int)CUDA_PART, (int)CUDA_PART, k);
}

/* Prints fmt for each reduction of `of` (its slot three times). */
typedef void (*CudaEach)(Buf *b, const void *of, const char *fmt);
/* A whole block's partials of the reductions `each` names combined in a
** fixed tree into lane 0's: warp shuffles, then one over the warps'
** partials in shared memory (one barrier); it ends inside `if
** (threadIdx.x < 32) {`'s shuffle loop, which the caller closes. */
void cuda_block_tree(Buf *b, CudaEach each, const void *of);
/* The partial type and device functions of every reduction (the prelude),
** and unless `split`, jitc_finish of them all. */
void cuda_reduce_text(Buf *b, const Program *p, bool split);
/* How many combine kernels cuda_reduce_kernel writes: jitc_r, or jitc_r0 ...
** of a split program; 0 without reductions. */
int cuda_reduce_nkernels(const Program *p, bool split);
/* For the reductions of statements [from, to): the kernel's partial
** pointer parameters, the accumulators' declarations, and after the
** element loop each block's partials. */
void cuda_reduce_params(Buf *b, const Program *p, int from, int to);
void cuda_reduce_init(Buf *b, const Program *p, int from, int to);
void cuda_reduce_tail(Buf *b, const Program *p, int from, int to);
/* jitc_k32's parameters for the last launch of a run (np: the partials of
** the run, 0 in the other launches; ntot: its elements; cnt: a counter at
** 0; then the results), and after the block partials the last block's
** combine (jitc_finish).  Runs on one stream use these. */
void cuda_reduce_final_params(Buf *b, const Program *p);
void cuda_reduce_last(Buf *b, const Program *p);
/* jitc_r: combines the partials of all blocks and writes the results, for
** runs whose partials come from several streams (the host pipeline) or no
** launch at all (n == 0); for a split program (`split`), whose partials
** come from its groups' kernels, jitc_r0, jitc_r1, ... do, CUDA_RCHUNK
** reductions each. */
void cuda_reduce_kernel(Buf *b, const Program *p, bool split);

/* ---- cuda/access.c: how the kernels reach the arrays' elements ---- */

/* What a kernel over device arrays of any strides (jitc_run_device_arrays)
** is specialised on (cuda/access.c says how it addresses them): the axes of
** the coalesced shape (layout.c), whether the flat index needs 64 bits
** (2^32 elements or more), and per array one of CUDA_CONTIG (element k at
** a + k), CUDA_BCAST (broadcast along the inner axis: its last stride is 0)
** and CUDA_STRIDED.  A NULL pattern, or one of contiguous arrays alone,
** gives the kernels of contiguous arrays. */
enum { CUDA_CONTIG = 'c', CUDA_BCAST = 'b', CUDA_STRIDED = 's' };
typedef struct CudaPattern {
  int nd;           /* 1 to JITC_MAXDIMS */
  bool wide;
  const char *kind; /* a letter per array of the program (a result's is not read,
                       but over axes with kd > 0: CUDA_STRIDED when it is reached
                       through the kept axes' strides) */
  int kd;           /* over axes: the kept axes of the results' strides, 0 when
                       every result is one contiguous run in segment order */
  bool tile;        /* element-wise programs: a block takes tiles of 32 elements
                       of the inner axis by 32 of the next (cuda_access_tile_body) */
} CudaPattern;
/* Whether pat reaches some array through its strides. */
bool cuda_pattern_any(const CudaPattern *pat, const Program *p);
/* The pattern as text: "2:scb" (axes, then a letter per array), ":64"
** added when wide, ":kD" when kd is D, ":t" when tiled (--emit's
** JITC_CUDA_PATTERN and the generated comment). */
void cuda_pattern_key(Buf *b, const CudaPattern *pat, const Program *p);
/* The struct jitc_nd of pat's shape and strides (nothing without strided
** arrays), and the kernels' parameter of it, or the argument when !decl. */
void cuda_access_struct(Buf *b, const Program *p, const CudaPattern *pat);
void cuda_access_nd_param(Buf *b, const Program *p, const CudaPattern *pat, bool decl);
/* The arrays as pointer parameters, then the scalars (a reduction's result
** is no parameter of the element-wise kernels: its partials are). */
void cuda_access_params(Buf *b, const Program *p);
/* Declares oK, the offset of element g (an expression of the flat index) in
** each strided array K among only[0..nonly) (NULL: all) that the kernel
** loads or stores (how: CUDA_LOADS | CUDA_STORES), its index unravelled
** once; each line starts with `ind`. */
enum { CUDA_LOADS = 1, CUDA_STORES = 2 };
void cuda_access_unravel(Buf *b, const Program *p, const CudaPattern *pat, const int *only,
                         int nonly, int how, const char *g, const char *ind);
/* The index of array k's element in its pointer: j, or oK when strided. */
const char *cuda_access_index(char *out, size_t len, const CudaPattern *pat, const Program *p,
                              int k, const char *j);
/* jitc_body of a tiled pattern (CudaPattern.tile): a block of CUDA_BLOCK
** threads per tile of 32 elements of the inner axis by 32 rows, tiles
** grid-stride, each element as cuda_access_element does it. */
void cuda_access_tile_body(Buf *b, const Program *p, const CudaPattern *pat);
/* The body of the one-element loops: element base + j of every array
** loaded (an output declared), jitc_elem, then the outputs stored. */
void cuda_access_one(Buf *b, const Program *p, const CudaPattern *pat);
/* The same at any flat index: element `flat` of the arrays unravelled
** (patterns with strides), jitc_elem given `i` as its index, each line
** indented by `ind`; cuda_access_one is it at base + j.  With `from`, the
** arrays loaded are not read from memory but from registers rK`from`
** (from "[k].v[t]": rK[k].v[t]), which the caller loaded. */
void cuda_access_element(Buf *b, const Program *p, const CudaPattern *pat, const char *flat,
                         const char *i, const char *from, const char *ind);
/* The loads (stores: !load) of vector step w of every array, into or from
** rK[u] (the reduction kernel's). */
void cuda_access_vec(Buf *b, const Program *p, const CudaPattern *pat, int vec, bool load);
/* The element-wise kernel's vector step w: loads, jitc_elem of each of its
** elements, stores. */
void cuda_access_vec_body(Buf *b, const Program *p, const CudaPattern *pat, int vec);
/* Array k's step along the innermost axis of the pattern, in elements, as
** an expression: nd's stride for a strided array, 0 for one broadcast
** along it, 1 for a contiguous one. */
const char *cuda_access_step(char *out, size_t len, const CudaPattern *pat, const Program *p,
                             int k);

/* ---- cuda/axis.c: reductions over axes ---- */

/* Elements of a piece: a segment longer than this is reduced piece by
** piece, the pieces' partials combined in order (cuda/axis.c).  At most
** the host pipeline's smallest chunk (4096), so that a chunk holds whole
** pieces. */
enum { CUDA_APIECE = 4096 };
/* The kernels of a program reducing over axes (Program.by_axis): jitc_a1,
** jitc_a32 and jitc_a256 (G threads per piece) and jitc_ac (a segment's
** pieces combined), over arrays of pattern pat (NULL: contiguous). */
void cuda_axis_kernels(Buf *b, const Program *p, const CudaPattern *pat);
/* The elements a lane of jitc_a256 takes together (cuda/axis.c), and
** whether array k is loaded by the kernels (an input, or read and written). */
int cuda_axis_group(const Program *p);
bool cuda_axis_loaded(const Program *p, int k);
/* The pieces of cuda/axis.c's kernels that the column form shares: the
** parameter of jitc_kept (when a result needs it); the index of result k's
** element of segment s; the partials' and results' parameters (decl) or
** arguments in the order of the results' slots (`in`: the partials are
** read); fmt (a format taking the slot up to four times) once per result. */
void cuda_axis_kept_param(Buf *b, const Program *p, const CudaPattern *pat, bool decl);
const char *cuda_axis_result_at(char *out, size_t len, const CudaPattern *pat, const Program *p,
                                int k);
void cuda_axis_red_params(Buf *b, const Program *p, bool decl, bool in);
void cuda_axis_per_result(Buf *b, const Program *p, const char *fmt);
/* Each result's element of segment s finished from its accumulator xK,
** a line each, indented by ind. */
void cuda_axis_finish_results(Buf *b, const Program *p, const CudaPattern *pat, const char *ind);
/* A thread's finished accumulators, at `ind`: where its segment is one
** piece (`pieces` == 1) the results (jitc_fin), else its partials by `part`
** (cuda_axis_per_result's format). */
void cuda_axis_store(Buf *b, const Program *p, const CudaPattern *pat, const char *ind,
                     const char *pieces, const char *part);

/* ---- cuda/axiscol.c: the column form of reductions over axes ---- */

/* jitc_acol: where the reduced axes are outer to the kept ones in memory
** (sum(x, axis=0) of a matrix in C order), consecutive threads take
** consecutive segments (columns), each folding a piece of its column's
** rows in order; the pieces' partials combined in order by jitc_ac. */
void cuda_axis_col_kernel(Buf *b, const Program *p, const CudaPattern *pat);

/* ---- cuda/gen.c: the kernels ---- */

/* Elements per vector step: the widest element fills `vbytes` bytes. */
int cuda_vec_width(const Program *p, int vbytes);

/* The CUDA C of p (src: its source, for comments; may be NULL) appended to
** out.  Without a plan: one kernel, jitc_k32, taking `vec` elements per
** vector step (with reductions, `unroll` steps' loads at once); stmt_line (p->nstmts entries, may be NULL) gets the line
** each statement starts on and *elem_end the last line of the statements,
** to map NVRTC's messages back to the source.  With a plan: one kernel per
** group, jitc_g0, jitc_g1, ...  pat: the arrays' strides (NULL: contiguous),
** the kernels then taking a jitc_nd last.  JITC_OK, JITC_E_NOMEM, or
** JITC_E_INTERNAL for an IR this generator does not know (a bug in the
** checker). */
jitc_status cuda_gen(const Program *p, const char *src, const CudaPlan *plan, int vec, int unroll,
                     const CudaPattern *pat, Buf *out, int *stmt_line, int *elem_end);

#endif /* JITC_CUDA_GEN_H */
