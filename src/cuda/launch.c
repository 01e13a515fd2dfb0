/*
** cuda/launch.c -- launching a compiled kernel of the target `cuda` on
** device memory.  Nothing here compiles: cuda/build.c built and loaded
** every kernel.  The kernels index with 32 bits, so arrays longer than a
** slice (2^30 elements) are launched one slice after another, the pointers
** advanced and `base` telling the kernel where the slice starts.  A split
** program (cuda/plan.c) runs its kernels one group after another per range.
** A program with reductions (cuda/reduce.c) has a grid of one wave of
** blocks, a function of the element count and the device alone, each block
** writing one partial per reduction at the run's next free places
** (CudaParts); the last launch on one stream finishes in its last block,
** else jitc_r does, or a split program's jitc_r0, jitc_r1, ...
** (cuda_reduce_launch).  Over device arrays of any strides (a pattern's
** module: cuda/access.c), a strided array's pointer stays at its element 0
** (the kernel finds element base + j from its strides) and the jitc_nd of
** the shape and strides is every kernel's last argument.  Start reading at
** cuda_launch(), at the end.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A split program's elements per range of launches: scratch of at most
** 64 MB per slot; ranges of whole blocks, within a slice. */
static int64_t split_range(const CudaState *S, CudaKernel *ck) {
  if (!ck->range) {
    size_t per = ck->plan->per_elem;
    int64_t r = per ? (int64_t)(((size_t)64 << 20) / per) : (int64_t)1 << 30;
    r = r > ((int64_t)1 << 30) ? (int64_t)1 << 30 : r;
    r = r > S->slice ? S->slice : r;
    ck->range = r < CUDA_BLOCK ? CUDA_BLOCK : r / CUDA_BLOCK * CUDA_BLOCK;
  }
  return ck->range;
}

/* Elements per launch of jitc_k32: a multiple of 4096, which keeps every
** array's alignment from one slice to the next. */
static int64_t slice_of(const CudaState *S) {
  int64_t slice = S->slice / 4096 * 4096;
  return slice < 4096 ? 4096 : slice;
}

/* The blocks of a launch with reductions over `work` threads' worth of
** elements: at most one wave of resident blocks, each thread then taking
** several; a function of the element count and the home device alone (its
** SMs, the kernel's occupancy there), as the partials' values depend on
** it: every GPU of a run launches the grid the home device would, so that
** the partials, and the bits of a float sum, do not depend on which GPUs
** ran or how many. */
static int64_t reduce_blocks(const CudaState *S, const CudaKernel *ck, int64_t work) {
  int64_t blocks = (work + CUDA_BLOCK - 1) / CUDA_BLOCK;
  int64_t cap = (int64_t)S->nsm * ck->mod->occ;
  if (blocks > cap)
    blocks = cap;
  return blocks < 1 ? 1 : blocks;
}

/* Points the launch's partial parameters at the next `blocks` partials of
** each reduction (pp: one per reduction; args from *q on). */
static void put_parts(const Program *p, const CudaParts *parts, CUdeviceptr *pp, void **args,
                      int *q) {
  int r = 0;
  for (int a = 0; a < p->narrays; a++)
    if (p->arrays[a].role == JITC_RESULT) {
      pp[r] = parts->base + (CUdeviceptr)((r * parts->cap + parts->used) * CUDA_PART);
      args[(*q)++] = &pp[r++];
    }
}

int64_t cuda_partials(CudaState *S, const jitc_kernel *k, int64_t n) {
  CudaKernel *ck = k->impl;
  if (!k->prog->nreduce || n <= 0)
    return 0;
  int64_t total = 0;
  int64_t step = ck->plan ? split_range(S, ck) : slice_of(S);
  for (int64_t off = 0; off < n; off += step) {
    int64_t m_ = n - off < step ? n - off : step;
    total += reduce_blocks(S, ck, ck->plan ? m_ : m_ / ck->vec + 1);
  }
  return total;
}

size_t cuda_parts_bytes(const Program *p, int64_t cap) {
  return (size_t)p->nreduce * ((size_t)cap * CUDA_PART + CUDA_RES) + 8;
}

CUdeviceptr cuda_parts_count(const Program *p, const CudaParts *parts) {
  return parts->base + (CUdeviceptr)((size_t)p->nreduce * ((size_t)parts->cap * CUDA_PART + CUDA_RES));
}

jitc_status cuda_reduce_begin(jitc_context *ctx, CudaState *S, const Program *p,
                              CudaParts *parts, const CUdeviceptr *res, CUstream s) {
  parts->res = res;
  parts->count = cuda_parts_count(p, parts);
  parts->finished = false;
  CUresult r = S->api.cuMemsetD8Async(parts->count, 0, 4, s);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "zeroing the reductions' counter");
}

jitc_status cuda_reduce_end(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                            const CudaModule *m, const CudaParts *parts, int64_t n,
                            CUstream s) {
  if (parts->finished)
    return JITC_OK;
  return cuda_reduce_launch(ctx, S, k, m, parts, n, parts->res, s);
}

jitc_status cuda_parts_ensure(jitc_context *ctx, CudaState *S, CudaKDev *kd, size_t bytes) {
  if (bytes <= kd->part_bytes)
    return JITC_OK;
  if (kd->part)
    S->api.cuMemFree(kd->part);
  kd->part = 0;
  kd->part_bytes = 0;
  CUresult r = S->api.cuMemAlloc(&kd->part, bytes);
  if (r != CUDA_SUCCESS) {
    kd->part = 0;
    return cuda_fail(ctx, S, r, "allocating scratch for the reductions' partials");
  }
  kd->part_bytes = bytes;
  return JITC_OK;
}

void cuda_launch_fix(CudaState *S, CudaKernel *ck) {
  if (ck->plan)
    split_range(S, ck);
}

void cuda_parts_results(const Program *p, const CudaParts *parts, CUdeviceptr *res) {
  int r = 0;
  for (int a = 0; a < p->narrays; a++)
    if (p->arrays[a].role == JITC_RESULT)
      res[a] = parts->base + (CUdeviceptr)((size_t)p->nreduce * (size_t)parts->cap * CUDA_PART +
                                           (size_t)r++ * CUDA_RES);
}

jitc_status cuda_reduce_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                               const CudaModule *m, const CudaParts *parts, int64_t n,
                               const CUdeviceptr *res, CUstream s) {
  const Program *p = k->prog;
  if (!m->nrfn)
    return ctx_error(ctx, JITC_E_INTERNAL, "cuda: the module has no jitc_r");
  uint32_t np = (uint32_t)parts->used;
  int64_t n64 = n;
  int nr = p->nreduce;
  void **args = malloc(((size_t)nr * 2 + 2) * sizeof *args);
  CUdeviceptr *pp = malloc((size_t)nr * 2 * sizeof *pp);
  int *slot = malloc((size_t)nr * sizeof *slot); /* of each reduction's result */
  if (!args || !pp || !slot) {
    free(args);
    free(pp);
    free(slot);
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  }
  for (int a = 0, r = 0; a < p->narrays; a++)
    if (p->arrays[a].role == JITC_RESULT)
      slot[r++] = a;
  /* jitc_r takes every reduction; a split program's jitc_rC the C-th
  ** CUDA_RCHUNK of them. */
  int per = m->ngfn ? CUDA_RCHUNK : nr;
  CUresult rc = CUDA_SUCCESS;
  for (int c = 0; c < m->nrfn && rc == CUDA_SUCCESS; c++) {
    int lo = c * per, hi = lo + per < nr ? lo + per : nr, q = 0;
    args[q++] = &np;
    args[q++] = &n64;
    for (int r = lo; r < hi; r++) {
      pp[r] = parts->base + (CUdeviceptr)((size_t)r * (size_t)parts->cap * CUDA_PART);
      args[q++] = &pp[r];
    }
    for (int r = lo; r < hi; r++) {
      pp[nr + r] = res[slot[r]];
      args[q++] = &pp[nr + r];
    }
    rc = S->api.cuLaunchKernel(m->rfn[c], 1, 1, 1, CUDA_BLOCK, 1, 1, 0, s, args, NULL);
  }
  free(args);
  free(pp);
  free(slot);
  return rc == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, rc, "launching the reductions' combine");
}

/* cuda_launch() for a split program: for each range of ck->range elements,
** every group's kernel in order on stream s, with the range's scratch (the
** caller's: one per stream slot, as the two slots' chunks may be in flight
** at once, and one per context for jitc_run_device). */
static jitc_status launch_split(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                const CudaModule *mod, CUdeviceptr *scratch, int64_t n,
                                int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                                CudaParts *parts, const CudaNdRun *nd, CUstream s) {
  CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  const CudaPlan *P = ck->plan;
  int64_t range = split_range(S, ck);
  if (P->per_elem && !*scratch) {
    CUresult r = S->api.cuMemAlloc(scratch, P->per_elem * (size_t)ck->range);
    if (r != CUDA_SUCCESS) {
      *scratch = 0;
      return cuda_fail(ctx, S, r, "allocating scratch for the kernel's temporaries");
    }
  }
  size_t most = 3 + (size_t)p->narrays + (size_t)p->nparams + (size_t)p->ntemps +
                (size_t)p->nreduce;
  void **args = malloc(most * sizeof *args);
  CUdeviceptr *ptrs = malloc(((size_t)p->narrays + (size_t)p->ntemps + 1) * sizeof *ptrs);
  CUdeviceptr *pp = malloc(((size_t)p->nreduce + 1) * sizeof *pp);
  jitc_status st = JITC_OK;
  if (!args || !ptrs || !pp)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int64_t off = 0; st == JITC_OK && off < n; off += range) {
    int64_t m = n - off < range ? n - off : range;
    uint32_t m32 = (uint32_t)m;
    int64_t b64 = base + off;
    /* With reductions every group's kernel strides over the range with the
    ** grid of the partials; else one element per thread. */
    unsigned blocks = p->nreduce ? (unsigned)reduce_blocks(S, ck, m)
                                 : (unsigned)((m + CUDA_BLOCK - 1) / CUDA_BLOCK);
    for (int g = 0; g < P->ng && st == JITC_OK; g++) {
      int a = 0, np = 0;
      args[a++] = &m32;
      args[a++] = &b64;
      for (int j = 0; j < P->narr[g]; j++) {
        int slot = P->arr[g][j];
        ptrs[np] = dptr[slot];
        if (!nd || !nd->strided[slot])
          ptrs[np] += (CUdeviceptr)off * jitc_dtype_size(p->arrays[slot].dtype);
        args[a++] = &ptrs[np++];
      }
      for (int j = 0; j < p->nparams; j++)
        args[a++] = (void *)&params[j]; /* the value sits at offset 0 of its slot */
      for (int j = 0; j < P->ntmp[g]; j++) {
        ptrs[np] = *scratch + (CUdeviceptr)(P->temp_off[P->tmp[g][j]] * (size_t)range);
        args[a++] = &ptrs[np++];
      }
      /* The partials of this group's reductions (cuda_reduce_params). */
      for (int j = 0; j < P->nred[g]; j++) {
        int ord = P->red[g][j];
        pp[ord] = parts->base + (CUdeviceptr)((ord * parts->cap + parts->used) * CUDA_PART);
        args[a++] = &pp[ord];
      }
      if (nd)
        args[a++] = (void *)nd->nd;
      CUresult r = S->api.cuLaunchKernel(mod->gfn[g], blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                         args, NULL);
      if (r != CUDA_SUCCESS)
        st = cuda_fail(ctx, S, r, "launching the kernel");
    }
    if (parts)
      parts->used += blocks;
  }
  free(args);
  free(ptrs);
  free(pp);
  return st;
}


/* One launch of jitc_k32 over elements [0, n) of a slice (n <= S->slice),
** the slice starting at element `base`, with args[3...] already set: one
** thread per vector step (or per element when a pointer is not aligned
** for vectors), which measured faster than a grid of a few waves striding
** over the arrays.  JITC_CUDA_WAVES caps the grid for experiments.  A
** program with reductions has its grid given (`blocks`). */
static jitc_status launch_slice(jitc_context *ctx, CudaState *S, const CudaKernel *ck,
                                const CudaModule *m, int64_t n, int64_t base, bool aligned,
                                int64_t blocks, void **args, CUstream s) {
  int vec = ck->vec;
  if (!blocks) {
    int64_t work = aligned ? n / vec : n;
    if (aligned && work < n % vec)
      work = n % vec;
    blocks = (work + CUDA_BLOCK - 1) / CUDA_BLOCK;
    int waves = S->env->cuda_waves;
    int64_t cap = waves ? (int64_t)S->nsm * m->occ * waves : (int64_t)1 << 30;
    if (blocks > cap)
      blocks = cap;
    if (blocks < 1)
      blocks = 1;
  }
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
                        const CUdeviceptr *dptr, const ParamSlot *params, CudaParts *parts,
                        const CudaNdRun *nd, CUstream s) {
  const CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  if (n <= 0)
    return JITC_OK;
  if (ck->plan)
    return launch_split(ctx, S, k, m, scratch, n, base, dptr, params, parts, nd, s);
  /* Vector accesses where every contiguous array is aligned for them (a
  ** slice, a multiple of 4096 elements, keeps the alignment). */
  bool aligned = S->env->cuda_vec != 0;
  for (int a = 0; a < p->narrays && aligned; a++)
    if (p->arrays[a].role != JITC_RESULT && !(nd && nd->strided[a]) &&
        dptr[a] % ((CUdeviceptr)ck->vec * jitc_dtype_size(p->arrays[a].dtype)) != 0)
      aligned = false;
  int nargs = 7 + p->narrays + p->nparams + 2 * p->nreduce;
  void **args = malloc((size_t)nargs * sizeof *args);
  CUdeviceptr *ptr = malloc(((size_t)p->narrays + 2 * (size_t)p->nreduce + 2) * sizeof *ptr);
  jitc_status st = JITC_OK;
  if (!args || !ptr)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int64_t slice = slice_of(S);
  for (int64_t off = 0; st == JITC_OK && off < n; off += slice) {
    int64_t ms = n - off < slice ? n - off : slice, blocks = 0;
    int q = 3;
    for (int a = 0; a < p->narrays; a++) {
      if (p->arrays[a].role == JITC_RESULT)
        continue; /* written by jitc_r only */
      ptr[a] = dptr[a];
      if (!nd || !nd->strided[a]) /* a strided array's kernel finds element base + j */
        ptr[a] += (CUdeviceptr)off * jitc_dtype_size(p->arrays[a].dtype);
      args[q++] = &ptr[a];
    }
    for (int a = 0; a < p->nparams; a++)
      args[q++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
    uint32_t np = 0;
    int64_t ntot = n;
    if (p->nreduce) {
      /* The same threads take the same elements whether aligned or not. */
      blocks = reduce_blocks(S, ck, ms / ck->vec + 1);
      put_parts(p, parts, ptr + p->narrays, args, &q);
      /* On one stream the last launch finishes (cuda_reduce_last). */
      bool last = parts->res && off + slice >= n;
      np = last ? (uint32_t)(parts->used + blocks) : 0;
      CUdeviceptr *fin = ptr + p->narrays + p->nreduce;
      fin[0] = last ? parts->count : 0;
      args[q++] = &np;
      args[q++] = &ntot;
      args[q++] = &fin[0];
      int r = 1;
      for (int a = 0; a < p->narrays; a++)
        if (p->arrays[a].role == JITC_RESULT) {
          fin[r] = last ? parts->res[a] : 0;
          args[q++] = &fin[r++];
        }
      parts->finished |= last;
    }
    if (nd)
      args[q++] = (void *)nd->nd;
    st = launch_slice(ctx, S, ck, m, ms, base + off, aligned, blocks, args, s);
    if (p->nreduce)
      parts->used += blocks;
  }
  free(args);
  free(ptr);
  return st;
}
