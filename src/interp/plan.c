/*
** interp/plan.c -- the interp target's plan: the typed IR turned into lists
** of instructions over typed scratch buffers (interp/interp.h).
**
** Each statement becomes one instruction per distinct IR node, each writing
** a buffer of one block of elements; interp/exec.c runs every list over one
** block, then the next.  Buffers are reused as soon as their value's last
** use has passed, constants and scalar parameters are filled once per run
** when there are few of them, and a statement's value is computed straight
** into its array or temporary where that is safe, so that a program needs
** little scratch memory and few copies.  The program is valid (validate.c
** has checked it); this file only plans.
*/
#include "interp.h"

#include <stdlib.h>
#include <string.h>

/* Elements per block.  Smaller for programs with very many buffers, so the
** scratch memory stays bounded. */
enum { BLK_MAX = 1024, BLK_MIN = 16, SCRATCH_TARGET = 8 << 20 };

/* Constants and parameters are filled into their buffers once per run,
** unless there are more than this many distinct ones (huge generated
** programs); then each use is filled per block. */
enum { MAX_HOISTED = 256 };

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

void interp_plan_free(Plan *p) {
  if (!p) return;
  free(p->ins);
  free(p->init);
  free(p->esize);
  free(p);
}

typedef struct Builder {
  Plan *p;
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

/* The fields of a constant's value that its type uses, the others zero:
** so that equal constants compare equal as bytes. */
ConstVal const_val(const Node *n) {
  ConstVal k;
  memset(&k, 0, sizeof k);
  if (n->kind != N_CONST) return k;
  if (dtype_is_float(n->type))
    k.f = n->k.f;
  else if (dtype_is_complex(n->type))
    memcpy(k.z, n->k.z, sizeof k.z);
  else
    k.i = n->k.i;
  return k;
}

/* The hoisted buffer of a constant or parameter, or NO_BUF. */
static int hoisted_find(const Plan *p, const Node *n) {
  for (int k = 0; k < p->ninit; k++) {
    const Init *it = &p->init[k];
    if (it->type != n->type || it->param != (n->kind == N_PARAM)) continue;
    ConstVal k = const_val(n);
    if (it->param ? it->slot == n->slot : memcmp(&it->k, &k, sizeof k) == 0)
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
  it->k = const_val(n);
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
    in->k = const_val(n);
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
jitc_status interp_plan(jitc_context *ctx, const Program *prog, Plan **out) {
  *out = NULL;
  Plan *p = calloc(1, sizeof *p);
  if (!p) return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory");
  Builder B = {.p = p, .hoist = true};
  p->narrays = prog->narrays;
  p->esize = calloc((size_t)prog->narrays + 1, 1);
  p->esz = 8; /* int64, double: the widest real element */
  for (int t = 0; t < JITC_NDTYPES; t++)
    if ((prog->dtypes >> t & 1u) && jitc_dtype_size((jitc_dtype)t) > (size_t)p->esz)
      p->esz = (int)jitc_dtype_size((jitc_dtype)t);
  B.temp_buf = calloc((size_t)prog->ntemps + 1, sizeof(int));
  if (!p->esize || !B.temp_buf) goto oom;
  for (int k = 0; k < prog->narrays; k++)
    p->esize[k] = (uint8_t)jitc_dtype_size(prog->arrays[k].dtype);

  /* Pass 1: hoist constants and parameters while there are few of them. */
  for (int s = 0; s < prog->nstmts; s++) {
    memo_clear(&B);
    if (!count_uses(&B, prog->stmts[s].value)) goto oom;
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
    if (st->kind == IR_REDUCE) {
      int v = emit_value(&B, st->value, NO_BUF, 0);
      if (B.oom) goto oom;
      if (B.err) goto bad;
      Ins *in = emit_ins(&B);
      if (!in) goto oom;
      in->kind = I_REDUCE;
      in->op = (uint8_t)st->op;
      in->type = in->atype = (uint8_t)st->value->type;
      in->nargs = 1;
      in->arg[0] = v;
      in->dst = NO_BUF;
      in->slot = p->nreduce;
      p->nreduce++;
      continue;
    }
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
    size_t per = (size_t)(p->nbufs ? p->nbufs : 1) * (size_t)p->esz;
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
  interp_plan_free(p);
  return ctx_error(ctx, JITC_E_NOMEM, "interp: out of memory");
bad:;
  jitc_status st = ctx_error(ctx, JITC_E_INTERNAL, "interp: malformed program: %s", B.err);
  builder_free(&B);
  interp_plan_free(p);
  return st;
}

