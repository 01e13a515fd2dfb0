/*
** move.c -- blocks of elements moved between an array of any strides and
** a contiguous buffer, as NumPy's buffered iterator moves them
** (numpy/core/src/multiarray/nditer_*.c): whether a block is used in place,
** and the gathers and scatters of the rest, rows at a time, a transposed
** array's whole rows at a time in tiles (tiles.c writes the cpu target's
** bands of them).  The Layout is layout.c's.
*/
#include "layout.h"

#include <string.h>

/* The index of element lo along each axis, and its byte offset. */
static int64_t unravel(const Layout *L, const LayoutArray *x, int64_t lo, int64_t *idx) {
  int64_t off = 0;
  for (int d = L->ndim - 1; d >= 0; d--) {
    idx[d] = lo % L->shape[d];
    lo /= L->shape[d];
    off += idx[d] * x->strides[d];
  }
  return off;
}

/* Whether elements [lo, lo + m) of x lie inside one of its runs of `run`
** elements (0: it has none), with element lo aligned to its size where
** `aligned`; if so *at is element lo's address. */
static bool in_run(const Layout *L, const LayoutArray *x, int64_t run, bool aligned, int64_t lo,
                   int64_t m, char **at) {
  if (!run || lo / run != (lo + m - 1) / run) return false;
  int64_t idx[JITC_MAXDIMS];
  char *p = x->base + unravel(L, x, lo, idx);
  if (aligned && (uintptr_t)p % x->esize) return false;
  *at = p;
  return true;
}

bool layout_block(const Layout *L, int j, int64_t lo, int64_t m, char **at) {
  const LayoutArray *x = &L->a[j];
  if (x->direct) {
    *at = x->base + lo * (int64_t)x->esize;
    return true;
  }
  /* One of the array's contiguous runs; one element is a run of itself. */
  return in_run(L, x, m > 1 ? x->run : 1, true, lo, m, at);
}

bool layout_const(const Layout *L, int j, int64_t lo, int64_t m, char **at) {
  return in_run(L, &L->a[j], L->a[j].zrun, false, lo, m, at);
}

bool layout_every2(const Layout *L, int j, int64_t lo, int64_t m, char **at) {
  const LayoutArray *x = &L->a[j];
  int last = L->ndim - 1;
  return x->strides[last] == 2 * (int64_t)x->esize && in_run(L, x, L->shape[last], true, lo, m, at);
}

/* Fills m elements of `size` bytes at buf with the one at mem (a
** broadcast axis): the element, then the filled part copied after itself,
** so that the C library's memcpy does the work in vector moves. */
static void fill_run(const char *mem, char *buf, int64_t m, size_t size) {
  size_t have = size, total = (size_t)m * size;
  memcpy(buf, mem, size);
  while (have < total) {
    size_t more = have < total - have ? have : total - have;
    memcpy(buf + have, buf, more);
    have += more;
  }
}

/* Copies m elements of `size` bytes from src, step ss, to dst, step ds;
** a fixed size per case, so that each memcpy is one move (memcpy, not a
** typed load: an element may be unaligned). */
static void copy_steps(char *dst, int64_t ds, const char *src, int64_t ss, int64_t m,
                       size_t size) {
  /* Every other element (`a[::2]`), aligned: typed loads the compiler
  ** makes vector shuffles of. */
  if (ds == (int64_t)size && ss == 2 * (int64_t)size && (uintptr_t)src % size == 0 &&
      (uintptr_t)dst % size == 0) {
    switch (size) {
#define EVERY2(T)                                                               \
  {                                                                             \
    const T *s = (const T *)(const void *)src;                                  \
    T *d = (T *)(void *)dst;                                                    \
    for (int64_t e = 0; e < m; e++) d[e] = s[2 * e];                            \
    return;                                                                     \
  }
    case 2: EVERY2(uint16_t)
    case 4: EVERY2(uint32_t)
    case 8: EVERY2(uint64_t)
#undef EVERY2
    default: break;
    }
  }
#define STEPS(S)                                                                \
  for (int64_t e = 0; e < m; e++, dst += ds, src += ss) memcpy(dst, src, S);    \
  return;
  switch (size) {
  case 1: STEPS(1)
  case 2: STEPS(2)
  case 4: STEPS(4)
  case 8: STEPS(8)
  case 16: STEPS(16)
  default: unreachable();
  }
#undef STEPS
}

/* Copies m elements between a run of step `step` at mem and buf, whose
** elements are `bstep` apart: to buf when in, else from it. */
static void copy_run(char *mem, int64_t step, char *buf, int64_t bstep, int64_t m, size_t size,
                     bool in) {
  if (step == (int64_t)size && bstep == (int64_t)size) {
    if (in) memcpy(buf, mem, (size_t)m * size);
    else memcpy(mem, buf, (size_t)m * size);
  } else if (step == 0 && in && bstep == (int64_t)size) {
    fill_run(mem, buf, m, size);
  } else if (in) {
    copy_steps(buf, bstep, mem, step, m, size);
  } else {
    copy_steps(mem, step, buf, bstep, m, size);
  }
}

/* Copies `rows` whole rows of w elements between a transposed run at mem
** (a row's elements s2 bytes apart, the rows s1 apart, |s1| < |s2|) and buf
** (the rows one after the other): to buf when in, else from it.  It goes by
** tiles of T rows by T elements through a tile of its own, the tiles of T
** elements of each row in turn, so that the run is read or written along its
** memory, T elements of a line a time, and buf along its rows.  Element by
** element, each of the run's lines would be fetched once per row of buf,
** which is w * size bytes away from the next, and whose lines the caches
** keep too few of when w is a power of two (4096 floats: 16 KB apart, so
** one set of the first-level cache holds them all).  A memcpy of a fixed
** size per case, as an element may be unaligned. */
enum { T = 16, TR = 64 };
static void tile_run(char *mem, int64_t s1, int64_t s2, char *buf, int64_t rows, int64_t w,
                     size_t size, bool in) {
  for (int64_t c0 = 0; c0 < w; c0 += T) {
    int cw = (int)(w - c0 < T ? w - c0 : T);
    for (int64_t r0 = 0; r0 < rows; r0 += TR) {
      int rh = (int)(rows - r0 < TR ? rows - r0 : TR);
      char *run = mem + r0 * s1 + c0 * s2, *row = buf + ((size_t)r0 * w + c0) * size;
/* Element q of the tile's row k and of buf's, and of the run's: a run
** whose rows are contiguous moves T of them at once, and a whole tile's
** rows with a fixed count, which the compiler unrolls. */
#define BUF(S, op)                                                                      \
  for (int k = 0; k < rh; k++)                                                          \
    if (cw == T)                                                                        \
      for (int q = 0; q < T; q++) op(row + ((size_t)k * w + q) * S, t[q][k], S);        \
    else                                                                                \
      for (int q = 0; q < cw; q++) op(row + ((size_t)k * w + q) * S, t[q][k], S);
#define RUN(S, op)                                                                      \
  for (int q = 0; q < cw; q++)                                                          \
    if (s1 == S && rh == TR)                                                            \
      op(run + q * s2, t[q][0], TR * S);                                                \
    else if (s1 == S)                                                                   \
      op(run + q * s2, t[q][0], (size_t)rh * S);                                        \
    else                                                                                \
      for (int k = 0; k < rh; k++) op(run + k * s1 + q * s2, t[q][k], S);
#define TO(dst, src, n) memcpy(dst, src, n)
#define FROM(src, dst, n) memcpy(dst, src, n)
#define TILE(S)                                                                         \
  {                                                                                     \
    unsigned char t[T][TR][S]; /* t[q][k]: element q of row k */                        \
    if (in) {                                                                           \
      RUN(S, FROM)                                                                      \
      BUF(S, TO)                                                                        \
    } else {                                                                            \
      BUF(S, FROM)                                                                      \
      RUN(S, TO)                                                                        \
    }                                                                                   \
    break;                                                                              \
  }
      switch (size) {
      case 1: TILE(1)
      case 2: TILE(2)
      case 4: TILE(4)
      case 8: TILE(8)
      case 16: TILE(16)
      default: unreachable();
      }
#undef TILE
#undef BUF
#undef RUN
#undef TO
#undef FROM
    }
  }
}

/* An array written with stores past the caches: one of STREAM bytes or
** more, far more than a core's caches keep, so that the lines written are
** read again from memory whatever the stores do. */
#define STREAM (16 << 20)

/* Moves elements [lo, lo + m) of array j to or from buf, a row at a time,
** or, where the array's rows step less than their elements (a transposed
** view), whole rows of it at a time in tiles. */
static void move(const Layout *L, int j, int64_t lo, int64_t m, char *buf, bool in) {
  const LayoutArray *x = &L->a[j];
  if (x->direct) {
    copy_run(x->base + lo * (int64_t)x->esize, (int64_t)x->esize, buf, (int64_t)x->esize, m,
             x->esize, in);
    return;
  }
  int last = L->ndim - 1;
  int64_t idx[JITC_MAXDIMS];
  int64_t off = unravel(L, x, lo, idx);
  int64_t w = L->shape[last], es = (int64_t)x->esize;
  bool tiles = last > 0 && x->strides[last - 1] &&
               stride_mag(x->strides[last - 1]) < stride_mag(x->strides[last]);
  while (m > 0) {
    int64_t rows = 0;
    if (tiles && idx[last] == 0) {
      rows = m / w;
      if (rows > L->shape[last - 1] - idx[last - 1]) rows = L->shape[last - 1] - idx[last - 1];
    }
    int d = last; /* the axis that advanced */
    if (rows > 1) {
      bool stream = (uint64_t)L->n >= STREAM / x->esize;
      if (in || !L->bands || x->strides[last - 1] != es ||
          !tiles_scatter(x->base + off, x->strides[last], buf, rows, w, x->esize, stream,
                         L->vec))
        tile_run(x->base + off, x->strides[last - 1], x->strides[last], buf, rows, w, x->esize,
                 in);
      buf += (size_t)(rows * w) * x->esize;
      m -= rows * w;
      off += rows * x->strides[last - 1];
      idx[last - 1] += rows;
      d = last - 1;
    } else {
      int64_t r = w - idx[last];
      if (r > m) r = m;
      copy_run(x->base + off, x->strides[last], buf, es, r, x->esize, in);
      buf += (size_t)r * x->esize;
      m -= r;
      off += r * x->strides[last];
      idx[last] += r;
    }
    /* The odometer's carry from axis d outwards. */
    for (; d > 0 && idx[d] == L->shape[d]; d--) {
      off -= idx[d] * x->strides[d];
      idx[d] = 0;
      idx[d - 1]++;
      off += x->strides[d - 1];
    }
  }
}

int64_t layout_phase(const Layout *L, int64_t bl) {
  int last = L->ndim - 1;
  for (int j = 0; j < L->narrays && last > 0; j++) {
    const LayoutArray *x = &L->a[j];
    if (!x->written || x->direct || x->strides[last - 1] != (int64_t)x->esize ||
        stride_mag(x->strides[last]) <= (uint64_t)x->esize || 64 % x->esize)
      continue;
    /* The first row whose element 0 starts a line, as an element of k. */
    int64_t row = (int64_t)((64 - (uintptr_t)x->base % 64) % 64 / x->esize);
    return (bl - row * L->shape[last] % bl) % bl;
  }
  return 0;
}

void layout_gather(const Layout *L, int j, int64_t lo, int64_t m, void *dst) {
  move(L, j, lo, m, dst, true);
}

void layout_scatter(const Layout *L, int j, int64_t lo, int64_t m, const void *src) {
  move(L, j, lo, m, (char *)src, false);
}
