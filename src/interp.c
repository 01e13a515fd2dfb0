/*
** interp.c -- the target `interp`: evaluates the typed IR directly.  It
** defines the semantics of the language; the cpu and cuda targets are
** tested against it.
**
** Evaluation is block-wise, as numexpr does it: compile() turns each
** statement into a list of instructions, one per IR node, each writing a
** typed scratch buffer of BLK elements; run() executes every instruction
** list over one block of elements, then the next block.  Each instruction
** is then a tight loop over a plain C array, so the dispatch cost is paid
** once per block rather than once per element, and 10 million elements take
** a fraction of a second.  Element-wise statements commute with blocking:
** running statement 1 then 2 over a block gives every element the same
** values as running both statements element by element.
**
** The operations themselves are semantics.h, shared with the constant
** folder: docs/language.md states each choice, semantics.h is its
** executable form.
*/
#include "jitc_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semantics.h"

/* ===================================================================== */
/* The plan: instructions over buffers                                    */
/* ===================================================================== */

/* Elements per block.  Smaller for programs with very many buffers, so the
** scratch memory stays bounded. */
enum { BLK_MAX = 1024, BLK_MIN = 16, SCRATCH_TARGET = 8 << 20 };

/* Constants and parameters are filled into their buffers once per run,
** unless there are more than this many distinct ones (huge generated
** programs); then each use is filled per block. */
enum { MAX_HOISTED = 256 };

typedef enum InsKind {
  I_OP,    /* op over args, into dst */
  I_COPY,  /* dst = args[0] (elements of `type`) */
  I_CONST, /* dst = constant value (per block: not hoisted) */
  I_PARAM, /* dst = params[slot] (per block: not hoisted) */
  I_INDEX, /* dst = begin + j */
  I_BOOL   /* dst = args[0] != 0: a bool array as loaded, normalised to 0/1 */
} InsKind;

/* A buffer id: >= 0 is scratch buffer `id`; < 0 is array -id-1 itself at
** the block's offset.  NO_BUF: no buffer (yet). */
enum { NO_BUF = -0x7fffffff };

typedef struct Ins {
  uint8_t kind;
  uint8_t op;
  uint8_t type;  /* result type */
  uint8_t atype; /* operand type (of args[1] for where) */
  int nargs;
  int dst;
  int arg[3];
  int slot;      /* I_PARAM */
  union {
    int64_t i;
    double f;
  } k;           /* I_CONST */
} Ins;

/* A constant or parameter filled once per run. */
typedef struct Init {
  int buf;
  uint8_t type;
  bool param;
  int slot;
  union {
    int64_t i;
    double f;
  } k;
} Init;

typedef struct Plan {
  Ins *ins;
  int nins, cap;
  Init *init;
  int ninit, initcap;
  int nbufs;       /* scratch buffers */
  int blk;         /* elements per block */
  int narrays;
  uint8_t *esize;  /* per array: bytes per element */
} Plan;

static bool grow(void **v, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*v, (size_t)ncap * elem);
  if (!p) return false;
  *v = p;
  *cap = ncap;
  return true;
}

static void plan_free(Plan *p) {
  if (!p) return;
  free(p->ins);
  free(p->init);
  free(p->esize);
  free(p);
}

/* ---- checking the IR's typing contract ----
** The checker guarantees operand types (see Node in jitc_int.h); a
** violation is a bug there, reported here rather than computed wrongly. */

static bool is_int(jitc_dtype t) { return t == JITC_INT32 || t == JITC_INT64; }
static bool is_flt(jitc_dtype t) { return t == JITC_FLOAT32 || t == JITC_FLOAT64; }
static bool is_dtype(int t) { return t >= 0 && t < JITC_NDTYPES; }

static const char *check_node(const Node *n) {
  if (!is_dtype(n->type)) return "node of unknown type";
  switch (n->kind) {
  case N_CONST:
  case N_LOAD:
  case N_PARAM:
  case N_TEMP:
    return NULL;
  case N_INDEX:
    return n->type == JITC_INT64 ? NULL : "index not int64";
  case N_OP:
    break;
  default:
    return "unknown node kind";
  }
  if ((int)n->op < 0 || n->op >= OP_COUNT) return "unknown op";
  const OpInfo *oi = &op_info[n->op];
  if (n->nargs != oi->arity) return "wrong operand count";
  for (int k = 0; k < n->nargs; k++)
    if (!n->args[k] || !is_dtype(n->args[k]->type)) return "missing operand";
  jitc_dtype r = n->type, a = n->args[0]->type;
  /* Operands other than where's condition and a cast's source share one type. */
  int first = n->op == OP_WHERE ? 1 : 0;
  jitc_dtype t = n->args[first]->type;
  if (n->op != OP_CAST)
    for (int k = first; k < n->nargs; k++)
      if (n->args[k]->type != t) return "operands of different types";
  switch (oi->rule) {
  case R_ARITH:
    if (r != t) return "result type differs from operands";
    if (t == JITC_BOOL && n->op != OP_ADD && n->op != OP_MUL) return "bool operands";
    return NULL;
  case R_ARITH_NB:
  case R_SAME_NB:
    if (r != t) return "result type differs from operands";
    return t == JITC_BOOL ? "bool operands" : NULL;
  case R_TRUEDIV:
  case R_FLOAT:
    if (r != t) return "result type differs from operands";
    return is_flt(t) ? NULL : "operands not float";
  case R_BITWISE:
    if (r != t) return "result type differs from operands";
    return is_flt(t) ? "float operands" : NULL;
  case R_SHIFT:
    if (r != t) return "result type differs from operands";
    return is_int(t) ? NULL : "operands not integer";
  case R_COMPARE:
  case R_PRED:
    return r == JITC_BOOL ? NULL : "result not bool";
  case R_SAME:
  case R_PROMOTE:
    return r == t ? NULL : "result type differs from operands";
  case R_WHERE:
    if (a != JITC_BOOL) return "condition not bool";
    return r == t ? NULL : "result type differs from operands";
  case R_CAST:
    return NULL;
  }
  return "unknown type rule";
}

/* ---- building the plan ---- */

typedef struct Builder {
  Plan *p;
  const Program *prog;
  int *temp_buf;   /* buffer of each temporary */
  int *free_bufs;  /* scratch buffers free for reuse within a statement */
  int nfree, freecap;
  int stmt_base;   /* first scratch buffer of statement-local ones */
  bool hoist;      /* constants and params filled once per run */
  /* Node -> buffer within the current statement (open addressing). */
  const Node **mkey;
  int *mval, *muses;
  int mcap;
  const char *err; /* a malformed program */
  bool oom;
} Builder;

static Ins *emit_ins(Builder *B) {
  Plan *p = B->p;
  if (!grow((void **)&p->ins, &p->cap, p->nins + 1, sizeof(Ins))) return NULL;
  Ins *in = &p->ins[p->nins++];
  memset(in, 0, sizeof *in);
  return in;
}

static int new_buf(Builder *B) {
  if (B->nfree > 0) return B->free_bufs[--B->nfree];
  return B->p->nbufs++;
}

static bool release_buf(Builder *B, int buf) {
  if (!grow((void **)&B->free_bufs, &B->freecap, B->nfree + 1, sizeof(int))) return false;
  B->free_bufs[B->nfree++] = buf;
  return true;
}

static size_t mhash(const Node *n, int cap) {
  uintptr_t x = (uintptr_t)n;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 7) & (size_t)(cap - 1);
}

/* Slot of n in the memo table (an empty slot if absent). */
static int mfind(Builder *B, const Node *n) {
  size_t h = mhash(n, B->mcap);
  while (B->mkey[h] && B->mkey[h] != n) h = (h + 1) & (size_t)(B->mcap - 1);
  return (int)h;
}

/* Enters every distinct node of a statement's value in the memo table with
** the number of its uses (edges from parents), growing the table as it
** goes.  Iterative: expressions may nest very deeply. */
static bool count_uses(Builder *B, const Node *root) {
  const Node **stack = NULL;
  int sp = 0, scap = 0, nnodes = 0;
  if (!grow((void **)&stack, &scap, 1, sizeof *stack)) return false;
  stack[sp++] = root;
  bool ok = true;
  while (sp > 0 && ok) {
    const Node *n = stack[--sp];
    if ((nnodes + 1) * 2 > B->mcap) {
      /* Rehash into a table twice the size. */
      int ncap = B->mcap ? B->mcap * 2 : 64;
      const Node **nk = calloc((size_t)ncap, sizeof *nk);
      int *nv = calloc((size_t)ncap, sizeof *nv), *nu = calloc((size_t)ncap, sizeof *nu);
      if (!nk || !nv || !nu) {
        free(nk), free(nv), free(nu);
        ok = false;
        break;
      }
      const Node **okey = B->mkey;
      int *oval = B->mval, *ouses = B->muses, ocap = B->mcap;
      B->mkey = nk, B->mval = nv, B->muses = nu, B->mcap = ncap;
      for (int k = 0; k < ocap; k++)
        if (okey[k]) {
          int s = mfind(B, okey[k]);
          nk[s] = okey[k], nv[s] = oval[k], nu[s] = ouses[k];
        }
      free(okey), free(oval), free(ouses);
    }
    int s = mfind(B, n);
    if (B->mkey[s]) {
      B->muses[s]++;
      continue;
    }
    B->mkey[s] = n;
    B->mval[s] = NO_BUF;
    B->muses[s] = 1;
    nnodes++;
    if (n->kind == N_OP) {
      if (!grow((void **)&stack, &scap, sp + n->nargs, sizeof *stack)) {
        ok = false;
        break;
      }
      for (int k = 0; k < n->nargs; k++)
        if (n->args[k]) stack[sp++] = n->args[k];
    }
  }
  free(stack);
  return ok;
}

static void memo_clear(Builder *B) {
  if (B->mcap) {
    memset(B->mkey, 0, (size_t)B->mcap * sizeof *B->mkey);
  }
}

/* The hoisted buffer of a constant or parameter, or NO_BUF. */
static int hoisted_find(const Plan *p, const Node *n) {
  for (int k = 0; k < p->ninit; k++) {
    const Init *it = &p->init[k];
    if (it->type != n->type || it->param != (n->kind == N_PARAM)) continue;
    if (it->param ? it->slot == n->slot
                  : is_flt(n->type) ? memcmp(&it->k.f, &n->k.f, sizeof(double)) == 0
                                    : it->k.i == n->k.i)
      return it->buf;
  }
  return NO_BUF;
}

/* Gives a constant or parameter a buffer filled once per run. */
static bool hoist(Builder *B, const Node *n) {
  Plan *p = B->p;
  if (hoisted_find(p, n) != NO_BUF) return true;
  if (!grow((void **)&p->init, &p->initcap, p->ninit + 1, sizeof(Init))) return false;
  Init *it = &p->init[p->ninit++];
  memset(it, 0, sizeof *it);
  it->buf = p->nbufs++;
  it->type = (uint8_t)n->type;
  it->param = n->kind == N_PARAM;
  it->slot = n->slot;
  if (is_flt(n->type))
    it->k.f = n->k.f;
  else
    it->k.i = n->k.i;
  return true;
}

/* Where node n's value is, without emitting an instruction: arrays,
** temporaries and hoisted values already have a buffer; NO_BUF if none.
** Bool arrays are not read in place: their bytes are normalised to 0/1. */
static int leaf_buf(Builder *B, const Node *n) {
  switch (n->kind) {
  case N_LOAD:
    return n->type == JITC_BOOL ? NO_BUF : -n->slot - 1;
  case N_TEMP:
    return B->temp_buf[n->slot];
  case N_CONST:
  case N_PARAM:
    return hoisted_find(B->p, n);
  default:
    return NO_BUF;
  }
}

/* Is buffer `buf` owned by the current statement (free it when dead)? */
static bool stmt_owned(Builder *B, int buf) { return buf >= B->stmt_base; }

/* Emits the instruction computing n into `dst` (a fresh scratch buffer when
** dst == NO_BUF); its operands' buffers are in argbuf. */
static int emit_node(Builder *B, const Node *n, const int *argbuf, int dst) {
  Ins *in = emit_ins(B);
  if (!in) return NO_BUF;
  if (dst == NO_BUF) dst = new_buf(B);
  in->dst = dst;
  in->type = (uint8_t)n->type;
  switch (n->kind) {
  case N_OP:
    in->kind = I_OP;
    in->op = (uint8_t)n->op;
    in->nargs = n->nargs;
    in->atype = (uint8_t)n->args[n->op == OP_WHERE ? 1 : 0]->type;
    for (int k = 0; k < n->nargs; k++) in->arg[k] = argbuf[k];
    break;
  case N_LOAD:
    /* Only bool arrays come here: normalise stray non-0/1 bytes. */
    in->kind = I_BOOL;
    in->nargs = 1;
    in->arg[0] = -n->slot - 1;
    break;
  case N_CONST:
    in->kind = I_CONST;
    if (is_flt(n->type))
      in->k.f = n->k.f;
    else
      in->k.i = n->k.i;
    break;
  case N_PARAM:
    in->kind = I_PARAM;
    in->slot = n->slot;
    break;
  case N_INDEX:
    in->kind = I_INDEX;
    break;
  default:
    B->err = "unexpected node";
    return NO_BUF;
  }
  return dst;
}

/* Emits a statement's value.  The root is computed into `want` when that
** is not NO_BUF (a temporary's buffer or the stored array); returns the
** buffer holding the value.  Post-order with an explicit stack. */
static int emit_value(Builder *B, const Node *root, int want, size_t want_size) {
  typedef struct {
    const Node *n;
    int next; /* next operand to visit */
  } Frame;
  Frame *st = NULL;
  int sp = 0, scap = 0, result = NO_BUF;
  if (!grow((void **)&st, &scap, 1, sizeof *st)) goto oom;
  st[sp++] = (Frame){root, 0};
  while (sp > 0) {
    Frame *f = &st[sp - 1];
    const Node *n = f->n;
    int s = mfind(B, n);
    if (B->mval[s] != NO_BUF && f->next == 0) {
      /* Already computed in this statement. */
      sp--;
      continue;
    }
    if (n->kind == N_OP && f->next < n->nargs) {
      const Node *a = n->args[f->next++];
      if (!grow((void **)&st, &scap, sp + 1, sizeof *st)) goto oom;
      st[sp++] = (Frame){a, 0};
      continue;
    }
    sp--;
    int buf = n->kind == N_OP ? NO_BUF : leaf_buf(B, n);
    if (buf == NO_BUF) {
      int argbuf[3] = {0, 0, 0};
      for (int k = 0; n->kind == N_OP && k < n->nargs; k++)
        argbuf[k] = B->mval[mfind(B, n->args[k])];
      int dst = NO_BUF;
      if (n == root && want != NO_BUF) {
        /* Computing straight into the destination is safe unless an
        ** operand lives there with another element size (a temporary read
        ** by its own new value). */
        dst = want;
        for (int k = 0; n->kind == N_OP && k < n->nargs; k++)
          if (argbuf[k] == want && jitc_dtype_size(n->args[k]->type) != want_size) dst = NO_BUF;
      }
      buf = emit_node(B, n, argbuf, dst);
      if (buf == NO_BUF) goto oom;
      /* Operands whose last use this was are free for later nodes. */
      for (int k = 0; n->kind == N_OP && k < n->nargs; k++) {
        int as = mfind(B, n->args[k]);
        if (--B->muses[as] == 0 && stmt_owned(B, B->mval[as]))
          if (!release_buf(B, B->mval[as])) goto oom;
      }
    }
    B->mval[s] = buf;
    if (n == root) result = buf;
  }
  free(st);
  return result;
oom:
  free(st);
  if (!B->err) B->oom = true;
  return NO_BUF;
}

/* Checks the statement's target and every distinct node of its value (the
** memo table holds them after count_uses). */
static const char *check_stmt(Builder *B, const IrStmt *st) {
  const Program *prog = B->prog;
  if (st->kind == IR_STORE) {
    if (st->slot < 0 || st->slot >= prog->narrays) return "store to unknown array";
    if (st->value->type != prog->arrays[st->slot].dtype)
      return "stored value's type differs from the array's";
  } else if (st->kind == IR_LET) {
    if (st->slot < 0 || st->slot >= prog->ntemps) return "unknown temporary";
    if (st->value->type != prog->temps[st->slot]) return "temporary's value of another type";
  } else {
    return "unknown statement kind";
  }
  for (int s = 0; s < B->mcap; s++) {
    const Node *n = B->mkey[s];
    if (!n) continue;
    const char *err = check_node(n);
    if (err) return err;
    if (n->kind == N_LOAD && (n->slot < 0 || n->slot >= prog->narrays ||
                              prog->arrays[n->slot].dtype != n->type))
      return "load of an unknown array, or with the wrong type";
    if (n->kind == N_TEMP && (n->slot < 0 || n->slot >= prog->ntemps ||
                              prog->temps[n->slot] != n->type))
      return "unknown temporary, or with the wrong type";
    if (n->kind == N_PARAM && (n->slot < 0 || n->slot >= prog->nparams ||
                               prog->params[n->slot].type != n->type))
      return "unknown parameter, or with the wrong type";
  }
  return NULL;
}

static void builder_free(Builder *B) {
  free(B->temp_buf);
  free(B->free_bufs);
  free(B->mkey);
  free(B->mval);
  free(B->muses);
}

/* Turns the program into a Plan.  Buffer layout: hoisted constants and
** parameters, then one buffer per temporary, then the statements' own
** buffers, reused across statements (a statement's intermediates die with
** it) and within one as their last use passes. */
static jitc_status build_plan(jitc_context *ctx, const Program *prog, Plan **out) {
  *out = NULL;
  Plan *p = calloc(1, sizeof *p);
  if (!p) return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory");
  Builder B = {.p = p, .prog = prog, .hoist = true};
  p->narrays = prog->narrays;
  p->esize = calloc((size_t)prog->narrays + 1, 1);
  B.temp_buf = calloc((size_t)prog->ntemps + 1, sizeof(int));
  if (!p->esize || !B.temp_buf) goto oom;
  for (int k = 0; k < prog->narrays; k++) {
    if (!is_dtype(prog->arrays[k].dtype)) {
      B.err = "array of unknown dtype";
      goto bad;
    }
    p->esize[k] = (uint8_t)jitc_dtype_size(prog->arrays[k].dtype);
  }

  /* Pass 1: validate, and hoist constants and parameters while there are
  ** few of them. */
  for (int s = 0; s < prog->nstmts; s++) {
    const IrStmt *st = &prog->stmts[s];
    if (!st->value) {
      B.err = "statement without value";
      goto bad;
    }
    memo_clear(&B);
    if (!count_uses(&B, st->value)) goto oom;
    if ((B.err = check_stmt(&B, st)) != NULL) goto bad;
    for (int q = 0; q < B.mcap && B.hoist; q++) {
      const Node *n = B.mkey[q];
      if (!n || (n->kind != N_CONST && n->kind != N_PARAM)) continue;
      if (!hoist(&B, n)) goto oom;
      if (p->ninit > MAX_HOISTED) {
        B.hoist = false;
        p->ninit = 0;
        p->nbufs = 0;
      }
    }
  }

  /* Temporaries own their buffers for the whole block. */
  for (int t = 0; t < prog->ntemps; t++) B.temp_buf[t] = p->nbufs++;

  /* Pass 2: the instructions. */
  int stmt_base = p->nbufs;
  for (int s = 0; s < prog->nstmts; s++) {
    const IrStmt *st = &prog->stmts[s];
    memo_clear(&B);
    if (!count_uses(&B, st->value)) goto oom;
    /* Every statement starts from the same free scratch buffers. */
    B.stmt_base = stmt_base;
    B.nfree = 0;
    int top = p->nbufs;
    for (int q = top - 1; q >= stmt_base; q--)
      if (!release_buf(&B, q)) goto oom;
    int want;
    size_t wsize;
    if (st->kind == IR_STORE) {
      want = -st->slot - 1;
      wsize = p->esize[st->slot];
    } else {
      want = B.temp_buf[st->slot];
      wsize = jitc_dtype_size(prog->temps[st->slot]);
    }
    int v = emit_value(&B, st->value, want, wsize);
    if (B.oom) goto oom;
    if (B.err) goto bad;
    if (v != want) {
      Ins *in = emit_ins(&B);
      if (!in) goto oom;
      in->kind = I_COPY;
      in->type = (uint8_t)st->value->type;
      in->nargs = 1;
      in->arg[0] = v;
      in->dst = want;
    }
  }

  /* The block size: BLK_MAX unless the scratch would outgrow SCRATCH_TARGET. */
  {
    size_t per = (size_t)(p->nbufs ? p->nbufs : 1) * 8;
    size_t blk = SCRATCH_TARGET / per;
    if (blk > BLK_MAX) blk = BLK_MAX;
    if (blk < BLK_MIN) blk = BLK_MIN;
    p->blk = (int)(blk & ~(size_t)15);
  }
  builder_free(&B);
  *out = p;
  return JITC_OK;

oom:
  builder_free(&B);
  plan_free(p);
  return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory");
bad:;
  jitc_status st = ctx_error(ctx, JITC_E_INTERNAL, "interp: malformed program: %s", B.err);
  builder_free(&B);
  plan_free(p);
  return st;
}

/* ===================================================================== */
/* Execution                                                              */
/* ===================================================================== */

/* One instruction: sem_exec with the instruction's op and types. */
static bool exec_op(const Ins *in, void *dst, const void *a0, const void *a1,
                    const void *a2, int m) {
  return sem_exec((OpId)in->op, (jitc_dtype)in->type, (jitc_dtype)in->atype, dst, a0, a1, a2, m);
}

/* A run's state: the scratch memory and where each array's block is. */
typedef struct RunState {
  const Plan *p;
  unsigned char *scratch;
  size_t stride;           /* bytes per scratch buffer */
  void *const *arrays;
  int64_t begin;
} RunState;

static inline void *buf_ptr(const RunState *rs, int id) {
  if (id >= 0) return rs->scratch + (size_t)id * rs->stride;
  int a = -id - 1;
  return (unsigned char *)rs->arrays[a] + (size_t)rs->begin * rs->p->esize[a];
}

/* Fills m elements of type t with a constant (ints in i, floats in f). */
static void fill_value(void *dst, jitc_dtype t, int64_t i, double f, int m) {
  switch (t) {
  case JITC_BOOL: fill_bool(dst, i != 0, m); break;
  case JITC_INT32: { int32_t *r = dst, v = (int32_t)i; for (int j = 0; j < m; j++) r[j] = v; } break;
  case JITC_INT64: { int64_t *r = dst; for (int j = 0; j < m; j++) r[j] = i; } break;
  case JITC_FLOAT32: { float *r = dst, v = (float)f; for (int j = 0; j < m; j++) r[j] = v; } break;
  case JITC_FLOAT64: { double *r = dst; for (int j = 0; j < m; j++) r[j] = f; } break;
  default: break;
  }
}

/* A parameter's value, as fill_value's (i, f). */
static void param_value(const ParamSlot *ps, jitc_dtype t, int64_t *i, double *f) {
  *i = 0;
  *f = 0;
  switch (t) {
  case JITC_BOOL: *i = ps->b != 0; break;
  case JITC_INT32: *i = ps->i32; break;
  case JITC_INT64: *i = ps->i64; break;
  case JITC_FLOAT32: *f = ps->f32; break;
  case JITC_FLOAT64: *f = ps->f64; break;
  default: break;
  }
}

static bool exec_block(const RunState *rs, const ParamSlot *params, int m) {
  const Plan *p = rs->p;
  for (int k = 0; k < p->nins; k++) {
    const Ins *in = &p->ins[k];
    void *dst = buf_ptr(rs, in->dst);
    switch ((InsKind)in->kind) {
    case I_OP: {
      const void *a0 = buf_ptr(rs, in->arg[0]);
      const void *a1 = in->nargs > 1 ? buf_ptr(rs, in->arg[1]) : NULL;
      const void *a2 = in->nargs > 2 ? buf_ptr(rs, in->arg[2]) : NULL;
      if (!exec_op(in, dst, a0, a1, a2, m)) return false;
      break;
    }
    case I_COPY: {
      const void *src = buf_ptr(rs, in->arg[0]);
      if (src != dst) memcpy(dst, src, (size_t)m * jitc_dtype_size((jitc_dtype)in->type));
      break;
    }
    case I_CONST:
      fill_value(dst, (jitc_dtype)in->type, in->k.i, in->k.f, m);
      break;
    case I_PARAM: {
      int64_t i;
      double f;
      param_value(&params[in->slot], (jitc_dtype)in->type, &i, &f);
      fill_value(dst, (jitc_dtype)in->type, i, f, m);
      break;
    }
    case I_INDEX: {
      int64_t *r = dst;
      for (int j = 0; j < m; j++) r[j] = rs->begin + j;
      break;
    }
    case I_BOOL: {
      uint8_t *r = dst;
      const uint8_t *x = buf_ptr(rs, in->arg[0]);
      for (int j = 0; j < m; j++) r[j] = x[j] != 0;
      break;
    }
    }
  }
  return true;
}

/* ===================================================================== */
/* The Target hooks                                                       */
/* ===================================================================== */

static jitc_status interp_available(jitc_context *ctx) {
  (void)ctx;
  return JITC_OK;
}

/* The CPU model from /proc/cpuinfo, kept in the context's target state. */
static const char *interp_device(jitc_context *ctx) {
  char **state = (char **)&ctx->target_state[JITC_TARGET_INTERP];
  if (*state) return *state;
  char model[256] = "";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) != 0) continue;
      const char *c = strchr(line, ':');
      if (!c) continue;
      c++;
      while (*c == ' ' || *c == '\t') c++;
      size_t len = strcspn(c, "\n");
      if (len >= sizeof model) len = sizeof model - 1;
      memcpy(model, c, len);
      model[len] = '\0';
      break;
    }
    fclose(f);
  }
  const char *name = model[0] ? model : "host CPU";
  *state = malloc(strlen(name) + 1);
  if (!*state) return "host CPU";
  strcpy(*state, name);
  return *state;
}

static jitc_status interp_compile(jitc_context *ctx, jitc_kernel *k) {
  double t0 = now_ms();
  Plan *p;
  jitc_status st = build_plan(ctx, k->prog, &p);
  if (st != JITC_OK) return st;
  k->impl = p;
  k->cinfo.ir_ms = now_ms() - t0;
  return JITC_OK;
}

static jitc_status interp_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                              void *const *arrays, const ParamSlot *params,
                              jitc_run_info *info) {
  const Plan *p = k->impl;
  if (!p) return ctx_error(ctx, JITC_E_USAGE, "interp: kernel not compiled");
  if (n <= 0 || p->nins == 0) return JITC_OK;
  RunState rs = {.p = p, .arrays = arrays};
  rs.stride = (size_t)p->blk * 8;
  /* 64-byte aligned scratch; at least one byte so malloc never sees 0. */
  size_t bytes = rs.stride * (size_t)p->nbufs + 64;
  void *raw = malloc(bytes);
  if (!raw) return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory (%zu bytes of scratch)", bytes);
  rs.scratch = (unsigned char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);

  for (int q = 0; q < p->ninit; q++) {
    const Init *it = &p->init[q];
    int64_t i = it->k.i;
    double f = it->k.f;
    if (it->param) param_value(&params[it->slot], (jitc_dtype)it->type, &i, &f);
    fill_value(rs.scratch + (size_t)it->buf * rs.stride, (jitc_dtype)it->type, i, f, p->blk);
  }
  jitc_status st = JITC_OK;
  for (int64_t b = 0; b < n; b += p->blk) {
    int m = n - b < p->blk ? (int)(n - b) : p->blk;
    rs.begin = b;
    if (!exec_block(&rs, params, m)) {
      st = ctx_error(ctx, JITC_E_INTERNAL, "interp: an operation of the program has no implementation");
      break;
    }
  }
  free(raw);
  (void)info;
  return st;
}

static void interp_release(jitc_kernel *k) {
  plan_free(k->impl);
  k->impl = NULL;
}

static void interp_shutdown(jitc_context *ctx) {
  free(ctx->target_state[JITC_TARGET_INTERP]);
  ctx->target_state[JITC_TARGET_INTERP] = NULL;
}

const Target target_interp = {
    .name = "interp",
    .available = interp_available,
    .device = interp_device,
    .compile = interp_compile,
    .run = interp_run,
    .stages = (const char *const[]){NULL},
    .release = interp_release,
    .shutdown = interp_shutdown,
};
