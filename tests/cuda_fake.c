/*
** cuda_fake.c -- a stand-in for the CUDA driver and NVRTC, for testing the
** cuda target's host pipeline on a machine without a GPU
** (tests/t_host_pipe.sh loads it as JITC_LIBCUDA and JITC_LIBNVRTC).
**
** "Device memory" is host memory; a kernel does nothing, so an in-place
** program gives back its inputs: what the test checks is that every byte
** went up and came back to its place.  Work queued on a stream is not done
** when it is queued but when something waits for it (an event or stream
** synchronisation, a query that the fake decides has found it done, one in
** three, or a blocking copy), in the order of its stream.  A pipeline that
** reads its staging before the download that fills it has been waited
** for, or refills it before the upload that reads it has run, gets wrong
** data here.  Pinned memory (cuMemHostAlloc, cuMemHostRegister) is
** recorded, so that cuPointerGetAttributes answers as the driver does.
**
** $FAKE_CUDA_DEVICES devices (1 by default), each with a primary context of
** its own, but device $FAKE_CUDA_BUSY, whose context cannot be made.  Each launch of a program's first kernel (jitc_k32, jitc_g0) is
** logged with the device it ran on and the elements it covered, which
** fake_launches() gives back: where a run put each element.  A test may
** give jitc_k32 a body of its own (fake_kernel()), run in its stream's
** order on the launch's device pointers (and a copy of the bytes of one
** more parameter: a kernel's jitc_nd), so that what an output receives
** tells where each input's elements were; and the kernels of reductions
** over axes a body (fake_axis_kernel()), run alike on copies of their
** parameters.  fake_compiles() counts NVRTC's compiles.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum { OK = 0, INVALID = 1, NOT_READY = 600, ALREADY_REGISTERED = 712, NOT_REGISTERED = 713 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- memory the fake knows ---- */

typedef struct Range {
  char *p;
  size_t n;
  int type; /* 1 host (pinned), 2 device */
  int registered;
} Range;
static Range ranges[4096];
static int nranges;

static void add_range(void *p, size_t n, int type, int reg) {
  if (nranges < 4096)
    ranges[nranges++] = (Range){p, n, type, reg};
}
static Range *find(const void *p) {
  for (int i = 0; i < nranges; i++)
    if ((const char *)p >= ranges[i].p && (const char *)p < ranges[i].p + ranges[i].n)
      return &ranges[i];
  return NULL;
}
static void drop(Range *r) { *r = ranges[--nranges]; }

/* ---- streams and events ---- */

enum { OP_COPY, OP_SET, OP_RECORD, OP_KERNEL, OP_AXIS };
enum { KPTRS = 8, KND = 1024 };
typedef void (*KernelFn)(void *arg, long long base, unsigned n, const CUdeviceptr *ptr,
                         const void *nd);
typedef struct Op {
  int kind;
  char *dst;
  const char *src;
  size_t n;
  unsigned char v;
  struct Event *ev;
  struct Op *next;
  /* OP_KERNEL: the body, its elements and its first KPTRS pointers. */
  KernelFn fn;
  void *arg;
  long long base;
  CUdeviceptr ptr[KPTRS];
  char *nd; /* the parameter's bytes, or NULL */
  /* OP_AXIS: the kernel's name, grid and block, its parameters' bytes. */
  const char *name;
  unsigned gx, gy, bx;
  void *pp[64];
} Op;
/* A body for the kernels of reductions over axes (jitc_a1, jitc_a32,
** jitc_a256, jitc_ac, jitc_acol): fn(arg, name, grid x, grid y, block,
** params), params pointing to copies of the launch's, in its stream's
** order. */
typedef void (*AxisFn)(void *arg, const char *name, unsigned gx, unsigned gy, unsigned bx,
                       void **params);
typedef struct Stream {
  Op *head, *tail;
} Stream;
typedef struct Event {
  int recorded, done;
  size_t gen; /* recordings so far: only the last one's op ends the event */
  long seq;
  Stream *s;
} Event;
static Stream null_stream;
static Stream *streams[64];
static int nstreams;
static long seq;

static Stream *st(void *s) { return s ? (Stream *)s : &null_stream; }

static void push(Stream *s, Op o) {
  Op *q = malloc(sizeof *q);
  *q = o;
  q->next = NULL;
  if (s->tail)
    s->tail->next = q;
  else
    s->head = q;
  s->tail = q;
}

/* Does stream s's work up to and including `upto` (NULL: all of it). */
static void run(Stream *s, Op *upto) {
  while (s->head) {
    Op *q = s->head;
    s->head = q->next;
    if (!s->head)
      s->tail = NULL;
    if (q->kind == OP_COPY)
      memmove(q->dst, q->src, q->n);
    else if (q->kind == OP_SET)
      memset(q->dst, q->v, q->n);
    else if (q->kind == OP_KERNEL) {
      q->fn(q->arg, q->base, (unsigned)q->n, q->ptr, q->nd);
      free(q->nd);
    } else if (q->kind == OP_AXIS) {
      ((AxisFn)(void *)q->fn)(q->arg, q->name, q->gx, q->gy, q->bx, q->pp);
      free(q->nd);
    }
    else if (q->n == q->ev->gen) {
      q->ev->done = 1;
      q->ev->seq = ++seq;
    }
    int last = q == upto;
    free(q);
    if (last)
      break;
  }
}
static void run_all(void) {
  run(&null_stream, NULL);
  for (int i = 0; i < nstreams; i++)
    run(streams[i], NULL);
}
/* Does the work of e's stream up to e's last recording. */
static void reach(Event *e) {
  if (!e->recorded || e->done)
    return;
  Op *last = NULL;
  for (Op *q = e->s->head; q; q = q->next)
    if (q->kind == OP_RECORD && q->ev == e && q->n == e->gen)
      last = q;
  if (last)
    run(e->s, last);
}

/* ---- the driver API ---- */

#define API(name, args) static CUresult name args
API(cuInit, (unsigned f)) { return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
API(cuGetErrorName, (CUresult r, const char **s)) { *s = "CUDA_ERROR_FAKE"; return OK; }
API(cuGetErrorString, (CUresult r, const char **s)) { *s = "fake"; return OK; }
static int ndevices(void) {
  const char *v = getenv("FAKE_CUDA_DEVICES");
  int n = v ? atoi(v) : 1;
  return n < 1 ? 1 : n > 16 ? 16 : n;
}
API(cuDeviceGetCount, (int *n)) { *n = ndevices(); return OK; }
API(cuDeviceGet, (int *d, int o)) { *d = o; return o >= 0 && o < ndevices() ? OK : INVALID; }
API(cuDeviceGetName, (char *s, int n, int d)) { strncpy(s, "fake GPU", (size_t)n); return OK; }
API(cuDeviceGetAttribute, (int *v, int a, int d)) {
  *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 4 : 1;
  return OK;
}
API(cuDeviceTotalMem, (size_t *b, int d)) { *b = (size_t)1 << 34; return OK; }
static int ctx_tokens[16];
#define ctx_token ctx_tokens[0]
static int retained[16];
static __thread void *current;
static int device_of(const void *c) { return c ? (int)((const int *)c - ctx_tokens) : 0; }
API(cuDevicePrimaryCtxRetain, (void **c, int d)) {
  /* $FAKE_CUDA_BUSY: a device whose context cannot be made (another
  ** process holds it in exclusive mode). */
  const char *busy = getenv("FAKE_CUDA_BUSY");
  if (busy && atoi(busy) == d)
    return 46; /* CUDA_ERROR_DEVICES_UNAVAILABLE */
  pthread_mutex_lock(&mu);
  retained[d]++;
  pthread_mutex_unlock(&mu);
  *c = &ctx_tokens[d];
  return OK;
}
API(cuDevicePrimaryCtxRelease, (int d)) {
  pthread_mutex_lock(&mu);
  CUresult r = retained[d] > 0 ? OK : INVALID;
  retained[d] -= r == OK;
  pthread_mutex_unlock(&mu);
  return r;
}
API(cuCtxSetCurrent, (void *c)) { current = c; return OK; }
API(cuCtxGetCurrent, (void **c)) { *c = current; return OK; }
API(cuCtxGetDevice, (int *d)) { *d = device_of(current); return OK; }
API(cuCtxGetId, (void *c, unsigned long long *id)) { *id = 1 + (unsigned)device_of(c); return OK; }
API(cuPointerGetAttributes, (unsigned n, int *attrs, void **data, CUdeviceptr p)) {
  pthread_mutex_lock(&mu);
  Range *r = find((void *)(uintptr_t)p);
  for (unsigned i = 0; i < n; i++) {
    if (attrs[i] == 2)
      *(unsigned *)data[i] = r ? (unsigned)r->type : 0;
    else if (attrs[i] == 1)
      *(void **)data[i] = r && r->type == 2 ? &ctx_token : NULL;
    else
      *(unsigned *)data[i] = 0;
  }
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuCtxSynchronize, (void)) {
  pthread_mutex_lock(&mu);
  run_all();
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuMemGetInfo, (size_t *f, size_t *t)) { *f = *t = (size_t)1 << 34; return OK; }
API(cuModuleLoadDataEx, (void **m, const void *img, unsigned n, int *o, void **v)) {
  *m = malloc(1);
  return OK;
}
API(cuModuleUnload, (void *m)) { free(m); return OK; }
/* A function is its name, interned. */
static char fnames[64][16];
API(cuModuleGetFunction, (void **f, void *m, const char *name)) {
  pthread_mutex_lock(&mu);
  int k = 0;
  while (k < 63 && fnames[k][0] && strcmp(fnames[k], name))
    k++;
  if (!fnames[k][0])
    strncpy(fnames[k], name, 15);
  pthread_mutex_unlock(&mu);
  *f = fnames[k];
  return OK;
}
API(cuFuncGetAttribute, (int *v, int a, void *f)) { *v = 32; return OK; }
API(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, void *f, int b, size_t s)) {
  *n = 4;
  return OK;
}
static CUresult alloc(CUdeviceptr *p, size_t n, int type) {
  void *q = malloc(n ? n : 1);
  if (!q)
    return 2;
  memset(q, 0xa5, n);
  pthread_mutex_lock(&mu);
  add_range(q, n ? n : 1, type, 0);
  pthread_mutex_unlock(&mu);
  *p = (CUdeviceptr)(uintptr_t)q;
  return OK;
}
static CUresult release(void *p) {
  pthread_mutex_lock(&mu);
  run_all();
  Range *r = find(p);
  if (r)
    drop(r);
  pthread_mutex_unlock(&mu);
  free(p);
  return r ? OK : INVALID;
}
API(cuMemAlloc, (CUdeviceptr *p, size_t n)) { return alloc(p, n, 2); }
API(cuMemFree, (CUdeviceptr p)) { return release((void *)(uintptr_t)p); }
API(cuMemHostAlloc, (void **p, size_t n, unsigned f)) { return alloc((CUdeviceptr *)p, n, 1); }
API(cuMemFreeHost, (void *p)) { return release(p); }
API(cuMemHostRegister, (void *p, size_t n, unsigned f)) {
  pthread_mutex_lock(&mu);
  CUresult r = OK;
  for (int i = 0; i < nranges; i++)
    if ((char *)p < ranges[i].p + ranges[i].n && ranges[i].p < (char *)p + n)
      r = ALREADY_REGISTERED;
  if (r == OK)
    add_range(p, n, 1, 1);
  pthread_mutex_unlock(&mu);
  return r;
}
API(cuMemHostUnregister, (void *p)) {
  pthread_mutex_lock(&mu);
  run_all();
  Range *r = find(p);
  CUresult res = r && r->registered && r->p == p ? OK : NOT_REGISTERED;
  if (res == OK)
    drop(r);
  pthread_mutex_unlock(&mu);
  return res;
}
static CUresult copy_async(void *dst, const void *src, size_t n, void *s) {
  pthread_mutex_lock(&mu);
  push(st(s), (Op){OP_COPY, dst, src, n, 0, NULL, NULL});
  pthread_mutex_unlock(&mu);
  return OK;
}
static CUresult copy_now(void *dst, const void *src, size_t n) {
  pthread_mutex_lock(&mu);
  run_all();
  memmove(dst, src, n);
  pthread_mutex_unlock(&mu);
  return OK;
}
#define D(p) ((void *)(uintptr_t)(p))
API(cuMemcpyHtoD, (CUdeviceptr d, const void *h, size_t n)) { return copy_now(D(d), h, n); }
API(cuMemcpyDtoH, (void *h, CUdeviceptr d, size_t n)) { return copy_now(h, D(d), n); }
API(cuMemcpyHtoDAsync, (CUdeviceptr d, const void *h, size_t n, void *s)) {
  return copy_async(D(d), h, n, s);
}
API(cuMemcpyDtoHAsync, (void *h, CUdeviceptr d, size_t n, void *s)) {
  return copy_async(h, D(d), n, s);
}
API(cuMemcpyDtoDAsync, (CUdeviceptr a, CUdeviceptr b, size_t n, void *s)) {
  return copy_async(D(a), D(b), n, s);
}
API(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, void *s)) {
  pthread_mutex_lock(&mu);
  push(st(s), (Op){OP_SET, D(d), NULL, n, v, NULL, NULL});
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuStreamCreate, (void **s, unsigned f)) {
  pthread_mutex_lock(&mu);
  Stream *q = calloc(1, sizeof *q);
  if (nstreams < 64)
    streams[nstreams++] = q;
  pthread_mutex_unlock(&mu);
  *s = q;
  return OK;
}
API(cuStreamDestroy, (void *s)) {
  pthread_mutex_lock(&mu);
  run(st(s), NULL);
  for (int i = 0; i < nstreams; i++)
    if (streams[i] == s)
      streams[i] = streams[--nstreams];
  pthread_mutex_unlock(&mu);
  free(s);
  return OK;
}
API(cuStreamSynchronize, (void *s)) {
  pthread_mutex_lock(&mu);
  run(st(s), NULL);
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuStreamWaitEvent, (void *s, void *e, unsigned f)) {
  pthread_mutex_lock(&mu);
  reach(e); /* simpler than waiting in the queue, and no weaker for this test */
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuStreamGetCtx, (void *s, void **c)) { *c = &ctx_token; return OK; }
API(cuEventCreate, (void **e, unsigned f)) { *e = calloc(1, sizeof(Event)); return OK; }
API(cuEventDestroy, (void *e)) { free(e); return OK; }
API(cuEventRecord, (void *e, void *s)) {
  pthread_mutex_lock(&mu);
  Event *ev = e;
  ev->recorded = 1;
  ev->done = 0; /* a recording still queued before this one no longer ends it */
  ev->s = st(s);
  push(ev->s, (Op){OP_RECORD, NULL, NULL, ++ev->gen, 0, ev, NULL});
  pthread_mutex_unlock(&mu);
  return OK;
}
API(cuEventSynchronize, (void *e)) {
  pthread_mutex_lock(&mu);
  reach(e);
  pthread_mutex_unlock(&mu);
  return OK;
}
static unsigned coin = 12345;
API(cuEventQuery, (void *e)) {
  pthread_mutex_lock(&mu);
  coin = coin * 1103515245u + 12345u;
  if ((coin >> 16) % 3 == 0)
    reach(e);
  CUresult r = ((Event *)e)->done || !((Event *)e)->recorded ? OK : NOT_READY;
  pthread_mutex_unlock(&mu);
  return r;
}
API(cuEventElapsedTime, (float *ms, void *a, void *b)) {
  *ms = 0.001f * (float)(((Event *)b)->seq - ((Event *)a)->seq);
  return OK;
}
/* The body of the axis kernels (NULL: nothing), and the bytes of each of
** the first `n` parameters of each (jitc_a1, jitc_a32, jitc_a256: sizes;
** jitc_ac: csizes; jitc_acol: lsizes). */
static AxisFn axis_fn;
static void *axis_arg;
static int axis_n[3], axis_sizes[3][64];
void fake_axis_kernel(AxisFn fn, void *arg, int n, const int *sizes, int cn, const int *csizes,
                      int ln, const int *lsizes) {
  pthread_mutex_lock(&mu);
  axis_fn = fn;
  axis_arg = arg;
  const int ns[3] = {n, cn, ln}, *sz[3] = {sizes, csizes, lsizes};
  for (int w = 0; w < 3; w++) {
    axis_n[w] = ns[w] < 64 ? ns[w] : 64;
    for (int k = 0; k < axis_n[w]; k++)
      axis_sizes[w][k] = sz[w][k];
  }
  pthread_mutex_unlock(&mu);
}
/* Queues an axis kernel's launch: its parameters copied, 16-byte aligned. */
static void push_axis(void *s, const char *f, unsigned gx, unsigned gy, unsigned bx,
                      void **params) {
  int w = !strcmp(f, "jitc_ac") ? 1 : !strcmp(f, "jitc_acol") ? 2 : 0;
  int n = axis_n[w];
  const int *sz = axis_sizes[w];
  size_t total = 0;
  for (int k = 0; k < n; k++)
    total += ((size_t)sz[k] + 15) / 16 * 16;
  Op o = {OP_AXIS};
  o.fn = (KernelFn)(void *)axis_fn;
  o.arg = axis_arg;
  o.name = f;
  o.gx = gx;
  o.gy = gy;
  o.bx = bx;
  o.nd = malloc(total + 1);
  for (int k = 0, at = 0; k < n; k++) {
    memcpy(o.nd + at, params[k], (size_t)sz[k]);
    o.pp[k] = o.nd + at;
    at += (sz[k] + 15) / 16 * 16;
  }
  push(st(s), o);
}
/* The launch log: device, first element, element count. */
static long long launches[1 << 16][3];
static int nlaunches;
/* jitc_k32's body (NULL: nothing), its argument and how many pointers it takes. */
static KernelFn kernel_fn;
static void *kernel_arg;
static int kernel_nptr, kernel_ndat, kernel_ndbytes;
/* The body fn(arg, ...) of jitc_k32 (NULL: none), taking its first nptr
** pointers, and ndbytes (at most KND; 0: none) of its parameter ndat. */
void fake_kernel(KernelFn fn, void *arg, int nptr, int ndat, int ndbytes) {
  pthread_mutex_lock(&mu);
  kernel_fn = fn;
  kernel_arg = arg;
  kernel_nptr = nptr < KPTRS ? nptr : KPTRS;
  kernel_ndat = ndat;
  kernel_ndbytes = ndbytes < KND ? ndbytes : KND;
  pthread_mutex_unlock(&mu);
}
API(cuLaunchKernel, (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, unsigned smem, void *s, void **params, void **extra)) {
  /* A kernel that does nothing, or the test's body, in its stream's
  ** order; jitc_k32 and jitc_g0 take (n, base, ...). */
  if (axis_fn && !strncmp(f, "jitc_a", 6)) {
    pthread_mutex_lock(&mu);
    push_axis(s, f, gx, gy, bx, params);
    pthread_mutex_unlock(&mu);
  }
  if (!strcmp(f, "jitc_k32") || !strcmp(f, "jitc_g0")) {
    pthread_mutex_lock(&mu);
    if (nlaunches < (1 << 16)) {
      launches[nlaunches][0] = device_of(current);
      launches[nlaunches][1] = *(long long *)params[1];
      launches[nlaunches][2] = *(unsigned *)params[0];
      nlaunches++;
    }
    if (kernel_fn && !strcmp(f, "jitc_k32")) { /* (n, base, vec, pointers...) */
      Op o = {OP_KERNEL, NULL, NULL, *(unsigned *)params[0], 0, NULL, NULL, kernel_fn,
              kernel_arg, *(long long *)params[1], {0}};
      for (int k = 0; k < kernel_nptr; k++)
        o.ptr[k] = *(CUdeviceptr *)params[3 + k];
      if (kernel_ndbytes && (o.nd = malloc((size_t)kernel_ndbytes)))
        memcpy(o.nd, params[kernel_ndat], (size_t)kernel_ndbytes);
      push(st(s), o);
    }
    pthread_mutex_unlock(&mu);
  }
  return OK;
}
/* The launches logged since the last call, into out[3 * k ...] (at most
** max); their count, or -1 when the log overflowed. */
int fake_launches(long long *out, int max) {
  pthread_mutex_lock(&mu);
  int n = nlaunches >= (1 << 16) ? -1 : nlaunches < max ? nlaunches : max;
  if (n > 0)
    memcpy(out, launches, (size_t)n * sizeof *launches);
  nlaunches = 0;
  pthread_mutex_unlock(&mu);
  return n;
}
/* The primary contexts retained and not yet released, on every device. */
int fake_retained(void) {
  pthread_mutex_lock(&mu);
  int n = 0;
  for (int d = 0; d < 16; d++)
    n += retained[d];
  pthread_mutex_unlock(&mu);
  return n;
}
API(cuMemAllocAsync, (CUdeviceptr *p, size_t n, void *s)) { return alloc(p, n, 2); }
API(cuMemFreeAsync, (CUdeviceptr p, void *s)) { return release(D(p)); }

static const struct {
  const char *name;
  void *fn;
} table[] = {
#define E(n) {#n, (void *)n}
    E(cuInit), E(cuDriverGetVersion), E(cuGetErrorName), E(cuGetErrorString),
    E(cuDeviceGetCount), E(cuDeviceGet), E(cuDeviceGetName), E(cuDeviceGetAttribute),
    E(cuDeviceTotalMem), E(cuDevicePrimaryCtxRetain), E(cuDevicePrimaryCtxRelease),
    E(cuCtxSetCurrent), E(cuCtxGetCurrent), E(cuCtxGetDevice), E(cuCtxGetId),
    E(cuPointerGetAttributes), E(cuCtxSynchronize), E(cuMemGetInfo), E(cuModuleLoadDataEx),
    E(cuModuleUnload), E(cuModuleGetFunction), E(cuFuncGetAttribute),
    E(cuOccupancyMaxActiveBlocksPerMultiprocessor), E(cuMemAlloc), E(cuMemFree),
    E(cuMemHostAlloc), E(cuMemFreeHost), E(cuMemHostRegister), E(cuMemHostUnregister),
    E(cuMemcpyHtoD), E(cuMemcpyDtoH), E(cuMemcpyHtoDAsync), E(cuMemcpyDtoHAsync),
    E(cuMemcpyDtoDAsync), E(cuMemsetD8Async), E(cuStreamCreate), E(cuStreamDestroy),
    E(cuStreamSynchronize), E(cuStreamWaitEvent), E(cuStreamGetCtx), E(cuEventCreate),
    E(cuEventDestroy), E(cuEventRecord), E(cuEventSynchronize), E(cuEventQuery),
    E(cuEventElapsedTime), E(cuLaunchKernel), E(cuMemAllocAsync), E(cuMemFreeAsync),
#undef E
};

CUresult cuGetProcAddress_v2(const char *name, void **fn, int v, uint64_t f, int *status) {
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (!strcmp(table[i].name, name)) {
      *fn = table[i].fn;
      return OK;
    }
  *fn = NULL;
  return 500;
}

/* ---- NVRTC: a compile that always succeeds ---- */

typedef struct Prog {
  int unused;
} Prog;
const char *nvrtcGetErrorString(int r) { return "fake"; }
int nvrtcVersion(int *ma, int *mi) { *ma = 13, *mi = 0; return 0; }
/* The CUDA C of the last program made (fake_source). */
static char *last_source;
int nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h,
                       const char *const *i) {
  *p = calloc(1, sizeof(Prog));
  pthread_mutex_lock(&mu);
  free(last_source);
  last_source = strdup(src ? src : "");
  pthread_mutex_unlock(&mu);
  return 0;
}
/* The CUDA C of the last program handed to NVRTC ("" before any). */
const char *fake_source(void) { return last_source ? last_source : ""; }
int nvrtcDestroyProgram(void **p) { free(*p); *p = NULL; return 0; }
static int compiles;
int nvrtcCompileProgram(void *p, int n, const char *const *o) {
  pthread_mutex_lock(&mu);
  compiles++;
  pthread_mutex_unlock(&mu);
  return 0;
}
/* NVRTC's compiles so far. */
int fake_compiles(void) {
  pthread_mutex_lock(&mu);
  int n = compiles;
  pthread_mutex_unlock(&mu);
  return n;
}
int nvrtcGetPTXSize(void *p, size_t *n) { *n = 8; return 0; }
int nvrtcGetPTX(void *p, char *s) { memcpy(s, "// fake", 8); return 0; }
int nvrtcGetCUBINSize(void *p, size_t *n) { *n = 16; return 0; }
int nvrtcGetCUBIN(void *p, char *s) { memset(s, 0x7f, 16); return 0; }
int nvrtcGetProgramLogSize(void *p, size_t *n) { *n = 1; return 0; }
int nvrtcGetProgramLog(void *p, char *s) { s[0] = 0; return 0; }
int nvrtcGetNumSupportedArchs(int *n) { *n = 1; return 0; }
int nvrtcGetSupportedArchs(int *a) { a[0] = 90; return 0; }
