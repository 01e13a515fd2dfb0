/*
** hostinfo.c -- what the host is: a monotonic clock, the CPU's model and
** features as /proc/cpuinfo names them, and the number of cores.
*/
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int host_ncores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

/* The value of the first line of /proc/cpuinfo whose key starts with one
** of keys[] (up to two), into out; false where there is none. */
static bool cpuinfo_field(const char *key1, const char *key2, char *out, size_t n) {
  out[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return false;
  char line[16384]; /* a flags line is long */
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key1, strlen(key1)) && (!key2 || strncmp(line, key2, strlen(key2))))
      continue;
    char *p = strchr(line, ':');
    if (!p)
      break;
    p++;
    p += strspn(p, " \t");
    p[strcspn(p, "\n")] = '\0';
    snprintf(out, n, "%s", p);
    found = true;
  }
  fclose(f);
  return found;
}

bool host_cpu_model(char *out, size_t n) { return cpuinfo_field("model name", NULL, out, n); }

bool host_cpu_flags(char *out, size_t n) { return cpuinfo_field("flags", "Features", out, n); }
