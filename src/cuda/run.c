/*
** cuda/run.c -- target_cuda, the table jitc.c calls, and device-resident
** buffers (jitc_buffer): the top of the target, standing on the device
** (cuda/device.c), building (cuda/build.c), launching (cuda/launch.c), the
** host pipeline (cuda/host.c, on every GPU of the run: cuda/multi.c) and
** the caller's device memory (cuda/devptr.c, cuda/devarrays.c).  Host
** arrays go through cuda/multi.c; device buffers, on the home device, go
** straight to cuda_launch(); the caller's pointers through cuda/devptr.c,
** and the caller's device arrays of any strides through cuda/devarrays.c.
** Start reading at target_cuda at the end.
*/
#include "cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cuda_shutdown(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (!S)
    return;
  CudaCurrent c;
  if (S->gpu_ok)
    cuda_lanes_free(S); /* every GPU's streams and staging, in its own context */
  if (S->gpu_ok && cuda_enter(S, S->pctx, &c) == CUDA_SUCCESS) {
    cuda_devptr_free(S);
    cuda_leave(S, &c);
  }
  if (S->retained)
    S->api.cuDevicePrimaryCtxRelease(S->dev);
  free(S->archs);
  cuda_unload(&S->api);
  pthread_mutex_destroy(&S->lock);
  free(S);
  ctx->target_state[JITC_TARGET_CUDA] = NULL;
}

static jitc_status cuda_available(jitc_context *ctx) {
  CudaState *S = cuda_state(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  bool ok = cuda_load_gpu(S);
  pthread_mutex_unlock(&S->lock);
  if (!ok)
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
  return JITC_OK;
}

static const char *cuda_device(jitc_context *ctx) {
  CudaState *S = cuda_state(ctx);
  if (!S)
    return "no CUDA device";
  pthread_mutex_lock(&S->lock);
  bool ok = cuda_load_gpu(S);
  pthread_mutex_unlock(&S->lock);
  return ok ? S->device : "no CUDA device";
}

/* ===================================================================== */
/* Device-resident buffers                                                */
/* ===================================================================== */

/* Locks the state and makes jitc's own GPU current for a call of the API;
** *out is the state (locked when set), for leave_gpu. */
static jitc_status enter_gpu(jitc_context *ctx, CudaState **out, CudaCurrent *c) {
  CudaState *S = *out = cuda_state(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  if (!cuda_load_gpu(S))
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
  return cuda_enter_device(ctx, S, c);
}

static void leave_gpu(CudaState *S, CudaCurrent *c) {
  if (!S)
    return;
  cuda_leave(S, c);
  pthread_mutex_unlock(&S->lock);
}

static jitc_status cuda_buffer_new(jitc_context *ctx, jitc_buffer *b) {
  CudaState *S = NULL;
  CudaCurrent c = {0};
  jitc_status st = enter_gpu(ctx, &S, &c);
  size_t bytes = (size_t)b->n * jitc_dtype_size(b->dtype);
  CUdeviceptr d = 0;
  if (st == JITC_OK && bytes > 0) {
    CUresult r = S->api.cuMemAlloc(&d, bytes);
    if (r != CUDA_SUCCESS) {
      size_t fr = 0, tot = 0;
      S->api.cuMemGetInfo(&fr, &tot);
      st = ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                     "cuda: cannot allocate %.1f MB of device memory for %lld %s elements "
                     "(%.1f MB free of %.1f MB; %s)",
                     (double)bytes / 1e6, (long long)b->n, jitc_dtype_name(b->dtype),
                     (double)fr / 1e6, (double)tot / 1e6, cuda_result_name(&S->api, r));
    }
  }
  b->impl = (void *)(uintptr_t)d;
  leave_gpu(S, &c);
  return st;
}

/* jitc_host_pin and jitc_host_unpin: the driver's registration, portable
** (every context's), made in the home device's context (cuda/copy.c). */
static jitc_status cuda_host_pin(jitc_context *ctx, void *p, size_t bytes, bool pin) {
  CudaState *S = NULL;
  CudaCurrent c = {0};
  jitc_status st = enter_gpu(ctx, &S, &c);
  if (st == JITC_OK) {
    CUresult r = pin ? cuda_register(S, p, bytes, true) : cuda_unregister(S, p);
    if (r != CUDA_SUCCESS)
      st = ctx_error(ctx, JITC_E_INTERNAL, "cuda: cannot %s host memory (%s)",
                     pin ? "pin" : "unpin", cuda_result_name(&S->api, r));
  }
  leave_gpu(S, &c);
  return st;
}

static jitc_status cuda_host_register(jitc_context *ctx, void *p, size_t bytes) {
  return cuda_host_pin(ctx, p, bytes, true);
}

static jitc_status cuda_host_unregister(jitc_context *ctx, void *p) {
  return cuda_host_pin(ctx, p, 0, false);
}

static jitc_status cuda_buffer_copy(jitc_context *ctx, jitc_buffer *b, void *host, int64_t off,
                                    int64_t n, bool upload) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (!S || !S->gpu_ok)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: buffer of another context");
  if (off < 0 || n < 0 || off > b->n || n > b->n - off)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: elements [%lld, %lld) are outside the buffer of %lld",
                     (long long)off, (long long)(off + n), (long long)b->n);
  if (n == 0)
    return JITC_OK;
  pthread_mutex_lock(&S->lock);
  CudaCurrent c;
  size_t es = jitc_dtype_size(b->dtype);
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl + (CUdeviceptr)((size_t)off * es);
  CUresult r = cuda_enter(S, S->pctx, &c);
  if (r == CUDA_SUCCESS)
    r = upload ? S->api.cuMemcpyHtoD(d, host, (size_t)n * es)
               : S->api.cuMemcpyDtoH(host, d, (size_t)n * es);
  /* From pageable memory cuMemcpyHtoD returns once the bytes are staged,
  ** its DMA still queued on the legacy stream, which the kernels' streams
  ** (non-blocking) do not wait for: a run right after an upload could
  ** read, or write under, bytes still on their way (an output uploaded
  ** before the run overwrote part of the run's results on an H100). */
  if (r == CUDA_SUCCESS && upload)
    r = S->api.cuStreamSynchronize(NULL);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, upload ? "upload" : "download");
}

static void cuda_buffer_free(jitc_buffer *b) {
  CudaState *S = b->ctx ? b->ctx->target_state[JITC_TARGET_CUDA] : NULL;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl;
  if (S && S->gpu_ok && d) {
    pthread_mutex_lock(&S->lock);
    CudaCurrent c;
    if (cuda_enter(S, S->pctx, &c) == CUDA_SUCCESS)
      S->api.cuMemFree(d);
    cuda_leave(S, &c);
    pthread_mutex_unlock(&S->lock);
  }
  b->impl = NULL;
}

static jitc_status cuda_run_buffers(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                    jitc_buffer *const *bufs, const ParamSlot *params,
                                    jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  CudaKernel *ck = k->impl;
  if (!S || !S->gpu_ok || !ck)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  for (int a = 0; a < p->narrays; a++) {
    const jitc_buffer *b = bufs[a];
    if (!b || b->target != JITC_TARGET_CUDA || b->ctx != ctx)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: array '%s' is not a cuda buffer of this context",
                       p->arrays[a].name);
    if (b->dtype != p->arrays[a].dtype)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: array '%s' is %s but its buffer holds %s",
                       p->arrays[a].name, jitc_dtype_name(p->arrays[a].dtype),
                       jitc_dtype_name(b->dtype));
    int64_t need = p->arrays[a].role == JITC_RESULT ? 1 : n;
    if (b->n < need)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: buffer for '%s' has %lld elements, fewer than %lld",
                       p->arrays[a].name, (long long)b->n, (long long)need);
  }
  if (n <= 0 && !p->nreduce)
    return JITC_OK; /* with reductions, n == 0 writes their identities */
  pthread_mutex_lock(&S->lock);
  CudaCurrent c;
  CudaDev *H = cuda_home(S);
  CudaKDev *kd = NULL;
  jitc_status st = cuda_enter_device(ctx, S, &c);
  if (st == JITC_OK)
    st = cuda_ensure_slots(ctx, S, H);
  if (st == JITC_OK) /* buffers live on the home device: the kernel runs there */
    st = cuda_kernel_on(ctx, S, ck, 0, &kd);
  CUdeviceptr stack_d[64];
  CUdeviceptr *d = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *d);
  if (st == JITC_OK && !d)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK) {
    for (int a = 0; a < p->narrays; a++)
      d[a] = (CUdeviceptr)(uintptr_t)bufs[a]->impl;
    CudaSlot *sl = &H->slot[0];
    CudaParts parts = {0};
    if (p->nreduce) {
      parts.cap = cuda_partials(S, k, n);
      st = cuda_parts_ensure(ctx, S, kd, cuda_parts_bytes(p, parts.cap));
      parts.base = kd->part;
      if (st == JITC_OK)
        st = cuda_reduce_begin(ctx, S, p, &parts, d, sl->stream);
    }
    CUresult r = st == JITC_OK ? S->api.cuEventRecord(sl->ev[1], sl->stream) : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS && st == JITC_OK)
      st = cuda_launch(ctx, S, k, ck->mod, &kd->scratch[0], n, 0, d, params, &parts, NULL,
                       sl->stream);
    /* The results straight into their buffers. */
    if (r == CUDA_SUCCESS && st == JITC_OK && p->nreduce)
      st = cuda_reduce_end(ctx, S, k, ck->mod, &parts, n, sl->stream);
    if (r == CUDA_SUCCESS && st == JITC_OK)
      r = S->api.cuEventRecord(sl->ev[2], sl->stream);
    if (r == CUDA_SUCCESS && st == JITC_OK)
      r = S->api.cuEventSynchronize(sl->ev[2]);
    if (st != JITC_OK) {
      S->api.cuStreamSynchronize(sl->stream);
    } else if (r != CUDA_SUCCESS) {
      S->api.cuStreamSynchronize(sl->stream);
      st = cuda_fail(ctx, S, r, "the kernel");
    } else if (info) {
      info->kernel_ms = cuda_elapsed(S, sl->ev[1], sl->ev[2]);
      info->h2d_ms = info->d2h_ms = 0;
    }
  }
  if (d != stack_d)
    free(d);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}

const Target target_cuda = {
    .name = "cuda",
    .available = cuda_available,
    .device = cuda_device,
    .compile = cuda_compile,
    .run = cuda_run,
    .run_layout = cuda_run_layout,
    .stages = (const char *const[]){"cuda", "ptx", NULL},
    .emit = cuda_emit,
    .release = cuda_release,
    .shutdown = cuda_shutdown,
    .buffer_new = cuda_buffer_new,
    .buffer_copy = cuda_buffer_copy,
    .buffer_free = cuda_buffer_free,
    .host_pin = cuda_host_register,
    .host_unpin = cuda_host_unregister,
    .run_buffers = cuda_run_buffers,
    .run_device = cuda_run_device,
    .run_device_layout = cuda_run_device_layout,
    .reduces = true,
    .complex = true,
};
