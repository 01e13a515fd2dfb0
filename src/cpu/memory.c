/*
** cpu/memory.c -- the kernel's loads and stores of array elements: W
** contiguous elements as one vector (under G->mask in the last, partial
** iteration), or, for an array that a variant of the kernel reads
** otherwise (GenTarget.reads; cpu/run.c), its one element in every lane
** (a broadcast column, a 0-d array) or every other element (x[::2]).
*/
#include "cpu.h"

#ifdef JITC_HAVE_LLVM

/* W elements of type t at base[idx], a vector of the array's memory type
** made a value (bool: 0 or 1 bytes to i1); under G->mask only the lanes in
** range are read and the others are zero. */
LLVMValueRef load_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx) {
  if (dtype_is_complex(t)) return cx_load(G, t, base, idx);
  LLVMTypeRef mt = mem_type(G, t), vt = LLVMVectorType(mt, W);
  LLVMValueRef p = LLVMBuildGEP2(G->B, mt, base, &idx, 1, "");
  LLVMValueRef v;
  unsigned align = (unsigned)jitc_dtype_size(t);
  if (G->mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {p, LLVMConstInt(G->ti32, align, 0), G->mask, LLVMConstNull(vt)};
    v = intrinsic(G, "llvm.masked.load", types, 2, args, 4);
  } else {
    v = LLVMBuildLoad2(G->B, vt, p, "");
    LLVMSetAlignment(v, align);
  }
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(vt));
  return v;
}

/* Stores value v of type t to the W elements at base[idx] (under G->mask). */
void store_vec(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx, LLVMValueRef v) {
  if (dtype_is_complex(t)) { cx_store(G, t, base, idx, v); return; }
  LLVMTypeRef mt = mem_type(G, t), vt = LLVMVectorType(mt, W);
  if (t == JITC_BOOL) v = LLVMBuildZExt(G->B, v, vt, "");
  LLVMValueRef ptr = LLVMBuildGEP2(G->B, mt, base, &idx, 1, "");
  unsigned align = (unsigned)jitc_dtype_size(t);
  if (G->mask) {
    LLVMTypeRef types[2] = {vt, G->tptr};
    LLVMValueRef args[4] = {v, ptr, LLVMConstInt(G->ti32, align, 0), G->mask};
    intrinsic(G, "llvm.masked.store", types, 2, args, 4);
  } else {
    LLVMSetAlignment(LLVMBuildStore(G->B, v, ptr), align);
  }
}

/* The W elements base[2 idx], base[2 idx + 2], ... (a step of two
** elements).  A whole iteration loads W elements from base[2 idx] and W
** that end on the last one wanted, base[2 idx + W - 1] on, so that nothing
** past it is read (it may be the last of the memory), and takes the even
** elements of both; under G->mask, one masked load of 2W lanes whose odd
** lanes are off. */
static LLVMValueRef load_every2(Gen *G, jitc_dtype t, LLVMValueRef base, LLVMValueRef idx) {
  LLVMTypeRef mt = mem_type(G, t);
  unsigned align = (unsigned)jitc_dtype_size(t), even[W];
  LLVMValueRef i2 = LLVMBuildShl(G->B, idx, LLVMConstInt(G->ti64, 1, 0), "");
  LLVMValueRef p = LLVMBuildGEP2(G->B, mt, base, &i2, 1, ""), v;
  if (G->mask) {
    unsigned spread[2 * W];
    for (unsigned k = 0; k < 2 * W; k++) spread[k] = k % 2 ? W : k / 2; /* lane W: off */
    LLVMValueRef m2 = shuffle(G, G->mask, LLVMConstNull(LLVMTypeOf(G->mask)), spread, 2 * W);
    LLVMTypeRef vt2 = LLVMVectorType(mt, 2 * W), types[2] = {vt2, G->tptr};
    LLVMValueRef args[4] = {p, LLVMConstInt(G->ti32, align, 0), m2, LLVMConstNull(vt2)};
    for (unsigned k = 0; k < W; k++) even[k] = 2 * k;
    v = shuffle(G, intrinsic(G, "llvm.masked.load", types, 2, args, 4), NULL, even, W);
  } else {
    LLVMTypeRef vt = LLVMVectorType(mt, W);
    LLVMValueRef off = LLVMConstInt(G->ti64, W - 1, 0);
    LLVMValueRef a = LLVMBuildLoad2(G->B, vt, p, "");
    LLVMValueRef b = LLVMBuildLoad2(G->B, vt, LLVMBuildGEP2(G->B, mt, p, &off, 1, ""), "");
    LLVMSetAlignment(a, align);
    LLVMSetAlignment(b, align);
    /* a holds elements 2 idx .. 2 idx + W - 1, b 2 idx + W - 1 on: the
    ** even ones are a's even lanes and b's odd ones. */
    for (unsigned k = 0; k < W; k++) even[k] = k < W / 2 ? 2 * k : W + 2 * (k - W / 2) + 1;
    v = shuffle(G, a, b, even, W);
  }
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)));
  return v;
}

/* Array s's value at the W elements of the iteration: its vector, its one
** element (at the array's address) in every lane, or every other element. */
LLVMValueRef load_array(Gen *G, int s) {
  jitc_dtype t = G->prog->arrays[s].dtype;
  uint64_t bit = s < 64 ? (uint64_t)1 << s : 0;
  if (G->gt->reads.two & bit) return load_every2(G, t, G->arr[s], G->i);
  if (!(G->gt->reads.one & bit)) return load_vec(G, t, G->arr[s], G->i);
  LLVMValueRef v = LLVMBuildLoad2(G->B, mem_type(G, t), G->arr[s], "");
  LLVMSetAlignment(v, (unsigned)jitc_dtype_size(t));
  v = splat(G, v);
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)));
  return v;
}

#endif /* JITC_HAVE_LLVM */
