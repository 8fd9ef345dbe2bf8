/* Work split across the devices of a context (include/kiln/split.h): one
 * elementwise launch or random fill cut into contiguous parts by weights,
 * each part a launch on its own queue over 1-D views of the arrays, joined
 * by a marker. Public API only. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "kiln.h"

#define SPLIT_MAX_QUEUES 64
#define SPLIT_ALIGN 256 /* items: a random fill's counter blocks line up */

/* Part boundaries: bounds[k] .. bounds[k+1] for queue k. */
static kiln_status split_bounds(const char *fn, size_t nq, kiln_queue *const *queues,
                                const double *weights, size_t n, size_t *bounds) {
    double w[SPLIT_MAX_QUEUES], total = 0;
    for (size_t k = 0; k < nq; k++) {
        if (weights) {
            w[k] = weights[k];
            if (!(w[k] >= 0) || w[k] > 1e300)
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "%s: weights[%zu] is %g; weights are finite and >= 0", fn, k,
                                       w[k]);
        } else {
            kiln_device_info info;
            w[k] = kiln_device_get_info(kiln_queue_device(queues[k]), &info) == KILN_OK &&
                           info.compute_units
                       ? (double)info.compute_units
                       : 1.0;
        }
        total += w[k];
    }
    if (!(total > 0))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: the weights are all 0", fn);
    double acc = 0;
    bounds[0] = 0;
    for (size_t k = 0; k < nq; k++) {
        acc += w[k];
        size_t b = k + 1 == nq ? n : (size_t)((double)n * (acc / total));
        b = k + 1 == nq ? n : (b + SPLIT_ALIGN / 2) / SPLIT_ALIGN * SPLIT_ALIGN;
        if (b > n)
            b = n;
        if (b < bounds[k])
            b = bounds[k];
        bounds[k + 1] = b;
    }
    return KILN_OK;
}

/* Checks common to the split calls; the message names fn. */
static kiln_status split_check(const char *fn, size_t nq, kiln_queue *const *queues,
                               const double *weights, kiln_context *ctx) {
    if (nq == 0 || nq > SPLIT_MAX_QUEUES)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: num_queues is %zu; 1..%d", fn,
                               nq, SPLIT_MAX_QUEUES);
    if (!queues)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queues is NULL", fn);
    for (size_t k = 0; k < nq; k++) {
        if (!queues[k])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queues[%zu] is NULL", fn, k);
        if (ctx && kiln_queue_context(queues[k]) != ctx)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: queues[%zu] belongs to another context than the arrays "
                                   "(the parts share the arrays: one context over the devices)",
                                   fn, k);
        if (weights && !(weights[k] >= 0))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: weights[%zu] is %g; weights are finite and >= 0", fn, k,
                                   weights[k]);
    }
    return KILN_OK;
}

static kiln_status join(size_t nq, kiln_queue *const *queues, kiln_event **evs, size_t num_ev,
                        size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln_status st = KILN_OK;
    if (event) {
        if (num_ev)
            st = kiln_queue_marker(queues[0], num_ev, evs, event);
        else
            st = kiln_queue_marker(queues[0], num_wait, wait, event);
    }
    for (size_t k = 0; k < num_ev; k++)
        kiln_event_release(evs[k]);
    (void)nq;
    return st;
}

/* The end of a split launch: on a failure (st), the parts already
 * enqueued run on and st is reported once they have ended (they may use
 * the caller's arrays); else join. */
static kiln_status finish(kiln_status st, size_t nq, kiln_queue *const *queues, kiln_event **evs,
                          size_t num_ev, size_t num_wait, kiln_event *const *wait,
                          kiln_event **event) {
    if (st == KILN_OK)
        return join(nq, queues, evs, num_ev, num_wait, wait, event);
    if (num_ev)
        kiln_event_wait_all(num_ev, evs);
    for (size_t k = 0; k < num_ev; k++)
        kiln_event_release(evs[k]);
    return st;
}

kiln_status kiln_elementwise_launch_split(size_t num_queues, kiln_queue *const *queues,
                                          const double *weights, kiln_elementwise *ew, size_t n,
                                          size_t num_args, const kiln_arg *args, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_elementwise_launch_split";
    if (event)
        *event = NULL;
    if (!ew)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: elementwise is NULL", fn);
    kiln_status st = split_check(fn, num_queues, queues, weights, NULL);
    if (st != KILN_OK)
        return st;
    if (num_args && !args)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: args is NULL but num_args is %zu",
                               fn, num_args);
    kiln_context *ctx = NULL;
    for (size_t a = 0; a < num_args; a++)
        if (args[a].kind == KILN_ARG_ARRAY) {
            if (!args[a].value.array)
                return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: args[%zu]'s array is NULL",
                                       fn, a);
            kiln_array_info info;
            if ((st = kiln_array_get_info(args[a].value.array, &info)) != KILN_OK)
                return st;
            if (info.ndim != 1 || info.shape[0] != n)
                return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                       "%s: args[%zu] is not a 1-D array of n = %zu elements "
                                       "(%u dimensions, %zu first)",
                                       fn, a, n, info.ndim, info.shape[0]);
            ctx = kiln_array_context(args[a].value.array);
        }
    if (ctx && (st = split_check(fn, num_queues, queues, weights, ctx)) != KILN_OK)
        return st;
    size_t bounds[SPLIT_MAX_QUEUES + 1];
    if ((st = split_bounds(fn, num_queues, queues, weights, n, bounds)) != KILN_OK)
        return st;
    kiln_arg stack[16];
    kiln_arg *part = num_args <= 16 ? stack : malloc(num_args * sizeof *part);
    if (!part)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    kiln_event *evs[SPLIT_MAX_QUEUES];
    size_t num_ev = 0;
    for (size_t k = 0; k < num_queues && st == KILN_OK; k++) {
        size_t a0 = bounds[k], a1 = bounds[k + 1];
        if (a1 == a0)
            continue;
        memcpy(part, args, num_args * sizeof *part);
        for (size_t a = 0; a < num_args && st == KILN_OK; a++)
            if (args[a].kind == KILN_ARG_ARRAY) {
                kiln_slice s = KILN_SLICE((ptrdiff_t)a0, (ptrdiff_t)a1, 1);
                st = kiln_array_view(args[a].value.array, &s, &part[a].value.array);
                if (st != KILN_OK)
                    part[a].value.array = NULL;
            }
        if (st == KILN_OK)
            st = kiln_elementwise_launch(queues[k], ew, a1 - a0, num_args, part, num_wait, wait,
                                         &evs[num_ev]);
        if (st == KILN_OK)
            num_ev++;
        for (size_t a = 0; a < num_args; a++)
            if (args[a].kind == KILN_ARG_ARRAY)
                kiln_array_release(part[a].value.array); /* queued work holds the buffer */
    }
    if (part != stack)
        free(part);
    return finish(st, num_queues, queues, evs, num_ev, num_wait, wait, event);
}

kiln_status kiln_rng_uniform_split(size_t num_queues, kiln_queue *const *queues,
                                   const double *weights, kiln_rng *rng, kiln_array *array,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_rng_uniform_split";
    if (event)
        *event = NULL;
    const char *missing = KILN__FIRST_NULL2(rng, array);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_array_info info;
    kiln_status st = kiln_array_get_info(array, &info);
    if (st != KILN_OK)
        return st;
    if (info.ndim != 1 || (info.dtype != KILN_FLOAT32 && info.dtype != KILN_FLOAT64))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the array must be 1-D float32 or float64 (%u dimensions, %s)",
                               fn, info.ndim, kiln_dtype_name(info.dtype));
    if ((st = split_check(fn, num_queues, queues, weights, kiln_array_context(array))) != KILN_OK)
        return st;
    size_t n = info.shape[0];
    size_t bounds[SPLIT_MAX_QUEUES + 1];
    if ((st = split_bounds(fn, num_queues, queues, weights, n, bounds)) != KILN_OK)
        return st;
    uint64_t base = 0;
    if ((st = kiln_rng_get_offset(rng, &base)) != KILN_OK)
        return st;
    uint64_t words = info.dtype == KILN_FLOAT64 ? 2 : 1; /* per element */
    kiln_event *evs[SPLIT_MAX_QUEUES];
    size_t num_ev = 0;
    uint64_t end = base;
    for (size_t k = 0; k < num_queues && st == KILN_OK; k++) {
        size_t a0 = bounds[k], a1 = bounds[k + 1];
        if (a1 == a0)
            continue;
        kiln_slice s = KILN_SLICE((ptrdiff_t)a0, (ptrdiff_t)a1, 1);
        kiln_array *view = NULL;
        st = kiln_array_view(array, &s, &view);
        if (st == KILN_OK)
            st = kiln_rng_set_offset(rng, base + (uint64_t)a0 * words);
        if (st == KILN_OK)
            st = kiln_rng_uniform(queues[k], rng, view, num_wait, wait, &evs[num_ev]);
        if (st == KILN_OK) {
            num_ev++;
            kiln_rng_get_offset(rng, &end); /* the last part's end is the whole fill's */
        }
        kiln_array_release(view);
    }
    kiln_rng_set_offset(rng, st == KILN_OK ? end : base);
    return finish(st, num_queues, queues, evs, num_ev, num_wait, wait, event);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

kiln_status kiln_split_weigh(size_t num_queues, kiln_queue *const *queues, kiln_elementwise *ew,
                             size_t n, size_t num_args, const kiln_arg *args, double *weights) {
    static const char fn[] = "kiln_split_weigh";
    if (!ew || !weights)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               ew ? "weights" : "elementwise");
    kiln_status st = split_check(fn, num_queues, queues, NULL, NULL);
    if (st != KILN_OK)
        return st;
    for (size_t k = 0; k < num_queues; k++) {
        double t = 0;
        for (int rep = 0; rep < 2 && st == KILN_OK; rep++) {
            double t0 = now_s();
            st = kiln_elementwise_launch(queues[k], ew, n, num_args, args, 0, NULL, NULL);
            if (st == KILN_OK)
                st = kiln_queue_finish(queues[k]);
            t = now_s() - t0;
        }
        if (st != KILN_OK)
            return st;
        weights[k] = t > 0 ? (double)n / t : 1.0;
    }
    return KILN_OK;
}

kiln_status kiln_buffer_copy_between(kiln_queue *dst_queue, kiln_buffer *dst, size_t dst_offset,
                                     kiln_queue *src_queue, kiln_buffer *src, size_t src_offset,
                                     size_t size, size_t num_wait, kiln_event *const *wait,
                                     kiln_event **event) {
    static const char fn[] = "kiln_buffer_copy_between";
    if (event)
        *event = NULL;
    const char *missing = KILN__FIRST_NULL4(dst_queue, src_queue, dst, src);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    if (kiln_buffer_context(dst) != kiln_queue_context(dst_queue) ||
        kiln_buffer_context(src) != kiln_queue_context(src_queue))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: dst must belong to dst_queue's context and src to "
                               "src_queue's",
                               fn);
    size_t ds = kiln_buffer_size(dst), ss = kiln_buffer_size(src);
    if (dst_offset > ds || size > ds - dst_offset || src_offset > ss || size > ss - src_offset)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: %zu bytes at %zu of src (%zu bytes) to %zu of dst (%zu bytes)",
                               fn, size, src_offset, ss, dst_offset, ds);
    if (kiln_queue_context(src_queue) == kiln_queue_context(dst_queue))
        return kiln_buffer_copy(dst_queue, src, src_offset, dst, dst_offset, size, num_wait, wait,
                                event);
    if (size == 0)
        return kiln_queue_marker(dst_queue, num_wait, wait, event);
    /* device to device where the backend can (CUDA peers; an empty copy
     * asks): behind a marker on src_queue, so that the copy follows the
     * work queued there before, as the staged read does */
    if (kiln_buffer_copy_peer(dst_queue, dst, dst_offset, src, src_offset, 0, 0, NULL, NULL) ==
        KILN_OK) {
        kiln_event *m = NULL;
        kiln_status st = kiln_queue_marker(src_queue, num_wait, wait, &m);
        if (st == KILN_OK)
            st = kiln_buffer_copy_peer(dst_queue, dst, dst_offset, src, src_offset, size, 1, &m,
                                       event);
        kiln_event_release(m);
        if (st != KILN_ERROR_UNSUPPORTED)
            return st == KILN_OK ? st : kiln__error_prefix(st, "%s", fn);
    }
    kiln_array *da = NULL, *sa = NULL;
    kiln_status st = kiln_array_from_buffer(dst, dst_offset, KILN_UINT8, 1, &size, NULL, &da);
    if (st == KILN_OK)
        st = kiln_array_from_buffer(src, src_offset, KILN_UINT8, 1, &size, NULL, &sa);
    if (st == KILN_OK)
        st = kiln_array_copy_between_async(dst_queue, da, src_queue, sa, num_wait, wait, event);
    kiln_array_release(da);
    kiln_array_release(sa);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", fn);
}
