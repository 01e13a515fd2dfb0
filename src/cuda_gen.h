/*
** cuda_gen.h -- the cuda target's code generation, as the rest of the
** target sees it: typed IR (Program) in, CUDA C text out.
**
** Generation is pure: cuda_gen.c (expressions, statements, kernels),
** cuda_helpers.c (the device functions the kernels call) and cuda_plan.c
** (how a large program is cut into kernels) know nothing of devices,
** NVRTC, the environment or the cache.  Building
** (cuda_build.c) and running (cuda_run.c, cuda_host.c) include this file;
** generation never includes theirs.
*/
#ifndef JITC_CUDA_GEN_H
#define JITC_CUDA_GEN_H

#include "jitc_int.h"

/* Threads per block: every kernel's __launch_bounds__ and every launch. */
enum { CUDA_BLOCK = 256 };

/* ---- cuda_helpers.c: the device functions ---- */

/* How every device function of the generated C begins. */
#define DEV "__device__ __forceinline__ "

/* The element types' names in the generated C, and their unsigned twins. */
extern const char *const cuda_ctype[JITC_NDTYPES];
extern const char *const cuda_utype[JITC_NDTYPES];

/* A device function the generated code may call, emitted once per type
** and only when used. */
typedef enum CudaHelper {
  H_FLOORDIV, H_MOD, H_FMOD, H_POW, H_SHL, H_SHR, H_ISNAN, H_MINIMUM,
  H_MAXIMUM, H_FMIN, H_FMAX, H_CLIP, H_SAT_I32, H_SAT_I64, H_HYPOT, H_SIGNBIT,
  H_NANARG, H_NHELPERS
} CudaHelper;

/* Marks helper h of type t used, with the helpers its text calls. */
void cuda_helper_use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t);
/* Appends the definition of helper h for type t. */
void cuda_helper_text(Buf *b, CudaHelper h, jitc_dtype t);

/* ---- cuda_plan.c: a large program as several kernels ---- */

/* One kernel per group of statements: the groups, and what each touches. */
typedef struct CudaPlan {
  int ng;
  int *start;       /* group g is statements [start[g], start[g + 1]) */
  bool *cross;      /* per temporary: kept in scratch */
  size_t per_elem;  /* scratch bytes per element */
  size_t *temp_off; /* per temporary: its scratch offset per element of the range */
  /* Per group: the arrays it touches in slot order, with what it does
  ** (bit 1: loads, bit 2: stores), and the temporaries it reads from
  ** earlier groups or writes for later ones (bit 1: reads, bit 2: writes). */
  int **arr, *narr, **arr_use;
  int **tmp, *ntmp, **tmp_use;
  /* Per group: its reductions, by their numbers among the program's in the
  ** order of their result arrays (the order of their partials and of the
  ** kernel's parameters). */
  int **red, *nred;
} CudaPlan;

/* The plan of p, or NULL when p is one kernel (*oom tells out of memory). */
CudaPlan *cuda_plan_new(const Program *p, bool *oom);
void cuda_plan_free(CudaPlan *P);

/* ---- cuda_reduce.c: reductions in the kernels ---- */

/* Reductions a split program's combine kernel finishes: jitc_r0 the first
** CUDA_RCHUNK of them in the order of their arrays, jitc_r1 the next, ... */
enum { CUDA_RCHUNK = 16 };

/* The partial type and device functions of every reduction (the prelude),
** and unless `split`, jitc_finish of them all. */
void cuda_reduce_text(Buf *b, const Program *p, bool split);
/* How many combine kernels cuda_reduce_kernel writes: jitc_r, or jitc_r0 ...
** of a split program; 0 without reductions. */
int cuda_reduce_nkernels(const Program *p, bool split);
/* For the reductions of statements [from, to): the kernel's partial
** pointer parameters, the accumulators' declarations, and after the
** element loop each block's partials. */
void cuda_reduce_params(Buf *b, const Program *p, int from, int to);
void cuda_reduce_init(Buf *b, const Program *p, int from, int to);
void cuda_reduce_tail(Buf *b, const Program *p, int from, int to);
/* jitc_k32's parameters for the last launch of a run (np: the partials of
** the run, 0 in the other launches; ntot: its elements; cnt: a counter at
** 0; then the results), and after the block partials the last block's
** combine (jitc_finish).  Runs on one stream use these. */
void cuda_reduce_final_params(Buf *b, const Program *p);
void cuda_reduce_last(Buf *b, const Program *p);
/* jitc_r: combines the partials of all blocks and writes the results, for
** runs whose partials come from several streams (the host pipeline) or no
** launch at all (n == 0); for a split program (`split`), whose partials
** come from its groups' kernels, jitc_r0, jitc_r1, ... do, CUDA_RCHUNK
** reductions each. */
void cuda_reduce_kernel(Buf *b, const Program *p, bool split);

/* ---- cuda_gen.c: the kernels ---- */

/* Elements per vector step: the widest element fills `vbytes` bytes. */
int cuda_vec_width(const Program *p, int vbytes);

/* The CUDA C of p (src: its source, for comments; may be NULL) appended to
** out.  Without a plan: one kernel, jitc_k32, taking `vec` elements per
** vector step (with reductions, `unroll` steps' loads at once); stmt_line (p->nstmts entries, may be NULL) gets the line
** each statement starts on and *elem_end the last line of the statements,
** to map NVRTC's messages back to the source.  With a plan: one kernel per
** group, jitc_g0, jitc_g1, ...  JITC_OK, JITC_E_NOMEM, or JITC_E_INTERNAL
** for an IR this generator does not know (a bug in the checker). */
jitc_status cuda_gen(const Program *p, const char *src, const CudaPlan *plan, int vec, int unroll,
                     Buf *out, int *stmt_line, int *elem_end);

#endif /* JITC_CUDA_GEN_H */
