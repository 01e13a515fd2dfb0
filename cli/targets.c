/*
** targets.c -- which targets the command line uses, and --emit.
**
** The names of the --emit stages are the library's (jitc_target_stages):
** every target lists the front end's stages first, then its own.  A stage
** that only some targets list picks the first of them when -t does not say
** which; nothing here spells a stage's name.
*/
#include "cli.h"

#include <string.h>

/* The index of `stage` in target t's stage list, or -1. */
static int stage_index(jitc_target t, const char *stage) {
  const char *const *list = jitc_target_stages(t);
  for (int s = 0; list && list[s]; s++)
    if (!strcmp(list[s], stage))
      return s;
  return -1;
}

void choose_targets(Run *r) {
  Cli *cli = &r->cli;
  if (cli->target && !strcmp(cli->target, "all")) {
    for (int t = 0; t < JITC_NTARGETS; t++)
      if (jitc_target_available(r->ctx, (jitc_target)t) == JITC_OK)
        r->targets[r->ntargets++] = (jitc_target)t;
      else if (!cli->quiet && !cli->emit)
        fprintf(stderr, "jitc: skipping target %s: %s", jitc_target_name((jitc_target)t),
                errmsg_text(r->ctx, JITC_E_UNAVAILABLE));
    return;
  }
  jitc_target t = cli->opt.target;
  /* --emit of a back end's stage picks that back end unless -t says otherwise. */
  if (!cli->target && cli->emit && stage_index(t, cli->emit) < 0)
    for (int u = JITC_NTARGETS - 1; u >= 0; u--)
      if (stage_index((jitc_target)u, cli->emit) >= 0)
        t = (jitc_target)u;
  if (cli->target && jitc_target_parse(cli->target, &t))
    die_usage("unknown target '%s' (use interp, cpu, cuda or all)", cli->target);
  r->targets[r->ntargets++] = t;
}

/* A front-end compile (interp): a kernel that knows the program's names and
** types, for the strict-name check where no target's kernel is at hand. */
jitc_status frontend_compile(Run *r, jitc_kernel **k) {
  jitc_options o = r->cli.opt;
  o.target = JITC_TARGET_INTERP;
  return jitc_compile(r->ctx, r->source, r->decls, r->ndecls, r->sdecls, r->cli.ndefs, &o, k);
}

/* --emit: the stage of each target, or once for a front-end stage, which
** is the same for all.  Emission makes no kernel: once the stage is past
** the checker, the names given are checked on a front-end compile. */
int emit_stages(Run *r) {
  Cli *cli = &r->cli;
  int nfront = frontend_stages();
  int stage = stage_index(r->targets[0], cli->emit);
  if (stage < 0 || stage >= nfront - 1) {
    jitc_kernel *k;
    jitc_status st = frontend_compile(r, &k);
    if (st)
      return fail_status(r->ctx, st);
    int status = check_names(cli, k);
    jitc_kernel_free(k);
    if (status)
      return status;
  }
  for (int j = 0; j < r->ntargets; j++) {
    cli->opt.target = r->targets[j];
    char *text = NULL;
    jitc_status st = jitc_emit(r->ctx, r->source, r->decls, r->ndecls, r->sdecls, cli->ndefs,
                               &cli->opt, cli->emit, &text);
    if (st)
      return fail_status(r->ctx, st);
    if (cli->json) { /* one JSON object per line, as the run's records */
      printf("{\"target\": ");
      json_string(stdout, jitc_target_name(r->targets[j]));
      printf(", \"emit\": ");
      json_string(stdout, cli->emit);
      printf(", \"text\": ");
      json_string(stdout, text);
      printf("}\n");
    } else {
      fputs(text, stdout);
    }
    jitc_free(text);
    if (stage_index(r->targets[j], cli->emit) < nfront)
      break;
  }
  return EX_OK;
}
