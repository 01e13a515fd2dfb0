/*
** check.h -- what the two halves of the checker share: check.c (names,
** roles, statements) and type.c (NumPy 2's typing of each operation).
** Private to those two files.
*/
#ifndef JITC_CHECK_H
#define JITC_CHECK_H

#include "jitc_int.h"

/* A typed value during checking: a node, and whether it is weak. */
typedef struct Val {
  Node *n;
  bool weak;
  bool bad; /* an error was reported below: report nothing more about it */
} Val;

/* A name the program uses. */
typedef enum SymKind { SYM_ARRAY, SYM_PARAM, SYM_TEMP } SymKind;

typedef struct Sym {
  const char *name;
  SymKind kind;
  int slot;       /* array, param or temp index */
  bool weak;      /* temps: holds a weak value */
  Node *konst;    /* temps: the weak constant it holds, or NULL */
  int current;    /* arrays: temp holding the value assigned so far, or -1 */
  bool read, assigned, read_first;
  jitc_dtype dtype;
  bool has_dtype; /* arrays: dtype known (declared, or from the first assignment) */
  bool provided;
  bool poisoned;  /* defined by a statement that failed: uses stay quiet */
  bool reduced;   /* arrays: a reduction's result (JITC_RESULT) */
  OpId red_op;    /* which reduction, for messages */
  int first_off;
  struct Sym *next;  /* program order */
  struct Sym *hnext; /* hash chain */
} Sym;

#define SYM_BUCKETS 4096 /* a power of two */

typedef struct Checker {
  Compiler *C;
  unsigned dtypes;    /* bit t: a node of dtype t was made (Program.dtypes) */
  const jitc_options *opt;
  Sym *syms, *last;   /* in program order */
  Sym **buckets;      /* SYM_BUCKETS chains: lookups stay O(1) in long programs */
  int narrays, nparams, ntemps, nreduce;
  /* growable IR statement list and temp types, rebuilt in the arena */
  IrStmt *stmts;
  int nstmts, cap;
  jitc_dtype *temps;
  int tcap;
  IrParam *params; /* indexed by param slot */
  int pcap;
  IrCheck *checks; /* weak expressions of scalars, checked before each run */
  int nchecks, ccap;
  const char **lang; /* names read as the language's i or constants (Program.lang) */
  int nlang, lcap;
  int first_reduce; /* 1 + the statement of the first reduction, or 0 */
  bool index_used;  /* the program reads `i`, first at index_off */
  int index_off;
  AstProgram *ast; /* for "read before it is assigned" */
  int stmt;        /* index of the statement after the one being checked */
} Checker;

static inline const char *tname(jitc_dtype t) { return jitc_dtype_name(t); }

/* check.c: grows an arena array of the checker to `need` elements. */
bool checker_grow(Checker *K, void **v, int *cap, int need, size_t elem);

/* type.c */
Node *new_node(Checker *K, NodeKind kind, jitc_dtype type, int off);
/* The value of an expression that failed to type: later checks stay quiet. */
Val bad_val(Checker *K, int off);
/* v as type t: a cast node, or a converted constant. */
Node *convert(Checker *K, Val v, jitc_dtype t);
/* A weak value meeting the strong type t; `meets` names what has type t. */
Node *convert_weak_to(Checker *K, Val v, jitc_dtype t, const char *meets);
/* Types op applied to checked operands v[0..n) (`off`: the operator;
** cast_to: a cast's type; call: written as a function call). */
Val apply(Checker *K, OpId op, int off, Val *v, int n, jitc_dtype cast_to, bool call);
/* x ** y and power(x, y), with NumPy's fast paths. */
Val check_power(Checker *K, int off, Val *v, bool call);
/* fabs(x) of a checked operand: np.fabs, which has float loops alone. */
Val check_fabs(Checker *K, int off, Val *v);
/* ldexp(x, n) of checked operands, NumPy's loops (R_LDEXP). */
Val check_ldexp(Checker *K, int off, Val *v);
/* A two-result function (ops.h: F_TWO) of x: x in the type the rows
** compute in, and *t, the type of the float results (two_operand); the
** value of result row `op` of that operand (two_result). */
Node *two_operand(Checker *K, Val x, jitc_dtype *t);
Node *two_result(Checker *K, OpId op, int off, Node *x, jitc_dtype t);
/* Reports that op has no loop for complex type t (ops.h: F_REAL). */
Val complex_refused(Checker *K, OpId op, int off, jitc_dtype t, bool call);
/* Whether a value of type `from` may convert to `to`: complex only to
** complex or bool (NumPy's other conversions discard the imaginary part, with
** a ComplexWarning); else reports at off (`into`: what is converted to, for
** the message, or NULL). */
bool complex_converts(Checker *K, jitc_dtype from, jitc_dtype to, int off, const char *into);
/* NumPy's same-kind casting rule, for in-place operators. */
bool same_kind(jitc_dtype from, jitc_dtype to);

/* axis.c: a reduction's arguments.  reduce_args reads call (of reduction
** op): *operand gets its operand, *axes its axes (NULL: none, the whole
** reduction); false after reporting an error (*operand NULL or the operand
** to check still).  axes_note checks reduction statement `stmt`, at `off`,
** against the program's first (one set of axes); axes_finish sets
** p->by_axis and refuses `i` beside it.  misplaced_arg reports a keyword
** argument or a tuple where no reduction takes it, misplaced_reduction a
** reduction (call, of op) that is not the whole value of an assignment. */
bool reduce_args(Checker *K, Ast *call, OpId op, Ast **operand, const IrAxes **axes);
void axes_note(Checker *K, int stmt, int off);
void axes_finish(Checker *K, Program *p);
Val misplaced_arg(Checker *K, const Ast *a);
void misplaced_reduction(Checker *K, const Ast *call, OpId op);

#endif /* JITC_CHECK_H */
