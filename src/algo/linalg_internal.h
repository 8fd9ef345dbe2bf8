/* Complex dtypes, BLAS and FFT (include/kiln/linalg.h): what the array
 * files call for complex arrays, and what the BLAS and FFT files share.
 *   complex.c       complex arithmetic, views, casts and reductions
 *   blas*.c, fft*.c the library calls (src/algo/blas/, src/algo/fft/) */
#ifndef KILN_ALGO_LINALG_INTERNAL_H
#define KILN_ALGO_LINALG_INTERNAL_H

#include "algo/array_internal.h"

int kiln__is_complex_dtype(kiln_dtype d);
/* FLOAT32 for COMPLEX64, FLOAT64 for COMPLEX128; d itself otherwise. */
kiln_dtype kiln__complex_part_dtype(kiln_dtype d);
/* The complex dtype with parts of dtype d (FLOAT32/FLOAT64), or 0. */
kiln_dtype kiln__complex_of(kiln_dtype d);

/* The operators of array_ops.c and array_fill.c on complex operands (a,
 * b or out complex). scalar: NULL for kiln_array_binary. */
kiln_status kiln__complex_binary(kiln_queue *q, kiln_binary_op op, kiln_array *out, kiln_array *a,
                                 kiln_array *b, const double *scalar, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event);
kiln_status kiln__complex_unary(kiln_queue *q, kiln_unary_op op, kiln_array *out, kiln_array *a,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Fill of a strided complex view: its real and imaginary views. */
kiln_status kiln__complex_fill(kiln_queue *q, kiln_array *a, const void *value, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event);
/* The reduction descriptor of op over complex array elements x[i]:
 * fills d (texts in static storage) and *finish; KILN_ERROR_UNSUPPORTED
 * for an op without meaning on complex numbers. */
kiln_status kiln__complex_reduce_desc(kiln_reduce_op op, kiln_dtype dtype, kiln_reduction_desc *d,
                                      const char **finish);
/* sum x[i]*y[i], conjugating x when conj: the descriptor for dot/vdot. */
void kiln__complex_dot_desc(kiln_dtype dtype, int conj, kiln_reduction_desc *d);

#endif
