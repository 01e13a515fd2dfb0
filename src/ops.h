/*
** ops.h -- the one table of operators and functions, shared by every stage.
**
** Each stage includes this file after defining the macros it needs (any of
** OP, FN and CAST; undefined ones are skipped), so that
** adding a math function is one line here plus its case in each back end.
**
**   OP(ID, NAME, ARITY, RULE)
**     ID     the enumerator, OP_<ID>
**     NAME   its spelling in --emit output (operators: the symbol)
**     ARITY  number of operands
**     RULE   how the checker types it (enum TypeRule in jitc_int.h):
**       R_ARITH    NumPy promotion; bool op bool stays bool (+ is or, * is and)
**       R_ARITH_NB NumPy promotion; bool operands are an error
**       R_TRUEDIV  NumPy promotion, then integers and bool become float64
**       R_BITWISE  integers or bool only (logical on bool)
**       R_SHIFT    integers only
**       R_COMPARE  NumPy promotion of the operands; result bool
**       R_SAME     one operand; result has its type (bool allowed)
**       R_SAME_NB  one operand; result has its type; bool is an error
**       R_FLOAT    all operands promoted; integers become float64; bool alone
**                  is an error (NumPy gives float16, which jitc lacks)
**       R_PROMOTE  all operands promoted; bool allowed
**       R_PRED     one operand of any type; result bool
**       R_WHERE    where(cond, x, y): cond any type (non-zero is true),
**                  result promote(x, y)
**       R_CAST     conversion to the type named by the function
**
**   FN(NAME, ID) maps a function name of the language to OP_<ID>; aliases
**   are more rows.  CAST(NAME, DTYPE) maps a cast function to OP_CAST.
*/

#ifdef OP
/* Binary operators. */
OP(ADD,       "+",  2, R_ARITH)
OP(SUB,       "-",  2, R_ARITH_NB)
OP(MUL,       "*",  2, R_ARITH)
OP(DIV,       "/",  2, R_TRUEDIV)
OP(FLOORDIV,  "//", 2, R_ARITH_NB)
OP(MOD,       "%",  2, R_ARITH_NB)
OP(POW,       "**", 2, R_ARITH_NB)
OP(AND,       "&",  2, R_BITWISE)
OP(OR,        "|",  2, R_BITWISE)
OP(XOR,       "^",  2, R_BITWISE)
OP(SHL,       "<<", 2, R_SHIFT)
OP(SHR,       ">>", 2, R_SHIFT)
OP(LT,        "<",  2, R_COMPARE)
OP(LE,        "<=", 2, R_COMPARE)
OP(GT,        ">",  2, R_COMPARE)
OP(GE,        ">=", 2, R_COMPARE)
OP(EQ,        "==", 2, R_COMPARE)
OP(NE,        "!=", 2, R_COMPARE)
/* Unary operators. */
OP(NEG,       "neg",    1, R_SAME_NB)
OP(INVERT,    "invert", 1, R_BITWISE)
/* Functions. */
OP(ABS,       "abs",        1, R_SAME)
OP(SQRT,      "sqrt",       1, R_FLOAT)
OP(CBRT,      "cbrt",       1, R_FLOAT)
OP(SQUARE,    "square",     1, R_SAME_NB)
OP(RECIPROCAL,"reciprocal", 1, R_SAME_NB)
OP(EXP,       "exp",        1, R_FLOAT)
OP(EXP2,      "exp2",       1, R_FLOAT)
OP(EXPM1,     "expm1",      1, R_FLOAT)
OP(LOG,       "log",        1, R_FLOAT)
OP(LOG2,      "log2",       1, R_FLOAT)
OP(LOG10,     "log10",      1, R_FLOAT)
OP(LOG1P,     "log1p",      1, R_FLOAT)
OP(SIN,       "sin",        1, R_FLOAT)
OP(COS,       "cos",        1, R_FLOAT)
OP(TAN,       "tan",        1, R_FLOAT)
OP(ASIN,      "arcsin",     1, R_FLOAT)
OP(ACOS,      "arccos",     1, R_FLOAT)
OP(ATAN,      "arctan",     1, R_FLOAT)
OP(SINH,      "sinh",       1, R_FLOAT)
OP(COSH,      "cosh",       1, R_FLOAT)
OP(TANH,      "tanh",       1, R_FLOAT)
OP(ASINH,     "arcsinh",    1, R_FLOAT)
OP(ACOSH,     "arccosh",    1, R_FLOAT)
OP(ATANH,     "arctanh",    1, R_FLOAT)
OP(FLOOR,     "floor",      1, R_SAME)
OP(CEIL,      "ceil",       1, R_SAME)
OP(TRUNC,     "trunc",      1, R_SAME)
OP(RINT,      "rint",       1, R_FLOAT)
OP(SIGN,      "sign",       1, R_SAME_NB)
OP(ATAN2,     "arctan2",    2, R_FLOAT)
OP(HYPOT,     "hypot",      2, R_FLOAT)
OP(FMOD,      "fmod",       2, R_ARITH_NB)
OP(COPYSIGN,  "copysign",   2, R_FLOAT)
OP(MINIMUM,   "minimum",    2, R_PROMOTE)
OP(MAXIMUM,   "maximum",    2, R_PROMOTE)
OP(FMIN,      "fmin",       2, R_PROMOTE)
OP(FMAX,      "fmax",       2, R_PROMOTE)
OP(CLIP,      "clip",       3, R_PROMOTE)
OP(FMA,       "fma",        3, R_FLOAT)
OP(WHERE,     "where",      3, R_WHERE)
OP(ISNAN,     "isnan",      1, R_PRED)
OP(ISINF,     "isinf",      1, R_PRED)
OP(ISFINITE,  "isfinite",   1, R_PRED)
OP(CAST,      "cast",       1, R_CAST)
#endif

#ifdef FN
FN("abs", ABS)  FN("absolute", ABS)  FN("fabs", ABS)
FN("sqrt", SQRT)  FN("cbrt", CBRT)  FN("square", SQUARE)
FN("reciprocal", RECIPROCAL)
FN("exp", EXP)  FN("exp2", EXP2)  FN("expm1", EXPM1)
FN("log", LOG)  FN("log2", LOG2)  FN("log10", LOG10)  FN("log1p", LOG1P)
FN("sin", SIN)  FN("cos", COS)  FN("tan", TAN)
FN("arcsin", ASIN)  FN("asin", ASIN)
FN("arccos", ACOS)  FN("acos", ACOS)
FN("arctan", ATAN)  FN("atan", ATAN)
FN("arctan2", ATAN2)  FN("atan2", ATAN2)
FN("sinh", SINH)  FN("cosh", COSH)  FN("tanh", TANH)
FN("arcsinh", ASINH)  FN("asinh", ASINH)
FN("arccosh", ACOSH)  FN("acosh", ACOSH)
FN("arctanh", ATANH)  FN("atanh", ATANH)
FN("hypot", HYPOT)
FN("power", POW)  FN("pow", POW)
FN("floor", FLOOR)  FN("ceil", CEIL)  FN("trunc", TRUNC)
FN("rint", RINT)  FN("round", RINT)
FN("sign", SIGN)
FN("minimum", MINIMUM)  FN("maximum", MAXIMUM)
FN("fmin", FMIN)  FN("fmax", FMAX)
FN("fmod", FMOD)  FN("copysign", COPYSIGN)
FN("clip", CLIP)  FN("where", WHERE)  FN("fma", FMA)
FN("isnan", ISNAN)  FN("isinf", ISINF)  FN("isfinite", ISFINITE)
#endif

#ifdef CAST
CAST("float32", JITC_FLOAT32)  CAST("f32", JITC_FLOAT32)
CAST("float64", JITC_FLOAT64)  CAST("f64", JITC_FLOAT64)
CAST("int32", JITC_INT32)      CAST("i32", JITC_INT32)
CAST("int64", JITC_INT64)      CAST("i64", JITC_INT64)
CAST("bool", JITC_BOOL)
#endif
