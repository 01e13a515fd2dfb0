/*
** jitc_int.h -- the internal header shared by the stages of the compiler.
**
** The pipeline, one file per stage:
**   tokenize.c  source text  -> tokens
**   parse.c     tokens       -> AST (untyped, as written)
**   check.c     AST          -> Program: typed IR with roles, casts explicit
**               (type.c: NumPy 2's typing of each operation)
**   validate.c  Program      -> checked against the typed IR's contract,
**               before any target sees it
**   fold.c      constant folding (with semantics.h, the scalar semantics)
**   dump.c      --emit tokens | ast | types (the typed IR's canonical text)
**   split.c     cutting a large program into groups (cpu, cuda)
** The targets, each a Target (below) in parts of one idea each:
**   interp      interp/plan.c builds a plan of vector instructions,
**               interp/exec.c runs it, interp/interp.c is the Target
**   cpu         cpu/gen.c (with cpu/math.c): IR -> LLVM IR; cpu/build.c:
**               optimise, machine code, ORC JIT; cpu/run.c: threads, Target
**   cuda        cuda/gen.c (cuda/helpers.c, cuda/plan.c): IR -> CUDA C;
**               cuda/device.c, cuda/build.c (NVRTC), cuda/launch.c,
**               cuda/host.c, cuda/devptr.c (the caller's device memory),
**               cuda/run.c (the Target) -- see cuda/cuda.h
** What every stage shares, below them all:
**   ops.h       the table of operators and functions (ops.c: as data)
**   vocab.c     dtype and status names; error.c: diagnostics, the error sink
**   util.c      the arena; env.c: the environment, read once per context
**   codecache.c the compile cache of every target (memory, disk)
**   runtime/    text, the host, threads, the CUDA loader (runtime.h)
** On top: jitc.c, the public library (jitc.h), tying the stages together.
** The command line (cli/) is a client of jitc.h and runtime.h.
** The sections below follow that order.
*/
#ifndef JITC_INT_H
#define JITC_INT_H

#include "jitc.h"
#include "../runtime/runtime.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NORETURN __attribute__((noreturn))
#else
#define NORETURN
#endif

/* An internal bug, not a user error: report and abort. */
#define unreachable() internal_error(__FILE__, __LINE__, "unreachable")
NORETURN void internal_error(const char *file, int line, const char *what);

/* ===================================================================== */
/* util.c                                                                 */
/* ===================================================================== */

/* An arena: every allocation of one compile, freed in one call.  On out of
** memory arena_alloc() returns NULL and sets a flag that arena_failed()
** reports. */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed; NULL on out of memory */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) PRINTF(2, 3);
bool arena_failed(const Arena *a);

/* npymath.c: float32 exp exactly as NumPy computes it on x86-64. */
float npy_expf(float x);

/* ===================================================================== */
/* vocab.c: the words every stage shares (with jitc.h's dtype and status */
/* functions, defined there too)                                          */
/* ===================================================================== */

/* One element of a complex type on the host: the real part, then the
** imaginary part, as NumPy lays out complex64 and complex128. */
typedef struct jitc_c64 {
  float re, im;
} jitc_c64;
typedef struct jitc_c128 {
  double re, im;
} jitc_c128;

/* types.h as data: one TypeInfo per jitc_dtype, indexed by it. */
typedef enum TypeKind { T_BOOL, T_SINT, T_UINT, T_FLOAT, T_COMPLEX } TypeKind;
typedef struct TypeInfo {
  const char *name, *shortname, *cname; /* NAME, SHORT, CNAME */
  TypeKind kind;
  int size;
  char chr;
  const char *descr, *ctype, *cuda, *llvm;
  int64_t lo;  /* LO: an integer type's least value */
  uint64_t hi; /* HI: its greatest */
} TypeInfo;
extern const TypeInfo type_info[JITC_NDTYPES];

bool dtype_is_int(jitc_dtype t);   /* signed or unsigned integers */
bool dtype_is_float(jitc_dtype t); /* real floating point */
bool dtype_is_complex(jitc_dtype t); /* complex64, complex128 */
/* The type of a complex type's parts (float32, float64); t itself otherwise. */
jitc_dtype dtype_part(jitc_dtype t);
/* The complex type whose parts have float type t (float32 and narrower:
** complex64), or t itself if it is complex. */
jitc_dtype dtype_complex_of(jitc_dtype t);
/* The type a name spells for --dtype and jitc_dtype_parse (NAME, SHORT, an
** ALIAS, NumPy's character or kind-and-size code), or -1.  NumPy's code
** wins: "i8" is int64, as np.dtype("i8"), though the cast i8() is int8;
** *ambiguous (if not NULL) says so. */
int dtype_lookup(const char *name, size_t len, bool *ambiguous);

/* ===================================================================== */
/* ops.h, ops.c: the operator and function table                         */
/* ===================================================================== */

typedef enum OpId {
#define OP(id, name, kind, arity, spell, prec, rule, libm, llvm, flags) OP_##id,
#include "ops.h"
#undef OP
  OP_COUNT
} OpId;

typedef enum OpKind { K_OPERATOR, K_FUNCTION, K_CAST, K_REDUCE } OpKind;

/* Binary operators' precedence, loosest first (the parser's levels). */
typedef enum Prec {
  P_NONE, P_COMPARE, P_BITOR, P_BITXOR, P_BITAND, P_SHIFT, P_SUM, P_TERM, P_UNARY, P_POWER
} Prec;

typedef enum TypeRule {
  R_ARITH, R_ARITH_NB, R_TRUEDIV, R_BITWISE, R_SHIFT, R_COMPARE, R_SAME,
  R_SAME_NB, R_FLOAT, R_PROMOTE, R_PRED, R_WHERE, R_CAST, R_LDEXP, R_EXPONENT,
  R_PART, R_CONJ, R_ANGLE, R_COMPLEX, R_LIKE,
  R_RSUM, R_RSAME, R_RMEAN, R_RBOOL, R_RARG /* reductions */
} TypeRule;

enum { F_AUG = 1, F_INT_ID = 2, F_NANARG = 4, F_NOID = 8, F_STEP = 16, F_TWO = 32,
       F_SECOND = 64, F_REAL = 128 };

/* The C library's functions of a row, by arity (NULL where it has none). */
typedef struct LibmFn {
  double (*d1)(double);
  float (*f1)(float);
  double (*d2)(double, double);
  float (*f2)(float, float);
  double (*d3)(double, double, double);
  float (*f3)(float, float, float);
} LibmFn;

/* One row of ops.h (see there for the columns). */
typedef struct OpInfo {
  const char *name;  /* --emit spelling */
  OpKind kind;
  int arity;
  const char *spell; /* operators: the symbol in the source */
  Prec prec;
  TypeRule rule;
  const char *libm;  /* float64 C function ("exp"; float32 adds "f"), or NULL */
  const char *llvm;  /* LLVM intrinsic ("llvm.floor"), or NULL */
  unsigned flags;    /* F_* */
  LibmFn fn;         /* the libm functions named by libm */
} OpInfo;
extern const OpInfo op_info[OP_COUNT];

/* The op of a function name of the language (aliases included), or -1.
** For casts, *cast_to gets the type and the op is OP_CAST. */
int op_lookup_function(const char *name, size_t len, jitc_dtype *cast_to);

/* ===================================================================== */
/* error.c: diagnostics                                                   */
/* ===================================================================== */

typedef struct Diag {
  jitc_status code;
  int line, col; /* 1-based; 0 without a position */
  int off;       /* byte offset in the source, -1 without a position */
  char *msg;     /* heap */
} Diag;

/* The diagnostics of one API call, owned by the context.  `text` is what
** jitc_errmsg() returns: every diagnostic formatted with the source line and
** a caret. */
typedef struct Diags {
  Diag *v;
  int n, cap;
  Buf text;
  char *name; /* heap: the source's name in messages; NULL: "<program>" */
} Diags;

void diags_clear(Diags *d);
/* Names the source in the messages that follow (NULL: "<program>"). */
void diags_set_name(Diags *d, const char *name);
/* A diagnostic at byte `offset` of `src` (src NULL or offset < 0: no
** position).  `name` labels the source in the text ("<program>"). */
void diag_add(Diags *d, jitc_status code, const char *src, int offset,
              const char *fmt, ...) PRINTF(5, 6);
void diag_vadd(Diags *d, jitc_status code, const char *src, int offset,
               const char *fmt, va_list ap);
/* Orders the diagnostics by position and rebuilds the text (after a stage
** that reports out of order, e.g. the lexer before the parser). */
void diags_sort(Diags *d, const char *src);
/* Adds an error without a source position to the context's diagnostics
** (the back ends' sink); returns code. */
jitc_status ctx_error(jitc_context *ctx, jitc_status code, const char *fmt, ...)
    PRINTF(3, 4);
/* 1-based line and column of byte `offset` of `src`. */
void src_position(const char *src, int offset, int *line, int *col);
/* The known name closest to `name` (edit distance), or NULL if none is close. */
const char *nearest_name(const char *name, const char *const *names, int n);
/* The name of names[] that `name` most likely mistypes, or NULL: stricter
** than nearest_name, for a name that is valid as it stands (an implicit
** input).  Both have 3 or more characters and differ by one edit (two from
** 7 characters on), an edit inserting, deleting or replacing a character or
** swapping two adjacent ones. */
const char *typo_of(const char *name, const char *const *names, int n);

/* ===================================================================== */
/* The state of one compile                                               */
/* ===================================================================== */

typedef struct Compiler {
  Arena *arena;   /* everything below lives here */
  Diags *diags;   /* errors go to the context */
  const char *src;
  int nerrors;
  /* the signature */
  const jitc_array_decl *arrays;
  int narrays;
  const jitc_scalar_decl *scalars;
  int nscalars;
  const jitc_options *opt;
} Compiler;

/* Reports a program error at byte offset `off` (exit 65). */
void error_at(Compiler *C, int off, const char *fmt, ...) PRINTF(3, 4);

/* ===================================================================== */
/* tokenize.c                                                             */
/* ===================================================================== */

typedef enum TokKind {
  TK_NAME,    /* identifier or keyword */
  TK_INT,     /* integer literal: ival (a literal above INT64_MAX is an error) */
  TK_FLOAT,   /* float literal: fval */
  TK_IMAG,    /* imaginary literal (2j, 1.5e-3J): fval is the imaginary part */
  TK_PUNCT,   /* operator or punctuation: text in src[off, off+len) */
  TK_NEWLINE, /* statement separator: newline or ';' */
  TK_ERROR,   /* a lexical error, already reported: the parser stays quiet */
  TK_EOF
} TokKind;

typedef struct Token {
  TokKind kind;
  int off, len; /* where in the source */
  int64_t ival;
  double fval;
} Token;

/* Splits the source into tokens ending with TK_EOF.  Lexical errors are
** reported and the bad characters skipped. */
Token *tokenize(Compiler *C, int *ntokens);
bool tok_is(const Compiler *C, const Token *t, const char *s);

/* ===================================================================== */
/* parse.c: the AST, as written                                           */
/* ===================================================================== */

typedef enum AstKind {
  A_INT,    /* ival */
  A_FLOAT,  /* fval */
  A_IMAG,   /* an imaginary literal: fval is its imaginary part */
  A_NAME,   /* name: array, scalar, constant, `i` or let temp */
  A_INDEX,  /* name[i] */
  A_UNARY,  /* op (OP_NEG, OP_INVERT) or pos (+x: op == -1) on args[0] */
  A_BINARY, /* op on args[0], args[1] */
  A_CALL,   /* name(args...): positional ones, then A_KEYWORD ones */
  A_KEYWORD, /* name=args[0], an argument of a call (a reduction's axis, keepdims) */
  A_TUPLE   /* (args...): a reduction's axes */
} AstKind;

typedef struct Ast {
  AstKind kind;
  int op;            /* OpId for unary and binary */
  int off;           /* source position (byte offset) of the node's token */
  const char *name;  /* A_NAME, A_INDEX, A_CALL */
  int nargs;
  struct Ast **args;
  int64_t ival;
  double fval;
  bool paren;        /* written in parentheses (for the comparison-chain check) */
  int depth;         /* height of the tree below (bounded by the parser) */
} Ast;

typedef enum StmtKind {
  S_ASSIGN, /* name = value, name[i] = value */
  S_AUG,    /* name op= value: op is the OpId */
  S_LET,    /* let name = value */
  S_EXPR,   /* a bare expression: assigned to `out` */
  S_TWO     /* name, name2 = value: the two results of a call */
} StmtKind;

typedef struct AstStmt {
  StmtKind kind;
  int op;
  int off;          /* position of the statement */
  int name_off;     /* position of the target name */
  const char *name; /* target (NULL for S_EXPR) */
  const char *name2; /* S_TWO: the second target */
  int name2_off;
  Ast *value;
  bool bad;         /* a syntax error was reported in it: the checker skips it */
} AstStmt;

typedef struct AstProgram {
  AstStmt *stmts;
  int nstmts;
} AstProgram;

AstProgram *parse(Compiler *C, Token *toks, int ntoks);

/* ===================================================================== */
/* check.c: the typed IR                                                  */
/* ===================================================================== */

typedef enum NodeKind {
  N_CONST, /* a constant of `type`: bool and ints in k.i (uint64 as its
              bits), floats in k.f (the value, exact in a double), complex
              in k.z (real part k.z[0], the same double as k.f, imaginary
              part k.z[1]; a complex64's parts exact in doubles) */
  N_LOAD,  /* element i of array `slot` */
  N_PARAM, /* scalar parameter `slot`, already of `type` */
  N_INDEX, /* the element index i (int64) */
  N_TEMP,  /* the value of temporary `slot` */
  N_OP     /* op applied to args; see below */
} NodeKind;

/* After checking, every N_OP node's operands have one type, the op's
** compute type, with these exceptions: OP_CAST (args[0] has any type, the
** node has the target type), OP_WHERE (args[0] is bool), OP_SHL/OP_SHR
** (both operands the result type), the comparisons and predicates (result
** bool, operands any one type).  So back ends never promote anything. */
typedef struct Node {
  NodeKind kind;
  OpId op;
  jitc_dtype type;
  int nargs;
  struct Node *args[3];
  int slot;
  union {
    int64_t i;
    double f;
    double z[2]; /* complex: real, imaginary */
  } k;
  int off; /* source position, for back-end messages */
} Node;

typedef enum IrStmtKind {
  IR_LET,   /* temps[slot] = value */
  IR_STORE, /* arrays[slot][i] = value; value->type == the array's dtype */
  IR_REDUCE /* arrays[slot] (role JITC_RESULT, one element) = the reduction
               `op` of value over all elements; value->type is the op's
               input type (reduce_input), the array's dtype its result type
               (reduce_result) */
} IrStmtKind;

/* The axes of a reduction, as its call gives them (sum(x, axis=(0, 2),
** keepdims=True)); what they mean for a shape is axis.c's.  `given`: an
** axis argument (else every axis, as without one); axes[0..n) as written,
** negative ones counting from the end, distinct, each in
** (-JITC_MAXDIMS, JITC_MAXDIMS); `tuple`: written as a tuple (a 0-d array
** takes axis=0 and axis=-1, but not (0,), as NumPy's); `keepdims`: the
** reduced axes stay in the result's shape as extents of 1. */
typedef struct IrAxes {
  bool given, tuple, keepdims;
  int n;
  int axes[JITC_MAXDIMS];
} IrAxes;

typedef struct IrStmt {
  IrStmtKind kind;
  int slot;
  Node *value;
  int off;
  OpId op; /* IR_REDUCE: the reduction (an op of kind K_REDUCE) */
  const IrAxes *axes; /* IR_REDUCE: over axes, or NULL: over every element
                         into one value of shape () (no axis, no keepdims) */
} IrStmt;

typedef struct IrArray {
  const char *name;
  jitc_role role;
  jitc_dtype dtype;
  bool provided; /* in the caller's signature (else an output it allocates) */
} IrArray;

typedef struct IrParam {
  const char *name;
  jitc_dtype type; /* the type the value has inside the kernel */
  bool weak;       /* declared weak: int64, float64 or bool, cast where used */
  int64_t fit_lo, fit_hi; /* a weak int meets narrower integer types: the
                          ** value must lie in [fit_lo, fit_hi] */
  int uses, u64_uses;    /* its references, and those converted to uint64
                          ** as they stand: a weak int of 2**63 or more fits
                          ** where every reference is one (bind.c) */
} IrParam;

/* The integer type a weak int's [fit_lo, fit_hi] is the range of (uint64's
** with fit_hi at INT64_MAX, as a parameter's bounds keep it), or NULL
** (type.c). */
const char *fit_type_name(const IrParam *pa);

/* A weak expression that involves weak scalars, to evaluate before each
** run (fold_eval): Python's integers would not overflow or divide by zero,
** and the value must fit `meets`, the strong type it is converted to. */
typedef struct IrCheck {
  const Node *value;
  jitc_dtype meets;
  int off; /* where it meets that type */
} IrCheck;

/* A checked program.  Arrays are in order of first appearance.  Within one
** element, statements run in order; a read of an array after it was
** assigned reads a temporary instead, so back ends load each array only
** before any store to it. */
typedef struct Program {
  IrArray *arrays;
  int narrays;
  IrParam *params;
  int nparams;
  jitc_dtype *temps;
  int ntemps;
  IrStmt *stmts;
  int nstmts;
  IrCheck *checks;
  int nchecks;
  int nreduce;     /* IR_REDUCE statements */
  bool by_axis;    /* some reduction has axes: every reduction reduces over
                      the same set of axes, and `i` is not read (axis.c) */
  unsigned dtypes; /* bit t: some value has dtype t (folded ones too) */
  const char **lang; /* the names read as the language's `i` or constants, that a
                        declaration would have taken over (jitc_kernel_language_name) */
  int nlang;
} Program;

Program *check(Compiler *C, AstProgram *ast);

/* Result type of NumPy promotion of two types. */
jitc_dtype promote(jitc_dtype a, jitc_dtype b);

/* A scalar parameter's value as the kernel receives it: 16 bytes, holding
** the value in the parameter's type at offset 0 (a complex value as its
** element: real part, then imaginary part, each of the part's type).
** Targets index the slots by sizeof(ParamSlot). */
typedef union ParamSlot {
  int64_t i64;
  int32_t i32;
  double f64;
  float f32;
  uint8_t b;
  uint64_t bits;
  jitc_c64 c64;
  jitc_c128 c128;
} ParamSlot;

/* ===================================================================== */
/* reduce.c: the semantics of reductions                                  */
/* ===================================================================== */

/* A reduction `op` (a K_REDUCE row of ops.h) over elements of type t:
** reduce_result() is NumPy's type of its result; reduce_input() the type
** the checker converts the elements to before they are accumulated (sum of
** bool or a signed integer: int64, of an unsigned one: uint64; mean of
** integers: float64; any, all: bool; else t); reduce_acc() the type of the
** accumulator over elements of that input type: float64 for sum and mean of
** float32, float16 and bfloat16 (more accurate than NumPy's pairwise sum),
** complex128 for those of complex64, float32 for products of float16 and
** bfloat16, else the input type. */
jitc_dtype reduce_result(OpId op, jitc_dtype t);
jitc_dtype reduce_input(OpId op, jitc_dtype t);
jitc_dtype reduce_acc(OpId op, jitc_dtype in);

/* A partial reduction of some elements: the accumulator (bool and integers
** in v.i, unsigned ones as their bits; floats in v.f, a float32 accumulator
** holding float32 values, exact in a double; complex: the real part in v.f
** and the imaginary part in im, as doubles however the accumulator is
** typed) and, for argmin and argmax, the index of the element it holds (-1:
** no element yet).  24 bytes; the cpu target's kernels write this layout
** (v at offset 0, idx at 8, im at 16; Partials sizeof(Partial) apart). */
typedef struct Partial {
  union {
    int64_t i;
    double f;
  } v;
  int64_t idx;
  double im;
} Partial;

/* `in` below is the op's input type (IrStmt.value->type). */
/* The partial of no elements. */
Partial reduce_identity(OpId op, jitc_dtype in);
/* Folds elements x[0..m) of type `in`, whose indices are first.., into *acc. */
void reduce_step(OpId op, jitc_dtype in, Partial *acc, const void *x, int64_t first, int m);
/* The partial of the elements of a and of b.  It does not depend on which
** came first: ties of argmin/argmax go to the lower index. */
Partial reduce_combine(OpId op, jitc_dtype in, Partial a, Partial b);
/* The partials p[0..np) combined in a fixed pairwise tree (the identity
** when np == 0): the same partials give the same bits. */
Partial reduce_tree(OpId op, jitc_dtype in, const Partial *p, int64_t np);
/* Writes the result of acc, the reduction of n elements, as one element of
** type reduce_result(op, ...) at out (mean divides by n). */
void reduce_finish(OpId op, jitc_dtype in, Partial acc, int64_t n, void *out);
/* Every reduction of p, in statement order r = 0, 1, ...: its partials
** part[r * nblocks ..][0..nblocks) combined and finished into its result
** array (arrays[slot]); part NULL: the identity, for n == 0. */
void reduce_results(const Program *p, int64_t n, const Partial *part, int64_t nblocks,
                    void *const *arrays);
typedef struct Layout Layout; /* layout.c */
/* reduce_results() for segment s of L (Layout.axes), of seg elements, into
** the results' elements of s (layout_result); reduce_segments for count
** segments from s0, s0 + k's Partials at part + k * nreduce * nblocks. */
void reduce_segment(const Program *p, int64_t seg, const Partial *part, int64_t nblocks,
                    const Layout *L, int64_t s);
void reduce_segments(const Program *p, int64_t seg, const Partial *part, int64_t nblocks,
                     const Layout *L, int64_t s0, int64_t count);

/* axis.c: the axes of p's reductions for a broadcast shape of nd
** dimensions: red[d] says axis d is reduced (they share one set; none
** without reductions), or NumPy's AxisError and duplicate-axis errors
** (JITC_E_INPUT, naming the reduction and its result).  axes_result_shape:
** the shape of result array j for that shape: () for a whole reduction,
** else the shape without the reduced axes, or with extents of 1 for them
** under keepdims. */
jitc_status axes_resolve(jitc_context *ctx, const Program *p, int nd, bool *red);
void axes_result_shape(const Program *p, int j, int nd, const int64_t *shape, const bool *red,
                       int *rnd, int64_t *rshape);

/* split.c: cuts the statements into groups of about `budget` nodes each:
** group g is statements [start[g], start[g + 1]) (start has nstmts + 2
** entries).  cross[t] (ntemps entries) tells whether temporary t is read by a
** group other than the one computing it; *per_elem gets the bytes those take
** per element.  Returns the number of groups, -1 when out of memory. */
int split_program(const Program *p, int budget, int *start, bool *cross, size_t *per_elem);
/* What a reduction's statement costs beyond its nodes: its state and its
** combine at the end of a block (W vector lanes and a tree of shuffles on
** the cpu, a tree of warp shuffles on cuda) are code the size of about
** this many operations, more than the one operation of each element. */
#define SPLIT_REDUCE_COST 16

/* The JIT targets' kernel entry point: runs elements [begin, end). */
typedef void (*KernelFn)(int64_t begin, int64_t end, void *const *arrays,
                         const ParamSlot *params);

/* ===================================================================== */
/* validate.c: the IR validator                                           */
/* ===================================================================== */

/* Checks that p keeps the contract of the typed IR (Node, Program above)
** that the back ends rely on: JITC_OK, else JITC_E_INTERNAL with the
** reason (a bug in the front end).  jitc.c runs it before every target. */
jitc_status validate_program(jitc_context *ctx, const Program *p);

/* ===================================================================== */
/* fold.c: constant folding, with the run-time semantics                 */
/* ===================================================================== */

typedef enum FoldStatus {
  FOLD_OK,
  FOLD_UNKNOWN,  /* not a foldable node */
  FOLD_OVERFLOW, /* weak int result outside int64 */
  FOLD_ZERODIV,  /* weak division by zero */
  FOLD_NEGSHIFT, /* weak shift by a negative count */
  FOLD_NEGPOW,   /* weak int ** a negative weak int known only at run time */
  FOLD_CPOWOVER, /* weak complex ** with an infinite part (Python's OverflowError) */
  FOLD_CPOWDOM,  /* weak complex ** at an infinite phase (Python's ZeroDivisionError) */
  FOLD_NOORDER   /* weak complex values compared by order (Python's TypeError) */
} FoldStatus;

/* Applies n's op (an N_OP of the typed IR) to the constants args (of n's
** operand types) into *out, an N_CONST of n's type with n's position.
** `python`: n is an operator on weak values, refused where Python's answer
** would differ (FoldStatus). */
/* A constant's value as a run receives it: the bits of its type in a slot. */
void const_slot(const Node *c, ParamSlot *out);
FoldStatus fold_op(const Node *n, const Node *const *args, bool python, Node *out);
/* Evaluates a weak expression of p with the scalars' values; *where gets
** the position of the operator that failed. */
FoldStatus fold_eval(const Program *p, const Node *n, const ParamSlot *params, Node *out,
                     int *where);
const char *fold_message(FoldStatus st);

/* ===================================================================== */
/* dump.c: --emit tokens | ast | types                                    */
/* ===================================================================== */

void dump_tokens(Buf *b, const Compiler *C, const Token *t, int n);
void dump_ast(Buf *b, const AstProgram *p);
/* The typed IR as canonical text: also the key of the compile caches. */
void dump_program(Buf *b, const Program *p);
void dump_node(Buf *b, const Program *p, const Node *n);

/* ===================================================================== */
/* Targets                                                                */
/* ===================================================================== */

/* What a target implements.  Each lives in its own file and knows nothing
** of the others; jitc.c picks one by jitc_target. */
typedef struct Target {
  const char *name;
  /* JITC_OK, or JITC_E_UNAVAILABLE with the reason added to ctx's diags. */
  jitc_status (*available)(jitc_context *ctx);
  /* A short description of the device ("AMD ... (16 CPUs, ...)", "NVIDIA H200"). */
  const char *(*device)(jitc_context *ctx);
  /* Compiles k->prog; sets k->impl and the back-end times in k->cinfo. */
  jitc_status (*compile)(jitc_context *ctx, jitc_kernel *k);
  /* Runs over [0, n). */
  jitc_status (*run)(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                     void *const *arrays, const ParamSlot *params,
                     jitc_run_info *info);
  /* Its --emit stages, in pipeline order after the front end's (tokens,
  ** ast, types): NULL-terminated.  This list is the only place that names
  ** them. */
  const char *const *stages;
  /* Appends stages[stage] of k to out (NULL when the list is empty). */
  jitc_status (*emit)(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out);
  /* Frees k->impl. */
  void (*release)(jitc_kernel *k);
  /* Frees the target's per-context state (ctx->target_state[t]). */
  void (*shutdown)(jitc_context *ctx);
  /* Device-resident arrays (NULL where the target has none).  buffer_new
  ** allocates b->n elements of b->dtype and sets b->impl (the wrapper has
  ** filled ctx, target, dtype, n); buffer_copy moves elements [off, off+n)
  ** to (upload) or from the host; buffer_free frees b->impl, not b;
  ** run_buffers is run() over bufs[k] for array k, already checked by
  ** the target for dtype and length. */
  jitc_status (*buffer_new)(jitc_context *ctx, jitc_buffer *b);
  jitc_status (*buffer_copy)(jitc_context *ctx, jitc_buffer *b, void *host, int64_t off,
                             int64_t n, bool upload);
  void (*buffer_free)(jitc_buffer *b);
  jitc_status (*run_buffers)(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                             jitc_buffer *const *bufs, const ParamSlot *params,
                             jitc_run_info *info);
  /* Pins host memory for the target's copies, and undoes it (NULL where
  ** the target works on host memory: jitc_host_pin). */
  jitc_status (*host_pin)(jitc_context *ctx, void *p, size_t bytes);
  jitc_status (*host_unpin)(jitc_context *ctx, void *p);
  /* Whether run, run_buffers and run_device compute IR_REDUCE statements. */
  bool reduces;
  /* Whether it compiles programs with complex64 or complex128 values (a
  ** program with them is refused before compile and emit otherwise). */
  bool complex;
  /* Whether run_layout moves a transposed array in bands of whole rows
  ** whose blocks start where layout_phase says (cpu/run.c): layout_new
  ** then lets the arrays read decide the order of the axes, and tiles.c
  ** scatters the written ones in tiles of lines (Layout.bands, and
  ** Layout.vec, which the cpu target sets for its kernel's level). */
  bool bands;
  /* jitc_run_device (NULL where the target has no device): the caller's
  ** device pointers, already checked for NULL and alignment, n > 0. */
  jitc_status (*run_device)(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const ParamSlot *params, void *stream);
  /* run() over host arrays of any layout (layout.c), L->n > 0 and some
  ** array not direct; NULL: the target refuses such a run. */
  jitc_status (*run_layout)(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                            const ParamSlot *params, jitc_run_info *info);
  /* jitc_run_device_arrays where some array is not direct (L's bases are
  ** the caller's device addresses; L->n > 0), queued on the caller's
  ** stream; NULL: the target refuses such a run. */
  jitc_status (*run_device_layout)(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                   const ParamSlot *params, void *stream);
} Target;

extern const Target target_interp;
extern const Target target_cpu;
extern const Target target_cuda;
/* The table of target t (jitc.c: the one list of the targets). */
const Target *target_of(jitc_target t);

/* ===================================================================== */
/* env.c: the environment, read once per context                         */
/* ===================================================================== */

/* Every environment variable that changes behaviour (docs/environment.md). */
typedef struct Env {
  char *cpu;             /* JITC_CPU: the default of jitc_options.cpu */
  bool sleef_only;       /* JITC_VECMATH=sleef: vector math from SLEEF only */
  char *cache_dir;       /* JITC_CACHE_DIR, else $XDG_CACHE_HOME/jitc or ~/.cache/jitc, or NULL */
  char *libcuda;         /* JITC_LIBCUDA: the CUDA driver library to load */
  char *libnvrtc;        /* JITC_LIBNVRTC: the NVRTC library to load */
  char *cuda_home;       /* CUDA_HOME, else CUDA_PATH: where NVRTC is looked for */
  int cuda_device;       /* JITC_CUDA_DEVICE: the GPU's ordinal (0) */
  bool cuda_device_set;  /* JITC_CUDA_DEVICE is set */
  char *devices;         /* JITC_DEVICES: the GPUs of runs over host arrays ("0,1") */
  /* Tuning of the cuda target, for measurements (docs/environment.md). */
  int cuda_vbytes;       /* JITC_CUDA_VBYTES: bytes per thread per array (16) */
  int cuda_vec;          /* JITC_CUDA_VEC: 0 turns vector loads off (1) */
  int cuda_waves;        /* JITC_CUDA_WAVES: grid size in waves, 0 = auto */
  int cuda_runroll;      /* JITC_CUDA_RUNROLL: vector steps loaded at once with reductions (4) */
  int cuda_copy_threads; /* JITC_CUDA_COPY_THREADS: host copy threads (0: the machine's) */
  int cuda_chunk_mb;     /* JITC_CUDA_CHUNK_MB: host pipeline chunk, MiB (0: by size) */
  char *nvrtc_extra;     /* JITC_NVRTC_EXTRA: one more NVRTC option */
  char *cuda_pattern;    /* JITC_CUDA_PATTERN: --emit cuda|ptx of the kernel for device
                            arrays of this pattern ("2:sc"; cuda/access.c), whose parts: */
  struct { int nd, nletters, kd; const char *letters; bool wide, tile; } pattern;
  char bad[300];         /* the first variable with a bad value, as a message */
  bool oom;
} Env;

bool env_read(Env *e); /* false when out of memory */
void env_free(Env *e);

/* ===================================================================== */
/* codecache.c: the compile cache of every target                        */
/* ===================================================================== */

/* What a target compiles, for code_get(). */
typedef struct CodeBuild {
  const char *ns;  /* the target's namespace: "cpu", "cuda" */
  const char *key; /* everything that changes the code (any bytes) */
  size_t keylen;
  /* Compiles: a malloc'ed payload (object code, a CUBIN) in *data, *len. */
  jitc_status (*build)(jitc_context *ctx, void *arg, void **data, size_t *len);
  /* Loads a payload; *code is the handle the memory table keeps. */
  jitc_status (*load)(jitc_context *ctx, void *arg, const void *data, size_t len, void **code);
  /* Frees a handle when the context goes; NULL when there is nothing to free. */
  void (*unload)(jitc_context *ctx, void *code);
  void *arg;
} CodeBuild;

/* The loaded code of b: from the context's memory table, else from the
** disk cache (opt->cache_dir or the environment's; not with opt->no_cache),
** else built and stored on disk (best effort).  ci->cache gets "memory",
** "disk", "miss" or "none" and ci->load_ms the loading time; build sets
** the other times.  A disk entry that does not load is built afresh. */
jitc_status code_get(jitc_context *ctx, const jitc_options *opt, const CodeBuild *b,
                     void **code, jitc_compile_info *ci);

typedef struct CodeEntry CodeEntry;
typedef struct CodeCache {
  CodeEntry *bucket[64];
} CodeCache;
/* Unloads every entry (before the targets shut down). */
void code_cache_free(jitc_context *ctx);

/* ===================================================================== */
/* bind.c: a run's scalar values                                          */
/* ===================================================================== */

/* Converts every scalar value of a run into its parameter's slot (slots has
** room for all): JITC_OK, or a usage error added to ctx. */
jitc_status bind_scalars(jitc_context *ctx, const Program *p, const jitc_value *scalars,
                         ParamSlot *slots);
/* The weak expressions of scalars (Program.checks) with the values bound:
** refused where Python's value would differ from jitc's int64 / float64
** one, or where an integer does not fit the int32 it meets. */
jitc_status bind_check_weak(jitc_context *ctx, const jitc_kernel *k, const ParamSlot *slots);

/* ===================================================================== */
/* jitc.c: the library                                                    */
/* ===================================================================== */

struct jitc_context {
  Diags diags;                           /* of the last failed call */
  Env env;                               /* read when the context was made */
  CodeCache codes;                       /* compiled code, every target's */
  char *cache_dir;                       /* jitc_cache_dir()'s answer */
  void *target_state[JITC_NTARGETS];     /* owned by each target */
};

struct jitc_kernel {
  jitc_context *ctx;
  Arena *arena;        /* the program and its IR */
  const char *source;  /* copy of the source, in the arena */
  const char *source_name; /* its name in messages, in the arena */
  Program *prog;
  char *key;           /* dump_program() text, in the arena */
  jitc_options opt;
  const Target *target;
  void *impl;          /* the target's compiled code */
  jitc_compile_info cinfo;
};

/* A device-resident array (jitc_buffer_new). */
struct jitc_buffer {
  jitc_context *ctx;
  jitc_target target;
  jitc_dtype dtype;
  int64_t n;
  void *impl; /* the target's handle (cuda: the CUdeviceptr) */
};


#endif /* JITC_INT_H */
