/*
** types_agree.h -- for tests/gpu/types_gpu.c: the elements of every type
** read from memory, and the rules by which a target's answer agrees with
** interp's (types_agree.c).  A complex element is its two parts, each read
** and compared as a float of the part's type.
*/
#ifndef JITC_TYPES_AGREE_H
#define JITC_TYPES_AGREE_H

#include "../../src/jitc_int.h"

/* How an output must agree with interp's (types_gpu.c's head).  A_FNAN: a
** function whose NaN argument is its result (ops.h's F_NANARG), within
** A_ULP otherwise; A_NANSIGN: a cast between float types, any NaN of the
** same sign; A_CULP: a complex function, each part within 4 ulp or 8
** epsilons of the larger finite part's magnitude; A_CPOW: a complex power,
** as A_CULP with 8 (1 + |b log a|) epsilons (exp(b log a) carries log a's
** rounding times the size of b log a; tol: that size, cpow_size()). */
typedef enum Agree { A_EXACT, A_ANYNAN, A_ULP, A_SUM, A_PROD, A_FNAN, A_NANSIGN, A_CULP,
                     A_CPOW } Agree;

/* |b log a| of complex elements j of a and b (type t); infinite (no bound)
** where it is not finite or where the phase's error bound, 8 (1 + |b log a|)
** epsilons in radians, reaches the phase's distance to an axis (a part's
** sign is not known there). */
double cpow_size(jitc_dtype t, const void *a, const void *b, int64_t j);

bool is_half(jitc_dtype t);
/* Element j of x (type t) as a double: a complex element's real part. */
double value(jitc_dtype t, const void *x, int64_t j);
/* Element j of x as text, its value and bits: a complex one part by part. */
void show_elem(char out[120], jitc_dtype t, const void *x, int64_t j);
/* How the result of op o on operands of type t agrees with interp's. */
Agree op_agree(int o, jitc_dtype t);
/* Whether element j of x agrees with y's for type t. tol: A_SUM's bound;
** argnan: the element's first operand is a NaN. */
bool agrees(jitc_dtype t, const void *x, const void *y, int64_t j, Agree how, double tol,
            bool argnan);
/* For `types_gpu ulps`: prints the largest difference of n results x from
** interp's y where both are finite, in ulps of a part and, for complex
** results, in epsilons of the larger part. */
void report_ulps(const char *tag, const char *what, jitc_dtype t, const void *x, const void *y,
                 int64_t n);

#endif
