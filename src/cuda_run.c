/*
** cuda_run.c -- running for the target `cuda`: the device, launches and
** device-resident buffers, and target_cuda, the table jitc.c calls.
**
** The CUDA driver and NVRTC are opened at run time (runtime/cuda_loader.c),
** on first need, so a machine without them still runs every other target.
** The device is JITC_CUDA_DEVICE's (0), through its primary context.
** A launch runs a kernel that cuda_build.c compiled and loaded: nothing
** here compiles.  The kernels index with 32 bits, so arrays longer than a
** slice (2^30 elements) are launched one slice after another, the pointers
** advanced and `base` telling the kernel where the slice starts.  Host
** arrays go through cuda_host.c; device buffers (jitc_buffer) go straight
** to cuda_launch().  Start reading at target_cuda at the end.
*/
#include "cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* The state: NVRTC, the driver, the device                               */
/* ===================================================================== */

CudaState *cuda_state(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (S)
    return S;
  S = calloc(1, sizeof *S);
  if (!S)
    return NULL;
  pthread_mutex_init(&S->lock, NULL);
  S->env = &ctx->env;
  S->slice = (int64_t)1 << 30;
  ctx->target_state[JITC_TARGET_CUDA] = S;
  return S;
}

static bool load_driver_and_device(CudaState *S) {
  if (cuda_load_driver(&S->api, S->env->libcuda, S->gpu_err, sizeof S->gpu_err) != 0)
    return false;
  CudaApi *A = &S->api;
  int count = 0;
  CUresult r = A->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count < 1) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "no CUDA device (%s)",
             r != CUDA_SUCCESS ? cuda_result_name(A, r) : "the driver sees none");
    return false;
  }
  int ordinal = S->env->cuda_device;
  if (ordinal >= count) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "JITC_CUDA_DEVICE=%d, but the driver sees %d "
             "device%s (0 to %d)", ordinal, count, count == 1 ? "" : "s", count - 1);
    return false;
  }
  if ((r = A->cuDeviceGet(&S->dev, ordinal)) != CUDA_SUCCESS ||
      (r = A->cuDevicePrimaryCtxRetain(&S->pctx, S->dev)) != CUDA_SUCCESS) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "cannot use CUDA device %d (%s)", ordinal,
             cuda_result_name(A, r));
    return false;
  }
  S->retained = true;
  A->cuCtxSetCurrent(S->pctx);
  char name[256] = "CUDA device";
  A->cuDeviceGetName(name, (int)sizeof name, S->dev);
  A->cuDeviceGetAttribute(&S->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S->dev);
  A->cuDeviceGetAttribute(&S->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S->dev);
  A->cuDeviceGetAttribute(&S->nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, S->dev);
  if (S->nsm < 1)
    S->nsm = 1;
  snprintf(S->device, sizeof S->device, "%s (sm_%d%d, %d SMs)", name, S->cc_major, S->cc_minor,
           S->nsm);
  S->gpu_ok = true;
  return true;
}

bool cuda_load_gpu(CudaState *S) {
  if (S->gpu_tried)
    return S->gpu_ok;
  S->gpu_tried = true;
  if (!cuda_load_nvrtc_once(S)) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "%s", S->nvrtc_err);
    return false;
  }
  /* Only where a driver exists: elsewhere the warm-up would be wasted. */
  pthread_t warm;
  bool warming = (S->env->libcuda || dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) &&
                 pthread_create(&warm, NULL, cuda_nvrtc_warm_up, &S->api) == 0;
  bool ok = load_driver_and_device(S);
  if (warming)
    pthread_join(warm, NULL);
  return ok;
}

static void cuda_shutdown(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (!S)
    return;
  if (S->gpu_ok) {
    S->api.cuCtxSetCurrent(S->pctx);
    cuda_host_free(S);
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
/* Launches                                                               */
/* ===================================================================== */

jitc_status cuda_fail(jitc_context *ctx, CudaState *S, CUresult r, const char *what) {
  return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                   "cuda: %s failed (%s)", what, cuda_result_name(&S->api, r));
}

/* cuda_launch() for a split program: for each range of ck->range elements,
** every group's kernel in order on stream s, with the range's scratch (one
** per stream slot, as the two slots' chunks may be in flight at once). */
static jitc_status launch_split(jitc_context *ctx, CudaState *S, const jitc_kernel *k, int64_t n,
                                int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                                CUstream s) {
  CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  const CudaPlan *P = ck->plan;
  int q = s == S->slot[1].stream ? 1 : 0;
  if (!ck->range) {
    /* Scratch of at most 64 MB per slot; ranges of whole blocks, within a slice. */
    int64_t r = P->per_elem ? (int64_t)(((size_t)64 << 20) / P->per_elem) : (int64_t)1 << 30;
    r = r > ((int64_t)1 << 30) ? (int64_t)1 << 30 : r;
    r = r > S->slice ? S->slice : r;
    ck->range = r < CUDA_BLOCK ? CUDA_BLOCK : r / CUDA_BLOCK * CUDA_BLOCK;
  }
  if (P->per_elem && !ck->scratch[q]) {
    CUresult r = S->api.cuMemAlloc(&ck->scratch[q], P->per_elem * (size_t)ck->range);
    if (r != CUDA_SUCCESS) {
      ck->scratch[q] = 0;
      return cuda_fail(ctx, S, r, "allocating scratch for the kernel's temporaries");
    }
  }
  size_t most = 2 + (size_t)p->narrays + (size_t)p->nparams + (size_t)p->ntemps;
  void **args = malloc(most * sizeof *args);
  CUdeviceptr *ptrs = malloc(((size_t)p->narrays + (size_t)p->ntemps + 1) * sizeof *ptrs);
  jitc_status st = JITC_OK;
  if (!args || !ptrs)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int64_t off = 0; st == JITC_OK && off < n; off += ck->range) {
    int64_t m = n - off < ck->range ? n - off : ck->range;
    uint32_t m32 = (uint32_t)m;
    int64_t b64 = base + off;
    unsigned blocks = (unsigned)((m + CUDA_BLOCK - 1) / CUDA_BLOCK);
    for (int g = 0; g < P->ng && st == JITC_OK; g++) {
      int a = 0, np = 0;
      args[a++] = &m32;
      args[a++] = &b64;
      for (int j = 0; j < P->narr[g]; j++) {
        int slot = P->arr[g][j];
        ptrs[np] = dptr[slot] + (CUdeviceptr)off * jitc_dtype_size(p->arrays[slot].dtype);
        args[a++] = &ptrs[np++];
      }
      for (int j = 0; j < p->nparams; j++)
        args[a++] = (void *)&params[j]; /* the value sits at offset 0 of its slot */
      for (int j = 0; j < P->ntmp[g]; j++) {
        ptrs[np] = ck->scratch[q] + (CUdeviceptr)(P->temp_off[P->tmp[g][j]] * (size_t)ck->range);
        args[a++] = &ptrs[np++];
      }
      CUresult r = S->api.cuLaunchKernel(ck->mod->gfn[g], blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                         args, NULL);
      if (r != CUDA_SUCCESS)
        st = cuda_fail(ctx, S, r, "launching the kernel");
    }
  }
  free(args);
  free(ptrs);
  return st;
}


/* One launch of jitc_k32 over elements [0, n) of a slice (n <= S->slice),
** the slice starting at element `base`, with args[3...] already set: one
** thread per vector step (or per element when a pointer is not aligned
** for vectors), which measured faster than a grid of a few waves striding
** over the arrays.  JITC_CUDA_WAVES caps the grid for experiments. */
static jitc_status launch_slice(jitc_context *ctx, CudaState *S, const CudaKernel *ck, int64_t n,
                                int64_t base, bool aligned, void **args, CUstream s) {
  int vec = ck->vec;
  int64_t work = aligned ? n / vec : n;
  if (aligned && work < n % vec)
    work = n % vec;
  int64_t blocks = (work + CUDA_BLOCK - 1) / CUDA_BLOCK;
  int waves = S->env->cuda_waves;
  int64_t cap = waves ? (int64_t)S->nsm * ck->mod->occ * waves : (int64_t)1 << 30;
  if (blocks > cap)
    blocks = cap;
  if (blocks < 1)
    blocks = 1;
  /* The kernel's 32-bit indices reach n plus one grid stride of vectors:
  ** below 2^32 for a slice below 2^31 elements. */
  uint32_t n32 = (uint32_t)n;
  int64_t base64 = base;
  int vflag = aligned;
  args[0] = &n32;
  args[1] = &base64;
  args[2] = &vflag;
  CUresult r = S->api.cuLaunchKernel(ck->mod->fn, (unsigned)blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                     args, NULL);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "launching the kernel");
}

jitc_status cuda_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k, int64_t n,
                        int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                        CUstream s) {
  const CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  if (n <= 0)
    return JITC_OK;
  if (ck->plan)
    return launch_split(ctx, S, k, n, base, dptr, params, s);
  /* Vector accesses where every array is aligned for them (a slice, a
  ** multiple of 4096 elements, keeps the alignment). */
  bool aligned = S->env->cuda_vec != 0;
  for (int a = 0; a < p->narrays && aligned; a++)
    if (dptr[a] % ((CUdeviceptr)ck->vec * jitc_dtype_size(p->arrays[a].dtype)) != 0)
      aligned = false;
  int nargs = 3 + p->narrays + p->nparams;
  void **args = malloc((size_t)nargs * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays + 1) * sizeof *ptr);
  jitc_status st = JITC_OK;
  if (!args || !ptr)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int64_t slice = S->slice / 4096 * 4096;
  if (slice < 4096)
    slice = 4096;
  for (int64_t off = 0; st == JITC_OK && off < n; off += slice) {
    int q = 3;
    for (int a = 0; a < p->narrays; a++) {
      ptr[a] = dptr[a] + (CUdeviceptr)off * jitc_dtype_size(p->arrays[a].dtype);
      args[q++] = &ptr[a];
    }
    for (int a = 0; a < p->nparams; a++)
      args[q++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
    st = launch_slice(ctx, S, ck, n - off < slice ? n - off : slice, base + off, aligned, args, s);
  }
  free(args);
  free(ptr);
  return st;
}

/* ===================================================================== */
/* Device-resident buffers                                                */
/* ===================================================================== */

static jitc_status cuda_buffer_new(jitc_context *ctx, jitc_buffer *b) {
  CudaState *S = cuda_state(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  if (!cuda_load_gpu(S)) {
    st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
    goto out;
  }
  S->api.cuCtxSetCurrent(S->pctx);
  size_t bytes = (size_t)b->n * jitc_dtype_size(b->dtype);
  CUdeviceptr d = 0;
  if (bytes > 0) {
    CUresult r = S->api.cuMemAlloc(&d, bytes);
    if (r != CUDA_SUCCESS) {
      size_t fr = 0, tot = 0;
      S->api.cuMemGetInfo(&fr, &tot);
      st = ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                     "cuda: cannot allocate %.1f MB of device memory for %lld %s elements "
                     "(%.1f MB free of %.1f MB; %s)",
                     (double)bytes / 1e6, (long long)b->n, jitc_dtype_name(b->dtype),
                     (double)fr / 1e6, (double)tot / 1e6, cuda_result_name(&S->api, r));
      goto out;
    }
  }
  b->impl = (void *)(uintptr_t)d;
out:
  pthread_mutex_unlock(&S->lock);
  return st;
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
  S->api.cuCtxSetCurrent(S->pctx);
  size_t es = jitc_dtype_size(b->dtype);
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl + (CUdeviceptr)((size_t)off * es);
  CUresult r = upload ? S->api.cuMemcpyHtoD(d, host, (size_t)n * es)
                      : S->api.cuMemcpyDtoH(host, d, (size_t)n * es);
  pthread_mutex_unlock(&S->lock);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, upload ? "upload" : "download");
}

static void cuda_buffer_free(jitc_buffer *b) {
  CudaState *S = b->ctx ? b->ctx->target_state[JITC_TARGET_CUDA] : NULL;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl;
  if (S && S->gpu_ok && d) {
    pthread_mutex_lock(&S->lock);
    S->api.cuCtxSetCurrent(S->pctx);
    S->api.cuMemFree(d);
    pthread_mutex_unlock(&S->lock);
  }
  b->impl = NULL;
}

static jitc_status cuda_run_buffers(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                    jitc_buffer *const *bufs, const ParamSlot *params,
                                    jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl)
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
    if (b->n < n)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: buffer for '%s' has %lld elements, fewer than %lld",
                       p->arrays[a].name, (long long)b->n, (long long)n);
  }
  if (n <= 0)
    return JITC_OK;
  pthread_mutex_lock(&S->lock);
  S->api.cuCtxSetCurrent(S->pctx);
  jitc_status st = cuda_ensure_slots(ctx, S);
  CUdeviceptr stack_d[64];
  CUdeviceptr *d = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *d);
  if (st == JITC_OK && !d)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK) {
    for (int a = 0; a < p->narrays; a++)
      d[a] = (CUdeviceptr)(uintptr_t)bufs[a]->impl;
    CudaSlot *sl = &S->slot[0];
    CUresult r = S->api.cuEventRecord(sl->ev[1], sl->stream);
    if (r == CUDA_SUCCESS)
      st = cuda_launch(ctx, S, k, n, 0, d, params, sl->stream);
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
  pthread_mutex_unlock(&S->lock);
  return st;
}

const Target target_cuda = {
    .name = "cuda",
    .available = cuda_available,
    .device = cuda_device,
    .compile = cuda_compile,
    .run = cuda_run,
    .stages = (const char *const[]){"cuda", "ptx", NULL},
    .emit = cuda_emit,
    .release = cuda_release,
    .shutdown = cuda_shutdown,
    .buffer_new = cuda_buffer_new,
    .buffer_copy = cuda_buffer_copy,
    .buffer_free = cuda_buffer_free,
    .run_buffers = cuda_run_buffers,
};
