/*
** codecache.c -- the compile cache of every target: the flow (the
** context's memory table, then the disk, then a compile, then a store) and
** the disk's format.
**
** A target describes what it compiles as a CodeBuild: a namespace ("cpu",
** "cuda"), a key holding everything that changes the code, and functions
** that build the payload (object code, a CUBIN) and load it.  code_get()
** returns what was loaded, from the first place that has it.
**
** On disk an entry is one file, DIR/NS/<hash of key>.bin, holding a header, the
** full key and the payload (object code, PTX, ...):
**
**   offset  size  field
**        0     8  magic "JITCCACH"
**        8     4  format version (CACHE_FORMAT), little-endian like the rest
**       12     4  reserved, 0
**       16     8  key length
**       24     8  payload length
**       32     8  FNV-1a 64 of key bytes then payload bytes
**       40     .  key, then payload
**
** The whole key is stored so that a hash collision is a miss, never a wrong
** hit.  Anything that does not validate (short file, other magic or version,
** other key, bad checksum) is removed and reported as a miss, so a corrupt
** entry is recompiled and replaced.  Writes go to a temporary file in the
** same directory and are renamed into place, so readers see either the old
** entry, the new one or none.  The cache is best effort: every failure is a
** miss or a skipped store, never an error for the caller.
*/
#include "jitc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "JITCCACH"
#define CACHE_FORMAT 1u
#define CACHE_HDR 40
/* Entries are object files of one kernel: a bigger file is not ours. */
#define CACHE_MAX_PAYLOAD ((uint64_t)256 << 20)


static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint32_t get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* mkdir -p with mode 0700 for every directory it creates. */
static int mkdirs(const char *path) {
  char tmp[PATH_MAX];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (tmp[i] != '/' && tmp[i] != '\0') continue;
    char c = tmp[i];
    tmp[i] = '\0';
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
    tmp[i] = c;
  }
  return 0;
}

/* A directory we may trust with code we will execute: ours, and not
** writable by anybody else (who could plant an object file there). */
static int check_dir(const char *path, char *err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "cache directory %s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "cache directory %s: not a directory", path);
    return -1;
  }
  if (st.st_uid != geteuid()) {
    snprintf(err, errlen, "cache directory %s: owned by another user", path);
    return -1;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(err, errlen,
             "cache directory %s: writable by other users (chmod 700 it)", path);
    return -1;
  }
  return 0;
}

/* Makes `dir` (mode 0700) if it is missing and checks it is ours alone. */
static int prepare_dir(const char *dir, char *err, size_t errlen) {
  if (mkdirs(dir) != 0) {
    snprintf(err, errlen, "cannot create cache directory %s: %s", dir, strerror(errno));
    return -1;
  }
  return check_dir(dir, err, errlen);
}

/* DIR/NS/<32 hex digits>.bin; the name hashes the key twice with different
** seeds, so that distinct keys practically never share a file. */
static int entry_path(char *out, size_t outlen, const char *dir, const char *ns,
                      const void *key, size_t keylen) {
  uint64_t h1 = hash64(key, keylen, 0);
  uint64_t h2 = hash64(key, keylen, 0x9e3779b97f4a7c15ull);
  int n = snprintf(out, outlen, "%s/%s/%016llx%016llx.bin", dir, ns,
                   (unsigned long long)h1, (unsigned long long)h2);
  return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

static int read_all(int fd, void *buf, size_t n) {
  unsigned char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  const unsigned char *p = buf;
  while (n > 0) {
    ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int cache_load(const char *dir, const char *ns, const void *key, size_t keylen,
               void **data, size_t *len) {
  char path[PATH_MAX];
  *data = NULL;
  *len = 0;
  if (!dir || !ns || entry_path(path, sizeof path, dir, ns, key, keylen) != 0) return 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  unsigned char hdr[CACHE_HDR];
  unsigned char *buf = NULL;
  struct stat st;
  int ok = 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto done;
  if ((uint64_t)st.st_size < CACHE_HDR || read_all(fd, hdr, CACHE_HDR) != 0) goto bad;
  if (memcmp(hdr, CACHE_MAGIC, 8) != 0 || get32(hdr + 8) != CACHE_FORMAT) goto bad;
  uint64_t klen = get64(hdr + 16), plen = get64(hdr + 24), sum = get64(hdr + 32);
  if (klen != keylen || plen > CACHE_MAX_PAYLOAD ||
      (uint64_t)st.st_size != CACHE_HDR + klen + plen)
    goto bad;
  buf = malloc(klen + plen + 1); /* +1: never malloc(0) */
  if (!buf) goto done;           /* out of memory: a miss, but keep the entry */
  if (read_all(fd, buf, klen + plen) != 0) goto bad;
  if (memcmp(buf, key, keylen) != 0) goto bad;
  if (hash64(buf, klen + plen, 0) != sum) goto bad;
  void *payload = malloc(plen + 1);
  if (!payload) goto done;
  memcpy(payload, buf + klen, plen);
  *data = payload;
  *len = plen;
  ok = 1;
  goto done;
bad:
  /* Corrupt, truncated or foreign: remove it so that the next store
  ** replaces it; it is never handed out. */
  unlink(path);
done:
  free(buf);
  close(fd);
  return ok;
}

static int cache_store(const char *dir, const char *ns, const void *key, size_t keylen,
                const void *data, size_t len) {
  char path[PATH_MAX], sub[PATH_MAX], tmp[PATH_MAX];
  if (!dir || !ns || (uint64_t)len > CACHE_MAX_PAYLOAD) return -1;
  int n = snprintf(sub, sizeof sub, "%s/%s", dir, ns);
  if (n < 0 || (size_t)n >= sizeof sub) return -1;
  if (mkdir(sub, 0700) != 0 && errno != EEXIST) return -1;
  if (entry_path(path, sizeof path, dir, ns, key, keylen) != 0) return -1;
  n = snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", sub);
  if (n < 0 || (size_t)n >= sizeof tmp) return -1;
  int fd = mkstemp(tmp); /* mode 0600 */
  if (fd < 0) return -1;
  unsigned char hdr[CACHE_HDR];
  memcpy(hdr, CACHE_MAGIC, 8);
  put32(hdr + 8, CACHE_FORMAT);
  put32(hdr + 12, 0);
  put64(hdr + 16, keylen);
  put64(hdr + 24, len);
  put64(hdr + 32, hash64_update(hash64(key, keylen, 0), data, len));
  int rc = -1;
  if (write_all(fd, hdr, CACHE_HDR) == 0 && write_all(fd, key, keylen) == 0 &&
      write_all(fd, data, len) == 0)
    rc = 0;
  if (close(fd) != 0) rc = -1;
  if (rc == 0 && rename(tmp, path) != 0) rc = -1;
  if (rc != 0) unlink(tmp);
  return rc;
}

/* ---- the flow ---- */

struct CodeEntry {
  CodeEntry *next;
  const char *ns; /* a string of the target's, static */
  uint64_t hash;
  char *key;
  size_t keylen;
  void *code;
  void (*unload)(jitc_context *ctx, void *code);
};

#define NBUCKETS (sizeof ((CodeCache *)0)->bucket / sizeof ((CodeCache *)0)->bucket[0])

static CodeEntry *mem_find(CodeCache *c, const CodeBuild *b, uint64_t h) {
  for (CodeEntry *e = c->bucket[h % NBUCKETS]; e; e = e->next)
    if (e->hash == h && e->keylen == b->keylen && !strcmp(e->ns, b->ns) &&
        !memcmp(e->key, b->key, b->keylen))
      return e;
  return NULL;
}

/* Adds code to the table; false when out of memory (the caller unloads it). */
static bool mem_add(CodeCache *c, const CodeBuild *b, uint64_t h, void *code) {
  CodeEntry *e = malloc(sizeof *e);
  char *key = malloc(b->keylen + 1);
  if (!e || !key) {
    free(e);
    free(key);
    return false;
  }
  memcpy(key, b->key, b->keylen);
  key[b->keylen] = '\0';
  *e = (CodeEntry){c->bucket[h % NBUCKETS], b->ns, h, key, b->keylen, code, b->unload};
  c->bucket[h % NBUCKETS] = e;
  return true;
}

void code_cache_free(jitc_context *ctx) {
  CodeCache *c = &ctx->codes;
  for (size_t q = 0; q < NBUCKETS; q++)
    while (c->bucket[q]) {
      CodeEntry *e = c->bucket[q];
      c->bucket[q] = e->next;
      if (e->unload)
        e->unload(ctx, e->code);
      free(e->key);
      free(e);
    }
}

const char *jitc_cache_dir(jitc_context *ctx, const char *dir) {
  if (!ctx)
    return NULL;
  diags_clear(&ctx->diags);
  free(ctx->cache_dir);
  ctx->cache_dir = NULL;
  if (!dir || !*dir)
    dir = ctx->env.cache_dir;
  if (!dir) {
    ctx_error(ctx, JITC_E_UNAVAILABLE, "no cache directory: set JITC_CACHE_DIR or HOME");
    return NULL;
  }
  char why[PATH_MAX + 100];
  if (prepare_dir(dir, why, sizeof why) != 0) {
    ctx_error(ctx, JITC_E_UNAVAILABLE, "%s", why);
    return NULL;
  }
  if (!(ctx->cache_dir = strdup(dir)))
    ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  return ctx->cache_dir;
}

jitc_status code_get(jitc_context *ctx, const jitc_options *opt, const CodeBuild *b,
                     void **code, jitc_compile_info *ci) {
  *code = NULL;
  uint64_t h = hash64(b->key, b->keylen, 0);
  CodeEntry *e = mem_find(&ctx->codes, b, h);
  if (e) {
    ci->cache = "memory";
    *code = e->code;
    return JITC_OK;
  }
  /* A directory that cannot be used is no error: the cache is best effort. */
  const char *dir = opt->no_cache ? NULL : opt->cache_dir && *opt->cache_dir ? opt->cache_dir
                                                                             : ctx->env.cache_dir;
  char why[PATH_MAX + 100];
  if (dir && prepare_dir(dir, why, sizeof why) != 0)
    dir = NULL;
  ci->cache = dir ? "miss" : "none";
  void *data = NULL;
  size_t len = 0;
  jitc_status st = JITC_OK;
  if (dir && cache_load(dir, b->ns, b->key, b->keylen, &data, &len) == 1) {
    double t0 = now_ms();
    st = b->load(ctx, b->arg, data, len, code);
    free(data);
    if (st == JITC_OK) {
      ci->cache = "disk";
      ci->load_ms = now_ms() - t0;
    } else {
      diags_clear(&ctx->diags); /* an entry that does not load: build afresh */
      *code = NULL;
    }
  }
  if (!*code) {
    if ((st = b->build(ctx, b->arg, &data, &len)) != JITC_OK)
      return st;
    if (dir)
      cache_store(dir, b->ns, b->key, b->keylen, data, len); /* best effort */
    double t0 = now_ms();
    st = b->load(ctx, b->arg, data, len, code);
    free(data);
    if (st != JITC_OK)
      return st;
    ci->load_ms = now_ms() - t0;
  }
  if (!mem_add(&ctx->codes, b, h, *code)) {
    if (b->unload)
      b->unload(ctx, *code);
    *code = NULL;
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  return JITC_OK;
}
