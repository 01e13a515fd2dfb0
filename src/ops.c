/*
** ops.c -- the operator table of ops.h as data: op_info[] for every stage,
** and the lookup of function names.
*/
#include "jitc_int.h"

#include <math.h>
#include <string.h>

/* The LIBM column: its name as a string (NULL for NOLIB) and the functions
** themselves, double and float, of the row's arity. */
#define NOLIB 0
#define NOLIBf 0
#define LIBM_1(d, f) {.d1 = d, .f1 = f}
#define LIBM_2(d, f) {.d2 = d, .f2 = f}
#define LIBM_3(d, f) {.d3 = d, .f3 = f}

const OpInfo op_info[OP_COUNT] = {
#define OP(id, name, kind, arity, spell, prec, rule, libm, llvm, flags) \
  {name, K_##kind, arity, spell, prec, rule, #libm[0] == 'N' ? NULL : #libm, llvm, flags, \
   LIBM_##arity(libm, libm##f)},
#include "ops.h"
#undef OP
};

int op_lookup_function(const char *name, size_t len, jitc_dtype *cast_to) {
  static const struct {
    const char *name;
    int op;
  } fns[] = {
#define FN(name, id) {name, OP_##id},
#include "ops.h"
#undef FN
  };
  /* A function's own name is its row's NAME; FN rows are its aliases.  The
  ** second result of a two-result function is no name (F_SECOND). */
  for (int op = 0; op < OP_COUNT; op++)
    if ((op_info[op].kind == K_FUNCTION || op_info[op].kind == K_REDUCE) &&
        !(op_info[op].flags & F_SECOND) && strlen(op_info[op].name) == len &&
        memcmp(op_info[op].name, name, len) == 0)
      return op;
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
    if (strlen(fns[k].name) == len && memcmp(fns[k].name, name, len) == 0)
      return fns[k].op;
  /* A type's name or short name is its cast. */
  for (int t = 0; t < JITC_NDTYPES; t++) {
    const TypeInfo *ti = &type_info[t];
    if ((strlen(ti->name) == len && memcmp(ti->name, name, len) == 0) ||
        (strlen(ti->shortname) == len && memcmp(ti->shortname, name, len) == 0)) {
      if (cast_to)
        *cast_to = (jitc_dtype)t;
      return OP_CAST;
    }
  }
  return -1;
}
