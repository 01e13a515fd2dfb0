/*
** gen.c -- generated inputs: ones, zeros, arange, linspace, full, rand, randn.
**
** Each generator reproduces what the NumPy expression a user would write
** gives, bit for bit: rand and randn are NumPy's legacy RandomState
** (MT19937 seeded with init_genrand, 53-bit doubles from two 32-bit draws,
** the polar Box-Muller method with its cached second value), linspace
** follows np.linspace's own arithmetic, and every value is made as float64
** (or int64 for arange and integral full values) and then cast to the
** array's dtype the way astype does (elem.c: integers wrap, float16 rounds
** from float64 directly, bfloat16 through float32 as ml_dtypes does).
** A complex array gets the same values as its real parts, with imaginary
** parts of 0, except from rand and randn, whose imaginary parts are the
** next n draws (np.random.rand(n) + 1j*np.random.rand(n)), and from
** full:VALUE, which takes a Python complex literal (full:1+2j).  The
** one place C and NumPy part ways is a float-to-int cast of a value out of
** range, which is undefined in C: here it saturates (negatives give 0 for
** unsigned types) and NaN gives 0, the rule of the whole language.
**
** The arithmetic below must stay in plain double precision: no contraction
** into fused multiply-adds, or randn and linspace stop matching NumPy.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, mkstemp, fchmod, access under -std=c11 */
#endif
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gcc keeps contraction off under -std=c11 (the build's mode); clang needs
** to be told. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define MT_N 624
#define MT_M 397

static const char USAGE[] =
    "use FILE.npy, FILE.npz[:NAME], ones, zeros, arange, linspace:LO:HI, full:VALUE, "
    "rand[:SEED] or randn[:SEED]";

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---- MT19937, as numpy/random/src/mt19937 ---- */

void mt_seed(Mt19937 *st, uint32_t seed) {
  for (int i = 0; i < MT_N; i++) {
    st->key[i] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1u;
  }
  st->pos = MT_N;
  st->has_gauss = false;
  st->gauss = 0.0;
}

static void mt_generate(Mt19937 *st) {
  static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
  uint32_t *k = st->key;
  int i = 0;
  for (; i < MT_N - MT_M; i++) {
    uint32_t y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
    k[i] = k[i + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
  }
  for (; i < MT_N - 1; i++) {
    uint32_t y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
    k[i] = k[i + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
  }
  uint32_t y = (k[MT_N - 1] & 0x80000000u) | (k[0] & 0x7fffffffu);
  k[MT_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
  st->pos = 0;
}

uint32_t mt_next32(Mt19937 *st) {
  if (st->pos >= MT_N)
    mt_generate(st);
  uint32_t y = st->key[st->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double mt_double(Mt19937 *st) {
  int32_t a = (int32_t)(mt_next32(st) >> 5), b = (int32_t)(mt_next32(st) >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double mt_gauss(Mt19937 *st) {
  if (st->has_gauss) {
    double t = st->gauss;
    st->has_gauss = false;
    st->gauss = 0.0;
    return t;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * mt_double(st) - 1.0;
    x2 = 2.0 * mt_double(st) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt(-2.0 * log(r2) / r2);
  st->gauss = f * x1;
  st->has_gauss = true;
  return f * x2;
}

/* ---- casts: astype's, elem.c ---- */

/* Stores k float64 values at element offset `at`. */
static void store_f64(HostArray *a, int64_t at, const double *v, int64_t k) {
  if (a->dtype == JITC_FLOAT64) {
    memcpy((double *)a->data + at, v, (size_t)k * sizeof(double));
    return;
  }
  for (int64_t i = 0; i < k; i++)
    elem_set_float(a->data, a->dtype, at + i, v[i]);
}

/* ---- spec parsing ---- */

/* The generator name of a spec: the text before the first ':'. */
static size_t name_len(const char *spec) {
  const char *c = strchr(spec, ':');
  return c ? (size_t)(c - spec) : strlen(spec);
}

static bool name_is(const char *spec, const char *name) {
  size_t n = name_len(spec);
  return n == strlen(name) && memcmp(spec, name, n) == 0;
}

static const char *const GEN_NAMES[] = {"ones", "zeros", "arange", "linspace", "full",
                                        "rand", "randn"};

bool gen_is_spec(const char *spec) {
  if (!spec)
    return false;
  for (size_t i = 0; i < sizeof GEN_NAMES / sizeof GEN_NAMES[0]; i++)
    if (name_is(spec, GEN_NAMES[i]))
      return true;
  /* Not a generator name: a file if it looks like one or exists; anything
  ** else is a mistyped generator, so that gen_fill can say which exist. */
  size_t n = strlen(spec);
  if (n == 0)
    return true;
  if (strchr(spec, '/') || (n >= 4 && strcmp(spec + n - 4, ".npy") == 0) ||
      (n >= 4 && strcmp(spec + n - 4, ".npz") == 0) || strstr(spec, ".npz:"))
    return false;
  return access(spec, F_OK) != 0;
}

/* Parses a whole string as a double (decimal, exponent, inf, nan). */
static bool parse_double(const char *s, double *out) {
  if (!*s || strchr(" \t\n", *s))
    return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end != '\0' || end == s)
    return false;
  /* Hexadecimal floats are C's, not Python's: refuse them. */
  if (strpbrk(s, "xX"))
    return false;
  *out = v;
  return true;
}

/* Parses a whole string as an int64 (decimal only).  Returns 0, or 1 if it
** is not an integer, or 2 if it is one that does not fit. */
static int parse_int(const char *s, int64_t *out) {
  const char *p = s;
  if (*p == '-' || *p == '+')
    p++;
  if (*p < '0' || *p > '9')
    return 1;
  for (const char *q = p; *q; q++)
    if (*q < '0' || *q > '9')
      return 1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno == ERANGE)
    return 2;
  *out = (int64_t)v;
  return 0;
}

static int parse_seed(const char *spec, const char *arg, uint32_t *seed, char *err,
                      size_t errlen) {
  int64_t v;
  if (!arg) {
    *seed = 1;
    return 0;
  }
  if (parse_int(arg, &v) != 0 || v < 0 || v > 4294967295)
    return fail(err, errlen, "bad seed '%s' in '%s': the seed is an integer from 0 to 4294967295",
                arg, spec);
  *seed = (uint32_t)v;
  return 0;
}

/* ---- generators ---- */

#define CHUNK 4096

/* np.random.rand(n) or randn(n); for a complex array the real parts are
** those draws and the imaginary parts the next n, as
** rand(n) + 1j*rand(n) draws them (the real parts are a real array's). */
static void gen_rand(HostArray *a, uint32_t seed, bool normal) {
  Mt19937 st;
  double buf[CHUNK];
  mt_seed(&st, seed);
  bool cplx = elem_kind(a->dtype) == EK_COMPLEX;
  jitc_dtype part = elem_part_type(a->dtype);
  for (int imag = 0; imag <= (int)cplx; imag++) {
    for (int64_t at = 0; at < a->n; at += CHUNK) {
      int64_t k = a->n - at < CHUNK ? a->n - at : CHUNK;
      for (int64_t i = 0; i < k; i++)
        buf[i] = normal ? mt_gauss(&st) : mt_double(&st);
      if (!cplx)
        store_f64(a, at, buf, k);
      else
        for (int64_t i = 0; i < k; i++)
          elem_set_float(a->data, part, 2 * (at + i) + imag, buf[i]);
    }
  }
}

/* np.linspace(lo, hi, n), float64: the same operations in the same order. */
static void gen_linspace(HostArray *a, double lo, double hi) {
  int64_t n = a->n, div = n - 1;
  double delta = hi - lo;
  double step = div > 0 ? delta / (double)div : NAN;
  double buf[CHUNK];
  for (int64_t at = 0; at < n; at += CHUNK) {
    int64_t k = n - at < CHUNK ? n - at : CHUNK;
    for (int64_t i = 0; i < k; i++) {
      double y = (double)(at + i);
      if (div > 0) {
        if (step == 0.0)
          y = y / (double)div * delta; /* NumPy's path for denormal steps */
        else
          y = y * step;
      } else {
        y = y * delta;
      }
      y += lo;
      if (div > 0 && at + i == n - 1)
        y = hi;
      buf[i] = y;
    }
    store_f64(a, at, buf, k);
  }
}

static void fill_f64(HostArray *a, double v) {
  if (a->n == 0)
    return;
  elem_set_float(a->data, a->dtype, 0, v);
  elem_fill(a->data, a->dtype, a->n);
}

/* Fills with one int64 value (a uint64's bits): the first element is cast
** as astype does, and then copied (10M ones is the default input). */
static void fill_i64(HostArray *a, int64_t v) {
  if (a->n == 0)
    return;
  elem_set_int(a->data, a->dtype, 0, v);
  elem_fill(a->data, a->dtype, a->n);
}

bool gen_parse_complex(const char *s, double *re, double *im) {
  char buf[128];
  size_t n = strlen(s);
  if (n >= 2 && s[0] == '(' && s[n - 1] == ')') {
    s++;
    n -= 2;
  }
  if (n == 0 || n >= sizeof buf || (s[n - 1] != 'j' && s[n - 1] != 'J'))
    return false;
  memcpy(buf, s, n - 1);
  buf[n - 1] = '\0';
  /* The sign that starts the imaginary part: the last one after the first
  ** character that is not an exponent's. */
  size_t split = 0;
  for (size_t k = 1; k + 1 < n; k++)
    if ((buf[k] == '+' || buf[k] == '-') && buf[k - 1] != 'e' && buf[k - 1] != 'E')
      split = k;
  const char *imag = buf + split;
  double r = 0.0, v;
  if (!*imag || !strcmp(imag, "+") || !strcmp(imag, "-"))
    v = *imag == '-' ? -1.0 : 1.0;
  else if (!parse_double(imag, &v))
    return false;
  if (split) {
    buf[split] = '\0';
    if (!parse_double(buf, &r))
      return false;
  }
  *re = r;
  *im = v;
  return true;
}

/* A decimal integer above INT64_MAX that fits uint64, as its bits. */
static bool parse_big_uint(const char *s, int64_t *out) {
  if (*s == '+')
    s++;
  if (*s < '0' || *s > '9' || strspn(s, "0123456789") != strlen(s))
    return false;
  errno = 0;
  unsigned long long u = strtoull(s, NULL, 10);
  if (errno == ERANGE)
    return false;
  uint64_t w = u;
  memcpy(out, &w, sizeof *out);
  return true;
}

int gen_fill(HostArray *a, const char *spec, char *err, size_t errlen) {
  if (!a || (unsigned)a->dtype >= JITC_NDTYPES || a->n < 0 || (a->n > 0 && !a->data))
    return fail(err, errlen, "gen_fill: bad array");
  if (!spec)
    spec = "";
  const char *colon = strchr(spec, ':');
  const char *arg = colon ? colon + 1 : NULL;

  if (name_is(spec, "ones") || name_is(spec, "zeros") || name_is(spec, "arange")) {
    if (arg)
      return fail(err, errlen, "'%s' takes no argument: %s", spec, USAGE);
    if (name_is(spec, "arange")) {
      for (int64_t i = 0; i < a->n; i++)
        elem_set_int(a->data, a->dtype, i, i);
    } else {
      fill_i64(a, name_is(spec, "ones") ? 1 : 0);
    }
    return 0;
  }
  if (name_is(spec, "rand") || name_is(spec, "randn")) {
    uint32_t seed = 1;
    if (parse_seed(spec, arg, &seed, err, errlen) != 0)
      return -1;
    gen_rand(a, seed, name_is(spec, "randn"));
    return 0;
  }
  if (name_is(spec, "linspace")) {
    const char *c2 = arg ? strchr(arg, ':') : NULL;
    if (!arg || !c2)
      return fail(err, errlen, "bad input '%s': linspace needs two bounds, as linspace:LO:HI",
                  spec);
    char lo_s[64];
    size_t lo_n = (size_t)(c2 - arg);
    double lo, hi;
    if (lo_n >= sizeof lo_s)
      return fail(err, errlen, "bad number in '%s'", spec);
    memcpy(lo_s, arg, lo_n);
    lo_s[lo_n] = '\0';
    if (!parse_double(lo_s, &lo))
      return fail(err, errlen, "bad number '%s' in '%s': linspace needs LO:HI", lo_s, spec);
    if (!parse_double(c2 + 1, &hi))
      return fail(err, errlen, "bad number '%s' in '%s': linspace needs LO:HI", c2 + 1, spec);
    gen_linspace(a, lo, hi);
    return 0;
  }
  if (name_is(spec, "full")) {
    int64_t iv = 0;
    double dv, im;
    if (!arg || !*arg)
      return fail(err, errlen, "bad input '%s': full needs a value, as full:VALUE", spec);
    if (gen_parse_complex(arg, &dv, &im)) {
      /* np.full(n, 1+2j, float64) drops the imaginary part with a warning;
      ** here it is refused, as a value an integer type cannot hold is. */
      if (elem_kind(a->dtype) != EK_COMPLEX)
        return fail(err, errlen, "full value %s is complex and does not fit %s", arg,
                    jitc_dtype_name(a->dtype));
      if (a->n > 0) {
        elem_set_complex(a->data, a->dtype, 0, dv, im);
        elem_fill(a->data, a->dtype, a->n);
      }
      return 0;
    }
    int isint = parse_int(arg, &iv);
    bool big = isint == 2 && elem_kind(a->dtype) == EK_UINT && parse_big_uint(arg, &iv);
    bool integer_type = elem_kind(a->dtype) == EK_SINT || elem_kind(a->dtype) == EK_UINT;
    if (!strcmp(arg, "True") || !strcmp(arg, "true")) {
      fill_i64(a, 1);
    } else if (!strcmp(arg, "False") || !strcmp(arg, "false")) {
      fill_i64(a, 0);
    } else if ((isint == 2 && !big && integer_type) ||
               ((isint == 0 || big) && !elem_int_fits(a->dtype, iv, big))) {
      /* As np.full(n, VALUE, dtype): an integer that does not fit is an
      ** error (NumPy's OverflowError) rather than a silent wrap. */
      return fail(err, errlen, "full value %s does not fit %s", arg, jitc_dtype_name(a->dtype));
    } else if (isint == 0 || big) {
      fill_i64(a, iv);
    } else if (parse_double(arg, &dv)) {
      fill_f64(a, dv);
    } else {
      return fail(err, errlen, "bad number '%s' in '%s' (full:VALUE, for %s)", arg, spec,
                  jitc_dtype_name(a->dtype));
    }
    return 0;
  }
  char shown[80];
  snprintf(shown, sizeof shown, "%s", spec);
  return fail(err, errlen, "unknown input '%s': %s", shown, USAGE);
}
