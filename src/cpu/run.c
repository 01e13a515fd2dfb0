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

/* A variant of the kernel reading some inputs otherwise (GenTarget.reads),
** for blocks where they are so: one element each, or every other one. */
typedef struct Variant {
  Reads reads;
  KernelFn fn;
} Variant;

typedef struct CpuKernel {
  KernelFn fn;
  size_t scratch; /* bytes of scratch a call needs (split kernels), or 0 */
  Variant var[4]; /* made by the runs that want them, the first four kept */
  int nvar;
  KernelFn rows;  /* the row form (cpu/rowacc.c), made by the first run that wants it */
  int vec;        /* its level's vector bits (Layout.vec) */
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
  jitc_status s = cpu_build_kernel(ctx, st->build, k, (Reads){0, 0}, false, &ck->fn, &ck->scratch);
  if (s) {
    free(ck);
    return s;
  }
  ck->vec = cpu_build_vec_bits(ctx, st->build, k);
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
  Reads reads;      /* with L: the arrays the variant vfn reads otherwise */
  KernelFn vfn;
  const Program *p; /* with L->axes: the program, and how the threads share */
  int64_t shift;    /* without reductions: run_blocks' grid (layout_phase) */
  int64_t cps;      /* the segments: by whole segments, or (spread) by chunks */
  bool spread;      /* of LB of a segment, cps of them per segment */
} Job;

/* The first element from `begin` on whose address in the first array
** written starts a 64-byte line (at most end; begin where none does).  A
** thread's chunk is run from there, the elements before it in a call of
** their own (the kernel's masked tail): NumPy's large arrays start 16 bytes
** into a line, and vector stores that straddle two lines cost the
** contiguous `c = a + 1` over 16M float32 a third of its time on both cores
** (x86-64-v3: 6.2 ms against 3.3-3.4 aligned; -v2 4.4-4.8 against
** 3.5-3.9; -v4 4.1 against 3.2-3.7). */
static int64_t line_start(const Program *p, void *const *arrays, int64_t begin, int64_t end) {
  for (int a = 0; a < p->narrays; a++) {
    const IrArray *x = &p->arrays[a];
    if (x->role != JITC_OUTPUT && x->role != JITC_INOUT) continue;
    size_t es = jitc_dtype_size(x->dtype);
    uintptr_t at = (uintptr_t)arrays[a] + (uintptr_t)begin * es, gap = (64 - at % 64) % 64;
    if (gap % es) return begin;
    int64_t k = begin + (int64_t)(gap / es);
    return k < end ? k : end;
  }
  return begin;
}

/* fn over [begin, end) from line_start on, the elements before in a call
** of their own (kernels without reductions: a call's range sets no block). */
static void run_aligned(KernelFn fn, const Program *p, int64_t begin, int64_t end,
                        void *const *arrays, const ParamSlot *ps) {
  int64_t m = line_start(p, arrays, begin, end);
  if (m > begin) fn(begin, m, arrays, ps);
  if (end > m) fn(m, end, arrays, ps);
}

/* Calls the kernel on [begin, end) of a layout (layout.c) in blocks, on
** multiples of the block: RB (a block of the reductions, and small enough
** that the gathered blocks stay in the first-level cache), LB for segments
** (below), or, where a transposed array is moved whole rows at a time in
** tiles, bands of up to TB: 64 rows of a (4096, 4096) float32 matrix, so
** that each of the 64-byte lines of the transposed array is read whole at
** once (a band of 4 rows took 6x the contiguous program there, 64 rows
** 2.5x), no fewer than 16 bands where the array has them, for the
** threads, and no more than TBYTES of blocks a thread.  The rows of a
** matrix whose rows divide the block stay whole, so that a broadcast row
** is one contiguous run.  Each array's block is used in place where it is
** one contiguous run, else gathered into a block of the thread's own (and
** scattered back when written).  The kernel addresses array j's element k
** at arrays[j] + k * size, so a block of its own at buffer b is passed as
** b - lo * size: that address is only ever offset back into b (the
** kernel's address arithmetic is not `inbounds`; cpu/gen.c). */
#define LB (4 * RB)
#define TB (64 * RB)
#define TBYTES (4 << 20)
static int64_t block_of(const Layout *L) {
  if (L->axes) return LB;
  if (!L->transposed) return RB;
  int64_t b = TB, bytes = 0;
  for (int a = 0; a < L->narrays; a++) bytes += (int64_t)L->a[a].esize;
  while (b > LB && (L->n / b < 16 || b * bytes > TBYTES)) b /= 2;
  return b;
}

static void run_blocks(const Job *j, int64_t begin, int64_t end, const ParamSlot *ps, char *own) {
  const Layout *L = j->L;
  int64_t bl = block_of(L), sh = j->shift; /* [begin, end) of k + sh */
  begin = begin > sh ? begin - sh : 0;
  end -= sh;
  int na = L->narrays;
  void **arrays = (void **)(void *)own;
  char **mine = (char **)(void *)(own + (size_t)na * sizeof(void *));
  char *at = own + (size_t)na * 2 * sizeof(void *);
  for (int a = 0; a < na; a++, at += bl * L->a[a - 1].esize) mine[a] = at;
  for (int64_t lo = begin; lo < end;) {
    int64_t m = ((lo + sh) / bl + 1) * bl - (lo + sh);
    if (m > end - lo) m = end - lo;
    /* The variant where each of its one-element arrays is one here, and
    ** each of its arrays of every other element one run of them: its
    ** element k of those is 0, and 2 k elements on, from the address. */
    uint64_t other = j->reads.one | j->reads.two;
    bool var = other != 0;
    for (int a = 0; a < na && a < 64 && var; a++) {
      char *at;
      if (!(other >> a & 1)) continue;
      bool two = j->reads.two >> a & 1;
      var = two ? layout_every2(L, a, lo, m, &at) : layout_const(L, a, lo, m, &at);
      arrays[a] = (void *)((uintptr_t)at - (two ? 2 : 0) * (uintptr_t)lo * L->a[a].esize);
    }
    for (int a = 0; a < na; a++) {
      char *in;
      if (var && a < 64 && (other >> a & 1)) continue;
      if (!layout_block(L, a, lo, m, &in)) {
        in = mine[a];
        if (L->a[a].read) layout_gather(L, a, lo, m, in);
      }
      arrays[a] = (void *)((uintptr_t)in - (uintptr_t)lo * L->a[a].esize);
    }
    if (j->part || j->scratch) (var ? j->vfn : j->fn)(lo, lo + m, arrays, ps);
    else run_aligned(var ? j->vfn : j->fn, j->p, lo, lo + m, arrays, ps);
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

/* ---- reductions over axes: segment by segment (Layout.axes) ----
** Each segment is run as a whole run over [0, seg): the kernel is called
** on [c, c + m) for chunks of LB from the segment's start, its Partials
** are those of the segment's blocks of RB, and reduce_segment finishes
** them into the results' elements.  A thread takes whole segments and
** finishes them, or, where there are few long ones to share (`spread`),
** chunks, the segments finished after; either way every block and every
** tree is the same, so the bits do not depend on the thread count.  Short
** segments are gathered several at a time: a block of LB holds
** floor(LB / seg) of them, read together (the columns of a matrix, as a
** tile, by move.c's transposed move).  Where the reduced axes lie outside
** the kept ones in memory (sum(x, axis=0) of a C-order matrix), run_job
** takes the row form instead (cpu/rowrun.c), which reads the arrays once in
** memory's order: its blocks are blocks of rows, each column's added in
** order, so a float sum's bits are not the ones of the segment reduced
** here, but again the same on every thread count. */

/* The blocks of elements [lo, lo + m): at[a] is element lo of array a, in
** place or in its block of its own (mine[a]), gathered. */
static void seg_in(const Layout *L, int64_t lo, int64_t m, char **mine, char **at) {
  for (int a = 0; a < L->narrays; a++)
    if (!layout_block(L, a, lo, m, &at[a])) {
      at[a] = mine[a];
      if (L->a[a].read) layout_gather(L, a, lo, m, at[a]);
    }
}

static void seg_out(const Layout *L, int64_t lo, int64_t m, char **mine, char **at) {
  for (int a = 0; a < L->narrays; a++)
    if (L->a[a].written && at[a] == mine[a]) layout_scatter(L, a, lo, m, mine[a]);
}

/* The kernel on [c, c + m) of a segment whose element c is `e` elements
** past at[a] in each array (see run_blocks for the addresses passed). */
static void seg_call(const Job *j, char **at, int64_t e, int64_t c, int64_t m, ParamSlot *ps,
                     void **arrays) {
  const Layout *L = j->L;
  for (int a = 0; a < L->narrays; a++)
    arrays[a] = (void *)((uintptr_t)at[a] + (uintptr_t)(e - c) * L->a[a].esize);
  j->fn(c, c + m, arrays, ps);
}

/* Elements [begin, end) (whole segments; spread: chunks of a virtual index
** of cps * LB per segment): the pool's callback for segments.  ps holds
** the parameters and the slots run_range sets; own the blocks. */
static void run_segments(const Job *j, int64_t begin, int64_t end, ParamSlot *ps, char *own,
                         Partial *part) {
  const Layout *L = j->L;
  int na = L->narrays, nr = j->p->nreduce;
  void **arrays = (void **)(void *)own;
  char **mine = (char **)(void *)(own + (size_t)na * sizeof(void *));
  char *buf = own + (size_t)na * 2 * sizeof(void *);
  for (int a = 0; a < na; a++, buf += LB * L->a[a - 1].esize) mine[a] = buf;
  char **pat = (char **)(void *)buf; /* the blocks' addresses (seg_in) */
  int64_t seg = L->seg, bps = (seg - 1) / RB + 1;
  ps[j->nparams + 2].i64 = bps;
  if (j->spread) {
    for (int64_t u = begin / LB; u < end / LB; u++) {
      int64_t s = u / j->cps, c = u % j->cps * LB, m = seg - c < LB ? seg - c : LB;
      ps[j->nparams + 1].bits = (uint64_t)(uintptr_t)(j->part + s * nr * bps);
      seg_in(L, s * seg + c, m, mine, pat);
      seg_call(j, pat, 0, c, m, ps, arrays);
      seg_out(L, s * seg + c, m, mine, pat);
    }
    return;
  }
  ps[j->nparams + 1].bits = (uint64_t)(uintptr_t)part;
  int64_t g = seg <= LB ? LB / seg : 1; /* segments per block */
  for (int64_t lo = begin; lo < end;) {
    int64_t m = g * seg < end - lo ? g * seg : end - lo;
    if (seg > LB) { /* one segment, chunk by chunk */
      for (int64_t c = 0; c < seg; c += LB) {
        int64_t cm = seg - c < LB ? seg - c : LB;
        seg_in(L, lo + c, cm, mine, pat);
        seg_call(j, pat, 0, c, cm, ps, arrays);
        seg_out(L, lo + c, cm, mine, pat);
      }
      reduce_segment(j->p, seg, part, bps, L, lo / seg);
    } else { /* g segments, gathered together */
      seg_in(L, lo, m, mine, pat);
      for (int64_t e = 0; e < m; e += seg) {
        seg_call(j, pat, e, 0, seg, ps, arrays);
        reduce_segment(j->p, seg, part, bps, L, (lo + e) / seg);
      }
      seg_out(L, lo, m, mine, pat);
    }
    lo += m;
  }
}

/* One thread's chunk [begin, end): the pool's callback. */
static void run_range(void *arg, int64_t begin, int64_t end) {
  Job *j = arg;
  if (!j->scratch && !j->part && !j->L) {
    run_aligned(j->fn, j->p, begin, end, j->arrays, j->params);
    return;
  }
  /* A split kernel or one with reductions: a copy of the parameters, then
  ** the slots of cpu/cpu.h (the address of this call's scratch, the Partials
  ** and their count), then the scratch (64-byte aligned); with a layout,
  ** then the blocks of run_blocks. */
  size_t head = ((size_t)j->nparams + 3) * sizeof(ParamSlot);
  head = (head + 63) / 64 * 64;
  size_t scratch = (j->scratch + 63) / 64 * 64;
  size_t own = j->L ? blocks_bytes(j->L) : 0;
  /* Segments: the block addresses, and the Partials of a segment. */
  size_t part = 0;
  if (j->L && j->L->axes) {
    own += (size_t)j->L->narrays * sizeof(char *);
    part = j->spread ? 0 : (size_t)j->p->nreduce * (size_t)((j->L->seg - 1) / RB + 1) * sizeof(Partial);
  }
  unsigned char *mem = aligned_alloc(64, (head + scratch + own + part + 127) / 64 * 64);
  if (!mem) {
    atomic_store(&j->oom, true);
    return;
  }
  ParamSlot *ps = (ParamSlot *)mem;
  if (j->nparams) memcpy(ps, j->params, (size_t)j->nparams * sizeof *ps);
  ps[j->nparams].bits = j->scratch ? (uint64_t)(uintptr_t)(mem + head) : 0;
  ps[j->nparams + 1].bits = (uint64_t)(uintptr_t)j->part;
  ps[j->nparams + 2].i64 = j->nblocks;
  if (j->L && j->L->axes)
    run_segments(j, begin, end, ps, (char *)mem + head + scratch,
                 (Partial *)(void *)(mem + (head + scratch + own + 7) / 8 * 8));
  else if (j->L) run_blocks(j, begin, end, ps, (char *)mem + head + scratch);
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
** instead of a block filled with it, and those that step two elements
** along rows of at least a block (x[::2]) are read in place, every other
** element, instead of gathered.  Made on first use and kept. */
static jitc_status variant(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                           Reads *reads, KernelFn *fn) {
  *reads = (Reads){0, 0};
  int last = L->ndim - 1;
  for (int a = 0; a < L->narrays && a < 64; a++) {
    const LayoutArray *x = &L->a[a];
    if (!x->read || x->written || x->direct || dtype_is_complex(k->prog->arrays[a].dtype))
      continue;
    if (x->zrun >= block_of(L))
      reads->one |= (uint64_t)1 << a;
    else if (x->strides[last] == 2 * (int64_t)x->esize && L->shape[last] >= block_of(L))
      reads->two |= (uint64_t)1 << a;
  }
  if (!reads->one && !reads->two) return JITC_OK;
  CpuKernel *ck = k->impl;
  for (int v = 0; v < ck->nvar; v++)
    if (ck->var[v].reads.one == reads->one && ck->var[v].reads.two == reads->two)
      return *fn = ck->var[v].fn, JITC_OK;
  size_t scratch;
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  jitc_status s = cpu_build_kernel(ctx, st->build, (jitc_kernel *)k, *reads, false, fn, &scratch);
  if (!s && ck->nvar < 4) ck->var[ck->nvar++] = (Variant){*reads, *fn};
  return s;
}

static jitc_status cpu_run_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                  const ParamSlot *params, jitc_run_info *info) {
  /* move.c scatters with the vectors of the level the kernel runs at. */
  Layout at = *L;
  at.vec = k->impl ? ((const CpuKernel *)k->impl)->vec : 0;
  return run_job(ctx, k, L->n, L->bases, params, info, &at);
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
  Job job = {ck->fn, arrays, params, k->prog->nparams, ck->scratch, NULL, 0, false, L,
             .p = k->prog};
  if (L && !L->axes) {
    jitc_status s = variant(ctx, k, L, &job.reads, &job.vfn);
    if (s) return s;
  }
  int nreduce = k->prog->nreduce;
  RowPlan rp;
  if (L && L->axes && !ck->scratch && rows_plan(L, k->prog, &rp)) { /* rows (cpu/rowrun.c) */
    size_t scratch;
    jitc_status s = ck->rows ? JITC_OK
                             : cpu_build_kernel(ctx, st->build, (jitc_kernel *)k, (Reads){0, 0},
                                                true, &((CpuKernel *)ck)->rows, &scratch);
    int used = 0;
    if (!s) s = rows_run(ctx, st->pool, threads, !st->pool || threads == 1 ? 1 : threads > 0 ? threads
                         : pool_threads(st->pool), ck->rows, k->prog, L, &rp, params, &used);
    if (info) {
      info->run_ms = now_ms() - t0;
      info->threads = used;
    }
    return s;
  }
  if (L && L->axes) { /* segments: by whole ones, or spread */
    job.cps = (L->seg - 1) / LB + 1;
    int most = !st->pool || threads == 1 ? 1 : threads > 0 ? threads : pool_threads(st->pool);
    job.spread = job.cps > 1 && L->nseg < 4 * (int64_t)most && most > 1;
    int64_t bps = (L->seg - 1) / RB + 1;
    if (job.spread && !(job.part = malloc((size_t)(L->nseg * nreduce * bps) * sizeof(Partial))))
      return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the partial reductions");
    int64_t align = L->seg > LB ? L->seg : LB / L->seg * L->seg;
    int used = job.spread ? pool_run(st->pool, threads, L->nseg * job.cps * LB, LB, run_range, &job)
                          : pool_run(st->pool, threads, n, align, run_range, &job);
    for (int64_t g = 0; job.spread && !atomic_load(&job.oom) && g < L->nseg; g++)
      reduce_segment(k->prog, L->seg, job.part + g * nreduce * bps, bps, L, g);
    free(job.part);
    if (info) {
      info->run_ms = now_ms() - t0;
      info->threads = used;
    }
    return atomic_load(&job.oom) ? ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for "
                                             "the kernel's scratch") : JITC_OK;
  }
  if (nreduce && n > 0) {
    /* A Partial per block of RB per reduction; the chunks of threads start
    ** on blocks, so no block depends on the thread count. */
    job.nblocks = (n - 1) / RB + 1;
    job.part = malloc((size_t)job.nblocks * (size_t)nreduce * sizeof(Partial));
    if (!job.part) return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the partial reductions");
  }
  if (L && !nreduce) job.shift = layout_phase(L, block_of(L));
  int used = pool_run(st->pool, threads, n + job.shift,
                      L ? block_of(L) : job.part ? RB : CHUNK_ALIGN, run_range, &job);
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
  .bands = true,
};
