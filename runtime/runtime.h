/*
** runtime.h -- execution support shared by the CLI, the library and the
** targets: .npy files, input generators, NumPy-style printing, the thread
** pool and the CUDA loader.  Nothing here knows about the compiler.
** Functions that can fail return 0 on success and -1 on failure, with a
** message in err[errlen] that names the file and the problem.
*/
#ifndef JITC_RUNTIME_H
#define JITC_RUNTIME_H

#include "../src/jitc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- cache.c: the on-disk compile cache (shared by the cpu and cuda targets) ---- */

/* The cache directory: `dir` if not NULL, else $JITC_CACHE_DIR, else
** $XDG_CACHE_HOME/jitc, else ~/.cache/jitc.  Created with mode 0700; a
** directory writable by other users is refused (-1 with the reason). */
int cache_dir_resolve(const char *dir, char *out, size_t outlen, char *err, size_t errlen);

/* Looks up `key` (any bytes) in namespace `ns` ("cpu", "cuda").  Returns 1
** with a malloc'ed copy of the payload in *data, *len on a hit; 0 on a miss.
** An entry whose header, key or checksum does not match is removed and is a
** miss: it is never returned. */
int cache_load(const char *dir, const char *ns, const void *key, size_t keylen,
               void **data, size_t *len);

/* Stores the payload under `key` atomically (temporary file, rename).
** Returns 0, or -1 (the cache is best effort: callers go on without it). */
int cache_store(const char *dir, const char *ns, const void *key, size_t keylen,
                const void *data, size_t len);

/* ---- timer ---- */
double rt_now_ms(void);

#endif
