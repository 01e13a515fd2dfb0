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
** (cuda/axisrun.c: cuda_axis_col_plan decides), consecutive threads take
** consecutive segments instead, so that a warp reads consecutive elements
** of each row.  To fill the GPU a segment's elements (its rows, in the
** order of the flat index) are cut into pcs pieces of rows =
** ceil(seg / pcs) elements (the last shorter): unit u of the run is piece
** q = u / nseg of segment s = u % nseg, folded element by element in order
** into one accumulator by one thread.  A segment of one piece is finished
** there; otherwise the partial goes to qK[q * nseg + s] and jitc_ac
** (ss = 1, js = nseg) combines a segment's pieces in order.  pcs is a
** function of the shape alone (cuda_axis_col_plan), so the bits are too.
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

/* The parameters (decl) of jitc_acol. */
static void put_params(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_puts(b, "const i64 u0, const i64 nu, const i64 seg, const i64 pcs, const i64 nseg");
  cuda_access_params(b, p);
  cuda_axis_red_params(b, p, true, false);
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
  buf_printf(b, "\n// The column form: unit u0 + t, t in [0, nu), is piece q = u / nseg of\n"
                "// segment s = u %% nseg, its elements [q * rows, (q + 1) * rows) in order,\n"
                "// rows = ceil(seg / pcs): consecutive threads, consecutive segments.\n"
                "extern \"C\" __global__ void __launch_bounds__(%d) jitc_acol(", CUDA_BLOCK);
  put_params(b, p, pat);
  buf_printf(b, ") {\n  const i64 t = (i64)blockIdx.x * %d + (i64)threadIdx.x;\n"
                "  if (t >= nu)\n    return;\n"
                "  const i64 u = u0 + t, q = u / nseg, s = u - q * nseg;\n"
                "  const i64 rows = (seg - 1) / pcs + 1, lo = q * rows;\n"
                "  const i64 hi = seg - lo < rows ? seg : lo + rows;\n",
             CUDA_BLOCK);
  cuda_axis_per_result(b, p, "  jitc_p%d x%d = jitc_id%d();\n");
  buf_puts(b, "  for (i64 e = lo; e < hi;) {\n");
  put_run(b, p, pat);
  buf_puts(b, "  }\n");
  cuda_axis_store(b, p, pat, "  ", "pcs", "    q%d[q * nseg + s] = x%d;\n");
  buf_puts(b, "}\n");
}
