/*
** npy.c -- reading and writing NumPy .npy files.
**
** The format: the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a header
** length (2 bytes in 1.0, 4 bytes later), a header that is a Python dict
** literal {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }, then
** the raw elements.  Files come from anywhere, so the reader trusts nothing:
** it refuses anything but a regular file before reading a byte (a FIFO or
** /dev/zero would never end), checks every length against the size fstat
** reports before allocating or reading, parses the header with a small
** parser of its own (never an evaluator), and reads exactly the number of
** data bytes the validated shape declares.  Memory use is therefore bounded
** by the file's size.
**
** The writer produces the same bytes np.save does (version 1.0, the header
** padded with spaces and a newline so the data starts on a 64-byte
** boundary), into a temporary file in the destination's directory that is
** renamed over the destination only once it is complete: a failed write
** leaves an existing file untouched and no partial file behind.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, mkstemp, fchmod, access under -std=c11 */
#endif
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Real headers are a few hundred bytes; anything near this limit is hostile. */
#define NPY_MAX_HEADER (1 << 20)
#define NPY_ALIGN 64
/* np.save leaves room for the growing axis to reach this many digits. */
#define NPY_GROWTH_DIGITS 21

/* "jitc reads bool, int8, ...": every type of jitc.h. */
static const char *supported(void) {
  static char text[512];
  if (!text[0]) {
    size_t k = (size_t)snprintf(text, sizeof text, "jitc reads ");
    dtype_list(text + k, sizeof text - k, ", ");
  }
  return text;
}

static const char *descr_of(jitc_dtype t) { return jitc_dtype_typestr(t); }

/* Writes "PATH: message" to err and returns -1. */
static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...) {
  if (!err || errlen == 0)
    return -1;
  int k = snprintf(err, errlen, "%s: ", path);
  if (k < 0 || (size_t)k >= errlen)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
  va_end(ap);
  return -1;
}

/* Reads up to len bytes; returns the count read (less only at end of file),
** or -1 with errno set. */
static ssize_t read_full(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    size_t chunk = len - got;
    if (chunk > ((size_t)1 << 30))
      chunk = (size_t)1 << 30;
    ssize_t r = read(fd, (char *)buf + got, chunk);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    size_t chunk = len - done;
    if (chunk > ((size_t)1 << 30))
      chunk = (size_t)1 << 30;
    ssize_t w = write(fd, (const char *)buf + done, chunk);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (w == 0) {
      errno = EIO;
      return -1;
    }
    done += (size_t)w;
  }
  return 0;
}

/* ---- the header parser ----
** The header is a Python dict literal.  We accept what NumPy's own reader
** accepts for the three keys: keys in any order, any whitespace, trailing
** commas in the dict and the tuple, either quote, and the 'L' suffix that
** Python 2 wrote after long integers. */

typedef struct Hdr {
  const char *s;
  size_t len, pos;
  const char *why; /* first parse error */
  /* results */
  char descr[64];
  bool structured;
  int fortran; /* -1: missing */
  int ndim;    /* -1: missing */
  int64_t shape[NPY_MAXDIMS];
  /* shape problems are reported with their own wording */
  const char *shape_why;
  char shape_bad[48];
} Hdr;

static void ws(Hdr *h) {
  while (h->pos < h->len && strchr(" \t\r\n\f\v", h->s[h->pos]))
    h->pos++;
}

static bool eat(Hdr *h, char c) {
  ws(h);
  if (h->pos < h->len && h->s[h->pos] == c) {
    h->pos++;
    return true;
  }
  return false;
}

static int peek(Hdr *h) {
  ws(h);
  return h->pos < h->len ? (unsigned char)h->s[h->pos] : -1;
}

static bool hfail(Hdr *h, const char *why) {
  if (!h->why)
    h->why = why;
  return false;
}

/* string = "'" chars "'" | '"' chars '"' (no escapes: NumPy never writes them) */
static bool parse_string(Hdr *h, char *out, size_t outsz) {
  int q = peek(h);
  if (q != '\'' && q != '"')
    return hfail(h, "expected a quoted string");
  h->pos++;
  size_t k = 0;
  while (h->pos < h->len && h->s[h->pos] != q) {
    if (h->s[h->pos] == '\\')
      return hfail(h, "escape sequences in strings are not supported");
    if (k + 1 >= outsz)
      return hfail(h, "string too long");
    out[k++] = h->s[h->pos++];
  }
  if (h->pos >= h->len)
    return hfail(h, "unterminated string");
  h->pos++;
  out[k] = '\0';
  return true;
}

static bool is_ident(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool parse_word(Hdr *h, const char *w) {
  size_t n = strlen(w);
  ws(h);
  if (h->len - h->pos >= n && memcmp(h->s + h->pos, w, n) == 0 &&
      (h->pos + n == h->len || !is_ident((unsigned char)h->s[h->pos + n]))) {
    h->pos += n;
    return true;
  }
  return false;
}

/* bool = "True" | "False" */
static bool parse_bool(Hdr *h, int *out) {
  if (parse_word(h, "True")) {
    *out = 1;
    return true;
  }
  if (parse_word(h, "False")) {
    *out = 0;
    return true;
  }
  return hfail(h, "fortran_order must be True or False");
}

/* dim = ["-"|"+"] digits ["L"] */
static bool parse_dim(Hdr *h, int64_t *out) {
  ws(h);
  size_t start = h->pos;
  bool neg = false;
  if (h->pos < h->len && (h->s[h->pos] == '-' || h->s[h->pos] == '+')) {
    neg = h->s[h->pos] == '-';
    h->pos++;
    ws(h);
  }
  if (h->pos >= h->len || h->s[h->pos] < '0' || h->s[h->pos] > '9')
    return hfail(h, "expected an integer in the shape");
  uint64_t v = 0;
  bool over = false;
  while (h->pos < h->len && h->s[h->pos] >= '0' && h->s[h->pos] <= '9') {
    unsigned d = (unsigned)(h->s[h->pos++] - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10)
      over = true;
    else
      v = v * 10 + d;
  }
  if (h->pos < h->len && (h->s[h->pos] == 'L' || h->s[h->pos] == 'l'))
    h->pos++;
  if (h->pos < h->len && is_ident((unsigned char)h->s[h->pos]))
    return hfail(h, "malformed integer in the shape");
  size_t n = h->pos - start;
  if (n >= sizeof h->shape_bad)
    n = sizeof h->shape_bad - 4;
  if ((neg && v != 0) || over) {
    if (!h->shape_why) {
      h->shape_why = neg ? "negative dimension" : "dimension too large";
      memcpy(h->shape_bad, h->s + start, n);
      h->shape_bad[n] = '\0';
      if (n < h->pos - start)
        strcat(h->shape_bad, "...");
    }
    v = 0;
  }
  *out = (int64_t)v;
  return true;
}

/* shape = "(" [dim ("," dim)* [","]] ")" */
static bool parse_shape(Hdr *h) {
  if (!eat(h, '('))
    return hfail(h, "shape must be a tuple");
  int nd = 0;
  while (peek(h) != ')') {
    int64_t d;
    if (!parse_dim(h, &d))
      return false;
    if (nd >= NPY_MAXDIMS) {
      if (!h->shape_why) {
        h->shape_why = "too many dimensions";
        snprintf(h->shape_bad, sizeof h->shape_bad, "more than %d", NPY_MAXDIMS);
      }
    } else {
      h->shape[nd] = d;
    }
    nd++;
    if (!eat(h, ',')) {
      if (peek(h) != ')')
        return hfail(h, "expected ',' or ')' in the shape");
    }
  }
  h->pos++;
  h->ndim = nd > NPY_MAXDIMS ? NPY_MAXDIMS : nd;
  return true;
}

/* header = "{" [item ("," item)* [","]] "}"
** item   = key ":" value     (key: 'descr' | 'fortran_order' | 'shape') */
static bool parse_header(Hdr *h) {
  bool have_descr = false;
  h->fortran = -1;
  h->ndim = -1;
  if (!eat(h, '{'))
    return hfail(h, "the header is not a dict (expected '{')");
  while (peek(h) != '}') {
    char key[32];
    if (peek(h) == -1)
      return hfail(h, "unterminated dict");
    if (!parse_string(h, key, sizeof key))
      return false;
    if (!eat(h, ':'))
      return hfail(h, "expected ':' after a key");
    if (strcmp(key, "descr") == 0 && !have_descr) {
      have_descr = true;
      if (peek(h) == '[') {
        /* a list of fields: a structured dtype.  No need to parse it. */
        h->structured = true;
        return true;
      }
      if (!parse_string(h, h->descr, sizeof h->descr))
        return false;
    } else if (strcmp(key, "fortran_order") == 0 && h->fortran < 0) {
      if (!parse_bool(h, &h->fortran))
        return false;
    } else if (strcmp(key, "shape") == 0 && h->ndim < 0) {
      if (!parse_shape(h))
        return false;
    } else if (!strcmp(key, "descr") || !strcmp(key, "fortran_order") || !strcmp(key, "shape")) {
      return hfail(h, "a key appears twice");
    } else {
      return hfail(h, "unexpected key (only 'descr', 'fortran_order' and 'shape' are allowed)");
    }
    if (!eat(h, ',') && peek(h) != '}')
      return hfail(h, "expected ',' or '}' in the dict");
  }
  h->pos++;
  ws(h);
  if (h->pos != h->len)
    return hfail(h, "unexpected text after the dict");
  if (!have_descr)
    return hfail(h, "the key 'descr' is missing");
  if (h->fortran < 0)
    return hfail(h, "the key 'fortran_order' is missing");
  if (h->ndim < 0)
    return hfail(h, "the key 'shape' is missing");
  return true;
}

/* A printable excerpt of the header for messages: control bytes escaped,
** trailing padding dropped, cut at about 60 characters. */
static void excerpt(const char *s, size_t len, char *out, size_t outsz) {
  size_t k = 0, i = 0;
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\n'))
    len--;
  for (; i < len && k + 8 < outsz && k < 60; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127)
      out[k++] = (char)c;
    else
      k += (size_t)snprintf(out + k, outsz - k, "\\x%02x", c);
  }
  if (i < len && k + 4 <= outsz) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
}

/* Maps a descr to a dtype; on failure writes why (naming the dtype).  A
** type whose typestr is a bare void ('<V2': ml_dtypes' bfloat16, which
** NumPy has no code for) is read only when the caller names it (*named):
** any two bytes could be behind such a descr. */
static int descr_dtype(const char *d, const jitc_dtype *named, jitc_dtype *t, char *why,
                       size_t whylen) {
  /* A type's typestr, with '<' or '|' (or neither, or '=': this is a
  ** little-endian machine) for its byte order, or bool's "?". */
  const char *body = d[0] && strchr("<|=", d[0]) ? d + 1 : d;
  if (!strcmp(body, "?")) {
    *t = JITC_BOOL;
    return 0;
  }
  for (int k = 0; k < JITC_NDTYPES; k++) {
    const char *ts = jitc_dtype_typestr((jitc_dtype)k);
    if (strcmp(body, ts + 1))
      continue;
    if (ts[1] == 'V' && !(named && *named == (jitc_dtype)k)) {
      snprintf(why, whylen, "dtype '%s' is raw bytes, which is how ml_dtypes saves %s: "
               "name the type to read it as one (--dtype NAME=%s)", d,
               jitc_dtype_name((jitc_dtype)k), jitc_dtype_name((jitc_dtype)k));
      return -1;
    }
    *t = (jitc_dtype)k;
    return 0;
  }

  const char *p = d;
  char order = 0;
  if (*p && strchr("<>|=!", *p))
    order = *p++;
  char kind = *p;
  const char *digits = kind ? p + 1 : p;
  char *end;
  long size = strtol(digits, &end, 10);
  bool sized = end != digits && *end == '\0' && size > 0 && size < 1000;
  char name[48] = "";
  switch (kind) {
  case 'i': case 'u': case 'f': case 'c':
    if (sized)
      snprintf(name, sizeof name, "%s%ld",
               kind == 'i' ? "int" : kind == 'u' ? "uint" : kind == 'f' ? "float" : "complex",
               size * 8);
    break;
  case 'b': snprintf(name, sizeof name, "%s", "bool"); break;
  case 'O': snprintf(name, sizeof name, "%s", "object"); break;
  case 'U': snprintf(name, sizeof name, "%s", "unicode string"); break;
  case 'S': case 'a': snprintf(name, sizeof name, "%s", "byte string"); break;
  case 'V': snprintf(name, sizeof name, "%s", "void/structured"); break;
  case 'M': snprintf(name, sizeof name, "%s", "datetime64"); break;
  case 'm': snprintf(name, sizeof name, "%s", "timedelta64"); break;
  default: break;
  }
  if (order == '>' || order == '!') {
    snprintf(why, whylen, "big-endian dtype '%s' is not supported; %s", d, supported());
  } else if (name[0]) {
    snprintf(why, whylen, "dtype '%s' (%s) is not supported; %s", d, name, supported());
  } else {
    snprintf(why, whylen, "dtype '%s' is not supported; %s", d, supported());
  }
  return -1;
}

int npy_read(const char *path, const jitc_dtype *named, HostArray *out, char *err,
             size_t errlen) {
  memset(out, 0, sizeof *out);
  int fd = -1;
  char *hbuf = NULL;
  int rc = -1;

  /* Refuse what is not a regular file before opening it: opening a FIFO
  ** can block and opening some devices has side effects.  fstat after the
  ** open checks again what was actually opened. */
  struct stat st;
  if (stat(path, &st) != 0)
    return fail(err, errlen, path, "%s", errno == ENOENT ? "no such file" : strerror(errno));
  if (S_ISDIR(st.st_mode))
    return fail(err, errlen, path, "is a directory, not a .npy file");
  if (!S_ISREG(st.st_mode))
    return fail(err, errlen, path, "is not a regular file (a device, FIFO or socket)");
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, errlen, path, "cannot open: %s", strerror(errno));
  if (fstat(fd, &st) != 0) {
    fail(err, errlen, path, "cannot stat: %s", strerror(errno));
    goto done;
  }
  if (!S_ISREG(st.st_mode)) {
    fail(err, errlen, path, "is not a regular file");
    goto done;
  }
  int64_t fsize = (int64_t)st.st_size;

  unsigned char pre[12];
  if (fsize < 10) {
    fail(err, errlen, path, "not a .npy file (too short: %lld bytes)", (long long)fsize);
    goto done;
  }
  ssize_t got = read_full(fd, pre, 10);
  if (got < 0) {
    fail(err, errlen, path, "read error: %s", strerror(errno));
    goto done;
  }
  if (got < 10) {
    fail(err, errlen, path, "not a .npy file (too short)");
    goto done;
  }
  if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    fail(err, errlen, path, "not a .npy file (bad magic string)");
    goto done;
  }
  int major = pre[6], minor = pre[7];
  int64_t hlen, prefix;
  if (major == 1 && minor == 0) {
    hlen = pre[8] | (pre[9] << 8);
    prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (fsize < 12 || read_full(fd, pre + 10, 2) != 2) {
      fail(err, errlen, path, "not a .npy file (too short)");
      goto done;
    }
    hlen = (int64_t)((uint32_t)pre[8] | ((uint32_t)pre[9] << 8) | ((uint32_t)pre[10] << 16) |
                     ((uint32_t)pre[11] << 24));
    prefix = 12;
  } else {
    fail(err, errlen, path, "unsupported .npy format version %d.%d (jitc reads 1.0, 2.0 and 3.0)",
         major, minor);
    goto done;
  }
  if (hlen > fsize - prefix) {
    fail(err, errlen, path, "header length %lld runs past the end of the file (%lld bytes)",
         (long long)hlen, (long long)fsize);
    goto done;
  }
  if (hlen > NPY_MAX_HEADER) {
    fail(err, errlen, path, "header length %lld is too large (at most %d)", (long long)hlen,
         NPY_MAX_HEADER);
    goto done;
  }
  hbuf = malloc((size_t)hlen + 1);
  if (!hbuf) {
    fail(err, errlen, path, "out of memory");
    goto done;
  }
  got = read_full(fd, hbuf, (size_t)hlen);
  if (got != (ssize_t)hlen) {
    fail(err, errlen, path, "%s", got < 0 ? strerror(errno) : "file truncated while reading");
    goto done;
  }
  hbuf[hlen] = '\0';
  if (memchr(hbuf, '\0', (size_t)hlen)) {
    fail(err, errlen, path, "malformed header (it contains a NUL byte)");
    goto done;
  }

  Hdr h = {.s = hbuf, .len = (size_t)hlen};
  if (!parse_header(&h)) {
    char ex[96];
    excerpt(hbuf, (size_t)hlen, ex, sizeof ex);
    fail(err, errlen, path, "malformed header: %s at byte %zu of \"%s\"", h.why, h.pos, ex);
    goto done;
  }
  if (h.structured) {
    fail(err, errlen, path, "structured dtype (a list of fields) is not supported; %s", supported());
    goto done;
  }
  jitc_dtype dt;
  char why[768];
  if (descr_dtype(h.descr, named, &dt, why, sizeof why) != 0) {
    fail(err, errlen, path, "%s", why);
    goto done;
  }
  if (h.shape_why) {
    fail(err, errlen, path, "bad shape in the header: %s (%s)", h.shape_why, h.shape_bad);
    goto done;
  }

  /* Element count and byte size, with overflow checks; a zero anywhere
  ** makes an empty array whatever the other dimensions are. */
  size_t esz = jitc_dtype_size(dt);
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
      if (n > INT64_MAX / h.shape[i]) {
        fail(err, errlen, path, "shape %s is too large (the element count overflows)", stext);
        goto done;
      }
      n *= h.shape[i];
    }
  }
  if (n > (INT64_MAX - 64) / (int64_t)esz) {
    fail(err, errlen, path, "shape %s is too large (the byte size overflows)", stext);
    goto done;
  }
  int64_t nbytes = n * (int64_t)esz;
  int64_t avail = fsize - prefix - hlen;
  if (nbytes > avail) {
    fail(err, errlen, path,
         "truncated data: shape %s of %s needs %lld bytes of data but the file has %lld",
         stext, h.descr, (long long)nbytes, (long long)avail);
    goto done;
  }
  if (nbytes < avail) {
    fail(err, errlen, path,
         "shape %s of %s needs %lld bytes of data but the file has %lld (%lld extra bytes "
         "after the array)",
         stext, h.descr, (long long)nbytes, (long long)avail, (long long)(avail - nbytes));
    goto done;
  }

  char aerr[200];
  if (host_array_alloc(out, dt, n, aerr, sizeof aerr) != 0) {
    fail(err, errlen, path, "%s", aerr);
    rc = -2; /* a resource, not the file, is short */
    goto done;
  }
  out->ndim = h.ndim;
  for (int i = 0; i < h.ndim; i++)
    out->shape[i] = h.shape[i];
  out->fortran = h.fortran != 0;
  got = read_full(fd, out->data, (size_t)nbytes);
  if (got != (ssize_t)nbytes) {
    fail(err, errlen, path, "%s", got < 0 ? strerror(errno) : "file truncated while reading");
    host_array_free(out);
    memset(out, 0, sizeof *out);
    goto done;
  }
  if (dt == JITC_BOOL) {
    /* Any nonzero byte is True in NumPy; C's bool must hold exactly 0 or 1. */
    unsigned char *b = out->data;
    for (int64_t i = 0; i < n; i++)
      b[i] = b[i] != 0;
  }
  rc = 0;
done:
  free(hbuf);
  if (fd >= 0)
    close(fd);
  return rc;
}

/* ---- writing ---- */

/* The mode a new file would get from open(..., 0666): 0666 less the umask.
** The umask is read from /proc so that no other thread sees it change. */
static mode_t new_file_mode(void) {
  mode_t mode = 0644;
  FILE *f = fopen("/proc/self/status", "re");
  if (!f)
    return mode;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    unsigned um;
    if (sscanf(line, "Umask: %o", &um) == 1) {
      mode = 0666 & ~(mode_t)um;
      break;
    }
  }
  fclose(f);
  return mode;
}

/* Builds the header exactly as np.save does.  Returns its length (magic
** included), or 0 if buf is too small. */
static size_t build_header(const HostArray *a, char *buf, size_t bufsz) {
  char dict[NPY_MAXDIMS * 24 + 256];
  char stext[NPY_MAXDIMS * 22 + 8];
  shape_text(a->shape, a->ndim, stext, sizeof stext);
  int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                   descr_of(a->dtype), a->fortran ? "True" : "False", stext);
  if (a->ndim > 0) {
    char grow[24];
    int g = snprintf(grow, sizeof grow, "%lld",
                     (long long)a->shape[a->fortran ? a->ndim - 1 : 0]);
    for (int i = g; i < NPY_GROWTH_DIGITS; i++)
      dict[k++] = ' ';
    dict[k] = '\0';
  }
  size_t hlen = (size_t)k + 1; /* the final newline */
  int major = 1;
  size_t lenbytes = 2;
  size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lenbytes + hlen) % NPY_ALIGN;
  if (hlen + pad > 65535) {
    major = 2;
    lenbytes = 4;
    pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lenbytes + hlen) % NPY_ALIGN;
  }
  size_t total = NPY_MAGIC_LEN + 2 + lenbytes + hlen + pad;
  if (total > bufsz)
    return 0;
  unsigned char *p = (unsigned char *)buf;
  memcpy(p, NPY_MAGIC, NPY_MAGIC_LEN);
  p[6] = (unsigned char)major;
  p[7] = 0;
  uint32_t stored = (uint32_t)(hlen + pad);
  for (size_t i = 0; i < lenbytes; i++)
    p[8 + i] = (unsigned char)(stored >> (8 * i));
  size_t off = 8 + lenbytes;
  memcpy(p + off, dict, (size_t)k);
  off += (size_t)k;
  memset(p + off, ' ', pad);
  off += pad;
  p[off++] = '\n';
  return off;
}

int npy_write(const char *path, const HostArray *a, char *err, size_t errlen) {
  size_t esz = jitc_dtype_size(a->dtype);
  if (esz == 0)
    return fail(err, errlen, path, "cannot write: unknown dtype %d", (int)a->dtype);
  if (a->ndim < 0 || a->ndim > NPY_MAXDIMS)
    return fail(err, errlen, path, "cannot write: %d dimensions (at most %d)", a->ndim,
                NPY_MAXDIMS);
  /* The shape must account for exactly n elements. */
  int64_t n = 1;
  bool zero = false, over = false;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0)
      return fail(err, errlen, path, "cannot write: negative dimension %lld",
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
    return fail(err, errlen, path, "cannot write: the shape does not match the %lld elements",
                (long long)a->n);

  char header[NPY_MAXDIMS * 24 + 512];
  size_t hsize = build_header(a, header, sizeof header);
  if (hsize == 0)
    return fail(err, errlen, path, "cannot write: header too long");

  /* The temporary file lives beside the destination so that rename() is
  ** atomic (same file system): ".NAME.XXXXXX" in the same directory. */
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp)
    return fail(err, errlen, path, "out of memory");
  memcpy(tmp, path, dirlen);
  snprintf(tmp + dirlen, plen + 16 - dirlen, ".%s.XXXXXX", path + dirlen);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    fail(err, errlen, path, "cannot create a temporary file beside it: %s", strerror(errno));
    free(tmp);
    return -1;
  }
  /* mkstemp makes the file 0600; give it the mode the existing file has,
  ** or the one a plain create would give. */
  struct stat st;
  mode_t mode = (stat(path, &st) == 0 && S_ISREG(st.st_mode)) ? (st.st_mode & 07777)
                                                              : new_file_mode();
  int rc = -1;
  if (fchmod(fd, mode) != 0 && errno != EPERM) {
    fail(err, errlen, path, "cannot set the file mode: %s", strerror(errno));
    goto fail_fd;
  }
  if (write_full(fd, header, hsize) != 0 ||
      write_full(fd, a->data, (size_t)a->n * esz) != 0) {
    fail(err, errlen, path, "write error: %s", strerror(errno));
    goto fail_fd;
  }
  if (close(fd) != 0) {
    fd = -1;
    fail(err, errlen, path, "write error: %s", strerror(errno));
    goto fail_tmp;
  }
  fd = -1;
  if (rename(tmp, path) != 0) {
    fail(err, errlen, path, "cannot replace: %s", strerror(errno));
    goto fail_tmp;
  }
  free(tmp);
  return 0;
fail_fd:
  close(fd);
fail_tmp:
  unlink(tmp);
  free(tmp);
  return rc;
}
