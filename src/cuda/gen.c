/*
** cuda/gen.c -- code generation for the target `cuda`: typed IR -> CUDA C.
**
** The output is one self-contained CUDA C file that needs no header:
** typedefs for the element types (types.h), the helper functions the program
** uses (cuda/helpers.c), `jitc_elem` computing one element in SSA form,
** and one `extern "C"` kernel, jitc_k32, over elements [0, n) of a range
** that starts at element `base` of the arrays (the launcher cuts larger
** arrays into ranges, so 32-bit indices always suffice).  The kernel takes
** V elements per thread with vector loads and stores of up to 16 bytes when
** the host has checked that every pointer is aligned for them, then
** finishes (or, when a pointer is not aligned, does everything) one element
** at a time.  Names from the program never reach the C: arrays are a0, a1,
** ..., scalars p0, p1, ..., temporaries t0, t1, ..., so an array called
** `int` or `threadIdx` is fine.  A large program becomes one kernel per
** group of statements (cuda/plan.c says which), written by emit_split().
**
** Pure functions of the program: nothing here knows a device, NVRTC or a
** cache.  Start reading at cuda_gen() at the end, then op_expr(), which
** writes one operation: the generic cases come from the op table (ops.h),
** the hand-written ones are where CUDA's C differs from NumPy.
*/
#include "../jitc_int.h"
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Emit {
  const Program *p;
  const char *src; /* the program's source, for comments */
  Buf *b;
  int nvals;
  int *temp_reads; /* per temp: how many times it is read */
  bool used[H_NHELPERS][JITC_NDTYPES];
  int line;        /* lines of b counted so far (1-based line of the next text) */
  size_t counted;  /* bytes of b counted */
  bool bad_op;     /* an operation this generator does not know */
  /* The 16-bit float values widened to float32 so far in this function
  ** (NVVM does not merge the conversions' inline PTX): the value's name
  ** and the float32's. */
  struct { char val[24], wide[16]; } wide[64];
  int nwide;
} Emit;

static void use(Emit *E, CudaHelper h, jitc_dtype t) { cuda_helper_use(E->used, h, t); }

/* A value: an SSA name, a parameter, or a literal. */
typedef struct Val {
  char s[128]; /* a complex literal's two parts fit */
} Val;

static int cur_line(Emit *E) {
  for (; E->counted < E->b->len; E->counted++)
    if (E->b->s[E->counted] == '\n')
      E->line++;
  return E->line;
}

static Val valf(const char *fmt, ...) PRINTF(1, 2);
static Val valf(const char *fmt, ...) {
  Val v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v.s, sizeof v.s, fmt, ap);
  va_end(ap);
  return v;
}

/* The expression of op n over operand values a[], written to out. */
static bool op_expr(Emit *E, Buf *o, const Node *n, const Val *a) {
  jitc_dtype r = n->type;
  jitc_dtype t = n->args[n->op == OP_WHERE ? 1 : 0]->type; /* operand type */
  if (dtype_is_complex(r) || dtype_is_complex(t)) {
    const char *args[3] = {a[0].s, n->nargs > 1 ? a[1].s : "", n->nargs > 2 ? a[2].s : ""};
    return cuda_complex_expr(o, E->used, n, args);
  }
  const char *T = cuda_ctype(t), *U = cuda_utype(t), *S = cuda_ctype(t), *V = cuda_wtype(t);
  const char *x = a[0].s, *y = n->nargs > 1 ? a[1].s : "", *z = n->nargs > 2 ? a[2].s : "";
  const char *F = t == JITC_FLOAT32 ? "f" : "";
  bool b = t == JITC_BOOL, in = dtype_is_int(t), fl = dtype_is_float(t);
  bool un = type_info[t].kind == T_UINT;
  switch (n->op) {
  case OP_ADD:
  case OP_SUB:
  case OP_MUL: {
    char c = n->op == OP_ADD ? '+' : n->op == OP_SUB ? '-' : '*';
    if (b)
      buf_printf(o, "(b8)(%s %c %s)", x, n->op == OP_ADD ? '|' : '&', y);
    else if (in) /* in unsigned arithmetic, which wraps; never in int */
      buf_printf(o, "(%s)((%s)%s %c (%s)%s)", T, V, x, c, V, y);
    else
      buf_printf(o, "%s %c %s", x, c, y);
    return true;
  }
  case OP_DIV:
    if (!fl)
      return false;
    buf_printf(o, "%s / %s", x, y);
    return true;
  case OP_FLOORDIV:
  case OP_MOD:
    if (b)
      return false;
    use(E, n->op == OP_FLOORDIV ? H_FLOORDIV : H_MOD, t);
    if (in)
      buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_FLOORDIV ? "floordiv" : "mod", S, x, y);
    else if (n->op == OP_FLOORDIV)
      buf_printf(o, "jitc_divmod_%s(%s, %s, &m_%s)", S, x, y, S);
    else
      buf_printf(o, "(jitc_divmod_%s(%s, %s, &m_%s), m_%s)", S, x, y, S, S);
    return true;
  case OP_FMOD:
  case OP_POW:
    if (b)
      return false;
    if (in) {
      use(E, n->op == OP_FMOD ? H_FMOD : H_POW, t);
      buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_FMOD ? "fmod" : "pow", S, x, y);
    } else if (n->op == OP_POW) {
      /* x ** 2 exactly rounded, as the C library's pow gives it (CUDA's pow
      ** is within 2 ulp, not always exact). */
      const Node *e = n->args[1];
      if (e->kind == N_CONST && e->k.f == 2.0)
        buf_printf(o, "%s * %s", x, x);
      else if (e->kind == N_CONST)
        buf_printf(o, "pow%s(%s, %s)", F, x, y);
      else
        buf_printf(o, "%s == (%s)2 ? %s * %s : pow%s(%s, %s)", y, T, x, x, F, x, y);
    } else {
      break; /* fmod of floats: the generic case */
    }
    return true;
  case OP_AND:
  case OP_OR:
  case OP_XOR:
    if (fl)
      return false;
    buf_printf(o, "(%s)(%s %c %s)", T, x, n->op == OP_AND ? '&' : n->op == OP_OR ? '|' : '^', y);
    return true;
  case OP_SHL:
  case OP_SHR:
    if (!in)
      return false;
    use(E, n->op == OP_SHL ? H_SHL : H_SHR, t);
    buf_printf(o, "jitc_%s_%s(%s, %s)", n->op == OP_SHL ? "shl" : "shr", S, x, y);
    return true;
  case OP_LT: buf_printf(o, "(b8)(%s < %s)", x, y); return true;
  case OP_LE: buf_printf(o, "(b8)(%s <= %s)", x, y); return true;
  case OP_GT: buf_printf(o, "(b8)(%s > %s)", x, y); return true;
  case OP_GE: buf_printf(o, "(b8)(%s >= %s)", x, y); return true;
  case OP_EQ: buf_printf(o, "(b8)(%s == %s)", x, y); return true;
  case OP_NE: buf_printf(o, "(b8)(%s != %s)", x, y); return true;
  case OP_NEG:
    if (b)
      return false;
    if (in) {
      buf_printf(o, "(%s)((%s)0 - (%s)%s)", T, U, U, x);
    } else {
      use(E, H_SIGNBIT, t);
      buf_printf(o, "jitc_neg_%s(%s)", S, x);
    }
    return true;
  case OP_INVERT:
    if (fl)
      return false;
    if (b)
      buf_printf(o, "(b8)(%s ^ 1)", x);
    else
      buf_printf(o, "(%s)~%s", T, x);
    return true;
  case OP_ABS:
    if (b || un)
      buf_puts(o, x);
    else if (in)
      buf_printf(o, "%s < 0 ? (%s)((%s)0 - (%s)%s) : %s", x, T, U, U, x, x);
    else {
      use(E, H_SIGNBIT, t);
      buf_printf(o, "jitc_abs_%s(%s)", S, x);
    }
    return true;
  case OP_SQUARE:
    if (b)
      return false;
    if (in)
      buf_printf(o, "(%s)((%s)%s * (%s)%s)", T, V, x, V, x);
    else
      buf_printf(o, "%s * %s", x, x);
    return true;
  case OP_RECIPROCAL:
    if (b)
      return false;
    if (un) /* 1/a truncated; 1/0 is 0 */
      buf_printf(o, "%s == 1 ? %s : (%s)0", x, x, T);
    else if (in)
      buf_printf(o, "%s == 1 || %s == -1 ? %s : (%s)0", x, x, x, T);
    else
      buf_printf(o, "(%s)1 / %s", T, x);
    return true;
  case OP_SIGN:
    if (b)
      return false;
    if (un)
      buf_printf(o, "(%s)(%s != 0)", T, x);
    else if (in)
      buf_printf(o, "(%s)((%s > 0) - (%s < 0))", T, x, x);
    else /* NaN stays NaN; both zeros give +0 */
      buf_printf(o, "%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s == 0 ? (%s)0 : %s", x, T, x, T, x, T, x);
    return true;
  case OP_MINIMUM:
  case OP_MAXIMUM:
  case OP_FMIN:
  case OP_FMAX: {
    bool mn = n->op == OP_MINIMUM || n->op == OP_FMIN;
    if (b)
      buf_printf(o, "(b8)(%s %c %s)", x, mn ? '&' : '|', y);
    else if (in)
      buf_printf(o, "%s %c %s ? %s : %s", x, mn ? '<' : '>', y, x, y);
    else {
      CudaHelper h = n->op == OP_MINIMUM ? H_MINIMUM : n->op == OP_MAXIMUM ? H_MAXIMUM
                 : n->op == OP_FMIN ? H_FMIN : H_FMAX;
      use(E, h, t);
      buf_printf(o, "jitc_%s_%s(%s, %s)", op_info[n->op].name, S, x, y);
    }
    return true;
  }
  case OP_CLIP:
    if (b) {
      buf_printf(o, "(b8)((%s | %s) & %s)", x, y, z);
    } else {
      use(E, H_CLIP, t);
      buf_printf(o, "jitc_clip_%s(%s, %s, %s)", S, x, y, z);
    }
    return true;
  case OP_WHERE:
    buf_printf(o, "%s ? %s : %s", x, y, z);
    return true;
  case OP_SIGNBIT: /* the sign bit by integer instructions: a NaN's too */
    if (!fl)
      buf_printf(o, in && !un ? "(b8)(%s < 0)" : "(b8)0%.0s", x);
    else if (cuda_is_half(t))
      buf_printf(o, "(b8)((%s).h >> 15)", x);
    else if (t == JITC_FLOAT32)
      buf_printf(o, "(b8)(__float_as_uint(%s) >> 31)", x);
    else
      buf_printf(o, "(b8)(__double_as_longlong(%s) < 0)", x);
    return true;
  case OP_ISNAN:
  case OP_ISINF:
  case OP_ISFINITE:
    if (!fl) {
      buf_printf(o, "(b8)%d", n->op == OP_ISFINITE);
      return true;
    }
    use(E, H_ISNAN, t);
    buf_printf(o, "jitc_%s_%s(%s)", op_info[n->op].name, S, x);
    return true;
  case OP_CAST:
    cuda_cast(o, E->used, r, t, x);
    return true;
  case OP_HYPOT:
    if (!fl)
      return false;
    use(E, H_HYPOT, t);
    buf_printf(o, "jitc_hypot_%s(%s, %s)", S, x, y);
    return true;
  case OP_LDEXP:
  case OP_FREXP:
  case OP_FREXP_EXP:
  case OP_MODF:
  case OP_MODF_INT:
    /* helpers.c's jitc_ldexp_f32, jitc_frexp_exp_f64, ...: the row's name,
    ** '.' as '_' */
    if (!fl)
      return false;
    use(E, H_MIXED, t);
    buf_puts(o, "jitc_");
    for (const char *c = op_info[n->op].name; *c; c++)
      buf_putc(o, *c == '.' ? '_' : *c);
    buf_printf(o, "_%s(%s%s%s)", S, x, n->nargs > 1 ? ", " : "", y);
    return true;
  case OP_COPYSIGN:
    if (!fl)
      return false;
    use(E, H_SIGNBIT, t);
    buf_printf(o, "jitc_copysign_%s(%s, %s)", S, x, y);
    return true;
  default:
    break;
  }
  /* The generic cases, from the op table: a function that is the identity
  ** on integers and bool, or the C library's function on floats (CUDA's
  ** math library has every one of libm's, float32 with the suffix f). */
  const OpInfo *op = &op_info[n->op];
  if (cuda_is_half(t) && (op->flags & F_STEP) && n->nargs == 2) { /* in the 16 bits */
    use(E, H_STEP, t);
    buf_printf(o, "jitc_step_%s(%s, %s)", S, x, y);
    return true;
  }
  if (!fl && (op->flags & F_INT_ID)) {
    buf_puts(o, x);
    return true;
  }
  if (!fl || !op->libm)
    return false;
  /* C99 Annex F: a function of one NaN argument returns that NaN.  On the
  ** GPU every function of one argument returns the canonical NaN instead
  ** (not only those marked F_NANARG, where CPU vector libraries may), so
  ** every one is wrapped. */
  bool nanarg = n->nargs == 1 || (op->flags & F_NANARG);
  if (nanarg) {
    use(E, H_NANARG, t);
    buf_printf(o, "jitc_nanarg_%s(%s, ", S, x);
  }
  buf_printf(o, "%s%s(", op->libm, F);
  for (int k = 0; k < n->nargs; k++)
    buf_printf(o, "%s%s", k ? ", " : "", a[k].s);
  buf_puts(o, nanarg ? "))" : ")");
  return true;
}

/* Whether op n moves the bits of its 16-bit float operands (a sign, a
** choice, a test, a step to the next value: float32's would round back to
** the operand): then it is done on them as they are (the type's own
** helpers), else on their values widened to float32. */
static bool half_bits(const Node *n) {
  switch (n->op) {
  case OP_CAST: case OP_WHERE: case OP_NEG: case OP_ABS: case OP_COPYSIGN: case OP_MINIMUM:
  case OP_MAXIMUM: case OP_FMIN: case OP_FMAX: case OP_CLIP: case OP_ISNAN: case OP_ISINF:
  case OP_ISFINITE: case OP_SIGNBIT:
    return true;
  default:
    return (op_info[n->op].flags & F_STEP) && n->nargs == 2 && cuda_is_half(n->type);
  }
}

/* x (16-bit float type t) as float32, widened once per value and function. */
static Val widen(Emit *E, jitc_dtype t, Val x) {
  for (int k = 0; k < E->nwide; k++)
    if (!strcmp(E->wide[k].val, x.s))
      return valf("%s", E->wide[k].wide);
  int v = E->nvals++;
  use(E, H_HALFHW, t);
  buf_printf(E->b, "  const f32 v%d = jitc_up_%s(%s);\n", v, cuda_ctype(t), x.s);
  if (E->nwide < (int)(sizeof E->wide / sizeof *E->wide) && strlen(x.s) < sizeof E->wide[0].val) {
    snprintf(E->wide[E->nwide].val, sizeof E->wide[0].val, "%s", x.s);
    snprintf(E->wide[E->nwide++].wide, sizeof E->wide[0].wide, "v%d", v);
  }
  return valf("v%d", v);
}

/* Emits n's value: operands first, then `const T vK = expr;`.  Returns the
** name or literal.  Recursion depth is the tree's height, which the parser
** bounds. */
static bool emit_node(Emit *E, const Node *n, Val *out) {
  switch (n->kind) {
  case N_CONST:
    cuda_literal(out->s, sizeof out->s, n);
    return true;
  case N_LOAD:
    /* Bool arrays may hold bytes other than 0 and 1: normalise, as interp does. */
    *out = n->type == JITC_BOOL ? valf("(b8)(x%d != 0)", n->slot) : valf("x%d", n->slot);
    return true;
  case N_PARAM:
    *out = n->type == JITC_BOOL ? valf("(b8)(p%d != 0)", n->slot) : valf("p%d", n->slot);
    return true;
  case N_INDEX:
    *out = valf("i");
    return true;
  case N_TEMP:
    *out = valf("t%d", n->slot);
    return true;
  case N_OP:
    break;
  default:
    return false;
  }
  Val a[3];
  a[0].s[0] = '\0'; /* read below as arg0 even by an op of no arguments */
  for (int k = 0; k < n->nargs; k++)
    if (!emit_node(E, n->args[k], &a[k]))
      return false;
  /* float16 and bfloat16: the operation of float32 on the operands widened
  ** by the hardware (the same code, helpers and constants as a float32
  ** operation), then rounded back by it; a NaN that a function of one
  ** argument gives back is the argument (jitc_nanarg).  Casts and the ops
  ** that move bits take the bits as they are. */
  Node sh, sa[3];
  bool half = false;
  Val arg0 = a[0];
  if (!half_bits(n)) {
    sh = *n;
    for (int k = 0; k < n->nargs; k++) {
      sa[k] = *n->args[k];
      sh.args[k] = &sa[k];
      if (!cuda_is_half(sa[k].type))
        continue;
      half = true;
      sa[k].type = JITC_FLOAT32;
      if (sa[k].kind == N_CONST) { /* its value, exact in float32 */
        sa[k].k.f = cuda_half_value(n->args[k]->k.f, n->args[k]->type);
        cuda_literal(a[k].s, sizeof a[k].s, &sa[k]);
      } else {
        a[k] = widen(E, n->args[k]->type, a[k]);
      }
    }
    half |= cuda_is_half(n->type);
    if (cuda_is_half(n->type))
      sh.type = JITC_FLOAT32;
  }
  Buf e = {0};
  bool ok = op_expr(E, &e, half ? &sh : n, a);
  E->bad_op |= !ok;
  if (ok) {
    int v = E->nvals++;
    jitc_dtype rt = half ? sh.type : n->type;
    buf_printf(E->b, "  const %s v%d = %s;\n", cuda_ctype(rt), v, e.s ? e.s : "");
    *out = valf("v%d", v);
    if (rt != n->type) {
      v = E->nvals++;
      use(E, H_HALFHW, n->type);
      const char *T = cuda_ctype(n->type);
      bool nanarg = n->nargs == 1 && n->args[0]->type == n->type && n->args[0]->kind != N_CONST &&
                    (op_info[n->op].libm || n->op == OP_SIGN);
      if (nanarg) {
        use(E, H_NANARG, n->type);
        buf_printf(E->b, "  const %s v%d = jitc_%s_%s(%s, jitc_down_%s(%s));\n", T, v,
                   op_info[n->op].flags & F_NANARG ? "nanarg" : "nanq", T, arg0.s, T, out->s);
      } else {
        buf_printf(E->b, "  const %s v%d = jitc_down_%s(%s);\n", T, v, T, out->s);
      }
      *out = valf("v%d", v);
    }
  }
  buf_free(&e);
  return ok;
}

static void count_temp_reads(Emit *E, const Node *n) {
  if (n->kind == N_TEMP && n->slot >= 0 && n->slot < E->p->ntemps)
    E->temp_reads[n->slot]++;
  if (n->kind == N_OP)
    for (int k = 0; k < n->nargs; k++)
      count_temp_reads(E, n->args[k]);
}

/* One line of the program's source as a C comment, with anything that could
** end or extend the comment (a backslash before the newline) replaced. */
static void put_src_comment(Buf *b, const char *src, int off) {
  if (!src || off < 0)
    return;
  int line, col;
  src_position(src, off, &line, &col);
  const char *s = src + off;
  buf_printf(b, "  // %d:%d: ", line, col);
  for (int k = 0; s[k] && s[k] != '\n' && s[k] != ';' && k < 100; k++) {
    unsigned char c = (unsigned char)s[k];
    buf_putc(b, c >= 32 && c < 127 && c != '\\' ? (char)c : '?');
  }
  buf_putc(b, '\n');
}

/* Elements per vector step: the widest element fills `vbytes` bytes. */
int cuda_vec_width(const Program *p, int vbytes) {
  size_t maxsz = 1;
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role != JITC_RESULT && jitc_dtype_size(p->arrays[k].dtype) > maxsz)
      maxsz = jitc_dtype_size(p->arrays[k].dtype);
  int v = vbytes / (int)maxsz;
  return v < 1 ? 1 : v;
}

/* Statements [from, to) to E->b, in SSA form; stmt_line (may be NULL) gets
** the line each starts on.  A let whose temporary cross[] marks is also
** stored to its scratch sK[j] (split kernels). */
static bool emit_stmts(Emit *E, int from, int to, int *stmt_line, const bool *cross) {
  const Program *p = E->p;
  Buf *body = E->b;
  E->nwide = 0; /* a new function: nothing widened yet */
  for (int s = from; s < to; s++) {
    const IrStmt *st = &p->stmts[s];
    if (stmt_line)
      stmt_line[s] = cur_line(E);
    if (s == from || st->off != p->stmts[s - 1].off)
      put_src_comment(body, E->src, st->off);
    Val v;
    if (!emit_node(E, st->value, &v))
      return false;
    if (st->kind == IR_REDUCE) {
      buf_printf(body, "  jitc_step%d(x%d, %s, i);\n", st->slot, st->slot, v.s);
    } else if (st->kind == IR_LET) {
      buf_printf(body, "  const %s t%d = %s;\n", cuda_ctype(p->temps[st->slot]), st->slot, v.s);
      if (cross && cross[st->slot])
        buf_printf(body, "  s%d[j] = t%d;\n", st->slot, st->slot);
      else if (E->temp_reads[st->slot] == 0)
        buf_printf(body, "  (void)t%d;\n", st->slot);
    } else {
      buf_printf(body, "  x%d = %s;\n", st->slot, v.s);
      char x[16]; /* xK holds a new value: its widening is stale */
      snprintf(x, sizeof x, "x%d", st->slot);
      for (int k = 0; k < E->nwide; k++)
        if (!strcmp(E->wide[k].val, x))
          E->wide[k].val[0] = 0;
    }
  }
  return true;
}

/* The file's head: the program as a comment, its arrays and scalars, the
** typedefs, the helpers E's statements use and the reductions' functions
** (for a `split` program, without jitc_finish). */
static void emit_prelude(Emit *E, Buf *b, bool split) {
  const Program *p = E->p;
  const char *src = E->src;
  buf_printf(b, "// Generated by jitc %s: %s in CUDA C, compiled by NVRTC\n"
                "// without any header.  The program:\n", JITC_VERSION,
             p->nreduce ? "element-wise work and reductions" : "one element-wise kernel");
  if (src) {
    const char *s = src;
    for (int line = 0; *s && line < 40; line++) {
      buf_puts(b, "//   ");
      for (int k = 0; s[k] && s[k] != '\n' && k < 100; k++) {
        unsigned char c = (unsigned char)s[k];
        buf_putc(b, c >= 32 && c < 127 && c != '\\' ? (char)c : '?');
      }
      buf_putc(b, '\n');
      const char *nl = strchr(s, '\n');
      if (!nl)
        break;
      s = nl + 1;
    }
  }
  for (int k = 0; k < p->narrays; k++) {
    const IrArray *a = &p->arrays[k];
    static const char *const role[] = {"input", "output", "inout", "result"};
    buf_printf(b, "// a%d: array '%s', %s, %s\n", k, a->name, jitc_dtype_name(a->dtype),
               role[a->role]);
  }
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, "// p%d: scalar '%s', %s\n", k, p->params[k].name,
               jitc_dtype_name(p->params[k].type));
  cuda_typedefs(b, p->dtypes);
  cuda_complex_typedefs(b, p->dtypes);
  cuda_reduce_use(E->used, p);
  for (int h = 0; h < H_NHELPERS; h++)
    for (int t = 0; t < JITC_NDTYPES; t++)
      if (E->used[h][t]) { /* each file writes its own */
        cuda_helper_text(b, (CudaHelper)h, (jitc_dtype)t);
        cuda_convert_text(b, (CudaHelper)h, (jitc_dtype)t);
        cuda_complex_text(b, (CudaHelper)h, (jitc_dtype)t);
        cuda_cmath_text(b, (CudaHelper)h, (jitc_dtype)t);
      }
  cuda_reduce_text(b, p, split);
}

/* The remainder out-parameters of jitc_divmod, one per float type the code
** uses (used: H_FLOORDIV's row of Emit.used, or a group's alone: a
** variable set and never read is one NVRTC warns of). */
static void emit_divmod_vars(const bool *used, Buf *b) {
  for (int t = JITC_FLOAT32; t <= JITC_FLOAT64; t++)
    if (used[t])
      buf_printf(b, "  %s m_%s = 0; (void)m_%s;\n", cuda_ctype(t), cuda_ctype(t), cuda_ctype(t));
}

/* Appends array k's element `e` as jitc_elem takes it: the thread's
** accumulator for a reduction's result, else the element's variable. */
static void put_elem_arg(Buf *b, const Program *p, int k, const char *elem) {
  if (p->arrays[k].role == JITC_RESULT)
    buf_printf(b, ", x%d", k);
  else
    buf_printf(b, ", %s", elem);
}

/* The kernels of a program with reductions (cuda/reduce.c): jitc_k32 over
** a slice with a grid of one wave of blocks, each thread accumulating, and
** each block writing its partials; then jitc_r.  A thread issues the loads
** of `unroll` vector steps before it computes any of them (JITC_CUDA_RUNROLL):
** more bytes in flight, as the grid is one wave of blocks striding over the
** arrays. */
static void emit_reduce_kernels(Buf *b, const Program *p, int vec, int unroll,
                                const CudaPattern *pat) {
  const int U = unroll < 1 ? 1 : unroll;
  buf_printf(b, "// Elements [0, n), element j being element base + j of the whole array\n"
                "// (i in the program).  Thread t takes vector steps t, t + stride, ... in\n"
                "// that order, V = %d elements each, loaded whole when `vec` says every\n"
                "// pointer is aligned for it, else one by one: the same elements in the\n"
                "// same order either way, so that the partials do not depend on alignment.\n"
                "// The loads of %d steps go out before any is used.  Then the last n %% V\n"
                "// elements, one per thread, and the block's partials.\n"
                "extern \"C\" __global__ void __launch_bounds__(%d) jitc_k32(const u32 n, const i64 base, "
                "const int vec", vec, U, CUDA_BLOCK);
  cuda_access_params(b, p);
  cuda_reduce_params(b, p, 0, p->nstmts);
  cuda_reduce_final_params(b, p);
  cuda_access_nd_param(b, p, pat, true);
  buf_puts(b, ") {\n  const u32 stride = gridDim.x * blockDim.x;\n"
              "  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;\n");
  cuda_reduce_init(b, p, 0, p->nstmts);
  buf_printf(b, "  const u32 nv = n / %d;\n  for (u32 w0 = t; w0 < nv; w0 += %d * stride) {\n", vec, U);
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role != JITC_RESULT)
      buf_printf(b, "    jitc_vec<%s, %d> r%d[%d];\n", cuda_ctype(p->arrays[k].dtype), vec, k, U);
  buf_printf(b, "#pragma unroll\n    for (int u = 0; u < %d; u++) {\n"
                "      const u32 w = w0 + (u32)u * stride;\n      if (w < nv) {\n", U);
  cuda_access_vec(b, p, pat, vec, true);
  buf_printf(b, "      }\n    }\n#pragma unroll\n    for (int u = 0; u < %d; u++) {\n"
                "      const u32 w = w0 + (u32)u * stride;\n      if (w < nv) {\n"
                "#pragma unroll\n        for (int e = 0; e < %d; e++)\n"
                "          jitc_elem(base + (i64)(w * %d + e)", U, vec, vec);
  for (int k = 0; k < p->narrays; k++) {
    char elem[32];
    snprintf(elem, sizeof elem, "r%d[u].v[e]", k);
    put_elem_arg(b, p, k, elem);
  }
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", p%d", k);
  buf_puts(b, ");\n");
  cuda_access_vec(b, p, pat, vec, false);
  buf_puts(b, "      }\n    }\n");
  buf_printf(b, "  }\n  for (u32 j = nv * %d + t; j < n; j += stride) {\n", vec);
  cuda_access_one(b, p, pat);
  buf_puts(b, "  }\n");
  cuda_reduce_tail(b, p, 0, p->nstmts);
  cuda_reduce_last(b, p);
  buf_puts(b, "}\n");
  cuda_reduce_kernel(b, p, false);
}

/* The CUDA C of program p as one kernel, and per IR statement the line it
** starts on (stmt_line, may be NULL); see cuda_gen(). */
static jitc_status emit_program(const Program *p, const char *src, int vec, int unroll,
                                const CudaPattern *pat, Buf *out, int *stmt_line,
                                int *elem_end_line) {
  Emit E = {.p = p, .src = src, .line = 1};
  Buf body = {0};
  E.b = &body;
  E.temp_reads = calloc((size_t)p->ntemps + 1, sizeof(int));
  if (!E.temp_reads)
    return JITC_E_NOMEM;
  for (int s = 0; s < p->nstmts; s++)
    count_temp_reads(&E, p->stmts[s].value);

  /* The body of jitc_elem first, to learn which helpers it needs; its line
  ** numbers are fixed up once the prelude's length is known. */
  bool ok = emit_stmts(&E, 0, p->nstmts, stmt_line, NULL);
  int body_lines = cur_line(&E) - 1;

  Buf *b = out;
  emit_prelude(&E, b, p->by_axis); /* over axes, no jitc_finish: cuda/axis.c */

  /* jitc_elem: arrays by reference (loaded values in, results out). */
  buf_puts(b, "\n// One element.  xK holds element i of array aK.\n" DEV "void jitc_elem(const i64 i");
  for (int k = 0; k < p->narrays; k++)
    if (p->arrays[k].role == JITC_RESULT) /* the thread's accumulator */
      buf_printf(b, ", jitc_p%d &x%d", k, k);
    else
      buf_printf(b, ", %s%s &x%d", p->arrays[k].role == JITC_INPUT ? "const " : "",
                 cuda_ctype(p->arrays[k].dtype), k);
  for (int k = 0; k < p->nparams; k++)
    buf_printf(b, ", const %s p%d", cuda_ctype(p->params[k].type), k);
  buf_puts(b, ") {\n  (void)i;\n");
  emit_divmod_vars(E.used[H_FLOORDIV], b);
  /* The prelude's line count, to shift the statements' lines. */
  int pre = 1;
  for (size_t k = 0; k < b->len; k++)
    pre += b->s[k] == '\n';
  if (stmt_line)
    for (int s = 0; s < p->nstmts; s++)
      stmt_line[s] += pre - 1;
  if (elem_end_line)
    *elem_end_line = pre + body_lines;
  if (body.s)
    buf_puts(b, body.s);
  buf_puts(b, "}\n");
  cuda_access_struct(b, p, pat);
  buf_puts(b, "\ntemplate <typename T, int N> struct alignas(sizeof(T) * N) jitc_vec { T v[N]; };\n\n");
  if (p->by_axis) {
    cuda_axis_kernels(b, p, pat);
    cuda_axis_col_kernel(b, p, pat);
    goto done;
  }
  if (p->nreduce) {
    emit_reduce_kernels(b, p, vec, unroll, pat);
    goto done;
  }

  /* The kernels. */
  buf_printf(b, "// Elements [0, n), grid-stride: V = %d at a time with vector accesses\n"
                "// when `vec` says every pointer is aligned for them, then one at a time.\n"
                "// Element j is element base + j of the whole array (i in the program).\n"
                "template <typename I>\n" DEV "void jitc_body(const I n, const i64 base, const int vec", vec);
  cuda_access_params(b, p);
  cuda_access_nd_param(b, p, pat, true);
  if (pat && pat->tile) {
    buf_puts(b, ") {\n  (void)vec;\n");
    cuda_access_tile_body(b, p, pat);
    buf_puts(b, "}\n\n");
  } else {
    buf_puts(b, ") {\n"
                "  const I stride = (I)gridDim.x * (I)blockDim.x;\n"
                "  const I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;\n"
                "  I done = 0;\n"
                "  if (vec) {\n");
    buf_printf(b, "    const I nv = n / %d;\n    for (I w = t; w < nv; w += stride) {\n", vec);
    cuda_access_vec_body(b, p, pat, vec);
    buf_printf(b, "    }\n    done = nv * %d;\n  }\n  for (I j = done + t; j < n; j += stride) {\n", vec);
    cuda_access_one(b, p, pat);
    buf_puts(b, "  }\n}\n\n");
  }
  {
    /* The kernel: 32-bit indices, as the launcher keeps every range below
    ** 2^31 elements (cuda/run.c). */
    buf_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) jitc_k32(const u32 n, const i64 base, "
               "const int vec", CUDA_BLOCK);
    cuda_access_params(b, p);
    cuda_access_nd_param(b, p, pat, true);
    buf_puts(b, ") {\n  jitc_body<u32>(n, base, vec");
    for (int k = 0; k < p->narrays; k++)
      buf_printf(b, ", a%d", k);
    for (int k = 0; k < p->nparams; k++)
      buf_printf(b, ", p%d", k);
    cuda_access_nd_param(b, p, pat, false);
    buf_puts(b, ");\n}\n");
  }
done:
  free(E.temp_reads);
  bool oom = body.oom || b->oom;
  buf_free(&body);
  return E.bad_op ? JITC_E_INTERNAL : ok && !oom ? JITC_OK : JITC_E_NOMEM;
}

/* The CUDA C of a split program (cuda/plan.c): the prelude, then one
** kernel per group, one element per thread. */
static jitc_status emit_split(const Program *p, const char *src, const CudaPlan *P,
                              const CudaPattern *pat, Buf *out) {
  Emit E = {.p = p, .src = src, .line = 1};
  Buf *bodies = calloc((size_t)P->ng, sizeof(Buf));
  bool(*divmod)[JITC_NDTYPES] = calloc((size_t)P->ng, sizeof *divmod); /* each group's */
  E.temp_reads = calloc((size_t)p->ntemps + 1, sizeof(int));
  bool ok = bodies && divmod && E.temp_reads;
  for (int q = 0; ok && q < p->nstmts; q++)
    count_temp_reads(&E, p->stmts[q].value);
  for (int g = 0; ok && g < P->ng; g++) {
    bool before[JITC_NDTYPES];
    memcpy(before, E.used[H_FLOORDIV], sizeof before);
    memset(E.used[H_FLOORDIV], 0, sizeof before);
    E.b = &bodies[g];
    ok = emit_stmts(&E, P->start[g], P->start[g + 1], NULL, P->cross) && !bodies[g].oom;
    for (int t = 0; t < JITC_NDTYPES; t++) {
      divmod[g][t] = E.used[H_FLOORDIV][t];
      E.used[H_FLOORDIV][t] |= before[t];
    }
  }
  if (ok) {
    Buf *b = out;
    emit_prelude(&E, b, true);
    cuda_access_struct(b, p, pat);
    for (int g = 0; g < P->ng; g++) {
      buf_printf(b, "\n// Group %d: element base + j, one per thread, grid-stride.\n"
                    "extern \"C\" __global__ void __launch_bounds__(%d) jitc_g%d(const u32 n, const i64 base",
                 g, CUDA_BLOCK, g);
      for (int k = 0; k < P->narr[g]; k++) {
        int a = P->arr[g][k];
        buf_printf(b, ", %s%s *__restrict__ a%d", p->arrays[a].role == JITC_INPUT ? "const " : "",
                   cuda_ctype(p->arrays[a].dtype), a);
      }
      for (int k = 0; k < p->nparams; k++)
        buf_printf(b, ", const %s p%d", cuda_ctype(p->params[k].type), k);
      for (int k = 0; k < P->ntmp[g]; k++)
        buf_printf(b, ", %s *__restrict__ s%d", cuda_ctype(p->temps[P->tmp[g][k]]), P->tmp[g][k]);
      cuda_reduce_params(b, p, P->start[g], P->start[g + 1]);
      cuda_access_nd_param(b, p, pat, true);
      buf_puts(b, ") {\n  const u32 stride = gridDim.x * blockDim.x;\n");
      cuda_reduce_init(b, p, P->start[g], P->start[g + 1]);
      buf_puts(b, "  for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {\n"
                  "  const i64 i = base + (i64)j;\n  (void)i;\n");
      emit_divmod_vars(divmod[g], b);
      cuda_access_unravel(b, p, pat, P->arr[g], P->narr[g], CUDA_LOADS | CUDA_STORES, "i", "  ");
      char at[32];
      for (int k = 0; k < P->narr[g]; k++) {
        int a = P->arr[g][k], use = P->arr_use[g][k];
        const char *T = cuda_ctype(p->arrays[a].dtype);
        cuda_access_index(at, sizeof at, pat, p, a, "j");
        if (use == 1)
          buf_printf(b, "  const %s x%d = a%d[%s];\n", T, a, a, at);
        else if (use & 1)
          buf_printf(b, "  %s x%d = a%d[%s];\n", T, a, a, at);
        else
          buf_printf(b, "  %s x%d;\n", T, a);
      }
      for (int k = 0; k < P->ntmp[g]; k++)
        if (P->tmp_use[g][k] & 1)
          buf_printf(b, "  const %s t%d = s%d[j];\n", cuda_ctype(p->temps[P->tmp[g][k]]),
                     P->tmp[g][k], P->tmp[g][k]);
      if (bodies[g].s)
        buf_puts(b, bodies[g].s);
      for (int k = 0; k < P->narr[g]; k++)
        if (P->arr_use[g][k] & 2)
          buf_printf(b, "  a%d[%s] = x%d;\n", P->arr[g][k],
                     cuda_access_index(at, sizeof at, pat, p, P->arr[g][k], "j"), P->arr[g][k]);
      buf_puts(b, "  }\n");
      cuda_reduce_tail(b, p, P->start[g], P->start[g + 1]);
      buf_puts(b, "}\n");
    }
    cuda_reduce_kernel(b, p, true);
  }
  for (int g = 0; bodies && g < P->ng; g++)
    buf_free(&bodies[g]);
  free(bodies);
  free(divmod);
  free(E.temp_reads);
  return E.bad_op ? JITC_E_INTERNAL : ok && !out->oom ? JITC_OK : JITC_E_NOMEM;
}

jitc_status cuda_gen(const Program *p, const char *src, const CudaPlan *plan, int vec, int unroll,
                     const CudaPattern *pat, Buf *out, int *stmt_line, int *elem_end) {
  if (!cuda_pattern_any(pat, p) && !(pat && pat->kd > 0))
    pat = NULL;
  if (plan)
    return emit_split(p, src, plan, pat, out);
  return emit_program(p, src, vec, unroll, pat, out, stmt_line, elem_end);
}
