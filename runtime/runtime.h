/*
** runtime.h -- support below the compiler, shared by the library and the
** command line: building text, the host, the thread pool and the CUDA
** loader.  Nothing here knows the compiler or includes its headers (what
** only the command line uses -- .npy files, generators, printing -- is in
** cli/).
** Functions that can fail return 0 on success and -1 on failure, with a
** message in err[errlen] that names the file and the problem.
*/
#ifndef JITC_RUNTIME_H
#define JITC_RUNTIME_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF(f, a)
#endif

/* ---- text.c ---- */

/* A growable string on the heap.  A failed allocation sets `oom` and the
** buffer stops growing; the text stays NUL-terminated. */
typedef struct Buf {
  char *s;
  size_t len, cap;
  bool oom;
} Buf;
void buf_putc(Buf *b, char c);
void buf_puts(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...) PRINTF(2, 3);
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
char *buf_steal(Buf *b); /* the malloc'ed text (never NULL unless oom); b is reset */
void buf_free(Buf *b);

/* Shortest text that reads back as the same value ("2.5", "0.1", "inf",
** "nan", "-0.0"); float32 values are shortest as float32.  buf >= 32 bytes. */
void fmt_double(char *buf, double v);
void fmt_float(char *buf, float v);
/* The digits behind them, for other spellings (cli/format.c): the fewest
** significant digits that read back as x (finite, > 0) in double or single
** precision, into digits (>= 24 bytes, no trailing zeros), as d1.d2d3... x
** 10^(the result); *prec gets the precision that found them (%.*g's). */
int fmt_digits(double x, bool single, char *digits, int *prec);

/* FNV-1a 64 of data, its start varied by seed; hash64_update goes on from
** a hash already made (hash64 of a then b == hash64_update(hash64(a), b)). */
uint64_t hash64(const void *data, size_t n, uint64_t seed);
uint64_t hash64_update(uint64_t h, const void *data, size_t n);

/* ---- hostinfo.c ---- */

double now_ms(void);   /* monotonic clock in milliseconds */
int host_ncores(void); /* online cores, at least 1 */
/* The CPU's model name / feature flags from /proc/cpuinfo; false (and "")
** where there is none. */
bool host_cpu_model(char *out, size_t n);
bool host_cpu_flags(char *out, size_t n);

/* ---- pool.c: persistent worker threads ---- */

typedef struct Pool Pool;
/* nthreads <= 0: all cores.  NULL on failure. */
Pool *pool_new(int nthreads);
void pool_free(Pool *p);
int pool_threads(const Pool *p);
/* Runs fn over [0, n) split into chunks whose boundaries are multiples of
** `align` elements, on up to `threads` threads (including the caller);
** returns when all are done, with the number of threads that took part (0
** when n is 0).  One thread does everything when n is small. */
int pool_run(Pool *p, int threads, int64_t n, int64_t align,
             void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

#endif
