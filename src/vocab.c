/*
** vocab.c -- the words every stage shares: the table of types (types.h)
** as data, the names and sizes of the dtypes and their spellings, and the
** names and exit codes of the statuses.  It sits below all
** the stages and calls none of them.
*/
#include "jitc_int.h"

#include <stdio.h>
#include <string.h>

const TypeInfo type_info[JITC_NDTYPES] = {
#define TYPE(id, name, shortname, cname, kind, size, chr, descr, ctype, cuda, llvm, lo, hi) \
  [JITC_##id] = {name, shortname, #cname, kind, size, chr, descr, #ctype, cuda, llvm, lo, hi},
#include "types.h"
#undef TYPE
};

const char *jitc_dtype_name(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES ? type_info[t].name : "unknown";
}

size_t jitc_dtype_size(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES ? (size_t)type_info[t].size : 0;
}

const char *jitc_dtype_typestr(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES ? type_info[t].descr : NULL;
}

static bool spelled(const char *s, const char *name, size_t len) {
  return strlen(s) == len && memcmp(s, name, len) == 0;
}

/* NumPy's code of a type: its kind's letter and its size ("i4", "c8"), as
** np.dtype() reads it; bool is "b1".  False for a type without one. */
static bool numpy_code(jitc_dtype t, char out[8]) {
  static const char kinds[] = {[T_BOOL] = 'b', [T_SINT] = 'i', [T_UINT] = 'u', [T_FLOAT] = 'f',
                               [T_COMPLEX] = 'c'};
  const TypeInfo *ti = &type_info[t];
  if (ti->descr[1] == 'V') /* a type NumPy has no code for (bfloat16: "<V2") */
    return false;
  snprintf(out, 8, "%c%d", kinds[ti->kind], ti->size);
  return true;
}

int dtype_lookup(const char *name, size_t len, bool *ambiguous) {
  static const struct {
    const char *name;
    jitc_dtype t;
  } aliases[] = {
#define ALIAS(name, id) {name, JITC_##id},
#include "types.h"
#undef ALIAS
  };
  int found = -1, coded = -1;
  char code[8];
  if (ambiguous)
    *ambiguous = false;
  for (int t = 0; t < JITC_NDTYPES; t++) {
    const TypeInfo *ti = &type_info[t];
    if (spelled(ti->name, name, len) || spelled(ti->shortname, name, len) ||
        (len == 1 && name[0] == ti->chr))
      found = t;
    if (numpy_code((jitc_dtype)t, code) && spelled(code, name, len))
      coded = t;
  }
  for (size_t k = 0; found < 0 && k < sizeof aliases / sizeof aliases[0]; k++)
    if (spelled(aliases[k].name, name, len))
      found = aliases[k].t;
  /* NumPy's code wins over the language's short name of another type:
  ** "i8" is int64 to np.dtype() and in --dtype, int8 only as a cast. */
  if (found >= 0 && coded >= 0 && found != coded && ambiguous)
    *ambiguous = true;
  return coded >= 0 ? coded : found;
}

jitc_status jitc_dtype_parse(const char *name, jitc_dtype *out) {
  int t = name ? dtype_lookup(name, strlen(name), NULL) : -1;
  if (t < 0 || !out)
    return JITC_E_USAGE;
  *out = (jitc_dtype)t;
  return JITC_OK;
}

bool dtype_is_int(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES && (type_info[t].kind == T_SINT || type_info[t].kind == T_UINT);
}
bool dtype_is_float(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES && type_info[t].kind == T_FLOAT;
}
bool dtype_is_complex(jitc_dtype t) {
  return (unsigned)t < JITC_NDTYPES && type_info[t].kind == T_COMPLEX;
}

/* The complex types and their parts pair by size: a complex type is two of
** the float type half its size (types.h). */
jitc_dtype dtype_part(jitc_dtype t) {
  if (!dtype_is_complex(t)) return t;
  for (int f = 0; f < JITC_NDTYPES; f++)
    if (type_info[f].kind == T_FLOAT && 2 * type_info[f].size == type_info[t].size)
      return (jitc_dtype)f;
  return t;
}
jitc_dtype dtype_complex_of(jitc_dtype t) {
  if (dtype_is_complex(t)) return t;
  int size = type_info[t].size < 4 ? 4 : type_info[t].size;
  for (int c = 0; c < JITC_NDTYPES; c++)
    if (type_info[c].kind == T_COMPLEX && type_info[c].size == 2 * size)
      return (jitc_dtype)c;
  return t;
}

const char *jitc_status_name(jitc_status s) {
  switch (s) {
  case JITC_OK: return "ok";
  case JITC_E_USAGE: return "usage error";
  case JITC_E_PROGRAM: return "program error";
  case JITC_E_INPUT: return "input error";
  case JITC_E_UNAVAILABLE: return "target unavailable";
  case JITC_E_INTERNAL: return "internal error";
  case JITC_E_OUTPUT: return "output error";
  case JITC_E_NOMEM: return "out of memory";
  }
  return "unknown status";
}

int jitc_exit_code(jitc_status s) {
  switch (s) {
  case JITC_OK: return 0;
  case JITC_E_USAGE: return 64;
  case JITC_E_PROGRAM: return 65;
  case JITC_E_INPUT: return 66;
  case JITC_E_UNAVAILABLE: return 69;
  case JITC_E_OUTPUT: return 73;
  case JITC_E_NOMEM: return 71;
  case JITC_E_INTERNAL: return 70;
  }
  return 70;
}
