/*
** cuda/complex.c -- complex64 and complex128 in the generated CUDA C: the
** device types, casts, the expression of every operation on complex
** values, the device functions of the arithmetic, comparisons and picks,
** of power and of NumPy's own functions (expm1, log1p, sign; the C
** library's are cuda/cmath.c's), and the functions of complex reductions.
**
** A complex value is a struct of its two parts, jitc_c64 { f32 re, im; }
** aligned to 8 bytes and jitc_c128 { f64 re, im; } aligned to 16, NumPy's
** layout, so that a thread loads an element (or a vector of them) in one
** instruction.  The structs are written into the kernel source only when
** the program has a complex value.  NVRTC has no complex type without
** headers, and <cuda/std/complex> made NVRTC take 1.4 s over one kernel of
** exp(z) where this text takes 0.15 s: the few operations jitc needs are
** small functions here instead.
** Each is the device twin of sem_complex.h's (interp's; NumPy's loops): *
** with fma, / by Smith's method, the order of the real parts, then the
** imaginary ones, so that the results are interp's bits.  Text is written
** once as a template over the type (cuda_complex_tpl) and emitted per type
** used.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <stdio.h>

void cuda_complex_tpl(Buf *b, const char *tpl, jitc_dtype t) {
  bool d = t == JITC_COMPLEX128;
  for (const char *c = tpl; *c; c++) {
    if (*c != '$') {
      buf_putc(b, *c);
      continue;
    }
    switch (*++c) {
    case 'C': buf_puts(b, cuda_ctype(t)); break;
    case 'R': buf_puts(b, cuda_ctype(dtype_part(t))); break;
    case 'F': case 'L': buf_puts(b, d ? "" : "f"); break;
    case 'E': buf_puts(b, d ? "0x1p-52" : "0x1p-23f"); break;
    case 'N': buf_puts(b, d ? "0x1p-1022" : "0x1p-126f"); break;
    case 'X': buf_puts(b, d ? "0x1.fffffffffffffp1023" : "0x1.fffffep127f"); break;
    case 'T': buf_puts(b, d ? "709" : "88"); break;
    case 'H': buf_puts(b, d ? "354" : "44"); break;
    case 'D': buf_puts(b, d ? "53" : "24"); break;
    case 'I': buf_puts(b, d ? "__longlong_as_double(0x7ff0000000000000ll)" : "__int_as_float(0x7f800000)"); break;
    case 'Q': buf_puts(b, d ? "__longlong_as_double(0x7ff8000000000000ll)" : "__int_as_float(0x7fc00000)"); break;
    default: buf_putc(b, '$'); c--; break;
    }
  }
}

void cuda_complex_typedefs(Buf *b, unsigned dtypes) {
  /* Both when either is used: a complex64 sum accumulates in complex128. */
  if (!(dtypes & (1u << JITC_COMPLEX64 | 1u << JITC_COMPLEX128)))
    return;
  buf_puts(b, "struct alignas(8) jitc_c64 { f32 re, im; }; // complex64: NumPy's layout\n"
              "struct alignas(16) jitc_c128 { f64 re, im; }; // complex128\n"
              "typedef jitc_c64 c64;\ntypedef jitc_c128 c128;\n\n");
}

/* ---- the arithmetic (H_CARITH) ---- */

static const char carith_text[] =
    "// $C: made of parts; + - and negation by parts, * with fma and / by Smith's\n"
    "// method, as NumPy's loops; the order of the real parts, then the imaginary\n"
    "// ones; sin and cos of a part (the part itself and 1 below the least\n"
    "// normal, as the C library's complex functions take them).\n"
    DEV "$C jitc_cmk_$C(const $R re, const $R im) { $C z; z.re = re; z.im = im; return z; }\n"
    DEV "$C jitc_cadd_$C(const $C a, const $C b) { return jitc_cmk_$C(a.re + b.re, a.im + b.im); }\n"
    DEV "$C jitc_csub_$C(const $C a, const $C b) { return jitc_cmk_$C(a.re - b.re, a.im - b.im); }\n"
    DEV "$C jitc_cneg_$C(const $C a) { return jitc_cmk_$C(jitc_neg_$R(a.re), jitc_neg_$R(a.im)); }\n"
    DEV "$C jitc_cconj_$C(const $C a) { return jitc_cmk_$C(a.re, jitc_neg_$R(a.im)); }\n"
    DEV "$C jitc_cscale_$C(const $C a, const $R s) { return jitc_cmk_$C(a.re * s, a.im * s); }\n"
    DEV "$C jitc_cmul_$C(const $C a, const $C b) {\n"
    "  return jitc_cmk_$C(fma$F(a.re, b.re, -(a.im * b.im)), fma$F(a.re, b.im, a.im * b.re));\n}\n"
    DEV "$C jitc_cdiv_$C(const $C a, const $C b) {\n"
    "  const $R abr = fabs$F(b.re), abi = fabs$F(b.im);\n"
    "  if (abr >= abi) {\n"
    "    if (abr == 0 && abi == 0) return jitc_cmk_$C(a.re / abr, a.im / abr);\n"
    "    const $R rat = b.im / b.re, scl = 1.0$L / (b.re + b.im * rat);\n"
    "    return jitc_cmk_$C((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);\n"
    "  }\n"
    "  const $R rat = b.re / b.im, scl = 1.0$L / (b.im + b.re * rat);\n"
    "  return jitc_cmk_$C((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);\n}\n"
    "// NumPy's reciprocal loop (1 / 0 is nan+nanj), and its vectorised absolute\n"
    "// value: the larger part times sqrt(r^2 + 1), r the smaller over it.\n"
    DEV "$C jitc_crecip_$C(const $C a) {\n"
    "  if (fabs$F(a.im) <= fabs$F(a.re)) {\n"
    "    const $R r = a.im / a.re, d = a.re + a.im * r;\n"
    "    return jitc_cmk_$C(1 / d, -r / d);\n"
    "  }\n"
    "  const $R r = a.re / a.im, d = a.re * r + a.im;\n"
    "  return jitc_cmk_$C(r / d, -1 / d);\n}\n"
    DEV "b8 jitc_cisnan_$C(const $C a) { return jitc_isnan_$R(a.re) || jitc_isnan_$R(a.im); }\n"
    DEV "$R jitc_cabs_$C(const $C a) {\n"
    "  const $R x = fabs$F(a.re), y = fabs$F(a.im);\n"
    "  if (jitc_isinf_$R(x) || jitc_isinf_$R(y)) return $I;\n"
    "  if (jitc_isnan_$R(x) || jitc_isnan_$R(y)) return $Q;\n"
    "  const $R big = x > y ? x : y, small = x > y ? y : x;\n"
    "  const $R r = big == 0 ? 0 : small / big;\n"
    "  return sqrt$F(fma$F(r, r, 1)) * big;\n}\n"
    "// NumPy's order: the real parts decide unless equal; a NaN part makes every\n"
    "// comparison false but !=.  clip's order is plainly lexicographic.\n"
    DEV "b8 jitc_cnan2_$C(const $C a, const $C b) { return jitc_cisnan_$C(a) || jitc_cisnan_$C(b); }\n"
    DEV "b8 jitc_clt_$C(const $C a, const $C b) { return (a.re < b.re && !jitc_cnan2_$C(a, b)) || (a.re == b.re && a.im < b.im); }\n"
    DEV "b8 jitc_cle_$C(const $C a, const $C b) { return (a.re < b.re && !jitc_cnan2_$C(a, b)) || (a.re == b.re && a.im <= b.im); }\n"
    DEV "b8 jitc_cgt_$C(const $C a, const $C b) { return (a.re > b.re && !jitc_cnan2_$C(a, b)) || (a.re == b.re && a.im > b.im); }\n"
    DEV "b8 jitc_cge_$C(const $C a, const $C b) { return (a.re > b.re && !jitc_cnan2_$C(a, b)) || (a.re == b.re && a.im >= b.im); }\n"
    DEV "b8 jitc_cclt_$C(const $C a, const $C b) { return a.re == b.re ? a.im < b.im : a.re < b.re; }\n"
    DEV "b8 jitc_cisinf_$C(const $C a) { return jitc_isinf_$R(a.re) || jitc_isinf_$R(a.im); }\n"
    DEV "b8 jitc_cisfinite_$C(const $C a) { return jitc_isfinite_$R(a.re) && jitc_isfinite_$R(a.im); }\n"
    "// maximum keeps a when it has a NaN part, fmax when b has one.\n"
    DEV "$C jitc_cmaximum_$C(const $C a, const $C b) { return jitc_cisnan_$C(a) || jitc_cge_$C(a, b) ? a : b; }\n"
    DEV "$C jitc_cminimum_$C(const $C a, const $C b) { return jitc_cisnan_$C(a) || jitc_cle_$C(a, b) ? a : b; }\n"
    DEV "$C jitc_cfmax_$C(const $C a, const $C b) { return jitc_cisnan_$C(b) || jitc_cge_$C(a, b) ? a : b; }\n"
    DEV "$C jitc_cfmin_$C(const $C a, const $C b) { return jitc_cisnan_$C(b) || jitc_cle_$C(a, b) ? a : b; }\n"
    "// clip: max(x, lo), then min(., hi), each keeping its first operand when\n"
    "// that has a NaN part or is beyond the second.\n"
    DEV "$C jitc_cclip_$C(const $C x, const $C lo, const $C hi) {\n"
    "  const $C m = jitc_cclt_$C(lo, x) || jitc_cisnan_$C(x) ? x : lo;\n"
    "  return jitc_cclt_$C(m, hi) || jitc_cisnan_$C(m) ? m : hi;\n}\n"
    DEV "void jitc_csc_$C(const $R y, $R *s, $R *c) {\n"
    "  if (fabs$F(y) > $N) sincos$F(y, s, c);\n  else { *s = y; *c = 1; }\n}\n";

/* NumPy's functions of its own (funcs.inc.src), in the part's type: expm1
** and log1p by formulas of the parts, sign(z) = z / |z|. */
static const char cfn_text[] =
    "// expm1, log1p and sign as NumPy defines them on complex values.\n"
    DEV "$C jitc_cexpm1_$C(const $C z) {\n"
    "  const $R a = sin$F(z.im / 2);\n"
    "  return jitc_cmk_$C(expm1$F(z.re) * cos$F(z.im) - 2 * a * a, exp$F(z.re) * sin$F(z.im));\n}\n"
    DEV "$C jitc_clog1p_$C(const $C z) {\n"
    "  return jitc_cmk_$C(log$F(jitc_hypot_$R(z.re + 1, z.im)), atan2$F(z.im, z.re + 1));\n}\n"
    DEV "$C jitc_csign_$C(const $C z) {\n"
    "  const $R h = jitc_hypot_$R(z.re, z.im);\n"
    "  if (jitc_isnan_$R(h)) return jitc_cmk_$C($Q, $Q);\n"
    "  if (jitc_isinf_$R(h)) {\n"
    "    if (!jitc_isinf_$R(z.re)) return jitc_cmk_$C(0, z.im > 0 ? 1 : -1);\n"
    "    if (jitc_isinf_$R(z.im)) return jitc_cmk_$C($Q, $Q);\n"
    "    return jitc_cmk_$C(z.re > 0 ? 1 : -1, 0);\n"
    "  }\n"
    "  if (h == 0) return jitc_cmk_$C(0, 0);\n"
    "  return jitc_cmk_$C(z.re / h, z.im / h);\n}\n";

/* a ** b: NumPy's npy_cpow. */
static const char cpow_text[] =
    "// a ** b as NumPy's npy_cpow: 1 for b = 0, 0 or NaN for a = 0, repeated\n"
    "// products (without fma, as npymath's) for integer b within 100, else\n"
    "// exp(b log a) as the C library's cpow (its product C's).\n"
    DEV "$C jitc_cmulp_$C(const $C a, const $C b) {\n"
    "  return jitc_cmk_$C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);\n}\n"
    "// C's product of complex values (C99 Annex G, as libgcc's __muldc3): two NaN\n"
    "// parts from an infinite operand are recovered as infinities.\n"
    DEV "$R jitc_cbox_$R(const $R v, const bool inf) { return copysign$F(inf ? 1.0$L : 0.0$L, v); }\n"
    DEV "$C jitc_cmulc_$C(const $C p, const $C q) {\n"
    "  $R a = p.re, b = p.im, c = q.re, d = q.im;\n"
    "  const $R ac = a * c, bd = b * d, ad = a * d, bc = b * c;\n"
    "  $R x = ac - bd, y = ad + bc;\n"
    "  if (!jitc_isnan_$R(x) || !jitc_isnan_$R(y)) return jitc_cmk_$C(x, y);\n"
    "  bool again = false;\n"
    "  if (jitc_isinf_$R(a) || jitc_isinf_$R(b)) {\n"
    "    a = jitc_cbox_$R(a, jitc_isinf_$R(a)); b = jitc_cbox_$R(b, jitc_isinf_$R(b));\n"
    "    if (jitc_isnan_$R(c)) c = copysign$F(0.0$L, c);\n"
    "    if (jitc_isnan_$R(d)) d = copysign$F(0.0$L, d);\n"
    "    again = true;\n"
    "  }\n"
    "  if (jitc_isinf_$R(c) || jitc_isinf_$R(d)) {\n"
    "    c = jitc_cbox_$R(c, jitc_isinf_$R(c)); d = jitc_cbox_$R(d, jitc_isinf_$R(d));\n"
    "    if (jitc_isnan_$R(a)) a = copysign$F(0.0$L, a);\n"
    "    if (jitc_isnan_$R(b)) b = copysign$F(0.0$L, b);\n"
    "    again = true;\n"
    "  }\n"
    "  if (!again && (jitc_isinf_$R(ac) || jitc_isinf_$R(bd) || jitc_isinf_$R(ad) || jitc_isinf_$R(bc))) {\n"
    "    if (jitc_isnan_$R(a)) a = copysign$F(0.0$L, a);\n"
    "    if (jitc_isnan_$R(b)) b = copysign$F(0.0$L, b);\n"
    "    if (jitc_isnan_$R(c)) c = copysign$F(0.0$L, c);\n"
    "    if (jitc_isnan_$R(d)) d = copysign$F(0.0$L, d);\n"
    "    again = true;\n"
    "  }\n"
    "  if (again) {\n"
    "    x = $I * (a * c - b * d);\n"
    "    y = $I * (a * d + b * c);\n"
    "  }\n"
    "  return jitc_cmk_$C(x, y);\n}\n"
    DEV "$C jitc_cpow_$C(const $C a, const $C b) {\n"
    "  if (b.re == 0 && b.im == 0) return jitc_cmk_$C(1, 0);\n"
    "  if (a.re == 0 && a.im == 0) return b.re > 0 ? jitc_cmk_$C(0, 0) : jitc_cmk_$C($Q, $Q);\n"
    "  if (b.im == 0 && b.re > -100 && b.re < 100 && (i64)b.re == b.re) {\n"
    "    const i64 n = (i64)b.re;\n"
    "    if (n == 1) return a;\n"
    "    if (n == 2) return jitc_cmulp_$C(a, a);\n"
    "    if (n == 3) return jitc_cmulp_$C(a, jitc_cmulp_$C(a, a));\n"
    "    const i64 m = n < 0 ? -n : n;\n"
    "    $C r = jitc_cmk_$C(1, 0), p = a;\n"
    "    for (i64 mask = 1;;) {\n"
    "      if (m & mask) r = jitc_cmulp_$C(r, p);\n"
    "      mask <<= 1;\n"
    "      if (m < mask) break;\n"
    "      p = jitc_cmulp_$C(p, p);\n"
    "    }\n"
    "    return b.re < 0 ? jitc_cdiv_$C(jitc_cmk_$C(1, 0), r) : r;\n"
    "  }\n"
    "  return jitc_cexp_$C(jitc_cmulc_$C(b, jitc_clog_$C(a)));\n}\n";

void cuda_complex_text(Buf *b, CudaHelper h, jitc_dtype t) {
  switch (h) {
  case H_CARITH:
    buf_puts(b, t == JITC_COMPLEX128
                    ? DEV "bool jitc_sbit_f64(const f64 x) { return ((u64)__double_as_longlong(x) >> 63) != 0; }\n"
                    : DEV "bool jitc_sbit_f32(const f32 x) { return (__float_as_uint(x) >> 31) != 0; }\n");
    cuda_complex_tpl(b, carith_text, t);
    return;
  case H_CFN: cuda_complex_tpl(b, cfn_text, t); return;
  case H_CPOW: cuda_complex_tpl(b, cpow_text, t); return;
  default: return; /* the functions: cuda/cmath.c */
  }
}

void cuda_complex_use(bool used[H_NHELPERS][JITC_NDTYPES], CudaHelper h, jitc_dtype t) {
  jitc_dtype part = dtype_part(t);
  used[h][t] = true;
  used[H_CARITH][t] = true;
  cuda_helper_use(used, H_ISNAN, part);  /* jitc_isnan_f32, _isinf_, _isfinite_ */
  cuda_helper_use(used, H_SIGNBIT, part); /* jitc_neg_f32 */
  switch (h) { /* what the texts call */
  case H_CASINH: used[H_CSQRT][t] = true; used[H_CLOG][t] = true; break;
  case H_CATANH: used[H_CLOG][t] = true; break; /* jitc_x2y2m1 */
  case H_CPOW: used[H_CLOG][t] = true; used[H_CEXP][t] = true; break;
  default: break;
  }
  if (used[H_CLOG][t] || used[H_CSQRT][t] || used[H_CFN][t])
    cuda_helper_use(used, H_HYPOT, part);
}

/* ---- casts ---- */

void cuda_complex_cast(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], jitc_dtype r, jitc_dtype t,
                       const char *x) {
  if (r == JITC_BOOL) { /* z != 0 */
    buf_printf(o, "(b8)(%s.re != 0 || %s.im != 0)", x, x);
    return;
  }
  if (!dtype_is_complex(r)) { /* the checker refuses it: NumPy's discarded imaginary part */
    char re[96];
    snprintf(re, sizeof re, "%s.re", x);
    cuda_cast(o, used, r, dtype_part(t), re);
    return;
  }
  cuda_complex_use(used, H_CARITH, r);
  jitc_dtype rp = dtype_part(r);
  buf_printf(o, "jitc_cmk_%s(", cuda_ctype(r));
  if (dtype_is_complex(t)) { /* widened exactly, or each part rounded once */
    buf_printf(o, "(%s)%s.re, (%s)%s.im)", cuda_ctype(rp), x, cuda_ctype(rp), x);
    return;
  }
  cuda_cast(o, used, rp, t, x); /* a real value: its cast to the part, and 0 */
  buf_puts(o, ", 0)");
}

/* ---- operations ---- */

/* The device function of each operation that has one: its helper and
** the name after jitc_. */
static bool fn_of(OpId op, CudaHelper *h, const char **name) {
  static const struct { OpId op; CudaHelper h; const char *name; } fns[] = {
      {OP_EXP, H_CEXP, "cexp"},         {OP_LOG, H_CLOG, "clog"},
      {OP_SQRT, H_CSQRT, "csqrt"},      {OP_SINH, H_CSINH, "csinh"},
      {OP_SIN, H_CSINH, "csin"},        {OP_COSH, H_CCOSH, "ccosh"},
      {OP_COS, H_CCOSH, "ccos"},        {OP_TANH, H_CTANH, "ctanh"},
      {OP_TAN, H_CTANH, "ctan"},        {OP_ASINH, H_CASINH, "casinh"},
      {OP_ASIN, H_CASINH, "casin"},     {OP_ACOS, H_CASINH, "cacos"},
      {OP_ACOSH, H_CASINH, "cacosh"},   {OP_ATANH, H_CATANH, "catanh"},
      {OP_ATAN, H_CATANH, "catan"},     {OP_EXPM1, H_CFN, "cexpm1"},
      {OP_LOG1P, H_CFN, "clog1p"},      {OP_SIGN, H_CFN, "csign"},
      {OP_MINIMUM, H_CARITH, "cminimum"}, {OP_MAXIMUM, H_CARITH, "cmaximum"},
      {OP_FMIN, H_CARITH, "cfmin"},     {OP_FMAX, H_CARITH, "cfmax"},
      {OP_CLIP, H_CARITH, "cclip"},     {OP_ISNAN, H_CARITH, "cisnan"},
      {OP_ISINF, H_CARITH, "cisinf"},   {OP_ISFINITE, H_CARITH, "cisfinite"},
      {OP_ADD, H_CARITH, "cadd"},       {OP_SUB, H_CARITH, "csub"},
      {OP_MUL, H_CARITH, "cmul"},       {OP_DIV, H_CARITH, "cdiv"},
      {OP_NEG, H_CARITH, "cneg"},       {OP_CONJ, H_CARITH, "cconj"},
      {OP_LT, H_CARITH, "clt"},         {OP_LE, H_CARITH, "cle"},
      {OP_GT, H_CARITH, "cgt"},         {OP_GE, H_CARITH, "cge"},
      {OP_POW, H_CPOW, "cpow"},
  };
  for (size_t k = 0; k < sizeof fns / sizeof *fns; k++)
    if (fns[k].op == op) {
      *h = fns[k].h;
      *name = fns[k].name;
      return true;
    }
  return false;
}

bool cuda_complex_expr(Buf *o, bool used[H_NHELPERS][JITC_NDTYPES], const Node *n,
                       const char *const *a) {
  jitc_dtype r = n->type, t = n->args[n->op == OP_WHERE ? 1 : 0]->type;
  const char *x = a[0], *y = n->nargs > 1 ? a[1] : "";
  if (n->op == OP_CAST) {
    cuda_complex_cast(o, used, r, t, x);
    return true;
  }
  if (n->op == OP_COMPLEX) { /* parts of r's part type */
    cuda_complex_use(used, H_CARITH, r);
    buf_printf(o, "jitc_cmk_%s(%s, %s)", cuda_ctype(r), x, y);
    return true;
  }
  if (n->op == OP_WHERE) {
    buf_printf(o, "%s ? %s : %s", x, y, a[2]);
    return true;
  }
  if (!dtype_is_complex(t))
    return false;
  const char *C = cuda_ctype(t);
  const char *F = dtype_part(t) == JITC_FLOAT32 ? "f" : "";
  CudaHelper h;
  const char *name;
  switch (n->op) {
  case OP_EQ: buf_printf(o, "(b8)(%s.re == %s.re && %s.im == %s.im)", x, y, x, y); return true;
  case OP_NE: buf_printf(o, "(b8)(%s.re != %s.re || %s.im != %s.im)", x, y, x, y); return true;
  case OP_REAL: buf_printf(o, "%s.re", x); return true;
  case OP_IMAG: buf_printf(o, "%s.im", x); return true;
  case OP_ABS: h = H_CARITH; name = "cabs"; break;
  case OP_ANGLE: buf_printf(o, "atan2%s(%s.im, %s.re)", F, x, x); return true;
  case OP_SQUARE:
    cuda_complex_use(used, H_CARITH, t);
    buf_printf(o, "jitc_cmul_%s(%s, %s)", C, x, x);
    return true;
  case OP_RECIPROCAL: h = H_CARITH; name = "crecip"; break;
  case OP_RINT:
  case OP_ROUND:
    cuda_complex_use(used, H_CARITH, t);
    buf_printf(o, "jitc_cmk_%s(rint%s(%s.re), rint%s(%s.im))", C, F, x, F, x);
    return true;
  case OP_EXP2: /* NumPy: exp(z log 2) */
    cuda_complex_use(used, H_CEXP, t);
    buf_printf(o, "jitc_cexp_%s(jitc_cscale_%s(%s, 0.69314718055994530942%s))", C, C, x, F);
    return true;
  case OP_LOG2:
  case OP_LOG10: /* NumPy: log(z) times log2(e) or log10(e) */
    cuda_complex_use(used, H_CLOG, t);
    buf_printf(o, "jitc_cscale_%s(jitc_clog_%s(%s), %s%s)", C, C, x,
               n->op == OP_LOG2 ? "1.44269504088896340736" : "0.43429448190325182765", F);
    return true;
  default:
    if (!fn_of(n->op, &h, &name))
      return false;
    break;
  }
  cuda_complex_use(used, h, t);
  buf_printf(o, "jitc_%s_%s(%s", name, C, x);
  for (int k = 1; k < n->nargs; k++)
    buf_printf(o, ", %s", k == 1 ? y : a[k]);
  buf_puts(o, ")");
  return true;
}

/* ---- reductions ---- */

/* The functions of a complex reduction, as cuda/reduce.c's emit_one writes
** them for the real types: sums and means in the accumulator's type
** (complex128 for complex64: reduce_acc; a mean is the sum divided by n as
** a complex value, as NumPy's), products with the arithmetic's *,
** min, max, argmin and argmax in the order of the parts with a NaN part
** winning, keeping the first index among equal values (and among NaNs). */
void cuda_complex_reduce(Buf *b, const Program *p, const IrStmt *st) {
  int k = st->slot;
  OpId op = st->op;
  jitc_dtype in = st->value->type, acc = reduce_acc(op, in), res = reduce_result(op, in);
  const char *A = cuda_ctype(acc), *I = cuda_ctype(in), *R = cuda_ctype(res);
  bool arg = op == OP_ARGMIN || op == OP_ARGMAX, ext = arg || op == OP_MIN || op == OP_MAX;
  bool less = op == OP_MIN || op == OP_ARGMIN;
  buf_printf(b, "\n// %s = %s() of %s elements, accumulated in %s.\n", p->arrays[k].name,
             op_info[op].name, jitc_dtype_name(in), jitc_dtype_name(acc));
  cuda_part_type(b, k, A);
  /* min and max start from the value every element replaces or equals,
  ** (inf, inf) for min, and keep their element's index as argmin and argmax
  ** do: NumPy's loop keeps the first of equal elements (0j after -0j) and
  ** the first with a NaN part, which a tree over threads' interleaved
  ** elements finds by the indices alone */
  const char *id = op == OP_PROD ? "1, 0" : !ext || arg ? "0, 0"
                   : less ? "$I, $I" : "-$I, -$I";
  char line[400];
  snprintf(line, sizeof line, DEV "jitc_p%d jitc_id%d() { jitc_p%d a; a.v = jitc_cmk_$C(%s); a.idx = -1; return a; }\n",
           k, k, k, id);
  cuda_complex_tpl(b, line, acc);
  if (ext) {
    /* b before a: a NaN never loses, one in b wins, else the order of the parts */
    buf_printf(b, DEV "bool jitc_bef%d(const %s b, const %s a) {\n"
                  "  return !jitc_cisnan_%s(a) && (jitc_cisnan_%s(b) || jitc_c%s_%s(b, a));\n}\n",
               k, A, A, A, A, less ? "lt" : "gt", A);
    buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s b, const i64 i) {\n"
                  "  if (a.idx < 0 || jitc_bef%d(b, a.v)) { a.v = b; a.idx = i; }\n}\n", k, k, I, k);
    buf_printf(b, "struct jitc_c%d {\n  " DEV "jitc_p%d operator()(const jitc_p%d a, const jitc_p%d b) const {\n"
                  "    if (a.idx < 0) return b;\n    if (b.idx < 0) return a;\n"
                  "    if (jitc_bef%d(b.v, a.v)) return b;\n"
                  "    const bool same = (a.v.re == b.v.re && a.v.im == b.v.im) ||\n"
                  "                      (jitc_cisnan_%s(a.v) && jitc_cisnan_%s(b.v));\n"
                  "    return same && b.idx < a.idx ? b : a;\n  }\n};\n", k, k, k, k, k, A, A);
    buf_printf(b, DEV "%s jitc_fin%d(const jitc_p%d a, const i64 n) { (void)n; return a.%s; }\n", R,
               k, k, arg ? "idx" : "v");
    return;
  }
  const char *f = op == OP_PROD ? "cmul" : "cadd";
  char w[80] = "b"; /* an element in the accumulator's type */
  if (acc != in)
    snprintf(w, sizeof w, "jitc_cmk_%s((%s)b.re, (%s)b.im)", A, cuda_ctype(dtype_part(acc)),
             cuda_ctype(dtype_part(acc)));
  buf_printf(b, DEV "void jitc_step%d(jitc_p%d &a, const %s b, const i64 i) { (void)i; a.v = jitc_%s_%s(a.v, %s); }\n",
             k, k, I, f, A, w);
  buf_printf(b, "struct jitc_c%d {\n  " DEV "jitc_p%d operator()(jitc_p%d a, const jitc_p%d p) const {\n"
                "    a.v = jitc_%s_%s(a.v, p.v); return a;\n  }\n};\n", k, k, k, k, f, A);
  const char *rp = cuda_ctype(dtype_part(res));
  if (op == OP_MEAN) /* NumPy's complex division of the sum by n (a NaN for none) */
    snprintf(line, sizeof line, DEV "%s jitc_fin%d(const jitc_p%d a, const i64 n) {\n"
             "  const f64 q = __longlong_as_double(0x7ff8000000000000ll);\n"
             "  const c128 m = n > 0 ? jitc_cdiv_c128(a.v, jitc_cmk_c128((f64)n, 0)) : jitc_cmk_c128(q, q);\n"
             "  return jitc_cmk_%s((%s)m.re, (%s)m.im);\n}\n", R, k, k, R, rp, rp);
  else
    snprintf(line, sizeof line, DEV "%s jitc_fin%d(const jitc_p%d a, const i64 n) {\n"
             "  (void)n; return jitc_cmk_%s((%s)a.v.re, (%s)a.v.im);\n}\n", R, k, k, R, rp, rp);
  buf_puts(b, line);
}
