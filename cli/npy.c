/*
** npy.c -- reading and writing NumPy .npy files.
**
** The format: the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a header
** length (2 bytes in 1.0, 4 bytes later), a header that is a Python dict
** literal (npyhdr.c parses and builds it), then the raw elements in C or
** Fortran order.  The bytes come from a ByteSrc: a file, or a member of a
** .npz archive (npz.c).  Files come from anywhere, so the reader trusts
** nothing: it refuses anything but a regular file before reading a byte (a
** FIFO or /dev/zero would never end), checks every length against the size
** the source declares before allocating or reading, and reads exactly the
** number of data bytes the validated shape declares.  Memory use is
** therefore bounded by the source's size.  The data is kept as it is in
** the file, in its own order: the caller describes it with strides.
**
** The writer produces the same bytes np.save does (version 1.0, the header
** padded with spaces and a newline so the data starts on a 64-byte
** boundary), atomically (fileio.c's NewFile).
*/
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Real headers are a few hundred bytes; anything near this limit is hostile. */
#define NPY_MAX_HEADER (1 << 20)

/* Reads exactly len bytes of src: 0, or -1 with the message in err
** ("truncated" when the source ends first). */
static int src_read(ByteSrc *src, void *buf, size_t len, const char *truncated, char *err,
                    size_t errlen) {
  int64_t got = src->read(src->ctx, buf, len, src->why, sizeof src->why);
  if (got == (int64_t)len)
    return 0;
  return file_fail(err, errlen, src->name, "%s", got < 0 ? src->why : truncated);
}

int npy_read_src(ByteSrc *src, const jitc_dtype *named, bool header_only, HostArray *out,
                 char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  const char *path = src->name;
  int64_t fsize = src->size;
  unsigned char pre[12];
  if (fsize < 10)
    return file_fail(err, errlen, path, "not a .npy file (too short: %lld bytes)",
                     (long long)fsize);
  if (src_read(src, pre, 10, "not a .npy file (too short)", err, errlen))
    return -1;
  if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return file_fail(err, errlen, path, "not a .npy file (bad magic string)");
  int major = pre[6], minor = pre[7];
  int64_t hlen, prefix;
  if (major == 1 && minor == 0) {
    hlen = pre[8] | (pre[9] << 8);
    prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (fsize < 12)
      return file_fail(err, errlen, path, "not a .npy file (too short)");
    if (src_read(src, pre + 10, 2, "not a .npy file (too short)", err, errlen))
      return -1;
    hlen = (int64_t)((uint32_t)pre[8] | ((uint32_t)pre[9] << 8) | ((uint32_t)pre[10] << 16) |
                     ((uint32_t)pre[11] << 24));
    prefix = 12;
  } else {
    return file_fail(err, errlen, path,
                     "unsupported .npy format version %d.%d (jitc reads 1.0, 2.0 and 3.0)",
                     major, minor);
  }
  if (hlen > fsize - prefix)
    return file_fail(err, errlen, path,
                     "header length %lld runs past the end of the file (%lld bytes)",
                     (long long)hlen, (long long)fsize);
  if (hlen > NPY_MAX_HEADER)
    return file_fail(err, errlen, path, "header length %lld is too large (at most %d)",
                     (long long)hlen, NPY_MAX_HEADER);
  char *hbuf = malloc((size_t)hlen + 1);
  if (!hbuf)
    return file_fail(err, errlen, path, "out of memory");
  if (src_read(src, hbuf, (size_t)hlen, "file truncated while reading", err, errlen)) {
    free(hbuf);
    return -1;
  }
  hbuf[hlen] = '\0';
  NpyHeader h;
  char why[768];
  int bad = memchr(hbuf, '\0', (size_t)hlen) != NULL;
  if (bad)
    snprintf(why, sizeof why, "malformed header (it contains a NUL byte)");
  else
    bad = npy_header_parse(hbuf, (size_t)hlen, named, &h, why, sizeof why);
  free(hbuf);
  if (bad)
    return file_fail(err, errlen, path, "%s", why);

  /* Element count and byte size, with overflow checks; a zero anywhere
  ** makes an empty array whatever the other dimensions are. */
  size_t esz = jitc_dtype_size(h.dtype);
  int64_t n = 1;
  bool zero = false;
  for (int i = 0; i < h.ndim; i++)
    if (h.shape[i] == 0)
      zero = true;
  char stext[NPY_MAXDIMS * 22 + 8];
  shape_text(h.shape, h.ndim, stext, sizeof stext);
  if (zero) {
    n = 0;
  } else {
    for (int i = 0; i < h.ndim; i++) {
      if (n > INT64_MAX / h.shape[i])
        return file_fail(err, errlen, path,
                         "shape %s is too large (the element count overflows)", stext);
      n *= h.shape[i];
    }
  }
  if (n > (INT64_MAX - 64) / (int64_t)esz)
    return file_fail(err, errlen, path, "shape %s is too large (the byte size overflows)",
                     stext);
  int64_t nbytes = n * (int64_t)esz;
  int64_t avail = fsize - prefix - hlen;
  if (nbytes > avail)
    return file_fail(err, errlen, path,
                     "truncated data: shape %s of %s needs %lld bytes of data but the file "
                     "has %lld", stext, h.descr, (long long)nbytes, (long long)avail);
  if (nbytes < avail)
    return file_fail(err, errlen, path,
                     "shape %s of %s needs %lld bytes of data but the file has %lld (%lld "
                     "extra bytes after the array)", stext, h.descr, (long long)nbytes,
                     (long long)avail, (long long)(avail - nbytes));

  char aerr[200];
  if (header_only) {
    out->dtype = h.dtype;
    out->n = n;
  } else if (host_array_alloc(out, h.dtype, n, aerr, sizeof aerr) != 0) {
    file_fail(err, errlen, path, "%s", aerr);
    return -2; /* a resource, not the file, is short */
  }
  out->ndim = h.ndim;
  for (int i = 0; i < h.ndim; i++)
    out->shape[i] = h.shape[i];
  out->fortran = h.fortran;
  if (header_only)
    return 0;
  if (src_read(src, out->data, (size_t)nbytes, "file truncated while reading", err, errlen)) {
    host_array_free(out);
    memset(out, 0, sizeof *out);
    return -1;
  }
  if (h.dtype == JITC_BOOL) {
    /* Any nonzero byte is True in NumPy; C's bool must hold exactly 0 or 1. */
    unsigned char *b = out->data;
    for (int64_t i = 0; i < n; i++)
      b[i] = b[i] != 0;
  }
  return 0;
}

static int64_t fd_read(void *ctx, void *buf, size_t len, char *why, size_t whylen) {
  int64_t got = read_full(*(int *)ctx, buf, len);
  if (got < 0)
    snprintf(why, whylen, "read error: %s", strerror(errno));
  return got;
}

int npy_read(const char *path, const jitc_dtype *named, HostArray *out, char *err,
             size_t errlen) {
  memset(out, 0, sizeof *out);
  int fd = file_open_regular(path, "a .npy file", err, errlen);
  if (fd < 0)
    return -1;
  struct stat st;
  fstat(fd, &st); /* file_open_regular has done it once */
  ByteSrc src = {.name = path, .size = (int64_t)st.st_size, .read = fd_read, .ctx = &fd};
  int rc = npy_read_src(&src, named, false, out, err, errlen);
  close(fd);
  return rc;
}

/* ---- writing ---- */

int npy_check(const HostArray *a, char *err, size_t errlen, const char *path) {
  size_t esz = jitc_dtype_size(a->dtype);
  if (esz == 0)
    return file_fail(err, errlen, path, "cannot write: unknown dtype %d", (int)a->dtype);
  if (a->ndim < 0 || a->ndim > NPY_MAXDIMS)
    return file_fail(err, errlen, path, "cannot write: %d dimensions (at most %d)", a->ndim,
                     NPY_MAXDIMS);
  /* The shape must account for exactly n elements. */
  int64_t n = 1;
  bool zero = false, over = false;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0)
      return file_fail(err, errlen, path, "cannot write: negative dimension %lld",
                       (long long)a->shape[i]);
    if (a->shape[i] == 0)
      zero = true;
    else if (n > INT64_MAX / a->shape[i])
      over = true;
    else
      n *= a->shape[i];
  }
  if (zero)
    n = 0;
  if ((!zero && over) || n != a->n || a->n < 0 || (a->n > 0 && !a->data) ||
      (uint64_t)a->n > (uint64_t)INT64_MAX / esz)
    return file_fail(err, errlen, path,
                     "cannot write: the shape does not match the %lld elements",
                     (long long)a->n);
  return 0;
}

int npy_write(const char *path, const HostArray *a, char *err, size_t errlen) {
  if (npy_check(a, err, errlen, path))
    return -1;
  char header[NPY_HEADER_MAX];
  size_t hsize = npy_header_build(a, header, sizeof header);
  if (hsize == 0)
    return file_fail(err, errlen, path, "cannot write: header too long");
  NewFile f;
  if (newfile_open(&f, path, err, errlen) ||
      newfile_write(&f, header, hsize, err, errlen) ||
      newfile_write(&f, a->data, (size_t)a->n * jitc_dtype_size(a->dtype), err, errlen))
    return -1;
  return newfile_commit(&f, err, errlen);
}
