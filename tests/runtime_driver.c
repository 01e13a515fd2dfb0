/*
** runtime_driver.c -- a command-line front for the array I/O,
** generators and printing, so that tests/t_runtime.py can check them
** against NumPy.  Commands (errors go to stderr with exit status 1):
**
**   gen SPEC DTYPE N OUT.npy     fill an array from SPEC and write it
**   copy IN.npy OUT.npy          read a file and write it back
**   info IN.npy                  print "dtype ndim fortran n shape..."
**   format IN.npy                print format_array of the flat data
**   values IN.npy                print format_value of each element, one a line
**   isspec SPEC                  print 1 if gen_is_spec(SPEC), else 0
**   alloc DTYPE N                allocate and free (for size checks)
**   mt SEED N                    print N raw 32-bit MT19937 outputs
**   badwrite OUT.npy             npy_write of an array whose shape lies
**
** With RT_FSIZE_LIMIT=BYTES in the environment, writes beyond BYTES fail
** (RLIMIT_FSIZE), to test that a failed write leaves no trace; with
** RT_NAMED=DTYPE, files are read as holding DTYPE (npy_read's `named`).
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, mkstemp, fchmod, access under -std=c11 */
#endif
#include "../cli/cli.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int parse_dtype(const char *s, jitc_dtype *t) { return jitc_dtype_parse(s, t) ? -1 : 0; }

static size_t esize(jitc_dtype t) { return jitc_dtype_size(t); }

/* RT_NAMED=T: the type npy_read is told the file holds (a '<V2' file is
** bfloat16 only so). */
static const jitc_dtype *named(void) {
  static jitc_dtype t;
  const char *s = getenv("RT_NAMED");
  return s && !jitc_dtype_parse(s, &t) ? &t : NULL;
}

static int die(const char *msg) {
  fprintf(stderr, "%s\n", msg);
  return 1;
}

int main(int argc, char **argv) {
  char err[512];
  const char *lim = getenv("RT_FSIZE_LIMIT");
  if (lim) {
    struct rlimit rl = {(rlim_t)strtoull(lim, NULL, 10), (rlim_t)strtoull(lim, NULL, 10)};
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &rl);
  }
  if (argc < 2)
    return die("usage: runtime_driver COMMAND ARGS...");
  const char *cmd = argv[1];

  if (!strcmp(cmd, "gen") && argc == 6) {
    jitc_dtype t;
    if (parse_dtype(argv[3], &t))
      return die("bad dtype");
    HostArray a;
    if (host_array_alloc(&a, t, strtoll(argv[4], NULL, 10), err, sizeof err))
      return die(err);
    int rc = gen_fill(&a, argv[2], err, sizeof err) || npy_write(argv[5], &a, err, sizeof err);
    host_array_free(&a);
    return rc ? die(err) : 0;
  }
  if (!strcmp(cmd, "copy") && argc == 4) {
    HostArray a;
    if (npy_read(argv[2], named(), &a, err, sizeof err))
      return die(err);
    int rc = npy_write(argv[3], &a, err, sizeof err);
    host_array_free(&a);
    return rc ? die(err) : 0;
  }
  if ((!strcmp(cmd, "info") || !strcmp(cmd, "format") || !strcmp(cmd, "values")) && argc == 3) {
    HostArray a;
    if (npy_read(argv[2], named(), &a, err, sizeof err))
      return die(err);
    if (((uintptr_t)a.data & 63) != 0) {
      host_array_free(&a);
      return die("data not 64-byte aligned");
    }
    if (!strcmp(cmd, "info")) {
      printf("%s %d %d %" PRId64, jitc_dtype_name(a.dtype), a.ndim, (int)a.fortran, a.n);
      for (int i = 0; i < a.ndim; i++)
        printf(" %" PRId64, a.shape[i]);
      printf("\n");
    } else if (!strcmp(cmd, "format")) {
      char *s = format_array(a.data, a.dtype, a.n);
      printf("%s\n", s ? s : "(null)");
      free(s);
    } else {
      for (int64_t i = 0; i < a.n; i++) {
        char *s = format_value((const char *)a.data + (size_t)i * esize(a.dtype), a.dtype);
        printf("%s\n", s ? s : "(null)");
        free(s);
      }
    }
    host_array_free(&a);
    return 0;
  }
  if (!strcmp(cmd, "isspec") && argc == 3) {
    printf("%d\n", gen_is_spec(argv[2]) ? 1 : 0);
    return 0;
  }
  if (!strcmp(cmd, "alloc") && argc == 4) {
    jitc_dtype t;
    if (parse_dtype(argv[2], &t))
      return die("bad dtype");
    HostArray a;
    if (host_array_alloc(&a, t, strtoll(argv[3], NULL, 10), err, sizeof err))
      return die(err);
    int aligned = ((uintptr_t)a.data & 63) == 0;
    host_array_free(&a);
    host_array_free(&a); /* twice: must be harmless */
    host_array_free(NULL);
    printf("%s\n", aligned ? "aligned" : "misaligned");
    return 0;
  }
  if (!strcmp(cmd, "mt") && argc == 4) {
    Mt19937 st;
    mt_seed(&st, (uint32_t)strtoul(argv[2], NULL, 10));
    long n = strtol(argv[3], NULL, 10);
    for (long i = 0; i < n; i++)
      printf("%" PRIu32 "\n", mt_next32(&st));
    return 0;
  }
  if (!strcmp(cmd, "badwrite") && argc == 3) {
    HostArray a;
    if (host_array_alloc(&a, JITC_FLOAT64, 4, err, sizeof err))
      return die(err);
    a.shape[0] = 5; /* lies: n is 4 */
    int rc = npy_write(argv[2], &a, err, sizeof err);
    host_array_free(&a);
    return rc ? die(err) : 0;
  }
  if (!strcmp(cmd, "time") && argc == 2) {
    double t0 = now_ms(), t1 = now_ms();
    printf("%s\n", t1 >= t0 && t0 > 0 ? "monotonic" : "broken");
    return 0;
  }
  return die("unknown command or wrong arguments");
}
