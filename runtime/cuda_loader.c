/*
** cuda_loader.c -- opens NVRTC and the CUDA driver at run time.
**
** Nothing in jitc links against CUDA: the cuda target calls these functions
** the first time it is used, and a machine without a GPU, a driver or a
** toolkit gets an error message that says which one is missing.  NVRTC is
** found on the library path or in the usual toolkit directories (it often
** is not on the default path); the driver is libcuda.so.1, which the
** driver installer puts on the path.  The caller passes the paths the
** user chose (the context's environment, env.c); nothing here reads it.  Driver functions come from
** cuGetProcAddress at CUDA_API_VERSION, so each pointer has exactly the
** signature declared in cuda_api.h, whatever the installed driver's newest
** version of that function is.
*/
#include "cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dlopen of `name`, and on failure of each of `dirs`/name.  The path that
** worked goes to `used`; the first dlerror() to `why`. */
static void *open_lib(const char *name, const char *const *dirs, int ndirs, char *used,
                      size_t usedlen, char *why, size_t whylen) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h) {
    snprintf(used, usedlen, "%s", name);
    return h;
  }
  const char *e = dlerror();
  if (why && why[0] == '\0')
    snprintf(why, whylen, "%s", e ? e : "not found");
  if (strchr(name, '/'))
    return NULL; /* an explicit path: do not search */
  for (int i = 0; i < ndirs; i++) {
    if (!dirs[i] || !dirs[i][0])
      continue;
    char path[512];
    int len = snprintf(path, sizeof path, "%s/%s", dirs[i], name);
    if (len < 0 || (size_t)len >= sizeof path)
      continue;
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      snprintf(used, usedlen, "%s", path);
      return h;
    }
    (void)dlerror();
  }
  return NULL;
}

int cuda_load_nvrtc(CudaApi *api, const char *lib, const char *cuda_home, char *err,
                    size_t errlen) {
  if (api->libnvrtc)
    return 0;
  char why[256] = "";
  char home[400] = "";
  if (cuda_home && *cuda_home)
    snprintf(home, sizeof home, "%s/lib64", cuda_home);
  const char *dirs[] = {home, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                        "/usr/lib/x86_64-linux-gnu"};
  int ndirs = (int)(sizeof dirs / sizeof dirs[0]);
  void *h = NULL;
  if (lib && *lib) {
    h = open_lib(lib, dirs, ndirs, api->nvrtc_path, sizeof api->nvrtc_path, why, sizeof why);
  } else {
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++)
      h = open_lib(names[i], dirs, ndirs, api->nvrtc_path, sizeof api->nvrtc_path, why,
                   sizeof why);
  }
  if (!h) {
    snprintf(err, errlen, "NVRTC not found: %s (set JITC_LIBNVRTC or CUDA_HOME)",
             lib && *lib ? why : "libnvrtc.so.13 is not on the library path "
                                 "nor in $CUDA_HOME/lib64 or /usr/local/cuda/lib64");
    return -1;
  }
#define NVRTC_RESOLVE(ret, name, args)                                                 \
  *(void **)(&api->name) = dlsym(h, #name);                                            \
  if (!api->name) {                                                                    \
    snprintf(err, errlen, "NVRTC at %s lacks %s", api->nvrtc_path, #name);             \
    dlclose(h);                                                                        \
    return -1;                                                                         \
  }
  NVRTC_FUNCTIONS(NVRTC_RESOLVE)
#undef NVRTC_RESOLVE
#define NVRTC_RESOLVE_OPT(ret, name, args) *(void **)(&api->name) = dlsym(h, #name);
  NVRTC_OPTIONAL_FUNCTIONS(NVRTC_RESOLVE_OPT)
#undef NVRTC_RESOLVE_OPT
  if (api->nvrtcVersion(&api->nvrtc_major, &api->nvrtc_minor) != NVRTC_SUCCESS) {
    snprintf(err, errlen, "NVRTC at %s does not work (nvrtcVersion failed)", api->nvrtc_path);
    dlclose(h);
    return -1;
  }
  api->libnvrtc = h;
  return 0;
}

/* The driver's entry point `name` at API version `want`, or NULL. */
static void *proc_address(PFN_cuGetProcAddress_v2 gpa2, PFN_cuGetProcAddress_v1 gpa1,
                          const char *name, int want) {
  void *fn = NULL;
  CUdriverProcAddressQueryResult st = 0;
  CUresult r = gpa2 ? gpa2(name, &fn, want, CU_GET_PROC_ADDRESS_DEFAULT, &st)
                    : gpa1(name, &fn, want, CU_GET_PROC_ADDRESS_DEFAULT);
  return r == CUDA_SUCCESS ? fn : NULL;
}

int cuda_load_driver(CudaApi *api, const char *lib, char *err, size_t errlen) {
  if (api->libcuda)
    return 0;
  char why[256] = "", used[512];
  const char *name = lib && *lib ? lib : "libcuda.so.1";
  void *h = open_lib(name, NULL, 0, used, sizeof used, why, sizeof why);
  if (!h) {
    snprintf(err, errlen, "no CUDA driver (%s not found)", name);
    return -1;
  }
  PFN_cuGetProcAddress_v2 gpa2 = NULL;
  PFN_cuGetProcAddress_v1 gpa1 = NULL;
  *(void **)(&gpa2) = dlsym(h, "cuGetProcAddress_v2");
  if (!gpa2)
    *(void **)(&gpa1) = dlsym(h, "cuGetProcAddress");
  if (!gpa2 && !gpa1) {
    snprintf(err, errlen, "CUDA driver %s is too old (no cuGetProcAddress; CUDA 11.3 or "
             "newer is needed)", used);
    dlclose(h);
    return -1;
  }
  /* cuDriverGetVersion first: a driver older than the version asked for
  ** returns nothing at that version, so ask for what it has. */
  CUresult (*get_version)(int *) = NULL;
  *(void **)(&get_version) = dlsym(h, "cuDriverGetVersion");
  int version = 0;
  if (!get_version || get_version(&version) != CUDA_SUCCESS) {
    snprintf(err, errlen, "CUDA driver %s does not work (cuDriverGetVersion failed)", used);
    dlclose(h);
    return -1;
  }
  int want = version < CUDA_API_VERSION ? version : CUDA_API_VERSION;
#define CUDA_RESOLVE(ret, name, args)                                                  \
  if (!(*(void **)(&api->name) = proc_address(gpa2, gpa1, #name, want))) {             \
    snprintf(err, errlen, "CUDA driver %s (version %d) lacks %s", used, version, #name); \
    dlclose(h);                                                                        \
    return -1;                                                                         \
  }
  CUDA_FUNCTIONS(CUDA_RESOLVE)
#undef CUDA_RESOLVE
#define CUDA_RESOLVE_OPT(ret, name, args) \
  *(void **)(&api->name) = proc_address(gpa2, gpa1, #name, want);
  CUDA_OPTIONAL_FUNCTIONS(CUDA_RESOLVE_OPT)
#undef CUDA_RESOLVE_OPT
  api->driver_version = version;
  CUresult r = api->cuInit(0);
  if (r != CUDA_SUCCESS) {
    if (r == CUDA_ERROR_NO_DEVICE)
      snprintf(err, errlen, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
    else
      snprintf(err, errlen, "CUDA driver failed to initialise (cuInit: %s)",
               cuda_result_name(api, r));
    /* Keep nothing half-loaded. */
#define CUDA_CLEAR(ret, name, args) api->name = NULL;
    CUDA_FUNCTIONS(CUDA_CLEAR)
    CUDA_OPTIONAL_FUNCTIONS(CUDA_CLEAR)
#undef CUDA_CLEAR
    dlclose(h);
    return -1;
  }
  api->libcuda = h;
  return 0;
}

void cuda_unload(CudaApi *api) {
  /* Neither library is closed.  The CUDA driver does not support being
  ** unloaded while the process runs (its threads and atexit handlers stay).
  ** NVRTC is C++: loading it makes the C++ runtime allocate its exception
  ** pool, which an unload would strand (a leak under LeakSanitizer), and the
  ** next context would pay the load again.  dlopen counts references, so a
  ** later load is a lookup. */
  memset(api, 0, sizeof *api);
}

const char *cuda_result_name(const CudaApi *api, CUresult r) {
  switch (r) {
#define N(x) \
  case x:    \
    return #x;
    N(CUDA_SUCCESS)
    N(CUDA_ERROR_INVALID_VALUE)
    N(CUDA_ERROR_OUT_OF_MEMORY)
    N(CUDA_ERROR_NOT_INITIALIZED)
    N(CUDA_ERROR_DEINITIALIZED)
    N(CUDA_ERROR_NO_DEVICE)
    N(CUDA_ERROR_INVALID_DEVICE)
    N(CUDA_ERROR_INVALID_IMAGE)
    N(CUDA_ERROR_INVALID_CONTEXT)
    N(CUDA_ERROR_NO_BINARY_FOR_GPU)
    N(CUDA_ERROR_INVALID_PTX)
    N(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    N(CUDA_ERROR_NOT_FOUND)
    N(CUDA_ERROR_ILLEGAL_ADDRESS)
    N(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    N(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    N(CUDA_ERROR_LAUNCH_FAILED)
    N(CUDA_ERROR_NOT_SUPPORTED)
    N(CUDA_ERROR_UNKNOWN)
#undef N
  }
  const char *name = NULL;
  if (api && api->cuGetErrorName && api->cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUDA_ERROR (unknown code)";
}
