/*
** cuda.c -- the target `cuda`: typed IR -> CUDA C -> NVRTC -> CUDA Driver API.
**
** Emission writes one self-contained CUDA C file that needs no header:
** typedefs for the five element types, the helper functions the program
** uses (each the device twin of a scalar function of interp.c, which
** defines the semantics), `jitc_elem` computing one element in SSA form,
** and one `extern "C"` kernel: jitc_k32 with 32-bit indices, or jitc_k64,
** compiled the first time a launch needs it (about 2^32 elements); one
** kernel per module halves NVRTC's time.  The kernel takes V elements per
** thread with vector loads and stores of up to 16 bytes when the host has
** checked that every pointer is aligned for them, then finishes (or, when a
** pointer is not aligned, does everything) one element at a time.  Names from the
** program never reach the C: arrays are a0, a1, ..., scalars p0, p1, ...,
** temporaries t0, t1, ..., so an array called `int` or `threadIdx` is fine.
**
** NVRTC compiles the file straight to a CUBIN for the device's sm_XY (PTX
** for compute_XY only when this NVRTC does not know the device), with
** --fmad=false: NumPy never contracts a*b+c into one rounding, and neither
** may we.  --fast-math maps to NVRTC's --use_fast_math.  Modules are cached
** in memory per context and on disk (runtime/cache.c), keyed by the source,
** the options, the NVRTC version, the arch and the jitc version.
**
** Host arrays travel through pinned staging buffers in chunks, alternating
** between two streams, so that while one chunk is copied in, another is
** computed and a third copied out.  Device-resident buffers (jitc_buffer)
** skip the host entirely.
*/
#include "jitc_int.h"

#include "../runtime/cuda_api.h"
#include "../runtime/runtime.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CUDA_BLOCK = 256 };

/* ===================================================================== */
/* Emission                                                               */
/* ===================================================================== */

static const char *const ctype[JITC_NDTYPES] = {"b8", "i32", "i64", "f32", "f64"};
static const char *const utype[JITC_NDTYPES] = {"u8", "u32", "u64", "u32", "u64"};

static bool is_f(jitc_dtype t) { return t == JITC_FLOAT32 || t == JITC_FLOAT64; }
static bool is_i(jitc_dtype t) { return t == JITC_INT32 || t == JITC_INT64; }

/* Helpers are emitted once each, only if used: one bit per (helper, type). */
typedef enum Helper {
  H_FLOORDIV, H_MOD, H_FMOD, H_POW, H_SHL, H_SHR, H_ISNAN, H_MINIMUM,
  H_MAXIMUM, H_FMIN, H_FMAX, H_CLIP, H_SAT_I32, H_SAT_I64, H_HYPOT, H_SIGNBIT,
  H_NANARG, H_NHELPERS
} Helper;

typedef struct Emit {
  const Program *p;
  const char *src; /* the program's source, for comments */
  Buf *b;
  int nvals;
  int *temp_reads; /* per temp: how many times it is read */
  bool used[H_NHELPERS][JITC_NDTYPES];
  int line;        /* lines of b counted so far (1-based line of the next text) */
  size_t counted;  /* bytes of b counted */
} Emit;

/* A value: an SSA name, a parameter, or a literal. */
typedef struct Val {
  char s[80];
} Val;

static int cur_line(Emit *E) {
  for (; E->counted < E->b->len; E->counted++)
    if (E->b->s[E->counted] == '\n')
      E->line++;
  return E->line;
}

/* Writes `tpl` with $T (the C type), $U (its unsigned twin), $S (the type's
** name, used as a suffix), $F ("f" for float32 libm names) and $W (bits). */
static void put_tpl(Buf *b, const char *tpl, jitc_dtype t) {
  for (const char *c = tpl; *c; c++) {
    if (*c != '$') {
      buf_putc(b, *c);
      continue;
    }
    switch (*++c) {
    case 'T': buf_puts(b, ctype[t]); break;
    case 'U': buf_puts(b, utype[t]); break;
    case 'S': buf_puts(b, ctype[t]); break;
    case 'F': buf_puts(b, t == JITC_FLOAT32 ? "f" : ""); break;
    case 'W': buf_puts(b, t == JITC_INT32 || t == JITC_FLOAT32 ? "32" : "64"); break;
    default: buf_putc(b, '$'); c--; break;
    }
  }
}

#define DEV "__device__ __forceinline__ "

/* The helpers' text, for one type.  Each is the device twin of interp.c's
** function of the same name. */
static void put_helper(Buf *b, Helper h, jitc_dtype t) {
  switch (h) {
  case H_FLOORDIV:
    if (is_i(t))
      put_tpl(b, "// x // 0 == 0; MIN // -1 wraps to MIN.\n"
                 DEV "$T jitc_floordiv_$S($T a, $T b) {\n"
                 "  if (b == 0) return 0;\n"
                 "  if (b == -1) return ($T)(($U)0 - ($U)a);\n"
                 "  $T q = a / b;\n"
                 "  if (a % b != 0 && ((a < 0) != (b < 0))) q--;\n"
                 "  return q;\n}\n", t);
    else
      put_tpl(b, "// npy_divmod: floor quotient and remainder with the divisor's sign.\n"
                 DEV "$T jitc_divmod_$S($T a, $T b, $T *modulus) {\n"
                 "  $T mod = fmod$F(a, b);\n"
                 "  if (b == 0) { *modulus = mod; return a / b; }\n"
                 "  $T div = (a - mod) / b;\n"
                 "  if (mod != 0) {\n"
                 "    if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }\n"
                 "  } else {\n"
                 "    mod = copysign$F(($T)0, b);\n"
                 "  }\n"
                 "  $T fl;\n"
                 "  if (div != 0) {\n"
                 "    fl = floor$F(div);\n"
                 "    if (div - fl > ($T)0.5) fl += 1;\n"
                 "  } else {\n"
                 "    fl = copysign$F(($T)0, a / b);\n"
                 "  }\n"
                 "  *modulus = mod;\n"
                 "  return fl;\n}\n", t);
    return;
  case H_MOD:
    if (is_i(t))
      put_tpl(b, "// The divisor's sign; x % 0 == 0; MIN % -1 == 0.\n"
                 DEV "$T jitc_mod_$S($T a, $T b) {\n"
                 "  if (b == 0 || b == -1) return 0;\n"
                 "  $T r = a % b;\n"
                 "  if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
                 "  return r;\n}\n", t);
    return; /* floats: jitc_divmod, emitted by H_FLOORDIV */
  case H_FMOD:
    put_tpl(b, DEV "$T jitc_fmod_$S($T a, $T b) { return b == 0 || b == -1 ? 0 : a % b; }\n", t);
    return;
  case H_POW:
    put_tpl(b, "// Wrapping repeated squaring; a negative exponent gives trunc(1/a^-b).\n"
               DEV "$T jitc_pow_$S($T a, $T b) {\n"
               "  if (b < 0) return a == 1 ? ($T)1 : a == -1 ? ((($U)b & 1) ? ($T)-1 : ($T)1) : ($T)0;\n"
               "  $U r = 1, x = ($U)a, e = ($U)b;\n"
               "  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }\n"
               "  return ($T)r;\n}\n", t);
    return;
  case H_SHL:
    put_tpl(b, "// npy_lshift: counts outside [0, $W) shift everything out.\n"
               DEV "$T jitc_shl_$S($T a, $T b) { return ($U)b < $W ? ($T)(($U)a << ($U)b) : 0; }\n",
            t);
    return;
  case H_SHR:
    put_tpl(b, "// npy_rshift: counts outside [0, $W) leave only the sign.\n"
               DEV "$T jitc_shr_$S($T a, $T b) {\n"
               "  if (($U)b < $W) return a < 0 ? ~(~a >> ($U)b) : a >> ($U)b;\n"
               "  return a < 0 ? -1 : 0;\n}\n", t);
    return;
  case H_ISNAN:
    /* On the bits, so that no math flag can assume NaNs away. */
    if (t == JITC_FLOAT32)
      buf_puts(b, DEV "b8 jitc_isnan_f32(f32 x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }\n"
                  DEV "b8 jitc_isinf_f32(f32 x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }\n"
                  DEV "b8 jitc_isfinite_f32(f32 x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }\n");
    else
      buf_puts(b, DEV "b8 jitc_isnan_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }\n"
                  DEV "b8 jitc_isinf_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }\n"
                  DEV "b8 jitc_isfinite_f64(f64 x) { return ((u64)__double_as_longlong(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }\n");
    return;
  case H_MINIMUM:
    put_tpl(b, "// NaN-propagating; equal operands (0.0, -0.0) give the second.\n"
               DEV "$T jitc_minimum_$S($T a, $T b) { return jitc_isnan_$S(a) ? a : a < b ? a : b; }\n", t);
    return;
  case H_MAXIMUM:
    put_tpl(b, DEV "$T jitc_maximum_$S($T a, $T b) { return jitc_isnan_$S(a) ? a : a > b ? a : b; }\n", t);
    return;
  case H_FMIN:
    put_tpl(b, "// Ignores one NaN.\n"
               DEV "$T jitc_fmin_$S($T a, $T b) { return jitc_isnan_$S(b) ? a : a < b ? a : b; }\n", t);
    return;
  case H_FMAX:
    put_tpl(b, DEV "$T jitc_fmax_$S($T a, $T b) { return jitc_isnan_$S(b) ? a : a > b ? a : b; }\n", t);
    return;
  case H_CLIP:
    if (is_f(t))
      put_tpl(b, DEV "$T jitc_clip_$S($T x, $T lo, $T hi) { return jitc_minimum_$S(jitc_maximum_$S(x, lo), hi); }\n", t);
    else
      put_tpl(b, DEV "$T jitc_clip_$S($T x, $T lo, $T hi) { $T y = x > lo ? x : lo; return y < hi ? y : hi; }\n", t);
    return;
  case H_SAT_I32:
    put_tpl(b, "// Saturating, NaN -> 0.\n"
               DEV "i32 jitc_to_i32_$S($T x) {\n"
               "  if (x != x) return 0;\n"
               "  if (x >= ($T)2147483648.0) return 2147483647;\n"
               "  if (x < ($T)-2147483648.0) return -2147483647 - 1;\n"
               "  return (i32)x;\n}\n", t);
    return;
  case H_SAT_I64:
    put_tpl(b, DEV "i64 jitc_to_i64_$S($T x) {\n"
               "  if (x != x) return 0;\n"
               "  if (x >= ($T)9223372036854775808.0) return 9223372036854775807ll;\n"
               "  if (x < ($T)-9223372036854775808.0) return -9223372036854775807ll - 1;\n"
               "  return (i64)x;\n}\n", t);
    return;
  case H_HYPOT:
    /* CUDA's hypot is within 2 ulp, which near the top of the range rounds
    ** finite results (hypot(1, DBL_MAX)) up to inf.  float32: exact squares
    ** and one rounding of the sum in double.  float64: the larger side when
    ** the other is negligible; near the top, CUDA's result on operands
    ** scaled by 2^-600 (exact), refined by one Newton step whose residual is
    ** computed with exact products (fma), then scaled back. */
    if (t == JITC_FLOAT32)
      buf_puts(b, "// hypot: exactly rounded squares and sum in double.\n"
                  DEV "f32 jitc_hypot_f32(f32 a, f32 b) {\n"
                  "  if (jitc_isinf_f32(a) || jitc_isinf_f32(b)) return __uint_as_float(0x7f800000u);\n"
                  "  return (f32)sqrt((f64)a * (f64)a + (f64)b * (f64)b);\n}\n");
    else
      buf_puts(b, "// hypot that does not round finite results up to inf near the top of the range.\n"
                  DEV "f64 jitc_hypot_f64(f64 a, f64 b) {\n"
                  "  if (jitc_isinf_f64(a) || jitc_isinf_f64(b)) return __longlong_as_double(0x7ff0000000000000ll);\n"
                  "  f64 fa = fabs(a), fb = fabs(b);\n"
                  "  f64 v = fa > fb ? fa : fb, w = fa > fb ? fb : fa;\n"
                  "  if (w <= v * 0x1p-54) return v; // exactly rounded: the other side is negligible\n"
                  "  if (!(v > 0x1p1000)) return hypot(a, b);\n"
                  "  f64 x = v * 0x1p-600, y = w * 0x1p-600;\n"
                  "  f64 h = hypot(x, y);\n"
                  "  f64 hh = h * h, hl = fma(h, h, -hh);\n"
                  "  f64 xx = x * x, xl = fma(x, x, -xx);\n"
                  "  f64 yy = y * y, yl = fma(y, y, -yy);\n"
                  "  f64 r = ((xx - hh) + yy) + ((xl + yl) - hl);\n"
                  "  return (h + r / (2 * h)) * 0x1p600;\n}\n");
    return;
  case H_SIGNBIT:
    /* PTX's neg, abs and copysign may return another NaN than the one they
    ** were given (the GPU's neg and abs of a NaN give the canonical, positive
    ** NaN), and the compiler turns sign-bit arithmetic written in C back into
    ** them.  So the sign bit is moved by integer instructions it cannot see
    ** through: a NaN keeps its sign, as on every target. */
    if (t == JITC_FLOAT32)
      buf_puts(b, "// -x, |x| and copysign(x, y) on the sign bit alone (NaNs keep theirs).\n"
                  DEV "f32 jitc_neg_f32(f32 x) {\n"
                  "  u32 r; asm(\"xor.b32 %0, %1, 0x80000000;\" : \"=r\"(r) : \"r\"(__float_as_uint(x)));\n"
                  "  return __uint_as_float(r);\n}\n"
                  DEV "f32 jitc_abs_f32(f32 x) {\n"
                  "  u32 r; asm(\"and.b32 %0, %1, 0x7fffffff;\" : \"=r\"(r) : \"r\"(__float_as_uint(x)));\n"
                  "  return __uint_as_float(r);\n}\n"
                  DEV "f32 jitc_copysign_f32(f32 x, f32 y) {\n"
                  "  u32 r;\n"
                  "  asm(\"{ .reg .b32 m, s; and.b32 m, %1, 0x7fffffff; and.b32 s, %2, 0x80000000; \"\n"
                  "      \"or.b32 %0, m, s; }\" : \"=r\"(r) : \"r\"(__float_as_uint(x)), \"r\"(__float_as_uint(y)));\n"
                  "  return __uint_as_float(r);\n}\n");
    else
      buf_puts(b, "// -x, |x| and copysign(x, y) on the sign bit alone (NaNs keep theirs).\n"
                  DEV "f64 jitc_neg_f64(f64 x) {\n"
                  "  u64 r;\n"
                  "  asm(\"xor.b64 %0, %1, 0x8000000000000000;\" : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n"
                  DEV "f64 jitc_abs_f64(f64 x) {\n"
                  "  u64 r;\n"
                  "  asm(\"and.b64 %0, %1, 0x7fffffffffffffff;\" : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n"
                  DEV "f64 jitc_copysign_f64(f64 x, f64 y) {\n"
                  "  u64 r;\n"
                  "  asm(\"{ .reg .b64 m, s; and.b64 m, %1, 0x7fffffffffffffff; \"\n"
                  "      \"and.b64 s, %2, 0x8000000000000000; or.b64 %0, m, s; }\"\n"
                  "      : \"=l\"(r) : \"l\"((u64)__double_as_longlong(x)), \"l\"((u64)__double_as_longlong(y)));\n"
                  "  return __longlong_as_double((i64)r);\n}\n");
    return;
  case H_NANARG:
    /* C99 Annex F: a function of one NaN argument returns that NaN.  CUDA's
    ** math library returns its canonical NaN instead. */
    put_tpl(b, "// f(x) for a function of one argument: x itself when x is a NaN.\n"
               DEV "$T jitc_nanarg_$S($T x, $T r) { return x != x ? x : r; }\n", t);
    return;
  case H_NHELPERS:
    break;
  }
}

static void use(Emit *E, Helper h, jitc_dtype t) {
  E->used[h][t] = true;
  /* Dependencies between helpers. */
  if ((h == H_MINIMUM || h == H_MAXIMUM || h == H_FMIN || h == H_FMAX) && is_f(t))
    E->used[H_ISNAN][t] = true;
  if (h == H_CLIP && is_f(t)) {
    use(E, H_MINIMUM, t);
    use(E, H_MAXIMUM, t);
  }
  if (h == H_MOD && is_f(t))
    E->used[H_FLOORDIV][t] = true;
  if (h == H_HYPOT)
    E->used[H_ISNAN][t] = true; /* jitc_isinf_* */
}

static Val valf(const char *fmt, ...) PRINTF(1, 2);
static Val valf(const char *fmt, ...) {
  Val v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v.s, sizeof v.s, fmt, ap);
  va_end(ap);
  return v;
}

/* A constant as a C literal of its exact type and value. */
static Val emit_const(const Node *n) {
  switch (n->type) {
  case JITC_BOOL:
    return valf("((b8)%d)", n->k.i != 0);
  case JITC_INT32: {
    int32_t v = (int32_t)n->k.i;
    if (v == INT32_MIN)
      return valf("(-2147483647 - 1)");
    return v < 0 ? valf("(%d)", (int)v) : valf("%d", (int)v);
  }
  case JITC_INT64: {
    int64_t v = n->k.i;
    if (v == INT64_MIN)
      return valf("(-9223372036854775807ll - 1)");
    return v < 0 ? valf("(%lldll)", (long long)v) : valf("%lldll", (long long)v);
  }
  case JITC_FLOAT32: {
    float f = (float)n->k.f;
    if (!isfinite(f)) {
      uint32_t bits;
      memcpy(&bits, &f, sizeof bits);
      return valf("__uint_as_float(0x%08xu)", (unsigned)bits);
    }
    /* The shortest decimal when it reads back as f both straight to float
    ** and through double (a compiler may do either); else hexadecimal. */
    char d[40];
    fmt_float(d, f);
    if ((float)strtod(d, NULL) != f || strtof(d, NULL) != f)
      snprintf(d, sizeof d, "%a", (double)f);
    else if (!strpbrk(d, ".eEx"))
      strcat(d, ".0");
    return d[0] == '-' ? valf("(%sf)", d) : valf("%sf", d);
  }
  case JITC_FLOAT64: {
    double f = n->k.f;
    if (!isfinite(f)) {
      uint64_t bits;
      memcpy(&bits, &f, sizeof bits);
      return valf("__longlong_as_double(0x%016llxll)", (unsigned long long)bits);
    }
    char d[40];
    fmt_double(d, f);
    if (strtod(d, NULL) != f)
      snprintf(d, sizeof d, "%a", f);
    else if (!strpbrk(d, ".eEx"))
      strcat(d, ".0");
    return d[0] == '-' ? valf("(%s)", d) : valf("%s", d);
  }
  default:
    unreachable();
  }
}

/* The libm name of a one- or two-operand float function, or NULL. */
static const char *libm_name(OpId op) {
  switch (op) {
  case OP_SQRT: return "sqrt";
  case OP_CBRT: return "cbrt";
  case OP_EXP: return "exp";
  case OP_EXP2: return "exp2";
  case OP_EXPM1: return "expm1";
  case OP_LOG: return "log";
  case OP_LOG2: return "log2";
  case OP_LOG10: return "log10";
  case OP_LOG1P: return "log1p";
  case OP_SIN: return "sin";
  case OP_COS: return "cos";
  case OP_TAN: return "tan";
  case OP_ASIN: return "asin";
  case OP_ACOS: return "acos";
  case OP_ATAN: return "atan";
  case OP_SINH: return "sinh";
  case OP_COSH: return "cosh";
  case OP_TANH: return "tanh";
  case OP_ASINH: return "asinh";
  case OP_ACOSH: return "acosh";
  case OP_ATANH: return "atanh";
  case OP_FLOOR: return "floor";
  case OP_CEIL: return "ceil";
  case OP_TRUNC: return "trunc";
  case OP_RINT: return "rint"; /* the default rounding: half to even */
  case OP_ABS: return "fabs";
  case OP_POW: return "pow";
  case OP_ATAN2: return "atan2";
  case OP_HYPOT: return "hypot";
  case OP_FMOD: return "fmod";
  case OP_COPYSIGN: return "copysign";
  case OP_FMA: return "fma";
  default: return NULL;
  }
}

/* The expression of op n over operand values a[], written to out. */
static bool op_expr(Emit *E, Buf *o, const Node *n, const Val *a) {
  jitc_dtype r = n->type;
  jitc_dtype t = n->args[n->op == OP_WHERE ? 1 : 0]->type; /* operand type */
  const char *T = ctype[t], *U = utype[t], *S = ctype[t];
  const char *x = a[0].s, *y = n->nargs > 1 ? a[1].s : "", *z = n->nargs > 2 ? a[2].s : "";
  const char *F = t == JITC_FLOAT32 ? "f" : "";
  bool b = t == JITC_BOOL, in = is_i(t), fl = is_f(t);
  switch (n->op) {
  case OP_ADD:
  case OP_SUB:
  case OP_MUL: {
    char c = n->op == OP_ADD ? '+' : n->op == OP_SUB ? '-' : '*';
    if (b)
      buf_printf(o, "(b8)(%s %c %s)", x, n->op == OP_ADD ? '|' : '&', y);
    else if (in)
      buf_printf(o, "(%s)((%s)%s %c (%s)%s)", T, U, x, c, U, y);
    else
      buf_printf(o, "%s %c %s", x, c, y);
    return true;
  }
  case OP_DIV:
    if (!fl)
      return false;
    buf_printf(o, "%s / %s", x, y);
    return true;
  case OP_FLOORDIV:
  case OP_MOD:
    if (b)
      return false;
    use(E, n->op == OP_FLOORDIV ? H_FLOORDIV : H_MOD, t);
    if (in)
      buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_FLOORDIV ? "floordiv" : "mod", S, x, y);
    else if (n->op == OP_FLOORDIV)
      buf_printf(o, "jitc_divmod_%s(%s, %s, &m_%s)", S, x, y, S);
    else
      buf_printf(o, "(jitc_divmod_%s(%s, %s, &m_%s), m_%s)", S, x, y, S, S);
    return true;
  case OP_FMOD:
  case OP_POW:
    if (b)
      return false;
    if (in) {
      use(E, n->op == OP_FMOD ? H_FMOD : H_POW, t);
      buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_FMOD ? "fmod" : "pow", S, x, y);
    } else if (n->op == OP_POW) {
      /* x ** 2 exactly rounded, as the C library's pow gives it (CUDA's pow
      ** is within 2 ulp, not always exact). */
      const Node *e = n->args[1];
      if (e->kind == N_CONST && e->k.f == 2.0)
        buf_printf(o, "%s * %s", x, x);
      else if (e->kind == N_CONST)
        buf_printf(o, "pow%s(%s, %s)", F, x, y);
      else
        buf_printf(o, "%s == (%s)2 ? %s * %s : pow%s(%s, %s)", y, T, x, x, F, x, y);
    } else {
      buf_printf(o, "%s%s(%s, %s)", libm_name(n->op), F, x, y);
    }
    return true;
  case OP_AND:
  case OP_OR:
  case OP_XOR:
    if (fl)
      return false;
    buf_printf(o, "(%s)(%s %c %s)", T, x, n->op == OP_AND ? '&' : n->op == OP_OR ? '|' : '^', y);
    return true;
  case OP_SHL:
  case OP_SHR:
    if (!in)
      return false;
    use(E, n->op == OP_SHL ? H_SHL : H_SHR, t);
    buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_SHL ? "shl" : "shr", S, x, y);
    return true;
  case OP_LT: buf_printf(o, "(b8)(%s < %s)", x, y); return true;
  case OP_LE: buf_printf(o, "(b8)(%s <= %s)", x, y); return true;
  case OP_GT: buf_printf(o, "(b8)(%s > %s)", x, y); return true;
  case OP_GE: buf_printf(o, "(b8)(%s >= %s)", x, y); return true;
  case OP_EQ: buf_printf(o, "(b8)(%s == %s)", x, y); return true;
  case OP_NE: buf_printf(o, "(b8)(%s != %s)", x, y); return true;
  case OP_NEG:
    if (b)
      return false;
    if (in) {
      buf_printf(o, "(%s)((%s)0 - (%s)%s)", T, U, U, x);
    } else {
      use(E, H_SIGNBIT, t);
      buf_printf(o, "jitc_neg_%s(%s)", S, x);
    }
    return true;
  case OP_INVERT:
    if (fl)
      return false;
    if (b)
      buf_printf(o, "(b8)(%s ^ 1)", x);
    else
      buf_printf(o, "(%s)~%s", T, x);
    return true;
  case OP_ABS:
    if (b)
      buf_puts(o, x);
    else if (in)
      buf_printf(o, "%s < 0 ? (%s)((%s)0 - (%s)%s) : %s", x, T, U, U, x, x);
    else {
      use(E, H_SIGNBIT, t);
      buf_printf(o, "jitc_abs_%s(%s)", S, x);
    }
    return true;
  case OP_SQUARE:
    if (b)
      return false;
    if (in)
      buf_printf(o, "(%s)((%s)%s * (%s)%s)", T, U, x, U, x);
    else
      buf_printf(o, "%s * %s", x, x);
    return true;
  case OP_RECIPROCAL:
    if (b)
      return false;
    if (in) /* 1/a truncated; 1/0 is 0 */
      buf_printf(o, "%s == 1 || %s == -1 ? %s : (%s)0", x, x, x, T);
    else
      buf_printf(o, "(%s)1 / %s", T, x);
    return true;
  case OP_FLOOR:
  case OP_CEIL:
  case OP_TRUNC:
    if (!fl) {
      buf_puts(o, x); /* the identity on bool and ints */
      return true;
    }
    use(E, H_NANARG, t);
    buf_printf(o, "jitc_nanarg_%s(%s, %s%s(%s))", S, x, libm_name(n->op), F, x);
    return true;
  case OP_SIGN:
    if (b)
      return false;
    if (in)
      buf_printf(o, "(%s)((%s > 0) - (%s < 0))", T, x, x);
    else /* NaN stays NaN; both zeros give +0 */
      buf_printf(o, "%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s == 0 ? (%s)0 : %s", x, T, x, T, x, T, x);
    return true;
  case OP_MINIMUM:
  case OP_MAXIMUM:
  case OP_FMIN:
  case OP_FMAX: {
    bool mn = n->op == OP_MINIMUM || n->op == OP_FMIN;
    if (b)
      buf_printf(o, "(b8)(%s %c %s)", x, mn ? '&' : '|', y);
    else if (in)
      buf_printf(o, "%s %c %s ? %s : %s", x, mn ? '<' : '>', y, x, y);
    else {
      Helper h = n->op == OP_MINIMUM ? H_MINIMUM : n->op == OP_MAXIMUM ? H_MAXIMUM
                 : n->op == OP_FMIN ? H_FMIN : H_FMAX;
      use(E, h, t);
      buf_printf(o, "jitc_%s_%s(%s, %s)", op_info[n->op].name, S, x, y);
    }
    return true;
  }
  case OP_CLIP:
    if (b) {
      buf_printf(o, "(b8)((%s | %s) & %s)", x, y, z);
    } else {
      use(E, H_CLIP, t);
      buf_printf(o, "jitc_clip_%s(%s, %s, %s)", S, x, y, z);
    }
    return true;
  case OP_FMA:
    if (!fl)
      return false;
    buf_printf(o, "fma%s(%s, %s, %s)", F, x, y, z);
    return true;
  case OP_WHERE:
    buf_printf(o, "%s ? %s : %s", x, y, z);
    return true;
  case OP_ISNAN:
  case OP_ISINF:
  case OP_ISFINITE:
    if (!fl) {
      buf_printf(o, "(b8)%d", n->op == OP_ISFINITE);
      return true;
    }
    use(E, H_ISNAN, t);
    buf_printf(o, "jitc_%s_%s(%s)", op_info[n->op].name, S, x);
    return true;
  case OP_CAST:
    if (r == t) {
      buf_puts(o, x);
    } else if (r == JITC_BOOL) {
      buf_printf(o, "(b8)(%s != 0)", x); /* NaN is true */
    } else if (fl && is_i(r)) {
      use(E, r == JITC_INT32 ? H_SAT_I32 : H_SAT_I64, t);
      buf_printf(o, "jitc_to_%s_%s(%s)", ctype[r], S, x);
    } else if (t == JITC_INT64 && r == JITC_INT32) {
      buf_printf(o, "(i32)(u32)(u64)%s", x); /* wraps */
    } else {
      buf_printf(o, "(%s)%s", ctype[r], x);
    }
    return true;
  case OP_HYPOT:
    if (!fl)
      return false;
    use(E, H_HYPOT, t);
    buf_printf(o, "jitc_hypot_%s(%s, %s)", S, x, y);
    return true;
  default:
    break;
  }
  if (fl && n->op == OP_COPYSIGN) {
    use(E, H_SIGNBIT, t);
    buf_printf(o, "jitc_copysign_%s(%s, %s)", S, x, y);
    return true;
  }
  if (fl && n->nargs == 1 && libm_name(n->op)) {
    use(E, H_NANARG, t);
    buf_printf(o, "jitc_nanarg_%s(%s, %s%s(%s))", S, x, libm_name(n->op), F, x);
    return true;
  }
  if (fl && n->nargs == 2 && libm_name(n->op)) {
    buf_printf(o, "%s%s(%s, %s)", libm_name(n->op), F, x, y);
    return true;
  }
  return false;
}

/* Emits n's value: operands first, then `const T vK = expr;`.  Returns the
** name or literal.  Recursion depth is the tree's height, which the parser
** bounds. */
static bool emit_node(Emit *E, const Node *n, Val *out) {
  switch (n->kind) {
  case N_CONST:
    *out = emit_const(n);
    return true;
  case N_LOAD:
    /* Bool arrays may hold bytes other than 0 and 1: normalise, as interp does. */
    *out = n->type == JITC_BOOL ? valf("(b8)(x%d != 0)", n->slot) : valf("x%d", n->slot);
    return true;
  case N_PARAM:
    *out = n->type == JITC_BOOL ? valf("(b8)(p%d != 0)", n->slot) : valf("p%d", n->slot);
    return true;
  case N_INDEX:
    *out = valf("i");
    return true;
  case N_TEMP:
    *out = valf("t%d", n->slot);
    return true;
  case N_OP:
    break;
  default:
    return false;
  }
  Val a[3];
  for (int k = 0; k < n->nargs; k++)
    if (!emit_node(E, n->args[k], &a[k]))
      return false;
  Buf e = {0};
  bool ok = op_expr(E, &e, n, a);
  if (ok) {
    int v = E->nvals++;
    buf_printf(E->b, "  const %s v%d = %s;\n", ctype[n->type], v, e.s ? e.s : "");
    *out = valf("v%d", v);
  }
  buf_free(&e);
  return ok;
}

static void count_temp_reads(Emit *E, const Node *n) {
  if (n->kind == N_TEMP && n->slot >= 0 && n->slot < E->p->ntemps)
    E->temp_reads[n->slot]++;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++)
      count_temp_reads(E, n->args[k]);
}

/* One line of the program's source as a C comment, with anything that could
** end or extend the comment (a backslash before the newline) replaced. */
static void put_src_comment(Buf *b, const char *src, int off) {
  if (!src || off < 0)
    return;
  int line, col;
  src_position(src, off, &line, &col);
  const char *s = src + off;
  buf_printf(b, "  // %d:%d: ", line, col);
  for (int k = 0; s[k] && s[k] != '\n' && s[k] != ';' && k < 100; k++) {
    unsigned char c = (unsigned char)s[k];
    buf_putc(b, c >= 32 && c < 127 && c != '\\' ? (char)c : '?');
  }
  buf_putc(b, '\n');
}

/* Elements per vector step: the widest element fills `vbytes` bytes. */
static int vec_width(const Program *p, int vbytes) {
  size_t maxsz = 1;
  for (int k = 0; k < p->narrays; k++)
    if (jitc_dtype_size(p->arrays[k].dtype) > maxsz)
      maxsz = jitc_dtype_size(p->arrays[k].dtype);
  int v = vbytes / (int)maxsz;
  return v < 1 ? 1 : v;
}

static int env_int(const char *name, int def, int lo, int hi) {
  const char *e = getenv(name);
  if (!e || !*e)
    return def;
  int v = atoi(e);
  return v < lo ? lo : v > hi ? hi : v;
}

/* Statements [from, to) to E->b, in SSA form; stmt_line (may be NULL) gets
** the line each starts on.  A let whose temporary cross[] marks is also
** stored to its scratch sK[j] (split kernels). */
static bool emit_stmts(Emit *E, int from, int to, int *stmt_line, const bool *cross) {
  const Program *p = E->p;
  Buf *body = E->b;
  for (int s = from; s < to; s++) {
    const IrStmt *st = &p->stmts[s];
    if (stmt_line)
      stmt_line[s] = cur_line(E);
    if (s == from || st->off != p->stmts[s - 1].off)
      put_src_comment(body, E->src, st->off);
    Val v;
    if (!emit_node(E, st->value, &v))
      return false;
    if (st->kind == IR_LET) {
      buf_printf(body, "  const %s t%d = %s;\n", ctype[p->temps[st->slot]], st->slot, v.s);
      if (cross && cross[st->slot])
        buf_printf(body, "  s%d[j] = t%d;\n", st->slot, st->slot);
      else if (E->temp_reads[st->slot] == 0)
        buf_printf(body, "  (void)t%d;\n", st->slot);
    } else {
      buf_printf(body, "  x%d = %s;\n", st->slot, v.s);
    }
  }
  return true;
}

/* The file's head: the program as a comment, its arrays and scalars, the
** typedefs and the helpers E's statements use. */
static void emit_prelude(Emit *E, Buf *b) {
  const Program *p = E->p;
  const char *src = E->src;
  buf_printf(b, "// Generated by jitc %s: one element-wise kernel in CUDA C, compiled by NVRTC\n"
                "// without any header.  The program:\n", JITC_VERSION);
  if (src) {
    const char *s = src;
    for (int line = 0; *s && line < 40; line++) {
      buf_puts(b, "//   ");
      for (int k = 0; s[k] && s[k] != '\n' && k < 100; k++) {
        unsigned char c = (unsigned char)s[k];
        buf_putc(b, c >= 32 && c < 127 && c != '\\' ? (char)c : '?');
      }
      buf_putc(b, '\n');
      const char *nl = strchr(s, '\n');
      if (!nl)
        break;
      s = nl + 1;
    }
  }
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    static const char *const role[] = {"input", "output", "inout"};
    buf_printf(b, "// a%d: array '%s', %s, %s\n", k, a->name, jitc_dtype_name(a->dtype),
               role[a->role]);
  }
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, "// p%d: scalar '%s', %s\n", k, p->params[k].name,
               jitc_dtype_name(p->params[k].type));
  buf_puts(b, "typedef unsigned char b8;\ntypedef unsigned char u8;\n"
              "typedef int i32;\ntypedef unsigned int u32;\n"
              "typedef long long i64;\ntypedef unsigned long long u64;\n"
              "typedef float f32;\ntypedef double f64;\n\n");
  for (int h = 0; h < H_NHELPERS; h++)
    for (int t = 0; t < JITC_NDTYPES; t++)
      if (E->used[h][t])
        put_helper(b, (Helper)h, (jitc_dtype)t);

}

/* The remainder out-parameters of jitc_divmod, one per float type used. */
static void emit_divmod_vars(Emit *E, Buf *b) {
  for (int t = JITC_FLOAT32; t <= JITC_FLOAT64; t++)
    if (E->used[H_FLOORDIV][t])
      buf_printf(b, "  %s m_%s = 0; (void)m_%s;\n", ctype[t], ctype[t], ctype[t]);
}

/* The CUDA C of program p, and per IR statement the line it starts on
** (stmt_line, may be NULL).  Returns false on out of memory or an IR the
** back end does not know (a bug in the checker). */
static bool emit_program(const Program *p, const char *src, int vec, bool wide, Buf *out,
                         int *stmt_line, int *elem_end_line) {
  Emit E = {.p = p, .src = src, .line = 1};
  Buf body = {0};
  E.b = &body;
  E.temp_reads = calloc((size_t)p->ntemps + 1, sizeof(int));
  if (!E.temp_reads)
    return false;
  for (int s = 0; s < p->nstmts; s++)
    count_temp_reads(&E, p->stmts[s].value);

  /* The body of jitc_elem first, to learn which helpers it needs; its line
  ** numbers are fixed up once the prelude's length is known. */
  bool ok = emit_stmts(&E, 0, p->nstmts, stmt_line, NULL);
  int body_lines = cur_line(&E) - 1;

  Buf *b = out;
  emit_prelude(&E, b);

  /* jitc_elem: arrays by reference (loaded values in, results out). */
  buf_puts(b, "\n// One element.  xK holds element i of array aK.\n" DEV "void jitc_elem(const i64 i");
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", %s%s &x%d", p->arrays[k].role == JITC_INPUT ? "const " : "",
               ctype[p->arrays[k].dtype], k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", const %s p%d", ctype[p->params[k].type], k);
  buf_puts(b, ") {\n  (void)i;\n");
  emit_divmod_vars(&E, b);
  /* The prelude's line count, to shift the statements' lines. */
  int pre = 1;
  for (size_t k = 0; k < b->len; k++)
    pre += b->s[k] == '\n';
  if (stmt_line)
    for (int s = 0; s < p->nstmts; s++)
      stmt_line[s] += pre - 1;
  if (elem_end_line)
    *elem_end_line = pre + body_lines;
  if (body.s)
    buf_puts(b, body.s);
  buf_puts(b, "}\n\n");

  /* The kernels. */
  buf_printf(b, "template <typename T, int N> struct alignas(sizeof(T) * N) jitc_vec { T v[N]; };\n\n"
                "// Elements [0, n), grid-stride: V = %d at a time with vector accesses\n"
                "// when `vec` says every pointer is aligned for them, then one at a time.\n"
                "// Element j is element base + j of the whole array (i in the program).\n"
                "template <typename I>\n" DEV "void jitc_body(const I n, const i64 base, const int vec", vec);
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", %s%s *__restrict__ a%d", p->arrays[k].role == JITC_INPUT ? "const " : "",
               ctype[p->arrays[k].dtype], k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", const %s p%d", ctype[p->params[k].type], k);
  buf_puts(b, ") {\n"
              "  const I stride = (I)gridDim.x * (I)blockDim.x;\n"
              "  const I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;\n"
              "  I done = 0;\n"
              "  if (vec) {\n");
  buf_printf(b, "    const I nv = n / %d;\n    for (I w = t; w < nv; w += stride) {\n", vec);
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    const char *T = ctype[a->dtype];
    if (a->role == JITC_OUTPUT)
      buf_printf(b, "      jitc_vec<%s, %d> r%d;\n", T, vec, k);
    else
      buf_printf(b, "      %sjitc_vec<%s, %d> r%d = ((const jitc_vec<%s, %d> *)a%d)[w];\n",
                 a->role == JITC_INPUT ? "const " : "", T, vec, k, T, vec, k);
  }
  buf_printf(b, "#pragma unroll\n      for (int e = 0; e < %d; e++)\n        jitc_elem(base + (i64)(w * %d + e)",
             vec, vec);
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", r%d.v[e]", k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    if (a->role != JITC_INPUT)
      buf_printf(b, "      ((jitc_vec<%s, %d> *)a%d)[w] = r%d;\n", ctype[a->dtype], vec, k, k);
  }
  buf_printf(b, "    }\n    done = nv * %d;\n  }\n  for (I j = done + t; j < n; j += stride) {\n", vec);
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    if (a->role == JITC_OUTPUT)
      buf_printf(b, "    %s x%d;\n", ctype[a->dtype], k);
    else
      buf_printf(b, "    %s%s x%d = a%d[j];\n", a->role == JITC_INPUT ? "const " : "",
                 ctype[a->dtype], k, k);
  }
  buf_puts(b, "    jitc_elem(base + (i64)j");
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, ", x%d", k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role != JITC_INPUT)
      buf_printf(b, "    a%d[j] = x%d;\n", k, k);
  buf_puts(b, "  }\n}\n\n");
  {
    int w = wide ? 64 : 32;
    buf_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) jitc_k%d(const u%d n, const i64 base, "
               "const int vec", CUDA_BLOCK, w, w);
    for (int k = 0; k < p->narrays; k++)
      buf_printf(b, ", %s%s *__restrict__ a%d", p->arrays[k].role == JITC_INPUT ? "const " : "",
                 ctype[p->arrays[k].dtype], k);
    for (int k = 0; k < p->nparams; k++)
      buf_printf(b, ", const %s p%d", ctype[p->params[k].type], k);
    buf_printf(b, ") {\n  jitc_body<u%d>(n, base, vec", w);
    for (int k = 0; k < p->narrays; k++)
      buf_printf(b, ", a%d", k);
    for (int k = 0; k < p->nparams; k++)
      buf_printf(b, ", p%d", k);
    buf_puts(b, ");\n}\n");
  }
  free(E.temp_reads);
  bool oom = body.oom || b->oom;
  buf_free(&body);
  return ok && !oom;
}

/* ---- large programs: one kernel per group of statements ----
**
** NVRTC's time grows with the square of the arrays one kernel touches (a
** thousand outputs took 5 s, two thousand 29 s), and a kernel's
** parameters are limited to 32 KB.  A program above SPLIT_COST (split.c)
** becomes one kernel per group, jitc_g0, jitc_g1, ..., each over the
** elements with one thread per element and its own arrays, launched one
** after the other on the stream for each range of elements; a temporary
** that a later group reads goes through scratch in device memory, one value
** per element of the range. */
#define SPLIT_COST 256

typedef struct Plan {
  int ng;
  int *start;       /* group g is statements [start[g], start[g + 1]) */
  bool *cross;      /* per temporary: kept in scratch */
  size_t per_elem;  /* scratch bytes per element */
  size_t *temp_off; /* per temporary: its scratch offset per element of the range */
  /* Per group: the arrays it touches in slot order, with what it does
  ** (bit 1: loads, bit 2: stores), and the temporaries it reads from
  ** earlier groups or writes for later ones (bit 1: reads, bit 2: writes). */
  int **arr, *narr, **arr_use;
  int **tmp, *ntmp, **tmp_use;
} Plan;

static void plan_free(Plan *P) {
  if (!P)
    return;
  for (int g = 0; P->arr && g < P->ng; g++) {
    free(P->arr[g]);
    free(P->arr_use[g]);
    free(P->tmp[g]);
    free(P->tmp_use[g]);
  }
  free(P->arr);
  free(P->arr_use);
  free(P->narr);
  free(P->tmp);
  free(P->tmp_use);
  free(P->ntmp);
  free(P->start);
  free(P->cross);
  free(P->temp_off);
  free(P);
}

static void plan_walk(const Node *n, int g, const int *def_group, int *amark, int *tmark) {
  if (n->kind == N_LOAD)
    amark[n->slot] |= 1;
  if (n->kind == N_TEMP && def_group[n->slot] != g)
    tmark[n->slot] |= 1;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++)
      plan_walk(n->args[k], g, def_group, amark, tmark);
}

/* Collects the marked slots of one group into *list and *use. */
static int plan_collect(int *mark, int n, int **list, int **use) {
  int c = 0;
  for (int k = 0; k < n; k++)
    c += mark[k] != 0;
  *list = malloc(sizeof(int) * (size_t)(c + 1));
  *use = malloc(sizeof(int) * (size_t)(c + 1));
  if (!*list || !*use)
    return -1;
  c = 0;
  for (int k = 0; k < n; k++)
    if (mark[k]) {
      (*list)[c] = k;
      (*use)[c++] = mark[k];
      mark[k] = 0;
    }
  return c;
}

/* The plan of p, or NULL with *oom false when p is one group. */
static Plan *plan_new(const Program *p, bool *oom) {
  *oom = false;
  Plan *P = calloc(1, sizeof *P);
  int *amark = calloc((size_t)p->narrays + 1, sizeof(int));
  int *tmark = calloc((size_t)p->ntemps + 1, sizeof(int));
  int *def_group = calloc((size_t)p->ntemps + 1, sizeof(int));
  if (!P || !amark || !tmark || !def_group)
    goto fail;
  P->start = malloc(sizeof(int) * ((size_t)p->nstmts + 2));
  P->cross = calloc((size_t)p->ntemps + 1, sizeof(bool));
  if (!P->start || !P->cross)
    goto fail;
  P->ng = split_program(p, SPLIT_COST, P->start, P->cross, &P->per_elem);
  if (P->ng < 0)
    goto fail;
  if (P->ng == 1) {
    plan_free(P);
    P = NULL;
    goto done;
  }
  int ng = P->ng;
  P->temp_off = calloc((size_t)p->ntemps + 1, sizeof(size_t));
  P->arr = calloc((size_t)ng, sizeof(int *));
  P->arr_use = calloc((size_t)ng, sizeof(int *));
  P->narr = calloc((size_t)ng, sizeof(int));
  P->tmp = calloc((size_t)ng, sizeof(int *));
  P->tmp_use = calloc((size_t)ng, sizeof(int *));
  P->ntmp = calloc((size_t)ng, sizeof(int));
  if (!P->temp_off || !P->arr || !P->arr_use || !P->narr || !P->tmp || !P->tmp_use || !P->ntmp)
    goto fail;
  size_t off = 0;
  for (int t = 0; t < p->ntemps; t++)
    if (P->cross[t]) {
      P->temp_off[t] = off;
      off += jitc_dtype_size(p->temps[t]);
    }
  for (int g = 0; g < ng; g++) {
    for (int q = P->start[g]; q < P->start[g + 1]; q++) {
      const IrStmt *st = &p->stmts[q];
      plan_walk(st->value, g, def_group, amark, tmark);
      if (st->kind == IR_STORE)
        amark[st->slot] |= 2;
      else {
        def_group[st->slot] = g;
        if (P->cross[st->slot])
          tmark[st->slot] |= 2;
      }
    }
    if ((P->narr[g] = plan_collect(amark, p->narrays, &P->arr[g], &P->arr_use[g])) < 0 ||
        (P->ntmp[g] = plan_collect(tmark, p->ntemps, &P->tmp[g], &P->tmp_use[g])) < 0)
      goto fail;
  }
  goto done;
fail:
  *oom = true;
  plan_free(P);
  P = NULL;
done:
  free(amark);
  free(tmark);
  free(def_group);
  return P;
}

/* The CUDA C of a split program: the prelude, then one kernel per group. */
static bool emit_split(const Program *p, const char *src, const Plan *P, Buf *out) {
  Emit E = {.p = p, .src = src, .line = 1};
  Buf *bodies = calloc((size_t)P->ng, sizeof(Buf));
  E.temp_reads = calloc((size_t)p->ntemps + 1, sizeof(int));
  bool ok = bodies && E.temp_reads;
  for (int q = 0; ok && q < p->nstmts; q++)
    count_temp_reads(&E, p->stmts[q].value);
  for (int g = 0; ok && g < P->ng; g++) {
    E.b = &bodies[g];
    ok = emit_stmts(&E, P->start[g], P->start[g + 1], NULL, P->cross) && !bodies[g].oom;
  }
  if (ok) {
    Buf *b = out;
    emit_prelude(&E, b);
    for (int g = 0; g < P->ng; g++) {
      buf_printf(b, "\n// Group %d: element base + j, one per thread, grid-stride.\n"
                    "extern \"C\" __global__ void __launch_bounds__(%d) jitc_g%d(const u32 n, const i64 base",
                 g, CUDA_BLOCK, g);
      for (int k = 0; k < P->narr[g]; k++) {
        int a = P->arr[g][k];
        buf_printf(b, ", %s%s *__restrict__ a%d", p->arrays[a].role == JITC_INPUT ? "const " : "",
                   ctype[p->arrays[a].dtype], a);
      }
      for (int k = 0; k < p->nparams; k++)
        buf_printf(b, ", const %s p%d", ctype[p->params[k].type], k);
      for (int k = 0; k < P->ntmp[g]; k++)
        buf_printf(b, ", %s *__restrict__ s%d", ctype[p->temps[P->tmp[g][k]]], P->tmp[g][k]);
      buf_puts(b, ") {\n  const u32 stride = gridDim.x * blockDim.x;\n"
                  "  for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {\n"
                  "  const i64 i = base + (i64)j;\n  (void)i;\n");
      emit_divmod_vars(&E, b);
      for (int k = 0; k < P->narr[g]; k++) {
        int a = P->arr[g][k], use = P->arr_use[g][k];
        const char *T = ctype[p->arrays[a].dtype];
        if (use == 1)
          buf_printf(b, "  const %s x%d = a%d[j];\n", T, a, a);
        else if (use & 1)
          buf_printf(b, "  %s x%d = a%d[j];\n", T, a, a);
        else
          buf_printf(b, "  %s x%d;\n", T, a);
      }
      for (int k = 0; k < P->ntmp[g]; k++)
        if (P->tmp_use[g][k] & 1)
          buf_printf(b, "  const %s t%d = s%d[j];\n", ctype[p->temps[P->tmp[g][k]]],
                     P->tmp[g][k], P->tmp[g][k]);
      if (bodies[g].s)
        buf_puts(b, bodies[g].s);
      for (int k = 0; k < P->narr[g]; k++)
        if (P->arr_use[g][k] & 2)
          buf_printf(b, "  a%d[j] = x%d;\n", P->arr[g][k], P->arr[g][k]);
      buf_puts(b, "  }\n}\n");
    }
  }
  for (int g = 0; bodies && g < P->ng; g++)
    buf_free(&bodies[g]);
  free(bodies);
  free(E.temp_reads);
  return ok && !out->oom;
}

/* ===================================================================== */
/* Per-context state                                                      */
/* ===================================================================== */

/* A loaded module, shared by every kernel of the context compiled from the
** same source and options. */
typedef struct Module {
  struct Module *next;
  uint64_t hash;
  char *key;
  size_t keylen;
  CUmodule mod;
  CUfunction fn; /* jitc_k32 or jitc_k64; jitc_g0 of a split program */
  CUfunction *gfn; /* a split program's kernels, one per group */
  int ngfn;
  bool wide;     /* 64-bit indices */
  int occ;       /* resident blocks of CUDA_BLOCK threads per SM */
} Module;

/* One half of the host pipeline: a stream, its events and the chunk it holds. */
typedef struct Slot {
  CUstream stream;
  CUevent ev[4]; /* before upload, before kernel, after kernel, after download */
  bool busy;
  int64_t off, m; /* the chunk in flight */
  bool timed;
} Slot;

typedef struct CudaState {
  pthread_mutex_t lock;
  CudaApi api;
  bool nvrtc_tried, nvrtc_ok, gpu_tried, gpu_ok;
  char nvrtc_err[600], gpu_err[600];
  int *archs;
  int narchs;
  CUdevice dev;
  CUcontext pctx;
  bool retained;
  int cc_major, cc_minor, nsm;
  char device[300];
  Slot slot[2];
  bool slots_ok;
  void *hstage;        /* pinned host staging, 2 halves */
  size_t hstage_bytes; /* per half */
  CUdeviceptr dstage;  /* device memory for the chunks, 2 halves */
  size_t dstage_bytes; /* per half */
  Module *modules;
  Pool *pool;
  bool pool_tried;
} CudaState;

static CudaState *state_get(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (S)
    return S;
  S = calloc(1, sizeof *S);
  if (!S)
    return NULL;
  pthread_mutex_init(&S->lock, NULL);
  ctx->target_state[JITC_TARGET_CUDA] = S;
  return S;
}

static bool load_nvrtc(CudaState *S) {
  if (S->nvrtc_tried)
    return S->nvrtc_ok;
  S->nvrtc_tried = true;
  if (cuda_load_nvrtc(&S->api, S->nvrtc_err, sizeof S->nvrtc_err) != 0)
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

static const char *cu_name(CudaState *S, CUresult r) { return cuda_result_name(&S->api, r); }

/* NVRTC's first compile in a process pays for NVRTC's own start-up (about
** 24 ms, against 7 ms for a later compile).  load_gpu() pays it on a second
** thread while the driver starts (cuInit alone takes over 100 ms), so the
** program's first real compile costs what later ones do. */
static void *nvrtc_warm_up(void *arg) {
  CudaApi *A = arg;
  nvrtcProgram prog;
  if (A->nvrtcCreateProgram(&prog, "extern \"C\" __global__ void jitc_warm(void) {}",
                            "warm.cu", 0, NULL, NULL) == 0) {
    /* To machine code, as real compiles go: that starts NVRTC's assembler too.
    ** The arch need not be the device's (not known yet); sm_75 is the oldest
    ** NVRTC 13 supports. */
    const char *opt = "-arch=sm_75";
    A->nvrtcCompileProgram(prog, 1, &opt);
    A->nvrtcDestroyProgram(&prog);
  }
  return NULL;
}

static bool load_driver_and_device(CudaState *S);

static bool load_gpu(CudaState *S) {
  if (S->gpu_tried)
    return S->gpu_ok;
  S->gpu_tried = true;
  if (!load_nvrtc(S)) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "%s", S->nvrtc_err);
    return false;
  }
  /* Only where a driver exists: elsewhere the warm-up would be wasted. */
  pthread_t warm;
  bool warming = (getenv("JITC_LIBCUDA") || dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) &&
                 pthread_create(&warm, NULL, nvrtc_warm_up, &S->api) == 0;
  bool ok = load_driver_and_device(S);
  if (warming)
    pthread_join(warm, NULL);
  return ok;
}

static bool load_driver_and_device(CudaState *S) {
  if (cuda_load_driver(&S->api, S->gpu_err, sizeof S->gpu_err) != 0)
    return false;
  CudaApi *A = &S->api;
  int count = 0;
  CUresult r = A->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count < 1) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "no CUDA device (%s)",
             r != CUDA_SUCCESS ? cu_name(S, r) : "the driver sees none");
    return false;
  }
  int ordinal = env_int("JITC_CUDA_DEVICE", 0, 0, count - 1);
  if ((r = A->cuDeviceGet(&S->dev, ordinal)) != CUDA_SUCCESS ||
      (r = A->cuDevicePrimaryCtxRetain(&S->pctx, S->dev)) != CUDA_SUCCESS) {
    snprintf(S->gpu_err, sizeof S->gpu_err, "cannot use CUDA device %d (%s)", ordinal,
             cu_name(S, r));
    return false;
  }
  S->retained = true;
  A->cuCtxSetCurrent(S->pctx);
  char name[256] = "CUDA device";
  A->cuDeviceGetName(name, (int)sizeof name, S->dev);
  A->cuDeviceGetAttribute(&S->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S->dev);
  A->cuDeviceGetAttribute(&S->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S->dev);
  A->cuDeviceGetAttribute(&S->nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, S->dev);
  if (S->nsm < 1)
    S->nsm = 1;
  snprintf(S->device, sizeof S->device, "%s (sm_%d%d, %d SMs)", name, S->cc_major, S->cc_minor,
           S->nsm);
  S->gpu_ok = true;
  return true;
}

static void free_stage(CudaState *S) {
  if (S->hstage)
    S->api.cuMemFreeHost(S->hstage);
  if (S->dstage)
    S->api.cuMemFree(S->dstage);
  S->hstage = NULL;
  S->dstage = 0;
  S->hstage_bytes = S->dstage_bytes = 0;
}

static void cuda_shutdown(jitc_context *ctx) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (!S)
    return;
  if (S->gpu_ok) {
    S->api.cuCtxSetCurrent(S->pctx);
    for (int s = 0; s < 2; s++) {
      if (S->slot[s].stream) {
        S->api.cuStreamSynchronize(S->slot[s].stream);
        S->api.cuStreamDestroy(S->slot[s].stream);
      }
      for (int e = 0; e < 4; e++)
        if (S->slot[s].ev[e])
          S->api.cuEventDestroy(S->slot[s].ev[e]);
    }
    free_stage(S);
  }
  for (Module *m = S->modules, *next; m; m = next) {
    next = m->next;
    if (S->gpu_ok && m->mod)
      S->api.cuModuleUnload(m->mod);
    free(m->key);
    free(m->gfn);
    free(m);
  }
  if (S->retained)
    S->api.cuDevicePrimaryCtxRelease(S->dev);
  if (S->pool)
    pool_free(S->pool);
  free(S->archs);
  cuda_unload(&S->api);
  pthread_mutex_destroy(&S->lock);
  free(S);
  ctx->target_state[JITC_TARGET_CUDA] = NULL;
}

static jitc_status cuda_available(jitc_context *ctx) {
  CudaState *S = state_get(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  bool ok = load_gpu(S);
  pthread_mutex_unlock(&S->lock);
  if (!ok)
    return ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
  return JITC_OK;
}

static const char *cuda_device(jitc_context *ctx) {
  CudaState *S = state_get(ctx);
  if (!S)
    return "no CUDA device";
  pthread_mutex_lock(&S->lock);
  bool ok = load_gpu(S);
  pthread_mutex_unlock(&S->lock);
  return ok ? S->device : "no CUDA device";
}

/* ===================================================================== */
/* Compiling                                                              */
/* ===================================================================== */

typedef struct CudaKernel {
  Module *m32, *m64; /* owned by the context's cache; m64 made on first use */
  int vec;           /* elements per vector step */
  Plan *plan;        /* a split program's groups, else NULL */
  CUdeviceptr scratch[2]; /* a split program's scratch, per stream slot */
  int64_t range;     /* elements per range of a split program's launches */
} CudaKernel;

/* Checks "sm_90", "compute_90", "sm_90a": returns the number (90) or -1. */
static int parse_arch(const char *a, bool *is_sm) {
  const char *d;
  if (!strncmp(a, "sm_", 3))
    d = a + 3, *is_sm = true;
  else if (!strncmp(a, "compute_", 8))
    d = a + 8, *is_sm = false;
  else
    return -1;
  int v = 0, nd = 0;
  for (; *d >= '0' && *d <= '9' && nd < 4; d++, nd++)
    v = v * 10 + (*d - '0');
  if (nd < 2 || (*d && !((*d == 'a' || *d == 'f') && !d[1])))
    return -1;
  return v;
}

/* The -arch value for the device: sm_XY when this NVRTC can make a CUBIN
** for it, else compute_XY of the newest arch it knows not above the
** device (PTX, which the driver compiles at load). */
static void device_arch(CudaState *S, char *out, size_t len) {
  int want = S->cc_major * 10 + S->cc_minor;
  if (S->narchs == 0) {
    snprintf(out, len, "sm_%d", want);
    return;
  }
  int best = -1;
  for (int k = 0; k < S->narchs; k++) {
    if (S->archs[k] == want) {
      snprintf(out, len, "sm_%d", want);
      return;
    }
    if (S->archs[k] < want && S->archs[k] > best)
      best = S->archs[k];
  }
  snprintf(out, len, "compute_%d", best > 0 ? best : want);
}

/* The NVRTC options for arch and the kernel's options; returns the count. */
static int nvrtc_options(const jitc_options *opt, const char *arch, char archopt[64],
                         const char **opts, char **extra_copy) {
  int n = 0;
  snprintf(archopt, 64, "-arch=%s", arch);
  opts[n++] = archopt;
  if (opt->fast_math) {
    opts[n++] = "--use_fast_math";
  } else {
    /* No contraction of a*b+c: NumPy rounds twice, and so does interp. */
    opts[n++] = "--fmad=false";
  }
  *extra_copy = NULL;
  const char *extra = getenv("JITC_NVRTC_EXTRA"); /* for experiments: one more option */
  if (extra && *extra) {
    *extra_copy = strdup(extra);
    if (*extra_copy)
      opts[n++] = *extra_copy;
  }
  return n;
}

/* Adds NVRTC's log to the diagnostics: errors on a line of jitc_elem get the
** position of the statement emitted there. */
static void report_log(jitc_context *ctx, const jitc_kernel *k, const char *log,
                       const int *stmt_line, int elem_end) {
  const Program *p = k->prog;
  for (const char *s = log; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    int line = 0;
    const char *msg = NULL;
    if (!strncmp(s, "jitc.cu(", 8) && sscanf(s + 8, "%d", &line) == 1) {
      msg = strstr(s, "): ");
      if (msg && (size_t)(msg - s) < len)
        msg += 3;
      else
        msg = NULL;
    }
    if (msg && strstr(msg, "error") == msg && stmt_line && line <= elem_end) {
      int which = -1;
      for (int q = 0; q < p->nstmts; q++)
        if (stmt_line[q] <= line)
          which = q;
      if (which >= 0)
        diag_add(&ctx->diags, JITC_E_INTERNAL, k->source, p->stmts[which].off,
                 "cuda: NVRTC rejected the code generated for this statement: %.*s",
                 (int)(len - (size_t)(msg - s)), msg);
    }
    s = nl ? nl + 1 : NULL;
  }
  ctx_error(ctx, JITC_E_INTERNAL, "cuda: NVRTC failed to compile the generated CUDA C:\n%s",
            log && *log ? log : "(no log)");
}

/* Compiles `src` with NVRTC.  want_ptx: PTX text, else the CUBIN (or PTX
** when arch is compute_XY).  *code is malloc'ed; *log too (may be empty). */
static jitc_status nvrtc_compile(jitc_context *ctx, CudaState *S, const jitc_kernel *k,
                                 const char *src, const char *const *opts, int nopts,
                                 bool want_ptx, char **code, size_t *len, char **log_out,
                                 const int *stmt_line, int elem_end) {
  CudaApi *A = &S->api;
  *code = NULL;
  *len = 0;
  if (log_out)
    *log_out = NULL;
  nvrtcProgram prog = NULL;
  nvrtcResult r = A->nvrtcCreateProgram(&prog, src, "jitc.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return ctx_error(ctx, r == 1 ? JITC_E_NOMEM : JITC_E_INTERNAL, "cuda: nvrtcCreateProgram: %s",
                     A->nvrtcGetErrorString(r));
  r = A->nvrtcCompileProgram(prog, nopts, opts);
  size_t loglen = 0;
  char *log = NULL;
  if (A->nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 0) {
    log = malloc(loglen + 1);
    if (log && A->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
      log[0] = '\0';
    if (log)
      log[loglen] = '\0';
  }
  jitc_status st = JITC_OK;
  if (r != NVRTC_SUCCESS) {
    if (r == NVRTC_ERROR_COMPILATION) {
      report_log(ctx, k, log, stmt_line, elem_end);
      st = JITC_E_INTERNAL;
    } else {
      /* Mostly a bad option: an arch this NVRTC does not know. */
      st = ctx_error(ctx, JITC_E_USAGE, "cuda: NVRTC refused the compile (%s)%s%s",
                     A->nvrtcGetErrorString(r), log && *log ? ":\n" : "", log ? log : "");
    }
    goto done;
  }
  bool is_sm = false;
  const char *archopt = opts[0] + 6; /* after -arch= */
  parse_arch(archopt, &is_sm);
  bool cubin = !want_ptx && is_sm && A->nvrtcGetCUBIN;
  size_t sz = 0;
  r = cubin ? A->nvrtcGetCUBINSize(prog, &sz) : A->nvrtcGetPTXSize(prog, &sz);
  char *out = r == NVRTC_SUCCESS ? malloc(sz + 1) : NULL;
  if (!out) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory for NVRTC's output");
    goto done;
  }
  r = cubin ? A->nvrtcGetCUBIN(prog, out) : A->nvrtcGetPTX(prog, out);
  if (r != NVRTC_SUCCESS) {
    free(out);
    st = ctx_error(ctx, JITC_E_INTERNAL, "cuda: NVRTC output: %s", A->nvrtcGetErrorString(r));
    goto done;
  }
  out[sz] = '\0';
  *code = out;
  *len = cubin ? sz : strlen(out) + 1; /* PTX: with its NUL, as cuModuleLoadData wants */
done:
  A->nvrtcDestroyProgram(&prog);
  if (log_out && st == JITC_OK)
    *log_out = log;
  else
    free(log);
  return st;
}

static uint64_t hash_key(const char *key, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < len; k++) {
    h ^= (unsigned char)key[k];
    h *= 1099511628211ull;
  }
  return h;
}

/* Loads a CUBIN or PTX image and finds its kernel. */
static jitc_status load_module(jitc_context *ctx, CudaState *S, Module *m, const void *image) {
  CudaApi *A = &S->api;
  char errlog[4096] = "";
  CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *v[2] = {errlog, (void *)(uintptr_t)sizeof errlog};
  CUresult r = A->cuModuleLoadDataEx(&m->mod, image, 2, o, v);
  if (r != CUDA_SUCCESS) {
    m->mod = NULL;
    return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                     "cuda: cannot load the compiled kernel (%s)%s%s", cu_name(S, r),
                     errlog[0] ? ": " : "", errlog);
  }
  r = A->cuModuleGetFunction(&m->fn, m->mod, m->ngfn ? "jitc_g0" : m->wide ? "jitc_k64" : "jitc_k32");
  for (int g = 0; g < m->ngfn && r == CUDA_SUCCESS; g++) {
    char name[32];
    snprintf(name, sizeof name, "jitc_g%d", g);
    r = A->cuModuleGetFunction(&m->gfn[g], m->mod, name);
  }
  if (r != CUDA_SUCCESS) {
    A->cuModuleUnload(m->mod);
    m->mod = NULL;
    return ctx_error(ctx, JITC_E_INTERNAL, "cuda: kernel missing from the module (%s)",
                     cu_name(S, r));
  }
  int occ = 0;
  if (A->cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, m->fn, CUDA_BLOCK, 0) != CUDA_SUCCESS ||
      occ < 1)
    occ = 1;
  m->occ = occ;
  return JITC_OK;
}

/* The source, options and key of kernel k for arch; stmt lines for the log. */
typedef struct Prepared {
  Buf src;
  const char *opts[8];
  int nopts;
  char archopt[64];
  char *extra;
  int vec;
  int *stmt_line;
  int elem_end;
  int ngroups; /* kernels of a split program, else 0 */
} Prepared;

static void prepared_free(Prepared *P) {
  buf_free(&P->src);
  free(P->extra);
  free(P->stmt_line);
}

static jitc_status prepare(jitc_context *ctx, CudaState *S, const jitc_kernel *k, const char *arch,
                           bool wide, Prepared *P) {
  memset(P, 0, sizeof *P);
  const Program *p = k->prog;
  P->vec = vec_width(p, env_int("JITC_CUDA_VBYTES", 16, 1, 64));
  P->stmt_line = calloc((size_t)p->nstmts + 1, sizeof(int));
  bool oom = false;
  Plan *plan = P->stmt_line ? plan_new(p, &oom) : NULL;
  if (plan) {
    P->vec = 1;
    P->ngroups = plan->ng;
  }
  bool ok = P->stmt_line && !oom &&
            (plan ? emit_split(p, k->source, plan, &P->src)
                  : emit_program(p, k->source, P->vec, wide, &P->src, P->stmt_line, &P->elem_end));
  plan_free(plan);
  if (!ok) {
    jitc_status st = P->src.oom || !P->stmt_line || oom
                         ? ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory emitting CUDA C")
                         : ctx_error(ctx, JITC_E_INTERNAL,
                                     "cuda: the program has an operation this target cannot emit");
    prepared_free(P);
    return st;
  }
  P->nopts = nvrtc_options(&k->opt, arch, P->archopt, P->opts, &P->extra);
  /* -minimal (NVRTC 12.4+) leaves out texture and device-runtime
  ** declarations the kernels never use: a third less compile time. */
  if (S->api.nvrtc_major * 100 + S->api.nvrtc_minor >= 1204)
    P->opts[P->nopts++] = "-minimal";
  return JITC_OK;
}

/* The module of kernel k (32- or 64-bit indices): from the context's
** memory cache, the disk cache, or NVRTC.  ci, when not NULL, gets the
** times and the cache outcome. */
static jitc_status get_module(jitc_context *ctx, CudaState *S, const jitc_kernel *k, bool wide,
                              Module **out, int *vec, jitc_compile_info *ci) {
  CudaApi *A = &S->api;
  jitc_status st = JITC_OK;
  Prepared P;
  char *image = NULL;
  Buf key = {0};
  Module *m = NULL;
  jitc_compile_info local;
  if (!ci)
    ci = &local;
  double t0 = now_ms();
  char arch[32];
  device_arch(S, arch, sizeof arch);
  if ((st = prepare(ctx, S, k, arch, wide, &P)) != JITC_OK)
    return st;
  *vec = P.vec;
  ci->ir_ms = now_ms() - t0;
  /* The key: everything that changes the machine code. */
  buf_printf(&key, "jitc %s cuda\nnvrtc %d.%d\narch %s\n", JITC_VERSION, A->nvrtc_major,
             A->nvrtc_minor, arch);
  for (int q = 0; q < P.nopts; q++)
    buf_printf(&key, "opt %s\n", P.opts[q]);
  buf_puts(&key, P.src.s ? P.src.s : "");
  if (key.oom) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  uint64_t h = hash_key(key.s, key.len);
  for (Module *q = S->modules; q; q = q->next)
    if (q->hash == h && q->keylen == key.len && !memcmp(q->key, key.s, key.len)) {
      ci->cache = "memory";
      *out = q;
      goto out;
    }
  m = calloc(1, sizeof *m);
  if (!m) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  m->wide = wide;
  if (P.ngroups) {
    m->ngfn = P.ngroups;
    m->gfn = calloc((size_t)P.ngroups, sizeof *m->gfn);
    if (!m->gfn) {
      st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
      goto out;
    }
  }
  char dir[1024], derr[256];
  bool use_disk = !k->opt.no_cache &&
                  cache_dir_resolve(k->opt.cache_dir, dir, sizeof dir, derr, sizeof derr) == 0;
  size_t len = 0;
  void *cached = NULL;
  double t1 = now_ms();
  if (use_disk && cache_load(dir, "cuda", key.s, key.len, &cached, &len) == 1) {
    double t2 = now_ms();
    st = load_module(ctx, S, m, cached);
    free(cached);
    if (st == JITC_OK) {
      ci->cache = "disk";
      ci->load_ms = now_ms() - t2;
    } else {
      diags_clear(&ctx->diags); /* a bad entry: compile afresh */
      st = JITC_OK;
    }
  }
  if (!m->mod) {
    st = nvrtc_compile(ctx, S, k, P.src.s, P.opts, P.nopts, false, &image, &len, NULL,
                       P.stmt_line, P.elem_end);
    if (st != JITC_OK)
      goto out;
    double t2 = now_ms();
    ci->codegen_ms = t2 - t1;
    if ((st = load_module(ctx, S, m, image)) != JITC_OK)
      goto out;
    ci->load_ms = now_ms() - t2;
    ci->cache = use_disk ? "miss" : "none";
    if (use_disk)
      cache_store(dir, "cuda", key.s, key.len, image, len); /* best effort */
  }
  m->hash = h;
  m->keylen = key.len;
  m->key = buf_steal(&key);
  m->next = S->modules;
  S->modules = m;
  *out = m;
  m = NULL;
out:
  if (m)
    free(m->gfn);
  free(m);
  free(image);
  buf_free(&key);
  prepared_free(&P);
  return st;
}

static jitc_status cuda_compile(jitc_context *ctx, jitc_kernel *k) {
  CudaState *S = state_get(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  CudaKernel *ck = calloc(1, sizeof *ck);
  if (!ck) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  } else if (!load_gpu(S)) {
    st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
  } else {
    S->api.cuCtxSetCurrent(S->pctx);
    /* The 32-bit kernel now; the 64-bit one when a launch first needs it. */
    bool oom = false;
    ck->plan = plan_new(k->prog, &oom);
    st = oom ? ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory")
             : get_module(ctx, S, k, false, &ck->m32, &ck->vec, &k->cinfo);
  }
  if (st == JITC_OK) {
    k->impl = ck;
  } else if (ck) {
    plan_free(ck->plan);
    free(ck);
  }
  pthread_mutex_unlock(&S->lock);
  return st;
}

static void cuda_release(jitc_kernel *k) {
  CudaKernel *ck = k->impl;
  CudaState *S = k->ctx ? k->ctx->target_state[JITC_TARGET_CUDA] : NULL;
  if (ck && S && (ck->scratch[0] || ck->scratch[1])) {
    S->api.cuCtxSetCurrent(S->pctx);
    for (int q = 0; q < 2; q++)
      if (ck->scratch[q])
        S->api.cuMemFree(ck->scratch[q]);
  }
  if (ck)
    plan_free(ck->plan);
  free(ck); /* the module stays in the context's cache */
  k->impl = NULL;
}

/* --emit cuda | ptx.  Needs NVRTC for ptx only, and never a GPU: the arch is
** opt->cuda_arch, else the device's, else sm_90. */
/* The stages of target_cuda.stages, in order. */
enum { STAGE_CUDA, STAGE_PTX };

static jitc_status cuda_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out) {
  CudaState *S = state_get(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  char arch[32] = "sm_90";
  bool is_sm = true;
  if (k->opt.cuda_arch && *k->opt.cuda_arch) {
    if (parse_arch(k->opt.cuda_arch, &is_sm) < 0 || strlen(k->opt.cuda_arch) >= sizeof arch)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: bad arch '%s' (expected sm_XY or compute_XY, "
                       "e.g. sm_90)", k->opt.cuda_arch);
    snprintf(arch, sizeof arch, "%s", k->opt.cuda_arch);
  }
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  Prepared P;
  bool prepared = false;
  if (stage == STAGE_PTX) {
    if (!load_nvrtc(S)) {
      st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->nvrtc_err);
      goto out;
    }
    if (!(k->opt.cuda_arch && *k->opt.cuda_arch) && load_gpu(S))
      device_arch(S, arch, sizeof arch);
    /* PTX comes from compute_XY. */
    int num = parse_arch(arch, &is_sm);
    char suffix = arch[strlen(arch) - 1];
    if (suffix == 'a' || suffix == 'f')
      snprintf(arch, sizeof arch, "compute_%d%c", num, suffix);
    else
      snprintf(arch, sizeof arch, "compute_%d", num);
  }
  if ((st = prepare(ctx, S, k, arch, false, &P)) != JITC_OK)
    goto out;
  prepared = true;
  if (stage == STAGE_CUDA) {
    buf_puts(out, P.src.s ? P.src.s : "");
    goto out;
  }
  char *ptx = NULL, *log = NULL;
  size_t len = 0;
  st = nvrtc_compile(ctx, S, k, P.src.s, P.opts, P.nopts, true, &ptx, &len, &log, P.stmt_line,
                     P.elem_end);
  if (st == JITC_OK) {
    /* NVRTC's warnings, if any, as PTX comments (a clean compile has none). */
    for (const char *s = log; s && *s;) {
      const char *nl = strchr(s, '\n');
      int n = nl ? (int)(nl - s) : (int)strlen(s);
      if (n > 0)
        buf_printf(out, "// nvrtc: %.*s\n", n, s);
      s = nl ? nl + 1 : NULL;
    }
    buf_puts(out, ptx);
  }
  free(ptx);
  free(log);
out:
  if (prepared)
    prepared_free(&P);
  pthread_mutex_unlock(&S->lock);
  return st;
}

/* ===================================================================== */
/* Running                                                                */
/* ===================================================================== */

static jitc_status cu_fail(jitc_context *ctx, CudaState *S, CUresult r, const char *what) {
  return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                   "cuda: %s failed (%s)", what, cu_name(S, r));
}

/* launch() for a split program: for each range of ck->range elements,
** every group's kernel in order on stream s, with the range's scratch (one
** per stream slot, as the two slots' chunks may be in flight at once). */
static jitc_status launch_split(jitc_context *ctx, CudaState *S, const jitc_kernel *k, int64_t n,
                                int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                                CUstream s) {
  CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  const Plan *P = ck->plan;
  int q = s == S->slot[1].stream ? 1 : 0;
  if (!ck->range) {
    /* Scratch of at most 64 MB per slot; ranges of whole blocks. */
    int64_t r = P->per_elem ? (int64_t)(((size_t)64 << 20) / P->per_elem) : (int64_t)1 << 30;
    r = r > ((int64_t)1 << 30) ? (int64_t)1 << 30 : r;
    ck->range = r < CUDA_BLOCK ? CUDA_BLOCK : r / CUDA_BLOCK * CUDA_BLOCK;
  }
  if (P->per_elem && !ck->scratch[q]) {
    CUresult r = S->api.cuMemAlloc(&ck->scratch[q], P->per_elem * (size_t)ck->range);
    if (r != CUDA_SUCCESS) {
      ck->scratch[q] = 0;
      return cu_fail(ctx, S, r, "allocating scratch for the kernel's temporaries");
    }
  }
  size_t most = 2 + (size_t)p->narrays + (size_t)p->nparams + (size_t)p->ntemps;
  void **args = malloc(most * sizeof *args);
  CUdeviceptr *ptrs = malloc(((size_t)p->narrays + (size_t)p->ntemps + 1) * sizeof *ptrs);
  jitc_status st = JITC_OK;
  if (!args || !ptrs)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  for (int64_t off = 0; st == JITC_OK && off < n; off += ck->range) {
    int64_t m = n - off < ck->range ? n - off : ck->range;
    uint32_t m32 = (uint32_t)m;
    int64_t b64 = base + off;
    unsigned blocks = (unsigned)((m + CUDA_BLOCK - 1) / CUDA_BLOCK);
    for (int g = 0; g < P->ng && st == JITC_OK; g++) {
      int a = 0, np = 0;
      args[a++] = &m32;
      args[a++] = &b64;
      for (int j = 0; j < P->narr[g]; j++) {
        int slot = P->arr[g][j];
        ptrs[np] = dptr[slot] + (CUdeviceptr)off * jitc_dtype_size(p->arrays[slot].dtype);
        args[a++] = &ptrs[np++];
      }
      for (int j = 0; j < p->nparams; j++)
        args[a++] = (void *)&params[j]; /* the value sits at offset 0 of its slot */
      for (int j = 0; j < P->ntmp[g]; j++) {
        ptrs[np] = ck->scratch[q] + (CUdeviceptr)(P->temp_off[P->tmp[g][j]] * (size_t)ck->range);
        args[a++] = &ptrs[np++];
      }
      CUresult r = S->api.cuLaunchKernel(ck->m32->gfn[g], blocks, 1, 1, CUDA_BLOCK, 1, 1, 0, s,
                                         args, NULL);
      if (r != CUDA_SUCCESS)
        st = cu_fail(ctx, S, r, "launching the kernel");
    }
  }
  free(args);
  free(ptrs);
  return st;
}

/* Launches k over elements [base, base + n) held at device pointers dptr,
** on stream s: one thread per vector step (or per element when a pointer
** is not aligned for vectors), which measured faster than a grid of a few
** waves striding over the arrays.  JITC_CUDA_WAVES caps the grid for
** experiments. */
static jitc_status launch(jitc_context *ctx, CudaState *S, const jitc_kernel *k, int64_t n,
                          int64_t base, const CUdeviceptr *dptr, const ParamSlot *params,
                          CUstream s) {
  CudaKernel *ck = k->impl;
  const Program *p = k->prog;
  if (n <= 0)
    return JITC_OK;
  if (ck->plan)
    return launch_split(ctx, S, k, n, base, dptr, params, s);
  int vec = ck->vec;
  bool aligned = env_int("JITC_CUDA_VEC", 1, 0, 1) != 0;
  for (int a = 0; a < p->narrays && aligned; a++)
    if (dptr[a] % ((CUdeviceptr)vec * jitc_dtype_size(p->arrays[a].dtype)) != 0)
      aligned = false;
  int64_t work = aligned ? n / vec : n;
  if (aligned && work < n % vec)
    work = n % vec;
  int64_t blocks = (work + CUDA_BLOCK - 1) / CUDA_BLOCK;
  int waves = env_int("JITC_CUDA_WAVES", 0, 0, 1 << 20);
  int64_t cap = waves ? (int64_t)S->nsm * ck->m32->occ * waves : (int64_t)1 << 30;
  if (blocks > cap)
    blocks = cap;
  if (blocks < 1)
    blocks = 1;
  /* 32-bit indices while n plus one grid stride of vectors fits (no wrap). */
  bool narrow = (uint64_t)n + (uint64_t)blocks * CUDA_BLOCK * (uint64_t)vec < ((uint64_t)1 << 32) &&
                !env_int("JITC_CUDA_INDEX64", 0, 0, 1);
  if (!narrow && !ck->m64) {
    int vec64;
    jitc_status st = get_module(ctx, S, k, true, &ck->m64, &vec64, NULL);
    if (st != JITC_OK)
      return st;
  }
  uint32_t n32 = (uint32_t)n;
  uint64_t n64 = (uint64_t)n;
  int64_t base64 = base;
  int vflag = aligned;
  void *stack_args[64];
  int nargs = 3 + p->narrays + p->nparams;
  void **args = nargs <= 64 ? stack_args : malloc((size_t)nargs * sizeof *args);
  if (!args)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  int q = 0;
  args[q++] = narrow ? (void *)&n32 : (void *)&n64;
  args[q++] = &base64;
  args[q++] = &vflag;
  for (int a = 0; a < p->narrays; a++)
    args[q++] = (void *)&dptr[a];
  for (int a = 0; a < p->nparams; a++)
    args[q++] = (void *)&params[a]; /* the value sits at offset 0 of its slot */
  CUresult r = S->api.cuLaunchKernel(narrow ? ck->m32->fn : ck->m64->fn, (unsigned)blocks, 1, 1,
                                     CUDA_BLOCK, 1, 1, 0, s, args, NULL);
  if (args != stack_args)
    free(args);
  return r == CUDA_SUCCESS ? JITC_OK : cu_fail(ctx, S, r, "launching the kernel");
}

static jitc_status ensure_slots(jitc_context *ctx, CudaState *S) {
  if (S->slots_ok)
    return JITC_OK;
  for (int s = 0; s < 2; s++) {
    CUresult r = S->api.cuStreamCreate(&S->slot[s].stream, CU_STREAM_NON_BLOCKING);
    for (int e = 0; e < 4 && r == CUDA_SUCCESS; e++)
      r = S->api.cuEventCreate(&S->slot[s].ev[e], CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS)
      return cu_fail(ctx, S, r, "creating streams");
  }
  S->slots_ok = true;
  return JITC_OK;
}

/* Grows the staging areas to `bytes` per half (host pinned and device). */
static jitc_status ensure_stage(jitc_context *ctx, CudaState *S, size_t hbytes, size_t dbytes) {
  CudaApi *A = &S->api;
  if (dbytes > S->dstage_bytes) {
    if (S->dstage)
      A->cuMemFree(S->dstage);
    S->dstage = 0;
    S->dstage_bytes = 0;
    CUresult r = A->cuMemAlloc(&S->dstage, 2 * dbytes);
    if (r != CUDA_SUCCESS) {
      S->dstage = 0;
      return ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                       "cuda: cannot allocate %.1f MB of device memory (%s)",
                       2.0 * (double)dbytes / 1e6, cu_name(S, r));
    }
    S->dstage_bytes = dbytes;
  }
  if (hbytes > S->hstage_bytes) {
    if (S->hstage)
      A->cuMemFreeHost(S->hstage);
    S->hstage = NULL;
    S->hstage_bytes = 0;
    CUresult r = A->cuMemHostAlloc(&S->hstage, 2 * hbytes, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
      S->hstage = NULL;
      return ctx_error(ctx, JITC_E_NOMEM, "cuda: cannot allocate %.1f MB of pinned host memory (%s)",
                       2.0 * (double)hbytes / 1e6, cu_name(S, r));
    }
    S->hstage_bytes = hbytes;
  }
  return JITC_OK;
}

/* Copies between user memory and pinned staging, on the pool's threads when large. */
typedef struct CopyJob {
  char *dst;
  const char *src;
} CopyJob;

static void copy_part(void *arg, int64_t begin, int64_t end) {
  CopyJob *j = arg;
  memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

static void par_copy(CudaState *S, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return;
  if (bytes >= ((size_t)1 << 20) && !S->pool_tried) {
    S->pool_tried = true;
    int threads = env_int("JITC_CUDA_COPY_THREADS", 4, 1, 256);
    if (threads > 1)
      S->pool = pool_new(threads);
  }
  if (S->pool && bytes >= ((size_t)1 << 20)) {
    CopyJob j = {dst, src};
    pool_run(S->pool, pool_threads(S->pool), (int64_t)bytes, 4096, copy_part, &j);
  } else {
    memcpy(dst, src, bytes);
  }
}

/* Whether host pointer p was allocated or registered as pinned memory. */
static bool is_pinned(CudaState *S, void *p) {
  unsigned flags;
  return p && S->api.cuMemHostGetFlags(&flags, p) == CUDA_SUCCESS;
}

static float elapsed(CudaState *S, CUevent a, CUevent b) {
  float ms = 0;
  if (S->api.cuEventElapsedTime(&ms, a, b) != CUDA_SUCCESS)
    return 0;
  return ms;
}

/* Run state of the host pipeline. */
typedef struct HostRun {
  const jitc_kernel *k;
  void *const *arrays;
  const ParamSlot *params;
  size_t *esize;
  size_t *hoff, *doff; /* per array: offset of its region in a half */
  bool *pinned;         /* per array: DMA straight from/to user memory */
  int64_t chunk;
  double h2d, kern, d2h;
} HostRun;

/* Finishes the chunk held by slot s: waits, copies outputs out of staging. */
static jitc_status slot_finish(jitc_context *ctx, CudaState *S, HostRun *H, int s) {
  Slot *sl = &S->slot[s];
  if (!sl->busy)
    return JITC_OK;
  sl->busy = false;
  CUresult r = S->api.cuEventSynchronize(sl->ev[3]);
  if (r != CUDA_SUCCESS)
    return cu_fail(ctx, S, r, "the kernel or a copy");
  H->h2d += elapsed(S, sl->ev[0], sl->ev[1]);
  H->kern += elapsed(S, sl->ev[1], sl->ev[2]);
  H->d2h += elapsed(S, sl->ev[2], sl->ev[3]);
  const Program *p = H->k->prog;
  char *half = (char *)S->hstage + (size_t)s * S->hstage_bytes;
  for (int a = 0; a < p->narrays; a++) {
    if (p->arrays[a].role == JITC_INPUT || H->pinned[a])
      continue;
    par_copy(S, (char *)H->arrays[a] + (size_t)sl->off * H->esize[a], half + H->hoff[a],
             (size_t)sl->m * H->esize[a]);
  }
  return JITC_OK;
}

static jitc_status slot_start(jitc_context *ctx, CudaState *S, HostRun *H, int s, int64_t off,
                              int64_t m) {
  Slot *sl = &S->slot[s];
  CudaApi *A = &S->api;
  const Program *p = H->k->prog;
  char *half = (char *)S->hstage + (size_t)s * S->hstage_bytes;
  CUdeviceptr dhalf = S->dstage + (CUdeviceptr)s * S->dstage_bytes;
  CUdeviceptr dptr[p->narrays > 0 ? p->narrays : 1];
  CUresult r = A->cuEventRecord(sl->ev[0], sl->stream);
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    dptr[a] = dhalf + H->doff[a];
    if (p->arrays[a].role == JITC_OUTPUT)
      continue;
    size_t bytes = (size_t)m * H->esize[a];
    const char *user = (const char *)H->arrays[a] + (size_t)off * H->esize[a];
    if (H->pinned[a]) {
      r = A->cuMemcpyHtoDAsync(dptr[a], user, bytes, sl->stream);
    } else {
      par_copy(S, half + H->hoff[a], user, bytes);
      r = A->cuMemcpyHtoDAsync(dptr[a], half + H->hoff[a], bytes, sl->stream);
    }
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[1], sl->stream);
  if (r == CUDA_SUCCESS) {
    jitc_status st = launch(ctx, S, H->k, m, off, dptr, H->params, sl->stream);
    if (st != JITC_OK) {
      A->cuStreamSynchronize(sl->stream);
      return st;
    }
    r = A->cuEventRecord(sl->ev[2], sl->stream);
  }
  for (int a = 0; a < p->narrays && r == CUDA_SUCCESS; a++) {
    if (p->arrays[a].role == JITC_INPUT)
      continue;
    size_t bytes = (size_t)m * H->esize[a];
    void *dst = H->pinned[a] ? (char *)H->arrays[a] + (size_t)off * H->esize[a]
                             : (void *)(half + H->hoff[a]);
    r = A->cuMemcpyDtoHAsync(dst, dptr[a], bytes, sl->stream);
  }
  if (r == CUDA_SUCCESS)
    r = A->cuEventRecord(sl->ev[3], sl->stream);
  if (r != CUDA_SUCCESS) {
    A->cuStreamSynchronize(sl->stream);
    return cu_fail(ctx, S, r, "queueing a chunk");
  }
  sl->busy = true;
  sl->off = off;
  sl->m = m;
  return JITC_OK;
}

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static jitc_status cuda_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                            void *const *arrays, const ParamSlot *params, jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  if (n <= 0)
    return JITC_OK;
  pthread_mutex_lock(&S->lock);
  CudaApi *A = &S->api;
  A->cuCtxSetCurrent(S->pctx);
  jitc_status st = ensure_slots(ctx, S);
  int na = p->narrays;
  HostRun H = {.k = k, .arrays = arrays, .params = params};
  size_t *mem = calloc((size_t)na * 3 + 1, sizeof(size_t));
  bool *pinned = calloc((size_t)na + 1, sizeof(bool));
  if (!mem || !pinned) {
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
    goto out;
  }
  if (st != JITC_OK)
    goto out;
  H.esize = mem;
  H.hoff = mem + na;
  H.doff = mem + 2 * na;
  H.pinned = pinned;
  /* Chunk: about JITC_CUDA_CHUNK_MB (default 8) MB of the widest array,
  ** a multiple of 4096 elements so every region stays aligned. */
  size_t maxsz = 1, perelem = 0;
  for (int a = 0; a < na; a++) {
    H.esize[a] = jitc_dtype_size(p->arrays[a].dtype);
    if (H.esize[a] > maxsz)
      maxsz = H.esize[a];
    perelem += H.esize[a];
    pinned[a] = is_pinned(S, arrays[a]);
  }
  int64_t chunk = (int64_t)env_int("JITC_CUDA_CHUNK_MB", 8, 1, 4096) * (1 << 20) / (int64_t)maxsz;
  chunk = chunk / 4096 * 4096;
  if (chunk < 4096)
    chunk = 4096;
  if (n < chunk)
    chunk = (int64_t)round_up((size_t)n, 256);
  H.chunk = chunk;
  size_t hoff = 0, doff = 0;
  for (int a = 0; a < na; a++) {
    H.doff[a] = doff;
    doff += round_up((size_t)chunk * H.esize[a], 256);
    H.hoff[a] = hoff;
    if (!pinned[a])
      hoff += round_up((size_t)chunk * H.esize[a], 256);
  }
  (void)perelem;
  if ((st = ensure_stage(ctx, S, hoff ? hoff : 256, doff)) != JITC_OK)
    goto out;
  int s = 0;
  for (int64_t off = 0; off < n; off += chunk, s ^= 1) {
    int64_t m = n - off < chunk ? n - off : chunk;
    if ((st = slot_finish(ctx, S, &H, s)) != JITC_OK)
      break;
    if ((st = slot_start(ctx, S, &H, s, off, m)) != JITC_OK)
      break;
  }
  /* Drain both slots, the older first; after an error, just wait. */
  for (int q = 0; q < 2; q++, s ^= 1) {
    if (st == JITC_OK) {
      st = slot_finish(ctx, S, &H, s);
    } else if (S->slot[s].busy) {
      A->cuStreamSynchronize(S->slot[s].stream);
      S->slot[s].busy = false;
    }
  }
  if (info) {
    info->h2d_ms = H.h2d;
    info->kernel_ms = H.kern;
    info->d2h_ms = H.d2h;
  }
out:
  free(mem);
  free(pinned);
  pthread_mutex_unlock(&S->lock);
  return st;
}

/* ===================================================================== */
/* Device-resident buffers                                                */
/* ===================================================================== */

static jitc_status cuda_buffer_new(jitc_context *ctx, jitc_buffer *b) {
  CudaState *S = state_get(ctx);
  if (!S)
    return ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  pthread_mutex_lock(&S->lock);
  jitc_status st = JITC_OK;
  if (!load_gpu(S)) {
    st = ctx_error(ctx, JITC_E_UNAVAILABLE, "cuda: %s", S->gpu_err);
    goto out;
  }
  S->api.cuCtxSetCurrent(S->pctx);
  size_t bytes = (size_t)b->n * jitc_dtype_size(b->dtype);
  CUdeviceptr d = 0;
  if (bytes > 0) {
    CUresult r = S->api.cuMemAlloc(&d, bytes);
    if (r != CUDA_SUCCESS) {
      size_t fr = 0, tot = 0;
      S->api.cuMemGetInfo(&fr, &tot);
      st = ctx_error(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? JITC_E_NOMEM : JITC_E_INTERNAL,
                     "cuda: cannot allocate %.1f MB of device memory for %lld %s elements "
                     "(%.1f MB free of %.1f MB; %s)",
                     (double)bytes / 1e6, (long long)b->n, jitc_dtype_name(b->dtype),
                     (double)fr / 1e6, (double)tot / 1e6, cu_name(S, r));
      goto out;
    }
  }
  b->impl = (void *)(uintptr_t)d;
out:
  pthread_mutex_unlock(&S->lock);
  return st;
}

static jitc_status cuda_buffer_copy(jitc_context *ctx, jitc_buffer *b, void *host, int64_t off,
                                    int64_t n, bool upload) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  if (!S || !S->gpu_ok)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: buffer of another context");
  if (off < 0 || n < 0 || off > b->n || n > b->n - off)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: elements [%lld, %lld) are outside the buffer of %lld",
                     (long long)off, (long long)(off + n), (long long)b->n);
  if (n == 0)
    return JITC_OK;
  pthread_mutex_lock(&S->lock);
  S->api.cuCtxSetCurrent(S->pctx);
  size_t es = jitc_dtype_size(b->dtype);
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl + (CUdeviceptr)((size_t)off * es);
  CUresult r = upload ? S->api.cuMemcpyHtoD(d, host, (size_t)n * es)
                      : S->api.cuMemcpyDtoH(host, d, (size_t)n * es);
  pthread_mutex_unlock(&S->lock);
  return r == CUDA_SUCCESS ? JITC_OK : cu_fail(ctx, S, r, upload ? "upload" : "download");
}

static void cuda_buffer_free(jitc_buffer *b) {
  CudaState *S = b->ctx ? b->ctx->target_state[JITC_TARGET_CUDA] : NULL;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->impl;
  if (S && S->gpu_ok && d) {
    pthread_mutex_lock(&S->lock);
    S->api.cuCtxSetCurrent(S->pctx);
    S->api.cuMemFree(d);
    pthread_mutex_unlock(&S->lock);
  }
  b->impl = NULL;
}

static jitc_status cuda_run_buffers(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                                    jitc_buffer *const *bufs, const ParamSlot *params,
                                    jitc_run_info *info) {
  CudaState *S = ctx->target_state[JITC_TARGET_CUDA];
  const Program *p = k->prog;
  if (!S || !S->gpu_ok || !k->impl)
    return ctx_error(ctx, JITC_E_USAGE, "cuda: kernel not compiled for this context");
  for (int a = 0; a < p->narrays; a++) {
    const jitc_buffer *b = bufs[a];
    if (!b || b->target != JITC_TARGET_CUDA || b->ctx != ctx)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: array '%s' is not a cuda buffer of this context",
                       p->arrays[a].name);
    if (b->dtype != p->arrays[a].dtype)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: array '%s' is %s but its buffer holds %s",
                       p->arrays[a].name, jitc_dtype_name(p->arrays[a].dtype),
                       jitc_dtype_name(b->dtype));
    if (b->n < n)
      return ctx_error(ctx, JITC_E_USAGE, "cuda: buffer for '%s' has %lld elements, fewer than %lld",
                       p->arrays[a].name, (long long)b->n, (long long)n);
  }
  if (n <= 0)
    return JITC_OK;
  pthread_mutex_lock(&S->lock);
  S->api.cuCtxSetCurrent(S->pctx);
  jitc_status st = ensure_slots(ctx, S);
  CUdeviceptr stack_d[64];
  CUdeviceptr *d = p->narrays <= 64 ? stack_d : malloc((size_t)p->narrays * sizeof *d);
  if (st == JITC_OK && !d)
    st = ctx_error(ctx, JITC_E_NOMEM, "cuda: out of memory");
  if (st == JITC_OK) {
    for (int a = 0; a < p->narrays; a++)
      d[a] = (CUdeviceptr)(uintptr_t)bufs[a]->impl;
    Slot *sl = &S->slot[0];
    CUresult r = S->api.cuEventRecord(sl->ev[1], sl->stream);
    if (r == CUDA_SUCCESS)
      st = launch(ctx, S, k, n, 0, d, params, sl->stream);
    if (r == CUDA_SUCCESS && st == JITC_OK)
      r = S->api.cuEventRecord(sl->ev[2], sl->stream);
    if (r == CUDA_SUCCESS && st == JITC_OK)
      r = S->api.cuEventSynchronize(sl->ev[2]);
    if (st != JITC_OK) {
      S->api.cuStreamSynchronize(sl->stream);
    } else if (r != CUDA_SUCCESS) {
      S->api.cuStreamSynchronize(sl->stream);
      st = cu_fail(ctx, S, r, "the kernel");
    } else if (info) {
      info->kernel_ms = elapsed(S, sl->ev[1], sl->ev[2]);
      info->h2d_ms = info->d2h_ms = 0;
    }
  }
  if (d != stack_d)
    free(d);
  pthread_mutex_unlock(&S->lock);
  return st;
}

const Target target_cuda = {
    .name = "cuda",
    .available = cuda_available,
    .device = cuda_device,
    .compile = cuda_compile,
    .run = cuda_run,
    .stages = (const char *const[]){"cuda", "ptx", NULL},
    .emit = cuda_emit,
    .release = cuda_release,
    .shutdown = cuda_shutdown,
    .buffer_new = cuda_buffer_new,
    .buffer_copy = cuda_buffer_copy,
    .buffer_free = cuda_buffer_free,
    .run_buffers = cuda_run_buffers,
};
