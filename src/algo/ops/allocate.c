/* The list builder (kiln_allocate), like PyOpenCL's ListOfListsBuilder:
 * two elementwise kernels of the user's operation, one where KILN_EMIT
 * counts (into counts[i]) and one where it stores (from offsets[i]), with
 * an exclusive scan of the counts between them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "algo/gen/chain.h"
#include "algo/ops/ops_internal.h"
#include "base/check.h"
#include "base/error.h"

struct kiln_allocate {
    atomic_int refs;
    kiln_elementwise *count, *fill;
    kiln_dtype item_dtype;
    size_t nargs; /* the user's arguments */
};

static void alloc_free(kiln_allocate *a) {
    kiln_elementwise_release(a->count);
    kiln_elementwise_release(a->fill);
    free(a);
}

/* One pass: the user's arguments plus ours, KILN_EMIT defined by emit. */
static kiln_status make_pass(kiln_context *ctx, const kiln_allocate_desc *d, const char *extra_args,
                             const char *emit, const char *start, const char *end,
                             const char *suffix, kiln_elementwise **out) {
    kiln__sb args = { 0 }, pre = { 0 }, op = { 0 }, name = { 0 };
    kiln__sb_addf(&args, "%s, %s", d->arguments, extra_args);
    kiln__sb_addf(&pre, "%s\n#define KILN_EMIT(v) %s\n", d->preamble ? d->preamble : "", emit);
    kiln__sb_addf(&op, "%s\n{\n%s\n}\n%s", start, d->operation, end);
    kiln__sb_addf(&name, "%s%s", d->name ? d->name : "kiln_allocate", suffix);
    kiln_status st;
    if (args.oom || pre.oom || op.oom || name.oom)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_allocate_create");
    else
        st = kiln_elementwise_create(ctx,
                                     &KILN_ELEMENTWISE_DESC(.arguments = args.p, .operation = op.p,
                                                            .preamble = pre.p, .name = name.p,
                                                            .flags = KILN_ELEMENTWISE_ANY_SHAPE),
                                     out);
    kiln__sb_free(&args);
    kiln__sb_free(&pre);
    kiln__sb_free(&op);
    kiln__sb_free(&name);
    return st;
}

kiln_status kiln_allocate_create(kiln_context *context, const kiln_allocate_desc *desc,
                                 kiln_allocate **allocate) {
    static const char what[] = "kiln_allocate_create";
    if (!context || !desc || !allocate)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context, desc and allocate are required", what);
    *allocate = NULL;
    if (!desc->struct_size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: struct_size is 0; make the descriptor "
                               "with KILN_ALLOCATE_DESC",
                               what);
    kiln_allocate_desc d = { 0 };
    memcpy(&d, desc, desc->struct_size < sizeof d ? desc->struct_size : sizeof d);
    if (!d.arguments || !d.operation || !d.item_type)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, item_type and operation are "
                               "required",
                               what);
    kiln_dtype it = kiln__dtype_from_name(d.item_type);
    if (!it || it == KILN_FLOAT16)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: item_type '%s' is not a kiln dtype name "
                               "(\"int\", \"float\", \"long\", ...)",
                               what, d.item_type);
    kiln_allocate *a = kiln__calloc(1, sizeof *a);
    if (!a)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    atomic_init(&a->refs, 1);
    a->item_dtype = it;
    char fill_args[160];
    snprintf(fill_args, sizeof fill_args,
             "const long *alloc__offsets, %s *alloc__items, long *alloc__bad, long alloc__cap",
             d.item_type);
    kiln_status st =
        make_pass(context, &d, "long *alloc__counts", "(alloc__n++)", "long alloc__n = 0;",
                  "alloc__counts[i] = alloc__n;", "_count", &a->count);
    if (st == KILN_OK)
        /* The fill stores only inside item i's counted range and below
         * the items' capacity, and flags an item whose emits differ from
         * its count (issue 41): an operation that is not deterministic, or
         * a capacity below the total, never writes past the items. */
        st = make_pass(context, &d, fill_args,
                       "((alloc__p < alloc__e && alloc__p < alloc__cap ? "
                       "(void)(alloc__items[alloc__p] = (v)) : (void)0), alloc__p++)",
                       "long alloc__p = alloc__offsets[i];\n"
                       "const long alloc__e = alloc__offsets[i + 1];",
                       "if (alloc__p != alloc__e) alloc__bad[0] = (long)i + 1;", "_fill", &a->fill);
    if (st != KILN_OK) {
        alloc_free(a);
        return st;
    }
    kiln__gargs g = { 0 };
    st = kiln__gargs_parse(d.arguments, what, &g);
    a->nargs = g.n; /* the user's arguments, ours excluded */
    kiln__gargs_free(&g);
    if (st != KILN_OK) {
        alloc_free(a);
        return st;
    }
    *allocate = a;
    return KILN_OK;
}

kiln_status kiln_allocate_retain(kiln_allocate *a) {
    return kiln__ref_retain(a ? &a->refs : NULL, "kiln_allocate_retain", "allocate");
}

void kiln_allocate_release(kiln_allocate *a) {
    if (a && kiln__ref_release(&a->refs))
        alloc_free(a);
}

/* A run's arguments checked, and the user's copied with room for ours
 * (four) into *all. */
static kiln_status run_args(const char *what, kiln_queue *queue, kiln_allocate *a, size_t num_args,
                            const kiln_arg *args, kiln_array **items, kiln_array **offsets,
                            kiln_arg **all) {
    *all = NULL;
    if (!items || !offsets)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: items and offsets are required",
                               what);
    *items = *offsets = NULL;
    if (!queue || !a || (num_args && !args))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: queue, allocate and args are required", what);
    if (num_args != a->nargs)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0, "%s: %zu arguments given, %zu declared",
                               what, num_args, a->nargs);
    *all = kiln__calloc(num_args + 4, sizeof **all);
    if (!*all)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (num_args)
        memcpy(*all, args, num_args * sizeof **all);
    return KILN_OK;
}

/* One command of the chain: call enqueues it after the chain's last
 * command, its event into e. */
#define ALLOC_STEP(c, e, call)            \
    do {                                  \
        if ((c)->st == KILN_OK) {         \
            kiln_event *e = NULL;         \
            kiln_status st_ = (call);     \
            kiln__chain_add((c), st_, e); \
        }                                 \
    } while (0)

/* The count pass into a new *counts (INT64, n + 1) and its exclusive scan
 * in place: counts[n], left 0 by the pass, becomes the total. */
static void count_pass(kiln__chain *c, kiln_allocate *a, size_t n, kiln_arg *all, size_t na,
                       kiln_array **counts) {
    size_t n1 = n + 1;
    ALLOC_STEP(c, e,
               kiln_array_zeros(c->q, KILN_INT64, 1, &n1, kiln__chain_nw(c), kiln__chain_w(c), &e,
                                counts));
    all[na] = KILN_ARG_ARRAY(*counts);
    ALLOC_STEP(c, e,
               kiln_elementwise_launch(c->q, a->count, n, na + 1, all, kiln__chain_nw(c),
                                       kiln__chain_w(c), &e));
    ALLOC_STEP(
        c, e,
        kiln_array_cumsum_out(c->q, *counts, *counts, 1, kiln__chain_nw(c), kiln__chain_w(c), &e));
}

/* The fill pass into items (of capacity elements) from the scanned
 * counts; bad[0] (INT64) is zeroed first (n = 0 too), then set to i + 1 by
 * an item i whose emits differ from its count. It runs even when the
 * total is 0: an operation that emits there only now must be reported. */
static void fill_pass(kiln__chain *c, kiln_allocate *a, size_t n, kiln_arg *all, size_t na,
                      kiln_array *counts, kiln_array *items, size_t capacity, kiln_array *bad) {
    static const int64_t zero = 0;
    ALLOC_STEP(c, e,
               kiln_buffer_fill(c->q, bad->buffer, &zero, sizeof zero, bad->offset * sizeof zero,
                                sizeof zero, kiln__chain_nw(c), kiln__chain_w(c), &e));
    if (!n)
        return;
    all[na] = KILN_ARG_ARRAY(counts);
    all[na + 1] = KILN_ARG_ARRAY(items);
    all[na + 2] = KILN_ARG_ARRAY(bad);
    all[na + 3] = KILN_ARG_I64((int64_t)capacity);
    ALLOC_STEP(c, e,
               kiln_elementwise_launch(c->q, a->fill, n, na + 4, all, kiln__chain_nw(c),
                                       kiln__chain_w(c), &e));
}

kiln_status kiln_allocate_run(kiln_queue *queue, kiln_allocate *a, size_t n, size_t num_args,
                              const kiln_arg *args, kiln_array **items, kiln_array **offsets) {
    static const char what[] = "kiln_allocate_run";
    kiln_arg *all = NULL;
    kiln_status st = run_args(what, queue, a, num_args, args, items, offsets, &all);
    if (st != KILN_OK)
        return st;
    kiln__chain c = KILN__CHAIN_INIT(queue, 0, NULL);
    kiln_array *counts = NULL, *bad = NULL;
    int64_t total = 0, bad_item = 0;
    size_t one = 1;
    count_pass(&c, a, n, all, num_args, &counts);
    if (c.last)
        KILN__CHAIN_DO(&c, kiln_event_wait(c.last));
    KILN__CHAIN_DO(&c,
                   kiln_buffer_read(queue, counts->buffer, (counts->offset + n) * 8, 8, &total));
    if (total < 0)
        kiln__chain_fail(&c, kiln__error_set(KILN_ERROR_INTERNAL, 0, "%s: negative total", what));
    size_t nt = (size_t)total;
    KILN__CHAIN_DO(
        &c, kiln__array_make(kiln_queue_context(queue), a->item_dtype, 1, &nt, NULL, what, items));
    KILN__CHAIN_DO(
        &c, kiln__array_make(kiln_queue_context(queue), KILN_INT64, 1, &one, NULL, what, &bad));
    fill_pass(&c, a, n, all, num_args, counts, *items, nt, bad);
    kiln_event *done = NULL;
    st = kiln__chain_end(&c, KILN_OK, &done);
    if (st == KILN_OK && done)
        st = kiln_event_wait(done);
    if (st == KILN_OK && n)
        st = kiln_buffer_read(queue, bad->buffer, bad->offset * 8, 8, &bad_item);
    if (st == KILN_OK && bad_item)
        st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                             "%s: the operation emitted a different number of items in the "
                             "fill pass than in the count pass (item %lld, for one); it must "
                             "emit the same values both times, and no output is given",
                             what, (long long)(bad_item - 1));
    kiln_event_release(done);
    kiln_array_release(bad);
    free(all);
    if (st != KILN_OK) {
        kiln_array_release(counts);
        kiln_array_release(*items);
        *items = NULL;
        return bad_item ? st : kiln__error_prefix(st, "%s", what);
    }
    *offsets = counts;
    return KILN_OK;
}

/* The check array's rules (kiln_allocate_run_async). */
static kiln_status check_array_ok(const char *what, kiln_queue *queue, kiln_array *check) {
    if (!check)
        return KILN_OK;
    if (kiln_array_context(check) != kiln_queue_context(queue))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: check belongs to another context than the queue", what);
    char t[96];
    if (check->dtype != KILN_INT64 || !check->size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: check is %s; it must be an int64 array of at least one "
                               "element",
                               what, kiln__array_describe(check, t, sizeof t));
    return KILN_OK;
}

kiln_status kiln_allocate_run_async(kiln_queue *queue, kiln_allocate *a, size_t n, size_t num_args,
                                    const kiln_arg *args, size_t capacity, kiln_array *check,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                    kiln_array **items, kiln_array **offsets) {
    static const char what[] = "kiln_allocate_run_async";
    if (event)
        *event = NULL;
    kiln_arg *all = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, run_args(what, queue, a, num_args, args, items, offsets, &all));
    KILN__CHECK(&ck, num_wait == 0 || wait, KILN_ERROR_NULL_HANDLE,
                "%s: num_wait is %zu but wait is NULL", what, num_wait);
    KILN__CHECK_CALL(&ck, check_array_ok(what, queue, check));
    if (ck.st != KILN_OK) {
        free(all);
        return ck.st;
    }
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_array *counts = NULL, *it = NULL, *own = NULL;
    size_t one = 1;
    count_pass(&c, a, n, all, num_args, &counts);
    KILN__CHAIN_DO(&c, kiln__array_make(kiln_queue_context(queue), a->item_dtype, 1, &capacity,
                                        NULL, what, &it));
    if (!check)
        kiln__chain_array(&c, KILN_INT64, 1, &one, &own);
    fill_pass(&c, a, n, all, num_args, counts, it, capacity, check ? check : own);
    kiln_status st = kiln__chain_end(&c, KILN_OK, event);
    free(all);
    if (st != KILN_OK) {
        kiln_array_release(counts);
        kiln_array_release(it);
        return kiln__error_prefix(st, "%s", what);
    }
    *items = it;
    *offsets = counts;
    return KILN_OK;
}
