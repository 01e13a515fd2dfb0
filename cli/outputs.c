/*
** outputs.c -- writing the --out arrays: all of them or none.  An output
** file is a .npy of one array, or a .npz of several (--out NAME=FILE.npz
** for each, or --out FILE.npz for every array the program writes).  Each
** output file first gets a temporary file beside it, made before any work
** so that an output that cannot be written fails first; after the run the
** arrays go into those files, which are renamed into place only once every
** one is written.  The temporary files are removed at exit and on
** SIGINT/SIGTERM unless renamed.  A symbolic link is written through (its
** target replaced so), a device or a FIFO in place, as np.save does.
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

/* One file to write: a .npy of one array, or a .npz of several. */
typedef struct Dest {
  const char *path;
  bool npz;
  int n;              /* its arrays: */
  const char **array; /* the kernel's name */
  const char **member; /* the name in the archive */
} Dest;

static Dest dests[MAX_NAMED];
static int ndests;
static char *tmpnames[MAX_NAMED]; /* NULL where written in place */
static int ntmpnames;
static char *finals[MAX_NAMED]; /* a symbolic link's target, or NULL */

/* The destination for path, added if new; NULL (having said why) when the
** path is already a destination of the other kind, or a .npy one. */
static Dest *dest_for(const char *path, bool npz, const char *opt) {
  for (int d = 0; d < ndests; d++)
    if (!strcmp(dests[d].path, path)) {
      if (npz && dests[d].npz)
        return &dests[d];
      fprintf(stderr, "jitc: %s: '%s' is written twice (several arrays go into one file "
              "only in a .npz: --out NAME=FILE.npz)\n", opt, path);
      return NULL;
    }
  if (ndests == MAX_NAMED) {
    fprintf(stderr, "jitc: too many output files (at most %d)\n", MAX_NAMED);
    return NULL;
  }
  dests[ndests] = (Dest){.path = path, .npz = npz};
  return &dests[ndests++];
}

/* Adds array (as member) to d; false (said) when the archive has it already. */
static bool add_member(Dest *d, const char *array, const char *member) {
  for (int m = 0; m < d->n; m++)
    if (!strcmp(d->member[m], member)) {
      fprintf(stderr, "jitc: --out: '%s' would hold two arrays named '%s'\n", d->path, member);
      return false;
    }
  const char **na = realloc(d->array, sizeof *na * (size_t)(d->n + 1));
  if (na)
    d->array = na;
  const char **nm = realloc(d->member, sizeof *nm * (size_t)(d->n + 1));
  if (nm)
    d->member = nm;
  if (!na || !nm) {
    fprintf(stderr, "jitc: out of memory\n");
    return false;
  }
  d->array[d->n] = array;
  d->member[d->n++] = member;
  return true;
}

/* The files --out names: NAME=FILE.npy, NAME=FILE.npz[:MEMBER] (arrays
** naming one archive go into it together) and FILE.npz (every array the
** program writes, by its name). */
static int plan_dests(const Cli *cli, const jitc_kernel *k) {
  static char paths[MAX_NAMED][4096];
  for (int o = 0; o < cli->nouts; o++) {
    const Named *out = &cli->outs[o];
    const char *member;
    bool npz = archive_spec(out->value, out->name, paths[o], sizeof paths[o], &member);
    size_t len = strlen(out->value);
    if (!npz && len >= 5 && !strcmp(out->value + len - 5, ".npz:")) {
      fprintf(stderr, "jitc: --out %s=%s: no name after the ':' (FILE.npz:NAME, or FILE.npz "
              "for the array's own name)\n", out->name, out->value);
      return EX_USAGE;
    }
    Dest *d = dest_for(npz ? paths[o] : out->value, npz, "--out");
    if (!d || !add_member(d, out->name, npz ? member : out->name))
      return EX_USAGE;
  }
  for (int f = 0; f < cli->nout_archives; f++) {
    Dest *d = dest_for(cli->out_archives[f], true, "--out");
    if (!d)
      return EX_USAGE;
    for (int a = 0; a < jitc_kernel_array_count(k); a++) {
      const char *name;
      jitc_role role;
      jitc_kernel_array(k, a, &name, &role, NULL);
      if (role != JITC_INPUT && !add_member(d, name, name))
        return EX_USAGE;
    }
  }
  return EX_OK;
}

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

int make_temps(const Run *r, const jitc_kernel *k) {
  atexit(remove_temps);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  int st = plan_dests(&r->cli, k);
  if (st)
    return st;
  for (int o = 0; o < ndests; o++) {
    const char *path = dests[o].path;
    /* Through a symbolic link to its target, as np.save writes; a device or
    ** a FIFO in place (it has no content to keep, and renaming a file over
    ** it would replace /dev/null with a file). */
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
      if (!(finals[o] = realpath(path, NULL))) {
        fprintf(stderr, "jitc: cannot write '%s': a symbolic link to %s\n", path,
                errno == ENOENT ? "no file" : strerror(errno));
        return EX_CANTCREAT;
      }
      path = finals[o];
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      tmpnames[ntmpnames++] = NULL;
      continue;
    }
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

/* Array `name` of the last target's run. */
static const HostArray *array_named(const Run *r, const char *name) {
  const Arr *arrs = r->results[r->nres - 1].arrs;
  for (int q = 0; q < r->narrs; q++)
    if (!strcmp(arrs[q].name, name))
      return &arrs[q].data;
  return &arrs[0].data; /* check_names() made sure the array exists */
}

/* Destination d written into its temporary file. */
static int write_dest(const Run *r, const Dest *d, const char *tmp, char *err, size_t errlen) {
  if (!d->npz)
    return npy_write(tmp, array_named(r, d->array[0]), err, errlen);
  const HostArray **arrays = calloc((size_t)d->n + 1, sizeof *arrays);
  if (!arrays) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (int m = 0; m < d->n; m++)
    arrays[m] = array_named(r, d->array[m]);
  int rc = npz_write(tmp, d->member, arrays, d->n, err, errlen);
  free(arrays);
  return rc;
}

/* The outputs of the last target run (none ran with --emit), written into
** their temporary files, then renamed into place. */
int write_outputs(Run *r) {
  if (!ndests || !r->nres)
    return EX_OK;
  int status = EX_OK, written = 0;
  char err[1400];
  /* SIGINT or SIGTERM from here on would leave some outputs renamed and
  ** others not: they are held until every output is in place or every
  ** temporary file is gone, then take effect as usual. */
  sigset_t hold, old_mask, pending;
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigaddset(&hold, SIGTERM);
  sigprocmask(SIG_BLOCK, &hold, &old_mask);
  for (int o = 0; o < ndests && status == EX_OK; o++) {
    const char *to = tmpnames[o] ? tmpnames[o] : finals[o] ? finals[o] : dests[o].path;
    if (write_dest(r, &dests[o], to, err, sizeof err)) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", dests[o].path, err);
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
    if (tmpnames[o] && is_dir(finals[o] ? finals[o] : dests[o].path)) {
      fprintf(stderr, "jitc: cannot write '%s': it is a directory\n", dests[o].path);
      status = EX_CANTCREAT;
    }
  for (int o = 0; o < written; o++) {
    const char *final = finals[o] ? finals[o] : dests[o].path;
    struct stat st_old; /* an existing output keeps its permissions */
    if (!tmpnames[o])
      continue; /* written in place */
    if (status == EX_OK && stat(final, &st_old) == 0)
      chmod(tmpnames[o], st_old.st_mode & 07777);
    if (status == EX_OK && rename(tmpnames[o], final)) {
      fprintf(stderr, "jitc: cannot write '%s': %s\n", dests[o].path, strerror(errno));
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
    free(finals[o]);
    finals[o] = NULL;
  }
  for (int d = 0; d < ndests; d++) {
    free(dests[d].array);
    free(dests[d].member);
  }
  ndests = 0;
}
