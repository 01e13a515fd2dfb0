/*
** devptr_gpu.c -- jitc_run_device on a GPU: kernels on device memory this
** program allocates itself with the Driver API, on its own stream, the
** legacy default stream and the per-thread one.
**
**   devptr_gpu check   everything below
**   devptr_gpu quick   small sizes only, for compute-sanitizer
**
** Every result is compared bit for bit with the same program run by interp
** on host copies.  Checks: sizes 0, 1, odd tails and a million, arrays one
** element off the vector alignment, launches cut into slices, a split
** program on two streams at once (its shared scratch), float32, float64,
** int32, int64 and bool, scalars; refusals with the right status and no
** crash (an address off its element size, a host pointer, page-locked host
** memory, freed memory, a kernel of another target, arrays on two devices
** and a stream of another device where there are two GPUs); managed memory;
** the caller's current context unchanged (the primary one, none); and a run
** queued behind a long memset on the stream: the call returns while the
** stream is still busy (no hidden wait) and the kernel sees the memset's
** bytes (ordered after it).  Then every entry point that touches the driver
** (compiling, jitc_run, the buffers, jitc_run_buffers, jitc_run_device,
** freeing kernels and the context), called from a context the program made
** itself (cuCtxCreate) and with none current, must leave that context (or
** none) current.  Prints "ok NAME", "FAIL NAME: why", "skip
** NAME: why" and "time NAME value" (tests/run.sh protocol).
*/
#include "../../src/jitc_int.h"
#include "../../src/cuda/cuda.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int nfail;
static bool quick;

#define CHECK(name, cond, ...)                                                               \
  do {                                                                                       \
    if (cond)                                                                                \
      printf("ok devptr.%s\n", name);                                                        \
    else {                                                                                   \
      printf("FAIL devptr.%s: ", name);                                                      \
      printf(__VA_ARGS__);                                                                   \
      printf("\n");                                                                          \
      nfail++;                                                                               \
    }                                                                                        \
  } while (0)

static CudaApi A;
static CUcontext prim0; /* device 0's primary context */
static int ndev;
/* Device 1's primary context, retained by other_device: jitc loads the
** kernel there, so it must outlive the jitc context (jitc.h). */
static CUdevice dev1;
static bool held1;
/* Driver calls jitc does not use, found by their plain names. */
static CUresult (*StreamQuery)(CUstream s);
static CUresult (*MemAllocManaged)(CUdeviceptr *p, size_t bytes, unsigned flags);
static CUresult (*CtxCreate)(CUcontext *cx, unsigned flags, CUdevice dev);
static CUresult (*CtxDestroy)(CUcontext cx);
enum { CU_MEM_ATTACH_GLOBAL = 1 };
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static jitc_kernel *compile(jitc_context *ctx, const char *src, const jitc_array_decl *d, int nd,
                            const jitc_scalar_decl *sd, int ns, jitc_target t) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, nd, sd, ns, &o, &k) != JITC_OK) {
    printf("FAIL devptr.compile: %s: %s\n", jitc_target_name(t), jitc_errmsg(ctx));
    nfail++;
  }
  return k;
}

/* Deterministic values, no NaN (so bytes compare), within each type. */
static void fill(void *p, jitc_dtype t, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next();
    double d = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 200;
    switch (t) {
    case JITC_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
    case JITC_INT32: ((int32_t *)p)[i] = (int32_t)(r % 2001) - 1000; break;
    case JITC_INT64: ((int64_t *)p)[i] = (int64_t)(r >> 1) - (int64_t)(r >> 2); break;
    case JITC_FLOAT32: ((float *)p)[i] = (float)d; break;
    default: ((double *)p)[i] = d; break;
    }
  }
}

/* One program's arrays: on the device (cuMemAlloc'd, `shift` elements in),
** and two host copies: what the device returned, and interp's. */
typedef struct Arrays {
  int na;
  size_t es[16];
  CUdeviceptr base[16];
  uint64_t ptr[16];
  void *dev_out[16], *ref[16];
  jitc_role role[16];
} Arrays;

static bool arrays_new(Arrays *R, const jitc_kernel *k, int64_t n, int shift) {
  memset(R, 0, sizeof *R);
  R->na = jitc_kernel_array_count(k);
  for (int a = 0; a < R->na; a++) {
    const char *name;
    jitc_dtype t;
    jitc_kernel_array(k, a, &name, &R->role[a], &t);
    R->es[a] = jitc_dtype_size(t);
    size_t bytes = ((size_t)n + (size_t)shift + 1) * R->es[a];
    if (A.cuMemAlloc(&R->base[a], bytes) != CUDA_SUCCESS)
      return false;
    R->ptr[a] = R->base[a] + (CUdeviceptr)shift * R->es[a];
    R->ref[a] = calloc((size_t)n + 1, R->es[a]);
    R->dev_out[a] = calloc((size_t)n + 1, R->es[a]);
    A.cuMemsetD8Async(R->base[a], 0xAB, bytes, NULL);
    if (R->role[a] != JITC_OUTPUT) {
      fill(R->ref[a], t, n);
      A.cuMemcpyHtoD(R->ptr[a], R->ref[a], (size_t)n * R->es[a]);
    }
  }
  return true;
}

static void arrays_free(Arrays *R) {
  for (int a = 0; a < R->na; a++) {
    A.cuMemFree(R->base[a]);
    free(R->ref[a]);
    free(R->dev_out[a]);
  }
}

/* Copies the device's results back on stream s, waits, runs interp on the
** host copies and compares: NULL when every byte agrees, else the array. */
static const char *arrays_compare(Arrays *R, jitc_context *ctx, const jitc_kernel *ref,
                                  int64_t n, const jitc_value *vals, CUstream s) {
  for (int a = 0; a < R->na; a++)
    A.cuMemcpyDtoHAsync(R->dev_out[a], R->ptr[a], (size_t)n * R->es[a], s);
  if (A.cuStreamSynchronize(s) != CUDA_SUCCESS || A.cuCtxSynchronize() != CUDA_SUCCESS)
    return "(the stream failed)";
  if (jitc_run(ctx, ref, n, R->ref, vals, NULL) != JITC_OK)
    return jitc_errmsg(ctx);
  const char *name;
  for (int a = 0; a < R->na; a++)
    if (memcmp(R->dev_out[a], R->ref[a], (size_t)n * R->es[a])) {
      jitc_kernel_array(ref, a, &name, NULL, NULL);
      return name;
    }
  return NULL;
}

typedef struct Case {
  const char *label, *src;
  jitc_array_decl d[4];
  int nd;
  jitc_scalar_decl sd[2];
  int ns;
  jitc_value v[2];
} Case;

static Case cases[] = {
    {"inplace_f64", "a[i] += 1", {{"a", JITC_FLOAT64}}, 1, {{0}}, 0, {{0}}},
    {"axpy_f32", "c = a * alpha + b", {{"a", JITC_FLOAT32}, {"b", JITC_FLOAT32}}, 2,
     {{"alpha", JITC_FLOAT64, 1}}, 1, {{JITC_FLOAT64, {.f = 2.5}}}},
    {"int32", "d = (x * 3) ^ y + k; e = x // 7 - y % 5", {{"x", JITC_INT32}, {"y", JITC_INT32}},
     2, {{"k", JITC_INT64, 1}}, 1, {{JITC_INT64, {.i = -17}}}},
    {"int64_index", "o = a * 2 + i; a[i] = a - 1", {{"a", JITC_INT64}}, 1, {{0}}, 0, {{0}}},
    {"bool", "m = p & ~q; r = where(p, 1.5, 2.5)", {{"p", JITC_BOOL}, {"q", JITC_BOOL}}, 2, {{0}},
     0, {{0}}},
    {"split", NULL, {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}}, 2, {{0}}, 0, {{0}}},
};
#define NCASES (int)(sizeof cases / sizeof *cases)

/* Case c over n elements, `shift` elements into the allocations, on s. */
static void run_case(jitc_context *ctx, const Case *c, jitc_kernel *kd, jitc_kernel *kr, int64_t n,
                     int shift, CUstream s, const char *how) {
  char label[128];
  snprintf(label, sizeof label, "%s.n%lld%s%s", c->label, (long long)n, shift ? ".shift" : "",
           how);
  Arrays R;
  if (!arrays_new(&R, kd, n, shift)) {
    CHECK(label, 0, "cannot allocate");
    arrays_free(&R);
    return;
  }
  CUcontext before = NULL, after = NULL;
  A.cuCtxGetCurrent(&before);
  jitc_status st = jitc_run_device(ctx, kd, n, R.ptr, c->v, s);
  A.cuCtxGetCurrent(&after);
  const char *bad = st == JITC_OK ? arrays_compare(&R, ctx, kr, n, c->v, s) : jitc_errmsg(ctx);
  CHECK(label, st == JITC_OK && !bad && before == after, "status %d, %s differs%s", (int)st,
        bad ? bad : "nothing", before == after ? "" : "; the current context changed");
  arrays_free(&R);
}

static void check_cases(jitc_context *ctx, CUstream s) {
  int64_t sizes[] = {0, 1, 7, 4097, 1000003};
  int nsizes = quick ? 4 : 5;
  for (int c = 0; c < NCASES; c++) {
    Case *C = &cases[c];
    const char *src = C->src ? C->src : many_statements();
    jitc_kernel *kd = compile(ctx, src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_CUDA);
    jitc_kernel *kr = compile(ctx, src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_INTERP);
    if (kd && kr)
      for (int z = 0; z < nsizes; z++)
        for (int shift = 0; shift < 2; shift++)
          run_case(ctx, C, kd, kr, sizes[z], shift, s, "");
    jitc_kernel_free(kd);
    jitc_kernel_free(kr);
  }
}

/* The same kernels on the legacy default stream (NULL), the per-thread
** one, and with no context current (jitc makes the arrays' current and
** then none again). */
static void check_streams(jitc_context *ctx) {
  const Case *C = &cases[1];
  jitc_kernel *kd = compile(ctx, C->src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_CUDA);
  jitc_kernel *kr = compile(ctx, C->src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_INTERP);
  if (!kd || !kr)
    return;
  run_case(ctx, C, kd, kr, 100003, 0, NULL, ".legacy_stream");
  run_case(ctx, C, kd, kr, 100003, 1, CU_STREAM_PER_THREAD, ".per_thread_stream");
  Arrays R;
  int64_t n = 4099;
  if (arrays_new(&R, kd, n, 0)) {
    A.cuCtxSynchronize();
    A.cuCtxSetCurrent(NULL);
    jitc_status st = jitc_run_device(ctx, kd, n, R.ptr, C->v, NULL);
    CUcontext after = (CUcontext)1;
    A.cuCtxGetCurrent(&after);
    A.cuCtxSetCurrent(prim0);
    const char *bad = st == JITC_OK ? arrays_compare(&R, ctx, kr, n, C->v, NULL) : jitc_errmsg(ctx);
    CHECK("no_current_context", st == JITC_OK && !bad && after == NULL,
          "status %d, %s; current after: %p", (int)st, bad ? bad : "same", (void *)after);
  }
  arrays_free(&R);
  jitc_kernel_free(kd);
  jitc_kernel_free(kr);
}

/* Launches cut into slices of 4096 elements (the launch path's 2^30 made
** small), in a context of its own: `i` and the offsets must carry on. */
static void check_slices(void) {
  jitc_context *ctx = jitc_context_new();
  const Case *C = &cases[3];
  jitc_kernel *kd = compile(ctx, C->src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_CUDA);
  jitc_kernel *kr = compile(ctx, C->src, C->d, C->nd, C->sd, C->ns, JITC_TARGET_INTERP);
  if (kd && kr) {
    CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
    S->slice = 4096;
    run_case(ctx, C, kd, kr, 100003, 1, NULL, ".slices");
  }
  jitc_kernel_free(kd);
  jitc_kernel_free(kr);
  jitc_context_free(ctx);
}

/* A split program on two streams at once: both runs use the context's one
** scratch, so the second must wait for the first on the device. */
static void check_split_streams(jitc_context *ctx) {
  const Case *C = &cases[5];
  jitc_kernel *kd = compile(ctx, many_statements(), C->d, C->nd, NULL, 0, JITC_TARGET_CUDA);
  jitc_kernel *kr = compile(ctx, many_statements(), C->d, C->nd, NULL, 0, JITC_TARGET_INTERP);
  CUstream s1, s2;
  A.cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  A.cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  int64_t n = quick ? 5000 : 3000001;
  Arrays R1, R2;
  if (kd && kr && arrays_new(&R1, kd, n, 0) && arrays_new(&R2, kd, n, 1)) {
    A.cuCtxSynchronize();
    jitc_status st1 = jitc_run_device(ctx, kd, n, R1.ptr, NULL, s1);
    jitc_status st2 = jitc_run_device(ctx, kd, n, R2.ptr, NULL, s2);
    const char *b1 = arrays_compare(&R1, ctx, kr, n, NULL, s1);
    const char *b2 = arrays_compare(&R2, ctx, kr, n, NULL, s2);
    CHECK("split.two_streams", !st1 && !st2 && !b1 && !b2, "status %d %d, %s / %s differ",
          (int)st1, (int)st2, b1 ? b1 : "-", b2 ? b2 : "-");
    arrays_free(&R1);
    arrays_free(&R2);
  }
  A.cuStreamDestroy(s1);
  A.cuStreamDestroy(s2);
  jitc_kernel_free(kd);
  jitc_kernel_free(kr);
}

/* The call returns while its stream is still busy, and the kernel runs
** after what was queued before it. */
static void check_ordering(jitc_context *ctx) {
  if (quick)
    return;
  jitc_array_decl d[] = {{"a", JITC_FLOAT64}};
  jitc_kernel *k = compile(ctx, "a[i] += 1", d, 1, NULL, 0, JITC_TARGET_CUDA);
  size_t big = (size_t)4 << 30;
  int64_t n = 1 << 22;
  CUdeviceptr blk = 0, a = 0;
  CUstream s;
  A.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  if (!k || A.cuMemAlloc(&blk, big) || A.cuMemAlloc(&a, (size_t)n * 8)) {
    printf("skip devptr.ordering: cannot allocate %zu bytes\n", big);
  } else {
    double *h = malloc((size_t)n * 8);
    for (int64_t e = 0; e < n; e++)
      h[e] = 41;
    A.cuMemcpyHtoD(a, h, (size_t)n * 8); /* a holds 41.0: the memset below makes it 0.0 */
    A.cuCtxSynchronize();
    for (int r = 0; r < 6; r++)               /* about 24 GB of writes: milliseconds */
      A.cuMemsetD8Async(blk, (unsigned char)r, big, s);
    A.cuMemsetD8Async(a, 0, (size_t)n * 8, s);
    uint64_t p[] = {a};
    double t0 = now();
    jitc_status st = jitc_run_device(ctx, k, n, p, NULL, s);
    double call = now() - t0;
    CUresult busy = StreamQuery ? StreamQuery(s) : CUDA_ERROR_NOT_READY;
    A.cuMemcpyDtoHAsync(h, a, (size_t)n * 8, s);
    A.cuStreamSynchronize(s);
    int64_t bad = 0;
    for (int64_t e = 0; e < n; e++)
      bad += h[e] != 1.0;
    CHECK("ordering.no_wait", st == JITC_OK && busy == CUDA_ERROR_NOT_READY,
          "status %d; the stream was %s when the call returned", (int)st,
          busy == CUDA_SUCCESS ? "idle: the call waited" : "in error");
    CHECK("ordering.after_memset", st == JITC_OK && bad == 0,
          "%lld elements are not 0 + 1 (41 + 1: ran before the memset)", (long long)bad);
    printf("time devptr_call_behind_busy_stream_ms %.3f\n", call);
    free(h);
  }
  if (blk)
    A.cuMemFree(blk);
  if (a)
    A.cuMemFree(a);
  A.cuStreamDestroy(s);
  jitc_kernel_free(k);
}

/* Refusals: the status, the array's name in the message, no crash, the
** current context unchanged. */
static void refused(jitc_context *ctx, const char *label, jitc_kernel *k, const uint64_t *p,
                    jitc_status want, const char *text, CUstream s) {
  CUcontext before = NULL, after = NULL;
  A.cuCtxGetCurrent(&before);
  jitc_status st = jitc_run_device(ctx, k, 16, p, NULL, s);
  A.cuCtxGetCurrent(&after);
  CHECK(label, st == want && strstr(jitc_errmsg(ctx), text) && before == after,
        "status %d (want %d): %s", (int)st, (int)want, jitc_errmsg(ctx));
}

static void check_refusals(jitc_context *ctx) {
  jitc_array_decl d[] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = compile(ctx, "c = a + b", d, 2, NULL, 0, JITC_TARGET_CUDA);
  jitc_kernel *ki = compile(ctx, "c = a + b", d, 2, NULL, 0, JITC_TARGET_INTERP);
  if (!k || !ki)
    return;
  int ia = jitc_kernel_find_array(k, "a"), ib = jitc_kernel_find_array(k, "b"),
      ic = jitc_kernel_find_array(k, "c");
  CUdeviceptr da, db, dc, gone;
  A.cuMemAlloc(&da, 1024);
  A.cuMemAlloc(&db, 1024);
  A.cuMemAlloc(&dc, 1024);
  A.cuMemAlloc(&gone, 1024);
  A.cuMemFree(gone);
  uint64_t p[3];
  p[ia] = da, p[ib] = db, p[ic] = dc;
  uint64_t q[3];
  memcpy(q, p, sizeof q);
  q[ib] = db + 4;
  refused(ctx, "refuse.misaligned", k, q, JITC_E_USAGE, "array 'b' is not aligned", NULL);
  double *host = calloc(64, 8);
  memcpy(q, p, sizeof q);
  q[ic] = (uint64_t)(uintptr_t)host;
  refused(ctx, "refuse.host_pointer", k, q, JITC_E_INPUT, "array 'c'", NULL);
  void *pinned = NULL;
  if (A.cuMemHostAlloc(&pinned, 1024, 0) == CUDA_SUCCESS) {
    memcpy(q, p, sizeof q);
    q[ia] = (uint64_t)(uintptr_t)pinned;
    refused(ctx, "refuse.pinned_host", k, q, JITC_E_INPUT, "page-locked", NULL);
    A.cuMemFreeHost(pinned);
  }
  memcpy(q, p, sizeof q);
  q[ib] = gone;
  refused(ctx, "refuse.freed", k, q, JITC_E_INPUT, "array 'b'", NULL);
  refused(ctx, "refuse.interp_kernel", ki, p, JITC_E_USAGE, "compiled for interp", NULL);
  /* Managed memory is taken (a small allocation: see the device notes). */
  CUdeviceptr mg = 0;
  if (MemAllocManaged && MemAllocManaged(&mg, 16 * 8, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS) {
    double *m = (double *)(uintptr_t)mg;
    for (int e = 0; e < 16; e++)
      m[e] = e;
    A.cuMemsetD8Async(db, 0, 16 * 8, NULL);
    memcpy(q, p, sizeof q);
    q[ia] = mg;
    jitc_status st = jitc_run_device(ctx, k, 16, q, NULL, NULL);
    A.cuCtxSynchronize();
    double out[16];
    A.cuMemcpyDtoH(out, dc, sizeof out);
    int bad = 0;
    for (int e = 0; e < 16; e++)
      bad += out[e] != e;
    CHECK("managed", st == JITC_OK && !bad, "status %d: %s; %d wrong", (int)st, jitc_errmsg(ctx),
          bad);
    A.cuMemFree(mg);
  } else {
    printf("skip devptr.managed: no managed memory\n");
  }
  /* Another device: arrays there run there; arrays on two are refused. */
  if (ndev < 2) {
    printf("skip devptr.other_device: one GPU\n");
  } else {
    CUcontext prim1;
    A.cuDeviceGet(&dev1, 1);
    held1 = A.cuDevicePrimaryCtxRetain(&prim1, dev1) == CUDA_SUCCESS;
    A.cuCtxSetCurrent(prim1);
    CUdeviceptr x1, y1, z1;
    CUstream s1;
    A.cuMemAlloc(&x1, 1024), A.cuMemAlloc(&y1, 1024), A.cuMemAlloc(&z1, 1024);
    A.cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    double h[16];
    for (int e = 0; e < 16; e++)
      h[e] = e;
    A.cuMemcpyHtoD(x1, h, sizeof h);
    A.cuMemcpyHtoD(y1, h, sizeof h);
    A.cuCtxSetCurrent(prim0);
    memcpy(q, p, sizeof q);
    q[ib] = y1;
    refused(ctx, "refuse.two_devices", k, q, JITC_E_INPUT, "device", NULL);
    q[ia] = x1, q[ic] = z1;
    refused(ctx, "refuse.stream_of_device1_for_device0_arrays", k, p, JITC_E_USAGE, "stream", s1);
    /* From device 0's context: the arrays' own (device 1) is used. */
    jitc_status st = jitc_run_device(ctx, k, 16, q, NULL, s1);
    CUcontext cur = NULL;
    A.cuCtxGetCurrent(&cur);
    A.cuCtxSetCurrent(prim1);
    A.cuStreamSynchronize(s1);
    double out[16];
    A.cuMemcpyDtoH(out, z1, sizeof out);
    int bad = 0;
    for (int e = 0; e < 16; e++)
      bad += out[e] != 2.0 * e;
    CHECK("other_device", st == JITC_OK && !bad && cur == prim0, "status %d: %s; %d wrong",
          (int)st, jitc_errmsg(ctx), bad);
    A.cuMemFree(x1), A.cuMemFree(y1), A.cuMemFree(z1);
    A.cuStreamDestroy(s1);
    A.cuCtxSetCurrent(prim0);
  }
  free(host);
  A.cuMemFree(da), A.cuMemFree(db), A.cuMemFree(dc);
  jitc_kernel_free(k);
  jitc_kernel_free(ki);
}

/* After a jitc call the context current on the thread must be `want`, the
** one the program had; when it is not, `want` is made current again, so
** that each later call is judged on its own. */
static const char *named(const char *label, const char *what) {
  static char name[96];
  snprintf(name, sizeof name, "%s.%s", label, what);
  return name;
}

static void same_context(const char *label, const char *call, CUcontext want) {
  CUcontext cur = (CUcontext)1;
  A.cuCtxGetCurrent(&cur);
  CHECK(named(label, call), cur == want, "the call left context %p current, the program had %p",
        (void *)cur, (void *)want);
  if (cur != want)
    A.cuCtxSetCurrent(want);
}

/* Every entry point that reaches the driver, in a fresh jitc context (so
** the first call also starts the device), with the program's own context
** current (made with cuCtxCreate: not the primary context jitc works in) or
** with none current.  Results are checked too: the work must still run in
** jitc's context, or for jitc_run_device in the arrays'. */
static void check_caller_context(bool own) {
  const char *label = own ? "caller_context.own" : "caller_context.none";
  CUdevice d0;
  A.cuDeviceGet(&d0, 0);
  CUcontext want = NULL;
  if (own && (!CtxCreate || !CtxDestroy || CtxCreate(&want, 0, d0) != CUDA_SUCCESS)) {
    printf("skip devptr.%s: cannot create a CUDA context\n", label);
    return;
  }
  /* The arrays for jitc_run_device, in the program's context (prim0 for none). */
  int64_t n = 5003;
  size_t bytes = (size_t)n * 8;
  double *h[4], *out = malloc(bytes);
  for (int q = 0; q < 4; q++) {
    h[q] = malloc(bytes);
    for (int64_t e = 0; e < n; e++)
      h[q][e] = (double)(e % 1000) + q;
  }
  CUdeviceptr dev[2] = {0, 0};
  A.cuMemAlloc(&dev[0], bytes), A.cuMemAlloc(&dev[1], bytes);
  A.cuMemcpyHtoD(dev[0], h[0], bytes), A.cuMemcpyHtoD(dev[1], h[1], bytes);
  if (!own) {
    A.cuCtxSynchronize();
    A.cuCtxSetCurrent(NULL); /* pops prim0: nothing current */
  }
  jitc_context *ctx = jitc_context_new();
  CHECK(named(label, "available_ok"), jitc_target_available(ctx, JITC_TARGET_CUDA) == JITC_OK, "%s",
        jitc_errmsg(ctx));
  same_context(label, "available", want);
  jitc_array_decl d[] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = compile(ctx, "a[i] += b", d, 2, NULL, 0, JITC_TARGET_CUDA);
  same_context(label, "compile", want);
  jitc_kernel *ks = compile(ctx, many_statements(), d, 2, NULL, 0, JITC_TARGET_CUDA);
  same_context(label, "compile_split", want);
  if (!k || !ks)
    goto done;
  int ia = jitc_kernel_find_array(k, "a"), ib = jitc_kernel_find_array(k, "b");
  /* Under compute-sanitizer (quick) two steps are left out, since it reports
  ** the driver calls that fail there by design: jitc_run asks whether each
  ** host array is pinned (cuMemHostGetFlags fails on pageable memory), and
  ** the buffer too large for the device. */
  jitc_status st;
  int64_t bad = 0;
  if (!quick) { /* jitc_run on host arrays: a = h0 + h1 */
    void *host[2];
    host[ia] = h[2], host[ib] = h[1];
    memcpy(h[2], h[0], bytes);
    st = jitc_run(ctx, k, n, host, NULL, NULL);
    same_context(label, "run", want);
    for (int64_t e = 0; e < n; e++)
      bad += h[2][e] != h[0][e] + h[1][e];
    CHECK(named(label, "run_result"), st == JITC_OK && !bad, "jitc_run: status %d, %lld wrong",
          (int)st, (long long)bad);
  }
  /* Buffers: a and b uploaded, a += b twice (the plain and the split kernel). */
  jitc_buffer *buf[4] = {NULL, NULL, NULL, NULL};
  for (int q = 0; q < 4; q++) {
    st = jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT64, n, &buf[q]);
    same_context(label, "buffer_new", want);
  }
  if (!quick) {
    jitc_buffer *big = NULL;
    st = jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT64, (int64_t)1 << 40, &big);
    CHECK(named(label, "out_of_memory_status"), st == JITC_E_NOMEM && !big,
          "a buffer of 2^40 doubles: status %d", (int)st);
    same_context(label, "buffer_new_out_of_memory", want);
  }
  jitc_buffer_upload(ctx, buf[0], h[0], n);
  same_context(label, "buffer_upload", want);
  jitc_buffer_upload(ctx, buf[1], h[1], n);
  jitc_buffer *kb[2];
  kb[ia] = buf[0], kb[ib] = buf[1];
  st = jitc_run_buffers(ctx, k, n, kb, NULL, NULL);
  same_context(label, "run_buffers", want);
  jitc_buffer *sb[4];
  for (int q = 0; q < 4; q++)
    sb[q] = buf[q];
  sb[jitc_kernel_find_array(ks, "a")] = buf[0], sb[jitc_kernel_find_array(ks, "b")] = buf[1];
  sb[jitc_kernel_find_array(ks, "c")] = buf[2], sb[jitc_kernel_find_array(ks, "d")] = buf[3];
  jitc_status st2 = jitc_run_buffers(ctx, ks, n, sb, NULL, NULL);
  same_context(label, "run_buffers_split", want);
  jitc_buffer_download(ctx, buf[0], out, n);
  same_context(label, "buffer_download", want);
  bad = 0;
  for (int64_t e = 0; e < n; e++)
    bad += out[e] != h[0][e] + h[1][e];
  CHECK(named(label, "buffers_result"), st == JITC_OK && st2 == JITC_OK && !bad,
        "buffers: status %d %d, %lld wrong", (int)st, (int)st2, (long long)bad);
  for (int q = 0; q < 4; q++) {
    jitc_buffer_free(buf[q]);
    same_context(label, "buffer_free", want);
  }
  /* jitc_run_device on the program's arrays: runs in their context. */
  uint64_t p[2];
  p[ia] = dev[0], p[ib] = dev[1];
  st = jitc_run_device(ctx, k, n, p, NULL, NULL);
  same_context(label, "run_device", want);
  if (!own)
    A.cuCtxSetCurrent(prim0);
  A.cuCtxSynchronize();
  A.cuMemcpyDtoH(out, dev[0], bytes);
  if (!own)
    A.cuCtxSetCurrent(NULL);
  bad = 0;
  for (int64_t e = 0; e < n; e++)
    bad += out[e] != h[0][e] + h[1][e];
  CHECK(named(label, "run_device_result"), st == JITC_OK && !bad,
        "jitc_run_device: status %d, %lld wrong", (int)st, (long long)bad);
done:
  jitc_kernel_free(ks); /* the split kernel holds device scratch */
  same_context(label, "kernel_free", want);
  jitc_kernel_free(k);
  jitc_context_free(ctx); /* unloads the modules, in jitc's context and the arrays' */
  same_context(label, "context_free", want);
  if (!own)
    A.cuCtxSetCurrent(prim0);
  A.cuMemFree(dev[0]), A.cuMemFree(dev[1]);
  if (own)
    CtxDestroy(want); /* pops it: prim0 is current again */
  for (int q = 0; q < 4; q++)
    free(h[q]);
  free(out);
}

/* Per-call cost on a warm kernel and a small array (the queueing only). */
static void time_calls(jitc_context *ctx, CUstream s) {
  jitc_array_decl d[] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = compile(ctx, "c = 2 * a + b", d, 2, NULL, 0, JITC_TARGET_CUDA);
  CUdeviceptr m;
  if (!k || A.cuMemAlloc(&m, 3 * 8000)) {
    jitc_kernel_free(k);
    return;
  }
  uint64_t p[] = {m, m + 8000, m + 16000};
  int reps = 2000;
  jitc_run_device(ctx, k, 1000, p, NULL, s);
  A.cuStreamSynchronize(s);
  double t0 = now();
  for (int r = 0; r < reps; r++)
    jitc_run_device(ctx, k, 1000, p, NULL, s);
  double us = (now() - t0) * 1e3 / reps;
  A.cuStreamSynchronize(s);
  printf("time devptr_call_1000_f64_us %.2f\n", us);
  A.cuMemFree(m);
  /* jitc_run_buffers (it waits for its kernel), with the primary context
  ** current and with one of the program's own (jitc switches and back). */
  jitc_buffer *b[3] = {NULL, NULL, NULL};
  for (int q = 0; q < 3; q++)
    jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT64, 1000, &b[q]);
  CUdevice d0;
  CUcontext mine = NULL;
  A.cuDeviceGet(&d0, 0);
  for (int own = 0; own < 2 && b[0] && b[1] && b[2]; own++) {
    if (own && (!CtxCreate || CtxCreate(&mine, 0, d0) != CUDA_SUCCESS))
      break;
    jitc_run_buffers(ctx, k, 1000, b, NULL, NULL);
    t0 = now();
    for (int r = 0; r < reps; r++)
      jitc_run_buffers(ctx, k, 1000, b, NULL, NULL);
    printf("time buffers_call_1000_f64_%s_us %.2f\n", own ? "own_context" : "primary_context",
           (now() - t0) * 1e3 / reps);
  }
  if (mine) {
    CtxDestroy(mine);
    A.cuCtxSetCurrent(prim0);
  }
  for (int q = 0; q < 3; q++)
    jitc_buffer_free(b[q]);
  jitc_kernel_free(k);
}

int main(int argc, char **argv) {
  quick = argc > 1 && !strcmp(argv[1], "quick");
  char err[512];
  if (cuda_load_driver(&A, NULL, err, sizeof err)) {
    printf("skip devptr: %s\n", err);
    return 0;
  }
  *(void **)&StreamQuery = dlsym(A.libcuda, "cuStreamQuery");
  *(void **)&MemAllocManaged = dlsym(A.libcuda, "cuMemAllocManaged");
  *(void **)&CtxCreate = dlsym(A.libcuda, "cuCtxCreate_v2");
  *(void **)&CtxDestroy = dlsym(A.libcuda, "cuCtxDestroy_v2");
  A.cuDeviceGetCount(&ndev);
  CUdevice d0;
  A.cuDeviceGet(&d0, 0);
  A.cuDevicePrimaryCtxRetain(&prim0, d0);
  A.cuCtxSetCurrent(prim0);
  jitc_context *ctx = jitc_context_new();
  CUstream s;
  A.cuStreamCreate(&s, 0);
  check_cases(ctx, s);
  check_streams(ctx);
  check_slices();
  check_split_streams(ctx);
  check_ordering(ctx);
  check_refusals(ctx);
  check_caller_context(false);
  check_caller_context(true);
  if (!quick)
    time_calls(ctx, s);
  A.cuStreamSynchronize(s);
  A.cuStreamDestroy(s);
  jitc_context_free(ctx);
  if (held1)
    A.cuDevicePrimaryCtxRelease(dev1);
  A.cuDevicePrimaryCtxRelease(d0);
  return nfail ? 1 : 0;
}
