/*
** cli.h -- the jitc command line: what its steps share.
**
** The tool is a client of the public library (jitc.h) and of the runtime's
** helpers (runtime.h), with no private back doors.  main.c runs the steps;
** each step lives in a file of its own concern:
**
**   args.c     options, usage, -D values, and that every name given is used
**   inputs.c   the program text, the inputs (.npy files or generators),
**              the shape, the signature, the note on inputs of ones
**              (--strict: the error), and each target's arrays
**   targets.c  which targets run, and --emit
**   run.c      compiling and running on each target
**   compare.c  whether the targets agree (-t all)
**   report.c   the text and --json report, and the library's messages
**   outputs.c  writing the outputs atomically (all of them or none)
**   info.c     --version and --info
**
** and the array support only the command line (and the benchmarks) use:
**
**   elem.c     one element of any type: its kind, its value, astype's
**              conversions (the 16-bit floats' included), the list of types
**   host.c     HostArray, the aligned host buffers
**   fileio.c   whole reads and writes, files written atomically
**   npyhdr.c   the .npy header: parsed, and built as np.save does
**   npy.c      reading and writing .npy files
**   zip.c      the zip container of .npz files (zlib's deflate)
**   npz.c      reading and writing .npz files
**   gen.c      generated inputs (ones, arange, rand, ...), NumPy's MT19937
**   format.c   NumPy-style printing of arrays and values
**   json.c     JSON string literals
*/
#ifndef JITC_CLI_H
#define JITC_CLI_H

#include "../src/jitc.h"
#include "../runtime/runtime.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, as sysexits.h names them (jitc --help lists them). */
enum { EX_OK = 0, EX_DISAGREE = 1, EX_USAGE = 64, EX_DATAERR = 65, EX_NOINPUT = 66,
       EX_UNAVAILABLE = 69, EX_SOFTWARE = 70, EX_OSERR = 71, EX_CANTCREAT = 73,
       EX_IOERR = 74 };

/* ---- elem.c: one element of any type ---- */

/* The kind of a type, from its typestr (bfloat16, '<V2', is a float). */
typedef enum ElemKind { EK_BOOL, EK_SINT, EK_UINT, EK_FLOAT, EK_COMPLEX } ElemKind;
ElemKind elem_kind(jitc_dtype t);
/* The type of a complex type's parts (the float type of half its size:
** complex64's float32); any other type itself.  Element i of a complex
** array is elements 2i (real) and 2i+1 (imaginary) of its part type. */
jitc_dtype elem_part_type(jitc_dtype t);
/* A float (or complex) type's significand bits (of its parts): 53, 24, 11
** (float16), 8 (bfloat16). */
int elem_mant_bits(jitc_dtype t);

/* Element i as a number: ints (a uint64's bits as int64 for elem_get_int),
** and floats widened exactly (the 16-bit ones through float32); of a
** complex type the real part (astype(float64) drops the imaginary one). */
int64_t elem_get_int(const void *data, jitc_dtype t, int64_t i);
double elem_get(const void *data, jitc_dtype t, int64_t i);
/* Writes element i as astype does from float64 / from int64 (integers
** wrap; floats out of an integer type's range saturate, NaN gives 0; a
** complex type gets the value as its real part, 0 as its imaginary). */
void elem_set_float(void *data, jitc_dtype t, int64_t i, double v);
void elem_set_int(void *data, jitc_dtype t, int64_t i, int64_t v);
/* Writes element i of a complex type t from complex128 (re, im), as
** astype does: each part rounded to the part type. */
void elem_set_complex(void *data, jitc_dtype t, int64_t i, double re, double im);
/* x converted to t and back, as a number: a float rounded to t's precision. */
double elem_round(jitc_dtype t, double x);
/* Whether the integer v (a uint64's bits when `big`) is a value of integer
** type t (any value is one of a bool or float type's, rounded). */
bool elem_int_fits(jitc_dtype t, int64_t v, bool big);
/* Copies element 0 over elements 1..n-1. */
void elem_fill(void *data, jitc_dtype t, int64_t n);

/* IEEE binary16 and bfloat16, rounded to nearest even; NaN stays NaN. */
uint16_t f16_from_double(double d);
float f16_to_float(uint16_t h);
uint16_t bf16_from_float(float f);
float bf16_to_float(uint16_t h);

/* "bool, int8, ..., float64" (last_sep before the last: ", " or " or "):
** every type of jitc.h, by kind, then size. */
void dtype_list(char *out, size_t outsz, const char *last_sep);

/* ---- host.c: arrays in host memory ---- */

#define NPY_MAXDIMS JITC_MAXDIMS

/* An array in host memory with its shape. */
typedef struct HostArray {
  jitc_dtype dtype;
  int ndim;
  int64_t shape[NPY_MAXDIMS];
  bool fortran;  /* Fortran order (the first axis varies fastest in memory) */
  int64_t n;     /* number of elements (product of shape) */
  void *data;    /* 64-byte aligned, freed by host_array_free */
} HostArray;

/* Allocates n elements of dtype, 64-byte aligned, 1-D shape {n}; -1 on
** out of memory (or a size that overflows), with err saying how many bytes
** it wanted: "out of memory: cannot allocate 8000000000000 bytes (7.3 TiB)",
** to which a caller adds " for 'a'". */
int host_array_alloc(HostArray *a, jitc_dtype dtype, int64_t n, char *err, size_t errlen);

/* bytes in binary units, one decimal: "512 B", "7.3 TiB". */
void size_text(double bytes, char *out, size_t outsz);
void host_array_free(HostArray *a);

/* The strides in bytes of a's elements, contiguous in its order (C or
** Fortran), as a jitc_array takes them. */
void host_strides(const HostArray *a, int64_t *strides);

/* A shape as Python writes the tuple: "(3,)", "(2, 3)", "()". */
void shape_text(const int64_t *shape, int ndim, char *out, size_t outsz);

/* ---- fileio.c: whole reads and writes, files written atomically ---- */

/* Writes "PATH: message" to err; returns -1. */
int file_fail(char *err, size_t errlen, const char *path, const char *fmt, ...) PRINTF(4, 5);
/* Up to len bytes (less only at the end of the file), or -1 with errno set. */
int64_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len); /* 0, or -1 with errno set */
/* Opens a regular file for reading (anything else is refused before it is
** opened: a FIFO would block); the descriptor, or -1 with err ("PATH: is a
** directory, not WHAT"). */
int file_open_regular(const char *path, const char *what, char *err, size_t errlen);

/* A file written beside its destination, renamed over it when complete:
** an existing file keeps its content (and gives its mode) until then.  A
** symbolic link's target is the destination, as a write through the link
** would make it; a destination that exists and is no regular file (a
** device, a FIFO) is written in place, as np.save writes /dev/null.  Each
** call returns 0, or -1 with err, having removed the temporary file. */
typedef struct NewFile {
  const char *path;
  char *tmp;
  char *real; /* the link's target, or NULL */
  int fd;
} NewFile;
int newfile_open(NewFile *f, const char *path, char *err, size_t errlen);
int newfile_write(NewFile *f, const void *buf, size_t len, char *err, size_t errlen);
int newfile_commit(NewFile *f, char *err, size_t errlen);
void newfile_abort(NewFile *f); /* after a failure elsewhere; twice is harmless */

/* ---- npyhdr.c: the header of a .npy file ---- */

typedef struct NpyHeader {
  jitc_dtype dtype;
  char descr[64]; /* as the file spells it, for messages */
  int ndim;
  int64_t shape[NPY_MAXDIMS];
  bool fortran;
} NpyHeader;

/* Parses the header dict text[0..len) (NUL-free); `named` as npy_read's.
** 0, or -1 with why ("malformed header: ...", "dtype '>f8' is ..."). */
int npy_header_parse(const char *text, size_t len, const jitc_dtype *named, NpyHeader *h,
                     char *why, size_t whylen);
/* The bytes np.save writes before a's data (magic, version, length, dict,
** padding to 64 bytes); their count, or 0 when buf is too small. */
#define NPY_HEADER_MAX (NPY_MAXDIMS * 24 + 512)
size_t npy_header_build(const HostArray *a, char *buf, size_t bufsz);

/* ---- npy.c ---- */

/* Bytes an .npy is read from: a file, or a member of a .npz archive. */
typedef struct ByteSrc {
  const char *name; /* for messages: the path, or "FILE.npz:NAME" */
  int64_t size;     /* its length, known before reading */
  /* Up to len bytes (less only at the end), or -1 with why. */
  int64_t (*read)(void *ctx, void *buf, size_t len, char *why, size_t whylen);
  void *ctx;
  char why[256];
} ByteSrc;

/* Reads a .npy file (format 1.0, 2.0, 3.0; little-endian or '|'; C or
** Fortran order, kept as it is: out->fortran says which; every dtype of
** jitc.h).  Never reads past the validated data.  named: the type the
** caller says the file holds, or NULL; a type with a bare void typestr
** (bfloat16's '<V2') is read only when named.  -1 when the file is missing
** or bad, -2 when the memory for its data cannot be allocated. */
int npy_read(const char *path, const jitc_dtype *named, HostArray *out, char *err,
             size_t errlen);
/* The same from any source of bytes; header_only: the dtype, shape, order
** and n alone, data NULL. */
int npy_read_src(ByteSrc *src, const jitc_dtype *named, bool header_only, HostArray *out,
                 char *err, size_t errlen);

/* Whether a can be written: its shape holds its n elements; -1 with err. */
int npy_check(const HostArray *a, char *err, size_t errlen, const char *path);
/* Writes a .npy file (format 1.0, or 2.0 when the header needs it), in
** a's order, atomically (NewFile).  The descr is the type's typestr:
** bfloat16's '<V2', which np.load(path).view(ml_dtypes.bfloat16) reads. */
int npy_write(const char *path, const HostArray *a, char *err, size_t errlen);

/* ---- zip.c: the zip container of .npz files ---- */

typedef struct ZipEntry {
  char *name;
  uint64_t csize, usize, offset; /* compressed and real sizes, its local header */
  uint32_t crc;
  int method, flags; /* 0 stored, 8 deflated */
} ZipEntry;

/* An archive open for reading: its directory, checked against its size. */
typedef struct Zip {
  const char *path;
  int fd;
  int64_t size;
  ZipEntry *e;
  int n;
} Zip;

/* Opens an archive and reads its directory: 0, or -1 with err (missing,
** not a zip archive, truncated, a bad directory). */
int zip_open(Zip *z, const char *path, char *err, size_t errlen);
void zip_close(Zip *z);

/* A member's bytes as a stream: opened (-1 with err for a bad member, -3
** for a deflated one in a build without zlib), read (as ByteSrc's read:
** checked against the directory's size and CRC-32 when the last byte is
** read), closed. */
typedef struct ZipStream ZipStream;
int zip_stream_open(const Zip *z, const ZipEntry *e, ZipStream **s, char *err, size_t errlen);
int64_t zip_stream_read(ZipStream *s, void *buf, size_t len, char *why, size_t whylen);
void zip_stream_close(ZipStream *s);

/* One member to write: head then body, stored. */
typedef struct ZipPart {
  const char *name;
  const void *head, *body;
  uint64_t head_len, body_len;
} ZipPart;
/* Writes an archive of stored members atomically (NewFile), with ZIP64
** records where sizes or offsets need them. */
int zip_write(const char *path, const ZipPart *parts, int n, char *err, size_t errlen);

uint32_t zip_crc32(uint32_t crc, const void *buf, size_t len);
/* zlib's version, or NULL in a build without it (stored archives only). */
const char *zip_deflate_library(void);

/* ---- npz.c: .npz files, zip archives of .npy members ---- */

/* The array a member holds: its name without ".npy"; false for a member
** that is not a .npy file. */
bool npz_array_name(const ZipEntry *e, char *out, size_t outsz);
/* The member holding array `name`, or -1. */
int npz_find(const Zip *z, const char *name);
/* "'a', 'b', ..." (at most 8), or "no array", for messages. */
void npz_names(const Zip *z, char *out, size_t outsz);
/* Reads member k as npy_read_src reads a .npy (-1, -2 as it; -3:
** compressed, and no zlib in this build). */
int npz_read(const Zip *z, int k, const jitc_dtype *named, bool header_only, HostArray *out,
             char *err, size_t errlen);
/* Writes arrays[k] as members names[k].npy, stored, atomically. */
int npz_write(const char *path, const char *const *names, const HostArray *const *arrays, int n,
              char *err, size_t errlen);

/* ---- gen.c: generated inputs ---- */

/* Fills a (already allocated) from SPEC: ones, zeros, arange,
** linspace:LO:HI, full:VALUE, rand[:SEED], randn[:SEED].  rand and randn are
** bit-exact with np.random.seed(SEED); np.random.rand(n) / randn(n) (float64,
** then cast to the dtype as NumPy's astype does).  Default seed 1. */
int gen_fill(HostArray *a, const char *spec, char *err, size_t errlen);

/* True if spec names a generator (as opposed to a file). */
bool gen_is_spec(const char *spec);

/* A complex value as Python's complex() reads it, with an imaginary part:
** IMAGj, REAL+IMAGj or REAL-IMAGj ('j' or 'J'; "j" alone is 1j, "1-j"
** 1-1j), in parentheses or not, without spaces; each part a decimal float,
** inf or nan.  False for anything else (a real value too). */
bool gen_parse_complex(const char *s, double *re, double *im);

/* NumPy's legacy MT19937 random state. */
typedef struct Mt19937 {
  uint32_t key[624];
  int pos;
  bool has_gauss;
  double gauss;
} Mt19937;
void mt_seed(Mt19937 *st, uint32_t seed);
uint32_t mt_next32(Mt19937 *st);
double mt_double(Mt19937 *st);  /* np.random.rand */
double mt_gauss(Mt19937 *st);   /* np.random.randn (legacy polar method) */

/* ---- format.c: NumPy-style printing ---- */

/* A NumPy-style one-line summary of a 1-D array, malloc'ed:
** "[2. 2. 2. ... 2. 2. 2.]" -- summarised with "..." above 1000 elements,
** 3 at each end, as NumPy does; elements separated by one space (no
** padding); each float the shortest text that reads back as the same value
** of its dtype (float32 as float32), with NumPy's spellings: "2." for
** integral values, "nan", "inf", "-inf", "-0.", exponent form like NumPy's
** repr ("1e+20", "1.5e-07") where NumPy's scalar repr uses it; bools
** "True"/"False"; ints in decimal.  Example for float32:
** "[5.0750957 0.5423974 0.58968204 0.34199178 2.3759744]". */
char *format_array(const void *data, jitc_dtype dtype, int64_t n);

/* Array a as NumPy's np.array2string lays it out (str(a)): nested
** brackets, each row on a line of its own, the blocks of a 3-D array
** separated by a blank line, continuation lines indented to stand under
** the opening bracket, which is at column `indent` (the length of what is
** printed before it on its line); summarised above 1000 elements with 3
** rows or elements at each end of every axis longer than 6, "..." between;
** elements spelled as format_array spells them, in the logical order
** whatever a's memory order.  1-D: format_array's text; 0-d:
** format_value's; empty: "[]". */
char *format_nd(const HostArray *a, int indent);

/* One value in the same spelling as format_array uses for elements. */
char *format_value(const void *elem, jitc_dtype dtype);

/* ---- json.c ---- */

/* s as a JSON string literal: valid UTF-8 copied, control characters
** escaped, each byte that is not valid UTF-8 replaced by U+FFFD. */
void json_string(FILE *f, const char *s);

/* ---- the command line's state, filled in step by step ---- */

#define MAX_NAMED 1024

/* NAME=VALUE of --in, --out, --dtype NAME= and -D. */
typedef struct Named {
  const char *name;
  const char *value;
  bool whole; /* an array of a --in FILE.npz: bound where the program uses it */
} Named;

/* The options as given. */
typedef struct Cli {
  const char *program;
  const char *program_file;
  const char *target; /* NULL: the library's default */
  int ndim;           /* -n: the shape of generated inputs, */
  int64_t shape[NPY_MAXDIMS];
  int64_t n;          /* its element count */
  bool n_given;
  jitc_dtype dtype;
  Named ins[MAX_NAMED], outs[MAX_NAMED], defs[MAX_NAMED], dtypes[MAX_NAMED];
  int nins, nouts, ndefs, ndtypes;
  /* --in FILE.npz and --out FILE.npz: every array of the archive */
  const char *in_archives[MAX_NAMED], *out_archives[MAX_NAMED];
  int nin_archives, nout_archives;
  const char *emit;
  int repeat;
  bool json, quiet;
  bool strict; /* --strict: no input of ones */
  jitc_options opt;
} Cli;

/* One array of the run, with where its data came from. */
typedef struct Arr {
  const char *name;
  jitc_role role;
  jitc_dtype dtype;
  const char *source; /* file name, generator spec, or "new" */
  bool defaulted;     /* an input not given with --in: ones */
  HostArray data;     /* the data this target runs on */
  HostArray initial;  /* inputs and in-place arrays: the data before any run */
} Arr;

/* How a target's array compares with the first target's (-t all). */
typedef struct Agree {
  double ulps;        /* the largest difference */
  jitc_dtype ulps_in; /* in ulps of this type: the array's, or a narrower one */
  bool ok;           /* within the tolerance */
  bool identical;
} Agree;

/* One target's compile and run. */
typedef struct Result {
  jitc_target target;
  bool ran;
  double compile_ms, run_ms, total_ms;
  jitc_compile_info cinfo;
  jitc_run_info rinfo;
  jitc_kernel *kernel;
  Arr *arrs;    /* the kernel's arrays, in its order */
  Agree *agree; /* per array, for targets after the first */
} Result;

/* Everything one invocation works with. */
typedef struct Run {
  Cli cli;
  double start_ms;
  char *source; /* the program text */
  jitc_context *ctx;
  /* Inputs read from files, by --in index (isfile false for generators;
  ** the data of an array of a --in FILE.npz is read only once the program
  ** is known to use it: until then data is NULL). */
  HostArray files[MAX_NAMED];
  bool isfile[MAX_NAMED];
  /* The shapes (shape.c): of the generated inputs, of the run (the
  ** broadcast shape, n elements), and the outputs' memory order. */
  int gen_ndim, ndim;
  int64_t gen_shape[NPY_MAXDIMS], shape[NPY_MAXDIMS];
  int64_t n;
  bool out_fortran;
  bool flat; /* no input array: a flat run of n elements (-n gives them) */
  /* Per array of the kernel, a result's shape: () for a whole reduction,
  ** the kept axes for one over some (jitc_array_shape). */
  int *res_ndim;
  int64_t (*res_shape)[NPY_MAXDIMS];
  /* The signature: the arrays' dtypes and the -D scalars with their values. */
  jitc_array_decl decls[2 * MAX_NAMED];
  int ndecls;
  jitc_scalar_decl sdecls[MAX_NAMED];
  jitc_value svals[MAX_NAMED];
  jitc_target targets[JITC_NTARGETS];
  int ntargets;
  Result results[JITC_NTARGETS];
  int nres;  /* targets compiled so far */
  int narrs; /* arrays of the kernel (the same on every target) */
} Run;

/* ---- the steps ---- */

/* args.c */
_Noreturn void die_usage(const char *fmt, ...) PRINTF(1, 2);
void parse_args(Cli *cli, int argc, char **argv); /* exits on --help, --version, errors */
void parse_def(const Named *d, jitc_scalar_decl *decl, jitc_value *val);
int check_names(const Cli *cli, const jitc_kernel *k);

/* inputs.c */
int read_program(Run *r);
int load_inputs(Run *r);
int load_used(Run *r, const jitc_kernel *k);
bool archive_spec(const char *spec, const char *name, char *path, size_t pathsz,
                  const char **member);
void declare_signature(Run *r);
bool enough_memory(const Run *r, const jitc_kernel *k);
int default_inputs(const Run *r, const jitc_kernel *k);
int make_arrays(Run *r, Result *res);
void free_inputs(Run *r);

/* shape.c */
int plan_shapes(Run *r, const jitc_kernel *k);
void array_shape(const Run *r, int a, jitc_role role, int in, int *ndim,
                 const int64_t **shape, bool *fortran);
int input_index(const Cli *cli, const char *name); /* the --in of array name, or -1 */

/* targets.c */
void choose_targets(Run *r);
int emit_stages(Run *r);
jitc_status frontend_compile(Run *r, jitc_kernel **k);

/* stages.c */
/* "LEAD tokens, ast, types; cpu: llvm, ..." from the library's stage lists,
** wrapped at `width` columns with continuation lines indented by `indent`. */
void stage_help(FILE *f, const char *lead, int indent, int width);
int frontend_stages(void); /* the stages every target lists first, alike */
/* LEAD, then TEXT's words wrapped as stage_help wraps them. */
void wrap_help(FILE *f, const char *lead, const char *text, int indent, int width);

/* run.c */
int run_targets(Run *r);

/* compare.c */
int compare_targets(Run *r);

/* report.c */
const char *errmsg_text(jitc_context *ctx, jitc_status st);
int fail_status(jitc_context *ctx, jitc_status st);
void report(const Run *r);

/* outputs.c */
int make_temps(const Run *r, const jitc_kernel *k);
int write_outputs(Run *r);
void free_temps(void);

/* info.c */
void print_version(bool info, const char *cache_dir);

#endif
