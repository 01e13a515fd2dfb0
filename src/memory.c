/*
** memory.c -- the public library's memory of a target's own (jitc.h):
** device-resident buffers (jitc_buffer_new, upload, download, free; the
** runs over them are jitc.c's jitc_run_buffers) and host memory pinned for
** a target's copies (jitc_host_pin).  It checks the arguments and hands
** the work to the target's table (Target.buffer_new, host_pin, ...).
*/
#include "jitc_int.h"

#include <stdlib.h>

/* ---- device-resident buffers ---- */

jitc_status jitc_buffer_new(jitc_context *ctx, jitc_target t, jitc_dtype dtype, int64_t n,
                            jitc_buffer **out) {
  if (!out)
    return JITC_E_USAGE;
  *out = NULL;
  if (!ctx)
    return JITC_E_USAGE;
  diags_clear(&ctx->diags);
  if ((unsigned)t >= JITC_NTARGETS || (unsigned)dtype >= JITC_NDTYPES || n < 0)
    return ctx_error(ctx, JITC_E_USAGE, "bad buffer arguments");
  const Target *tg = target_of(t);
  if (!tg->buffer_new)
    return ctx_error(ctx, JITC_E_USAGE, "target %s works on host memory and has no buffers",
                     tg->name);
  jitc_status st = tg->available(ctx);
  if (st)
    return st;
  jitc_buffer *b = calloc(1, sizeof *b);
  if (!b)
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  *b = (jitc_buffer){ctx, t, dtype, n, NULL};
  st = tg->buffer_new(ctx, b);
  if (st) {
    free(b);
    return st;
  }
  *out = b;
  return JITC_OK;
}

static jitc_status buffer_copy(jitc_context *ctx, const jitc_buffer *b, void *host, int64_t n,
                               bool upload) {
  if (!ctx || !b)
    return JITC_E_USAGE;
  diags_clear(&ctx->diags);
  if (n < 0 || n > b->n || (n > 0 && !host))
    return ctx_error(ctx, JITC_E_USAGE, "bad copy: %lld elements, buffer holds %lld",
                     (long long)n, (long long)b->n);
  return target_of(b->target)->buffer_copy(ctx, (jitc_buffer *)b, host, 0, n, upload);
}

jitc_status jitc_buffer_upload(jitc_context *ctx, jitc_buffer *b, const void *host, int64_t n) {
  return buffer_copy(ctx, b, (void *)host, n, true);
}

jitc_status jitc_buffer_download(jitc_context *ctx, const jitc_buffer *b, void *host, int64_t n) {
  return buffer_copy(ctx, b, host, n, false);
}

void jitc_buffer_free(jitc_buffer *b) {
  if (!b)
    return;
  target_of(b->target)->buffer_free(b);
  free(b);
}

/* ---- host memory pinned for a target's copies ---- */

static jitc_status host_pin(jitc_context *ctx, jitc_target t, void *p, size_t bytes, bool pin) {
  if (!ctx)
    return JITC_E_USAGE;
  diags_clear(&ctx->diags);
  const char *verb = pin ? "pin" : "unpin";
  if ((unsigned)t >= JITC_NTARGETS || !p || (pin && !bytes))
    return ctx_error(ctx, JITC_E_USAGE, "bad arguments to jitc_host_%s", verb);
  const Target *tg = target_of(t);
  if (!tg->host_pin)
    return ctx_error(ctx, JITC_E_USAGE, "target %s works on host memory: nothing to %s",
                     tg->name, verb);
  jitc_status st = tg->available(ctx);
  return st ? st : pin ? tg->host_pin(ctx, p, bytes) : tg->host_unpin(ctx, p);
}

jitc_status jitc_host_pin(jitc_context *ctx, jitc_target t, void *p, size_t bytes) {
  return host_pin(ctx, t, p, bytes, true);
}

jitc_status jitc_host_unpin(jitc_context *ctx, jitc_target t, void *p) {
  return host_pin(ctx, t, p, 0, false);
}
