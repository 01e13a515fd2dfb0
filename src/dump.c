/*
** dump.c -- the --emit text of the front end's stages: tokens, the AST and
** the typed IR.  These texts are the golden tests' subject and a reader's
** way into each stage.  The typed IR's text is canonical (it names every
** type and conversion) and doubles as the key of the compile caches.
*/
#include "jitc_int.h"

#include <math.h>

#include <stdio.h>
#include <string.h>

static const char *short_type(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES ? type_info[t].shortname : "?";
}

void dump_tokens(Buf *b, const Compiler *C, const Token *t, int n) {
  static const char *const kinds[] = {"name", "int", "float", "imag", "punct", "newline", "error",
                                      "eof"};
  for (int k = 0; k < n; k++) {
    int line, col;
    src_position(C->src, t[k].off, &line, &col);
    buf_printf(b, "%d:%d %s", line, col, kinds[t[k].kind]);
    if (t[k].kind == TK_NAME || t[k].kind == TK_PUNCT)
      buf_printf(b, " %.*s", t[k].len, C->src + t[k].off);
    else if (t[k].kind == TK_INT)
      buf_printf(b, " %lld", (long long)t[k].ival);
    else if (t[k].kind == TK_FLOAT || t[k].kind == TK_IMAG) {
      char num[32];
      fmt_double(num, t[k].fval);
      buf_printf(b, " %s%s", num, t[k].kind == TK_IMAG ? "j" : "");
    }
    buf_putc(b, '\n');
  }
}

static void dump_ast_node(Buf *b, const Ast *a) {
  switch (a->kind) {
  case A_INT:
    buf_printf(b, "%lld", (long long)a->ival);
    return;
  case A_FLOAT:
  case A_IMAG: {
    char num[32];
    fmt_double(num, a->fval);
    buf_puts(b, num);
    if (a->kind == A_IMAG)
      buf_putc(b, 'j');
    return;
  }
  case A_NAME:
    buf_puts(b, a->name);
    return;
  case A_INDEX:
    buf_printf(b, "%s[i]", a->name);
    return;
  case A_UNARY:
    buf_printf(b, "(%s ", a->op < 0 ? "pos" : a->op == OP_NEG ? "neg" : "~");
    break;
  case A_BINARY:
    buf_printf(b, "(%s ", op_info[a->op].name);
    break;
  case A_CALL:
    buf_printf(b, "(call %s%s", a->name, a->nargs ? " " : "");
    break;
  case A_KEYWORD:
    buf_printf(b, "(%s= ", a->name);
    break;
  case A_TUPLE:
    buf_printf(b, "(tuple%s", a->nargs ? " " : "");
    break;
  }
  for (int k = 0; k < a->nargs; k++) {
    if (k)
      buf_putc(b, ' ');
    dump_ast_node(b, a->args[k]);
  }
  buf_putc(b, ')');
}

void dump_ast(Buf *b, const AstProgram *p) {
  for (int k = 0; k < p->nstmts; k++) {
    const AstStmt *s = &p->stmts[k];
    switch (s->kind) {
    case S_ASSIGN:
      buf_printf(b, "(= %s ", s->name);
      break;
    case S_AUG:
      buf_printf(b, "(%s= %s ", op_info[s->op].name, s->name);
      break;
    case S_LET:
      buf_printf(b, "(let %s ", s->name);
      break;
    case S_EXPR:
      buf_puts(b, "(expr ");
      break;
    case S_TWO:
      buf_printf(b, "(= (%s %s) ", s->name, s->name2);
      break;
    }
    dump_ast_node(b, s->value);
    buf_puts(b, ")\n");
  }
}

/* One part of a float or complex constant: float32 and narrower in their
** own shortest form (the 16-bit floats' values are exact in float32 too,
** and shortest there is unambiguous in them).  The text is also the compile
** caches' key: a NaN's sign must show, or `a + nan` and `a + -nan` would
** share one compiled kernel. */
static void fmt_part(char *num, double v, jitc_dtype part) {
  char *p = num;
  if (isnan(v) && signbit(v))
    *p++ = '-';
  if (type_info[part].size <= 4)
    fmt_float(p, (float)v);
  else
    fmt_double(p, v);
}

static void dump_const(Buf *b, const Node *n) {
  char num[32], im[32];
  switch (type_info[n->type].kind) {
  case T_BOOL:
    buf_puts(b, n->k.i ? "True" : "False");
    return;
  case T_SINT:
    buf_printf(b, "%lld:%s", (long long)n->k.i, short_type(n->type));
    return;
  case T_UINT: /* a uint64's value is in k.i as its bits */
    buf_printf(b, "%llu:%s", (unsigned long long)n->k.i, short_type(n->type));
    return;
  case T_COMPLEX:
    /* (re+imj), the imaginary part's sign always written (-0.0 as -0.0j) */
    fmt_part(num, n->k.z[0], dtype_part(n->type));
    fmt_part(im, n->k.z[1], dtype_part(n->type));
    buf_printf(b, "(%s%s%sj):%s", num, im[0] == '-' ? "" : "+", im, short_type(n->type));
    return;
  default:
    fmt_part(num, n->k.f, n->type);
    buf_printf(b, "%s:%s", num, short_type(n->type));
    return;
  }
}

void dump_node(Buf *b, const Program *p, const Node *n) {
  switch (n->kind) {
  case N_CONST:
    dump_const(b, n);
    return;
  case N_LOAD:
    buf_puts(b, p->arrays[n->slot].name);
    return;
  case N_PARAM:
    buf_printf(b, "$%s", p->params[n->slot].name);
    return;
  case N_INDEX:
    buf_puts(b, "i");
    return;
  case N_TEMP:
    buf_printf(b, "t%d", n->slot);
    return;
  case N_OP:
    if (n->op == OP_CAST)
      buf_printf(b, "(%s ", short_type(n->type));
    else
      buf_printf(b, "(%s:%s ", op_info[n->op].name, short_type(n->type));
    for (int k = 0; k < n->nargs; k++) {
      if (k)
        buf_putc(b, ' ');
      dump_node(b, p, n->args[k]);
    }
    buf_putc(b, ')');
    return;
  }
}

/* " fits-int8" where a weak int scalar must fit a narrower integer type
** (the range of several: " fits-0..127"); "" where it need not. */
static const char *fits_text(const IrParam *pa, char *out, size_t len) {
  if (pa->fit_lo == INT64_MIN && pa->fit_hi == INT64_MAX)
    return "";
  const char *t = fit_type_name(pa);
  if (t) {
    snprintf(out, len, " fits-%s", t);
    return out;
  }
  snprintf(out, len, " fits-%lld..%lld", (long long)pa->fit_lo, (long long)pa->fit_hi);
  return out;
}

/* " axis=1", " axis=(0,2) keepdims": a reduction's axes as written ("" for
** the whole one); part of the cache key. */
static void dump_axes(Buf *b, const IrAxes *ax) {
  if (ax && ax->given && !ax->tuple)
    buf_printf(b, " axis=%d", ax->axes[0]);
  else if (ax && ax->given) {
    buf_puts(b, " axis=(");
    for (int k = 0; k < ax->n; k++)
      buf_printf(b, k ? ",%d" : "%d", ax->axes[k]);
    buf_puts(b, ax->n == 1 ? ",)" : ")");
  }
  if (ax && ax->keepdims)
    buf_puts(b, " keepdims");
}

void dump_program(Buf *b, const Program *p) {
  static const char *const roles[] = {"in", "out", "inout", "result"};
  char fits[64];
  for (int k = 0; k < p->narrays; k++)
    buf_printf(b, "array %s: %s %s\n", p->arrays[k].name, jitc_dtype_name(p->arrays[k].dtype),
               roles[p->arrays[k].role]);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, "param %s: %s%s%s\n", p->params[k].name, jitc_dtype_name(p->params[k].type),
               p->params[k].weak ? " weak" : "", fits_text(&p->params[k], fits, sizeof fits));
  for (int k = 0; k < p->nstmts; k++) {
    const IrStmt *s = &p->stmts[k];
    if (s->kind == IR_LET)
      buf_printf(b, "let t%d: %s = ", s->slot, jitc_dtype_name(p->temps[s->slot]));
    else if (s->kind == IR_REDUCE) {
      buf_printf(b, "reduce %s = %s:%s", p->arrays[s->slot].name, op_info[s->op].name,
                 jitc_dtype_name(reduce_acc(s->op, s->value->type)));
      dump_axes(b, s->axes);
      buf_puts(b, " over ");
    } else
      buf_printf(b, "store %s[i] = ", p->arrays[s->slot].name);
    dump_node(b, p, s->value);
    buf_putc(b, '\n');
  }
}
