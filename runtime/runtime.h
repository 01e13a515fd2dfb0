/*
** runtime.h -- support below the compiler, shared by the library and the
** command line: building text, the host, the thread pool and the CUDA
** loader.  Nothing here knows the compiler or includes its headers.
** Functions that can fail return 0 on success and -1 on failure, with a
** message in err[errlen] that names the file and the problem.
*/
#ifndef JITC_RUNTIME_H
#define JITC_RUNTIME_H

#include "../src/jitc.h"

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

#define NPY_MAXDIMS 32

/* An array in host memory with its shape. */
typedef struct HostArray {
  jitc_dtype dtype;
  int ndim;
  int64_t shape[NPY_MAXDIMS];
  bool fortran;  /* column-major (processed flat in memory order) */
  int64_t n;     /* number of elements (product of shape) */
  void *data;    /* 64-byte aligned, freed by host_array_free */
} HostArray;

/* Allocates n elements of dtype, 64-byte aligned, 1-D shape {n}; -1 on
** out of memory (or a size that overflows). */
int host_array_alloc(HostArray *a, jitc_dtype dtype, int64_t n, char *err, size_t errlen);
void host_array_free(HostArray *a);

/* ---- npy.c ---- */

/* Reads a .npy file (format 1.0, 2.0, 3.0; little-endian or '|'; C or
** Fortran order; the five dtypes).  Never reads past the validated data. */
int npy_read(const char *path, HostArray *out, char *err, size_t errlen);

/* Writes a .npy file (format 1.0, or 2.0 when the header needs it) to a
** temporary file in the same directory, then renames it over `path`. */
int npy_write(const char *path, const HostArray *a, char *err, size_t errlen);

/* ---- gen.c: generated inputs ---- */

/* Fills a (already allocated) from SPEC: ones, zeros, arange,
** linspace:LO:HI, full:VALUE, rand[:SEED], randn[:SEED].  rand and randn are
** bit-exact with np.random.seed(SEED); np.random.rand(n) / randn(n) (float64,
** then cast to the dtype as NumPy's astype does).  Default seed 1. */
int gen_fill(HostArray *a, const char *spec, char *err, size_t errlen);

/* True if spec names a generator (as opposed to a file). */
bool gen_is_spec(const char *spec);

/* NumPy's legacy MT19937 random state. */
typedef struct Mt19937 {
  uint32_t key[624];
  int pos;
  bool has_gauss;
  double gauss;
} Mt19937;
void mt_seed(Mt19937 *st, uint32_t seed);
uint32_t mt_next32(Mt19937 *st);
double mt_double(Mt19937 *st);  /* np.random.rand */
double mt_gauss(Mt19937 *st);   /* np.random.randn (legacy polar method) */

/* ---- format.c: NumPy-style printing ---- */

/* A NumPy-style one-line summary of a 1-D array, malloc'ed:
** "[2. 2. 2. ... 2. 2. 2.]" -- summarised with "..." above 1000 elements,
** 3 at each end, as NumPy does; elements separated by one space (no
** padding); each float the shortest text that reads back as the same value
** of its dtype (float32 as float32), with NumPy's spellings: "2." for
** integral values, "nan", "inf", "-inf", "-0.", exponent form like NumPy's
** repr ("1e+20", "1.5e-07") where NumPy's scalar repr uses it; bools
** "True"/"False"; ints in decimal.  Example for float32:
** "[5.0750957 0.5423974 0.58968204 0.34199178 2.3759744]". */
char *format_array(const void *data, jitc_dtype dtype, int64_t n);

/* One value in the same spelling as format_array uses for elements. */
char *format_value(const void *elem, jitc_dtype dtype);

/* ---- pool.c: persistent worker threads ---- */

typedef struct Pool Pool;
/* nthreads <= 0: all cores.  NULL on failure. */
Pool *pool_new(int nthreads);
void pool_free(Pool *p);
int pool_threads(const Pool *p);
/* Runs fn over [0, n) split into chunks whose boundaries are multiples of
** `align` elements, on up to `threads` threads (including the caller);
** returns when all are done.  One thread does everything when n is small. */
void pool_run(Pool *p, int threads, int64_t n, int64_t align,
              void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

#endif
