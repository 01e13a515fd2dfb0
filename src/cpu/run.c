/*
** cpu/run.c -- running on the cpu target, and target_cpu itself: the
** struct Target that jitc.c calls.  Start at cpu_run().
**
** A context's cpu state holds its builder (cpu/build.c: the machines, the
** vector libraries and the JIT) and a pool of worker threads
** (runtime/pool.c), made on the first run that can use more than one
** thread.  A run cuts [0, n) into one chunk per thread, on multiples of
** CHUNK_ALIGN elements (RB with reductions), and calls the kernel on each
** chunk; the reductions' Partials of the blocks are then combined here.  jitc.h
** promises that a context is used by one thread at a time, so nothing here
** takes a lock.
*/
#include "cpu.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunk boundaries between threads: a multiple of W, and 64 elements is a
** whole number of cache lines for every dtype. */
#define CHUNK_ALIGN 64

typedef struct CpuState {
  CpuBuild *build;
  Pool *pool;       /* made by the first run that may use it */
  char device[320];
} CpuState;

/* A variant of the kernel reading some inputs as one element each
** (GenTarget.bcast), for blocks where they are constant. */
typedef struct Variant {
  uint64_t bcast;
  KernelFn fn;
} Variant;

typedef struct CpuKernel {
  KernelFn fn;
  size_t scratch; /* bytes of scratch a call needs (split kernels), or 0 */
  Variant var[4]; /* made by the runs that want them, the first four kept */
  int nvar;
} CpuKernel;

/* The state of ctx, made on first use. */
static CpuState *cpu_state(jitc_context *ctx) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  if (st) return st;
  CpuBuild *b = cpu_build_new(ctx);
  if (!b) return NULL;
  if (!(st = calloc(1, sizeof *st))) {
    cpu_build_free(b);
    ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    return NULL;
  }
  st->build = b;
  /* The host, its CPU and its x86-64 level: a benchmark's record says
  ** which machine it measured on.  (The CPUs the host has; how many
  ** threads a run used is jitc_run_info.threads.) */
  char model[200], what[100];
  host_cpu_model(model, sizeof model);
  cpu_build_describe(b, what, sizeof what);
  snprintf(st->device, sizeof st->device, "%s (%d CPUs, %s)",
           model[0] ? model : "unknown CPU", host_ncores(), what);
  ctx->target_state[JITC_TARGET_CPU] = st;
  return st;
}

static void cpu_shutdown(jitc_context *ctx) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  if (!st) return;
  pool_free(st->pool);
  cpu_build_free(st->build);
  free(st);
  ctx->target_state[JITC_TARGET_CPU] = NULL;
}

static jitc_status cpu_available(jitc_context *ctx) {
  return cpu_state(ctx) ? JITC_OK : JITC_E_UNAVAILABLE;
}

static const char *cpu_device(jitc_context *ctx) {
  CpuState *st = cpu_state(ctx);
  return st ? st->device : "unavailable";
}

static jitc_status cpu_compile(jitc_context *ctx, jitc_kernel *k) {
  CpuState *st = cpu_state(ctx);
  if (!st) return JITC_E_UNAVAILABLE;
  CpuKernel *ck = calloc(1, sizeof *ck);
  if (!ck) return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  jitc_status s = cpu_build_kernel(ctx, st->build, k, 0, &ck->fn, &ck->scratch);
  if (s) {
    free(ck);
    return s;
  }
  k->impl = ck;
  return JITC_OK;
}

static jitc_status cpu_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out) {
  CpuState *st = cpu_state(ctx);
  return st ? cpu_build_emit(ctx, st->build, k, stage, out) : JITC_E_UNAVAILABLE;
}

static void cpu_release(jitc_kernel *k) {
  /* The code stays in the context's JIT, where the code cache finds it. */
  free(k->impl);
  k->impl = NULL;
}

/* ---- running ---- */

typedef struct Job {
  KernelFn fn;
  void *const *arrays;
  const ParamSlot *params;
  int nparams;
  size_t scratch;   /* see CpuKernel */
  Partial *part;    /* reductions: nblocks Partials per reduction (cpu/cpu.h) */
  int64_t nblocks;
  atomic_bool oom;  /* a call could not allocate its scratch */
  const Layout *L;  /* run_layout: where the arrays' elements are; else NULL */
  uint64_t bcast;   /* with L: the arrays the variant vfn reads as one element */
  KernelFn vfn;
} Job;

/* Calls the kernel on [begin, end) of a layout (layout.c) in blocks of
** LB elements, on multiples of LB: RB (a block of the reductions, and small
** enough that the gathered blocks stay in the first-level cache), or 4 RB
** where a transposed array is moved several rows at a time; the rows of a
** matrix whose rows divide LB stay whole, so that a broadcast row is one
** contiguous run.  Each array's block is used in place where it is one
** contiguous run, else gathered into a block of the thread's own (and
** scattered back when written).  The kernel addresses array j's element k
** at arrays[j] + k * size, so a block of its own at buffer b is passed as
** b - lo * size: that address is only ever offset back into b (the kernel's
** address arithmetic is not `inbounds`; cpu/gen.c). */
static int64_t block_of(const Layout *L) { return L->transposed ? 4 * RB : RB; }

static void run_blocks(const Job *j, int64_t begin, int64_t end, const ParamSlot *ps, char *own) {
  const Layout *L = j->L;
  int64_t LB = block_of(L);
  int na = L->narrays;
  void **arrays = (void **)(void *)own;
  char **mine = (char **)(void *)(own + (size_t)na * sizeof(void *));
  char *at = own + (size_t)na * 2 * sizeof(void *);
  for (int a = 0; a < na; a++, at += LB * L->a[a - 1].esize) mine[a] = at;
  for (int64_t lo = begin; lo < end;) {
    int64_t m = (lo / LB + 1) * LB - lo;
    if (m > end - lo) m = end - lo;
    /* The variant where each of its one-element arrays is one here. */
    bool var = j->bcast != 0;
    for (int a = 0; a < na && var; a++) {
      char *at;
      if (a < 64 && (j->bcast >> a & 1)) var = layout_const(L, a, lo, m, &at), arrays[a] = at;
    }
    for (int a = 0; a < na; a++) {
      char *in;
      if (var && a < 64 && (j->bcast >> a & 1)) continue;
      if (!layout_block(L, a, lo, m, &in)) {
        in = mine[a];
        if (L->a[a].read) layout_gather(L, a, lo, m, in);
      }
      arrays[a] = (void *)((uintptr_t)in - (uintptr_t)lo * L->a[a].esize);
    }
    (var ? j->vfn : j->fn)(lo, lo + m, arrays, ps);
    for (int a = 0; a < na; a++)
      if (L->a[a].written && (uintptr_t)arrays[a] + (uintptr_t)lo * L->a[a].esize == (uintptr_t)mine[a])
        layout_scatter(L, a, lo, m, mine[a]);
    lo += m;
  }
}

/* The bytes run_blocks needs: two pointers and a block per array. */
static size_t blocks_bytes(const Layout *L) {
  size_t b = 0;
  for (int a = 0; a < L->narrays; a++) b += 2 * sizeof(void *) + (size_t)block_of(L) * L->a[a].esize;
  return b;
}

/* One thread's chunk [begin, end): the pool's callback. */
static void run_range(void *arg, int64_t begin, int64_t end) {
  Job *j = arg;
  if (!j->scratch && !j->part && !j->L) {
    j->fn(begin, end, j->arrays, j->params);
    return;
  }
  /* A split kernel or one with reductions: a copy of the parameters, then
  ** the slots of cpu/cpu.h (the address of this call's scratch, the Partials
  ** and their count), then the scratch (64-byte aligned); with a layout,
  ** then the blocks of run_blocks. */
  size_t head = ((size_t)j->nparams + 3) * sizeof(ParamSlot);
  head = (head + 63) / 64 * 64;
  size_t scratch = (j->scratch + 63) / 64 * 64;
  size_t own = j->L ? (blocks_bytes(j->L) + 63) / 64 * 64 : 0;
  unsigned char *mem = aligned_alloc(64, head + scratch + own + 64);
  if (!mem) {
    atomic_store(&j->oom, true);
    return;
  }
  ParamSlot *ps = (ParamSlot *)mem;
  if (j->nparams) memcpy(ps, j->params, (size_t)j->nparams * sizeof *ps);
  ps[j->nparams].bits = j->scratch ? (uint64_t)(uintptr_t)(mem + head) : 0;
  ps[j->nparams + 1].bits = (uint64_t)(uintptr_t)j->part;
  ps[j->nparams + 2].i64 = j->nblocks;
  if (j->L) run_blocks(j, begin, end, ps, (char *)mem + head + scratch);
  else j->fn(begin, end, j->arrays, ps);
  free(mem);
}

static jitc_status run_job(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                           void *const *arrays, const ParamSlot *params, jitc_run_info *info,
                           const Layout *L);

static jitc_status cpu_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                           void *const *arrays, const ParamSlot *params, jitc_run_info *info) {
  return run_job(ctx, k, n, arrays, params, info, NULL);
}

/* The variant for L: its inputs of real types that repeat one element over
** runs of at least a block (a broadcast column, a 0-d array) read it once
** instead of a block filled with it.  Made on first use and kept. */
static jitc_status variant(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                           uint64_t *bcast, KernelFn *fn) {
  *bcast = 0;
  for (int a = 0; a < L->narrays && a < 64; a++) {
    const LayoutArray *x = &L->a[a];
    if (x->read && !x->written && !x->direct && x->zrun >= block_of(L) &&
        !dtype_is_complex(k->prog->arrays[a].dtype))
      *bcast |= (uint64_t)1 << a;
  }
  if (!*bcast) return JITC_OK;
  CpuKernel *ck = k->impl;
  for (int v = 0; v < ck->nvar; v++)
    if (ck->var[v].bcast == *bcast) return *fn = ck->var[v].fn, JITC_OK;
  size_t scratch;
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  jitc_status s = cpu_build_kernel(ctx, st->build, (jitc_kernel *)k, *bcast, fn, &scratch);
  if (!s && ck->nvar < 4) ck->var[ck->nvar++] = (Variant){*bcast, *fn};
  return s;
}

static jitc_status cpu_run_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                  const ParamSlot *params, jitc_run_info *info) {
  return run_job(ctx, k, L->n, L->bases, params, info, L);
}

/* Runs k over [0, n): chunks of threads, then the reductions' results. */
static jitc_status run_job(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                           void *const *arrays, const ParamSlot *params, jitc_run_info *info,
                           const Layout *L) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  const CpuKernel *ck = k->impl;
  if (!st || !ck) return ctx_error(ctx, JITC_E_USAGE, "cpu target: kernel not compiled");
  double t0 = now_ms();
  int threads = k->opt.threads > 0 ? k->opt.threads : 0;
  if (n >= 2 * CHUNK_ALIGN && threads != 1 && !st->pool) {
    /* Made on the first run that may use it, with as many workers as the
    ** machine has cores, or as asked.  (Without it, one thread does all.) */
    int cores = host_ncores();
    st->pool = pool_new(threads > cores ? threads : cores);
  }
  Job job = {ck->fn, arrays, params, k->prog->nparams, ck->scratch, NULL, 0, false, L, 0, NULL};
  if (L) {
    jitc_status s = variant(ctx, k, L, &job.bcast, &job.vfn);
    if (s) return s;
  }
  int nreduce = k->prog->nreduce;
  if (nreduce && n > 0) {
    /* A Partial per block of RB per reduction; the chunks of threads start
    ** on blocks, so no block depends on the thread count. */
    job.nblocks = (n - 1) / RB + 1;
    job.part = malloc((size_t)job.nblocks * (size_t)nreduce * sizeof(Partial));
    if (!job.part) return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the partial reductions");
  }
  int used = pool_run(st->pool, threads, n, L ? block_of(L) : job.part ? RB : CHUNK_ALIGN,
                      run_range, &job);
  if (!atomic_load(&job.oom) && nreduce) reduce_results(k->prog, n, job.part, job.nblocks, arrays);
  free(job.part);
  if (info) {
    info->run_ms = now_ms() - t0;
    info->threads = used;
  }
  if (atomic_load(&job.oom))
    return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the kernel's scratch");
  return JITC_OK;
}

const Target target_cpu = {
  .name = "cpu",
  .available = cpu_available,
  .device = cpu_device,
  .compile = cpu_compile,
  .run = cpu_run,
  .run_layout = cpu_run_layout,
  .stages = (const char *const[]){"llvm", "llvm-opt", "asm", NULL},
  .emit = cpu_emit,
  .release = cpu_release,
  .shutdown = cpu_shutdown,
  .reduces = true,
  .complex = true,
};
