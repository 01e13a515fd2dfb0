/*
** util.c -- small support code every stage uses: the per-compile arena, a
** growable string buffer, a monotonic clock, a hash, shortest round-trip
** number formatting, and the operator table's data.
*/
#include "jitc_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void internal_error(const char *file, int line, const char *what) {
  fprintf(stderr, "jitc: internal error at %s:%d: %s\n", file, line, what);
  abort();
}

/* ---- the operator table ---- */

const OpInfo op_info[OP_COUNT] = {
#define OP(id, name, arity, rule) {name, arity, rule},
#include "ops.h"
#undef OP
};

int op_lookup_function(const char *name, size_t len, jitc_dtype *cast_to) {
  static const struct {
    const char *name;
    int op;
    int cast;
  } fns[] = {
#define FN(name, id) {name, OP_##id, -1},
#define CAST(name, dt) {name, OP_CAST, dt},
#include "ops.h"
#undef FN
#undef CAST
  };
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
    if (strlen(fns[k].name) == len && memcmp(fns[k].name, name, len) == 0) {
      if (fns[k].cast >= 0 && cast_to)
        *cast_to = (jitc_dtype)fns[k].cast;
      return fns[k].op;
    }
  }
  return -1;
}

/* ---- arena ---- */

/* Blocks are chained; big requests get a block of their own. */
typedef struct Block {
  struct Block *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} Block;

struct Arena {
  Block *head;
  bool failed;
};

Arena *arena_new(void) { return calloc(1, sizeof(Arena)); }

void arena_free(Arena *a) {
  if (!a)
    return;
  for (Block *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0)
    size = 16;
  Block *b = a->head;
  if (!b || b->size - b->used < size) {
    size_t bsize = size > 16384 ? size : 16384;
    b = malloc(sizeof(Block) + bsize);
    if (!b) {
      a->failed = true;
      return NULL;
    }
    b->used = 0;
    b->size = bsize;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Buf b = {0};
  buf_vprintf(&b, fmt, ap);
  va_end(ap);
  char *p = b.oom ? NULL : arena_strndup(a, b.s ? b.s : "", b.len);
  if (!p)
    a->failed = true;
  buf_free(&b);
  return p;
}

bool arena_failed(const Arena *a) { return a->failed; }

/* ---- Buf ---- */

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

/* ---- clock, hash ---- */

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint64_t hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t k = 0; k < n; k++) {
    h ^= p[k];
    h *= 0x100000001b3ull;
  }
  return h;
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
    /* The sign is kept: the text is also the compile cache key, where
    ** nan and -nan (copysign(1.0, -nan)) are different programs. */
    strcpy(buf, signbit(v) ? "-nan" : "nan");
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
