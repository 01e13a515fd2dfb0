/*
** cuda/devptr.c -- jitc_run_device for the target `cuda`: a kernel run on
** device memory the caller owns (a CuPy array, a PyTorch tensor, its own
** cuMemAlloc), queued on the caller's stream, with no copy and no wait.
**
** The work must run where the memory lives.  The driver says where each
** pointer lives (cuPointerGetAttributes): its memory type, its device and
** the context that made it.  All of a kernel's device arrays must be on one
** device D (managed memory may be on any).  The context used is the one
** current on the calling thread when it is on D (CuPy and PyTorch leave
** D's primary context current), else the context that allocated the first
** array, else D's primary context, which is retained until the jitc context
** is freed.  The compiled module is loaded once per context from the image
** the code cache kept (cuda/build.c: cuda_module_in), so a kernel compiled
** once runs on every device of the same arch; nothing compiles here.  The
** caller's current context is restored before returning.
**
** A split program's kernels pass temporaries through scratch memory; runs
** on several of the caller's streams share one scratch per context, so each
** run waits on the stream for the last one's kernels (an event, on the
** device: the host never waits).  A program with reductions takes scratch
** for its partials from the driver's stream-ordered allocator on the
** caller's stream and gives it back there (reduce_here), so runs queued on
** several streams each have their own.  Start reading at cuda_run_device().
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a pointer lives, as the driver knows it. */
typedef struct Where {
  unsigned type;  /* CU_MEMORYTYPE_*, 0 when the driver does not know it */
  int ordinal;    /* its device */
  bool managed;
  CUcontext cx;   /* the context that allocated it (NULL for some allocators) */
} Where;

static CUresult where_is(CudaApi *A, CUdeviceptr p, Where *w) {
  /* Each attribute lands in a zeroed 64-bit slot: the driver writes an
  ** int, an unsigned, a bool or a pointer there, read back as such. */
  int attrs[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                  CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT};
  uint64_t v[4] = {0, 0, 0, 0};
  void *data[4] = {&v[0], &v[1], &v[2], &v[3]};
  CUresult r = A->cuPointerGetAttributes(4, attrs, data, p);
  uint32_t type, ordinal;
  uint8_t managed;
  memcpy(&type, &v[0], sizeof type);
  memcpy(&ordinal, &v[1], sizeof ordinal);
  memcpy(&managed, &v[2], sizeof managed);
  w->type = type;
  w->ordinal = (int)ordinal;
  w->managed = managed != 0;
  memcpy(&w->cx, &v[3], sizeof w->cx);
  return r;
}

/* Checks every array's memory; *dev gets their device (-1 when all are
** managed) and *cx the context that allocated the first device array. */
static jitc_status check_arrays(jitc_context *ctx, CudaState *S, const Program *p, int64_t n,
                                const uint64_t *ptrs, int *dev, CUcontext *cx) {
  int first = -1;
  *dev = -1;
  *cx = NULL;
  for (int a = 0; a < p->narrays; a++) {
    const char *name = p->arrays[a].name;
    if (n == 0 && p->arrays[a].role != JITC_RESULT)
      continue; /* not used: may be NULL */
    Where w;
    CUresult r = where_is(&S->api, (CUdeviceptr)ptrs[a], &w);
    if (r != CUDA_SUCCESS)
      return cuda_fail(ctx, S, r, "asking the driver about an array's pointer");
    if (w.type == 0)
      return ctx_error(ctx, JITC_E_INPUT, "cuda: array '%s' at 0x%llx is not CUDA device memory "
                       "(a host address, or freed); jitc_run_device takes device or managed "
                       "memory, jitc_run host arrays", name, (unsigned long long)ptrs[a]);
    if (w.type == CU_MEMORYTYPE_HOST)
      return ctx_error(ctx, JITC_E_INPUT, "cuda: array '%s' at 0x%llx is page-locked host "
                       "memory (cuMemHostAlloc, cudaMallocHost, registered); jitc_run_device "
                       "takes device or managed memory, jitc_run host arrays", name,
                       (unsigned long long)ptrs[a]);
    if (w.type != CU_MEMORYTYPE_DEVICE && w.type != CU_MEMORYTYPE_UNIFIED)
      return ctx_error(ctx, JITC_E_INPUT, "cuda: array '%s' at 0x%llx is not linear device "
                       "memory (memory type %u)", name, (unsigned long long)ptrs[a], w.type);
    if (w.managed)
      continue; /* reachable from every device */
    if (first < 0) {
      first = a;
      *dev = w.ordinal;
      *cx = w.cx;
    } else if (w.ordinal != *dev) {
      return ctx_error(ctx, JITC_E_INPUT, "cuda: array '%s' is on device %d but array '%s' on "
                       "device %d; a kernel's arrays must all be on one device", name,
                       w.ordinal, p->arrays[first].name, *dev);
    }
  }
  return JITC_OK;
}

/* Device `ordinal`'s primary context, retained once per jitc context. */
static jitc_status primary_context(jitc_context *ctx, CudaState *S, int ordinal, CUcontext *out) {
  CudaApi *A = &S->api;
  if (ordinal >= S->nprim) {
    int count = 0;
    A->cuDeviceGetCount(&count);
    if (ordinal < 0 || ordinal >= count)
      return ctx_error(ctx, JITC_E_INPUT, "cuda: the arrays are on device %d, which the driver "
                       "does not list (it sees %d)", ordinal, count);
    CUcontext *prim = realloc(S->prim, (size_t)count * sizeof *prim);
    if (!prim)
      return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    memset(prim + S->nprim, 0, (size_t)(count - S->nprim) * sizeof *prim);
    S->prim = prim;
    S->nprim = count;
  }
  if (!S->prim[ordinal]) {
    CUdevice d;
    CUresult r = A->cuDeviceGet(&d, ordinal);
    if (r == CUDA_SUCCESS)
      r = A->cuDevicePrimaryCtxRetain(&S->prim[ordinal], d);
    if (r != CUDA_SUCCESS) {
      S->prim[ordinal] = NULL;
      return cuda_fail(ctx, S, r, "opening the arrays' device");
    }
  }
  *out = S->prim[ordinal];
  return JITC_OK;
}

void cuda_devptr_free(CudaState *S) {
  for (int d = 0; d < S->nprim; d++)
    if (S->prim[d]) {
      CUdevice dev;
      if (S->api.cuDeviceGet(&dev, d) == CUDA_SUCCESS)
        S->api.cuDevicePrimaryCtxRelease(dev);
    }
  free(S->prim);
  S->prim = NULL;
  S->nprim = 0;
}

/* The context to run in: the caller's current one when it is on the
** arrays' device `dev` (any, when dev < 0), else the arrays' own, else
** dev's primary context. */
static jitc_status choose_context(jitc_context *ctx, CudaState *S, CUcontext cur, int dev,
                                  CUcontext own, CUcontext *out) {
  CudaApi *A = &S->api;
  CUdevice cd, want;
  if (cur && A->cuCtxGetDevice(&cd) == CUDA_SUCCESS &&
      (dev < 0 || (A->cuDeviceGet(&want, dev) == CUDA_SUCCESS && cd == want))) {
    *out = cur;
    return JITC_OK;
  }
  if (own) {
    *out = own;
    return JITC_OK;
  }
  if (dev < 0) { /* managed memory only, no context current: jitc's device */
    *out = S->pctx;
    return JITC_OK;
  }
  return primary_context(ctx, S, dev, out);
}

/* Launches in the current context: a split program behind the last run
** that used this context's scratch, whatever its stream. */
static jitc_status launch_here(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                               CudaModule *m, int64_t n, const CUdeviceptr *d,
                               const ParamSlot *params, CudaParts *parts, const CudaNdRun *nd,
                               CUstream s) {
  const CudaKernel *ck = k->impl;
  CudaApi *A = &S->api;
  if (!ck->plan)
    return cuda_launch(ctx, S, k, m, NULL, n, 0, d, params, parts, nd, s);
  CUresult r = CUDA_SUCCESS;
  if (m->dscratch_done)
    r = A->cuStreamWaitEvent(s, m->dscratch_done, 0);
  else
    r = A->cuEventCreate(&m->dscratch_done, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    m->dscratch_done = NULL;
    return cuda_fail(ctx, S, r, "ordering the kernel's scratch");
  }
  jitc_status st = cuda_launch(ctx, S, k, m, &m->dscratch, n, 0, d, params, parts, nd, s);
  r = A->cuEventRecord(m->dscratch_done, s);
  if (st == JITC_OK && r != CUDA_SUCCESS)
    st = cuda_fail(ctx, S, r, "ordering the kernel's scratch");
  return st;
}

/* Scratch of `bytes` for a run's partials that no queued run still uses:
** one of the module's kept ones whose last run has passed (its event), grown
** when too small; -1 when all are in use (runs queued on several streams). */
static int kept_scratch(CudaState *S, CudaModule *m, size_t bytes) {
  CudaApi *A = &S->api;
  int pick = -1;
  for (int q = 0; q < CUDA_RSCRATCH && pick < 0; q++)
    if (!m->rscratch_done[q] || A->cuEventQuery(m->rscratch_done[q]) == CUDA_SUCCESS)
      pick = q;
  if (pick < 0)
    return -1;
  if (!m->rscratch_done[pick] &&
      A->cuEventCreate(&m->rscratch_done[pick], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    m->rscratch_done[pick] = NULL;
    return -1;
  }
  if (m->rscratch_bytes[pick] < bytes) {
    if (m->rscratch[pick])
      A->cuMemFree(m->rscratch[pick]);
    m->rscratch_bytes[pick] = 0;
    if (A->cuMemAlloc(&m->rscratch[pick], bytes) != CUDA_SUCCESS) {
      m->rscratch[pick] = 0;
      return -1;
    }
    m->rscratch_bytes[pick] = bytes;
  }
  return pick;
}

/* launch_here, and with reductions their partials in scratch that no other
** queued run uses (kept_scratch(), else memory allocated and freed in the
** order of stream s: two runs queued on two streams each have their own),
** then jitc_r writing the results into the caller's memory, or over axes
** cuda/axisrun.c's kernels: the host waits for nothing.  Kept scratch
** spares the stream-ordered allocator's mapping of memory on each call
** (about 0.14 ms on an H100, where a pool gives its memory back once the
** stream is idle). */
static jitc_status reduce_here(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                               CudaModule *m, int64_t n, const CUdeviceptr *d,
                               const ParamSlot *params, const CudaNdRun *nd, CUstream s) {
  const Program *p = k->prog;
  CudaApi *A = &S->api;
  bool axes = nd && nd->axis;
  if (!p->nreduce)
    return launch_here(ctx, S, k, m, n, d, params, NULL, nd, s);
  CudaParts parts = {.cap = axes ? 0 : cuda_partials(S, k, n)};
  size_t bytes = axes ? cuda_axis_parts_bytes(p, nd->axis) : cuda_parts_bytes(p, parts.cap);
  if (bytes && (!A->cuMemAllocAsync || !A->cuMemFreeAsync))
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: reductions on the caller's stream need "
                     "the driver's stream-ordered allocator (CUDA 11.2 or later)");
  int kept = bytes ? kept_scratch(S, m, bytes) : -1;
  CUresult r = CUDA_SUCCESS;
  if (kept >= 0)
    parts.base = m->rscratch[kept];
  else if (bytes)
    r = A->cuMemAllocAsync(&parts.base, bytes, s);
  if (r != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "allocating scratch for the reductions' partials");
  jitc_status st;
  if (axes) { /* over axes: cuda/axisrun.c */
    st = cuda_axis_device(ctx, S, k, m, n, d, params, nd, parts.base, s);
  } else {
    st = cuda_reduce_begin(ctx, S, p, &parts, d, s);
    if (st == JITC_OK)
      st = launch_here(ctx, S, k, m, n, d, params, &parts, nd, s);
    if (st == JITC_OK)
      st = cuda_reduce_end(ctx, S, k, m, &parts, n, s);
  }
  if (kept >= 0) {
    /* Recorded even after a failure: whatever was queued uses the scratch. */
    r = A->cuEventRecord(m->rscratch_done[kept], s);
    if (st == JITC_OK && r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "ordering the reductions' scratch");
  } else if (parts.base) {
    r = A->cuMemFreeAsync(parts.base, s);
    if (st == JITC_OK && r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "freeing the reductions' partials");
  }
  return st;
}

jitc_status cuda_run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const ParamSlot *params, void *stream) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  CudaKernel *ck = k->impl;
  if (!S || !S->gpu_ok || !ck || k->ctx != ctx)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled in this context");
  return cuda_devptr_run(ctx, k, n, ptrs, params, stream, ck->mod, NULL);
}

jitc_status cuda_devptr_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const ParamSlot *params, void *stream,
                            CudaModule *home, const CudaNdRun *nd) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  pthread_mutex_lock(&S->lock);
  CudaApi *A = &S->api;
  CUcontext cx = NULL, own = NULL;
  int dev = -1;
  CudaCurrent c;
  CUresult r = cuda_enter(S, NULL, &c);
  jitc_status st = r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "cuCtxGetCurrent");
  if (st == JITC_OK)
    st = check_arrays(ctx, S, p, n, ptrs, &dev, &own);
  if (st == JITC_OK)
    st = choose_context(ctx, S, c.saved, dev, own, &cx);
  if (st == JITC_OK && (r = cuda_switch(S, &c, cx)) != CUDA_SUCCESS)
    st = cuda_fail(ctx, S, r, "making the arrays' context current");
  /* A stream of another context would fail at launch with a bare
  ** CUDA_ERROR_INVALID_HANDLE: say which.  NULL and the special handles
  ** (CU_STREAM_LEGACY 0x1, CU_STREAM_PER_THREAD 0x2) are every context's. */
  CUstream s = stream;
  CUcontext scx = NULL;
  if (st == JITC_OK && (uintptr_t)s > 2 && A->cuStreamGetCtx(s, &scx) == CUDA_SUCCESS &&
      scx != cx)
    st = ctx_error(ctx, JITC_E_USAGE, "cuda: the stream belongs to another CUDA context than "
                   "the one the arrays are used in (device %d's)", dev);
  CudaModule *m = NULL;
  if (st == JITC_OK && (st = cuda_module_in(ctx, S, home, cx, &m)) != JITC_OK)
    ctx_error(ctx, st, "cuda: the kernel, compiled for device %d, cannot be loaded for the "
              "arrays' device %d", S->env->cuda_device, dev);
  if (st == JITC_OK) {
    CUdeviceptr stack_d[64];
    CUdeviceptr *d = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *d);
    if (!d) {
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    } else {
      for (int a = 0; a < p->narrays; a++)
        d[a] = (CUdeviceptr)ptrs[a];
      st = reduce_here(ctx, S, k, m, n, d, params, nd, s);
      if (d != stack_d)
        free(d);
    }
  }
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}
