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
** segment of one piece (where there are many segments, up to 16 times
** CUDA_APIECE long) is finished by its piece's threads; longer ones write
** one partial per piece and jitc_ac combines each segment's in order.
** Over device arrays whose reduced axes are outer to the kept ones in
** memory, the column form (cuda/axiscol.c: cuda_axis_col_plan) takes the
** place of the pieces' kernels: one thread per piece of a segment's rows,
** consecutive threads on consecutive segments, the pieces' partials
** combined by the same jitc_ac.  Start reading at cuda_axis_plan().
*/
#include "cuda.h"

#include <stdlib.h>

/* Launches of at most this many blocks, far below the grid's limit. */
enum { MAX_BLOCKS = 1 << 20 };

/* A segment longer than a piece is one piece where there are segments
** enough for a GPU's blocks and it is at most WHOLE_MAX long: a block folds
** it all, and no partial and no second launch are needed.  Measured on an
** H100 (bench/gpu_rowsum.cu, GPU time per call): row sums of (8192, 8192)
** float32 in pieces of 4096 and a launch combining them 0.0942 ms, a block a
** row 0.0886, CUB's 0.0883; (1024, 16384) 0.0291, 0.0256 and 0.0253.  The
** limit keeps a piece within a chunk of the host pipeline (cuda/host.c's
** choose() makes the chunk one piece at least). */
enum { WHOLE_SEGS = 1024, WHOLE_MAX = 16 * CUDA_APIECE };

void cuda_axis_plan(int64_t seg, int64_t nseg, CudaAxisRun *A) {
  A->seg = seg;
  A->nseg = nseg;
  A->col = false;
  A->pps = seg > 0 ? (seg - 1) / CUDA_APIECE + 1 : 0;
  if (seg <= WHOLE_MAX && nseg >= WHOLE_SEGS && A->pps > 1)
    A->pps = 1;
  /* A thread per piece for short segments (a warp would idle), a warp up
  ** to a thousand elements, else a block. */
  int64_t plen = seg < CUDA_APIECE ? seg : CUDA_APIECE;
  A->which = plen < 32 ? 0 : plen < 1024 ? 1 : A->pps == 1 && seg > CUDA_APIECE ? 5 : 2;
  A->lanes = A->which == 0 ? 1 : A->which == 1 ? 32 : CUDA_BLOCK;
}

/* The column form's threads: enough pieces of segments to keep a large
** GPU's memory busy (8 warps of 32 segments a block, each thread with 16
** loads in flight: cuda/axiscol.c); each piece at least COL_ROWS
** elements; the innermost kept axis at least a warp wide.  Constants, so
** that pcs and the warps of a block are functions of the shape.  Measured
** on an H100 over a (4096, 4096) float32 matrix: 2^17 pieces (32 a
** column) 1.10x the copy of its bytes, 2^16 1.22x, 2^18 1.15x. */
enum { COL_UNITS = 1 << 17, COL_ROWS = 64, COL_COLS = 32, COL_WARPS = CUDA_BLOCK / 32 };

bool cuda_axis_col_plan(const Layout *L, const Program *p, const char *kind, CudaAxisRun *A) {
  if (!L->axes || L->seg < 2 || L->nseg < 2 || (L->nseg - 1) / 32 >= INT32_MAX)
    return false;
  /* The kept axes of the layout: those whose extents multiply to nseg. */
  int nk = -1;
  int64_t prod = 1;
  for (int d = 0; d < L->ndim && nk < 0; d++) {
    prod *= L->shape[d];
    if (prod == L->nseg)
      nk = d + 1;
    else if (prod > L->nseg)
      return false;
  }
  if (nk < 1 || nk >= L->ndim || L->shape[nk - 1] < COL_COLS)
    return false;
  for (int a = 0; a < p->narrays; a++) {
    if (p->arrays[a].role == JITC_RESULT)
      continue;
    if (kind[a] != CUDA_STRIDED ||
        L->a[a].strides[nk - 1] != (int64_t)L->a[a].esize)
      return false;
  }
  int64_t want = (COL_UNITS - 1) / L->nseg + 1, most = L->seg / COL_ROWS;
  int64_t pcs = want < most ? want : most > 1 ? most : 1;
  int64_t rows = (L->seg - 1) / pcs + 1;
  A->col = true;
  A->pps = (L->seg - 1) / rows + 1; /* no empty piece */
  A->warps = 1; /* pieces a block: a power of 2 */
  while (A->warps < COL_WARPS && A->warps * 2 <= A->pps)
    A->warps *= 2;
  A->groups = (A->pps - 1) / A->warps + 1;
  A->lanes = 1;
  return true;
}

int64_t cuda_axis_plen(const CudaAxisRun *A) {
  return A->pps == 1 ? A->seg : CUDA_APIECE;
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
  return s * A->pps + (e - s * A->seg) / cuda_axis_plen(A);
}

int64_t *cuda_axis_cut(const CudaAxisRun *A, int64_t chunk, int64_t *nchunks) {
  int64_t total = A->nseg * A->pps; /* pieces */
  int64_t plen = cuda_axis_plen(A);
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

/* The partials a segment has: one per piece, or in the column form one per
** block's pieces. */
static int64_t per_segment(const CudaAxisRun *A) {
  return A->col ? A->groups : A->pps;
}

/* The bytes of the partials of n results. */
static size_t partial_bytes(const CudaAxisRun *A, int n) {
  return (size_t)n * (size_t)(A->nseg * per_segment(A)) * CUDA_PART;
}

/* The partials of result r (its rank among the results) from piece 0. */
static CUdeviceptr parts_of(const CudaAxisRun *A, int r) {
  return A->parts ? A->parts + (CUdeviceptr)partial_bytes(A, r) : 0;
}

/* The kernels' last arguments but the strides: each result's partials,
** then each result, their addresses in ptr[0..2 narrays); the count of
** args[] after them. */
static int put_results(const Program *p, const CudaAxisRun *A, CUdeviceptr *ptr, void **args,
                       int na) {
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
  return na;
}

/* The kernels' arguments after their counts: the arrays read or written in
** place, the parameters, the results and their partials, the column
** form's counters (cnt, or NULL), the strides; the count of args[] after
** them. */
static int put_rest(const Program *p, const CudaAxisRun *A, const CUdeviceptr *dptr,
                    const ParamSlot *params, CUdeviceptr *ptr, void **args, int na,
                    CUdeviceptr *cnt) {
  for (int a = 0; a < p->narrays; a++)
    if (p->arrays[a].role != JITC_RESULT)
      args[na++] = (void *)&dptr[a];
  for (int a = 0; a < p->nparams; a++)
    args[na++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
  na = put_results(p, A, ptr, args, na);
  if (cnt)
    args[na++] = cnt;
  if (has_nd(p, A->nd))
    args[na++] = (void *)A->nd->nd;
  if (A->nd && A->nd->kept)
    args[na++] = (void *)A->nd->kept;
  return na;
}

/* The column form's blocks along x: CUDA_BLOCK / warps segments each. */
static int64_t col_blocks(const CudaAxisRun *A) {
  int64_t per = CUDA_BLOCK / A->warps;
  return (A->nseg - 1) / per + 1;
}

/* The column form: one launch, a block per `warps` pieces of
** CUDA_BLOCK / warps segments (cuda/axiscol.c); where a segment's pieces
** take several blocks, a counter per column of blocks, zeroed first, after
** the partials. */
static jitc_status launch_col(jitc_context *ctx, CudaState *S, const Program *p,
                              const CudaModule *m, const CudaAxisRun *A, const CUdeviceptr *dptr,
                              const ParamSlot *params, CUstream s, void **args, CUdeviceptr *ptr) {
  int64_t seg = A->seg, pps = A->pps, nseg = A->nseg, bx = col_blocks(A);
  int pw = A->warps;
  CUdeviceptr cnt = 0;
  if (A->groups > 1) {
    cnt = A->parts + (CUdeviceptr)partial_bytes(A, p->nreduce);
    CUresult r = S->api.cuMemsetD8Async(cnt, 0, (size_t)bx * 4, s);
    if (r != CUDA_SUCCESS)
      return cuda_fail(ctx, S, r, "zeroing the column form's counters");
  }
  args[0] = &seg;
  args[1] = &pps;
  args[2] = &nseg;
  args[3] = &pw;
  put_rest(p, A, dptr, params, ptr, args, 4, &cnt);
  CUresult r = S->api.cuLaunchKernel(m->afn[4], (unsigned)bx, (unsigned)A->groups, 1, CUDA_BLOCK,
                                     1, 1, 0, s, args, NULL);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "launching the kernel of columns");
}

/* Whether every array the kernels load lies on a multiple of its group's
** bytes at the start of every piece (cuda/axis.c, cuda_axis_group), so that
** jitc_a256 may load each group as one vector: each pointer (element off
** of the run) aligned, and seg and off multiples of the group. */
static int groups_aligned(const Program *p, const CudaAxisRun *A, int64_t off,
                          const CUdeviceptr *dptr) {
  int64_t V = cuda_axis_group(p);
  if (V < 2 || A->seg % V || off % V)
    return 0;
  for (int a = 0; a < p->narrays; a++)
    if (cuda_axis_loaded(p, a) &&
        ((A->nd && A->nd->strided[a]) ||
         dptr[a] % ((CUdeviceptr)V * jitc_dtype_size(p->arrays[a].dtype))))
      return 0;
  return 1;
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
  int va = groups_aligned(p, A, off, dptr);
  void **args = malloc(((size_t)p->narrays * 2 + (size_t)p->nparams + 9) * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays * 2 + 1) * sizeof *ptr);
  jitc_status st = args && ptr ? JITC_OK : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK && A->col) { /* device arrays: every piece at once, off 0 */
    st = launch_col(ctx, S, p, m, A, dptr, params, s, args, ptr);
  } else if (st == JITC_OK) {
    args[0] = &q;
    args[1] = &nq;
    args[2] = &seg;
    args[3] = &pps;
    args[4] = &off;
    args[5] = &va;
    put_rest(p, A, dptr, params, ptr, args, 6, NULL);
    for (; st == JITC_OK && q < q1; q += nq) {
      nq = q1 - q < per ? q1 - q : per;
      int64_t units = CUDA_BLOCK / A->lanes, blocks = (nq + units - 1) / units;
      CUresult r = S->api.cuLaunchKernel(m->afn[A->which], (unsigned)blocks, 1, 1, CUDA_BLOCK, 1,
                                         1, 0, s, args, NULL);
      if (r != CUDA_SUCCESS)
        st = cuda_fail(ctx, S, r, "launching the kernel of segments");
    }
  }
  free(args);
  free(ptr);
  return st;
}

jitc_status cuda_axis_finish(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, const CudaAxisRun *A, CUstream s) {
  const Program *p = k->prog;
  if (A->col || A->pps == 1 || A->nseg == 0)
    return JITC_OK; /* finished by the pieces' threads, or the columns' last blocks */
  int64_t s0 = 0, ns = 0, seg = A->seg, pps = A->pps;
  int64_t per = (int64_t)MAX_BLOCKS * CUDA_BLOCK;
  void **args = malloc(((size_t)p->narrays * 2 + 8) * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays * 2 + 1) * sizeof *ptr);
  jitc_status st = args && ptr ? JITC_OK : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int na = 0;
  if (st == JITC_OK) {
    args[na++] = &s0;
    args[na++] = &ns;
    args[na++] = &seg;
    args[na++] = &pps;
    na = put_results(p, A, ptr, args, na);
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
  if (per_segment(A) <= 1)
    return 0;
  size_t bytes = partial_bytes(A, p->nreduce);
  return A->col ? bytes + (size_t)col_blocks(A) * 4 : bytes; /* the counters */
}

jitc_status cuda_axis_device(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, int64_t n, const CUdeviceptr *d,
                             const ParamSlot *params, const CudaNdRun *nd, CUdeviceptr parts,
                             CUstream s) {
  CudaAxisRun A = *nd->axis;
  A.res = d;
  A.nd = nd;
  A.parts = parts;
  jitc_status st = cuda_axis_launch(ctx, S, k, m, &A, 0, n, d, params, s);
  return st == JITC_OK ? cuda_axis_finish(ctx, S, k, m, &A, s) : st;
}
