/*
** types_gpu.c -- every element type on the cuda target, on a GPU, against
** interp (which defines the semantics, docs/language.md).
**
** For each type of src/types.h: every operator and function of src/ops.h
** the checker accepts on it, every cast to every type, a typed scalar,
** every reduction and a fused pass, a program split into several kernels;
** inputs mixing the type's edge values (the integer types' ends and shift
** counts around the width; NaNs with payloads, infs, -0.0, subnormals and
** the largest values of the floats; every kind of 16-bit float pattern) with
** random ones; at sizes 0, 1, odd tails around the vector widths (16
** elements of 1 byte, 8 of 2 bytes) and large ones; on every path a run
** takes: host arrays, pageable and pinned (cuMemHostAlloc), each aligned and
** one element off; device buffers; the caller's device pointers, aligned
** and one element off (so that 1- and 2-byte arrays take the one-element
** path); the scalar path (JITC_CUDA_VEC=0) and 1 MB chunks.  Every output
** and result starts as a poison pattern (0xA5 bytes), so an element the
** target leaves unwritten shows even where interp's answer is 0.
** Element-wise results must be interp's bits (-0.0 is not 0.0), except: a
** NaN made by arithmetic may be any NaN (the GPU makes its canonical one);
** the C library's functions may differ by 4 ulp
** in float32 and float64 and by 1 ulp in float16 and bfloat16 (computed
** in float32, then rounded); float sums and means by their rounding, float
** products in sign, NaN and inf only.  complex64 and complex128 are two
** floats each (the inputs' parts mix the edge values): their arithmetic
** (fma products, Smith's division) and abs must be interp's bits, their
** functions within 4 ulp in each part or 8 epsilons of the larger part's
** magnitude (a part much smaller than the other carries the other's
** error), their sums and products part by part as floats'.  Casts, neg,
** abs, copysign, where() and the minimum family move bits and must keep
** them, NaN payloads included, wherever a 16-bit float is involved.  The
** rules, and the reading of elements, are types_agree.c's.
**
** Modes:
**   types_gpu check     everything
**   types_gpu quick     sizes up to 4099, for compute-sanitizer
**   types_gpu ulps      as check, printing the largest difference of each
**                       function from interp at the large sizes (in ulps of
**                       a part, and in epsilons of the larger part for
**                       complex results)
**   types_gpu selftest  the agreement rules and the poison, on made-up
**                       answers: what this program accepts (no GPU needed)
** TYPES_GPU_TARGET=cpu compares interp with the cpu target instead (host
** arrays only; no GPU needed); TYPES_GPU_TYPES=int8,bool,... keeps the
** statements within those types, TYPES_GPU_TEST=int8,... tests those
** types' inputs alone.  Prints "ok NAME", "FAIL NAME: why" and
** "skip NAME: why".
*/
#include "../../src/jitc_int.h"
#include "../../runtime/cuda_api.h"
#include "gpu_common.h"
#include "types_agree.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXA = 200, MAXS = 120 };
static CudaApi A;
static CUstream stream;
static int nfail, nok;
static bool quick, have_gpu, ulps;
static jitc_target target = JITC_TARGET_CUDA;

static void fail(const char *name, const char *fmt, ...) PRINTF(2, 3);
static void fail(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL types.%s: ", name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  nfail++;
}

/* ---- values ---- */

/* n elements of type t: random values, and with `specials` the type's edge
** values mixed in (one in five). */
static void fill(void *p, jitc_dtype t, int64_t n, bool specials) {
  if (dtype_is_complex(t)) { /* the parts, each random or an edge value */
    fill(p, dtype_part(t), 2 * n, specials);
    return;
  }
  const TypeInfo *ti = &type_info[t];
  int bits = 8 * ti->size;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next(), v = 0;
    bool s = specials && r % 5 == 0;
    r >>= 3;
    if (ti->kind == T_BOOL) {
      v = r % 3 != 0;
    } else if (ti->kind == T_SINT || ti->kind == T_UINT) {
      int64_t e[] = {0, 1, 2, 3, bits - 1, bits, bits + 1, -1, -2, -bits, ti->lo, ti->lo + 1,
                     (int64_t)ti->hi, (int64_t)(ti->hi - 1), 7, 100};
      v = s ? (uint64_t)e[r % 16] : r % 4 == 0 ? r : (uint64_t)((int64_t)(r % 41) - 20);
    } else if (is_half(t)) {
      static const uint16_t f16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
                                     0x7e55, 0x7bff, 0xfbff, 0x0001, 0x03ff, 0x0400, 0x3555, 0x7c01};
      static const uint16_t bf16[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0,
                                      0x7fc5, 0x7f7f, 0xff7f, 0x0001, 0x007f, 0x0080, 0x3eab, 0x7f81};
      /* random patterns of every exponent, or values of a few units */
      v = s ? (t == JITC_FLOAT16 ? f16 : bf16)[r % 16]
            : r % 2 ? (r >> 8) & 0xffff : (uint16_t)(r >> 8) & (t == JITC_FLOAT16 ? 0xc7ff : 0xc0ff);
      if (!s && (v & 0x7fff) > (t == JITC_FLOAT16 ? 0x7c00u : 0x7f80u))
        v &= 0xbfff; /* a NaN only among the specials */
    } else {
      /* the last: a negative quiet NaN with a payload, made from its bits */
      static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 3.4e38, -3.4e38, 1e-310,
                                  1e-40, 65504, 65520, 0.5, -0.5, 2147483648.0, -9.3e18, 1.8e19,
                                  2.5, -2.5, -NAN, NAN};
      int k = (int)(r % 20);
      double d = s ? sp[k] : ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 20;
      if (ti->size == 4) {
        float f = (float)d;
        memcpy(&v, &f, 4);
        if (s && k == 19)
          v = 0xffc12345u;
      } else {
        memcpy(&v, &d, 8);
        if (s && k == 19)
          v = 0xfff8123456789abcull;
      }
    }
    memcpy((char *)p + (size_t)i * (size_t)ti->size, &v, (size_t)ti->size); /* little-endian */
  }
}

/* ---- runs ---- */

/* A program's arrays on the host (outputs and results zeroed), one element
** off alignment when `shift`. */
typedef struct Host {
  int na;
  jitc_role role[MAXA];
  jitc_dtype dt[MAXA];
  size_t es[MAXA];
  char *mem[MAXA];
  void *p[MAXA];
} Host;

static int64_t count_of(const Host *H, int a, int64_t n) {
  return H->role[a] == JITC_RESULT ? 1 : n;
}

static bool host_new(const jitc_kernel *k, int64_t n, Host *H, int shift) {
  memset(H, 0, sizeof *H);
  H->na = jitc_kernel_array_count(k);
  for (int a = 0; a < H->na && a < MAXA; a++) {
    const char *name;
    jitc_kernel_array(k, a, &name, &H->role[a], &H->dt[a]);
    H->es[a] = jitc_dtype_size(H->dt[a]);
    H->mem[a] = calloc((size_t)count_of(H, a, n) + 2, H->es[a] > 8 ? H->es[a] : 8);
    if (!H->mem[a])
      return false;
    H->p[a] = H->mem[a] + (H->role[a] == JITC_RESULT ? 0 : (size_t)shift * H->es[a]);
  }
  return H->na <= MAXA;
}

static void host_free(Host *H) {
  for (int a = 0; a < H->na; a++)
    free(H->mem[a]);
  H->na = 0;
}

static void copy_inputs(Host *to, const Host *from, int64_t n) {
  for (int a = 0; a < from->na; a++)
    if (from->role[a] == JITC_INPUT || from->role[a] == JITC_INOUT)
      memcpy(to->p[a], from->p[a], (size_t)n * from->es[a]);
}

/* Fills H's outputs and results with 0xA5 bytes: no type's answer to the
** inputs here is that pattern throughout, and a bool byte never is. */
static void poison(Host *H, int64_t n) {
  for (int a = 0; a < H->na; a++)
    if (H->role[a] == JITC_OUTPUT || H->role[a] == JITC_RESULT)
      memset(H->p[a], 0xA5, (size_t)count_of(H, a, n) * H->es[a]);
}

enum { P_HOST, P_HOST_MISALIGNED, P_PINNED, P_PINNED_MISALIGNED, P_BUFFERS, P_DEVICE,
       P_DEVICE_MISALIGNED, NPATHS };
static const char *const path_name[] = {"host",    "host-misaligned", "pinned", "pinned-misaligned",
                                        "buffers", "device",          "device-misaligned"};

/* Host arrays pinned by the caller (cuMemHostAlloc), which the pipeline
** moves by DMA in place: a copy of H in them (poisoned outputs included),
** run, and what the run wrote copied back into H. */
static jitc_status run_pinned(jitc_context *ctx, const jitc_kernel *k, int64_t n, Host *H,
                              const jitc_value *sc, size_t shift) {
  void *mem[MAXA] = {0}, *p[MAXA];
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < H->na && r == CUDA_SUCCESS; a++) {
    size_t c = (size_t)count_of(H, a, n), sh = H->role[a] == JITC_RESULT ? 0 : shift;
    r = A.cuMemHostAlloc(&mem[a], (c + sh) * H->es[a] + 8, 0);
    if (r == CUDA_SUCCESS) {
      p[a] = (char *)mem[a] + sh * H->es[a];
      memcpy(p[a], H->p[a], c * H->es[a]);
    }
  }
  jitc_status st = r == CUDA_SUCCESS ? jitc_run(ctx, k, n, p, sc, NULL) : JITC_E_INTERNAL;
  for (int a = 0; a < H->na; a++) {
    if (mem[a] && !st && H->role[a] != JITC_INPUT)
      memcpy(H->p[a], p[a], (size_t)count_of(H, a, n) * H->es[a]);
    if (mem[a])
      A.cuMemFreeHost(mem[a]);
  }
  return st;
}

/* Runs k over H on one path; H's outputs and results receive what it wrote. */
static jitc_status run_path(jitc_context *ctx, const jitc_kernel *k, int64_t n, Host *H,
                            const jitc_value *sc, int path) {
  if (path == P_HOST || path == P_HOST_MISALIGNED)
    return jitc_run(ctx, k, n, H->p, sc, NULL);
  if (path == P_PINNED || path == P_PINNED_MISALIGNED)
    return run_pinned(ctx, k, n, H, sc, path == P_PINNED_MISALIGNED);
  jitc_status st = JITC_OK;
  if (path == P_BUFFERS) { /* every array uploaded: the outputs' poison too */
    jitc_buffer *b[MAXA] = {0};
    for (int a = 0; a < H->na && !st; a++) {
      int64_t c = count_of(H, a, n);
      st = jitc_buffer_new(ctx, JITC_TARGET_CUDA, H->dt[a], c ? c : 1, &b[a]);
      if (!st && c)
        st = jitc_buffer_upload(ctx, b[a], H->p[a], c);
    }
    if (!st)
      st = jitc_run_buffers(ctx, k, n, b, sc, NULL);
    for (int a = 0; a < H->na && !st; a++)
      if (H->role[a] != JITC_INPUT)
        st = jitc_buffer_download(ctx, b[a], H->p[a], count_of(H, a, n));
    for (int a = 0; a < H->na; a++)
      jitc_buffer_free(b[a]);
    return st;
  }
  size_t shift = path == P_DEVICE_MISALIGNED;
  CUdeviceptr d[MAXA] = {0};
  uint64_t ptr[MAXA];
  CUresult r = CUDA_SUCCESS;
  for (int a = 0; a < H->na && r == CUDA_SUCCESS; a++) {
    size_t c = (size_t)count_of(H, a, n), sh = H->role[a] == JITC_RESULT ? 0 : shift;
    r = A.cuMemAlloc(&d[a], (c + sh) * H->es[a] + 8);
    ptr[a] = d[a] + sh * H->es[a];
    if (r == CUDA_SUCCESS && c) /* the outputs' poison too */
      r = A.cuMemcpyHtoD(ptr[a], H->p[a], c * H->es[a]);
  }
  if (r == CUDA_SUCCESS) {
    st = jitc_run_device(ctx, k, n, ptr, sc, stream);
    r = A.cuStreamSynchronize(stream);
  }
  for (int a = 0; a < H->na && r == CUDA_SUCCESS && !st; a++)
    if (H->role[a] != JITC_INPUT && count_of(H, a, n))
      r = A.cuMemcpyDtoH(H->p[a], ptr[a], (size_t)count_of(H, a, n) * H->es[a]);
  for (int a = 0; a < H->na; a++)
    if (d[a])
      A.cuMemFree(d[a]);
  return r != CUDA_SUCCESS ? JITC_E_INTERNAL : st;
}

/* ---- agreement ---- */

/* (n + 8) epsilons of float32 (the accumulator of 16-bit floats and the
** precision of float32 products) times the sum of the inputs' magnitudes
** and squares. */
static double sum_tolerance(const Host *H, int64_t n) {
  double s = 0, eps = 0x1p-52;
  for (int a = 0; a < H->na; a++) {
    if (H->role[a] != JITC_INPUT)
      continue;
    jitc_dtype p = dtype_part(H->dt[a]); /* a complex array: its parts */
    int64_t m = dtype_is_complex(H->dt[a]) ? 2 * n : n;
    if (p != JITC_FLOAT64 && dtype_is_float(p))
      eps = 0x1p-23;
    for (int64_t i = 0; i < m; i++) {
      double v = value(p, H->p[a], i);
      if (isfinite(v) && fabs(v) < 1e150)
        s += fabs(v) + v * v;
    }
  }
  return ((double)n + 8) * eps * s + 1e-300;
}

/* ---- programs ---- */

typedef struct Prog {
  char *src;
  int nstmt;
  char name[MAXS][16];  /* output or result array of each statement */
  Agree how[MAXS];
  const char *what[MAXS]; /* the statement's expression, for messages */
  jitc_value sc[1];
  jitc_scalar_decl sd[1];
  int nsc;
} Prog;

/* Whether src names array `name` (a whole word). */
static bool names_array(const char *src, const char *name) {
  size_t len = strlen(name);
  for (const char *p = strstr(src, name); p; p = strstr(p + 1, name)) {
    bool before = p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    bool after = isalnum((unsigned char)p[len]) || p[len] == '_';
    if (!before && !after)
      return true;
  }
  return false;
}

static jitc_kernel *compile(jitc_context *ctx, const Prog *P, jitc_dtype dt, jitc_target t,
                            bool quiet) {
  jitc_options o;
  jitc_options_init(&o);
  o.target = t;
  jitc_array_decl d[3] = {{"a", dt}, {"b", dt}, {"c", dt}};
  int nd = 0;
  for (int k = 0; k < 3; k++)
    if (names_array(P->src, d[k].name))
      d[nd++] = d[k];
  jitc_kernel *k = NULL;
  if (jitc_compile(ctx, P->src, d, nd, P->sd, P->nsc, &o, &k) != JITC_OK) {
    if (!quiet) {
      printf("FAIL types.compile: %s: %s: %s\n", jitc_target_name(t), P->src, jitc_errmsg(ctx));
      nfail++;
    }
    return NULL;
  }
  return k;
}

/* Whether type t is among the names of $var (separated by commas; all
** when unset). */
static bool listed(const char *var, int t) {
  const char *only = getenv(var);
  if (!only)
    return true;
  char list[300];
  snprintf(list, sizeof list, ",%s,", only);
  char want[40];
  snprintf(want, sizeof want, ",%s,", type_info[t].name);
  return strstr(list, want) != NULL;
}

/* Types a statement may use ($TYPES_GPU_TYPES), and those whose inputs are
** tested ($TYPES_GPU_TEST, else the same). */
static bool in_play(int t) { return listed("TYPES_GPU_TYPES", t); }
static bool tested(int t) { return in_play(t) && listed("TYPES_GPU_TEST", t); }

/* Appends statement `expr` (fmt: "o%d = %s" or "r%d = %s") when the
** checker takes it alone. */
static void add_stmt(jitc_context *ctx, Prog *P, jitc_dtype dt, const char *fmt, const char *expr,
                     Agree how) {
  if (P->nstmt >= MAXS)
    return;
  char one[200];
  snprintf(one, sizeof one, fmt, P->nstmt, expr);
  Prog test = *P;
  test.src = one;
  jitc_kernel *k = compile(ctx, &test, dt, JITC_TARGET_INTERP, true);
  if (!k)
    return;
  bool play = true;
  for (int t = 0; t < JITC_NDTYPES; t++)
    play &= in_play(t) || !jitc_kernel_uses_dtype(k, (jitc_dtype)t);
  jitc_kernel_free(k);
  if (!play)
    return;
  size_t len = P->src ? strlen(P->src) : 0;
  P->src = realloc(P->src, len + strlen(one) + 2);
  snprintf(P->src + len, strlen(one) + 2, "%s\n", one);
  snprintf(P->name[P->nstmt], sizeof P->name[0], fmt[0] == 'r' ? "r%d" : "o%d", P->nstmt);
  P->how[P->nstmt] = how;
  P->what[P->nstmt] = strdup(expr);
  P->nstmt++;
}

static void prog_free(Prog *P) {
  free(P->src);
  for (int s = 0; s < P->nstmt; s++)
    free((void *)P->what[s]);
  memset(P, 0, sizeof *P);
}

/* Every operator and function the checker takes on dt, and every cast. */
static void ops_prog(jitc_context *ctx, Prog *P, jitc_dtype dt) {
  char e[100];
  for (int o = 0; o < OP_COUNT; o++) {
    const OpInfo *op = &op_info[o];
    if (op->kind == K_REDUCE || op->kind == K_CAST)
      continue;
    if (op->kind == K_OPERATOR && op->arity == 2)
      snprintf(e, sizeof e, "a %s b", op->spell);
    else if (op->kind == K_OPERATOR)
      snprintf(e, sizeof e, "%sa", op->spell);
    else
      snprintf(e, sizeof e, "%s(%s)", op->name, op->arity == 1 ? "a" : op->arity == 2 ? "a, b" : "a, b, c");
    add_stmt(ctx, P, dt, "o%d = %s", e, op_agree(o, dt));
  }
  for (int t = 0; t < JITC_NDTYPES; t++) {
    if (!in_play(t))
      continue;
    snprintf(e, sizeof e, "%s(a)", type_info[t].name);
    /* casts move bits where a 16-bit float is involved; f32 <-> f64 of a
    ** NaN is the hardware's, its sign kept (docs/language.md) */
    bool bits = is_half((jitc_dtype)t) || (is_half(dt) && t == JITC_FLOAT32) || !dtype_is_float(t);
    /* to or from complex: the parts' NaNs through the hardware's casts */
    if (dtype_is_complex((jitc_dtype)t) || dtype_is_complex(dt))
      bits = t == JITC_BOOL || (!dtype_is_float(dt) && !dtype_is_complex(dt));
    add_stmt(ctx, P, dt, "o%d = %s", e, bits ? A_EXACT : dtype_is_float(dt) ? A_NANSIGN : A_ANYNAN);
  }
  /* ldexp's exponent is an integer: a float's through int8 (saturated). */
  if (dtype_is_float(dt))
    add_stmt(ctx, P, dt, "o%d = %s", "ldexp(a, int8(b))", A_ANYNAN);
  /* Each operation rounds to the type: a * b before c is added. */
  add_stmt(ctx, P, dt, "o%d = %s", "a * b + c", A_ANYNAN);
}

static int all_paths(void) {
  return target == JITC_TARGET_CUDA ? (1 << NPATHS) - 1 : (1 << P_HOST) | (1 << P_HOST_MISALIGNED);
}

/* The paths of the large sizes: host arrays pageable (which the pipeline
** registers for the call when large) and pinned, and device pointers. */
enum { LARGE = 1 << P_HOST | 1 << P_PINNED | 1 << P_DEVICE };

/* Compares the statements' arrays of C (what target k wrote) with R
** (interp's), the inputs being `in`; returns the statements that differ,
** shown as failures of `name` when `show`. */
static int compare(const Prog *P, const jitc_kernel *k, const Host *C, const Host *R,
                   const Host *in, jitc_dtype dt, int64_t n, double tol, const char *name,
                   bool show) {
  int bad = 0, shown = 0, ia = jitc_kernel_find_array(k, "a"), ib = jitc_kernel_find_array(k, "b");
  for (int s = 0; s < P->nstmt; s++) {
    int a = jitc_kernel_find_array(k, P->name[s]);
    if (a < 0)
      continue;
    int64_t cnt = count_of(C, a, n);
    size_t sz = (size_t)type_info[C->dt[a]].size;
    for (int64_t i = 0; i < cnt; i++) {
      if (!memcmp((const char *)C->p[a] + (size_t)i * sz, (const char *)R->p[a] + (size_t)i * sz, sz))
        continue;
      int64_t j = C->role[a] == JITC_RESULT ? 0 : i;
      bool argnan = n && ia >= 0 && dtype_is_float(dt) && isnan(value(dt, in->p[ia], j));
      double t = tol; /* a complex power's: |b log a| */
      if (P->how[s] == A_CPOW)
        t = n && ia >= 0 && ib >= 0 ? cpow_size(dt, in->p[ia], in->p[ib], j) : 0;
      if (agrees(C->dt[a], C->p[a], R->p[a], i, P->how[s], t, argnan))
        continue;
      if (show && shown++ < 4) {
        char got[120], want[120], va[120] = "-", vb[120] = "-";
        show_elem(got, C->dt[a], C->p[a], i);
        show_elem(want, R->dt[a], R->p[a], i);
        if (n && ia >= 0)
          show_elem(va, dt, in->p[ia], j);
        if (n && ib >= 0)
          show_elem(vb, dt, in->p[ib], j);
        fail(name, "%s = %s (%s): element %lld of %lld: %s, interp %s (a = %s, b = %s)", P->name[s],
             P->what[s], type_info[C->dt[a]].name, (long long)i, (long long)cnt, got, want, va, vb);
      }
      bad++;
      break;
    }
  }
  return bad;
}

/* One program at one size on every path against interp; returns failures. */
static int diff_case(jitc_context *ctx, const Prog *P, jitc_dtype dt, int64_t n, const char *tag,
                     int paths) {
  jitc_kernel *ki = compile(ctx, P, dt, JITC_TARGET_INTERP, false);
  jitc_kernel *kc = compile(ctx, P, dt, target, false);
  int bad = 0;
  Host R, in;
  if (!ki || !kc || !host_new(ki, n, &R, 0) || !host_new(ki, n, &in, 0)) {
    jitc_kernel_free(ki);
    jitc_kernel_free(kc);
    return 1;
  }
  for (int a = 0; a < R.na; a++)
    if (R.role[a] == JITC_INPUT || R.role[a] == JITC_INOUT)
      fill(R.p[a], R.dt[a], n, true);
  copy_inputs(&in, &R, n);
  jitc_status sr = jitc_run(ctx, ki, n, R.p, P->sc, NULL);
  double tol = sum_tolerance(&in, n);
  char name[200];
  for (int path = 0; path < NPATHS; path++) {
    if (!(paths & all_paths() & (1 << path)))
      continue;
    Host C;
    if (!host_new(kc, n, &C, path == P_HOST_MISALIGNED)) {
      bad++;
      continue;
    }
    snprintf(name, sizeof name, "%s.%s.%s.n%lld", tag, type_info[dt].name, path_name[path],
             (long long)n);
    copy_inputs(&C, &in, n);
    poison(&C, n);
    jitc_status sc = run_path(ctx, kc, n, &C, P->sc, path);
    if (sr != sc) {
      fail(name, "interp gives status %d, %s %d (%s)", sr, jitc_target_name(target), sc,
           jitc_errmsg(ctx));
      bad++;
    } else if (!sr) {
      bad += compare(P, kc, &C, &R, &in, dt, n, tol, name, true);
      if (ulps && path == P_HOST && n > 70000)
        for (int s = 0; s < P->nstmt; s++) {
          int a = jitc_kernel_find_array(kc, P->name[s]);
          Agree h = P->how[s];
          if (a >= 0 && (h == A_ULP || h == A_FNAN || h == A_CULP || h == A_CPOW))
            report_ulps(name, P->what[s], C.dt[a], C.p[a], R.p[a], count_of(&C, a, n));
        }
    }
    host_free(&C);
  }
  host_free(&in);
  host_free(&R);
  jitc_kernel_free(ki);
  jitc_kernel_free(kc);
  return bad;
}

static const int64_t sizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 255, 257, 4099, 65539, 1000003};
static int nsizes(void) { return quick ? 13 : (int)(sizeof sizes / sizeof *sizes); }

static void report(const char *what, jitc_dtype dt, int bad, const char *detail) {
  if (!bad) {
    printf("ok types.%s.%s (%s)\n", what, type_info[dt].name, detail);
    nok++;
  }
}

static void check_ops(jitc_context *ctx, jitc_context *scalar, jitc_context *chunky, jitc_dtype dt) {
  Prog P = {0};
  ops_prog(ctx, &P, dt);
  int bad = 0;
  for (int s = 0; s < nsizes(); s++)
    bad += diff_case(ctx, &P, dt, sizes[s], "ops", sizes[s] > 70000 ? LARGE : all_paths());
  if (target == JITC_TARGET_CUDA && !quick) {
    bad += diff_case(scalar, &P, dt, 4099, "ops-scalar-path", all_paths());
    bad += diff_case(chunky, &P, dt, 1000003, "ops-chunks-1MB", 1 << P_HOST | 1 << P_PINNED);
  }
  char d[80];
  snprintf(d, sizeof d, "%d statements, %d sizes", P.nstmt, nsizes());
  report("ops", dt, bad, d);
  prog_free(&P);
}

/* A typed scalar of the type: 3, 1.5, 1.5-0.25j or True. */
static void check_scalar(jitc_context *ctx, jitc_dtype dt) {
  Prog P = {0};
  P.nsc = 1;
  P.sd[0] = (jitc_scalar_decl){"s", dt, 0};
  P.sc[0].dtype = dtype_is_float(dt) ? JITC_FLOAT64 : dt == JITC_BOOL ? JITC_BOOL : JITC_INT64;
  if (dtype_is_complex(dt)) {
    P.sc[0].dtype = JITC_COMPLEX128;
    P.sc[0].u.c.re = 1.5;
    P.sc[0].u.c.im = -0.25;
  } else if (dtype_is_float(dt))
    P.sc[0].u.f = 1.5;
  else
    P.sc[0].u.i = dt == JITC_BOOL ? 1 : 3;
  add_stmt(ctx, &P, dt, "o%d = %s", dt == JITC_BOOL ? "a & s" : "a * s + a", A_ANYNAN);
  int bad = 0;
  for (int s = 0; s < nsizes(); s += 3)
    bad += diff_case(ctx, &P, dt, sizes[s], "scalar", all_paths());
  report("scalar", dt, bad, "a * s + a");
  prog_free(&P);
}

/* Each reduction alone, then several with an output in one pass. */
static void check_reductions(jitc_context *ctx, jitc_dtype dt) {
  int bad = 0, count = 0;
  for (int o = 0; o < OP_COUNT; o++) {
    if (op_info[o].kind != K_REDUCE)
      continue;
    Prog P = {0};
    char e[40];
    snprintf(e, sizeof e, "%s(a)", op_info[o].name);
    add_stmt(ctx, &P, dt, "r%d = %s", e, op_agree(o, dt));
    if (!P.nstmt)
      continue;
    count++;
    for (int s = 0; s < nsizes(); s++)
      bad += diff_case(ctx, &P, dt, sizes[s], op_info[o].name,
                       sizes[s] > 70000 ? LARGE : all_paths());
    prog_free(&P);
  }
  Prog F = {0};
  add_stmt(ctx, &F, dt, "r%d = %s", "sum(a)", A_SUM);
  add_stmt(ctx, &F, dt, "r%d = %s", "max(a)", A_ANYNAN);
  add_stmt(ctx, &F, dt, "r%d = %s", "argmin(a)", A_EXACT);
  add_stmt(ctx, &F, dt, "o%d = %s", "a", A_EXACT);
  for (int s = 0; s < nsizes(); s++)
    bad += diff_case(ctx, &F, dt, sizes[s], "fused", all_paths());
  prog_free(&F);
  char d[80];
  snprintf(d, sizeof d, "%d reductions alone and fused, %d sizes", count, nsizes());
  report("reductions", dt, bad, d);
}

/* A program split into kernels: temporaries of the type through scratch. */
static void check_split(jitc_context *ctx, jitc_dtype dt) {
  if (dt == JITC_BOOL)
    return;
  Prog P = {0};
  size_t cap = 20000, len = 0;
  P.src = malloc(cap);
  len += (size_t)snprintf(P.src, cap, "let t0 = a * b + a\n");
  for (int k = 1; k < 150; k++)
    len += (size_t)snprintf(P.src + len, cap - len, "let t%d = t%d * b + a - t%d\n", k, k - 1,
                            k > 3 ? k - 3 : 0);
  len += (size_t)snprintf(P.src + len, cap - len, "o0 = t149 + t3\nr1 = max(t140)\n");
  P.nstmt = 2;
  strcpy(P.name[0], "o0");
  strcpy(P.name[1], "r1");
  P.how[0] = A_ANYNAN;
  P.how[1] = A_ANYNAN; /* t140 has NaNs of arithmetic (inf - inf): any NaN */
  P.what[0] = strdup("t149 + t3");
  P.what[1] = strdup("max(t140)");
  int bad = diff_case(ctx, &P, dt, 40009, "split", all_paths());
  if (!quick)
    bad += diff_case(ctx, &P, dt, 1000003, "split", LARGE);
  report("split", dt, bad, "150 temporaries, several kernels");
  prog_free(&P);
}

/* ---- the rules themselves (types_gpu selftest, no GPU) ---- */

/* Made-up answers against made-up interp answers: what agrees() must take
** and refuse.  Then runs that write nothing, against interp's answers of
** zeros: the poison must show each statement, which zeroed outputs would
** not. */
static void selftest(jitc_context *ctx) {
  static const struct {
    jitc_dtype t;
    uint64_t got, want;
    Agree how;
    double tol;
    bool ok;
    const char *what;
    bool argnan; /* the operand is a NaN */
  } c[] = {
      {JITC_FLOAT32, 0x80000000u, 0, A_ANYNAN, 0, false, "-0.0 for 0.0"},
      {JITC_FLOAT64, 0x8000000000000000ull, 0, A_ANYNAN, 0, false, "-0.0 for 0.0, float64"},
      {JITC_FLOAT16, 0x8000, 0, A_ANYNAN, 0, false, "-0.0 for 0.0, float16"},
      {JITC_FLOAT32, 0x7fffffffu, 0xffc00000u, A_ANYNAN, 0, true, "another NaN of arithmetic"},
      {JITC_FLOAT32, 0x7fffffffu, 0xffc00000u, A_EXACT, 0, false, "another NaN where bits move"},
      {JITC_BFLOAT16, 0x7fc0, 0x7fc1, A_EXACT, 0, false, "another payload where bits move"},
      {JITC_FLOAT32, 0x3f800001u, 0x3f800000u, A_ANYNAN, 0, false, "1 ulp where exact"},
      {JITC_FLOAT16, 0x3c01, 0x3c00, A_ULP, 0, true, "1 ulp of float16 in a function"},
      {JITC_FLOAT16, 0x3c02, 0x3c00, A_ULP, 0, false, "2 ulp of float16 in a function"},
      {JITC_FLOAT16, 0x7c00, 0x7bff, A_ULP, 0, true, "inf for the largest float16 in a function"},
      {JITC_FLOAT64, 0x3ff0000000000004ull, 0x3ff0000000000000ull, A_ULP, 0, true, "4 ulp"},
      {JITC_FLOAT64, 0x3ff0000000000005ull, 0x3ff0000000000000ull, A_ULP, 0, false, "5 ulp"},
      {JITC_FLOAT32, 0x7fc00000u, 0x3f800000u, A_ULP, 0, false, "NaN for 1.0"},
      {JITC_FLOAT32, 0x7f800000u, 0x7f7fffffu, A_ANYNAN, 0, false, "inf for the largest"},
      {JITC_FLOAT32, 0x3f800001u, 0x3f800000u, A_SUM, 1e-6, true, "a sum within its bound"},
      {JITC_FLOAT32, 0x3f800001u, 0x3f800000u, A_SUM, 0, false, "a sum past its bound"},
      {JITC_INT64, 1, 2, A_SUM, 1e9, false, "an integer sum off by one"},
      {JITC_UINT8, 0xA5, 0, A_EXACT, 0, false, "the poison for 0"},
      {JITC_FLOAT32, 0x7fffffffu, 0xffc12345u, A_FNAN, 0, false, "another NaN for a NaN argument", true},
      {JITC_FLOAT32, 0x7fffffffu, 0xffc00000u, A_FNAN, 0, true, "any NaN of log(-1)", false},
      {JITC_FLOAT16, 0x3c01, 0x3c00, A_FNAN, 0, true, "1 ulp of float16 in exp"},
      {JITC_FLOAT64, 0x7ff8000000000000ull, 0xfff8000000000000ull, A_NANSIGN, 0, false, "a cast's NaN sign"},
      {JITC_FLOAT64, 0x7ff8000000000000ull, 0x7ff8000000000123ull, A_NANSIGN, 0, true, "a cast's payload"},
      /* complex64: the real part in the low half, the imaginary in the high */
      {JITC_COMPLEX64, 0x3f80000400000000ull, 0x3f80000000000000ull, A_CULP, 0, true, "4 ulp in a part"},
      {JITC_COMPLEX64, 0x3f80001400000000ull, 0x3f80000000000000ull, A_CULP, 0, false, "20 ulp in the larger part"},
      {JITC_COMPLEX64, 0x3f8000002edbe6ffull, 0x3f8000002edbe6feull + 0x400, A_CULP, 0, true,
       "a tiny part 1023 ulp off, within 8 eps of the larger"},
      {JITC_COMPLEX64, 0x2edbe7ff2edbe6feull, 0x2edbe6fe2edbe6feull, A_CULP, 0, false, "a tiny part alone 257 ulp off"},
      {JITC_COMPLEX64, 0x7fc000003f800000ull, 0x3f8000003f800000ull, A_CULP, 0, false, "NaN for a finite part"},
      {JITC_COMPLEX64, 0x3f80001400000000ull, 0x3f80000000000000ull, A_CPOW, 2, true, "20 ulp in a power of |b log a| 2"},
      {JITC_COMPLEX64, 0x3f80004000000000ull, 0x3f80000000000000ull, A_CPOW, 2, false, "64 ulp in a power of |b log a| 2"},
      {JITC_COMPLEX64, 0x4b0000007f800000ull, 0x4b0000067f800000ull, A_CULP, 0, true, "6 ulp of the finite part beside inf"},
      {JITC_COMPLEX64, 0x4b0000007f800000ull, 0x4b0001007f800000ull, A_CULP, 0, false, "256 ulp of the finite part beside inf"},
      {JITC_COMPLEX64, 0x800000003f800000ull, 0x000000003f800000ull, A_ANYNAN, 0, false, "-0.0 for 0.0 in a part"},
      {JITC_COMPLEX64, 0x7fc123457fc00000ull, 0xffc000007fc00000ull, A_ANYNAN, 0, true, "another NaN in a part of arithmetic"},
      {JITC_COMPLEX64, 0x7fc123453f800000ull, 0x7fc000003f800000ull, A_EXACT, 0, false, "another NaN in a part where bits move"},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof c / sizeof *c; i++)
    if (agrees(c[i].t, &c[i].got, &c[i].want, 0, c[i].how, c[i].tol, c[i].argnan) != c[i].ok) {
      fail("selftest.agree", "%s: %s", c[i].what, c[i].ok ? "refused" : "taken");
      bad++;
    }
  if (!bad) {
    printf("ok types.selftest.agree (%d cases)\n", (int)(sizeof c / sizeof *c));
    nok++;
  }
  Prog P = {0};
  add_stmt(ctx, &P, JITC_INT8, "o%d = %s", "a != a", A_EXACT);
  add_stmt(ctx, &P, JITC_INT8, "o%d = %s", "a - a", A_EXACT);
  add_stmt(ctx, &P, JITC_INT8, "r%d = %s", "sum(a - a)", A_EXACT);
  jitc_kernel *k = compile(ctx, &P, JITC_INT8, JITC_TARGET_INTERP, false);
  int64_t n = 1000;
  Host R, C;
  if (P.nstmt != 3 || !k || !host_new(k, n, &R, 0) || !host_new(k, n, &C, 0)) {
    fail("selftest.poison", "cannot set up");
    return;
  }
  for (int a = 0; a < R.na; a++)
    if (R.role[a] == JITC_INPUT)
      fill(R.p[a], R.dt[a], n, true);
  copy_inputs(&C, &R, n);
  if (jitc_run(ctx, k, n, R.p, NULL, NULL) != JITC_OK) {
    fail("selftest.poison", "interp: %s", jitc_errmsg(ctx));
  } else {
    int zeroed = compare(&P, k, &C, &R, &R, JITC_INT8, n, 0, "selftest.poison", false);
    poison(&C, n);
    int shown = compare(&P, k, &C, &R, &R, JITC_INT8, n, 0, "selftest.poison", false);
    if (zeroed != 0 || shown != P.nstmt)
      fail("selftest.poison", "a run that wrote nothing fails %d of %d statements (%d when "
           "the outputs start as zeros)", shown, P.nstmt, zeroed);
    else {
      printf("ok types.selftest.poison (a run that writes nothing fails all %d statements)\n",
             P.nstmt);
      nok++;
    }
  }
  host_free(&C);
  host_free(&R);
  jitc_kernel_free(k);
  prog_free(&P);
}

static jitc_context *context_with(const char *var, const char *val) {
  setenv(var, val, 1);
  jitc_context *c = jitc_context_new();
  unsetenv(var);
  return c;
}

int main(int argc, char **argv) {
  quick = argc > 1 && !strcmp(argv[1], "quick");
  ulps = argc > 1 && !strcmp(argv[1], "ulps");
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 1 && !strcmp(argv[1], "selftest")) {
    jitc_context *ctx = jitc_context_new();
    selftest(ctx);
    jitc_context_free(ctx);
    printf("types_gpu selftest: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
  }
  const char *tn = getenv("TYPES_GPU_TARGET");
  if (tn && jitc_target_parse(tn, &target) != JITC_OK) {
    printf("FAIL types.target: unknown target %s\n", tn);
    return 1;
  }
  char err[512];
  CUdevice d0 = 0;
  CUcontext prim0 = NULL;
  if (target == JITC_TARGET_CUDA) {
    if (cuda_load_driver(&A, NULL, err, sizeof err)) {
      printf("skip types: %s\n", err);
      return 0;
    }
    have_gpu = true;
    A.cuDeviceGet(&d0, 0);
    A.cuDevicePrimaryCtxRetain(&prim0, d0);
    A.cuCtxSetCurrent(prim0);
    A.cuStreamCreate(&stream, 0);
  }
  jitc_context *ctx = jitc_context_new();
  jitc_context *scalar = context_with("JITC_CUDA_VEC", "0");
  jitc_context *chunky = context_with("JITC_CUDA_CHUNK_MB", "1");
  for (int t = 0; t < JITC_NDTYPES; t++) {
    if (!tested(t))
      continue;
    check_ops(ctx, scalar, chunky, (jitc_dtype)t);
    check_scalar(ctx, (jitc_dtype)t);
    check_reductions(ctx, (jitc_dtype)t);
    check_split(ctx, (jitc_dtype)t);
  }
  jitc_context_free(chunky);
  jitc_context_free(scalar);
  jitc_context_free(ctx);
  if (have_gpu) {
    A.cuStreamDestroy(stream);
    A.cuDevicePrimaryCtxRelease(d0);
  }
  printf("types_gpu: %d ok, %d failed\n", nok, nfail);
  return nfail ? 1 : 0;
}
