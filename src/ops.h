/*
** ops.h -- the one table of operators and functions, shared by every stage.
**
** Each file includes this one after defining the macros it needs (OP,
** FN or both; undefined ones are skipped) and reads the columns it
** cares about: the lexer the spellings, the parser the precedences, the
** checker the typing rules, the back ends the library names and flags.
** A plain math function that libm and NumPy both have is one OP row here;
** every stage takes it from the table.
**
**   OP(ID, NAME, KIND, ARITY, SPELL, PREC, RULE, LIBM, LLVM, FLAGS)
**     ID     the enumerator, OP_<ID>
**     NAME   its spelling in --emit output: the symbol of a binary
**            operator, the canonical name of a function
**     KIND   OPERATOR (written with a symbol), FUNCTION (called by name),
**            CAST (a conversion, called by the name of its type), REDUCE
**            (a reduction over all elements, called by name: the whole
**            value of an assignment, `s = sum(a * b)`)
**     ARITY  number of operands
**     SPELL  an operator's symbol in the source (NULL for functions)
**     PREC   a binary operator's precedence level (P_UNARY for unary
**            operators, P_NONE for functions), loosest to tightest:
**            P_COMPARE < P_BITOR < P_BITXOR < P_BITAND < P_SHIFT < P_SUM <
**            P_TERM < P_UNARY < P_POWER
**     RULE   how the checker types it (enum TypeRule in jitc_int.h):
**       R_ARITH    NumPy promotion; bool op bool stays bool (+ is or, * is and)
**       R_ARITH_NB NumPy promotion; bool operands are an error
**       R_TRUEDIV  NumPy promotion, then integers and bool become float64
**       R_BITWISE  integers or bool only (logical on bool)
**       R_SHIFT    integers only
**       R_COMPARE  NumPy promotion of the operands; result bool
**       R_SAME     one operand; result has its type (bool allowed)
**       R_SAME_NB  one operand; result has its type; bool is an error
**       R_FLOAT    all operands promoted; integers and bool become the least
**                  float that holds each of them (int8: float16, int16:
**                  float32, int32: float64; int8 with uint8: float16, though
**                  they promote to int16), as NumPy's loops choose; a 16-bit
**                  float computes in float32 and rounds back
**       R_PROMOTE  all operands promoted; bool allowed
**       R_PRED     one operand of any type; result bool
**       R_WHERE    where(cond, x, y): cond any type (non-zero is true),
**                  result promote(x, y)
**       R_CAST     conversion to the type named by the function
**       R_LDEXP    ldexp(x, n): x's float type as NumPy's loops choose it (the
**                  least float type holding x; a Python int x is float16
**                  next to an integer array n, else float64), n any integer
**                  but uint64 (bool too), converted to int32 in the IR (an
**                  int64 or uint32 n clamped to int32's range first, as
**                  NumPy's int64 loop does); result x's type
**       R_EXPONENT one float operand (as R_FLOAT); result int32 (frexp's exponent)
**       R_PART     real(z), imag(z): of a complex operand its part's float
**                  type; a real operand is its own real part and has a zero
**                  imaginary part of its type (the IR has the op on complex
**                  operands only); of a weak value a weak value, as Python's
**                  z.real (True.real is the int 1)
**       R_CONJ     conjugate(z): a complex operand's type; a real operand is
**                  its own conjugate (bool becomes int8, NumPy's loop), no op
**       R_ANGLE    angle(z): atan2(imag, real) in the part's float type; of a
**                  real x, arctan2(0, x) typed as NumPy's np.angle does it
**       R_COMPLEX  complex(re, im): both promoted to a float type (R_FLOAT; a
**                  16-bit float to float32), the result the complex type of
**                  that width; complex operands are an error; of weak values
**                  a weak value, as Python's complex(re, im)
**       R_LIKE     copy(x), ones_like(x) (numexpr's functions, NumPy's
**                  np.copy and np.ones_like): x's type, strong (of a weak
**                  value its default type: copy(2) is int64); no op of the
**                  IR: copy(x) is x, ones_like(x) the constant 1 of x's
**                  type, x giving only the shape, as every array the
**                  program reads does
**     and for reductions, NumPy's result over elements of type t (reduce.c):
**       R_RSUM     bool and integers accumulate in int64; floats keep t
**       R_RSAME    t itself
**       R_RMEAN    bool and integers become float64; floats keep t
**       R_RBOOL    non-zero is true; result bool
**       R_RARG     the index of the first extreme element: int64
**     LIBM   the C library function computing it on float64 (float32:
**            the same name with "f"), as an identifier; NOLIB where none.
**            A function the back ends have no special case for is this
**            call, on every target (cpu: one lane at a time unless the
**            vector math library has it).
**     LLVM   the LLVM intrinsic computing it on floats, or NULL
**     FLAGS  0, or any of
**       F_AUG     a binary operator with an augmented assignment (+=)
**       F_INT_ID  the identity on integers and bool (floor, ceil, trunc)
**       F_NANARG  a float function whose NaN argument is its result, sign
**                 and payload kept (vector math libraries may lose them)
**       F_NOID    a reduction without an identity: over zero elements it
**                 is an error, as in NumPy
**       F_STEP    the next value of the float type toward the second
**                 operand: a type that computes in a wider one (the 16-bit
**                 floats, in float32) steps in its own bits instead
**       F_TWO     a function of two results (frexp, modf), called only as
**                 the whole value of `a, b = f(x)`: this row computes the
**                 first result, the row after it the second
**       F_SECOND  the second result of the row before: an op of the IR, no
**                 name of the language (its NAME has a dot)
**       F_REAL    defined on real operands only: NumPy has no loop for complex
**                 ones, and the checker refuses them
**   Complex operands: every row without F_REAL, but the bitwise and shift
**   operators, takes them (abs, real, imag and angle give the part's float
**   type, the comparisons and predicates bool, the rest the complex type).
**   The rows of two-result functions and ldexp take and give 32- and 64-bit
**   floats only: the checker computes a 16-bit float x in float32 and rounds
**   the results back, as NumPy's loops for float16 do.
**
**   A FUNCTION or REDUCE row's NAME is also its name in the language.  FN(NAME, ID)
**   adds an alias of OP_<ID> (asin for arcsin, pow for power).  The cast
**   functions are the types' names, NAME and SHORT of types.h (`float32(x)`,
**   `f32(x)`), all OP_CAST.
*/

#ifdef OP
OP(ADD,        "+",          OPERATOR, 2, "+",  P_SUM,     R_ARITH,    NOLIB,    NULL,             F_AUG)
OP(SUB,        "-",          OPERATOR, 2, "-",  P_SUM,     R_ARITH_NB, NOLIB,    NULL,             F_AUG)
OP(MUL,        "*",          OPERATOR, 2, "*",  P_TERM,    R_ARITH,    NOLIB,    NULL,             F_AUG)
OP(DIV,        "/",          OPERATOR, 2, "/",  P_TERM,    R_TRUEDIV,  NOLIB,    NULL,             F_AUG)
OP(FLOORDIV,   "//",         OPERATOR, 2, "//", P_TERM,    R_ARITH_NB, NOLIB,    NULL,             F_AUG | F_REAL)
OP(MOD,        "%",          OPERATOR, 2, "%",  P_TERM,    R_ARITH_NB, NOLIB,    NULL,             F_AUG | F_REAL)
OP(POW,        "**",         OPERATOR, 2, "**", P_POWER,   R_ARITH_NB, pow,      NULL,             F_AUG)
OP(AND,        "&",          OPERATOR, 2, "&",  P_BITAND,  R_BITWISE,  NOLIB,    NULL,             F_AUG)
OP(OR,         "|",          OPERATOR, 2, "|",  P_BITOR,   R_BITWISE,  NOLIB,    NULL,             F_AUG)
OP(XOR,        "^",          OPERATOR, 2, "^",  P_BITXOR,  R_BITWISE,  NOLIB,    NULL,             F_AUG)
OP(SHL,        "<<",         OPERATOR, 2, "<<", P_SHIFT,   R_SHIFT,    NOLIB,    NULL,             F_AUG)
OP(SHR,        ">>",         OPERATOR, 2, ">>", P_SHIFT,   R_SHIFT,    NOLIB,    NULL,             F_AUG)
OP(LT,         "<",          OPERATOR, 2, "<",  P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(LE,         "<=",         OPERATOR, 2, "<=", P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(GT,         ">",          OPERATOR, 2, ">",  P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(GE,         ">=",         OPERATOR, 2, ">=", P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(EQ,         "==",         OPERATOR, 2, "==", P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(NE,         "!=",         OPERATOR, 2, "!=", P_COMPARE, R_COMPARE,  NOLIB,    NULL,             0)
OP(NEG,        "neg",        OPERATOR, 1, "-",  P_UNARY,   R_SAME_NB,  NOLIB,    NULL,             0)
OP(INVERT,     "invert",     OPERATOR, 1, "~",  P_UNARY,   R_BITWISE,  NOLIB,    NULL,             0)
OP(ABS,        "abs",        FUNCTION, 1, NULL, P_NONE,    R_SAME,     fabs,     "llvm.fabs",      0)
OP(SQRT,       "sqrt",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    sqrt,     "llvm.sqrt",      0)
OP(CBRT,       "cbrt",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    cbrt,     NULL,             F_NANARG | F_REAL)
OP(SQUARE,     "square",     FUNCTION, 1, NULL, P_NONE,    R_SAME_NB,  NOLIB,    NULL,             0)
OP(RECIPROCAL, "reciprocal", FUNCTION, 1, NULL, P_NONE,    R_SAME_NB,  NOLIB,    NULL,             0)
OP(EXP,        "exp",        FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    exp,      NULL,             F_NANARG)
OP(EXP2,       "exp2",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    exp2,     NULL,             F_NANARG)
OP(EXPM1,      "expm1",      FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    expm1,    NULL,             F_NANARG)
OP(LOG,        "log",        FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    log,      NULL,             F_NANARG)
OP(LOG2,       "log2",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    log2,     NULL,             F_NANARG)
OP(LOG10,      "log10",      FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    log10,    NULL,             F_NANARG)
OP(LOG1P,      "log1p",      FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    log1p,    NULL,             F_NANARG)
OP(SIN,        "sin",        FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    sin,      NULL,             F_NANARG)
OP(COS,        "cos",        FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    cos,      NULL,             F_NANARG)
OP(TAN,        "tan",        FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    tan,      NULL,             F_NANARG)
OP(ASIN,       "arcsin",     FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    asin,     NULL,             F_NANARG)
OP(ACOS,       "arccos",     FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    acos,     NULL,             F_NANARG)
OP(ATAN,       "arctan",     FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    atan,     NULL,             F_NANARG)
OP(SINH,       "sinh",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    sinh,     NULL,             F_NANARG)
OP(COSH,       "cosh",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    cosh,     NULL,             F_NANARG)
OP(TANH,       "tanh",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    tanh,     NULL,             F_NANARG)
OP(ASINH,      "arcsinh",    FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    asinh,    NULL,             F_NANARG)
OP(ACOSH,      "arccosh",    FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    acosh,    NULL,             F_NANARG)
OP(ATANH,      "arctanh",    FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    atanh,    NULL,             F_NANARG)
OP(FLOOR,      "floor",      FUNCTION, 1, NULL, P_NONE,    R_SAME,     floor,    "llvm.floor",     F_INT_ID | F_REAL)
OP(CEIL,       "ceil",       FUNCTION, 1, NULL, P_NONE,    R_SAME,     ceil,     "llvm.ceil",      F_INT_ID | F_REAL)
OP(TRUNC,      "trunc",      FUNCTION, 1, NULL, P_NONE,    R_SAME,     trunc,    "llvm.trunc",     F_INT_ID | F_REAL)
OP(RINT,       "rint",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    rint,     "llvm.roundeven", 0)
OP(ROUND,      "round",      FUNCTION, 1, NULL, P_NONE,    R_SAME,     rint,     "llvm.roundeven", F_INT_ID)
OP(SIGN,       "sign",       FUNCTION, 1, NULL, P_NONE,    R_SAME_NB,  NOLIB,    NULL,             0)
OP(ATAN2,      "arctan2",    FUNCTION, 2, NULL, P_NONE,    R_FLOAT,    atan2,    NULL,             F_REAL)
OP(HYPOT,      "hypot",      FUNCTION, 2, NULL, P_NONE,    R_FLOAT,    hypot,    NULL,             F_REAL)
OP(FMOD,       "fmod",       FUNCTION, 2, NULL, P_NONE,    R_ARITH_NB, fmod,     NULL,             F_REAL)
OP(COPYSIGN,   "copysign",   FUNCTION, 2, NULL, P_NONE,    R_FLOAT,    copysign, "llvm.copysign",  F_REAL)
OP(NEXTAFTER,  "nextafter",  FUNCTION, 2, NULL, P_NONE,    R_FLOAT,    nextafter, NULL,            F_STEP | F_REAL)
OP(LDEXP,      "ldexp",      FUNCTION, 2, NULL, P_NONE,    R_LDEXP,    NOLIB,    NULL,             F_REAL)
OP(FREXP,      "frexp",      FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    NOLIB,    NULL,             F_TWO | F_REAL)
OP(FREXP_EXP,  "frexp.exp",  FUNCTION, 1, NULL, P_NONE,    R_EXPONENT, NOLIB,    NULL,             F_SECOND | F_REAL)
OP(MODF,       "modf",       FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    NOLIB,    NULL,             F_TWO | F_REAL)
OP(MODF_INT,   "modf.int",   FUNCTION, 1, NULL, P_NONE,    R_FLOAT,    NOLIB,    NULL,             F_SECOND | F_REAL)
OP(MINIMUM,    "minimum",    FUNCTION, 2, NULL, P_NONE,    R_PROMOTE,  NOLIB,    NULL,             0)
OP(MAXIMUM,    "maximum",    FUNCTION, 2, NULL, P_NONE,    R_PROMOTE,  NOLIB,    NULL,             0)
OP(FMIN,       "fmin",       FUNCTION, 2, NULL, P_NONE,    R_PROMOTE,  NOLIB,    NULL,             0)
OP(FMAX,       "fmax",       FUNCTION, 2, NULL, P_NONE,    R_PROMOTE,  NOLIB,    NULL,             0)
OP(CLIP,       "clip",       FUNCTION, 3, NULL, P_NONE,    R_PROMOTE,  NOLIB,    NULL,             0)
OP(FMA,        "fma",        FUNCTION, 3, NULL, P_NONE,    R_FLOAT,    fma,      "llvm.fma",       F_REAL)
OP(WHERE,      "where",      FUNCTION, 3, NULL, P_NONE,    R_WHERE,    NOLIB,    NULL,             0)
OP(ISNAN,      "isnan",      FUNCTION, 1, NULL, P_NONE,    R_PRED,     NOLIB,    NULL,             0)
OP(ISINF,      "isinf",      FUNCTION, 1, NULL, P_NONE,    R_PRED,     NOLIB,    NULL,             0)
OP(SIGNBIT,    "signbit",    FUNCTION, 1, NULL, P_NONE,    R_PRED,     NOLIB,    NULL,             F_REAL)
OP(ISFINITE,   "isfinite",   FUNCTION, 1, NULL, P_NONE,    R_PRED,     NOLIB,    NULL,             0)
OP(REAL,       "real",       FUNCTION, 1, NULL, P_NONE,    R_PART,     NOLIB,    NULL,             0)
OP(IMAG,       "imag",       FUNCTION, 1, NULL, P_NONE,    R_PART,     NOLIB,    NULL,             0)
OP(CONJ,       "conjugate",  FUNCTION, 1, NULL, P_NONE,    R_CONJ,     NOLIB,    NULL,             0)
OP(ANGLE,      "angle",      FUNCTION, 1, NULL, P_NONE,    R_ANGLE,    NOLIB,    NULL,             0)
OP(COMPLEX,    "complex",    FUNCTION, 2, NULL, P_NONE,    R_COMPLEX,  NOLIB,    NULL,             0)
OP(COPY,       "copy",       FUNCTION, 1, NULL, P_NONE,    R_LIKE,     NOLIB,    NULL,             0)
OP(ONES_LIKE,  "ones_like",  FUNCTION, 1, NULL, P_NONE,    R_LIKE,     NOLIB,    NULL,             0)
OP(CAST,       "cast",       CAST,     1, NULL, P_NONE,    R_CAST,     NOLIB,    NULL,             0)
OP(SUM,        "sum",        REDUCE,   1, NULL, P_NONE,    R_RSUM,     NOLIB,    NULL,             0)
OP(PROD,       "prod",       REDUCE,   1, NULL, P_NONE,    R_RSUM,     NOLIB,    NULL,             0)
OP(MIN,        "min",        REDUCE,   1, NULL, P_NONE,    R_RSAME,    NOLIB,    NULL,             F_NOID)
OP(MAX,        "max",        REDUCE,   1, NULL, P_NONE,    R_RSAME,    NOLIB,    NULL,             F_NOID)
OP(MEAN,       "mean",       REDUCE,   1, NULL, P_NONE,    R_RMEAN,    NOLIB,    NULL,             0)
OP(ANY,        "any",        REDUCE,   1, NULL, P_NONE,    R_RBOOL,    NOLIB,    NULL,             0)
OP(ALL,        "all",        REDUCE,   1, NULL, P_NONE,    R_RBOOL,    NOLIB,    NULL,             0)
OP(ARGMIN,     "argmin",     REDUCE,   1, NULL, P_NONE,    R_RARG,     NOLIB,    NULL,             F_NOID)
OP(ARGMAX,     "argmax",     REDUCE,   1, NULL, P_NONE,    R_RARG,     NOLIB,    NULL,             F_NOID)
#endif

#ifdef FN
FN("absolute", ABS)  FN("fabs", ABS)
FN("asin", ASIN)
FN("acos", ACOS)
FN("atan", ATAN)
FN("atan2", ATAN2)
FN("asinh", ASINH)
FN("acosh", ACOSH)
FN("atanh", ATANH)
FN("power", POW)  FN("pow", POW)
FN("conj", CONJ)
FN("amin", MIN)  FN("amax", MAX)
#endif

