/*
** util.c -- the per-compile arena (everything of one compile, freed in one
** call) and the report of internal errors.
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
