/*
** outputs.c -- writing the --out arrays: all of them or none.  Each output
** first gets a temporary file beside it, made before any work so that an
** output that cannot be written fails first; after the run the arrays go
** into those files, which are renamed into place only once every one is
** written.  The temporary files are removed at exit and on SIGINT/SIGTERM
** unless renamed.
*/
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *tmpnames[MAX_NAMED];
static int ntmpnames;

static void remove_temps(void) {
  for (int o = 0; o < ntmpnames; o++)
    if (tmpnames[o])
      unlink(tmpnames[o]); /* after a successful rename this fails harmlessly */
}

static void on_signal(int sig) {
  remove_temps(); /* unlink() is async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int make_temps(const Cli *cli) {
  atexit(remove_temps);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  for (int o = 0; o < cli->nouts; o++) {
    const char *path = cli->outs[o].value;
    if (is_dir(path)) {
      fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", path);
      return EX_CANTCREAT;
    }
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
      fprintf(stderr, "jitc: out of memory\n");
      return EX_OSERR;
    }
    snprintf(tmp, len, "%s.jitc-%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", path, strerror(errno));
      free(tmp);
      return EX_CANTCREAT;
    }
    close(fd);
    tmpnames[ntmpnames++] = tmp;
  }
  return EX_OK;
}

/* The outputs of the last target run (none ran with --emit), written into
** their temporary files, then renamed into place. */
int write_outputs(Run *r) {
  const Cli *cli = &r->cli;
  if (!cli->nouts || !r->nres)
    return EX_OK;
  const Arr *arrs = r->results[r->nres - 1].arrs;
  int status = EX_OK, written = 0;
  char err[1024];
  /* SIGINT or SIGTERM from here on would leave some outputs renamed and
  ** others not: they are held until every output is in place or every
  ** temporary file is gone, then take effect as usual. */
  sigset_t hold, old_mask, pending;
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigaddset(&hold, SIGTERM);
  sigprocmask(SIG_BLOCK, &hold, &old_mask);
  for (int o = 0; o < cli->nouts && status == EX_OK; o++) {
    int a = 0; /* check_names() made sure the array exists */
    for (int q = 0; q < r->narrs; q++)
      if (!strcmp(arrs[q].name, cli->outs[o].name))
        a = q;
    if (npy_write(tmpnames[o], &arrs[a].data, err, sizeof err)) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", cli->outs[o].value, err);
      status = EX_CANTCREAT;
      break;
    }
    written = o + 1;
  }
  sigpending(&pending);
  if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM))
    status = 128 + (sigismember(&pending, SIGINT) ? SIGINT : SIGTERM);
  /* A rename can still fail over a directory made since: find that before renaming any. */
  for (int o = 0; o < written && status == EX_OK; o++)
    if (is_dir(cli->outs[o].value)) {
      fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", cli->outs[o].value);
      status = EX_CANTCREAT;
    }
  for (int o = 0; o < written; o++) {
    struct stat st_old; /* an existing output keeps its permissions */
    if (status == EX_OK && stat(cli->outs[o].value, &st_old) == 0)
      chmod(tmpnames[o], st_old.st_mode & 07777);
    if (status == EX_OK && rename(tmpnames[o], cli->outs[o].value)) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", cli->outs[o].value, strerror(errno));
      status = EX_CANTCREAT;
    }
  }
  remove_temps();
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  return status;
}

void free_temps(void) {
  remove_temps();
  for (int o = 0; o < ntmpnames; o++) {
    free(tmpnames[o]);
    tmpnames[o] = NULL;
  }
}
