/*
** run.c -- compiling and running the program on each chosen target, with
** the times the report shows.  The first target's kernel also answers
** what the rest of the command line asks of the program: the names it
** uses (for the strict-name check) and its arrays.
*/
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double median(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Once the first kernel is made: the names given must be the program's,
** the inputs of ones are said (or refused), the outputs must be writable,
** and the arrays must fit in memory. */
static int check_first(Run *r, const jitc_kernel *k) {
  int st = check_names(&r->cli, k);
  if (st == EX_OK)
    st = default_inputs(r, k);
  if (st == EX_OK)
    st = load_used(r, k);   /* inputs.c: the arrays of --in FILE.npz it uses */
  if (st == EX_OK)
    st = plan_shapes(r, k); /* shape.c */
  if (st == EX_OK)
    st = make_temps(r, k);
  if (st == EX_OK && !enough_memory(r, k))
    st = EX_OSERR;
  return st;
}

/* The first target's compile failed.  A misspelled name is still reported
** first, as a usage error, whatever the target's trouble (unavailable, say):
** the names are checked on a front-end compile, on this path only. */
static int first_failed(Run *r, jitc_status st) {
  char *msg = strdup(jitc_errmsg(r->ctx));
  jitc_kernel *k = NULL;
  int status = EX_OK;
  if (msg && frontend_compile(r, &k) == JITC_OK)
    status = check_names(&r->cli, k);
  jitc_kernel_free(k);
  if (status != EX_USAGE) {
    fprintf(stderr, "%s", msg ? msg : jitc_errmsg(r->ctx));
    status = jitc_exit_code(st);
  }
  free(msg);
  return status;
}

/* The arguments of a run of res's kernel: its arrays as they are (shapes,
** strides) for jitc_run_arrays, their data for jitc_run. */
typedef struct Args {
  jitc_array *arr;
  void **ptrs;
  int64_t *strides;
} Args;

static void free_args(Args *g) {
  free(g->arr);
  free(g->ptrs);
  free(g->strides);
}

static int make_args(const Run *r, const Result *res, Args *g) {
  int na = r->narrs;
  g->arr = calloc((size_t)na + 1, sizeof *g->arr);
  g->ptrs = calloc((size_t)na + 1, sizeof *g->ptrs);
  g->strides = calloc((size_t)(na + 1) * NPY_MAXDIMS, sizeof *g->strides);
  if (!g->arr || !g->ptrs || !g->strides) {
    free_args(g);
    fprintf(stderr, "jitc: out of memory\n");
    return EX_OSERR;
  }
  for (int a = 0; a < na; a++) {
    const HostArray *h = &res->arrs[a].data;
    int64_t *st = g->strides + (size_t)a * NPY_MAXDIMS;
    host_strides(h, st);
    g->arr[a] = (jitc_array){h->data, h->ndim, h->ndim ? h->shape : NULL, h->ndim ? st : NULL};
    g->ptrs[a] = h->data;
  }
  return EX_OK;
}

/* Runs res's kernel --repeat times, each run from the starting data; the
** median time. */
static int run_repeats(Run *r, Result *res) {
  const Cli *cli = &r->cli;
  const Arr *first = r->results[0].arrs;
  jitc_value vals[MAX_NAMED];
  for (int s = 0; s < jitc_kernel_scalar_count(res->kernel); s++) {
    const char *sname;
    jitc_kernel_scalar(res->kernel, s, &sname, NULL);
    for (int q = 0; q < cli->ndefs; q++)
      if (!strcmp(cli->defs[q].name, sname))
        vals[s] = r->svals[q];
  }
  Args g;
  if (make_args(r, res, &g))
    return EX_OSERR;
  double *times = calloc((size_t)cli->repeat, sizeof *times);
  if (!times) {
    free_args(&g);
    fprintf(stderr, "jitc: out of memory\n");
    return EX_OSERR;
  }
  for (int rep = 0; rep < cli->repeat; rep++) {
    if (rep > 0)
      for (int a = 0; a < r->narrs; a++)
        if (res->arrs[a].role == JITC_INOUT)
          memcpy(res->arrs[a].data.data, first[a].initial.data,
                 (size_t)res->arrs[a].data.n * jitc_dtype_size(res->arrs[a].dtype));
    /* Where no input gives a shape, -n's elements, flat (i numbers them). */
    double t1 = now_ms();
    jitc_status st =
        r->flat ? jitc_run(r->ctx, res->kernel, r->n, g.ptrs, vals, &res->rinfo)
                : jitc_run_arrays(r->ctx, res->kernel, g.arr, vals, &res->rinfo);
    times[rep] = now_ms() - t1;
    if (st) {
      free(times);
      free_args(&g);
      return fail_status(r->ctx, st);
    }
  }
  res->run_ms = median(times, cli->repeat);
  free(times);
  free_args(&g);
  return EX_OK;
}

/* Compiles and runs on every target in turn, stopping at the first error. */
int run_targets(Run *r) {
  Cli *cli = &r->cli;
  for (int j = 0; j < r->ntargets; j++) {
    Result *res = &r->results[r->nres++];
    res->target = r->targets[j];
    cli->opt.target = r->targets[j];
    double t0 = now_ms();
    jitc_status st = jitc_compile(r->ctx, r->source, r->decls, r->ndecls, r->sdecls, cli->ndefs,
                                  &cli->opt, &res->kernel);
    res->compile_ms = now_ms() - t0;
    if (st)
      return j == 0 ? first_failed(r, st) : fail_status(r->ctx, st);
    res->cinfo = *jitc_kernel_compile_info(res->kernel);
    r->narrs = jitc_kernel_array_count(res->kernel);
    int status = j == 0 ? check_first(r, res->kernel) : EX_OK;
    if (status)
      return status;
    res->arrs = calloc((size_t)r->narrs + 1, sizeof *res->arrs);
    if (!res->arrs) {
      fprintf(stderr, "jitc: out of memory\n");
      return EX_OSERR;
    }
    status = make_arrays(r, res);
    if (status == EX_OK)
      status = run_repeats(r, res);
    if (status)
      return status;
    res->ran = true;
    res->total_ms = now_ms() - r->start_ms;
  }
  return EX_OK;
}
