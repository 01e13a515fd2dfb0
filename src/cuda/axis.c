/*
** cuda/axis.c -- reductions over axes (sum(x, axis=0), argmin(x, axis=-1))
** on the target `cuda`, as CUDA C: the kernels cuda/gen.c writes for a
** program with Program.by_axis, in place of jitc_k32 and jitc_r.
**
** layout.c takes the reduced axes innermost, so that the flat index runs
** segment by segment: segment s, one element of each result, is elements
** [s * seg, (s + 1) * seg).  A segment is cut into pieces of CUDA_APIECE
** elements (the last one shorter), pps = ceil(seg / CUDA_APIECE) of them,
** or, where there are many segments (cuda_axis_plan), is one piece (pps =
** 1, whatever its length); piece q of the run is piece q % pps of segment
** q / pps.  G threads take
** one piece (G = 1, 32 or 256: jitc_a1, jitc_a32, jitc_a256): lane l
** folds the piece's elements l, l + G, l + 2G, ... in that order into its
** accumulator (for 256, groups of V consecutive elements in that manner:
** cuda_axis_group), then the G lanes are combined in a fixed tree (warp
** shuffles; for 256, the warps' results through shared memory).  A
** segment of one piece is finished there; otherwise each piece's partial
** goes to qK[q], and jitc_ac, one thread per segment, combines the
** segment's pieces in order and finishes.  G and the pieces are functions
** of the shape alone (cuda/axisrun.c: cuda_axis_plan), never of the GPU or of
** how the launches are cut, so a result has the same bits on every run and
** every device.  jitc_elem gets the element's index in its segment: the
** index argmin and argmax give (the program's `i` is refused beside a
** reduction over axes).
**
** The arrays: element g of the flat index is element g - off of a
** contiguous array (off: where the host pipeline's chunk starts, 0 on the
** caller's device arrays), or, for a strided one, at the offset the
** pattern's unravel gives (cuda/access.c).  A result's element of segment
** s is aK[s], or, over device arrays where the result is not one
** contiguous run in segment order, at the offset of s unravelled by the
** kept axes (struct jitc_kept; CudaPattern.kd).  Pure, as all generation.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>

/* Whether result array k is reached through the kept axes' strides. */
static bool kept_strided(const CudaPattern *pat, const Program *p, int k) {
  return pat && pat->kd > 0 && p->arrays[k].role == JITC_RESULT && pat->kind[k] == CUDA_STRIDED;
}

/* Result k's row in jitc_kept. */
static int kept_row(const CudaPattern *pat, const Program *p, int k) {
  int r = 0;
  for (int q = 0; q < k; q++)
    r += kept_strided(pat, p, q);
  return r;
}

/* The struct of the kept axes and the offset of segment s, when some
** result needs them. */
static void put_kept(Buf *b, const Program *p, const CudaPattern *pat) {
  int nr = kept_row(pat, p, p->narrays);
  if (!nr)
    return;
  buf_printf(b, "\n// Results of any strides: segment s unravelled by the kept axes' extents\n"
                "// n[], strides s[row][] in elements.\n"
                "struct jitc_kept { i64 n[%d]; i64 s[%d][%d]; };\n"
                DEV "i64 jitc_kofs(i64 s, const i64 *n, const i64 *st) {\n"
                "  i64 o = 0;\n  for (int d = %d; d >= 0; d--) {\n"
                "    o += s %% n[d] * st[d];\n    s /= n[d];\n  }\n  return o;\n}\n",
             pat->kd, nr, pat->kd, pat->kd - 1);
}

void cuda_axis_kept_param(Buf *b, const Program *p, const CudaPattern *pat, bool decl) {
  if (kept_row(pat, p, p->narrays))
    buf_puts(b, decl ? ", const jitc_kept kp" : ", kp");
}

const char *cuda_axis_result_at(char *out, size_t len, const CudaPattern *pat, const Program *p,
                             int k) {
  if (kept_strided(pat, p, k))
    snprintf(out, len, "jitc_kofs(s, kp.n, kp.s[%d])", kept_row(pat, p, k));
  else
    snprintf(out, len, "s");
  return out;
}

void cuda_axis_red_params(Buf *b, const Program *p, bool decl, bool in) {
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_RESULT) {
      if (decl)
        buf_printf(b, ", %sjitc_p%d *__restrict__ q%d", in ? "const " : "", k, k);
      else
        buf_printf(b, ", q%d", k);
    }
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_RESULT) {
      if (decl)
        buf_printf(b, ", %s *__restrict__ a%d", cuda_ctype(p->arrays[k].dtype), k);
      else
        buf_printf(b, ", a%d", k);
    }
}

/* The unit kernels' parameters (decl) or arguments. */
static void put_unit_params(Buf *b, const Program *p, const CudaPattern *pat, bool decl) {
  if (decl) {
    buf_puts(b, "const i64 q0, const i64 nq, const i64 seg, const i64 pps, const i64 off, "
                "const int va");
    cuda_access_params(b, p);
  } else {
    buf_puts(b, "q0, nq, seg, pps, off, va");
    for (int k = 0; k < p->narrays; k++)
      if (p->arrays[k].role != JITC_RESULT)
        buf_printf(b, ", a%d", k);
    for (int k = 0; k < p->nparams; k++)
      buf_printf(b, ", p%d", k);
  }
  cuda_axis_red_params(b, p, decl, false);
  cuda_access_nd_param(b, p, pat, decl);
  cuda_axis_kept_param(b, p, pat, decl);
}

void cuda_axis_per_result(Buf *b, const Program *p, const char *fmt) {
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_RESULT)
      buf_printf(b, fmt, k, k, k, k);
}

void cuda_axis_finish_results(Buf *b, const Program *p, const CudaPattern *pat, const char *ind) {
  char at[64];
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_RESULT)
      buf_printf(b, "%sa%d[%s] = jitc_fin%d(x%d, seg);\n", ind, k,
                 cuda_axis_result_at(at, sizeof at, pat, p, k), k, k);
}

void cuda_axis_store(Buf *b, const Program *p, const CudaPattern *pat, const char *ind,
                     const char *pieces, const char *part) {
  buf_printf(b, "%sif (%s == 1) {\n", ind, pieces);
  char in2[32];
  snprintf(in2, sizeof in2, "%s  ", ind);
  cuda_axis_finish_results(b, p, pat, in2);
  buf_printf(b, "%s} else {\n", ind);
  cuda_axis_per_result(b, p, part);
  buf_printf(b, "%s}\n", ind);
}

/* The body of one element g of the flat index, e of its segment: loads,
** jitc_elem, stores. */
static void put_element(Buf *b, const Program *p, const CudaPattern *pat, const char *from,
                        const char *ind) {
  buf_printf(b, "%sconst i64 g = s * seg + e;\n%sconst i64 j = g - off;\n%s(void)j;\n", ind, ind,
             ind);
  cuda_access_element(b, p, pat, "g", "e", from, ind);
}

/* A block's lanes take a piece's elements in groups of V consecutive ones:
** lane l groups l, l + G, l + 2G, ..., CUDA_APIECE / CUDA_BLOCK elements
** in all, each group's in order.  V is 16 bytes of the widest array loaded
** (float32: 4), so that where every array loaded is contiguous and aligned
** a group is one load of 16 bytes (or of V elements of a narrower array);
** elsewhere the same elements are loaded one by one, in the same order.
** The order, and so the bits, depend on the program's types alone.
** Measured on an H100 (bench/gpu_nd.py, old and new in turn): rows of 8192
** float32 0.0878 ms where one element a load took 0.0897, CuPy 0.0882. */
int cuda_axis_group(const Program *p) {
  size_t w = 0;
  for (int k = 0; k < p->narrays; k++)
    if (cuda_axis_loaded(p, k) && jitc_dtype_size(p->arrays[k].dtype) > w)
      w = jitc_dtype_size(p->arrays[k].dtype);
  return w && w <= 16 ? (int)(16 / w) : 1;
}

bool cuda_axis_loaded(const Program *p, int k) {
  return p->arrays[k].role == JITC_INPUT || p->arrays[k].role == JITC_INOUT;
}

/* Whether the kernels have the vector form: every array loaded is
** contiguous (under pat) and a group is several elements. */
static bool vector_groups(const Program *p, const CudaPattern *pat, int V) {
  for (int k = 0; k < p->narrays && V > 1; k++)
    if (cuda_axis_loaded(p, k) && pat && pat->kind[k] != CUDA_CONTIG)
      return false;
  return V > 1;
}

/* The unrolled loops over a lane's groups of the CUDA_APIECE elements from
** c0: each element e (where `check`, only e < hi), its arrays read from
** the registers rK`from` (put_element) or, from NULL, from memory. */
static void put_groups(Buf *b, const Program *p, const CudaPattern *pat, int V, const char *c0,
                       const char *from, bool check, const char *ind) {
  int ng = CUDA_APIECE / CUDA_BLOCK / V;
  char in2[32];
  snprintf(in2, sizeof in2, "%s    %s", ind, check ? "  " : "");
  buf_printf(b, "#pragma unroll\n%sfor (int k = 0; k < %d; k++) {\n#pragma unroll\n"
                "%s  for (int t = 0; t < %d; t++) {\n"
                "%s    const i64 e = %s + ((i64)k * G + l) * %d + t;\n",
             ind, ng, ind, V, ind, c0, V);
  if (check)
    buf_printf(b, "%s    if (e < hi) {\n", ind);
  put_element(b, p, pat, from, in2);
  if (check)
    buf_printf(b, "%s    }\n", ind);
  buf_printf(b, "%s  }\n%s}\n", ind, ind);
}

/* A block's CUDA_APIECE elements from c0 in groups of V (cuda_axis_group).
** In the vector form, where the launch found every array aligned (va: the
** host's test, cuda/axisrun.c; a test of the pointers here would keep
** NVRTC from loading through the read-only cache) and the piece is whole,
** each lane's groups are loaded first, one vector each, then folded;
** elsewhere each element is loaded as it is folded.  Unrolled, so that all
** of a lane's loads are issued before its first add (a loop to hi kept 4
** in flight). */
static void put_block_piece(Buf *b, const Program *p, const CudaPattern *pat, int V,
                            const char *c0, const char *ind) {
  char in2[32];
  snprintf(in2, sizeof in2, "%s  ", ind);
  if (vector_groups(p, pat, V)) {
    int ng = CUDA_APIECE / CUDA_BLOCK / V;
    buf_printf(b, "%sif (va && hi - %s >= %d) {\n", ind, c0, CUDA_APIECE);
    for (int k = 0; k < p->narrays; k++)
      if (cuda_axis_loaded(p, k))
        buf_printf(b, "%s  const jitc_vec<%s, %d> *const v%d = (const jitc_vec<%s, %d> *)(a%d + "
                      "(s * seg + %s - off));\n",
                   ind, cuda_ctype(p->arrays[k].dtype), V, k, cuda_ctype(p->arrays[k].dtype), V,
                   k, c0);
    for (int k = 0; k < p->narrays; k++)
      if (cuda_axis_loaded(p, k))
        buf_printf(b, "%s  jitc_vec<%s, %d> r%d[%d];\n", ind, cuda_ctype(p->arrays[k].dtype), V,
                   k, ng);
    buf_printf(b, "#pragma unroll\n%s  for (int k = 0; k < %d; k++) {\n", ind, ng);
    for (int k = 0; k < p->narrays; k++)
      if (cuda_axis_loaded(p, k))
        buf_printf(b, "%s    r%d[k] = v%d[k * G + l];\n", ind, k, k);
    buf_printf(b, "%s  }\n", ind);
    put_groups(b, p, pat, V, c0, "[k].v[t]", false, in2);
    buf_printf(b, "%s} else {\n", ind);
    put_groups(b, p, pat, V, c0, NULL, true, in2);
    buf_printf(b, "%s}\n", ind);
  } else {
    put_groups(b, p, pat, V, c0, NULL, true, ind);
  }
}

static void each_result(Buf *b, const void *p, const char *fmt) {
  cuda_axis_per_result(b, p, fmt);
}

/* The G lanes' accumulators combined in a fixed tree into lane 0's (a
** block's: cuda_block_tree). */
static void put_tree(Buf *b, const Program *p) {
  buf_puts(b, "  if (G == 32) {\n#pragma unroll\n    for (int o = 16; o > 0; o >>= 1) {\n");
  cuda_axis_per_result(b, p, "      x%d = jitc_down(x%d, jitc_c%d(), o);\n");
  buf_printf(b, "    }\n  } else if (G == %d) {\n", CUDA_BLOCK);
  cuda_block_tree(b, each_result, p);
  buf_puts(b, "      }\n    }\n  }\n");
}

/* jitc_units<G>: the pieces [q0, q0 + nq) of the run, G threads each. */
static void put_units(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_printf(b, "\n// Pieces q0 + u, u in [0, nq): G threads each, %d / G per block.\n"
                "template <int G, bool W>\n" DEV "void jitc_units(", CUDA_BLOCK);
  put_unit_params(b, p, pat, true);
  buf_printf(b, ") {\n  const i64 u = (i64)blockIdx.x * (%d / G) + (i64)(threadIdx.x / G);\n"
                "  const int l = (int)(threadIdx.x %% G);\n", CUDA_BLOCK);
  cuda_axis_per_result(b, p, "  jitc_p%d x%d = jitc_id%d();\n");
  buf_printf(b, "  i64 s = 0, q = 0;\n  if (u < nq) {\n    q = q0 + u;\n    s = pps == 1 ? q : q / pps;\n"
                "    const i64 lo = (q - s * pps) * %d;\n"
                "    const i64 hi = W || seg - lo < %d ? seg : lo + %d;\n",
             CUDA_APIECE, CUDA_APIECE, CUDA_APIECE);
  /* W, a segment longer than CUDA_APIECE as one piece: the same loop over
  ** each CUDA_APIECE of it in turn (a kernel of its own: in jitc_a256, that
  ** loop took rows of 4096 from 0.0250 to 0.0257 ms, of 2000 from 0.0063
  ** to 0.0074, on an H100). */
  int V = cuda_axis_group(p);
  buf_printf(b, "    if (G == %d && W) {\n      for (i64 c = lo; c < hi; c += %d) {\n", CUDA_BLOCK,
             CUDA_APIECE);
  put_block_piece(b, p, pat, V, "c", "        ");
  buf_printf(b, "      }\n    } else if (G == %d) {\n", CUDA_BLOCK);
  put_block_piece(b, p, pat, V, "lo", "      ");
  buf_puts(b, "    } else {\n      for (i64 e = lo + l; e < hi; e += G) {\n");
  put_element(b, p, pat, NULL, "        ");
  buf_puts(b, "      }\n    }\n  }\n");
  put_tree(b, p);
  buf_puts(b, "  if (l == 0 && u < nq) {\n");
  cuda_axis_store(b, p, pat, "    ", "pps", "      q%d[q] = x%d;\n");
  buf_puts(b, "  }\n}\n");
  static const int lanes[4] = {1, 32, CUDA_BLOCK, CUDA_BLOCK};
  for (int w = 0; w < 4; w++) {
    int G = lanes[w];
    buf_printf(b, "\nextern \"C\" __global__ void __launch_bounds__(%d) jitc_a%d%s(", CUDA_BLOCK,
               G, w == 3 ? "w" : "");
    put_unit_params(b, p, pat, true);
    buf_printf(b, ") {\n  jitc_units<%d, %s>(", G, w == 3 ? "true" : "false");
    put_unit_params(b, p, pat, false);
    buf_puts(b, ");\n}\n");
  }
}

/* jitc_ac: segments [s0, s0 + ns), one thread each: its pps pieces'
** partials combined in order, finished (pps == 0: an empty segment);
** piece j of segment s at s * pps + j. */
static void put_combine(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_printf(b, "\n// Segments s0 + t, t in [0, ns): the partials of their pieces in order.\n"
                "extern \"C\" __global__ void __launch_bounds__(%d) jitc_ac(const i64 s0, "
                "const i64 ns, const i64 seg, const i64 pps", CUDA_BLOCK);
  cuda_axis_red_params(b, p, true, true);
  cuda_axis_kept_param(b, p, pat, true);
  buf_printf(b, ") {\n  const i64 t = (i64)blockIdx.x * %d + (i64)threadIdx.x;\n"
                "  if (t >= ns)\n    return;\n  const i64 s = s0 + t;\n", CUDA_BLOCK);
  cuda_axis_per_result(b, p, "  jitc_p%d x%d = jitc_id%d();\n");
  buf_puts(b, "#pragma unroll 16\n  for (i64 j = 0; j < pps; j++) {\n");
  cuda_axis_per_result(b, p, "    x%d = jitc_c%d()(x%d, q%d[s * pps + j]);\n");
  buf_puts(b, "  }\n");
  cuda_axis_finish_results(b, p, pat, "  ");
  buf_puts(b, "}\n");
}

void cuda_axis_kernels(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_printf(b, "// Reductions over axes: segment s (one element of each result) is elements\n"
                "// [s * seg, (s + 1) * seg) of the flat index, cut into pieces of %d\n"
                "// elements, or one piece (pps 1); piece q is piece q %% pps of segment\n"
                "// q / pps.  G lanes take a piece, lane l its elements l, l + G, ... in\n"
                "// order, then a fixed tree; a segment of one piece is finished there,\n"
                "// else jitc_ac combines its pieces' partials in order.  G and the\n"
                "// pieces depend on the shape alone.\n",
             CUDA_APIECE);
  put_kept(b, p, pat);
  put_units(b, p, pat);
  put_combine(b, p, pat);
}
