/*
** info.c -- --version (the version and this build's targets) and --info
** (also what this machine has, as a bug report wants it: the CPU, NVRTC,
** the CUDA driver and GPUs, which targets are available, the cache).
*/
#include "cli.h"
#include "../runtime/cuda_api.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bytes and files under `dir` (one level of subdirectories, as the cache has). */
static void dir_usage(const char *dir, int depth, double *bytes, long *files) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &st))
      continue;
    if (S_ISDIR(st.st_mode) && depth < 2) {
      dir_usage(path, depth + 1, bytes, files);
    } else if (S_ISREG(st.st_mode)) {
      *bytes += (double)st.st_size;
      (*files)++;
    }
  }
  closedir(d);
}

/* The host CPU's model and the SIMD features that matter to the cpu target. */
static void print_host_cpu(void) {
  static const char *const interesting[] = {
      "sse2", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq",
      "avx512bw", "avx512vl", "avx512_fp16", "asimd", "sve", "sve2"};
  static char flags[16384];
  char model[256], features[512] = "";
  if (!host_cpu_model(model, sizeof model))
    snprintf(model, sizeof model, "unknown");
  if (host_cpu_flags(flags, sizeof flags)) {
    char padded[sizeof flags + 2];
    snprintf(padded, sizeof padded, " %s ", flags);
    for (size_t k = 0; k < sizeof interesting / sizeof interesting[0]; k++) {
      char pat[64];
      snprintf(pat, sizeof pat, " %s ", interesting[k]);
      if (strstr(padded, pat) && strlen(features) + strlen(interesting[k]) + 2 < sizeof features)
        strcat(strcat(features, features[0] ? " " : ""), interesting[k]);
    }
    if (!features[0])
      snprintf(features, sizeof features, "(none of the SIMD features jitc uses)");
  }
  printf("host cpu: %s, %d cores\n", model, host_ncores());
  printf("cpu features: %s\n", features[0] ? features : "unknown (no /proc/cpuinfo)");
}

/* NVRTC, the driver and every GPU, loaded here as the cuda target loads them. */
static void print_cuda(void) {
  CudaApi api;
  memset(&api, 0, sizeof api);
  char err[512];
  /* The libraries the library loads, from the same variables (src/env.c,
  ** docs/environment.md). */
  const char *home = getenv("CUDA_HOME") && *getenv("CUDA_HOME") ? getenv("CUDA_HOME")
                                                                  : getenv("CUDA_PATH");
  if (cuda_load_nvrtc(&api, getenv("JITC_LIBNVRTC"), home, err, sizeof err))
    printf("nvrtc: not found: %s\n", err);
  else
    printf("nvrtc: %d.%d (%s)\n", api.nvrtc_major, api.nvrtc_minor, api.nvrtc_path);
  if (cuda_load_driver(&api, getenv("JITC_LIBCUDA"), err, sizeof err)) {
    printf("cuda driver: none\n");
    printf("no GPU: %s\n", err);
  } else {
    printf("cuda driver: %d.%d\n", api.driver_version / 1000, api.driver_version % 1000 / 10);
    int count = 0;
    CUresult r = api.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count < 1)
      printf("no GPU: %s\n", r != CUDA_SUCCESS ? cuda_result_name(&api, r) : "the driver sees none");
    for (int g = 0; g < count; g++) {
      CUdevice dev;
      char name[256] = "?";
      int major = 0, minor = 0, sms = 0;
      size_t mem = 0;
      if (api.cuDeviceGet(&dev, g) != CUDA_SUCCESS)
        continue;
      api.cuDeviceGetName(name, (int)sizeof name, dev);
      api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      api.cuDeviceTotalMem(&mem, dev);
      printf("gpu %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", g, name, major, minor, sms,
             (double)mem / 1073741824.0);
    }
  }
  cuda_unload(&api);
}

/* --version: the version and this build's targets.  --info adds what this
** machine has, as a bug report wants it; it needs no GPU. */
void print_version(bool info, const char *cache_dir) {
  printf("jitc %s\n", JITC_VERSION);
  for (int t = 0; t < JITC_NTARGETS; t++)
    printf("target %s: %s\n", jitc_target_name((jitc_target)t),
           jitc_target_version((jitc_target)t));
  const char *zlib = zip_deflate_library();
  if (zlib)
    printf(".npz: stored and compressed (zlib %s)\n", zlib);
  else
    printf(".npz: stored only (built without zlib: np.savez_compressed files are refused)\n");
  if (!info)
    return;
  print_host_cpu();
  print_cuda();
  jitc_context *ctx = jitc_context_new();
  if (!ctx) {
    printf("cache: unusable: out of memory\n");
    return;
  }
  for (int t = 0; t < JITC_NTARGETS; t++) {
    if (jitc_target_available(ctx, (jitc_target)t) == JITC_OK) {
      printf("%s: available on %s\n", jitc_target_name((jitc_target)t),
             jitc_target_device(ctx, (jitc_target)t));
    } else {
      const char *why = errmsg_text(ctx, JITC_E_UNAVAILABLE);
      printf("%s: unavailable: %.*s\n", jitc_target_name((jitc_target)t),
             (int)strcspn(why, "\n"), why);
    }
  }
  const char *dir = jitc_cache_dir(ctx, cache_dir);
  if (!dir) {
    const char *why = errmsg_text(ctx, JITC_E_UNAVAILABLE);
    printf("cache: unusable: %.*s\n", (int)strcspn(why, "\n"), why);
  } else {
    double bytes = 0;
    long files = 0;
    dir_usage(dir, 0, &bytes, &files);
    printf("cache: %s (%ld files, %.1f MiB)\n", dir, files, bytes / 1048576.0);
  }
  jitc_context_free(ctx);
}
