/*
** nvrtc_alone.c -- one NVRTC compile of a kernel's CUDA C and the load of
** its module, in a process of its own, without jitc: what bench/cold_compile.sh
** compares jitc's compile with, and the two ways to a loaded kernel:
**
**   nvrtc_alone FILE cubin [OPTIONS...]   NVRTC makes the CUBIN (its ptxas)
**   nvrtc_alone FILE ptx [OPTIONS...]     NVRTC makes PTX; the driver's JIT
**                                         compiles it as the module loads
**
** FILE is `jitc --emit cuda` of a program (its kernel jitc_k32); sm_90 (or
** compute_90).  NVRTC's first call in the process is spent first on another
** kernel, as jitc spends it while the driver starts.  Prints one line: the
** driver's start, the warm-up, NVRTC, the load, and NVRTC plus the load.
*/
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <nvrtc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  static char src[1 << 20];
  FILE *f = argc >= 3 ? fopen(argv[1], "rb") : NULL;
  if (!f) {
    fprintf(stderr, "usage: nvrtc_alone FILE cubin|ptx [NVRTC options]\n");
    return 2;
  }
  src[fread(src, 1, sizeof src - 1, f)] = 0;
  fclose(f);
  bool ptx = !strcmp(argv[2], "ptx");
  double t0 = now_ms();
  CUdevice dev;
  CUcontext cx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&cx, dev) ||
      cuCtxSetCurrent(cx)) {
    fprintf(stderr, "nvrtc_alone: no CUDA device\n");
    return 1;
  }
  double t1 = now_ms();
  nvrtcProgram p;
  const char *warm = "extern \"C\" __global__ void w(float *a) { a[threadIdx.x] += 1.f; }";
  const char *wopt[] = {"-arch=sm_90", "-minimal"};
  nvrtcCreateProgram(&p, warm, "warm.cu", 0, NULL, NULL);
  nvrtcCompileProgram(p, 2, wopt);
  nvrtcDestroyProgram(&p);
  double t2 = now_ms();
  const char *opts[32];
  int no = 0;
  opts[no++] = ptx ? "-arch=compute_90" : "-arch=sm_90";
  for (int q = 3; q < argc && no < 32; q++)
    opts[no++] = argv[q];
  nvrtcCreateProgram(&p, src, "jitc.cu", 0, NULL, NULL);
  nvrtcResult r = nvrtcCompileProgram(p, no, opts);
  size_t size = 0;
  if (r == NVRTC_SUCCESS)
    r = ptx ? nvrtcGetPTXSize(p, &size) : nvrtcGetCUBINSize(p, &size);
  char *image = malloc(size ? size : 1);
  if (r == NVRTC_SUCCESS)
    r = ptx ? nvrtcGetPTX(p, image) : nvrtcGetCUBIN(p, image);
  nvrtcDestroyProgram(&p);
  double t3 = now_ms();
  CUmodule mod;
  CUfunction fn;
  CUresult e = r == NVRTC_SUCCESS ? cuModuleLoadData(&mod, image) : CUDA_ERROR_INVALID_IMAGE;
  if (!e)
    e = cuModuleGetFunction(&fn, mod, "jitc_k32");
  double t4 = now_ms();
  free(image);
  if (r != NVRTC_SUCCESS || e) {
    fprintf(stderr, "nvrtc_alone: %s, load %d\n", nvrtcGetErrorString(r), (int)e);
    return 1;
  }
  printf("%s start_ms %.1f warmup_ms %.1f nvrtc_ms %.2f load_ms %.2f total_ms %.2f\n", argv[2],
         t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t2);
  return 0;
}
