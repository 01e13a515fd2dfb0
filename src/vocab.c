/*
** vocab.c -- the words every stage shares: the names and sizes of the
** dtypes and the names and exit codes of the statuses.  It sits below all
** the stages and calls none of them.
*/
#include "jitc_int.h"

#include <string.h>

const char *jitc_dtype_name(jitc_dtype t) {
  static const char *const names[] = {"bool", "int32", "int64", "float32", "float64"};
  return (unsigned)t < JITC_NDTYPES ? names[t] : "unknown";
}

size_t jitc_dtype_size(jitc_dtype t) {
  static const size_t sizes[] = {1, 4, 8, 4, 8};
  return (unsigned)t < JITC_NDTYPES ? sizes[t] : 0;
}

jitc_status jitc_dtype_parse(const char *name, jitc_dtype *out) {
  static const struct {
    const char *name;
    jitc_dtype t;
  } names[] = {
      {"bool", JITC_BOOL},       {"b1", JITC_BOOL},         {"int32", JITC_INT32},
      {"i32", JITC_INT32},       {"i4", JITC_INT32},        {"int64", JITC_INT64},
      {"i64", JITC_INT64},       {"i8", JITC_INT64},        {"int", JITC_INT64},
      {"float32", JITC_FLOAT32}, {"f32", JITC_FLOAT32},     {"f4", JITC_FLOAT32},
      {"float64", JITC_FLOAT64}, {"f64", JITC_FLOAT64},     {"f8", JITC_FLOAT64},
      {"float", JITC_FLOAT64},   {"double", JITC_FLOAT64},
  };
  for (size_t k = 0; name && k < sizeof names / sizeof names[0]; k++)
    if (!strcmp(name, names[k].name)) {
      *out = names[k].t;
      return JITC_OK;
    }
  return JITC_E_USAGE;
}

bool dtype_is_int(jitc_dtype t) { return t == JITC_INT32 || t == JITC_INT64; }
bool dtype_is_float(jitc_dtype t) { return t == JITC_FLOAT32 || t == JITC_FLOAT64; }

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
