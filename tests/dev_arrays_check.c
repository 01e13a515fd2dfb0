/*
** dev_arrays_check.c -- jitc_run_device_arrays on a machine without a GPU:
** run with JITC_LIBCUDA and JITC_LIBNVRTC naming tests/cuda_fake.c's
** library (tests/t_host_pipe.sh), whose device memory is host memory and
** whose jitc_k32 is a body of this file's: it does what the generated
** kernel of a pattern does (cuda/access.c) with the launch's pointers and
** the jitc_nd it was given, so that every written element's value says
** whether the host side sent the right pattern, shape, strides and
** pointers.  Each written element must become the first read array plus
** twice the second plus its index in C order, for views of every kind
** (strided, reversed, transposed, broadcast rows, columns and zero strides,
** 0-d), as outputs and in place, with reductions, in launches cut into
** slices (a strided array's pointer stays at its element 0, a contiguous
** one's advances), and no other byte of a buffer may change.  The kernel of
** a pattern is compiled on its first run only; contiguous arrays run
** jitc_run_device's own kernel.  Refusals: elements not aligned to their
** size, a written array that repeats an element, host memory.
** Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why".
*/
#include "../src/jitc_int.h"
#include "../src/cuda/cuda.h"
#include "../runtime/cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CudaApi A;
static int nfail;
static void (*fake_kernel)(void (*fn)(void *, long long, unsigned, const CUdeviceptr *,
                                      const void *),
                           void *arg, int nptr, int ndat, int ndbytes);
static int (*fake_compiles)(void);
static const char *(*fake_source)(void);

static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

#include "nd_views.h"

/* What the kernel of the arrays' pattern does, as this test expects it:
** per pointer of the launch (the arrays that are not results, in order) its
** kind and its row of strides; which pointers it reads and writes. */
typedef struct Dev {
  int nptr, nd, nread, read[2], nwrite, write[2];
  char kind[3];
  int row[3];
  const char *lo[3], *hi[3]; /* each pointer's buffer */
  long long outside;         /* elements the body found outside their buffer */
} Dev;

static void dev_body(void *arg, long long base, unsigned n, const CUdeviceptr *ptr,
                     const void *ndp) {
  Dev *D = arg;
  const int64_t *nd = ndp; /* n[nd], then a row of nd strides per strided array */
  for (unsigned j = 0; j < n; j++) {
    long long g = base + (long long)j, q = g;
    int64_t ix[2] = {0, 0};
    for (int d = D->nd - 1; d >= 0 && nd; d--) {
      ix[d] = d ? q % nd[d] : q;
      q /= nd[d];
    }
    char *at[3];
    for (int k = 0; k < D->nptr; k++) {
      int64_t off = (int64_t)j;
      if (D->kind[k] != CUDA_CONTIG) {
        int top = D->kind[k] == CUDA_BCAST ? D->nd - 1 : D->nd;
        off = 0;
        for (int d = 0; d < top; d++)
          off += ix[d] * nd[D->nd * (1 + D->row[k]) + d];
      }
      at[k] = (char *)(uintptr_t)ptr[k] + off * 8;
      if (at[k] < D->lo[k] || at[k] + 8 > D->hi[k])
        at[k] = NULL;
    }
    bool out = false;
    for (int k = 0; k < D->nptr; k++)
      out |= !at[k];
    if (out) { /* a wrong pointer or stride: counted, not followed */
      D->outside++;
      continue;
    }
    double v = 0, x;
    for (int r = 0; r < D->nread; r++) {
      memcpy(&x, at[D->read[r]], 8);
      v += (r + 1) * x;
    }
    v += (double)g;
    for (int w = 0; w < D->nwrite; w++)
      memcpy(at[D->write[w]], &v, 8);
  }
}

/* The frame strides of v in the frame (r, c) (or (c,)), bytes. */
static void frame(const View *v, int fnd, const int64_t *fshape, int64_t *st) {
  for (int d = 0; d < fnd; d++) {
    int e = d - (fnd - v->nd);
    st[d] = e < 0 || (v->shape[e] == 1 && fshape[d] != 1) ? 0 : v->strides[e];
  }
}

/* One run over device views of a, b and c (kind -1: none). */
static void one(jitc_context *ctx, const char *src, const int *kinds, int64_t r, int64_t c,
                int64_t slice, const char *label) {
  char name[300];
  snprintf(name, sizeof name, "dev_arrays.%s (%lld,%lld) '%s' a %s, b %s, c %s", label,
           (long long)r, (long long)c, src, view_name[kinds[0]],
           kinds[1] >= 0 ? view_name[kinds[1]] : "-", kinds[2] >= 0 ? view_name[kinds[2]] : "-");
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl decl[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, src, decl, kinds[1] >= 0 ? 2 : 1, NULL, 0, &o, &k) != JITC_OK) {
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
    nfail++;
    return;
  }
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  int64_t keep = S->slice;
  if (slice)
    S->slice = slice;
  int na = jitc_kernel_array_count(k), fnd = r > 0 ? 2 : 1, nres = 0;
  int64_t fshape[2] = {r > 0 ? r : c, c}, n = r > 0 ? r * c : c;
  View v[3];
  int rview[2], wview[2], pview[3];
  jitc_array arr[4];
  double s = 0;
  CUdeviceptr ds = 0;
  A.cuMemAlloc(&ds, 8);
  Dev D = {0};
  for (int a = 0; a < na; a++) {
    const char *an;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, a, &an, &role, &dt);
    if (role == JITC_RESULT) {
      arr[a] = (jitc_array){(void *)(uintptr_t)ds, 0, NULL, NULL};
      nres++;
      continue;
    }
    int w = an[0] - 'a';
    v[w] = view_new(kinds[w], r, c, VIEW_DEVICE);
    arr[a] = (jitc_array){v[w].data, v[w].nd, v[w].shape, v[w].strides};
    if (role != JITC_OUTPUT)
      rview[D.nread] = w, D.read[D.nread++] = D.nptr;
    if (role != JITC_INPUT)
      wview[D.nwrite] = w, D.write[D.nwrite++] = D.nptr;
    D.lo[D.nptr] = v[w].mem, D.hi[D.nptr] = v[w].mem + v[w].bytes;
    pview[D.nptr++] = w;
  }
  /* The pattern, as layout.c should coalesce these frames: axes (r, c)
  ** merged where every array steps over both alike. */
  int64_t st[3][2];
  bool merge = fnd == 2;
  for (int q = 0; q < D.nptr; q++) {
    frame(&v[pview[q]], fnd, fshape, st[q]);
    merge &= fnd == 2 && st[q][0] == st[q][1] * c;
  }
  D.nd = merge ? 1 : fnd;
  int ns = 0;
  for (int q = 0; q < D.nptr; q++) {
    int64_t last = st[q][fnd - 1];
    bool contig = last == 8 && (D.nd == 1 || st[q][0] == 8 * c);
    D.kind[q] = contig ? CUDA_CONTIG : last == 0 ? CUDA_BCAST : CUDA_STRIDED;
    D.row[q] = contig ? -1 : ns++;
  }
  char *want[3] = {0};
  for (int w = 0; w < 3; w++)
    if (kinds[w] >= 0 && (want[w] = malloc(v[w].bytes)))
      memcpy(want[w], v[w].mem, v[w].bytes);
  for (int64_t e = 0; e < n; e++) {
    double x = 0, y;
    for (int t = 0; t < D.nread; t++) {
      memcpy(&y, elem_at(&v[rview[t]], fnd, fshape, e), 8);
      x += (t + 1) * y;
    }
    x += (double)e;
    for (int t = 0; t < D.nwrite; t++)
      memcpy(want[wview[t]] + (elem_at(&v[wview[t]], fnd, fshape, e) - v[wview[t]].mem), &x, 8);
  }
  /* jitc_nd is the last parameter: after the pointers, and with reductions
  ** their partials, np, ntot, the counter and their results. */
  int ndat = 3 + D.nptr + (nres ? 2 * nres + 3 : 0);
  fake_kernel(dev_body, &D, D.nptr, ndat, ns ? 8 * D.nd * (1 + ns) : 0);
  int before = fake_compiles();
  jitc_status status = jitc_run_device_arrays(ctx, k, arr, NULL, NULL);
  int compiles = fake_compiles() - before;
  A.cuStreamSynchronize(NULL);
  fake_kernel(NULL, NULL, 0, 0, 0);
  S->slice = keep;
  int bad = status != JITC_OK;
  if (bad)
    printf("FAIL %s: %s\n", name, jitc_errmsg(ctx));
  if (!bad && D.outside) {
    printf("FAIL %s: the kernel would reach %lld elements outside their arrays' memory\n",
           name, D.outside);
    bad = 1;
  }
  if (!bad && !ns && compiles) {
    printf("FAIL %s: contiguous arrays compiled a kernel\n", name);
    bad = 1;
  }
  /* A transpose of an element-wise program, 8 rows by a warp's columns at
  ** least, runs in tiles (cuda/devarrays.c: tiled); nothing else does. */
  bool transposed = false;
  for (int w = 0; w < 3; w++)
    transposed |= kinds[w] == V_TRANSPOSED;
  bool tiles = transposed && !strstr(src, "sum(") && r >= 8 && c >= 32;
  if (!bad && compiles && tiles != (strstr(fake_source(), "Tiles of 32") != NULL)) {
    printf("FAIL %s: its pattern's kernel %s in tiles\n", name, tiles ? "does not run" : "runs");
    bad = 1;
  }
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
    }
  }
  if (!bad)
    printf("ok %s (%s)\n", name, ns ? "its pattern's kernel" : "jitc_run_device's kernel");
  nfail += bad;
  for (int w = 0; w < 3; w++)
    if (kinds[w] >= 0) {
      view_free(&v[w]);
      free(want[w]);
    }
  A.cuMemFree(ds);
  jitc_kernel_free(k);
}

/* A pattern's kernel is compiled on its first run and kept: the same
** pattern again, over other arrays, or in a new kernel of the same program
** (the context's code cache), compiles nothing; another pattern does. */
static void compiles_once(void) {
  jitc_context *ctx = jitc_context_new();
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl decl[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL, *k2 = NULL;
  View t1 = view_new(V_TRANSPOSED, 30, 40, VIEW_DEVICE), t2 = view_new(V_TRANSPOSED, 50, 60,
                                                                       VIEW_DEVICE);
  View r1 = view_new(V_ROW, 30, 40, VIEW_DEVICE), r2 = view_new(V_ROW, 50, 60, VIEW_DEVICE);
  View c1 = view_new(V_CONTIG, 30, 40, VIEW_DEVICE), c2 = view_new(V_CONTIG, 50, 60, VIEW_DEVICE);
  View col = view_new(V_COLUMN, 30, 40, VIEW_DEVICE), c3 = view_new(V_CONTIG, 30, 40, VIEW_DEVICE);
  View t3 = view_new(V_TRANSPOSED, 30, 40, VIEW_DEVICE), t4 = view_new(V_TRANSPOSED, 30, 40,
                                                                       VIEW_DEVICE);
#define ARR(v) {(v).data, (v).nd, (v).shape, (v).strides}
  jitc_array x1[3] = {ARR(t1), ARR(r1), ARR(c1)}, x2[3] = {ARR(t2), ARR(r2), ARR(c2)};
  jitc_array y[3] = {ARR(t1), ARR(col), ARR(c1)}, z[3] = {ARR(c1), ARR(c1), ARR(c3)};
  jitc_array t[3] = {ARR(t1), ARR(t3), ARR(t4)};
#undef ARR
  /* All transposed alike, in a program of no `i`: their memory's order,
  ** one contiguous run (layout.c: memory_order), jitc_run_device's kernel. */
  int got[7];
  const int want[7] = {1, 0, 0, 1, 0, 0, 0};
  const char *what[7] = {"first run", "same pattern, other arrays", "again", "other pattern",
                         "contiguous", "new kernel, first pattern", "all transposed alike"};
  jitc_status st = jitc_compile(ctx, "c = a + b", decl, 2, NULL, 0, &o, &k);
  jitc_array *runs[7] = {x1, x2, x1, y, z, x1, t};
  for (int q = 0; q < 7 && st == JITC_OK; q++) {
    if (q == 5)
      st = jitc_compile(ctx, "c = a + b", decl, 2, NULL, 0, &o, &k2);
    int before = fake_compiles();
    if (st == JITC_OK)
      st = jitc_run_device_arrays(ctx, q == 5 ? k2 : k, runs[q], NULL, NULL);
    got[q] = fake_compiles() - before;
  }
  A.cuStreamSynchronize(NULL);
  int bad = st != JITC_OK;
  for (int q = 0; q < 7 && !bad; q++)
    if (got[q] != want[q]) {
      printf("FAIL dev_arrays.compiles_once: %s: %d compiles, expected %d\n", what[q], got[q],
             want[q]);
      bad = 1;
    }
  if (st != JITC_OK)
    printf("FAIL dev_arrays.compiles_once: %s\n", jitc_errmsg(ctx));
  else if (!bad)
    printf("ok dev_arrays.compiles_once (a pattern's kernel on its first run, then kept)\n");
  nfail += bad;
  View all[10] = {t1, t2, r1, r2, c1, c2, col, c3, t3, t4};
  for (int q = 0; q < 10; q++)
    view_free(&all[q]);
  jitc_kernel_free(k);
  jitc_kernel_free(k2);
  jitc_context_free(ctx);
}

/* A refusal: status st, its message holding `words`. */
static void refused(jitc_context *ctx, const char *what, const char *src, jitc_array *arr,
                    int nb, jitc_status want, const char *words) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = JITC_TARGET_CUDA;
  o.no_cache = 1;
  jitc_array_decl decl[2] = {{"a", JITC_FLOAT64}, {"b", JITC_FLOAT64}};
  jitc_kernel *k = NULL;
  jitc_status st = jitc_compile(ctx, src, decl, nb, NULL, 0, &o, &k);
  if (st == JITC_OK)
    st = jitc_run_device_arrays(ctx, k, arr, NULL, NULL);
  A.cuStreamSynchronize(NULL);
  if (st == want && strstr(jitc_errmsg(ctx), words))
    printf("ok dev_arrays.refused %s: %s", what, jitc_errmsg(ctx));
  else
    printf("FAIL dev_arrays.refused %s: status %s: %s\n", what, jitc_status_name(st),
           jitc_errmsg(ctx)), nfail++;
  jitc_kernel_free(k);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* each line out before a crash */
  jitc_context *ctx = jitc_context_new();
  if (jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    printf("skip dev_arrays: %s\n", jitc_errmsg(ctx));
    return 0;
  }
  char err[256];
  if (cuda_load_driver(&A, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("FAIL dev_arrays.driver: %s\n", err);
    return 1;
  }
  void *fake = getenv("JITC_LIBCUDA") ? dlopen(getenv("JITC_LIBCUDA"), RTLD_LAZY | RTLD_NOLOAD)
                                      : NULL;
  if (fake) {
    *(void **)&fake_kernel = dlsym(fake, "fake_kernel");
    *(void **)&fake_compiles = dlsym(fake, "fake_compiles");
    *(void **)&fake_source = dlsym(fake, "fake_source");
  }
  if (!fake_kernel || !fake_compiles || !fake_source) {
    printf("skip dev_arrays: the driver is not tests/cuda_fake.c\n");
    jitc_context_free(ctx);
    return 0;
  }
  const char *P1 = "c = a + 2 * b + f64(i)", *P2 = "a[i] = a + 2 * b + f64(i)",
             *P3 = "s = sum(a); a[i] = a + 2 * a + f64(i)";
  static const struct {
    int prog, kinds[3];
    int64_t r, c;
  } cases[] = {
      {1, {V_TRANSPOSED, V_ROW, V_CONTIG}, 301, 997},
      {1, {V_STEP2, V_COLUMN, V_TRANSPOSED}, 301, 997},
      {1, {V_CONTIG, V_ZERO, V_REVERSED}, 301, 997},
      {1, {V_REVERSED, V_SCALAR, V_CONTIG}, 301, 997},
      {1, {V_CONTIG, V_ROW, V_CONTIG}, 3, 50001},
      {1, {V_CONTIG, V_CONTIG, V_CONTIG}, 301, 997},
      {1, {V_REVERSED, V_STEP2, V_STEP2}, 0, 100003},
      {1, {V_CONTIG, V_SCALAR, V_CONTIG}, 0, 100003},
      {2, {V_TRANSPOSED, V_ROW, -1}, 301, 997},
      {2, {V_STEP2, V_ZERO, -1}, 3, 50001},
      {2, {V_REVERSED, V_SCALAR, -1}, 0, 100003},
      {3, {V_TRANSPOSED, -1, -1}, 301, 997},
      {3, {V_STEP2, -1, -1}, 0, 100003},
  };
  for (int sliced = 0; sliced < 2; sliced++)
    for (size_t q = 0; q < sizeof cases / sizeof *cases; q++) {
      int p = cases[q].prog;
      one(ctx, p == 1 ? P1 : p == 2 ? P2 : P3, cases[q].kinds, cases[q].r, cases[q].c,
          sliced ? 8192 : 0, sliced ? "slices-of-8192" : "one-launch");
    }

  /* Refusals, before anything is queued. */
  View a = view_new(V_UNALIGNED, 30, 40, VIEW_DEVICE), b = view_new(V_ROW, 30, 40, VIEW_DEVICE);
  View c = view_new(V_CONTIG, 30, 40, VIEW_DEVICE);
  jitc_array arr[3] = {{a.data, a.nd, a.shape, a.strides}, {b.data, b.nd, b.shape, b.strides},
                       {c.data, c.nd, c.shape, c.strides}};
  refused(ctx, "unaligned", "c = a + b", arr, 2, JITC_E_INPUT, "not aligned to their size");
  View big = view_new(V_CONTIG, 30, 40, VIEW_DEVICE);
  int64_t odd[2] = {160, 4}; /* within big's buffer, 4 bytes apart */
  arr[0] = (jitc_array){big.data, 2, c.shape, odd};
  refused(ctx, "odd-strides", "c = a + b", arr, 2, JITC_E_INPUT, "device array 'a'");
  int64_t zero[2] = {0, 8};
  arr[0] = (jitc_array){b.data, 2, c.shape, NULL};
  arr[2] = (jitc_array){b.data, 2, c.shape, zero};
  refused(ctx, "repeating-output", "c = a + b", arr, 2, JITC_E_INPUT, "stride 0");
  double host[40];
  arr[0] = (jitc_array){host, 1, b.shape, NULL};
  arr[1] = (jitc_array){b.data, 1, b.shape, (int64_t[]){-8}};
  arr[2] = (jitc_array){c.data, 1, b.shape, NULL};
  refused(ctx, "host-memory", "c = a + b", arr, 2, JITC_E_INPUT, "not CUDA device memory");
  view_free(&a);
  view_free(&b);
  view_free(&c);
  view_free(&big);
  jitc_context_free(ctx);
  compiles_once();
  return nfail ? 1 : 0;
}
