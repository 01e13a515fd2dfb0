/*
** cuda/host.c -- the host pipeline of the target `cuda`: running over
** arrays in host memory.
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
**   pinned, and unregistered when the call ends.
** The chunk, the slots and the threads are chosen from the bytes that move
** and the machine (choose()).  This file calls the copier (cuda/copy.c)
** and the launcher (cuda/launch.c), which call nothing back.
**
** Reductions: every chunk's blocks write their partials in one scratch, in
** chunk order; once every slot is drained jitc_r combines them all and the
** results come back (host_results).  Start reading at cuda_run(), at the
** end.
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
static void *stage_alloc(CudaState *S, size_t bytes) {
  size_t huge = (size_t)2 << 20, size = round_up(bytes, huge);
  void *p = aligned_alloc(huge, size);
  if (p) {
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE); /* advice: refused, it only costs speed */
#endif
    if (S->api.cuMemHostRegister(p, size, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS) {
      S->hstage_registered = true;
      return p;
    }
    free(p);
  }
  S->hstage_registered = false;
  p = NULL;
  return S->api.cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS ? p : NULL;
}

static void stage_free(CudaState *S) {
  if (S->hstage && S->hstage_registered) {
    S->api.cuMemHostUnregister(S->hstage);
    free(S->hstage);
  } else if (S->hstage) {
    S->api.cuMemFreeHost(S->hstage);
  }
  S->hstage = NULL;
  S->hstage_bytes = 0;
}

/* Grows the staging areas to hbytes (pinned host) and dbytes (device). */
static jitc_status ensure_stage(jitc_context *ctx, CudaState *S, size_t hbytes, size_t dbytes) {
  CudaApi *A = &S->api;
  if (dbytes > S->dstage_bytes) {
    if (S->dstage)
      A->cuMemFree(S->dstage);
    S->dstage = 0;
    S->dstage_bytes = 0;
    CUresult r = A->cuMemAlloc(&S->dstage, dbytes);
    if (r != CUDA_SUCCESS) {
      S->dstage = 0;
      return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                       "cuda: cannot allocate %.1f MB of device memory (%s)",
                       (double)dbytes / 1e6, cuda_result_name(&S->api, r));
    }
    S->dstage_bytes = dbytes;
  }
  if (hbytes > S->hstage_bytes) {
    stage_free(S);
    if (!(S->hstage = stage_alloc(S, hbytes)))
      return ctx_error(ctx, JITC_E_NOMEM, "cuda: cannot allocate %.1f MB of pinned host memory",
                       (double)hbytes / 1e6);
    S->hstage_bytes = hbytes;
  }
  return JITC_OK;
}

/* One run of the pipeline. */
typedef struct Pipe {
  CudaState *S;
  const jitc_kernel *k;
  const Program *p;
  void *const *arrays;
  const ParamSlot *params;
  int64_t n, chunk, nchunks; /* chunk: the largest */
  int64_t *at;               /* chunk c is elements [at[c], at[c + 1]) */
  int nslots, threads;
  bool streaming;
  /* Per array: its element size, whether it goes up and comes down, how
  ** (HOW_*), and its regions in a slot: pinned staging for its upload and
  ** for its download, device memory. */
  size_t *esize, *hin, *hout, *doff;
  uint8_t *how;
  bool *up, *down;
  size_t hslot, dslot; /* a slot's bytes of pinned staging and of device memory */
  CopySeg *seg;        /* a copy job being gathered */
  int nseg;
  int64_t fin;         /* the oldest chunk whose outputs are not yet back */
  CudaParts *parts;    /* the reductions' partials, all chunks' in chunk order */
  double h2d, kern, d2h;
  double t0;           /* the run's start (traces) */
} Pipe;

static char *host_part(const Pipe *P, int s) { return (char *)P->S->hstage + (size_t)s * P->hslot; }

static char *user_at(const Pipe *P, int a, int64_t off) {
  return (char *)P->arrays[a] + (size_t)off * P->esize[a];
}

static CudaTraceChunk *traced(const Pipe *P, int64_t c) {
  CudaTrace *T = P->S->trace;
  return T && c < T->cap ? &T->c[c] : NULL;
}

/* The chunks: doubling from a sixteenth of the largest up to it, then
** halving again at the end, so that little of the run is left without
** overlap at its start (the first upload, alone) and its end (the last
** download and its copy out, alone).  A function of n and the largest
** chunk only: the partials of reductions, and so the bits of float sums,
** follow the chunks.  Boundaries on multiples of 4096 elements. */
static bool cut(Pipe *P) {
  int64_t n = P->n, big = P->chunk, c0 = big / 16 / 4096 * 4096, head[64], ramp = 0;
  int steps = 0;
  for (int64_t c = c0 < 4096 ? 4096 : c0; c < big && steps < 64; c *= 2)
    ramp += head[steps++] = c;
  if (n <= 2 * ramp + big) /* too few elements for a ramp */
    steps = 0, ramp = 0;
  int64_t nmid = (n - 2 * ramp + big - 1) / big;
  P->nchunks = nmid + 2 * steps;
  P->at = malloc(((size_t)P->nchunks + 1) * sizeof *P->at);
  if (!P->at)
    return false;
  int64_t k = 0, off = 0;
  P->at[k++] = 0;
  for (int q = 0; q < steps; q++)
    P->at[k++] = off += head[q];
  for (int64_t q = 0; q < nmid; q++)
    P->at[k++] = off = off + big < n - ramp ? off + big : n - ramp;
  for (int q = steps - 1; q >= 0; q--)
    P->at[k++] = off += head[q];
  return true;
}

/* The chunk, the slots and the threads, from the bytes that move, whether
** any array is staged, and the machine.  The largest chunk moves 1 to 8 MiB
** in the larger direction, half the transfer when that is less (a function
** of n and the arrays' types alone, whatever the memory: the chunks set the
** partials of reductions, and a float sum must not change with it; 16 MiB
** measured 4% faster with nothing staged at 1e8): copies that size keep
** the engines near their peak (a copy costs microseconds to start; 8 MiB
** pieces measured at 98% of the one-way rate on an H100, 2 MiB at 94%),
** and the copy threads' jobs large enough to share among them.  Slots: 4
** with staging (each holds a chunk of staging per staged array and
** direction; more measured no faster, the copy threads being the limit),
** else 8, which keeps the copy engines fed while the host waits for one
** slot (8 MiB chunks, 10M float64 `a[i] += 1` pinned: 2.19 ms with 4, 1.96
** with 6 on an H100). */
static void choose(Pipe *P, bool staged) {
  CudaState *S = P->S;
  const CudaTune *T = &S->tune;
  size_t in_b = 0, out_b = 0;
  for (int a = 0; a < P->p->narrays; a++) {
    in_b += P->up[a] ? P->esize[a] : 0;
    out_b += P->down[a] ? P->esize[a] : 0;
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
    cb = (int64_t)((double)P->n * (double)big / 2);
    cb = cb < ((int64_t)1 << 20) ? (int64_t)1 << 20 : cb > ((int64_t)8 << 20) ? (int64_t)8 << 20 : cb;
  }
  int64_t chunk = cb / (int64_t)big / 4096 * 4096;
  chunk = chunk < 4096 ? 4096 : chunk;
  if (P->n <= chunk)
    chunk = (int64_t)round_up((size_t)(P->n > 0 ? P->n : 1), 256);
  P->chunk = chunk;
  int slots = T->slots ? T->slots : staged ? 4 : CUDA_SLOTS;
  slots = slots > CUDA_SLOTS ? CUDA_SLOTS : slots < 2 ? 2 : slots;
  int64_t most = (P->n + 4095) / 4096; /* chunks there can be, at most */
  P->nslots = most < slots ? (int)(most > 0 ? most : 1) : slots;
  P->threads = T->threads ? T->threads : S->env->cuda_copy_threads;
  P->streaming = T->streaming != 1;
}

/* Adds chunk c's staged inputs (user memory to its slot's staging) to the job. */
static void stage_in(Pipe *P, int64_t c) {
  int s = (int)(c % P->nslots);
  int64_t off = P->at[c], m = P->at[c + 1] - off;
  for (int a = 0; a < P->p->narrays; a++)
    if (P->up[a] && P->how[a] == HOW_STAGED)
      P->seg[P->nseg++] = (CopySeg){host_part(P, s) + P->hin[a], user_at(P, a, off),
                                    (size_t)m * P->esize[a], false};
}

/* Adds chunk c's staged outputs (its slot's staging to user memory) to the
** job, and counts its times. */
static void stage_out(Pipe *P, int64_t c) {
  CudaState *S = P->S;
  int s = (int)(c % P->nslots);
  CudaSlot *sl = &S->slot[s];
  for (int a = 0; a < P->p->narrays; a++)
    if (P->down[a] && P->how[a] == HOW_STAGED)
      P->seg[P->nseg++] = (CopySeg){user_at(P, a, sl->off), host_part(P, s) + P->hout[a],
                                    (size_t)sl->m * P->esize[a], P->streaming};
  P->h2d += cuda_elapsed(S, sl->ev[0], sl->ev[1]);
  P->kern += cuda_elapsed(S, sl->ev[1], sl->ev[2]);
  P->d2h += cuda_elapsed(S, sl->ev[2], sl->ev[3]);
  CudaTraceChunk *t = traced(P, c);
  if (t) {
    t->up0 = cuda_elapsed(S, S->tstart, sl->ev[0]);
    t->up1 = cuda_elapsed(S, S->tstart, sl->ev[1]);
    t->k1 = cuda_elapsed(S, S->tstart, sl->ev[2]);
    t->down1 = cuda_elapsed(S, S->tstart, sl->ev[3]);
  }
  sl->busy = false;
}

/* Runs the gathered copy job; `in` is the chunk it stages in (-1: none). */
static void run_job(Pipe *P, int64_t in, int64_t out_from) {
  double t0 = now_ms() - P->t0;
  if (P->nseg)
    cuda_copy_host(P->S, P->seg, P->nseg, P->threads);
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
static jitc_status collect(jitc_context *ctx, Pipe *P, int64_t upto, int64_t wait_upto) {
  CudaState *S = P->S;
  for (; P->fin < upto; P->fin++) {
    CudaSlot *sl = &S->slot[P->fin % P->nslots];
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
static jitc_status enqueue(jitc_context *ctx, Pipe *P, int64_t c) {
  CudaState *S = P->S;
  CudaApi *A = &S->api;
  const Program *p = P->p;
  int s = (int)(c % P->nslots);
  CudaSlot *sl = &S->slot[s];
  int64_t off = P->at[c], m = P->at[c + 1] - off;
  char *half = host_part(P, s);
  CUdeviceptr dhalf = S->dstage + (CUdeviceptr)((size_t)s * P->dslot);
  CUdeviceptr stack_d[64];
  CUdeviceptr *dptr = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *dptr);
  if (!dptr)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  CUresult r = A->cuEventRecord(sl->ev[0], sl->stream);
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    dptr[a] = dhalf + P->doff[a];
    if (P->up[a])
      r = A->cuMemcpyHtoDAsync(dptr[a], P->how[a] == HOW_STAGED ? half + P->hin[a] : user_at(P, a, off),
                               (size_t)m * P->esize[a], sl->stream);
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[1], sl->stream);
  jitc_status st = JITC_OK;
  if (r == CUDA_SUCCESS) {
    CudaKernel *ck = P->k->impl;
    st = cuda_launch(ctx, S, P->k, ck->mod, &ck->scratch[s], m, off, dptr, P->params, P->parts,
                     sl->stream);
    if (st == JITC_OK)
      r = A->cuEventRecord(sl->ev[2], sl->stream);
  }
  for (int a = 0; a < p->narrays && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (P->down[a])
      r = A->cuMemcpyDtoHAsync(P->how[a] == HOW_STAGED ? half + P->hout[a] : user_at(P, a, off),
                               dptr[a], (size_t)m * P->esize[a], sl->stream);
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

/* After every slot drained: the reductions' partials of all chunks
** combined once, on slot 0's stream, and their results copied out. */
static jitc_status host_results(jitc_context *ctx, Pipe *P) {
  CudaState *S = P->S;
  const Program *p = P->p;
  CudaKernel *ck = P->k->impl;
  CUstream s = S->slot[0].stream;
  CUdeviceptr res_stack[64];
  CUdeviceptr *res = p->narrays <= 64 ? res_stack : malloc((size_t)p->narrays * sizeof *res);
  if (!res)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  cuda_parts_results(p, P->parts, res);
  jitc_status st = cuda_reduce_launch(ctx, S, P->k, ck->mod, P->parts, P->n, res, s);
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < p->narrays && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (p->arrays[a].role == JITC_RESULT)
      r = S->api.cuMemcpyDtoHAsync(P->arrays[a], res[a], P->esize[a], s);
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
** calls again pays once, on its second call. */
static bool register_now(Pipe *P, size_t need) {
  CudaState *S = P->S;
  if (S->tune.reg)
    return S->tune.reg == 2;
  if (need <= S->hstage_bytes || need <= S->stage_asked)
    return false;
  S->stage_asked = need;
  return true;
}

/* How each array travels, and its regions in a slot. */
static void lay_out(Pipe *P) {
  CudaState *S = P->S;
  const Program *p = P->p;
  size_t hoff = 0, doff = 0, need = 0;
  for (int a = 0; a < p->narrays; a++) {
    jitc_role role = p->arrays[a].role;
    P->esize[a] = jitc_dtype_size(p->arrays[a].dtype);
    P->up[a] = role == JITC_INPUT || role == JITC_INOUT;
    P->down[a] = role == JITC_OUTPUT || role == JITC_INOUT;
  }
  bool staged = false;
  for (int a = 0; a < p->narrays; a++)
    if (p->arrays[a].role != JITC_RESULT) { /* a result: one element, from jitc_r at the end */
      P->how[a] = cuda_is_pinned(S, P->arrays[a]) ? HOW_PINNED : HOW_STAGED;
      staged |= P->how[a] == HOW_STAGED;
    }
  choose(P, staged);
  for (int a = 0; a < p->narrays; a++)
    if (P->how[a] == HOW_STAGED)
      need += (P->up[a] + P->down[a]) * round_up((size_t)P->chunk * P->esize[a], 256);
  bool reg = register_now(P, need * (size_t)P->nslots);
  staged = false;
  for (int a = 0; a < p->narrays; a++) {
    size_t bytes = (size_t)P->n * P->esize[a];
    /* Small arrays are staged all the same: a registration costs 0.5 ms at least. */
    if (reg && P->how[a] == HOW_STAGED && (bytes >= ((size_t)4 << 20) || S->tune.reg == 2) &&
        cuda_register(S, P->arrays[a], bytes))
      P->how[a] = HOW_REGISTERED;
    staged |= P->how[a] == HOW_STAGED;
  }
  if (reg && !staged)
    choose(P, false); /* everything registered: as pinned */
  for (int a = 0; a < p->narrays; a++) {
    if (p->arrays[a].role == JITC_RESULT)
      continue;
    size_t region = round_up((size_t)P->chunk * P->esize[a], 256);
    P->doff[a] = doff;
    doff += region;
    if (P->how[a] != HOW_STAGED)
      continue;
    if (P->up[a])
      P->hin[a] = hoff, hoff += region;
    if (P->down[a])
      P->hout[a] = hoff, hoff += region;
  }
  P->hslot = hoff;
  P->dslot = doff ? doff : 256;
}

static void unregister_all(Pipe *P) {
  for (int a = 0; a < P->p->narrays; a++)
    if (P->how[a] == HOW_REGISTERED)
      cuda_unregister(P->S, P->arrays[a]);
}

/* The chunks through the slots; then every slot drained. */
static jitc_status flow(jitc_context *ctx, Pipe *P) {
  jitc_status st = JITC_OK;
  for (int64_t c = 0; c < P->nchunks && st == JITC_OK; c++) {
    int64_t from = P->fin;
    /* The slot of chunk c - nslots must be free: wait for it. */
    st = collect(ctx, P, c, c - P->nslots + 1);
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

jitc_status cuda_run(jitc_context *ctx, const jitc_kernel *k, int64_t n, void *const *arrays,
                     const ParamSlot *params, jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  if (n <= 0 && !p->nreduce)
    return JITC_OK; /* with reductions, n == 0 writes their identities */
  pthread_mutex_lock(&S->lock);
  CudaCurrent c;
  jitc_status st = cuda_enter_device(ctx, S, &c);
  if (st == JITC_OK)
    st = cuda_ensure_slots(ctx, S);
  int na = p->narrays;
  Pipe P = {.S = S, .k = k, .p = p, .arrays = arrays, .params = params, .n = n,
            .t0 = now_ms()};
  size_t *mem = calloc((size_t)na * 4 + 1, sizeof(size_t));
  uint8_t *how = calloc((size_t)na + 1, 1);
  bool *flags = calloc((size_t)na * 2 + 1, sizeof(bool));
  CudaParts parts = {0};
  if (st == JITC_OK && (!mem || !how || !flags))
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st != JITC_OK)
    goto out;
  P.esize = mem, P.hin = mem + na, P.hout = mem + 2 * na, P.doff = mem + 3 * na;
  P.how = how, P.up = flags, P.down = flags + na;
  if (S->trace && S->tstart)
    S->api.cuEventRecord(S->tstart, S->slot[0].stream);
  lay_out(&P);
  P.seg = malloc(((size_t)P.nslots + 1) * ((size_t)na + 1) * sizeof *P.seg);
  if (!P.seg) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  if ((st = ensure_stage(ctx, S, (size_t)P.nslots * P.hslot, (size_t)P.nslots * P.dslot)) !=
      JITC_OK)
    goto out;
  if (!cut(&P)) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  if (p->nreduce) {
    CudaKernel *ck = k->impl;
    for (int64_t c = 0; c < P.nchunks; c++)
      parts.cap += cuda_partials(S, k, ck->mod, P.at[c + 1] - P.at[c]);
    if ((st = cuda_parts_ensure(ctx, S, ck, cuda_parts_bytes(p, parts.cap))) != JITC_OK)
      goto out;
    parts.base = ck->part;
    P.parts = &parts;
  }
  st = flow(ctx, &P);
  if (st != JITC_OK) /* wait for whatever was queued before the staging goes */
    for (int s = 0; s < P.nslots; s++)
      if (S->slot[s].busy) {
        S->api.cuStreamSynchronize(S->slot[s].stream);
        S->slot[s].busy = false;
      }
  if (st == JITC_OK && p->nreduce)
    st = host_results(ctx, &P);
  if (info) {
    info->h2d_ms = P.h2d;
    info->kernel_ms = P.kern;
    info->d2h_ms = P.d2h;
  }
out:
  if (P.how)
    unregister_all(&P);
  if (S->trace) {
    CudaTrace *T = S->trace;
    T->n = P.nchunks < T->cap ? P.nchunks : T->cap;
    T->threads = P.threads ? P.threads : S->pool ? pool_threads(S->pool) : 1;
    T->slots = P.nslots;
    T->chunk = P.chunk;
    T->registered = 0;
    for (int a = 0; a < na && P.how; a++)
      T->registered += P.how[a] == HOW_REGISTERED;
    T->total_ms = now_ms() - P.t0;
  }
  free(P.seg);
  free(P.at);
  free(mem);
  free(how);
  free(flags);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}

void cuda_host_free(CudaState *S) {
  CudaApi *A = &S->api;
  for (int s = 0; s < CUDA_SLOTS; s++) {
    if (S->slot[s].stream) {
      A->cuStreamSynchronize(S->slot[s].stream);
      A->cuStreamDestroy(S->slot[s].stream);
    }
    for (int e = 0; e < 4; e++)
      if (S->slot[s].ev[e])
        A->cuEventDestroy(S->slot[s].ev[e]);
  }
  if (S->tstart)
    A->cuEventDestroy(S->tstart);
  S->tstart = NULL;
  stage_free(S);
  if (S->dstage)
    A->cuMemFree(S->dstage);
  S->dstage = 0;
  S->dstage_bytes = 0;
  cuda_copy_free(S);
}
