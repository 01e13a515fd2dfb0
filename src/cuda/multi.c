/*
** cuda/multi.c -- a run over host arrays on every GPU of the kernel
** (jitc_options.devices, $JITC_DEVICES, else all): cuda_run, which
** jitc_run() calls.
**
** Each GPU, on its own PCIe link, runs the host pipeline of cuda/host.c
** over one contiguous share of the elements, on a host thread of its own
** (the calling thread takes the first share), with its own context,
** streams, device memory, pinned staging and copy threads, so that the
** pipelines share nothing but the caller's arrays, each writing its own
** elements.  How the arrays travel and the chunk are chosen once for the
** whole run (cuda_layout), as for one GPU.
**
** The shares (cuda/shares.c) follow the GPUs' speed on this path, their
** link's rate both ways at once, measured once per GPU and kept for the
** context's life (cuda/device.c: cuda_measure).  A run moving less than
** CUDA_SHARE_MIN bytes per GPU uses fewer GPUs: a GPU's thread and its
** first chunk alone on its link cost more than a small share saves; and
** with no device list given, a GPU whose context is not made yet joins
** from the second run that wants it (worth_opening).
**
** Reductions: the one-GPU run's chunks are cut first, and the shares end
** on them, so that each GPU computes the partials of its chunks exactly as
** one GPU would (the grid is the home device's: cuda/launch.c), at the
** same places of a scratch as large as all of them.  Each GPU copies its
** own partials to the host; the first GPU takes them back at their places
** and combines all of them in the fixed order of jitc_r.  The result is
** bit-identical whatever the number of GPUs.
**
** Arrays of any strides (jitc_run_arrays: cuda_run_layout) take the same
** path: a share is a range of the flat index, and each GPU's pipeline
** gathers and scatters its own chunks (cuda/host.c), writing its own
** elements as over contiguous arrays.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One GPU's share of a run. */
typedef struct Share {
  CudaPipe P;
  int g;                  /* its lane in S->gpu */
  int64_t *own;           /* its chunks when it cut them itself (no reductions) */
  CudaParts parts;        /* partials [prefix, prefix + count) of every reduction */
  int64_t prefix, count;
  char *hparts;           /* the host copy of all partials (reductions, several GPUs) */
  bool download;          /* copies its partials to hparts at the end */
  jitc_context *wctx;     /* its errors, on a thread of its own */
  jitc_status st;
  pthread_t th;
  bool threaded;
} Share;

/* A share on its own thread, in its own context. */
static void *share_main(void *arg) {
  Share *H = arg;
  CudaState *S = H->P.S;
  CudaApi *A = &S->api;
  CUresult r = A->cuCtxSetCurrent(H->P.D->cx);
  H->st = r == CUDA_SUCCESS ? cuda_pipe_run(H->wctx, &H->P)
                            : cuda_fail(H->wctx, S, r, "making a device's context current");
  if (H->st == JITC_OK && H->download) {
    /* Its partials of every reduction, to their places in the host copy. */
    int nr = H->P.k->prog->nreduce;
    for (int q = 0; q < nr && r == CUDA_SUCCESS; q++) {
      size_t at = ((size_t)q * (size_t)H->parts.cap + (size_t)H->prefix) * CUDA_PART;
      r = A->cuMemcpyDtoH(H->hparts + at, H->parts.base + at, (size_t)H->count * CUDA_PART);
    }
    if (r != CUDA_SUCCESS)
      H->st = cuda_fail(H->wctx, S, r, "copying the reductions' partials");
  }
  A->cuCtxSetCurrent(NULL);
  return NULL;
}

/* Opening a lane (its context, streams) on a thread of its own. */
typedef struct Opening {
  CudaState *S;
  CudaDev *D;
  jitc_context *wctx;
  jitc_status st;
  pthread_t th;
  bool threaded;
} Opening;

static void *open_main(void *arg) {
  Opening *O = arg;
  O->st = cuda_lane_open(O->wctx, O->S, O->D);
  O->S->api.cuCtxSetCurrent(NULL);
  return NULL;
}

/* A worker's error in the caller's context, naming the GPU (ordinal < 0:
** its message names it already). */
static jitc_status adopt(jitc_context *ctx, jitc_context *wctx, jitc_status st, int ordinal) {
  const char *msg = wctx->diags.n ? wctx->diags.v[0].msg : "failed";
  if (ordinal < 0)
    st = ctx_error(ctx, st, "%s", msg ? msg : "out of memory");
  else
    st = ctx_error(ctx, st, "%s (GPU %d)", msg ? msg : "out of memory", ordinal);
  diags_clear(&wctx->diags);
  return st;
}

/* Opens the lanes g[0..n) that are not open yet, each on a thread, at
** once: a device's first context costs 100 ms and more.  *opened: the
** lanes before the first that failed (n when none did).  When not `strict`
** (no device list given) a GPU that cannot be used (taken by another
** process in exclusive mode, say) only ends the run's list there; the
** first lane's failure is an error all the same. */
static jitc_status open_lanes(jitc_context *ctx, CudaState *S, const int *g, int n, bool strict,
                              int *opened) {
  Opening o[CUDA_MAXDEV];
  int at[CUDA_MAXDEV]; /* the first of g[] that each opening is */
  jitc_status st = JITC_OK;
  int k = 0;
  *opened = n;
  for (int q = 0; q < n; q++) {
    CudaDev *D = S->gpu[g[q]];
    bool seen = false; /* a lane named twice opens once */
    for (int j = 0; j < k; j++)
      seen |= o[j].D == D;
    if (seen || (D->cx && D->slots_ok))
      continue;
    at[k] = q;
    o[k] = (Opening){S, D, calloc(1, sizeof(jitc_context)), JITC_OK, 0, false};
    if (!o[k].wctx) {
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
      break;
    }
    o[k].threaded = pthread_create(&o[k].th, NULL, open_main, &o[k]) == 0;
    if (!o[k].threaded)
      open_main(&o[k]); /* no thread: here, one after another */
    k++;
  }
  for (int j = 0; j < k; j++) {
    if (o[j].threaded)
      pthread_join(o[j].th, NULL);
    if (o[j].st != JITC_OK && at[j] < *opened)
      *opened = at[j];
  }
  for (int j = 0; j < k; j++) {
    if (o[j].st != JITC_OK && st == JITC_OK && (strict || at[j] == 0) && at[j] == *opened)
      st = adopt(ctx, o[j].wctx, o[j].st, o[j].D->cx ? o[j].D->ordinal : -1);
    diags_clear(&o[j].wctx->diags);
    free(o[j].wctx);
  }
  return st;
}

/* The shares' chunks and partials: for reductions, the shares end on the
** one-GPU run's chunks `at` (nat of them). */
static jitc_status plan(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                        const CudaLayout *L, const int64_t *at, int64_t nat, const int64_t *cut,
                        Share *H, int used) {
  const Program *p = k->prog;
  int64_t c = 0, prefix = 0;
  for (int d = 0; d < used; d++) {
    CudaPipe *P = &H[d].P;
    if (p->nreduce) {
      int64_t c0 = c;
      while (c < nat && at[c] < cut[d + 1])
        c++;
      P->at = at + c0;
      P->nchunks = c - c0;
      H[d].prefix = prefix;
      for (int64_t j = c0; j < c; j++)
        prefix += cuda_partials(S, k, at[j + 1] - at[j]);
      H[d].count = prefix - H[d].prefix;
    } else {
      H[d].own = cuda_cut(cut[d], cut[d + 1] - cut[d], L->chunk, &P->nchunks);
      if (!H[d].own)
        return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
      P->at = H[d].own;
    }
  }
  return JITC_OK;
}

/* The first `used` lanes of the kernel's GPUs, and their weights.  The
** lanes open at once, on threads; their links are measured one after
** another, here: GPUs may share an uplink, and links measured at once
** measure each other (two H100s measured at once: 48.6 and 90.1 GB/s in
** one run, 77.5 and 90.8 in another, which gave them unequal shares). */
static jitc_status lanes(jitc_context *ctx, CudaState *S, CudaCurrent *c, const CudaKernel *ck,
                         int *usedp, int *g, double *w) {
  int used = *usedp;
  for (int q = 0; q < used; q++) {
    int lane = 0;
    for (int j = 0; j < q; j++)
      lane += ck->devs[j] == ck->devs[q];
    jitc_status st = cuda_lane(ctx, S, ck->devs[q], lane, &g[q]);
    if (st != JITC_OK)
      return st;
  }
  jitc_status st = open_lanes(ctx, S, g, used, ck->listed, usedp);
  used = *usedp;
  for (int q = 0; q < used && used > 1 && st == JITC_OK; q++) {
    CudaDev *D = S->gpu[g[q]];
    if (D->rate > 0)
      continue;
    CUresult r = cuda_switch(S, c, D->cx);
    st = r == CUDA_SUCCESS ? cuda_measure(ctx, S, D)
                           : cuda_fail(ctx, S, r, "making a device's context current");
  }
  if (st != JITC_OK)
    return st;
  double rate[CUDA_MAXDEV];
  for (int q = 0; q < used; q++)
    rate[q] = S->gpu[g[q]]->rate;
  cuda_weights(rate, used, w);
  return JITC_OK;
}

/* How many of the first `used` GPUs of the kernel's list to use: all of
** them, but with no list given, the first run that would make a GPU's
** context stops before that GPU, and the next such run makes it.  Making a
** device's primary context and releasing it at the end cost about 250 ms
** on an H100's host, more than a second GPU saves a single call of the
** command line even at 1e9 elements (measured: 915 ms against 540 on one
** GPU): as with the staging (cuda/host.c: register_now), a program that
** calls once never pays for it, one that calls again pays once. */
static int worth_opening(CudaState *S, const CudaKernel *ck, int used) {
  if (ck->listed)
    return used;
  for (int q = 1; q < used; q++) {
    bool made = ck->devs[q] == S->ordinal; /* the home's context exists */
    for (int g = 0; g < S->ngpu && !made; g++)
      made = S->gpu[g]->ordinal == ck->devs[q] && S->gpu[g]->cx;
    if (!made && !S->open_asked) {
      S->open_asked = true;
      return q;
    }
  }
  return used;
}

/* Runs the shares: all but the first on threads, the first here; then
** waits for all.  The first error wins. */
static jitc_status run_shares(jitc_context *ctx, Share *H, int used) {
  jitc_status st = JITC_OK;
  for (int d = 1; d < used; d++) {
    if (!H[d].P.nchunks)
      continue;
    if (!(H[d].wctx = calloc(1, sizeof(jitc_context)))) {
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
      break;
    }
    H[d].threaded = pthread_create(&H[d].th, NULL, share_main, &H[d]) == 0;
    if (!H[d].threaded) {
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: cannot start a thread for GPU %d",
                     H[d].P.D->ordinal);
      break;
    }
  }
  if (H[0].P.nchunks && st == JITC_OK)
    st = cuda_pipe_run(ctx, &H[0].P);
  for (int d = 1; d < used; d++) {
    if (H[d].threaded) {
      pthread_join(H[d].th, NULL);
      if (H[d].st != JITC_OK && st == JITC_OK)
        st = adopt(ctx, H[d].wctx, H[d].st, H[d].P.D->ordinal);
    }
    if (H[d].wctx)
      diags_clear(&H[d].wctx->diags);
    free(H[d].wctx);
  }
  return st;
}

/* After every share: the other GPUs' partials at their places in the
** first GPU's scratch, then jitc_r there over all of them. */
static jitc_status results(jitc_context *ctx, CudaState *S, const jitc_kernel *k, int64_t n,
                           void *const *arrays, Share *H, int used, const char *hparts) {
  CudaParts all = H[0].parts;
  int nr = k->prog->nreduce;
  CUresult r = CUDA_SUCCESS;
  for (int d = 1; d < used && r == CUDA_SUCCESS; d++)
    for (int q = 0; q < nr && H[d].count && r == CUDA_SUCCESS; q++) {
      size_t at = ((size_t)q * (size_t)all.cap + (size_t)H[d].prefix) * CUDA_PART;
      r = S->api.cuMemcpyHtoD(all.base + at, hparts + at, (size_t)H[d].count * CUDA_PART);
    }
  if (r != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "gathering the reductions' partials");
  all.used = all.cap;
  return cuda_host_results(ctx, S, H[0].P.D, H[0].P.kd, k, &all, n, arrays);
}

/* cuda_run and cuda_run_layout: over host arrays, contiguous (nd NULL) or
** of any layout. */
static jitc_status run_host(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            void *const *arrays, const Layout *nd, const ParamSlot *params,
                            jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  CudaKernel *ck = k->impl;
  if (!S || !S->gpu_ok || !ck)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  if (n <= 0 && !p->nreduce)
    return JITC_OK; /* with reductions, n == 0 writes their identities */
  pthread_mutex_lock(&S->lock);
  double t0 = now_ms();
  cuda_launch_fix(S, ck);
  /* How many GPUs: one per CUDA_SHARE_MIN bytes moved. */
  size_t per = 0;
  for (int a = 0; a < p->narrays; a++) {
    jitc_role role = p->arrays[a].role;
    size_t es = jitc_dtype_size(p->arrays[a].dtype);
    per += (role == JITC_INPUT || role == JITC_INOUT ? es : 0) +
           (role == JITC_OUTPUT || role == JITC_INOUT ? es : 0);
  }
  int64_t least = S->tune.share_min ? S->tune.share_min : CUDA_SHARE_MIN;
  size_t bytes = per * (size_t)(n > 0 ? n : 0);
  int used = cuda_lanes_for(bytes, ck->ndevs > 0 ? ck->ndevs : 1, least);
  used = worth_opening(S, ck, used);
  int g[CUDA_MAXDEV];
  double w[CUDA_MAXDEV];
  Share H[CUDA_MAXDEV];
  memset(H, 0, sizeof(Share) * (size_t)used);
  int64_t cut[CUDA_MAXDEV + 1], *at = NULL, nat = 0;
  char *hparts = NULL;
  CudaLayout L = {0};
  CudaCurrent c;
  jitc_status st = cuda_enter(S, NULL, &c) == CUDA_SUCCESS ? JITC_OK
                   : ctx_error(ctx, JITC_E_INTERNAL, "cuda: cannot ask the current context");
  if (st == JITC_OK && ck->ndevs == 0) { /* compiled before the devices were known */
    ck->devs[0] = S->ordinal;
    ck->ndevs = 1;
  }
  if (st == JITC_OK)
    st = lanes(ctx, S, &c, ck, &used, g, w);
  /* The modules, and the partials' scratch, in each lane's context. */
  for (int d = used - 1; d >= 0 && st == JITC_OK; d--) {
    CUresult r = cuda_switch(S, &c, S->gpu[g[d]]->cx);
    if (r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "making a device's context current");
    else
      st = cuda_kernel_on(ctx, S, ck, g[d], &H[d].P.kd);
  }
  /* Now in the first GPU's context. */
  if (st == JITC_OK)
    st = cuda_layout(ctx, S, S->gpu[g[0]], k, n, arrays, nd, used > 1, &L);
  if (st == JITC_OK && used > 1 && !L.threads) {
    /* The cores shared among the GPUs' copy threads. */
    int t = host_ncores() / used;
    L.threads = t < 1 ? 1 : t > 16 ? 16 : t;
  }
  if (st == JITC_OK && p->nreduce) {
    if (!(at = cuda_cut(0, n, L.chunk, &nat)))
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  }
  if (st == JITC_OK) {
    cuda_split(n, at, nat, 4096, w, used, cut);
    st = plan(ctx, S, k, &L, at, nat, cut, H, used);
  }
  int64_t cap = 0;
  for (int d = 0; d < used; d++)
    cap += H[d].count;
  if (st == JITC_OK && p->nreduce && used > 1 &&
      !(hparts = malloc((size_t)p->nreduce * (size_t)(cap ? cap : 1) * CUDA_PART)))
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int d = used - 1; d >= 0 && st == JITC_OK; d--) {
    CudaDev *D = S->gpu[g[d]];
    H[d].g = g[d];
    H[d].P = (CudaPipe){.S = S, .D = D, .kd = H[d].P.kd, .k = k, .L = &L, .arrays = arrays,
                        .params = params, .at = H[d].P.at, .nchunks = H[d].P.nchunks,
                        .trace = d == 0 ? S->trace : NULL, .t0 = t0};
    if (D->pool_want == 0 && used > 1) {
      int t = host_ncores() / used;
      D->pool_want = t < 1 ? 1 : t > 16 ? 16 : t;
    }
    if (p->nreduce) {
      if (cuda_switch(S, &c, D->cx) != CUDA_SUCCESS)
        st = ctx_error(ctx, JITC_E_INTERNAL, "cuda: cannot make a device's context current");
      if (st == JITC_OK)
        st = cuda_parts_ensure(ctx, S, H[d].P.kd, cuda_parts_bytes(p, cap));
      H[d].parts = (CudaParts){.base = H[d].P.kd->part, .cap = cap, .used = H[d].prefix};
      H[d].P.parts = &H[d].parts;
      H[d].hparts = hparts;
      H[d].download = d > 0 && H[d].count > 0;
    }
  }
  if (st == JITC_OK && cuda_switch(S, &c, S->gpu[g[0]]->cx) != CUDA_SUCCESS)
    st = ctx_error(ctx, JITC_E_INTERNAL, "cuda: cannot make a device's context current");
  if (st == JITC_OK)
    st = cuda_ensure_slots(ctx, S, S->gpu[g[0]]);
  if (st == JITC_OK)
    st = run_shares(ctx, H, used);
  if (st == JITC_OK && p->nreduce)
    st = results(ctx, S, k, n, arrays, H, used, hparts);
  if (info) {
    /* Per GPU, its copies' and kernels' times; the slowest GPU's. */
    info->h2d_ms = info->kernel_ms = info->d2h_ms = 0;
    for (int d = 0; d < used; d++) {
      CudaPipe *P = &H[d].P;
      info->h2d_ms = P->h2d > info->h2d_ms ? P->h2d : info->h2d_ms;
      info->kernel_ms = P->kern > info->kernel_ms ? P->kern : info->kernel_ms;
      info->d2h_ms = P->d2h > info->d2h_ms ? P->d2h : info->d2h_ms;
    }
  }
  if (S->trace) {
    CudaTrace *T = S->trace;
    CudaDev *D = used > 0 && st == JITC_OK ? S->gpu[g[0]] : NULL;
    T->n = H[0].P.nchunks < T->cap ? H[0].P.nchunks : T->cap;
    T->threads = L.threads ? L.threads : D && D->pool ? pool_threads(D->pool) : 1;
    T->slots = L.nslots;
    T->chunk = L.chunk;
    T->registered = 0;
    for (int a = 0; a < p->narrays && L.mem; a++)
      T->registered += L.how[a] == CUDA_HOW_REGISTERED;
    T->total_ms = now_ms() - t0;
  }
  if (L.mem)
    cuda_layout_end(S, k, arrays, &L);
  for (int d = 0; d < used; d++)
    free(H[d].own);
  free(at);
  free(hparts);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}

jitc_status cuda_run(jitc_context *ctx, const jitc_kernel *k, int64_t n, void *const *arrays,
                     const ParamSlot *params, jitc_run_info *info) {
  return run_host(ctx, k, n, arrays, NULL, params, info);
}

/* Device memory for a run over axes: the pieces' partials, then each
** result's nseg elements in segment order (res[a]); *host gets their host
** copy (malloc'ed). */
static jitc_status axis_memory(jitc_context *ctx, CudaState *S, const Program *p,
                               CudaAxisRun *A, CUdeviceptr *mem, CUdeviceptr *res, char **host,
                               size_t *off) {
  size_t bytes = cuda_axis_parts_bytes(p, A), at = bytes;
  for (int a = 0; a < p->narrays; a++)
    if (p->arrays[a].role == JITC_RESULT) {
      off[a] = bytes - at;
      bytes += ((size_t)A->nseg * jitc_dtype_size(p->arrays[a].dtype) + 255) / 256 * 256;
    }
  *host = malloc(bytes - at + 1);
  if (!*host)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  CUresult r = S->api.cuMemAlloc(mem, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) {
    *mem = 0;
    return cuda_fail(ctx, S, r, "allocating device memory for the results");
  }
  A->parts = cuda_axis_parts_bytes(p, A) ? *mem : 0;
  for (int a = 0; a < p->narrays; a++)
    res[a] = p->arrays[a].role == JITC_RESULT ? *mem + (CUdeviceptr)(at + off[a]) : 0;
  return JITC_OK;
}

/* jitc_run_arrays of a program reducing over axes, on the home GPU: the
** host pipeline over chunks of whole pieces (cuda/axisrun.c), the results
** kept on the GPU in segment order, then combined (jitc_ac), brought back
** and put at their places (layout_result). */
static jitc_status run_axes(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                            const ParamSlot *params, jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  CudaKernel *ck = k->impl;
  if (!S || !S->gpu_ok || !ck)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  int na = p->narrays;
  CUdeviceptr *res = calloc((size_t)na + 1, sizeof *res);
  size_t *off = calloc((size_t)na + 1, sizeof *off);
  if (!res || !off) {
    free(res);
    free(off);
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  }
  pthread_mutex_lock(&S->lock);
  CudaCurrent c;
  CudaDev *H = cuda_home(S);
  CudaKDev *kd = NULL;
  CudaLayout CL = {0};
  CudaAxisRun A = {0};
  CUdeviceptr mem = 0;
  char *host = NULL;
  int64_t *at = NULL, nat = 0;
  cuda_axis_plan(L->seg, L->nseg, &A);
  A.res = res;
  jitc_status st = cuda_enter_device(ctx, S, &c);
  if (st == JITC_OK)
    st = cuda_ensure_slots(ctx, S, H);
  if (st == JITC_OK)
    st = cuda_kernel_on(ctx, S, ck, 0, &kd);
  if (st == JITC_OK)
    st = cuda_layout(ctx, S, H, k, L->n, L->bases, L, false, &CL);
  if (st == JITC_OK && !(at = cuda_axis_cut(&A, CL.chunk, &nat)))
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK)
    st = axis_memory(ctx, S, p, &A, &mem, res, &host, off);
  CudaPipe P = {.S = S, .D = H, .kd = kd, .k = k, .L = &CL, .arrays = L->bases,
                .params = params, .at = at, .nchunks = nat, .axis = &A, .t0 = now_ms()};
  if (st == JITC_OK)
    st = cuda_pipe_run(ctx, &P);
  /* Every chunk is done (the pipeline drained its slots): the results. */
  CUstream s = H->slot[0].stream;
  if (st == JITC_OK)
    st = cuda_axis_finish(ctx, S, k, kd->mod, &A, s);
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < na && st == JITC_OK && r == CUDA_SUCCESS; a++)
    if (p->arrays[a].role == JITC_RESULT && A.nseg)
      r = S->api.cuMemcpyDtoHAsync(host + off[a], res[a],
                                   (size_t)A.nseg * jitc_dtype_size(p->arrays[a].dtype), s);
  if (st == JITC_OK) {
    CUresult w = S->api.cuStreamSynchronize(s);
    if (r != CUDA_SUCCESS || w != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r != CUDA_SUCCESS ? r : w, "the reductions' results");
  }
  for (int a = 0; a < na && st == JITC_OK; a++) {
    if (p->arrays[a].role != JITC_RESULT)
      continue;
    size_t es = jitc_dtype_size(p->arrays[a].dtype);
    for (int64_t g = 0; g < A.nseg; g++)
      memcpy(layout_result(L, a, g), host + off[a] + (size_t)g * es, es);
  }
  if (info) {
    info->h2d_ms = P.h2d;
    info->kernel_ms = P.kern;
    info->d2h_ms = P.d2h;
  }
  if (mem)
    S->api.cuMemFree(mem);
  if (CL.mem)
    cuda_layout_end(S, k, L->bases, &CL);
  free(at);
  free(host);
  free(res);
  free(off);
  cuda_leave(S, &c);
  pthread_mutex_unlock(&S->lock);
  return st;
}

jitc_status cuda_run_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                            const ParamSlot *params, jitc_run_info *info) {
  if (L->axes)
    return run_axes(ctx, k, L, params, info);
  return run_host(ctx, k, L->n, L->bases, L, params, info);
}

void cuda_lanes_free(CudaState *S) {
  CudaCurrent c;
  if (cuda_enter(S, NULL, &c) != CUDA_SUCCESS)
    return;
  for (int g = S->ngpu - 1; g >= 0; g--) {
    CudaDev *D = S->gpu[g];
    if (D->cx && cuda_switch(S, &c, D->cx) == CUDA_SUCCESS)
      cuda_host_free(S, D);
    if (D->retained)
      S->api.cuDevicePrimaryCtxRelease(D->dev);
    free(D);
    S->gpu[g] = NULL;
  }
  S->ngpu = 0;
  cuda_leave(S, &c);
}
