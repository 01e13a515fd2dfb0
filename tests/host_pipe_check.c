/*
** host_pipe_check.c -- the cuda target's host pipeline (src/cuda/host.c)
** moving every byte to its place, on a machine without a GPU: run with
** JITC_LIBCUDA and JITC_LIBNVRTC naming tests/cuda_fake.c's library (see
** tests/t_host_pipe.sh), where a kernel does nothing and queued work is done
** only when waited for.  In-place programs must give back their inputs,
** for every way an array travels (staged, pinned by the caller, registered
** for the call, mixed), chunk sizes, slot and thread counts, plain and
** streaming stores, odd sizes and misaligned pointers; the registrations a
** run makes are undone when it ends, and the caller's own stay; the chunks
** (which set the bits of float sums) are the same on every path and call.
** With $FAKE_CUDA_DEVICES at 2 or more, the same on several GPUs (the split
** of cuda/multi.c), each element run once, on the GPU of its share, its
** index right (the fake's launch log); and the arithmetic of the shares
** (cuda/shares.c), which needs no driver at all.
** Arrays of any strides (jitc_run_arrays; the fake's jitc_k32 then computes
** each written array as the first read one plus twice the second plus the
** element's index): strided, reversed, transposed, unaligned and broadcast
** views (shapes of 1 and zero strides), pageable and pinned, outputs and
** in place, on one GPU and two, in chunks that cut the rows: every written
** element has the value of the broadcast inputs at its position in C order,
** and no other byte of any buffer changes.
** Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why".
*/
#include "../src/jitc_int.h"
#include "../src/cuda/cuda.h"
#include "../runtime/cuda_api.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;
/* The fake's launch log (tests/cuda_fake.c), when it has one. */
static int (*fake_launches)(long long *out, int max);
static int (*fake_retained)(void);
static void (*fake_kernel)(void (*fn)(void *, long long, unsigned, const CUdeviceptr *,
                                      const void *),
                           void *arg, int nptr, int ndat, int ndbytes);
static long long logged[1 << 16][3];

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

#include "nd_views.h"

static bool pinned(const void *p) {
  int attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned long long t = 0;
  void *d = &t;
  return A.cuPointerGetAttributes(1, &attr, &d, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
         (unsigned)t == CU_MEMORYTYPE_HOST;
}

/* One case: program src (float64 a, b) over n elements; `pin`: bit k pins
** array k in the caller's memory. */
static int by_base(const void *x, const void *y) {
  const long long *a = x, *b = y;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Whether the launches logged since the last look ran each of elements
** [0, n) once; *ndev: how many devices ran some. */
static bool covered(int64_t n, const char *name, int *ndev) {
  int k = fake_launches((long long *)logged, 1 << 16);
  *ndev = 0;
  if (k < 0) {
    printf("FAIL %s: the fake's launch log overflowed\n", name);
    return false;
  }
  qsort(logged, (size_t)k, sizeof *logged, by_base);
  int64_t at = 0;
  unsigned seen = 0;
  for (int j = 0; j < k; j++) {
    if (logged[j][1] != at) {
      printf("FAIL %s: a launch starts at element %lld, expected %lld\n", name, logged[j][1],
             (long long)at);
      return false;
    }
    at += logged[j][2];
    seen |= 1u << (logged[j][0] & 31);
  }
  if (at != n) {
    printf("FAIL %s: the launches ran elements [0, %lld) of %lld\n", name, (long long)at,
           (long long)n);
    return false;
  }
  *ndev = __builtin_popcount(seen);
  return true;
}

static void one_on(jitc_context *ctx, const char *src, int nb, int64_t n, int pin, int shift,
                   CudaTune tune, const char *label, const char *devices, int want_dev) {
  char name[200];
  snprintf(name, sizeof name, "host_pipe.%s%s%s n=%lld '%s'", label, devices ? " devices " : "",
           devices ? devices : "", (long long)n, src);
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  o.devices = devices;
  jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, nb, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
    nfail++;
    return;
  }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = tune;
  int na = jitc_kernel_array_count(k);
  void *base[4], *arr[4], *want[4];
  size_t bytes = (size_t)(n + shift + 1) * 8;
  bool result[4] = {0};
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &an, &role, &dt);
    result[a] = role == JITC_RESULT; /* one element, which the fake's jitc_r leaves as it was */
    if (pin >> a & 1)
      A.cuMemHostAlloc(&base[a], bytes, 0);
    else
      base[a] = malloc(bytes);
    arr[a] = (double *)base[a] + shift;
    want[a] = malloc(bytes);
    for (int64_t i = 0; i < n; i++)
      ((double *)arr[a])[i] = (double)(next() >> 11);
    memcpy(want[a], arr[a], (size_t)n * 8);
  }
  if (fake_launches)
    fake_launches(NULL, 0); /* the log starts empty */
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  int bad = st != JITC_OK, ndev = 0;
  if (!bad && fake_launches && !covered(n, name, &ndev))
    bad = 1;
  if (!bad && want_dev && ndev != want_dev) {
    printf("FAIL %s: %d device%s ran it, expected %d\n", name, ndev, ndev == 1 ? "" : "s",
           want_dev);
    bad = 1;
  }
  for (int a = 0; a < na && !bad; a++) {
    if (result[a])
      continue;
    if (memcmp(want[a], arr[a], (size_t)n * 8)) {
      int64_t i = 0;
      while (((double *)want[a])[i] == ((double *)arr[a])[i])
        i++;
      printf("FAIL %s: array %d differs first at element %lld\n", name, a, (long long)i);
      bad = 1;
    }
    if (n && pinned(arr[a]) != (pin >> a & 1)) {
      printf("FAIL %s: array %d is %spinned after the run\n", name, a,
             pinned(arr[a]) ? "" : "not ");
      bad = 1;
    }
  }
  if (st != JITC_OK)
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
  else if (!bad)
    printf("ok %s\n", name);
  nfail += bad;
  for (int a = 0; a < na; a++) {
    if (pin >> a & 1)
      A.cuMemFreeHost(base[a]);
    else
      free(base[a]);
    free(want[a]);
  }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = (CudaTune){0};
  jitc_kernel_free(k);
}

static void one(jitc_context *ctx, const char *src, int nb, int64_t n, int pin, int shift,
                CudaTune tune, const char *label) {
  one_on(ctx, src, nb, n, pin, shift, tune, label, NULL, 0);
}

/* ---- arrays of any strides (jitc_run_arrays) ---- */

/* The fake's jitc_k32 for these tests: each written array gets the first
** read array plus twice the second plus, where the program reads `i`, the
** element's index (without `i` the run may take the elements in memory's
** order, not C order). */
typedef struct Body {
  int nread, read[2], nwrite, write[2];
  bool index;
} Body;

static void body(void *arg, long long base, unsigned n, const CUdeviceptr *ptr,
                 const void *nd) {
  const Body *B = arg;
  for (unsigned j = 0; j < n; j++) {
    double v = 0, x;
    for (int r = 0; r < B->nread; r++) {
      memcpy(&x, (char *)(uintptr_t)ptr[B->read[r]] + (size_t)j * 8, 8);
      v += (r + 1) * x;
    }
    if (B->index)
      v += (double)(base + (long long)j);
    for (int w = 0; w < B->nwrite; w++)
      memcpy((char *)(uintptr_t)ptr[B->write[w]] + (size_t)j * 8, &v, 8);
  }
}

/* One run over views of a, b and c (kind -1: the program has no such
** array) broadcasting to (r, c), or (c,) when r is 0. */
static void one_nd(jitc_context *ctx, const char *src, const int *kinds, int pin, int64_t r,
                   int64_t c, CudaTune tune, const char *label, const char *devices) {
  char name[300];
  snprintf(name, sizeof name, "host_pipe.nd-%s%s%s (%lld,%lld) '%s' a %s%s, b %s, c %s%s",
           label, devices ? " devices " : "", devices ? devices : "", (long long)r, (long long)c,
           src, view_name[kinds[0]], pin & 1 ? " pinned" : "",
           kinds[1] >= 0 ? view_name[kinds[1]] : "-", kinds[2] >= 0 ? view_name[kinds[2]] : "-",
           pin & 4 ? " pinned" : "");
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  o.devices = devices;
  jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, d, kinds[1] >= 0 ? 2 : 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
    nfail++;
    return;
  }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = tune;
  int na = jitc_kernel_array_count(k), fnd = r > 0 ? 2 : 1, q = 0;
  int64_t fshape[2] = {r > 0 ? r : c, c}, n = r > 0 ? r * c : c;
  View v[3];
  int rview[2], wview[2]; /* the views of B's reads and writes */
  jitc_array arr[4];
  double s = 0;
  Body B = {.index = strstr(src, "(i)") != NULL};
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &an, &role, &dt);
    if (role == JITC_RESULT) {
      arr[a] = (jitc_array){&s, 0, NULL, NULL};
      continue;
    }
    int w = an[0] - 'a';
    v[w] = view_new(kinds[w], r, c, pin >> w & 1 ? VIEW_PINNED : VIEW_PAGEABLE);
    arr[a] = (jitc_array){v[w].data, v[w].nd, v[w].shape, v[w].strides};
    if (role != JITC_OUTPUT)
      rview[B.nread] = w, B.read[B.nread++] = q;
    if (role != JITC_INPUT)
      wview[B.nwrite] = w, B.write[B.nwrite++] = q;
    q++;
  }
  /* What every buffer must hold after the run. */
  char *want[3] = {0};
  for (int w = 0; w < 3; w++)
    if (kinds[w] >= 0 && (want[w] = malloc(v[w].bytes)))
      memcpy(want[w], v[w].mem, v[w].bytes);
  for (int64_t e = 0; e < n; e++) {
    double x = 0, y;
    for (int t = 0; t < B.nread; t++) { /* from the buffers as they were */
      memcpy(&y, elem_at(&v[rview[t]], fnd, fshape, e), 8);
      x += (t + 1) * y;
    }
    if (B.index)
      x += (double)e;
    for (int t = 0; t < B.nwrite; t++)
      memcpy(want[wview[t]] + (elem_at(&v[wview[t]], fnd, fshape, e) - v[wview[t]].mem), &x, 8);
  }
  fake_kernel(body, &B, q, 0, 0);
  fake_launches(NULL, 0);
  jitc_status st = jitc_run_arrays(ctx, k, arr, NULL, NULL);
  fake_kernel(NULL, NULL, 0, 0, 0);
  int bad = st != JITC_OK, ndev;
  if (bad)
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
  else if (!covered(n, name, &ndev))
    bad = 1;
  for (int w = 0; w < 3 && !bad; w++) {
    if (kinds[w] < 0)
      continue;
    size_t b = 0;
    while (b < v[w].bytes && v[w].mem[b] == want[w][b])
      b++;
    if (b < v[w].bytes) {
      printf("FAIL %s: array %c: byte %zu of its buffer differs (%lld bytes from the view's "
             "first element)\n", name, 'a' + w, b, (long long)(v[w].mem + b - v[w].data));
      bad = 1;
    } else if (pinned(v[w].mem) != (bool)(pin >> w & 1)) {
      printf("FAIL %s: array %c is %spinned after the run\n", name, 'a' + w,
             pinned(v[w].mem) ? "" : "not ");
      bad = 1;
    }
  }
  if (!bad)
    printf("ok %s\n", name);
  nfail += bad;
  for (int w = 0; w < 3; w++)
    if (kinds[w] >= 0) {
      view_free(&v[w]);
      free(want[w]);
    }
  ((CudaState *)ctx->target_state[JITC_TARGET_CUDA])->tune = (CudaTune){0};
  jitc_kernel_free(k);
}

static void strided(jitc_context *ctx) {
  if (!fake_kernel || !fake_launches) {
    printf("skip host_pipe.nd: the driver is not tests/cuda_fake.c\n");
    return;
  }
  const char *P1 = "c = a + 2 * b + f64(i)", *P2 = "a[i] = a + 2 * b + f64(i)",
             *P3 = "s = sum(a); a[i] = a";
  static const struct {
    int prog; /* 1, 2, 3: P1, P2, P3 */
    int kinds[3], pin;
    int64_t r, c;
  } cases[] = {
      {1, {V_TRANSPOSED, V_ROW, V_CONTIG}, 0, 301, 997},
      {1, {V_STEP2, V_COLUMN, V_TRANSPOSED}, 0, 301, 997},
      {1, {V_CONTIG, V_ZERO, V_REVERSED}, 0, 301, 997},
      {1, {V_UNALIGNED, V_SCALAR, V_UNALIGNED}, 0, 301, 997},
      {1, {V_TRANSPOSED, V_ROW, V_CONTIG}, 5, 301, 997},
      {1, {V_REVERSED, V_STEP2, V_STEP2}, 0, 0, 100003},
      {1, {V_TRANSPOSED, V_ROW, V_STEP2}, 0, 3, 50001},
      {1, {V_CONTIG, V_COLUMN, V_CONTIG}, 4, 3, 50001},
      {2, {V_TRANSPOSED, V_ROW, -1}, 0, 301, 997},
      {2, {V_UNALIGNED, V_COLUMN, -1}, 0, 301, 997},
      {2, {V_REVERSED, V_SCALAR, -1}, 0, 0, 100003},
      {2, {V_STEP2, V_ZERO, -1}, 1, 3, 50001},
      {3, {V_TRANSPOSED, -1, -1}, 0, 301, 997},
      {3, {V_STEP2, -1, -1}, 1, 0, 100003},
  };
  const int64_t KB = 1024;
  static const struct {
    const char *label;
    CudaTune tune;
    const char *devices;
  } setups[] = {
      {"64K", {.chunk_bytes = 64 * KB}, NULL},
      {"64K-slots-2-threads-1-plain", {64 * KB, 2, 1, 0, 1}, NULL},
      {"256K-slots-8-threads-16", {256 * KB, 8, 16, 0, 2}, NULL},
      {"64K-registered", {.chunk_bytes = 64 * KB, .reg = 2}, NULL},
      {"default", {0}, NULL},
      {"multi-64K", {.chunk_bytes = 64 * KB, .share_min = 1}, "0,1"},
      {"multi-64K-registered", {.chunk_bytes = 64 * KB, .reg = 2, .share_min = 1}, "0,0"},
  };
  int count = 0;
  A.cuDeviceGetCount(&count);
  for (size_t u = 0; u < sizeof setups / sizeof *setups; u++)
    for (size_t q = 0; q < sizeof cases / sizeof *cases; q++) {
      if (setups[u].devices && count < 2)
        continue;
      int p = cases[q].prog;
      one_nd(ctx, p == 1 ? P1 : p == 2 ? P2 : P3, cases[q].kinds, cases[q].pin, cases[q].r,
             cases[q].c, setups[u].tune, setups[u].label, setups[u].devices);
    }
}

/* The chunks of a run of n elements, as its trace records them, into
** off[] (their starts; the count is returned). */
static int64_t chunks_of(jitc_context *ctx, jitc_kernel *k, int64_t n, void **arr,
                         int64_t *off, int64_t cap) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  CudaTrace T = {.cap = cap};
  T.c = calloc((size_t)cap, sizeof *T.c);
  S->trace = &T;
  jitc_status st = jitc_run(ctx, k, n, arr, NULL, NULL);
  S->trace = NULL;
  for (int64_t c = 0; c < T.n; c++)
    off[c] = T.c[c].off;
  free(T.c);
  return st == JITC_OK ? T.n : -1;
}

/* The chunks set the partials of reductions, so the bits of a float sum:
** they must be the same whatever the memory of the arrays (pageable, pinned,
** registered for the call) and on every call. */
static void same_chunks(void) {
  const int64_t n = 3000017, cap = 4096;
  int64_t off[4][4096], cnt[4];
  const char *how[4] = {"first call (registered)", "second call (staged)", "pinned",
                        "first array pinned"};
  jitc_context *ctx = jitc_context_new();
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl d[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, "a[i] = a; b[i] = b", d, 2, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL host_pipe.same_chunks: %s\n", jitc_errmsg(ctx));
    nfail++;
    return;
  }
  void *pg[2] = {calloc((size_t)n, 8), calloc((size_t)n, 8)}, *pin[2];
  A.cuMemHostAlloc(&pin[0], (size_t)n * 8, 0);
  A.cuMemHostAlloc(&pin[1], (size_t)n * 8, 0);
  void *mixed[2] = {pin[0], pg[1]};
  cnt[0] = chunks_of(ctx, k, n, pg, off[0], cap);
  cnt[1] = chunks_of(ctx, k, n, pg, off[1], cap);
  cnt[2] = chunks_of(ctx, k, n, pin, off[2], cap);
  cnt[3] = chunks_of(ctx, k, n, mixed, off[3], cap);
  int bad = 0;
  for (int q = 1; q < 4 && !bad; q++)
    if (cnt[q] != cnt[0] || cnt[0] < 2 || memcmp(off[q], off[0], (size_t)cnt[0] * sizeof **off)) {
      printf("FAIL host_pipe.same_chunks: %s: %lld chunks, %s: %lld, or other boundaries\n",
             how[0], (long long)cnt[0], how[q], (long long)cnt[q]);
      bad = 1;
    }
  if (!bad)
    printf("ok host_pipe.same_chunks (%lld chunks on every path)\n", (long long)cnt[0]);
  nfail += bad;
  free(pg[0]);
  free(pg[1]);
  A.cuMemFreeHost(pin[0]);
  A.cuMemFreeHost(pin[1]);
  jitc_kernel_free(k);
  jitc_context_free(ctx);
}

/* ---- the shares of several GPUs (cuda/shares.c), no driver needed ---- */

static int unit_bad;
static void expect(bool ok, const char *what) {
  if (!ok) {
    printf("FAIL host_pipe.shares: %s\n", what);
    unit_bad = 1;
  }
}

/* cut[] of n elements over weights w: in order, from 0 to n, each on an
** allowed boundary, each within half a granule (or chunk) of its ideal. */
static void check_cut(int64_t n, const int64_t *at, int64_t nat, int64_t granule, const double *w,
                      int nw, const char *what) {
  int64_t cut[9];
  cuda_split(n, at, nat, granule, w, nw, cut);
  char msg[200];
  double total = 0, sum = 0;
  for (int d = 0; d < nw; d++)
    total += w[d];
  bool ok = cut[0] == 0 && cut[nw] == n;
  for (int d = 1; d <= nw && ok; d++) {
    ok &= cut[d] >= cut[d - 1];
    if (d == nw)
      break;
    sum += w[d - 1];
    double ideal = (double)n * sum / total;
    bool on = false;
    double gap = granule / 2.0 + 0.5;
    if (at) {
      for (int64_t j = 0; j <= nat; j++) {
        on |= at[j] == cut[d];
        /* the nearest boundary: no other closer */
        ok &= fabs((double)at[j] - ideal) >= fabs((double)cut[d] - ideal) || cut[d] < cut[d - 1];
      }
    } else {
      on = cut[d] % granule == 0 || cut[d] == n;
      ok &= fabs((double)cut[d] - ideal) <= gap || cut[d] == cut[d - 1];
    }
    ok &= on;
  }
  snprintf(msg, sizeof msg, "%s: n=%lld over %d GPUs cut at %lld, %lld, %lld", what,
           (long long)n, nw, (long long)cut[0], (long long)cut[1], (long long)cut[nw > 1 ? 2 : 1]);
  expect(ok, msg);
}

static void shares_unit(void) {
  const double one2[2] = {1, 1}, one3[3] = {1, 1, 1}, two1[2] = {2, 1}, one8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t cut[9];
  /* Sizes not divisible by the GPU count, one element, none. */
  static const int64_t sizes[] = {0, 1, 2, 4095, 4096, 4097, 8191, 12293, 100003, 1000003,
                                  (int64_t)1 << 31, 1000000007};
  for (size_t q = 0; q < sizeof sizes / sizeof *sizes; q++) {
    check_cut(sizes[q], NULL, 0, 4096, one2, 2, "2 equal");
    check_cut(sizes[q], NULL, 0, 4096, one3, 3, "3 equal");
    check_cut(sizes[q], NULL, 0, 4096, two1, 2, "2:1");
    check_cut(sizes[q], NULL, 0, 4096, one8, 8, "8 equal");
  }
  cuda_split(12293, NULL, 0, 4096, one2, 2, cut);
  expect(cut[1] == 8192, "12293 elements over 2 GPUs: the first takes 8192");
  cuda_split(3 * 4096 * 100, NULL, 0, 4096, two1, 2, cut);
  expect(cut[1] == 2 * 4096 * 100, "a GPU twice as fast takes twice the elements");
  cuda_split(10, NULL, 0, 4096, one2, 2, cut);
  expect(cut[0] == 0 && cut[1] == 0 && cut[2] == 10, "10 elements: one GPU takes them all");
  cuda_split(0, NULL, 0, 4096, one3, 3, cut);
  expect(cut[1] == 0 && cut[2] == 0 && cut[3] == 0, "no elements: empty shares");
  /* On the chunks of a reduction. */
  const int64_t at[] = {0, 100, 300, 600, 1000};
  check_cut(1000, at, 4, 0, one2, 2, "chunks");
  check_cut(1000, at, 4, 0, one3, 3, "chunks");
  check_cut(1000, at, 4, 0, one8, 8, "chunks");
  cuda_split(1000, at, 4, 0, one2, 2, cut);
  expect(cut[1] == 600, "chunks 0 100 300 600 1000 over 2: cut at 600");
  const int64_t at1[] = {0, 1};
  cuda_split(1, at1, 1, 0, one2, 2, cut);
  expect(cut[1] == 0 && cut[2] == 1, "one element, one chunk: on one GPU");
  for (int64_t n = 1; n < 3000000; n = n * 3 + 1) { /* the host pipeline's own chunks */
    int64_t nat;
    int64_t *c = cuda_cut(0, n, 65536, &nat);
    expect(c && c[0] == 0 && c[nat] == n, "cuda_cut covers [0, n)");
    if (c) {
      check_cut(n, c, nat, 0, one2, 2, "cuda_cut's chunks");
      check_cut(n, c, nat, 0, one3, 3, "cuda_cut's chunks");
    }
    free(c);
  }
  /* Weights: within 10% of the fastest counts as the fastest. */
  const double rate[3] = {50, 46, 20};
  double w[3];
  cuda_weights(rate, 3, w);
  expect(w[0] == 1 && w[1] == 1 && w[2] == 0.4, "weights of links at 50, 46, 20 GB/s");
  const double none[2] = {0, 0};
  cuda_weights(none, 2, w);
  expect(w[0] == 1 && w[1] == 1, "weights without rates: equal");
  /* How many GPUs a run is worth. */
  expect(cuda_lanes_for(0, 2, 64) == 1, "no bytes: one GPU");
  expect(cuda_lanes_for(127, 2, 64) == 1, "127 bytes, 64 a GPU: one GPU");
  expect(cuda_lanes_for(128, 2, 64) == 2, "128 bytes, 64 a GPU: two");
  expect(cuda_lanes_for((size_t)1 << 40, 8, (int64_t)64 << 20) == 8, "a TB: all eight");
  /* Device lists. */
  int d[64];
  char err[200];
  expect(cuda_parse_devices("0,1", -1, d, 64, err, sizeof err) == 2 && d[0] == 0 && d[1] == 1,
         "'0,1'");
  expect(cuda_parse_devices("1,0", 2, d, 64, err, sizeof err) == 2 && d[0] == 1 && d[1] == 0,
         "'1,0'");
  expect(cuda_parse_devices("0,0", 1, d, 64, err, sizeof err) == 2 && d[1] == 0, "'0,0'");
  expect(cuda_parse_devices("all", -1, d, 64, err, sizeof err) == 0, "'all'");
  static const char *badlist[] = {"", ",", "0,", ",0", "a", "0;1", "1,x", "-1", " 0", "0 ",
                                  "99999999999"};
  for (size_t q = 0; q < sizeof badlist / sizeof *badlist; q++) {
    char what[80];
    snprintf(what, sizeof what, "'%s' is refused", badlist[q]);
    expect(cuda_parse_devices(badlist[q], -1, d, 64, err, sizeof err) == -1, what);
  }
  expect(cuda_parse_devices("2", 2, d, 64, err, sizeof err) == -1 && strstr(err, "no device 2"),
         "device 2 of 2 is refused");
  expect(cuda_parse_devices("0,0,0", -1, d, 2, err, sizeof err) == -1, "more than the most");
  if (!unit_bad)
    printf("ok host_pipe.shares (sizes 0 to 2^31 over 2, 3 and 8 GPUs, chunks, weights, "
           "device lists)\n");
  nfail += unit_bad;
}

/* The split over several GPUs (fake ones): every element once, on the GPU
** of its share, back in its place. */
static void multi_gpu(jitc_context *ctx) {
  int count = 0;
  A.cuDeviceGetCount(&count);
  if (count < 2 || !fake_launches) {
    printf("skip host_pipe.multi: one device (set FAKE_CUDA_DEVICES=2)\n");
    return;
  }
  const int64_t KB = 1024;
  static const struct {
    const char *devices;
    int distinct;
  } lists[] = {{"0,1", 2}, {"1,0", 2}, {"0,0", 1}, {"1,0,1", 2}};
  static const struct {
    const char *src;
    int nb;
  } progs[] = {{"a[i] = a", 1},
               {"a[i] = a; b[i] = b", 2},
               {"a[i] = a + 0 * b", 2},
               {"s = sum(a); a[i] = a", 1},
               {"s = sum(a); t = prod(b); a[i] = a", 2}};
  static const int64_t sizes[] = {0, 1, 4095, 4097, 12293, 100003, 1000003};
  static const struct {
    const char *label;
    CudaTune tune;
    int pin;
  } setups[] = {
      {"multi-64K", {.chunk_bytes = 64 * KB, .share_min = 1}, 0},
      {"multi-64K-registered", {.chunk_bytes = 64 * KB, .reg = 2, .share_min = 1}, 0},
      {"multi-64K-first-pinned", {.chunk_bytes = 64 * KB, .share_min = 1}, 1},
      {"multi-default", {.share_min = 1}, 0},
  };
  for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
    for (size_t u = 0; u < sizeof setups / sizeof *setups; u++)
      for (size_t p = 0; p < sizeof progs / sizeof *progs; p++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
          /* 1000003 elements in 64 KiB chunks: every GPU gets some. */
          int want = sizes[s] == 1000003 && setups[u].tune.chunk_bytes ? lists[l].distinct : 0;
          one_on(ctx, progs[p].src, progs[p].nb, sizes[s], setups[u].pin, 0, setups[u].tune,
                 setups[u].label, lists[l].devices, want);
        }
  /* Below the least share, one GPU. */
  one_on(ctx, "a[i] = a", 1, 1000003, 0, 0, (CudaTune){.chunk_bytes = 64 * KB}, "multi-small",
         "0,1", 1);
  /* With no list, a GPU whose context is not yet made joins from the
  ** second run that would use it; with a list ("all"), from the first. */
  CudaTune t = {.chunk_bytes = 64 * KB, .share_min = 1};
  jitc_context *fresh = jitc_context_new();
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-unlisted-first", NULL, 1);
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-unlisted-second", NULL, 2);
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-unlisted-then", NULL, 2);
  jitc_context_free(fresh);
  fresh = jitc_context_new();
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-listed-all-first", "all", 2);
  jitc_context_free(fresh);
  /* A GPU that cannot be used (its context refused): with no list the
  ** run stays on the others; a list that names it fails, naming it. */
  setenv("FAKE_CUDA_BUSY", "1", 1);
  fresh = jitc_context_new();
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-busy-unlisted", NULL, 1);
  one_on(fresh, "a[i] = a", 1, 1000003, 0, 0, t, "multi-busy-unlisted-second", NULL, 1);
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.devices = "0,1";
  jitc_array_decl d[1] = {{"a", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  double *x = calloc(1000003, 8);
  void *arr[1] = {x};
  ((CudaState *)fresh->target_state[JITC_TARGET_CUDA])->tune = t;
  jitc_status st = jitc_compile(fresh, "a[i] = a", d, 1, NULL, 0, &o, &k);
  if (st == JITC_OK)
    st = jitc_run(fresh, k, 1000003, arr, NULL, NULL);
  if (st == JITC_E_UNAVAILABLE && strstr(jitc_errmsg(fresh), "device 1"))
    printf("ok host_pipe.multi-busy-listed: %s", jitc_errmsg(fresh));
  else
    printf("FAIL host_pipe.multi-busy-listed: status %s: %s\n", jitc_status_name(st),
           jitc_errmsg(fresh)), nfail++;
  free(x);
  jitc_kernel_free(k);
  jitc_context_free(fresh);
  unsetenv("FAKE_CUDA_BUSY");
}

int main(void) {
  shares_unit();
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip host_pipe: %s\n", jitc_errmsg(ctx));
    return 0;
  }
  char err[256];
  if (cuda_load_driver(&A, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("FAIL host_pipe.driver: %s\n", err);
    return 1;
  }
  void *fake = getenv("JITC_LIBCUDA") ? dlopen(getenv("JITC_LIBCUDA"), RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (fake) {
    fake_launches = (int (*)(long long *, int))dlsym(fake, "fake_launches");
    fake_retained = (int (*)(void))dlsym(fake, "fake_retained");
    *(void **)&fake_kernel = dlsym(fake, "fake_kernel");
  }
  const int64_t KB = 1024;
  static const struct {
    const char *label;
    CudaTune tune;
    int pin, shift;
  } setups[] = {
      {"default", {0}, 0, 0},
      {"chunks-64K", {.chunk_bytes = 64 * KB}, 0, 0},
      {"chunks-64K-slots-2-threads-1-plain", {64 * KB, 2, 1, 0, 1}, 0, 0},
      {"chunks-64K-slots-3-threads-3", {64 * KB, 3, 3, 0, 0}, 0, 0},
      {"chunks-256K-slots-8-threads-16", {256 * KB, 8, 16, 0, 2}, 0, 0},
      {"chunks-64K-pinned", {.chunk_bytes = 64 * KB}, 3, 0},
      {"chunks-64K-first-pinned", {.chunk_bytes = 64 * KB}, 1, 0},
      {"chunks-64K-second-pinned-misaligned", {.chunk_bytes = 64 * KB}, 2, 1},
      {"chunks-64K-registered", {.chunk_bytes = 64 * KB, .reg = 2}, 0, 0},
      {"chunks-128K-registered-misaligned", {.chunk_bytes = 128 * KB, .reg = 2}, 0, 3},
      {"chunks-64K-registered-first-pinned", {.chunk_bytes = 64 * KB, .reg = 2}, 1, 0},
  };
  static const struct {
    const char *src;
    int nb;
  } progs[] = {{"a[i] = a", 1}, {"a[i] = a; b[i] = b", 2}, {"a[i] = a + 0 * b", 2}};
  static const int64_t sizes[] = {0, 1, 4095, 4097, 100003, 1000003};
  for (size_t u = 0; u < sizeof setups / sizeof *setups; u++)
    for (size_t p = 0; p < sizeof progs / sizeof *progs; p++)
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        one(ctx, progs[p].src, progs[p].nb, sizes[s], setups[u].pin, setups[u].shift,
            setups[u].tune, setups[u].label);
  multi_gpu(ctx);
  strided(ctx);
  jitc_context_free(ctx);
  if (fake_retained && fake_retained() != 0) {
    printf("FAIL host_pipe.released: %d primary contexts still retained after the context's end\n",
           fake_retained());
    nfail++;
  }
  same_chunks();
  return nfail ? 1 : 0;
}
