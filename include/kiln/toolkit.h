/* kiln array toolkit: reductions along an axis, concatenate and stack,
 * histogram and bincount, the list builder (allocate) and a device hash
 * table. docs/algorithms.md ("Array toolkit") has an example per call.
 *
 * Included by kiln.h (inside its extern "C" block) after kiln/array.h; do
 * not include alone. Conventions as in kiln/array.h: a wait list means the
 * call enqueues and returns at once (event may be NULL), calls that block
 * say "Blocks", constructors take the new object last and set it to NULL
 * on failure. */
#ifndef KILN_TOOLKIT_H
#define KILN_TOOLKIT_H

/* ------------------------------------------------ reductions along an axis */

/* Ops beyond kiln_reduce_op's, for the axis reductions only. Results:
 * FLOAT32 for FLOAT16/FLOAT32 input, FLOAT64 for every other dtype
 * (NumPy's), accumulated in double (fp64 devices) with Welford's one-pass
 * update and Chan's merge. An empty axis gives NaN. */
#define KILN_REDUCE_MEAN ((kiln_reduce_op)64)
#define KILN_REDUCE_VAR ((kiln_reduce_op)65) /* population (ddof 0) */
#define KILN_REDUCE_STD ((kiln_reduce_op)66)

/* The dtype kiln_array_reduce_axis writes for op over dtype (0 if unknown):
 * kiln_dtype_reduce_result's, and the above for MEAN/VAR/STD. */
KILN_API kiln_dtype kiln_dtype_reduce_axis_result(kiln_reduce_op op, kiln_dtype dtype);

/* *out = op of a along axis (negative counts from the end, as in NumPy),
 * a new dense array of a's shape without that axis (keepdims: with 1 there;
 * a 1-D array reduced gives a 0-d array, as NumPy). a may be any strided
 * view of 1..KILN_ARRAY_MAX_DIMS dimensions. Every kiln_reduce_op is accepted,
 * plus MEAN, VAR and STD; ARGMIN/ARGMAX give the int64 index along the axis
 * of the first minimum/maximum (a NaN wins: the first NaN). MIN, MAX,
 * ARGMIN and ARGMAX of an empty axis (with outputs) are
 * KILN_ERROR_INVALID_ARGUMENT (no identity, as in NumPy); SUM gives 0 and
 * PROD 1. A bad axis is KILN_ERROR_OUT_OF_RANGE. */
KILN_API kiln_status kiln_array_reduce_axis(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                            int axis, int keepdims, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event,
                                            kiln_array **out);
/* Variance (std != 0: standard deviation) along axis with divisor
 * count - ddof (NaN where that is <= 0), as numpy.var(a, axis, ddof=ddof).
 * ddof must be finite and >= 0. */
KILN_API kiln_status kiln_array_var_axis(kiln_queue *queue, kiln_array *a, int axis, double ddof,
                                         int std, int keepdims, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event,
                                         kiln_array **out);
/* op over a set of axes: axes[0..naxes) (negative count from the end,
 * each once: a repeat is KILN_ERROR_INVALID_ARGUMENT, one outside the
 * array KILN_ERROR_OUT_OF_RANGE); axes NULL (naxes ignored): every axis,
 * as NumPy's axis=None; naxes 0: none (each element reduced alone).
 * *out has a's shape without those axes (keepdims: 1 there; all reduced:
 * 0-d). The ops, dtypes and empty-axis rules of kiln_array_reduce_axis;
 * ARGMIN/ARGMAX take exactly one axis (else INVALID_ARGUMENT).
 * kiln_array_var_axes: variance/std with ddof, as kiln_array_var_axis. */
KILN_API kiln_status kiln_array_reduce_axes(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                            size_t naxes, const int *axes, int keepdims,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event, kiln_array **out);
KILN_API kiln_status kiln_array_var_axes(kiln_queue *queue, kiln_array *a, size_t naxes,
                                         const int *axes, double ddof, int std, int keepdims,
                                         size_t num_wait, kiln_event *const *wait,
                                         kiln_event **event, kiln_array **out);
/* kiln_array_reduce_axes / _axis with NumPy's initial=: each result
 * element is op(initial, op over its axes), so a zero-length axis gives
 * initial, also for MIN and MAX (which are KILN_ERROR_INVALID_ARGUMENT
 * there without one). initial is a scalar, converted to
 * kiln_dtype_reduce_axis_result(op, a's dtype) as kiln_array_fill does. SUM, PROD, MIN, MAX, ANY
 * and ALL take one; other ops are KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_array_reduce_axes_initial(kiln_queue *queue, kiln_reduce_op op,
                                                    kiln_array *a, size_t naxes, const int *axes,
                                                    kiln_arg initial, int keepdims, size_t num_wait,
                                                    kiln_event *const *wait, kiln_event **event,
                                                    kiln_array **out);
KILN_API kiln_status kiln_array_reduce_axis_initial(kiln_queue *queue, kiln_reduce_op op,
                                                    kiln_array *a, int axis, kiln_arg initial,
                                                    int keepdims, size_t num_wait,
                                                    kiln_event *const *wait, kiln_event **event,
                                                    kiln_array **out);

/* The reduction generator along an axis: the range is the shape of the
 * first array argument (every array argument has that shape), map's i is
 * the C-order flat index into it, and out[o] gets the reduction over the
 * axis of output o (the shape without the axis, in C order). out: a
 * contiguous array of that many elements, of the final dtype (the out
 * type's, or any dtype of out_size bytes for a struct). Returns at once. */
KILN_API kiln_status kiln_reduction_launch_axis(kiln_queue *queue, kiln_reduction *reduction,
                                                int axis, size_t num_args, const kiln_arg *args,
                                                kiln_array *out, size_t num_wait,
                                                kiln_event *const *wait, kiln_event **event);

/* ------------------------------------------------------ concatenate, stack */

/* *out = the n arrays joined along axis (an existing one: concatenate; a
 * new one inserted at axis, 0..ndim: stack). Same dtype for all (else
 * KILN_ERROR_MISMATCH); the other dimensions equal (concatenate) or whole
 * shapes equal (stack), else KILN_ERROR_MISMATCH naming both shapes. Any
 * strided views. n = 0 is KILN_ERROR_INVALID_ARGUMENT; stacking 3-D arrays
 * is KILN_ERROR_UNSUPPORTED (4-D). */
KILN_API kiln_status kiln_array_concatenate(kiln_queue *queue, size_t n, kiln_array *const *arrays,
                                            int axis, size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event, kiln_array **out);
KILN_API kiln_status kiln_array_stack(kiln_queue *queue, size_t n, kiln_array *const *arrays,
                                      int axis, size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event, kiln_array **out);

/* ------------------------------------------------------ histogram, bincount */

/* *hist = numpy.histogram(a, bins, range=(lo, hi), weights=weights)[0]:
 * bins equal bins over [lo, hi] with edges lo + k*(hi-lo)/bins (rounded to
 * float32 for float32/float16 input, double otherwise, as NumPy's
 * linspace); bin k holds edge[k] <= x < edge[k+1], the last bin also
 * x == hi; values outside [lo, hi] and NaN are not counted. a: any dtype,
 * any shape (flattened), any view. Counts are INT64; with weights (same
 * shape as a, FLOAT32, FLOAT64, INT32 or INT64) the sums of the weights,
 * in the weights' dtype (FLOAT64 needs 64-bit atomics and fp64). bins = 0,
 * lo > hi or non-finite bounds are KILN_ERROR_INVALID_ARGUMENT. Counts are
 * gathered per work-group in local memory when the bins fit (up to 4096),
 * with global atomics otherwise. */
KILN_API kiln_status kiln_array_histogram(kiln_queue *queue, kiln_array *a, size_t bins, double lo,
                                          double hi, kiln_array *weights, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event,
                                          kiln_array **hist);
/* The same with explicit edges: a 1-D FLOAT64 array of bins + 1
 * non-decreasing values (at least 2); bin k holds edges[k] <= x <
 * edges[k+1], the last also x == edges[bins]. */
KILN_API kiln_status kiln_array_histogram_edges(kiln_queue *queue, kiln_array *a, kiln_array *edges,
                                                kiln_array *weights, size_t num_wait,
                                                kiln_event *const *wait, kiln_event **event,
                                                kiln_array **hist);
/* *counts = numpy.bincount(a, weights, minlength): a of an integer dtype,
 * values >= 0 (a negative value is KILN_ERROR_INVALID_ARGUMENT); length
 * max(max(a) + 1, minlength). INT64 counts, or the weights' sums as for
 * histogram. minlength above 2^40 is KILN_ERROR_INVALID_ARGUMENT, a value
 * of 2^40 or more KILN_ERROR_OUT_OF_RANGE. Blocks (the length depends on
 * the data). */
KILN_API kiln_status kiln_array_bincount(kiln_queue *queue, kiln_array *a, kiln_array *weights,
                                         size_t minlength, kiln_array **counts);
/* The non-blocking form: the caller gives the result's length (NumPy's
 * bincount(a, minlength=length) when every value is below it); values at
 * or above it, and negative ones, are not counted. length 0 gives an empty
 * array. Returns at once. */
KILN_API kiln_status kiln_array_bincount_async(kiln_queue *queue, kiln_array *a,
                                               kiln_array *weights, size_t length, size_t num_wait,
                                               kiln_event *const *wait, kiln_event **event,
                                               kiln_array **counts);

/* ------------------------------------------------- allocate (list builder) */

/* A builder of variable-length output per item, like PyOpenCL's
 * ListOfListsBuilder: operation runs for every i in [0, n) and calls
 * KILN_EMIT(value) 0..k times; the result is one flat array of every
 * emitted value, item 0's first, in emission order within an item, and
 * offsets (INT64, n + 1): item i's values are items[offsets[i] ..
 * offsets[i+1]). Two passes of the same operation (a count, then a fill
 * after an exclusive scan of the counts), so it must emit the same values
 * both times (deterministic, no side effects); the fill never stores
 * outside an item's counted range, and an item that emits a different
 * number of values the second time makes kiln_allocate_run
 * KILN_ERROR_INVALID_ARGUMENT (no output). */
typedef struct kiln_allocate kiln_allocate;

typedef struct kiln_allocate_desc {
    size_t struct_size;    /* sizeof (set by KILN_ALLOCATE_DESC) */
    const char *arguments; /* as for kiln_elementwise_desc (at least one
                              array); every array is indexed freely, as
                              with KILN_ELEMENTWISE_ANY_SHAPE, and must be
                              contiguous */
    const char *item_type; /* a kiln dtype name: "int", "float", "long" */
    const char *operation; /* statements of i, e.g. "for (long j = 0; j <
                              m; j++) if (near(i, j)) KILN_EMIT(j);" */
    const char *preamble;  /* may be NULL */
    const char *name;      /* as for kiln_elementwise_desc; NULL =
                              "kiln_allocate" */
} kiln_allocate_desc;
#define KILN_ALLOCATE_DESC(...) \
    ((kiln_allocate_desc){ .struct_size = sizeof(kiln_allocate_desc), __VA_ARGS__ })

/* Builds both passes (Blocks while it compiles; a bad operation is
 * KILN_ERROR_BUILD). */
KILN_API kiln_status kiln_allocate_create(kiln_context *context, const kiln_allocate_desc *desc,
                                          kiln_allocate **allocate);
/* Runs it over [0, n) after the queue's earlier work and gives new arrays
 * *items (1-D, of item_type, of the total length, which may be 0) and
 * *offsets (INT64, n + 1). Blocks: the total sizes the output. */
KILN_API kiln_status kiln_allocate_run(kiln_queue *queue, kiln_allocate *allocate, size_t n,
                                       size_t num_args, const kiln_arg *args, kiln_array **items,
                                       kiln_array **offsets);
/* The non-blocking form: the caller gives the items' capacity (as
 * kiln_array_bincount_async gives the length). *items is a new 1-D array
 * of capacity elements, *offsets as above; offsets[n] is the total, which
 * may exceed capacity: values past capacity are not stored (run again
 * with capacity >= offsets[n] for all of them). check (INT64, at least
 * one element, of the queue's context; may be NULL) gets check[0] = 0, or
 * i + 1 for an item i whose fill emitted a different number of values
 * than its count (its range then holds what fitted; the blocking form
 * fails instead). After the wait list; returns at once; *event (may be
 * NULL) completes when items, offsets and check are written. */
KILN_API kiln_status kiln_allocate_run_async(kiln_queue *queue, kiln_allocate *allocate, size_t n,
                                             size_t num_args, const kiln_arg *args, size_t capacity,
                                             kiln_array *check, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event,
                                             kiln_array **items, kiln_array **offsets);
KILN_API kiln_status kiln_allocate_retain(kiln_allocate *allocate);
KILN_API void kiln_allocate_release(kiln_allocate *allocate);

/* --------------------------------------------------------------- hashing */

/* Hash functions callable from every generator expression (elementwise,
 * reduction, scan, allocate) and in the portable dialect:
 *   uint  kiln_hash_fmix32(uint h)            murmur3's 32-bit finaliser
 *   ulong kiln_hash_fmix64(ulong h)           murmur3's 64-bit finaliser
 *   uint  kiln_hash_xxh32_u32(uint v, uint seed)   xxHash32 of v's 4 bytes
 *   uint  kiln_hash_xxh32_u64(ulong v, uint seed)  xxHash32 of v's 8 bytes
 *                                                  (little-endian)
 * kiln_hash_kernel_source() gives the same text for user kernels. */
KILN_API const char *kiln_hash_kernel_source(void);

/* A device hash table from 32-bit integer keys (INT32 or UINT32) to values
 * (INT32, UINT32 or FLOAT32): open addressing with linear probing on
 * kiln_hash_fmix32 of the key, in 2 * capacity (a power of two) slots.
 * Load-factor limit: at most `capacity` keys (a load of 0.5 at most) over
 * the table's life, erased keys included (their slots stay used until
 * kiln_hash_table_clear). An insert past that, or any probe that finds no
 * slot, leaves those keys out and makes the call KILN_ERROR_OUT_OF_RANGE
 * ("full"); probing is bounded, never a hang. (A slot is claimed first and
 * the key counted after; a key past the capacity gives its slot back as
 * an erased one.) The keys 0xFFFFFFFF and
 * 0xFFFFFFFE (-1 and -2 as INT32) mark empty and erased slots: inserting
 * (or adding) them is KILN_ERROR_INVALID_ARGUMENT and stores none of the
 * call's keys (they are checked first), looking them up finds nothing. */
typedef struct kiln_hash_table kiln_hash_table;

/* Allocates and clears the table (Blocks). capacity 0 or above 2^30 is
 * KILN_ERROR_INVALID_ARGUMENT, as are other dtypes. */
KILN_API kiln_status kiln_hash_table_create(kiln_queue *queue, size_t capacity,
                                            kiln_dtype key_dtype, kiln_dtype value_dtype,
                                            kiln_hash_table **table);
KILN_API kiln_status kiln_hash_table_retain(kiln_hash_table *table);
KILN_API void kiln_hash_table_release(kiln_hash_table *table);
/* Empties the table (Blocks). */
KILN_API kiln_status kiln_hash_table_clear(kiln_queue *queue, kiln_hash_table *table);
/* Inserts keys[k] -> values[k] (1-D contiguous arrays of the table's
 * dtypes, equal sizes); an existing key's value is replaced (for a key
 * given twice in one call, one of its values is kept). Blocks, to report
 * a full table. */
KILN_API kiln_status kiln_hash_table_insert(kiln_queue *queue, kiln_hash_table *table,
                                            kiln_array *keys, kiln_array *values);
/* Insert-or-add: adds values[k] (values NULL: 1) to the value of keys[k],
 * a new key starting from 0 (atomic adds: repeated keys all count).
 * Blocks, to report a full table. */
KILN_API kiln_status kiln_hash_table_add(kiln_queue *queue, kiln_hash_table *table,
                                         kiln_array *keys, kiln_array *values);
/* The non-blocking forms of insert and add: they run after the wait list
 * and return at once. A full table or a reserved key fails *event
 * (kiln_event_wait: KILN_ERROR_EVENT_FAILED; the blocking forms say which):
 * the keys are then stored as by the blocking forms. */
KILN_API kiln_status kiln_hash_table_insert_async(kiln_queue *queue, kiln_hash_table *table,
                                                  kiln_array *keys, kiln_array *values,
                                                  size_t num_wait, kiln_event *const *wait,
                                                  kiln_event **event);
KILN_API kiln_status kiln_hash_table_add_async(kiln_queue *queue, kiln_hash_table *table,
                                               kiln_array *keys, kiln_array *values,
                                               size_t num_wait, kiln_event *const *wait,
                                               kiln_event **event);
/* values[k] = the value of keys[k], or missing (a scalar, converted to the
 * value dtype as kiln_array_fill does) where the key is absent; found (may be NULL: a UINT8 array
 * of keys' size) gets 1 or 0. Returns at once. */
KILN_API kiln_status kiln_hash_table_lookup(kiln_queue *queue, kiln_hash_table *table,
                                            kiln_array *keys, kiln_array *values, kiln_arg missing,
                                            kiln_array *found, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
/* Erases keys (absent ones are ignored). Returns at once. */
KILN_API kiln_status kiln_hash_table_erase(kiln_queue *queue, kiln_hash_table *table,
                                           kiln_array *keys, size_t num_wait,
                                           kiln_event *const *wait, kiln_event **event);
/* The number of keys in the table now (Blocks). */
KILN_API kiln_status kiln_hash_table_count(kiln_queue *queue, kiln_hash_table *table,
                                           size_t *count);

#endif /* KILN_TOOLKIT_H */
