/*
** main.c -- the jitc command line tool: where to start reading it.
**
**   jitc [options] PROGRAM        jitc [options] -f FILE
**
** It reads the inputs (.npy files or generators), compiles the program for
** the chosen target(s), runs it, reports what happened and writes the
** requested outputs -- all of them or none.  main() is the list of steps;
** cli.h says which file holds each one.  The tool uses the library only
** through jitc.h, as any program embedding it would.
*/
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Frees what the steps made (a leak checker sees nothing left). */
static void finish(Run *r) {
  for (int j = 0; j < r->nres; j++) {
    Result *res = &r->results[j];
    for (int a = 0; res->arrs && a < r->narrs; a++) {
      host_array_free(&res->arrs[a].data);
      host_array_free(&res->arrs[a].initial);
    }
    free(res->arrs);
    free(res->agree);
    jitc_kernel_free(res->kernel);
  }
  free_inputs(r);
  free_temps();
  const Cli *cli = &r->cli;
  for (int k = 0; k < cli->nins; k++) {
    free((char *)cli->ins[k].name);
    if (cli->ins[k].whole) /* made from --in FILE.npz */
      free((char *)cli->ins[k].value);
  }
  for (int k = 0; k < cli->nouts; k++)
    free((char *)cli->outs[k].name);
  for (int k = 0; k < cli->ndefs; k++)
    free((char *)cli->defs[k].name);
  for (int k = 0; k < cli->ndtypes; k++)
    free((char *)cli->dtypes[k].name);
  if (cli->program_file)
    free(r->source);
  free(r->res_ndim);
  free(r->res_shape);
  jitc_context_free(r->ctx);
}

/* At exit: what went to standard output must have arrived (a full disk
** under `--emit asm > f.s`), else exit status 74. */
static void check_stdout(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "jitc: cannot write the standard output: %s\n",
            errno ? strerror(errno) : "write error");
    _exit(EX_IOERR);
  }
}

int main(int argc, char **argv) {
  /* Static: what a usage error's exit() leaves behind is still reachable. */
  static Run run;
  Run *r = &run;
  r->start_ms = now_ms();
  atexit(check_stdout);

  parse_args(&r->cli, argc, argv);   /* args.c: --help, --version, --info end here */
  int status = read_program(r);      /* inputs.c */
  if (status == EX_OK && !(r->ctx = jitc_context_new())) {
    fprintf(stderr, "jitc: out of memory\n");
    status = EX_OSERR;
  }
  if (status == EX_OK)
    status = load_inputs(r);         /* inputs.c: .npy files fix the shape */
  if (status == EX_OK) {
    declare_signature(r);            /* inputs.c: dtypes and -D values */
    choose_targets(r);               /* targets.c */
  }
  if (status == EX_OK && r->cli.emit)
    status = emit_stages(r);         /* targets.c: print a stage instead of running */
  else if (status == EX_OK)
    status = run_targets(r);         /* run.c: compile, check the names, run */
  if (status == EX_OK && r->nres > 1)
    status = compare_targets(r);     /* compare.c: -t all */
  if (status == EX_OK || status == EX_DISAGREE)
    report(r);                       /* report.c */
  if (status == EX_OK)
    status = write_outputs(r);       /* outputs.c: all of them or none */
  finish(r);
  return status;
}
