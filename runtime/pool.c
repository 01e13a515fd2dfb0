/*
** pool.c -- persistent worker threads for the cpu target.
**
** Threads are created once, in pool_new(), and sleep on a condition
** variable between runs, so a run costs a wake-up, not a thread creation.
** A run splits [0, n) statically into one contiguous chunk per thread (the
** work of an element-wise kernel is uniform, so stealing would buy nothing),
** with boundaries on multiples of `align` elements so that no two threads
** write the same cache line.  The calling thread does chunk 0 itself.
**
** Workers spin briefly before sleeping: back-to-back runs, the common case
** in a benchmark loop, then start without a futex round trip.  The caller
** also spins briefly on the count of unfinished chunks before it sleeps.
**
** A pool belongs to one jitc context, which jitc.h lets one thread use at a
** time; still, runs of one pool are serialised by `run_lock`, and a second
** caller that finds the pool busy does its whole range alone instead of
** waiting, so a misused pool is slow, never wrong.
*/
#include "runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Below this many elements per extra thread, waking a thread costs more
** than it saves.  Measured on the 2-core development machine (median of 501
** runs, 1 thread against 2): exp(a)*2 float64 wins with 2 threads from 256K
** elements (0.12 against 0.20 ms) and loses at 128K (0.12 against 0.10);
** a + 1 still loses at 256K (0.065 against 0.043 ms) -- a wake-up costs
** tens of microseconds there.  128K per thread splits only where the
** heavier kernels gain. */
#define POOL_MIN_CHUNK 131072
#define POOL_SPINS 20000

typedef struct Worker {
  struct Pool *pool;
  int id;
  pthread_t thread;
} Worker;

struct Pool {
  int nthreads; /* including the caller */
  Worker *workers; /* nthreads - 1 of them */
  pthread_mutex_t run_lock; /* one run at a time */
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  /* The current job, written under mu before gen is bumped. */
  void (*fn)(void *arg, int64_t begin, int64_t end);
  void *arg;
  int64_t n, chunk;
  int active; /* threads taking part in this run, the caller included */
  atomic_uint gen;     /* bumped for every run */
  atomic_int pending;  /* chunks of workers not yet finished */
  atomic_bool quit;
};

static void run_chunk(struct Pool *p, int id) {
  int64_t b = (int64_t)id * p->chunk;
  int64_t e = b + p->chunk;
  if (e > p->n) e = p->n;
  if (b < e) p->fn(p->arg, b, e);
}

static void *worker_main(void *arg) {
  Worker *w = arg;
  struct Pool *p = w->pool;
  unsigned seen = 0;
  for (;;) {
    unsigned g;
    int spins = 0;
    while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen &&
           !atomic_load_explicit(&p->quit, memory_order_acquire) && spins < POOL_SPINS)
      spins++;
    if (g == seen && !atomic_load(&p->quit)) {
      pthread_mutex_lock(&p->mu);
      while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->quit))
        pthread_cond_wait(&p->wake, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    /* Read the job under the lock: a worker that was left out of one run
    ** may wake during the next, and must see that run's fields, all of
    ** them, with its generation. */
    pthread_mutex_lock(&p->mu);
    bool quit = atomic_load(&p->quit);
    seen = atomic_load(&p->gen);
    bool mine = w->id < p->active;
    pthread_mutex_unlock(&p->mu);
    if (quit) return NULL;
    if (mine) {
      run_chunk(p, w->id);
      if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
      }
    }
  }
}

Pool *pool_new(int nthreads) {
  if (nthreads <= 0) nthreads = host_ncores();
  if (nthreads > 1024) nthreads = 1024;
  struct Pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nthreads = 1;
  pthread_mutex_init(&p->run_lock, NULL);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->gen, 0);
  atomic_init(&p->pending, 0);
  atomic_init(&p->quit, false);
  if (nthreads > 1) {
    p->workers = calloc((size_t)nthreads - 1, sizeof *p->workers);
    if (!p->workers) {
      pool_free(p);
      return NULL;
    }
    for (int i = 1; i < nthreads; i++) {
      Worker *w = &p->workers[i - 1];
      w->pool = p;
      w->id = i;
      if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
      p->nthreads++; /* only threads that started are counted and joined */
    }
  }
  return p;
}

void pool_free(Pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->quit, true);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->nthreads; i++) pthread_join(p->workers[i - 1].thread, NULL);
  free(p->workers);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->run_lock);
  free(p);
}

int pool_threads(const Pool *p) { return p ? p->nthreads : 1; }

int pool_run(Pool *p, int threads, int64_t n, int64_t align,
             void (*fn)(void *arg, int64_t begin, int64_t end), void *arg) {
  if (n <= 0) return 0;
  if (align < 1) align = 1;
  if (!p || threads == 1 || p->nthreads == 1) {
    fn(arg, 0, n);
    return 1;
  }
  if (threads <= 0 || threads > p->nthreads) threads = p->nthreads;
  int64_t most = n / POOL_MIN_CHUNK; /* threads that get a worthwhile share */
  if (most < threads) threads = most < 1 ? 1 : (int)most;
  if (threads == 1 || pthread_mutex_trylock(&p->run_lock) != 0) {
    fn(arg, 0, n);
    return 1;
  }
  /* Chunk: n / threads rounded up to a multiple of align; the last thread
  ** takes the remainder (possibly nothing when n is tiny). */
  int64_t per = (n + threads - 1) / threads;
  per = (per + align - 1) / align * align;
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = per;
  p->active = threads;
  atomic_store(&p->pending, threads - 1);
  atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);

  run_chunk(p, 0);

  int spins = 0;
  while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0 && spins < POOL_SPINS)
    spins++;
  if (atomic_load(&p->pending) != 0) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->pending) != 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&p->run_lock);
  return threads;
}
