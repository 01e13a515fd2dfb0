/*
** cuda_api.h -- the part of the CUDA Driver API and of NVRTC that jitc uses,
** declared here so that jitc builds without any CUDA header or library.
**
** Both libraries are opened at run time by cuda_loader.c (dlopen), so the
** jitc binary runs on machines without a GPU, a driver or a toolkit; there
** the cuda target reports what is missing.  The types and constants below
** are the ABI of CUDA 12 and 13 (the values of cuda.h and nvrtc.h); the
** function lists are X-macros, expanded once into a table of pointers and
** once into the code that resolves them.
**
** Driver functions are resolved with cuGetProcAddress at a fixed API
** version (CUDA_API_VERSION below), so each name gets the entry point whose
** signature is declared here: no `_v2` suffixes to get wrong.  NVRTC has no
** such versioning; its functions are found with dlsym.
*/
#ifndef JITC_CUDA_API_H
#define JITC_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* The API version whose signatures this file declares. */
#define CUDA_API_VERSION 12000

/* ---- Driver API types ---- */

typedef int CUresult; /* CUDA_SUCCESS or an error code */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef size_t (*CUoccupancyB2DSize)(int block_size);

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice_attribute values. */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

/* CUpointer_attribute values (cuPointerGetAttributes), and CUmemorytype. */
enum {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4
};

/* Flags. */
enum {
  CU_STREAM_NON_BLOCKING = 0x1,
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_MEMHOSTALLOC_PORTABLE = 0x1,
  CU_MEMHOSTREGISTER_PORTABLE = 0x1,
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

typedef int CUjit_option;
typedef int CUdriverProcAddressQueryResult;

/* cuGetProcAddress: the v2 entry point (CUDA 12+), and v1 (CUDA 11.3+). */
typedef CUresult (*PFN_cuGetProcAddress_v2)(const char *symbol, void **pfn, int version,
                                            uint64_t flags,
                                            CUdriverProcAddressQueryResult *status);
typedef CUresult (*PFN_cuGetProcAddress_v1)(const char *symbol, void **pfn, int version,
                                            uint64_t flags);

/* CUDA_FN(return type, name, (parameters)): the driver functions used,
** resolved by name through cuGetProcAddress at CUDA_API_VERSION. */
#define CUDA_FUNCTIONS(CUDA_FN)                                                        \
  CUDA_FN(CUresult, cuInit, (unsigned flags))                                          \
  CUDA_FN(CUresult, cuDriverGetVersion, (int *version))                                \
  CUDA_FN(CUresult, cuGetErrorName, (CUresult r, const char **name))                   \
  CUDA_FN(CUresult, cuGetErrorString, (CUresult r, const char **text))                 \
  CUDA_FN(CUresult, cuDeviceGetCount, (int *count))                                    \
  CUDA_FN(CUresult, cuDeviceGet, (CUdevice *dev, int ordinal))                         \
  CUDA_FN(CUresult, cuDeviceGetName, (char *name, int len, CUdevice dev))              \
  CUDA_FN(CUresult, cuDeviceGetAttribute, (int *value, int attrib, CUdevice dev))      \
  CUDA_FN(CUresult, cuDeviceTotalMem, (size_t *bytes, CUdevice dev))                   \
  CUDA_FN(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *ctx, CUdevice dev))          \
  CUDA_FN(CUresult, cuDevicePrimaryCtxRelease, (CUdevice dev))                         \
  CUDA_FN(CUresult, cuCtxSetCurrent, (CUcontext ctx))                                  \
  CUDA_FN(CUresult, cuCtxGetCurrent, (CUcontext *ctx))                                 \
  CUDA_FN(CUresult, cuCtxGetDevice, (CUdevice *dev))                                   \
  CUDA_FN(CUresult, cuPointerGetAttributes, (unsigned n, int *attrs, void **data,      \
                                             CUdeviceptr p))                           \
  CUDA_FN(CUresult, cuCtxSynchronize, (void))                                          \
  CUDA_FN(CUresult, cuMemGetInfo, (size_t *free_bytes, size_t *total_bytes))           \
  CUDA_FN(CUresult, cuModuleLoadDataEx, (CUmodule *mod, const void *image,             \
                                         unsigned nopts, CUjit_option *opts,           \
                                         void **values))                               \
  CUDA_FN(CUresult, cuModuleUnload, (CUmodule mod))                                    \
  CUDA_FN(CUresult, cuModuleGetFunction, (CUfunction *f, CUmodule mod,                 \
                                          const char *name))                           \
  CUDA_FN(CUresult, cuFuncGetAttribute, (int *value, int attrib, CUfunction f))        \
  CUDA_FN(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor,                       \
          (int *nblocks, CUfunction f, int block_size, size_t dyn_smem))               \
  CUDA_FN(CUresult, cuMemAlloc, (CUdeviceptr *p, size_t bytes))                        \
  CUDA_FN(CUresult, cuMemFree, (CUdeviceptr p))                                        \
  CUDA_FN(CUresult, cuMemHostAlloc, (void **p, size_t bytes, unsigned flags))          \
  CUDA_FN(CUresult, cuMemFreeHost, (void *p))                                          \
  CUDA_FN(CUresult, cuMemHostRegister, (void *p, size_t bytes, unsigned flags))        \
  CUDA_FN(CUresult, cuMemHostUnregister, (void *p))                                    \
  CUDA_FN(CUresult, cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes))    \
  CUDA_FN(CUresult, cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes))          \
  CUDA_FN(CUresult, cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src,              \
                                        size_t bytes, CUstream s))                     \
  CUDA_FN(CUresult, cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t bytes,      \
                                        CUstream s))                                   \
  CUDA_FN(CUresult, cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src,              \
                                        size_t bytes, CUstream s))                     \
  CUDA_FN(CUresult, cuMemsetD8Async, (CUdeviceptr dst, unsigned char v, size_t n,      \
                                      CUstream s))                                     \
  CUDA_FN(CUresult, cuStreamCreate, (CUstream *s, unsigned flags))                     \
  CUDA_FN(CUresult, cuStreamDestroy, (CUstream s))                                     \
  CUDA_FN(CUresult, cuStreamSynchronize, (CUstream s))                                 \
  CUDA_FN(CUresult, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned flags))        \
  CUDA_FN(CUresult, cuStreamGetCtx, (CUstream s, CUcontext *ctx))                     \
  CUDA_FN(CUresult, cuEventCreate, (CUevent *e, unsigned flags))                       \
  CUDA_FN(CUresult, cuEventDestroy, (CUevent e))                                       \
  CUDA_FN(CUresult, cuEventRecord, (CUevent e, CUstream s))                            \
  CUDA_FN(CUresult, cuEventSynchronize, (CUevent e))                                   \
  CUDA_FN(CUresult, cuEventQuery, (CUevent e))                                         \
  CUDA_FN(CUresult, cuEventElapsedTime, (float *ms, CUevent start, CUevent end))       \
  CUDA_FN(CUresult, cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy,           \
                                     unsigned gz, unsigned bx, unsigned by,            \
                                     unsigned bz, unsigned smem, CUstream s,           \
                                     void **params, void **extra))

/* Driver functions that may be missing (left NULL): cuCtxGetId is CUDA
** 12.0's; the stream-ordered allocator (jitc_run_device's scratch for the
** partials of reductions) CUDA 11.2's. */
#define CUDA_OPTIONAL_FUNCTIONS(CUDA_FN)                                               \
  CUDA_FN(CUresult, cuCtxGetId, (CUcontext ctx, unsigned long long *id))               \
  CUDA_FN(CUresult, cuMemAllocAsync, (CUdeviceptr *p, size_t bytes, CUstream s))       \
  CUDA_FN(CUresult, cuMemFreeAsync, (CUdeviceptr p, CUstream s))

/* ---- NVRTC ---- */

typedef int nvrtcResult; /* NVRTC_SUCCESS or an error code */
typedef struct _nvrtcProgram *nvrtcProgram;
enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6 };

/* NVRTC_FN(return type, name, (parameters)): found with dlsym.  The CUBIN
** functions are optional (NVRTC 11.1+); the loader leaves them NULL when absent. */
#define NVRTC_FUNCTIONS(NVRTC_FN)                                                      \
  NVRTC_FN(const char *, nvrtcGetErrorString, (nvrtcResult r))                         \
  NVRTC_FN(nvrtcResult, nvrtcVersion, (int *major, int *minor))                        \
  NVRTC_FN(nvrtcResult, nvrtcCreateProgram, (nvrtcProgram *p, const char *src,         \
                                             const char *name, int nheaders,           \
                                             const char *const *headers,               \
                                             const char *const *include_names))        \
  NVRTC_FN(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *p))                        \
  NVRTC_FN(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram p, int nopts,               \
                                              const char *const *opts))                \
  NVRTC_FN(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram p, size_t *size))               \
  NVRTC_FN(nvrtcResult, nvrtcGetPTX, (nvrtcProgram p, char *ptx))                      \
  NVRTC_FN(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram p, size_t *size))        \
  NVRTC_FN(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram p, char *log))

#define NVRTC_OPTIONAL_FUNCTIONS(NVRTC_FN)                                             \
  NVRTC_FN(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram p, size_t *size))             \
  NVRTC_FN(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram p, char *cubin))                  \
  NVRTC_FN(nvrtcResult, nvrtcGetNumSupportedArchs, (int *n))                           \
  NVRTC_FN(nvrtcResult, nvrtcGetSupportedArchs, (int *archs))

/* ---- the loaded libraries ---- */

typedef struct CudaApi {
  void *libcuda;  /* dlopen handles; NULL when not loaded */
  void *libnvrtc;
  char nvrtc_path[512]; /* the file NVRTC was loaded from */
  int driver_version;   /* e.g. 13000 */
  int nvrtc_major, nvrtc_minor;
#define CUDA_FN_PTR(ret, name, args) ret(*name) args;
  CUDA_FUNCTIONS(CUDA_FN_PTR)
  CUDA_OPTIONAL_FUNCTIONS(CUDA_FN_PTR)
  NVRTC_FUNCTIONS(CUDA_FN_PTR)
  NVRTC_OPTIONAL_FUNCTIONS(CUDA_FN_PTR)
#undef CUDA_FN_PTR
} CudaApi;

/* Opens NVRTC: `lib` when given (a path, or a name searched like the
** default), else libnvrtc.so.13 / .so.12 / .so on the library path, in
** cuda_home/lib64 (cuda_home may be NULL) and /usr/local/cuda/lib64.  0, or
** -1 with the reason in err. */
int cuda_load_nvrtc(CudaApi *api, const char *lib, const char *cuda_home, char *err,
                    size_t errlen);

/* Opens the driver (`lib`, else libcuda.so.1), resolves every driver
** function and calls cuInit.  0, or -1 with the reason in err ("no CUDA
** driver (libcuda.so.1 not found)", ...). */
int cuda_load_driver(CudaApi *api, const char *lib, char *err, size_t errlen);

/* Closes whatever was opened; the table is zeroed. */
void cuda_unload(CudaApi *api);

/* "CUDA_ERROR_OUT_OF_MEMORY" and the like, for any CUresult (api may be NULL). */
const char *cuda_result_name(const CudaApi *api, CUresult r);

#endif /* JITC_CUDA_API_H */
