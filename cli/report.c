/*
** report.c -- what the command line tells: the library's messages, and the
** report of a run: per target its device, arrays (name, role, dtype, shape,
** where the data came from), compile and run times, and each output as
** NumPy prints it; with --json one JSON object per target and line.
*/
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --json gives the values of arrays of at most this many elements, those
** that the text report shows whole (NumPy's print threshold). */
#define JSON_VALUES_MAX 1000

/* The text of the context's last error without the "jitc: STATUS: " the
** library puts before an error that has no position. */
const char *errmsg_text(jitc_context *ctx, jitc_status st) {
  const char *m = jitc_errmsg(ctx);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "jitc: %s: ", jitc_status_name(st));
  if (!strncmp(m, prefix, strlen(prefix)))
    return m + strlen(prefix);
  return !strncmp(m, "jitc: ", 6) ? m + 6 : m;
}

int fail_status(jitc_context *ctx, jitc_status st) {
  fprintf(stderr, "%s", jitc_errmsg(ctx));
  return jitc_exit_code(st);
}

static const char *role_name(jitc_role r) {
  return r == JITC_INPUT ? "input" : r == JITC_OUTPUT ? "output"
         : r == JITC_RESULT ? "result" : "inout";
}

/* Bytes a run moves: each array read or written once, in-place ones both
** (a broadcast input once, whatever the output's size); a reduction's
** result is one element. */
static double moved_bytes(const Arr *arrs, int narrs) {
  double bytes = 0;
  for (int a = 0; a < narrs; a++)
    bytes += (double)arrs[a].data.n * (double)jitc_dtype_size(arrs[a].dtype) *
             (arrs[a].role == JITC_INOUT ? 2 : 1);
  return bytes;
}

/* One value of a real type as a JSON value: a number, true or false, or,
** for what JSON cannot write as a number, the string "nan", "inf" or
** "-inf". */
static void json_value(const void *elem, jitc_dtype t) {
  /* A JSON number is a double: a narrower float's value is written as the
  ** double it is (float32's 0.1 is 0.10000000149011612, as tolist() gives). */
  double wide = elem_get(elem, t, 0);
  bool narrow = elem_kind(t) == EK_FLOAT && jitc_dtype_size(t) < 8;
  char *text = narrow ? format_value(&wide, JITC_FLOAT64) : format_value(elem, t);
  if (!text) {
    printf("null");
  } else if (t == JITC_BOOL) {
    printf("%s", *(const uint8_t *)elem ? "true" : "false");
  } else if (!strcmp(text, "nan") || !strcmp(text, "inf") || !strcmp(text, "-inf")) {
    printf("\"%s\"", text);
  } else {
    /* NumPy's "2." is not JSON: 2.0 */
    size_t len = strlen(text);
    printf("%s%s", text, len && text[len - 1] == '.' ? "0" : "");
  }
  free(text);
}

/* One element as a JSON value; a complex one is the pair [real,
** imaginary], each part as a float of the part type ([1.0, "nan"]). */
static void json_elem(const void *elem, jitc_dtype t) {
  jitc_dtype p = elem_part_type(t);
  if (p == t) {
    json_value(elem, t);
    return;
  }
  printf("[");
  json_value(elem, p);
  printf(", ");
  json_value((const char *)elem + jitc_dtype_size(p), p);
  printf("]");
}

/* Axis d and those after it of a, from memory position `at` (in
** elements), as NumPy's tolist() nests them: lists of lists, in logical
** order; a 0-d array is its element. */
static void json_nested(const HostArray *a, int d, int64_t at, const int64_t *strides) {
  size_t esize = jitc_dtype_size(a->dtype);
  if (d == a->ndim) {
    json_elem((const char *)a->data + at * (int64_t)esize, a->dtype);
    return;
  }
  printf("[");
  for (int64_t i = 0; i < a->shape[d]; i++) {
    printf("%s", i ? ", " : "");
    json_nested(a, d + 1, at + i * strides[d], strides);
  }
  printf("]");
}

static void json_array(const HostArray *a) {
  int64_t strides[NPY_MAXDIMS];
  host_strides(a, strides);
  for (int d = 0; d < a->ndim; d++)
    strides[d] /= (int64_t)jitc_dtype_size(a->dtype);
  json_nested(a, 0, 0, strides);
}

/* One target's record for --json. */
static void report_json(const Run *r, const Result *res) {
  const Cli *cli = &r->cli;
  int narrs = r->narrs;
  int64_t n = r->n;
  double bytes = moved_bytes(res->arrs, narrs);
  double gbps = res->run_ms > 0 ? bytes / (res->run_ms * 1e6) : 0;
  printf("{\"target\": ");
  json_string(stdout, jitc_target_name(res->target));
  printf(", \"device\": ");
  json_string(stdout, jitc_target_device(r->ctx, res->target));
  printf(", \"n\": %lld, \"program\": ", (long long)n);
  json_string(stdout, r->source);
  printf(", \"arrays\": [");
  for (int a = 0; a < narrs; a++) {
    const Arr *A = &res->arrs[a];
    printf("%s{\"name\": ", a ? ", " : "");
    json_string(stdout, A->name);
    printf(", \"role\": \"%s\", \"dtype\": \"%s\", \"shape\": [", role_name(A->role),
           jitc_dtype_name(A->dtype));
    for (int d = 0; d < A->data.ndim; d++)
      printf("%s%lld", d ? ", " : "", (long long)A->data.shape[d]);
    printf("], \"source\": ");
    json_string(stdout, A->source);
    /* What the program computed, as tolist() gives it, where the text
    ** report would show it whole: up to 1000 elements. */
    if (A->role != JITC_INPUT && res->ran && A->data.n <= JSON_VALUES_MAX) {
      printf(", \"value\": ");
      json_array(&A->data);
    }
    printf("}");
  }
  const jitc_compile_info *ci = &res->cinfo;
  printf("], \"compile_ms\": %.4f, \"cache\": \"%s\", \"frontend_ms\": %.4f, \"ir_ms\": %.4f, "
         "\"optimize_ms\": %.4f, \"codegen_ms\": %.4f, \"load_ms\": %.4f",
         res->compile_ms, ci->cache ? ci->cache : "none", ci->frontend_ms, ci->ir_ms,
         ci->optimize_ms, ci->codegen_ms, ci->load_ms);
  printf(", \"machine\": ");
  if (ci->machine)
    json_string(stdout, ci->machine);
  else
    printf("null");
  if (res->target == JITC_TARGET_CUDA)
    printf(", \"nvrtc_ms\": %.4f, \"h2d_ms\": %.4f, \"kernel_ms\": %.4f, \"d2h_ms\": %.4f",
           ci->codegen_ms, res->rinfo.h2d_ms, res->rinfo.kernel_ms, res->rinfo.d2h_ms);
  printf(", \"run_ms\": %.4f, \"runs\": %d, \"bytes\": %.0f, \"gbps\": %.3f, \"total_ms\": "
         "%.4f", res->run_ms, cli->repeat, bytes, gbps, res->total_ms);
  if (res->target == JITC_TARGET_CUDA)
    printf(", \"threads\": null");
  else
    printf(", \"threads\": %d", res->rinfo.threads);
  if (res->agree) {
    printf(", \"agreement\": {\"with\": ");
    json_string(stdout, jitc_target_name(r->results[0].target));
    printf(", \"arrays\": [");
    int shown = 0;
    for (int a = 0; a < narrs; a++) {
      const Agree *g = &res->agree[a];
      if (res->arrs[a].role == JITC_INPUT)
        continue;
      printf("%s{\"name\": ", shown++ ? ", " : "");
      json_string(stdout, res->arrs[a].name);
      if (isfinite(g->ulps))
        printf(", \"largest_ulp\": %.6g", g->ulps);
      else
        printf(", \"largest_ulp\": null"); /* JSON has no infinity */
      printf(", \"ulp_of\": \"%s\", \"identical\": %s, \"agree\": %s}",
             jitc_dtype_name(g->ulps_in),
             g->identical ? "true" : "false", g->ok ? "true" : "false");
    }
    printf("]}");
  }
  printf("}\n");
}

/* One target's report as text. */
static void report_text(const Run *r, const Result *res) {
  const Cli *cli = &r->cli;
  double bytes = moved_bytes(res->arrs, r->narrs);
  double gbps = res->run_ms > 0 ? bytes / (res->run_ms * 1e6) : 0;
  /* cpu: the threads the run used (one under --threads 1, or where the
  ** elements are too few to split), beside the CPUs the host has. */
  char threads[32] = "";
  if (res->target == JITC_TARGET_CPU)
    snprintf(threads, sizeof threads, "; %d thread%s", res->rinfo.threads,
             res->rinfo.threads == 1 ? "" : "s");
  printf("target   %s (%s%s)\n", jitc_target_name(res->target),
         jitc_target_device(r->ctx, res->target), threads);
  for (int a = 0; a < r->narrs; a++) {
    const Arr *A = &res->arrs[a];
    char shape[256];
    shape_text(A->data.shape, A->data.ndim, shape, sizeof shape);
    printf("%-8s %-7s %-8s %-12s %s\n", a == 0 ? "arrays" : "", A->name, role_name(A->role),
           jitc_dtype_name(A->dtype), shape);
    if (A->role != JITC_OUTPUT && A->role != JITC_RESULT)
      printf("%-8s %-7s from %s%s\n", "", "", A->source,
             A->defaulted ? " (not given with --in: default)" : "");
  }
  printf("compile  %.3f ms (cache: %s", res->compile_ms,
         res->cinfo.cache ? res->cinfo.cache : "none");
  if (res->cinfo.machine)
    printf("; code for %s", res->cinfo.machine);
  printf(")\n");
  if (cli->repeat > 1)
    printf("run      %.3f ms (median of %d), %.2f GB/s\n", res->run_ms, cli->repeat, gbps);
  else
    printf("run      %.3f ms, %.2f GB/s\n", res->run_ms, gbps);
  for (int a = 0; a < r->narrs; a++) {
    const Arr *A = &res->arrs[a];
    if (A->role == JITC_INPUT)
      continue;
    /* NumPy's layout: the rows of an N-d array stand under the first. */
    int indent = 9 + (int)strlen(A->name) + 3;
    char *text = format_nd(&A->data, indent);
    printf("%-8s %s = %s\n", "", A->name, text ? text : "(out of memory)");
    free(text);
  }
}

void report(const Run *r) {
  if (r->cli.quiet)
    return;
  for (int j = 0; j < r->nres; j++)
    if (r->results[j].ran)
      (r->cli.json ? report_json : report_text)(r, &r->results[j]);
  if (r->nres > 1 && !r->cli.json) {
    printf("\n%-8s %12s %12s %10s\n", "target", "compile ms", "run ms", "GB/s");
    for (int j = 0; j < r->nres; j++) {
      const Result *res = &r->results[j];
      double bytes = moved_bytes(res->arrs, r->narrs);
      printf("%-8s %12.3f %12.3f %10.2f\n", jitc_target_name(res->target), res->compile_ms,
             res->run_ms, res->run_ms > 0 ? bytes / (res->run_ms * 1e6) : 0);
    }
  }
}
