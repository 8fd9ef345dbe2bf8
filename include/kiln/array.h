/* kiln arrays and generated algorithms: elementwise, reduction, scan.
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * A kiln_array is a typed, strided view on a kiln_buffer of 0 to
 * KILN_ARRAY_MAX_DIMS (8) dimensions; a 0-d array holds one element (a
 * scalar, shape ()). Every array operation takes every rank (docs/api.md,
 * "Ranks"). Views and slices share the buffer; no data is copied.
 * Every operation that takes a wait list (num_wait, wait) enqueues its work
 * on the queue it is given, waits for those events first, returns at once
 * and hands back an event (event may be NULL when the caller does not need
 * it); calls that block say "Blocks".
 *
 * Life cycle of an array:
 *  1. kiln_array_empty / zeros / full / arange / from_host make one; it holds
 *     a reference to a new buffer. Constructors take the new array last and
 *     set it to NULL on failure. kiln_array_view / reshape make views that
 *     hold a reference to the same buffer.
 *  2. Operations enqueue work on a queue of the array's context.
 *  3. kiln_array_release drops the caller's reference. The buffer lives on
 *     until the last array over it is released AND the queued work using it
 *     has ended (the core retains buffers in flight).
 *
 * Generators (kiln_elementwise, kiln_reduction, kiln_scan) build source from
 * C expressions at run time, like PyOpenCL's ElementwiseKernel,
 * ReductionKernel and GenericScanKernel. The same expressions run on every
 * backend (write them in the portable dialect of docs/dialect.md). Each
 * generator picks a variant per device (CPU: one long contiguous chunk per
 * work-item, which the CPU compiler vectorises; GPU: 256-wide work-groups and
 * grid-stride loops) and per layout (contiguous arrays, or strided views
 * whose element offsets are computed from the strides). The choice is
 * invisible: user expressions index arrays with `i` either way.
 *
 * Errors: a user expression that does not compile is KILN_ERROR_BUILD; the
 * message names the generator and quotes the expression and the compiler's
 * first complaint, and kiln_last_build_log() holds the full log (user text
 * sits under `#line` markers named after the expression, e.g.
 * "operation:1:9: error: ..."). Arrays of another context, a dtype other
 * than the declared one, or shapes that differ are KILN_ERROR_MISMATCH and
 * nothing is enqueued.
 */
#ifndef KILN_ARRAY_H
#define KILN_ARRAY_H

/* ------------------------------------------------------------------ arrays */

/* typedef struct kiln_array kiln_array; is in kiln.h (kiln_arg names it). */

/* The most dimensions an array has (0-d arrays too), and the slots in
 * kiln_array_info (the ABI). */
#define KILN_ARRAY_MAX_DIMS 8

/* A Python-style slice of one dimension: start, stop (exclusive), step
 * (non-zero, may be negative). Negative start/stop count from the end; out
 * of range values are clamped, as in NumPy. */
typedef struct kiln_slice {
    ptrdiff_t start, stop, step;
} kiln_slice;
#define KILN_SLICE(a, b, s) ((kiln_slice){ (a), (b), (s) })
#define KILN_SLICE_ALL ((kiln_slice){ 0, PTRDIFF_MAX, 1 })
#define KILN_SLICE_REVERSED ((kiln_slice){ PTRDIFF_MAX, PTRDIFF_MIN, -1 })

/* An info struct (docs/api.md rule 7): filled by kiln_array_get_info, new
 * members only ever added at the end. */
typedef struct kiln_array_info {
    kiln_dtype dtype;
    unsigned ndim;                          /* 0..KILN_ARRAY_MAX_DIMS */
    size_t shape[KILN_ARRAY_MAX_DIMS];      /* unused dims are 1 */
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS]; /* in elements, may be negative */
    size_t offset;                          /* of element 0, in elements */
    size_t size;                            /* number of elements */
    int contiguous;                         /* 1 if dense C order */
} kiln_array_info;

/* Creates an uninitialised array of ndim dimensions in context (Blocks
 * only to allocate). ndim 0..KILN_ARRAY_MAX_DIMS (0: one element, shape
 * NULL allowed); above, an unknown dtype, or a shape whose element count
 * or byte size overflows (more than PTRDIFF_MAX bytes) is
 * KILN_ERROR_INVALID_ARGUMENT, the message naming the call and the
 * shape. Shapes may contain 0 (then the other sizes may be anything).
 * FLOAT16 arrays compute on every device: elements are widened to float,
 * computed in float and rounded once to half (nearest even); reductions of
 * FLOAT16 give FLOAT32 (docs/algorithms.md). */
KILN_API kiln_status kiln_array_empty(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                                      const size_t *shape, kiln_array **array);
/* An array filled with zeros / with value (a scalar, converted to dtype as
 * kiln_array_fill does) / with start + k*step (1-D, n elements), by work
 * enqueued on queue after wait[0..num_wait). Does not block: *event (may be
 * NULL) completes when the array is filled; *array is usable at once by
 * work ordered after *event (an in-order queue orders it by itself). */
KILN_API kiln_status kiln_array_zeros(kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                                      const size_t *shape, size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event, kiln_array **array);
KILN_API kiln_status kiln_array_full(kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                                     const size_t *shape, kiln_arg value, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event,
                                     kiln_array **array);
KILN_API kiln_status kiln_array_arange(kiln_queue *queue, kiln_dtype dtype, size_t n, double start,
                                       double step, size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event, kiln_array **array);
/* An array holding a copy of dense C-order host data (copied before the call
 * returns: Blocks). */
KILN_API kiln_status kiln_array_from_host(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                                          const size_t *shape, const void *host,
                                          kiln_array **array);
KILN_API kiln_status kiln_array_retain(kiln_array *array);
/* NULL is a no-op. Queued work that uses the array keeps its buffer. */
KILN_API void kiln_array_release(kiln_array *array);

/* Fills *info. info_size is sizeof(kiln_array_info) as the caller was
 * compiled (the macro passes it): an older program gets the prefix it
 * knows, a newer one's extra members read 0. */
KILN_API kiln_status kiln_array_get_info(const kiln_array *array, kiln_array_info *info,
                                         size_t info_size);
#define kiln_array_get_info(array, info) kiln_array_get_info((array), (info), sizeof *(info))
KILN_API size_t kiln_array_size(const kiln_array *array); /* 0 for NULL */
KILN_API kiln_dtype kiln_array_dtype(const kiln_array *array);
/* The buffer and context; borrowed (not retained). */
KILN_API kiln_buffer *kiln_array_buffer(const kiln_array *array);
KILN_API kiln_context *kiln_array_context(const kiln_array *array);

/* A view: slices has one entry per dimension of array (NULL = all). No copy;
 * the view holds a reference to the buffer. */
KILN_API kiln_status kiln_array_view(kiln_array *array, const kiln_slice *slices,
                                     kiln_array **view);
/* A view with dimensions d0 and d1 swapped (a transpose for 2-D). A
 * dimension the array does not have is KILN_ERROR_OUT_OF_RANGE. */
KILN_API kiln_status kiln_array_swapaxes(kiln_array *array, unsigned d0, unsigned d1,
                                         kiln_array **view);
/* A view with the dimensions permuted: dimension d of the view is
 * dimension axes[d] of array (negative counts from the end), as NumPy's
 * transpose(axes); axes has one entry per dimension and names each once
 * (KILN_ERROR_OUT_OF_RANGE for an axis outside -ndim..ndim-1,
 * KILN_ERROR_INVALID_ARGUMENT for a repeat). NULL axes: reversed (the
 * transpose of any rank). No copy. */
KILN_API kiln_status kiln_array_permute(kiln_array *array, const int *axes, kiln_array **view);
/* A view with a new shape of the same size (ndim as for kiln_array_empty).
 * The array must be contiguous (KILN_ERROR_MISMATCH otherwise; copy it
 * first). */
KILN_API kiln_status kiln_array_reshape(kiln_array *array, unsigned ndim, const size_t *shape,
                                        kiln_array **view);

/* Host transfers of the whole array as dense C-order host data. Strided
 * views are gathered/scattered by a kernel through a temporary. The _async
 * forms return at once (host memory must stay valid until *event ends);
 * the plain forms block. */
KILN_API kiln_status kiln_array_read_async(kiln_queue *queue, kiln_array *array, void *host,
                                           size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event);
KILN_API kiln_status kiln_array_read(kiln_queue *queue, kiln_array *array, void *host);
/* The whole array as a future (kiln.h, "Futures"): dense C-order data in
 * storage the future owns, after the wait list; e.g. the result array of a
 * reduction or the count of a selection, without blocking. */
KILN_API kiln_status kiln_array_read_future(kiln_queue *queue, kiln_array *array, size_t num_wait,
                                            kiln_event *const *wait, kiln_future **future);
KILN_API kiln_status kiln_array_write_async(kiln_queue *queue, kiln_array *array, const void *host,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
KILN_API kiln_status kiln_array_write(kiln_queue *queue, kiln_array *array, const void *host);
/* Sets every element of the array (or view) to value, a scalar (KILN_ARG_*)
 * converted to the array's dtype as NumPy's a[...] = value: a bool target
 * takes non-zero as true; an integer target takes an integer that fits it
 * or a finite float that, truncated, does (otherwise
 * KILN_ERROR_INVALID_ARGUMENT naming the value: NumPy raises for the
 * integer, kiln for the float too); a float target rounds to nearest; a
 * complex target takes any scalar (imaginary part 0 for a real one); a
 * complex scalar into a real target is KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_array_fill(kiln_queue *queue, kiln_array *array, kiln_arg value,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* dst = src, element by element (same shape and dtype; any strides). Both
 * must belong to queue's context. */
KILN_API kiln_status kiln_array_copy_out(kiln_queue *queue, kiln_array *dst, kiln_array *src,
                                         size_t num_wait, kiln_event *const *wait,
                                         kiln_event **event);
/* Copies between arrays of different contexts/devices through host memory.
 * Blocks until the copy has ended. */
KILN_API kiln_status kiln_array_copy_between(kiln_queue *dst_queue, kiln_array *dst,
                                             kiln_queue *src_queue, kiln_array *src);
/* The same without blocking: after the wait list (events of either
 * context), src is read on src_queue into page-locked staging memory of
 * dst's context, and a copy into dst is enqueued on dst_queue at once, so
 * work queued on dst_queue after this call sees the data. *event (of dst's
 * context) completes when dst holds the data, and fails if the source's
 * side failed. Same context: kiln_array_copy_out. (docs/architecture.md says
 * why no driver reads the staging memory before it holds the data.) */
KILN_API kiln_status kiln_array_copy_between_async(kiln_queue *dst_queue, kiln_array *dst,
                                                   kiln_queue *src_queue, kiln_array *src,
                                                   size_t num_wait, kiln_event *const *wait,
                                                   kiln_event **event);
/* --------------------------------------------------- elementwise operators */

/* The element-wise functions of the array API standard (2023.12), with
 * NumPy's NaN, infinity, signed-zero and overflow semantics; the dtypes
 * each accepts are the standard's (docs/api.md, "Element-wise functions",
 * has the table): another dtype is KILN_ERROR_INVALID_ARGUMENT naming the
 * op and the dtype. "bool result" ops write 0 or 1: KILN_BOOL is their
 * result dtype (an out of another real dtype gets 0 or 1 as well). */
typedef enum kiln_binary_op {
    KILN_OP_ADD = 1, /* add: numeric (not bool) */
    KILN_OP_SUB,     /* subtract: numeric */
    KILN_OP_MUL,     /* multiply: numeric */
    KILN_OP_DIV,     /* divide: float and complex; integers: C's division
                        truncated toward zero (by 0: 0; INT_MIN / -1 wraps) */
    KILN_OP_MIN,     /* minimum: real numeric; a NaN wins */
    KILN_OP_MAX,     /* maximum: real numeric; a NaN wins */
    /* comparisons (bool result): EQ and NE on every dtype, the others on
     * real numeric dtypes; computed in the promoted dtype */
    KILN_OP_EQ,
    KILN_OP_NE,
    KILN_OP_LT,
    KILN_OP_LE,
    KILN_OP_GT,
    KILN_OP_GE,
    /* pow: numeric. Integers wrap; an integer to a negative power gives
     * the integer part of the exact result (1 for a base of 1, +-1 for
     * -1, else 0; NumPy raises), 0 ** 0 is 1 (complex too: NumPy's) */
    KILN_OP_POW = 13,
    KILN_OP_FLOOR_DIVIDE, /* real numeric; an integer divided by 0 gives 0
                             (NumPy: 0 and a warning), INT_MIN // -1 wraps */
    KILN_OP_REMAINDER,    /* real numeric, the sign of the divisor (Python's
                             %); an integer modulo 0 gives 0 */
    KILN_OP_BITWISE_AND,  /* integer and bool */
    KILN_OP_BITWISE_OR,   /* integer and bool */
    KILN_OP_BITWISE_XOR,  /* integer and bool */
    KILN_OP_LEFT_SHIFT,   /* integer; a count outside [0, width) gives 0 */
    KILN_OP_RIGHT_SHIFT,  /* integer, arithmetic for signed; a count outside
                             [0, width) gives 0, or -1 for a negative a */
    KILN_OP_LOGICAL_AND,  /* bool (bool result) */
    KILN_OP_LOGICAL_OR,   /* bool (bool result) */
    KILN_OP_LOGICAL_XOR,  /* bool (bool result) */
    KILN_OP_ATAN2,        /* real float: atan2(a, b) */
    KILN_OP_HYPOT,        /* real float */
    KILN_OP_COPYSIGN,     /* real float: |a| with the sign of b */
    KILN_OP_LOGADDEXP,    /* real float: log(exp(a) + exp(b)) */
} kiln_binary_op;

typedef enum kiln_unary_op {
    KILN_OP_NEG = 1, /* negative: numeric; integers wrap */
    KILN_OP_ABS,     /* numeric (complex: the real dtype of the parts) */
    KILN_OP_SQRT,    /* SQRT..COS: float and complex dtypes */
    KILN_OP_EXP,
    KILN_OP_LOG,
    KILN_OP_SIN,
    KILN_OP_COS,
    KILN_OP_TAN = 8, /* TAN..LOG10: float and complex */
    KILN_OP_ASIN,
    KILN_OP_ACOS,
    KILN_OP_ATAN,
    KILN_OP_SINH,
    KILN_OP_COSH,
    KILN_OP_TANH,
    KILN_OP_ASINH,
    KILN_OP_ACOSH,
    KILN_OP_ATANH,
    KILN_OP_LOG1P,
    KILN_OP_EXPM1,
    KILN_OP_LOG2,
    KILN_OP_LOG10,
    KILN_OP_FLOOR, /* FLOOR..ROUND: real numeric (integers: as */
    KILN_OP_CEIL,  /* they are) */
    KILN_OP_TRUNC,
    KILN_OP_ROUND,          /* to nearest, ties to even (np.round, rint);
                               complex too: each part */
    KILN_OP_SIGN,           /* real numeric: -1, 0, 1 (NaN: NaN, -0: 0);
                               complex: z / |z|, 0 for 0 (NumPy 2) */
    KILN_OP_SQUARE,         /* numeric: a * a */
    KILN_OP_POSITIVE,       /* numeric: a */
    KILN_OP_BITWISE_INVERT, /* integer: ~a; bool: not a */
    KILN_OP_LOGICAL_NOT,    /* bool (bool result) */
    KILN_OP_ISNAN,          /* numeric (bool result; integers: false) */
    KILN_OP_ISINF,          /* numeric (bool result; integers: false) */
    KILN_OP_ISFINITE,       /* numeric (bool result; integers: true) */
    KILN_OP_SIGNBIT,        /* real float (bool result): the sign bit set */
} kiln_unary_op;

/* The dtype kiln_array_binary_out gives for op over arrays of dtypes a and b
 * (their promoted dtype, or KILN_BOOL for a bool result), or 0 where op
 * does not take them (or is unknown). */
KILN_API kiln_dtype kiln_dtype_binary_result(kiln_binary_op op, kiln_dtype a, kiln_dtype b);
/* The same for kiln_array_unary_out. */
KILN_API kiln_dtype kiln_dtype_unary_result(kiln_unary_op op, kiln_dtype a);

/* out = a OP b. a and b may have different dtypes and shapes: they are
 * promoted and broadcast as in NumPy (see the toolkit block at the end);
 * out has the broadcast shape and kiln_dtype_binary_result's dtype (for
 * a bool result also any other real dtype, which gets 0 or 1). out may
 * be a or b. */
KILN_API kiln_status kiln_array_binary_out(kiln_queue *queue, kiln_binary_op op, kiln_array *out,
                                           kiln_array *a, kiln_array *b, size_t num_wait,
                                           kiln_event *const *wait, kiln_event **event);
/* out = a OP scalar, computed in a's dtype (FLOAT16 in float): the scalar
 * (KILN_ARG_*) is weak, as a Python scalar in NumPy 2 (NEP 50), and is
 * converted to a's dtype as kiln_array_fill does (an integer that does not
 * fit is KILN_ERROR_INVALID_ARGUMENT, as NumPy raises). A scalar whose kind
 * is above a's (a float with an integer array, an int with bool, a complex
 * with a real array) is KILN_ERROR_INVALID_ARGUMENT: NumPy would compute in
 * kiln_dtype_promote_scalar's dtype; convert a to it first. out: as for
 * kiln_array_binary_out with b of a's dtype. */
KILN_API kiln_status kiln_array_binary_scalar_out(kiln_queue *queue, kiln_binary_op op,
                                                  kiln_array *out, kiln_array *a, kiln_arg scalar,
                                                  size_t num_wait, kiln_event *const *wait,
                                                  kiln_event **event);
/* out = OP(a), same shape; out's dtype kiln_dtype_unary_result's (for a
 * bool result also any other real dtype, which gets 0 or 1). */
KILN_API kiln_status kiln_array_unary_out(kiln_queue *queue, kiln_unary_op op, kiln_array *out,
                                          kiln_array *a, size_t num_wait, kiln_event *const *wait,
                                          kiln_event **event);
/* z = alpha*x + y. x and y are promoted and broadcast as for
 * kiln_array_binary_out; z has their promoted dtype and broadcast shape;
 * alpha is a weak scalar of that dtype (as for
 * kiln_array_binary_scalar_out). */
KILN_API kiln_status kiln_array_axpy_out(kiln_queue *queue, kiln_array *z, kiln_arg alpha,
                                         kiln_array *x, kiln_array *y, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event);

/* ------------------------------------------------------------- generators
 *
 * Every generator has the same shape (docs/api.md, rule 8):
 *   kiln_X_create(context, &desc, &gen)  builds before returning (Blocks),
 *                                        so a bad expression fails there;
 *   kiln_X_launch(queue, gen, n, num_args, args, ..., num_wait, wait, event)
 *                                        runs it over the index range [0, n)
 *                                        and returns at once;
 *   kiln_X_retain / kiln_X_release.
 * Descriptors start with struct_size: make them with the macro named after
 * the struct (KILN_ELEMENTWISE_DESC(.arguments = ..., ...)); a struct_size
 * of 0 is KILN_ERROR_INVALID_ARGUMENT.
 * Arguments: one kiln_arg per declared argument, in order: KILN_ARG_ARRAY(a)
 * for an array (pointer) argument, KILN_ARG_I32(x), KILN_ARG_F64(x), ... for
 * a scalar (converted to the declared type). Every array has exactly n
 * elements and the shape of the first array (KILN_ERROR_MISMATCH otherwise:
 * nothing is read or written past an array's end), except with
 * KILN_ELEMENTWISE_ANY_SHAPE. A strided view is indexed at i only (x[i]
 * is its element i in C order). A wrong count or kind of argument is
 * KILN_ERROR_KERNEL_ARGS.
 * Generators are reference counted; the last release frees them (queued
 * launches keep what they use alive). A generator may be launched from
 * several threads at once, on any queue of its context. */

/* ---------------------------------------------------- elementwise generator */

typedef struct kiln_elementwise kiln_elementwise;

enum {
    /* Arrays may have any size, and are indexed freely by the operation
     * (gathers such as "y[i] = x[idx[i]]"): the operation must then keep
     * its indices within each array's bounds itself. Only the first array
     * may be a strided view, and then it has n elements and is indexed at
     * i only (as every strided view: x[i] is its element i). */
    KILN_ELEMENTWISE_ANY_SHAPE = 1,
};

typedef struct kiln_elementwise_desc {
    size_t struct_size;    /* sizeof (set by KILN_ELEMENTWISE_DESC) */
    const char *arguments; /* C declarations, e.g. "float a, const float *x,
                              float *z": pointers are arrays (at least one),
                              the rest scalars of a kiln dtype */
    const char *operation; /* statement(s) run for every index i (a long) of
                              [0, n), e.g. "z[i] = a*x[i]"; n is in scope */
    const char *name;      /* kernel name, an identifier of up to 63
                              characters; NULL = "kiln_elementwise" */
    const char *preamble;  /* code put before the kernel (helper functions,
                              #defines); may be NULL */
    unsigned flags;        /* KILN_ELEMENTWISE_ANY_SHAPE, or 0 */
    const char *options;   /* build options, like PyOpenCL's options=:
                              "-DSCALE=3 -DUSE_FAST=1" (OpenCL-style, also
                              on CUDA: docs/dialect.md); NULL = none */
} kiln_elementwise_desc;
#define KILN_ELEMENTWISE_DESC(...) \
    ((kiln_elementwise_desc){ .struct_size = sizeof(kiln_elementwise_desc), __VA_ARGS__ })

/* Makes an elementwise kernel. The strings are copied. Builds the contiguous
 * variant for the context's first device before returning (a bad expression
 * fails here with KILN_ERROR_BUILD); the other variants are built on first
 * use. Blocks while it compiles. *elementwise is NULL on failure. */
KILN_API kiln_status kiln_elementwise_create(kiln_context *context,
                                             const kiln_elementwise_desc *desc,
                                             kiln_elementwise **elementwise);
/* Runs the operation for every i in [0, n) on queue (of the generator's
 * context): one kiln_arg per declared argument. n = 0 enqueues nothing
 * (event: completes when the wait list has). Returns at once. */
KILN_API kiln_status kiln_elementwise_launch(kiln_queue *queue, kiln_elementwise *elementwise,
                                             size_t n, size_t num_args, const kiln_arg *args,
                                             size_t num_wait, kiln_event *const *wait,
                                             kiln_event **event);
KILN_API kiln_status kiln_elementwise_retain(kiln_elementwise *elementwise);
KILN_API void kiln_elementwise_release(kiln_elementwise *elementwise);

/* ------------------------------------------------------ reduction generator */

typedef struct kiln_reduction kiln_reduction;

typedef struct kiln_reduction_desc {
    size_t struct_size;    /* sizeof (set by KILN_REDUCTION_DESC) */
    const char *arguments; /* as for kiln_elementwise_desc */
    const char *out_type;  /* accumulator type: "float", "long", or a struct
                              type defined in preamble */
    size_t out_size;       /* sizeof(out_type); 0 for scalar type names */
    const char *neutral;   /* neutral element, e.g. "0" or "INFINITY" */
    const char *reduce;    /* of a and b, associative and commutative */
    const char *map;       /* of i and the arguments, e.g. "x[i]*y[i]" */
    const char *preamble;  /* may be NULL */
    const char *name;      /* as for kiln_elementwise_desc; NULL =
                              "kiln_reduction" */
    const char *options;   /* build options, as for kiln_elementwise_desc */
    const char *initial;   /* NULL, or an expression of the scalar
                              arguments (not of i or the arrays) folded in
                              once: the result is reduce(initial, the
                              reduction of map), so n = 0 gives initial
                              (NumPy's initial=) */
} kiln_reduction_desc;
#define KILN_REDUCTION_DESC(...) \
    ((kiln_reduction_desc){ .struct_size = sizeof(kiln_reduction_desc), __VA_ARGS__ })

/* Makes a reduction of map(i) over i in [0, n). The strings are copied.
 * Blocks while it compiles. *reduction is NULL on failure. */
KILN_API kiln_status kiln_reduction_create(kiln_context *context, const kiln_reduction_desc *desc,
                                           kiln_reduction **reduction);
/* Runs it over [0, n) (n = 0 gives the neutral element). The result goes
 * into element 0 of result (a device array of the out type's dtype; may be
 * NULL) and/or into host_result (out_size bytes; may be NULL; written once
 * *event has completed). One of them is needed. Returns at once. */
KILN_API kiln_status kiln_reduction_run_async(kiln_queue *queue, kiln_reduction *reduction,
                                              size_t n, size_t num_args, const kiln_arg *args,
                                              kiln_array *result, void *host_result,
                                              size_t num_wait, kiln_event *const *wait,
                                              kiln_event **event);
/* The same into host_result (required), after the queue's earlier work.
 * Blocks until the result is there. */
KILN_API kiln_status kiln_reduction_run(kiln_queue *queue, kiln_reduction *reduction, size_t n,
                                        size_t num_args, const kiln_arg *args, void *host_result);
KILN_API kiln_status kiln_reduction_retain(kiln_reduction *reduction);
KILN_API void kiln_reduction_release(kiln_reduction *reduction);

typedef enum kiln_reduce_op {
    KILN_REDUCE_SUM = 1,  /* result: a's dtype (FLOAT16: FLOAT32, for all
                             but ARGMIN/ARGMAX; BOOL: INT64 for SUM and
                             PROD, as NumPy) */
    KILN_REDUCE_PROD,     /* a's dtype */
    KILN_REDUCE_MIN,      /* a's dtype; n = 0 is KILN_ERROR_INVALID_ARGUMENT
                             (NumPy) unless an initial value is given */
    KILN_REDUCE_MAX,      /* a's dtype; n = 0 as for MIN */
    KILN_REDUCE_NORM1,    /* sum |a|: float dtypes keep theirs, ints float64 */
    KILN_REDUCE_NORM2,    /* sqrt(sum a^2): as NORM1 */
    KILN_REDUCE_NORM_INF, /* max |a|: as NORM1 */
    KILN_REDUCE_ARGMIN,   /* int64 index (C order) of the first minimum; -1 if empty */
    KILN_REDUCE_ARGMAX,   /* int64 index of the first maximum; -1 if empty */
    KILN_REDUCE_ANY,      /* bool 1 if any element is non-zero (NaN
                             counts as non-zero, as in NumPy); 0 if empty.
                             A result array may be BOOL or UINT8 */
    KILN_REDUCE_ALL,      /* bool 1 if every element is non-zero; 1 if
                             empty */
} kiln_reduce_op;

/* The dtype kiln_array_reduce writes for op over dtype (0 for an unknown op
 * or dtype). */
KILN_API kiln_dtype kiln_dtype_reduce_result(kiln_reduce_op op, kiln_dtype dtype);
/* A built-in reduction of every element of a into host_result
 * (kiln_dtype_size of the result dtype bytes), after the queue's earlier
 * work. An unknown op is KILN_ERROR_INVALID_ARGUMENT. NORM2's square root
 * is taken on the device. Blocks until the result is there. */
KILN_API kiln_status kiln_array_reduce(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                       void *host_result);
/* The same without blocking; result / host_result as for
 * kiln_reduction_run_async. Returns at once. */
KILN_API kiln_status kiln_array_reduce_async(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                             kiln_array *result, void *host_result, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event);
/* sum a[i]*b[i] (same shape and dtype; result in their dtype, FLOAT32 for
 * FLOAT16) into host_result. Blocks until the result is there. */
KILN_API kiln_status kiln_array_dot(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                    void *host_result);
/* The same without blocking, as kiln_array_reduce_async. */
KILN_API kiln_status kiln_array_dot_async(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                          kiln_array *result, void *host_result, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event);

/* ----------------------------------------------------------- scan generator */

typedef struct kiln_scan kiln_scan;

typedef struct kiln_scan_desc {
    size_t struct_size;        /* sizeof (set by KILN_SCAN_DESC) */
    const char *arguments;     /* as for kiln_elementwise_desc */
    const char *scan_type;     /* type of the scanned items ("int", a struct) */
    size_t scan_size;          /* sizeof(scan_type); 0 for scalar type names */
    const char *neutral;       /* neutral element of scan */
    const char *scan;          /* of a and b: associative, need NOT be
                                  commutative; a is the earlier item */
    const char *input;         /* item at index i, e.g. "x[i]" */
    const char *output;        /* statement run for every i with `item` (the
                                  inclusive scan at i) and `prev_item` (the
                                  exclusive one), e.g. "y[i] = item" */
    const char *segment_start; /* NULL, or an expression of i that is true
                                  where a new segment starts, e.g. "f[i]" */
    const char *preamble;      /* may be NULL */
    const char *name;          /* as for kiln_elementwise_desc; NULL =
                                  "kiln_scan" */
    const char *options;       /* build options, as for
                                  kiln_elementwise_desc */
} kiln_scan_desc;
#define KILN_SCAN_DESC(...) ((kiln_scan_desc){ .struct_size = sizeof(kiln_scan_desc), __VA_ARGS__ })

/* Makes a scan over i in [0, n). Order is preserved: the result at i is
 * input(0) op ... op input(i) combined left to right (restarting at segment
 * starts). The strings are copied. Blocks while it compiles. *scan is NULL
 * on failure. */
KILN_API kiln_status kiln_scan_create(kiln_context *context, const kiln_scan_desc *desc,
                                      kiln_scan **scan);
/* Runs it over [0, n); n = 0 enqueues nothing (event: completes when the
 * wait list has). Returns at once. */
KILN_API kiln_status kiln_scan_launch(kiln_queue *queue, kiln_scan *scan, size_t n, size_t num_args,
                                      const kiln_arg *args, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_scan_retain(kiln_scan *scan);
KILN_API void kiln_scan_release(kiln_scan *scan);

/* out = cumulative sum / product of a (inclusive, or exclusive when
 * exclusive != 0). Same shape and dtype; out may be a. */
KILN_API kiln_status kiln_array_cumsum_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                           int exclusive, size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event);
KILN_API kiln_status kiln_array_cumprod_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                            int exclusive, size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);

/* ------------------------------------------------------------- interop
 *
 * Arrays over memory kiln did not allocate. DLPack export and import are in
 * kiln/dlpack.h. */

/* An array over an existing buffer: element (i0, i1, i2) lies at byte
 * offset + (i0*strides[0] + i1*strides[1] + i2*strides[2]) * dtype size.
 * offset is in bytes, a multiple of the dtype's size; strides are in
 * elements (NULL: dense C order), may be negative or 0 (a zero stride
 * repeats elements: such an array may be read, not written). Every element
 * must lie inside the buffer (kiln_buffer_size): otherwise
 * KILN_ERROR_OUT_OF_RANGE names the bytes it would reach. dtype and shape as
 * for kiln_array_empty. The array holds a reference to buffer; it belongs
 * to the buffer's context. */
KILN_API kiln_status kiln_array_from_buffer(kiln_buffer *buffer, size_t offset, kiln_dtype dtype,
                                            unsigned ndim, const size_t *shape,
                                            const ptrdiff_t *strides, kiln_array **array);
/* ================================================ toolkit: conversions,
 * selection, gather/scatter, masks (issue 12, items 1-3)
 *
 * Type promotion: kiln_array_binary_out and kiln_array_where_out take operands of
 * different dtypes and compute in NumPy's promoted dtype
 * (kiln_dtype_promote: np.promote_types for two arrays, e.g. int8 with
 * uint8 gives int16, int32 with float32 float64, int64 with uint64
 * float64). Broadcasting: their operands broadcast by NumPy's rules to the
 * shape of out (which is never broadcast itself); shapes that do not
 * broadcast are KILN_ERROR_MISMATCH, and the message names both shapes.
 * Broadcast operands are read through views with stride 0: no copy.
 * kiln_array_axpy_out does the same; unary and dot still need equal dtypes
 * and shapes. */

/* NumPy 2's promoted dtype of two dtypes (np.promote_types; 0 if either
 * is unknown): bool below every other kind, complex included
 * (complex64 with float64 gives complex128, with int16 complex64). */
KILN_API kiln_dtype kiln_dtype_promote(kiln_dtype a, kiln_dtype b);
/* NumPy 2's result dtype of an array of array_dtype with a Python scalar
 * (NEP 50: the scalar is weak) whose kind scalar_kind gives as a dtype:
 * KILN_BOOL for a bool, any integer dtype for an int, any float dtype for
 * a float, any complex dtype for a complex. A kind not above the array's
 * keeps array_dtype (uint8 with an int: uint8, float16 with a float:
 * float16); above it: int64, float64 or complex128 (a float array with a
 * complex: the complex of its precision). 0 if either is unknown. */
KILN_API kiln_dtype kiln_dtype_promote_scalar(kiln_dtype array_dtype, kiln_dtype scalar_kind);
/* The broadcast shape of two shapes (NumPy's rules: aligned at the last
 * dimension, each pair equal or one of them 1) into *ndim and shape
 * (KILN_ARRAY_MAX_DIMS entries). Shapes that do not broadcast:
 * KILN_ERROR_MISMATCH, the message names both. */
KILN_API kiln_status kiln_shape_broadcast(unsigned ndim_a, const size_t *shape_a, unsigned ndim_b,
                                          const size_t *shape_b, unsigned *ndim, size_t *shape);

/* out = a converted to out's dtype (same shape; any dtypes, any strides):
 * NumPy's astype. Integers wrap to a narrower integer; integers and floats
 * round to the nearest float; float to integer truncates toward zero and,
 * where NumPy leaves it undefined, kiln saturates: NaN gives 0, values at
 * or beyond the integer's range its smallest / largest value (-inf gives
 * INT_MIN, 1e300 to uint8 gives 255). float64 to float16 rounds once.
 * To KILN_BOOL: non-zero is true (NaN too; a complex value if either part
 * is non-zero); from it: 0 and 1. */
KILN_API kiln_status kiln_array_astype_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                           size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event);

/* out = cond ? a : b, element by element (np.where). cond has any dtype
 * (KILN_BOOL is NumPy's):
 * non-zero is true (NaN is true, -0.0 false, as in NumPy). out has the
 * promoted dtype of a and b; cond, a and b broadcast to out's shape. */
KILN_API kiln_status kiln_array_where_out(kiln_queue *queue, kiln_array *out, kiln_array *cond,
                                          kiln_array *a, kiln_array *b, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event);

/* out = min(max(a, lo), hi) (np.clip; a broadcasts to out, same dtype).
 * NaN in a or in a float bound gives NaN; lo > hi gives hi everywhere.
 * Integer arrays clip to the integers in [lo, hi] (ceil(lo), floor(hi),
 * saturated to the dtype); a NaN bound for them is
 * KILN_ERROR_INVALID_ARGUMENT. Use -INFINITY / INFINITY for no bound. The
 * bounds are real scalars (KILN_ARG_*, read as doubles: an int64 bound
 * beyond 2^53 is rounded; a complex one is KILN_ERROR_INVALID_ARGUMENT). */
KILN_API kiln_status kiln_array_clip_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                         kiln_arg lo, kiln_arg hi, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event);

/* What an index outside [0, n) of an axis of n elements does. */
typedef enum kiln_index_mode {
    /* NumPy's 'raise': -n..-1 count from the end; any other index fails
     * the operation's event (KILN_EVENT_ERROR, so kiln_event_wait returns
     * KILN_ERROR_EVENT_FAILED). The device never reads or writes out of
     * bounds: take writes 0 for such an index, put skips it; the other
     * elements are done. The event is then required. */
    KILN_INDEX_ERROR = 0,
    KILN_INDEX_CLIP = 1, /* clamped to [0, n-1] (negatives to 0) */
    KILN_INDEX_WRAP = 2, /* modulo n, always in [0, n) (Python's %) */
} kiln_index_mode;

/* out[k] = a.flat[indices[k]] (np.take without an axis: a is read in C
 * order, whatever its strides). indices: any integer dtype and shape (a
 * strided view too); out: a's dtype, the indices' shape, dense. An empty
 * a with indices, in CLIP or WRAP mode: KILN_ERROR_OUT_OF_RANGE. */
KILN_API kiln_status kiln_array_take_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                         kiln_array *indices, kiln_index_mode mode, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event);

/* ============================================= new-array forms (rule 21)
 *
 * kiln_X_V(queue, operands, ..., num_wait, wait, event, &result): the same
 * as kiln_X_V_out into a new dense array of queue's context, whose dtype
 * and shape are those the _out form asks of its out (NumPy's: a broadcast
 * shape, the promoted or result dtype). *result is NULL on failure. They
 * return at once, as the _out forms. */
KILN_API kiln_status kiln_array_binary(kiln_queue *queue, kiln_binary_op op, kiln_array *a,
                                       kiln_array *b, size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event, kiln_array **result);
/* The result has a's dtype (bool for comparisons): the scalar is weak. */
KILN_API kiln_status kiln_array_binary_scalar(kiln_queue *queue, kiln_binary_op op, kiln_array *a,
                                              kiln_arg scalar, size_t num_wait,
                                              kiln_event *const *wait, kiln_event **event,
                                              kiln_array **result);
KILN_API kiln_status kiln_array_unary(kiln_queue *queue, kiln_unary_op op, kiln_array *a,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                      kiln_array **result);
KILN_API kiln_status kiln_array_astype(kiln_queue *queue, kiln_array *a, kiln_dtype dtype,
                                       size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                       kiln_array **result);
/* A dense copy of a (any strides), of a's shape and dtype. */
KILN_API kiln_status kiln_array_copy(kiln_queue *queue, kiln_array *a, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event,
                                     kiln_array **result);
KILN_API kiln_status kiln_array_where(kiln_queue *queue, kiln_array *cond, kiln_array *a,
                                      kiln_array *b, size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event, kiln_array **result);
KILN_API kiln_status kiln_array_clip(kiln_queue *queue, kiln_array *a, kiln_arg lo, kiln_arg hi,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                     kiln_array **result);
/* The result has a's dtype and the indices' shape. */
KILN_API kiln_status kiln_array_take(kiln_queue *queue, kiln_array *a, kiln_array *indices,
                                     kiln_index_mode mode, size_t num_wait, kiln_event *const *wait,
                                     kiln_event **event, kiln_array **result);
/* a's shape and dtype (NumPy widens small integers; kiln keeps the dtype). */
KILN_API kiln_status kiln_array_cumsum(kiln_queue *queue, kiln_array *a, int exclusive,
                                       size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                       kiln_array **result);
KILN_API kiln_status kiln_array_cumprod(kiln_queue *queue, kiln_array *a, int exclusive,
                                        size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event, kiln_array **result);

/* How kiln_array_put treats an index that appears more than once. */
typedef enum kiln_put_mode {
    /* a[j] = value: with repeated indices one of the values wins, which
     * one depends on scheduling (the fastest; CuPy's put). */
    KILN_PUT_ASSIGN = 0,
    /* Deterministic: the value of the last position k (largest k) wins,
     * as in NumPy's sequential a[idx] = v, whatever the scheduling: a
     * first pass claims each target with an atomic max of k, a second
     * writes. Needs an int32 scratch of a's size; at most 2^31-1 indices. */
    KILN_PUT_ASSIGN_LAST = 1,
    /* a[j] += value atomically: every repeat counts (np.add.at,
     * index_add_). Integers wrap. Emulated where the device lacks the
     * atomic: 8/16-bit integers and float16 by a compare-and-swap loop on
     * the 32-bit word that holds them (float16 adds in float, rounded
     * once per add), float64 by a 64-bit CAS loop (native atomicAdd on
     * CUDA sm_60+). 64-bit types need 64-bit atomics on OpenCL
     * (cl_khr_int64_base_atomics; else KILN_ERROR_UNSUPPORTED). Integer
     * sums are exact; a float sum's rounding depends on the order of the
     * adds, which depends on scheduling. */
    KILN_PUT_ADD = 2,
} kiln_put_mode;

/* a.flat[indices[k]] = values[k] (or += with KILN_PUT_ADD) (np.put,
 * np.add.at). a: dense; values: a's dtype, one element per index (any
 * shape, read in C order) or a single element for all. */
KILN_API kiln_status kiln_array_put(kiln_queue *queue, kiln_array *a, kiln_array *indices,
                                    kiln_array *values, kiln_index_mode mode, kiln_put_mode put,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);

/* a[mask] = value (a scalar, converted to a's dtype as kiln_array_fill
 * does). mask: a's shape, any dtype, non-zero is true (as for where);
 * a and mask may be strided views. */
KILN_API kiln_status kiln_array_mask_fill(kiln_queue *queue, kiln_array *a, kiln_array *mask,
                                          kiln_arg value, size_t num_wait, kiln_event *const *wait,
                                          kiln_event **event);
/* a[mask] = values: the k-th true element of the mask (C order) gets
 * values[k] (values in C order, a's dtype). One value is used for all;
 * otherwise there must be exactly one per true element, which is checked
 * on the device: a different count fails the event (required then), and
 * only the elements that have a value are written. */
KILN_API kiln_status kiln_array_mask_assign(kiln_queue *queue, kiln_array *a, kiln_array *mask,
                                            kiln_array *values, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);

/* ================================ indexing as NumPy writes it (rule 21)
 *
 * a[idx] on an array of any rank >= 1: indices (any integer dtype and
 * shape) pick along the first axis; *result (new, dense) has the shape
 * indices.shape + a.shape[1:] and a's dtype. -n..-1 count from the end;
 * any other index fails *event (required: KILN_ERROR_EVENT_FAILED from
 * kiln_event_wait), whose result then holds 0 there. Returns at once. */
KILN_API kiln_status kiln_array_index(kiln_queue *queue, kiln_array *a, kiln_array *indices,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                      kiln_array **result);
/* a[idx] = values: values (a's dtype) has one element (for all), one per
 * element of a[idx] (C order, any shape), or a shape that broadcasts to
 * a[idx]'s by NumPy's rules (a row for every selected row; leading size-1
 * dimensions are dropped, as NumPy's assignment does; else
 * KILN_ERROR_MISMATCH naming both shapes); a repeated index takes the
 * last value (NumPy). a must be dense. Bad indices as for kiln_array_index (they are
 * skipped). Returns at once. */
KILN_API kiln_status kiln_array_index_put(kiln_queue *queue, kiln_array *a, kiln_array *indices,
                                          kiln_array *values, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event);
/* a[mask]: mask (any dtype, non-zero is true) has the shape of a's first
 * k dimensions (k >= 1; k = a's rank: every element); *result is
 * (count,) + a.shape[k:], right-sized. a[mask] = values: values as for
 * kiln_array_index_put. a and mask must be dense. Both block, after the
 * queue's earlier work: the count sizes the result. */
KILN_API kiln_status kiln_array_index_mask(kiln_queue *queue, kiln_array *a, kiln_array *mask,
                                           kiln_array **result);
KILN_API kiln_status kiln_array_index_mask_put(kiln_queue *queue, kiln_array *a, kiln_array *mask,
                                               kiln_array *values);
/* a[i0, i1, ..., ik-1] (NumPy's integer-array indexing with one array per
 * leading axis): num_indices (k, 1..a's rank) integer arrays, broadcast
 * together, pick along a's first k axes; *result (new, dense) has the
 * shape broadcast(indices) + a.shape[k:] and a's dtype. Each index counts
 * -n..-1 from the end of its own axis; any other fails *event (required),
 * whose result holds 0 there. a may be a strided view. Returns at once. */
KILN_API kiln_status kiln_array_index_many(kiln_queue *queue, kiln_array *a, size_t num_indices,
                                           kiln_array *const *indices, size_t num_wait,
                                           kiln_event *const *wait, kiln_event **event,
                                           kiln_array **result);
/* a[i0, ..., ik-1] = values: values as for kiln_array_index_put (one, or
 * one per element of the result above, C order); a repeated position
 * takes the last value. a must be dense. Returns at once. */
KILN_API kiln_status kiln_array_index_many_put(kiln_queue *queue, kiln_array *a, size_t num_indices,
                                               kiln_array *const *indices, kiln_array *values,
                                               size_t num_wait, kiln_event *const *wait,
                                               kiln_event **event);

/* One entry of a NumPy index key a[k0, k1, ...]: a slice of its axis, an
 * integer (the axis goes), or an integer array (integer-array indexing). */
typedef enum kiln_index_kind {
    KILN_INDEX_SLICE = 0,
    KILN_INDEX_INTEGER = 1,
    KILN_INDEX_ARRAY = 2,
} kiln_index_kind;
typedef struct kiln_index_key {
    kiln_index_kind kind;
    kiln_slice slice;  /* KILN_INDEX_SLICE */
    int64_t integer;   /* KILN_INDEX_INTEGER: -n..n-1 */
    kiln_array *array; /* KILN_INDEX_ARRAY: any integer dtype */
} kiln_index_key;
#define KILN_KEY_SLICE(a, b, s) \
    ((kiln_index_key){ .kind = KILN_INDEX_SLICE, .slice = { (a), (b), (s) } })
#define KILN_KEY_ALL ((kiln_index_key){ .kind = KILN_INDEX_SLICE, .slice = KILN_SLICE_ALL })
#define KILN_KEY_INT(i) ((kiln_index_key){ .kind = KILN_INDEX_INTEGER, .integer = (i) })
#define KILN_KEY_ARRAY(x) ((kiln_index_key){ .kind = KILN_INDEX_ARRAY, .array = (x) })

/* a[k0, ..., kn-1] with slices, integers and integer arrays mixed, by
 * NumPy's rules (advanced indexing): num_keys (<= a's rank; the axes after
 * them are taken whole) keys, one per axis, no Ellipsis or newaxis (expand
 * them first). The integers and arrays broadcast together to one block of
 * axes; the block stands where the first of them stands when they are
 * adjacent, first otherwise, and the slices' axes keep their order around
 * it (a[:, i] has shape a.shape[0] + i.shape; a[i, :, j] broadcast(i, j) +
 * a.shape[1]). *result is new and dense, also for a key without arrays
 * (kiln_array_view gives views). An integer out of its axis's range is
 * KILN_ERROR_OUT_OF_RANGE at once; an array's index out of range fails
 * *event (required), whose result then holds 0 there. a may be a strided
 * view. Returns at once, except where a slice empties the selection while
 * the arrays' block is not empty: NumPy still checks the indices then, and
 * so does kiln, blocking, refusing an out-of-range one with
 * KILN_ERROR_OUT_OF_RANGE. */
KILN_API kiln_status kiln_array_index_key(kiln_queue *queue, kiln_array *a, size_t num_keys,
                                          const kiln_index_key *keys, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event,
                                          kiln_array **result);
/* a[k0, ..., kn-1] = values: the key as above, values as for
 * kiln_array_index_put (one, or one per element of the selection, C
 * order); a repeated position takes the last value. a must be dense.
 * Returns at once. */
KILN_API kiln_status kiln_array_index_key_put(kiln_queue *queue, kiln_array *a, size_t num_keys,
                                              const kiln_index_key *keys, kiln_array *values,
                                              size_t num_wait, kiln_event *const *wait,
                                              kiln_event **event);

/* kiln_array_reduce with NumPy's initial=: the result is
 * op(initial, op over a), so an empty array gives initial. initial is a
 * scalar, converted to kiln_dtype_reduce_result(op, a's dtype) as
 * kiln_array_fill does. For SUM, PROD,
 * MIN, MAX, ANY, ALL (and the norms, whose reduce it joins: sum of |a| +
 * initial, ...); ARGMIN / ARGMAX take none (KILN_ERROR_INVALID_ARGUMENT).
 * The blocking form writes host_result; the _async form as
 * kiln_array_reduce_async. Generators: kiln_reduction_desc.initial. */
KILN_API kiln_status kiln_array_reduce_initial(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                               kiln_arg initial, void *host_result);
KILN_API kiln_status kiln_array_reduce_initial_async(kiln_queue *queue, kiln_reduce_op op,
                                                     kiln_array *a, kiln_arg initial,
                                                     kiln_array *result, void *host_result,
                                                     size_t num_wait, kiln_event *const *wait,
                                                     kiln_event **event);

#endif /* KILN_ARRAY_H */
