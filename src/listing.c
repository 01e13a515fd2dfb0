/*
** listing.c -- the language's vocabulary as JSON, for the tools that
** generate programs or bind values and must not keep a copy of the tables:
** `jitc --list`, the differential fuzzer, the Python package.  It reads
** types.h, ops.h and the statuses, and writes them once per process.
*/
#include "jitc_int.h"

#include <pthread.h>
#include <stdlib.h>

static const char *kind_name(TypeKind k) {
  static const char *const names[] = {[T_BOOL] = "bool", [T_SINT] = "signed",
                                      [T_UINT] = "unsigned", [T_FLOAT] = "float",
                                      [T_COMPLEX] = "complex"};
  return names[k];
}

/* The RULE column's names, as ops.h's comment spells them (R_ARITH_NB is
** "arith_nb"). */
static const char *rule_name(TypeRule r) {
  static const char *const names[] = {
      [R_ARITH] = "arith",   [R_ARITH_NB] = "arith_nb", [R_TRUEDIV] = "truediv",
      [R_BITWISE] = "bitwise", [R_SHIFT] = "shift",     [R_COMPARE] = "compare",
      [R_SAME] = "same",     [R_SAME_NB] = "same_nb",   [R_FLOAT] = "float",
      [R_PROMOTE] = "promote", [R_PRED] = "pred",       [R_WHERE] = "where",
      [R_CAST] = "cast",     [R_LDEXP] = "ldexp",       [R_EXPONENT] = "exponent",
      [R_PART] = "part",     [R_CONJ] = "conj",         [R_ANGLE] = "angle",
      [R_COMPLEX] = "complex", [R_LIKE] = "like",
      [R_RSUM] = "rsum",     [R_RSAME] = "rsame",
      [R_RMEAN] = "rmean",   [R_RBOOL] = "rbool",       [R_RARG] = "rarg"};
  return names[r];
}

static const char *op_kind_name(OpKind k) {
  static const char *const names[] = {[K_OPERATOR] = "operator", [K_FUNCTION] = "function",
                                      [K_CAST] = "cast", [K_REDUCE] = "reduction"};
  return names[k];
}

/* Names and spellings here are identifiers and operator symbols: no
** character needs escaping in JSON. */
static void write_types(Buf *b) {
  buf_puts(b, "\"types\": [");
  for (int t = 0; t < JITC_NDTYPES; t++) {
    const TypeInfo *ti = &type_info[t];
    buf_printf(b, "%s\n  {\"dtype\": %d, \"name\": \"%s\", \"short\": \"%s\", \"kind\": \"%s\", "
               "\"size\": %d, \"char\": \"%c\", \"typestr\": \"%s\"",
               t ? "," : "", t, ti->name, ti->shortname, kind_name(ti->kind), ti->size, ti->chr,
               ti->descr);
    if (ti->kind == T_SINT || ti->kind == T_UINT || ti->kind == T_BOOL)
      buf_printf(b, ", \"min\": %lld, \"max\": %llu", (long long)ti->lo,
                 (unsigned long long)ti->hi);
    buf_putc(b, '}');
  }
  buf_puts(b, "\n]");
}

static void write_ops(Buf *b) {
  buf_puts(b, "\"ops\": [");
  for (int op = 0; op < OP_COUNT; op++) {
    const OpInfo *o = &op_info[op];
    buf_printf(b, "%s\n  {\"name\": \"%s\", \"kind\": \"%s\", \"arity\": %d, \"rule\": \"%s\"",
               op ? "," : "", o->name, op_kind_name(o->kind), o->arity, rule_name(o->rule));
    if (o->spell)
      buf_printf(b, ", \"spelling\": \"%s\"", o->spell);
    if (o->libm)
      buf_printf(b, ", \"libm\": \"%s\"", o->libm);
    /* One LLVM instruction computes it: exactly rounded, where a C library
    ** function without one is allowed ulps (docs/language.md, "Accuracy"). */
    if (o->llvm)
      buf_printf(b, ", \"llvm\": \"%s\"", o->llvm);
    /* A two-result function's second result is an op of the IR, no name. */
    if (o->flags & F_TWO)
      buf_puts(b, ", \"results\": 2");
    if (o->flags & F_SECOND)
      buf_printf(b, ", \"second_result_of\": \"%s\"", op_info[op - 1].name);
    buf_printf(b, ", \"augmented\": %s, \"integer_identity\": %s, \"no_identity\": %s, "
               "\"real_only\": %s, \"nan_argument\": %s, \"step\": %s}",
               o->flags & F_AUG ? "true" : "false", o->flags & F_INT_ID ? "true" : "false",
               o->flags & F_NOID ? "true" : "false", o->flags & F_REAL ? "true" : "false",
               o->flags & F_NANARG ? "true" : "false", o->flags & F_STEP ? "true" : "false");
  }
  buf_puts(b, "\n],\n\"aliases\": {");
  int k = 0;
#define FN(alias, id) buf_printf(b, "%s\"%s\": \"%s\"", k++ ? ", " : "", alias, op_info[OP_##id].name);
#include "ops.h"
#undef FN
  buf_puts(b, "}");
}

static void write_statuses(Buf *b) {
  buf_puts(b, "\"statuses\": [");
  for (int s = 0; s <= JITC_E_NOMEM; s++)
    buf_printf(b, "%s\n  {\"status\": %d, \"name\": \"%s\", \"exit\": %d}", s ? "," : "", s,
               jitc_status_name((jitc_status)s), jitc_exit_code((jitc_status)s));
  buf_puts(b, "\n]");
}

static char *listing;

static void make_listing(void) {
  Buf b = {0};
  buf_puts(&b, "{\"version\": \"" JITC_VERSION "\",\n");
  write_types(&b);
  buf_puts(&b, ",\n");
  write_ops(&b);
  buf_puts(&b, ",\n");
  write_statuses(&b);
  buf_puts(&b, "}\n");
  listing = b.s; /* kept for the process's life, as the stage lists are */
}

const char *jitc_vocabulary(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, make_listing);
  return listing ? listing : "{}";
}
