/* The sorting operations over arrays (include/kiln/sort.h): argument
 * checks, dense stand-ins for strided or offset arrays, and the sorts,
 * topk and searchsorted on top of the sorter (sort.c). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/prim/sort.h"
#include "base/desc.h"
#include "base/check.h"
#include "base/error.h"

static int key_kind(kiln_dtype d) {
    switch (d) {
    case KILN_FLOAT16:
    case KILN_FLOAT32:
    case KILN_FLOAT64:
        return KILN__KEY_FLOAT;
    case KILN_INT8:
    case KILN_INT16:
    case KILN_INT32:
    case KILN_INT64:
        return KILN__KEY_SIGNED;
    default:
        return KILN__KEY_UNSIGNED;
    }
}

/* The kernels read dense arrays from their buffer's start. */
static int direct(const kiln_array *a) {
    return a->offset == 0 && kiln__array_contiguous(a);
}

/* The dense buffer of input a: its own, or a copy's. */
static kiln_status dense_in(kiln__chain *c, kiln_array *a, kiln_buffer **buf) {
    if (direct(a)) {
        *buf = a->buffer;
        return KILN_OK;
    }
    kiln_array *t = NULL;
    kiln__chain_array(c, a->dtype, a->ndim, a->shape, &t);
    kiln_status st = kiln__chain_array_copy(c, t, a);
    *buf = t ? t->buffer : NULL;
    return st;
}

/* The dense stand-in of output a (copied to a by dense_out_finish). */
static kiln_status dense_out(kiln__chain *c, kiln_array *a, kiln_array **stand) {
    if (direct(a)) {
        *stand = a;
        return KILN_OK;
    }
    return kiln__chain_array(c, a->dtype, a->ndim, a->shape, stand);
}

static kiln_status dense_out_finish(kiln__chain *c, kiln_array *a, kiln_array *stand) {
    return stand == a ? KILN_OK : kiln__chain_array_copy(c, a, stand);
}

static kiln_status check_array(kiln_queue *q, const kiln_array *a, const char *what,
                               const char *name) {
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, name);
    if (kiln_queue_context(q) != a->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %s belongs to another context than the "
                               "queue",
                               what, name);
    if (a->size >= UINT32_MAX)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: %s has %zu items; sorts take at most "
                               "2^32 - 1",
                               what, name, a->size);
    return KILN_OK;
}

static kiln_status check_shape(const kiln_array *a, const kiln_array *b, const char *what,
                               const char *an, const char *bn) {
    if (kiln__array_same_shape(a, b))
        return KILN_OK;
    char da[96], db[96];
    return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s is %s but %s is %s", what, an,
                           kiln__array_describe(a, da, sizeof da), bn,
                           kiln__array_describe(b, db, sizeof db));
}

static kiln_status check_index_dtype(const kiln_array *a, const char *what, const char *name) {
    if (a->dtype == KILN_INT32 || a->dtype == KILN_INT64)
        return KILN_OK;
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: %s is %s; indices are int32 or int64", what, name,
                           kiln_dtype_name(a->dtype));
}

/* An output may be its own input (in place) and nothing else. */
static kiln_status check_overlap(const char *what, kiln_array *const *outs,
                                 const char *const *out_names, int nout, kiln_array *const *ins,
                                 const char *const *in_names, int nin) {
    for (int i = 0; i < nout; i++) {
        if (!outs[i])
            continue;
        for (int j = 0; j < nin; j++) {
            if (!ins[j] || ins[j]->buffer != outs[i]->buffer)
                continue;
            int same = i == j && (ins[j] == outs[i] || (direct(ins[j]) && direct(outs[i])));
            if (!same)
                return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s shares its buffer with %s",
                                       what, out_names[i], in_names[j]);
        }
        for (int j = 0; j < i; j++)
            if (outs[j] && outs[j]->buffer == outs[i]->buffer)
                return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s shares its buffer with %s",
                                       what, out_names[i], out_names[j]);
    }
    return KILN_OK;
}

/* The descriptor's direction and bit range for keys of dtype. */
static kiln_status read_desc(const kiln_sort_desc *desc, kiln_dtype dtype, const char *what,
                             kiln__sort_req *r) {
    kiln_sort_desc d = KILN_SORT_DESC(.descending = 0);
    if (desc) {
        kiln_status st = kiln__desc_read(desc, sizeof d, sizeof d, &d, what, "KILN_SORT_DESC");
        if (st != KILN_OK)
            return st;
    }
    unsigned width = (unsigned)kiln_dtype_size(dtype) * 8;
    if (d.begin_bit == 0 && d.end_bit == 0)
        d.end_bit = width;
    if (d.begin_bit > d.end_bit)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: begin_bit %u > end_bit %u",
                               what, d.begin_bit, d.end_bit);
    if (d.end_bit > width)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: end_bit %u is beyond the %u bits of %s "
                               "keys",
                               what, d.end_bit, width, kiln_dtype_name(dtype));
    r->desc = d.descending != 0;
    r->begin_bit = d.begin_bit;
    r->end_bit = d.end_bit;
    return KILN_OK;
}

/* sort_any's arrays: present, of the queue's context, dtypes and shapes
 * that fit (keys_out may be NULL for an argsort). */
static kiln_status check_sort_args(kiln_queue *queue, const char *what, kiln_array *keys_out,
                                   kiln_array *values_out, kiln_array *keys, kiln_array *values,
                                   kiln_array *idx, kiln_array *offsets) {
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, check_array(queue, keys, what, "keys"));
    int kout = keys_out || !idx; /* argsort: the keys are not wanted */
    if (kout) {
        KILN__CHECK_CALL(&ck, check_array(queue, keys_out, what, "keys_out"));
        KILN__CHECK(&ck, keys_out->dtype == keys->dtype, KILN_ERROR_MISMATCH,
                    "%s: keys_out is %s but keys %s", what, kiln_dtype_name(keys_out->dtype),
                    kiln_dtype_name(keys->dtype));
        KILN__CHECK_CALL(&ck, check_shape(keys_out, keys, what, "keys_out", "keys"));
    }
    KILN__CHECK(&ck, idx || (!values) == (!values_out), KILN_ERROR_NULL_HANDLE,
                "%s: values and values_out go together (%s is "
                "NULL)",
                what, values ? "values_out" : "values");
    if (values) {
        KILN__CHECK_CALL(&ck, check_array(queue, values, what, "values"));
        KILN__CHECK_CALL(&ck, check_array(queue, values_out, what, "values_out"));
        KILN__CHECK(&ck, values_out->dtype == values->dtype, KILN_ERROR_MISMATCH,
                    "%s: values_out is %s but values %s", what, kiln_dtype_name(values_out->dtype),
                    kiln_dtype_name(values->dtype));
        KILN__CHECK_CALL(&ck, check_shape(values, keys, what, "values", "keys"));
        KILN__CHECK_CALL(&ck, check_shape(values_out, keys, what, "values_out", "keys"));
    }
    if (idx) {
        KILN__CHECK_CALL(&ck, check_array(queue, idx, what, "indices"));
        KILN__CHECK_CALL(&ck, check_index_dtype(idx, what, "indices"));
        KILN__CHECK_CALL(&ck, check_shape(idx, keys, what, "indices", "keys"));
    }
    if (offsets) {
        KILN__CHECK_CALL(&ck, check_array(queue, offsets, what, "offsets"));
        KILN__CHECK_CALL(&ck, check_index_dtype(offsets, what, "offsets"));
        KILN__CHECK(&ck, offsets->ndim == 1 && offsets->size != 0, KILN_ERROR_INVALID_ARGUMENT,
                    "%s: offsets must be 1-D with nseg + 1 >= 1 "
                    "entries",
                    what);
        KILN__CHECK(&ck, keys->ndim == 1, KILN_ERROR_MISMATCH,
                    "%s: segmented keys must be 1-D (%u "
                    "dimensions)",
                    what, keys->ndim);
    }
    return ck.st;
}

/* An op's first checks: a queue and a wait list without NULLs. */
static kiln_status call_begin(kiln_queue *queue, const char *what, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", what);
    return kiln__check_wait(what, num_wait, wait);
}

/* The common sort: keys (and values, or indices when idx is set) along
 * the last axis or by offsets. */
static kiln_status sort_any(kiln_queue *queue, const char *what, kiln_array *keys_out,
                            kiln_array *values_out, kiln_array *keys, kiln_array *values,
                            kiln_array *idx, kiln_array *offsets, const kiln_sort_desc *desc,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    if (call_begin(queue, what, num_wait, wait, event) != KILN_OK)
        return KILN_ERROR_NULL_HANDLE;
    kiln_status st = check_sort_args(queue, what, keys_out, values_out, keys, values, idx, offsets);
    kiln__sort_req r = { 0 };
    if (st == KILN_OK)
        st = read_desc(desc, keys->dtype, what, &r);
    if (st == KILN_OK) {
        kiln_array *outs[3] = { keys_out, idx ? idx : values_out };
        kiln_array *ins[3] = { keys, values, offsets };
        static const char *const in[3] = { "keys", "values", "offsets" };
        const char *const on[2] = { "keys_out", idx ? "indices" : "values_out" };
        st = check_overlap(what, outs, on, 2, ins, in, 3);
    }
    if (st != KILN_OK)
        return st;
    if (keys->size == 0)
        return event ? kiln_queue_marker(queue, num_wait, wait, event) : KILN_OK;
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_array *kout_d = NULL, *vout_d = NULL;
    r.n = keys->size;
    r.key_bytes = (unsigned)kiln_dtype_size(keys->dtype);
    r.kind = key_kind(keys->dtype);
    if (keys->ndim > 1)
        r.seglen = keys->shape[keys->ndim - 1];
    st = dense_in(&c, keys, &r.kin);
    if (st == KILN_OK && offsets) {
        st = dense_in(&c, offsets, &r.offsets);
        r.nseg = offsets->size - 1;
        r.off_wide = offsets->dtype == KILN_INT64;
    }
    if (st == KILN_OK && keys_out)
        st = dense_out(&c, keys_out, &kout_d);
    if (st == KILN_OK && idx) {
        r.iota = 1;
        r.val_bytes = (unsigned)kiln_dtype_size(idx->dtype);
        st = dense_out(&c, idx, &vout_d);
    } else if (st == KILN_OK && values) {
        r.val_bytes = (unsigned)kiln_dtype_size(values->dtype);
        st = dense_in(&c, values, &r.vin);
        if (st == KILN_OK)
            st = dense_out(&c, values_out, &vout_d);
    }
    /* argsort: the keys are not wanted (kiln__sort_run gives them a
     * scratch buffer where its route writes them) */
    r.keys_unused = !kout_d;
    if (kout_d)
        r.kout = kout_d->buffer;
    if (vout_d)
        r.vout = vout_d->buffer;
    if (st == KILN_OK)
        st = kiln__sort_run(&c, &r);
    if (st == KILN_OK && kout_d)
        st = dense_out_finish(&c, keys_out, kout_d);
    if (st == KILN_OK && vout_d)
        st = dense_out_finish(&c, idx ? idx : values_out, vout_d);
    return kiln__chain_end(&c, st, event);
}

kiln_status kiln_array_sort_out(kiln_queue *queue, kiln_array *keys_out, kiln_array *values_out,
                                kiln_array *keys, kiln_array *values, const kiln_sort_desc *desc,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return sort_any(queue, "kiln_array_sort_out", keys_out, values_out, keys, values, NULL, NULL,
                    desc, num_wait, wait, event);
}

kiln_status kiln_array_argsort_out(kiln_queue *queue, kiln_array *indices, kiln_array *keys,
                                   const kiln_sort_desc *desc, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event) {
    if (!indices) {
        if (event)
            *event = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_argsort_out: indices is NULL");
    }
    return sort_any(queue, "kiln_array_argsort_out", NULL, NULL, keys, NULL, indices, NULL, desc,
                    num_wait, wait, event);
}

kiln_status kiln_array_segmented_sort_out(kiln_queue *queue, kiln_array *keys_out,
                                          kiln_array *values_out, kiln_array *keys,
                                          kiln_array *values, kiln_array *offsets,
                                          const kiln_sort_desc *desc, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event) {
    if (!offsets) {
        if (event)
            *event = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_segmented_sort_out: offsets is NULL");
    }
    return sort_any(queue, "kiln_array_segmented_sort_out", keys_out, values_out, keys, values,
                    NULL, offsets, desc, num_wait, wait, event);
}

/* A view of the first k items of a's last axis. */
static kiln_status first_k(kiln_array *a, size_t k, kiln_array **view) {
    kiln_slice s[KILN_ARRAY_MAX_DIMS];
    for (unsigned d = 0; d < a->ndim; d++)
        s[d] = KILN_SLICE_ALL;
    s[a->ndim - 1] = KILN_SLICE(0, (ptrdiff_t)k, 1);
    return kiln_array_view(a, s, view);
}

kiln_status kiln_array_topk_out(kiln_queue *queue, kiln_array *values_out, kiln_array *indices_out,
                                kiln_array *a, size_t k, int largest, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_topk_out";
    if (call_begin(queue, what, num_wait, wait, event) != KILN_OK)
        return KILN_ERROR_NULL_HANDLE;
    kiln_status st = check_array(queue, a, what, "a");
    if (st == KILN_OK)
        st = check_array(queue, values_out, what, "values_out");
    if (st == KILN_OK && indices_out)
        st = check_array(queue, indices_out, what, "indices_out");
    if (st == KILN_OK && indices_out)
        st = check_index_dtype(indices_out, what, "indices_out");
    if (st != KILN_OK)
        return st;
    size_t last = a->ndim ? a->shape[a->ndim - 1] : 0;
    if (k == 0 || k > last)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: k = %zu is outside [1, %zu] (the last "
                               "dimension)",
                               what, k, last);
    if (values_out->dtype != a->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: values_out is %s but a %s", what,
                               kiln_dtype_name(values_out->dtype), kiln_dtype_name(a->dtype));
    kiln_array *outs[2] = { values_out, indices_out };
    const char *const on[2] = { "values_out", "indices_out" };
    for (int j = 0; j < 2; j++) {
        kiln_array *o = outs[j];
        int ok = o && o->ndim == a->ndim && o->shape[a->ndim - 1] == k;
        for (unsigned d = 0; ok && d + 1 < a->ndim; d++)
            ok = o->shape[d] == a->shape[d];
        if (o && !ok) {
            char da[96];
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: %s must be a's shape with the last "
                                   "dimension %zu (a is %s)",
                                   what, on[j], k, kiln__array_describe(a, da, sizeof da));
        }
        if (o && o->buffer == a->buffer)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s shares its buffer with a", what,
                                   on[j]);
    }
    /* the whole rows sorted (keys and indices) into temporaries, then
     * their first k columns copied out */
    kiln_array *tk = NULL, *ti = NULL, *vk = NULL, *vi = NULL;
    kiln_event *sorted = NULL;
    st = kiln_array_empty(a->context, a->dtype, a->ndim, a->shape, &tk);
    if (st == KILN_OK)
        st = kiln_array_empty(a->context, indices_out ? indices_out->dtype : KILN_INT32, a->ndim,
                              a->shape, &ti);
    kiln_sort_desc d = KILN_SORT_DESC(.descending = largest != 0);
    if (st == KILN_OK)
        st = first_k(tk, k, &vk);
    if (st == KILN_OK)
        st = first_k(ti, k, &vi);
    if (st == KILN_OK)
        st = sort_any(queue, what, tk, NULL, a, NULL, ti, NULL, &d, num_wait, wait, &sorted);
    kiln__chain c = KILN__CHAIN_INIT(queue, sorted ? 1 : 0, &sorted);
    if (st == KILN_OK)
        st = kiln__chain_array_copy(&c, values_out, vk);
    if (st == KILN_OK && indices_out)
        st = kiln__chain_array_copy(&c, indices_out, vi);
    st = kiln__chain_end(&c, st, event);
    kiln__event_drop(&sorted);
    kiln_array_release(tk);
    kiln_array_release(ti);
    kiln_array_release(vk);
    kiln_array_release(vi);
    return st;
}

kiln_status kiln_array_searchsorted_out(kiln_queue *queue, kiln_array *out, kiln_array *sorted,
                                        kiln_array *v, int right, size_t num_wait,
                                        kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_searchsorted_out";
    if (call_begin(queue, what, num_wait, wait, event) != KILN_OK)
        return KILN_ERROR_NULL_HANDLE;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, check_array(queue, sorted, what, "sorted"));
    KILN__CHECK_CALL(&ck, check_array(queue, v, what, "v"));
    KILN__CHECK_CALL(&ck, check_array(queue, out, what, "out"));
    KILN__CHECK_CALL(&ck, check_index_dtype(out, what, "out"));
    KILN__CHECK_CALL(&ck, check_shape(out, v, what, "out", "v"));
    KILN__CHECK(&ck, sorted->dtype == v->dtype, KILN_ERROR_MISMATCH, "%s: sorted is %s but v %s",
                what, kiln_dtype_name(sorted->dtype), kiln_dtype_name(v->dtype));
    KILN__CHECK(&ck, sorted->ndim == 1, KILN_ERROR_MISMATCH,
                "%s: sorted must be 1-D (%u dimensions)", what, sorted->ndim);
    KILN__CHECK(&ck, out->buffer != v->buffer && out->buffer != sorted->buffer, KILN_ERROR_MISMATCH,
                "%s: out shares its buffer with an input", what);
    if (ck.st != KILN_OK)
        return ck.st;
    if (v->size == 0)
        return event ? kiln_queue_marker(queue, num_wait, wait, event) : KILN_OK;
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_buffer *sb = NULL, *vb = NULL;
    kiln_array *od = NULL;
    unsigned kb = (unsigned)kiln_dtype_size(v->dtype);
    dense_in(&c, sorted, &sb);
    dense_in(&c, v, &vb);
    kiln_status st = dense_out(&c, out, &od);
    if (st == KILN_OK) {
        /* an empty sorted array still needs a buffer to bind */
        kiln_buffer *s = sorted->size ? sb : vb;
        kiln_arg args[9] = { KILN_ARG_BUF(s),
                             KILN_ARG_I64((int64_t)sorted->size),
                             KILN_ARG_BUF(vb),
                             KILN_ARG_I64((int64_t)v->size),
                             KILN_ARG_I32(key_kind(v->dtype)),
                             KILN_ARG_I32(right != 0),
                             KILN_ARG_BUF(od->buffer),
                             KILN_ARG_BUF(od->buffer),
                             KILN_ARG_I32(out->dtype == KILN_INT64) };
        kiln__sort_simple(&c, kb, 0, KILN__SORT_SEARCH, v->size, args, 9);
        dense_out_finish(&c, out, od);
    }
    return kiln__chain_end(&c, KILN_OK, event);
}
