/*
** run_device_stub.c -- a stand-in for jitc_run_device (jitc.h) until the
** cuda target's own lands: it refuses, as the library does without a GPU,
** so that clients (the Python package) build and report the target as
** unavailable.  The real definition replaces this file.
*/
#include "jitc_int.h"

jitc_status jitc_run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const jitc_value *scalars, void *stream) {
  if (!ctx || !k)
    return JITC_E_USAGE;
  diags_clear(&ctx->diags);
  return ctx_error(ctx, JITC_E_UNAVAILABLE, "jitc_run_device: not in this build");
}
