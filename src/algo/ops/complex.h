/* Complex dtypes, BLAS and FFT (include/kiln/linalg.h): what the array
 * files call for complex arrays, and what the BLAS and FFT files share.
 *   complex.c       complex arithmetic, views, casts and reductions
 *   complex_fn.c    the kernel helpers of the complex functions (sin ... pow)
 *   blas*.c, fft*.c the library calls (src/algo/linalg/blas/, src/algo/linalg/fft/) */
#ifndef KILN_ALGO_LINALG_INTERNAL_H
#define KILN_ALGO_LINALG_INTERNAL_H

#include "algo/ops/ops_internal.h"
#include "base/strbuf.h"

/* The operators of array_ops.c and array_fill.c on complex operands (a,
 * b or out complex). scalar: NULL for kiln_array_binary_out. */
kiln_status kiln__complex_binary(kiln_queue *q, kiln_binary_op op, kiln_array *out, kiln_array *a,
                                 kiln_array *b, const double *scalar, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event);
kiln_status kiln__complex_unary(kiln_queue *q, kiln_unary_op op, kiln_array *out, kiln_array *a,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* The helper (name without its "f" suffix) of the complex function op
 * (a kiln_unary_op when unary, else a kiln_binary_op) past exp/sqrt/log,
 * its kernel text for dtype d (with what it calls) appended to pre;
 * NULL for an op without one (complex_fn.c). */
const char *kiln__complex_fn(int unary, int op, kiln_dtype d, kiln__sb *pre);
/* The reduction descriptor of op over complex array elements x[i]:
 * fills d (texts in static storage) and *finish; KILN_ERROR_UNSUPPORTED
 * for an op without meaning on complex numbers. */
kiln_status kiln__complex_reduce_desc(kiln_reduce_op op, kiln_dtype dtype, kiln_reduction_desc *d,
                                      const char **finish);
/* sum x[i]*y[i], conjugating x when conj: the descriptor for dot/vdot. */
void kiln__complex_dot_desc(kiln_dtype dtype, int conj, kiln_reduction_desc *d);

#endif
