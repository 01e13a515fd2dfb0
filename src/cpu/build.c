/*
** cpu/build.c -- building for the cpu target: from the typed program to
** machine code loaded in the process.  Start at cpu_build_kernel().
**
**   1. The machine: code is compiled for the host ("native"), an x86-64
**      level (x86-64, -v2, -v3, -v4) or a named CPU, from jitc_options.cpu
**      or $JITC_CPU (ctx->env.cpu); its level picks the vector width and
**      the vector math (get_machine).
**   2. Generation (cpu/gen.c) gives an LLVM module; the optimiser runs a
**      pass pipeline on it (optimize); the target machine makes object code.
**   3. The code cache (codecache.c, namespace "cpu") keeps the object code
**      in memory per context and on disk, keyed by everything that changes
**      it (full_key); a cached object is loaded without running 2.
**   4. The ORC LLJIT of the context links the object into the process and
**      gives the kernel's address.  The kernels' math calls resolve to the
**      vector libraries loaded here with dlopen (SLEEF, glibc's libmvec;
**      $JITC_VECMATH=sleef leaves libmvec out) or to libm.
*/
#include "cpu.h"

#include <stdio.h>

#ifndef JITC_HAVE_LLVM

CpuBuild *cpu_build_new(jitc_context *ctx) {
  ctx_error(ctx, JITC_E_UNAVAILABLE,
            "the cpu target is not available: jitc was built without LLVM: "
            "install llvm-19-dev and rebuild");
  return NULL;
}
void cpu_build_free(CpuBuild *b) {}
void cpu_build_describe(const CpuBuild *b, char *out, size_t n) { snprintf(out, n, "none"); }
int cpu_build_vec_bits(jitc_context *ctx, CpuBuild *b, const jitc_kernel *k) { return 0; }
jitc_status cpu_build_kernel(jitc_context *ctx, CpuBuild *b, jitc_kernel *k, Reads reads,
                             bool rows, KernelFn *fn, size_t *scratch) {
  return JITC_E_UNAVAILABLE;
}
jitc_status cpu_build_emit(jitc_context *ctx, CpuBuild *b, jitc_kernel *k, int stage, Buf *out) {
  return JITC_E_UNAVAILABLE;
}

#else /* JITC_HAVE_LLVM */

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A machine code is compiled for: the host ("native"), an x86-64 level
** or a named CPU.  Its level picks the vector width and the vector math
** (cpu/math.c). */
typedef struct Machine {
  char *name;                    /* as asked: "native", "x86-64-v3", "znver3" */
  char *cpu, *features;          /* what LLVM is given */
  int level;                     /* x86-64 level 1..4 (0: not x86-64) */
  int vec_bits;                  /* 128, 256 or 512 */
  bool runnable;                 /* this host executes its code */
  LLVMTargetMachineRef tm;       /* made on first need */
} Machine;

#define MAX_MACHINES 8

struct CpuBuild {
  char *triple, *host_cpu, *host_features; /* LLVM-allocated */
  int host_level;                /* the x86-64 level this host executes, 0 if not x86-64 */
  char *env_cpu;                 /* $JITC_CPU when the context started, or NULL */
  Machine machines[MAX_MACHINES];
  int nmachines;
  void *sleef;                   /* dlopen handle or NULL */
  void *mvec;                    /* glibc's libmvec: dlopen handle or NULL */
  LLVMOrcLLJITRef jit;           /* created by the first load */
};

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

/* ---- the host and the machines ---- */

static bool has_feature(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; (p = strstr(p, f)) != NULL; p += n)
    if (p > features && p[-1] == '+' && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

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

CpuBuild *cpu_build_new(jitc_context *ctx) {
  pthread_once(&llvm_once, llvm_init);
  CpuBuild *st = calloc(1, sizeof *st);
  if (!st || (ctx->env.cpu && !(st->env_cpu = strdup(ctx->env.cpu)))) {
    free(st);
    ctx_error(ctx, JITC_E_NOMEM, "out of memory");
    return NULL;
  }
  st->triple = LLVMGetDefaultTargetTriple();
  st->host_cpu = LLVMGetHostCPUName();
  st->host_features = LLVMGetHostCPUFeatures();
  st->host_level = host_level(st->triple, st->host_features);
  /* RTLD_GLOBAL: the JIT resolves the kernels' calls by searching the
  ** process's symbols.  JITC_VECMATH=sleef leaves libmvec out: the choice
  ** of systems without glibc, which the tests check on any host. */
  st->sleef = dlopen("libsleef.so.3", RTLD_LAZY | RTLD_GLOBAL);
  if (!ctx->env.sleef_only) st->mvec = dlopen("libmvec.so.1", RTLD_LAZY | RTLD_GLOBAL);
  return st;
}

void cpu_build_free(CpuBuild *st) {
  if (!st) return;
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
  if (st->sleef) dlclose(st->sleef);
  if (st->mvec) dlclose(st->mvec);
  free(st);
}

void cpu_build_describe(const CpuBuild *st, char *out, size_t n) {
  snprintf(out, n, "%s%s%s", st->host_cpu, st->host_level ? ", " : "",
           level_names[st->host_level]);
}

static int vec_bits_of_level(int level) {
  return level >= 4 ? 512 : level == 3 ? 256 : 128;
}

/* The machine named `name` (NULL or "": $JITC_CPU, else "native"), made on first
** use; NULL with a JITC_E_USAGE error for a name that is not one. */
static Machine *get_machine(jitc_context *ctx, CpuBuild *st, const char *name) {
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
  mc->name = strdup(name);
  /* The host's own CPU with its exact features; a level or another CPU
  ** with the features LLVM knows it by. */
  mc->cpu = strdup(native ? st->host_cpu : name);
  mc->features = strdup(native ? st->host_features : "");
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
static LLVMTargetMachineRef get_tm(jitc_context *ctx, CpuBuild *st, Machine *mc) {
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

/* ---- compiling ---- */

/* VecLibs.has for generation: does the loaded library define `name`? */
static bool lib_has(const void *host, int lib, const char *name) {
  const CpuBuild *st = host;
  void *h = lib == VL_MVEC ? st->mvec : st->sleef;
  return h && dlsym(h, name);
}

/* The kernel of k for machine mc, as an LLVM module in a new context (*C,
** the caller's to dispose of); NULL when out of memory. */
static LLVMModuleRef gen(CpuBuild *st, const Machine *mc, const jitc_kernel *k, const char *fname,
                         Reads reads, bool rows, LLVMContextRef *C) {
  GenTarget gt = {mc->cpu, mc->features, mc->level, mc->vec_bits,
                  {lib_has, st, st->mvec != NULL, st->sleef != NULL}, k->opt.fast_math != 0,
                  reads, rows ? rows_gen : NULL};
  LLVMModuleRef M = cpu_gen_module(&gt, k->prog, fname, C);
  if (!M) return NULL;
  LLVMSetTarget(M, st->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(mc->tm);
  LLVMSetModuleDataLayout(M, dl);
  LLVMDisposeTargetData(dl);
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

/* Everything that changes the machine code, in one string: the program's
** canonical typed form, the options that matter, the compiler and host. */
static char *full_key(CpuBuild *st, const Machine *mc, const jitc_kernel *k, Reads reads,
                      bool rows) {
  unsigned maj, min, pat;
  LLVMGetVersion(&maj, &min, &pat);
  Buf b = {0};
  buf_printf(&b, "jitc %s cpu\nllvm %u.%u.%u\ntriple %s\ncpu %s\nfeatures %s\nlevel %d\n",
             JITC_VERSION, maj, min, pat, st->triple, mc->cpu, mc->features, mc->level);
  /* The build of these files: code generation may change between builds of
  ** one version, and a stale object must never be loaded. */
  buf_printf(&b, "sleef %d\nmvec %d\nfast_math %d\npipeline %s | %s\ngen %s\nmath %s\nreduce %s\n"
             "convert %s\ncomplex %s\nbuild %s %s\n", st->sleef != NULL, st->mvec != NULL,
             k->opt.fast_math != 0, PIPELINE, PIPELINE_SPLIT, cpu_gen_stamp, cpu_math_stamp,
             cpu_reduce_stamp, cpu_convert_stamp, cpu_complex_stamp, __DATE__, __TIME__);
  if (reads.one) buf_printf(&b, "bcast %llx\n", (unsigned long long)reads.one);
  if (reads.two) buf_printf(&b, "every2 %llx\n", (unsigned long long)reads.two);
  if (rows) buf_printf(&b, "rows %s\n", cpu_rowacc_stamp);
  buf_puts(&b, k->key ? k->key : "");
  return buf_steal(&b);
}

static jitc_status ensure_jit(jitc_context *ctx, CpuBuild *st) {
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
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(st->jit);
  LLVMOrcJITDylibAddGenerator(jd, gen); /* takes gen */
  /* The library's own functions that kernels call (cpu/host.c): hidden
  ** from the search above, so given by their addresses. */
  LLVMOrcCSymbolMapPair pairs[8];
  size_t n = 0;
  for (const HostFn *h = cpu_host_fns; h->name && n < 8; h++, n++) {
    pairs[n].Name = LLVMOrcLLJITMangleAndIntern(st->jit, h->name);
    pairs[n].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)h->fn;
    pairs[n].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[n].Sym.Flags.TargetFlags = 0;
  }
  err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, n)); /* takes the names */
  if (err) return llvm_error(ctx, "defining the library's functions", err);
  return JITC_OK;
}

/* Adds an object file to the JIT and finds the kernel in it. */
static jitc_status load_object(jitc_context *ctx, CpuBuild *st, const void *obj, size_t len,
                               const char *fname, void **code) {
  jitc_status s = ensure_jit(ctx, st);
  if (s) return s;
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, len, fname);
  LLVMErrorRef err =
      LLVMOrcLLJITAddObjectFile(st->jit, LLVMOrcLLJITGetMainJITDylib(st->jit), mb); /* takes mb */
  if (err) return llvm_error(ctx, "loading the object code", err);
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(st->jit, &addr, fname);
  if (err) return llvm_error(ctx, "linking the kernel", err);
  /* The JIT hands out an address: the code cache keeps it as a pointer. */
  *code = (void *)(uintptr_t)addr;
  return JITC_OK;
}

/* The stages of target_cpu.stages, in order, and the object code that runs. */
enum { STAGE_LLVM, STAGE_LLVM_OPT, STAGE_ASM, STAGE_OBJECT };

/* A malloc'ed copy of n bytes (at least one byte allocated). */
static void *copy_bytes(const void *p, size_t n) {
  void *d = malloc(n ? n : 1);
  if (d) memcpy(d, p, n);
  return d;
}

/* Compiles k for mc as far as `stage`: the IR (llvm), optimised
** (llvm-opt), then the target machine's assembly or object code, into a
** malloc'ed *data of *len bytes.  The kernel's symbol is fname; ci (when
** not NULL) gets the times of the steps. */
static jitc_status compile(jitc_context *ctx, CpuBuild *st, Machine *mc, const jitc_kernel *k,
                           Reads reads, bool rows, const char *fname, int stage, void **data,
                           size_t *len, jitc_compile_info *ci) {
  double t0 = now_ms();
  if (!get_tm(ctx, st, mc)) return JITC_E_UNAVAILABLE;
  LLVMContextRef C;
  LLVMModuleRef M = gen(st, mc, k, fname, reads, rows, &C);
  if (!M) {
    LLVMContextDispose(C);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  double t1 = now_ms();
  jitc_status s = JITC_OK;
  LLVMErrorRef err = stage == STAGE_LLVM ? NULL : optimize(mc, M);
  double t2 = now_ms();
  if (err) {
    s = llvm_error(ctx, "optimising", err);
  } else if (stage <= STAGE_LLVM_OPT) {
    char *text = LLVMPrintModuleToString(M);
    *len = strlen(text);
    *data = copy_bytes(text, *len);
    LLVMDisposeMessage(text);
  } else {
    LLVMMemoryBufferRef mb = NULL;
    char *msg = NULL;
    LLVMCodeGenFileType type = stage == STAGE_ASM ? LLVMAssemblyFile : LLVMObjectFile;
    if (LLVMTargetMachineEmitToMemoryBuffer(mc->tm, M, type, &msg, &mb)) {
      s = ctx_error(ctx, JITC_E_INTERNAL, "cpu target: code generation: %s", msg ? msg : "?");
      LLVMDisposeMessage(msg);
    } else {
      *len = LLVMGetBufferSize(mb);
      *data = copy_bytes(LLVMGetBufferStart(mb), *len);
      LLVMDisposeMemoryBuffer(mb);
    }
  }
  LLVMDisposeModule(M);
  LLVMContextDispose(C);
  if (!s && !*data) s = ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  if (ci) {
    ci->ir_ms = t1 - t0;
    ci->optimize_ms = t2 - t1;
    ci->codegen_ms = now_ms() - t2;
  }
  return s;
}

/* What code_get() needs to build and load one kernel. */
typedef struct BuildJob {
  CpuBuild *st;
  Machine *mc;
  const jitc_kernel *k;
  Reads reads;     /* GenTarget.reads */
  bool rows;       /* GenTarget.rows */
  jitc_compile_info *ci;
  char fname[40]; /* the kernel's symbol */
} BuildJob;

/* CodeBuild.build: the object code. */
static jitc_status build_object(jitc_context *ctx, void *arg, void **data, size_t *len) {
  BuildJob *j = arg;
  return compile(ctx, j->st, j->mc, j->k, j->reads, j->rows, j->fname, STAGE_OBJECT, data, len,
                 j->ci);
}

/* CodeBuild.load: into the JIT.  The code stays there until the context
** goes (cpu_build_free), so there is no unload. */
static jitc_status load(jitc_context *ctx, void *arg, const void *data, size_t len, void **code) {
  BuildJob *j = arg;
  return load_object(ctx, j->st, data, len, j->fname, code);
}

jitc_status cpu_build_kernel(jitc_context *ctx, CpuBuild *st, jitc_kernel *k, Reads reads,
                             bool rows, KernelFn *fn, size_t *scratch) {
  Machine *mc = get_machine(ctx, st, k->opt.cpu);
  if (!mc) return JITC_E_USAGE;
  if (!mc->runnable)
    return ctx_error(ctx, JITC_E_UNAVAILABLE,
                     "cpu target: this host (%s, %s) cannot run code compiled for '%s': "
                     "use --emit to see it, or native or a level up to %s to run",
                     st->host_cpu, level_names[st->host_level], mc->name,
                     level_names[st->host_level]);
  *scratch = cpu_gen_scratch(k->prog);
  char *key = full_key(st, mc, k, reads, rows);
  if (!key || *scratch == SIZE_MAX) {
    free(key);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  /* A variant's times are not the kernel's compile: they go nowhere. */
  jitc_compile_info variant = {0}, *ci = reads.one || reads.two || rows ? &variant : &k->cinfo;
  BuildJob job = {st, mc, k, reads, rows, ci, ""};
  snprintf(job.fname, sizeof job.fname, "jitc_k_%016llx",
           (unsigned long long)hash64(key, strlen(key), 0));
  ci->ir_ms = ci->optimize_ms = ci->codegen_ms = ci->load_ms = 0;
  /* The kernel's own copy: its compile info lives as long as it does. */
  if (ci == &k->cinfo && !(ci->machine = arena_strdup(k->arena, mc->name))) {
    free(key);
    return ctx_error(ctx, JITC_E_NOMEM, "out of memory");
  }
  CodeBuild b = {"cpu", key, strlen(key), build_object, load, NULL, &job};
  void *code;
  jitc_status s = code_get(ctx, &k->opt, &b, &code, ci);
  free(key);
  /* The JIT's address of the function the module defines, of type KernelFn. */
  if (!s) *fn = (KernelFn)(uintptr_t)code;
  return s;
}

int cpu_build_vec_bits(jitc_context *ctx, CpuBuild *st, const jitc_kernel *k) {
  Machine *mc = get_machine(ctx, st, k->opt.cpu);
  return mc && mc->level ? mc->vec_bits : 0;
}

/* ---- --emit llvm | llvm-opt | asm ---- */

jitc_status cpu_build_emit(jitc_context *ctx, CpuBuild *st, jitc_kernel *k, int stage, Buf *out) {
  Machine *mc = get_machine(ctx, st, k->opt.cpu);
  if (!mc) return JITC_E_USAGE;
  void *data = NULL;
  size_t len;
  jitc_status s = compile(ctx, st, mc, k, (Reads){0, 0}, false, "kernel", stage, &data, &len, NULL);
  if (!s) buf_putn(out, data, len);
  free(data);
  return s;
}

#endif /* JITC_HAVE_LLVM */
