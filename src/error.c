/*
** error.c -- diagnostics.  Every user error is recorded as a value (code,
** line, column, message) and also formatted for people, gcc-style, so that
** editors can jump to the spot, with the source line and a caret under it:
**
**   prog.jitc:1:5: error: unknown name 'exq'; did you mean 'exp'?
**     c = exq(a) * b
**         ^
**
** The file name is jitc_options.source_name ("<program>" by default).  An
** error without a position reads "jitc: STATUS: message".  Nothing here
** prints: the CLI decides what to do with the text.
*/
#include "jitc_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diags_clear(Diags *d) {
  for (int k = 0; k < d->n; k++)
    free(d->v[k].msg);
  free(d->v);
  buf_free(&d->text);
  free(d->name);
  *d = (Diags){0};
}

void diags_set_name(Diags *d, const char *name) {
  free(d->name);
  d->name = strdup(name ? name : "<program>"); /* NULL (out of memory): the default */
}

void src_position(const char *src, int offset, int *line, int *col) {
  int l = 1, c = 1;
  for (int k = 0; k < offset && src[k]; k++) {
    if (src[k] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

/* Appends the source line holding `offset` and a caret under it.  Tabs are
** kept in the caret line so the caret lines up in a terminal. */
static void show_line(Buf *b, const char *src, int offset) {
  int start = offset;
  while (start > 0 && src[start - 1] != '\n')
    start--;
  int end = offset;
  while (src[end] && src[end] != '\n')
    end++;
  /* Long lines: a window of 40 characters each side of the spot. */
  bool cut_left = offset - start > 60, cut_right = end - offset > 60;
  if (cut_left)
    start = offset - 40;
  if (cut_right)
    end = offset + 40;
  buf_puts(b, cut_left ? "  ..." : "  ");
  buf_putn(b, src + start, (size_t)(end - start));
  buf_puts(b, cut_right ? "...\n  " : "\n  ");
  if (cut_left)
    buf_puts(b, "   ");
  for (int k = start; k < offset; k++)
    buf_putc(b, src[k] == '\t' ? '\t' : ' ');
  buf_puts(b, "^\n");
}

/* Appends diagnostic d's text. */
static void format_diag(Buf *b, const Diag *d, const char *name, const char *src) {
  const char *msg = d->msg ? d->msg : "out of memory";
  if (d->line > 0) {
    buf_printf(b, "%s:%d:%d: error: %s\n", name ? name : "<program>", d->line, d->col, msg);
    show_line(b, src, d->off);
  } else if (d->code == JITC_E_PROGRAM) {
    buf_printf(b, "jitc: %s\n", msg);
  } else {
    buf_printf(b, "jitc: %s: %s\n", jitc_status_name(d->code), msg);
  }
}

void diags_sort(Diags *d, const char *src) {
  /* Insertion sort: stable, and there are few diagnostics. */
  for (int i = 1; i < d->n; i++)
    for (int j = i; j > 0 && d->v[j].line > 0 && d->v[j - 1].line > 0 &&
                    d->v[j].off < d->v[j - 1].off;
         j--) {
      Diag t = d->v[j];
      d->v[j] = d->v[j - 1];
      d->v[j - 1] = t;
    }
  buf_free(&d->text);
  for (int i = 0; i < d->n; i++)
    format_diag(&d->text, &d->v[i], d->name, src);
}

void diag_vadd(Diags *d, jitc_status code, const char *src, int offset,
               const char *fmt, va_list ap) {
  Buf msg = {0};
  buf_vprintf(&msg, fmt, ap);
  char *text = buf_steal(&msg);
  int line = 0, col = 0;
  if (src && offset >= 0) {
    int len = (int)strlen(src);
    if (offset > len)
      offset = len;
    src_position(src, offset, &line, &col);
  }
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 8;
    Diag *v = realloc(d->v, (size_t)cap * sizeof *v);
    if (!v) {
      free(text);
      return;
    }
    d->v = v;
    d->cap = cap;
  }
  d->v[d->n] = (Diag){code, line, col, line > 0 ? offset : -1, text};
  format_diag(&d->text, &d->v[d->n], d->name, src);
  d->n++;
}

void diag_add(Diags *d, jitc_status code, const char *src, int offset,
              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vadd(d, code, src, offset, fmt, ap);
  va_end(ap);
}

void error_at(Compiler *C, int off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vadd(C->diags, JITC_E_PROGRAM, C->src, off, fmt, ap);
  va_end(ap);
  C->nerrors++;
}

/* Edit distance with adjacent transpositions (Damerau's "optimal string
** alignment"): "tpm" is one edit from "tmp", as typing slips are counted.
** Capped: names are short. */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return 1000;
  int d[65][65];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

static bool same_but_case(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if ((*a | 32) != (*b | 32))
      return false;
  return *a == *b;
}

const char *nearest_name(const char *name, const char *const *names, int n) {
  const char *best = NULL;
  int bestd = 1000;
  size_t len = strlen(name);
  int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
  for (int k = 0; k < n; k++) {
    int d = distance(name, names[k]);
    /* Every letter replaced is no typo ('a' for 'i'), but for its case. */
    size_t longest = len > strlen(names[k]) ? len : strlen(names[k]);
    if (d >= (int)longest && !same_but_case(name, names[k]))
      continue;
    if (d < bestd) {
      bestd = d;
      best = names[k];
    }
  }
  return bestd <= limit ? best : NULL;
}

const char *typo_of(const char *name, const char *const *names, int n) {
  /* A name of one character is one edit from every other: no slip there
  ** (`c = a * 2; d = b + 1` reads an input b). */
  size_t len = strlen(name);
  if (len < 2)
    return NULL;
  int limit = len < 7 ? 1 : 2;
  const char *best = NULL;
  int bestd = limit + 1;
  for (int k = 0; k < n; k++) {
    if (!names[k] || strlen(names[k]) < 2 || !strcmp(names[k], name))
      continue;
    int d = distance(name, names[k]);
    if (d < bestd) {
      bestd = d;
      best = names[k];
    }
  }
  return best;
}

const char *jitc_nearest_name(const char *name, const char *const *names, int n) {
  for (int k = 0; k < n && names; k++)
    if (!names[k])
      return NULL;
  return name && (names || n == 0) && n >= 0 ? nearest_name(name, names, n) : NULL;
}

/* ---- the sink the back ends report to ---- */

jitc_status ctx_error(jitc_context *ctx, jitc_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vadd(&ctx->diags, code, NULL, -1, fmt, ap);
  va_end(ap);
  return code;
}
