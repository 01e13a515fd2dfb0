/*
** tiles.c -- a band of rows scattered into a transposed array in tiles of
** lines, at the vector width of the target's level.
**
** The cpu target runs a transposed input along its memory (layout.c's
** memory_order), so the result it writes comes out as a band of rows, one
** after the other in a buffer, that are the columns of the array it must
** reach: row k of the buffer is element k of each of the array's rows.
** move.c hands such a band here.  A tile is K rows of the buffer by K of
** its elements, K = 64 / size (16 floats, 8 doubles): transposed in
** registers, it is a 64-byte line of each of K rows of the array.  The
** tiles of up to four lines of the same K rows are transposed into a block
** on the stack, and then each of those rows gets its four lines in stores
** one after the other, so that the memory system sees runs of 256 bytes
** (a line of each of K rows in turn, 16 KB apart, took a third longer).
** With `stream` (an array too large for the caches to keep) and the lines
** whole, the stores go past the caches (movntps): a line written whole is
** never first read from memory, a third of the traffic of a copy; an
** sfence orders them before any later store, as the thread that joins
** reads them.
**
** The transposes are the shuffles of the widest vectors the level has:
** 4 by 4 floats (2 by 2 doubles) in SSE2, 8 by 8 (4 by 4) in AVX2 and
** 16 by 16 (8 by 8) in AVX-512, each stamped from one loop (WIDE below)
** and compiled for its instruction set alone, so that a host runs the
** variant of the level its kernels were compiled for (Layout.vec), never
** more.  The shuffles, not the memory, set the pace of the SSE2 variant on
** a core that shares its shuffle unit with another: a (4096, 4096) float32
** transpose scattered in 3.6 ms by SSE2, 3.2 by AVX-512, where its stores
** alone take 1.8.
*/
#include "layout.h"

#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_TILES 1
#endif

#ifdef HAVE_TILES
enum { LINE = 64, CHUNK = 4 * LINE };
typedef unsigned char Block[16][CHUNK]; /* Block[q]: up to four lines of row q */

/* A tile of 16 rows of buf (`line` bytes apart) by 16 floats into b[q] at
** byte o, q the element of the rows; kb outside cb, so that the lines of
** four rows are read for all their 16 bytes together. */
static inline void sse_tile4(const char *in, size_t line, Block b, int o) {
  for (int kb = 0; kb < 16; kb += 4)
    for (int cb = 0; cb < 16; cb += 4) {
      const char *p = in + (size_t)kb * line + cb * 4;
      __m128 x0 = _mm_loadu_ps((const float *)(const void *)p),
             x1 = _mm_loadu_ps((const float *)(const void *)(p + line)),
             x2 = _mm_loadu_ps((const float *)(const void *)(p + 2 * line)),
             x3 = _mm_loadu_ps((const float *)(const void *)(p + 3 * line));
      _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
      _mm_store_ps((float *)(void *)(b[cb] + o + kb * 4), x0);
      _mm_store_ps((float *)(void *)(b[cb + 1] + o + kb * 4), x1);
      _mm_store_ps((float *)(void *)(b[cb + 2] + o + kb * 4), x2);
      _mm_store_ps((float *)(void *)(b[cb + 3] + o + kb * 4), x3);
    }
}

static inline void sse_tile8(const char *in, size_t line, Block b, int o) {
  for (int kb = 0; kb < 8; kb += 2)
    for (int cb = 0; cb < 8; cb += 2) {
      const char *p = in + (size_t)kb * line + cb * 8;
      __m128d x0 = _mm_loadu_pd((const double *)(const void *)p),
              x1 = _mm_loadu_pd((const double *)(const void *)(p + line));
      _mm_store_pd((double *)(void *)(b[cb] + o + kb * 8), _mm_unpacklo_pd(x0, x1));
      _mm_store_pd((double *)(void *)(b[cb + 1] + o + kb * 8), _mm_unpackhi_pd(x0, x1));
    }
}

static inline void sse_line(char *out, const unsigned char *from, bool nt) {
  for (int g = 0; g < LINE; g += 16) {
    __m128i v = _mm_load_si128((const __m128i *)(const void *)(from + g));
    if (nt) _mm_stream_si128((__m128i *)(void *)(out + g), v);
    else _mm_storeu_si128((__m128i *)(void *)(out + g), v);
  }
}

__attribute__((target("avx2"))) static inline void avx2_tile4(const char *in, size_t line,
                                                              Block b, int o) {
  for (int kb = 0; kb < 16; kb += 8)
    for (int cb = 0; cb < 16; cb += 8) {
      __m256 r[8], t[8];
      for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps((const float *)(const void *)(in + (size_t)(kb + i) * line + cb * 4));
      for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 2; i++) {
        r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
        r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
      }
      for (int j = 0; j < 4; j++) {
        _mm256_store_ps((float *)(void *)(b[cb + j] + o + kb * 4),
                        _mm256_permute2f128_ps(r[j], r[4 + j], 0x20));
        _mm256_store_ps((float *)(void *)(b[cb + 4 + j] + o + kb * 4),
                        _mm256_permute2f128_ps(r[j], r[4 + j], 0x31));
      }
    }
}

__attribute__((target("avx2"))) static inline void avx2_tile8(const char *in, size_t line,
                                                              Block b, int o) {
  for (int kb = 0; kb < 8; kb += 4)
    for (int cb = 0; cb < 8; cb += 4) {
      const char *p = in + (size_t)kb * line + cb * 8;
      __m256d r0 = _mm256_loadu_pd((const double *)(const void *)p),
              r1 = _mm256_loadu_pd((const double *)(const void *)(p + line)),
              r2 = _mm256_loadu_pd((const double *)(const void *)(p + 2 * line)),
              r3 = _mm256_loadu_pd((const double *)(const void *)(p + 3 * line));
      __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
              t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      double *q0 = (double *)(void *)(b[cb] + o + kb * 8);
      _mm256_store_pd(q0, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_store_pd((double *)(void *)(b[cb + 1] + o + kb * 8), _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_store_pd((double *)(void *)(b[cb + 2] + o + kb * 8), _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_store_pd((double *)(void *)(b[cb + 3] + o + kb * 8), _mm256_permute2f128_pd(t1, t3, 0x31));
    }
}

__attribute__((target("avx2"))) static inline void avx2_line(char *out, const unsigned char *from,
                                                             bool nt) {
  for (int g = 0; g < LINE; g += 32) {
    __m256i v = _mm256_load_si256((const __m256i *)(const void *)(from + g));
    if (nt) _mm256_stream_si256((__m256i *)(void *)(out + g), v);
    else _mm256_storeu_si256((__m256i *)(void *)(out + g), v);
  }
}

/* 16 by 16 floats: pairs of rows interleaved, then pairs of pairs (as
** doubles), then the 128-bit lanes twice. */
__attribute__((target("avx512f"))) static inline void avx512_tile4(const char *in, size_t line,
                                                                   Block b, int o) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; i++)
    r[i] = _mm512_loadu_ps((const float *)(const void *)(in + (size_t)i * line));
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) {
    __m512d a = _mm512_castps_pd(t[4 * i]), c = _mm512_castps_pd(t[4 * i + 2]);
    __m512d e = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(e, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(e, d));
  }
  for (int j = 0; j < 4; j++) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
    t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
  }
  for (int j = 0; j < 4; j++) {
    _mm512_store_ps(b[j] + o, _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88));
    _mm512_store_ps(b[8 + j] + o, _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd));
    _mm512_store_ps(b[4 + j] + o, _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88));
    _mm512_store_ps(b[12 + j] + o, _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd));
  }
}

/* 8 by 8 doubles: a[2i + e], lane L = elements 2L + e of rows 2i, 2i + 1;
** element j = 2L + e of the eight rows is lane L of a[e], a[2 + e],
** a[4 + e] and a[6 + e], gathered by two rounds of lane shuffles. */
__attribute__((target("avx512f"))) static inline void avx512_tile8(const char *in, size_t line,
                                                                   Block b, int o) {
  __m512d r[8], a[8], s[8];
  for (int i = 0; i < 8; i++)
    r[i] = _mm512_loadu_pd((const double *)(const void *)(in + (size_t)i * line));
  for (int i = 0; i < 4; i++) {
    a[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
  }
  for (int e = 0; e < 2; e++) { /* s[4e + h]: lanes h, h + 2 of a[e], a[2 + e] (h < 2), of a[4 + e], a[6 + e] */
    s[4 * e] = _mm512_shuffle_f64x2(a[e], a[2 + e], 0x88);
    s[4 * e + 1] = _mm512_shuffle_f64x2(a[e], a[2 + e], 0xdd);
    s[4 * e + 2] = _mm512_shuffle_f64x2(a[4 + e], a[6 + e], 0x88);
    s[4 * e + 3] = _mm512_shuffle_f64x2(a[4 + e], a[6 + e], 0xdd);
  }
  for (int e = 0; e < 2; e++)
    for (int h = 0; h < 2; h++) { /* element 2L + e for L = h and L = h + 2 */
      _mm512_store_pd(b[2 * h + e] + o, _mm512_shuffle_f64x2(s[4 * e + h], s[4 * e + 2 + h], 0x88));
      _mm512_store_pd(b[2 * h + 4 + e] + o, _mm512_shuffle_f64x2(s[4 * e + h], s[4 * e + 2 + h], 0xdd));
    }
}

__attribute__((target("avx512f"))) static inline void avx512_line(char *out,
                                                                  const unsigned char *from, bool nt) {
  __m512i v = _mm512_load_si512(from);
  if (nt) _mm512_stream_si512((void *)out, v);
  else _mm512_storeu_si512(out, v);
}

/* The whole tiles: kr rows of buf by cw of its elements (multiples of K),
** into the array's rows at mem, s2 bytes apart. */
#define WIDE(name, isa, tile4, tile8, line_out)                                                 \
  isa static void name(char *mem, int64_t s2, const char *buf, int64_t kr, int64_t cw,         \
                       size_t line, size_t size, bool nt) {                                     \
    _Alignas(64) Block b;                                                                       \
    int64_t K = LINE / (int64_t)size, ck = CHUNK / (int64_t)size;                               \
    for (int64_t c0 = 0; c0 < cw; c0 += K)                                                      \
      for (int64_t k0 = 0; k0 < kr; k0 += ck) {                                                 \
        int64_t m = kr - k0 < ck ? kr - k0 : ck;                                                \
        const char *in = buf + (size_t)k0 * line + (size_t)c0 * size;                           \
        for (int64_t k = 0; k < m; k += K)                                                      \
          if (size == 4) tile4(in + (size_t)k * line, line, b, (int)k * 4);                     \
          else tile8(in + (size_t)k * line, line, b, (int)k * 8);                               \
        for (int64_t q = 0; q < K; q++) {                                                       \
          char *out = mem + (c0 + q) * s2 + k0 * (int64_t)size;                                 \
          for (int64_t g = 0; g < m * (int64_t)size; g += LINE) line_out(out + g, b[q] + g, nt); \
        }                                                                                       \
      }                                                                                         \
  }
WIDE(sse_tiles, , sse_tile4, sse_tile8, sse_line)
WIDE(avx2_tiles, __attribute__((target("avx2"))), avx2_tile4, avx2_tile8, avx2_line)
WIDE(avx512_tiles, __attribute__((target("avx512f"))), avx512_tile4, avx512_tile8, avx512_line)
#undef WIDE
#endif

bool tiles_scatter(char *mem, int64_t s2, const char *buf, int64_t rows, int64_t w, size_t size,
                   bool stream, int vec) {
#ifdef HAVE_TILES
  if (size != 4 && size != 8) return false;
  int64_t K = LINE / (int64_t)size, kr = rows / K * K, cw = w / K * K;
  size_t line = (size_t)w * size; /* buf's rows */
  /* Past the caches only where every line written is a whole line. */
  bool nt = stream && (uintptr_t)mem % LINE == 0 && s2 % LINE == 0;
  if (vec >= 512) avx512_tiles(mem, s2, buf, kr, cw, line, size, nt);
  else if (vec >= 256) avx2_tiles(mem, s2, buf, kr, cw, line, size, nt);
  else sse_tiles(mem, s2, buf, kr, cw, line, size, nt);
  /* The elements outside whole tiles: each row's past cw, and the rows
  ** past kr whole. */
  for (int64_t k = 0; k < rows; k++)
    for (int64_t c = k < kr ? cw : 0; c < w; c++)
      memcpy(mem + c * s2 + k * (int64_t)size, buf + (size_t)k * line + (size_t)c * size, size);
  if (nt) _mm_sfence();
  return true;
#else
  (void)mem, (void)s2, (void)buf, (void)rows, (void)w, (void)size, (void)stream, (void)vec;
  return false;
#endif
}
