/*
** interp/interp.c -- the target `interp`: evaluates the typed IR directly.  It
** defines the semantics of the language; the cpu and cuda targets are
** tested against it.
**
** Evaluation is block-wise, as numexpr does it, in three parts:
**   semantics.h    the operations themselves, one element type at a time
**                  (shared with the constant folder: docs/language.md states
**                  each choice, semantics.h is its executable form)
**   interp/plan.c  compile: each statement becomes a list of instructions,
**                  one per IR node, each writing a typed scratch buffer of
**                  one block of elements (interp/interp.h)
**   interp/exec.c  run: every instruction list over one block of elements,
**                  then the next block
** Each instruction is a tight loop over a plain C array, so the dispatch
** cost is paid once per block rather than once per element, and 10 million
** elements take a fraction of a second.  Element-wise statements commute
** with blocking: running statement 1 then 2 over a block gives every
** element the same values as running both statements element by element.
** This file is the Target the library calls.
*/
#include "interp.h"

#include <stdlib.h>
#include <string.h>

static jitc_status interp_available(jitc_context *ctx) {
  (void)ctx;
  return JITC_OK;
}

/* The CPU's model name, kept in the context's target state. */
static const char *interp_device(jitc_context *ctx) {
  char **state = (char **)&ctx->target_state[JITC_TARGET_INTERP];
  if (*state)
    return *state;
  char model[256];
  const char *name = host_cpu_model(model, sizeof model) && model[0] ? model : "host CPU";
  *state = malloc(strlen(name) + 1);
  if (!*state)
    return "host CPU";
  strcpy(*state, name);
  return *state;
}

static jitc_status interp_compile(jitc_context *ctx, jitc_kernel *k) {
  double t0 = now_ms();
  Plan *p;
  jitc_status st = interp_plan(ctx, k->prog, &p);
  if (st != JITC_OK)
    return st;
  k->impl = p;
  k->cinfo.ir_ms = now_ms() - t0;
  return JITC_OK;
}

static jitc_status interp_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                              void *const *arrays, const ParamSlot *params,
                              jitc_run_info *info) {
  if (!k->impl)
    return ctx_error(ctx, JITC_E_USAGE, "interp: kernel not compiled");
  if (info)
    info->threads = 1;
  return interp_exec(ctx, k->impl, k->prog, n, arrays, params, NULL);
}

static jitc_status interp_run_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                     const ParamSlot *params, jitc_run_info *info) {
  if (info) info->threads = 1;
  return interp_exec(ctx, k->impl, k->prog, L->n, L->bases, params, L);
}

static void interp_release(jitc_kernel *k) {
  interp_plan_free(k->impl);
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
    .run_layout = interp_run_layout,
    .stages = (const char *const[]){NULL},
    .release = interp_release,
    .shutdown = interp_shutdown,
    .reduces = true,
    .complex = true,
};
