/*
** format.c -- NumPy-style printing of arrays and values.
**
** The report shows each output as NumPy would print it: "[2. 2. 2. ... 2.
** 2. 2.]", summarised above 1000 elements with 3 at each end.  Two choices
** differ from NumPy's array printing on purpose: elements are separated by
** one space with no padding, and every float is written with the fewest
** digits that read back as the same value of its own dtype (NumPy's
** unique=True digits, without its 8-digit precision cap), so what is shown
** is exactly what was computed.
**
** Whether a float is written positionally ("0.5", "2.") or with an exponent
** ("1.e-05") follows NumPy 2.3 and later: an array switches as a whole when
** its largest nonzero magnitude is >= 10^min(8, precision) (1e3 for
** float16, 1e6 for float32, 1e8 for float64), its smallest < 1e-4, or their
** ratio > 1e3 (decided over the elements shown, in the array's own
** precision, as NumPy does); a single value uses the scalar repr's rule
** (exponent when below 1e-4, or from 1e3 for float16, 1e6 for float32 and
** 1e16 for float64) and the scalar repr's spelling ("1e+20", "1.5e-07",
** "15.0", as NumPy prints a 0-d array or a reduction's result).
** Integers are decimal, unsigned ones as such (18446744073709551615).
** bfloat16 is not NumPy's: it prints as ml_dtypes prints it, each value
** with C's %g ("0.100098", "2", "3.38953e+38"), whatever the others are.
**
** A complex element is its real part, its imaginary part with a sign, and
** "j", each part spelled as a float of the part type (float32 for
** complex64): "1.+2.j", "nan+nanj", "-0.-0.j", "inf-infj".  As NumPy's
** ComplexFloatingFormat does, the real parts decide their exponent form
** together, and the imaginary parts theirs ("[1.5e+20+1.j]").  A complex
** value is NumPy's str of a complex scalar: "(1+2j)", "(nan+nanj)",
** "(-0-0j)", "(1e+20-infj)", and "2j", "0j", "nanj" when the real part is
** +0: each part without a trailing "." and with the exponent rule of a
** scalar of the part type.
**
** The shortest digits are runtime/text.c's (fmt_digits), the same as the
** compiler's dumps and generated code use, and for float16 half_digits
** here; this file only spells them.
*/
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_THRESHOLD 1000
#define EDGE_ITEMS 3

/* ---- spelling ---- */

/* POSITIONAL_TRIM: positional without a trailing "." ("2", a complex
** scalar's parts); POSITIONAL_SCALAR: a real scalar's, as NumPy's str of
** one spells it ("15.0", "-0.0"). */
enum { POSITIONAL, SCI_ARRAY, SCI_SCALAR, POSITIONAL_TRIM, POSITIONAL_SCALAR };

/* "d.ddde[+-]XX" into its digits (no trailing zeros) and exponent. */
static int parse_e(const char *s, char *digits) {
  int k = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9')
      digits[k++] = *s;
  while (k > 1 && digits[k - 1] == '0')
    k--;
  digits[k] = '\0';
  return *s == 'e' ? atoi(s + 1) : 0;
}

/* fmt_digits for float16, whose values need at most 5 digits: the
** correctly rounded 1, 2, ... digits until they read back as x, trying
** the rounded digits' neighbours too (the interval that reads back is
** lopsided at a power of two), as runtime/text.c does for the others.  A
** text of 5 digits or fewer reads back the same through double. */
static int half_digits(double x, char *digits) {
  uint16_t want = f16_from_double(x);
  char buf[64];
  for (int p = 1; p < 5; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (f16_from_double(strtod(buf, NULL)) == want)
      return parse_e(buf, digits);
    char rd[24];
    int rexp = parse_e(buf, rd);
    long m = strtol(rd, NULL, 10);
    for (int k = (int)strlen(rd); k < p; k++)
      m *= 10; /* the stripped zeros back: p digits */
    for (int dir = -1; dir <= 1; dir += 2) {
      char cand[64];
      snprintf(cand, sizeof cand, "%lde%d", m + dir, rexp - (p - 1));
      if (m + dir > 0 && f16_from_double(strtod(cand, NULL)) == want) {
        int len = snprintf(buf, sizeof buf, "%lde0", m + dir);
        return parse_e(buf, digits) + rexp + (len - 2 - p);
      }
    }
  }
  snprintf(buf, sizeof buf, "%.4e", x);
  return parse_e(buf, digits);
}

/* Whether values of t are spelled as NumPy spells its floats (float16,
** float32, float64); ml_dtypes' bfloat16 has a spelling of its own. */
static bool numpy_float(jitc_dtype t) {
  return elem_kind(t) == EK_FLOAT && t != JITC_BFLOAT16;
}

/* ml_dtypes prints a bfloat16 as C++ streams print its float: %g, six
** digits ("0.100098", "2", "-0", "3.38953e+38"), and NaN as "nan". */
static void put_bfloat16(Buf *b, double x) {
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%g", x);
  buf_puts(b, isnan(x) ? "nan" : tmp);
}

static void put_float(Buf *b, double x, jitc_dtype t, int mode) {
  if (isnan(x)) {
    buf_puts(b, "nan");
    return;
  }
  if (isinf(x)) {
    buf_puts(b, x < 0 ? "-inf" : "inf");
    return;
  }
  if (signbit(x))
    buf_puts(b, "-");
  double ax = fabs(x);
  /* d1.d2d3... x 10^exp */
  char digits[24] = "0";
  int prec, exp = ax == 0.0                   ? 0
                  : jitc_dtype_size(t) == 2 ? half_digits(ax, digits)
                                            : fmt_digits(ax, jitc_dtype_size(t) == 4, digits, &prec);
  int nd = (int)strlen(digits);
  char out[400];
  int k = 0;
  if (mode == POSITIONAL || mode == POSITIONAL_TRIM || mode == POSITIONAL_SCALAR) {
    if (exp >= 0) {
      for (int i = 0; i <= exp; i++)
        out[k++] = i < nd ? digits[i] : '0';
      if (mode != POSITIONAL_TRIM || nd > exp + 1)
        out[k++] = '.';
      for (int i = exp + 1; i < nd; i++)
        out[k++] = digits[i];
      if (mode == POSITIONAL_SCALAR && nd <= exp + 1)
        out[k++] = '0';
    } else {
      out[k++] = '0';
      out[k++] = '.';
      for (int i = 0; i < -exp - 1; i++)
        out[k++] = '0';
      for (int i = 0; i < nd; i++)
        out[k++] = digits[i];
    }
    out[k] = '\0';
  } else {
    out[k++] = digits[0];
    if (nd > 1 || mode == SCI_ARRAY)
      out[k++] = '.';
    for (int i = 1; i < nd; i++)
      out[k++] = digits[i];
    snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", exp < 0 ? '-' : '+',
             exp < 0 ? -exp : exp);
  }
  buf_puts(b, out);
}

/* A complex element i: its real part in mode re_mode, its imaginary part
** with a sign ("+nan" for any NaN, as NumPy) in im_mode, then "j". */
static void put_complex(Buf *b, const void *data, jitc_dtype t, int64_t i, int re_mode,
                        int im_mode) {
  jitc_dtype p = elem_part_type(t);
  double im = elem_get(data, p, 2 * i + 1);
  put_float(b, elem_get(data, p, 2 * i), p, re_mode);
  if (isnan(im) || !signbit(im))
    buf_puts(b, "+");
  put_float(b, im, p, im_mode);
  buf_puts(b, "j");
}

/* Element i; a complex one's parts in the modes packed in `mode` (real
** part's low byte, imaginary part's next). */
static void put_elem(Buf *b, const void *data, jitc_dtype t, int64_t i, int mode) {
  char tmp[32];
  switch (elem_kind(t)) {
  case EK_BOOL:
    buf_puts(b, elem_get_int(data, t, i) ? "True" : "False");
    break;
  case EK_SINT:
    snprintf(tmp, sizeof tmp, "%" PRId64, elem_get_int(data, t, i));
    buf_puts(b, tmp);
    break;
  case EK_UINT:
    snprintf(tmp, sizeof tmp, "%" PRIu64, (uint64_t)elem_get_int(data, t, i));
    buf_puts(b, tmp);
    break;
  case EK_COMPLEX:
    put_complex(b, data, t, i, mode & 0xff, mode >> 8);
    break;
  default:
    if (numpy_float(t))
      put_float(b, elem_get(data, t, i), t, mode);
    else
      put_bfloat16(b, elem_get(data, t, i));
    break;
  }
}

/* NumPy's finfo(t).precision: the decimal digits its significand holds
** for sure (3 for float16, 6 for float32, 15 for float64). */
static int decimal_precision(jitc_dtype t) {
  return (int)floor((elem_mant_bits(t) - 1) * log10(2.0));
}

/* The elements a print shows, in C order of the logical index: all of
** them, or, summarised, the first and last EDGE_ITEMS along every axis
** longer than twice that (NumPy's _leading_trailing).  A Shown walks them,
** giving each one's position in memory, in elements: a Fortran-order
** array prints in its logical order. */
typedef struct Shown {
  int ndim;
  const int64_t *shape;
  int64_t strides[NPY_MAXDIMS]; /* in elements */
  bool summary;
  int64_t idx[NPY_MAXDIMS];
  int64_t at; /* the current element's position in memory */
  bool done;
} Shown;

static void shown_start(Shown *w, const HostArray *a, bool summary) {
  w->ndim = a->ndim;
  w->shape = a->shape;
  w->summary = summary;
  int64_t s = 1;
  for (int q = 0; q < a->ndim; q++) {
    int d = a->fortran ? q : a->ndim - 1 - q;
    w->strides[d] = s;
    s *= a->shape[d];
  }
  memset(w->idx, 0, sizeof w->idx);
  w->at = 0;
  w->done = a->n == 0;
}

static bool elided(const Shown *w, int d) {
  return w->summary && w->shape[d] > 2 * EDGE_ITEMS;
}

static void shown_next(Shown *w) {
  for (int d = w->ndim - 1; d >= 0; d--) {
    int64_t old = w->idx[d];
    w->idx[d]++;
    if (elided(w, d) && w->idx[d] == EDGE_ITEMS)
      w->idx[d] = w->shape[d] - EDGE_ITEMS;
    if (w->idx[d] < w->shape[d]) {
      w->at += (w->idx[d] - old) * w->strides[d];
      return;
    }
    w->at -= old * w->strides[d];
    w->idx[d] = 0;
  }
  w->done = true;
}

/* NumPy's FloatingFormat rule (NumPy 2.3 and later) over the shown
** elements: exponent form when the largest nonzero magnitude is >=
** 10^min(8, precision) (1e3 for float16, 1e6 for float32, 1e8 for
** float64), the smallest < 1e-4, or their ratio > 1e3, each compared in the
** array's own precision, as NumPy does.  Element e is the float of type t
** at index stride*e + off: a complex array's real parts are stride 2,
** offset 0 of its part type, its imaginary parts offset 1. */
static int array_mode(const HostArray *a, jitc_dtype t, int stride, int off, bool summary) {
  bool any = false;
  double mx = 0, mn = 0;
  Shown w;
  for (shown_start(&w, a, summary); !w.done; shown_next(&w)) {
    double v = fabs(elem_get(a->data, t, stride * w.at + off));
    if (!isfinite(v) || v == 0)
      continue;
    if (!any || v > mx)
      mx = v;
    if (!any || v < mn)
      mn = v;
    any = true;
  }
  if (!any)
    return POSITIONAL;
  int p = decimal_precision(t);
  double cutoff = elem_round(t, pow(10.0, p < 8 ? p : 8));
  /* The quotient as NumPy divides: in float32 for the narrower types. */
  double ratio = jitc_dtype_size(t) == 8 ? mx / mn : elem_round(t, (float)mx / (float)mn);
  if (mx >= cutoff || mn < elem_round(t, 1e-4) || ratio > 1000.0)
    return SCI_ARRAY;
  return POSITIONAL;
}

/* What separates two elements of a row (one space), or two rows or blocks
** of axis d: a newline per axis below it, then the indent of the next one. */
static void put_sep(Buf *b, const HostArray *a, int d, int hang) {
  if (d == a->ndim - 1) {
    buf_puts(b, " ");
    return;
  }
  for (int k = d; k < a->ndim - 1; k++)
    buf_puts(b, "\n");
  for (int k = 0; k < hang; k++)
    buf_puts(b, " ");
}

/* NumPy's _formatArray (arrayprint.py) for axis d and those after it, from
** the element at memory position `at`: brackets around the rows or
** elements of the axis, "..." for those elided; `hang` is the column the
** opening bracket is at. */
static void put_block(Buf *b, const HostArray *a, const Shown *w, int d, int64_t at, int hang,
                      int mode) {
  int64_t len = a->shape[d];
  buf_puts(b, "[");
  for (int64_t i = 0; i < len; i++) {
    if (i > 0)
      put_sep(b, a, d, hang + 1);
    if (elided(w, d) && i == EDGE_ITEMS) {
      buf_puts(b, "...");
      put_sep(b, a, d, hang + 1);
      i = len - EDGE_ITEMS;
    }
    int64_t here = at + i * w->strides[d];
    if (d == a->ndim - 1)
      put_elem(b, a->data, a->dtype, here, mode);
    else
      put_block(b, a, w, d + 1, here, hang + 1, mode);
  }
  buf_puts(b, "]");
}

char *format_nd(const HostArray *a, int indent) {
  if (a->ndim == 0)
    return format_value(a->data, a->dtype);
  Buf b = {0};
  if (a->n <= 0) { /* NumPy prints an empty array of any shape so */
    buf_puts(&b, "[]");
    return buf_steal(&b);
  }
  bool summary = a->n > SUMMARY_THRESHOLD;
  int mode = POSITIONAL;
  if (numpy_float(a->dtype))
    mode = array_mode(a, a->dtype, 1, 0, summary);
  if (elem_kind(a->dtype) == EK_COMPLEX) {
    jitc_dtype p = elem_part_type(a->dtype);
    mode = array_mode(a, p, 2, 0, summary) | array_mode(a, p, 2, 1, summary) << 8;
  }
  Shown w;
  shown_start(&w, a, summary);
  put_block(&b, a, &w, 0, 0, indent, mode);
  return buf_steal(&b);
}

char *format_array(const void *data, jitc_dtype dtype, int64_t n) {
  HostArray a = {.dtype = dtype, .ndim = 1, .shape = {n < 0 ? 0 : n}, .n = n < 0 ? 0 : n,
                 .data = (void *)data};
  return format_nd(&a, 0);
}

/* NumPy's scalar repr of float x of type t: positional from 1e-4 up to 1e3
** for float16, 1e6 for float32 (10^precision), 1e16 for float64;
** `positional` is the mode below that. */
static int scalar_mode(double x, jitc_dtype t, int positional) {
  double ax = fabs(x);
  double hi = jitc_dtype_size(t) == 8 ? 1e16 : pow(10.0, decimal_precision(t));
  return isfinite(ax) && ax != 0 && (ax >= hi || ax < 1e-4) ? SCI_SCALAR : positional;
}

/* NumPy's str of a complex scalar: "(re+imj)", or "imj" when re is +0. */
static void put_complex_value(Buf *b, const void *elem, jitc_dtype t) {
  jitc_dtype p = elem_part_type(t);
  double re = elem_get(elem, p, 0), im = elem_get(elem, p, 1);
  int im_mode = scalar_mode(im, p, POSITIONAL_TRIM);
  if (re == 0 && !signbit(re)) {
    put_float(b, im, p, im_mode);
    buf_puts(b, "j");
    return;
  }
  buf_puts(b, "(");
  put_complex(b, elem, t, 0, scalar_mode(re, p, POSITIONAL_TRIM), im_mode);
  buf_puts(b, ")");
}

char *format_value(const void *elem, jitc_dtype dtype) {
  Buf b = {0};
  if (elem_kind(dtype) == EK_COMPLEX)
    put_complex_value(&b, elem, dtype);
  else
    put_elem(&b, elem, dtype, 0,
             numpy_float(dtype)
                 ? scalar_mode(elem_get(elem, dtype, 0), dtype, POSITIONAL_SCALAR)
                 : POSITIONAL);
  return buf_steal(&b);
}
