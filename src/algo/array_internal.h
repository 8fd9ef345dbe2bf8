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
 *   array_cast.c      dtype kinds, promotion, conversions, astype
 *   array_broadcast.c broadcasting of shapes (stride-0 views)
 *   array_where.c     where, clip
 *   array_index.c     take, put, boolean-mask assignment
 * struct kiln_array itself is in algo.h: the generators read it. */
#ifndef KILN_ALGO_ARRAY_INTERNAL_H
#define KILN_ALGO_ARRAY_INTERNAL_H

#include "algo/algo.h"
#include "kiln.h"

/* ---- array.c */

/* Shape arithmetic: every product of sizes, strides and bytes that the
 * constructors and views compute goes through these (issue 41 item 2).
 * *r = a * b (or a * b + c); 0 when it overflows. */
int kiln__mul_size(size_t a, size_t b, size_t *r);
int kiln__mul_stride(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r);
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
int kiln__array_same_shape(const kiln_array *a, const kiln_array *b);
/* "float (3, 4)": a's dtype and shape, for mismatch messages; returns buf. */
const char *kiln__array_describe(const kiln_array *a, char *buf, size_t cap);

/* ---- array_transfer.c */

/* dst = src over any layouts, by a generated kernel. */
kiln_status kiln__array_copy_kernel(kiln_queue *q, kiln_array *dst, kiln_array *src,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);

/* ---- array_dtype.c */

/* An element-type name that copies the bits of dtype (float16 as ushort). */
const char *kiln__bits_type(kiln_dtype d);
int kiln__is_float_dtype(kiln_dtype d);
int kiln__is_signed_dtype(kiln_dtype d);
/* v rounded to the nearest float16 value (ties to even, inf beyond 65504),
 * exact as a double. */
double kiln__round_to_half(double v);

/* ---- array_cast.c */

/* 'b', 'i', 'u', 'f' or 'c' (0 for an unknown dtype). */
char kiln__dtype_kind(kiln_dtype d);
/* The type kernels compute d in: float for FLOAT16, else d's own. */
const char *kiln__compute_type(kiln_dtype d);
/* Text reading element ix of array name as a compute value; returns buf. */
const char *kiln__read_elem(kiln_dtype d, const char *name, const char *ix, char *buf, size_t cap);
/* Text converting x (a compute value of from) to a compute value of to,
 * with NumPy's rules and saturating float-to-integer; returns buf. */
const char *kiln__cast_value(kiln_dtype from, kiln_dtype to, const char *x, char *buf, size_t cap);
/* The same, as the stored bits of to (float16 rounded once: from FLOAT64
 * it needs kiln__d2h_preamble). */
const char *kiln__cast_store(kiln_dtype from, kiln_dtype to, const char *x, char *buf, size_t cap);
extern const char kiln__d2h_preamble[];

/* ---- array_broadcast.c */

/* Views of the n operands (NULL entries skipped, views[k] NULL) with
 * out's shape, broadcast by NumPy's rules (out itself is not broadcast);
 * KILN_ERROR_MISMATCH names the shapes that clash (names[k] names
 * operand k). The caller releases the views. */
kiln_status kiln__broadcast_operands(const char *what, const kiln_array *out, size_t n,
                                     kiln_array *const *ops, const char *const *names,
                                     kiln_array **views);

/* ---- array_ops.c */

/* The expression of a binary op on compute values A and B of dtype d
 * (text), or NULL for an unknown op; it may call the functions of
 * kiln__binary_preamble(op, d). */
const char *kiln__binary_expr(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                              char *buf, size_t cap);

/* The kernel text of kiln_array_binary for op over dtypes da, db into
 * dout: the argument declarations (x, y, z), the statement storing z[i]
 * and its preamble (*pre: NULL or pre_buf). 0 for an unknown op. */
int kiln__binary_text(kiln_binary_op op, kiln_dtype da, kiln_dtype db, kiln_dtype dout, char *args,
                      size_t acap, char *opt, size_t ocap, char *pre_buf, size_t pcap,
                      const char **pre);
/* The same for kiln_array_unary (x, z; no preamble). */
int kiln__unary_text(kiln_unary_op op, kiln_dtype da, kiln_dtype dout, char *args, size_t acap,
                     char *opt, size_t ocap);

/* ---- array_optab.c: the table of element-wise functions */

/* NumPy / array API name of op ("add", "bitwise_left_shift"), NULL if
 * unknown. */
const char *kiln__binary_op_name(kiln_binary_op op);
const char *kiln__unary_op_name(kiln_unary_op op);
/* Whether op's result is bool (comparisons, logical ops, isnan...). */
int kiln__binary_bool_result(kiln_binary_op op);
int kiln__unary_bool_result(kiln_unary_op op);
/* KILN_ERROR_INVALID_ARGUMENT naming op and d where op is unknown or
 * does not take dtype d (the dtype it computes in). */
kiln_status kiln__binary_check(const char *what, kiln_binary_op op, kiln_dtype d);
kiln_status kiln__unary_check(const char *what, kiln_unary_op op, kiln_dtype d);
/* Whether the array API standard lets op (unary if unary) take complex
 * dtypes where kiln does not implement it for them yet. */
int kiln__complex_missing(int unary, int op);
/* Helper functions binary op needs in dtype d (into buf), or NULL. */
const char *kiln__binary_preamble(kiln_binary_op op, kiln_dtype d, char *buf, size_t cap);
/* The text of the binary ops from KILN_OP_POW on, NULL for others. */
const char *kiln__binary_expr_ext(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                                  char *buf, size_t cap);
/* The text of the unary ops from KILN_OP_TAN on, on a compute value X of
 * d (a bool result as 0 / 1), NULL for others. */
const char *kiln__unary_expr_ext(kiln_unary_op op, kiln_dtype d, const char *X, char *buf,
                                 size_t cap);

#endif
