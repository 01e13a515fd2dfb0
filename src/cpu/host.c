/*
** cpu/host.c -- the functions of the library that the cpu target's
** generated code calls.  The library exports jitc.h's names only, so the
** JIT cannot find these in the process as it finds libm's and SLEEF's:
** cpu/build.c gives it their addresses under the names of cpu_host_fns.
**
** One so far: the semantics of an operation (semantics.h, the very code
** the interpreter runs) on the elements of arrays in memory.  A kernel
** calls it for the complex functions whose vector code would not give
** interp's results (cpu/complex.c), W elements a call.
*/
#include "cpu.h"

#include <string.h>

#include "../semantics.h"

/* CPU_HOST_SEM: op, the result type and the operand type from the code.
** An operation the semantics lack (interp refuses to run it) gives NaN
** bits rather than whatever the frame held. */
static void host_sem(uint32_t code, void *dst, const void *a0, const void *a1, const void *a2,
                     int32_t m) {
  OpId op = (OpId)(code & 0xffff);
  jitc_dtype r = (jitc_dtype)(code >> 16 & 0xff), t = (jitc_dtype)(code >> 24);
  if (!sem_exec(op, r, t, dst, a0, a1, a2, m)) memset(dst, 0xff, jitc_dtype_size(r) * (size_t)m);
}

const HostFn cpu_host_fns[] = {
  {CPU_HOST_SEM, (void (*)(void))host_sem},
  {NULL, NULL},
};
