/*
** validate_check.c -- the IR validator (src/validate.c) on programs built by
** hand: a well-formed one passes, and each malformed one, which the checker
** never produces, is refused with JITC_E_INTERNAL and its reason.  A program
** sharing one node many times over must take linear time (the validator
** visits each node once).  Built by tests/t_validate.sh against the
** library's objects, for the internal names.
** Prints "ok NAME" or "FAIL NAME: why" per case; exits 1 on a failure.
*/
#include "jitc_int.h"

#include <stdio.h>
#include <string.h>

static int fails;

/* The program of one test: arrays a (float64, in), b (int32, in),
** m (bool, in), c (float64, out); temporaries t0 (float64), t1 (int32). */
static IrArray arrays[] = {
    {"a", JITC_INPUT, JITC_FLOAT64, true},
    {"b", JITC_INPUT, JITC_INT32, true},
    {"m", JITC_INPUT, JITC_BOOL, true},
    {"c", JITC_OUTPUT, JITC_FLOAT64, true},
};
static jitc_dtype temps[] = {JITC_FLOAT64, JITC_INT32};
static IrParam params[] = {{"s", JITC_FLOAT64, false, false}};

static Node leaf(NodeKind kind, jitc_dtype type, int slot) {
  return (Node){.kind = kind, .type = type, .slot = slot};
}

static Node op(OpId id, jitc_dtype type, int nargs, Node *x, Node *y, Node *z) {
  return (Node){.kind = N_OP, .op = id, .type = type, .nargs = nargs, .args = {x, y, z}};
}

/* Validates `nstmts` statements; `want` NULL: must pass, else the reason
** the message must contain. */
static void expect(jitc_context *ctx, const char *name, IrStmt *stmts, int nstmts,
                   const char *want) {
  Program p = {arrays, 4, params, 1, temps, 2, stmts, nstmts, NULL, 0};
  jitc_status st = validate_program(ctx, &p);
  const char *msg = jitc_errmsg(ctx);
  bool ok = want ? st == JITC_E_INTERNAL && strstr(msg, want) : st == JITC_OK;
  if (ok) {
    printf("ok validate.%s%s%s%s\n", name, want ? " (" : "", want ? want : "", want ? ")" : "");
  } else {
    printf("FAIL validate.%s: status %d, message '%s', expected %s\n", name, (int)st, msg,
           want ? want : "none");
    fails++;
  }
}

/* c = one expression of type float64, through t0 as the checker writes it. */
static void expect_value(jitc_context *ctx, const char *name, Node *value, const char *want) {
  Node t0 = leaf(N_TEMP, JITC_FLOAT64, 0);
  IrStmt s[2] = {{IR_LET, 0, value, 0}, {IR_STORE, 3, &t0, 0}};
  expect(ctx, name, s, 2, want);
}

/* Two reductions of a (float64) into results r1, r2 over axes x1, x2 (NULL:
** every element), Program.by_axis as given; `extra`, if not NULL, a third
** statement (an output c). */
static void expect_axes(jitc_context *ctx, const char *name, OpId op2, const IrAxes *x1,
                        const IrAxes *x2, bool by_axis, IrStmt *extra, const char *want) {
  static IrArray ra[] = {{"a", JITC_INPUT, JITC_FLOAT64, true},
                         {"r1", JITC_RESULT, JITC_FLOAT64, true},
                         {"r2", JITC_RESULT, JITC_FLOAT64, true},
                         {"c", JITC_OUTPUT, JITC_FLOAT64, true}};
  ra[2].dtype = op2 == OP_ARGMAX ? JITC_INT64 : JITC_FLOAT64;
  static Node a = {.kind = N_LOAD, .type = JITC_FLOAT64, .slot = 0};
  IrStmt s[3] = {{IR_REDUCE, 1, &a, 0, OP_SUM, x1}, {IR_REDUCE, 2, &a, 0, op2, x2}};
  if (extra)
    s[2] = *extra;
  Program p = {ra, 4, params, 1, temps, 2, s, extra ? 3 : 2, NULL, 0, 2, 0};
  p.by_axis = by_axis;
  jitc_status st = validate_program(ctx, &p);
  const char *msg = jitc_errmsg(ctx);
  bool ok = want ? st == JITC_E_INTERNAL && strstr(msg, want) : st == JITC_OK;
  printf("%s validate.%s%s%s%s%s\n", ok ? "ok" : "FAIL", name, want ? " (" : "",
         want ? want : "", want ? ")" : "", ok ? "" : msg);
  fails += !ok;
}

/* Reductions over axes (IrAxes): one set per program, well-formed axes,
** no element index beside them. */
static void axes_cases(jitc_context *ctx) {
  IrAxes one = {true, true, false, 1, {0}}, one_kd = {true, false, true, 1, {0}};
  IrAxes two = {true, true, false, 2, {1, -1}}, other = {true, false, false, 1, {1}};
  IrAxes twice = {true, true, false, 2, {1, 1}}, far = {true, false, false, 1, {64}};
  IrAxes kd_all = {false, false, true, 0, {0}}, none = {false, false, false, 0, {0}};
  expect_axes(ctx, "axes_well_formed", OP_MAX, &one, &one_kd, true, NULL, NULL);
  expect_axes(ctx, "axes_keepdims_all", OP_MAX, NULL, &kd_all, true, NULL, NULL);
  expect_axes(ctx, "axes_two_sets", OP_MAX, &one, &other, true, NULL,
              "reductions over different sets of axes");
  expect_axes(ctx, "axes_and_whole", OP_MAX, &one, NULL, true, NULL,
              "reductions over different sets of axes");
  expect_axes(ctx, "axes_without_by_axis", OP_MAX, &one, &one, false, NULL, "without by_axis");
  expect_axes(ctx, "by_axis_without_axes", OP_MAX, NULL, NULL, true, NULL,
              "by_axis without a reduction over axes");
  expect_axes(ctx, "axes_argmax_tuple", OP_ARGMAX, &two, &two, true, NULL,
              "a tuple of axes for argmin or argmax");
  expect_axes(ctx, "axes_twice", OP_MAX, &twice, &twice, true, NULL, "an axis given twice");
  expect_axes(ctx, "axes_out_of_bounds", OP_MAX, &far, &far, true, NULL,
              "an axis out of every shape's bounds");
  expect_axes(ctx, "axes_empty", OP_MAX, &none, &none, true, NULL, "malformed");
  static Node idx = {.kind = N_INDEX, .type = JITC_INT64};
  static Node fi = {.kind = N_OP, .op = OP_CAST, .type = JITC_FLOAT64, .nargs = 1, .args = {&idx}};
  IrStmt store = {IR_STORE, 3, &fi, 0, OP_COUNT, NULL};
  expect_axes(ctx, "axes_beside_index", OP_MAX, &one, &one, true, &store,
              "the element index beside a reduction over axes");
  static Node a = {.kind = N_LOAD, .type = JITC_FLOAT64, .slot = 0};
  IrStmt bad = {IR_STORE, 3, &a, 0, OP_COUNT, &one};
  expect_axes(ctx, "axes_on_store", OP_MAX, &one, &one, true, &bad,
              "axes on a statement that does not reduce");
}

int main(void) {
  jitc_context *ctx = jitc_context_new();
  if (!ctx) {
    printf("FAIL validate: no context\n");
    return 1;
  }
  Node a = leaf(N_LOAD, JITC_FLOAT64, 0), b = leaf(N_LOAD, JITC_INT32, 1);
  Node m = leaf(N_LOAD, JITC_BOOL, 2), s = leaf(N_PARAM, JITC_FLOAT64, 0);
  Node one = {.kind = N_CONST, .type = JITC_FLOAT64, .k.f = 1.0};
  Node one_i = {.kind = N_CONST, .type = JITC_INT32, .k.i = 1};
  Node idx = leaf(N_INDEX, JITC_INT64, 0);

  /* Well-formed: c = where(m, a + s, sqrt(f64(b))) + f64(i). */
  Node bf = op(OP_CAST, JITC_FLOAT64, 1, &b, NULL, NULL);
  Node sq = op(OP_SQRT, JITC_FLOAT64, 1, &bf, NULL, NULL);
  Node as = op(OP_ADD, JITC_FLOAT64, 2, &a, &s, NULL);
  Node w = op(OP_WHERE, JITC_FLOAT64, 3, &m, &as, &sq);
  Node fi = op(OP_CAST, JITC_FLOAT64, 1, &idx, NULL, NULL);
  Node good = op(OP_ADD, JITC_FLOAT64, 2, &w, &fi, NULL);
  expect_value(ctx, "well_formed", &good, NULL);

  /* An operand of another type than its op's: int32 + float64 uncast. */
  Node mixed = op(OP_ADD, JITC_FLOAT64, 2, &a, &one_i, NULL);
  expect_value(ctx, "operand_type", &mixed, "operands of different types");
  Node deep = op(OP_MUL, JITC_FLOAT64, 2, &good, &mixed, NULL);
  expect_value(ctx, "operand_type_deep", &deep, "operands of different types");
  Node res = op(OP_ADD, JITC_FLOAT32, 2, &a, &one, NULL);
  Node res64 = op(OP_CAST, JITC_FLOAT64, 1, &res, NULL, NULL);
  expect_value(ctx, "result_type", &res64, "result type differs from operands");
  Node sqi = op(OP_SQRT, JITC_INT32, 1, &b, NULL, NULL);
  Node sqf = op(OP_CAST, JITC_FLOAT64, 1, &sqi, NULL, NULL);
  expect_value(ctx, "float_function_of_int", &sqf, "operands not float");
  Node shf = op(OP_SHL, JITC_FLOAT64, 2, &a, &a, NULL);
  expect_value(ctx, "shift_of_float", &shf, "operands not integer");
  Node bsub = op(OP_SUB, JITC_BOOL, 2, &m, &m, NULL);
  Node bsubf = op(OP_CAST, JITC_FLOAT64, 1, &bsub, NULL, NULL);
  expect_value(ctx, "bool_subtraction", &bsubf, "bool operands");
  Node wc = op(OP_WHERE, JITC_FLOAT64, 3, &a, &a, &a);
  expect_value(ctx, "where_condition", &wc, "condition not bool");
  Node cmp = op(OP_LT, JITC_FLOAT64, 2, &a, &a, NULL);
  expect_value(ctx, "comparison_result", &cmp, "result not bool");
  /* ldexp and the two-result functions: float32 or float64 operands, an
  ** int32 exponent, frexp's exponent int32. */
  Node ld = op(OP_LDEXP, JITC_FLOAT64, 2, &a, &b, NULL);
  Node fx = op(OP_FREXP_EXP, JITC_INT32, 1, &ld, NULL, NULL);
  Node fxf = op(OP_CAST, JITC_FLOAT64, 1, &fx, NULL, NULL);
  Node mi = op(OP_MODF_INT, JITC_FLOAT64, 1, &a, NULL, NULL);
  Node mixed_ok = op(OP_ADD, JITC_FLOAT64, 2, &fxf, &mi, NULL);
  expect_value(ctx, "mixed_functions", &mixed_ok, NULL);
  Node bl = op(OP_CAST, JITC_INT64, 1, &b, NULL, NULL);
  Node ld64 = op(OP_LDEXP, JITC_FLOAT64, 2, &a, &bl, NULL);
  expect_value(ctx, "ldexp_exponent", &ld64, "exponent not int32");
  Node ldr = op(OP_LDEXP, JITC_FLOAT32, 2, &a, &b, NULL);
  Node ldrf = op(OP_CAST, JITC_FLOAT64, 1, &ldr, NULL, NULL);
  expect_value(ctx, "ldexp_result", &ldrf, "result type differs from operands");
  Node fxl = op(OP_FREXP_EXP, JITC_INT64, 1, &a, NULL, NULL);
  Node fxlf = op(OP_CAST, JITC_FLOAT64, 1, &fxl, NULL, NULL);
  expect_value(ctx, "frexp_exponent", &fxlf, "result not int32");
  Node a16 = op(OP_CAST, JITC_FLOAT16, 1, &a, NULL, NULL);
  Node fm16 = op(OP_FREXP, JITC_FLOAT16, 1, &a16, NULL, NULL);
  Node fm16f = op(OP_CAST, JITC_FLOAT64, 1, &fm16, NULL, NULL);
  expect_value(ctx, "frexp_of_float16", &fm16f, "operand not float32 or float64");
  Node arity = op(OP_ADD, JITC_FLOAT64, 1, &a, NULL, NULL);
  expect_value(ctx, "operand_count", &arity, "wrong operand count");
  Node missing = op(OP_ADD, JITC_FLOAT64, 2, &a, NULL, NULL);
  expect_value(ctx, "missing_operand", &missing, "missing operand");
  Node unknown = op((OpId)OP_COUNT, JITC_FLOAT64, 1, &a, NULL, NULL);
  expect_value(ctx, "unknown_op", &unknown, "unknown op");
  Node badtype = {.kind = N_CONST, .type = (jitc_dtype)JITC_NDTYPES};
  expect_value(ctx, "unknown_type", &badtype, "node of unknown type");
  Node idx32 = leaf(N_INDEX, JITC_INT32, 0);
  Node idxf = op(OP_CAST, JITC_FLOAT64, 1, &idx32, NULL, NULL);
  expect_value(ctx, "index_type", &idxf, "index not int64");

  /* References to the declarations. */
  Node a32 = leaf(N_LOAD, JITC_INT32, 0);
  Node a32f = op(OP_CAST, JITC_FLOAT64, 1, &a32, NULL, NULL);
  expect_value(ctx, "load_type", &a32f, "load of an unknown array, or with the wrong type");
  Node far = leaf(N_LOAD, JITC_FLOAT64, 9);
  expect_value(ctx, "load_slot", &far, "load of an unknown array");
  Node c = leaf(N_LOAD, JITC_FLOAT64, 3);
  expect_value(ctx, "load_of_output", &c, "load of an output array");
  Node p9 = leaf(N_PARAM, JITC_FLOAT64, 9);
  expect_value(ctx, "param_slot", &p9, "unknown parameter");
  Node t1 = leaf(N_TEMP, JITC_FLOAT64, 1);
  expect_value(ctx, "temp_type", &t1, "unknown temporary, or with the wrong type");
  Node t0self = leaf(N_TEMP, JITC_FLOAT64, 0);
  expect_value(ctx, "temp_before_let", &t0self, "temporary read before its let");

  /* Statements. */
  Node t0 = leaf(N_TEMP, JITC_FLOAT64, 0);
  {
    IrStmt st[] = {{IR_LET, 0, &a, 0}, {IR_STORE, 3, &b, 0}};
    expect(ctx, "store_type", st, 2, "stored value's type differs from the array's");
  }
  {
    IrStmt st[] = {{IR_LET, 0, &a, 0}, {IR_STORE, 0, &t0, 0}};
    expect(ctx, "store_to_input", st, 2, "store to an input array");
  }
  {
    IrStmt st[] = {{IR_LET, 0, &a, 0}, {IR_STORE, 7, &t0, 0}};
    expect(ctx, "store_slot", st, 2, "store to an unknown array");
  }
  {
    IrStmt st[] = {{IR_LET, 0, &a, 0}, {IR_LET, 0, &one, 0}};
    expect(ctx, "let_twice", st, 2, "temporary assigned twice");
  }
  {
    IrStmt st[] = {{IR_LET, 1, &a, 0}};
    expect(ctx, "let_type", st, 1, "temporary's value of another type");
  }
  {
    IrStmt st[] = {{IR_LET, 0, NULL, 0}};
    expect(ctx, "no_value", st, 1, "missing value");
  }
  {
    /* An inout array read after a store: back ends load arrays only before
    ** any store to them, so the checker reads a temporary instead. */
    arrays[0].role = JITC_INOUT;
    IrStmt st[] = {{IR_LET, 0, &one, 0}, {IR_STORE, 0, &t0, 0}, {IR_STORE, 3, &a, 0}};
    expect(ctx, "load_after_store", st, 3, "load of an array after a store to it");
    IrStmt ok[] = {{IR_LET, 0, &a, 0}, {IR_STORE, 0, &t0, 0}, {IR_STORE, 3, &t0, 0}};
    expect(ctx, "inout_well_formed", ok, 3, NULL);
    arrays[0].role = JITC_INPUT;
  }

  /* x1 = x0 + x0, x2 = x1 + x1, ...: 2^200 paths, 200 nodes. */
  {
    static Node chain[201];
    chain[0] = a;
    for (int k = 1; k <= 200; k++)
      chain[k] = op(OP_ADD, JITC_FLOAT64, 2, &chain[k - 1], &chain[k - 1], NULL);
    double t0ms = now_ms();
    expect_value(ctx, "shared_nodes", &chain[200], NULL);
    double ms = now_ms() - t0ms;
    if (ms > 1000) {
      printf("FAIL validate.shared_nodes_time: %.0f ms\n", ms);
      fails++;
    } else {
      printf("ok validate.shared_nodes_time (%.3f ms)\n", ms);
    }
    chain[0] = b; /* the malformed leaf is reached through the shared nodes */
    expect_value(ctx, "shared_nodes_bad", &chain[200], "result type differs from operands");
  }
  axes_cases(ctx);
  jitc_context_free(ctx);
  return fails ? 1 : 0;
}
