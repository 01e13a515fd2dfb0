/*
** env.c -- the environment variables that change what jitc does, read once
** when a context is made (jitc_context_new) and kept in ctx->env, so that
** a context behaves the same all its life whatever the process does to its
** environment later.  docs/environment.md lists them; nothing else in the
** library calls getenv().
*/
#include "jitc_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of $name, or NULL when it is unset or empty. */
static char *env_str(Env *e, const char *name) {
  const char *v = getenv(name);
  if (!v || !*v)
    return NULL;
  char *c = strdup(v);
  if (!c)
    e->oom = true;
  return c;
}

/* $name as an integer in [lo, hi], or def when unset; a value that is not
** one is recorded in e->bad (the first only) and def is used. */
static int env_int(Env *e, const char *name, int def, int lo, int hi) {
  const char *v = getenv(name);
  if (!v || !*v)
    return def;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || end == v || x < lo || x > hi) {
    if (!e->bad[0])
      snprintf(e->bad, sizeof e->bad, "environment variable %s='%s': expected an integer "
               "from %d to %d", name, v, lo, hi);
    return def;
  }
  return (int)x;
}

/* $JITC_DEVICES: "all", or device numbers separated by commas; the cuda
** target checks that the devices exist. */
static void env_devices(Env *e) {
  const char *s = e->devices;
  if (!s || !strcmp(s, "all"))
    return;
  for (;;) {
    size_t d = strspn(s, "0123456789");
    if (d == 0 || d > 7)
      break;
    s += d;
    if (!*s)
      return;
    if (*s++ != ',')
      break;
  }
  if (!e->bad[0])
    snprintf(e->bad, sizeof e->bad, "environment variable JITC_DEVICES='%s': expected 'all' "
             "or device numbers separated by commas, such as 0,1", e->devices);
}

/* A number of 1 or 2 digits from 1 to JITC_MAXDIMS at *s, its digits
** passed over; 0 where there is none. */
static int axes_at(const char **s) {
  size_t digits = strspn(*s, "0123456789");
  int v = digits >= 1 && digits <= 2 ? atoi(*s) : 0;
  *s += digits;
  return v >= 1 && v <= JITC_MAXDIMS ? v : 0;
}

/* $JITC_CUDA_PATTERN into e->pattern: axes, ':', a letter per array (c, b
** or s), then ':64' or nothing, then ':kD' (D kept axes of results over
** axes) or nothing, then ':t' (tiles, 2 axes or more) or nothing, as
** cuda_pattern_key writes a pattern; the cuda target checks the letters
** against the program. */
static void env_pattern(Env *e) {
  const char *s = e->cuda_pattern;
  if (!s)
    return;
  const char *r = s;
  int nd = axes_at(&r), kd = 0;
  const char *letters = *r == ':' ? r + 1 : "";
  size_t n = strspn(letters, "cbs");
  r = letters + n;
  bool wide = !strncmp(r, ":64", 3);
  r += wide ? 3 : 0;
  bool ok = nd && n;
  if (!strncmp(r, ":k", 2)) {
    r += 2;
    ok &= (kd = axes_at(&r)) > 0;
  }
  bool tile = !strcmp(r, ":t");
  r += tile ? 2 : 0;
  if (ok && !*r && (!tile || nd >= 2)) {
    e->pattern.nd = nd;
    e->pattern.nletters = (int)n;
    e->pattern.kd = kd;
    e->pattern.letters = letters;
    e->pattern.wide = wide;
    e->pattern.tile = tile;
    return;
  }
  if (!e->bad[0])
    snprintf(e->bad, sizeof e->bad, "environment variable JITC_CUDA_PATTERN='%s': expected "
             "the number of axes, ':' and a letter per array (c, b or s), then ':64' or "
             "nothing, then ':kD' (D kept axes) or nothing, then ':t' (tiles, 2 axes or more) "
             "or nothing, such as 2:sc", s);
}

bool env_read(Env *e) {
  memset(e, 0, sizeof *e);
  e->cpu = env_str(e, "JITC_CPU");
  const char *vm = getenv("JITC_VECMATH");
  if (vm && *vm && strcmp(vm, "sleef") != 0)
    snprintf(e->bad, sizeof e->bad, "environment variable JITC_VECMATH='%s': the only value "
             "is 'sleef'", vm);
  e->sleef_only = vm && !strcmp(vm, "sleef");
  /* The default cache directory, as the XDG base directory rules say. */
  const char *v;
  if ((v = getenv("JITC_CACHE_DIR")) && *v)
    e->cache_dir = strdup(v);
  else if ((v = getenv("XDG_CACHE_HOME")) && *v == '/' && (e->cache_dir = malloc(strlen(v) + 6)))
    sprintf(e->cache_dir, "%s/jitc", v);
  else if ((v = getenv("HOME")) && *v && (e->cache_dir = malloc(strlen(v) + 13)))
    sprintf(e->cache_dir, "%s/.cache/jitc", v);
  if (v && *v && !e->cache_dir)
    e->oom = true;
  e->libcuda = env_str(e, "JITC_LIBCUDA");
  e->libnvrtc = env_str(e, "JITC_LIBNVRTC");
  e->cuda_home = env_str(e, "CUDA_HOME");
  if (!e->cuda_home)
    e->cuda_home = env_str(e, "CUDA_PATH");
  e->cuda_device = env_int(e, "JITC_CUDA_DEVICE", 0, 0, 1 << 20);
  e->cuda_device_set = getenv("JITC_CUDA_DEVICE") && *getenv("JITC_CUDA_DEVICE");
  e->devices = env_str(e, "JITC_DEVICES");
  env_devices(e);
  e->cuda_vbytes = env_int(e, "JITC_CUDA_VBYTES", 16, 1, 64);
  e->cuda_vec = env_int(e, "JITC_CUDA_VEC", 1, 0, 1);
  e->cuda_waves = env_int(e, "JITC_CUDA_WAVES", 0, 0, 1 << 20);
  e->cuda_runroll = env_int(e, "JITC_CUDA_RUNROLL", 4, 1, 16);
  e->cuda_copy_threads = env_int(e, "JITC_CUDA_COPY_THREADS", 0, 0, 256);
  e->cuda_chunk_mb = env_int(e, "JITC_CUDA_CHUNK_MB", 0, 0, 4096);
  e->nvrtc_extra = env_str(e, "JITC_NVRTC_EXTRA");
  e->cuda_pattern = env_str(e, "JITC_CUDA_PATTERN");
  env_pattern(e);
  return !e->oom;
}

void env_free(Env *e) {
  free(e->cpu);
  free(e->cache_dir);
  free(e->libcuda);
  free(e->libnvrtc);
  free(e->cuda_home);
  free(e->nvrtc_extra);
  free(e->cuda_pattern);
  free(e->devices);
  memset(e, 0, sizeof *e);
}
