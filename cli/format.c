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
** Shortest digits: the correctly rounded %.*e text for 1, 2, ... digits
** until it reads back; at a power of two the interval of values that read
** back is lopsided, so the neighbours of the rounded digits are tried too
** (this is what Dragon4 does: it keeps the closest candidate inside the
** interval).
*/
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_THRESHOLD 1000
#define EDGE_ITEMS 3

/* ---- a growing string ---- */

typedef struct Sb {
  char *p;
  size_t len, cap;
  bool oom;
} Sb;

static void sb_put(Sb *b, const char *s, size_t n) {
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = true;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_puts(Sb *b, const char *s) { sb_put(b, s, strlen(s)); }

static char *sb_finish(Sb *b) {
  if (b->oom || !b->p) {
    free(b->p);
    if (b->oom)
      return NULL;
    char *e = malloc(1);
    if (e)
      e[0] = '\0';
    return e;
  }
  return b->p;
}

/* ---- shortest digits ---- */

/* A finite nonzero float as digits d1 d2 ... (no trailing zeros) times
** 10^(exp - ndigits + 1), i.e. d1.d2d3... x 10^exp. */
typedef struct Dec {
  char digits[24];
  int exp;
} Dec;

static bool reads_back(const char *s, double x, bool f32) {
  if (f32)
    return strtof(s, NULL) == (float)x;
  return strtod(s, NULL) == x;
}

/* Takes "d.ddde[+-]XX" into digits and exponent. */
static void parse_e(const char *s, Dec *d) {
  int k = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9')
      d->digits[k++] = *s;
  d->digits[k] = '\0';
  d->exp = *s == 'e' ? atoi(s + 1) : 0;
}

static void strip_zeros(Dec *d) {
  size_t n = strlen(d->digits);
  while (n > 1 && d->digits[n - 1] == '0')
    d->digits[--n] = '\0';
}

/* x: finite, > 0. */
static void shortest(double x, bool f32, Dec *out) {
  int maxp = f32 ? 9 : 17;
  char buf[64];
  for (int p = 1; p <= maxp; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (reads_back(buf, x, f32)) {
      parse_e(buf, out);
      strip_zeros(out);
      return;
    }
    if (p == maxp)
      break;
    /* The neighbours of the rounded p digits. */
    Dec r;
    parse_e(buf, &r);
    uint64_t m = strtoull(r.digits, NULL, 10);
    for (int dir = -1; dir <= 1; dir += 2) {
      if (dir < 0 && m == 0)
        continue;
      uint64_t mm = dir < 0 ? m - 1 : m + 1;
      char cand[64];
      snprintf(cand, sizeof cand, "%" PRIu64 "e%d", mm, r.exp - (p - 1));
      if (mm > 0 && reads_back(cand, x, f32)) {
        char md[24];
        int len = snprintf(md, sizeof md, "%" PRIu64, mm);
        /* 999 + 1 = 1000 gains a digit: the exponent moves with it. */
        memcpy(out->digits, md, (size_t)len + 1);
        out->exp = r.exp + (len - p);
        strip_zeros(out);
        return;
      }
    }
  }
  /* maxp digits always read back; not reached for finite values. */
  snprintf(buf, sizeof buf, "%.*e", maxp - 1, x);
  parse_e(buf, out);
  strip_zeros(out);
}

/* ---- spelling ---- */

enum { POSITIONAL, SCI_ARRAY, SCI_SCALAR };

static void put_float(Sb *b, double x, bool f32, int mode) {
  if (isnan(x)) {
    sb_puts(b, "nan");
    return;
  }
  if (isinf(x)) {
    sb_puts(b, x < 0 ? "-inf" : "inf");
    return;
  }
  if (signbit(x))
    sb_puts(b, "-");
  double ax = fabs(x);
  Dec d;
  if (ax == 0.0) {
    strcpy(d.digits, "0");
    d.exp = 0;
  } else {
    shortest(ax, f32, &d);
  }
  int nd = (int)strlen(d.digits);
  char out[400];
  int k = 0;
  if (mode == POSITIONAL) {
    if (d.exp >= 0) {
      for (int i = 0; i <= d.exp; i++)
        out[k++] = i < nd ? d.digits[i] : '0';
      out[k++] = '.';
      for (int i = d.exp + 1; i < nd; i++)
        out[k++] = d.digits[i];
    } else {
      out[k++] = '0';
      out[k++] = '.';
      for (int i = 0; i < -d.exp - 1; i++)
        out[k++] = '0';
      for (int i = 0; i < nd; i++)
        out[k++] = d.digits[i];
    }
    out[k] = '\0';
  } else {
    out[k++] = d.digits[0];
    if (nd > 1 || mode == SCI_ARRAY)
      out[k++] = '.';
    for (int i = 1; i < nd; i++)
      out[k++] = d.digits[i];
    snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", d.exp < 0 ? '-' : '+',
             d.exp < 0 ? -d.exp : d.exp);
  }
  sb_puts(b, out);
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

static void put_elem(Sb *b, const void *data, jitc_dtype t, int64_t i, int mode) {
  char tmp[32];
  switch (t) {
  case JITC_BOOL:
    sb_puts(b, ((const unsigned char *)data)[i] ? "True" : "False");
    break;
  case JITC_INT32: {
    int32_t v;
    memcpy(&v, (const char *)data + i * 4, 4);
    snprintf(tmp, sizeof tmp, "%" PRId32, v);
    sb_puts(b, tmp);
    break;
  }
  case JITC_INT64: {
    int64_t v;
    memcpy(&v, (const char *)data + i * 8, 8);
    snprintf(tmp, sizeof tmp, "%" PRId64, v);
    sb_puts(b, tmp);
    break;
  }
  case JITC_FLOAT32:
  case JITC_FLOAT64:
    put_float(b, load_float(data, t, i), t == JITC_FLOAT32, mode);
    break;
  default:
    sb_puts(b, "?");
    break;
  }
}

/* NumPy's FloatingFormat rule over the shown elements [0,k1) and [k2,n),
** computed in the array's own precision. */
static int array_mode(const void *data, jitc_dtype t, int64_t k1, int64_t k2, int64_t n) {
  bool any = false;
  if (t == JITC_FLOAT32) {
    float mx = 0, mn = 0;
    for (int64_t i = 0; i < n; i = (i + 1 == k1) ? k2 : i + 1) {
      float v = fabsf((float)load_float(data, t, i));
      if (!isfinite(v) || v == 0)
        continue;
      if (!any || v > mx)
        mx = v;
      if (!any || v < mn)
        mn = v;
      any = true;
    }
    if (any && (mx >= 1e8f || mn < 1e-4f || mx / mn > 1000.0f))
      return SCI_ARRAY;
    return POSITIONAL;
  }
  double mx = 0, mn = 0;
  for (int64_t i = 0; i < n; i = (i + 1 == k1) ? k2 : i + 1) {
    double v = fabs(load_float(data, t, i));
    if (!isfinite(v) || v == 0)
      continue;
    if (!any || v > mx)
      mx = v;
    if (!any || v < mn)
      mn = v;
    any = true;
  }
  if (any && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1000.0))
    return SCI_ARRAY;
  return POSITIONAL;
}

char *format_array(const void *data, jitc_dtype dtype, int64_t n) {
  Sb b = {0};
  if (n < 0)
    n = 0;
  bool summary = n > SUMMARY_THRESHOLD;
  /* Shown: [0, k1) and [k2, n). */
  int64_t k1 = summary ? EDGE_ITEMS : n, k2 = summary ? n - EDGE_ITEMS : n;
  int mode = POSITIONAL;
  if ((dtype == JITC_FLOAT32 || dtype == JITC_FLOAT64) && n > 0)
    mode = array_mode(data, dtype, k1, k2, n);
  sb_puts(&b, "[");
  for (int64_t i = 0; i < k1; i++) {
    if (i)
      sb_puts(&b, " ");
    put_elem(&b, data, dtype, i, mode);
  }
  if (summary) {
    sb_puts(&b, " ...");
    for (int64_t i = k2; i < n; i++) {
      sb_puts(&b, " ");
      put_elem(&b, data, dtype, i, mode);
    }
  }
  sb_puts(&b, "]");
  return sb_finish(&b);
}

char *format_value(const void *elem, jitc_dtype dtype) {
  Sb b = {0};
  int mode = POSITIONAL;
  if (dtype == JITC_FLOAT32 || dtype == JITC_FLOAT64) {
    double ax = fabs(load_float(elem, dtype, 0));
    double hi = dtype == JITC_FLOAT32 ? 1e6 : 1e16;
    if (isfinite(ax) && ax != 0 && (ax >= hi || ax < 1e-4))
      mode = SCI_SCALAR;
  }
  put_elem(&b, elem, dtype, 0, mode);
  return sb_finish(&b);
}
