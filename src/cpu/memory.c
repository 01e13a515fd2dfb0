/*
** cpu/memory.c -- the kernel's loads and stores of array elements: W
** contiguous elements as one vector (under G->mask in the last, partial
** iteration), or, for an array that a variant of the kernel reads as one
** element over the whole call (GenTarget.bcast: a broadcast column, a 0-d
** array; cpu/run.c), that element in every lane.
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

/* Array s's value at the W elements of the iteration: its vector, or its
** one element (at the array's address) in every lane. */
LLVMValueRef load_array(Gen *G, int s) {
  jitc_dtype t = G->prog->arrays[s].dtype;
  if (s >= 64 || !(G->gt->bcast >> s & 1)) return load_vec(G, t, G->arr[s], G->i);
  LLVMValueRef v = LLVMBuildLoad2(G->B, mem_type(G, t), G->arr[s], "");
  LLVMSetAlignment(v, (unsigned)jitc_dtype_size(t));
  v = splat(G, v);
  if (t == JITC_BOOL) v = icmp(G, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)));
  return v;
}

#endif /* JITC_HAVE_LLVM */
