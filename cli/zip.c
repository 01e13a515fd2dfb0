/*
** zip.c -- the zip container of .npz files: its directory read, a member
** read as a stream of bytes, an archive of stored members written.
**
** np.savez writes a zip archive of stored (uncompressed) members,
** np.savez_compressed one of deflated members; both with ZIP64 extensions
** where sizes need them (np.savez forces a ZIP64 extra field in every
** local header).  The reader trusts nothing: the directory is found from
** the end of the file and every offset and size in it is checked against
** the file's size before it is used; a member's bytes are checked against
** the CRC-32 and the size the directory gives once read; a deflated member
** claiming more than deflate's largest ratio (1032:1) is refused, so that
** memory stays bounded by the file's size.  Deflate is zlib's (inflate with
** a raw window); a build without zlib reads and writes stored archives
** and says so for a deflated member.  Encrypted members and other
** compression methods are refused.
**
** The format: local headers (each followed by its data), then the central
** directory (one record per member: sizes, CRC-32, method, the offset of
** its local header), then the end-of-central-directory record, after a
** ZIP64 end record and its locator where counts or offsets need 64 bits.
*/
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef JITC_HAVE_ZLIB
#include <zlib.h>
#endif

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define END_LEN 22
#define MAX_COMMENT 65535
#define MAX_DIRECTORY ((int64_t)256 << 20) /* a directory larger than this is hostile */
#define MAX_RATIO 1032                      /* deflate's largest compression ratio */
#define U32_MAX 0xffffffffu

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
/* General purpose bit 11, "the name is UTF-8", for a name beyond ASCII
** (as Python's zipfile, and so np.savez, sets it; a reader takes a name
** without it as code page 437). */
static uint32_t utf8_flag(const char *name) {
  for (; *name; name++)
    if ((unsigned char)*name >= 0x80)
      return 1u << 11;
  return 0;
}

static void put16(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  put16(p, v);
  put16(p + 2, v >> 16);
}
static void put64(unsigned char *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- CRC-32 (the zip polynomial) ---- */

uint32_t zip_crc32(uint32_t crc, const void *buf, size_t len) {
#ifdef JITC_HAVE_ZLIB
  const unsigned char *p = buf;
  while (len > 0) { /* zlib counts in uInt */
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    crc = (uint32_t)crc32(crc, p, chunk);
    p += chunk;
    len -= chunk;
  }
  return crc;
#else
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t n = 0; n < 256; n++) {
      uint32_t c = n;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[n] = c;
    }
  const unsigned char *p = buf;
  crc = ~crc;
  while (len--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
#endif
}

const char *zip_deflate_library(void) {
#ifdef JITC_HAVE_ZLIB
  return zlibVersion();
#else
  return NULL;
#endif
}

/* ---- reading the directory ---- */

static int pread_full(int fd, void *buf, size_t len, int64_t off) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + (int64_t)got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    got += (size_t)r;
  }
  return 0;
}

/* The ZIP64 extra field (id 1) of a central record: the 64-bit values of
** the fields that hold 0xffffffff, in their order (size, compressed size,
** offset).  -1 when one is missing. */
static int zip64_extra(const unsigned char *x, size_t len, ZipEntry *e, bool usize, bool csize,
                       bool offset) {
  while (len >= 4) {
    uint16_t id = get16(x), n = get16(x + 2);
    if ((size_t)n + 4 > len)
      return -1;
    if (id == 1) {
      const unsigned char *v = x + 4;
      size_t left = n;
      uint64_t *want[3] = {usize ? &e->usize : NULL, csize ? &e->csize : NULL,
                           offset ? &e->offset : NULL};
      for (int k = 0; k < 3; k++) {
        if (!want[k])
          continue;
        if (left < 8)
          return -1;
        *want[k] = get64(v);
        v += 8;
        left -= 8;
      }
      return 0;
    }
    x += 4 + n;
    len -= 4 + (size_t)n;
  }
  return usize || csize || offset ? -1 : 0;
}

/* The end of the central directory: where the directory starts, its size
** and its record count. */
static int find_directory(Zip *z, int64_t *cd_off, int64_t *cd_size, int64_t *count, char *err,
                          size_t errlen) {
  int64_t tail = z->size < END_LEN + MAX_COMMENT ? z->size : END_LEN + MAX_COMMENT;
  unsigned char *buf = malloc((size_t)tail);
  if (!buf)
    return file_fail(err, errlen, z->path, "out of memory");
  if (pread_full(z->fd, buf, (size_t)tail, z->size - tail)) {
    free(buf);
    return file_fail(err, errlen, z->path, "read error: %s", strerror(errno));
  }
  /* The last end record whose comment reaches exactly to the end. */
  int64_t at = -1;
  for (int64_t k = tail - END_LEN; k >= 0 && at < 0; k--)
    if (get32(buf + k) == SIG_END && k + END_LEN + get16(buf + k + 20) == tail)
      at = k;
  if (at < 0) {
    free(buf);
    return file_fail(err, errlen, z->path,
                     "not a .npz file (no zip directory at its end: not a zip archive, or "
                     "truncated)");
  }
  const unsigned char *e = buf + at;
  int64_t end_off = z->size - tail + at;
  *count = get16(e + 10);
  *cd_size = get32(e + 12);
  *cd_off = get32(e + 16);
  bool multi = get16(e + 4) != 0 || get16(e + 6) != 0 || get16(e + 8) != get16(e + 10);
  bool zip64 = *count == 0xffff || *cd_size == U32_MAX || *cd_off == U32_MAX;
  free(buf);
  if (zip64) {
    unsigned char loc[20], rec[56];
    if (end_off < 20 || pread_full(z->fd, loc, 20, end_off - 20) || get32(loc) != SIG_LOC64)
      return file_fail(err, errlen, z->path, "bad zip archive: its ZIP64 end record is missing");
    int64_t rec_off = (int64_t)get64(loc + 8);
    if (rec_off < 0 || rec_off > end_off - 20 - 56 || pread_full(z->fd, rec, 56, rec_off) ||
        get32(rec) != SIG_END64)
      return file_fail(err, errlen, z->path, "bad zip archive: bad ZIP64 end record");
    multi |= get32(rec + 16) != 0 || get32(rec + 20) != 0 || get64(rec + 24) != get64(rec + 32);
    *count = (int64_t)get64(rec + 32);
    *cd_size = (int64_t)get64(rec + 40);
    *cd_off = (int64_t)get64(rec + 48);
    end_off = rec_off;
  }
  if (multi)
    return file_fail(err, errlen, z->path, "a zip archive split over several disks is not "
                     "supported");
  if (*cd_off < 0 || *cd_size < 0 || *cd_off > end_off || *cd_size > end_off - *cd_off)
    return file_fail(err, errlen, z->path,
                     "bad zip archive: its directory (%lld bytes at %lld) is not in the file",
                     (long long)*cd_size, (long long)*cd_off);
  if (*cd_size > MAX_DIRECTORY || *count < 0 || *count > *cd_size / 46)
    return file_fail(err, errlen, z->path, "bad zip archive: %lld entries in a directory of "
                     "%lld bytes", (long long)*count, (long long)*cd_size);
  return 0;
}

int zip_open(Zip *z, const char *path, char *err, size_t errlen) {
  memset(z, 0, sizeof *z);
  z->path = path;
  z->fd = file_open_regular(path, "a .npz file", err, errlen);
  if (z->fd < 0)
    return -1;
  struct stat st;
  fstat(z->fd, &st);
  z->size = (int64_t)st.st_size;
  int64_t cd_off = 0, cd_size = 0, count = 0;
  if (z->size < END_LEN) {
    file_fail(err, errlen, path, "not a .npz file (too short: %lld bytes)", (long long)z->size);
    goto fail;
  }
  if (find_directory(z, &cd_off, &cd_size, &count, err, errlen))
    goto fail;
  unsigned char *cd = malloc((size_t)cd_size + 1);
  z->e = calloc((size_t)count + 1, sizeof *z->e);
  if (!cd || !z->e) {
    free(cd);
    file_fail(err, errlen, path, "out of memory");
    goto fail;
  }
  if (pread_full(z->fd, cd, (size_t)cd_size, cd_off)) {
    free(cd);
    file_fail(err, errlen, path, "read error: %s", strerror(errno));
    goto fail;
  }
  size_t pos = 0;
  for (int64_t k = 0; k < count; k++) {
    const unsigned char *c = cd + pos;
    if (cd_size - (int64_t)pos < 46 || get32(c) != SIG_CENTRAL) {
      free(cd);
      file_fail(err, errlen, path, "bad zip archive: bad directory record %lld", (long long)k);
      goto fail;
    }
    size_t nlen = get16(c + 28), xlen = get16(c + 30), clen = get16(c + 32);
    if (46 + nlen + xlen + clen > (size_t)cd_size - pos) {
      free(cd);
      file_fail(err, errlen, path, "bad zip archive: directory record %lld runs past the "
                "directory", (long long)k);
      goto fail;
    }
    ZipEntry *e = &z->e[z->n];
    e->flags = get16(c + 8);
    e->method = get16(c + 10);
    e->crc = get32(c + 16);
    e->csize = get32(c + 20);
    e->usize = get32(c + 24);
    e->offset = get32(c + 42);
    e->name = strndup((const char *)c + 46, nlen);
    if (!e->name) {
      free(cd);
      file_fail(err, errlen, path, "out of memory");
      goto fail;
    }
    z->n++;
    if (zip64_extra(c + 46 + nlen, xlen, e, e->usize == U32_MAX, e->csize == U32_MAX,
                    e->offset == U32_MAX) ||
        e->offset > (uint64_t)cd_off || e->csize > (uint64_t)cd_off - e->offset ||
        strlen(e->name) != nlen) {
      free(cd);
      file_fail(err, errlen, path, "bad zip archive: the entry '%s' is not in the file",
                e->name);
      goto fail;
    }
    pos += 46 + nlen + xlen + clen;
  }
  free(cd);
  return 0;
fail:
  zip_close(z);
  return -1;
}

void zip_close(Zip *z) {
  for (int k = 0; k < z->n; k++)
    free(z->e[k].name);
  free(z->e);
  if (z->fd >= 0)
    close(z->fd);
  memset(z, 0, sizeof *z);
  z->fd = -1;
}

/* ---- a member as a stream ---- */

struct ZipStream {
  const Zip *z;
  const ZipEntry *e;
  int64_t data;      /* where its bytes start in the file */
  uint64_t in, out;  /* compressed bytes consumed, uncompressed bytes given */
  uint32_t crc;
#ifdef JITC_HAVE_ZLIB
  z_stream zs;
  bool zs_open;
  unsigned char buf[1 << 16];
#endif
};

int zip_stream_open(const Zip *z, const ZipEntry *e, ZipStream **out, char *err,
                    size_t errlen) {
  *out = NULL;
  const char *path = z->path;
  if (e->flags & 1)
    return file_fail(err, errlen, path, "the entry '%s' is encrypted", e->name);
  if (e->method != 0 && e->method != 8)
    return file_fail(err, errlen, path, "the entry '%s' is compressed with method %d (jitc "
                     "reads stored and deflated entries, as np.savez and "
                     "np.savez_compressed write them)", e->name, e->method);
  if (e->method == 0 && e->csize != e->usize)
    return file_fail(err, errlen, path, "bad zip archive: the stored entry '%s' has two "
                     "sizes", e->name);
  if (e->method == 8 && e->usize / MAX_RATIO > e->csize + 64)
    return file_fail(err, errlen, path, "bad zip archive: the entry '%s' claims %llu bytes "
                     "from %llu compressed ones", e->name, (unsigned long long)e->usize,
                     (unsigned long long)e->csize);
#ifndef JITC_HAVE_ZLIB
  if (e->method == 8) {
    file_fail(err, errlen, path, "the entry '%s' is compressed (np.savez_compressed), and "
              "this jitc was built without zlib: install zlib (zlib1g-dev) and rebuild, or "
              "save with np.savez", e->name);
    return -3;
  }
#endif
  unsigned char loc[30];
  if (pread_full(z->fd, loc, 30, (int64_t)e->offset) || get32(loc) != SIG_LOCAL)
    return file_fail(err, errlen, path, "bad zip archive: no local header for '%s'", e->name);
  int64_t data = (int64_t)e->offset + 30 + get16(loc + 26) + get16(loc + 28);
  if (data > z->size || (int64_t)e->csize > z->size - data)
    return file_fail(err, errlen, path, "bad zip archive: the data of '%s' runs past the end "
                     "of the file", e->name);
  ZipStream *s = calloc(1, sizeof *s);
  if (!s)
    return file_fail(err, errlen, path, "out of memory");
  s->z = z;
  s->e = e;
  s->data = data;
#ifdef JITC_HAVE_ZLIB
  if (e->method == 8) {
    if (inflateInit2(&s->zs, -15) != Z_OK) {
      free(s);
      return file_fail(err, errlen, path, "out of memory (zlib)");
    }
    s->zs_open = true;
  }
#endif
  *out = s;
  return 0;
}

void zip_stream_close(ZipStream *s) {
  if (!s)
    return;
#ifdef JITC_HAVE_ZLIB
  if (s->zs_open)
    inflateEnd(&s->zs);
#endif
  free(s);
}

#ifdef JITC_HAVE_ZLIB
/* Inflates up to len bytes into buf: the count, or -1 with why. */
static int64_t inflate_some(ZipStream *s, unsigned char *buf, size_t len, char *why,
                            size_t whylen) {
  size_t done = 0;
  while (done < len) {
    if (s->zs.avail_in == 0 && s->in < s->e->csize) {
      uint64_t left = s->e->csize - s->in;
      size_t chunk = left < sizeof s->buf ? (size_t)left : sizeof s->buf;
      if (pread_full(s->z->fd, s->buf, chunk, s->data + (int64_t)s->in)) {
        snprintf(why, whylen, "read error: %s", strerror(errno));
        return -1;
      }
      s->in += chunk;
      s->zs.next_in = s->buf;
      s->zs.avail_in = (uInt)chunk;
    }
    size_t want = len - done > (1u << 30) ? (1u << 30) : len - done;
    s->zs.next_out = buf + done;
    s->zs.avail_out = (uInt)want;
    int rc = inflate(&s->zs, Z_NO_FLUSH);
    done += want - s->zs.avail_out;
    if (rc == Z_STREAM_END)
      break;
    if (rc == Z_BUF_ERROR && s->zs.avail_in == 0 && s->in == s->e->csize) {
      snprintf(why, whylen, "the compressed data of '%s' ends early", s->e->name);
      return -1;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      snprintf(why, whylen, "the compressed data of '%s' is corrupt (%s)", s->e->name,
               s->zs.msg ? s->zs.msg : "zlib error");
      return -1;
    }
  }
  return (int64_t)done;
}
#endif

int64_t zip_stream_read(ZipStream *s, void *buf, size_t len, char *why, size_t whylen) {
  const ZipEntry *e = s->e;
  if (len > e->usize - s->out)
    len = (size_t)(e->usize - s->out);
  int64_t got;
#ifdef JITC_HAVE_ZLIB
  if (e->method == 8) {
    got = inflate_some(s, buf, len, why, whylen);
  } else
#endif
  {
    got = pread_full(s->z->fd, buf, len, s->data + (int64_t)s->out) ? -1 : (int64_t)len;
    if (got < 0)
      snprintf(why, whylen, "read error: %s", strerror(errno));
  }
  if (got < 0)
    return -1;
  s->crc = zip_crc32(s->crc, buf, (size_t)got);
  s->out += (uint64_t)got;
  if (s->out == e->usize && s->crc != e->crc) {
    snprintf(why, whylen, "the entry '%s' is corrupt (its CRC-32 is %08x, the directory "
             "says %08x)", e->name, s->crc, e->crc);
    return -1;
  }
  if (got < (int64_t)len) {
    snprintf(why, whylen, "the compressed data of '%s' ends after %llu of %llu bytes",
             e->name, (unsigned long long)s->out, (unsigned long long)e->usize);
    return -1;
  }
  return got;
}

/* ---- writing an archive of stored members ---- */

/* DOS date and time of now, as zip records them. */
static void dos_time(uint16_t *date, uint16_t *tod) {
  time_t t = time(NULL);
  struct tm tm;
  if (!localtime_r(&t, &tm) || tm.tm_year < 80) {
    *date = (0 << 9) | (1 << 5) | 1; /* 1980-01-01 */
    *tod = 0;
    return;
  }
  *date = (uint16_t)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
  *tod = (uint16_t)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
}

int zip_write(const char *path, const ZipPart *parts, int n, char *err, size_t errlen) {
  uint64_t *offsets = calloc((size_t)n + 1, sizeof *offsets);
  uint32_t *crcs = calloc((size_t)n + 1, sizeof *crcs);
  NewFile f;
  if (!offsets || !crcs) {
    free(offsets);
    free(crcs);
    return file_fail(err, errlen, path, "out of memory");
  }
  int rc = -1;
  if (newfile_open(&f, path, err, errlen))
    goto done;
  uint16_t date, tod;
  dos_time(&date, &tod);
  uint64_t pos = 0;
  for (int k = 0; k < n; k++) {
    const ZipPart *p = &parts[k];
    uint64_t size = p->head_len + p->body_len;
    crcs[k] = zip_crc32(zip_crc32(0, p->head, p->head_len), p->body, p->body_len);
    offsets[k] = pos;
    /* The local header, with a ZIP64 extra field when the size needs one. */
    bool big = size >= U32_MAX;
    size_t nlen = strlen(p->name);
    unsigned char h[30 + 20];
    put32(h, SIG_LOCAL);
    put16(h + 4, big ? 45 : 20);
    put16(h + 6, utf8_flag(p->name));
    put16(h + 8, 0); /* stored */
    put16(h + 10, tod);
    put16(h + 12, date);
    put32(h + 14, crcs[k]);
    put32(h + 18, big ? U32_MAX : (uint32_t)size);
    put32(h + 22, big ? U32_MAX : (uint32_t)size);
    put16(h + 26, (uint32_t)nlen);
    put16(h + 28, big ? 20 : 0);
    put16(h + 30, 1);
    put16(h + 32, 16);
    put64(h + 34, size);
    put64(h + 42, size);
    if (newfile_write(&f, h, 30, err, errlen) || newfile_write(&f, p->name, nlen, err, errlen) ||
        (big && newfile_write(&f, h + 30, 20, err, errlen)) ||
        newfile_write(&f, p->head, p->head_len, err, errlen) ||
        newfile_write(&f, p->body, p->body_len, err, errlen))
      goto done;
    pos += 30 + nlen + (big ? 20 : 0) + size;
  }
  uint64_t cd_off = pos;
  for (int k = 0; k < n; k++) {
    const ZipPart *p = &parts[k];
    uint64_t size = p->head_len + p->body_len;
    bool big_size = size >= U32_MAX, big_off = offsets[k] >= U32_MAX;
    size_t nlen = strlen(p->name), xlen = big_size || big_off ? 4 + 16 * big_size + 8 * big_off : 0;
    unsigned char c[46 + 28];
    put32(c, SIG_CENTRAL);
    put16(c + 4, 3 << 8 | (xlen ? 45 : 20)); /* made on Unix */
    put16(c + 6, xlen ? 45 : 20);
    put16(c + 8, utf8_flag(p->name));
    put16(c + 10, 0);
    put16(c + 12, tod);
    put16(c + 14, date);
    put32(c + 16, crcs[k]);
    put32(c + 20, big_size ? U32_MAX : (uint32_t)size);
    put32(c + 24, big_size ? U32_MAX : (uint32_t)size);
    put16(c + 28, (uint32_t)nlen);
    put16(c + 30, (uint32_t)xlen);
    put16(c + 32, 0);
    put16(c + 34, 0);
    put16(c + 36, 0);
    put32(c + 38, 0644u << 16); /* rw-r--r-- */
    put32(c + 42, big_off ? U32_MAX : (uint32_t)offsets[k]);
    unsigned char *x = c + 46;
    if (xlen) {
      put16(x, 1);
      put16(x + 2, (uint32_t)xlen - 4);
      x += 4;
      if (big_size) {
        put64(x, size);
        put64(x + 8, size);
        x += 16;
      }
      if (big_off)
        put64(x, offsets[k]);
    }
    if (newfile_write(&f, c, 46, err, errlen) || newfile_write(&f, p->name, nlen, err, errlen) ||
        newfile_write(&f, c + 46, xlen, err, errlen))
      goto done;
    pos += 46 + nlen + xlen;
  }
  uint64_t cd_size = pos - cd_off;
  bool big = cd_off >= U32_MAX || cd_size >= U32_MAX || n >= 0xffff;
  unsigned char e[56 + 20 + END_LEN], *q = e;
  if (big) { /* the ZIP64 end record and its locator */
    put32(q, SIG_END64);
    put64(q + 4, 44);
    put16(q + 12, 3 << 8 | 45);
    put16(q + 14, 45);
    put32(q + 16, 0);
    put32(q + 20, 0);
    put64(q + 24, (uint64_t)n);
    put64(q + 32, (uint64_t)n);
    put64(q + 40, cd_size);
    put64(q + 48, cd_off);
    put32(q + 56, SIG_LOC64);
    put32(q + 60, 0);
    put64(q + 64, pos);
    put32(q + 72, 1);
    q += 76;
  }
  put32(q, SIG_END);
  put16(q + 4, 0);
  put16(q + 6, 0);
  put16(q + 8, big ? 0xffff : (uint32_t)n);
  put16(q + 10, big ? 0xffff : (uint32_t)n);
  put32(q + 12, big ? U32_MAX : (uint32_t)cd_size);
  put32(q + 16, big ? U32_MAX : (uint32_t)cd_off);
  put16(q + 20, 0);
  q += END_LEN;
  if (newfile_write(&f, e, (size_t)(q - e), err, errlen))
    goto done;
  rc = newfile_commit(&f, err, errlen);
done:
  free(offsets);
  free(crcs);
  return rc;
}
