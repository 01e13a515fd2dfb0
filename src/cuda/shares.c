/*
** cuda/shares.c -- which GPUs a run over host arrays uses and which
** elements each one gets: the device list ("0,1"), the weights from the
** GPUs' measured link rates, how many GPUs a run of a given size is worth,
** and the cut of the elements into one contiguous share per GPU.  Pure
** arithmetic: no driver, no state (tests/host_pipe_check.c calls it
** directly).  cuda/multi.c runs the shares.
**
** A share ends where a chunk of the one-GPU run would end: for a program
** with reductions, on the chunks themselves (cuda/host.c: cuda_cut), so
** that every GPU computes the partials one GPU would, in the same order;
** otherwise on a multiple of 4096 elements, where the chunks of one GPU
** would also be cut.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cuda_parse_devices(const char *s, int ndevices, int *out, int max, char *err, size_t len) {
  if (!strcmp(s, "all"))
    return 0;
  int n = 0;
  const char *p = s;
  for (;;) {
    if (*p < '0' || *p > '9') {
      snprintf(err, len, "expected 'all' or device numbers separated by commas, e.g. '0,1'");
      return -1;
    }
    long v = 0;
    while (*p >= '0' && *p <= '9' && v <= 1000000)
      v = v * 10 + (*p++ - '0');
    if (v > 1000000 || (ndevices >= 0 && v >= ndevices)) {
      if (ndevices >= 0)
        snprintf(err, len, "no device %ld: the driver sees %d (0 to %d)", v, ndevices,
                 ndevices - 1);
      else
        snprintf(err, len, "device number out of range");
      return -1;
    }
    if (n == max) {
      snprintf(err, len, "more than %d devices", max);
      return -1;
    }
    out[n++] = (int)v;
    if (!*p)
      return n;
    if (*p++ != ',' || !*p) {
      snprintf(err, len, "expected 'all' or device numbers separated by commas, e.g. '0,1'");
      return -1;
    }
  }
}

void cuda_weights(const double *rate, int n, double *w) {
  double best = 0;
  for (int d = 0; d < n; d++)
    best = rate[d] > best ? rate[d] : best;
  for (int d = 0; d < n; d++) {
    /* Two copies of the same link measure a few percent apart; a share
    ** off by that much would leave one GPU idle for as long at the end. */
    w[d] = best > 0 && rate[d] > 0 ? rate[d] / best : 1;
    if (w[d] >= 0.9)
      w[d] = 1;
  }
}

int cuda_lanes_for(size_t bytes, int n, int64_t least) {
  if (least < 1)
    least = 1;
  size_t most = bytes / (size_t)least;
  return most < 1 ? 1 : most < (size_t)n ? (int)most : n;
}

/* The allowed boundary nearest to x (ties: the lower). */
static int64_t nearest(int64_t n, const int64_t *at, int64_t nat, int64_t granule, double x) {
  if (!at) {
    int64_t lo = (int64_t)(x / (double)granule) * granule;
    lo = lo > n ? n : lo < 0 ? 0 : lo;
    int64_t hi = lo + granule > n ? n : lo + granule;
    return x - (double)lo <= (double)hi - x ? lo : hi;
  }
  int64_t a = 0, b = nat; /* at[a] <= x < at[b], by bisection */
  if (x <= (double)at[0])
    return at[0];
  if (x >= (double)at[nat])
    return at[nat];
  while (b - a > 1) {
    int64_t m = a + (b - a) / 2;
    if ((double)at[m] <= x)
      a = m;
    else
      b = m;
  }
  return x - (double)at[a] <= (double)at[b] - x ? at[a] : at[b];
}

void cuda_split(int64_t n, const int64_t *at, int64_t nat, int64_t granule, const double *w,
                int n_w, int64_t *cut) {
  double total = 0;
  for (int d = 0; d < n_w; d++)
    total += w[d] > 0 ? w[d] : 0;
  if (granule < 1)
    granule = 1;
  double sum = 0;
  cut[0] = 0;
  for (int d = 1; d < n_w; d++) {
    sum += w[d - 1] > 0 ? w[d - 1] : 0;
    double x = total > 0 ? (double)n * (sum / total) : (double)n * d / n_w;
    int64_t c = nearest(n, at, nat, granule, x);
    cut[d] = c < cut[d - 1] ? cut[d - 1] : c;
  }
  cut[n_w] = n;
}
