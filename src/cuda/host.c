/*
** cuda/host.c -- the host pipeline of the target `cuda`: running over
** arrays in host memory.
**
** Host arrays travel through pinned staging buffers in chunks of about
** JITC_CUDA_CHUNK_MB (8) MiB of the widest array, alternating between two
** streams (slots), so that while one chunk is copied in, another is
** computed and a third copied out.  The copies between user memory and the
** staging run on JITC_CUDA_COPY_THREADS (4) threads; an array in pinned
** memory skips the staging and is copied by DMA straight from and to it.
** Reductions: every chunk's blocks write their partials in one scratch, in
** chunk order; once both streams are drained jitc_r combines them all and
** the results come back (host_results).  Start reading at cuda_run(), at
** the end.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grows the staging areas to `bytes` per half (host pinned and device). */
static jitc_status ensure_stage(jitc_context *ctx, CudaState *S, size_t hbytes, size_t dbytes) {
  CudaApi *A = &S->api;
  if (dbytes > S->dstage_bytes) {
    if (S->dstage)
      A->cuMemFree(S->dstage);
    S->dstage = 0;
    S->dstage_bytes = 0;
    CUresult r = A->cuMemAlloc(&S->dstage, 2 * dbytes);
    if (r != CUDA_SUCCESS) {
      S->dstage = 0;
      return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                       "cuda: cannot allocate %.1f MB of device memory (%s)",
                       2.0 * (double)dbytes / 1e6, cuda_result_name(&S->api, r));
    }
    S->dstage_bytes = dbytes;
  }
  if (hbytes > S->hstage_bytes) {
    if (S->hstage)
      A->cuMemFreeHost(S->hstage);
    S->hstage = NULL;
    S->hstage_bytes = 0;
    CUresult r = A->cuMemHostAlloc(&S->hstage, 2 * hbytes, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
      S->hstage = NULL;
      return ctx_error(ctx, JITC_E_NOMEM, "cuda: cannot allocate %.1f MB of pinned host memory (%s)",
                       2.0 * (double)hbytes / 1e6, cuda_result_name(&S->api, r));
    }
    S->hstage_bytes = hbytes;
  }
  return JITC_OK;
}

/* Copies between user memory and pinned staging, on the pool's threads when large. */
typedef struct CopyJob {
  char *dst;
  const char *src;
} CopyJob;

static void copy_part(void *arg, int64_t begin, int64_t end) {
  CopyJob *j = arg;
  memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

static void par_copy(CudaState *S, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return;
  if (bytes >= ((size_t)1 << 20) && !S->pool_tried) {
    S->pool_tried = true;
    int threads = S->env->cuda_copy_threads;
    if (threads > 1)
      S->pool = pool_new(threads);
  }
  if (S->pool && bytes >= ((size_t)1 << 20)) {
    CopyJob j = {dst, src};
    pool_run(S->pool, pool_threads(S->pool), (int64_t)bytes, 4096, copy_part, &j);
  } else {
    memcpy(dst, src, bytes);
  }
}

/* Whether host pointer p was allocated or registered as pinned memory.
** (cuPointerGetAttributes answers for any address, where cuMemHostGetFlags
** fails on pageable memory, an API error to the driver's tools.) */
static bool is_pinned(CudaState *S, void *p) {
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  uint64_t type = 0; /* the driver writes an unsigned int at its start */
  void *data = &type;
  if (!p || S->api.cuPointerGetAttributes(1, &attr, &data, (CUdeviceptr)(uintptr_t)p) !=
                CUDA_SUCCESS)
    return false;
  uint32_t t;
  memcpy(&t, &type, sizeof t);
  return t == CU_MEMORYTYPE_HOST;
}

/* Run state of the host pipeline. */
typedef struct HostRun {
  const jitc_kernel *k;
  void *const *arrays;
  const ParamSlot *params;
  size_t *esize;
  size_t *hoff, *doff; /* per array: offset of its region in a half */
  bool *pinned;         /* per array: DMA straight from/to user memory */
  int64_t chunk;
  CudaParts *parts; /* the reductions' partials, all chunks' in chunk order */
  double h2d, kern, d2h;
} HostRun;

/* Finishes the chunk held by slot s: waits, copies outputs out of staging. */
static jitc_status slot_finish(jitc_context *ctx, CudaState *S, HostRun *H, int s) {
  CudaSlot *sl = &S->slot[s];
  if (!sl->busy)
    return JITC_OK;
  sl->busy = false;
  CUresult r = S->api.cuEventSynchronize(sl->ev[3]);
  if (r != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "the kernel or a copy");
  H->h2d += cuda_elapsed(S, sl->ev[0], sl->ev[1]);
  H->kern += cuda_elapsed(S, sl->ev[1], sl->ev[2]);
  H->d2h += cuda_elapsed(S, sl->ev[2], sl->ev[3]);
  const Program *p = H->k->prog;
  char *half = (char *)S->hstage + (size_t)s * S->hstage_bytes;
  for (int a = 0; a < p->narrays; a++) {
    if (p->arrays[a].role == JITC_INPUT || p->arrays[a].role == JITC_RESULT || H->pinned[a])
      continue;
    par_copy(S, (char *)H->arrays[a] + (size_t)sl->off * H->esize[a], half + H->hoff[a],
             (size_t)sl->m * H->esize[a]);
  }
  return JITC_OK;
}

static jitc_status slot_start(jitc_context *ctx, CudaState *S, HostRun *H, int s, int64_t off,
                              int64_t m) {
  CudaSlot *sl = &S->slot[s];
  CudaApi *A = &S->api;
  const Program *p = H->k->prog;
  char *half = (char *)S->hstage + (size_t)s * S->hstage_bytes;
  CUdeviceptr dhalf = S->dstage + (CUdeviceptr)s * S->dstage_bytes;
  CUdeviceptr dptr[p->narrays > 0 ? p->narrays : 1];
  CUresult r = A->cuEventRecord(sl->ev[0], sl->stream);
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    dptr[a] = dhalf + H->doff[a];
    if (p->arrays[a].role == JITC_OUTPUT || p->arrays[a].role == JITC_RESULT)
      continue;
    size_t bytes = (size_t)m * H->esize[a];
    const char *user = (const char *)H->arrays[a] + (size_t)off * H->esize[a];
    if (H->pinned[a]) {
      r = A->cuMemcpyHtoDAsync(dptr[a], user, bytes, sl->stream);
    } else {
      par_copy(S, half + H->hoff[a], user, bytes);
      r = A->cuMemcpyHtoDAsync(dptr[a], half + H->hoff[a], bytes, sl->stream);
    }
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[1], sl->stream);
  if (r == CUDA_SUCCESS) {
    CudaKernel *ck = H->k->impl;
    jitc_status st = cuda_launch(ctx, S, H->k, ck->mod, &ck->scratch[s], m, off, dptr, H->params,
                                 H->parts, sl->stream);
    if (st != JITC_OK) {
      A->cuStreamSynchronize(sl->stream);
      return st;
    }
    r = A->cuEventRecord(sl->ev[2], sl->stream);
  }
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    if (p->arrays[a].role == JITC_INPUT || p->arrays[a].role == JITC_RESULT)
      continue;
    size_t bytes = (size_t)m * H->esize[a];
    void *dst = H->pinned[a] ? (char *)H->arrays[a] + (size_t)off * H->esize[a]
                             : (void *)(half + H->hoff[a]);
    r = A->cuMemcpyDtoHAsync(dst, dptr[a], bytes, sl->stream);
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[3], sl->stream);
  if (r != CUDA_SUCCESS) {
    A->cuStreamSynchronize(sl->stream);
    return cuda_fail(ctx, S, r, "queueing a chunk");
  }
  sl->busy = true;
  sl->off = off;
  sl->m = m;
  return JITC_OK;
}

/* After both slots drained: the reductions' partials of all chunks
** combined once, on slot 0's stream, and their results copied out. */
static jitc_status host_results(jitc_context *ctx, CudaState *S, HostRun *H, int64_t n) {
  const Program *p = H->k->prog;
  CudaKernel *ck = H->k->impl;
  CUstream s = S->slot[0].stream;
  CUdeviceptr res_stack[64];
  CUdeviceptr *res = p->narrays <= 64 ? res_stack : malloc((size_t)p->narrays * sizeof *res);
  if (!res)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  cuda_parts_results(p, H->parts, res);
  jitc_status st = cuda_reduce_launch(ctx, S, H->k, ck->mod, H->parts, n, res, s);
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < p->narrays && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (p->arrays[a].role == JITC_RESULT)
      r = S->api.cuMemcpyDtoHAsync(H->arrays[a], res[a], H->esize[a], s);
  CUresult w = S->api.cuStreamSynchronize(s);
  if (st == JITC_OK && (r != CUDA_SUCCESS || w != CUDA_SUCCESS))
    st = cuda_fail(ctx, S, r != CUDA_SUCCESS ? r : w, "the reductions' results");
  if (res != res_stack)
    free(res);
  return st;
}

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

jitc_status cuda_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            void *const *arrays, const ParamSlot *params, jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  if (n <= 0 && !p->nreduce)
    return JITC_OK; /* with reductions, n == 0 writes their identities */
  pthread_mutex_lock(&S->lock);
  CudaApi *A = &S->api;
  CudaCurrent c;
  jitc_status st = cuda_enter_device(ctx, S, &c);
  if (st == JITC_OK)
    st = cuda_ensure_slots(ctx, S);
  int na = p->narrays;
  HostRun H = {.k = k, .arrays = arrays, .params = params};
  size_t *mem = calloc((size_t)na * 3 + 1, sizeof(size_t));
  bool *pinned = calloc((size_t)na + 1, sizeof(bool));
  if (!mem || !pinned) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  if (st != JITC_OK)
    goto out;
  H.esize = mem;
  H.hoff = mem + na;
  H.doff = mem + 2 * na;
  H.pinned = pinned;
  /* Chunk: about JITC_CUDA_CHUNK_MB (default 8) MB of the widest array,
  ** a multiple of 4096 elements so every region stays aligned. */
  size_t maxsz = 1;
  for (int a = 0; a < na; a++) {
    H.esize[a] = jitc_dtype_size(p->arrays[a].dtype);
    if (H.esize[a] > maxsz && p->arrays[a].role != JITC_RESULT)
      maxsz = H.esize[a];
    pinned[a] = is_pinned(S, arrays[a]);
  }
  int64_t chunk = (int64_t)S->env->cuda_chunk_mb * (1 << 20) / (int64_t)maxsz;
  chunk = chunk / 4096 * 4096;
  if (chunk < 4096)
    chunk = 4096;
  if (n < chunk)
    chunk = (int64_t)round_up((size_t)n, 256);
  H.chunk = chunk;
  size_t hoff = 0, doff = 0;
  for (int a = 0; a < na; a++) {
    if (p->arrays[a].role == JITC_RESULT)
      continue; /* one element, from jitc_r at the end */
    H.doff[a] = doff;
    doff += round_up((size_t)chunk * H.esize[a], 256);
    H.hoff[a] = hoff;
    if (!pinned[a])
      hoff += round_up((size_t)chunk * H.esize[a], 256);
  }
  if ((st = ensure_stage(ctx, S, hoff ? hoff : 256, doff)) != JITC_OK)
    goto out;
  CudaParts parts = {0};
  if (p->nreduce) {
    CudaKernel *ck = k->impl;
    for (int64_t off = 0; off < n; off += chunk)
      parts.cap += cuda_partials(S, k, ck->mod, n - off < chunk ? n - off : chunk);
    if ((st = cuda_parts_ensure(ctx, S, ck, cuda_parts_bytes(p, parts.cap))) != JITC_OK)
      goto out;
    parts.base = ck->part;
    H.parts = &parts;
  }
  int s = 0;
  for (int64_t off = 0; off < n; off += chunk, s ^= 1) {
    int64_t m = n - off < chunk ? n - off : chunk;
    if ((st = slot_finish(ctx, S, &H, s)) != JITC_OK)
      break;
    if ((st = slot_start(ctx, S, &H, s, off, m)) != JITC_OK)
      break;
  }
  /* Drain both slots, the older first; after an error, just wait. */
  for (int q = 0; q < 2; q++, s ^= 1) {
    if (st == JITC_OK) {
      st = slot_finish(ctx, S, &H, s);
    } else if (S->slot[s].busy) {
      A->cuStreamSynchronize(S->slot[s].stream);
      S->slot[s].busy = false;
    }
  }
  if (st == JITC_OK && p->nreduce)
    st = host_results(ctx, S, &H, n);
  if (info) {
    info->h2d_ms = H.h2d;
    info->kernel_ms = H.kern;
    info->d2h_ms = H.d2h;
  }
out:
  free(mem);
  free(pinned);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}

void cuda_host_free(CudaState *S) {
  CudaApi *A = &S->api;
  for (int s = 0; s < 2; s++) {
    if (S->slot[s].stream) {
      A->cuStreamSynchronize(S->slot[s].stream);
      A->cuStreamDestroy(S->slot[s].stream);
    }
    for (int e = 0; e < 4; e++)
      if (S->slot[s].ev[e])
        A->cuEventDestroy(S->slot[s].ev[e]);
  }
  if (S->hstage)
    A->cuMemFreeHost(S->hstage);
  if (S->dstage)
    A->cuMemFree(S->dstage);
  S->hstage = NULL;
  S->dstage = 0;
  S->hstage_bytes = S->dstage_bytes = 0;
  if (S->pool)
    pool_free(S->pool);
  S->pool = NULL;
}
