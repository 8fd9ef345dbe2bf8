/* The array object's private pieces (include/kiln/array.h), shared by the
 * files of src/algo/array/ and read by every layer above it:
 *   array.c           objects: create, retain, release, info, accessors
 *   array_view.c      views: slices, swapaxes, reshape
 *   array_dtype.c     dtype facts for generated kernel text
 *   array_wrap.c      arrays over existing buffers
 *   array_dlpack.c    DLPack export and import
 *   array_broadcast.c broadcasting of shapes (stride-0 views)
 * struct kiln_array itself is in algo/array/array.h. The operations on
 * arrays (src/algo/ops/) share algo/ops/ops_internal.h. */
#ifndef KILN_ALGO_ARRAY_INTERNAL_H
#define KILN_ALGO_ARRAY_INTERNAL_H

#include "algo/array/array.h"
#include "base/fault.h" /* kiln__malloc and friends: each allocation is a fault site */
#include "kiln.h"

/* ---- array.c */

/* Shape arithmetic: every product of sizes, strides and bytes that the
 * constructors and views compute goes through these (issue 41 item 2).
 * *r = a * b (or a * b + c); 0 when it overflows. */
int kiln__mul_size(size_t a, size_t b, size_t *r);
int kiln__mul_stride(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r);
/* NumPy's slice rules for an axis of n elements (step != 0): the length,
 * and the first index in *first. */
ptrdiff_t kiln__slice_len(kiln_slice s, ptrdiff_t n, ptrdiff_t *first);
int kiln__muladd_stride(ptrdiff_t a, ptrdiff_t b, ptrdiff_t c, ptrdiff_t *r);
/* The element count *n and byte size *bytes of shape[0..ndim) of
 * elem-byte elements: 1 if they fit, with bytes at most PTRDIFF_MAX (so
 * that every dense stride and element offset is a ptrdiff_t too); 0 if
 * a product overflows. A 0 in the shape is 0 elements, whatever the
 * others (0 * 2^70 is not an overflow). */
int kiln__shape_count(unsigned ndim, const size_t *shape, size_t elem, size_t *n, size_t *bytes);
/* "(2, 3)", "(5,)", "()"; returns buf. */
const char *kiln__shape_text(unsigned ndim, const size_t *shape, char *buf, size_t cap);

/* Checks dtype, ndim (0..KILN_ARRAY_MAX_DIMS) and shape (its element
 * count and bytes, kiln__shape_count): KILN_ERROR_INVALID_ARGUMENT naming
 * the call (what) and the shape. *size gets the element count. */
kiln_status kiln__array_check_shape(const char *what, kiln_dtype dtype, unsigned ndim,
                                    const size_t *shape, size_t *size);
/* The checks an array constructor starts with: out not NULL (then cleared)
 * and its source `in` not NULL (named in_name), then kiln__array_check_shape. */
kiln_status kiln__array_begin(const char *what, kiln_array **out, const void *in,
                              const char *in_name, kiln_dtype dtype, unsigned ndim,
                              const size_t *shape, size_t *n);
/* A dense C-order array of a new buffer (initialised from host if given). */
kiln_status kiln__array_make(kiln_context *ctx, kiln_dtype dtype, unsigned ndim,
                             const size_t *shape, const void *host, const char *what,
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
kiln_status kiln__array_check_queue(kiln_queue *q, const kiln_array *a, const char *what);
/* kiln__array_check_queue of each of the n arrays in turn: the first
 * failure. */
kiln_status kiln__array_check_queues(kiln_queue *q, const char *what, size_t n,
                                     const kiln_array *const *arrays);
/* The start of an operation on arrays a and b: *event (if given) cleared,
 * then kiln__array_check_queue of a, then of b; the first failure. */
kiln_status kiln__array_op_begin(kiln_queue *q, const kiln_array *a, const kiln_array *b,
                                 kiln_event **event, const char *what);
int kiln__array_same_shape(const kiln_array *a, const kiln_array *b);
/* "float (3, 4)": a's dtype and shape, for mismatch messages; returns buf. */
const char *kiln__array_describe(const kiln_array *a, char *buf, size_t cap);
/* KILN_ERROR_MISMATCH "what: shapes or dtypes do not match (out .., a ..,
 * b ..)" (b may be NULL): the elementwise ops' one message for it. */
kiln_status kiln__array_mismatch(const char *what, const kiln_array *out, const kiln_array *a,
                                 const kiln_array *b);

/* ---- array_dtype.c */

/* An element-type name that copies the bits of dtype (float16 as ushort). */
const char *kiln__bits_type(kiln_dtype d);
int kiln__is_float_dtype(kiln_dtype d);
int kiln__is_signed_dtype(kiln_dtype d);
/* v rounded to the nearest float16 value (ties to even, inf beyond 65504),
 * exact as a double. */
double kiln__round_to_half(double v);
/* ---- array_scalar.c */
/* The scalar v as one element of dtype d at out (kiln_array_fill's
 * conversion rule); errors name what, the user's call. */
kiln_status kiln__scalar_to_element(kiln_arg v, kiln_dtype d, void *out, const char *what);
/* v as the weak (NEP 50) scalar operand of an operation computing in d: a
 * kernel argument of d's compute type (bool as uchar, float16 as float);
 * KILN_ERROR_INVALID_ARGUMENT where NumPy 2 would compute in another dtype
 * (a float with an integer array, a complex with a real one, an int with
 * bool) or the value does not fit d. */
kiln_status kiln__weak_scalar(kiln_arg v, kiln_dtype d, kiln_arg *out, const char *what);
/* v's value as a double (a complex one refused; int64 beyond 2^53 rounded). */
kiln_status kiln__scalar_to_double(kiln_arg v, double *out, const char *what);
/* float16 bits as a double (exact), and a double rounded to float16 bits
 * (to nearest even; inf past 65504). */
double kiln__half_bits_to_double(uint16_t h);
uint16_t kiln__double_to_half_bits(double v);
/* ---- array_dtype.c, continued */
/* Complex dtypes: COMPLEX64 and COMPLEX128. */
int kiln__is_complex_dtype(kiln_dtype d);
/* FLOAT32 for COMPLEX64, FLOAT64 for COMPLEX128; d itself otherwise. */
kiln_dtype kiln__complex_part_dtype(kiln_dtype d);
/* The complex dtype with parts of dtype d (FLOAT32/FLOAT64), or 0. */
kiln_dtype kiln__complex_of(kiln_dtype d);

/* Kernel-source literals of a dtype's largest / smallest value; returns
 * buf. */
const char *kiln__dtype_max_literal(kiln_dtype d, char *buf, size_t cap);
const char *kiln__dtype_min_literal(kiln_dtype d, char *buf, size_t cap);

/* ---- array_broadcast.c */

/* Views of the n operands (NULL entries skipped, views[k] NULL) with
 * out's shape, broadcast by NumPy's rules (out itself is not broadcast);
 * KILN_ERROR_MISMATCH names the shapes that clash (names[k] names
 * operand k). The caller releases the views. */
kiln_status kiln__broadcast_operands(const char *what, const kiln_array *out, size_t n,
                                     kiln_array *const *ops, const char *const *names,
                                     kiln_array **views);
/* *view: a read with shape (ndim, shape) by NumPy's broadcasting, leading
 * size-1 dimensions of a beyond ndim dropped (as NumPy's assignment
 * does); KILN_ERROR_MISMATCH names name and both shapes. */
kiln_status kiln__broadcast_to(const char *what, const char *name, const kiln_array *a,
                               unsigned ndim, const size_t *shape, kiln_array **view);

#endif
