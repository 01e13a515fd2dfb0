/*
** fileio.c -- whole reads and writes on file descriptors, and files that
** appear complete or not at all.
**
** An output file is written to a temporary file in the destination's
** directory and renamed over the destination only once it is complete
** (NewFile): a failed write leaves an existing file untouched and no
** partial file behind.  npy.c writes .npy files so, npz.c .npz archives.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, fchmod under -std=c11 */
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

/* Writes "PATH: message" to err and returns -1. */
int file_fail(char *err, size_t errlen, const char *path, const char *fmt, ...) {
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

int64_t read_full(int fd, void *buf, size_t len) {
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
  return (int64_t)got;
}

int write_full(int fd, const void *buf, size_t len) {
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

int newfile_open(NewFile *f, const char *path, char *err, size_t errlen) {
  f->path = path;
  f->fd = -1;
  f->tmp = f->real = NULL;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    f->real = realpath(path, NULL);
    if (!f->real)
      return file_fail(err, errlen, path, "a symbolic link to %s",
                       errno == ENOENT ? "no file" : strerror(errno));
    path = f->real;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    /* A device or a FIFO: written in place (O_NONBLOCK: a FIFO with no
    ** reader is an error, not a hang); it has no content to keep. */
    f->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (f->fd >= 0)
      fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) & ~O_NONBLOCK);
    if (f->fd < 0) {
      file_fail(err, errlen, f->path, "cannot open for writing: %s", strerror(errno));
      free(f->real);
      f->real = NULL;
      return -1;
    }
    return 0;
  }
  /* Beside the destination, so that rename() is atomic (one file system):
  ** ".NAME.XXXXXX" in the same directory. */
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  size_t plen = strlen(path);
  f->tmp = malloc(plen + 16);
  if (!f->tmp) {
    newfile_abort(f);
    return file_fail(err, errlen, f->path, "out of memory");
  }
  memcpy(f->tmp, path, dirlen);
  snprintf(f->tmp + dirlen, plen + 16 - dirlen, ".%s.XXXXXX", path + dirlen);
  f->fd = mkstemp(f->tmp);
  if (f->fd < 0) {
    file_fail(err, errlen, path, "cannot create a temporary file beside it: %s",
              strerror(errno));
    free(f->tmp); /* no file made */
    f->tmp = NULL;
    newfile_abort(f);
    return -1;
  }
  /* mkstemp makes the file 0600; give it the mode the existing file has,
  ** or the one a plain create would give. */
  mode_t mode = (stat(path, &st) == 0 && S_ISREG(st.st_mode)) ? (st.st_mode & 07777)
                                                              : new_file_mode();
  if (fchmod(f->fd, mode) != 0 && errno != EPERM) {
    file_fail(err, errlen, path, "cannot set the file mode: %s", strerror(errno));
    newfile_abort(f);
    return -1;
  }
  return 0;
}

int newfile_write(NewFile *f, const void *buf, size_t len, char *err, size_t errlen) {
  if (write_full(f->fd, buf, len) == 0)
    return 0;
  file_fail(err, errlen, f->path, "write error: %s", strerror(errno));
  newfile_abort(f);
  return -1;
}

int newfile_commit(NewFile *f, char *err, size_t errlen) {
  int rc = close(f->fd);
  f->fd = -1;
  if (rc != 0) {
    file_fail(err, errlen, f->path, "write error: %s", strerror(errno));
  } else if (f->tmp && rename(f->tmp, f->real ? f->real : f->path) != 0) {
    file_fail(err, errlen, f->path, "cannot replace: %s", strerror(errno));
    rc = -1;
  } else {
    free(f->tmp);
    f->tmp = NULL;
    free(f->real);
    f->real = NULL;
    return 0;
  }
  newfile_abort(f);
  return -1;
}

void newfile_abort(NewFile *f) {
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
  if (f->tmp)
    unlink(f->tmp);
  free(f->tmp);
  f->tmp = NULL;
  free(f->real);
  f->real = NULL;
}

int file_open_regular(const char *path, const char *what, char *err, size_t errlen) {
  /* Refuse what is not a regular file before opening it: opening a FIFO
  ** can block and opening some devices has side effects.  fstat after the
  ** open checks again what was actually opened. */
  struct stat st;
  if (stat(path, &st) != 0)
    return file_fail(err, errlen, path, "%s",
                     errno == ENOENT ? "no such file" : strerror(errno));
  if (S_ISDIR(st.st_mode))
    return file_fail(err, errlen, path, "is a directory, not %s", what);
  if (!S_ISREG(st.st_mode))
    return file_fail(err, errlen, path, "is not a regular file (a device, FIFO or socket)");
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return file_fail(err, errlen, path, "cannot open: %s", strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    file_fail(err, errlen, path, "is not a regular file");
    close(fd);
    return -1;
  }
  return fd;
}
