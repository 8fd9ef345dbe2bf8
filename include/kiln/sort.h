/* kiln sorting: stable radix sort of arrays, argsort, segmented sort,
 * topk and searchsorted (docs/algorithms.md, "Sort").
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * Keys: every dtype (int8..uint64, float16/32/64). The order is a total
 * order: integers by value; floats by value with -0 before +0 and every
 * NaN after +inf, in either direction (descending puts +inf first and the
 * NaNs still last; NaNs keep their input order and bits). Every sort is
 * stable: equal keys keep their input order, descending too.
 * Arrays of more than one dimension are sorted along their last axis (each
 * row on its own), like NumPy's default axis=-1. Inputs may be strided
 * views (a contiguous copy is made). At most 2^32 - 1 items.
 *
 * Every call is asynchronous (docs/api.md rule 2): it enqueues its work
 * on queue after the wait list and returns; *event (may be NULL) completes
 * when the results are written. Outputs may be the inputs (in place);
 * otherwise outputs and inputs must not overlap. */
#ifndef KILN_SORT_H
#define KILN_SORT_H

/* A descriptor (docs/api.md rule 7): make it with KILN_SORT_DESC(...).
 * A NULL descriptor is ascending over all bits. */
typedef struct kiln_sort_desc {
    size_t struct_size; /* sizeof (set by KILN_SORT_DESC) */
    int descending;     /* 1: largest first */
    /* Sort only on bits [begin_bit, end_bit) of the keys' order bits (as
     * CUB's begin_bit/end_bit): the key's bits with the sign flipped for
     * signed integers, and for floats the total order's bits (docs). 0, 0:
     * all of them. end_bit beyond the key's width is
     * KILN_ERROR_OUT_OF_RANGE; begin_bit > end_bit is
     * KILN_ERROR_INVALID_ARGUMENT. */
    unsigned begin_bit, end_bit;
} kiln_sort_desc;
#define KILN_SORT_DESC(...) ((kiln_sort_desc){ .struct_size = sizeof(kiln_sort_desc), __VA_ARGS__ })

/* keys_out = keys sorted; values_out (NULL when values is NULL) = values
 * in the same order (any dtype). All of one shape and the queue's
 * context; keys_out has keys' dtype, values_out values'. */
KILN_API kiln_status kiln_array_sort_out(kiln_queue *queue, kiln_array *keys_out,
                                         kiln_array *values_out, kiln_array *keys,
                                         kiln_array *values, const kiln_sort_desc *desc,
                                         size_t num_wait, kiln_event *const *wait,
                                         kiln_event **event);

/* indices (int32 or int64, keys' shape) = the stable sorting permutation
 * of keys: keys[indices[i]] is the i-th smallest (largest) along the last
 * axis; indices count from each row's start. */
KILN_API kiln_status kiln_array_argsort_out(kiln_queue *queue, kiln_array *indices,
                                            kiln_array *keys, const kiln_sort_desc *desc,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);

/* Sorts each segment [offsets[s], offsets[s+1]) of 1-D keys (and values)
 * on its own. offsets: 1-D int32 or int64, nseg + 1 non-decreasing
 * entries with offsets[0] = 0 and offsets[nseg] = size (empty segments
 * allowed). Other offsets give an unspecified order of the items, never
 * an access outside the arrays. */
KILN_API kiln_status kiln_array_segmented_sort_out(kiln_queue *queue, kiln_array *keys_out,
                                                   kiln_array *values_out, kiln_array *keys,
                                                   kiln_array *values, kiln_array *offsets,
                                                   const kiln_sort_desc *desc, size_t num_wait,
                                                   kiln_event *const *wait, kiln_event **event);

/* The k largest (largest = 1) or smallest items of a along its last axis,
 * in that order (ties: the earlier item first), into values_out and
 * indices_out (int32 or int64; may be NULL), both of a's shape with the
 * last dimension k. 1 <= k <= the last dimension. Sorts whole rows. */
KILN_API kiln_status kiln_array_topk_out(kiln_queue *queue, kiln_array *values_out,
                                         kiln_array *indices_out, kiln_array *a, size_t k,
                                         int largest, size_t num_wait, kiln_event *const *wait,
                                         kiln_event **event);

/* out[i] = the index at which v[i] would be inserted into the ascending
 * 1-D sorted array to keep it sorted: the first j with sorted[j] >= v[i]
 * (right = 0, NumPy's side='left') or > v[i] (right = 1), in the total
 * order above (NaNs last, as NumPy). v and sorted of one dtype; out int32
 * or int64 of v's shape. */
KILN_API kiln_status kiln_array_searchsorted_out(kiln_queue *queue, kiln_array *out,
                                                 kiln_array *sorted, kiln_array *v, int right,
                                                 size_t num_wait, kiln_event *const *wait,
                                                 kiln_event **event);

/* New-array forms (docs/api.md rule 21): as the _out forms into a new dense
 * array (*result NULL on failure); return at once. sort: a's shape and
 * dtype (keys only; NumPy's np.sort(a)); argsort and searchsorted: INT64
 * indices of a's / v's shape. */
KILN_API kiln_status kiln_array_sort(kiln_queue *queue, kiln_array *a, const kiln_sort_desc *desc,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                     kiln_array **result);
KILN_API kiln_status kiln_array_argsort(kiln_queue *queue, kiln_array *a,
                                        const kiln_sort_desc *desc, size_t num_wait,
                                        kiln_event *const *wait, kiln_event **event,
                                        kiln_array **result);
KILN_API kiln_status kiln_array_searchsorted(kiln_queue *queue, kiln_array *sorted, kiln_array *v,
                                             int right, size_t num_wait, kiln_event *const *wait,
                                             kiln_event **event, kiln_array **result);

#endif /* KILN_SORT_H */
