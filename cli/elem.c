/*
** elem.c -- one element of any type, as the command line handles it: its
** kind, its value read as a number, a number written into it the way
** NumPy's astype converts, and the list of the types for messages.
**
** What a type is comes from the library's table through jitc.h alone: the
** kind is the letter of its typestr ('b', 'i', 'u', 'f', 'c'), the width its
** size.  The one type NumPy has no letter for is ml_dtypes' bfloat16 (its
** typestr is '<V2', a bare two bytes): it is a float, decoded as the upper
** half of a float32.  A complex element is two floats of half its size,
** the real part first (NumPy's layout): complex64's parts are float32.
**
** Conversions follow astype where NumPy defines the result: integers wrap
** modulo 2^bits, floats round to nearest even, float64 -> float16 directly
** (NumPy's npy_double_to_half), anything -> bfloat16 through float32 (what
** ml_dtypes does, so np.float64(x).astype(bfloat16) may round twice), a
** real value -> complex as the real part of the part type (int64 ->
** complex64 rounds once, as to float32), with an imaginary part of 0.  A
** float out of an integer type's range is undefined in C and machine-
** dependent in NumPy: here it saturates, negatives give 0 for unsigned
** types and NaN gives 0, the language's rule.
*/
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

ElemKind elem_kind(jitc_dtype t) {
  const char *ts = jitc_dtype_typestr(t);
  switch (ts ? ts[1] : 0) {
  case 'b': return EK_BOOL;
  case 'i': return EK_SINT;
  case 'u': return EK_UINT;
  case 'c': return EK_COMPLEX;
  default: return EK_FLOAT; /* 'f', and bfloat16's 'V' */
  }
}

jitc_dtype elem_part_type(jitc_dtype t) {
  if (elem_kind(t) != EK_COMPLEX)
    return t;
  for (int u = 0; u < JITC_NDTYPES; u++) {
    const char *ts = jitc_dtype_typestr((jitc_dtype)u);
    if (ts && ts[1] == 'f' && 2 * jitc_dtype_size((jitc_dtype)u) == jitc_dtype_size(t))
      return (jitc_dtype)u;
  }
  return t; /* not reached: the table has the float type of each complex one */
}

int elem_mant_bits(jitc_dtype t) {
  t = elem_part_type(t);
  switch (jitc_dtype_size(t)) {
  case 2: return t == JITC_BFLOAT16 ? 8 : 11;
  case 4: return 24;
  default: return 53;
  }
}

/* ---- the 16-bit floats ---- */

uint16_t f16_from_double(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  uint16_t sign = (uint16_t)(b >> 48 & 0x8000u);
  uint64_t a = b & ~(1ull << 63);
  if (a >= 0x7ff0000000000000ull) /* NaN stays a quiet NaN with its sign */
    return a > 0x7ff0000000000000ull ? (uint16_t)(sign | 0x7e00u | (a >> 42 & 0x3ffu))
                                     : (uint16_t)(sign | 0x7c00u);
  int e = (int)(a >> 52) - 1023;
  if (e >= 16)
    return (uint16_t)(sign | 0x7c00u);
  if (e < -25) /* below half the least subnormal, 2^-25 */
    return sign;
  /* The 53-bit significand, rounded to 11 bits (normal) or to a multiple of
  ** 2^-24 (subnormal); a carry out of the significand moves the exponent
  ** up, to infinity past 65504. */
  uint64_t m = (a & ((1ull << 52) - 1)) | (1ull << 52);
  int shift = 42 + (e < -14 ? -14 - e : 0);
  uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    q++;
  if (e < -14)
    return (uint16_t)(sign | q);
  return (uint16_t)(sign | (((uint32_t)(e + 15) << 10) + (uint32_t)(q - 1024)));
}

float f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = h >> 10 & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float */
    float v = (float)m * 0x1p-24f;
    return sign ? -v : v;
  }
  uint32_t bits = sign | (e == 31 ? 0x7f800000u | m << 13 : (e + 112) << 23 | m << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t bf16_from_float(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  if ((b & 0x7fffffffu) > 0x7f800000u) /* NaN: ml_dtypes' quiet NaN, sign kept */
    return (uint16_t)(b >> 31 ? 0xffc0u : 0x7fc0u);
  return (uint16_t)((b + 0x7fffu + (b >> 16 & 1u)) >> 16);
}

float bf16_to_float(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* ---- reading ---- */

/* The bits of element i, zero-extended. */
static uint64_t load_bits(const void *data, size_t size, int64_t i) {
  const unsigned char *p = (const unsigned char *)data + (size_t)i * size;
  switch (size) {
  case 1: return *p;
  case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

int64_t elem_get_int(const void *data, jitc_dtype t, int64_t i) {
  size_t size = jitc_dtype_size(t);
  uint64_t u = load_bits(data, size, i);
  if (elem_kind(t) == EK_SINT && size < 8 && (u >> (8 * size - 1) & 1))
    u |= ~0ull << (8 * size); /* sign-extend */
  int64_t v;
  memcpy(&v, &u, sizeof v);
  return v;
}

double elem_get(const void *data, jitc_dtype t, int64_t i) {
  size_t size = jitc_dtype_size(t);
  switch (elem_kind(t)) {
  case EK_COMPLEX: return elem_get(data, elem_part_type(t), 2 * i);
  case EK_BOOL: return load_bits(data, 1, i) != 0;
  case EK_SINT: return (double)elem_get_int(data, t, i);
  case EK_UINT: return (double)load_bits(data, size, i);
  default: break;
  }
  uint64_t u = load_bits(data, size, i);
  if (size == 2)
    return t == JITC_BFLOAT16 ? bf16_to_float((uint16_t)u) : f16_to_float((uint16_t)u);
  if (size == 4) {
    uint32_t w = (uint32_t)u;
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
  }
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* ---- writing ---- */

static void store_bits(void *data, size_t size, int64_t i, uint64_t u) {
  unsigned char *p = (unsigned char *)data + (size_t)i * size;
  switch (size) {
  case 1: *p = (unsigned char)u; break;
  case 2: { uint16_t v = (uint16_t)u; memcpy(p, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)u; memcpy(p, &v, 4); break; }
  default: memcpy(p, &u, 8); break;
  }
}

/* The bits of a float value of a float type of the given size. */
static uint64_t float_bits(jitc_dtype t, size_t size, double v) {
  if (size == 2)
    return t == JITC_BFLOAT16 ? bf16_from_float((float)v) : f16_from_double(v);
  if (size == 4) {
    float f = (float)v;
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    return w;
  }
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

void elem_set_complex(void *data, jitc_dtype t, int64_t i, double re, double im) {
  elem_set_float(data, elem_part_type(t), 2 * i, re);
  elem_set_float(data, elem_part_type(t), 2 * i + 1, im);
}

void elem_set_float(void *data, jitc_dtype t, int64_t i, double v) {
  if (elem_kind(t) == EK_COMPLEX) {
    elem_set_complex(data, t, i, v, 0.0);
    return;
  }
  size_t size = jitc_dtype_size(t);
  int bits = 8 * (int)size;
  uint64_t u;
  double x = trunc(v);
  switch (elem_kind(t)) {
  case EK_BOOL:
    u = v != 0.0; /* NaN is True, as in NumPy */
    break;
  case EK_SINT: {
    double lim = ldexp(1.0, bits - 1); /* 2^(bits-1), exact */
    int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    int64_t s = v != v ? 0 : x >= lim ? hi : x < -lim ? -hi - 1 : (int64_t)x;
    memcpy(&u, &s, sizeof u);
    break;
  }
  case EK_UINT: {
    uint64_t hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    u = v != v || x <= 0 ? 0 : x >= ldexp(1.0, bits) ? hi : (uint64_t)x;
    break;
  }
  default:
    u = float_bits(t, size, v);
    break;
  }
  store_bits(data, size, i, u);
}

void elem_set_int(void *data, jitc_dtype t, int64_t i, int64_t v) {
  if (elem_kind(t) == EK_COMPLEX) {
    elem_set_int(data, elem_part_type(t), 2 * i, v);
    elem_set_float(data, elem_part_type(t), 2 * i + 1, 0.0);
    return;
  }
  size_t size = jitc_dtype_size(t);
  uint64_t u;
  switch (elem_kind(t)) {
  case EK_BOOL: u = v != 0; break;
  case EK_SINT:
  case EK_UINT: memcpy(&u, &v, sizeof u); break; /* the low bytes: modulo 2^bits */
  default:
    /* One rounding from the integer (int64 -> float32 directly), then
    ** bfloat16 from that float32 as ml_dtypes does. */
    u = size == 4 || t == JITC_BFLOAT16 ? float_bits(t, size, (float)v)
                                        : float_bits(t, size, (double)v);
    break;
  }
  store_bits(data, size, i, u);
}

double elem_round(jitc_dtype t, double x) {
  unsigned char cell[16];
  elem_set_float(cell, t, 0, x);
  return elem_get(cell, t, 0);
}

bool elem_int_fits(jitc_dtype t, int64_t v, bool big) {
  int bits = 8 * (int)jitc_dtype_size(t);
  switch (elem_kind(t)) {
  case EK_SINT:
    return !big && (bits == 64 || (v >= -((int64_t)1 << (bits - 1)) &&
                                   v < ((int64_t)1 << (bits - 1))));
  case EK_UINT:
    return big ? bits == 64 : v >= 0 && (bits == 64 || v < ((int64_t)1 << bits));
  default:
    return true;
  }
}

void elem_fill(void *data, jitc_dtype t, int64_t n) {
  size_t size = jitc_dtype_size(t);
  /* Doubling copies of the first element. */
  for (int64_t have = 1; have < n; have *= 2) {
    int64_t k = have < n - have ? have : n - have;
    memcpy((char *)data + (size_t)have * size, data, (size_t)k * size);
  }
}

/* ---- the list of the types ---- */

/* The order the types are listed in: by kind, then size (bfloat16 with the
** floats, after float16; the complex types last). */
static int list_rank(jitc_dtype t) {
  return (int)elem_kind(t) * 100 + (int)jitc_dtype_size(t) * 2 + (t == JITC_BFLOAT16);
}

void dtype_list(char *out, size_t outsz, const char *last_sep) {
  jitc_dtype order[JITC_NDTYPES];
  for (int t = 0; t < JITC_NDTYPES; t++) { /* insertion sort: stable */
    int j = t;
    while (j > 0 && list_rank(order[j - 1]) > list_rank((jitc_dtype)t)) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = (jitc_dtype)t;
  }
  size_t k = 0;
  out[0] = '\0';
  for (int j = 0; j < JITC_NDTYPES && k < outsz; j++)
    k += (size_t)snprintf(out + k, outsz - k, "%s%s",
                          j == 0 ? "" : j == JITC_NDTYPES - 1 ? last_sep : ", ",
                          jitc_dtype_name(order[j]));
}
