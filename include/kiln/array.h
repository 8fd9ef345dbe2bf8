/* kiln arrays and generated algorithms: elementwise, reduction, scan.
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * A kiln_array is a typed, strided view on a kiln_buffer. The ABI has room
 * for KILN_ARRAY_MAX_DIMS (8) dimensions; this version supports arrays of 1
 * to 3 (more is KILN_ERROR_UNSUPPORTED, and lifting that limit will not
 * change the ABI). Views and slices share the buffer; no data is copied.
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

/* Slots for dimensions in kiln_array_info (the ABI). Arrays of this
 * version have 1 to 3 dimensions. */
#define KILN_ARRAY_MAX_DIMS 8

/* A Python-style slice of one dimension: start, stop (exclusive), step
 * (non-zero, may be negative). Negative start/stop count from the end; out
 * of range values are clamped, as in NumPy. */
typedef struct kiln_slice {
    ptrdiff_t start, stop, step;
} kiln_slice;
#define KILN_SLICE(a, b, s) ((kiln_slice){(a), (b), (s)})
#define KILN_SLICE_ALL ((kiln_slice){0, PTRDIFF_MAX, 1})
#define KILN_SLICE_REVERSED ((kiln_slice){PTRDIFF_MAX, PTRDIFF_MIN, -1})

/* An info struct (docs/api.md rule 7): filled by kiln_array_get_info, new
 * members only ever added at the end. */
typedef struct kiln_array_info {
    kiln_dtype dtype;
    unsigned ndim;                          /* 1..3 in this version */
    size_t shape[KILN_ARRAY_MAX_DIMS];      /* unused dims are 1 */
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS]; /* in elements, may be negative */
    size_t offset;                          /* of element 0, in elements */
    size_t size;                            /* number of elements */
    int contiguous;                         /* 1 if dense C order */
} kiln_array_info;

/* Creates an uninitialised array of ndim dimensions in context (Blocks
 * only to allocate). ndim 0 or above KILN_ARRAY_MAX_DIMS, or an unknown
 * dtype, is KILN_ERROR_INVALID_ARGUMENT; ndim 4..KILN_ARRAY_MAX_DIMS is
 * KILN_ERROR_UNSUPPORTED (this version supports 1..3). Shapes may contain 0.
 * FLOAT16 arrays compute on every device: elements are widened to float,
 * computed in float and rounded once to half (nearest even); reductions of
 * FLOAT16 give FLOAT32 (docs/algorithms.md). */
KILN_API kiln_status kiln_array_empty(kiln_context *context, kiln_dtype dtype,
                                      unsigned ndim, const size_t *shape,
                                      kiln_array **array);
/* An array filled with zeros / with *value (one element of dtype, read
 * before the call returns) / with start + k*step (1-D, n elements), by work
 * enqueued on queue after wait[0..num_wait). Does not block: *event (may be
 * NULL) completes when the array is filled; *array is usable at once by
 * work ordered after *event (an in-order queue orders it by itself). */
KILN_API kiln_status kiln_array_zeros(kiln_queue *queue, kiln_dtype dtype,
                                      unsigned ndim, const size_t *shape,
                                      size_t num_wait,
                                      kiln_event *const *wait,
                                      kiln_event **event, kiln_array **array);
KILN_API kiln_status kiln_array_full(kiln_queue *queue, kiln_dtype dtype,
                                     unsigned ndim, const size_t *shape,
                                     const void *value, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event, kiln_array **array);
KILN_API kiln_status kiln_array_arange(kiln_queue *queue, kiln_dtype dtype,
                                       size_t n, double start, double step,
                                       size_t num_wait,
                                       kiln_event *const *wait,
                                       kiln_event **event, kiln_array **array);
/* An array holding a copy of dense C-order host data (copied before the call
 * returns: Blocks). */
KILN_API kiln_status kiln_array_from_host(kiln_context *context,
                                          kiln_dtype dtype, unsigned ndim,
                                          const size_t *shape,
                                          const void *host,
                                          kiln_array **array);
KILN_API kiln_status kiln_array_retain(kiln_array *array);
/* NULL is a no-op. Queued work that uses the array keeps its buffer. */
KILN_API void kiln_array_release(kiln_array *array);

/* Fills *info. info_size is sizeof(kiln_array_info) as the caller was
 * compiled (the macro passes it): an older program gets the prefix it
 * knows, a newer one's extra members read 0. */
KILN_API kiln_status kiln_array_get_info(const kiln_array *array,
                                         kiln_array_info *info,
                                         size_t info_size);
#define kiln_array_get_info(array, info)                                       \
    kiln_array_get_info((array), (info), sizeof *(info))
KILN_API size_t kiln_array_size(const kiln_array *array); /* 0 for NULL */
KILN_API kiln_dtype kiln_array_dtype(const kiln_array *array);
/* The buffer and context; borrowed (not retained). */
KILN_API kiln_buffer *kiln_array_buffer(const kiln_array *array);
KILN_API kiln_context *kiln_array_context(const kiln_array *array);

/* A view: slices has one entry per dimension of array (NULL = all). No copy;
 * the view holds a reference to the buffer. */
KILN_API kiln_status kiln_array_view(kiln_array *array,
                                     const kiln_slice *slices,
                                     kiln_array **view);
/* A view with dimensions d0 and d1 swapped (a transpose for 2-D). A
 * dimension the array does not have is KILN_ERROR_OUT_OF_RANGE. */
KILN_API kiln_status kiln_array_swapaxes(kiln_array *array, unsigned d0,
                                         unsigned d1, kiln_array **view);
/* A view with a new shape of the same size (ndim as for kiln_array_empty).
 * The array must be contiguous (KILN_ERROR_MISMATCH otherwise; copy it
 * first). */
KILN_API kiln_status kiln_array_reshape(kiln_array *array, unsigned ndim,
                                        const size_t *shape,
                                        kiln_array **view);

/* Host transfers of the whole array as dense C-order host data. Strided
 * views are gathered/scattered by a kernel through a temporary. The _async
 * forms return at once (host memory must stay valid until *event ends);
 * the plain forms block. */
KILN_API kiln_status kiln_array_read_async(kiln_queue *queue,
                                           kiln_array *array, void *host,
                                           size_t num_wait,
                                           kiln_event *const *wait,
                                           kiln_event **event);
KILN_API kiln_status kiln_array_read(kiln_queue *queue, kiln_array *array,
                                     void *host);
KILN_API kiln_status kiln_array_write_async(kiln_queue *queue,
                                            kiln_array *array,
                                            const void *host, size_t num_wait,
                                            kiln_event *const *wait,
                                            kiln_event **event);
KILN_API kiln_status kiln_array_write(kiln_queue *queue, kiln_array *array,
                                      const void *host);
/* Sets every element of the array (or view) to *value (one element of its
 * dtype). */
KILN_API kiln_status kiln_array_fill(kiln_queue *queue, kiln_array *array,
                                     const void *value, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event);
/* dst = src, element by element (same shape and dtype; any strides). Both
 * must belong to queue's context. */
KILN_API kiln_status kiln_array_copy(kiln_queue *queue, kiln_array *dst,
                                     kiln_array *src, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event);
/* Copies between arrays of different contexts/devices through host memory.
 * Blocks until the copy has ended. */
KILN_API kiln_status kiln_array_copy_between(kiln_queue *dst_queue,
                                             kiln_array *dst,
                                             kiln_queue *src_queue,
                                             kiln_array *src);
/* --------------------------------------------------- elementwise operators */

typedef enum kiln_binary_op {
    KILN_OP_ADD = 1,
    KILN_OP_SUB,
    KILN_OP_MUL,
    KILN_OP_DIV,
    KILN_OP_MIN,
    KILN_OP_MAX,
    /* comparisons write 1 or 0 into an output of any dtype */
    KILN_OP_EQ,
    KILN_OP_NE,
    KILN_OP_LT,
    KILN_OP_LE,
    KILN_OP_GT,
    KILN_OP_GE,
} kiln_binary_op;

typedef enum kiln_unary_op {
    KILN_OP_NEG = 1,
    KILN_OP_ABS,
    KILN_OP_SQRT, /* SQRT..COS: float dtypes only */
    KILN_OP_EXP,
    KILN_OP_LOG,
    KILN_OP_SIN,
    KILN_OP_COS,
} kiln_unary_op;

/* out = a OP b. a and b have the same shape and dtype; out has their shape,
 * and their dtype for arithmetic (any dtype for comparisons). out may be a
 * or b. */
KILN_API kiln_status kiln_array_binary(kiln_queue *queue, kiln_binary_op op,
                                       kiln_array *out, kiln_array *a,
                                       kiln_array *b, size_t num_wait,
                                       kiln_event *const *wait,
                                       kiln_event **event);
/* out = a OP scalar (scalar converted to a's dtype; for FLOAT16 rounded to
 * the nearest half, then computed in float). */
KILN_API kiln_status kiln_array_binary_scalar(kiln_queue *queue,
                                              kiln_binary_op op,
                                              kiln_array *out, kiln_array *a,
                                              double scalar, size_t num_wait,
                                              kiln_event *const *wait,
                                              kiln_event **event);
/* out = OP(a), same shape and dtype. */
KILN_API kiln_status kiln_array_unary(kiln_queue *queue, kiln_unary_op op,
                                      kiln_array *out, kiln_array *a,
                                      size_t num_wait,
                                      kiln_event *const *wait,
                                      kiln_event **event);
/* z = alpha*x + y (float dtypes and integers; same shape and dtype). */
KILN_API kiln_status kiln_array_axpy(kiln_queue *queue, kiln_array *z,
                                     double alpha, kiln_array *x,
                                     kiln_array *y, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event);

/* ------------------------------------------------------- generator values */

/* One launch argument of a generated kernel: an array (array != NULL) or a
 * scalar (array == NULL, scalar holds the value; it is converted to the
 * declared type). */
typedef struct kiln_value {
    kiln_array *array;
    kiln_arg scalar;
} kiln_value;
#define KILN_VAL_ARRAY(a) ((kiln_value){.array = (a)})
#define KILN_VAL(arg) ((kiln_value){.array = NULL, .scalar = arg})
#define KILN_VAL_I32(x) KILN_VAL(KILN_ARG_I32(x))
#define KILN_VAL_I64(x) KILN_VAL(KILN_ARG_I64(x))
#define KILN_VAL_U32(x) KILN_VAL(KILN_ARG_U32(x))
#define KILN_VAL_F32(x) KILN_VAL(KILN_ARG_F32(x))
#define KILN_VAL_F64(x) KILN_VAL(KILN_ARG_F64(x))

/* ---------------------------------------------------- elementwise generator */

typedef struct kiln_elementwise kiln_elementwise;

/* Makes an elementwise kernel:
 *   arguments  C declarations, e.g. "float a, const float *x, float *z";
 *              pointers are arrays, the rest scalars.
 *   operation  statement(s) run for every index i (a long) of [0, n), n the
 *              size of the first array argument, e.g. "z[i] = a*x[i]".
 *   name       kernel name (an identifier; NULL = "kiln_elementwise").
 *   preamble   code put before the kernel (helper functions, #defines);
 *              may be NULL.
 * Every array must have the shape of the first (KILN_ERROR_MISMATCH
 * otherwise), except with KILN_ELEMENTWISE_ANY_SHAPE, where arrays other
 * than the first may have any size and are indexed freely (then they must be
 * contiguous), for gathers such as "y[i] = x[idx[i]]".
 * Builds the contiguous variant before returning (so a bad expression fails
 * here with KILN_ERROR_BUILD); other variants are built on first use.
 * Blocks while it compiles. */
enum { KILN_ELEMENTWISE_ANY_SHAPE = 1 };
KILN_API kiln_status kiln_elementwise_create(kiln_context *context,
                                             const char *arguments,
                                             const char *operation,
                                             const char *name,
                                             const char *preamble,
                                             unsigned flags,
                                             kiln_elementwise **kernel);
/* Runs it: one value per declared argument, in order. Returns at once. */
KILN_API kiln_status kiln_elementwise_launch(kiln_queue *queue,
                                             kiln_elementwise *kernel,
                                             size_t num_values,
                                             const kiln_value *values,
                                             size_t num_wait,
                                             kiln_event *const *wait,
                                             kiln_event **event);
KILN_API void kiln_elementwise_release(kiln_elementwise *kernel);

/* ------------------------------------------------------ reduction generator */

typedef struct kiln_reduction kiln_reduction;

typedef struct kiln_reduction_desc {
    const char *arguments; /* as for kiln_elementwise_create */
    const char *out_type;  /* accumulator type: "float", "long", or a struct
                              type defined in preamble */
    size_t out_size;       /* sizeof(out_type); 0 for scalar type names */
    const char *neutral;   /* neutral element, e.g. "0" or "INFINITY" */
    const char *reduce;    /* of a and b, associative and commutative */
    const char *map;       /* of i and the arguments, e.g. "x[i]*y[i]" */
    const char *preamble;  /* may be NULL */
    const char *name;      /* may be NULL */
} kiln_reduction_desc;

/* Makes a reduction of map(i) for i in [0, n), n the size of the first
 * array argument (all arrays of that shape). Blocks while it compiles. */
KILN_API kiln_status kiln_reduction_create(kiln_context *context,
                                           const kiln_reduction_desc *desc,
                                           kiln_reduction **reduction);
/* Runs it. The result goes into element 0 of result (a device array of the
 * out type's dtype; may be NULL) and/or into host_result (out_size bytes;
 * may be NULL; valid once *event has completed). One of them is needed. */
KILN_API kiln_status kiln_reduction_launch(kiln_queue *queue,
                                           kiln_reduction *reduction,
                                           size_t num_values,
                                           const kiln_value *values,
                                           kiln_array *result,
                                           void *host_result, size_t num_wait,
                                           kiln_event *const *wait,
                                           kiln_event **event);
KILN_API void kiln_reduction_release(kiln_reduction *reduction);

typedef enum kiln_reduce_op {
    KILN_REDUCE_SUM = 1,  /* result: a's dtype (FLOAT16: FLOAT32, for all
                             but ARGMIN/ARGMAX) */
    KILN_REDUCE_PROD,     /* a's dtype */
    KILN_REDUCE_MIN,      /* a's dtype; n = 0 gives the dtype's largest */
    KILN_REDUCE_MAX,      /* a's dtype; n = 0 gives the dtype's smallest */
    KILN_REDUCE_NORM1,    /* sum |a|: float dtypes keep theirs, ints float64 */
    KILN_REDUCE_NORM2,    /* sqrt(sum a^2): as NORM1 */
    KILN_REDUCE_NORM_INF, /* max |a|: as NORM1 */
    KILN_REDUCE_ARGMIN,   /* int64 index (C order) of the first minimum; -1 if empty */
    KILN_REDUCE_ARGMAX,   /* int64 index of the first maximum; -1 if empty */
} kiln_reduce_op;

/* The dtype kiln_array_reduce writes for op over a (0 if unsupported). */
KILN_API kiln_dtype kiln_reduce_result_dtype(kiln_reduce_op op,
                                             kiln_dtype dtype);
/* A built-in reduction of every element of a; result/host_result as for
 * kiln_reduction_launch (host_result gets kiln_dtype_size of the result
 * dtype bytes). NORM2's square root is taken on the device. */
KILN_API kiln_status kiln_array_reduce(kiln_queue *queue, kiln_reduce_op op,
                                       kiln_array *a, kiln_array *result,
                                       void *host_result, size_t num_wait,
                                       kiln_event *const *wait,
                                       kiln_event **event);
/* sum a[i]*b[i] (same shape and dtype; result in their dtype). */
KILN_API kiln_status kiln_array_dot(kiln_queue *queue, kiln_array *a,
                                    kiln_array *b, kiln_array *result,
                                    void *host_result, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event);

/* ----------------------------------------------------------- scan generator */

typedef struct kiln_scan kiln_scan;

typedef struct kiln_scan_desc {
    const char *arguments;     /* as for kiln_elementwise_create */
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
    const char *name;          /* may be NULL */
} kiln_scan_desc;

/* Makes a scan over i in [0, n), n the size of the first array argument.
 * Order is preserved: the result at i is input(0) op ... op input(i)
 * combined left to right (restarting at segment starts). Blocks while it
 * compiles. */
KILN_API kiln_status kiln_scan_create(kiln_context *context,
                                      const kiln_scan_desc *desc,
                                      kiln_scan **scan);
KILN_API kiln_status kiln_scan_launch(kiln_queue *queue, kiln_scan *scan,
                                      size_t num_values,
                                      const kiln_value *values,
                                      size_t num_wait,
                                      kiln_event *const *wait,
                                      kiln_event **event);
KILN_API void kiln_scan_release(kiln_scan *scan);

/* out = cumulative sum / product of a (inclusive, or exclusive when
 * exclusive != 0). Same shape and dtype; out may be a. */
KILN_API kiln_status kiln_array_cumsum(kiln_queue *queue, kiln_array *out,
                                       kiln_array *a, int exclusive,
                                       size_t num_wait,
                                       kiln_event *const *wait,
                                       kiln_event **event);
KILN_API kiln_status kiln_array_cumprod(kiln_queue *queue, kiln_array *out,
                                        kiln_array *a, int exclusive,
                                        size_t num_wait,
                                        kiln_event *const *wait,
                                        kiln_event **event);

#endif /* KILN_ARRAY_H */
