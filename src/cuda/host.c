/*
** cuda/host.c -- the host pipeline of the target `cuda` on one GPU: running
** over a range of arrays in host memory.  cuda/multi.c decides the GPUs of
** a run and each one's range, and runs one pipeline per GPU.
**
** The arrays go through the GPU in chunks, each chunk in a slot of its own
** (a stream, device memory for its part of every array, pinned staging):
** while the threads stage chunk k's inputs, the copy engines upload chunk
** k - 1 and download chunk k - 2, and the kernel runs between them.  PCIe
** moves both ways at once, so the whole run takes about as long as its
** larger direction alone.  What each array goes through:
** - pinned memory (the caller's cuMemHostAlloc or registration): DMA
**   straight from and to it;
** - pageable memory: copied into pinned staging by the copy threads before
**   its upload, and out of it after its download (cuda/copy.c), each copy
**   job carrying one chunk's inputs and the outputs of every chunk whose
**   download has ended;
** - large pageable arrays that the pipeline registers for the call, when it
**   would otherwise first have to grow its staging (register_now()): as
**   pinned, and unregistered when the call ends;
** - an array of any strides (jitc_run_arrays) that is not one aligned
**   contiguous run, pinned or not: staged, each chunk of the flat index
**   copied where it is one contiguous run of the caller's memory, else
**   gathered into the staging and scattered from it (move.c), as NumPy's
**   buffered iterator does.  Element k of the chunk is element k of the
**   broadcast shape in C order, so the kernel, `i` and the reductions'
**   chunks are those of a contiguous run.
** How each array travels, the chunk, the slots and the threads are chosen
** once per run from the bytes that move and the machine (cuda_layout(),
** choose()), the same for every GPU of the run; each GPU has its own
** streams, staging and copy threads (CudaDev).  This file calls the copier
** (cuda/copy.c) and the launcher (cuda/launch.c), which call nothing back.
**
** Reductions: every chunk's blocks write their partials in one scratch, in
** chunk order; once every GPU is drained jitc_r combines them all and the
** results come back (cuda_host_results).  Start reading at cuda_pipe_run(),
** at the end.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HOW_PINNED = 1, HOW_STAGED, HOW_REGISTERED };

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Pinned staging: huge pages from the C library, registered, which the
** driver pins at about 30 GB/s on an H100's host where cuMemHostAlloc
** gives about 2 GB/s (a first run's staging costs a few milliseconds, not
** tens); cuMemHostAlloc where the registration is refused. */
static void *stage_alloc(CudaState *S, CudaDev *D, size_t bytes) {
  size_t huge = (size_t)2 << 20, size = round_up(bytes, huge);
  void *p = aligned_alloc(huge, size);
  if (p) {
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE); /* advice: refused, it only costs speed */
#endif
    if (S->api.cuMemHostRegister(p, size, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS) {
      D->hstage_registered = true;
      return p;
    }
    free(p);
  }
  D->hstage_registered = false;
  p = NULL;
  return S->api.cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS ? p : NULL;
}

static void stage_free(CudaState *S, CudaDev *D) {
  if (D->hstage && D->hstage_registered) {
    S->api.cuMemHostUnregister(D->hstage);
    free(D->hstage);
  } else if (D->hstage) {
    S->api.cuMemFreeHost(D->hstage);
  }
  D->hstage = NULL;
  D->hstage_bytes = 0;
}

/* Grows the staging areas to hbytes (pinned host) and dbytes (device). */
static jitc_status ensure_stage(jitc_context *ctx, CudaState *S, CudaDev *D, size_t hbytes,
                                size_t dbytes) {
  CudaApi *A = &S->api;
  if (dbytes > D->dstage_bytes) {
    if (D->dstage)
      A->cuMemFree(D->dstage);
    D->dstage = 0;
    D->dstage_bytes = 0;
    CUresult r = A->cuMemAlloc(&D->dstage, dbytes);
    if (r != CUDA_SUCCESS) {
      D->dstage = 0;
      return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                       "cuda: cannot allocate %.1f MB of device memory (%s)",
                       (double)dbytes / 1e6, cuda_result_name(&S->api, r));
    }
    D->dstage_bytes = dbytes;
  }
  if (hbytes > D->hstage_bytes) {
    stage_free(S, D);
    if (!(D->hstage = stage_alloc(S, D, hbytes)))
      return ctx_error(ctx, JITC_E_NOMEM, "cuda: cannot allocate %.1f MB of pinned host memory",
                       (double)hbytes / 1e6);
    D->hstage_bytes = hbytes;
  }
  return JITC_OK;
}

static char *host_part(const CudaPipe *P, int s) {
  return (char *)P->D->hstage + (size_t)s * P->L->hslot;
}

static char *user_at(const CudaPipe *P, int a, int64_t off) {
  return (char *)P->arrays[a] + (size_t)off * P->L->esize[a];
}

static CudaTraceChunk *traced(const CudaPipe *P, int64_t c) {
  CudaTrace *T = P->trace;
  return T && c < T->cap ? &T->c[c] : NULL;
}

/* The chunks: doubling from a sixteenth of the largest up to it, then
** halving again at the end, so that little of the run is left without
** overlap at its start (the first upload, alone) and its end (the last
** download and its copy out, alone).  A function of n and the largest
** chunk only: the partials of reductions, and so the bits of float sums,
** follow the chunks.  Boundaries on multiples of 4096 elements from `from`. */
int64_t *cuda_cut(int64_t from, int64_t n, int64_t big, int64_t *nchunks) {
  int64_t c0 = big / 16 / 4096 * 4096, head[64], ramp = 0;
  int steps = 0;
  for (int64_t c = c0 < 4096 ? 4096 : c0; c < big && steps < 64; c *= 2)
    ramp += head[steps++] = c;
  if (n <= 2 * ramp + big) /* too few elements for a ramp */
    steps = 0, ramp = 0;
  int64_t nmid = (n - 2 * ramp + big - 1) / big;
  *nchunks = nmid + 2 * steps;
  int64_t *at = malloc(((size_t)*nchunks + 1) * sizeof *at);
  if (!at)
    return NULL;
  int64_t k = 0, off = 0;
  at[k++] = from;
  for (int q = 0; q < steps; q++)
    at[k++] = from + (off += head[q]);
  for (int64_t q = 0; q < nmid; q++)
    at[k++] = from + (off = off + big < n - ramp ? off + big : n - ramp);
  for (int q = steps - 1; q >= 0; q--)
    at[k++] = from + (off += head[q]);
  return at;
}

/* The chunk, the slots and the threads, from the bytes that move, whether
** any array is staged, and the machine.  The largest chunk moves 1 to 8 MiB
** in the larger direction, half the transfer when that is less (a function
** of n and the arrays' types alone, whatever the memory and the GPUs: the
** chunks set the partials of reductions, and a float sum must not change
** with them; 16 MiB measured 4% faster with nothing staged at 1e8): copies
** that size keep the engines near their peak (a copy costs microseconds to
** start; 8 MiB pieces measured at 98% of the one-way rate on an H100, 2 MiB
** at 94%), and the copy threads' jobs large enough to share among them.
** Slots: 4 with staging (each holds a chunk of staging per staged array and
** direction; more measured no faster, the copy threads being the limit),
** else 8, which keeps the copy engines fed while the host waits for one
** slot (8 MiB chunks, 10M float64 `a[i] += 1` pinned: 2.19 ms with 4, 1.96
** with 6 on an H100). */
static void choose(CudaState *S, const Program *p, int64_t n, bool staged, const Layout *nd,
                   CudaLayout *L) {
  const CudaTune *T = &S->tune;
  size_t in_b = 0, out_b = 0;
  for (int a = 0; a < p->narrays; a++) {
    in_b += L->up[a] ? L->esize[a] : 0;
    out_b += L->down[a] ? L->esize[a] : 0;
  }
  size_t big = in_b > out_b ? in_b : out_b;
  big = big ? big : 1;
  int64_t cb = T->chunk_bytes;
  if (!cb && S->env->cuda_chunk_mb)
    cb = (int64_t)S->env->cuda_chunk_mb << 20;
  if (!cb) {
    /* Half the transfer: at 8 MB (1M float64 in place) two chunks took 0.75
    ** ms where an eighth took 1.41 (the per-chunk costs of copy jobs and
    ** events outweighing their overlap), at 24 MB 8 MiB chunks 1.33 ms where
    ** an eighth took 2.38 (H100, pageable). */
    cb = (int64_t)((double)n * (double)big / 2);
    cb = cb < ((int64_t)1 << 20) ? (int64_t)1 << 20 : cb > ((int64_t)8 << 20) ? (int64_t)8 << 20 : cb;
  }
  int64_t chunk = cb / (int64_t)big / 4096 * 4096;
  chunk = chunk < 4096 ? 4096 : chunk;
  if (nd && nd->axes) { /* whole pieces of the segments, one at least */
    CudaAxisRun A;
    cuda_axis_plan(nd->seg, nd->nseg, &A);
    int64_t plen = cuda_axis_plen(&A);
    chunk = chunk < plen ? (plen + 4095) / 4096 * 4096 : chunk;
  }
  if (n <= chunk)
    chunk = (int64_t)round_up((size_t)(n > 0 ? n : 1), 256);
  L->chunk = chunk;
  int slots = T->slots ? T->slots : staged ? 4 : CUDA_SLOTS;
  slots = slots > CUDA_SLOTS ? CUDA_SLOTS : slots < 2 ? 2 : slots;
  int64_t most = (n + 4095) / 4096; /* chunks there can be, at most */
  L->nslots = most < slots ? (int)(most > 0 ? most : 1) : slots;
  L->threads = T->threads ? T->threads : S->env->cuda_copy_threads;
  L->streaming = T->streaming != 1;
  L->bytes = (in_b + out_b) * (size_t)(n > 0 ? n : 0);
}

/* The copy of elements [off, off + m) of array a between the caller's
** memory and the staging at buf (to it when `in`): a plain copy where they
** are one contiguous run there, else a gather or a scatter (CudaLayout.nd). */
static CopySeg user_seg(const CudaPipe *P, int a, int64_t off, int64_t m, char *buf, bool in) {
  const CudaLayout *L = P->L;
  size_t len = (size_t)m * L->esize[a];
  char *at = user_at(P, a, off);
  if (L->nd && !layout_block(L->nd, a, off, m, &at))
    return in ? (CopySeg){buf, NULL, len, false, L->nd, a, off}
              : (CopySeg){NULL, buf, len, false, L->nd, a, off};
  return in ? (CopySeg){buf, at, len, false, NULL, 0, 0}
            : (CopySeg){at, buf, len, L->streaming, NULL, 0, 0};
}

/* Adds chunk c's staged inputs (user memory to its slot's staging) to the job. */
static void stage_in(CudaPipe *P, int64_t c) {
  const CudaLayout *L = P->L;
  int s = (int)(c % L->nslots);
  int64_t off = P->at[c], m = P->at[c + 1] - off;
  for (int a = 0; a < P->k->prog->narrays; a++)
    if (L->up[a] && L->how[a] == CUDA_HOW_STAGED)
      P->seg[P->nseg++] = user_seg(P, a, off, m, host_part(P, s) + L->hin[a], true);
}

/* Adds chunk c's staged outputs (its slot's staging to user memory) to the
** job, and counts its times. */
static void stage_out(CudaPipe *P, int64_t c) {
  CudaState *S = P->S;
  const CudaLayout *L = P->L;
  int s = (int)(c % L->nslots);
  CudaSlot *sl = &P->D->slot[s];
  for (int a = 0; a < P->k->prog->narrays; a++)
    if (L->down[a] && L->how[a] == CUDA_HOW_STAGED)
      P->seg[P->nseg++] = user_seg(P, a, sl->off, sl->m, host_part(P, s) + L->hout[a], false);
  P->h2d += cuda_elapsed(S, sl->ev[0], sl->ev[1]);
  P->kern += cuda_elapsed(S, sl->ev[1], sl->ev[2]);
  P->d2h += cuda_elapsed(S, sl->ev[2], sl->ev[3]);
  CudaTraceChunk *t = traced(P, c);
  if (t) {
    CUevent t0 = P->D->tstart;
    t->up0 = cuda_elapsed(S, t0, sl->ev[0]);
    t->up1 = cuda_elapsed(S, t0, sl->ev[1]);
    t->k1 = cuda_elapsed(S, t0, sl->ev[2]);
    t->down1 = cuda_elapsed(S, t0, sl->ev[3]);
  }
  sl->busy = false;
}

/* Runs the gathered copy job; `in` is the chunk it stages in (-1: none). */
static void run_job(CudaPipe *P, int64_t in, int64_t out_from) {
  double t0 = now_ms() - P->t0;
  if (P->nseg)
    cuda_copy_host(P->S, P->D, P->seg, P->nseg, P->L->threads);
  double t1 = now_ms() - P->t0;
  P->nseg = 0;
  CudaTraceChunk *t = in >= 0 ? traced(P, in) : NULL;
  if (t)
    t->in0 = t0, t->in1 = t1;
  for (int64_t c = out_from; c < P->fin; c++)
    if ((t = traced(P, c)))
      t->out0 = t0, t->out1 = t1;
}

/* Gathers the outputs of every chunk before `upto` whose download has
** ended, waiting for those before `wait_upto`. */
static jitc_status collect(jitc_context *ctx, CudaPipe *P, int64_t upto, int64_t wait_upto) {
  CudaState *S = P->S;
  for (; P->fin < upto; P->fin++) {
    CudaSlot *sl = &P->D->slot[P->fin % P->L->nslots];
    CUresult r = P->fin < wait_upto ? S->api.cuEventSynchronize(sl->ev[3])
                                    : S->api.cuEventQuery(sl->ev[3]);
    if (r == CUDA_ERROR_NOT_READY)
      break;
    if (r != CUDA_SUCCESS)
      return cuda_fail(ctx, S, r, "the kernel or a copy");
    stage_out(P, P->fin);
  }
  return JITC_OK;
}

/* Queues chunk c on its slot: uploads, the kernel, downloads. */
static jitc_status enqueue(jitc_context *ctx, CudaPipe *P, int64_t c) {
  CudaState *S = P->S;
  CudaApi *A = &S->api;
  const CudaLayout *L = P->L;
  const Program *p = P->k->prog;
  int s = (int)(c % L->nslots);
  CudaSlot *sl = &P->D->slot[s];
  int64_t off = P->at[c], m = P->at[c + 1] - off;
  char *half = host_part(P, s);
  CUdeviceptr dhalf = P->D->dstage + (CUdeviceptr)((size_t)s * L->dslot);
  CUdeviceptr stack_d[64];
  CUdeviceptr *dptr = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *dptr);
  if (!dptr)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  CUresult r = A->cuEventRecord(sl->ev[0], sl->stream);
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    dptr[a] = dhalf + L->doff[a];
    if (L->up[a])
      r = A->cuMemcpyHtoDAsync(dptr[a], L->how[a] == CUDA_HOW_STAGED ? half + L->hin[a]
                                                                      : user_at(P, a, off),
                               (size_t)m * L->esize[a], sl->stream);
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[1], sl->stream);
  jitc_status st = JITC_OK;
  if (r == CUDA_SUCCESS) {
    st = P->axis ? cuda_axis_launch(ctx, S, P->k, P->kd->mod, P->axis, off, m, dptr, P->params,
                                    sl->stream)
                 : cuda_launch(ctx, S, P->k, P->kd->mod, &P->kd->scratch[s], m, off, dptr,
                               P->params, P->parts, NULL, sl->stream);
    if (st == JITC_OK)
      r = A->cuEventRecord(sl->ev[2], sl->stream);
  }
  for (int a = 0; a < p->narrays && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (L->down[a])
      r = A->cuMemcpyDtoHAsync(L->how[a] == CUDA_HOW_STAGED ? half + L->hout[a]
                                                             : user_at(P, a, off),
                               dptr[a], (size_t)m * L->esize[a], sl->stream);
  if (st == JITC_OK && r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[3], sl->stream);
  if (dptr != stack_d)
    free(dptr);
  sl->busy = true; /* even after a failure: whatever was queued is waited for */
  sl->chunk = c;
  sl->off = off;
  sl->m = m;
  if (st == JITC_OK && r != CUDA_SUCCESS)
    st = cuda_fail(ctx, S, r, "queueing a chunk");
  CudaTraceChunk *t = traced(P, c);
  if (t)
    t->off = off, t->m = m;
  return st;
}

jitc_status cuda_host_results(jitc_context *ctx, CudaState *S, CudaDev *D, CudaKDev *kd,
                              const jitc_kernel *k, const CudaParts *parts, int64_t n,
                              void *const *arrays) {
  const Program *p = k->prog;
  CUstream s = D->slot[0].stream;
  CUdeviceptr res_stack[64];
  CUdeviceptr *res = p->narrays <= 64 ? res_stack : malloc((size_t)p->narrays * sizeof *res);
  if (!res)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  cuda_parts_results(p, parts, res);
  jitc_status st = cuda_reduce_launch(ctx, S, k, kd->mod, parts, n, res, s);
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < p->narrays && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (p->arrays[a].role == JITC_RESULT)
      r = S->api.cuMemcpyDtoHAsync(arrays[a], res[a], jitc_dtype_size(p->arrays[a].dtype), s);
  CUresult w = S->api.cuStreamSynchronize(s);
  if (st == JITC_OK && (r != CUDA_SUCCESS || w != CUDA_SUCCESS))
    st = cuda_fail(ctx, S, r != CUDA_SUCCESS ? r : w, "the reductions' results");
  if (res != res_stack)
    free(res);
  return st;
}

/* Whether this run registers its large pageable arrays rather than
** staging them.  Per call, staging is faster (on an H100's host, 80 MB both
** ways: about 4.5 ms staged, 8 registered, the registration and its undoing
** at about 30 and 43 GB/s), but staging first has to exist: pinning it
** costs more than the call (about 20 ms for the 64 MB `a[i] += 1` over 10M
** float64 needs).  So the first run that needs more staging than there is
** registers its arrays instead, and a second such run grows the staging: a
** program that calls once (the command line) never pays for it, one that
** calls again pays once, on its second call.  Asked of the run's first
** GPU; every GPU of a run needs the same staging. */
static bool register_now(CudaState *S, CudaDev *D, size_t need) {
  if (S->tune.reg)
    return S->tune.reg == 2;
  if (need <= D->hstage_bytes || need <= D->stage_asked)
    return false;
  D->stage_asked = need;
  return true;
}

jitc_status cuda_layout(jitc_context *ctx, CudaState *S, CudaDev *lead, const jitc_kernel *k,
                        int64_t n, void *const *arrays, const Layout *nd, bool portable,
                        CudaLayout *L) {
  const Program *p = k->prog;
  int na = p->narrays;
  memset(L, 0, sizeof *L);
  L->mem = calloc((size_t)na * (4 * sizeof(size_t) + 3) + 1, 1);
  if (!L->mem)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  L->esize = L->mem;
  L->hin = L->esize + na, L->hout = L->hin + na, L->doff = L->hout + na;
  L->how = (uint8_t *)(L->doff + na);
  L->up = (bool *)(L->how + na), L->down = L->up + na;
  L->nd = nd;
  size_t hoff = 0, doff = 0, need = 0;
  for (int a = 0; a < na; a++) {
    jitc_role role = p->arrays[a].role;
    L->esize[a] = jitc_dtype_size(p->arrays[a].dtype);
    L->up[a] = role == JITC_INPUT || role == JITC_INOUT;
    L->down[a] = role == JITC_OUTPUT || role == JITC_INOUT;
  }
  bool staged = false;
  for (int a = 0; a < na; a++)
    if (p->arrays[a].role != JITC_RESULT) { /* a result: one element, from jitc_r at the end */
      bool direct = !nd || nd->a[a].direct; /* else no DMA reaches it in place */
      L->how[a] = direct && cuda_is_pinned(S, arrays[a]) ? CUDA_HOW_PINNED : CUDA_HOW_STAGED;
      staged |= L->how[a] == CUDA_HOW_STAGED;
    }
  choose(S, p, n, staged, nd, L);
  for (int a = 0; a < na; a++)
    if (L->how[a] == CUDA_HOW_STAGED)
      need += (L->up[a] + L->down[a]) * round_up((size_t)L->chunk * L->esize[a], 256);
  bool reg = register_now(S, lead, need * (size_t)L->nslots);
  staged = false;
  for (int a = 0; a < na; a++) {
    size_t bytes = (size_t)n * L->esize[a];
    /* Small arrays are staged all the same: a registration costs 0.5 ms at least. */
    if (reg && L->how[a] == CUDA_HOW_STAGED && (!nd || nd->a[a].direct) &&
        (bytes >= ((size_t)4 << 20) || S->tune.reg == 2) &&
        cuda_register(S, arrays[a], bytes, portable) == CUDA_SUCCESS)
      L->how[a] = CUDA_HOW_REGISTERED;
    staged |= L->how[a] == CUDA_HOW_STAGED;
  }
  if (reg && !staged)
    choose(S, p, n, false, nd, L); /* everything registered: as pinned */
  for (int a = 0; a < na; a++) {
    if (p->arrays[a].role == JITC_RESULT)
      continue;
    size_t region = round_up((size_t)L->chunk * L->esize[a], 256);
    L->doff[a] = doff;
    doff += region;
    if (L->how[a] != CUDA_HOW_STAGED)
      continue;
    if (L->up[a])
      L->hin[a] = hoff, hoff += region;
    if (L->down[a])
      L->hout[a] = hoff, hoff += region;
  }
  L->hslot = hoff;
  L->dslot = doff ? doff : 256;
  return JITC_OK;
}

void cuda_layout_end(CudaState *S, const jitc_kernel *k, void *const *arrays, CudaLayout *L) {
  for (int a = 0; a < k->prog->narrays && L->mem; a++)
    if (L->how[a] == CUDA_HOW_REGISTERED)
      cuda_unregister(S, arrays[a]);
  free(L->mem);
  L->mem = NULL;
}

/* The chunks through the slots; then every slot drained. */
static jitc_status flow(jitc_context *ctx, CudaPipe *P) {
  jitc_status st = JITC_OK;
  for (int64_t c = 0; c < P->nchunks && st == JITC_OK; c++) {
    int64_t from = P->fin;
    /* The slot of chunk c - nslots must be free: wait for it. */
    st = collect(ctx, P, c, c - P->L->nslots + 1);
    if (st == JITC_OK) {
      stage_in(P, c);
      run_job(P, c, from);
      st = enqueue(ctx, P, c);
    }
  }
  while (st == JITC_OK && P->fin < P->nchunks) {
    int64_t from = P->fin;
    st = collect(ctx, P, P->nchunks, P->fin + 1);
    if (st == JITC_OK)
      run_job(P, -1, from);
  }
  return st;
}

jitc_status cuda_pipe_run(jitc_context *ctx, CudaPipe *P) {
  CudaState *S = P->S;
  CudaDev *D = P->D;
  const CudaLayout *L = P->L;
  int na = P->k->prog->narrays;
  jitc_status st = cuda_ensure_slots(ctx, S, D);
  if (st != JITC_OK)
    return st;
  if (P->trace && D->tstart)
    S->api.cuEventRecord(D->tstart, D->slot[0].stream);
  P->seg = malloc(((size_t)L->nslots + 1) * ((size_t)na + 1) * sizeof *P->seg);
  if (!P->seg)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  P->nseg = 0;
  P->fin = 0;
  st = ensure_stage(ctx, S, D, (size_t)L->nslots * L->hslot, (size_t)L->nslots * L->dslot);
  if (st == JITC_OK)
    st = flow(ctx, P);
  if (st != JITC_OK) /* wait for whatever was queued before the staging goes */
    for (int s = 0; s < L->nslots; s++)
      if (D->slot[s].busy) {
        S->api.cuStreamSynchronize(D->slot[s].stream);
        D->slot[s].busy = false;
      }
  free(P->seg);
  P->seg = NULL;
  return st;
}

void cuda_host_free(CudaState *S, CudaDev *D) {
  CudaApi *A = &S->api;
  for (int s = 0; s < CUDA_SLOTS; s++) {
    if (D->slot[s].stream) {
      A->cuStreamSynchronize(D->slot[s].stream);
      A->cuStreamDestroy(D->slot[s].stream);
    }
    for (int e = 0; e < 4; e++)
      if (D->slot[s].ev[e])
        A->cuEventDestroy(D->slot[s].ev[e]);
  }
  memset(D->slot, 0, sizeof D->slot);
  D->slots_ok = false;
  if (D->tstart)
    A->cuEventDestroy(D->tstart);
  D->tstart = NULL;
  stage_free(S, D);
  if (D->dstage)
    A->cuMemFree(D->dstage);
  D->dstage = 0;
  D->dstage_bytes = 0;
  cuda_copy_free(D);
}
