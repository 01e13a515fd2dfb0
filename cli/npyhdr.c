/*
** npyhdr.c -- the header of a .npy file: parsing it, and building it as
** np.save does.
**
** The header is a Python dict literal {'descr': '<f8', 'fortran_order':
** False, 'shape': (3, 4), }.  Files come from anywhere, so it is parsed by
** a small parser of its own (never an evaluator) that accepts what NumPy's
** reader accepts for the three keys and nothing else.  npy.c reads and
** writes the files around it, for .npy files and for the members of .npz
** archives alike.
*/
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* np.save leaves room for the growing axis to reach this many digits. */
#define NPY_GROWTH_DIGITS 21

/* "jitc reads bool, int8, ...": every type of jitc.h. */
static const char *supported(void) {
  static char text[512];
  if (!text[0]) {
    size_t k = (size_t)snprintf(text, sizeof text, "jitc reads ");
    dtype_list(text + k, sizeof text - k, ", ");
  }
  return text;
}

/* ---- the header parser ----
** The header is a Python dict literal.  We accept what NumPy's own reader
** accepts for the three keys: keys in any order, any whitespace, trailing
** commas in the dict and the tuple, either quote, and the 'L' suffix that
** Python 2 wrote after long integers. */

typedef struct Hdr {
  const char *s;
  size_t len, pos;
  const char *why; /* first parse error */
  /* results */
  char descr[64];
  bool structured;
  int fortran; /* -1: missing */
  int ndim;    /* -1: missing */
  int64_t shape[NPY_MAXDIMS];
  /* shape problems are reported with their own wording */
  const char *shape_why;
  char shape_bad[48];
} Hdr;

static void ws(Hdr *h) {
  while (h->pos < h->len && strchr(" \t\r\n\f\v", h->s[h->pos]))
    h->pos++;
}

static bool eat(Hdr *h, char c) {
  ws(h);
  if (h->pos < h->len && h->s[h->pos] == c) {
    h->pos++;
    return true;
  }
  return false;
}

static int peek(Hdr *h) {
  ws(h);
  return h->pos < h->len ? (unsigned char)h->s[h->pos] : -1;
}

static bool hfail(Hdr *h, const char *why) {
  if (!h->why)
    h->why = why;
  return false;
}

/* string = "'" chars "'" | '"' chars '"' (no escapes: NumPy never writes them) */
static bool parse_string(Hdr *h, char *out, size_t outsz) {
  int q = peek(h);
  if (q != '\'' && q != '"')
    return hfail(h, "expected a quoted string");
  h->pos++;
  size_t k = 0;
  while (h->pos < h->len && h->s[h->pos] != q) {
    if (h->s[h->pos] == '\\')
      return hfail(h, "escape sequences in strings are not supported");
    if (k + 1 >= outsz)
      return hfail(h, "string too long");
    out[k++] = h->s[h->pos++];
  }
  if (h->pos >= h->len)
    return hfail(h, "unterminated string");
  h->pos++;
  out[k] = '\0';
  return true;
}

static bool is_ident(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool parse_word(Hdr *h, const char *w) {
  size_t n = strlen(w);
  ws(h);
  if (h->len - h->pos >= n && memcmp(h->s + h->pos, w, n) == 0 &&
      (h->pos + n == h->len || !is_ident((unsigned char)h->s[h->pos + n]))) {
    h->pos += n;
    return true;
  }
  return false;
}

/* bool = "True" | "False" */
static bool parse_bool(Hdr *h, int *out) {
  if (parse_word(h, "True")) {
    *out = 1;
    return true;
  }
  if (parse_word(h, "False")) {
    *out = 0;
    return true;
  }
  return hfail(h, "fortran_order must be True or False");
}

/* dim = ["-"|"+"] digits ["L"] */
static bool parse_dim(Hdr *h, int64_t *out) {
  ws(h);
  size_t start = h->pos;
  bool neg = false;
  if (h->pos < h->len && (h->s[h->pos] == '-' || h->s[h->pos] == '+')) {
    neg = h->s[h->pos] == '-';
    h->pos++;
    ws(h);
  }
  if (h->pos >= h->len || h->s[h->pos] < '0' || h->s[h->pos] > '9')
    return hfail(h, "expected an integer in the shape");
  uint64_t v = 0;
  bool over = false;
  while (h->pos < h->len && h->s[h->pos] >= '0' && h->s[h->pos] <= '9') {
    unsigned d = (unsigned)(h->s[h->pos++] - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10)
      over = true;
    else
      v = v * 10 + d;
  }
  if (h->pos < h->len && (h->s[h->pos] == 'L' || h->s[h->pos] == 'l'))
    h->pos++;
  if (h->pos < h->len && is_ident((unsigned char)h->s[h->pos]))
    return hfail(h, "malformed integer in the shape");
  size_t n = h->pos - start;
  if (n >= sizeof h->shape_bad)
    n = sizeof h->shape_bad - 4;
  if ((neg && v != 0) || over) {
    if (!h->shape_why) {
      h->shape_why = neg ? "negative dimension" : "dimension too large";
      memcpy(h->shape_bad, h->s + start, n);
      h->shape_bad[n] = '\0';
      if (n < h->pos - start)
        strcat(h->shape_bad, "...");
    }
    v = 0;
  }
  *out = (int64_t)v;
  return true;
}

/* shape = "(" [dim ("," dim)* [","]] ")" */
static bool parse_shape(Hdr *h) {
  if (!eat(h, '('))
    return hfail(h, "shape must be a tuple");
  int nd = 0;
  while (peek(h) != ')') {
    int64_t d;
    if (!parse_dim(h, &d))
      return false;
    if (nd >= NPY_MAXDIMS) {
      if (!h->shape_why) {
        h->shape_why = "too many dimensions";
        snprintf(h->shape_bad, sizeof h->shape_bad, "more than %d", NPY_MAXDIMS);
      }
    } else {
      h->shape[nd] = d;
    }
    nd++;
    if (!eat(h, ',')) {
      if (peek(h) != ')')
        return hfail(h, "expected ',' or ')' in the shape");
    }
  }
  h->pos++;
  h->ndim = nd > NPY_MAXDIMS ? NPY_MAXDIMS : nd;
  return true;
}

/* header = "{" [item ("," item)* [","]] "}"
** item   = key ":" value     (key: 'descr' | 'fortran_order' | 'shape') */
static bool parse_header(Hdr *h) {
  bool have_descr = false;
  h->fortran = -1;
  h->ndim = -1;
  if (!eat(h, '{'))
    return hfail(h, "the header is not a dict (expected '{')");
  while (peek(h) != '}') {
    char key[32];
    if (peek(h) == -1)
      return hfail(h, "unterminated dict");
    if (!parse_string(h, key, sizeof key))
      return false;
    if (!eat(h, ':'))
      return hfail(h, "expected ':' after a key");
    if (strcmp(key, "descr") == 0 && !have_descr) {
      have_descr = true;
      if (peek(h) == '[') {
        /* a list of fields: a structured dtype.  No need to parse it. */
        h->structured = true;
        return true;
      }
      if (!parse_string(h, h->descr, sizeof h->descr))
        return false;
    } else if (strcmp(key, "fortran_order") == 0 && h->fortran < 0) {
      if (!parse_bool(h, &h->fortran))
        return false;
    } else if (strcmp(key, "shape") == 0 && h->ndim < 0) {
      if (!parse_shape(h))
        return false;
    } else if (!strcmp(key, "descr") || !strcmp(key, "fortran_order") || !strcmp(key, "shape")) {
      return hfail(h, "a key appears twice");
    } else {
      return hfail(h, "unexpected key (only 'descr', 'fortran_order' and 'shape' are allowed)");
    }
    if (!eat(h, ',') && peek(h) != '}')
      return hfail(h, "expected ',' or '}' in the dict");
  }
  h->pos++;
  ws(h);
  if (h->pos != h->len)
    return hfail(h, "unexpected text after the dict");
  if (!have_descr)
    return hfail(h, "the key 'descr' is missing");
  if (h->fortran < 0)
    return hfail(h, "the key 'fortran_order' is missing");
  if (h->ndim < 0)
    return hfail(h, "the key 'shape' is missing");
  return true;
}

/* A printable excerpt of the header for messages: control bytes escaped,
** trailing padding dropped, cut at about 60 characters. */
static void excerpt(const char *s, size_t len, char *out, size_t outsz) {
  size_t k = 0, i = 0;
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\n'))
    len--;
  for (; i < len && k + 8 < outsz && k < 60; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127)
      out[k++] = (char)c;
    else
      k += (size_t)snprintf(out + k, outsz - k, "\\x%02x", c);
  }
  if (i < len && k + 4 <= outsz) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
}

/* Maps a descr to a dtype; on failure writes why (naming the dtype).  A
** type whose typestr is a bare void ('<V2': ml_dtypes' bfloat16, which
** NumPy has no code for) is read only when the caller names it (*named):
** any two bytes could be behind such a descr. */
static int descr_dtype(const char *d, const jitc_dtype *named, jitc_dtype *t, char *why,
                       size_t whylen) {
  /* A type's typestr, with '<' or '|' (or neither, or '=': this is a
  ** little-endian machine) for its byte order, or bool's "?". */
  const char *body = d[0] && strchr("<|=", d[0]) ? d + 1 : d;
  if (!strcmp(body, "?")) {
    *t = JITC_BOOL;
    return 0;
  }
  for (int k = 0; k < JITC_NDTYPES; k++) {
    const char *ts = jitc_dtype_typestr((jitc_dtype)k);
    if (strcmp(body, ts + 1))
      continue;
    if (ts[1] == 'V' && !(named && *named == (jitc_dtype)k)) {
      snprintf(why, whylen, "dtype '%s' is raw bytes, which is how ml_dtypes saves %s: "
               "name the type to read it as one (--dtype NAME=%s)", d,
               jitc_dtype_name((jitc_dtype)k), jitc_dtype_name((jitc_dtype)k));
      return -1;
    }
    *t = (jitc_dtype)k;
    return 0;
  }

  const char *p = d;
  char order = 0;
  if (*p && strchr("<>|=!", *p))
    order = *p++;
  char kind = *p;
  const char *digits = kind ? p + 1 : p;
  char *end;
  long size = strtol(digits, &end, 10);
  bool sized = end != digits && *end == '\0' && size > 0 && size < 1000;
  char name[48] = "";
  switch (kind) {
  case 'i': case 'u': case 'f': case 'c':
    if (sized)
      snprintf(name, sizeof name, "%s%ld",
               kind == 'i' ? "int" : kind == 'u' ? "uint" : kind == 'f' ? "float" : "complex",
               size * 8);
    break;
  case 'b': snprintf(name, sizeof name, "%s", "bool"); break;
  case 'O': snprintf(name, sizeof name, "%s", "object"); break;
  case 'U': snprintf(name, sizeof name, "%s", "unicode string"); break;
  case 'S': case 'a': snprintf(name, sizeof name, "%s", "byte string"); break;
  case 'V': snprintf(name, sizeof name, "%s", "void/structured"); break;
  case 'M': snprintf(name, sizeof name, "%s", "datetime64"); break;
  case 'm': snprintf(name, sizeof name, "%s", "timedelta64"); break;
  default: break;
  }
  if (order == '>' || order == '!') {
    snprintf(why, whylen, "big-endian dtype '%s' is not supported; %s", d, supported());
  } else if (name[0]) {
    snprintf(why, whylen, "dtype '%s' (%s) is not supported; %s", d, name, supported());
  } else {
    snprintf(why, whylen, "dtype '%s' is not supported; %s", d, supported());
  }
  return -1;
}


int npy_header_parse(const char *text, size_t len, const jitc_dtype *named, NpyHeader *out,
                     char *why, size_t whylen) {
  Hdr h = {.s = text, .len = len};
  if (!parse_header(&h)) {
    char ex[96];
    excerpt(text, len, ex, sizeof ex);
    snprintf(why, whylen, "malformed header: %s at byte %zu of \"%s\"", h.why, h.pos, ex);
    return -1;
  }
  if (h.structured) {
    snprintf(why, whylen, "structured dtype (a list of fields) is not supported; %s",
             supported());
    return -1;
  }
  if (descr_dtype(h.descr, named, &out->dtype, why, whylen) != 0)
    return -1;
  if (h.shape_why) {
    snprintf(why, whylen, "bad shape in the header: %s (%s)", h.shape_why, h.shape_bad);
    return -1;
  }
  snprintf(out->descr, sizeof out->descr, "%s", h.descr);
  out->ndim = h.ndim;
  memcpy(out->shape, h.shape, sizeof out->shape);
  out->fortran = h.fortran != 0;
  return 0;
}

/* Builds the header exactly as np.save does.  Returns its length (magic
** included), or 0 if buf is too small. */
size_t npy_header_build(const HostArray *a, char *buf, size_t bufsz) {
  char dict[NPY_MAXDIMS * 24 + 256];
  char stext[NPY_MAXDIMS * 22 + 8];
  shape_text(a->shape, a->ndim, stext, sizeof stext);
  int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                   jitc_dtype_typestr(a->dtype), a->fortran ? "True" : "False", stext);
  if (a->ndim > 0) {
    char grow[24];
    int g = snprintf(grow, sizeof grow, "%lld",
                     (long long)a->shape[a->fortran ? a->ndim - 1 : 0]);
    for (int i = g; i < NPY_GROWTH_DIGITS; i++)
      dict[k++] = ' ';
    dict[k] = '\0';
  }
  size_t hlen = (size_t)k + 1; /* the final newline */
  int major = 1;
  size_t lenbytes = 2;
  size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lenbytes + hlen) % NPY_ALIGN;
  if (hlen + pad > 65535) {
    major = 2;
    lenbytes = 4;
    pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lenbytes + hlen) % NPY_ALIGN;
  }
  size_t total = NPY_MAGIC_LEN + 2 + lenbytes + hlen + pad;
  if (total > bufsz)
    return 0;
  unsigned char *p = (unsigned char *)buf;
  memcpy(p, NPY_MAGIC, NPY_MAGIC_LEN);
  p[6] = (unsigned char)major;
  p[7] = 0;
  uint32_t stored = (uint32_t)(hlen + pad);
  for (size_t i = 0; i < lenbytes; i++)
    p[8 + i] = (unsigned char)(stored >> (8 * i));
  size_t off = 8 + lenbytes;
  memcpy(p + off, dict, (size_t)k);
  off += (size_t)k;
  memset(p + off, ' ', pad);
  off += pad;
  p[off++] = '\n';
  return off;
}
