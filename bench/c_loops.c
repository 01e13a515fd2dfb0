/*
** c_loops.c -- the hand-written C baselines and the copy that bounds them.
**
**   c_loops WORKLOAD --in a=a.npy [--in ...] [--out out=out.npy] [-D alpha=2.5]
**           [--warmup W] [--min-reps R] [--max-reps R] [--budget-ms MS]
**   c_loops stream WORKLOAD --in a=a.npy [--in ...] [timing options]
**   c_loops copy --bytes B [timing options]
**
** Each workload is the loop a C programmer would write for the jitc program
** of the same name in bench/workloads.py, built with gcc -O3 -march=native
** -fopenmp (the transcendental ones in c_mvec.c, with libmvec).  They use all
** cores (OMP_NUM_THREADS to change that), and one thread below PAR_MIN
** elements, where starting the thread team costs more than it saves
** (ELEMENTWISE, bench_util.h).
** `stream WORKLOAD` is the limit for that workload: a copy of the same bytes
** through the same streams (the arrays it reads are read, the arrays it
** writes are written, an array it updates in place is read and written in
** place), with no arithmetic worth the name.  The stream pattern matters: on
** many machines an in-place update moves its bytes much faster than a copy
** from one array to another.  `copy` copies B bytes with memcpy split over
** the same threads, for reference.  Output is one JSON object on stdout, as
** jitc_bench prints it.  Arrays live on huge pages where the kernel grants
** them, as NumPy's do (bench_alloc).
*/
#include "../cli/cli.h"
#include "bench_util.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>

#define MAXARR 8

typedef void (*LoopFn)(int64_t n, void **p, double alpha);

void c_exp_f32(int64_t n, void **p, double alpha);
void c_exp_f64(int64_t n, void **p, double alpha);
void c_sincos_f64(int64_t n, void **p, double alpha);

static void c_inc_f64(int64_t n, void **p, double alpha) {
  double *a = p[0];
  ELEMENTWISE(n, i, a[i] += 1;);
}

static void c_poly_f64(int64_t n, void **p, double alpha) {
  const double *a = p[0];
  double *out = p[1];
  ELEMENTWISE(n, i, out[i] = 2 * a[i] * a[i] + 3 * a[i] + 1;);
}

static void c_axpy_f32(int64_t n, void **p, double alpha) {
  const float *x = p[0];
  float *y = p[1];
  float al = (float)alpha; /* a Python float scalar takes the array's type */
  ELEMENTWISE(n, i, y[i] = al * x[i] + y[i];);
}

static void c_leaky_f32(int64_t n, void **p, double alpha) {
  const float *a = p[0];
  float *out = p[1];
  ELEMENTWISE(n, i, out[i] = a[i] > 0 ? a[i] : 0.01f * a[i];);
}

static void c_polar_f32(int64_t n, void **p, double alpha) {
  const float *x = p[0], *y = p[1];
  float *r = p[2], *c = p[3], *s = p[4];
  ELEMENTWISE(n, i, float h = sqrtf(x[i] * x[i] + y[i] * y[i]); r[i] = h; c[i] = x[i] / h;
              s[i] = y[i] / h;);
}

/* The reductions' baseline (bench/reduce_cpu.py): s = sum(a*b), float32
** products summed in double, as jitc's float32 sum is; the result goes to a
** sink so the loop is not dropped. */
volatile double reduce_sink;
static void c_dot_f32(int64_t n, void **p, double alpha) {
  const float *a = p[0], *b = p[1];
  double s = 0;
  if (n < PAR_MIN) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++) s += (double)(a[i] * b[i]);
  } else {
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (int64_t i = 0; i < n; i++) s += (double)(a[i] * b[i]);
  }
  reduce_sink = s;
}

/* Arrays in the order the loop takes them: inputs first, named as in the
** jitc program, the last `inplace` of them updated in place; outputs after.
** All have `dtype`. */
typedef struct Loop {
  const char *name;
  LoopFn fn;
  const char *in[MAXARR];
  const char *out[MAXARR];
  int inplace;
  jitc_dtype dtype;
} Loop;

static const Loop loops[] = {
    {"inc_f64", c_inc_f64, {"a"}, {NULL}, 1, JITC_FLOAT64},
    {"exp_f32", c_exp_f32, {"a"}, {"out"}, 0, JITC_FLOAT32},
    {"exp_f64", c_exp_f64, {"a"}, {"out"}, 0, JITC_FLOAT64},
    {"poly_f64", c_poly_f64, {"a"}, {"out"}, 0, JITC_FLOAT64},
    {"sincos_f64", c_sincos_f64, {"a"}, {"out"}, 0, JITC_FLOAT64},
    {"axpy_f32", c_axpy_f32, {"x", "y"}, {NULL}, 1, JITC_FLOAT32},
    {"leaky_f32", c_leaky_f32, {"a"}, {"out"}, 0, JITC_FLOAT32},
    {"polar_f32", c_polar_f32, {"x", "y"}, {"r", "c", "s"}, 0, JITC_FLOAT32},
    {"dot_f32", c_dot_f32, {"a", "b"}, {NULL}, 0, JITC_FLOAT32},
};

/* The stream kernels: reads, in-place updates and writes of the same
** arrays as a workload, one trivial operation per element (a negation keeps
** in-place data bounded and non-zero over repeats).  Cases by (arrays only
** read, arrays updated in place, arrays only written). */
#define STREAM(T)                                                                \
  static int stream_##T(int64_t n, int nr, int nip, int nw, void **p) {           \
    switch (nr * 100 + nip * 10 + nw) {                                          \
    case 10: { /* a[i] = f(a[i]) */                                              \
      T *a = p[0];                                                               \
      ELEMENTWISE(n, i, a[i] = -a[i];);                                          \
      return 0;                                                                  \
    }                                                                            \
    case 101: { /* out[i] = f(a[i]) */                                           \
      const T *a = p[0];                                                         \
      T *o = p[1];                                                               \
      ELEMENTWISE(n, i, o[i] = a[i];);                                           \
      return 0;                                                                  \
    }                                                                            \
    case 110: { /* y[i] = f(x[i], y[i]) */                                       \
      const T *x = p[0];                                                         \
      T *y = p[1];                                                               \
      ELEMENTWISE(n, i, y[i] = x[i] - y[i];);                                    \
      return 0;                                                                  \
    }                                                                            \
    case 200: { /* s = f(a, b) summed: read only, as a reduction */              \
      const T *a = p[0], *b = p[1];                                              \
      T s = 0;                                                                   \
      _Pragma("omp parallel for simd schedule(static) reduction(+ : s)")         \
      for (int64_t i = 0; i < n; i++) s += a[i] - b[i];                         \
      reduce_sink = (double)s;                                                   \
      return 0;                                                                  \
    }                                                                            \
    case 203: { /* r, c, s = f(x, y) */                                          \
      const T *x = p[0], *y = p[1];                                              \
      T *r = p[2], *c = p[3], *s = p[4];                                         \
      ELEMENTWISE(n, i, r[i] = x[i]; c[i] = y[i]; s[i] = x[i] - y[i];);          \
      return 0;                                                                  \
    }                                                                            \
    }                                                                            \
    return -1;                                                                   \
  }
STREAM(float)
STREAM(double)

static int stream_once(const Loop *l, int64_t n, void **p) {
  int nr = 0, nw = 0;
  while (nr < MAXARR && l->in[nr])
    nr++;
  while (nw < MAXARR && l->out[nw])
    nw++;
  nr -= l->inplace;
  return l->dtype == JITC_FLOAT32 ? stream_float(n, nr, l->inplace, nw, p)
                                  : stream_double(n, nr, l->inplace, nw, p);
}

typedef struct LoopArg {
  const Loop *loop;
  int64_t n;
  void *p[MAXARR];
  double alpha;
  bool stream; /* the workload's stream kernel instead of its loop */
} LoopArg;

static int loop_once(void *arg, double extra[3]) {
  LoopArg *l = arg;
  if (l->stream)
    return stream_once(l->loop, l->n, l->p);
  l->loop->fn(l->n, l->p, l->alpha);
  return 0;
}

typedef struct CopyArg {
  char *dst;
  const char *src;
  size_t bytes;
} CopyArg;

static int copy_once(void *arg, double extra[3]) {
  CopyArg *c = arg;
  size_t bytes = c->bytes;
  if (bytes < (size_t)PAR_MIN * 8) {
    memcpy(c->dst, c->src, bytes);
    return 0;
  }
#pragma omp parallel
  {
    size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
    size_t chunk = (bytes / nt + 63) & ~(size_t)63; /* cache-line-aligned pieces */
    size_t lo = t * chunk < bytes ? t * chunk : bytes;
    size_t hi = lo + chunk < bytes ? lo + chunk : bytes;
    memcpy(c->dst + lo, c->src + lo, hi - lo);
  }
  return 0;
}

/* Checks a stream kernel's first call against the arrays before it: 0 if
** every element is what the kernel's case says. */
static int stream_check(const Loop *l, int64_t n, void *const *orig, void *const *p) {
  bool f = l->dtype == JITC_FLOAT32;
#define AT(q, i) (f ? (double)((const float *)(q))[i] : ((const double *)(q))[i])
  int nr = 0, nw = 0;
  while (nr < MAXARR && l->in[nr])
    nr++;
  while (nw < MAXARR && l->out[nw])
    nw++;
  nr -= l->inplace;
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    switch (nr * 100 + l->inplace * 10 + nw) {
    case 10: ok = AT(p[0], i) == -AT(orig[0], i); break;
    case 200: ok = AT(p[0], i) == AT(orig[0], i) && AT(p[1], i) == AT(orig[1], i); break;
    case 101: ok = AT(p[1], i) == AT(orig[0], i); break;
    case 110: ok = AT(p[1], i) == (f ? (double)(float)(AT(orig[0], i) - AT(orig[1], i))
                                     : AT(orig[0], i) - AT(orig[1], i)); break;
    case 203:
      ok = AT(p[2], i) == AT(orig[0], i) && AT(p[3], i) == AT(orig[1], i) &&
           AT(p[4], i) == (f ? (double)(float)(AT(orig[0], i) - AT(orig[1], i))
                             : AT(orig[0], i) - AT(orig[1], i));
      break;
    default: ok = false;
    }
    if (!ok)
      return -1;
  }
#undef AT
  return 0;
}

static int fail(const char *what, const char *msg) {
  printf("{\"impl\": \"c\", \"workload\": ");
  json_string(stdout, what);
  printf(", \"error\": ");
  json_string(stdout, msg);
  printf("}\n");
  return 1;
}

static void print_times(const char *what, int64_t n, double first_ms, const Samples *s) {
  printf("{\"impl\": \"c\", \"workload\": ");
  json_string(stdout, what);
  printf(", \"threads\": %d, \"n\": %lld, \"first_ms\": %.6f, ", omp_get_max_threads(),
         (long long)n, first_ms);
  json_list(stdout, "times_ms", s->t, s->n);
  printf("}\n");
}

static int run_copy(const BenchOpts *bo, size_t bytes) {
  if (bytes == 0)
    bytes = 64;
  char *src = bench_alloc(bytes);
  char *dst = bench_alloc(bytes);
  if (!src || !dst) {
    free(src);
    free(dst);
    return fail("copy", "out of memory");
  }
  /* Non-zero data, and every page faulted in by the threads that copy it. */
  for (size_t i = 0; i < bytes; i++)
    src[i] = (char)(i * 7 + 1);
  memset(dst, 0x55, bytes);
  CopyArg ca = {dst, src, bytes};
  double extra[3], t0 = now_ms();
  copy_once(&ca, extra);
  double first_ms = now_ms() - t0;
  int bad = memcmp(dst, src, bytes) != 0;
  Samples s = {0};
  if (bad || bench_measure(bo, copy_once, &ca, &s) != 0) {
    free(src);
    free(dst);
    samples_free(&s);
    return fail("copy", bad ? "copy differs from its source" : "out of memory");
  }
  print_times("copy", (int64_t)bytes, first_ms, &s);
  samples_free(&s);
  free(src);
  free(dst);
  return 0;
}

int main(int argc, char **argv) {
  BenchOpts bo;
  bench_opts_init(&bo);
  if (argc < 2) {
    fprintf(stderr, "usage: c_loops WORKLOAD|copy [--in NAME=FILE] [--out NAME=FILE] [-D alpha=V]"
                    " [--bytes B] [timing options]\n");
    return 64;
  }
  bool stream = !strcmp(argv[1], "stream") && argc > 2;
  const char *what = argv[1 + stream];
  const char *inname[MAXARR], *infile[MAXARR], *outname[MAXARR], *outfile[MAXARR];
  int nin = 0, nout = 0;
  double alpha = 0;
  size_t bytes = 0;
  for (int i = 2 + stream; i < argc; i++) {
    if (bench_opts_arg(&bo, argc, argv, &i))
      continue;
    char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *eq = v ? strchr(v, '=') : NULL;
    if (!strcmp(a, "--bytes") && v)
      bytes = (size_t)strtoull(v, NULL, 10);
    else if (!strcmp(a, "--in") && eq && nin < MAXARR)
      *eq = '\0', inname[nin] = v, infile[nin++] = eq + 1;
    else if (!strcmp(a, "--out") && eq && nout < MAXARR)
      *eq = '\0', outname[nout] = v, outfile[nout++] = eq + 1;
    else if (!strcmp(a, "-D") && eq)
      alpha = strtod(eq + 1, NULL);
    else
      return fail(what, "bad argument");
    i++;
  }
  if (!strcmp(what, "copy"))
    return run_copy(&bo, bytes);

  const Loop *loop = NULL;
  for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
    if (!strcmp(loops[i].name, what))
      loop = &loops[i];
  if (!loop)
    return fail(what, "unknown workload");

  /* The loop's arrays: its inputs from the files, its outputs allocated. */
  char err[512];
  HostArray arr[MAXARR];
  void *orig[MAXARR] = {0};
  const char *names[MAXARR];
  int narr = 0, rc = 1;
  int64_t n = -1;
  memset(arr, 0, sizeof arr);
  LoopArg la = {loop, 0, {0}, alpha, stream};
  for (int k = 0; k < MAXARR && loop->in[k]; k++) {
    int j = 0;
    while (j < nin && strcmp(inname[j], loop->in[k]) != 0)
      j++;
    if (j == nin) {
      snprintf(err, sizeof err, "input %s needs --in", loop->in[k]);
      fail(what, err);
      goto done;
    }
    if (npy_read(infile[j], NULL, &arr[narr], err, sizeof err) != 0) {
      fail(what, err);
      goto done;
    }
    if (bench_rehome(&arr[narr].data, (size_t)arr[narr].n * jitc_dtype_size(arr[narr].dtype))) {
      host_array_free(&arr[narr]);
      fail(what, "out of memory");
      goto done;
    }
    names[narr] = loop->in[k];
    la.p[narr] = arr[narr].data;
    narr++;
    if (arr[narr - 1].dtype != loop->dtype) {
      snprintf(err, sizeof err, "input %s is %s; the loop takes %s", loop->in[k],
               jitc_dtype_name(arr[narr - 1].dtype), jitc_dtype_name(loop->dtype));
      fail(what, err);
      goto done;
    }
    if (n >= 0 && arr[narr - 1].n != n) {
      fail(what, "inputs differ in size");
      goto done;
    }
    n = arr[narr - 1].n;
  }
  for (int k = 0; k < MAXARR && loop->out[k]; k++) {
    if (host_array_alloc(&arr[narr], loop->dtype, n, err, sizeof err) != 0 ||
        bench_rehome(&arr[narr].data, (size_t)n * jitc_dtype_size(loop->dtype)) != 0) {
      fail(what, "out of memory");
      goto done;
    }
    memset(arr[narr].data, 0x55, (size_t)n * jitc_dtype_size(loop->dtype));
    names[narr] = loop->out[k];
    la.p[narr] = arr[narr].data;
    narr++;
  }
  la.n = n;

  /* A stream kernel's result is checked here: it has no NumPy meaning. */
  for (int i = 0; stream && i < narr; i++) {
    size_t sz = (size_t)n * jitc_dtype_size(loop->dtype);
    if (!(orig[i] = malloc(sz ? sz : 1))) {
      fail(what, "out of memory");
      goto done;
    }
    memcpy(orig[i], arr[i].data, sz);
  }
  double extra[3], t0 = now_ms();
  if (loop_once(&la, extra) != 0) {
    fail(what, "no stream kernel for this pattern of arrays");
    goto done;
  }
  double first_ms = now_ms() - t0;
  if (stream && stream_check(loop, n, orig, la.p) != 0) {
    fail(what, "the stream kernel's result is wrong");
    goto done;
  }
  for (int i = 0; i < nout; i++) {
    int j = 0;
    while (j < narr && strcmp(names[j], outname[i]) != 0)
      j++;
    if (j == narr || npy_write(outfile[i], &arr[j], err, sizeof err) != 0) {
      fail(what, j == narr ? "--out names no array of the loop" : err);
      goto done;
    }
  }
  Samples s = {0};
  if (bench_measure(&bo, loop_once, &la, &s) != 0)
    fail(what, "out of memory");
  else
    print_times(what, n, first_ms, &s), rc = 0;
  samples_free(&s);
done:
  for (int i = 0; i < narr; i++) {
    host_array_free(&arr[i]);
    free(orig[i]);
  }
  return rc;
}
