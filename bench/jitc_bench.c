/*
** jitc_bench.c -- times one jitc program on one target through the library,
** the way a C program embedding jitc would use it.
**
**   jitc_bench -t cpu [-D alpha=2.5] [--dtype b=bfloat16] --in a=a.npy [--out out=out.npy]
**              [--cache-dir DIR | --no-cache] [--threads N] [--fast-math]
**              [--warmup W] [--min-reps R] [--max-reps R] [--budget-ms MS] PROGRAM
**   jitc_bench -t cpu --compile-only --decl a=float64 [--cache-dir DIR] PROGRAM
**
** The compile is timed on its own (wall clock around jitc_compile, which in a
** fresh process with an empty cache directory is the cold compile, and with a
** warm one the disk-cache load), then once more in the same context (the
** in-memory cache).  The first run's outputs are written with --out before
** any timed run, so that bench/run.py can check them against NumPy before the
** times count; in-place arrays are written after that first run too.  Output
** arrays are allocated and touched before timing: like a caller's buffers,
** they are already in memory.  All arrays live on huge pages where the
** kernel grants them, as NumPy's do (bench_alloc).  Prints one JSON object on stdout; exits 69
** when the target is not available here (with the reason in the JSON).
*/
#include "../cli/cli.h"
#include "bench_util.h"

#include <stdbool.h>

#define MAXARR 32

/* Named (NAME=VALUE: a file, a dtype or a scalar's text) is cli.h's.
** --dtype NAME=T names the type of input NAME's file, as the command line's
** does: a '<V2' file (ml_dtypes' bfloat16) is read only so. */

typedef struct RunArg {
  jitc_context *ctx;
  jitc_kernel *k;
  int64_t n;
  void *ptrs[MAXARR];
  jitc_value *vals;
} RunArg;

/* Data already on the device (cuda): the kernel alone, as the peers'
** kernel times are taken, through the library's device buffers. */
typedef struct DevArg {
  jitc_context *ctx;
  jitc_kernel *k;
  int64_t n;
  jitc_buffer *bufs[MAXARR];
  jitc_value *vals;
} DevArg;

static int run_device(void *p, double extra[3]) {
  DevArg *d = p;
  jitc_run_info info;
  if (jitc_run_buffers(d->ctx, d->k, d->n, d->bufs, d->vals, &info) != JITC_OK)
    return -1;
  extra[0] = info.kernel_ms;
  extra[1] = extra[2] = 0;
  return 0;
}

static int run_once(void *p, double extra[3]) {
  RunArg *r = p;
  jitc_run_info info;
  if (jitc_run(r->ctx, r->k, r->n, r->ptrs, r->vals, &info) != JITC_OK)
    return -1;
  extra[0] = info.kernel_ms;
  extra[1] = info.h2d_ms;
  extra[2] = info.d2h_ms;
  return 0;
}

/* Splits "NAME=VALUE" into out; returns -1 when there is no '='. */
static int split_named(char *arg, Named *out) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return -1;
  *eq = '\0';
  out->name = arg;
  out->value = eq + 1;
  return 0;
}

/* A -D value: bool, integer or float, as the CLI reads it (weak scalars). */
static jitc_value parse_value(const char *s) {
  jitc_value v;
  if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "false") || !strcmp(s, "False")) {
    v.dtype = JITC_BOOL;
    v.u.i = s[0] == 't' || s[0] == 'T';
  } else if (strpbrk(s, ".eEni")) { /* 2.5, 1e3, nan, inf */
    v.dtype = JITC_FLOAT64;
    v.u.f = strtod(s, NULL);
  } else {
    v.dtype = JITC_INT64;
    v.u.i = strtoll(s, NULL, 10);
  }
  return v;
}

static void print_fail(const char *target, const char *what, const char *msg) {
  printf("{\"target\": ");
  json_string(stdout, target);
  printf(", \"%s\": ", what);
  json_string(stdout, msg);
  printf("}\n");
}

static void usage(void) {
  fprintf(stderr,
          "usage: jitc_bench [-t TARGET] [-D NAME=VALUE] [--dtype NAME=T]... [--in NAME=FILE.npy]...\n"
          "                  [--out NAME=FILE.npy]...\n"
          "                  [--decl NAME=DTYPE --compile-only] [--cache-dir DIR | --no-cache]\n"
          "                  [--threads N] [--fast-math] [--warmup W] [--min-reps R] [--max-reps R]\n"
          "                  [--budget-ms MS] PROGRAM\n");
  exit(64);
}

int main(int argc, char **argv) {
  BenchOpts bo;
  bench_opts_init(&bo);
  jitc_options opt;
  jitc_options_init(&opt);
  const char *tname = jitc_target_name(opt.target), *program = NULL;
  Named ins[MAXARR], outs[MAXARR], decls[MAXARR], defs[MAXARR], types[MAXARR];
  int nin = 0, nout = 0, ndecl = 0, ndef = 0, ntype = 0;
  bool compile_only = false;

  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    bool more = i + 1 < argc;
    if (bench_opts_arg(&bo, argc, argv, &i))
      continue;
    if ((!strcmp(a, "-t") || !strcmp(a, "--target")) && more)
      tname = argv[++i];
    else if (!strcmp(a, "-D") && more && ndef < MAXARR && !split_named(argv[++i], &defs[ndef]))
      ndef++;
    else if (!strcmp(a, "--in") && more && nin < MAXARR && !split_named(argv[++i], &ins[nin]))
      nin++;
    else if (!strcmp(a, "--out") && more && nout < MAXARR && !split_named(argv[++i], &outs[nout]))
      nout++;
    else if (!strcmp(a, "--decl") && more && ndecl < MAXARR && !split_named(argv[++i], &decls[ndecl]))
      ndecl++;
    else if (!strcmp(a, "--dtype") && more && ntype < MAXARR && !split_named(argv[++i], &types[ntype]))
      ntype++;
    else if (!strcmp(a, "--cache-dir") && more)
      opt.cache_dir = argv[++i];
    else if (!strcmp(a, "--no-cache"))
      opt.no_cache = 1;
    else if (!strcmp(a, "--threads") && more)
      opt.threads = atoi(argv[++i]);
    else if (!strcmp(a, "--fast-math"))
      opt.fast_math = 1;
    else if (!strcmp(a, "--compile-only"))
      compile_only = true;
    else if (a[0] != '-' && !program)
      program = a;
    else
      usage();
  }
  if (!program || (!compile_only && nin == 0))
    usage();
  if (jitc_target_parse(tname, &opt.target) != JITC_OK) {
    print_fail(tname, "error", "unknown target");
    return 64;
  }

  int rc = 70;
  char err[512];
  HostArray arr[MAXARR];
  int narr = 0;
  jitc_kernel *k = NULL;
  jitc_value *vals = NULL;
  Samples s = {0};
  memset(arr, 0, sizeof arr);

  jitc_context *ctx = jitc_context_new();
  if (!ctx) {
    print_fail(tname, "error", "out of memory");
    return 70;
  }

  /* Target start-up (loading LLVM or the CUDA libraries) is timed apart from
  ** the compile: a process pays it once, whatever it compiles. */
  double t0 = now_ms();
  jitc_status st = jitc_target_available(ctx, opt.target);
  double init_ms = now_ms() - t0;
  if (st != JITC_OK) {
    print_fail(tname, "unavailable", jitc_errmsg(ctx));
    rc = 69;
    goto done;
  }

  /* Inputs: from .npy files, or only declared for --compile-only. */
  jitc_array_decl ad[MAXARR];
  int64_t n = -1;
  for (int i = 0; i < nin; i++) {
    jitc_dtype said, *named = NULL;
    for (int j = 0; j < ntype; j++)
      if (!strcmp(types[j].name, ins[i].name)) {
        if (jitc_dtype_parse(types[j].value, &said) != JITC_OK) {
          print_fail(tname, "error", "bad dtype in --dtype");
          rc = 64;
          goto done;
        }
        named = &said;
      }
    if (npy_read(ins[i].value, named, &arr[i], err, sizeof err) != 0) {
      print_fail(tname, "error", err);
      rc = 66;
      goto done;
    }
    narr++;
    if (bench_rehome(&arr[i].data, (size_t)arr[i].n * jitc_dtype_size(arr[i].dtype)) != 0) {
      print_fail(tname, "error", "out of memory");
      goto done;
    }
    if (n >= 0 && arr[i].n != n) {
      print_fail(tname, "error", "inputs differ in size");
      rc = 66;
      goto done;
    }
    n = arr[i].n;
    ad[i].name = ins[i].name;
    ad[i].dtype = arr[i].dtype;
  }
  int nad = nin;
  for (int i = 0; i < ndecl && nad < MAXARR; i++, nad++) {
    ad[nad].name = decls[i].name;
    if (jitc_dtype_parse(decls[i].value, &ad[nad].dtype) != JITC_OK) {
      print_fail(tname, "error", "bad dtype in --decl");
      rc = 64;
      goto done;
    }
  }
  jitc_scalar_decl sd[MAXARR];
  for (int i = 0; i < ndef; i++) {
    sd[i].name = defs[i].name;
    sd[i].dtype = parse_value(defs[i].value).dtype;
    sd[i].weak = 1;
  }

  t0 = now_ms();
  st = jitc_compile(ctx, program, ad, nad, sd, ndef, &opt, &k);
  double compile_ms = now_ms() - t0;
  if (st != JITC_OK) {
    print_fail(tname, "error", jitc_errmsg(ctx));
    rc = jitc_exit_code(st);
    goto done;
  }
  jitc_compile_info ci = *jitc_kernel_compile_info(k);

  /* The same program again in the same context: the in-memory cache. */
  jitc_kernel *k2 = NULL;
  t0 = now_ms();
  st = jitc_compile(ctx, program, ad, nad, sd, ndef, &opt, &k2);
  double compile_again_ms = now_ms() - t0;
  const char *again_cache = k2 ? jitc_kernel_compile_info(k2)->cache : "error";
  jitc_kernel_free(k2);

  printf("{\"target\": ");
  json_string(stdout, tname);
  printf(", \"device\": ");
  json_string(stdout, jitc_target_device(ctx, opt.target));
  printf(", \"init_ms\": %.6f, \"compile_ms\": %.6f, \"compile_again_ms\": %.6f, \"again_cache\": ",
         init_ms, compile_ms, compile_again_ms);
  json_string(stdout, again_cache);
  printf(", \"compile\": {\"cache\": ");
  json_string(stdout, ci.cache);
  printf(", \"total_ms\": %.6f, \"frontend_ms\": %.6f, \"ir_ms\": %.6f, \"optimize_ms\": %.6f, "
         "\"codegen_ms\": %.6f, \"load_ms\": %.6f}",
         ci.total_ms, ci.frontend_ms, ci.ir_ms, ci.optimize_ms, ci.codegen_ms, ci.load_ms);
  printf(", \"machine\": ");
  if (ci.machine)
    json_string(stdout, ci.machine);
  else
    printf("null");
  if (compile_only) {
    printf("}\n");
    rc = 0;
    goto done;
  }

  /* Bind the kernel's arrays: inputs by name, outputs allocated here. */
  RunArg ra = {ctx, k, n, {0}, NULL};
  int nk = jitc_kernel_array_count(k);
  if (nk > MAXARR) {
    printf(", \"error\": \"too many arrays\"}\n");
    goto done;
  }
  for (int i = 0; i < nk; i++) {
    const char *name;
    jitc_role role;
    jitc_dtype dt;
    jitc_kernel_array(k, i, &name, &role, &dt);
    int j = 0;
    while (j < narr && strcmp(ins[j].name, name) != 0)
      j++;
    if (j == narr) {
      if (role != JITC_OUTPUT || narr >= MAXARR) {
        printf(", \"error\": \"array %s needs --in\"}\n", name);
        rc = 64;
        goto done;
      }
      if (host_array_alloc(&arr[narr], dt, n, err, sizeof err) != 0 ||
          bench_rehome(&arr[narr].data, (size_t)n * jitc_dtype_size(dt)) != 0) {
        printf(", \"error\": \"out of memory\"}\n");
        goto done;
      }
      memset(arr[narr].data, 0x55, (size_t)n * jitc_dtype_size(dt)); /* fault the pages in */
      ins[narr].name = name;
      j = narr++;
    }
    ra.ptrs[i] = arr[j].data;
  }
  int nsc = jitc_kernel_scalar_count(k);
  vals = calloc((size_t)nsc + 1, sizeof *vals);
  for (int i = 0; i < nsc; i++) {
    const char *name;
    jitc_dtype dt;
    jitc_kernel_scalar(k, i, &name, &dt);
    int j = 0;
    while (j < ndef && strcmp(defs[j].name, name) != 0)
      j++;
    if (j == ndef) {
      printf(", \"error\": \"scalar %s needs -D\"}\n", name);
      rc = 64;
      goto done;
    }
    vals[i] = parse_value(defs[j].value);
  }
  ra.vals = vals;

  /* The first run: timed apart (it may pay lazy set-up), then its outputs
  ** are saved for the check. */
  double first[3];
  t0 = now_ms();
  if (run_once(&ra, first) != 0) {
    printf(", \"error\": ");
    json_string(stdout, jitc_errmsg(ctx));
    printf("}\n");
    goto done;
  }
  double first_ms = now_ms() - t0;
  for (int i = 0; i < nout; i++) {
    int j = 0;
    while (j < narr && strcmp(ins[j].name, outs[i].name) != 0)
      j++;
    if (j == narr || npy_write(outs[i].value, &arr[j], err, sizeof err) != 0) {
      printf(", \"error\": ");
      json_string(stdout, j == narr ? "--out names no array of the kernel" : err);
      printf("}\n");
      rc = 73;
      goto done;
    }
  }

  if (bench_measure(&bo, run_once, &ra, &s) != 0) {
    printf(", \"error\": ");
    json_string(stdout, jitc_errmsg(ctx));
    printf("}\n");
    goto done;
  }
  printf(", \"n\": %lld, \"first_ms\": %.6f, ", (long long)n, first_ms);
  json_list(stdout, "times_ms", s.t, s.n);
  if (opt.target == JITC_TARGET_CUDA) {
    printf(", ");
    json_list(stdout, "kernel_ms", s.x[0], s.n);
    printf(", ");
    json_list(stdout, "h2d_ms", s.x[1], s.n);
    printf(", ");
    json_list(stdout, "d2h_ms", s.x[2], s.n);
    /* The same arrays uploaded once to device buffers: kernel time alone. */
    DevArg da = {ctx, k, n, {0}, vals};
    bool ok = true;
    for (int i = 0; i < nk && ok; i++) {
      jitc_dtype dt;
      jitc_kernel_array(k, i, NULL, NULL, &dt);
      ok = jitc_buffer_new(ctx, opt.target, dt, n, &da.bufs[i]) == JITC_OK &&
           jitc_buffer_upload(ctx, da.bufs[i], ra.ptrs[i], n) == JITC_OK;
    }
    Samples ds = {0};
    if (ok && bench_measure(&bo, run_device, &da, &ds) == 0) {
      printf(", ");
      json_list(stdout, "device_kernel_ms", ds.x[0], ds.n);
    } else {
      printf(", \"device_error\": ");
      json_string(stdout, jitc_errmsg(ctx));
    }
    samples_free(&ds);
    for (int i = 0; i < nk; i++)
      jitc_buffer_free(da.bufs[i]);
  }
  printf("}\n");
  rc = 0;

done:
  samples_free(&s);
  free(vals);
  for (int i = 0; i < narr; i++)
    host_array_free(&arr[i]);
  jitc_kernel_free(k);
  jitc_context_free(ctx);
  return rc;
}
