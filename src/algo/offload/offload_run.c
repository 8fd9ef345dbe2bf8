/* Offload runs (kiln_offload_run / _async): every argument is checked and
 * resolved before anything is allocated, buffers are made before anything
 * is enqueued, then copies in, the launch and copies out are enqueued in
 * one step ordered after the region tree's tail and the caller's wait
 * list. */
#include <limits.h>
#include <stdlib.h>

#include "algo/offload/offload_internal.h"
#include "base/check.h"
#include "base/error.h"

/* One pointer argument, resolved. */
typedef struct run_arg {
    uintptr_t host;
    size_t bytes;
    kiln_buffer *buf; /* the mapping's, or this run's own (owned) */
    size_t off;       /* byte offset of host in buf */
    int owned;        /* no mapping: the run makes buf */
    int in, out;      /* copy in before / out after the launch */
    int held;         /* buf is retained by this run */
} run_arg;

typedef struct run {
    const char *what;
    kiln_queue *queue;
    kiln_offload *off;
    kiln_data_region *region;
    const size_t *range;
    const kiln_arg *args;
    run_arg *ra;
    kiln__evlist ins, outs;
    kiln_event *launch, *fin;
    kiln_offload_stats delta;
} run;

/* Handles, contexts, argument count and range; *total gets the items. */
static kiln_status check_call(const run *r, size_t num_args, size_t num_wait,
                              kiln_event *const *wait, size_t *total) {
    if (!r->queue || !r->off || !r->range || (num_args && !r->args))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", r->what,
                               !r->queue   ? "queue"
                               : !r->off   ? "offload"
                               : !r->range ? "range"
                                           : "args");
    kiln_status st = kiln__check_wait(r->what, num_wait, wait);
    if (st != KILN_OK)
        return st;
    kiln_context *ctx = kiln_queue_context(r->queue);
    if (ctx != r->off->context || (r->region && r->region->context != ctx))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue's context differs from the "
                               "%s's",
                               r->what, ctx != r->off->context ? "offload" : "region");
    if (num_args != r->off->args.n)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: the offload declares %zu parameters; got "
                               "%zu arguments",
                               r->what, r->off->args.n, num_args);
    *total = 1;
    for (unsigned d = 0; d < r->off->dims; d++) {
        if (r->range[d] > (size_t)LONG_MAX / 2)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: range[%u] = %zu is too large",
                                   r->what, d, r->range[d]);
        *total = r->range[d] ? *total * r->range[d] : 0;
    }
    return KILN_OK;
}

static kiln_status check_scalar(const run *r, size_t k) {
    const kiln__garg *g = &r->off->args.v[k];
    const kiln_arg *a = &r->args[k];
    char buf[160];
    if (a->kind != KILN_ARG_SCALAR)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: parameter %zu '%s' is a scalar of type "
                               "%s; got %s (pass a KILN_ARG_* scalar of "
                               "dtype %s)",
                               r->what, k, g->name, g->type,
                               kiln__arg_kind_text(a, buf, sizeof buf), kiln_dtype_name(g->dtype));
    if (a->dtype != g->dtype)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: parameter %zu '%s' is declared %s but "
                               "the scalar passed is %s",
                               r->what, k, g->name, g->type, kiln_dtype_name(a->dtype));
    return KILN_OK;
}

/* The map's own checks: kind, map kind, NULL host, element size. */
static kiln_status check_map_arg(const run *r, size_t k) {
    const kiln__garg *g = &r->off->args.v[k];
    const kiln_arg *a = &r->args[k];
    char buf[160];
    if (a->kind != KILN_ARG_MAP)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: parameter %zu '%s' is a pointer (%s *); "
                               "got %s: pass a host range with a map kind "
                               "(KILN_TO, KILN_FROM, ..., KILN_PRESENT)",
                               r->what, k, g->name, g->type,
                               kiln__arg_kind_text(a, buf, sizeof buf));
    if ((unsigned)a->map > KILN_DATA_ALLOC)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: argument %zu '%s' has map kind %d", r->what, k, g->name,
                               (int)a->map);
    if (!a->value.host && a->bytes)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: argument %zu '%s' has a NULL host "
                               "pointer and %zu bytes",
                               r->what, k, g->name, a->bytes);
    size_t es = kiln_dtype_size(g->dtype);
    if (es && a->bytes % es)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: argument %zu '%s' maps %zu bytes, not "
                               "a multiple of sizeof(%s) = %zu",
                               r->what, k, g->name, a->bytes, g->type, es);
    return KILN_OK;
}

/* Pointer argument k: the region's device copy, or a range of the run's
 * own (which may not overlap another of the run's own). */
static kiln_status resolve_pointer(run *r, size_t k) {
    kiln_status st = check_map_arg(r, k);
    if (st != KILN_OK)
        return st;
    const kiln__garg *g = &r->off->args.v[k];
    const kiln_arg *a = &r->args[k];
    run_arg *ra = &r->ra[k];
    ra->host = (uintptr_t)a->value.host;
    ra->bytes = a->bytes;
    ra->in = a->bytes && (a->map & KILN_DATA_TO);
    ra->out = a->bytes && (a->map & KILN_DATA_FROM);
    const kiln__dmap *m = NULL;
    int found = r->region && a->value.host
                    ? kiln__find_map(r->region, ra->host, ra->bytes, r->what, &m, &st)
                    : 0;
    if (found < 0)
        return kiln__error_prefix(st, "argument %zu '%s'", k, g->name);
    if (found) {
        ra->buf = m->buf;
        ra->off = m->off + (ra->host - m->host);
        return KILN_OK;
    }
    if (a->map == KILN_DATA_PRESENT)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: argument %zu '%s' (%p) is not mapped in %s and has no map "
                               "kind; map it in the region or pass KILN_TO/FROM/TOFROM/"
                               "ALLOC(ptr, bytes)",
                               r->what, k, g->name, a->value.host,
                               r->region ? "the data region" : "a data region (none given)");
    ra->owned = 1;
    for (size_t l = 0; l < k; l++)
        if (r->ra[l].owned &&
            kiln__ranges_overlap(ra->host, ra->bytes, r->ra[l].host, r->ra[l].bytes))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: arguments %zu '%s' and %zu '%s' map overlapping host "
                                   "memory; map it once in a data region and pass KILN_PRESENT "
                                   "pointers to share it",
                                   r->what, l, r->off->args.v[l].name, k, g->name);
    return KILN_OK;
}

static kiln_status resolve_args(run *r) {
    for (size_t k = 0; k < r->off->args.n; k++) {
        kiln_status st = r->off->args.v[k].is_ptr ? resolve_pointer(r, k) : check_scalar(r, k);
        if (st != KILN_OK)
            return st;
    }
    return KILN_OK;
}

/* Holds every pointer argument's buffer, making the run's own. */
static kiln_status hold_buffers(run *r) {
    kiln_context *ctx = r->off->context;
    for (size_t k = 0; k < r->off->args.n; k++) {
        run_arg *ra = &r->ra[k];
        if (!r->off->args.v[k].is_ptr)
            continue;
        if (!ra->owned) {
            kiln_buffer_retain(ra->buf); /* the region may end meanwhile */
            ra->held = 1;
            continue;
        }
        size_t bytes = ra->bytes ? ra->bytes : 16; /* kernels need a buffer */
        kiln_status st = kiln_buffer_create(ctx, bytes, KILN_BUFFER_READ_WRITE, NULL, &ra->buf);
        if (st != KILN_OK)
            return kiln__error_prefix(st, "%s: argument %zu '%s' (%zu bytes)", r->what, k,
                                      r->off->args.v[k].name, bytes);
        ra->held = 1;
        r->delta.allocations++;
        r->delta.bytes_allocated += bytes;
    }
    return KILN_OK;
}

static kiln_status copy_args_in(run *r, size_t ndeps, kiln_event *const *deps) {
    for (size_t k = 0; k < r->off->args.n; k++) {
        run_arg *ra = &r->ra[k];
        if (!r->off->args.v[k].is_ptr || !ra->in)
            continue;
        kiln_event *e = NULL;
        kiln_status st = kiln_buffer_write_async(r->queue, ra->buf, ra->off, ra->bytes,
                                                 (const void *)ra->host, ndeps, deps, &e);
        if (st == KILN_OK)
            st = kiln__evlist_push(&r->ins, e);
        if (st != KILN_OK)
            return st;
        r->delta.copies_to++;
        r->delta.bytes_to += ra->bytes;
    }
    return KILN_OK;
}

/* Work-group shape for GPUs: 256 items, the fastest index widest. */
/* Work-items along the innermost index of a CPU work-group: PoCL runs a
 * group as one loop it vectorises. */
enum { CPU_GROUP = 64 };

static void pick_local(const kiln_device_info *info, unsigned dims, size_t *local) {
    static const size_t shape[3][3] = { { 256, 1, 1 }, { 32, 8, 1 }, { 32, 4, 2 } };
    for (unsigned d = 0; d < 3; d++) {
        local[d] = shape[dims - 1][d];
        if (info->max_work_item_sizes[d] && local[d] > info->max_work_item_sizes[d])
            local[d] = info->max_work_item_sizes[d];
    }
    while (info->max_work_group_size &&
           local[0] * local[1] * local[2] > info->max_work_group_size) {
        unsigned big = 0;
        for (unsigned d = 1; d < 3; d++)
            if (local[d] > local[big])
                big = d;
        local[big] /= 2;
    }
}

/* The kernel's arguments: the range, then per parameter its buffer and
 * byte offset or its scalar. ka has room for 3 + 2 * args.n. */
static size_t kernel_args(const run *r, kiln_arg *ka) {
    const unsigned dims = r->off->dims;
    size_t nk = 0;
    ka[nk++] = KILN_ARG_I64((int64_t)r->range[0]);
    ka[nk++] = KILN_ARG_I64((int64_t)(dims > 1 ? r->range[1] : 1));
    ka[nk++] = KILN_ARG_I64((int64_t)(dims > 2 ? r->range[2] : 1));
    for (size_t k = 0; k < r->off->args.n; k++) {
        if (r->off->args.v[k].is_ptr) {
            ka[nk++] = KILN_ARG_BUF(r->ra[k].buf);
            ka[nk++] = KILN_ARG_I64((int64_t)r->ra[k].off);
        } else {
            ka[nk++] = r->args[k];
        }
    }
    return nk;
}

/* Launches after the copies in (or, with none, after deps). */
static kiln_status launch(run *r, size_t ndeps, kiln_event *const *deps) {
    const unsigned dims = r->off->dims;
    size_t global[3] = { 1, 1, 1 }, local[3] = { 1, 1, 1 };
    for (unsigned d = 0; d < dims; d++)
        global[d] = r->range[dims - 1 - d];
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(kiln_queue_device(r->queue), &info);
    if (st != KILN_OK)
        return st;
    /* A fixed work-group shape on every device, the range rounded up to
     * whole groups (the kernel bounds-checks). CPUs get one too: left to
     * PoCL, the group size follows the range (a divisor of it), and PoCL
     * compiles, and keeps mapped for the process's life, one kernel per
     * size it meets (the soak: ~2000 in two minutes of random ranges). */
    if (info.type != KILN_DEVICE_CPU)
        pick_local(&info, dims, local);
    else
        local[0] = CPU_GROUP;
    for (unsigned d = 0; d < dims; d++)
        global[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    kiln_arg *ka = kiln__malloc((3 + 2 * r->off->args.n) * sizeof *ka);
    if (!ka)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", r->what);
    size_t nk = kernel_args(r, ka);
    st = kiln_kernel_launch(r->queue, r->off->kernel, dims, global, local, nk, ka,
                            r->ins.n ? r->ins.n : ndeps, r->ins.n ? r->ins.v : deps, &r->launch);
    free(ka);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", r->what);
    r->delta.launches++;
    return KILN_OK;
}

/* Copies out after the launch; r->fin gets the run's last event. */
static kiln_status copy_args_out(run *r) {
    for (size_t k = 0; k < r->off->args.n; k++) {
        run_arg *ra = &r->ra[k];
        if (!r->off->args.v[k].is_ptr || !ra->out)
            continue;
        kiln_event *e = NULL;
        kiln_status st = kiln_buffer_read_async(r->queue, ra->buf, ra->off, ra->bytes,
                                                (void *)ra->host, 1, &r->launch, &e);
        if (st == KILN_OK)
            st = kiln__evlist_push(&r->outs, e);
        if (st != KILN_OK)
            return st;
        r->delta.copies_from++;
        r->delta.bytes_from += ra->bytes;
    }
    if (r->outs.n)
        return kiln__evlist_join(r->queue, &r->outs, &r->fin);
    kiln_event_retain(r->launch);
    r->fin = r->launch;
    return KILN_OK;
}

/* Copies in, launch, copies out, ordered after the region's tail and the
 * caller's wait list; the run's last event becomes the new tail. */
static kiln_status enqueue(run *r, size_t num_wait, kiln_event *const *wait) {
    kiln_event *tail = NULL;
    if (r->region) {
        pthread_mutex_lock(&r->region->root->mu);
        tail = kiln__region_tail(r->region);
    }
    kiln_event *const *deps = NULL;
    size_t ndeps = 0;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln__wait_plus(num_wait, wait, tail, NULL, &deps, &ndeps));
    KILN__CHECK_CALL(&ck, copy_args_in(r, ndeps, deps));
    KILN__CHECK_CALL(&ck, launch(r, ndeps, deps));
    kiln_status st = KILN__CHECK_CALL(&ck, copy_args_out(r));
    if (st == KILN_OK && r->region)
        kiln__region_set_tail(r->region, r->fin);
    if (r->region)
        pthread_mutex_unlock(&r->region->root->mu);
    if (deps != wait)
        free((void *)deps);
    kiln_event_release(tail);
    return st;
}

/* Counts the run, lets go of what it holds; on failure first waits for
 * what was enqueued (host memory may be reused once the call returns). */
static void run_close(run *r, kiln_status st) {
    if (r->region) {
        pthread_mutex_lock(&r->region->root->mu);
        kiln__stats_add(&r->region->stats, &r->delta);
        pthread_mutex_unlock(&r->region->root->mu);
    }
    pthread_mutex_lock(&r->off->mu);
    kiln__stats_add(&r->off->stats, &r->delta);
    pthread_mutex_unlock(&r->off->mu);
    kiln__evlist_drain(&r->ins, st != KILN_OK);
    kiln__evlist_drain(&r->outs, st != KILN_OK);
    if (st != KILN_OK && r->launch)
        kiln_event_wait(r->launch);
    kiln_event_release(r->launch);
    if (st != KILN_OK) {
        kiln_event_release(r->fin);
        r->fin = NULL;
    }
    for (size_t k = 0; r->ra && k < r->off->args.n; k++)
        if (r->ra[k].held) /* in-flight work holds its own */
            kiln_buffer_release(r->ra[k].buf);
    free(r->ra);
}

static kiln_status run_impl(run *r, size_t num_args, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event, int block) {
    if (event)
        *event = NULL;
    size_t total = 0;
    kiln_status st = check_call(r, num_args, num_wait, wait, &total);
    if (st != KILN_OK)
        return st;
    r->ra = kiln__calloc(num_args ? num_args : 1, sizeof *r->ra);
    if (!r->ra)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", r->what);
    st = resolve_args(r);
    if (st == KILN_OK && total == 0) {
        /* A range with a 0: nothing runs and no data moves. */
        if (event)
            st = kiln_queue_marker(r->queue, num_wait, wait, &r->fin);
    } else if (st == KILN_OK) {
        st = hold_buffers(r);
        if (st == KILN_OK)
            st = enqueue(r, num_wait, wait);
    }
    int moved = r->delta.copies_to || r->delta.copies_from;
    run_close(r, st);
    if (st != KILN_OK || !r->fin)
        return st;
    if (block && moved) {
        st = kiln_event_wait(r->fin);
        kiln_event_release(r->fin);
        return st;
    }
    if (event)
        *event = r->fin;
    else
        kiln_event_release(r->fin);
    return KILN_OK;
}

kiln_status kiln_offload_run(kiln_queue *queue, kiln_offload *offload, kiln_data_region *region,
                             const size_t *range, size_t num_args, const kiln_arg *args) {
    run r = { .what = "kiln_offload_run",
              .queue = queue,
              .off = offload,
              .region = region,
              .range = range,
              .args = args };
    return run_impl(&r, num_args, 0, NULL, NULL, 1);
}

kiln_status kiln_offload_run_async(kiln_queue *queue, kiln_offload *offload,
                                   kiln_data_region *region, const size_t *range, size_t num_args,
                                   const kiln_arg *args, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    run r = { .what = "kiln_offload_run_async",
              .queue = queue,
              .off = offload,
              .region = region,
              .range = range,
              .args = args };
    return run_impl(&r, num_args, num_wait, wait, event, 0);
}
