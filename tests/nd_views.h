/*
** nd_views.h -- float64 views of the shapes the checks of the fake driver
** use (tests/host_pipe_check.c, tests/dev_arrays_check.c): strided,
** reversed, transposed, unaligned and broadcast ones over buffers of their
** own, and the address of an element in a broadcast frame.  Each checker
** includes it once, after its CudaApi A and its next().
*/
#ifndef JITC_ND_VIEWS_H
#define JITC_ND_VIEWS_H

/* A float64 view: a shape and strides in bytes over a buffer of its own,
** pageable, pinned or device memory, every byte of which is checked after a
** run (the fake's device memory is host memory). */
enum { VIEW_PAGEABLE, VIEW_PINNED, VIEW_DEVICE };
typedef struct View {
  char *mem, *data;
  size_t bytes;
  int where; /* VIEW_* */
  int nd;
  int64_t shape[2], strides[2];
} View;

enum { V_CONTIG, V_TRANSPOSED, V_STEP2, V_REVERSED, V_UNALIGNED, V_ROW, V_COLUMN, V_ZERO,
       V_SCALAR };
static const char *const view_name[] = {"contiguous", "transposed", "every-other", "reversed",
                                        "unaligned", "row", "column", "zero-strides", "0-d"};

/* The address of element k (C order) of the frame fshape (fnd axes) in v,
** broadcast as NumPy does (v's axes aligned on the last; extent 1 repeats). */
static char *elem_at(const View *v, int fnd, const int64_t *fshape, int64_t k) {
  int64_t off = 0;
  for (int d = fnd - 1; d >= 0; d--) {
    int64_t idx = k % fshape[d];
    k /= fshape[d];
    int e = d - (fnd - v->nd);
    if (e >= 0 && v->shape[e] != 1)
      off += idx * v->strides[e];
  }
  return v->data + off;
}

/* A view of `kind` broadcasting to (r, c), or to (c,) when r is 0; its
** elements small integers, the rest of its buffer random bytes. */
static View view_new(int kind, int64_t r, int64_t c, int where) {
  const int64_t E = 8;
  bool two = r > 0;
  int64_t n = two ? r * c : c, elems = n, first = 0;
  View v = {.where = where, .nd = two ? 2 : 1};
  v.shape[0] = two ? r : c, v.shape[1] = c;
  v.strides[0] = two ? c * E : E, v.strides[1] = E;
  switch (kind) {
  case V_TRANSPOSED: /* a (c, r) matrix seen as (r, c) */
    if (two)
      v.strides[0] = E, v.strides[1] = r * E;
    break;
  case V_STEP2: /* every other element of each axis of a (2r, 2c) matrix */
    elems = 4 * n;
    v.strides[0] = two ? 4 * c * E : 2 * E, v.strides[1] = 2 * E;
    break;
  case V_REVERSED:
    v.strides[0] = -v.strides[0], v.strides[1] = -E, first = n - 1;
    break;
  case V_UNALIGNED:
    break; /* one byte in, below */
  case V_ROW:
    v.nd = 1, v.shape[0] = c, v.strides[0] = E, elems = c;
    break;
  case V_COLUMN:
    v.shape[two ? 1 : 0] = 1, elems = two ? r : 1;
    if (two)
      v.strides[0] = E;
    break;
  case V_ZERO: /* (r, c) with strides (8, 0): a column repeated by its strides */
    v.strides[v.nd - 1] = 0, v.strides[0] = two ? E : 0, elems = two ? r : 1;
    break;
  case V_SCALAR:
    v.nd = 0, elems = 1;
    break;
  }
  v.bytes = (size_t)elems * E + 16;
  CUdeviceptr d = 0;
  if (where == VIEW_PINNED)
    A.cuMemHostAlloc((void **)&v.mem, v.bytes, 0);
  else if (where == VIEW_DEVICE && A.cuMemAlloc(&d, v.bytes) == CUDA_SUCCESS)
    v.mem = (char *)(uintptr_t)d;
  else
    v.mem = malloc(v.bytes);
  for (size_t b = 0; b < v.bytes; b++)
    v.mem[b] = (char)next();
  v.data = v.mem + 8 + (kind == V_UNALIGNED) + first * E;
  int64_t fshape[2] = {two ? r : c, c};
  for (int64_t k = 0; k < n; k++) {
    double x = (double)(next() >> 44);
    memcpy(elem_at(&v, two ? 2 : 1, fshape, k), &x, 8);
  }
  return v;
}

static void view_free(View *v) {
  if (v->where == VIEW_PINNED)
    A.cuMemFreeHost(v->mem);
  else if (v->where == VIEW_DEVICE)
    A.cuMemFree((CUdeviceptr)(uintptr_t)v->mem);
  else
    free(v->mem);
}

#endif
