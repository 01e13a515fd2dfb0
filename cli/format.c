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
** ("1.e-05") follows NumPy: an array switches as a whole when its largest
** nonzero magnitude is >= 1e8, its smallest < 1e-4, or their ratio > 1e3
** (decided over the elements shown, in the array's own precision, as NumPy
** does); a single value uses the scalar repr's rule (exponent when below
** 1e-4, or from 1e16 for float64 and 1e6 for float32) and the scalar repr's
** spelling ("1e+20", "1.5e-07").
**
** The shortest digits are runtime/text.c's (fmt_digits), the same as the
** compiler's dumps and generated code use; this file only spells them.
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

enum { POSITIONAL, SCI_ARRAY, SCI_SCALAR };

static void put_float(Buf *b, double x, bool f32, int mode) {
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
  int prec, exp = ax == 0.0 ? 0 : fmt_digits(ax, f32, digits, &prec);
  int nd = (int)strlen(digits);
  char out[400];
  int k = 0;
  if (mode == POSITIONAL) {
    if (exp >= 0) {
      for (int i = 0; i <= exp; i++)
        out[k++] = i < nd ? digits[i] : '0';
      out[k++] = '.';
      for (int i = exp + 1; i < nd; i++)
        out[k++] = digits[i];
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

static double load_float(const void *data, jitc_dtype t, int64_t i) {
  if (t == JITC_FLOAT32) {
    float f;
    memcpy(&f, (const char *)data + i * 4, 4);
    return f;
  }
  double d;
  memcpy(&d, (const char *)data + i * 8, 8);
  return d;
}

static void put_elem(Buf *b, const void *data, jitc_dtype t, int64_t i, int mode) {
  char tmp[32];
  switch (t) {
  case JITC_BOOL:
    buf_puts(b, ((const unsigned char *)data)[i] ? "True" : "False");
    break;
  case JITC_INT32:
  case JITC_INT64: {
    int64_t v;
    if (t == JITC_INT32) {
      int32_t w;
      memcpy(&w, (const char *)data + i * 4, 4);
      v = w;
    } else {
      memcpy(&v, (const char *)data + i * 8, 8);
    }
    snprintf(tmp, sizeof tmp, "%" PRId64, v);
    buf_puts(b, tmp);
    break;
  }
  case JITC_FLOAT32:
  case JITC_FLOAT64:
    put_float(b, load_float(data, t, i), t == JITC_FLOAT32, mode);
    break;
  default:
    buf_puts(b, "?");
    break;
  }
}

/* NumPy's FloatingFormat rule over the shown elements [0,k1) and [k2,n),
** computed in the array's own precision. */
static int array_mode(const void *data, jitc_dtype t, int64_t k1, int64_t k2, int64_t n) {
  bool any = false;
  /* float32 values compared as float32, as NumPy does. */
  bool f32 = t == JITC_FLOAT32;
  double mx = 0, mn = 0;
  for (int64_t i = 0; i < n; i = (i + 1 == k1) ? k2 : i + 1) {
    double v = f32 ? (double)fabsf((float)load_float(data, t, i)) : fabs(load_float(data, t, i));
    if (!isfinite(v) || v == 0)
      continue;
    if (!any || v > mx)
      mx = v;
    if (!any || v < mn)
      mn = v;
    any = true;
  }
  if (any && (f32 ? mx >= 1e8f || mn < 1e-4f || (float)mx / (float)mn > 1000.0f
                  : mx >= 1e8 || mn < 1e-4 || mx / mn > 1000.0))
    return SCI_ARRAY;
  return POSITIONAL;
}

char *format_array(const void *data, jitc_dtype dtype, int64_t n) {
  Buf b = {0};
  if (n < 0)
    n = 0;
  bool summary = n > SUMMARY_THRESHOLD;
  /* Shown: [0, k1) and [k2, n). */
  int64_t k1 = summary ? EDGE_ITEMS : n, k2 = summary ? n - EDGE_ITEMS : n;
  int mode = POSITIONAL;
  if ((dtype == JITC_FLOAT32 || dtype == JITC_FLOAT64) && n > 0)
    mode = array_mode(data, dtype, k1, k2, n);
  buf_puts(&b, "[");
  for (int64_t i = 0; i < k1; i++) {
    if (i)
      buf_puts(&b, " ");
    put_elem(&b, data, dtype, i, mode);
  }
  if (summary) {
    buf_puts(&b, " ...");
    for (int64_t i = k2; i < n; i++) {
      buf_puts(&b, " ");
      put_elem(&b, data, dtype, i, mode);
    }
  }
  buf_puts(&b, "]");
  return buf_steal(&b);
}

char *format_value(const void *elem, jitc_dtype dtype) {
  Buf b = {0};
  int mode = POSITIONAL;
  if (dtype == JITC_FLOAT32 || dtype == JITC_FLOAT64) {
    double ax = fabs(load_float(elem, dtype, 0));
    double hi = dtype == JITC_FLOAT32 ? 1e6 : 1e16;
    if (isfinite(ax) && ax != 0 && (ax >= hi || ax < 1e-4))
      mode = SCI_SCALAR;
  }
  put_elem(&b, elem, dtype, 0, mode);
  return buf_steal(&b);
}
