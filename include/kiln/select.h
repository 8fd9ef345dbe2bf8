/* kiln selection: copy_if, remove_if, partition, unique, reduce_by_key.
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * Every operation is stable (the kept items keep their order) and leaves
 * the number of items it wrote on the device: in element 0 of `count`, a
 * 1-element (or longer) contiguous INT64 array, written by the same work
 * that writes the items, so the next operation can use it without a round
 * trip. `host_count` (may be NULL) gets the same number on the host once
 * *event has completed (no hidden synchronisation: wait on *event, or use
 * kiln_select_run, which blocks). One of count / host_count is needed.
 * Outputs are contiguous 1-D arrays with room for every item (at least n
 * elements: the count is not known when the work is enqueued); elements
 * past the count are unspecified (on CPUs the last one takes the stores of
 * discarded items). Input arrays may be strided views.
 *
 * How it runs (docs/algorithms.md, "Selection"): one scan of the 0/1 flags
 * whose output step scatters the selected items, on the scan's variants.
 * Where the device has forward progress (GPUs) a single pass with
 * decoupled look-back: the input is read once from memory (the output step
 * re-reads an item the same work-group loaded a moment before, from
 * cache); writes are the selected items plus 8 bytes per tile. On CPUs the
 * three-phase scan: a pass that counts, then a pass that re-reads the input
 * and scatters. The generator's output statements run for kept (and, with
 * rejected_output, rejected) items only. */
#ifndef KILN_SELECT_H
#define KILN_SELECT_H

/* ------------------------------------------------------ selection generator */

typedef struct kiln_select kiln_select;

typedef struct kiln_select_desc {
    size_t struct_size;          /* sizeof (set by KILN_SELECT_DESC) */
    const char *arguments;       /* as for kiln_elementwise_desc; the first array
                                    is the input and has n elements (it may be a
                                    strided view, read at i only); the others are
                                    contiguous, of any size, indexed freely */
    const char *predicate;       /* expression of i: true selects item i, e.g.
                                    "x[i] > 0.5f" (PyOpenCL's copy_if) */
    const char *output;          /* statement run for each selected i, with
                                    `out_index` (a long: its rank among the
                                    selected, from 0), e.g. "y[out_index] = x[i]" */
    const char *rejected_output; /* NULL, or a statement run for each i not
                              selected, `out_index` its rank among those
                              (a stable partition in one pass) */
    const char *preamble;        /* may be NULL */
    const char *name;            /* as for kiln_elementwise_desc; NULL =
                                    "kiln_select" */
} kiln_select_desc;
#define KILN_SELECT_DESC(...) \
    ((kiln_select_desc){ .struct_size = sizeof(kiln_select_desc), __VA_ARGS__ })

/* Makes a selection over i in [0, n). The strings are copied. Builds for
 * the context's first device before returning (a predicate that does not
 * compile is KILN_ERROR_BUILD naming it). Blocks while it compiles.
 * *select is NULL on failure. */
KILN_API kiln_status kiln_select_create(kiln_context *context, const kiln_select_desc *desc,
                                        kiln_select **select);
/* Runs it over [0, n) (n = 0 only sets the count to 0). The number
 * selected goes into count (INT64, element 0; may be NULL) and/or
 * host_count (may be NULL; written once *event has completed). Returns at
 * once. */
KILN_API kiln_status kiln_select_run_async(kiln_queue *queue, kiln_select *select, size_t n,
                                           size_t num_args, const kiln_arg *args, kiln_array *count,
                                           int64_t *host_count, size_t num_wait,
                                           kiln_event *const *wait, kiln_event **event);
/* The same after the queue's earlier work, the count into *count. Blocks
 * until the items and the count are there. */
KILN_API kiln_status kiln_select_run(kiln_queue *queue, kiln_select *select, size_t n,
                                     size_t num_args, const kiln_arg *args, size_t *count);
KILN_API kiln_status kiln_select_retain(kiln_select *select);
KILN_API void kiln_select_release(kiln_select *select);

/* ------------------------------------------------------- ready-made arrays */

/* The predicate of the array operations is an expression of `x` (the
 * element's value: its dtype, float for FLOAT16) and `i` (its index), e.g.
 * "x > 0.5f", "(i & 1) == 0", "x == x" (not NaN). Each distinct predicate
 * is built once per context and dtype (then cached). a: any dtype and
 * layout (C order); outputs of a's dtype. A predicate that does not
 * compile is KILN_ERROR_BUILD naming it; an output of another dtype or too
 * small, or a count array that is not INT64, is KILN_ERROR_MISMATCH naming
 * the argument. */

/* out[0..c) = the elements of a where predicate holds, in order; c is the
 * count. out may not be a. */
KILN_API kiln_status kiln_array_copy_if_out(kiln_queue *queue, kiln_array *out, kiln_array *count,
                                            int64_t *host_count, kiln_array *a,
                                            const char *predicate, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
/* out[0..c) = the elements of a where predicate does NOT hold, in order. */
KILN_API kiln_status kiln_array_remove_if_out(kiln_queue *queue, kiln_array *out, kiln_array *count,
                                              int64_t *host_count, kiln_array *a,
                                              const char *predicate, size_t num_wait,
                                              kiln_event *const *wait, kiln_event **event);
/* Stable partition in one pass; count: the number selected (c).
 * With two outputs: selected[0..c) and rejected[0..n-c), each in order.
 * With rejected NULL: selected[0..c) holds the selected items in order and
 * selected[c..n) the rejected ones in REVERSE order (CUB's
 * DevicePartition::If layout: their total is not known until the end of
 * the single pass). */
KILN_API kiln_status kiln_array_partition_out(kiln_queue *queue, kiln_array *selected,
                                              kiln_array *rejected, kiln_array *count,
                                              int64_t *host_count, kiln_array *a,
                                              const char *predicate, size_t num_wait,
                                              kiln_event *const *wait, kiln_event **event);
/* Consecutive duplicates of a collapsed to their first item: out[0..c),
 * and counts[0..c) (INT64; may be NULL) the length of each run (as
 * torch.unique_consecutive with return_counts). Equality is the dtype's ==:
 * NaN never equals anything, so NaNs are never merged (NumPy's np.unique
 * merges them by default), and -0.0 equals +0.0 (the first is kept). */
KILN_API kiln_status kiln_array_unique_out(kiln_queue *queue, kiln_array *out, kiln_array *counts,
                                           kiln_array *count, int64_t *host_count, kiln_array *a,
                                           size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event);

/* Right-sized selections (docs/api.md rule 21): *result = a new 1-D array
 * of exactly the selected elements (length c, 0 included), after the
 * queue's earlier work. Blocks: the count sizes the result. */
KILN_API kiln_status kiln_array_copy_if(kiln_queue *queue, kiln_array *a, const char *predicate,
                                        kiln_array **result);
/* kiln_array_unique_out's runs, right-sized; counts (may be NULL) gets the
 * INT64 run lengths. */
KILN_API kiln_status kiln_array_unique(kiln_queue *queue, kiln_array *a, kiln_array **result,
                                       kiln_array **counts);
/* For each run of equal consecutive keys (equality as kiln_array_unique_out):
 * out_keys[r] = its key, out_values[r] = values over the run combined with
 * op (KILN_REDUCE_SUM, PROD, MIN or MAX), in the values' dtype (FLOAT16:
 * computed in float, rounded once; integers wrap). values: as many as keys, any numeric dtype;
 * count: the number of runs. MIN/MAX of floats propagate NaN (as np.minimum). */
KILN_API kiln_status kiln_array_reduce_by_key_out(kiln_queue *queue, kiln_array *out_keys,
                                                  kiln_array *out_values, kiln_array *count,
                                                  int64_t *host_count, kiln_array *keys,
                                                  kiln_array *values, kiln_reduce_op op,
                                                  size_t num_wait, kiln_event *const *wait,
                                                  kiln_event **event);
/* The same with an operator expression of a and b (the earlier value on
 * the left; associative, need not be commutative), in the values' type
 * (float for FLOAT16), and its neutral element: e.g. "a > b ? a : b" with
 * "-INFINITY". */
KILN_API kiln_status kiln_array_reduce_by_key_expr_out(kiln_queue *queue, kiln_array *out_keys,
                                                       kiln_array *out_values, kiln_array *count,
                                                       int64_t *host_count, kiln_array *keys,
                                                       kiln_array *values, const char *reduce,
                                                       const char *neutral, size_t num_wait,
                                                       kiln_event *const *wait, kiln_event **event);

#endif /* KILN_SELECT_H */
