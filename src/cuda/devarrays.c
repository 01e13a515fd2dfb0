/*
** cuda/devarrays.c -- jitc_run_device_arrays for the target `cuda`: a
** kernel run on device arrays of any strides that the caller owns (a CuPy
** array, a PyTorch tensor, a view of one), in place, on the caller's
** stream: nothing is copied, nothing waits.
**
** layout.c has broadcast the shapes and coalesced the axes (the device
** addresses are only numbers to it); where every array was one contiguous
** run the call was jitc_run_device's.  Here each array gets its kind
** (cuda/access.c: contiguous in the coalesced shape, broadcast along the
** inner axis, or strided), which with the number of axes and the index's
** width is the pattern whose kernel is compiled on its first use and kept
** (cuda/build.c: cuda_pattern_module); the shape and the strides in
** elements go to the kernels as their last argument, and the run is
** jitc_run_device's (cuda/devptr.c) with that module.  The kernels take the
** elements of the flat index as over contiguous arrays, so reductions give
** the bits of the same program over contiguous copies.  Start reading at
** cuda_run_device_layout().
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest jitc_nd, and jitc_kept over axes: kernel parameters are
** limited to 4 KiB in all (the pointers and scalars take the rest). */
enum { ND_BYTES = 2048, KEPT_BYTES = 1024 };

/* Array j's kind in L's coalesced shape. */
static char kind_of(const Layout *L, int j) {
  const LayoutArray *x = &L->a[j];
  int64_t c = (int64_t)x->esize;
  bool contig = true;
  for (int d = L->ndim - 1; d >= 0 && contig; d--) {
    contig = L->shape[d] == 1 || x->strides[d] == c;
    c *= L->shape[d];
  }
  if (contig)
    return CUDA_CONTIG;
  return x->strides[L->ndim - 1] == 0 ? CUDA_BCAST : CUDA_STRIDED;
}

/* Whether element-wise work over these arrays goes in tiles
** (CudaPattern.tile, cuda_access_tile_body): some array reached through its
** strides steps 8 elements or more along the inner axis (a warp's elements
** each in a sector of its own) and one element along the next, as a
** transpose does, so that a block's warps, on neighbouring rows of a tile, share its lines;
** the inner axis a warp wide and the next 8 deep at least.  Not where the
** thread of an element sets the bits (reductions) or the program is split
** into kernels that map elements their own way. */
static bool tiled(const Layout *L, const jitc_kernel *k, const char *kind) {
  const Program *p = k->prog;
  int nd = L->ndim;
  if (L->axes || p->nreduce || ((CudaKernel *)k->impl)->plan || nd < 2 ||
      L->shape[nd - 1] < 32 || L->shape[nd - 2] < 8)
    return false;
  for (int j = 0; j < p->narrays; j++) {
    int64_t e = (int64_t)L->a[j].esize, in = L->a[j].strides[nd - 1];
    int64_t next = L->a[j].strides[nd - 2];
    if (p->arrays[j].role != JITC_RESULT && kind[j] == CUDA_STRIDED &&
        (in >= 8 * e || in <= -8 * e) && (next == e || next == -e))
      return true;
  }
  return false;
}

/* The error of array j, whose elements are not aligned to their size:
** `what` the GPU cannot do with them, and the way out. */
static jitc_status unaligned(jitc_context *ctx, const Program *p, const Layout *L, int j,
                             const char *what) {
  return ctx_error(ctx, JITC_E_INPUT, "cuda: device array '%s' (%s at 0x%llx) has elements not "
                   "aligned to their size, which the GPU cannot %s", p->arrays[j].name,
                   jitc_dtype_name(p->arrays[j].dtype), (unsigned long long)(uintptr_t)L->a[j].base,
                   what);
}

/* Checks that every element of array j is aligned to its size: the GPU
** loads no other. */
static jitc_status check_aligned(jitc_context *ctx, const Program *p, const Layout *L, int j) {
  const LayoutArray *x = &L->a[j];
  bool ok = (uintptr_t)x->base % x->esize == 0;
  for (int d = 0; d < L->ndim && ok; d++)
    ok = x->strides[d] % (int64_t)x->esize == 0;
  return ok ? JITC_OK : unaligned(ctx, p, L, j, "load; copy it into an array of its own first");
}

/* Over axes, result j's kind: CUDA_CONTIG when its element of segment s
** is element s of it, else CUDA_STRIDED (reached through the kept axes'
** strides, which must be multiples of its element size). */
static jitc_status kept_kind(jitc_context *ctx, const Program *p, const Layout *L, int j,
                             char *kind) {
  const LayoutArray *x = &L->a[j];
  int64_t c = (int64_t)x->esize;
  bool contig = true, aligned = true;
  for (int d = L->kdim - 1; d >= 0; d--) {
    contig &= L->kshape[d] == 1 || x->kstrides[d] == c;
    aligned &= x->kstrides[d] % (int64_t)x->esize == 0;
    c *= L->kshape[d];
  }
  *kind = contig ? CUDA_CONTIG : CUDA_STRIDED;
  return aligned ? JITC_OK : unaligned(ctx, p, L, j, "store; give it an array of its own");
}

/* Over axes: the results' kinds (kind[]), the pattern's kept axes (*kd, 0
** when every result is contiguous in segment order) and jitc_kept's int64s
** (*kept, malloc'ed, NULL when none). */
static jitc_status kept_frame(jitc_context *ctx, const Program *p, const Layout *L, char *kind,
                              int *kd, int64_t **kept) {
  int nr = 0;
  *kd = 0;
  *kept = NULL;
  for (int j = 0; j < p->narrays; j++) {
    if (p->arrays[j].role != JITC_RESULT)
      continue;
    jitc_status st = kept_kind(ctx, p, L, j, &kind[j]);
    if (st != JITC_OK)
      return st;
    nr += kind[j] == CUDA_STRIDED;
  }
  if (!nr)
    return JITC_OK;
  size_t bytes = (size_t)L->kdim * (size_t)(nr + 1) * sizeof **kept;
  if (bytes > KEPT_BYTES)
    return ctx_error(ctx, JITC_E_INPUT, "cuda: %d results of %d axes that no two results step "
                     "over alike have more strides than a kernel's parameters hold; give them "
                     "contiguous arrays", nr, L->kdim);
  if (!(*kept = malloc(bytes)))
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  memcpy(*kept, L->kshape, (size_t)L->kdim * sizeof **kept);
  int64_t *row = *kept + L->kdim;
  for (int j = 0; j < p->narrays; j++) {
    if (p->arrays[j].role != JITC_RESULT || kind[j] != CUDA_STRIDED)
      continue;
    for (int d = 0; d < L->kdim; d++)
      row[d] = L->a[j].kstrides[d] / (int64_t)L->a[j].esize;
    row += L->kdim;
  }
  *kd = L->kdim;
  return JITC_OK;
}

jitc_status cuda_run_device_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                   const ParamSlot *params, void *stream) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl || k->ctx != ctx)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled in this context");
  int na = p->narrays, nd = L->ndim, ns = 0;
  for (int j = 0; j < na; j++) {
    jitc_status st = p->arrays[j].role == JITC_RESULT ? JITC_OK : check_aligned(ctx, p, L, j);
    if (st != JITC_OK)
      return st;
  }
  /* The pattern, the strided flags and the device addresses; then jitc_nd. */
  char *kind = malloc((size_t)na + 1);
  bool *strided = malloc((size_t)na + 1);
  uint64_t *ptrs = malloc(((size_t)na + 1) * sizeof *ptrs);
  int64_t *vals = NULL, *kept = NULL;
  int kd = 0;
  jitc_status st = kind && strided && ptrs ? JITC_OK
                                           : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int j = 0; j < na && st == JITC_OK; j++) {
    kind[j] = p->arrays[j].role == JITC_RESULT ? CUDA_CONTIG : kind_of(L, j);
    strided[j] = kind[j] != CUDA_CONTIG;
    ns += strided[j];
    ptrs[j] = (uint64_t)(uintptr_t)L->a[j].base;
  }
  if (st == JITC_OK && L->axes)
    st = kept_frame(ctx, p, L, kind, &kd, &kept);
  size_t bytes = (size_t)nd * (size_t)(ns + 1) * sizeof *vals;
  if (st == JITC_OK && bytes > ND_BYTES)
    st = ctx_error(ctx, JITC_E_INPUT, "cuda: %d device arrays of %d axes that no two arrays "
                   "step over alike have more strides than a kernel's parameters hold; copy "
                   "some of them into contiguous arrays first", ns, nd);
  if (st == JITC_OK && !(vals = malloc(bytes)))
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK) {
    memcpy(vals, L->shape, (size_t)nd * sizeof *vals);
    int64_t *row = vals + nd;
    for (int j = 0; j < na; j++) {
      if (!strided[j])
        continue;
      for (int d = 0; d < nd; d++)
        row[d] = L->a[j].strides[d] / (int64_t)L->a[j].esize;
      row += nd;
    }
    CudaPattern pat = {nd, L->n > (int64_t)UINT32_MAX, kind, kd, tiled(L, k, kind)};
    CudaAxisRun ax = {0};
    if (L->axes) {
      cuda_axis_plan(L->seg, L->nseg, &ax);
      cuda_axis_col_plan(L, p, kind, &ax);
    }
    CudaNdRun run = {strided, vals, kept, L->axes ? &ax : NULL};
    CudaModule *home = NULL;
    /* Over axes with every array contiguous, the kernel's own module. */
    bool plain = L->axes && !kd && !ns;
    pthread_mutex_lock(&S->lock);
    st = plain ? JITC_OK : cuda_pattern_module(ctx, S, k, &pat, &home);
    pthread_mutex_unlock(&S->lock);
    if (plain)
      home = ((CudaKernel *)k->impl)->mod;
    if (st == JITC_OK)
      st = cuda_devptr_run(ctx, k, L->n, ptrs, params, stream, home, &run);
  }
  free(kind);
  free(strided);
  free(ptrs);
  free(vals);
  free(kept);
  return st;
}
