/*
** stages.c -- the --emit stages as the library lists them: how many are the
** front end's, and the list as --help prints it.  Both the options
** (args.c) and the targets' emission (targets.c) read it; --help's other
** generated lists are wrapped here too (wrap_help).
*/
#include "cli.h"

#include <string.h>

/* How many stages every target lists first, alike: the front end's.  The
** last of them is the checked program, where the names are known. */
int frontend_stages(void) {
  const char *const *first = jitc_target_stages((jitc_target)0);
  for (int n = 0;; n++)
    for (int t = 0; t < JITC_NTARGETS; t++) {
      const char *const *list = jitc_target_stages((jitc_target)t);
      if (!first[n] || !list[n] || strcmp(list[n], first[n]))
        return n;
    }
}

void stage_help(FILE *f, const char *lead, int indent, int width) {
  /* "tokens, ast, types; cpu: llvm, llvm-opt, asm; cuda: cuda, ptx" */
  Buf b = {0};
  int nfront = frontend_stages();
  const char *const *front = jitc_target_stages((jitc_target)0);
  for (int s = 0; s < nfront; s++)
    buf_printf(&b, "%s%s", s ? ", " : "", front[s]);
  for (int t = 0; t < JITC_NTARGETS; t++) {
    const char *const *list = jitc_target_stages((jitc_target)t);
    for (int s = nfront; list[s]; s++)
      if (s == nfront)
        buf_printf(&b, "; %s: %s", jitc_target_name((jitc_target)t), list[s]);
      else
        buf_printf(&b, ", %s", list[s]);
  }
  wrap_help(f, lead, b.s ? b.s : "", indent, width);
  buf_free(&b);
}

void wrap_help(FILE *f, const char *lead, const char *text, int indent, int width) {
  /* Word by word. */
  int col = fprintf(f, "%s", lead);
  for (const char *w = text; *w;) {
    int len = (int)strcspn(w, " ");
    if (len && col + 1 + len > width)
      col = fprintf(f, "\n%*s%.*s", indent, "", len, w) - 1;
    else if (len)
      col += fprintf(f, " %.*s", len, w);
    w += len;
    w += strspn(w, " ");
  }
  fputc('\n', f);
}
