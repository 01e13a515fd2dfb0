/*
** cuda/axisrun.c -- running reductions over axes on the target `cuda`:
** the launches of the kernels cuda/axis.c writes, for the host pipeline
** (cuda/host.c, one chunk of whole pieces at a time: cuda/multi.c's
** run_axes) and for the caller's device arrays (cuda/devptr.c, every piece
** at once on the caller's stream).
**
** The run is cut as cuda/axis.c says: segments of seg elements (the
** reduced axes, innermost in layout.c's flat index), each of pps pieces of
** at most CUDA_APIECE elements, G threads per piece.  What the bits of a
** result depend on, seg, G and the pieces, is a function of the shape
** alone (cuda_axis_plan); a launch takes any range of whole pieces, so how
** the host cuts the run into chunks and launches changes nothing.  A
** segment of one piece is finished by its piece's threads; longer ones
** write one partial per piece and jitc_ac combines each segment's in order.
** Start reading at cuda_axis_plan().
*/
#include "cuda.h"

#include <stdlib.h>

/* Launches of at most this many blocks, far below the grid's limit. */
enum { MAX_BLOCKS = 1 << 20 };

void cuda_axis_plan(int64_t seg, int64_t nseg, CudaAxisRun *A) {
  A->seg = seg;
  A->nseg = nseg;
  A->pps = seg > 0 ? (seg - 1) / CUDA_APIECE + 1 : 0;
  /* A thread per piece for short segments (a warp would idle), a warp up
  ** to a thousand elements, else a block. */
  int64_t plen = seg < CUDA_APIECE ? seg : CUDA_APIECE;
  A->which = plen < 32 ? 0 : plen < 1024 ? 1 : 2;
  A->lanes = A->which == 0 ? 1 : A->which == 1 ? 32 : CUDA_BLOCK;
}

int64_t cuda_axis_start(const CudaAxisRun *A, int64_t q) {
  if (A->pps == 0)
    return 0;
  int64_t s = q / A->pps;
  return s * A->seg + (q - s * A->pps) * CUDA_APIECE;
}

int64_t cuda_axis_piece(const CudaAxisRun *A, int64_t e) {
  if (A->seg == 0)
    return 0;
  int64_t s = e / A->seg;
  return s * A->pps + (e - s * A->seg) / CUDA_APIECE;
}

int64_t *cuda_axis_cut(const CudaAxisRun *A, int64_t chunk, int64_t *nchunks) {
  int64_t total = A->nseg * A->pps; /* pieces */
  int64_t plen = A->seg < CUDA_APIECE ? A->seg : CUDA_APIECE;
  int64_t per = plen > 0 && chunk / plen > 0 ? chunk / plen : 1; /* pieces per chunk */
  int64_t nc = total > 0 ? (total - 1) / per + 1 : 0;
  int64_t *at = malloc(((size_t)nc + 1) * sizeof *at);
  if (!at)
    return NULL;
  for (int64_t c = 0; c < nc; c++)
    at[c] = cuda_axis_start(A, c * per);
  at[nc] = A->seg * A->nseg;
  *nchunks = nc;
  return at;
}

/* Whether launches pass a jitc_nd (some input or output strided). */
static bool has_nd(const Program *p, const CudaNdRun *nd) {
  for (int a = 0; nd && a < p->narrays; a++)
    if (p->arrays[a].role != JITC_RESULT && nd->strided[a])
      return true;
  return false;
}

/* The partials of result r (its rank among the results) from piece 0. */
static CUdeviceptr parts_of(const CudaAxisRun *A, int r) {
  if (!A->parts)
    return 0;
  return A->parts + (CUdeviceptr)((size_t)r * (size_t)(A->nseg * A->pps) * CUDA_PART);
}

jitc_status cuda_axis_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, const CudaAxisRun *A, int64_t off, int64_t n,
                             const CUdeviceptr *dptr, const ParamSlot *params, CUstream s) {
  const Program *p = k->prog;
  if (n <= 0 || A->seg == 0)
    return JITC_OK;
  int64_t q = cuda_axis_piece(A, off), q1 = cuda_axis_piece(A, off + n);
  int64_t per = (int64_t)MAX_BLOCKS * (CUDA_BLOCK / A->lanes), nq = 0;
  int64_t seg = A->seg, pps = A->pps;
  void **args = malloc(((size_t)p->narrays * 2 + (size_t)p->nparams + 8) * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays * 2 + 1) * sizeof *ptr);
  jitc_status st = args && ptr ? JITC_OK : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int na = 0;
  if (st == JITC_OK) {
    args[na++] = &q;
    args[na++] = &nq;
    args[na++] = &seg;
    args[na++] = &pps;
    args[na++] = &off;
    for (int a = 0; a < p->narrays; a++)
      if (p->arrays[a].role != JITC_RESULT)
        args[na++] = (void *)&dptr[a];
    for (int a = 0; a < p->nparams; a++)
      args[na++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
    for (int a = 0, r = 0; a < p->narrays; a++)
      if (p->arrays[a].role == JITC_RESULT) {
        ptr[a] = parts_of(A, r++);
        args[na++] = &ptr[a];
      }
    for (int a = 0; a < p->narrays; a++)
      if (p->arrays[a].role == JITC_RESULT) {
        ptr[p->narrays + a] = A->res[a];
        args[na++] = &ptr[p->narrays + a];
      }
    if (has_nd(p, A->nd))
      args[na++] = (void *)A->nd->nd;
    if (A->nd && A->nd->kept)
      args[na++] = (void *)A->nd->kept;
  }
  for (; st == JITC_OK && q < q1; q += nq) {
    nq = q1 - q < per ? q1 - q : per;
    int64_t units = CUDA_BLOCK / A->lanes, blocks = (nq + units - 1) / units;
    CUresult r = S->api.cuLaunchKernel(m->afn[A->which], (unsigned)blocks, 1, 1, CUDA_BLOCK, 1,
                                       1, 0, s, args, NULL);
    if (r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "launching the kernel of segments");
  }
  free(args);
  free(ptr);
  return st;
}

jitc_status cuda_axis_finish(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, const CudaAxisRun *A, CUstream s) {
  const Program *p = k->prog;
  if (A->pps == 1 || A->nseg == 0)
    return JITC_OK; /* finished by the pieces' threads */
  int64_t s0 = 0, ns = 0, seg = A->seg, pps = A->pps;
  int64_t per = (int64_t)MAX_BLOCKS * CUDA_BLOCK;
  void **args = malloc(((size_t)p->narrays * 2 + 6) * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays * 2 + 1) * sizeof *ptr);
  jitc_status st = args && ptr ? JITC_OK : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int na = 0;
  if (st == JITC_OK) {
    args[na++] = &s0;
    args[na++] = &ns;
    args[na++] = &seg;
    args[na++] = &pps;
    for (int a = 0, r = 0; a < p->narrays; a++)
      if (p->arrays[a].role == JITC_RESULT) {
        ptr[a] = parts_of(A, r++);
        args[na++] = &ptr[a];
      }
    for (int a = 0; a < p->narrays; a++)
      if (p->arrays[a].role == JITC_RESULT) {
        ptr[p->narrays + a] = A->res[a];
        args[na++] = &ptr[p->narrays + a];
      }
    if (A->nd && A->nd->kept)
      args[na++] = (void *)A->nd->kept;
  }
  for (; st == JITC_OK && s0 < A->nseg; s0 += ns) {
    ns = A->nseg - s0 < per ? A->nseg - s0 : per;
    unsigned blocks = (unsigned)((ns + CUDA_BLOCK - 1) / CUDA_BLOCK);
    CUresult r = S->api.cuLaunchKernel(m->afn[3], blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s, args,
                                       NULL);
    if (r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "launching the combine of segments");
  }
  free(args);
  free(ptr);
  return st;
}

size_t cuda_axis_parts_bytes(const Program *p, const CudaAxisRun *A) {
  return A->pps > 1 ? (size_t)p->nreduce * (size_t)(A->nseg * A->pps) * CUDA_PART : 0;
}

jitc_status cuda_axis_device(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, int64_t n, const CUdeviceptr *d,
                             const ParamSlot *params, const CudaNdRun *nd, CUstream s) {
  CudaApi *Api = &S->api;
  CudaAxisRun A = *nd->axis;
  A.res = d;
  A.nd = nd;
  A.parts = 0;
  size_t bytes = cuda_axis_parts_bytes(k->prog, &A);
  if (bytes && (!Api->cuMemAllocAsync || !Api->cuMemFreeAsync))
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: reductions on the caller's stream need "
                     "the driver's stream-ordered allocator (CUDA 11.2 or later)");
  CUresult r = bytes ? Api->cuMemAllocAsync(&A.parts, bytes, s) : CUDA_SUCCESS;
  if (r != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "allocating scratch for the reductions' partials");
  jitc_status st = cuda_axis_launch(ctx, S, k, m, &A, 0, n, d, params, s);
  if (st == JITC_OK)
    st = cuda_axis_finish(ctx, S, k, m, &A, s);
  if (A.parts) {
    r = Api->cuMemFreeAsync(A.parts, s);
    if (st == JITC_OK && r != CUDA_SUCCESS)
      st = cuda_fail(ctx, S, r, "freeing the reductions' partials");
  }
  return st;
}
