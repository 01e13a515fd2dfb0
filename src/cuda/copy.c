/*
** cuda/copy.c -- the copier of the target `cuda`: host memory as the DMA
** engines see it.  It says whether the caller's memory is pinned, pins
** (registers) it when asked, and copies between the caller's pageable memory
** and pinned staging on several host threads at once.  It knows nothing of
** chunks, streams or kernels: the host pipeline (cuda/host.c) decides what
** to copy when, and calls this file and the launcher (cuda/launch.c); none
** of them calls back.
**
** A copy job is a list of segments copied together, its bytes split evenly
** over the copy threads of its GPU (runtime/pool.c; each GPU of a run has
** its own, a pool serving one caller at a time), so that the staging of one chunk's
** inputs and the unstaging of an earlier chunk's outputs share the threads.
** A segment whose destination is the caller's memory is written with
** streaming stores where the host has them: its lines go to memory
** without first being read, which a plain copy into memory the cache does
** not hold must do.  A segment of an array of any strides (jitc_run_arrays)
** is gathered or scattered by move.c, its bytes shared among the threads
** as whole elements.
*/
#include "cuda.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_STREAM_STORES 1
#endif

bool cuda_is_pinned(CudaState *S, const void *p) {
  /* cuPointerGetAttributes answers for any address, where
  ** cuMemHostGetFlags fails on pageable memory, an API error to the
  ** driver's tools. */
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  uint64_t type = 0; /* the driver writes an unsigned int at its start */
  void *data = &type;
  if (!p || S->api.cuPointerGetAttributes(1, &attr, &data, (CUdeviceptr)(uintptr_t)p) !=
                CUDA_SUCCESS)
    return false;
  uint32_t t;
  memcpy(&t, &type, sizeof t);
  return t == CU_MEMORYTYPE_HOST;
}

CUresult cuda_register(CudaState *S, void *p, size_t bytes, bool portable) {
  /* Fails where another registration holds one of the pages (two small
  ** arrays on one page): the caller stages that array instead.  Without
  ** PORTABLE the memory is pinned for the current context only, and the
  ** other GPUs' copies of it would go through the driver's own staging. */
  if (!p || !bytes)
    return CUDA_ERROR_INVALID_VALUE;
  return S->api.cuMemHostRegister(p, bytes, portable ? CU_MEMHOSTREGISTER_PORTABLE : 0);
}

CUresult cuda_unregister(CudaState *S, void *p) { return S->api.cuMemHostUnregister(p); }

/* n bytes from src to dst, with streaming stores where the host has them:
** the destination's lines are not read first and do not stay in the cache. */
static void copy_streaming(char *dst, const char *src, size_t n) {
#ifdef HAVE_STREAM_STORES
  size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
  if (n < 256 || head > n) {
    memcpy(dst, src, n);
    return;
  }
  memcpy(dst, src, head);
  dst += head, src += head, n -= head;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
    __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
    _mm_stream_si128((__m128i *)(dst + i), a);
    _mm_stream_si128((__m128i *)(dst + i + 16), b);
    _mm_stream_si128((__m128i *)(dst + i + 32), c);
    _mm_stream_si128((__m128i *)(dst + i + 48), d);
  }
  memcpy(dst + i, src + i, n - i);
  _mm_sfence(); /* the streamed lines reach memory before another thread reads them */
#else
  memcpy(dst, src, n);
#endif
}

/* Bytes [from, upto) of segment g.  Of a layout's segment, the elements
** whose first byte is among them: each element is one thread's. */
static void copy_seg_part(const CopySeg *g, size_t from, size_t upto) {
  if (g->nd) {
    size_t es = g->nd->a[g->array].esize;
    int64_t e0 = (int64_t)((from + es - 1) / es), e1 = (int64_t)((upto + es - 1) / es);
    if (e1 <= e0)
      return;
    size_t at = (size_t)e0 * es;
    if (g->dst)
      layout_gather(g->nd, g->array, g->lo + e0, e1 - e0, (char *)g->dst + at);
    else
      layout_scatter(g->nd, g->array, g->lo + e0, e1 - e0, (const char *)g->src + at);
  } else if (g->streaming) {
    copy_streaming((char *)g->dst + from, (const char *)g->src + from, upto - from);
  } else {
    memcpy((char *)g->dst + from, (const char *)g->src + from, upto - from);
  }
}

typedef struct CopyJob {
  const CopySeg *seg;
  int nseg;
  size_t *start; /* per segment: its first byte in the job's index space */
} CopyJob;

/* Bytes [begin, end) of the job: the parts of the segments they cover. */
static void copy_part(void *arg, int64_t begin, int64_t end) {
  const CopyJob *j = arg;
  int s = 0;
  while (s + 1 < j->nseg && j->start[s + 1] <= (size_t)begin)
    s++;
  for (size_t at = (size_t)begin; s < j->nseg && at < (size_t)end; s++) {
    const CopySeg *g = &j->seg[s];
    size_t from = at - j->start[s];
    size_t upto = (size_t)end - j->start[s];
    if (upto > g->len)
      upto = g->len;
    if (from < upto)
      copy_seg_part(g, from, upto);
    at = j->start[s] + upto;
  }
}

int cuda_copy_threads(CudaState *S, CudaDev *D) {
  if (!D->pool_tried) {
    D->pool_tried = true;
    int t = S->env->cuda_copy_threads;
    if (t <= 0)
      t = D->pool_want;
    if (t <= 0) {
      /* Every core, at most 16: one thread copies about 10 GB/s, and both
      ** directions of the link together move about 110 GB/s.  A run on
      ** several GPUs shares the cores among them (D->pool_want). */
      t = host_ncores();
      t = t > 16 ? 16 : t;
    }
    if (t > 1)
      D->pool = pool_new(t);
  }
  return D->pool ? pool_threads(D->pool) : 1;
}

void cuda_copy_host(CudaState *S, CudaDev *D, const CopySeg *seg, int nseg, int threads) {
  size_t stack[16];
  size_t *start = nseg <= 16 ? stack : malloc((size_t)nseg * sizeof *start);
  size_t total = 0;
  if (!start) { /* no memory for the index: one segment after another, one thread */
    for (int s = 0; s < nseg; s++)
      copy_seg_part(&seg[s], 0, seg[s].len);
    return;
  }
  for (int s = 0; s < nseg; s++) {
    start[s] = total;
    total += seg[s].len;
  }
  CopyJob j = {seg, nseg, start};
  /* Ranges of whole pages, at least 256 KiB a thread (pool.c's floor is
  ** per element: here one element is a byte); the threads are made only
  ** for a job that can use two. */
  int64_t most = (int64_t)(total >> 18);
  int t = threads != 1 && most >= 2 ? cuda_copy_threads(S, D) : 1;
  if (threads > 0 && t > threads)
    t = threads;
  if (t > most)
    t = most < 1 ? 1 : (int)most;
  if (total > 0)
    pool_run(D->pool, t, (int64_t)total, 4096, copy_part, &j);
  if (start != stack)
    free(start);
}

void cuda_copy_free(CudaDev *D) {
  if (D->pool)
    pool_free(D->pool);
  D->pool = NULL;
  D->pool_tried = false;
}
