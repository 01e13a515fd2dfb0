/*
** text.c -- building text: a growable string (Buf), the shortest decimal
** form of a float, and a hash of bytes.
*/
#include "runtime.h"

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

/* Python-like: "2.0", "0.1", "1e+20", "nan", "inf", "-0.0". */
static void fmt_finish(char *buf) {
  if (!strpbrk(buf, ".eninf"))
    strcat(buf, ".0");
}

/* The fewest significant digits that read back as v, in double or (single)
** float precision. */
static void fmt_shortest(char *buf, double v, bool single) {
  if (isnan(v)) {
    strcpy(buf, "nan");
    return;
  }
  if (isinf(v)) {
    strcpy(buf, v < 0 ? "-inf" : "inf");
    return;
  }
  for (int prec = 1; prec <= (single ? 9 : 17); prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
      break;
  }
  fmt_finish(buf);
}

void fmt_double(char *buf, double v) { fmt_shortest(buf, v, false); }
void fmt_float(char *buf, float v) { fmt_shortest(buf, (double)v, true); }

