/*
** cuda/cuda.h -- what the files of the target `cuda` share beyond generation
** (cuda/gen.h): the per-context state, a compiled kernel, and the calls
** between the files below.  Only they include it.
**
** The target in one paragraph, bottom up: cuda/gen.c (with cuda/helpers.c,
** cuda/plan.c and cuda/reduce.c) writes the program as CUDA C; cuda/shares.c
** (pure too) says which GPUs a run uses and which elements each gets;
** cuda/device.c owns the libraries, the device and the GPUs' lanes
** (contexts, streams); cuda/build.c compiles the CUDA C with NVRTC (through
** the shared code cache) and loads the module; cuda/launch.c launches its
** kernels on device memory; cuda/copy.c copies between the caller's host
** memory and pinned memory on host threads, and pins; cuda/host.c is the
** host pipeline of one GPU, which cuts host arrays into chunks and moves
** them through streams, calling the copier and the launcher (which call
** nothing back); cuda/multi.c runs the pipeline on every GPU of a run, one
** host thread each; cuda/devptr.c runs on the caller's own device memory
** and stream (jitc_run_device), and cuda/devarrays.c on the caller's device
** arrays of any strides (jitc_run_device_arrays); cuda/run.c is the Target
** and the device buffers.  Each file calls only the ones before it.
** Start reading at target_cuda, at the end of cuda/run.c.
*/
#ifndef JITC_CUDA_H
#define JITC_CUDA_H

#include "gen.h"
#include "../jitc_int.h"
#include "../layout.h"

#include "../../runtime/cuda_api.h"

#include <pthread.h>

enum { CUDA_RSCRATCH = 4 };
/* Bytes a GPU must move for a run to be worth giving it a share: less
** costs more in its thread and its first chunk than it saves. */
#define CUDA_SHARE_MIN ((int64_t)64 << 20)


/* A loaded module, kept by the context's code cache: every kernel compiled
** from the same source and options shares it.  The cache's module is loaded
** in the primary context of jitc's device (the home); jitc_run_device loads
** copies of its image in the caller's contexts (cuda_module_in), one per
** context, on the home's `others` list. */
typedef struct CudaModule {
  CUmodule mod;
  CUfunction fn;   /* jitc_k32; jitc_g0 of a split program */
  CUfunction *gfn; /* a split program's kernels, one per group */
  CUfunction *rfn; /* combining the partials of reductions: jitc_r, or a split
                      program's jitc_r0, jitc_r1, ... (cuda_reduce_nkernels) */
  int ngfn, nrfn;
  bool axis;       /* a program reducing over axes: afn[] instead of jitc_k32 */
  CUfunction afn[6]; /* jitc_a1, jitc_a32, jitc_a256, jitc_ac (cuda/axis.c),
                        jitc_acol (cuda/axiscol.c), jitc_a256w (cuda/axis.c) */
  int occ;         /* resident blocks of CUDA_BLOCK threads per SM */
  CUcontext cx;    /* the context it is loaded in */
  unsigned long long cxid; /* that context's unique id (cuCtxGetId), or 0 */
  void *image;     /* the home's CUBIN or PTX, for loads in other contexts */
  size_t image_len;
  struct CudaModule *others, *next; /* the home's copies; a copy's successor */
  /* A split program's scratch for jitc_run_device in this context, and the
  ** event after the last kernels that used it (on whatever stream). */
  CUdeviceptr dscratch;
  CUevent dscratch_done;
  /* Scratch for the partials of reductions in jitc_run_device, kept and
  ** reused once the event after the run that last used it has passed. */
  CUdeviceptr rscratch[CUDA_RSCRATCH];
  size_t rscratch_bytes[CUDA_RSCRATCH];
  CUevent rscratch_done[CUDA_RSCRATCH];
} CudaModule;

/* One slot of the host pipeline: a stream, its events and the chunk it
** holds, from its upload until its outputs are back in the caller's memory. */
enum { CUDA_SLOTS = 8 };
typedef struct CudaSlot {
  CUstream stream;
  CUevent ev[4]; /* before upload, before kernel, after kernel, after download */
  bool busy;
  int64_t chunk;  /* its index in the run */
  int64_t off, m; /* its elements */
} CudaSlot;

/* The host pipeline's choices, for tests and measurements to set (0:
** chosen from the transfer and the machine, as every run does). */
typedef struct CudaTune {
  int64_t chunk_bytes; /* a chunk of the larger direction, in bytes */
  int slots;           /* chunks in flight, 2 to CUDA_SLOTS */
  int threads;         /* host copy threads (per GPU) */
  int reg;             /* 1: never register pageable arrays; 2: register every one */
  int streaming;       /* 1: plain copies into the caller's memory; 2: streaming stores */
  int64_t share_min;   /* several GPUs: bytes moved per GPU below which fewer GPUs
                          take the run (0: CUDA_SHARE_MIN; 1: every GPU, even for
                          one element) */
} CudaTune;

/* A record of the host pipeline's last run, when a test or a benchmark
** asks for one (CudaState.trace): per chunk, when its copies and its kernel
** ran, in ms from the run's start (GPU times through events). */
typedef struct CudaTraceChunk {
  int64_t off, m;
  double in0, in1;   /* the host copies that staged its inputs */
  double out0, out1; /* the host copies that unstaged its outputs */
  double up0, up1, k1, down1; /* upload start and end, kernel end, download end */
} CudaTraceChunk;
typedef struct CudaTrace {
  CudaTraceChunk *c;
  int64_t cap, n;
  int threads, slots, registered; /* what the run chose */
  int64_t chunk;                  /* elements per chunk */
  double total_ms;                /* the whole call, host clock */
} CudaTrace;

/* One GPU as the host pipeline uses it: its primary context, its streams,
** its device memory for the chunks and its own pinned staging and copy
** threads, so that the pipelines of several GPUs share nothing.  A lane:
** a device named twice in a device list ("0,0") has two, each a pipeline
** of its own on the one GPU (which tests the split with one GPU).  The
** home (S->gpu[0]) is jitc's device, in S->pctx; the others are made by
** the first run that gives them a share (cuda/device.c: cuda_lane). */
enum { CUDA_MAXDEV = 64 };
typedef struct CudaDev {
  int ordinal, lane;   /* the device, and which of its lanes */
  CUdevice dev;
  CUcontext cx;        /* the device's primary context */
  bool retained;       /* retained for this lane (the home's is S->pctx) */
  int nsm;
  CudaSlot slot[CUDA_SLOTS];
  bool slots_ok;
  CUevent tstart;      /* a trace's zero */
  void *hstage;        /* pinned host staging, one part per slot */
  bool hstage_registered; /* malloc'ed and registered, else cuMemHostAlloc's */
  size_t stage_asked;  /* the most staging a run has needed (cuda/host.c: register_now) */
  size_t hstage_bytes; /* all of it */
  CUdeviceptr dstage;  /* device memory for the chunks, one part per slot */
  size_t dstage_bytes; /* all of it */
  Pool *pool;          /* host copy threads (cuda/copy.c) */
  bool pool_tried;
  int pool_want;       /* threads the pool is made with (0: the machine's) */
  double rate;         /* its link, GB/s both ways at once, measured once (0: not yet) */
} CudaDev;

/* The target's state in one context (ctx->target_state[JITC_TARGET_CUDA]).
** Every entry point takes `lock` before touching it. */
typedef struct CudaState {
  pthread_mutex_t lock;
  const Env *env; /* the context's environment */
  CudaApi api;
  /* NVRTC and the device are loaded on first need, once. */
  bool nvrtc_tried, nvrtc_ok, gpu_tried, gpu_ok;
  char nvrtc_err[600], gpu_err[600];
  int *archs; /* the archs this NVRTC can make a CUBIN for */
  int narchs;
  CUdevice dev;
  CUcontext pctx; /* the device's primary context */
  bool retained;
  int ordinal;    /* the device's (JITC_CUDA_DEVICE) */
  int ndevices;   /* the devices the driver sees */
  CUcontext *prim; /* jitc_run_device: primary contexts retained, per ordinal */
  int nprim;
  int cc_major, cc_minor, nsm;
  char device[300];
  int64_t slice; /* most elements per launch: a multiple of 4096 below 2^31 */
  /* The host pipeline's GPUs (cuda/host.c, cuda/multi.c): gpu[0] is the
  ** home device, the others lanes made on first use. */
  CudaDev *gpu[CUDA_MAXDEV];
  int ngpu;
  bool open_asked; /* a run with no device list wanted a GPU not open yet (cuda/multi.c) */
  CudaTune tune;
  CudaTrace *trace;
} CudaState;

/* What a kernel keeps on one lane (CudaKernel.kd, indexed as S->gpu). */
typedef struct CudaKDev {
  CudaModule *mod;                 /* its module in the lane's context */
  CUdeviceptr scratch[CUDA_SLOTS]; /* a split program's scratch, per stream slot */
  CUdeviceptr part;                /* partials and results of reductions (jitc_run, buffers) */
  size_t part_bytes;
} CudaKDev;

/* A compiled kernel (k->impl). */
typedef struct CudaKernel {
  CudaModule *mod;        /* owned by the context's code cache */
  int vec;                /* elements per vector step */
  int unroll;             /* with reductions: vector steps loaded at once */
  CudaPlan *plan;         /* a split program's groups, else NULL */
  int64_t range;          /* elements per range of a split program's launches */
  CudaKDev *kd[CUDA_MAXDEV]; /* per lane of S->gpu, made on first use there */
  int devs[CUDA_MAXDEV];  /* the GPUs of a run over host arrays, in order, as
                             ordinals (a device twice: two lanes of it) */
  int ndevs;
  bool listed;            /* the list was given (jitc_options.devices, $JITC_DEVICES) */
  struct CudaPatMod *pats; /* its kernels for device arrays of any strides, one per
                              pattern used so far (cuda_pattern_module) */
} CudaKernel;

/* A kernel's module for one pattern of strided device arrays. */
typedef struct CudaPatMod {
  char *key;                /* cuda_pattern_key's text */
  CudaModule *mod;          /* owned by the context's code cache */
  struct CudaPatMod *next;
} CudaPatMod;

/* How a launch reaches device arrays of any strides (cuda/devarrays.c):
** which arrays are strided (their pointers stay at element 0 from one
** slice or range to the next and do not count for the vector alignment),
** and the kernels' last argument, the jitc_nd of the shape and strides
** (cuda/access.c).  NULL: every array contiguous. */
typedef struct CudaNdRun {
  const bool *strided; /* per array of the program */
  const int64_t *nd;   /* jitc_nd's int64s */
  const int64_t *kept; /* over axes: jitc_kept's int64s, or NULL (cuda/axis.c) */
  const struct CudaAxisRun *axis; /* over axes: the segments, else NULL */
} CudaNdRun;

/* A run reducing over axes (cuda/axis.c, cuda/axisrun.c): seg elements per
** segment, nseg segments, pps pieces per segment, `lanes` threads per
** piece (the kernel afn[which]: 5 for a segment longer than CUDA_APIECE as
** one piece); the partials of the pieces (pps > 1: per
** reduction, in the order of the results, nseg * pps of CUDA_PART bytes),
** the results' device memory (res[a] for result array a: its element of
** segment 0) and the strides of device arrays (nd, or NULL).  `col`: the
** column form (cuda/axiscol.c), pps pieces of rows per segment, `warps`
** of them a block (pw), one partial per block's pieces (`groups` a
** segment: partial j of segment s at j * nseg + s). */
typedef struct CudaAxisRun {
  int64_t seg, nseg, pps, groups;
  int lanes, which, warps;
  bool col;
  CUdeviceptr parts;
  const CUdeviceptr *res;
  const CudaNdRun *nd;
} CudaAxisRun;

/* Where a run's reductions put their block partials (cuda/reduce.c): per
** reduction, in the order of their result arrays, `cap` partials of
** CUDA_PART bytes (cuda/gen.h: the generated jitc_part's size)
** from base + r * cap * CUDA_PART; the launches so far
** wrote `used` of them, which are combined in that order at the end.
** A run on one stream sets res (indexed by array: the results' device
** memory) and count (a counter at 0): then the last launch's last block
** writes the results (cuda_reduce_last) and sets `finished`; else jitc_r
** does, cuda_reduce_launch. */
typedef struct CudaParts {
  CUdeviceptr base;
  int64_t cap, used;
  const CUdeviceptr *res;
  CUdeviceptr count;
  bool finished;
} CudaParts;

/* ---- cuda/device.c: state, libraries, device, streams ---- */

/* The context's state, made on first use; NULL when out of memory. */
CudaState *cuda_state(jitc_context *ctx);
/* Loads NVRTC (all that --emit needs), once; false with the reason in
** S->nvrtc_err.  Under S->lock. */
bool cuda_load_nvrtc_once(CudaState *S);
/* NVRTC's own start-up, paid on a thread while the driver starts (state: S). */
void *cuda_nvrtc_warm_up(void *state);
/* Loads NVRTC, the driver and the device, once; false with the reason in
** S->gpu_err.  Under S->lock. */
bool cuda_load_gpu(CudaState *S);
/* A lane's streams and their events, made once (its context current). */
jitc_status cuda_ensure_slots(jitc_context *ctx, CudaState *S, CudaDev *D);
/* The home lane, S->gpu[0] (after cuda_load_gpu). */
CudaDev *cuda_home(CudaState *S);
/* The index in S->gpu of lane `lane` of device `ordinal`, made on first
** use (not open yet); a failure is ctx's error. */
jitc_status cuda_lane(jitc_context *ctx, CudaState *S, int ordinal, int lane, int *index);
/* Opens lane D on the calling thread: its primary context retained (once)
** and made current, its streams made.  Touches D alone, so that lanes
** open on threads of their own at once. */
jitc_status cuda_lane_open(jitc_context *ctx, CudaState *S, CudaDev *D);
/* Measures D's link once (D->rate), its context current: see cuda/device.c. */
jitc_status cuda_measure(jitc_context *ctx, CudaState *S, CudaDev *D);
/* Frees the lanes other than the home, and every lane's pipeline. */
void cuda_lanes_free(CudaState *S);
/* Milliseconds between two recorded events (0 when unknown). */
float cuda_elapsed(CudaState *S, CUevent a, CUevent b);
/* An error for a failed driver call. */
jitc_status cuda_fail(jitc_context *ctx, CudaState *S, CUresult r, const char *what);

/* The CUDA context current on the calling thread is the caller's: every
** entry point that calls the driver saves it first (cuda_enter), switches
** with cuda_switch only, and sets it back on every return (cuda_leave). */
typedef struct CudaCurrent {
  CUcontext saved; /* current on entry */
  CUcontext now;   /* current since the last switch */
} CudaCurrent;
/* Saves the current context in *c and makes cx current (NULL: saves only).
** After a failure, cuda_leave changes nothing. */
CUresult cuda_enter(CudaState *S, CUcontext cx, CudaCurrent *c);
/* Makes cx current, after cuda_enter. */
CUresult cuda_switch(CudaState *S, CudaCurrent *c, CUcontext cx);
/* Makes the saved context current again. */
void cuda_leave(CudaState *S, const CudaCurrent *c);
/* cuda_enter with the device's primary context, where jitc works; a
** failure is the context's error. */
jitc_status cuda_enter_device(jitc_context *ctx, CudaState *S, CudaCurrent *c);

/* ---- cuda/build.c: NVRTC, modules ---- */

jitc_status cuda_compile(jitc_context *ctx, jitc_kernel *k);
jitc_status cuda_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out);
void cuda_release(jitc_kernel *k);
/* The module `home` loaded in context cx (current on the calling thread):
** home itself when cx is its context, else a copy loaded once from its
** image.  Under S->lock. */
jitc_status cuda_module_in(jitc_context *ctx, CudaState *S, CudaModule *home, CUcontext cx,
                           CudaModule **out);
/* k's module for device arrays of pattern pat, compiled on its first use
** (through the code cache, like the kernel itself) in the home device's
** context, and kept by the kernel.  Under S->lock. */
jitc_status cuda_pattern_module(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                const CudaPattern *pat, CudaModule **out);
/* ck's state on lane g of S->gpu, with its module loaded there (that
** lane's context current), made on first use.  Under S->lock. */
jitc_status cuda_kernel_on(jitc_context *ctx, CudaState *S, CudaKernel *ck, int g,
                           CudaKDev **out);

/* ---- cuda/launch.c ---- */

/* Launches k over elements [base, base + n) at device pointers dptr, on
** stream s, with the kernels of m (k's module, or its module of a pattern
** of strided arrays, nd then saying which, in the current context); a
** split program's scratch is *scratch, allocated there on first use.
** Nothing compiles here. */
jitc_status cuda_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                        const CudaModule *m, CUdeviceptr *scratch, int64_t n, int64_t base,
                        const CUdeviceptr *dptr, const ParamSlot *params, CudaParts *parts,
                        const CudaNdRun *nd, CUstream s);
/* With reductions: the partials cuda_launch over n elements writes (0 for
** none), a function of n and the home device only, and the bytes of scratch
** for `cap` of them per reduction plus the results (CUDA_RES bytes each). */
int64_t cuda_partials(CudaState *S, const jitc_kernel *k, int64_t n);
size_t cuda_parts_bytes(const Program *p, int64_t cap);
/* Grows kd->part to `bytes` (jitc_run and jitc_run_buffers, which wait
** for their kernels: one scratch per kernel and lane suffices). */
jitc_status cuda_parts_ensure(jitc_context *ctx, CudaState *S, CudaKDev *kd, size_t bytes);
/* Fixes what launches compute on first use (a split program's range), so
** that the GPUs of a run, on threads of their own, only read the kernel. */
void cuda_launch_fix(CudaState *S, CudaKernel *ck);
/* res[a] for each result array a: its 8 bytes after the partials; then
** the counter's 4. */
void cuda_parts_results(const Program *p, const CudaParts *parts, CUdeviceptr *res);
CUdeviceptr cuda_parts_count(const Program *p, const CudaParts *parts);
/* Runs on one stream s: sets parts->res and count (zeroed on s) so that the
** last launch writes the results; after cuda_launch, cuda_reduce_end
** launches jitc_r when it did not (n == 0, a split program). */
jitc_status cuda_reduce_begin(jitc_context *ctx, CudaState *S, const Program *p,
                              CudaParts *parts, const CUdeviceptr *res, CUstream s);
jitc_status cuda_reduce_end(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                            const CudaModule *m, const CudaParts *parts, int64_t n,
                            CUstream s);
/* jitc_r (a split program's jitc_r0, jitc_r1, ...) on stream s: combines
** parts->used partials, and writes the results of n elements at res[a]
** (indexed by array, result arrays only). */
jitc_status cuda_reduce_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                               const CudaModule *m, const CudaParts *parts, int64_t n,
                               const CUdeviceptr *res, CUstream s);

/* ---- cuda/axisrun.c: reductions over axes ---- */

/* The segments' plan: seg, nseg, pps, lanes and which (a function of the
** shape alone: the bits of the results depend on it). */
void cuda_axis_plan(int64_t seg, int64_t nseg, CudaAxisRun *A);
/* The column form (cuda/axiscol.c) for device arrays of layout L and
** pattern kinds `kind`, where it applies: the reduced axes outer to the
** kept ones, the innermost kept axis stepping by one element in every
** array but the results; then A->col and A->pps (a function of the shape alone). */
bool cuda_axis_col_plan(const Layout *L, const Program *p, const char *kind, CudaAxisRun *A);
/* The elements of a piece (the last of a segment may be shorter): the
** segment where it is one piece, else CUDA_APIECE. */
int64_t cuda_axis_plen(const CudaAxisRun *A);
/* Piece q's first element in the flat index; the piece that starts at
** element e (a piece's first, or the end). */
int64_t cuda_axis_start(const CudaAxisRun *A, int64_t q);
int64_t cuda_axis_piece(const CudaAxisRun *A, int64_t e);
/* The host pipeline's chunks: whole pieces, at most `chunk` elements (one
** piece at least), *nchunks of them, boundaries at the result (malloc'ed;
** NULL when out of memory). */
int64_t *cuda_axis_cut(const CudaAxisRun *A, int64_t chunk, int64_t *nchunks);
/* Bytes of the pieces' partials (0 when every segment is one piece). */
size_t cuda_axis_parts_bytes(const Program *p, const CudaAxisRun *A);
/* Launches the pieces of elements [off, off + n) (whole pieces) on stream
** s: element g of a contiguous array at dptr[a] + (g - off), a strided
** one's through A->nd. */
jitc_status cuda_axis_launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, const CudaAxisRun *A, int64_t off, int64_t n,
                             const CUdeviceptr *dptr, const ParamSlot *params, CUstream s);
/* jitc_ac over every segment where segments have several pieces (or none:
** the identities), after all the pieces' launches. */
jitc_status cuda_axis_finish(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, const CudaAxisRun *A, CUstream s);
/* The whole run over the caller's device arrays d (results included) on
** stream s, in the current context: nd->axis says the segments; parts is
** scratch of cuda_axis_parts_bytes() for the pieces' partials. */
jitc_status cuda_axis_device(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                             const CudaModule *m, int64_t n, const CUdeviceptr *d,
                             const ParamSlot *params, const CudaNdRun *nd, CUdeviceptr parts,
                             CUstream s);

/* ---- cuda/copy.c: the copier ---- */

/* One host copy of a job: len bytes from src to dst; or, with `nd`, the
** elements [lo, lo + len / esize) of array `array` of a layout (layout.c)
** gathered into dst (src NULL) or scattered from src (dst NULL). */
typedef struct CopySeg {
  void *dst;
  const void *src;
  size_t len;
  bool streaming; /* into the caller's memory: streaming stores */
  const Layout *nd;
  int array;
  int64_t lo;
} CopySeg;
/* Whether p is in pinned host memory (the caller's cuMemHostAlloc or
** registration, or jitc's). */
bool cuda_is_pinned(CudaState *S, const void *p);
/* Pins [p, p + bytes) for DMA, for every CUDA context when `portable`
** (a run on several GPUs), and undoes it: the driver's result (an error
** where it refuses). */
CUresult cuda_register(CudaState *S, void *p, size_t bytes, bool portable);
CUresult cuda_unregister(CudaState *S, void *p);
/* Lane D's copy threads (made on first use), the caller's included. */
int cuda_copy_threads(CudaState *S, CudaDev *D);
/* Copies every segment on D's threads, their bytes spread over at most
** `threads` of them (0: all). */
void cuda_copy_host(CudaState *S, CudaDev *D, const CopySeg *seg, int nseg, int threads);
/* Ends D's copy threads. */
void cuda_copy_free(CudaDev *D);

/* ---- cuda/host.c: the host pipeline of one GPU ---- */

/* How a run's arrays travel, the same on every GPU of the run. */
enum { CUDA_HOW_PINNED = 1, CUDA_HOW_STAGED, CUDA_HOW_REGISTERED };
typedef struct CudaLayout {
  /* Per array: its element size, whether it goes up and comes down, how
  ** (CUDA_HOW_*), and its regions in a slot: pinned staging for its upload
  ** and for its download, device memory. */
  size_t *esize, *hin, *hout, *doff;
  uint8_t *how;
  bool *up, *down;
  size_t hslot, dslot; /* a slot's bytes of pinned staging and of device memory */
  int64_t chunk;       /* the largest chunk, in elements */
  int nslots, threads; /* threads: copy threads per GPU (0: its pool's) */
  bool streaming;
  size_t bytes;        /* the bytes the run moves, both ways */
  /* jitc_run_arrays: where each array's elements are when some array is
  ** not one aligned contiguous run (layout.c), else NULL.  Such an array
  ** is always staged, each chunk copied where it is one contiguous run of
  ** the caller's memory (layout_block), else gathered and scattered. */
  const Layout *nd;
  void *mem;
} CudaLayout;

/* One GPU's part of a run: chunks [0, nchunks), chunk c being elements
** [at[c], at[c + 1]) of the arrays. */
typedef struct CudaPipe {
  CudaState *S;
  CudaDev *D;
  CudaKDev *kd;
  const jitc_kernel *k;
  const CudaLayout *L;
  void *const *arrays;
  const ParamSlot *params;
  const int64_t *at;
  int64_t nchunks;
  CudaParts *parts;  /* the reductions' partials, in chunk order; NULL without */
  const CudaAxisRun *axis; /* over axes: chunks of whole pieces, NULL otherwise */
  CudaTrace *trace;  /* NULL: none */
  double t0;         /* the run's start (traces) */
  /* The run's own. */
  CopySeg *seg;      /* a copy job being gathered */
  int nseg;
  int64_t fin;       /* the oldest chunk whose outputs are not yet back */
  double h2d, kern, d2h;
} CudaPipe;

/* How the arrays of a run of n elements travel, its chunk, slots and
** threads; registers the large pageable arrays the run pins for itself
** (every context's when portable).  `lead` is the run's first GPU; `nd`
** the arrays' layout or NULL (CudaLayout.nd). */
jitc_status cuda_layout(jitc_context *ctx, CudaState *S, CudaDev *lead, const jitc_kernel *k,
                        int64_t n, void *const *arrays, const Layout *nd, bool portable,
                        CudaLayout *L);
/* Undoes the run's registrations and frees L. */
void cuda_layout_end(CudaState *S, const jitc_kernel *k, void *const *arrays, CudaLayout *L);
/* The chunks of elements [from, from + n) with the largest `big`: *nchunks
** of them, boundaries at the result (malloc'ed; NULL when out of memory). */
int64_t *cuda_cut(int64_t from, int64_t n, int64_t big, int64_t *nchunks);
/* Runs P's chunks through P->D (its context current), every slot drained
** at the end, on failure too. */
jitc_status cuda_pipe_run(jitc_context *ctx, CudaPipe *P);
/* jitc_r over parts on D's first stream, and the results into the arrays. */
jitc_status cuda_host_results(jitc_context *ctx, CudaState *S, CudaDev *D, CudaKDev *kd,
                              const jitc_kernel *k, const CudaParts *parts, int64_t n,
                              void *const *arrays);
/* Frees D's streams, staging and copy threads. */
void cuda_host_free(CudaState *S, CudaDev *D);

/* ---- cuda/shares.c: the GPUs of a run and their shares (pure) ---- */

/* Parses a device list: "all" or ordinals separated by commas ("0,1"; one
** may repeat: two lanes of it); ndevices, the devices the driver sees (-1:
** unknown, the syntax alone is checked).  The count, with the ordinals in
** out[0..max), or -1 with the reason in err. */
int cuda_parse_devices(const char *s, int ndevices, int *out, int max, char *err, size_t len);
/* The weights of GPUs of link rates rate[0..n): each rate over the
** fastest, those within 10% of it counted as equal to it. */
void cuda_weights(const double *rate, int n, double *w);
/* The GPUs worth using for a run moving `bytes`: at most n, one per
** `least` bytes, at least one. */
int cuda_lanes_for(size_t bytes, int n, int64_t least);
/* Cuts n elements into n_w shares in proportion to w[0..n_w): cut[0] = 0,
** cut[n_w] = n, each cut[d] the allowed boundary nearest to its ideal, in
** order.  The boundaries: at[0..nat] when at is given (a reduction's
** chunks), else the multiples of `granule` below n. */
void cuda_split(int64_t n, const int64_t *at, int64_t nat, int64_t granule, const double *w,
                int n_w, int64_t *cut);

/* ---- cuda/multi.c: a run over host arrays on every GPU of the kernel ---- */

jitc_status cuda_run(jitc_context *ctx, const jitc_kernel *k, int64_t n, void *const *arrays,
                     const ParamSlot *params, jitc_run_info *info);
/* The same over host arrays of any layout (jitc_run_arrays): the same
** chunks of the flat index, each array that is not one contiguous run
** gathered into the staging and scattered from it. */
jitc_status cuda_run_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                            const ParamSlot *params, jitc_run_info *info);

/* ---- cuda/devptr.c: jitc_run_device ---- */

/* Runs k over the caller's device pointers on the caller's stream. */
jitc_status cuda_run_device(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const ParamSlot *params, void *stream);
/* The same with the kernels of `home` (k's module for a pattern, in the
** home device's context) over arrays that nd says how to reach. */
jitc_status cuda_devptr_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            const uint64_t *ptrs, const ParamSlot *params, void *stream,
                            CudaModule *home, const CudaNdRun *nd);
/* Releases the primary contexts jitc_run_device retained. */
void cuda_devptr_free(CudaState *S);

/* ---- cuda/devarrays.c: jitc_run_device_arrays ---- */

/* Runs k over the caller's device arrays of any strides (L's bases are
** device addresses) on the caller's stream: the kernel of their pattern. */
jitc_status cuda_run_device_layout(jitc_context *ctx, const jitc_kernel *k, const Layout *L,
                                   const ParamSlot *params, void *stream);

#endif /* JITC_CUDA_H */
