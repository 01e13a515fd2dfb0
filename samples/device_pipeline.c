/*
** device_pipeline.c -- arrays that stay on the GPU between kernels, as CuPy
** arrays do: upload x once; run
**
**     y = exp(x)      z = y * 2 + x      w = where(z > 3, z, 0)
**
** one kernel after the other on device buffers (jitc_buffer_*), and
** download w once.  Nothing crosses the PCIe bus between the kernels: the
** steps that print their times show where the time goes (the copies, far
** more than the kernels).  The same three kernels on host arrays, on the
** host's target (cpu, or interp where jitc was built without LLVM), are the
** reference that w is checked against.  Last, the same computation as one
** program with `let`: one kernel that reads x and writes w, two passes
** over memory where the three kernels make seven.
**
** Without a GPU it runs the host part (the fused program included, checked
** against the three kernels), says why it stops, and exits with
** jitc_exit_code(JITC_E_UNAVAILABLE), 69: the code a program should give for
** a missing device.
**
**   cc -o device_pipeline samples/device_pipeline.c $(pkg-config --cflags --libs jitc)
**   ./device_pipeline [ELEMENTS]
*/
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include "jitc.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The arrays, by name; every one is float32.  STEPS are the kernels in the
** order they run; FUSED is the same as one program, whose y and z are
** values inside the kernel (`let`), not arrays: it names only x and w. */
enum { X, Y, Z, W, NARRAYS };
static const jitc_array_decl arrays[NARRAYS] = {
    {"x", JITC_FLOAT32}, {"y", JITC_FLOAT32}, {"z", JITC_FLOAT32}, {"w", JITC_FLOAT32}};
static const char *const steps[] = {"y = exp(x)", "z = y * 2 + x", "w = where(z > 3, z, 0)"};
enum { NSTEPS = sizeof steps / sizeof *steps };
static const char fused[] = "let y = exp(x)\nlet z = y * 2 + x\nw = where(z > 3, z, 0)";

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Compiles `src` for target t and finds, for each of the kernel's arrays in
** its order (first appearance in the program), which of x, y, z, w it is:
** slot[j].  Declaring arrays a program does not name is fine, so the steps
** share one signature; the fused program declares x and w alone, since
** its y and z are its own. */
static jitc_status compile(jitc_context *ctx, jitc_target t, const char *src, jitc_kernel **k,
                           int *slot) {
  jitc_array_decl xw[] = {arrays[X], arrays[W]};
  jitc_options opt;
  jitc_options_init(&opt);
  opt.target = t;
  jitc_status st = src == fused ? jitc_compile(ctx, src, xw, 2, NULL, 0, &opt, k)
                                : jitc_compile(ctx, src, arrays, NARRAYS, NULL, 0, &opt, k);
  for (int j = 0; !st && j < jitc_kernel_array_count(*k); j++) {
    const char *name;
    jitc_kernel_array(*k, j, &name, NULL, NULL);
    slot[j] = (int)(strchr("xyzw", name[0]) - "xyzw");
  }
  return st;
}

static const char *label(const char *src) { return src == fused ? "(all three, fused)" : src; }

/* Runs `src` on host arrays with the host's target (cpu, or interp in a
** jitc built without LLVM): host[] holds x, y, z, w by name. */
static jitc_status run_on_host(jitc_context *ctx, int64_t n, const char *src, float *const *host) {
  jitc_options defaults;
  jitc_options_init(&defaults);
  jitc_kernel *k;
  int slot[NARRAYS];
  jitc_status st = compile(ctx, defaults.target, src, &k, slot);
  if (st)
    return st;
  void *ptrs[NARRAYS];
  jitc_run_info info;
  for (int j = 0; j < jitc_kernel_array_count(k); j++)
    ptrs[j] = host[slot[j]];
  st = jitc_run(ctx, k, n, ptrs, NULL, &info);
  if (!st)
    printf("  %-24s %9.3f ms\n", label(src), info.run_ms);
  jitc_kernel_free(k);
  return st;
}

/* Runs `src` on the device buffers dev[] (x, y, z, w by name); prints the
** kernel's time (CUDA events) and the whole call's. */
static jitc_status run_on_device(jitc_context *ctx, int64_t n, const char *src,
                                 jitc_buffer *const *dev) {
  jitc_kernel *k;
  int slot[NARRAYS];
  jitc_status st = compile(ctx, JITC_TARGET_CUDA, src, &k, slot);
  if (st)
    return st;
  jitc_buffer *bufs[NARRAYS];
  jitc_run_info info;
  for (int j = 0; j < jitc_kernel_array_count(k); j++)
    bufs[j] = dev[slot[j]];
  /* The first run of a new kernel loads its module; the second is the
  ** steady state of a long pipeline. */
  st = jitc_run_buffers(ctx, k, n, bufs, NULL, &info);
  if (!st)
    st = jitc_run_buffers(ctx, k, n, bufs, NULL, &info);
  if (!st)
    printf("  %-24s %9.3f ms (kernel %.3f ms)\n", label(src), info.run_ms, info.kernel_ms);
  jitc_kernel_free(k);
  return st;
}

/* The pipeline on the GPU: upload x, the steps, download w into *w_out;
** then the fused program over the same buffers, its w into *w_fused. */
static jitc_status pipeline(jitc_context *ctx, int64_t n, const float *x, float *w_out,
                            float *w_fused) {
  jitc_buffer *dev[NARRAYS] = {NULL};
  jitc_status st = JITC_OK;
  for (int a = 0; a < NARRAYS && !st; a++)
    st = jitc_buffer_new(ctx, JITC_TARGET_CUDA, JITC_FLOAT32, n, &dev[a]);
  if (!st)
    printf("on the GPU (%s, device buffers):\n", jitc_target_device(ctx, JITC_TARGET_CUDA));
  double t0 = now_ms();
  if (!st)
    st = jitc_buffer_upload(ctx, dev[X], x, n);
  if (!st)
    printf("  %-24s %9.3f ms\n", "upload x", now_ms() - t0);
  for (int s = 0; s < NSTEPS && !st; s++)
    st = run_on_device(ctx, n, steps[s], dev);
  t0 = now_ms();
  if (!st)
    st = jitc_buffer_download(ctx, dev[W], w_out, n);
  if (!st)
    printf("  %-24s %9.3f ms\n", "download w", now_ms() - t0);
  if (!st)
    st = run_on_device(ctx, n, fused, dev);
  if (!st)
    st = jitc_buffer_download(ctx, dev[W], w_fused, n);
  for (int a = 0; a < NARRAYS; a++)
    jitc_buffer_free(dev[a]);
  return st;
}

/* Elements where w differs from the reference by more than 4 float32
** epsilons of its size.  Where z is within that of 3, the two targets may
** fairly disagree on z > 3, so both 0 and z are right there. */
static int64_t wrong(const float *w, const float *w_ref, const float *z_ref, int64_t n) {
  const float tol = 4 * FLT_EPSILON;
  int64_t bad = 0;
  for (int64_t e = 0; e < n; e++) {
    if (fabsf(w[e] - w_ref[e]) <= tol * fabsf(w_ref[e]))
      continue;
    if (fabsf(z_ref[e] - 3) <= tol * 3 && (w[e] == 0 || fabsf(w[e] - z_ref[e]) <= tol * 3))
      continue;
    if (bad++ < 3)
      printf("  w[%lld] = %.9g, the reference has %.9g\n", (long long)e, w[e], w_ref[e]);
  }
  return bad;
}

/* host[]: x, y, z, w of the reference, then the w of each other way. */
enum { W_HOST_FUSED = NARRAYS, W_GPU, W_GPU_FUSED, NHOST };

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 10000000;
  if (n < 1) {
    fprintf(stderr, "usage: %s [ELEMENTS]\n", argv[0]);
    return jitc_exit_code(JITC_E_USAGE);
  }
  jitc_context *ctx = jitc_context_new();
  float *host[NHOST] = {NULL};
  jitc_status st = ctx ? JITC_OK : JITC_E_NOMEM;
  for (int a = 0; a < NHOST && !st; a++)
    if (!(host[a] = malloc((size_t)n * sizeof(float))))
      st = JITC_E_NOMEM;
  if (!st) {
    for (int64_t e = 0; e < n; e++) /* x from -4 to 4: z > 3 for about half */
      host[X][e] = (float)(-4 + 8 * ((double)e / (double)n));
    jitc_options defaults;
    jitc_options_init(&defaults);
    printf("%lld float32 elements\nreference on the host (%s target, host arrays):\n",
           (long long)n, jitc_target_name(defaults.target));
  }
  for (int s = 0; s < NSTEPS && !st; s++)
    st = run_on_host(ctx, n, steps[s], host);
  float *fused_host[NARRAYS] = {host[X], NULL, NULL, host[W_HOST_FUSED]};
  if (!st)
    st = run_on_host(ctx, n, fused, fused_host);
  int code = 0;
  if (!st && jitc_target_available(ctx, JITC_TARGET_CUDA) != JITC_OK) {
    fprintf(stderr, "device_pipeline: needs a GPU: %s", jitc_errmsg(ctx));
    code = jitc_exit_code(JITC_E_UNAVAILABLE);
  } else if (!st) {
    st = pipeline(ctx, n, host[X], host[W_GPU], host[W_GPU_FUSED]);
  }
  if (st) {
    fprintf(stderr, "device_pipeline: %s: %s", jitc_status_name(st),
            ctx ? jitc_errmsg(ctx) : "out of memory\n");
    code = jitc_exit_code(st);
  }
  /* Every other w against the reference's, as far as it got. */
  int last = st ? W_HOST_FUSED - 1 : code ? W_HOST_FUSED : W_GPU_FUSED;
  for (int a = W_HOST_FUSED; a <= last; a++) {
    static const char *const what[] = {"w fused on the host", "w of the GPU's three kernels",
                                       "w fused on the GPU"};
    int64_t bad = wrong(host[a], host[W], host[Z], n);
    printf("%s %s the reference's (%lld elements differ)\n", what[a - W_HOST_FUSED],
           bad ? "DIFFERS FROM" : "agrees with", (long long)bad);
    if (bad)
      code = 1;
  }
  for (int a = 0; a < NHOST; a++)
    free(host[a]);
  jitc_context_free(ctx);
  return code;
}
