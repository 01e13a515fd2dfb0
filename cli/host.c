/*
** host.c -- host array buffers and their shapes.
**
** Every array the command line hands to a kernel comes from
** host_array_alloc: the data is 64-byte aligned so that vector loads and
** cache lines line up in every target, and the byte size is computed with
** overflow checks so that a hostile shape or a huge -n fails cleanly
** instead of allocating a wrapped, too-small buffer.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* madvise under -std=c11 */
#endif
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HOST_ALIGN 64
#define HUGE_PAGE ((size_t)2 << 20) /* x86-64's transparent huge page */
#define HUGE_MIN ((size_t)4 << 20)

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int host_array_alloc(HostArray *a, jitc_dtype dtype, int64_t n, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  size_t esz = jitc_dtype_size(dtype);
  if (esz == 0) {
    set_err(err, errlen, "unknown dtype %d", (int)dtype);
    return -1;
  }
  if (n < 0) {
    set_err(err, errlen, "negative array size %lld", (long long)n);
    return -1;
  }
  /* The byte count must fit in size_t and in int64 (shapes and offsets
  ** are int64 everywhere), and leave room to round up to the alignment. */
  uint64_t limit = (uint64_t)INT64_MAX < (uint64_t)SIZE_MAX ? (uint64_t)INT64_MAX : (uint64_t)SIZE_MAX;
  limit -= HUGE_PAGE;
  if ((uint64_t)n > limit / esz) {
    set_err(err, errlen, "cannot allocate %lld %s elements: too large (the size in bytes "
            "overflows)", (long long)n, jitc_dtype_name(dtype));
    return -1;
  }
  size_t bytes = (size_t)n * esz;
  /* aligned_alloc wants a multiple of the alignment; a zero-size array still
  ** gets a real buffer so that data is never NULL on success. */
  size_t rounded = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
  if (rounded == 0)
    rounded = HOST_ALIGN;
  /* Large arrays go on transparent huge pages, as NumPy puts its own (it
  ** asks for them above 4 MiB): a 10M-element pass then misses the TLB 512
  ** times less often.  The kernel may refuse; the advice is only advice. */
  size_t align = HOST_ALIGN;
  if (rounded >= HUGE_MIN) {
    align = HUGE_PAGE;
    rounded = (rounded + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  }
  void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p && align == HUGE_PAGE)
    madvise(p, rounded, MADV_HUGEPAGE);
#endif
  if (!p) {
    char size[32];
    size_text((double)bytes, size, sizeof size);
    set_err(err, errlen, "out of memory: cannot allocate %llu bytes (%s)",
            (unsigned long long)bytes, size);
    return -1;
  }
  a->dtype = dtype;
  a->ndim = 1;
  a->shape[0] = n;
  a->fortran = false;
  a->n = n;
  a->data = p;
  return 0;
}

void host_array_free(HostArray *a) {
  if (!a)
    return;
  free(a->data);
  a->data = NULL;
  a->n = 0;
  a->ndim = 0;
}

void size_text(double bytes, char *out, size_t outsz) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(out, outsz, "%.0f B", bytes);
  else
    snprintf(out, outsz, "%.1f %s", bytes, units[u]);
}

/* Formats a shape like Python's repr of the tuple. */
void shape_text(const int64_t *shape, int ndim, char *out, size_t outsz) {
  size_t k = 0;
  k += (size_t)snprintf(out, outsz, "(");
  for (int i = 0; i < ndim && k < outsz; i++)
    k += (size_t)snprintf(out + k, outsz - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (k < outsz)
    snprintf(out + k, outsz - k, ndim == 1 ? ",)" : ")");
}

void host_strides(const HostArray *a, int64_t *strides) {
  int64_t s = (int64_t)jitc_dtype_size(a->dtype);
  for (int q = 0; q < a->ndim; q++) {
    int d = a->fortran ? q : a->ndim - 1 - q;
    strides[d] = s;
    s *= a->shape[d];
  }
}
