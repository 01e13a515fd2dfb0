/*
** npz.c -- NumPy .npz files: a zip archive (zip.c) of .npy members, one
** per array, each named NAME.npy, as np.savez and np.savez_compressed
** write them and np.load reads them.  An array is read straight from its
** member, inflated on the way where it is deflated, with no copy of the
** member in memory.  Arrays are written as np.savez writes them: stored.
*/
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool npz_array_name(const ZipEntry *e, char *out, size_t outsz) {
  size_t len = strlen(e->name);
  if (len < 5 || strcmp(e->name + len - 4, ".npy") || len - 4 >= outsz)
    return false;
  memcpy(out, e->name, len - 4);
  out[len - 4] = '\0';
  return true;
}

int npz_find(const Zip *z, const char *name) {
  char own[1024];
  int found = -1;
  /* The last of equal names, as np.load finds it (zipfile's getinfo). */
  for (int k = 0; k < z->n; k++)
    if (npz_array_name(&z->e[k], own, sizeof own) && !strcmp(own, name))
      found = k;
  return found;
}

void npz_names(const Zip *z, char *out, size_t outsz) {
  size_t len = 0;
  out[0] = '\0';
  int shown = 0;
  for (int k = 0; k < z->n && len + 8 < outsz; k++) {
    char name[1024];
    if (!npz_array_name(&z->e[k], name, sizeof name))
      continue;
    if (shown == 8) {
      snprintf(out + len, outsz - len, ", ...");
      return;
    }
    len += (size_t)snprintf(out + len, outsz - len, "%s'%s'", shown++ ? ", " : "", name);
    if (len >= outsz)
      return;
  }
  if (!shown)
    snprintf(out, outsz, "no array");
}

static int64_t member_read(void *ctx, void *buf, size_t len, char *why, size_t whylen) {
  return zip_stream_read(ctx, buf, len, why, whylen);
}

int npz_read(const Zip *z, int k, const jitc_dtype *named, bool header_only, HostArray *out,
             char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  const ZipEntry *e = &z->e[k];
  char label[1100], name[1024];
  if (!npz_array_name(e, name, sizeof name))
    snprintf(name, sizeof name, "%s", e->name);
  snprintf(label, sizeof label, "%s:%s", z->path, name);
  ZipStream *s;
  int rc = zip_stream_open(z, e, &s, err, errlen);
  if (rc)
    return rc;
  ByteSrc src = {.name = label, .size = (int64_t)e->usize, .read = member_read, .ctx = s};
  if (e->usize > INT64_MAX) {
    zip_stream_close(s);
    return file_fail(err, errlen, label, "too large");
  }
  rc = npy_read_src(&src, named, header_only, out, err, errlen);
  zip_stream_close(s);
  return rc;
}

int npz_write(const char *path, const char *const *names, const HostArray *const *arrays, int n,
              char *err, size_t errlen) {
  ZipPart *parts = calloc((size_t)n + 1, sizeof *parts);
  char *heads = malloc((size_t)(n + 1) * NPY_HEADER_MAX);
  char *members = malloc((size_t)(n + 1) * 1032);
  int rc = -1;
  if (!parts || !heads || !members) {
    file_fail(err, errlen, path, "out of memory");
    goto done;
  }
  for (int k = 0; k < n; k++) {
    const HostArray *a = arrays[k];
    if (npy_check(a, err, errlen, path))
      goto done;
    char *head = heads + (size_t)k * NPY_HEADER_MAX, *member = members + (size_t)k * 1032;
    if (strlen(names[k]) > 1024) {
      file_fail(err, errlen, path, "cannot write: the name '%.40s...' is too long", names[k]);
      goto done;
    }
    snprintf(member, 1032, "%s.npy", names[k]);
    parts[k] = (ZipPart){.name = member, .head = head,
                         .head_len = npy_header_build(a, head, NPY_HEADER_MAX),
                         .body = a->data, .body_len = (uint64_t)a->n * jitc_dtype_size(a->dtype)};
    if (!parts[k].head_len) {
      file_fail(err, errlen, path, "cannot write: header too long");
      goto done;
    }
  }
  rc = zip_write(path, parts, n, err, errlen);
done:
  free(parts);
  free(heads);
  free(members);
  return rc;
}
