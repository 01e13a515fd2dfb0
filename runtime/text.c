/*
** text.c -- building text: a growable string (Buf), the shortest decimal
** form of a float, and a hash of bytes.
*/
#include "runtime.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool buf_reserve(Buf *b, size_t extra) {
  if (b->oom)
    return false;
  if (b->len + extra + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void buf_putn(Buf *b, const char *s, size_t n) {
  if (!buf_reserve(b, n))
    return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void buf_putc(Buf *b, char c) { buf_putn(b, &c, 1); }
void buf_puts(Buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || !buf_reserve(b, (size_t)n))
    return;
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *buf_steal(Buf *b) {
  char *s = b->s;
  if (b->oom) {
    free(s);
    s = NULL;
  } else if (!s) {
    s = calloc(1, 1);
  }
  *b = (Buf){0};
  return s;
}

void buf_free(Buf *b) {
  free(b->s);
  *b = (Buf){0};
}


uint64_t hash64_update(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t k = 0; k < n; k++) {
    h ^= p[k];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t hash64(const void *data, size_t n, uint64_t seed) {
  return hash64_update(0xcbf29ce484222325ull ^ seed, data, n);
}

/* ---- shortest round-trip formatting ---- */

static bool reads_back(const char *s, double x, bool single) {
  return single ? strtof(s, NULL) == (float)x : strtod(s, NULL) == x;
}

/* "d.ddde[+-]XX" into its digits and exponent; strip: without trailing zeros. */
static int parse_e(const char *s, char *digits, bool strip) {
  int k = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9')
      digits[k++] = *s;
  while (strip && k > 1 && digits[k - 1] == '0')
    k--;
  digits[k] = '\0';
  return *s == 'e' ? atoi(s + 1) : 0;
}

/* The correctly rounded %.*e text for 1, 2, ... digits until it reads back;
** at a power of two the interval of values that read back is lopsided, so
** the neighbours of the rounded digits are tried too (as Dragon4 does: it
** keeps the closest candidate inside the interval). */
int fmt_digits(double x, bool single, char *digits, int *prec) {
  int maxp = single ? 9 : 17;
  char buf[64];
  for (int p = 1; p < maxp; p++) {
    *prec = p;
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (reads_back(buf, x, single))
      return parse_e(buf, digits, true);
    /* The neighbours of the rounded p digits. */
    char rd[24];
    int rexp = parse_e(buf, rd, false);
    uint64_t m = strtoull(rd, NULL, 10);
    for (int dir = -1; dir <= 1; dir += 2) {
      if (dir < 0 && m <= 1)
        continue;
      uint64_t mm = dir < 0 ? m - 1 : m + 1;
      char cand[64];
      snprintf(cand, sizeof cand, "%" PRIu64 "e%d", mm, rexp - (p - 1));
      if (reads_back(cand, x, single)) {
        int len = snprintf(buf, sizeof buf, "%" PRIu64 "e0", mm);
        /* 999 + 1 = 1000 gains a digit: the exponent moves with it. */
        return parse_e(buf, digits, true) + rexp + (len - 2 - p);
      }
    }
  }
  *prec = maxp; /* maxp digits always read back */
  snprintf(buf, sizeof buf, "%.*e", maxp - 1, x);
  return parse_e(buf, digits, true);
}

/* Python-like: "2.0", "0.1", "1e+20", "nan", "inf", "-0.0". */
static void fmt_finish(char *buf) {
  if (!strpbrk(buf, ".eninf"))
    strcat(buf, ".0");
}

/* The fewest significant digits that read back as v, in double or (single)
** float precision, spelled as %g spells them at that precision. */
static void fmt_shortest(char *buf, double v, bool single) {
  if (isnan(v)) {
    strcpy(buf, "nan");
    return;
  }
  if (isinf(v)) {
    strcpy(buf, v < 0 ? "-inf" : "inf");
    return;
  }
  char *p = buf;
  if (signbit(v))
    *p++ = '-';
  if (v == 0) {
    strcpy(p, "0.0");
    return;
  }
  char d[24];
  int prec, exp = fmt_digits(fabs(v), single, d, &prec), n = (int)strlen(d);
  if (exp < -4 || exp >= prec) { /* d.ddde+XX */
    *p++ = d[0];
    if (n > 1)
      p += sprintf(p, ".%s", d + 1);
    sprintf(p, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  } else if (exp >= 0) { /* ddd.ddd */
    for (int i = 0; i <= exp; i++)
      *p++ = i < n ? d[i] : '0';
    if (n > exp + 1)
      p += sprintf(p, ".%s", d + exp + 1);
    *p = '\0';
  } else { /* 0.000ddd */
    p += sprintf(p, "0.");
    for (int i = 0; i < -exp - 1; i++)
      *p++ = '0';
    sprintf(p, "%s", d);
  }
  fmt_finish(buf);
}

void fmt_double(char *buf, double v) { fmt_shortest(buf, v, false); }
void fmt_float(char *buf, float v) { fmt_shortest(buf, (double)v, true); }
