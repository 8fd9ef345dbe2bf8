/* Arrays' private pieces (include/kiln/array.h), shared by their files:
 *   array.c           objects: create, retain, release, info, accessors
 *   array_view.c      views: slices, swapaxes, reshape
 *   array_fill.c      fill, and the constructors that fill (zeros, full,
 *                     arange)
 *   array_transfer.c  host reads and writes, copies between arrays
 *   array_ops.c       elementwise operators (binary, unary, axpy)
 *   array_dtype.c     dtype facts for generated kernel text
 *   array_wrap.c      arrays over existing buffers
 *   array_dlpack.c    DLPack export and import
 * struct kiln_array itself is in algo.h: the generators read it. */
#ifndef KILN_ALGO_ARRAY_INTERNAL_H
#define KILN_ALGO_ARRAY_INTERNAL_H

#include "algo/algo.h"
#include "kiln.h"

/* Dimensions this version supports (the ABI has KILN_ARRAY_MAX_DIMS). The
 * generators pad shapes to 3 dimensions: lifting this needs them too. */
enum { KILN__ARRAY_DIMS = 3 };

/* ---- array.c */

/* Checks dtype, ndim and shape (rule 7 of docs/api.md for ndim 4..8);
 * *size gets the element count. */
kiln_status kiln__array_check_shape(const char *what, kiln_dtype dtype,
                                    unsigned ndim, const size_t *shape,
                                    size_t *size);
/* A dense C-order array of a new buffer (initialised from host if given). */
kiln_status kiln__array_make(kiln_context *ctx, kiln_dtype dtype,
                             unsigned ndim, const size_t *shape,
                             const void *host, const char *what,
                             kiln_array **out);
/* A new array header (one reference) over buffer in its context: the
 * layout is the caller's to fill. NULL when out of memory. */
kiln_array *kiln__array_new(kiln_buffer *buffer, kiln_dtype dtype);
/* A new header over a's buffer with a's layout (a view of all of a). */
kiln_array *kiln__array_clone_header(const kiln_array *a);
/* Dense C-order strides for shape[0..ndim); unused dims get shape 1 and
 * stride 0. */
void kiln__array_set_dense(kiln_array *a, unsigned ndim, const size_t *shape);

/* NULL queue or array: KILN_ERROR_NULL_HANDLE; another context:
 * KILN_ERROR_MISMATCH. */
kiln_status kiln__array_check_queue(kiln_queue *q, const kiln_array *a,
                                    const char *what);
int kiln__array_same_shape(const kiln_array *a, const kiln_array *b);
/* "float (3, 4)": a's dtype and shape, for mismatch messages; returns buf. */
const char *kiln__array_describe(const kiln_array *a, char *buf, size_t cap);

/* ---- array_transfer.c */

/* dst = src over any layouts, by a generated kernel. */
kiln_status kiln__array_copy_kernel(kiln_queue *q, kiln_array *dst,
                                    kiln_array *src, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event);

/* ---- array_dtype.c */

/* An element-type name that copies the bits of dtype (float16 as ushort). */
const char *kiln__bits_type(kiln_dtype d);
int kiln__is_float_dtype(kiln_dtype d);
int kiln__is_signed_dtype(kiln_dtype d);
/* v rounded to the nearest float16 value (ties to even, inf beyond 65504),
 * exact as a double. */
double kiln__round_to_half(double v);

#endif
