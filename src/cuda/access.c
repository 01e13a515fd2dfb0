/*
** cuda/access.c -- how the kernels of the target `cuda` reach the arrays'
** elements: the pointer parameters, the vector and one-element loads and
** stores around jitc_elem, and for device arrays of any strides
** (jitc_run_device_arrays) the address of each element.
**
** Every kernel runs over a flat index: element base + j, k in the program's
** `i`.  A contiguous array's element k is a[k] (the launcher advances its
** pointer by `base`, so a[j]), loaded V at a time with vector accesses where
** the host found every such pointer aligned.  An array of any strides is
** addressed as CuPy's indexer does: k is unravelled by the coalesced shape
** (layout.c: axes of extent 1 dropped, axes every array steps over alike
** merged), and its element is a[sum of index[d] * stride[d]], its pointer
** never advanced.  The shape and the strides (in elements) are the kernel's
** last parameter, a struct jitc_nd; what the code is specialised on is the
** pattern (CudaPattern): the number of axes, whether the index fits 32 bits
** (which makes the divisions cheap), and per array whether it is
** contiguous, broadcast along the inner axis (its last stride 0: that term
** is dropped) or strided.  Each pattern is a kernel of its own, compiled on
** its first use; a program over contiguous arrays has no pattern and its
** kernels are exactly those it always had.  One element's index is
** unravelled once for all its arrays, so that the thread that takes element
** k under a pattern is the thread that takes it over contiguous arrays, and
** the partials of reductions, and so their bits, are the same.
**
** Pure, like the rest of generation: cuda/gen.c calls it.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>
#include <string.h>

/* Whether array k is reached through its strides. */
static bool strided(const CudaPattern *pat, const Program *p, int k) {
  return pat && p->arrays[k].role != JITC_RESULT && pat->kind[k] != CUDA_CONTIG;
}

bool cuda_pattern_any(const CudaPattern *pat, const Program *p) {
  for (int k = 0; pat && k < p->narrays; k++)
    if (strided(pat, p, k))
      return true;
  return false;
}

/* Array k's row of strides in jitc_nd: its place among the strided arrays. */
static int row_of(const CudaPattern *pat, const Program *p, int k) {
  int r = 0;
  for (int q = 0; q < k; q++)
    r += strided(pat, p, q);
  return r;
}

void cuda_pattern_key(Buf *b, const CudaPattern *pat, const Program *p) {
  buf_printf(b, "%d:", pat->nd);
  for (int k = 0; k < p->narrays; k++)
    buf_putc(b, p->arrays[k].role == JITC_RESULT && !pat->kd ? CUDA_CONTIG : pat->kind[k]);
  if (pat->wide)
    buf_puts(b, ":64");
  if (pat->kd)
    buf_printf(b, ":k%d", pat->kd);
  if (pat->tile)
    buf_puts(b, ":t");
}

void cuda_access_struct(Buf *b, const Program *p, const CudaPattern *pat) {
  if (!cuda_pattern_any(pat, p))
    return;
  int ns = row_of(pat, p, p->narrays);
  buf_puts(b, "\n// Arrays of any strides, as this kernel was made for them (");
  cuda_pattern_key(b, pat, p);
  buf_printf(b, "): the\n// flat index i is unravelled by the coalesced shape n[], and array aK's\n"
                "// element is aK[sum of index[d] * s[row][d]], strides in elements.\n"
                "struct jitc_nd { i64 n[%d]; i64 s[%d][%d]; };\n", pat->nd, ns, pat->nd);
  for (int k = 0; k < p->narrays; k++)
    if (strided(pat, p, k))
      buf_printf(b, "// a%d: %s, row %d\n", k,
                 pat->kind[k] == CUDA_BCAST ? "broadcast along the inner axis" : "strided",
                 row_of(pat, p, k));
}

void cuda_access_nd_param(Buf *b, const Program *p, const CudaPattern *pat, bool decl) {
  if (cuda_pattern_any(pat, p))
    buf_puts(b, decl ? ", const jitc_nd nd" : ", nd");
}

void cuda_access_params(Buf *b, const Program *p) {
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role != JITC_RESULT)
      buf_printf(b, ", %s%s *__restrict__ a%d", p->arrays[k].role == JITC_INPUT ? "const " : "",
                 cuda_ctype(p->arrays[k].dtype), k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", const %s p%d", cuda_ctype(p->params[k].type), k);
}

/* Whether array k is loaded (CUDA_LOADS) or stored (CUDA_STORES) by the kernels. */
static bool moves(const IrArray *a, int how) {
  return a->role != JITC_RESULT && (((how & CUDA_LOADS) && a->role != JITC_OUTPUT) ||
                                    ((how & CUDA_STORES) && a->role != JITC_INPUT));
}

/* Whether an unravel gives array k an offset (see cuda_access_unravel). */
static bool wanted(const CudaPattern *pat, const Program *p, int k, const int *only, int nonly,
                   int how) {
  bool in = !only;
  for (int q = 0; q < nonly && !in; q++)
    in = only[q] == k;
  return in && strided(pat, p, k) && moves(&p->arrays[k], how);
}

void cuda_access_unravel(Buf *b, const Program *p, const CudaPattern *pat, const int *only,
                         int nonly, int how, const char *g, const char *ind) {
  bool last = false, outer = false; /* the inner axis's index, the others' */
  for (int k = 0; k < p->narrays; k++)
    if (wanted(pat, p, k, only, nonly, how)) {
      last |= pat->kind[k] == CUDA_STRIDED;
      outer |= pat->nd > 1;
    }
  if (!last && !outer) { /* none, or broadcast along the only axis: element 0 */
    for (int k = 0; k < p->narrays; k++)
      if (wanted(pat, p, k, only, nonly, how))
        buf_printf(b, "%sconst i64 o%d = 0;\n", ind, k);
    return;
  }
  const char *I = cuda_ctype(pat->wide ? JITC_INT64 : JITC_UINT32);
  int nd = pat->nd;
  if (nd == 1) {
    buf_printf(b, "%sconst %s ix0 = (%s)(%s);\n", ind, I, I, g);
  } else {
    buf_printf(b, "%s%s q_ = (%s)(%s);\n", ind, I, I, g);
    for (int d = nd - 1; d >= 1; d--) {
      if (d < nd - 1 || last)
        buf_printf(b, "%sconst %s ix%d = q_ %% (%s)nd.n[%d];\n", ind, I, d, I, d);
      buf_printf(b, "%sq_ /= (%s)nd.n[%d];\n", ind, I, d);
    }
    buf_printf(b, "%sconst %s ix0 = q_;\n", ind, I);
  }
  for (int k = 0; k < p->narrays; k++) {
    if (!wanted(pat, p, k, only, nonly, how))
      continue;
    int row = row_of(pat, p, k), top = pat->kind[k] == CUDA_BCAST ? nd - 1 : nd;
    buf_printf(b, "%sconst i64 o%d = ", ind, k);
    for (int d = 0; d < top; d++)
      buf_printf(b, "%s(i64)ix%d * nd.s[%d][%d]", d ? " + " : "", d, row, d);
    buf_puts(b, top ? ";\n" : "0;\n");
  }
}

const char *cuda_access_index(char *out, size_t len, const CudaPattern *pat, const Program *p,
                              int k, const char *j) {
  if (strided(pat, p, k))
    snprintf(out, len, "o%d", k);
  else
    snprintf(out, len, "%s", j);
  return out;
}

const char *cuda_access_step(char *out, size_t len, const CudaPattern *pat, const Program *p,
                             int k) {
  if (!strided(pat, p, k))
    snprintf(out, len, "1");
  else if (pat->kind[k] == CUDA_BCAST)
    snprintf(out, len, "0");
  else
    snprintf(out, len, "nd.s[%d][%d]", row_of(pat, p, k), pat->nd - 1);
  return out;
}

void cuda_access_element(Buf *b, const Program *p, const CudaPattern *pat, const char *flat,
                         const char *i, const char *from, const char *ind) {
  if (cuda_pattern_any(pat, p))
    cuda_access_unravel(b, p, pat, NULL, 0, from ? CUDA_STORES : CUDA_LOADS | CUDA_STORES, flat,
                        ind);
  char at[32], val[64];
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    if (a->role == JITC_OUTPUT) {
      buf_printf(b, "%s%s x%d;\n", ind, cuda_ctype(a->dtype), k);
    } else if (a->role != JITC_RESULT) {
      if (from)
        snprintf(val, sizeof val, "r%d%s", k, from);
      else
        snprintf(val, sizeof val, "a%d[%s]", k, cuda_access_index(at, sizeof at, pat, p, k, "j"));
      buf_printf(b, "%s%s%s x%d = %s;\n", ind, a->role == JITC_INPUT ? "const " : "",
                 cuda_ctype(a->dtype), k, val);
    }
  }
  buf_printf(b, "%sjitc_elem(%s", ind, i);
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", x%d", k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_OUTPUT || p->arrays[k].role == JITC_INOUT)
      buf_printf(b, "%sa%d[%s] = x%d;\n", ind, k,
                 cuda_access_index(at, sizeof at, pat, p, k, "j"), k);
}

void cuda_access_tile_body(Buf *b, const Program *p, const CudaPattern *pat) {
  buf_printf(b, "  // Tiles of 32 elements along the inner axis by 32 rows (the flat index\n"
                "  // cut into rows of the inner extent): a block's 8 warps take every 8th of a\n"
                "  // tile's rows, their lanes its columns, so that an array whose inner axis\n"
                "  // steps far and whose next steps by one element (a transpose) is read or\n"
                "  // written in whole lines by the block's warps together.  Tile (tx, ty),\n"
                "  // grid-stride, stepped without dividing.\n"
                "  if (n == 0)\n    return;\n"
                "  const i64 len = nd.n[%d], r0 = base / len, tc = (len + 31) / 32;\n"
                "  const i64 tr = ((base + (i64)n - 1) / len - r0) / 32 + 1;\n"
                "  const i64 sx = gridDim.x %% tc, sy = gridDim.x / tc;\n"
                "  i64 tx = blockIdx.x %% tc, ty = blockIdx.x / tc;\n"
                "  for (; ty < tr; tx += sx, ty += sy) {\n"
                "    if (tx >= tc) {\n      tx -= tc;\n      ty++;\n      if (ty >= tr)\n"
                "        break;\n    }\n"
                "    const i64 col = tx * 32 + (i64)(threadIdx.x & 31);\n"
                "#pragma unroll\n"
                "    for (int rr = 0; rr < 32; rr += 8) {\n"
                "      const i64 g = (r0 + ty * 32 + rr + (i64)(threadIdx.x >> 5)) * len + col;\n"
                "      if (col >= len || g < base || g >= base + (i64)n)\n        continue;\n"
                "      const I j = (I)(g - base);\n",
             pat->nd - 1);
  cuda_access_element(b, p, pat, "g", "g", NULL, "      ");
  buf_puts(b, "    }\n  }\n");
}

void cuda_access_one(Buf *b, const Program *p, const CudaPattern *pat) {
  cuda_access_element(b, p, pat, "base + (i64)j", "base + (i64)j", NULL, "    ");
}

void cuda_access_vec(Buf *b, const Program *p, const CudaPattern *pat, int vec, bool load) {
  bool any = false;
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    const char *T = cuda_ctype(a->dtype);
    if (!moves(a, load ? CUDA_LOADS : CUDA_STORES))
      continue;
    if (strided(pat, p, k)) {
      any = true;
      continue;
    }
    if (load)
      buf_printf(b, "        if (vec) r%d[u] = ((const jitc_vec<%s, %d> *)a%d)[w];\n"
                    "        else for (int e = 0; e < %d; e++) r%d[u].v[e] = a%d[w * %d + e];\n",
                 k, T, vec, k, vec, k, k, vec);
    else
      buf_printf(b, "        if (vec) ((jitc_vec<%s, %d> *)a%d)[w] = r%d[u];\n"
                    "        else for (int e = 0; e < %d; e++) a%d[w * %d + e] = r%d[u].v[e];\n",
                 T, vec, k, k, vec, k, vec, k);
  }
  if (!any)
    return;
  /* The strided arrays element by element, each element's index unravelled once. */
  int how = load ? CUDA_LOADS : CUDA_STORES;
  buf_printf(b, "        for (int e = 0; e < %d; e++) {\n", vec);
  char g[64];
  snprintf(g, sizeof g, "base + (i64)(w * %d + e)", vec);
  cuda_access_unravel(b, p, pat, NULL, 0, how, g, "          ");
  for (int k = 0; k < p->narrays; k++)
    if (wanted(pat, p, k, NULL, 0, how)) {
      if (load)
        buf_printf(b, "          r%d[u].v[e] = a%d[o%d];\n", k, k, k);
      else
        buf_printf(b, "          a%d[o%d] = r%d[u].v[e];\n", k, k, k);
    }
  buf_puts(b, "        }\n");
}

void cuda_access_vec_body(Buf *b, const Program *p, const CudaPattern *pat, int vec) {
  bool any = cuda_pattern_any(pat, p);
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    const char *T = cuda_ctype(a->dtype);
    if (a->role == JITC_OUTPUT || strided(pat, p, k))
      buf_printf(b, "      jitc_vec<%s, %d> r%d;\n", T, vec, k);
    else
      buf_printf(b, "      %sjitc_vec<%s, %d> r%d = ((const jitc_vec<%s, %d> *)a%d)[w];\n",
                 a->role == JITC_INPUT ? "const " : "", T, vec, k, T, vec, k);
  }
  if (any) {
    buf_printf(b, "#pragma unroll\n      for (int e = 0; e < %d; e++) {\n", vec);
    char g[64];
    snprintf(g, sizeof g, "base + (i64)(w * %d + e)", vec);
    cuda_access_unravel(b, p, pat, NULL, 0, CUDA_LOADS | CUDA_STORES, g, "        ");
    for (int k = 0; k < p->narrays; k++)
      if (wanted(pat, p, k, NULL, 0, CUDA_LOADS))
        buf_printf(b, "        r%d.v[e] = a%d[o%d];\n", k, k, k);
    buf_printf(b, "        jitc_elem(base + (i64)(w * %d + e)", vec);
  } else {
    buf_printf(b, "#pragma unroll\n      for (int e = 0; e < %d; e++)\n"
                  "        jitc_elem(base + (i64)(w * %d + e)", vec, vec);
  }
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", r%d.v[e]", k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  if (any) {
    for (int k = 0; k < p->narrays; k++)
      if (wanted(pat, p, k, NULL, 0, CUDA_STORES))
        buf_printf(b, "        a%d[o%d] = r%d.v[e];\n", k, k, k);
    buf_puts(b, "      }\n");
  }
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    if (a->role != JITC_INPUT && !strided(pat, p, k))
      buf_printf(b, "      ((jitc_vec<%s, %d> *)a%d)[w] = r%d;\n", cuda_ctype(a->dtype), vec, k,
                 k);
  }
}
