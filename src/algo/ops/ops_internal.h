/* The array operations' private pieces (src/algo/ops/), shared by their
 * files (the array object's are in algo/array/array_internal.h, included):
 *   array_fill.c      fill, and the constructors that fill (zeros, full,
 *                     arange)
 *   array_transfer.c  host reads and writes, copies between arrays
 *   array_ops.c       elementwise operators (binary, unary, axpy)
 *   array_optab.c     the table of element-wise functions
 *   array_cast.c      dtype kinds, promotion, conversions, astype
 *   array_where.c     where, clip
 *   array_index.c     take, put, boolean-mask assignment
 *   array_axis.c      reductions along an axis
 *   reduce_builtin.c  the built-in reductions (argmin/argmax texts) */
#ifndef KILN_ALGO_OPS_INTERNAL_H
#define KILN_ALGO_OPS_INTERNAL_H

#include "algo/array/array_internal.h"
#include "algo/gen/algo.h"
#include "kiln.h"

/* ---- array_transfer.c */

/* dst = src over any layouts, by a generated kernel. */
kiln_status kiln__array_copy_kernel(kiln_queue *q, kiln_array *dst, kiln_array *src,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);

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

/* ---- array_ops.c */

/* The expression of a binary op on compute values A and B of dtype d
 * (text), or NULL for an unknown op; it may call the functions of
 * kiln__binary_preamble(op, d). */
const char *kiln__binary_expr(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                              char *buf, size_t cap);

/* The kernel text of kiln_array_binary_out for op over dtypes da, db into
 * dout: the argument declarations (x, y, z), the statement storing z[i]
 * and its preamble (*pre: NULL or pre_buf). 0 for an unknown op. */
int kiln__binary_text(kiln_binary_op op, kiln_dtype da, kiln_dtype db, kiln_dtype dout, char *args,
                      size_t acap, char *opt, size_t ocap, char *pre_buf, size_t pcap,
                      const char **pre);
/* The same for kiln_array_unary_out (x, z; no preamble). */
int kiln__unary_text(kiln_unary_op op, kiln_dtype da, kiln_dtype dout, char *args, size_t acap,
                     char *opt, size_t ocap);

/* ---- array_optab.c: the table of element-wise functions */

/* NumPy / array API name of op ("add", "bitwise_left_shift"), NULL if
 * unknown. */
const char *kiln__binary_op_name(kiln_binary_op op);
const char *kiln__unary_op_name(kiln_unary_op op);
/* Whether op's result is bool (comparisons, logical ops, isnan...). */
int kiln__binary_bool_result(kiln_binary_op op);
/* *p = the promoted dtype of x and y (kiln_dtype_promote); KILN_ERROR_MISMATCH
 * "what: <zn> has dtype .., but <xn> .. with <yn> .. gives .. (NumPy's
 * promotion)" where z is not of it (axpy's and where's check). */
kiln_status kiln__check_promoted(const char *what, const kiln_array *z, const char *zn,
                                 const kiln_array *x, const char *xn, const kiln_array *y,
                                 const char *yn, kiln_dtype *p);
int kiln__unary_bool_result(kiln_unary_op op);
/* KILN_ERROR_INVALID_ARGUMENT naming op and d where op is unknown or
 * does not take dtype d (the dtype it computes in). */
kiln_status kiln__binary_check(const char *what, kiln_binary_op op, kiln_dtype d);
kiln_status kiln__unary_check(const char *what, kiln_unary_op op, kiln_dtype d);
/* Helper functions binary op needs in dtype d (into buf), or NULL. */
const char *kiln__binary_preamble(kiln_binary_op op, kiln_dtype d, char *buf, size_t cap);
/* The text of the binary ops from KILN_OP_POW on, NULL for others. */
const char *kiln__binary_expr_ext(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                                  char *buf, size_t cap);
/* The text of the unary ops from KILN_OP_TAN on, on a compute value X of
 * d (a bool result as 0 / 1), NULL for others. */
const char *kiln__unary_expr_ext(kiln_unary_op op, kiln_dtype d, const char *X, char *buf,
                                 size_t cap);

/* ---- array_axis.c, reduce_builtin.c, array_cast.c */

/* The split (chunks of the axis) of a GPU column reduction of nout
 * outputs of len elements when `resident` work-items run at once
 * (array_axis.c; tests/test_axis.c). */
size_t kiln__axis_wave_split(size_t nout, size_t len, size_t resident);

/* Texts of an argmin/argmax reduction (pairs of value and index). */
typedef struct kiln__arg_text {
    char pre[1024], neutral[160], map[96];
} kiln__arg_text;
/* Makes d the reduction of (value, index) pairs keeping the first minimum
 * (mx = 0) or maximum of the elements X of element type et. */
void kiln__arg_desc(int mx, kiln_dtype et, const char *X, kiln__arg_text *tx,
                    kiln_reduction_desc *d);

/* astype's vector kernel (array_cast.c) from the context's cache: four
 * elements per item, for from of 4 bytes and to of 2 or 4 (release it with
 * kiln_elementwise_release; tests/test_array_nvrtc.c compiles it for
 * CUDA). */
kiln_status kiln__astype_vec_kernel(kiln_context *ctx, kiln_dtype from, kiln_dtype to,
                                    kiln_elementwise **ew);

#endif
