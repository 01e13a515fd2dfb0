/*
** types.h -- the one table of element types, shared by every stage.
**
** As ops.h is for operations, this is the only list of the types: each
** file includes it after defining TYPE (and, where it needs them, ALIAS and
** UP) and reads the columns it cares about.  jitc.h numbers the types
** (JITC_<ID>, stable); tests/t_types.py checks that the two agree and that
** no other file spells a list of types.
**
**   TYPE(ID, NAME, SHORT, CNAME, KIND, SIZE, CHR, DESCR, CTYPE, CUDA, LLVM, LO, HI)
**     ID     the enumerator JITC_<ID> of jitc.h
**     NAME   NumPy's name (np.dtype(NAME)), used in messages and --emit
**     SHORT  the language's short name, its width in bits: the cast
**            function `i8(x)`, `u16(x)`, `f32(x)` (NAME is one too)
**     CNAME  the identifier (a bare token) generated code names it by: the cuda target's
**            typedef, the suffix of its helpers (jitc_floordiv_i32)
**     KIND   T_BOOL, T_SINT, T_UINT, T_FLOAT or T_COMPLEX
**     SIZE   bytes per element
**     CHR    NumPy's character code (np.dtype(CHR) is the type)
**     DESCR  the descr of a little-endian .npy file of the type
**     CTYPE  the C type that holds one element on the host
**     CUDA   the CUDA C type that CNAME stands for
**     LLVM   its spelling in LLVM IR (the cpu target's scalar type)
**     LO, HI the least and greatest value of an integer type (bool 0, 1);
**            0, 0 for the others
**
**   ALIAS(SPELLING, ID)  another name of the type for --dtype, the C API's
**            jitc_dtype_parse() and Python (NumPy's codes such as "f4"
**            and "i4" are made from KIND and SIZE; these are the rest)
**
**   UP(FROM, TO)  an edge of NumPy's promotion lattice: FROM converts to TO
**            without loss, and no type lies between them.  promote(a, b)
**            is the least type that both reach (type.c); a pair with no
**            such type is an error, as NumPy's DTypePromotionError.
**   NOUP(A, B)  a pair that NumPy refuses to promote although the lattice
**            has a common type (ml_dtypes' bfloat16 defines few promotions)
**
** The order of the rows is the order of jitc.h's numbers.
*/

#ifdef TYPE
/*   ID         NAME          SHORT   CNAME KIND      SIZE CHR  DESCR   CTYPE     CUDA                  LLVM      LO         HI */
TYPE(BOOL,      "bool",       "bool", b8,   T_BOOL,    1,  '?', "|b1",  uint8_t,  "unsigned char",      "i8",     0,         1)
TYPE(INT32,     "int32",      "i32",  i32,  T_SINT,    4,  'i', "<i4",  int32_t,  "int",                "i32",    INT32_MIN, INT32_MAX)
TYPE(INT64,     "int64",      "i64",  i64,  T_SINT,    8,  'q', "<i8",  int64_t,  "long long",          "i64",    INT64_MIN, INT64_MAX)
TYPE(FLOAT32,   "float32",    "f32",  f32,  T_FLOAT,   4,  'f', "<f4",  float,    "float",              "float",  0,         0)
TYPE(FLOAT64,   "float64",    "f64",  f64,  T_FLOAT,   8,  'd', "<f8",  double,   "double",             "double", 0,         0)
TYPE(INT8,      "int8",       "i8",   i8,   T_SINT,    1,  'b', "|i1",  int8_t,   "signed char",        "i8",     INT8_MIN,  INT8_MAX)
TYPE(INT16,     "int16",      "i16",  i16,  T_SINT,    2,  'h', "<i2",  int16_t,  "short",              "i16",    INT16_MIN, INT16_MAX)
TYPE(UINT8,     "uint8",      "u8",   u8,   T_UINT,    1,  'B', "|u1",  uint8_t,  "unsigned char",      "i8",     0,         UINT8_MAX)
TYPE(UINT16,    "uint16",     "u16",  u16,  T_UINT,    2,  'H', "<u2",  uint16_t, "unsigned short",     "i16",    0,         UINT16_MAX)
TYPE(UINT32,    "uint32",     "u32",  u32,  T_UINT,    4,  'I', "<u4",  uint32_t, "unsigned int",       "i32",    0,         UINT32_MAX)
TYPE(UINT64,    "uint64",     "u64",  u64,  T_UINT,    8,  'Q', "<u8",  uint64_t, "unsigned long long", "i64",    0,         UINT64_MAX)
TYPE(FLOAT16,   "float16",    "f16",  f16,  T_FLOAT,   2,  'e', "<f2",  uint16_t, "__half",             "half",   0,         0)
TYPE(BFLOAT16,  "bfloat16",   "bf16", bf16, T_FLOAT,   2,  'E', "<V2",  uint16_t, "__nv_bfloat16",      "bfloat", 0,         0)
TYPE(COMPLEX64, "complex64",  "c64",  c64,  T_COMPLEX, 8,  'F', "<c8",  jitc_c64, "jitc_c64",           "<2 x float>", 0,    0)
TYPE(COMPLEX128,"complex128", "c128", c128, T_COMPLEX, 16, 'D', "<c16", jitc_c128,"jitc_c128",          "<2 x double>", 0,   0)
#endif

#ifdef ALIAS
ALIAS("int", INT64)
ALIAS("uint", UINT64)
ALIAS("float", FLOAT64)
ALIAS("double", FLOAT64)
ALIAS("single", FLOAT32)
ALIAS("half", FLOAT16)
ALIAS("intc", INT32)
ALIAS("uintc", UINT32)
ALIAS("byte", INT8)
ALIAS("ubyte", UINT8)
ALIAS("short", INT16)
ALIAS("ushort", UINT16)
ALIAS("complex", COMPLEX128)
ALIAS("csingle", COMPLEX64)
ALIAS("cdouble", COMPLEX128)
#endif

#ifdef UP
UP(BOOL, INT8)
UP(BOOL, UINT8)
UP(INT8, INT16)
UP(UINT8, INT16)
UP(UINT8, UINT16)
UP(INT16, INT32)
UP(UINT16, INT32)
UP(UINT16, UINT32)
UP(INT32, INT64)
UP(UINT32, INT64)
UP(UINT32, UINT64)
UP(INT8, FLOAT16)
UP(UINT8, FLOAT16)
UP(INT16, FLOAT32)
UP(UINT16, FLOAT32)
UP(INT32, FLOAT64)
UP(UINT32, FLOAT64)
UP(INT64, FLOAT64)
UP(UINT64, FLOAT64)
UP(FLOAT16, FLOAT32)
UP(FLOAT32, FLOAT64)
UP(FLOAT32, COMPLEX64)
UP(FLOAT64, COMPLEX128)
UP(COMPLEX64, COMPLEX128)
/* ml_dtypes' bfloat16: bool and the 8-bit integers convert to it; it
** converts to float32.  NumPy finds no common type of bfloat16 with the
** wider integers and float16 (the NOUP rows), although the lattice has one. */
UP(BOOL, BFLOAT16)
UP(INT8, BFLOAT16)
UP(UINT8, BFLOAT16)
UP(BFLOAT16, FLOAT32)
#endif

#ifdef NOUP
NOUP(BFLOAT16, INT16)
NOUP(BFLOAT16, UINT16)
NOUP(BFLOAT16, INT32)
NOUP(BFLOAT16, UINT32)
NOUP(BFLOAT16, INT64)
NOUP(BFLOAT16, UINT64)
NOUP(BFLOAT16, FLOAT16)
#endif
