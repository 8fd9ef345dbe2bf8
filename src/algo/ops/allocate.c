/* The list builder (kiln_allocate), like PyOpenCL's ListOfListsBuilder:
 * two elementwise kernels of the user's operation, one where KILN_EMIT
 * counts (into counts[i]) and one where it stores (from offsets[i]), with
 * an exclusive scan of the counts between them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
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
             "const long *alloc__offsets, %s *alloc__items, long *alloc__bad", d.item_type);
    kiln_status st =
        make_pass(context, &d, "long *alloc__counts", "(alloc__n++)", "long alloc__n = 0;",
                  "alloc__counts[i] = alloc__n;", "_count", &a->count);
    if (st == KILN_OK)
        /* The fill stores only inside item i's counted range and flags an
         * item whose emits differ from its count (issue 41): an operation
         * that is not deterministic never writes past the items. */
        st = make_pass(context, &d, fill_args,
                       "((alloc__p < alloc__e ? (void)(alloc__items[alloc__p] = (v)) : (void)0), "
                       "alloc__p++)",
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
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_allocate_retain: allocate is NULL");
    kiln__ref_take(&a->refs);
    return KILN_OK;
}

void kiln_allocate_release(kiln_allocate *a) {
    if (a && kiln__ref_release(&a->refs))
        alloc_free(a);
}

kiln_status kiln_allocate_run(kiln_queue *queue, kiln_allocate *a, size_t n, size_t num_args,
                              const kiln_arg *args, kiln_array **items, kiln_array **offsets) {
    static const char what[] = "kiln_allocate_run";
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
    kiln_arg *all = kiln__calloc(num_args + 3, sizeof *all);
    if (!all)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (num_args)
        memcpy(all, args, num_args * sizeof *all);
    size_t n1 = n + 1, one = 1;
    kiln_array *counts = NULL, *bad = NULL;
    kiln_event *e = NULL;
    int64_t total = 0, bad_item = 0;
    /* counts[n] stays 0: the exclusive scan then ends with the total */
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln_array_zeros(queue, KILN_INT64, 1, &n1, 0, NULL, NULL, &counts));
    all[num_args] = KILN_ARG_ARRAY(counts);
    KILN__CHECK_CALL(&ck,
                     kiln_elementwise_launch(queue, a->count, n, num_args + 1, all, 0, NULL, NULL));
    KILN__CHECK_CALL(&ck, kiln_array_cumsum_out(queue, counts, counts, 1, 0, NULL, NULL));
    KILN__CHECK_CALL(&ck,
                     kiln_buffer_read(queue, counts->buffer, (counts->offset + n) * 8, 8, &total));
    size_t nt = (size_t)total;
    KILN__CHECK(&ck, total >= 0, KILN_ERROR_INTERNAL, "%s: negative total", what);
    KILN__CHECK_CALL(
        &ck, kiln__array_make(kiln_queue_context(queue), a->item_dtype, 1, &nt, NULL, what, items));
    if (n)
        KILN__CHECK_CALL(&ck, kiln_array_zeros(queue, KILN_INT64, 1, &one, 0, NULL, NULL, &bad));
    kiln_status st = ck.st;
    all[num_args] = KILN_ARG_ARRAY(counts);
    all[num_args + 1] = KILN_ARG_ARRAY(*items);
    all[num_args + 2] = KILN_ARG_ARRAY(bad);
    /* The fill runs even when the total is 0: an operation that emits
     * there only now must be reported too. */
    if (n)
        KILN__CHECK_CALL(
            &ck, kiln_elementwise_launch(queue, a->fill, n, num_args + 3, all, 0, NULL, &e));
    if (e)
        KILN__CHECK_CALL(&ck, kiln_event_wait(e));
    if (bad)
        KILN__CHECK_CALL(&ck, kiln_buffer_read(queue, bad->buffer, bad->offset * 8, 8, &bad_item));
    st = KILN__CHECK(&ck, !bad_item, KILN_ERROR_INVALID_ARGUMENT,
                     "%s: the operation emitted a different number of items in the "
                     "fill pass than in the count pass (item %lld, for one); it must "
                     "emit the same values both times, and no output is given",
                     what, (long long)(bad_item - 1));
    kiln_event_release(e);
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
