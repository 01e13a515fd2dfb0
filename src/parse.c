/*
** parse.c -- recursive descent from tokens to the AST.
**
** One function per rule of grammar/jitc.ebnf, each quoting its rule.  On a
** syntax error the parser reports it, enters panic mode (no further reports)
** until the end of the statement, then resynchronises at the next statement,
** so one program can show several independent errors without cascades.
** Which operators a level takes is the PREC column of ops.h, and the
** augmented assignments are its F_AUG rows: this file names no operator.
** Nesting is limited (MAX_DEPTH) so that hostile input cannot overflow the
** stack of this or any later stage: every later stage recurses over the
** tree, and the parser bounds the tree's depth.
*/
#include "jitc_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 500   /* parentheses, unary operators and ** nesting */
#define MAX_HEIGHT 1000 /* height of an expression tree */

typedef struct Parser {
  Compiler *C;
  Token *tok; /* current token */
  bool panic;
  int depth;  /* recursion depth of expr */
  /* binary_op()'s answer for one token: every level asks about it. */
  const Token *op_tok;
  int op_of_tok;
} Parser;

static Ast *expr(Parser *P);
static Ast *unary(Parser *P);

static void syntax_error(Parser *P, int off, const char *fmt, ...) PRINTF(3, 4);
static void syntax_error(Parser *P, int off, const char *fmt, ...) {
  if (P->panic)
    return;
  P->panic = true;
  if (P->tok->kind == TK_ERROR)
    return; /* the lexer has reported this spot already */
  va_list ap;
  va_start(ap, fmt);
  diag_vadd(P->C->diags, JITC_E_PROGRAM, P->C->src, off, fmt, ap);
  va_end(ap);
  P->C->nerrors++;
}

static bool is(Parser *P, const char *s) { return tok_is(P->C, P->tok, s); }

static bool consume(Parser *P, const char *s) {
  if (!is(P, s))
    return false;
  P->tok++;
  return true;
}

/* How a token reads in a message. */
static const char *describe(Parser *P, Token *t) {
  switch (t->kind) {
  case TK_EOF:
  case TK_ERROR:
    return "end of program";
  case TK_NEWLINE:
    return t->len ? (P->C->src[t->off] == ';' ? "';'" : "end of line") : "end of program";
  default:
    return arena_printf(P->C->arena, "'%.*s'", t->len > 40 ? 40 : t->len, P->C->src + t->off);
  }
}

static void expect(Parser *P, const char *s) {
  if (!consume(P, s))
    syntax_error(P, P->tok->off, "expected '%s' but found %s", s, describe(P, P->tok));
}

static Ast *new_ast(Parser *P, AstKind kind, int off) {
  Ast *a = arena_alloc(P->C->arena, sizeof *a);
  if (!a) {
    static Ast dummy; /* out of memory: compile() reports it via arena_failed */
    dummy = (Ast){.kind = A_INT};
    return &dummy;
  }
  a->kind = kind;
  a->off = off;
  return a;
}

static Ast *new_binary(Parser *P, int op, int off, Ast *l, Ast *r) {
  int height = 1 + (l->depth > r->depth ? l->depth : r->depth);
  if (height > MAX_HEIGHT) {
    syntax_error(P, off, "expression too large: more than %d operators deep; split it "
                 "into several statements with let", MAX_HEIGHT);
    return l;
  }
  Ast *a = new_ast(P, A_BINARY, off);
  a->depth = height;
  a->op = op;
  a->nargs = 2;
  a->args = arena_alloc(P->C->arena, 2 * sizeof(Ast *));
  if (a->args) {
    a->args[0] = l;
    a->args[1] = r;
  } else {
    a->nargs = 0;
  }
  return a;
}

static char *tok_name(Parser *P, Token *t) {
  return arena_strndup(P->C->arena, P->C->src + t->off, (size_t)t->len);
}

/* The op of ops.h spelled by the current token with `arity` operands, or -1
** (unary and binary minus share a spelling). */
static int spelled_op(Parser *P, int arity) {
  if (P->tok->kind != TK_PUNCT)
    return -1;
  for (int op = 0; op < OP_COUNT; op++)
    if (op_info[op].kind == K_OPERATOR && op_info[op].arity == arity &&
        is(P, op_info[op].spell))
      return op;
  return -1;
}

/* The binary operator at the current token, -1 if none. */
static int binary_op(Parser *P) {
  if (P->op_tok != P->tok) {
    P->op_tok = P->tok;
    P->op_of_tok = spelled_op(P, 2);
  }
  return P->op_of_tok;
}

/* The binary operator of precedence `prec` at the current token, or -1. */
static int binary_op_at(Parser *P, Prec prec) {
  int op = binary_op(P);
  return op >= 0 && op_info[op].prec == prec ? op : -1;
}

/* One left-associative level: operand { op operand }, for the operators of
** precedence `prec`. */
static Ast *binary_level(Parser *P, Prec prec, Ast *(*operand)(Parser *)) {
  Ast *lhs = operand(P);
  int op;
  while ((op = binary_op_at(P, prec)) >= 0) {
    int off = P->tok->off;
    P->tok++;
    lhs = new_binary(P, op, off, lhs, operand(P));
  }
  return lhs;
}

/* paren = "(" [ expr [ "," [ expr { "," expr } [ "," ] ] ] ] ")" ;  after the
** "(" at t: (e) is e; (), (e,) and (e, f) are tuples, which the checker
** takes only as a reduction's axes. */
static Ast *paren(Parser *P, Token *t) {
  if (is(P, ")") || !is(P, ",")) {
    Ast *first = is(P, ")") ? NULL : expr(P);
    if (first && !is(P, ",")) {
      expect(P, ")");
      first->paren = true;
      return first;
    }
    Ast *args[JITC_MAXDIMS + 1];
    int n = 0;
    if (first) {
      args[n++] = first;
      consume(P, ",");
      while (!is(P, ")") && P->tok->kind != TK_EOF && P->tok->kind != TK_NEWLINE) {
        Ast *e = expr(P);
        if (n <= JITC_MAXDIMS)
          args[n++] = e;
        else
          syntax_error(P, e->off, "a tuple of more than %d elements", JITC_MAXDIMS);
        if (!consume(P, ","))
          break;
      }
    }
    expect(P, ")");
    Ast *a = new_ast(P, A_TUPLE, t->off);
    a->args = arena_alloc(P->C->arena, (size_t)(n ? n : 1) * sizeof(Ast *));
    if (a->args) {
      a->nargs = n;
      memcpy(a->args, args, (size_t)n * sizeof(Ast *));
    }
    for (int k = 0; k < a->nargs; k++)
      if (args[k]->depth + 1 > a->depth)
        a->depth = args[k]->depth + 1;
    return a;
  }
  syntax_error(P, P->tok->off, "expected an expression but found ','");
  return new_ast(P, A_INT, t->off);
}

/* arg = [ NAME "=" ] expr ;  a keyword argument (axis=, keepdims=) is an
** A_KEYWORD of one operand, which the checker takes only in a reduction. */
static Ast *call_arg(Parser *P) {
  Token *t = P->tok;
  if (t->kind == TK_NAME && tok_is(P->C, t + 1, "=")) {
    P->tok += 2;
    Ast *a = new_ast(P, A_KEYWORD, t->off);
    a->name = tok_name(P, t);
    a->args = arena_alloc(P->C->arena, sizeof(Ast *));
    Ast *value = expr(P);
    if (a->args) {
      a->args[0] = value;
      a->nargs = 1;
    }
    a->depth = value->depth + 1;
    return a;
  }
  return expr(P);
}

/* primary = NUMBER | NAME | NAME "[" "i" "]" | NAME "(" [ arg { "," arg } [ "," ] ] ")"
**         | paren ; */
static Ast *primary(Parser *P) {
  Token *t = P->tok;
  if (t->kind == TK_INT || t->kind == TK_FLOAT || t->kind == TK_IMAG) {
    P->tok++;
    Ast *a = new_ast(P, t->kind == TK_INT ? A_INT : t->kind == TK_FLOAT ? A_FLOAT : A_IMAG,
                     t->off);
    a->ival = t->ival;
    a->fval = t->fval;
    return a;
  }
  if (consume(P, "("))
    return paren(P, t);
  if (t->kind == TK_NAME) {
    if (tok_is(P->C, t, "not")) {
      syntax_error(P, t->off, "'not' is not an operator; use '~' (logical on bool)");
      P->tok++;
      return unary(P);
    }
    if (tok_is(P->C, t, "and") || tok_is(P->C, t, "or") || tok_is(P->C, t, "let")) {
      syntax_error(P, t->off, "expected an expression but found %s", describe(P, t));
      return new_ast(P, A_INT, t->off);
    }
    P->tok++;
    char *name = tok_name(P, t);
    if (consume(P, "[")) {
      /* Only a[i] in v1: anything else is parsed, then refused. */
      Token *it = P->tok;
      Ast *index = expr(P);
      if (!(index->kind == A_NAME && index->name && strcmp(index->name, "i") == 0 &&
            !index->paren))
        syntax_error(P, it->off,
                     "only '%s[i]' indexing is supported (each element reads its own "
                     "index); shifted or computed indices are not",
                     name);
      expect(P, "]");
      Ast *a = new_ast(P, A_INDEX, t->off);
      a->name = name;
      return a;
    }
    if (consume(P, "(")) {
      Ast *a = new_ast(P, A_CALL, t->off);
      a->name = name;
      Ast *args[16];
      int n = 0;
      bool keywords = false;
      while (!is(P, ")") && P->tok->kind != TK_EOF && P->tok->kind != TK_NEWLINE) {
        Ast *arg = call_arg(P);
        if (arg->kind == A_KEYWORD)
          keywords = true;
        else if (keywords)
          syntax_error(P, arg->off, "a positional argument follows a keyword argument");
        if (n < 16)
          args[n] = arg;
        n++;
        if (!consume(P, ","))
          break;
      }
      expect(P, ")");
      if (n > 16) {
        syntax_error(P, t->off, "too many arguments to '%s' (%d)", name, n);
        n = 16;
      }
      a->nargs = n;
      a->args = arena_alloc(P->C->arena, (size_t)(n ? n : 1) * sizeof(Ast *));
      for (int k = 0; k < n; k++)
        if (args[k]->depth + 1 > a->depth)
          a->depth = args[k]->depth + 1;
      if (a->depth > MAX_HEIGHT)
        syntax_error(P, t->off, "expression too large: more than %d operators deep",
                     MAX_HEIGHT);
      if (a->args)
        memcpy(a->args, args, (size_t)n * sizeof(Ast *));
      else
        a->nargs = 0;
      return a;
    }
    Ast *a = new_ast(P, A_NAME, t->off);
    a->name = name;
    return a;
  }
  syntax_error(P, t->off, "expected an expression but found %s", describe(P, t));
  return new_ast(P, A_INT, t->off);
}

/* attribute = primary { "." ( "real" | "imag" ) } ;  NumPy's attributes of
** an array, the same as the functions real(x) and imag(x): an A_CALL of
** that name. */
static Ast *attribute(Parser *P) {
  Ast *a = primary(P);
  while (is(P, ".")) {
    Token *dot = P->tok++, *t = P->tok;
    if (t->kind != TK_NAME || !(tok_is(P->C, t, "real") || tok_is(P->C, t, "imag"))) {
      syntax_error(P, t->off, "expected 'real' or 'imag' after '.' (the attributes of an "
                   "array's elements) but found %s", describe(P, t));
      return a;
    }
    P->tok++;
    Ast *call = new_ast(P, A_CALL, dot->off);
    call->name = tok_name(P, t);
    call->args = arena_alloc(P->C->arena, sizeof(Ast *));
    if (call->args) {
      call->args[0] = a;
      call->nargs = 1;
    }
    call->depth = a->depth + 1;
    if (call->depth > MAX_HEIGHT)
      syntax_error(P, dot->off, "expression too large: more than %d operators deep", MAX_HEIGHT);
    a = call;
  }
  return a;
}

/* power = attribute [ "**" unary ] ;  (ops.h: P_POWER, right-associative) */
static Ast *power(Parser *P) {
  Ast *base = attribute(P);
  int op = binary_op_at(P, P_POWER);
  if (op >= 0) {
    int off = P->tok->off;
    P->tok++;
    if (++P->depth > MAX_DEPTH) {
      syntax_error(P, off, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
      P->depth--;
      return base;
    }
    Ast *a = new_binary(P, op, off, base, unary(P));
    P->depth--;
    return a;
  }
  return base;
}

/* unary = ( "-" | "+" | "~" ) unary | power ;  (ops.h: P_UNARY; "+" is
** NumPy's positive, no op of its own: op -1 in the AST) */
static Ast *unary(Parser *P) {
  int op = spelled_op(P, 1);
  if (op < 0 && !is(P, op_info[OP_ADD].spell))
    return power(P);
  int off = P->tok->off;
  P->tok++;
  if (++P->depth > MAX_DEPTH) {
    syntax_error(P, off, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
    P->depth--;
    return new_ast(P, A_INT, off);
  }
  Ast *a = new_ast(P, A_UNARY, off);
  a->op = op;
  a->nargs = 1;
  a->args = arena_alloc(P->C->arena, sizeof(Ast *));
  Ast *operand = unary(P);
  a->depth = operand->depth + 1;
  if (a->args)
    a->args[0] = operand;
  else
    a->nargs = 0;
  P->depth--;
  return a;
}

/* term = unary { ( "*" | "/" | "//" | "%" ) unary } ;  (ops.h: P_TERM) */
static Ast *term(Parser *P) { return binary_level(P, P_TERM, unary); }

/* sum = term { ( "+" | "-" ) term } ;  (ops.h: P_SUM) */
static Ast *sum(Parser *P) { return binary_level(P, P_SUM, term); }

/* shift = sum { ( "<<" | ">>" ) sum } ;  (ops.h: P_SHIFT) */
static Ast *shift(Parser *P) { return binary_level(P, P_SHIFT, sum); }

/* bitand = shift { "&" shift } ;  (ops.h: P_BITAND) */
static Ast *bitand(Parser *P) { return binary_level(P, P_BITAND, shift); }

/* bitxor = bitand { "^" bitand } ;  (ops.h: P_BITXOR) */
static Ast *bitxor(Parser *P) { return binary_level(P, P_BITXOR, bitand); }

/* bitor = bitxor { "|" bitxor } ;  (ops.h: P_BITOR)  Python's 'and' and 'or'
** are refused here, pointing to & and |. */
static Ast *bitor(Parser *P) {
  Ast *lhs = bitxor(P);
  for (;;) {
    int off = P->tok->off;
    int op = binary_op_at(P, P_BITOR);
    if (op >= 0) {
      P->tok++;
    } else if (is(P, "or") || is(P, "and")) {
      op = is(P, "or") ? OP_OR : OP_AND;
      const char *sp = op_info[op].spell;
      syntax_error(P, off, "'%.*s' is not an operator; use '%s' (logical on bool, "
                   "bitwise on integers; parenthesise comparisons: (a < b) %s (c < d))",
                   P->tok->len, P->C->src + P->tok->off, sp, sp);
      P->tok++;
    } else {
      return lhs;
    }
    lhs = new_binary(P, op, off, lhs, bitxor(P));
  }
}

static int cmp_op(Parser *P) { return binary_op_at(P, P_COMPARE); }

/* comparison = bitor [ cmpop bitor ] ;  (ops.h: P_COMPARE)  A chain
** a < b < c is an error. */
static Ast *comparison(Parser *P) {
  Ast *lhs = bitor(P);
  int op = cmp_op(P);
  if (op < 0)
    return lhs;
  int off = P->tok->off;
  P->tok++;
  Ast *a = new_binary(P, op, off, lhs, bitor(P));
  if (cmp_op(P) >= 0) {
    syntax_error(P, P->tok->off,
                 "comparisons cannot be chained; write (a < b) & (b < c) instead of "
                 "a < b < c");
    while (cmp_op(P) >= 0) {
      P->tok++;
      bitor(P);
    }
  }
  return a;
}

/* expr = comparison ; */
static Ast *expr(Parser *P) {
  if (++P->depth > MAX_DEPTH) {
    syntax_error(P, P->tok->off, "expression nested too deeply (more than %d levels)",
                 MAX_DEPTH);
    /* Skip the rest of the statement without recursing. */
    while (P->tok->kind != TK_NEWLINE && P->tok->kind != TK_EOF)
      P->tok++;
    P->depth--;
    return new_ast(P, A_INT, P->tok->off);
  }
  Ast *a = comparison(P);
  P->depth--;
  return a;
}

/* The binary operator whose augmented assignment ("+=": its spelling and
** "=", ops.h's F_AUG) is the current token, or -1. */
static int aug_op(Parser *P) {
  const Token *t = P->tok;
  if (t->kind != TK_PUNCT || t->len < 2 || P->C->src[t->off + t->len - 1] != '=')
    return -1;
  for (int op = 0; op < OP_COUNT; op++) {
    const char *sp = op_info[op].spell;
    if ((op_info[op].flags & F_AUG) && sp && strlen(sp) == (size_t)t->len - 1 &&
        memcmp(sp, P->C->src + t->off, (size_t)t->len - 1) == 0)
      return op;
  }
  return -1;
}

static const char not_a_target[] =
    "cannot assign to an expression; the left side must be an array name (a = ... or "
    "a[i] = ...)";

static bool is_target(const Ast *a) {
  return (a->kind == A_NAME || a->kind == A_INDEX) && !a->paren;
}

/* The rest of a statement `target "," target "=" expr` after its first
** target: the two results of a call (the checker says which calls have
** two). */
static void two_targets(Parser *P, AstStmt *s, Ast *first) {
  s->kind = S_TWO;
  if (!is_target(first))
    syntax_error(P, first->off, "%s", not_a_target);
  P->tok++; /* "," */
  Ast *second = expr(P);
  if (!is_target(second))
    syntax_error(P, second->off, "%s", not_a_target);
  if (is(P, ","))
    syntax_error(P, P->tok->off, "two names at most: they take the two results of one "
                 "call, as in 'm, e = frexp(x)'");
  else if (aug_op(P) >= 0)
    syntax_error(P, P->tok->off, "an augmented assignment (%.*s) takes one name",
                 P->tok->len, P->C->src + P->tok->off);
  if (is_target(first) && is_target(second)) {
    s->name = first->name;
    s->name_off = first->off;
    s->name2 = second->name;
    s->name2_off = second->off;
  }
  expect(P, "=");
  s->value = expr(P);
  if (is(P, ","))
    syntax_error(P, P->tok->off, "one value only: two names take the two results of one "
                 "call, as in 'm, e = frexp(x)'; assign other values one per statement");
  else if (is(P, "="))
    syntax_error(P, P->tok->off, "chained assignment is not supported; assign one array "
                 "per statement");
}

/* stmt = "let" NAME "=" expr | target "=" expr | target "," target "=" expr
**      | target augop expr | expr ;
** target = NAME [ "[" "i" "]" ] ; */
static void stmt(Parser *P, AstStmt *s) {
  Token *start = P->tok;
  s->off = start->off;
  if (tok_is(P->C, start, "let") && start[1].kind == TK_NAME) {
    P->tok++;
    s->kind = S_LET;
    s->name_off = P->tok->off;
    s->name = tok_name(P, P->tok);
    P->tok++;
    expect(P, "=");
    s->value = expr(P);
    return;
  }
  Ast *lhs = expr(P);
  if (is(P, ",")) {
    two_targets(P, s, lhs);
    return;
  }
  int aug = aug_op(P);
  if (aug < 0 && !is(P, "=")) {
    s->kind = S_EXPR;
    s->value = lhs;
    /* (`c == a + 1` as a whole statement: the checker's eq_typo()) */
    return;
  }
  Token *optok = P->tok;
  P->tok++;
  if (!is_target(lhs)) {
    syntax_error(P, lhs->off, "%s", not_a_target);
  } else if (aug < 0 && tok_is(P->C, optok, "=") && is(P, "=")) {
    syntax_error(P, P->tok->off, "expected an expression but found '='");
  }
  s->kind = aug < 0 ? S_ASSIGN : S_AUG;
  s->op = aug;
  s->name = lhs->name;
  s->name_off = lhs->off;
  s->value = expr(P);
  if (is(P, "=")) /* a = b = c */
    syntax_error(P, P->tok->off, "chained assignment is not supported; assign one array "
                 "per statement");
}

/* program = { sep } [ stmt { sep { sep } stmt } ] { sep } ; */
AstProgram *parse(Compiler *C, Token *toks, int ntoks) {
  Parser P = {C, toks, false, 0, NULL, -1};
  AstProgram *prog = arena_alloc(C->arena, sizeof *prog);
  if (!prog)
    return NULL;
  int cap = 0;
  for (;;) {
    while (P.tok->kind == TK_NEWLINE)
      P.tok++;
    if (P.tok->kind == TK_EOF)
      break;
    if (prog->nstmts == cap) {
      cap = cap ? cap * 2 : 16;
      AstStmt *v = arena_alloc(C->arena, (size_t)cap * sizeof *v);
      if (!v)
        return NULL;
      if (prog->nstmts)
        memcpy(v, prog->stmts, (size_t)prog->nstmts * sizeof *v);
      prog->stmts = v;
    }
    AstStmt *s = &prog->stmts[prog->nstmts++];
    Token *first = P.tok;
    stmt(&P, s);
    if (P.tok->kind != TK_NEWLINE && P.tok->kind != TK_EOF)
      syntax_error(&P, P.tok->off, "expected the end of the statement but found %s",
                   describe(&P, P.tok));
    /* Resynchronise: skip to the next statement. */
    while (P.tok->kind != TK_NEWLINE && P.tok->kind != TK_EOF)
      P.tok++;
    /* A statement with a lexical error is as bad as one with a syntax error. */
    for (Token *t = first; t < P.tok && !P.panic; t++)
      if (t->kind == TK_ERROR)
        P.panic = true;
    s->bad = P.panic;
    P.panic = false;
  }
  (void)ntoks;
  return prog;
}
