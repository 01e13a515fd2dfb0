/*
** tokenize.c -- splits a program into tokens.
**
** Statements end at a newline or ';' (both become TK_NEWLINE); newlines
** inside parentheses or brackets are ignored, as in Python.  '#' starts a
** comment.  Lexical errors are reported and the offending characters skipped,
** so the parser still sees the rest of the program.
*/
#include "jitc_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The punctuation the lexer knows: every operator's spelling in ops.h, the
** augmented assignment of each binary operator that has one (F_AUG: "+="),
** and the grammar's own (';' separates statements and is lexed apart).
** Sorted longest first, so "**=" wins over "**" and "*". */
typedef struct Punct {
  char s[8]; /* the longest spelling is 2 characters, 3 with "=" */
  int len;
} Punct;
enum { MAX_PUNCTS = 2 * OP_COUNT + 8 };
static const char *const grammar_puncts[] = {"(", ")", "[", "]", ",", "=", "."};

static void add_punct(Punct *v, int *n, const char *s, const char *suffix) {
  Punct p;
  int len = snprintf(p.s, sizeof p.s, "%s%s", s, suffix);
  p.len = len;
  for (int k = 0; k < *n; k++)
    if (v[k].len == len && memcmp(v[k].s, p.s, (size_t)len) == 0)
      return; /* "-" is both subtraction and negation */
  /* Insertion keeps the list sorted by length, longest first. */
  int at = *n;
  while (at > 0 && v[at - 1].len < len) {
    v[at] = v[at - 1];
    at--;
  }
  v[at] = p;
  (*n)++;
}

static int punct_table(Punct *v) {
  int n = 0;
  for (int op = 0; op < OP_COUNT; op++) {
    const OpInfo *o = &op_info[op];
    if (!o->spell)
      continue;
    add_punct(v, &n, o->spell, "");
    if (o->flags & F_AUG)
      add_punct(v, &n, o->spell, "=");
  }
  for (size_t k = 0; k < sizeof grammar_puncts / sizeof grammar_puncts[0]; k++)
    add_punct(v, &n, grammar_puncts[k], "");
  return n;
}

bool tok_is(const Compiler *C, const Token *t, const char *s) {
  size_t n = strlen(s);
  return (t->kind == TK_PUNCT || t->kind == TK_NAME) && (size_t)t->len == n &&
         memcmp(C->src + t->off, s, n) == 0;
}

typedef struct Lexer {
  Compiler *C;
  Token *v;
  int n, cap;
  bool oom;
  Punct punct[MAX_PUNCTS];
  int npunct;
} Lexer;

/* The punctuation at src, or NULL. */
static const Punct *match_punct(const Lexer *L, const char *src) {
  for (int p = 0; p < L->npunct; p++)
    if (strncmp(src, L->punct[p].s, (size_t)L->punct[p].len) == 0)
      return &L->punct[p];
  return NULL;
}

/* Whether c can start a token (a run of bad bytes ends there). */
static bool starts_token(const Lexer *L, char c) {
  if (isspace((unsigned char)c) || isalnum((unsigned char)c) || (c && strchr("#;_.", c)))
    return true;
  for (int p = 0; p < L->npunct; p++)
    if (L->punct[p].s[0] == c)
      return true;
  return false;
}

static Token *push(Lexer *L, TokKind kind, int off, int len) {
  if (L->n == L->cap) {
    int cap = L->cap ? L->cap * 2 : 256;
    Token *v = realloc(L->v, (size_t)cap * sizeof *v);
    if (!v) {
      L->oom = true;
      return NULL;
    }
    L->v = v;
    L->cap = cap;
  }
  Token *t = &L->v[L->n++];
  *t = (Token){kind, off, len, 0, 0};
  return t;
}

/* number = (digits ("." digits?)? exponent? | "." digits exponent?) ("j" | "J")?
** exponent = ("e" | "E") ("+" | "-")? digits
** A trailing j makes an imaginary literal, as in Python: its digits are
** read as a float (10j is 10.0j; 1e999j is infj). */
static int lex_number(Lexer *L, const char *src, int off) {
  const char *p = src + off;
  bool is_float = false;
  while (isdigit((unsigned char)*p))
    p++;
  if (*p == '.') {
    is_float = true;
    p++;
    while (isdigit((unsigned char)*p))
      p++;
  }
  if ((*p == 'e' || *p == 'E') &&
      (isdigit((unsigned char)p[1]) ||
       ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
    is_float = true;
    p += 2;
    while (isdigit((unsigned char)*p))
      p++;
  }
  int len = (int)(p - (src + off));
  bool imag = (*p == 'j' || *p == 'J') && !isalnum((unsigned char)p[1]) && p[1] != '_';
  if (imag)
    p++;
  if (isalpha((unsigned char)*p) || *p == '_') {
    int end = (int)(p - src);
    while (isalnum((unsigned char)src[end]) || src[end] == '_')
      end++;
    error_at(L->C, off, "malformed number '%.*s'", end - off, src + off);
    push(L, TK_ERROR, off, end - off);
    return end;
  }
  Token *t = push(L, imag ? TK_IMAG : is_float ? TK_FLOAT : TK_INT, off, len + imag);
  if (!t)
    return off + len + imag;
  char tmp[512];
  if (len >= (int)sizeof tmp) {
    error_at(L->C, off, "number too long (%d characters)", len);
    return off + len + imag;
  }
  memcpy(tmp, src + off, (size_t)len);
  tmp[len] = '\0';
  errno = 0;
  if (is_float || imag) {
    t->fval = strtod(tmp, NULL); /* overflow gives inf, as in Python's float('1e999') */
  } else {
    /* Python's rule: 010 is an error (C's octal?), 00 a zero. */
    if (tmp[0] == '0' && tmp[strspn(tmp, "0")])
      error_at(L->C, off, "leading zeros in a decimal integer literal are not permitted ('%s')",
               tmp);
    unsigned long long v = strtoull(tmp, NULL, 10);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
      error_at(L->C, off, "integer literal %s does not fit in int64", tmp);
    else
      t->ival = (int64_t)v;
  }
  return off + len + imag;
}

Token *tokenize(Compiler *C, int *ntokens) {
  Lexer L = {.C = C};
  L.npunct = punct_table(L.punct);
  const char *src = C->src;
  int depth = 0; /* ( and [ nesting: newlines inside are not separators */
  int k = 0;
  while (src[k] && !L.oom) {
    char c = src[k];
    if (c == '#') {
      while (src[k] && src[k] != '\n')
        k++;
      continue;
    }
    if (c == '\n' || c == ';') {
      if (depth == 0 || c == ';')
        push(&L, TK_NEWLINE, k, 1);
      k++;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      k++;
      continue;
    }
    if (c == '\\' && (src[k + 1] == '\n' || (src[k + 1] == '\r' && src[k + 2] == '\n'))) {
      k += src[k + 1] == '\n' ? 2 : 3; /* explicit line joining */
      continue;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)src[k + 1]))) {
      k = lex_number(&L, src, k);
      continue;
    }
    if (isalpha((unsigned char)c) || c == '_') {
      int start = k;
      while (isalnum((unsigned char)src[k]) || src[k] == '_')
        k++;
      push(&L, TK_NAME, start, k - start);
      continue;
    }
    if (c == '!' && src[k + 1] != '=') {
      error_at(C, k, "'!' is not an operator; use '~' for not");
      push(&L, TK_ERROR, k, 1);
      k++;
      continue;
    }
    if ((c == '&' && src[k + 1] == '&') || (c == '|' && src[k + 1] == '|')) {
      error_at(C, k, "'%c%c' is not an operator; use '%c'", c, c, c);
      push(&L, TK_PUNCT, k, 1); /* recover as the single operator */
      k += 2;
      continue;
    }
    const Punct *p = match_punct(&L, src + k);
    if (p) {
      push(&L, TK_PUNCT, k, p->len);
      if (c == '(' || c == '[')
        depth++;
      else if ((c == ')' || c == ']') && depth > 0)
        depth--;
      k += p->len;
      continue;
    }
    /* One diagnostic per run of bad bytes (a UTF-8 character is one run). */
    int start = k;
    while (src[k] && !starts_token(&L, src[k]))
      k++;
    if (k == start)
      k++;
    push(&L, TK_ERROR, start, k - start);
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
      error_at(C, start, "unexpected character (byte 0x%02x)", (unsigned char)c);
    else
      error_at(C, start, "unexpected character '%c'", c);
  }
  /* The end of the program sits right after its last token, so that "found
  ** end of program" points at the end of the last line, not past it. */
  int end = 0;
  for (int j = L.n - 1; j >= 0 && !L.oom; j--)
    if (L.v[j].kind != TK_NEWLINE) {
      end = L.v[j].off + L.v[j].len;
      break;
    }
  push(&L, TK_NEWLINE, end, 0);
  push(&L, TK_EOF, end, 0);
  if (L.oom) {
    free(L.v);
    diag_add(C->diags, JITC_E_NOMEM, NULL, -1, "out of memory while reading the program");
    C->nerrors++;
    return NULL;
  }
  /* Move the tokens into the arena so the compile frees them in one call. */
  Token *v = arena_alloc(C->arena, (size_t)L.n * sizeof *v);
  if (v)
    memcpy(v, L.v, (size_t)L.n * sizeof *v);
  free(L.v);
  *ntokens = L.n;
  return v;
}
