/*
** cuda/axiscol.c -- the column form of reductions over axes on the target
** `cuda`: the kernel jitc_acol, written beside cuda/axis.c's for every
** program with Program.by_axis.
**
** layout.c takes the reduced axes innermost, so a segment of
** sum(x, axis=0) over a matrix in C order is a column: its elements are a
** row apart in memory, and the threads of cuda/axis.c's kernels, which
** share a segment, read one element per row, far apart.  Where the
** innermost kept axis steps by one element in every array but the results
** (cuda/axisrun.c: cuda_axis_col_plan decides), the lanes of a warp take
** consecutive segments instead, so that a warp reads consecutive elements
** of each row.  To fill the GPU a segment's elements (its rows, in the
** order of the flat index) are cut into pcs pieces of rows =
** ceil(seg / pcs) elements (the last shorter).  A block's 8 warps take pw
** consecutive pieces (pw = 1, 2, 4 or 8, the most that pcs allows) of
** 8 / pw runs of 32 segments: warp w of block (x, y) holds segments
** 32 (x 8 / pw + w / pw) + lane and piece pw y + w % pw of each.  Each
** thread folds its piece element by element in order into one
** accumulator; the block's pw partials of a segment are combined in order
** through shared memory, so a block reads pw pieces' worth of rows for one
** partial.  Where one block holds every piece of its segments (pcs <= pw)
** it finishes them; otherwise its partial goes to qK[y * nseg + s], and
** the last block of the column of blocks x to arrive (a counter per x,
** cnt[x], zeroed before the launch) combines the column's ceil(pcs / pw)
** partials of each segment in the order of y and finishes them: the
** order is fixed whichever block comes last.  pcs and pw are functions of
** the shape alone (cuda_axis_col_plan), so the bits are too.
**
** A thread's elements are addressed as cuda/axis.c's are (the pattern's
** unravel of the flat index g = s * seg + e), but only where a run along
** the pattern's innermost axis starts; along the run each array steps by
** its innermost stride (cuda_access_step).  Device arrays only: element g
** of a contiguous array is aK[g].  Pure, as all generation.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>

/* Blocks of jitc_acol a multiprocessor holds at least: without it NVRTC
** fits a thread in 32 registers (8 blocks) and spills around the loop
** over a piece; 4 blocks leave 64, and 16 loads in flight a thread keep
** the memory busy at that occupancy. */
enum { COL_BLOCKS = 4 };

/* The parameters (decl) of jitc_acol. */
static void put_params(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_puts(b, "const i64 seg, const i64 pcs, const i64 nseg, const int pw");
  cuda_access_params(b, p);
  cuda_axis_red_params(b, p, true, false);
  buf_puts(b, ", u32 *__restrict__ cnt");
  cuda_access_nd_param(b, p, pat, true);
  cuda_axis_kept_param(b, p, pat, true);
}

/* One run of elements [e, e + run) along the innermost axis: loads,
** jitc_elem, stores, each array's index stepping by its stride. */
static void put_run(Buf *b, const Program *p, const CudaPattern *pat) {
  bool any = cuda_pattern_any(pat, p);
  buf_puts(b, "    const i64 g = s * seg + e;\n");
  if (any)
    cuda_access_unravel(b, p, pat, NULL, 0, CUDA_LOADS | CUDA_STORES, "g", "    ");
  buf_puts(b, "    i64 run = hi - e;\n");
  if (any && pat->nd > 1)
    buf_printf(b, "    const i64 m_ = nd.n[%d] - g %% nd.n[%d];\n    if (m_ < run)\n"
                  "      run = m_;\n", pat->nd - 1, pat->nd - 1);
  char at[32], st[48];
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role != JITC_RESULT)
      buf_printf(b, "    i64 w%d = %s;\n", k, cuda_access_index(at, sizeof at, pat, p, k, "g"));
  buf_puts(b, "#pragma unroll 16\n    for (i64 i = 0; i < run; i++) {\n");
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    if (a->role == JITC_OUTPUT)
      buf_printf(b, "      %s x%d;\n", cuda_ctype(a->dtype), k);
    else if (a->role != JITC_RESULT)
      buf_printf(b, "      %s%s x%d = a%d[w%d];\n", a->role == JITC_INPUT ? "const " : "",
                 cuda_ctype(a->dtype), k, k, k);
  }
  buf_puts(b, "      jitc_elem(e + i");
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", x%d", k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  for (int k = 0; k < p->narrays; k++) {
    if (p->arrays[k].role == JITC_OUTPUT || p->arrays[k].role == JITC_INOUT)
      buf_printf(b, "      a%d[w%d] = x%d;\n", k, k, k);
    if (p->arrays[k].role != JITC_RESULT)
      buf_printf(b, "      w%d += %s;\n", k, cuda_access_step(st, sizeof st, pat, p, k));
  }
  buf_puts(b, "    }\n    e += run;\n");
}

void cuda_axis_col_kernel(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_printf(b, "\n// The column form: warp w of block (x, y) holds segments\n"
                "// s = 32 (x 8 / pw + w / pw) + lane, piece q = pw y + w %% pw of each, its\n"
                "// elements [q * rows, (q + 1) * rows) in order, rows = ceil(seg / pcs);\n"
                "// the block's pw pieces of a segment combined in order.\n"
                "extern \"C\" __global__ void __launch_bounds__(%d, %d) jitc_acol(", CUDA_BLOCK,
             COL_BLOCKS);
  put_params(b, p, pat);
  buf_printf(b, ") {\n  const int w = (int)(threadIdx.x >> 5), l = (int)(threadIdx.x & 31);\n"
                "  const i64 s = ((i64)blockIdx.x * (%d / pw) + w / pw) * 32 + l;\n"
                "  const i64 q = (i64)blockIdx.y * pw + w %% pw;\n"
                "  const i64 rows = (seg - 1) / pcs + 1, lo = q * rows;\n"
                "  const i64 hi = q >= pcs || s >= nseg ? lo : seg - lo < rows ? seg : lo + rows;\n",
             CUDA_BLOCK / 32);
  cuda_axis_per_result(b, p, "  jitc_p%d x%d = jitc_id%d();\n");
  buf_puts(b, "  for (i64 e = lo; e < hi;) {\n");
  put_run(b, p, pat);
  buf_puts(b, "  }\n  if (pw > 1) {\n");
  /* One result at a time through the same bytes (CUDA_PART a thread). */
  buf_printf(b, "    __shared__ __align__(16) unsigned char sh_[%d * %d];\n", CUDA_BLOCK, CUDA_PART);
  for (int k = 0, first = 1; k < p->narrays; k++) {
    if (p->arrays[k].role != JITC_RESULT)
      continue;
    if (!first)
      buf_puts(b, "    __syncthreads();\n");
    first = 0;
    buf_printf(b, "    jitc_p%d *sh%d = (jitc_p%d *)sh_;\n    sh%d[threadIdx.x] = x%d;\n"
                  "    __syncthreads();\n    if (w %% pw == 0) {\n      x%d = jitc_id%d();\n"
                  "      for (int v = 0; v < pw && (i64)blockIdx.y * pw + v < pcs; v++)\n"
                  "        x%d = jitc_c%d()(x%d, sh%d[(w + v) * 32 + l]);\n    }\n",
               k, k, k, k, k, k, k, k, k, k, k);
  }
  buf_puts(b, "  }\n  const bool mine = w % pw == 0 && s < nseg;\n");
  buf_puts(b, "  if (gridDim.y == 1) {\n    if (mine) {\n");
  cuda_axis_finish_results(b, p, pat, "      ");
  buf_puts(b, "    }\n    return;\n  }\n  if (mine) {\n");
  cuda_axis_per_result(b, p, "    q%d[(i64)blockIdx.y * nseg + s] = x%d;\n");
  /* The last block of a column of blocks to arrive (the counter) combines
  ** the column's partials in the order of y, whichever block came last. */
  buf_puts(b, "  }\n  __threadfence();\n  __syncthreads();\n  __shared__ bool last_;\n"
              "  if (threadIdx.x == 0)\n"
              "    last_ = atomicAdd(&cnt[blockIdx.x], 1u) == gridDim.y - 1;\n"
              "  __syncthreads();\n  if (!last_ || !mine)\n    return;\n  __threadfence();\n");
  cuda_axis_per_result(b, p, "  x%d = jitc_id%d();\n");
  buf_puts(b, "#pragma unroll 8\n  for (u32 j = 0; j < gridDim.y; j++) {\n");
  cuda_axis_per_result(b, p, "    x%d = jitc_c%d()(x%d, q%d[(i64)j * nseg + s]);\n");
  buf_puts(b, "  }\n");
  cuda_axis_finish_results(b, p, pat, "  ");
  buf_puts(b, "}\n");
}
