/*
** cuda/build.c -- building for the target `cuda`: CUDA C -> NVRTC -> a
** loaded module.
**
** The source comes from cuda/gen.c.  NVRTC compiles it straight to a CUBIN
** for the device's sm_XY (PTX for compute_XY only when this NVRTC does not
** know the device), with --fmad=false: NumPy never contracts a*b+c into
** one rounding, and neither may we.  --fast-math maps to NVRTC's
** --use_fast_math.  A compile error is a bug of the generator: NVRTC's log
** is mapped back to the statement whose code it rejects.
**
** Modules go through the shared code cache (codecache.c, namespace
** "cuda"): the context's memory table, then the disk, keyed by the source,
** the options, the NVRTC version, the arch and the jitc version.  Every
** kernel a run over contiguous arrays can need is built here, so such a run
** never compiles; a run over device arrays of any strides compiles the
** kernel of their pattern (cuda/access.c) on its first use, here too
** (cuda_pattern_module), through the same cache.  Start reading at
** cuda_compile(); --emit cuda|ptx is cuda_emit(), which needs no GPU
** ($JITC_CUDA_PATTERN: the kernel of a pattern).
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks "sm_90", "compute_90", "sm_90a": returns the number (90) or -1. */
static int parse_arch(const char *a, bool *is_sm) {
  const char *d;
  if (!strncmp(a, "sm_", 3))
    d = a + 3, *is_sm = true;
  else if (!strncmp(a, "compute_", 8))
    d = a + 8, *is_sm = false;
  else
    return -1;
  int v = 0, nd = 0;
  for (; *d >= '0' && *d <= '9' && nd < 4; d++, nd++)
    v = v * 10 + (*d - '0');
  if (nd < 2 || (*d && !((*d == 'a' || *d == 'f') && !d[1])))
    return -1;
  return v;
}

/* The -arch value for the device: sm_XY when this NVRTC can make a CUBIN
** for it, else compute_XY of the newest arch it knows not above the
** device (PTX, which the driver compiles at load). */
static void device_arch(CudaState *S, char *out, size_t len) {
  int want = S->cc_major * 10 + S->cc_minor;
  if (S->narchs == 0) {
    snprintf(out, len, "sm_%d", want);
    return;
  }
  int best = -1;
  for (int k = 0; k < S->narchs; k++) {
    if (S->archs[k] == want) {
      snprintf(out, len, "sm_%d", want);
      return;
    }
    if (S->archs[k] < want && S->archs[k] > best)
      best = S->archs[k];
  }
  snprintf(out, len, "compute_%d", best > 0 ? best : want);
}

/* The CUDA C of a kernel and how NVRTC is to compile it. */
typedef struct CudaSource {
  Buf src;
  char arch[32];     /* sm_XY or compute_XY */
  char archopt[48];  /* -arch=... */
  const char *opts[8];
  int nopts;
  int vec;
  int *stmt_line;    /* per statement: its first line in src (for the log) */
  int elem_end;
} CudaSource;

static void source_free(CudaSource *P) {
  buf_free(&P->src);
  free(P->stmt_line);
}

/* Generates k's CUDA C (for device arrays of pattern pat; NULL: contiguous)
** and NVRTC's options for arch. */
static jitc_status source_make(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                               const CudaKernel *ck, const char *arch, const CudaPattern *pat,
                               CudaSource *P) {
  memset(P, 0, sizeof *P);
  const Program *p = k->prog;
  P->vec = ck->vec;
  P->stmt_line = calloc((size_t)p->nstmts + 1, sizeof(int));
  jitc_status st = P->stmt_line ? cuda_gen(p, k->source, ck->plan, P->vec, ck->unroll, pat,
                                           &P->src, P->stmt_line, &P->elem_end)
                                : JITC_E_NOMEM;
  if (st != JITC_OK) {
    source_free(P);
    return st == JITC_E_NOMEM ? ctx_error(ctx, st, "cuda: out of memory emitting CUDA C")
                              : ctx_error(ctx, st, "cuda: the program has an operation this "
                                                   "target cannot emit");
  }
  snprintf(P->arch, sizeof P->arch, "%s", arch);
  snprintf(P->archopt, sizeof P->archopt, "-arch=%s", arch);
  P->opts[P->nopts++] = P->archopt;
  /* No contraction of a*b+c: NumPy rounds twice, and so does interp. */
  P->opts[P->nopts++] = k->opt.fast_math ? "--use_fast_math" : "--fmad=false";
  if (S->env->nvrtc_extra) /* for experiments: one more option */
    P->opts[P->nopts++] = S->env->nvrtc_extra;
  /* -minimal (NVRTC 12.4+) leaves out texture and device-runtime
  ** declarations the kernels never use: a third less compile time. */
  if (S->api.nvrtc_major * 100 + S->api.nvrtc_minor >= 1204)
    P->opts[P->nopts++] = "-minimal";
  return JITC_OK;
}

/* Adds NVRTC's log to the diagnostics: errors on a line of jitc_elem get the
** position of the statement emitted there. */
static void report_log(jitc_context *ctx, const jitc_kernel *k, const char *log,
                       const int *stmt_line, int elem_end) {
  const Program *p = k->prog;
  for (const char *s = log; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    int line = 0;
    const char *msg = NULL;
    if (!strncmp(s, "jitc.cu(", 8) && sscanf(s + 8, "%d", &line) == 1) {
      msg = strstr(s, "): ");
      if (msg && (size_t)(msg - s) < len)
        msg += 3;
      else
        msg = NULL;
    }
    if (msg && strstr(msg, "error") == msg && stmt_line && line <= elem_end) {
      int which = -1;
      for (int q = 0; q < p->nstmts; q++)
        if (stmt_line[q] <= line)
          which = q;
      if (which >= 0)
        diag_add(&ctx->diags, JITC_E_INTERNAL, k->source, p->stmts[which].off,
                 "cuda: NVRTC rejected the code generated for this statement: %.*s",
                 (int)(len - (size_t)(msg - s)), msg);
    }
    s = nl ? nl + 1 : NULL;
  }
  ctx_error(ctx, JITC_E_INTERNAL, "cuda: NVRTC failed to compile the generated CUDA C:\n%s",
            log && *log ? log : "(no log)");
}

/* Compiles P with NVRTC.  want_ptx: PTX text, else the CUBIN (or PTX when
** the arch is compute_XY).  *code is malloc'ed; *log too (may be empty). */
static jitc_status nvrtc_compile(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                 const CudaSource *P, bool want_ptx, char **code, size_t *len,
                                 char **log_out) {
  CudaApi *A = &S->api;
  *code = NULL;
  *len = 0;
  if (log_out)
    *log_out = NULL;
  nvrtcProgram prog = NULL;
  nvrtcResult r = A->nvrtcCreateProgram(&prog, P->src.s ? P->src.s : "", "jitc.cu", 0, NULL,
                                         NULL);
  if (r != NVRTC_SUCCESS)
    return ctx_error(ctx, r == 1 ? JITC_E_NOMEM : JITC_E_INTERNAL, "cuda: nvrtcCreateProgram: %s",
                     A->nvrtcGetErrorString(r));
  r = A->nvrtcCompileProgram(prog, P->nopts, P->opts);
  size_t loglen = 0;
  char *log = NULL;
  if (A->nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 0) {
    log = malloc(loglen + 1);
    if (log && A->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
      log[0] = '\0';
    if (log)
      log[loglen] = '\0';
  }
  jitc_status st = JITC_OK;
  if (r != NVRTC_SUCCESS) {
    if (r == NVRTC_ERROR_COMPILATION) {
      report_log(ctx, k, log, P->stmt_line, P->elem_end);
      st = JITC_E_INTERNAL;
    } else {
      /* Mostly a bad option: an arch this NVRTC does not know. */
      st = ctx_error(ctx, JITC_E_USAGE, "cuda: NVRTC refused the compile (%s)%s%s",
                     A->nvrtcGetErrorString(r), log && *log ? ":\n" : "", log ? log : "");
    }
    goto done;
  }
  bool is_sm = false;
  parse_arch(P->arch, &is_sm);
  bool cubin = !want_ptx && is_sm && A->nvrtcGetCUBIN;
  size_t sz = 0;
  r = cubin ? A->nvrtcGetCUBINSize(prog, &sz) : A->nvrtcGetPTXSize(prog, &sz);
  char *out = r == NVRTC_SUCCESS ? malloc(sz + 1) : NULL;
  if (!out) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory for NVRTC's output");
    goto done;
  }
  r = cubin ? A->nvrtcGetCUBIN(prog, out) : A->nvrtcGetPTX(prog, out);
  if (r != NVRTC_SUCCESS) {
    free(out);
    st = ctx_error(ctx, JITC_E_INTERNAL, "cuda: NVRTC output: %s", A->nvrtcGetErrorString(r));
    goto done;
  }
  out[sz] = '\0';
  *code = out;
  *len = cubin ? sz : strlen(out) + 1; /* PTX: with its NUL, as cuModuleLoadData wants */
done:
  A->nvrtcDestroyProgram(&prog);
  if (log_out && st == JITC_OK)
    *log_out = log;
  else
    free(log);
  return st;
}

/* ---- modules, through the code cache ---- */

/* What code_get() passes to the functions below. */
typedef struct BuildArg {
  CudaState *S;
  const jitc_kernel *k;
  const CudaSource *P;
  int ngroups;           /* kernels of a split program, else 0 */
  jitc_compile_info *ci; /* gets NVRTC's time */
} BuildArg;

static jitc_status build(jitc_context *ctx, void *arg, void **data, size_t *len) {
  BuildArg *B = arg;
  double t0 = now_ms();
  char *image = NULL;
  jitc_status st = nvrtc_compile(ctx, B->S, B->k, B->P, false, &image, len, NULL);
  B->ci->codegen_ms = now_ms() - t0;
  *data = image;
  return st;
}

/* Unloads m from its context (made current), with its jitc_run_device
** scratch and event. */
static void unload_one(CudaState *S, CudaCurrent *c, CudaModule *m) {
  CudaApi *A = &S->api;
  if (cuda_switch(S, c, m->cx) != CUDA_SUCCESS)
    return; /* the context is gone, and its module with it */
  if (m->dscratch)
    A->cuMemFree(m->dscratch);
  if (m->dscratch_done)
    A->cuEventDestroy(m->dscratch_done);
  for (int q = 0; q < CUDA_RSCRATCH; q++) {
    if (m->rscratch_done[q])
      A->cuEventSynchronize(m->rscratch_done[q]);
    if (m->rscratch[q])
      A->cuMemFree(m->rscratch[q]);
    if (m->rscratch_done[q])
      A->cuEventDestroy(m->rscratch_done[q]);
  }
  if (m->mod)
    A->cuModuleUnload(m->mod);
}

static void module_unload(jitc_context *ctx, void *code) {
  CudaModule *m = code;
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  /* Called from compiling (an eviction) and from jitc_context_free. */
  CudaCurrent c;
  bool live = S && S->gpu_ok && cuda_enter(S, NULL, &c) == CUDA_SUCCESS;
  for (CudaModule *o = m->others, *next; o; o = next) {
    next = o->next;
    if (live)
      unload_one(S, &c, o);
    free(o->gfn);
    free(o->rfn);
    free(o);
  }
  if (live) {
    unload_one(S, &c, m);
    cuda_leave(S, &c);
  }
  free(m->image);
  free(m->gfn);
  free(m->rfn);
  free(m);
}

/* The unique id of context cx (0 when the driver has no cuCtxGetId): a
** context destroyed and another made may reuse its handle, never its id. */
static unsigned long long context_id(CudaState *S, CUcontext cx) {
  unsigned long long id = 0;
  if (S->api.cuCtxGetId && S->api.cuCtxGetId(cx, &id) != CUDA_SUCCESS)
    id = 0;
  return id;
}

/* Loads a CUBIN or PTX image in the current context (cx) and finds its
** kernels: m->mod, fn, gfn (ngroups of them), rfn (nrfn of them: jitc_r, or
** a split program's jitc_r0, ...), occ. */
static jitc_status load_image(jitc_context *ctx, CudaState *S, const void *image, int ngroups,
                              int nrfn, bool axis, CUcontext cx, CudaModule **out) {
  CudaApi *A = &S->api;
  *out = NULL;
  CudaModule *m = calloc(1, sizeof *m);
  if (m && ngroups && !(m->gfn = calloc((size_t)ngroups, sizeof *m->gfn)))
    goto nomem;
  if (m && nrfn && !(m->rfn = calloc((size_t)nrfn, sizeof *m->rfn)))
    goto nomem;
  if (!m)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  m->ngfn = ngroups;
  m->nrfn = nrfn;
  m->axis = axis;
  m->cx = cx;
  m->cxid = context_id(S, cx);
  char errlog[4096] = "";
  CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *v[2] = {errlog, (void *)(uintptr_t)sizeof errlog};
  CUresult r = A->cuModuleLoadDataEx(&m->mod, image, 2, o, v);
  if (r != CUDA_SUCCESS) {
    free(m->gfn);
    free(m->rfn);
    free(m);
    return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                     "cuda: cannot load the compiled kernel (%s)%s%s",
                     cuda_result_name(A, r), errlog[0] ? ": " : "", errlog);
  }
  /* Over axes, the kernels of segments (cuda/axis.c, cuda/axiscol.c); fn
  ** is jitc_a256's. */
  static const char *const afn[6] = {"jitc_a1",  "jitc_a32",  "jitc_a256",
                                     "jitc_ac",  "jitc_acol", "jitc_a256w"};
  for (int q = 0; q < 6 && axis && r == CUDA_SUCCESS; q++)
    r = A->cuModuleGetFunction(&m->afn[q], m->mod, afn[q]);
  if (r == CUDA_SUCCESS && axis)
    m->fn = m->afn[2];
  else if (r == CUDA_SUCCESS)
    r = A->cuModuleGetFunction(&m->fn, m->mod, m->ngfn ? "jitc_g0" : "jitc_k32");
  for (int g = 0; g < m->ngfn && r == CUDA_SUCCESS; g++) {
    char name[32];
    snprintf(name, sizeof name, "jitc_g%d", g);
    r = A->cuModuleGetFunction(&m->gfn[g], m->mod, name);
  }
  /* The combine kernels exist when the program has reductions (asked only
  ** then: a failed lookup is an API error to the driver's tools). */
  for (int c = 0; c < m->nrfn && r == CUDA_SUCCESS; c++) {
    char name[32];
    if (m->ngfn)
      snprintf(name, sizeof name, "jitc_r%d", c);
    else
      snprintf(name, sizeof name, "jitc_r");
    r = A->cuModuleGetFunction(&m->rfn[c], m->mod, name);
  }
  if (r != CUDA_SUCCESS) {
    A->cuModuleUnload(m->mod);
    free(m->gfn);
    free(m->rfn);
    free(m);
    return ctx_error(ctx, JITC_E_INTERNAL, "cuda: kernel missing from the module (%s)",
                     cuda_result_name(A, r));
  }

  int occ = 0;
  if (A->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, m->fn, CUDA_BLOCK, 0) != CUDA_SUCCESS ||
      occ < 1)
    occ = 1;
  m->occ = occ;
  *out = m;
  return JITC_OK;
nomem:
  free(m->gfn);
  free(m);
  return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
}

/* The code cache's loader: the image in the home context, kept for
** jitc_run_device's loads in other contexts (the run path never compiles). */
static jitc_status module_load(jitc_context *ctx, void *arg, const void *image, size_t len,
                               void **code) {
  BuildArg *B = arg;
  void *copy = malloc(len ? len : 1);
  if (!copy)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  memcpy(copy, image, len);
  CudaModule *m;
  const Program *p = B->k->prog;
  jitc_status st = load_image(ctx, B->S, image, B->ngroups,
                              p->by_axis ? 0 : cuda_reduce_nkernels(p, B->ngroups > 0),
                              p->by_axis, B->S->pctx, &m);
  if (st != JITC_OK) {
    free(copy);
    return st;
  }
  m->image = copy;
  m->image_len = len;
  *code = m;
  return JITC_OK;
}

jitc_status cuda_module_in(jitc_context *ctx, CudaState *S, CudaModule *home, CUcontext cx,
                           CudaModule **out) {
  unsigned long long id = context_id(S, cx);
  if (cx == home->cx && id == home->cxid) {
    *out = home;
    return JITC_OK;
  }
  for (CudaModule *o = home->others; o; o = o->next)
    if (o->cx == cx && o->cxid == id) {
      *out = o;
      return JITC_OK;
    }
  jitc_status st = load_image(ctx, S, home->image, home->ngfn, home->nrfn, home->axis, cx, out);
  if (st != JITC_OK)
    return st;
  (*out)->next = home->others;
  home->others = *out;
  return JITC_OK;
}

jitc_status cuda_kernel_on(jitc_context *ctx, CudaState *S, CudaKernel *ck, int g,
                           CudaKDev **out) {
  if (!ck->kd[g] && !(ck->kd[g] = calloc(1, sizeof **ck->kd)))
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  CudaKDev *kd = ck->kd[g];
  if (!kd->mod) {
    jitc_status st = cuda_module_in(ctx, S, ck->mod, S->gpu[g]->cx, &kd->mod);
    if (st != JITC_OK)
      return st;
  }
  *out = kd;
  return JITC_OK;
}

/* The module of kernel k (for device arrays of pattern pat; NULL:
** contiguous) in *mod: from the code cache, or NVRTC; ci gets the times. */
static jitc_status get_module(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                              const CudaKernel *ck, const CudaPattern *pat,
                              jitc_compile_info *ci, CudaModule **mod) {
  double t0 = now_ms();
  char arch[32];
  device_arch(S, arch, sizeof arch);
  CudaSource P;
  jitc_status st = source_make(ctx, S, k, ck, arch, pat, &P);
  if (st != JITC_OK)
    return st;
  ci->ir_ms = now_ms() - t0;
  /* The key: everything that changes the machine code. */
  Buf key = {0};
  buf_printf(&key, "jitc %s cuda\nnvrtc %d.%d\narch %s\n", JITC_VERSION, S->api.nvrtc_major,
             S->api.nvrtc_minor, arch);
  for (int q = 0; q < P.nopts; q++)
    buf_printf(&key, "opt %s\n", P.opts[q]);
  buf_puts(&key, P.src.s ? P.src.s : "");
  if (key.oom) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  } else {
    BuildArg B = {S, k, &P, ck->plan ? ck->plan->ng : 0, ci};
    CodeBuild cb = {"cuda", key.s, key.len, build, module_load, module_unload, &B};
    void *code = NULL;
    st = code_get(ctx, &k->opt, &cb, &code, ci);
    *mod = code;
  }
  buf_free(&key);
  source_free(&P);
  return st;
}

jitc_status cuda_pattern_module(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                const CudaPattern *pat, CudaModule **out) {
  CudaKernel *ck = k->impl;
  Buf key = {0};
  cuda_pattern_key(&key, pat, k->prog);
  if (key.oom)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (CudaPatMod *q = ck->pats; q; q = q->next)
    if (!strcmp(q->key, key.s)) {
      buf_free(&key);
      *out = q->mod;
      return JITC_OK;
    }
  CudaPatMod *q = calloc(1, sizeof *q);
  CudaCurrent c = {0};
  jitc_compile_info ci = {0}; /* the kernel's own times stay those of its compile */
  jitc_status st = q ? cuda_enter_device(ctx, S, &c)
                     : ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK)
    st = get_module(ctx, S, k, ck, pat, &ci, &q->mod);
  cuda_leave(S, &c);
  if (st != JITC_OK) {
    free(q);
    buf_free(&key);
    return st;
  }
  q->key = key.s; /* the Buf's text, kept */
  q->next = ck->pats;
  ck->pats = q;
  *out = q->mod;
  return JITC_OK;
}

/* The GPUs of k's runs over host arrays: jitc_options.devices, else
** $JITC_DEVICES, else the device $JITC_CUDA_DEVICE names when it is set,
** else ("all" too) every device the driver sees, the home device first.  A list that names a device the
** driver does not see is refused now, not at the run. */
static jitc_status cuda_devices(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                CudaKernel *ck) {
  const char *s = k->opt.devices, *from = "device list";
  if (!s || !*s)
    s = S->env->devices, from = "environment variable JITC_DEVICES";
  char err[200];
  int nd = s && *s ? cuda_parse_devices(s, -1, ck->devs, CUDA_MAXDEV, err, sizeof err) : 0;
  if (nd < 0)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: %s '%s': %s", from, s, err);
  if (nd == 0) { /* none given, or "all" */
    if (S->env->cuda_device_set && !(s && *s)) {
      ck->devs[0] = S->ordinal;
      ck->ndevs = 1;
    } else {
      ck->listed = s && *s; /* "all" */
      ck->ndevs = S->ndevices < CUDA_MAXDEV ? S->ndevices : CUDA_MAXDEV;
      /* The home device first: the run's first GPU combines the partials. */
      ck->devs[0] = S->ordinal;
      for (int d = 0, q = 1; d < ck->ndevs; d++)
        if (d != S->ordinal && q < ck->ndevs)
          ck->devs[q++] = d;
    }
    return JITC_OK;
  }
  ck->listed = true;
  for (int q = 0; q < nd; q++)
    if (ck->devs[q] >= S->ndevices)
      return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s '%s' names device %d, but the "
                       "driver sees %d device%s (0 to %d)", from, s, ck->devs[q], S->ndevices,
                       S->ndevices == 1 ? "" : "s", S->ndevices - 1);
  ck->ndevs = nd;
  return JITC_OK;
}

jitc_status cuda_compile(jitc_context *ctx, jitc_kernel *k) {
  CudaState *S = cuda_state(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  CudaCurrent c = {0};
  CudaKernel *ck = calloc(1, sizeof *ck);
  bool oom = !ck;
  if (ck) {
    ck->plan = cuda_plan_new(k->prog, &oom);
    ck->vec = ck->plan ? 1 : cuda_vec_width(k->prog, S->env->cuda_vbytes);
    ck->unroll = S->env->cuda_runroll;
  }
  if (oom)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  else if (!cuda_load_gpu(S))
    st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
  else if ((st = cuda_devices(ctx, S, k, ck)) == JITC_OK &&
           (st = cuda_enter_device(ctx, S, &c)) == JITC_OK)
    st = get_module(ctx, S, k, ck, NULL, &k->cinfo, &ck->mod);
  cuda_leave(S, &c);
  if (st == JITC_OK) {
    k->impl = ck;
  } else if (ck) {
    cuda_plan_free(ck->plan);
    free(ck);
  }
  pthread_mutex_unlock(&S->lock);
  return st;
}

void cuda_release(jitc_kernel *k) {
  CudaKernel *ck = k->impl;
  CudaState *S = k->ctx ? k->ctx->target_state[JITC_TARGET_CUDA] : NULL;
  bool any = false;
  for (int g = 0; ck && g < CUDA_MAXDEV; g++)
    any |= ck->kd[g] != NULL;
  if (any && S) {
    pthread_mutex_lock(&S->lock);
    CudaCurrent c;
    if (cuda_enter(S, NULL, &c) == CUDA_SUCCESS) {
      /* Each lane's scratch in its own context. */
      for (int g = 0; g < S->ngpu; g++) {
        CudaKDev *kd = ck->kd[g];
        if (!kd || cuda_switch(S, &c, S->gpu[g]->cx) != CUDA_SUCCESS)
          continue;
        for (int q = 0; q < CUDA_SLOTS; q++)
          if (kd->scratch[q])
            S->api.cuMemFree(kd->scratch[q]);
        if (kd->part)
          S->api.cuMemFree(kd->part);
      }
      cuda_leave(S, &c);
    }
    pthread_mutex_unlock(&S->lock);
  }
  for (int g = 0; ck && g < CUDA_MAXDEV; g++)
    free(ck->kd[g]); /* its module stays in the context's code cache */
  for (CudaPatMod *q = ck ? ck->pats : NULL, *next; q; q = next) {
    next = q->next; /* and so do those of its patterns */
    free(q->key);
    free(q);
  }
  if (ck)
    cuda_plan_free(ck->plan);
  free(ck);
  k->impl = NULL;
}

/* The stages of target_cuda.stages, in order. */
enum { STAGE_CUDA, STAGE_PTX };

/* The pattern $JITC_CUDA_PATTERN asks --emit for, checked against k's
** arrays (*use false when unset). */
static jitc_status emit_pattern(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                CudaPattern *pat, bool *use) {
  const char *s = S->env->cuda_pattern;
  *use = s && *s;
  if (!*use)
    return JITC_OK;
  /* Its parts as env.c read them. */
  *pat = (CudaPattern){S->env->pattern.nd, S->env->pattern.wide, S->env->pattern.letters,
                       S->env->pattern.kd, S->env->pattern.tile};
  int na = k->prog->narrays;
  if (S->env->pattern.nletters == na)
    return JITC_OK;
  return ctx_error(ctx, JITC_E_USAGE, "cuda: environment variable JITC_CUDA_PATTERN='%s': "
                   "expected the number of axes, ':' and a letter for each of the program's "
                   "%d arrays (c contiguous, b broadcast along the inner axis, s strided), "
                   "then ':64' for a 64-bit index, such as 2:sc for two arrays", s, na);
}

/* --emit cuda | ptx.  Needs NVRTC for ptx only, and never a GPU: the arch is
** opt->cuda_arch, else the device's, else sm_90; the kernel is that of
** contiguous arrays, or of the pattern $JITC_CUDA_PATTERN names. */
jitc_status cuda_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out) {
  CudaState *S = cuda_state(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  char arch[32] = "sm_90";
  bool is_sm = true;
  if (k->opt.cuda_arch && *k->opt.cuda_arch) {
    if (parse_arch(k->opt.cuda_arch, &is_sm) < 0 || strlen(k->opt.cuda_arch) >= sizeof arch)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: bad arch '%s' (expected sm_XY or compute_XY, "
                       "e.g. sm_90)", k->opt.cuda_arch);
    snprintf(arch, sizeof arch, "%s", k->opt.cuda_arch);
  }
  bool oom = false;
  CudaKernel ck = {.plan = cuda_plan_new(k->prog, &oom)};
  if (oom)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  ck.vec = ck.plan ? 1 : cuda_vec_width(k->prog, S->env->cuda_vbytes);
  ck.unroll = S->env->cuda_runroll;
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  CudaSource P;
  bool made = false;
  if (stage == STAGE_PTX) {
    if (!cuda_load_nvrtc_once(S)) {
      st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->nvrtc_err);
      goto out;
    }
    if (!(k->opt.cuda_arch && *k->opt.cuda_arch) && cuda_load_gpu(S))
      device_arch(S, arch, sizeof arch);
    /* PTX comes from compute_XY. */
    int num = parse_arch(arch, &is_sm);
    char suffix = arch[strlen(arch) - 1];
    if (suffix == 'a' || suffix == 'f')
      snprintf(arch, sizeof arch, "compute_%d%c", num, suffix);
    else
      snprintf(arch, sizeof arch, "compute_%d", num);
  }
  CudaPattern pat;
  bool use = false;
  if ((st = emit_pattern(ctx, S, k, &pat, &use)) != JITC_OK ||
      (st = source_make(ctx, S, k, &ck, arch, use ? &pat : NULL, &P)) != JITC_OK)
    goto out;
  made = true;
  if (stage == STAGE_CUDA) {
    buf_puts(out, P.src.s ? P.src.s : "");
    goto out;
  }
  char *ptx = NULL, *log = NULL;
  size_t len = 0;
  st = nvrtc_compile(ctx, S, k, &P, true, &ptx, &len, &log);
  if (st == JITC_OK) {
    /* NVRTC's warnings, if any, as PTX comments (a clean compile has none). */
    for (const char *s = log; s && *s;) {
      const char *nl = strchr(s, '\n');
      int n = nl ? (int)(nl - s) : (int)strlen(s);
      if (n > 0)
        buf_printf(out, "// nvrtc: %.*s\n", n, s);
      s = nl ? nl + 1 : NULL;
    }
    buf_puts(out, ptx);
  }
  free(ptx);
  free(log);
out:
  if (made)
    source_free(&P);
  pthread_mutex_unlock(&S->lock);
  cuda_plan_free(ck.plan);
  return st;
}
