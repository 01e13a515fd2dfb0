/*
** pinned.c -- the arrays a run on the cuda target makes over host arrays,
** in pinned memory kept for reuse.
**
** Pageable memory reaches the GPU through the host's own copies into
** pinned staging, and a new NumPy array's pages are faulted in (and zeroed
** by the kernel) as the download first writes them: `exp(a)` over 10M
** float32 took 9.3 ms from Python where the same run into memory already
** touched took 3.0.  So while it makes the outputs of such a run, the
** extension gives NumPy an allocator of its own (NumPy's PyDataMem_Handler):
** an array of 1 MB or more gets a block of 2 MB pages that the library pins
** (jitc_host_pin) before the run, so that the GPU's DMA writes it in place.
** When NumPy frees the array, the block stays pinned and goes back to the
** pool for the next output, as PyTorch's caching host allocator keeps its
** pinned blocks.  The pool keeps idle blocks of at most an eighth of the
** machine's memory and pins at most a quarter; past that an array is
** ordinary memory.  Blocks beyond the idle bound are unpinned and freed at
** the next run on the cuda target (unpinning needs the library's lock,
** which NumPy's free, called anywhere, must not wait for).  The arrays are
** ordinary NumPy arrays otherwise; every other allocation is NumPy's own.
*/
#include "pyjitc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MIN_BYTES = 1 << 20, PAGE = 2 << 20, MAXBLOCKS = 256 };

typedef struct Block {
  char *p;
  size_t cap; /* bytes, a multiple of PAGE */
  int used;   /* an array's */
  int pinned; /* 1 pinned, 0 not yet, -1 refused by the driver */
  int drop;   /* idle and past the bound: to unpin and free */
} Block;

static struct {
  pthread_mutex_t mu;
  Block b[MAXBLOCKS];
  int n;
  size_t idle, pinned;        /* bytes of idle blocks; bytes pinned */
  size_t idle_max, pinned_max;
  PyObject *handler;          /* NumPy's capsule of the allocator below */
} pool = {PTHREAD_MUTEX_INITIALIZER};

/* The block at p, or NULL; under pool.mu. */
static Block *find(const void *p) {
  for (int i = 0; i < pool.n; i++)
    if (pool.b[i].p == p)
      return &pool.b[i];
  return NULL;
}

static void *pool_malloc(void *ctx, size_t size) {
  (void)ctx;
  if (size < MIN_BYTES)
    return malloc(size ? size : 1);
  pthread_mutex_lock(&pool.mu);
  Block *best = NULL;
  for (int i = 0; i < pool.n; i++) { /* the smallest idle block that holds it, at most twice it */
    Block *b = &pool.b[i];
    if (!b->used && !b->drop && b->cap >= size && b->cap - size <= size &&
        (!best || b->cap < best->cap))
      best = b;
  }
  if (best) {
    best->used = 1;
    pool.idle -= best->cap;
    pthread_mutex_unlock(&pool.mu);
    return best->p;
  }
  int room = pool.n < MAXBLOCKS;
  pthread_mutex_unlock(&pool.mu);
  size_t cap = (size + PAGE - 1) / PAGE * PAGE;
  if (!room || cap < size)
    return malloc(size);
  char *p = aligned_alloc(PAGE, cap);
  if (!p)
    return NULL;
  madvise(p, cap, MADV_HUGEPAGE);
  pthread_mutex_lock(&pool.mu);
  if (pool.n < MAXBLOCKS) /* else an ordinary block: free() takes it */
    pool.b[pool.n++] = (Block){p, cap, 1, 0, 0};
  pthread_mutex_unlock(&pool.mu);
  return p;
}

static void *pool_calloc(void *ctx, size_t nelem, size_t elsize) {
  if (elsize && nelem > SIZE_MAX / elsize)
    return NULL;
  size_t bytes = nelem * elsize;
  if (bytes < MIN_BYTES)
    return calloc(nelem ? nelem : 1, elsize ? elsize : 1);
  void *p = pool_malloc(ctx, bytes);
  if (p)
    memset(p, 0, bytes);
  return p;
}

static void pool_free(void *ctx, void *ptr, size_t size) {
  (void)ctx, (void)size;
  if (!ptr)
    return;
  pthread_mutex_lock(&pool.mu);
  Block *b = find(ptr);
  if (!b) {
    pthread_mutex_unlock(&pool.mu);
    free(ptr);
    return;
  }
  b->used = 0;
  if (b->pinned <= 0) { /* nothing to undo: freed now */
    *b = pool.b[--pool.n];
    pthread_mutex_unlock(&pool.mu);
    free(ptr);
    return;
  }
  pool.idle += b->cap;
  if (pool.idle > pool.idle_max) { /* unpinned and freed by the next run's pinned_prepare */
    b->drop = 1;
    pool.idle -= b->cap;
  }
  pthread_mutex_unlock(&pool.mu);
}

static void *pool_realloc(void *ctx, void *ptr, size_t size) {
  if (!ptr)
    return pool_malloc(ctx, size);
  pthread_mutex_lock(&pool.mu);
  Block *b = find(ptr);
  size_t cap = b ? b->cap : 0;
  pthread_mutex_unlock(&pool.mu);
  if (!b)
    return realloc(ptr, size);
  if (size <= cap)
    return ptr;
  void *q = pool_malloc(ctx, size);
  if (q) {
    memcpy(q, ptr, cap);
    pool_free(ctx, ptr, cap);
  }
  return q;
}

static PyDataMem_Handler handler = {
    "jitc_pinned", 1, {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free}};

int pinned_init(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  size_t ram = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)8 << 30;
  pool.idle_max = ram / 8;
  pool.pinned_max = ram / 4;
  pool.handler = PyCapsule_New(&handler, "mem_handler", NULL);
  return pool.handler ? 0 : -1;
}

PyObject *pinned_use(const KernelObject *K) {
  if (K->device || K->target != JITC_TARGET_CUDA || !pool.handler)
    return NULL;
  PyObject *old = PyDataMem_SetHandler(pool.handler);
  if (!old)
    PyErr_Clear(); /* NumPy's own allocator, then */
  return old;
}

void pinned_restore(PyObject *old) {
  if (!old)
    return;
  PyObject *t, *v, *tb; /* an allocation's error stays raised; a failure here is none */
  PyErr_Fetch(&t, &v, &tb);
  Py_XDECREF(PyDataMem_SetHandler(old));
  Py_DECREF(old);
  PyErr_Restore(t, v, tb);
}

/* Pins the blocks among data[0..n) not pinned yet, and unpins and frees
** the blocks dropped; with the library's lock held. */
static void settle(jitc_context *ctx, void *const *data, int n) {
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&pool.mu);
    Block *b = find(data[i]);
    int want = b && b->pinned == 0 && pool.pinned + b->cap <= pool.pinned_max;
    char *p = want ? b->p : NULL;
    size_t cap = want ? b->cap : 0;
    if (want)
      pool.pinned += cap; /* counted now: no other run pins past the bound meanwhile */
    pthread_mutex_unlock(&pool.mu);
    if (!want)
      continue;
    int ok = jitc_host_pin(ctx, JITC_TARGET_CUDA, p, cap) == JITC_OK;
    pthread_mutex_lock(&pool.mu);
    if ((b = find(p))) /* the array it is for is alive: only this call runs on it */
      b->pinned = ok ? 1 : -1;
    if (!ok)
      pool.pinned -= cap;
    pthread_mutex_unlock(&pool.mu);
  }
  for (;;) {
    pthread_mutex_lock(&pool.mu);
    Block *b = NULL;
    for (int i = 0; i < pool.n && !b; i++)
      if (pool.b[i].drop)
        b = &pool.b[i];
    Block d = b ? *b : (Block){0};
    if (b) {
      *b = pool.b[--pool.n];
      pool.pinned -= d.cap;
    }
    pthread_mutex_unlock(&pool.mu);
    if (!d.p)
      break;
    jitc_host_unpin(ctx, JITC_TARGET_CUDA, d.p);
    free(d.p);
  }
}

void pinned_prepare(const KernelObject *K, const Bound *arrs) {
  if (K->device || K->target != JITC_TARGET_CUDA)
    return;
  void *data[MAXNAMES];
  int n = 0, drop = 0;
  pthread_mutex_lock(&pool.mu);
  for (int j = 0; j < K->narrays; j++) {
    Block *b = arrs[j].arr ? find(PyArray_DATA(arrs[j].arr)) : NULL;
    if (b && b->pinned == 0)
      data[n++] = b->p;
  }
  for (int i = 0; i < pool.n && !drop; i++)
    drop = pool.b[i].drop;
  pthread_mutex_unlock(&pool.mu);
  if (!n && !drop)
    return;
  ModuleState *st = mod_state();
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  settle(st->ctx, data, n);
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
}
