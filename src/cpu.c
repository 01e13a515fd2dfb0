/*
** cpu.c -- target cpu: typed IR -> LLVM IR -> object code -> ORC LLJIT,
** run over the elements on a pool of threads.
**
** The kernel (KernelFn in jitc_int.h) is one loop over [begin, end) that
** this file vectorises itself: every value of the program is a vector of
** W elements, and one iteration does W elements with plain vector loads,
** arithmetic and stores.  The last, partial iteration runs the same vector
** code under a mask (llvm.masked.load/store), so there is no scalar
** epilogue: every element goes through the same instructions and the same
** math functions, whatever the array length or the thread split.  (Leaving
** the loop to LLVM's vectoriser would give a scalar tail whose math calls
** can differ from the vector ones in the last bit.)
**
** Code is compiled for a machine: the host ("native"), an x86-64 level
** (x86-64, -v2, -v3, -v4) or a named CPU, from jitc_options.cpu or
** $JITC_CPU.  Math functions call vector functions of the machine's level
** and width (128 bits up to v2, 256 on v3, 512 on v4): per level, function
** and float type the fastest of SLEEF's (Sleef_expf8_u10avx2, ...) and
** glibc's libmvec (_ZGVdN4v_exp, ...) that stays within 4 ulp with the C
** library's special values (see math_fns), with fixes where a library is
** wrong at the ends of the range (edge_fixed, tiny_fixed, range_fixed).
** Both libraries are loaded with dlopen; without libmvec SLEEF's functions
** are used, and without SLEEF libm per lane.  Everything else is exact
** LLVM IR with no fast-math flags,
** written so that no input is undefined behaviour: integer division and
** remainder are guarded with selects, shift counts are clamped, float to int
** conversions saturate (llvm.fptosi.sat; NaN gives 0).
**
** Compiled code is cached twice: in memory per context (the key is the
** canonical typed program plus what changes the code), and on disk as the
** object file (runtime/cache.c), which is loaded into the JIT without
** running the optimiser or the code generator.
*/
#include "jitc_int.h"
#include "../runtime/runtime.h"

#ifndef JITC_HAVE_LLVM

static jitc_status cpu_available(jitc_context *ctx) {
  return ctx_error(ctx, JITC_E_UNAVAILABLE,
                   "the cpu target is not available: jitc was built without LLVM: "
                   "install llvm-19-dev and rebuild");
}
static const char *cpu_device(jitc_context *ctx) { return "none (built without LLVM)"; }
static jitc_status cpu_compile(jitc_context *ctx, jitc_kernel *k) { return cpu_available(ctx); }
static jitc_status cpu_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                           void *const *arrays, const ParamSlot *params, jitc_run_info *info) {
  return cpu_available(ctx);
}
static jitc_status cpu_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out) {
  return cpu_available(ctx);
}
static void cpu_release(jitc_kernel *k) {}
static void cpu_shutdown(jitc_context *ctx) {}

#else /* JITC_HAVE_LLVM */

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Elements per loop iteration.  16 fills a 512-bit register with float32
** and two with float64; narrower hosts split the vectors in legalisation. */
#define W 16
/* Chunk boundaries between threads: a multiple of W, and 64 elements is a
** whole number of cache lines for every dtype. */
#define CHUNK_ALIGN 64

/* ---- per-context state ---- */

typedef struct MemEntry {
  struct MemEntry *next;
  uint64_t hash;
  char *key; /* heap */
  KernelFn fn;
} MemEntry;

#define MEM_BUCKETS 64

/* A machine code is compiled for: the host ("native"), an x86-64 level
** or a named CPU.  Its level picks the vector width and the vector math
** (math_fns). */
typedef struct Machine {
  char *name;                    /* as asked: "native", "x86-64-v3", "znver3" */
  char *cpu, *features;          /* what LLVM is given */
  int level;                     /* x86-64 level 1..4 (0: not x86-64) */
  int vec_bits;                  /* 128, 256 or 512 */
  bool runnable;                 /* this host executes its code */
  LLVMTargetMachineRef tm;       /* made on first need */
} Machine;

#define MAX_MACHINES 8

typedef struct CpuState {
  char *triple, *host_cpu, *host_features; /* LLVM-allocated */
  int host_level;                /* the x86-64 level this host executes, 0 if not x86-64 */
  char *env_cpu;                 /* $JITC_CPU when the context started, or NULL */
  Machine machines[MAX_MACHINES];
  int nmachines;
  void *sleef;                   /* dlopen handle or NULL */
  void *mvec;                    /* glibc's libmvec: dlopen handle or NULL */
  LLVMOrcLLJITRef jit;           /* created by the first compile */
  Pool *pool;                    /* created by the first run */
  MemEntry *mem[MEM_BUCKETS];
  char device[256];
} CpuState;

typedef struct CpuKernel {
  KernelFn fn;
  size_t scratch; /* bytes of scratch a call needs (split kernels), or 0 */
} CpuKernel;

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static void llvm_init(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  LLVMInitializeNativeAsmParser();
}

/* Takes ownership of err and reports it. */
static jitc_status llvm_error(jitc_context *ctx, const char *what, LLVMErrorRef err) {
  char *msg = LLVMGetErrorMessage(err);
  jitc_status s = ctx_error(ctx, JITC_E_INTERNAL, "cpu target: %s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return s;
}

static void cpu_shutdown(jitc_context *ctx) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  if (!st) return;
  pool_free(st->pool);
  if (st->jit) LLVMOrcDisposeLLJIT(st->jit);
  for (int m = 0; m < st->nmachines; m++) {
    Machine *mc = &st->machines[m];
    if (mc->tm) LLVMDisposeTargetMachine(mc->tm);
    free(mc->name);
    free(mc->cpu);
    free(mc->features);
  }
  LLVMDisposeMessage(st->triple);
  LLVMDisposeMessage(st->host_cpu);
  LLVMDisposeMessage(st->host_features);
  free(st->env_cpu);
  for (int b = 0; b < MEM_BUCKETS; b++)
    for (MemEntry *e = st->mem[b], *nx; e; e = nx) {
      nx = e->next;
      free(e->key);
      free(e);
    }
  if (st->sleef) dlclose(st->sleef);
  if (st->mvec) dlclose(st->mvec);
  free(st);
  ctx->target_state[JITC_TARGET_CPU] = NULL;
}

static bool has_feature(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; (p = strstr(p, f)) != NULL; p += n)
    if (p > features && p[-1] == '+' && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

/* The host's CPU model from /proc/cpuinfo, or "" where there is none. */
static void cpu_model(char *out, size_t n) {
  out[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *p = strchr(line, ':');
    if (!p) break;
    p++;
    while (*p == ' ' || *p == '\t') p++;
    p[strcspn(p, "\n")] = '\0';
    snprintf(out, n, "%s", p);
    break;
  }
  fclose(f);
}

static int ncores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

/* ---- the machine compiled for ---- */

/* The x86-64 micro-architecture levels (the psABI's), by number. */
static const char *const level_names[5] = {"", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

/* What each level adds, as LLVM names the host's features. */
static const char *const level_features[5] = {
  "",
  "sse2",
  "cx16 sahf popcnt sse3 sse4.1 sse4.2 ssse3",
  "avx avx2 bmi bmi2 f16c fma lzcnt movbe xsave",
  "avx512f avx512bw avx512cd avx512dq avx512vl",
};

/* LLVM's x86-64 CPU names and the level each one reaches: a named CPU
** gets that level's vector math. */
static const struct { const char *name; int level; } named_cpus[] = {
  {"generic", 1}, {"k8", 1}, {"opteron", 1}, {"athlon64", 1}, {"athlon-fx", 1}, {"k8-sse3", 1},
  {"opteron-sse3", 1}, {"athlon64-sse3", 1}, {"amdfam10", 1}, {"barcelona", 1}, {"nocona", 1},
  {"core2", 1}, {"penryn", 1}, {"bonnell", 1}, {"atom", 1}, {"btver1", 1},
  {"nehalem", 2}, {"corei7", 2}, {"westmere", 2}, {"sandybridge", 2}, {"corei7-avx", 2},
  {"ivybridge", 2}, {"core-avx-i", 2}, {"silvermont", 2}, {"slm", 2}, {"goldmont", 2},
  {"goldmont-plus", 2}, {"tremont", 2}, {"btver2", 2}, {"bdver1", 2}, {"bdver2", 2},
  {"bdver3", 2},
  {"haswell", 3}, {"core-avx2", 3}, {"broadwell", 3}, {"skylake", 3}, {"alderlake", 3},
  {"raptorlake", 3}, {"meteorlake", 3}, {"arrowlake", 3}, {"arrowlake-s", 3}, {"lunarlake", 3},
  {"gracemont", 3}, {"sierraforest", 3}, {"grandridge", 3}, {"clearwaterforest", 3},
  {"pantherlake", 3}, {"bdver4", 3}, {"znver1", 3}, {"znver2", 3}, {"znver3", 3},
  {"skylake-avx512", 4}, {"skx", 4}, {"cascadelake", 4}, {"cooperlake", 4}, {"cannonlake", 4},
  {"icelake-client", 4}, {"icelake-server", 4}, {"tigerlake", 4}, {"rocketlake", 4},
  {"sapphirerapids", 4}, {"emeraldrapids", 4}, {"graniterapids", 4}, {"graniterapids-d", 4},
  {"znver4", 4}, {"znver5", 4},
};

/* The highest level whose features the host has (LLVM's host features
** count only what the CPU and the operating system both enable). */
static int host_level(const char *triple, const char *features) {
  if (strncmp(triple, "x86_64", 6) != 0) return 0;
  int level = 1;
  for (int l = 2; l <= 4; l++) {
    char f[32];
    for (const char *p = level_features[l]; *p; p += strspn(p, " ")) {
      size_t n = strcspn(p, " ");
      snprintf(f, sizeof f, "%.*s", (int)n, p);
      if (!has_feature(features, f)) return level;
      p += n;
    }
    level = l;
  }
  return level;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* The state of ctx, made on first use: the host, $JITC_CPU, SLEEF. */
static CpuState *cpu_state(jitc_context *ctx) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  if (st) return st;
  pthread_once(&llvm_once, llvm_init);
  st = calloc(1, sizeof *st);
  if (!st) {
    ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    return NULL;
  }
  ctx->target_state[JITC_TARGET_CPU] = st;
  st->triple = LLVMGetDefaultTargetTriple();
  st->host_cpu = LLVMGetHostCPUName();
  st->host_features = LLVMGetHostCPUFeatures();
  st->host_level = host_level(st->triple, st->host_features);
  /* Read once: a context compiles for one default CPU all its life. */
  const char *env = getenv("JITC_CPU");
  if (env && *env) st->env_cpu = xstrdup(env);
  /* RTLD_GLOBAL: the JIT resolves the kernels' calls by searching the
  ** process's symbols. */
  st->sleef = dlopen("libsleef.so.3", RTLD_LAZY | RTLD_GLOBAL);
  /* JITC_VECMATH=sleef leaves libmvec out: the choice of systems without
  ** glibc, which the tests check on any host. */
  const char *vm = getenv("JITC_VECMATH");
  if (!vm || strcmp(vm, "sleef") != 0) st->mvec = dlopen("libmvec.so.1", RTLD_LAZY | RTLD_GLOBAL);
  char model[200];
  cpu_model(model, sizeof model);
  /* The host and what code is compiled for by default, so that a
  ** benchmark's record says which level it measured. */
  snprintf(st->device, sizeof st->device, "%s (%d threads, %s%s%s; code for %s)",
           model[0] ? model : "unknown CPU", ncores(), st->host_cpu,
           st->host_level ? ", " : "", level_names[st->host_level],
           st->env_cpu ? st->env_cpu : "native");
  return st;
}

static int vec_bits_of_level(int level) {
  return level >= 4 ? 512 : level == 3 ? 256 : 128;
}

/* The machine named `name` (NULL or "": $JITC_CPU, else "native"), made on first
** use; NULL with a JITC_E_USAGE error for a name that is not one. */
static Machine *get_machine(jitc_context *ctx, CpuState *st, const char *name) {
  if (!name || !*name) name = st->env_cpu ? st->env_cpu : "native";
  for (int m = 0; m < st->nmachines; m++)
    if (!strcmp(st->machines[m].name, name)) return &st->machines[m];
  bool native = !strcmp(name, "native") || !strcmp(name, st->host_cpu);
  int level = -1;
  if (native) level = st->host_level;
  else if (st->host_level) {
    for (int l = 1; l <= 4; l++)
      if (!strcmp(name, level_names[l])) level = l;
    for (size_t c = 0; level < 0 && c < sizeof named_cpus / sizeof named_cpus[0]; c++)
      if (!strcmp(name, named_cpus[c].name)) level = named_cpus[c].level;
  }
  if (level < 0) {
    if (!st->host_level)
      ctx_error(ctx, JITC_E_USAGE, "cpu target: unknown CPU '%s': this host (%s) takes only 'native'",
                name, st->triple);
    else
      ctx_error(ctx, JITC_E_USAGE,
                "cpu target: unknown CPU '%s': use native, x86-64, x86-64-v2, x86-64-v3, "
                "x86-64-v4 or an LLVM x86-64 CPU name (znver3, skylake-avx512, ...); "
                "this host is %s, level %s", name, st->host_cpu, level_names[st->host_level]);
    return NULL;
  }
  if (st->nmachines == MAX_MACHINES) {
    ctx_error(ctx, JITC_E_USAGE, "cpu target: at most %d CPUs per context", MAX_MACHINES);
    return NULL;
  }
  Machine *mc = &st->machines[st->nmachines];
  memset(mc, 0, sizeof *mc);
  mc->name = xstrdup(name);
  /* The host's own CPU with its exact features; a level or another CPU
  ** with the features LLVM knows it by. */
  mc->cpu = xstrdup(native ? st->host_cpu : name);
  mc->features = xstrdup(native ? st->host_features : "");
  if (!mc->name || !mc->cpu || !mc->features) {
    free(mc->name);
    free(mc->cpu);
    free(mc->features);
    ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    return NULL;
  }
  mc->level = level;
  mc->vec_bits = vec_bits_of_level(level);
  /* A named CPU other than the host's may have features beyond its level:
  ** only the host's own and the levels it reaches are run. */
  bool is_level = false;
  for (int l = 1; l <= 4; l++) is_level |= !strcmp(name, level_names[l]);
  mc->runnable = native || (is_level && level <= st->host_level);
  st->nmachines++;
  return mc;
}

/* The machine's LLVM target machine, made on first need: loading cached
** object code does not need one, and making one is a large part of a warm
** compile. */
static LLVMTargetMachineRef get_tm(jitc_context *ctx, CpuState *st, Machine *mc) {
  if (mc->tm) return mc->tm;
  LLVMTargetRef t;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(st->triple, &t, &msg)) {
    ctx_error(ctx, JITC_E_UNAVAILABLE, "cpu target: no LLVM target for %s: %s", st->triple,
              msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return NULL;
  }
  /* PIC and the small code model: the object goes into the JIT's memory,
  ** which JITLink reaches with GOT and PLT entries where needed. */
  mc->tm = LLVMCreateTargetMachine(t, st->triple, mc->cpu, mc->features,
                                   LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                   LLVMCodeModelSmall);
  if (!mc->tm)
    ctx_error(ctx, JITC_E_UNAVAILABLE, "cpu target: cannot make a target machine for %s",
              mc->cpu);
  return mc->tm;
}

static jitc_status cpu_available(jitc_context *ctx) {
  return cpu_state(ctx) ? JITC_OK : JITC_E_UNAVAILABLE;
}

static const char *cpu_device(jitc_context *ctx) {
  CpuState *st = cpu_state(ctx);
  return st ? st->device : "unavailable";
}

/* ===================================================================== */
/* IR generation                                                          */
/* ===================================================================== */

typedef struct Gen {
  CpuState *st;
  const Machine *m;    /* the machine compiled for */
  const Program *prog;
  bool fast;
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  LLVMTypeRef ti1, ti8, ti32, ti64, tf32, tf64, tptr, tvoid;
  LLVMValueRef *arr;   /* array base pointers, loaded in the entry block */
  LLVMValueRef *par;   /* parameters as splat vectors */
  LLVMValueRef *tmp;   /* temporaries of the current body */
  LLVMValueRef *load;  /* loads of the current body, by array */
  int64_t *scr_off;    /* per temporary: its offset in the scratch when several
                          groups read it, else -1 */
  LLVMValueRef scratch, blk; /* split kernels: the scratch, the block's first element */
  LLVMValueRef i;      /* index of the first element of the iteration */
  LLVMValueRef mask;   /* lanes in range, or NULL for a full iteration */
} Gen;

static LLVMTypeRef scalar_type(Gen *G, jitc_dtype t) {
  switch (t) {
  case JITC_BOOL: return G->ti1;
  case JITC_INT32: return G->ti32;
  case JITC_INT64: return G->ti64;
  case JITC_FLOAT32: return G->tf32;
  case JITC_FLOAT64: return G->tf64;
  default: unreachable();
  }
}
/* In memory a bool is a byte, 0 or 1. */
static LLVMTypeRef mem_type(Gen *G, jitc_dtype t) {
  return t == JITC_BOOL ? G->ti8 : scalar_type(G, t);
}
static LLVMTypeRef vec_type(Gen *G, jitc_dtype t) {
  return LLVMVectorType(scalar_type(G, t), W);
}
static int bits_of(jitc_dtype t) {
  return t == JITC_INT32 || t == JITC_FLOAT32 ? 32 : t == JITC_BOOL ? 1 : 64;
}
static bool is_f(jitc_dtype t) { return t == JITC_FLOAT32 || t == JITC_FLOAT64; }

static LLVMValueRef splat_const(LLVMValueRef c) {
  LLVMValueRef v[W];
  for (int k = 0; k < W; k++) v[k] = c;
  return LLVMConstVector(v, W);
}
static LLVMValueRef vconst_i(Gen *G, jitc_dtype t, int64_t x) {
  return splat_const(LLVMConstInt(scalar_type(G, t), (unsigned long long)x, 1));
}
static LLVMValueRef vconst_f(Gen *G, jitc_dtype t, double x) {
  return splat_const(LLVMConstReal(scalar_type(G, t), x));
}
static LLVMValueRef vzero(Gen *G, jitc_dtype t) {
  return LLVMConstNull(vec_type(G, t));
}
/* A run-time scalar broadcast to every lane. */
static LLVMValueRef splat(Gen *G, LLVMValueRef s) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(s), W);
  LLVMValueRef v = LLVMBuildInsertElement(G->B, LLVMGetPoison(vt), s,
                                          LLVMConstInt(G->ti32, 0, 0), "");
  return LLVMBuildShuffleVector(G->B, v, LLVMGetPoison(vt),
                                LLVMConstNull(LLVMVectorType(G->ti32, W)), "");
}

static LLVMValueRef intrinsic(Gen *G, const char *name, LLVMTypeRef *types, int ntypes,
                              LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) unreachable();
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(G->M, id, types, (size_t)ntypes);
  LLVMTypeRef ft = LLVMIntrinsicGetType(G->C, id, types, (size_t)ntypes);
  return LLVMBuildCall2(G->B, ft, f, args, (unsigned)nargs, "");
}
static LLVMValueRef intr1(Gen *G, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return intrinsic(G, name, &t, 1, &a, 1);
}
static LLVMValueRef intr2(Gen *G, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[2] = {a, b};
  return intrinsic(G, name, &t, 1, args, 2);
}

/* Applies the --fast-math flags to a floating-point instruction: those
** that allow reassociation and contraction, not those that assume away NaN
** and infinity (isnan() must keep working). */
static LLVMValueRef fm(Gen *G, LLVMValueRef v) {
  if (G->fast && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowReassoc | LLVMFastMathNoSignedZeros |
                                LLVMFastMathAllowReciprocal | LLVMFastMathAllowContract |
                                LLVMFastMathApproxFunc);
  return v;
}

static LLVMValueRef fcmp(Gen *G, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(G->B, p, a, b, "");
}
static LLVMValueRef icmp(Gen *G, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(G->B, p, a, b, "");
}
static LLVMValueRef sel(Gen *G, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(G->B, c, a, b, "");
}
static LLVMValueRef isnan_v(Gen *G, LLVMValueRef a) { return fcmp(G, LLVMRealUNO, a, a); }

/* ---- math functions ---- */

/* Each function comes from the fastest vector library that is accurate
** enough, chosen per x86-64 level, function and float type by measurement
** (bench/vecmath_speed.c and bench/vecmath_levels.c, bench/README.md): the
** speed of the level's own variants, and the accuracy and special values
** of each choice checked at each level (tests/t_cpu.sh runs its accuracy
** group once per level the host executes).
**   'm'  glibc's libmvec, the level's variant (_ZGVbN2v_exp for x86-64 and
**        v2, _ZGVdN4v_exp for v3, _ZGVeN8v_exp for v4): documented to
**        4 ulp, special values as libm's.
**   '1'  SLEEF's 1.0-ulp functions (hypot: 0.5 ulp, "u05"), the level's
**        variant (Sleef_expd2_u10sse2, _u10sse4, Sleef_expd4_u10avx2,
**        Sleef_expd8_u10avx512f).
**   '3'  SLEEF's 3.5-ulp functions, where they are faster.
** pick holds one pair (float32, float64) per level, x86-64 to v4.  Without
** libmvec SLEEF is used: u35 where chosen, else u10, with the range fixes
** of range_fixed; without SLEEF, libm one lane at a time. */
enum { U10, U35, MVEC };

typedef struct MathFn {
  OpId op;
  const char *name;    /* libm's double function (float: + "f"); also SLEEF's and libmvec's */
  const char *ulp;     /* SLEEF's suffix of the fallback, "" for exact */
  const char *fastulp; /* SLEEF's faster variant, for --fast-math where SLEEF is used */
  const char *pick;    /* per level "f32f64 f32f64 f32f64 f32f64" from 'm', '1', '3' */
} MathFn;

static const MathFn math_fns[] = {
  /*                                 x86-64  v2  v3  v4 */
  {OP_CBRT, "cbrt", "u10", "u35",     "mm mm mm mm"},
  {OP_EXP, "exp", "u10", NULL,        "1m 1m 1m 1m"},
  {OP_EXP2, "exp2", "u10", "u35",     "mm mm mm 1m"},
  {OP_EXPM1, "expm1", "u10", NULL,    "mm mm mm mm"},
  {OP_LOG, "log", "u10", "u35",       "mm mm mm 33"},
  {OP_LOG2, "log2", "u10", "u35",     "mm mm mm 33"},
  {OP_LOG10, "log10", "u10", NULL,    "mm mm mm mm"},
  {OP_LOG1P, "log1p", "u10", NULL,    "mm mm mm mm"},
  {OP_SIN, "sin", "u10", "u35",       "33 33 mm 33"},
  {OP_COS, "cos", "u10", "u35",       "33 33 mm 33"},
  {OP_TAN, "tan", "u10", "u35",       "mm mm mm 3m"},
  {OP_ASIN, "asin", "u10", "u35",     "33 33 33 33"},
  {OP_ACOS, "acos", "u10", "u35",     "33 33 m3 33"},
  {OP_ATAN, "atan", "u10", "u35",     "mm mm mm 3m"},
  {OP_SINH, "sinh", "u10", "u35",     "mm mm mm mm"},
  {OP_COSH, "cosh", "u10", "u35",     "mm mm mm mm"},
  {OP_TANH, "tanh", "u10", "u35",     "m3 m3 m3 m3"},
  {OP_ASINH, "asinh", "u10", NULL,    "mm mm mm mm"},
  {OP_ACOSH, "acosh", "u10", NULL,    "mm mm mm mm"},
  {OP_ATANH, "atanh", "u10", NULL,    "mm mm mm mm"},
  {OP_ATAN2, "atan2", "u10", "u35",   "m3 m3 mm 33"},
  {OP_HYPOT, "hypot", "u05", "u35",   "mm mm mm mm"},
  {OP_POW, "pow", "u10", NULL,        "mm mm mm mm"},
};

static const MathFn *math_fn(OpId op) {
  for (size_t k = 0; k < sizeof math_fns / sizeof math_fns[0]; k++)
    if (math_fns[k].op == op) return &math_fns[k];
  return NULL;
}

/* Lanes [off, off+n) of v. */
static LLVMValueRef sub_vec(Gen *G, LLVMValueRef v, int off, int n) {
  LLVMValueRef m[W];
  for (int k = 0; k < n; k++) m[k] = LLVMConstInt(G->ti32, (unsigned)(off + k), 0);
  return LLVMBuildShuffleVector(G->B, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(m, (unsigned)n), "");
}
/* Concatenates parts[0..np) of n lanes each. */
static LLVMValueRef concat(Gen *G, LLVMValueRef *parts, int np, int n) {
  while (np > 1) {
    int j = 0;
    for (int k = 0; k < np; k += 2, j++) {
      LLVMValueRef m[W];
      for (int l = 0; l < 2 * n; l++) m[l] = LLVMConstInt(G->ti32, (unsigned)l, 0);
      parts[j] = LLVMBuildShuffleVector(G->B, parts[k], parts[k + 1],
                                        LLVMConstVector(m, (unsigned)(2 * n)), "");
    }
    np = j;
    n *= 2;
  }
  return parts[0];
}

/* Calls function `name` of nargs arguments of type `ft` (a vector of n lanes
** or a scalar when n == 1), declaring it in the module on first use.  The
** declaration says the function reads and writes no memory, so that two
** calls with the same arguments (sin(a) * sin(a)) are computed once: true
** of the vector libraries; libm may set errno, which no kernel reads. */
static LLVMValueRef call_ext(Gen *G, const char *name, LLVMTypeRef et, int n,
                             LLVMValueRef *args, int nargs) {
  LLVMTypeRef t = n > 1 ? LLVMVectorType(et, (unsigned)n) : et;
  LLVMTypeRef params[3] = {t, t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, (unsigned)nargs, 0);
  LLVMValueRef f = LLVMGetNamedFunction(G->M, name);
  if (!f) {
    f = LLVMAddFunction(G->M, name, fty);
    static const char *const attrs[] = {"nounwind", "willreturn", "nosync", "nofree"};
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
      unsigned kind = LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k]));
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(G->C, kind, 0));
    }
    /* memory(none): the attribute's value 0 is no access to any memory. */
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(G->C, LLVMGetEnumAttributeKindForName("memory", 6), 0));
  }
  return LLVMBuildCall2(G->B, fty, f, args, (unsigned)nargs, "");
}

/* Calls the vector function `name` of `lanes` lanes on the W lanes of args,
** in W / lanes pieces. */
static LLVMValueRef call_split(Gen *G, const char *name, LLVMTypeRef et, int lanes,
                               LLVMValueRef *args, int nargs) {
  LLVMValueRef parts[W];
  int np = W / lanes;
  for (int p = 0; p < np; p++) {
    LLVMValueRef a[3];
    for (int k = 0; k < nargs; k++) a[k] = np == 1 ? args[k] : sub_vec(G, args[k], p * lanes, lanes);
    parts[p] = call_ext(G, name, et, lanes, a, nargs);
  }
  return np == 1 ? parts[0] : concat(G, parts, np, lanes);
}

/* Calls math function mf on args, from the library math_fns picks for t
** (see above); *lib (if not NULL) is set to the library used: MVEC, U10 or
** U35 for SLEEF, -1 for libm. */
static LLVMValueRef math_call_lib(Gen *G, const MathFn *mf, jitc_dtype t, LLVMValueRef *args,
                                  int nargs, int *lib) {
  static const char mvec_isa[5] = {0, 'b', 'b', 'd', 'e'};
  static const char *const sleef_isa[5] = {"", "sse2", "sse4", "avx2", "avx512f"};
  const Machine *mc = G->m;
  LLVMTypeRef et = scalar_type(G, t);
  bool f32 = t == JITC_FLOAT32;
  int lanes = mc->vec_bits / (f32 ? 32 : 64), dummy;
  char pick = mc->level ? mf->pick[(mc->level - 1) * 3 + (f32 ? 0 : 1)] : '1';
  char name[64];
  if (!lib) lib = &dummy;
  if (pick == 'm' && G->st->mvec && mc->level) {
    snprintf(name, sizeof name, "_ZGV%cN%d%s_%s%s", mvec_isa[mc->level], lanes,
             nargs == 2 ? "vv" : "v", mf->name, f32 ? "f" : "");
    if (dlsym(G->st->mvec, name)) {
      *lib = MVEC;
      return call_split(G, name, et, lanes, args, nargs);
    }
  }
  if (G->st->sleef) {
    /* The level's own variant, else SLEEF's dispatcher (which picks by
    ** the host running it). */
    const char *ulp = (pick == '3' || G->fast) && mf->fastulp ? mf->fastulp : mf->ulp;
    for (int tries = 0; tries < 4; tries++) {
      if (tries == 2) ulp = mf->ulp;
      snprintf(name, sizeof name, "Sleef_%s%c%d%s%s%s", mf->name, f32 ? 'f' : 'd', lanes,
               *ulp ? "_" : "", ulp, tries % 2 ? "" : sleef_isa[mc->level]);
      if (dlsym(G->st->sleef, name)) {
        *lib = ulp == mf->ulp ? U10 : U35;
        return call_split(G, name, et, lanes, args, nargs);
      }
    }
  }
  /* No vector library: libm, one lane at a time. */
  *lib = -1;
  snprintf(name, sizeof name, "%s%s", mf->name, f32 ? "f" : "");
  LLVMValueRef r = LLVMGetPoison(vec_type(G, t));
  for (int l = 0; l < W; l++) {
    LLVMValueRef idx = LLVMConstInt(G->ti32, (unsigned)l, 0), a[3];
    for (int k = 0; k < nargs; k++) a[k] = LLVMBuildExtractElement(G->B, args[k], idx, "");
    r = LLVMBuildInsertElement(G->B, r, call_ext(G, name, et, 1, a, nargs), idx, "");
  }
  return r;
}

static LLVMValueRef math_call(Gen *G, const MathFn *mf, jitc_dtype t, LLVMValueRef *args,
                              int nargs) {
  return math_call_lib(G, mf, t, args, nargs, NULL);
}

/* SLEEF's sinh, cosh, asinh, acosh and log1p are accurate on a bounded
** range (sinhf: |x| <= 88.5, asinhf: |x| <= 1.8e19, ...) and return inf
** beyond it where the true result is finite.  Outside, these identities
** hold to the precision of the type and are computed instead:
**   sinh, cosh:   e^|x| / 2 = exp(|x| - 1) * (e / 2)  (|x| - 1 is exact)
**   asinh, acosh: log(2|x|) = log(|x|) + ln 2
**   log1p:        log(x), as x + 1 rounds to x */
static LLVMValueRef range_fixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef a) {
  bool f32 = t == JITC_FLOAT32;
  int lib;
  LLVMValueRef r = math_call_lib(G, math_fn(op), t, &a, 1, &lib);
  /* libmvec and libm are accurate over the whole range. */
  if (lib != U10 && lib != U35) return r;
  LLVMValueRef ax = intr1(G, "llvm.fabs", a), big, alt;
  if (op == OP_SINH || op == OP_COSH) {
    big = fcmp(G, LLVMRealOGT, ax, vconst_f(G, t, f32 ? 88.0 : 709.0));
    LLVMValueRef m1 = LLVMBuildFSub(G->B, ax, vconst_f(G, t, 1.0), "");
    alt = LLVMBuildFMul(G->B, math_call(G, math_fn(OP_EXP), t, &m1, 1),
                        vconst_f(G, t, 1.3591409142295225), "");
    if (op == OP_SINH) alt = intr2(G, "llvm.copysign", alt, a);
  } else if (op == OP_LOG1P) {
    big = fcmp(G, LLVMRealOGT, a, vconst_f(G, t, f32 ? 1e30 : 1e300));
    alt = math_call(G, math_fn(OP_LOG), t, &a, 1);
  } else {
    big = fcmp(G, LLVMRealOGT, op == OP_ACOSH ? a : ax, vconst_f(G, t, f32 ? 1e18 : 1e150));
    alt = LLVMBuildFAdd(G->B, math_call(G, math_fn(OP_LOG), t, &ax, 1),
                        vconst_f(G, t, 0.69314718055994531), "");
    if (op == OP_ASINH) alt = intr2(G, "llvm.copysign", alt, a);
  }
  /* inf stays with SLEEF, which gets it right. */
  big = LLVMBuildAnd(G->B, big, fcmp(G, LLVMRealONE, ax, vconst_f(G, t, INFINITY)), "");
  return sel(G, big, alt, r);
}

/* C99 Annex F: a function of one NaN argument returns that NaN, sign and
** all.  Some vector functions return another NaN (SLEEF's atan, tanh and
** acos give the positive one), so NaN lanes take the argument itself: one
** compare and one blend. */
static LLVMValueRef nan_arg(Gen *G, LLVMValueRef a, LLVMValueRef r) {
  return sel(G, isnan_v(G, a), a, r);
}

/* Whether some lane of v is above c (NaN lanes are not): lanes at most c
** become c (a max instruction), then one horizontal maximum, which may
** assume no NaN. */
static LLVMValueRef any_above(Gen *G, jitc_dtype t, LLVMValueRef v, double c) {
  LLVMValueRef vc = vconst_f(G, t, c);
  LLVMValueRef m = intr1(G, "llvm.vector.reduce.fmax", sel(G, fcmp(G, LLVMRealOGT, v, vc), v, vc));
  LLVMSetFastMathFlags(m, LLVMFastMathNoNaNs);
  return LLVMBuildFCmp(G->B, LLVMRealOGT, m, LLVMConstReal(scalar_type(G, t), c), "");
}

/* Results the vector libraries get wrong at the top of the range, where
** the true result is still finite: exp(709.78) is 1.797e308, not inf, and
** pow(5.64e102, 3) is 1.798e308; SLEEF's cut-offs (and, on AVX-512, some
** of libmvec's) are a few ulp early.  The lanes that became inf from
** finite arguments below the true threshold are recomputed from identities
** that hold to the precision of the type (about 2 ulp):
**   exp:   e^x = e^(x-1) * e         (x - 1 is exact there)
**   exp2:  2^x = 2^(x-1) * 2         (exact)
**   power: x^y = (|x|^(y/2))^2 with the sign of the library's inf; where
**          the result really overflows this gives inf again.
** Those inputs are rare: a branch skips the fix unless one lane needs it,
** tested with one horizontal maximum (of the argument for exp and exp2,
** of |result| for power), so the common case pays a few instructions. */
static LLVMValueRef edge_fixed(Gen *G, OpId op, jitc_dtype t, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = G->B;
  bool f32 = t == JITC_FLOAT32, pow = op == OP_POW;
  LLVMValueRef args[2] = {a, b};
  /* The largest argument with a finite result, rounded up in the type,
  ** and a bound below which no library overflows.  (Tested before the
  ** call, while the argument is still in registers.) */
  double top = op == OP_EXP ? (f32 ? 88.72283935546875 : 709.78271289338397)
                            : (f32 ? 128.0 : 1024.0);
  LLVMValueRef maybe = pow ? NULL : any_above(G, t, a, top - 1);
  int lib;
  LLVMValueRef r = math_call_lib(G, math_fn(op), t, args, pow ? 2 : 1, &lib);
  if (lib < 0) return r; /* libm: right everywhere */
  LLVMValueRef inf = vconst_f(G, t, INFINITY), ar = intr1(G, "llvm.fabs", r);
  if (pow) maybe = any_above(G, t, ar, f32 ? FLT_MAX : DBL_MAX);
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(B));
  LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef fix = LLVMAppendBasicBlockInContext(G->C, fn, "edge.fix");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(G->C, fn, "edge.join");
  LLVMBuildCondBr(B, maybe, fix, join);

  LLVMPositionBuilderAtEnd(B, fix);
  LLVMValueRef bad = fcmp(G, LLVMRealOEQ, ar, inf), alt;
  if (pow) {
    /* y / 2 must be exact: |y| above the subnormals (a tinier y
    ** overflows only for x == 0, where inf is right). */
    LLVMValueRef ab = intr1(G, "llvm.fabs", b);
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), inf), "");
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, ab, inf), "");
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOGT, ab, vconst_f(G, t, f32 ? 0x1p-100 : 0x1p-1000)), "");
    LLVMValueRef h_args[2] = {intr1(G, "llvm.fabs", a),
                              LLVMBuildFMul(B, b, vconst_f(G, t, 0.5), "")};
    LLVMValueRef h = math_call(G, math_fn(OP_POW), t, h_args, 2);
    alt = intr2(G, "llvm.copysign", LLVMBuildFMul(B, h, h, ""), r);
  } else {
    bad = LLVMBuildAnd(B, bad, fcmp(G, LLVMRealOLT, a, vconst_f(G, t, top)), "");
    LLVMValueRef m1 = LLVMBuildFSub(B, a, vconst_f(G, t, 1.0), "");
    alt = LLVMBuildFMul(B, math_call(G, math_fn(op), t, &m1, 1),
                        vconst_f(G, t, op == OP_EXP ? 2.718281828459045 : 2.0), "");
  }
  LLVMValueRef fixed = sel(G, bad, alt, r);
  LLVMBasicBlockRef fix_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, join);

  LLVMPositionBuilderAtEnd(B, join);
  LLVMValueRef phi = LLVMBuildPhi(B, LLVMTypeOf(r), "");
  LLVMValueRef vals[2] = {r, fixed};
  LLVMBasicBlockRef blocks[2] = {from, fix_end};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

/* Tiny arguments of the functions that are x + O(x^2) there: x itself,
** as every correctly rounded function gives it (below 2^-30 in float32,
** 2^-60 in float64, the next terms are far below half an ulp).  Some of
** the vector libraries flush the smallest subnormals to 0 (log1p, asinh,
** tan of 5e-324), which turns x / log1p(x) into inf. */
static LLVMValueRef tiny_fixed(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef r) {
  double tiny = t == JITC_FLOAT32 ? 0x1p-30 : 0x1p-60;
  return sel(G, fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), vconst_f(G, t, tiny)), a, r);
}

/* ---- operators ---- */

static LLVMValueRef gen_node(Gen *G, const Node *n);

/* Conversion between any two dtypes, as NumPy's astype() does, except that
** float to int saturates and NaN becomes 0 (defined for every input). */
static LLVMValueRef convert(Gen *G, LLVMValueRef v, jitc_dtype from, jitc_dtype to) {
  LLVMTypeRef vt = vec_type(G, to);
  if (from == to) return v;
  if (to == JITC_BOOL)
    return is_f(from) ? fcmp(G, LLVMRealUNE, v, vzero(G, from))
                      : icmp(G, LLVMIntNE, v, vzero(G, from));
  if (from == JITC_BOOL)
    return is_f(to) ? LLVMBuildUIToFP(G->B, v, vt, "") : LLVMBuildZExt(G->B, v, vt, "");
  if (is_f(from) && is_f(to))
    return to == JITC_FLOAT64 ? LLVMBuildFPExt(G->B, v, vt, "") : LLVMBuildFPTrunc(G->B, v, vt, "");
  if (is_f(to)) return LLVMBuildSIToFP(G->B, v, vt, "");
  if (is_f(from)) {
    LLVMTypeRef types[2] = {vt, LLVMTypeOf(v)};
    return intrinsic(G, "llvm.fptosi.sat", types, 2, &v, 1);
  }
  return bits_of(to) > bits_of(from) ? LLVMBuildSExt(G->B, v, vt, "")
                                     : LLVMBuildTrunc(G->B, v, vt, "");
}

/* Integer a / b and a % b (C, truncating) made total: b == 0 gives 0 for
** both, INT_MIN / -1 gives INT_MIN and INT_MIN % -1 gives 0.  The divisor
** is replaced by 1 in those lanes, so the division itself never traps. */
static void safe_divrem(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef *q, LLVMValueRef *r) {
  LLVMValueRef zero = vzero(G, t), one = vconst_i(G, t, 1);
  int64_t minv = t == JITC_INT32 ? INT32_MIN : INT64_MIN;
  LLVMValueRef bz = icmp(G, LLVMIntEQ, b, zero);
  LLVMValueRef ovf = LLVMBuildAnd(G->B, icmp(G, LLVMIntEQ, a, vconst_i(G, t, minv)),
                                  icmp(G, LLVMIntEQ, b, vconst_i(G, t, -1)), "");
  LLVMValueRef bad = LLVMBuildOr(G->B, bz, ovf, "");
  LLVMValueRef d = sel(G, bad, one, b);
  if (q) *q = sel(G, bz, zero, sel(G, ovf, a, LLVMBuildSDiv(G->B, a, d, "")));
  if (r) *r = sel(G, bad, zero, LLVMBuildSRem(G->B, a, d, ""));
}

/* NumPy's float divmod (npy_divmod): floor division and the remainder with
** the sign of the divisor, with NumPy's handling of zeros and infinities. */
static void float_divmod(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef b,
                         LLVMValueRef *floordiv, LLVMValueRef *modulus) {
  LLVMValueRef zero = vzero(G, t), one = vconst_f(G, t, 1.0);
  LLVMValueRef mod = fm(G, LLVMBuildFRem(G->B, a, b, ""));
  LLVMValueRef bz = fcmp(G, LLVMRealOEQ, b, zero);
  LLVMValueRef div = fm(G, LLVMBuildFDiv(G->B, fm(G, LLVMBuildFSub(G->B, a, mod, "")), b, ""));
  LLVMValueRef modnz = fcmp(G, LLVMRealUNE, mod, zero);
  LLVMValueRef blt = fcmp(G, LLVMRealOLT, b, zero), mlt = fcmp(G, LLVMRealOLT, mod, zero);
  LLVMValueRef fix = LLVMBuildAnd(G->B, modnz, icmp(G, LLVMIntNE, blt, mlt), "");
  LLVMValueRef mod2 = sel(G, fix, fm(G, LLVMBuildFAdd(G->B, mod, b, "")), mod);
  mod2 = sel(G, modnz, mod2, intr2(G, "llvm.copysign", zero, b));
  div = sel(G, fix, fm(G, LLVMBuildFSub(G->B, div, one, "")), div);
  LLVMValueRef fl = intr1(G, "llvm.floor", div);
  LLVMValueRef up = fcmp(G, LLVMRealOGT, fm(G, LLVMBuildFSub(G->B, div, fl, "")), vconst_f(G, t, 0.5));
  fl = sel(G, up, fm(G, LLVMBuildFAdd(G->B, fl, one, "")), fl);
  LLVMValueRef q = fm(G, LLVMBuildFDiv(G->B, a, b, ""));
  LLVMValueRef divnz = fcmp(G, LLVMRealUNE, div, zero);
  fl = sel(G, divnz, fl, intr2(G, "llvm.copysign", zero, q));
  /* b == 0: a / b and fmod(a, b). */
  if (floordiv) *floordiv = sel(G, bz, q, fl);
  if (modulus) *modulus = sel(G, bz, mod, mod2);
}

/* NumPy's minimum/maximum: NaN propagates; between equal values (0.0 and
** -0.0) the second operand wins. */
static LLVMValueRef fminmax(Gen *G, bool max, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef c = fcmp(G, max ? LLVMRealOGT : LLVMRealOLT, a, b);
  return sel(G, LLVMBuildOr(G->B, c, isnan_v(G, a), ""), a, b);
}

/* Integer power by squaring, wrapping like NumPy's; negative exponents
** give 1 / a**-e truncated: 1 for a == 1, +-1 for a == -1, 0 otherwise. */
static LLVMValueRef int_pow(Gen *G, jitc_dtype t, LLVMValueRef a, LLVMValueRef e) {
  LLVMValueRef zero = vzero(G, t), one = vconst_i(G, t, 1);
  LLVMValueRef r = one, base = a, x = e;
  int bits = bits_of(t);
  for (int k = 0; k < bits - 1; k++) { /* the sign bit is handled below */
    LLVMValueRef odd = icmp(G, LLVMIntNE, LLVMBuildAnd(G->B, x, one, ""), zero);
    r = sel(G, odd, LLVMBuildMul(G->B, r, base, ""), r);
    base = LLVMBuildMul(G->B, base, base, "");
    x = LLVMBuildLShr(G->B, x, one, "");
  }
  LLVMValueRef neg = icmp(G, LLVMIntSLT, e, zero);
  LLVMValueRef isone = icmp(G, LLVMIntEQ, a, one);
  LLVMValueRef ism1 = icmp(G, LLVMIntEQ, a, vconst_i(G, t, -1));
  LLVMValueRef eodd = icmp(G, LLVMIntNE, LLVMBuildAnd(G->B, e, one, ""), zero);
  LLVMValueRef negr = sel(G, isone, one, sel(G, ism1, sel(G, eodd, vconst_i(G, t, -1), one), zero));
  return sel(G, neg, negr, r);
}

static LLVMValueRef gen_op(Gen *G, const Node *n) {
  jitc_dtype t = n->type;
  jitc_dtype at = n->nargs > 0 ? n->args[0]->type : t;
  LLVMValueRef a = NULL, b = NULL, c = NULL;
  if (n->nargs > 0) a = gen_node(G, n->args[0]);
  if (n->nargs > 1) b = gen_node(G, n->args[1]);
  if (n->nargs > 2) c = gen_node(G, n->args[2]);
  LLVMBuilderRef B = G->B;
  bool f = is_f(at);
  switch (n->op) {
  case OP_ADD:
    if (t == JITC_BOOL) return LLVMBuildOr(B, a, b, "");
    return f ? fm(G, LLVMBuildFAdd(B, a, b, "")) : LLVMBuildAdd(B, a, b, "");
  case OP_SUB:
    if (t == JITC_BOOL) return LLVMBuildXor(B, a, b, "");
    return f ? fm(G, LLVMBuildFSub(B, a, b, "")) : LLVMBuildSub(B, a, b, "");
  case OP_MUL:
    if (t == JITC_BOOL) return LLVMBuildAnd(B, a, b, "");
    return f ? fm(G, LLVMBuildFMul(B, a, b, "")) : LLVMBuildMul(B, a, b, "");
  case OP_DIV:
    return fm(G, LLVMBuildFDiv(B, a, b, ""));
  case OP_FLOORDIV:
  case OP_MOD: {
    LLVMValueRef q, r;
    if (f) {
      float_divmod(G, t, a, b, &q, &r);
      return n->op == OP_FLOORDIV ? q : r;
    }
    safe_divrem(G, t, a, b, &q, &r);
    /* Round toward minus infinity: when the remainder is non-zero and its
    ** sign differs from the divisor's, q - 1 and r + b. */
    LLVMValueRef zero = vzero(G, t);
    LLVMValueRef adj = LLVMBuildAnd(B, icmp(G, LLVMIntNE, r, zero),
                                    icmp(G, LLVMIntNE, icmp(G, LLVMIntSLT, r, zero),
                                         icmp(G, LLVMIntSLT, b, zero)), "");
    if (n->op == OP_FLOORDIV) return sel(G, adj, LLVMBuildSub(B, q, vconst_i(G, t, 1), ""), q);
    return sel(G, adj, LLVMBuildAdd(B, r, b, ""), r);
  }
  case OP_FMOD:
    /* frem is C's fmod, exact; SLEEF's vector fmod fails on subnormal
    ** divisors. */
    if (f) {
      return fm(G, LLVMBuildFRem(B, a, b, ""));
    } else {
      LLVMValueRef r;
      safe_divrem(G, t, a, b, NULL, &r);
      return r;
    }
  case OP_POW:
    if (f) {
      /* The common exponents 1 and 2 are exact (x, x*x), as NumPy's
      ** fast paths are. */
      LLVMValueRef r = edge_fixed(G, OP_POW, t, a, b);
      r = sel(G, fcmp(G, LLVMRealOEQ, b, vconst_f(G, t, 2.0)), fm(G, LLVMBuildFMul(B, a, a, "")), r);
      return sel(G, fcmp(G, LLVMRealOEQ, b, vconst_f(G, t, 1.0)), a, r);
    }
    return int_pow(G, t, a, b);
  case OP_AND: return LLVMBuildAnd(B, a, b, "");
  case OP_OR: return LLVMBuildOr(B, a, b, "");
  case OP_XOR: return LLVMBuildXor(B, a, b, "");
  case OP_SHL:
  case OP_SHR: {
    /* NumPy: a count outside [0, width) shifts everything out (<< gives 0,
    ** >> gives the sign).  The count is clamped so LLVM never sees an
    ** over-wide shift, which would be poison. */
    int w = bits_of(t);
    LLVMValueRef in = icmp(G, LLVMIntULT, b, vconst_i(G, t, w));
    if (n->op == OP_SHL)
      return sel(G, in, LLVMBuildShl(B, a, sel(G, in, b, vzero(G, t)), ""), vzero(G, t));
    return LLVMBuildAShr(B, a, sel(G, in, b, vconst_i(G, t, w - 1)), "");
  }
  case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE: {
    static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                           LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
    static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                          LLVMIntSGE, LLVMIntEQ, LLVMIntNE};
    static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                          LLVMIntUGE, LLVMIntEQ, LLVMIntNE};
    int k = n->op - OP_LT;
    if (f) return fcmp(G, fp[k], a, b);
    return icmp(G, at == JITC_BOOL ? up[k] : sp[k], a, b);
  }
  case OP_NEG:
    return f ? fm(G, LLVMBuildFNeg(B, a, "")) : LLVMBuildSub(B, vzero(G, t), a, "");
  case OP_INVERT:
    return LLVMBuildXor(B, a, LLVMConstAllOnes(vec_type(G, t)), "");
  case OP_ABS:
    if (f) return intr1(G, "llvm.fabs", a);
    if (t == JITC_BOOL) return a;
    return sel(G, icmp(G, LLVMIntSLT, a, vzero(G, t)), LLVMBuildSub(B, vzero(G, t), a, ""), a);
  case OP_SQRT: return fm(G, intr1(G, "llvm.sqrt", a));
  case OP_SQUARE:
    return f ? fm(G, LLVMBuildFMul(B, a, a, "")) : LLVMBuildMul(B, a, a, "");
  case OP_RECIPROCAL:
    if (f) return fm(G, LLVMBuildFDiv(B, vconst_f(G, t, 1.0), a, ""));
    else {
      LLVMValueRef q;
      safe_divrem(G, t, vconst_i(G, t, 1), a, &q, NULL);
      return q;
    }
  case OP_FLOOR: return f ? intr1(G, "llvm.floor", a) : a;
  case OP_CEIL: return f ? intr1(G, "llvm.ceil", a) : a;
  case OP_TRUNC: return f ? intr1(G, "llvm.trunc", a) : a;
  /* Ties to even, whatever the rounding mode. */
  case OP_RINT: return intr1(G, "llvm.roundeven", a);
  case OP_SIGN: {
    LLVMValueRef zero = vzero(G, t);
    if (f) {
      LLVMValueRef s = sel(G, fcmp(G, LLVMRealOGT, a, zero), vconst_f(G, t, 1.0),
                           sel(G, fcmp(G, LLVMRealOLT, a, zero), vconst_f(G, t, -1.0), zero));
      return sel(G, isnan_v(G, a), a, s);
    }
    return sel(G, icmp(G, LLVMIntSGT, a, zero), vconst_i(G, t, 1),
               sel(G, icmp(G, LLVMIntSLT, a, zero), vconst_i(G, t, -1), zero));
  }
  case OP_COPYSIGN: return intr2(G, "llvm.copysign", a, b);
  case OP_MINIMUM:
  case OP_MAXIMUM: {
    bool max = n->op == OP_MAXIMUM;
    if (f) return fminmax(G, max, a, b);
    if (t == JITC_BOOL) return max ? LLVMBuildOr(B, a, b, "") : LLVMBuildAnd(B, a, b, "");
    return sel(G, icmp(G, max ? LLVMIntSGT : LLVMIntSLT, a, b), a, b);
  }
  case OP_FMIN:
  case OP_FMAX: {
    bool max = n->op == OP_FMAX;
    if (f) {
      /* A NaN operand is ignored; between equal values the second wins. */
      LLVMValueRef c2 = fcmp(G, max ? LLVMRealOGT : LLVMRealOLT, a, b);
      return sel(G, LLVMBuildOr(B, c2, isnan_v(G, b), ""), a, b);
    }
    if (t == JITC_BOOL) return max ? LLVMBuildOr(B, a, b, "") : LLVMBuildAnd(B, a, b, "");
    return sel(G, icmp(G, max ? LLVMIntSGT : LLVMIntSLT, a, b), a, b);
  }
  case OP_CLIP: {
    /* NumPy: minimum(maximum(a, lo), hi), NaN propagating. */
    if (f) {
      LLVMValueRef lo = sel(G, LLVMBuildOr(B, fcmp(G, LLVMRealOGT, a, b), isnan_v(G, a), ""), a, b);
      return sel(G, LLVMBuildOr(B, fcmp(G, LLVMRealOLT, lo, c), isnan_v(G, lo), ""), lo, c);
    }
    LLVMIntPredicate gt = t == JITC_BOOL ? LLVMIntUGT : LLVMIntSGT;
    LLVMIntPredicate lt = t == JITC_BOOL ? LLVMIntULT : LLVMIntSLT;
    LLVMValueRef lo = sel(G, icmp(G, gt, a, b), a, b);
    return sel(G, icmp(G, lt, lo, c), lo, c);
  }
  case OP_FMA: return intrinsic(G, "llvm.fma", (LLVMTypeRef[]){vec_type(G, t)}, 1,
                                (LLVMValueRef[]){a, b, c}, 3);
  case OP_WHERE: return sel(G, a, b, c);
  case OP_ISNAN:
    return f ? isnan_v(G, a) : LLVMConstNull(vec_type(G, JITC_BOOL));
  case OP_ISINF:
    if (!f) return LLVMConstNull(vec_type(G, JITC_BOOL));
    return fcmp(G, LLVMRealOEQ, intr1(G, "llvm.fabs", a), vconst_f(G, at, INFINITY));
  case OP_ISFINITE:
    if (!f) return LLVMConstAllOnes(vec_type(G, JITC_BOOL));
    return fcmp(G, LLVMRealOLT, intr1(G, "llvm.fabs", a), vconst_f(G, at, INFINITY));
  case OP_CAST: return convert(G, a, at, t);
  case OP_ATAN2: case OP_HYPOT: {
    LLVMValueRef args[2] = {a, b};
    return math_call(G, math_fn(n->op), t, args, 2);
  }
  case OP_EXP: case OP_EXP2:
    return nan_arg(G, a, edge_fixed(G, n->op, t, a, NULL));
  case OP_SINH: case OP_COSH: case OP_ACOSH:
    return nan_arg(G, a, range_fixed(G, n->op, t, a));
  case OP_ASINH: case OP_LOG1P:
    return nan_arg(G, a, tiny_fixed(G, t, a, range_fixed(G, n->op, t, a)));
  case OP_TAN:
    return nan_arg(G, a, tiny_fixed(G, t, a, math_call(G, math_fn(OP_TAN), t, &a, 1)));
  default: {
    const MathFn *mf = math_fn(n->op);
    if (!mf) unreachable();
    return nan_arg(G, a, math_call(G, mf, t, &a, 1));
  }
  }
}

/* W elements of type t at base[idx], a vector of the array's memory type
** made a value (bool: 0 or 1 bytes to i1); under G->mask only the lanes in
** range are read and the others are zero. */
static LLVMValueRef load_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx) {
  LLVMTypeRef mt = mem_type(G, t), vt = LLVMVectorType(mt, W);
  LLVMValueRef p = LLVMBuildGEP2(G->B, mt, base, &idx, 1, "");
  LLVMValueRef v;
  unsigned align = (unsigned)jitc_dtype_size(t);
  if (G->mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {p, LLVMConstInt(G->ti32, align, 0), G->mask, LLVMConstNull(vt)};
    v = intrinsic(G, "llvm.masked.load", types, 2, args, 4);
  } else {
    v = LLVMBuildLoad2(G->B, vt, p, "");
    LLVMSetAlignment(v, align);
  }
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(vt));
  return v;
}

/* The block's scratch of temporary t. */
static LLVMValueRef scratch_of(Gen *G, int t) {
  LLVMValueRef off = LLVMConstInt(G->ti64, (unsigned long long)G->scr_off[t], 0);
  return LLVMBuildGEP2(G->B, G->ti8, G->scratch, &off, 1, "");
}

/* Stores value v of type t to the W elements at base[idx] (under G->mask). */
static void store_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v) {
  LLVMTypeRef mt = mem_type(G, t), vt = LLVMVectorType(mt, W);
  if (t == JITC_BOOL) v = LLVMBuildZExt(G->B, v, vt, "");
  LLVMValueRef ptr = LLVMBuildGEP2(G->B, mt, base, &idx, 1, "");
  unsigned align = (unsigned)jitc_dtype_size(t);
  if (G->mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {v, ptr, LLVMConstInt(G->ti32, align, 0), G->mask};
    intrinsic(G, "llvm.masked.store", types, 2, args, 4);
  } else {
    LLVMSetAlignment(LLVMBuildStore(G->B, v, ptr), align);
  }
}

static LLVMValueRef gen_node(Gen *G, const Node *n) {
  switch (n->kind) {
  case N_CONST:
    if (is_f(n->type)) return vconst_f(G, n->type, n->k.f);
    return vconst_i(G, n->type, n->k.i);
  case N_LOAD: {
    int s = n->slot;
    if (!G->load[s]) G->load[s] = load_vec(G, G->prog->arrays[s].dtype, G->arr[s], G->i);
    return G->load[s];
  }
  case N_PARAM: return G->par[n->slot];
  case N_INDEX: {
    LLVMValueRef iota[W];
    for (int k = 0; k < W; k++) iota[k] = LLVMConstInt(G->ti64, (unsigned)k, 0);
    return LLVMBuildAdd(G->B, splat(G, G->i), LLVMConstVector(iota, W), "");
  }
  case N_TEMP:
    /* Not computed in this group: an earlier group left it in scratch. */
    if (!G->tmp[n->slot])
      G->tmp[n->slot] = load_vec(G, G->prog->temps[n->slot], scratch_of(G, n->slot),
                                 LLVMBuildSub(G->B, G->i, G->blk, ""));
    return G->tmp[n->slot];
  case N_OP: return gen_op(G, n);
  }
  unreachable();
}

/* Statements [from, to) for the W elements at G->i (under G->mask when
** set).  Temporaries that later groups read also go to their scratch. */
static void gen_body(Gen *G, int from, int to) {
  const Program *p = G->prog;
  memset(G->load, 0, sizeof(LLVMValueRef) * (size_t)(p->narrays ? p->narrays : 1));
  memset(G->tmp, 0, sizeof(LLVMValueRef) * (size_t)(p->ntemps ? p->ntemps : 1));
  for (int s = from; s < to; s++) {
    const IrStmt *st = &p->stmts[s];
    LLVMValueRef v = gen_node(G, st->value);
    if (st->kind == IR_LET) {
      G->tmp[st->slot] = v;
      if (G->scr_off[st->slot] >= 0)
        store_vec(G, p->temps[st->slot], scratch_of(G, st->slot),
                  LLVMBuildSub(G->B, G->i, G->blk, ""), v);
      continue;
    }
    store_vec(G, p->arrays[st->slot].dtype, G->arr[st->slot], G->i, v);
  }
}

/* ---- the shape of the kernel ----
**
** LLVM's instruction schedulers and a few other passes take time
** quadratic in the size of a basic block, so one loop body holding a
** whole large program (a thousand outputs, a long chain of lets) took
** seconds to compile and ten thousand statements minutes.  A program
** larger than GROUP_COST is cut into groups (split.c), each its own
** function and loop, and the thread's range is walked in blocks of `blk`
** elements: every group runs over the block before the next group starts.
** A temporary read by a later group than the one computing it is kept for
** the block in scratch memory, which cpu_run allocates per call and passes
** after the parameters (run_range).  Programs of one group get exactly the
** single loop they always had. */

/* Rough instructions per group (split.c's cost of a statement). */
#define GROUP_COST 256
/* Scratch per call: the block is made no larger than fits this (but at
** least W elements); and the largest block. */
#define SCRATCH_BYTES (64 * 1024)
#define MAX_BLOCK 1024

/* The groups of p (gstart, as split_program gives) and, for several, the
** block size and each crossing temporary's offset in the scratch (scr_off,
** -1 for the others).  Returns the number of groups (-1: out of memory) and
** the scratch bytes a call needs in *bytes. */
static int plan_groups(const Program *p, int *gstart, int *blk, int64_t *scr_off, size_t *bytes) {
  bool *cross = calloc((size_t)p->ntemps + 1, sizeof(bool));
  size_t per_elem = 0;
  int ng = cross ? split_program(p, GROUP_COST, gstart, cross, &per_elem) : -1;
  *bytes = 0;
  *blk = per_elem ? (int)(SCRATCH_BYTES / per_elem) / W * W : MAX_BLOCK;
  *blk = *blk > MAX_BLOCK ? MAX_BLOCK : *blk < W ? W : *blk;
  for (int t = 0; ng > 1 && t < p->ntemps; t++)
    if (cross[t]) {
      scr_off[t] = (int64_t)*bytes;
      *bytes += jitc_dtype_size(p->temps[t]) * (size_t)*blk;
      *bytes = (*bytes + 63) / 64 * 64;
    }
  free(cross);
  return ng;
}

/* The scratch bytes a call of p's kernel needs (0: none), SIZE_MAX when out
** of memory. */
static size_t kernel_scratch(const Program *p) {
  int *gstart = malloc(sizeof(int) * ((size_t)p->nstmts + 2));
  int64_t *off = malloc(sizeof(int64_t) * ((size_t)p->ntemps + 1));
  int blk;
  size_t bytes = SIZE_MAX;
  if (gstart && off && plan_groups(p, gstart, &blk, off, &bytes) < 0) bytes = SIZE_MAX;
  free(gstart);
  free(off);
  return bytes;
}

/* Emits from the current block the loop over [lo, hi) for statements
** [from, to), then appends the block `done` and leaves the builder there:
**   loop:   for (i = lo; i + W <= hi; i += W) body(full vectors)
**   tail:   if (i < hi) body(masked to hi - i lanes) */
static void gen_loop(Gen *G, LLVMValueRef fn, int from, int to, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMBuilderRef B = G->B;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(G->C, fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(G->C, fn, "body");
  LLVMBasicBlockRef tailc = LLVMAppendBasicBlockInContext(G->C, fn, "tail.check");
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(G->C, fn, "tail");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, fn, "done");
  /* last = hi - W: the loop runs while i <= last, without overflow since
  ** hi >= 0. */
  LLVMValueRef last = LLVMBuildSub(B, hi, LLVMConstInt(G->ti64, W, 0), "last");
  LLVMBuildBr(B, head);

  LLVMPositionBuilderAtEnd(B, head);
  LLVMValueRef i = LLVMBuildPhi(B, G->ti64, "i");
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLE, i, last), body, tailc);

  LLVMPositionBuilderAtEnd(B, body);
  G->i = i;
  G->mask = NULL;
  gen_body(G, from, to);
  LLVMValueRef next = LLVMBuildAdd(B, i, LLVMConstInt(G->ti64, W, 0), "i.next");
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, head);
  LLVMValueRef inc[2] = {lo, next};
  LLVMBasicBlockRef incb[2] = {pre, body_end};
  LLVMAddIncoming(i, inc, incb, 2);

  LLVMPositionBuilderAtEnd(B, tailc);
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLT, i, hi), tail, done);

  LLVMPositionBuilderAtEnd(B, tail);
  G->i = i;
  LLVMValueRef iota[W];
  for (int k = 0; k < W; k++) iota[k] = LLVMConstInt(G->ti64, (unsigned)k, 0);
  LLVMValueRef rem = LLVMBuildSub(B, hi, i, "rem");
  G->mask = icmp(G, LLVMIntSLT, LLVMConstVector(iota, W), splat(G, rem));
  gen_body(G, from, to);
  LLVMBuildBr(B, done);

  LLVMPositionBuilderAtEnd(B, done);
}

/* A function named `name` of the kernel's parameters (begin, end, arrays,
** params), nounwind, with a 64-byte aligned frame: the vector math
** functions spill whole vectors, and with the caller's 16-byte alignment the
** speed of exp(a) depended on where the process's stack happened to start
** (8 or 13 ms, per process).  A group (nptrs >= 0) takes instead (begin,
** end, params, scratch) and its nptrs arrays, each noalias: the arrays do
** not overlap, and saying so spares LLVM's schedulers a dependence between
** every two stores. */
static LLVMValueRef new_fn(Gen *G, const char *name, int nptrs) {
  bool group = nptrs >= 0;
  int np = group ? 4 + nptrs : 4;
  LLVMTypeRef *params = malloc(sizeof(LLVMTypeRef) * (size_t)np);
  if (!params) return NULL;
  for (int k = 0; k < np; k++) params[k] = k < 2 ? G->ti64 : G->tptr;
  LLVMTypeRef fty = LLVMFunctionType(G->tvoid, params, (unsigned)np, 0);
  free(params);
  LLVMValueRef fn = LLVMAddFunction(G->M, name, fty);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  for (int k = 3; k <= np; k++)
    LLVMAddAttributeAtIndex(fn, (unsigned)k, LLVMCreateEnumAttribute(G->C, noalias, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(G->C, nounwind, 0));
  unsigned alignstack = LLVMGetEnumAttributeKindForName("alignstack", 10);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(G->C, alignstack, 64));
  if (group) {
    /* Each group is compiled on its own: that is the point of groups. */
    unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(G->C, noinline, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
  }
  static const char *const names[2][4] = {{"begin", "end", "arrays", "params"},
                                          {"begin", "end", "params", "scratch"}};
  for (unsigned k = 0; k < 4; k++)
    LLVMSetValueName2(LLVMGetParam(fn, k), names[group][k], strlen(names[group][k]));
  return fn;
}

static void mark_used(const Node *n, int stamp, int *arr_used, int *par_used) {
  if (n->kind == N_LOAD) arr_used[n->slot] = stamp;
  if (n->kind == N_PARAM) par_used[n->slot] = stamp;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++) mark_used(n->args[k], stamp, arr_used, par_used);
}

/* Loads in the current block array pointer s from the table `arrays`. */
static LLVMValueRef load_array_ptr(Gen *G, LLVMValueRef arrays, int s) {
  LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)s, 0);
  LLVMValueRef pp = LLVMBuildGEP2(G->B, G->tptr, arrays, &idx, 1, "");
  char name[80];
  snprintf(name, sizeof name, "%s", G->prog->arrays[s].name);
  return LLVMBuildLoad2(G->B, G->tptr, pp, name);
}

/* Loads in the current block the parameters that par_used marks with
** `stamp` (all when par_used is NULL) as splat vectors. */
static void load_params(Gen *G, LLVMValueRef pars, const int *par_used, int stamp) {
  const Program *p = G->prog;
  for (int s = 0; s < p->nparams; s++) {
    if (par_used && par_used[s] != stamp) continue;
    jitc_dtype t = p->params[s].type;
    LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)s * sizeof(ParamSlot), 0);
    LLVMValueRef pp = LLVMBuildGEP2(G->B, G->ti8, pars, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(G->B, mem_type(G, t), pp, p->params[s].name);
    if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstInt(G->ti8, 0, 0));
    G->par[s] = splat(G, v);
  }
}

/* Builds the split kernel `fname` of ng groups (gstart as split_program
** gives) over blocks of blk elements:
**   fname:     scratch = the address in the slot after the parameters
**              for (b = begin; b < end; b += blk)
**                for each group g: fname.gG(b, min(b + blk, end), params, scratch,
**                                          the group's arrays...)
**   fname.gG:  the group's parameters, then gen_loop. */
static int gen_split(Gen *G, const char *fname, const int *gstart, int ng, int blk,
                     size_t scratch_bytes) {
  const Program *p = G->prog;
  LLVMBuilderRef B = G->B;
  int *arr_used = calloc((size_t)p->narrays + 1, sizeof(int));
  int *par_used = calloc((size_t)p->nparams + 1, sizeof(int));
  int *slots = malloc(sizeof(int) * ((size_t)p->narrays + 1));
  LLVMValueRef *args = malloc(sizeof(LLVMValueRef) * ((size_t)p->narrays + 4));
  LLVMValueRef kfn = new_fn(G, fname, -1);
  int rc = -1;
  if (!arr_used || !par_used || !slots || !args || !kfn) goto out;
  LLVMValueRef begin = LLVMGetParam(kfn, 0), end = LLVMGetParam(kfn, 1);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(G->C, kfn, "entry");
  LLVMBasicBlockRef outer = LLVMAppendBasicBlockInContext(G->C, kfn, "block");
  LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(G->C, kfn, "block.run");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(G->C, kfn, "exit");
  LLVMPositionBuilderAtEnd(B, entry);
  /* The scratch's address follows the parameters (run_range). */
  LLVMValueRef scratch = LLVMConstNull(G->tptr);
  if (scratch_bytes) {
    LLVMValueRef idx = LLVMConstInt(G->ti64, (unsigned)p->nparams * sizeof(ParamSlot), 0);
    LLVMValueRef pp = LLVMBuildGEP2(B, G->ti8, LLVMGetParam(kfn, 3), &idx, 1, "");
    scratch = LLVMBuildLoad2(B, G->tptr, pp, "scratch");
  }
  LLVMBuildBr(B, outer);
  LLVMPositionBuilderAtEnd(B, outer);
  LLVMValueRef b = LLVMBuildPhi(B, G->ti64, "b");
  LLVMBuildCondBr(B, icmp(G, LLVMIntSLT, b, end), run, exit);
  LLVMPositionBuilderAtEnd(B, run);
  /* bend = end - b > blk ? b + blk : end, without overflow. */
  LLVMValueRef kblk = LLVMConstInt(G->ti64, (unsigned)blk, 0);
  LLVMValueRef bend = sel(G, icmp(G, LLVMIntSGT, LLVMBuildSub(B, end, b, ""), kblk),
                          LLVMBuildAdd(B, b, kblk, ""), end);
  for (int g = 0; g < ng; g++) {
    int stamp = g + 1, n = 0;
    for (int s = gstart[g]; s < gstart[g + 1]; s++) {
      mark_used(p->stmts[s].value, stamp, arr_used, par_used);
      if (p->stmts[s].kind == IR_STORE) arr_used[p->stmts[s].slot] = stamp;
    }
    for (int s = 0; s < p->narrays; s++)
      if (arr_used[s] == stamp) slots[n++] = s;
    /* The call, in the kernel's loop. */
    args[0] = b;
    args[1] = bend;
    args[2] = LLVMGetParam(kfn, 3);
    args[3] = scratch;
    for (int k = 0; k < n; k++) args[4 + k] = load_array_ptr(G, LLVMGetParam(kfn, 2), slots[k]);
    char name[80];
    snprintf(name, sizeof name, "%s.g%d", fname, g);
    LLVMValueRef fn = new_fn(G, name, n);
    if (!fn) goto out;
    LLVMBuildCall2(B, LLVMGlobalGetValueType(fn), fn, args, (unsigned)(4 + n), "");
    LLVMBasicBlockRef at = LLVMGetInsertBlock(B);
    /* The group's function. */
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
    for (int k = 0; k < n; k++) G->arr[slots[k]] = LLVMGetParam(fn, (unsigned)(4 + k));
    load_params(G, LLVMGetParam(fn, 2), par_used, stamp);
    G->blk = LLVMGetParam(fn, 0);
    G->scratch = LLVMGetParam(fn, 3);
    gen_loop(G, fn, gstart[g], gstart[g + 1], G->blk, LLVMGetParam(fn, 1));
    LLVMBuildRetVoid(B);
    LLVMPositionBuilderAtEnd(B, at);
  }
  LLVMBuildBr(B, outer);
  LLVMValueRef inc[2] = {begin, bend};
  LLVMBasicBlockRef incb[2] = {entry, run};
  LLVMAddIncoming(b, inc, incb, 2);
  LLVMPositionBuilderAtEnd(B, exit);
  LLVMBuildRetVoid(B);
  rc = 0;
out:
  free(arr_used);
  free(par_used);
  free(slots);
  free(args);
  return rc;
}

/* Builds module M with the kernel `fname`: one function whose entry block
** loads the array pointers and the parameters, then one loop (gen_loop)
** over [begin, end); or, for a program of several groups, gen_split. */
static int gen_module(Gen *G, const char *fname) {
  const Program *p = G->prog;
  int *gstart = malloc(sizeof(int) * (size_t)(p->nstmts + 2));
  int rc = -1, blk;
  size_t bytes;
  if (!gstart) goto out;
  int ng = plan_groups(p, gstart, &blk, G->scr_off, &bytes);
  if (ng < 0) goto out;
  if (ng > 1) {
    rc = gen_split(G, fname, gstart, ng, blk, bytes);
    goto out;
  }
  LLVMValueRef fn = new_fn(G, fname, -1);
  if (!fn) goto out;
  LLVMPositionBuilderAtEnd(G->B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
  for (int s = 0; s < p->narrays; s++) G->arr[s] = load_array_ptr(G, LLVMGetParam(fn, 2), s);
  load_params(G, LLVMGetParam(fn, 3), NULL, 0);
  gen_loop(G, fn, 0, p->nstmts, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1));
  LLVMBuildRetVoid(G->B);
  rc = 0;
out:
  free(gstart);
  return rc;
}

/* Builds the kernel's module in a new LLVM context (*C, owned by the
** caller).  Returns NULL when out of memory. */
static LLVMModuleRef build_module(CpuState *st, const Machine *mc, const jitc_kernel *k,
                                  const char *fname, LLVMContextRef *Cp) {
  const Program *p = k->prog;
  Gen G = {0};
  G.st = st;
  G.m = mc;
  G.prog = p;
  G.fast = k->opt.fast_math != 0;
  G.C = LLVMContextCreate();
  *Cp = G.C;
  G.M = LLVMModuleCreateWithNameInContext("jitc", G.C);
  LLVMSetTarget(G.M, st->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(mc->tm);
  LLVMSetModuleDataLayout(G.M, dl);
  LLVMDisposeTargetData(dl);
  G.B = LLVMCreateBuilderInContext(G.C);
  G.ti1 = LLVMInt1TypeInContext(G.C);
  G.ti8 = LLVMInt8TypeInContext(G.C);
  G.ti32 = LLVMInt32TypeInContext(G.C);
  G.ti64 = LLVMInt64TypeInContext(G.C);
  G.tf32 = LLVMFloatTypeInContext(G.C);
  G.tf64 = LLVMDoubleTypeInContext(G.C);
  G.tptr = LLVMPointerTypeInContext(G.C, 0);
  G.tvoid = LLVMVoidTypeInContext(G.C);
  size_t na = (size_t)p->narrays + 1, np = (size_t)p->nparams + 1, nt = (size_t)p->ntemps + 1;
  G.arr = calloc(na, sizeof *G.arr);
  G.load = calloc(na, sizeof *G.load);
  G.par = calloc(np, sizeof *G.par);
  G.tmp = calloc(nt, sizeof *G.tmp);
  G.scr_off = malloc(nt * sizeof *G.scr_off);
  for (size_t t = 0; G.scr_off && t < nt; t++) G.scr_off[t] = -1;
  LLVMModuleRef M = G.M;
  if (!G.arr || !G.load || !G.par || !G.tmp || !G.scr_off || gen_module(&G, fname) != 0) {
    LLVMDisposeModule(M);
    M = NULL;
  } else {
    /* The machine's attributes on the kernel and its groups, so that what
    ** the optimiser sees and what --emit llvm shows is what runs.
    ** min-legal-vector-width keeps the vector math's arguments in registers
    ** of the level's width (their ABI) on CPUs that prefer narrower vectors. */
    char width[8];
    snprintf(width, sizeof width, "%d", mc->vec_bits);
    const char *attrs[3][2] = {{"target-cpu", mc->cpu}, {"target-features", mc->features},
                               {"min-legal-vector-width", width}};
    for (LLVMValueRef fn = LLVMGetFirstFunction(M); fn; fn = LLVMGetNextFunction(fn)) {
      if (LLVMIsDeclaration(fn)) continue;
      for (int a = 0; a < 3; a++)
        if (*attrs[a][1])
          LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                  LLVMCreateStringAttribute(G.C, attrs[a][0], (unsigned)strlen(attrs[a][0]),
                                                            attrs[a][1], (unsigned)strlen(attrs[a][1])));
    }
  }
  LLVMDisposeBuilder(G.B);
  free(G.arr);
  free(G.load);
  free(G.par);
  free(G.tmp);
  free(G.scr_off);
  return M;
}

/* The pipeline: the vectors are built by hand, so the optimiser's job is
** folding, CSE and instruction selection, which O2 does as well as O3 in
** less time.  A split kernel (gen_split) is a large program, where O2's
** loop and memory passes cost a third of the compile and find nothing: its
** groups get folding and CSE only. */
static const char *PIPELINE = "default<O2>";
static const char *PIPELINE_SPLIT =
    "function(early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg)";

static LLVMErrorRef optimize(const Machine *mc, LLVMModuleRef M) {
  int defined = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    defined += !LLVMIsDeclaration(f);
  LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(M, defined > 1 ? PIPELINE_SPLIT : PIPELINE, mc->tm, o);
  LLVMDisposePassBuilderOptions(o);
  return err;
}

/* ===================================================================== */
/* Compiling, caching and loading                                         */
/* ===================================================================== */

/* Everything that changes the machine code, in one string: the program's
** canonical typed form, the options that matter, the compiler and host. */
static char *full_key(CpuState *st, const Machine *mc, const jitc_kernel *k) {
  unsigned maj, min, pat;
  LLVMGetVersion(&maj, &min, &pat);
  Buf b = {0};
  buf_printf(&b, "jitc %s cpu\nllvm %u.%u.%u\ntriple %s\ncpu %s\nfeatures %s\nlevel %d\n",
             JITC_VERSION, maj, min, pat, st->triple, mc->cpu, mc->features, mc->level);
  /* The build of this file: code generation may change between builds of
  ** one version, and a stale object must never be loaded. */
  buf_printf(&b, "sleef %d\nmvec %d\nfast_math %d\nwidth %d\npipeline %s | %s %d\nbuild %s %s\n",
             st->sleef != NULL, st->mvec != NULL, k->opt.fast_math != 0, W, PIPELINE,
             PIPELINE_SPLIT, GROUP_COST, __DATE__, __TIME__);
  buf_puts(&b, k->key ? k->key : "");
  return buf_steal(&b);
}

static jitc_status ensure_jit(jitc_context *ctx, CpuState *st) {
  if (st->jit) return JITC_OK;
  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&st->jit, jb); /* takes jb */
  if (err) {
    st->jit = NULL;
    return llvm_error(ctx, "creating the JIT", err);
  }
  /* Kernels call SLEEF, libm and compiler-rt style helpers (memset):
  ** resolve them from the process. */
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(st->jit), NULL, NULL);
  if (err) return llvm_error(ctx, "searching the process's symbols", err);
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(st->jit), gen); /* takes gen */
  return JITC_OK;
}

/* Adds an object file to the JIT and finds the kernel in it. */
static jitc_status load_object(jitc_context *ctx, CpuState *st, const void *obj, size_t len,
                               const char *fname, KernelFn *fn) {
  jitc_status s = ensure_jit(ctx, st);
  if (s) return s;
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, len, fname);
  LLVMErrorRef err =
      LLVMOrcLLJITAddObjectFile(st->jit, LLVMOrcLLJITGetMainJITDylib(st->jit), mb); /* takes mb */
  if (err) return llvm_error(ctx, "loading the object code", err);
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(st->jit, &addr, fname);
  if (err) return llvm_error(ctx, "linking the kernel", err);
  /* The JIT hands out an address; KernelFn is the ABI the module defines. */
  *fn = (KernelFn)(uintptr_t)addr;
  return JITC_OK;
}

static KernelFn mem_find(CpuState *st, const char *key, uint64_t h) {
  for (MemEntry *e = st->mem[h % MEM_BUCKETS]; e; e = e->next)
    if (e->hash == h && strcmp(e->key, key) == 0) return e->fn;
  return NULL;
}

static void mem_add(CpuState *st, const char *key, uint64_t h, KernelFn fn) {
  MemEntry *e = malloc(sizeof *e);
  char *kc = strdup(key);
  if (!e || !kc) { /* the memory cache is an optimisation: skip it */
    free(e);
    free(kc);
    return;
  }
  e->hash = h;
  e->key = kc;
  e->fn = fn;
  e->next = st->mem[h % MEM_BUCKETS];
  st->mem[h % MEM_BUCKETS] = e;
}

static jitc_status cpu_compile(jitc_context *ctx, jitc_kernel *k) {
  CpuState *st = cpu_state(ctx);
  if (!st) return JITC_E_UNAVAILABLE;
  Machine *mc = get_machine(ctx, st, k->opt.cpu);
  if (!mc) return JITC_E_USAGE;
  if (!mc->runnable)
    return ctx_error(ctx, JITC_E_UNAVAILABLE,
                     "cpu target: this host (%s, %s) cannot run code compiled for '%s': "
                     "use --emit to see it, or native or a level up to %s to run",
                     st->host_cpu, level_names[st->host_level], mc->name,
                     level_names[st->host_level]);
  CpuKernel *ck = calloc(1, sizeof *ck);
  char *key = full_key(st, mc, k);
  if (!ck || !key) {
    free(ck);
    free(key);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  ck->scratch = kernel_scratch(k->prog);
  if (ck->scratch == SIZE_MAX) {
    free(ck);
    free(key);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  jitc_compile_info *ci = &k->cinfo;
  ci->ir_ms = ci->optimize_ms = ci->codegen_ms = ci->load_ms = 0;
  uint64_t h = hash64(key, strlen(key), 0);
  char fname[40];
  snprintf(fname, sizeof fname, "jitc_k_%016llx", (unsigned long long)h);
  jitc_status s = JITC_OK;

  /* 1. This context compiled it already. */
  if ((ck->fn = mem_find(st, key, h)) != NULL) {
    ci->cache = "memory";
    goto ok;
  }

  /* 2. The disk cache has its object code. */
  char dir[PATH_MAX], why[256];
  bool use_disk = !k->opt.no_cache &&
                  cache_dir_resolve(k->opt.cache_dir, dir, sizeof dir, why, sizeof why) == 0;
  if (use_disk) {
    void *obj;
    size_t len;
    double t0 = now_ms();
    if (cache_load(dir, "cpu", key, strlen(key), &obj, &len)) {
      s = load_object(ctx, st, obj, len, fname, &ck->fn);
      free(obj);
      ci->load_ms = now_ms() - t0;
      if (s) goto fail;
      ci->cache = "disk";
      mem_add(st, key, h, ck->fn);
      goto ok;
    }
  }

  /* 3. Compile: IR, optimise, machine code. */
  ci->cache = use_disk ? "miss" : "none";
  double t0 = now_ms();
  if (!get_tm(ctx, st, mc)) {
    s = JITC_E_UNAVAILABLE;
    goto fail;
  }
  LLVMContextRef C;
  LLVMModuleRef M = build_module(st, mc, k, fname, &C);
  if (!M) {
    LLVMContextDispose(C);
    s = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    goto fail;
  }
  double t1 = now_ms();
  ci->ir_ms = t1 - t0;
  LLVMErrorRef err = optimize(mc, M);
  double t2 = now_ms();
  ci->optimize_ms = t2 - t1;
  if (err) {
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    s = llvm_error(ctx, "optimising", err);
    goto fail;
  }
  LLVMMemoryBufferRef obj = NULL;
  char *msg = NULL;
  LLVMBool bad = LLVMTargetMachineEmitToMemoryBuffer(mc->tm, M, LLVMObjectFile, &msg, &obj);
  LLVMDisposeModule(M);
  LLVMContextDispose(C);
  double t3 = now_ms();
  ci->codegen_ms = t3 - t2;
  if (bad) {
    s = ctx_error(ctx, JITC_E_INTERNAL, "cpu target: code generation: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    goto fail;
  }
  const char *data = LLVMGetBufferStart(obj);
  size_t len = LLVMGetBufferSize(obj);
  if (use_disk) cache_store(dir, "cpu", key, strlen(key), data, len); /* best effort */
  s = load_object(ctx, st, data, len, fname, &ck->fn);
  LLVMDisposeMemoryBuffer(obj);
  ci->load_ms = now_ms() - t3;
  if (s) goto fail;
  mem_add(st, key, h, ck->fn);

ok:
  free(key);
  k->impl = ck;
  return JITC_OK;
fail:
  free(key);
  free(ck);
  return s;
}

/* ---- running ---- */

typedef struct Job {
  KernelFn fn;
  void *const *arrays;
  const ParamSlot *params;
  int nparams;
  size_t scratch;   /* see CpuKernel */
  atomic_bool oom;  /* a call could not allocate its scratch */
} Job;

static void run_range(void *arg, int64_t begin, int64_t end) {
  Job *j = arg;
  if (!j->scratch) {
    j->fn(begin, end, j->arrays, j->params);
    return;
  }
  /* A split kernel: a copy of the parameters, then a slot with the address
  ** of this call's scratch, then the scratch (64-byte aligned). */
  size_t head = ((size_t)j->nparams + 1) * sizeof(ParamSlot);
  head = (head + 63) / 64 * 64;
  unsigned char *mem = aligned_alloc(64, head + (j->scratch + 63) / 64 * 64);
  if (!mem) {
    atomic_store(&j->oom, true);
    return;
  }
  ParamSlot *ps = (ParamSlot *)mem;
  if (j->nparams) memcpy(ps, j->params, (size_t)j->nparams * sizeof *ps);
  ps[j->nparams].bits = (uint64_t)(uintptr_t)(mem + head);
  j->fn(begin, end, j->arrays, ps);
  free(mem);
}

static jitc_status cpu_run(jitc_context *ctx, const jitc_kernel *k, int64_t n,
                           void *const *arrays, const ParamSlot *params, jitc_run_info *info) {
  CpuState *st = ctx->target_state[JITC_TARGET_CPU];
  const CpuKernel *ck = k->impl;
  if (!st || !ck) return ctx_error(ctx, JITC_E_USAGE, "cpu target: kernel not compiled");
  double t0 = now_ms();
  int threads = k->opt.threads > 0 ? k->opt.threads : 0;
  /* The pool is made on first use; the lock keeps that safe even for callers
  ** that run one context's kernels from several threads. */
  static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&pool_lock);
  if (n >= 2 * CHUNK_ALIGN && threads != 1 && !st->pool) {
    /* Made on the first run that may use it, with as many workers as the
    ** machine has cores, or as asked. */
    int want = threads > ncores() ? threads : ncores();
    st->pool = pool_new(want);
  }
  Pool *pool = st->pool;
  pthread_mutex_unlock(&pool_lock);
  Job job = {ck->fn, arrays, params, k->prog->nparams, ck->scratch, false};
  if (n > 0) pool_run(pool, threads, n, CHUNK_ALIGN, run_range, &job);
  if (info) info->run_ms = now_ms() - t0;
  if (atomic_load(&job.oom))
    return ctx_error(ctx, JITC_E_NOMEM, "cpu target: out of memory for the kernel's scratch");
  return JITC_OK;
}

static void cpu_release(jitc_kernel *k) {
  /* The code stays in the context's JIT, where the memory cache finds it. */
  free(k->impl);
  k->impl = NULL;
}

/* ---- --emit llvm | llvm-opt | asm ---- */

/* The stages of target_cpu.stages, in order. */
enum { STAGE_LLVM, STAGE_LLVM_OPT, STAGE_ASM };

static jitc_status cpu_emit(jitc_context *ctx, jitc_kernel *k, int stage, Buf *out) {
  bool ir = stage == STAGE_LLVM, asm_ = stage == STAGE_ASM;
  CpuState *st = cpu_state(ctx);
  if (!st) return JITC_E_UNAVAILABLE;
  Machine *mc = get_machine(ctx, st, k->opt.cpu);
  if (!mc) return JITC_E_USAGE;
  if (!get_tm(ctx, st, mc)) return JITC_E_UNAVAILABLE;
  LLVMContextRef C;
  LLVMModuleRef M = build_module(st, mc, k, "kernel", &C);
  jitc_status s = JITC_OK;
  if (!M) {
    LLVMContextDispose(C);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  if (!ir) {
    LLVMErrorRef err = optimize(mc, M);
    if (err) s = llvm_error(ctx, "optimising", err);
  }
  if (!s && asm_) {
    LLVMMemoryBufferRef mb = NULL;
    char *msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(mc->tm, M, LLVMAssemblyFile, &msg, &mb)) {
      s = ctx_error(ctx, JITC_E_INTERNAL, "cpu target: code generation: %s", msg ? msg : "?");
      LLVMDisposeMessage(msg);
    } else {
      buf_putn(out, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
      LLVMDisposeMemoryBuffer(mb);
    }
  } else if (!s) {
    char *text = LLVMPrintModuleToString(M);
    buf_puts(out, text);
    LLVMDisposeMessage(text);
  }
  LLVMDisposeModule(M);
  LLVMContextDispose(C);
  return s;
}

#endif /* JITC_HAVE_LLVM */

const Target target_cpu = {
  .name = "cpu",
  .available = cpu_available,
  .device = cpu_device,
  .compile = cpu_compile,
  .run = cpu_run,
  .stages = (const char *const[]){"llvm", "llvm-opt", "asm", NULL},
  .emit = cpu_emit,
  .release = cpu_release,
  .shutdown = cpu_shutdown,
};
