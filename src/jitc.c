/*
** jitc.c -- the public library (jitc.h): contexts, the compile pipeline
** (tokenize -> parse -> check -> target), errors as values, kernel queries
** and runs.  This file is the only one that knows every stage; each stage
** and each target knows only what it consumes.
*/
#include "jitc_int.h"
#include "layout.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef JITC_HAVE_LLVM
#include <llvm/Config/llvm-config.h> /* a C header: the version macros */
#endif

static const Target *const targets[JITC_NTARGETS] = {&target_interp, &target_cpu, &target_cuda};

const Target *target_of(jitc_target t) { return targets[t]; }

/* ---- contexts and options ---- */

/* The environment is read here, once (env.c). */
jitc_context *jitc_context_new(void) {
  jitc_context *ctx = calloc(1, sizeof(jitc_context));
  if (ctx && !env_read(&ctx->env)) {
    env_free(&ctx->env);
    free(ctx);
    return NULL;
  }
  return ctx;
}

void jitc_context_free(jitc_context *ctx) {
  if (!ctx)
    return;
  code_cache_free(ctx); /* the code first: the targets' state unloads it */
  for (int t = 0; t < JITC_NTARGETS; t++)
    if (ctx->target_state[t] && targets[t]->shutdown)
      targets[t]->shutdown(ctx);
  diags_clear(&ctx->diags);
  env_free(&ctx->env);
  free(ctx->cache_dir);
  free(ctx);
}

void jitc_options_init(jitc_options *opt) {
  if (!opt)
    return;
  memset(opt, 0, sizeof *opt);
#ifdef JITC_HAVE_LLVM
  opt->target = JITC_TARGET_CPU;
#else
  opt->target = JITC_TARGET_INTERP;
#endif
  opt->implicit_dtype = JITC_FLOAT64;
}

/* ---- errors ---- */

const char *jitc_errmsg(const jitc_context *ctx) {
  if (!ctx)
    return "no context";
  return ctx->diags.text.s ? ctx->diags.text.s : "";
}

int jitc_error_count(const jitc_context *ctx) { return ctx ? ctx->diags.n : 0; }

jitc_status jitc_error_get(const jitc_context *ctx, int k, jitc_error *out) {
  if (!ctx || !out || k < 0 || k >= ctx->diags.n)
    return JITC_E_USAGE;
  const Diag *d = &ctx->diags.v[k];
  *out = (jitc_error){d->code, d->line, d->col, d->msg ? d->msg : "out of memory"};
  return JITC_OK;
}

/* ---- targets and dtypes ---- */

const char *jitc_target_name(jitc_target t) {
  return (unsigned)t < JITC_NTARGETS ? targets[t]->name : "unknown";
}

jitc_status jitc_target_parse(const char *name, jitc_target *out) {
  for (int t = 0; t < JITC_NTARGETS && out; t++)
    if (name && !strcmp(name, targets[t]->name)) {
      *out = (jitc_target)t;
      return JITC_OK;
    }
  return JITC_E_USAGE;
}

jitc_status jitc_target_available(jitc_context *ctx, jitc_target t) {
  if (!ctx || (unsigned)t >= JITC_NTARGETS)
    return JITC_E_USAGE;
  diags_clear(&ctx->diags);
  return targets[t]->available(ctx);
}

const char *jitc_target_version(jitc_target t) {
  switch (t) {
  case JITC_TARGET_INTERP:
    return "built in";
  case JITC_TARGET_CPU: {
#ifdef JITC_HAVE_LLVM
    return "LLVM " LLVM_VERSION_STRING;
#else
    return "not built: no LLVM";
#endif
  }
  case JITC_TARGET_CUDA:
    return "NVRTC and CUDA driver, loaded at run time";
  default:
    return "unknown";
  }
}

/* The front end's stages, then each target's (Target.stages): the lists
** jitc_target_stages() returns, made on first use. */
static const char *const frontend_stages[] = {"tokens", "ast", "types"};
enum { NFRONT = 3, MAX_STAGES = 16 };
static const char *stage_lists[JITC_NTARGETS][MAX_STAGES];
static pthread_once_t stages_once = PTHREAD_ONCE_INIT;

static void make_stage_lists(void) {
  for (int t = 0; t < JITC_NTARGETS; t++) {
    int n = 0;
    for (int s = 0; s < NFRONT; s++)
      stage_lists[t][n++] = frontend_stages[s];
    for (const char *const *s = targets[t]->stages; *s && n < MAX_STAGES - 1; s++)
      stage_lists[t][n++] = *s;
  }
}

const char *const *jitc_target_stages(jitc_target t) {
  if ((unsigned)t >= JITC_NTARGETS)
    return NULL;
  pthread_once(&stages_once, make_stage_lists);
  return stage_lists[t];
}

/* The index of `stage` in jitc_target_stages(t), or -1; a message listing
** every target's stages when there is none. */
static int stage_index(jitc_context *ctx, jitc_target t, const char *stage) {
  const char *const *list = jitc_target_stages(t);
  for (int s = 0; list[s]; s++)
    if (!strcmp(list[s], stage))
      return s;
  Buf b = {0};
  buf_printf(&b, "unknown stage '%s' for target %s (front end:", stage, targets[t]->name);
  for (int s = 0; s < NFRONT; s++)
    buf_printf(&b, "%s %s", s ? "," : "", frontend_stages[s]);
  for (int u = 0; u < JITC_NTARGETS; u++)
    for (int s = 0; targets[u]->stages[s]; s++) {
      if (s == 0)
        buf_printf(&b, "; %s:", targets[u]->name);
      buf_printf(&b, "%s %s", s ? "," : "", targets[u]->stages[s]);
    }
  buf_puts(&b, ")");
  ctx_error(ctx, JITC_E_USAGE, "%s", b.s ? b.s : "unknown stage");
  buf_free(&b);
  return -1;
}

const char *jitc_target_device(jitc_context *ctx, jitc_target t) {
  if (!ctx || (unsigned)t >= JITC_NTARGETS)
    return "unknown";
  return targets[t]->device(ctx);
}

/* ---- the pipeline ---- */

static bool is_alpha(char c) { return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

static bool valid_name(const char *s) {
  if (!s || !is_alpha(s[0]))
    return false;
  for (const char *p = s; *p; p++)
    if (!is_alpha(*p) && !(*p >= '0' && *p <= '9'))
      return false;
  return true;
}

/* Why `name` cannot be bound from outside (an array or a scalar), or NULL.
** Any other name can: one the language gives a meaning (`i`, `pi`, a
** function's name) is then the caller's wherever it is not called (check.c,
** declared()).  These few are words of the syntax: no program could read
** an array of that name. */
static const char *reserved_why(const char *name) {
  static const char *const keywords[] = {"let", "and", "or", "not", "True", "False"};
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
    if (!strcmp(name, keywords[k]))
      return "is a keyword";
  return NULL;
}

/* One declared array or scalar: a name of the language and a known dtype. */
static jitc_status check_decl(jitc_context *ctx, const char *what, int k, const char *name,
                              jitc_dtype dtype) {
  if (!valid_name(name))
    return ctx_error(ctx, JITC_E_USAGE, "%s %d has no valid name", what, k);
  const char *why = reserved_why(name);
  if (why)
    return ctx_error(ctx, JITC_E_USAGE, "%s '%s' cannot be bound: '%s' %s", what, name, name,
                     why);
  if ((unsigned)dtype >= JITC_NDTYPES)
    return ctx_error(ctx, JITC_E_USAGE, "%s '%s' has an unknown dtype", what, name);
  return JITC_OK;
}

/* Checks the caller's arguments: JITC_E_USAGE with a message if wrong. */
static jitc_status check_signature(jitc_context *ctx, const char *source,
                                   const jitc_array_decl *arrays, int narrays,
                                   const jitc_scalar_decl *scalars, int nscalars,
                                   const jitc_options *opt) {
  if (!source)
    return ctx_error(ctx, JITC_E_USAGE, "no program (source is NULL)");
  if (narrays < 0 || nscalars < 0 || (narrays && !arrays) || (nscalars && !scalars))
    return ctx_error(ctx, JITC_E_USAGE, "bad array or scalar list");
  if ((unsigned)opt->target >= JITC_NTARGETS)
    return ctx_error(ctx, JITC_E_USAGE, "unknown target %d", (int)opt->target);
  if (opt->implicit_inputs && (unsigned)opt->implicit_dtype >= JITC_NDTYPES)
    return ctx_error(ctx, JITC_E_USAGE, "unknown dtype %d (implicit_dtype)",
                     (int)opt->implicit_dtype);
  if (opt->threads < 0)
    return ctx_error(ctx, JITC_E_USAGE, "threads is %d: 0 (all cores) or a count", opt->threads);
  for (int k = 0; k < narrays; k++) {
    jitc_status st = check_decl(ctx, "array", k, arrays[k].name, arrays[k].dtype);
    for (int j = 0; !st && j < k; j++)
      if (!strcmp(arrays[j].name, arrays[k].name))
        st = ctx_error(ctx, JITC_E_USAGE, "array '%s' is declared twice", arrays[k].name);
    if (st)
      return st;
  }
  for (int k = 0; k < nscalars; k++) {
    jitc_status st = check_decl(ctx, "scalar", k, scalars[k].name, scalars[k].dtype);
    for (int j = 0; !st && j < narrays; j++)
      if (!strcmp(arrays[j].name, scalars[k].name))
        st = ctx_error(ctx, JITC_E_USAGE, "'%s' is declared as an array and as a scalar",
                       scalars[k].name);
    for (int j = 0; !st && j < k; j++)
      if (!strcmp(scalars[j].name, scalars[k].name))
        st = ctx_error(ctx, JITC_E_USAGE, "scalar '%s' is declared twice", scalars[k].name);
    if (st)
      return st;
  }
  return JITC_OK;
}

/* Runs the front end.  With `stage` set to a front-end stage, writes its text
** to `text` and stops there.  Otherwise returns a kernel holding the checked
** program, not yet compiled by its target.  opt NULL means the defaults. */
static jitc_status frontend(jitc_context *ctx, const char *source,
                            const jitc_array_decl *arrays, int narrays,
                            const jitc_scalar_decl *scalars, int nscalars,
                            const jitc_options *opt, const char *stage, Buf *text,
                            jitc_kernel **out) {
  *out = NULL;
  jitc_options defaults;
  if (!opt) {
    jitc_options_init(&defaults);
    opt = &defaults;
  }
  if (ctx->env.bad[0])
    return ctx_error(ctx, JITC_E_USAGE, "%s", ctx->env.bad);
  jitc_status st = check_signature(ctx, source, arrays, narrays, scalars, nscalars, opt);
  if (st)
    return st;
  diags_set_name(&ctx->diags, opt->source_name);
  jitc_kernel *k = calloc(1, sizeof *k);
  Arena *arena = arena_new();
  if (!k || !arena) {
    free(k);
    arena_free(arena);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  k->ctx = ctx;
  k->arena = arena;
  k->opt = *opt;
  k->target = targets[opt->target];
  k->cinfo.cache = "none";
  k->source = arena_strdup(arena, source);
  k->opt.source_name = NULL; /* the caller's string; the name lives in ctx->diags */
  k->source_name = arena_strdup(arena, opt->source_name ? opt->source_name : "<program>");
  Compiler C = {arena, &ctx->diags, k->source, 0, arrays, narrays, scalars, nscalars, &k->opt};
  /* The library keeps no pointers to the caller's signature past this call. */
  st = JITC_OK;
  if (!k->source) {
    st = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  int ntok = 0;
  Token *toks = tokenize(&C, &ntok);
  if (!toks) {
    st = C.nerrors ? JITC_E_NOMEM : ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  if (stage && !strcmp(stage, frontend_stages[0])) {
    dump_tokens(text, &C, toks, ntok);
    goto done;
  }
  AstProgram *ast = parse(&C, toks, ntok);
  if (!ast || arena_failed(arena)) {
    st = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  if (stage && !strcmp(stage, frontend_stages[1])) {
    dump_ast(text, ast);
    goto done;
  }
  /* The checker runs even after syntax errors (skipping the statements that
  ** had them) so that one run reports as many independent errors as it can. */
  k->prog = check(&C, ast);
  if (!k->prog || arena_failed(arena)) {
    st = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  if (C.nerrors)
    goto fail_program;
  /* Whatever the target, it gets a program that keeps the IR's contract. */
  st = validate_program(ctx, k->prog);
  if (st)
    goto fail;
  Buf key = {0};
  dump_program(&key, k->prog);
  if (key.oom) {
    buf_free(&key);
    st = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  k->key = arena_strndup(arena, key.s ? key.s : "", key.len);
  buf_free(&key);
  if (stage && !strcmp(stage, frontend_stages[2])) {
    buf_puts(text, k->key);
    goto done;
  }
  *out = k;
  return JITC_OK;
done:
  if (C.nerrors)
    goto fail_program;
  jitc_kernel_free(k);
  return JITC_OK;
fail_program:
  st = JITC_E_PROGRAM;
  diags_sort(&ctx->diags, k->source);
fail:
  jitc_kernel_free(k);
  return st;
}

/* A program with reductions on a target that has none. */
static jitc_status refuse_reductions(jitc_context *ctx, const jitc_kernel *k) {
  const Program *p = k->prog;
  if (p->nreduce && !k->target->reduces)
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "target %s does not run reductions",
                     k->target->name);
  return JITC_OK;
}

/* The position of the first node of a complex type in n, or -1; *budget
** bounds the walk (operands may be shared). */
static int complex_at(const Node *n, int *budget) {
  if (--*budget < 0)
    return -1;
  for (int k = 0; k < n->nargs; k++) {
    int at = complex_at(n->args[k], budget);
    if (at >= 0)
      return at;
  }
  return dtype_is_complex(n->type) ? n->off : -1;
}

/* A program with complex values on a target that does not compute them,
** refused at the first such value. */
static jitc_status refuse_complex(jitc_context *ctx, const jitc_kernel *k) {
  const Program *p = k->prog;
  unsigned mask = 1u << JITC_COMPLEX64 | 1u << JITC_COMPLEX128;
  bool arrays = false;
  for (int a = 0; a < p->narrays; a++)
    arrays |= dtype_is_complex(p->arrays[a].dtype);
  if (k->target->complex || (!(p->dtypes & mask) && !arrays))
    return JITC_OK;
  int at = -1, budget = 100000;
  for (int s = 0; s < p->nstmts && at < 0; s++)
    at = complex_at(p->stmts[s].value, &budget);
  diags_set_name(&ctx->diags, k->source_name);
  diag_add(&ctx->diags, JITC_E_UNAVAILABLE, k->source, at, "the %s target does not compute "
           "complex64 or complex128 values yet; run this program with --target interp",
           k->target->name);
  return JITC_E_UNAVAILABLE;
}

/* A usage error of a call given its context: the message replaces the
** last call's. */
static jitc_status usage_error(jitc_context *ctx, const char *msg) {
  diags_clear(&ctx->diags);
  return ctx_error(ctx, JITC_E_USAGE, "%s", msg);
}

jitc_status jitc_compile(jitc_context *ctx, const char *source, const jitc_array_decl *arrays,
                         int narrays, const jitc_scalar_decl *scalars, int nscalars,
                         const jitc_options *opt, jitc_kernel **out) {
  if (out)
    *out = NULL;
  if (!ctx)
    return JITC_E_USAGE;
  if (!out)
    return usage_error(ctx, "nowhere to put the kernel (out is NULL)");
  diags_clear(&ctx->diags);
  double t0 = now_ms();
  jitc_kernel *k;
  jitc_status st = frontend(ctx, source, arrays, narrays, scalars, nscalars, opt, NULL, NULL, &k);
  if (st)
    return st;
  k->cinfo.frontend_ms = now_ms() - t0;
  st = k->target->available(ctx);
  if (!st)
    st = refuse_reductions(ctx, k);
  if (!st)
    st = refuse_complex(ctx, k);
  if (!st)
    st = k->target->compile(ctx, k);
  if (st) {
    jitc_kernel_free(k);
    return st;
  }
  k->cinfo.total_ms = now_ms() - t0;
  *out = k;
  return JITC_OK;
}

jitc_status jitc_emit(jitc_context *ctx, const char *source, const jitc_array_decl *arrays,
                      int narrays, const jitc_scalar_decl *scalars, int nscalars,
                      const jitc_options *opt, const char *stage, char **text) {
  if (!text)
    return JITC_E_USAGE;
  *text = NULL;
  if (!ctx)
    return JITC_E_USAGE;
  if (!stage)
    return usage_error(ctx, "no stage (NULL)");
  diags_clear(&ctx->diags);
  jitc_options defaults;
  if (!opt) {
    jitc_options_init(&defaults);
    opt = &defaults;
  }
  jitc_target t = opt->target;
  if ((unsigned)t >= JITC_NTARGETS)
    return ctx_error(ctx, JITC_E_USAGE, "unknown target %d", (int)t);
  int s = stage_index(ctx, t, stage);
  if (s < 0)
    return JITC_E_USAGE;
  Buf b = {0};
  jitc_kernel *k = NULL;
  jitc_status st = frontend(ctx, source, arrays, narrays, scalars, nscalars, opt, stage, &b, &k);
  if (!st && k) {
    /* A back-end stage: the target emits from the checked program. */
    st = refuse_reductions(ctx, k);
    if (!st)
      st = refuse_complex(ctx, k);
    if (!st)
      st = k->target->emit(ctx, k, s - NFRONT, &b);
    jitc_kernel_free(k);
  }
  if (!st && b.oom)
    st = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  if (st) {
    buf_free(&b);
    return st;
  }
  *text = buf_steal(&b);
  return JITC_OK;
}

void jitc_free(void *p) { free(p); }

void jitc_kernel_free(jitc_kernel *k) {
  if (!k)
    return;
  if (k->impl && k->target && k->target->release)
    k->target->release(k);
  arena_free(k->arena);
  free(k);
}

const jitc_compile_info *jitc_kernel_compile_info(const jitc_kernel *k) {
  return k ? &k->cinfo : NULL;
}

/* ---- running ---- */

/* Over zero elements, a reduction without an identity (min, max, argmin,
** argmax) has no value: an error at the reduction, as NumPy raises one. */
static jitc_status check_empty(jitc_context *ctx, const jitc_kernel *k) {
  const Program *p = k->prog;
  for (int s = 0; s < p->nstmts; s++) {
    const IrStmt *st = &p->stmts[s];
    if (st->kind != IR_REDUCE || !(op_info[st->op].flags & F_NOID))
      continue;
    diags_set_name(&ctx->diags, k->source_name);
    diag_add(&ctx->diags, JITC_E_PROGRAM, k->source, st->off, "%s() of zero elements: it has "
             "no identity, so there is no value to give '%s' (NumPy raises ValueError)",
             op_info[st->op].name, p->arrays[st->slot].name);
    return JITC_E_PROGRAM;
  }
  return JITC_OK;
}

/* What a run runs on: host pointers (jitc_run), buffers (jitc_run_buffers)
** or the caller's device pointers on a stream (jitc_run_device); one is set. */
typedef struct RunOn {
  const Layout *L; /* jitc_run_arrays where some array is not direct */
  void *const *arrays;
  jitc_buffer *const *bufs;
  const uint64_t *ptrs;
  void *stream;
} RunOn;

/* jitc_run_device's part after the common checks: the target, then the run. */
static jitc_status run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                              const RunOn *on, const ParamSlot *slots) {
  /* Without a GPU no cuda kernel can exist: say that, whatever k is. */
  jitc_status st = targets[JITC_TARGET_CUDA]->available(ctx);
  if (st)
    return st;
  if (k->opt.target != JITC_TARGET_CUDA || !k->target->run_device)
    return ctx_error(ctx, JITC_E_USAGE, "jitc_run_device runs kernels compiled for cuda; this "
                     "one was compiled for %s", k->target->name);
  if (n == 0 && !k->prog->nreduce)
    return JITC_OK;
  if (on->L)
    return k->target->run_device_layout
               ? k->target->run_device_layout(ctx, k, on->L, slots, on->stream)
               : ctx_error(ctx, JITC_E_USAGE, "target %s runs over contiguous device arrays "
                           "only", k->target->name);
  return k->target->run_device(ctx, k, n, on->ptrs, slots, on->stream);
}

/* The common part of jitc_run, jitc_run_buffers and jitc_run_device:
** checks, scalar slots, timing, then the target's run. */
static jitc_status run_common(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                              const RunOn *on, const jitc_value *scalars, jitc_run_info *info) {
  jitc_run_info local;
  if (!info)
    info = &local;
  memset(info, 0, sizeof *info);
  if (n < 0)
    return ctx_error(ctx, JITC_E_USAGE, "negative element count %lld", (long long)n);
  const Program *p = k->prog;
  void *const *arrays = on->arrays;
  jitc_buffer *const *bufs = on->bufs;
  if (p->narrays && !arrays && !bufs && !on->ptrs && !on->L)
    return ctx_error(ctx, JITC_E_USAGE, "no arrays given");
  for (int j = 0; j < p->narrays && (arrays || on->ptrs) && !on->L; j++) {
    if (n == 0 && p->arrays[j].role != JITC_RESULT)
      continue; /* a result is written even over no elements */
    uint64_t addr = arrays ? (uint64_t)(uintptr_t)arrays[j] : on->ptrs[j];
    if (!addr)
      return ctx_error(ctx, JITC_E_USAGE, "array '%s' is NULL", p->arrays[j].name);
    if (addr % jitc_dtype_size(p->arrays[j].dtype))
      return ctx_error(ctx, JITC_E_USAGE, "array '%s' is not aligned to its element size (%s at "
                       "0x%llx)", p->arrays[j].name, jitc_dtype_name(p->arrays[j].dtype),
                       (unsigned long long)addr);
  }
  for (int j = 0; j < p->narrays && bufs; j++) {
    const jitc_buffer *b = bufs[j];
    if (!b)
      return ctx_error(ctx, JITC_E_USAGE, "buffer for array '%s' is NULL", p->arrays[j].name);
    if (b->ctx != ctx || b->target != k->opt.target)
      return ctx_error(ctx, JITC_E_USAGE, "buffer for array '%s' belongs to another context or "
                       "target", p->arrays[j].name);
    int64_t need = p->arrays[j].role == JITC_RESULT ? 1 : n;
    if (b->dtype != p->arrays[j].dtype || b->n < need)
      return ctx_error(ctx, JITC_E_USAGE, "buffer for array '%s' holds %lld %s; the kernel needs "
                       "%lld %s", p->arrays[j].name, (long long)b->n, jitc_dtype_name(b->dtype),
                       (long long)need, jitc_dtype_name(p->arrays[j].dtype));
  }
  /* Over axes, a reduced axis of extent 0, even where the results are empty. */
  if (p->nreduce && (on->L && on->L->axes ? on->L->seg == 0 : n == 0)) {
    jitc_status st = check_empty(ctx, k);
    if (st)
      return st;
  }
  ParamSlot stack_slots[16];
  ParamSlot *slots = p->nparams <= 16 ? stack_slots : calloc((size_t)p->nparams, sizeof *slots);
  if (!slots)
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  jitc_status st = bind_scalars(ctx, p, scalars, slots);
  if (!st)
    st = bind_check_weak(ctx, k, slots);
  if (!st && on->ptrs) {
    st = run_device(ctx, k, n, on, slots);
  } else if (!st) {
    double t0 = now_ms();
    if (on->L && on->L->axes && n == 0) /* empty segments: the identities */
      for (int64_t g = 0; g < on->L->nseg; g++)
        reduce_segment(p, 0, NULL, 0, on->L, g);
    else if (on->L)
      st = k->target->run_layout ? k->target->run_layout(ctx, k, on->L, slots, info)
                                 : ctx_error(ctx, JITC_E_USAGE, "target %s runs over contiguous "
                                             "arrays only; copy the strided or broadcast ones "
                                             "first", k->target->name);
    else if (bufs)
      st = k->target->run_buffers ? k->target->run_buffers(ctx, k, n, bufs, slots, info)
                                  : ctx_error(ctx, JITC_E_USAGE, "target %s has no buffers",
                                              k->target->name);
    else
      st = k->target->run(ctx, k, n, arrays, slots, info);
    info->run_ms = now_ms() - t0;
  }
  if (slots != stack_slots)
    free(slots);
  return st;
}

static jitc_status run_arrays(jitc_context *ctx, const jitc_kernel *k, const jitc_array *arrays,
                              const jitc_value *scalars, jitc_run_info *info);

static jitc_status run_device_arrays(jitc_context *ctx, const jitc_kernel *k,
                                     const jitc_array *arrays, const jitc_value *scalars,
                                     void *stream);

/* jitc_run() (jitc_run_device() when ptrs) of a program reducing over axes:
** a run over arrays of shape (n,), each result of the one element its
** reduction gives them. */
static jitc_status run_flat_axes(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                 void *const *arrays, const uint64_t *ptrs,
                                 const jitc_value *scalars, jitc_run_info *info, void *stream) {
  const Program *p = k->prog;
  if (n < 0)
    return ctx_error(ctx, JITC_E_USAGE, "negative element count %lld", (long long)n);
  if (p->narrays && !arrays && !ptrs)
    return ctx_error(ctx, JITC_E_USAGE, "no arrays given");
  jitc_array *A = calloc((size_t)p->narrays + 1, sizeof *A + sizeof(int64_t));
  if (!A)
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  int64_t *rshape = (int64_t *)(void *)(A + p->narrays + 1);
  const int64_t flat[1] = {n};
  bool red[1];
  jitc_status st = axes_resolve(ctx, p, 1, red);
  for (int j = 0; j < p->narrays && !st; j++) {
    A[j] = (jitc_array){ptrs ? (void *)(uintptr_t)ptrs[j] : arrays[j], 1, flat, NULL};
    if (p->arrays[j].role != JITC_RESULT)
      continue;
    axes_result_shape(p, j, 1, flat, red, &A[j].ndim, &rshape[j]);
    A[j].shape = &rshape[j];
    if (A[j].ndim && rshape[j] > 1)
      st = ctx_error(ctx, JITC_E_USAGE, "result '%s' keeps an axis of %lld elements of the "
                     "arrays of shape (%lld,), and a run over n elements writes one element "
                     "per result: run it with jitc_run_arrays", p->arrays[j].name,
                     (long long)rshape[j], (long long)n);
  }
  if (!st)
    st = ptrs ? run_device_arrays(ctx, k, A, scalars, stream) : run_arrays(ctx, k, A, scalars, info);
  free(A);
  return st;
}

jitc_status jitc_run(jitc_context *ctx, const jitc_kernel *k, int64_t n, void *const *arrays,
                     const jitc_value *scalars, jitc_run_info *info) {
  if (!ctx)
    return JITC_E_USAGE;
  if (!k)
    return usage_error(ctx, "no kernel (NULL)");
  /* A run writes the context only to report an error, so that runs of one
  ** context's kernels from several threads do not race here. */
  if (ctx->diags.n || ctx->diags.text.s)
    diags_clear(&ctx->diags);
  if (k->prog->by_axis)
    return run_flat_axes(ctx, k, n, arrays, NULL, scalars, info, NULL);
  RunOn on = {.arrays = arrays};
  return run_common(ctx, k, n, &on, scalars, info);
}

/* The arrays' layout (layout.c); where every array is one contiguous run,
** jitc_run() itself. */
jitc_status jitc_run_arrays(jitc_context *ctx, const jitc_kernel *k, const jitc_array *arrays,
                            const jitc_value *scalars, jitc_run_info *info) {
  if (!ctx)
    return JITC_E_USAGE;
  if (!k || (!arrays && k->prog->narrays))
    return usage_error(ctx, k ? "no arrays (NULL)" : "no kernel (NULL)");
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  return run_arrays(ctx, k, arrays, scalars, info);
}

static jitc_status run_arrays(jitc_context *ctx, const jitc_kernel *k, const jitc_array *arrays,
                              const jitc_value *scalars, jitc_run_info *info) {
  Layout L;
  bool contig;
  jitc_status st = layout_new(ctx, k->prog, arrays, k->target->bands, &L, &contig);
  if (st)
    return st;
  RunOn on = {.arrays = L.bases, .L = contig && !L.axes ? NULL : &L};
  st = run_common(ctx, k, L.n, &on, scalars, info);
  layout_free(&L);
  return st;
}

jitc_status jitc_run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const jitc_value *scalars, void *stream) {
  if (!ctx)
    return JITC_E_USAGE;
  if (!k)
    return usage_error(ctx, "no kernel (NULL)");
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  static const uint64_t none[1] = {0};
  RunOn on = {.ptrs = ptrs ? ptrs : none, .stream = stream};
  if (!ptrs && k->prog->narrays && n > 0)
    return ctx_error(ctx, JITC_E_USAGE, "no arrays given");
  if (k->prog->by_axis && ptrs)
    return run_flat_axes(ctx, k, n, NULL, ptrs, scalars, NULL, stream);
  return run_common(ctx, k, n, &on, scalars, NULL);
}

/* The arrays' layout (layout.c) over device addresses; where every array is
** one contiguous run, jitc_run_device() itself. */
jitc_status jitc_run_device_arrays(jitc_context *ctx, const jitc_kernel *k,
                                   const jitc_array *arrays, const jitc_value *scalars,
                                   void *stream) {
  if (!ctx)
    return JITC_E_USAGE;
  if (!k || (!arrays && k->prog->narrays))
    return usage_error(ctx, k ? "no arrays (NULL)" : "no kernel (NULL)");
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  return run_device_arrays(ctx, k, arrays, scalars, stream);
}

static jitc_status run_device_arrays(jitc_context *ctx, const jitc_kernel *k,
                                     const jitc_array *arrays, const jitc_value *scalars,
                                     void *stream) {
  Layout L;
  bool contig;
  jitc_status st = layout_new(ctx, k->prog, arrays, false, &L, &contig);
  if (st)
    return st;
  int na = k->prog->narrays;
  uint64_t *ptrs = malloc(((size_t)na + 1) * sizeof *ptrs);
  if (!ptrs) {
    layout_free(&L);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  for (int j = 0; j < na; j++)
    ptrs[j] = (uint64_t)(uintptr_t)L.bases[j];
  RunOn on = {.ptrs = ptrs, .stream = stream, .L = contig ? NULL : &L};
  st = run_common(ctx, k, L.n, &on, scalars, NULL);
  free(ptrs);
  layout_free(&L);
  return st;
}

jitc_status jitc_run_buffers(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                             jitc_buffer *const *bufs, const jitc_value *scalars,
                             jitc_run_info *info) {
  if (!ctx)
    return JITC_E_USAGE;
  if (!k || (!bufs && k->prog->narrays))
    return usage_error(ctx, k ? "no buffers (NULL)" : "no kernel (NULL)");
  if (ctx->diags.n || ctx->diags.text.s) /* as in jitc_run */
    diags_clear(&ctx->diags);
  if (k->prog->by_axis)
    return ctx_error(ctx, JITC_E_USAGE, "a program reducing over an axis runs over arrays of "
                     "a shape: jitc_run_arrays or jitc_run_device_arrays, not buffers");
  jitc_buffer *none[1] = {NULL};
  RunOn on = {.bufs = bufs ? bufs : none};
  return run_common(ctx, k, n, &on, scalars, info);
}
