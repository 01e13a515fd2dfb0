/*
** cuda/device.c -- the bottom of the target `cuda`: its per-context state,
** the libraries (NVRTC, the CUDA driver, opened at run time by
** runtime/cuda_loader.c, so a machine without them still runs every other
** target), the device and its primary context, the lanes of the host
** pipeline (a GPU's context, streams and events, and its link's measured
** rate).  The device is JITC_CUDA_DEVICE's (0); runs over host arrays use
** the others too (cuda/multi.c).  jitc works in its
** primary context without leaving it current: the caller's current context
** is the caller's (cuda_enter, cuda_leave).  Building
** (cuda/build.c), launching (cuda/launch.c) and the host pipeline
** (cuda/host.c) stand on this file; it calls none of them.
*/
#include "cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CudaState *cuda_state(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (S)
    return S;
  S = calloc(1, sizeof *S);
  if (!S)
    return NULL;
  pthread_mutex_init(&S->lock, NULL);
  S->env = &ctx->env;
  S->slice = (int64_t)1 << 30;
  ctx->target_state[JITC_TARGET_CUDA] = S;
  return S;
}

static bool load_driver_and_device(CudaState *S) {
  if (cuda_load_driver(&S->api, S->env->libcuda, S->gpu_err, sizeof S->gpu_err) != 0)
    return false;
  CudaApi *A = &S->api;
  int count = 0;
  CUresult r = A->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count < 1) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "no CUDA device (%s)",
             r != CUDA_SUCCESS ? cuda_result_name(A, r) : "the driver sees none");
    return false;
  }
  int ordinal = S->env->cuda_device;
  S->ndevices = count;
  if (ordinal >= count) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "JITC_CUDA_DEVICE=%d, but the driver sees %d "
             "device%s (0 to %d)", ordinal, count, count == 1 ? "" : "s", count - 1);
    return false;
  }
  if ((r = A->cuDeviceGet(&S->dev, ordinal)) != CUDA_SUCCESS ||
      (r = A->cuDevicePrimaryCtxRetain(&S->pctx, S->dev)) != CUDA_SUCCESS) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "cannot use CUDA device %d (%s)", ordinal,
             cuda_result_name(A, r));
    return false;
  }
  S->retained = true;
  S->ordinal = ordinal;
  char name[256] = "CUDA device";
  A->cuDeviceGetName(name, (int)sizeof name, S->dev);
  A->cuDeviceGetAttribute(&S->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S->dev);
  A->cuDeviceGetAttribute(&S->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S->dev);
  A->cuDeviceGetAttribute(&S->nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, S->dev);
  if (S->nsm < 1)
    S->nsm = 1;
  snprintf(S->device, sizeof S->device, "%s (sm_%d%d, %d SMs)", name, S->cc_major, S->cc_minor,
           S->nsm);
  CudaDev *H = calloc(1, sizeof *H);
  if (!H) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "out of memory");
    return false;
  }
  *H = (CudaDev){.ordinal = ordinal, .dev = S->dev, .cx = S->pctx, .nsm = S->nsm};
  S->gpu[0] = H;
  S->ngpu = 1;
  S->gpu_ok = true;
  return true;
}

bool cuda_load_gpu(CudaState *S) {
  if (S->gpu_tried)
    return S->gpu_ok;
  S->gpu_tried = true;
  if (!cuda_load_nvrtc_once(S)) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "%s", S->nvrtc_err);
    return false;
  }
  /* Only where a driver exists: elsewhere the warm-up would be wasted. */
  pthread_t warm;
  bool warming = (S->env->libcuda || dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) &&
                 pthread_create(&warm, NULL, cuda_nvrtc_warm_up, S) == 0;
  bool ok = load_driver_and_device(S);
  if (warming)
    pthread_join(warm, NULL);
  return ok;
}

/* NVRTC and the list of archs it knows, once per context. */
bool cuda_load_nvrtc_once(CudaState *S) {
  if (S->nvrtc_tried)
    return S->nvrtc_ok;
  S->nvrtc_tried = true;
  if (cuda_load_nvrtc(&S->api, S->env->libnvrtc, S->env->cuda_home, S->nvrtc_err,
                      sizeof S->nvrtc_err) != 0)
    return false;
  int n = 0;
  if (S->api.nvrtcGetNumSupportedArchs && S->api.nvrtcGetSupportedArchs &&
      S->api.nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    S->archs = calloc((size_t)n, sizeof(int));
    if (S->archs && S->api.nvrtcGetSupportedArchs(S->archs) == NVRTC_SUCCESS)
      S->narchs = n;
  }
  S->nvrtc_ok = true;
  return true;
}

/* NVRTC's first compile in a process pays for NVRTC's own start-up: on
** an H100's host 200 ms, against 10 to 13 ms for a later compile (most of
** it the 110 MB library's first use: its pages, its static state).
** cuda_load_gpu() pays it on a second thread while the driver starts
** (about as long), with a kernel shaped as jitc's are (a template, vector
** loads, launch bounds) compiled as they are (same options, to machine
** code for the arch H100s and H200s have, where this NVRTC knows it): a
** warm-up for sm_75 with an empty kernel left the first real compile
** 1.5 to 4 ms slower than the next, measured there. */
static const char warm_src[] =
    "typedef float f32; typedef double f64; typedef long long i64; typedef unsigned u32;\n"
    "__device__ __forceinline__ void jitc_elem(const i64 i, const f32 &x0, const f64 &x1, "
    "f64 &x2) { x2 = (f64)(x0 * 2.5f) + x1 / 3.0 + (f64)i; }\n"
    "template <typename T, int N> struct alignas(sizeof(T) * N) jitc_vec { T v[N]; };\n"
    "template <typename I> __device__ __forceinline__ void jitc_body(const I n, const i64 base, "
    "const f32 *__restrict__ a0, const f64 *__restrict__ a1, f64 *__restrict__ a2) {\n"
    "  const I stride = (I)gridDim.x * (I)blockDim.x;\n"
    "  const I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;\n"
    "  for (I w = t; w < n / 2; w += stride) {\n"
    "    const jitc_vec<f64, 2> r1 = ((const jitc_vec<f64, 2> *)a1)[w];\n"
    "    jitc_vec<f64, 2> r2;\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < 2; e++) jitc_elem(base + (i64)(w * 2 + e), a0[w * 2 + e], r1.v[e], "
    "r2.v[e]);\n"
    "    ((jitc_vec<f64, 2> *)a2)[w] = r2;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) jitc_k32(const u32 n, const i64 base, "
    "const f32 *__restrict__ a0, const f64 *__restrict__ a1, f64 *__restrict__ a2) {\n"
    "  jitc_body<u32>(n, base, a0, a1, a2);\n"
    "}\n";

void *cuda_nvrtc_warm_up(void *state) {
  CudaState *S = state;
  CudaApi *A = &S->api;
  /* sm_90 where this NVRTC can make it, else the newest it can. */
  int arch = S->narchs ? 0 : 75;
  for (int k = 0; k < S->narchs; k++)
    if (S->archs[k] <= 90 && S->archs[k] > arch)
      arch = S->archs[k];
  char archopt[32];
  snprintf(archopt, sizeof archopt, "-arch=sm_%d", arch ? arch : 75);
  const char *opt[3] = {archopt, "--fmad=false", "-minimal"};
  int nopt = A->nvrtc_major * 100 + A->nvrtc_minor >= 1204 ? 3 : 2;
  nvrtcProgram prog;
  if (A->nvrtcCreateProgram(&prog, warm_src, "warm.cu", 0, NULL, NULL) == 0) {
    A->nvrtcCompileProgram(prog, nopt, opt);
    A->nvrtcDestroyProgram(&prog);
  }
  return NULL;
}

jitc_status cuda_ensure_slots(jitc_context *ctx, CudaState *S, CudaDev *D) {
  if (D->slots_ok)
    return JITC_OK;
  for (int s = 0; s < CUDA_SLOTS; s++) {
    CUresult r = S->api.cuStreamCreate(&D->slot[s].stream, CU_STREAM_NON_BLOCKING);
    for (int e = 0; e < 4 && r == CUDA_SUCCESS; e++)
      r = S->api.cuEventCreate(&D->slot[s].ev[e], CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS && s == 0)
      r = S->api.cuEventCreate(&D->tstart, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS)
      return cuda_fail(ctx, S, r, "creating streams");
  }
  D->slots_ok = true;
  return JITC_OK;
}

CudaDev *cuda_home(CudaState *S) { return S->gpu[0]; }

jitc_status cuda_lane(jitc_context *ctx, CudaState *S, int ordinal, int lane, int *index) {
  for (int g = 0; g < S->ngpu; g++)
    if (S->gpu[g]->ordinal == ordinal && S->gpu[g]->lane == lane) {
      *index = g;
      return JITC_OK;
    }
  if (ordinal < 0 || ordinal >= S->ndevices)
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: no CUDA device %d: the driver sees %d "
                     "(0 to %d)", ordinal, S->ndevices, S->ndevices - 1);
  if (S->ngpu == CUDA_MAXDEV)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: more than %d GPUs in a run", CUDA_MAXDEV);
  CudaDev *D = calloc(1, sizeof *D);
  if (!D)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  CUresult r = S->api.cuDeviceGet(&D->dev, ordinal);
  if (r != CUDA_SUCCESS) {
    free(D);
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: cannot use CUDA device %d (%s)", ordinal,
                     cuda_result_name(&S->api, r));
  }
  D->ordinal = ordinal;
  D->lane = lane;
  if (ordinal == S->ordinal) /* another lane of the home device: its context */
    D->cx = S->pctx;
  S->api.cuDeviceGetAttribute(&D->nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, D->dev);
  *index = S->ngpu;
  S->gpu[S->ngpu++] = D;
  return JITC_OK;
}

jitc_status cuda_lane_open(jitc_context *ctx, CudaState *S, CudaDev *D) {
  CudaApi *A = &S->api;
  CUresult r = CUDA_SUCCESS;
  if (!D->cx) {
    /* The first use of a device in the process makes its primary context:
    ** 100 ms and more, which is why the lanes open on threads of their own. */
    if ((r = A->cuDevicePrimaryCtxRetain(&D->cx, D->dev)) != CUDA_SUCCESS) {
      D->cx = NULL;
      return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_UNAVAILABLE,
                       "cuda: cannot use CUDA device %d (%s)", D->ordinal,
                       cuda_result_name(A, r));
    }
    D->retained = true;
  }
  if ((r = A->cuCtxSetCurrent(D->cx)) != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "making a device's context current");
  return cuda_ensure_slots(ctx, S, D);
}

/* A GPU's speed on the host path is its link's: the kernels of element-wise
** programs take a fraction of the copies' time.  Measured once per lane and
** kept for the context's life: 8 MiB up and 8 MiB down at once on two
** streams, between pinned memory and the device, the best of three (the
** first pays for the copy engines waking); the rate is both ways together,
** in GB/s: up to 91 on an H100's PCIe 5 link, in about a millisecond.
** cuda/multi.c measures one lane at a time (GPUs may share an uplink). */
jitc_status cuda_measure(jitc_context *ctx, CudaState *S, CudaDev *D) {
  if (D->rate > 0)
    return JITC_OK;
  jitc_status st = cuda_ensure_slots(ctx, S, D);
  if (st != JITC_OK)
    return st;
  CudaApi *A = &S->api;
  size_t bytes = (size_t)8 << 20, huge = (size_t)2 << 20;
  char *h = aligned_alloc(huge, 2 * bytes);
  CUdeviceptr d = 0;
  CUresult r = h ? A->cuMemHostRegister(h, 2 * bytes, 0) : CUDA_ERROR_OUT_OF_MEMORY;
  bool registered = r == CUDA_SUCCESS;
  if (r == CUDA_SUCCESS)
    r = A->cuMemAlloc(&d, 2 * bytes);
  CudaSlot *s0 = &D->slot[0], *s1 = &D->slot[1];
  double best = 0;
  for (int rep = 0; rep < 3 && r == CUDA_SUCCESS; rep++) {
    r = A->cuEventRecord(s0->ev[0], s0->stream);
    if (r == CUDA_SUCCESS)
      r = A->cuStreamWaitEvent(s1->stream, s0->ev[0], 0);
    if (r == CUDA_SUCCESS)
      r = A->cuMemcpyHtoDAsync(d, h, bytes, s0->stream);
    if (r == CUDA_SUCCESS)
      r = A->cuMemcpyDtoHAsync(h + bytes, d + bytes, bytes, s1->stream);
    if (r == CUDA_SUCCESS)
      r = A->cuEventRecord(s1->ev[0], s1->stream);
    if (r == CUDA_SUCCESS)
      r = A->cuStreamWaitEvent(s0->stream, s1->ev[0], 0);
    if (r == CUDA_SUCCESS)
      r = A->cuEventRecord(s0->ev[1], s0->stream);
    if (r == CUDA_SUCCESS)
      r = A->cuEventSynchronize(s0->ev[1]);
    double ms = r == CUDA_SUCCESS ? cuda_elapsed(S, s0->ev[0], s0->ev[1]) : 0;
    double rate = ms > 0 ? 2.0 * (double)bytes / ms / 1e6 : 0;
    best = rate > best ? rate : best;
  }
  if (d)
    A->cuMemFree(d);
  if (registered)
    A->cuMemHostUnregister(h);
  free(h);
  if (r != CUDA_SUCCESS)
    return cuda_fail(ctx, S, r, "measuring the GPU's link");
  D->rate = best > 0 ? best : 1; /* no timing (a driver without events' times): all equal */
  return JITC_OK;
}

float cuda_elapsed(CudaState *S, CUevent a, CUevent b) {
  float ms = 0;
  if (S->api.cuEventElapsedTime(&ms, a, b) != CUDA_SUCCESS)
    return 0;
  return ms;
}

jitc_status cuda_fail(jitc_context *ctx, CudaState *S, CUresult r, const char *what) {
  return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                   "cuda: %s failed (%s)", what, cuda_result_name(&S->api, r));
}

/* The current context is the driver's per-thread state, which the caller
** may be using (a context of its own, cuCtxCreate): the entry points save
** it and set it back, as CUDA libraries do.  Get and set rather than push
** and pop: when the caller's context is jitc's own, the common case, one
** cheap call is all it costs. */
CUresult cuda_enter(CudaState *S, CUcontext cx, CudaCurrent *c) {
  c->saved = NULL;
  CUresult r = S->api.cuCtxGetCurrent(&c->saved);
  if (r != CUDA_SUCCESS)
    c->saved = NULL;
  c->now = c->saved;
  return r != CUDA_SUCCESS || !cx ? r : cuda_switch(S, c, cx);
}

CUresult cuda_switch(CudaState *S, CudaCurrent *c, CUcontext cx) {
  if (cx == c->now)
    return CUDA_SUCCESS;
  CUresult r = S->api.cuCtxSetCurrent(cx);
  if (r == CUDA_SUCCESS)
    c->now = cx;
  return r;
}

void cuda_leave(CudaState *S, const CudaCurrent *c) {
  if (c->now != c->saved)
    S->api.cuCtxSetCurrent(c->saved);
}

jitc_status cuda_enter_device(jitc_context *ctx, CudaState *S, CudaCurrent *c) {
  CUresult r = cuda_enter(S, S->pctx, c);
  return r == CUDA_SUCCESS ? JITC_OK : cuda_fail(ctx, S, r, "making the device's context current");
}
