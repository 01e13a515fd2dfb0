/*
** cuda_launch.c -- launching a compiled kernel of the target `cuda` on
** device memory.  Nothing here compiles: cuda_build.c built and loaded
** every kernel.  The kernels index with 32 bits, so arrays longer than a
** slice (2^30 elements) are launched one slice after another, the pointers
** advanced and `base` telling the kernel where the slice starts.  A split
** program (cuda_plan.c) runs its kernels one group after another per range.
** Start reading at cuda_launch(), at the end.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda_launch() for a split program: for each range of ck->range elements,
** every group's kernel in order on stream s, with the range's scratch (the
** caller's: one per stream slot, as the two slots' chunks may be in flight
** at once, and one per context for jitc_run_device). */
static jitc_status launch_split(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                const CudaModule *mod, CUdeviceptr *scratch, int64_t n,
                                int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                                CUstream s) {
  CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  const CudaPlan *P = ck->plan;
  if (!ck->range) {
    /* Scratch of at most 64 MB per slot; ranges of whole blocks, within a slice. */
    int64_t r = P->per_elem ? (int64_t)(((size_t)64 << 20) / P->per_elem) : (int64_t)1 << 30;
    r = r > ((int64_t)1 << 30) ? (int64_t)1 << 30 : r;
    r = r > S->slice ? S->slice : r;
    ck->range = r < CUDA_BLOCK ? CUDA_BLOCK : r / CUDA_BLOCK * CUDA_BLOCK;
  }
  if (P->per_elem && !*scratch) {
    CUresult r = S->api.cuMemAlloc(scratch, P->per_elem * (size_t)ck->range);
    if (r != CUDA_SUCCESS) {
      *scratch = 0;
      return cuda_fail(ctx, S, r, "allocating scratch for the kernel's temporaries");
    }
  }
  size_t most = 2 + (size_t)p->narrays + (size_t)p->nparams + (size_t)p->ntemps;
  void **args = malloc(most * sizeof *args);
  CUdeviceptr *ptrs = malloc(((size_t)p->narrays + (size_t)p->ntemps + 1) * sizeof *ptrs);
  jitc_status st = JITC_OK;
  if (!args || !ptrs)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int64_t off = 0; st == JITC_OK && off < n; off += ck->range) {
    int64_t m = n - off < ck->range ? n - off : ck->range;
    uint32_t m32 = (uint32_t)m;
    int64_t b64 = base + off;
    unsigned blocks = (unsigned)((m + CUDA_BLOCK - 1) / CUDA_BLOCK);
    for (int g = 0; g < P->ng && st == JITC_OK; g++) {
      int a = 0, np = 0;
      args[a++] = &m32;
      args[a++] = &b64;
      for (int j = 0; j < P->narr[g]; j++) {
        int slot = P->arr[g][j];
        ptrs[np] = dptr[slot] + (CUdeviceptr)off * jitc_dtype_size(p->arrays[slot].dtype);
        args[a++] = &ptrs[np++];
      }
      for (int j = 0; j < p->nparams; j++)
        args[a++] = (void *)&params[j]; /* the value sits at offset 0 of its slot */
      for (int j = 0; j < P->ntmp[g]; j++) {
        ptrs[np] = *scratch + (CUdeviceptr)(P->temp_off[P->tmp[g][j]] * (size_t)ck->range);
        args[a++] = &ptrs[np++];
      }
      CUresult r = S->api.cuLaunchKernel(mod->gfn[g], blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                         args, NULL);
      if (r != CUDA_SUCCESS)
        st = cuda_fail(ctx, S, r, "launching the kernel");
    }
  }
  free(args);
  free(ptrs);
  return st;
}


/* One launch of jitc_k32 over elements [0, n) of a slice (n <= S->slice),
** the slice starting at element `base`, with args[3...] already set: one
** thread per vector step (or per element when a pointer is not aligned
** for vectors), which measured faster than a grid of a few waves striding
** over the arrays.  JITC_CUDA_WAVES caps the grid for experiments. */
static jitc_status launch_slice(jitc_context *ctx, CudaState *S, const CudaKernel *ck,
                                const CudaModule *m, int64_t n, int64_t base, bool aligned,
                                void **args, CUstream s) {
  int vec = ck->vec;
  int64_t work = aligned ? n / vec : n;
  if (aligned && work < n % vec)
    work = n % vec;
  int64_t blocks = (work + CUDA_BLOCK - 1) / CUDA_BLOCK;
  int waves = S->env->cuda_waves;
  int64_t cap = waves ? (int64_t)S->nsm * m->occ * waves : (int64_t)1 << 30;
  if (blocks > cap)
    blocks = cap;
  if (blocks < 1)
    blocks = 1;
  /* The kernel's 32-bit indices reach n plus one grid stride of vectors:
  ** below 2^32 for a slice below 2^31 elements. */
  uint32_t n32 = (uint32_t)n;
  int64_t base64 = base;
  int vflag = aligned;
  args[0] = &n32;
  args[1] = &base64;
  args[2] = &vflag;
  CUresult r = S->api.cuLaunchKernel(m->fn, (unsigned)blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                     args, NULL);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "launching the kernel");
}

jitc_status cuda_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                        const CudaModule *m, CUdeviceptr *scratch, int64_t n, int64_t base,
                        const CUdeviceptr *dptr, const ParamSlot *params, CUstream s) {
  const CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  if (n <= 0)
    return JITC_OK;
  if (ck->plan)
    return launch_split(ctx, S, k, m, scratch, n, base, dptr, params, s);
  /* Vector accesses where every array is aligned for them (a slice, a
  ** multiple of 4096 elements, keeps the alignment). */
  bool aligned = S->env->cuda_vec != 0;
  for (int a = 0; a < p->narrays && aligned; a++)
    if (dptr[a] % ((CUdeviceptr)ck->vec * jitc_dtype_size(p->arrays[a].dtype)) != 0)
      aligned = false;
  int nargs = 3 + p->narrays + p->nparams;
  void **args = malloc((size_t)nargs * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays + 1) * sizeof *ptr);
  jitc_status st = JITC_OK;
  if (!args || !ptr)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int64_t slice = S->slice / 4096 * 4096;
  if (slice < 4096)
    slice = 4096;
  for (int64_t off = 0; st == JITC_OK && off < n; off += slice) {
    int q = 3;
    for (int a = 0; a < p->narrays; a++) {
      ptr[a] = dptr[a] + (CUdeviceptr)off * jitc_dtype_size(p->arrays[a].dtype);
      args[q++] = &ptr[a];
    }
    for (int a = 0; a < p->nparams; a++)
      args[q++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
    st = launch_slice(ctx, S, ck, m, n - off < slice ? n - off : slice, base + off, aligned, args,
                      s);
  }
  free(args);
  free(ptr);
  return st;
}
