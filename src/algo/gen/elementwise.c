/* The elementwise generator (kiln_elementwise_*), like PyOpenCL's
 * ElementwiseKernel: one template (algo_elementwise.cl), a variant per
 * layout and device kind (generator.c builds them on first use). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/gen/builtin.h"
#include "algo/gen/knobs.h"
#include "base/error.h"

struct kiln_elementwise {
    kiln__gen gen; /* first: the base */
    char *operation, *preamble;
    unsigned flags;
};

/* The lanes variant (KILN__ELEMENTWISE_LANES: kiln's own operators, i only
 * as the index [i], the non-const arrays written on every item): a
 * GPU work-item takes 4 consecutive items, loads 4 elements of each const
 * array as one 4-16 byte access (two 16-byte ones for 8-byte types) into a
 * private union, runs the operation on lanes 0..3 of those and stores the
 * written arrays the same way. Generic user operations cannot do this (they
 * may read x[i+1], or write conditionally), and NVRTC did not merge
 * neighbouring scalar accesses of offset arrays by itself. Only when every
 * array's address is aligned for its access (tested in the kernel); the
 * last n % 4 items, and unaligned arrays, take the scalar loop. On an H200
 * hand-written axpy kernels of each kind took 0.762 ms (4-byte accesses)
 * and 0.740 (16-byte) over 2^28 float32. */
static int lanes_eligible(const kiln_elementwise *ew, const kiln__plan *plan, int layout) {
    if (!(ew->flags & KILN__ELEMENTWISE_LANES) || plan->cpu || layout != 4 ||
        !kiln__knobs_get()->ew_lanes)
        return 0;
    return kiln__gen_lanes_ok(&ew->gen.args);
}

/* The whole generated source (without the backend prelude) of a variant. */
kiln_status kiln__elementwise_source(kiln_elementwise *ew, int strided, const kiln__plan *plan,
                                     kiln__sb *sb) {
    int layout = strided | ((ew->flags & KILN_ELEMENTWISE_ANY_SHAPE) ? 2 : 0);
    /* GPU, contiguous, same shape: the arrays are declared restrict, so the
     * unrolled grid-stride loop can issue the next items' loads before this
     * item's stores (more bytes in flight). Safe for element-wise work at
     * index i even when two arguments are the same array: each item's loads
     * still precede its own store. */
    if (!plan->cpu && (layout == 0 || (layout == 2 && (ew->flags & KILN__ELEMENTWISE_NOALIAS))))
        layout |= 4;
    kiln__gen_device_defines(sb, plan);
    kiln__gen_common(sb, &ew->gen.args, layout, ew->preamble);
    kiln__sb_add(sb, "KILN_FUNC void kiln_op(long i, KILN_PARAMS)\n{\n"
                     "    KILN_BIND(i)\n");
    kiln__gen_user(sb, "operation", ew->operation);
    kiln__sb_add(sb, ";\n}\n");
    if (lanes_eligible(ew, plan, layout))
        kiln__gen_lanes(sb, &ew->gen.args, "void", "operation", ew->operation);
    return kiln__gen_template(sb, "algo_elementwise.cl", ew->gen.name, &ew->gen.args, layout);
}

static kiln_status ew_build(kiln__gen *gen, int strided, const kiln__plan *plan, kiln__variant *v) {
    kiln_elementwise *ew = (kiln_elementwise *)gen;
    kiln__sb sb = { 0 };
    kiln_status st = kiln__elementwise_source(ew, strided, plan, &sb);
    static const char *const suffix[1] = { "" };
    if (st == KILN_OK)
        st = kiln__gen_program(gen, &sb, KILN__LANGS_PORTABLE, ew->operation, suffix, 1, v);
    kiln__sb_free(&sb);
    return st;
}

static void ew_destroy(kiln__gen *gen) {
    kiln_elementwise *ew = (kiln_elementwise *)gen;
    free(ew->operation);
    free(ew->preamble);
    free(ew);
}

static const kiln__gen_kind ew_kind = { "kiln_elementwise", "kiln_elementwise", ew_build,
                                        ew_destroy };

kiln_status kiln_elementwise_create(kiln_context *context, const kiln_elementwise_desc *desc,
                                    kiln_elementwise **elementwise) {
    if (desc && desc->flags & (KILN__ELEMENTWISE_NOALIAS | KILN__ELEMENTWISE_LANES)) {
        if (elementwise)
            *elementwise = NULL;
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_elementwise_create: unknown flags 0x%x", desc->flags);
    }
    return kiln__elementwise_create_ex(context, desc, 1, elementwise);
}

kiln_status kiln__elementwise_create_ex(kiln_context *context, const kiln_elementwise_desc *desc,
                                        int eager, kiln_elementwise **out) {
    static const char what[] = "kiln_elementwise_create";
    if (out)
        *out = NULL;
    kiln_elementwise_desc d;
    size_t v1 = offsetof(kiln_elementwise_desc, flags) + sizeof d.flags;
    kiln_status st = kiln__gen_create_begin(context, desc, out != NULL, v1, sizeof d, &d, what,
                                            "KILN_ELEMENTWISE_DESC");
    if (st != KILN_OK)
        return st;
    if (!d.arguments || !d.operation)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments and operation are required", what);
    if (d.flags & ~((unsigned)KILN_ELEMENTWISE_ANY_SHAPE | KILN__ELEMENTWISE_NOALIAS |
                    KILN__ELEMENTWISE_LANES))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown flags 0x%x", what,
                               d.flags);
    kiln_elementwise *ew = kiln__calloc(1, sizeof *ew);
    if (!ew)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln__gen_init(&ew->gen, &ew_kind, context, d.arguments, d.name);
    if (st != KILN_OK) {
        free(ew);
        return st;
    }
    st = kiln__gen_set_options(&ew->gen, d.options);
    ew->flags = d.flags;
    ew->operation = kiln__strdup(d.operation);
    ew->preamble = d.preamble ? kiln__strdup(d.preamble) : NULL;
    if (st == KILN_OK && (!ew->operation || (d.preamble && !ew->preamble)))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln__gen_create_end(&ew->gen, st, eager);
    if (st == KILN_OK)
        *out = ew;
    return st;
}

typedef struct ew_make_arg {
    kiln_context *context;
    const char *args, *op, *name, *preamble;
    unsigned flags;
} ew_make_arg;

static kiln_status ew_make(void *arg, kiln__gen **gen) {
    ew_make_arg *a = arg;
    kiln_elementwise_desc d =
        KILN_ELEMENTWISE_DESC(.arguments = a->args, .operation = a->op, .name = a->name,
                              .preamble = a->preamble, .flags = a->flags);
    kiln_elementwise *ew = NULL;
    kiln_status st = kiln__elementwise_create_ex(a->context, &d, 0, &ew);
    *gen = ew ? &ew->gen : NULL;
    return st;
}

kiln_status kiln__elementwise_cached(kiln_context *context, const char *arguments,
                                     const char *operation, const char *name,
                                     kiln_elementwise **ew) {
    return kiln__elementwise_cached_ex(context, arguments, operation, name, NULL, 0, ew);
}

kiln_status kiln__elementwise_cached_ex(kiln_context *context, const char *arguments,
                                        const char *operation, const char *name,
                                        const char *preamble, unsigned flags,
                                        kiln_elementwise **ew) {
    kiln__sb key = { 0 };
    kiln__sb_addf(&key, "elementwise|%s|%s|%s|%s|%u", arguments, operation, name,
                  preamble ? preamble : "", flags);
    ew_make_arg a = { context, arguments, operation, name, preamble, flags };
    kiln__gen *gen = NULL;
    kiln_status st = key.oom ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_elementwise")
                             : kiln__gen_cached(context, key.p, ew_make, &a, &gen);
    kiln__sb_free(&key);
    *ew = (kiln_elementwise *)gen;
    return st;
}

kiln_status kiln_elementwise_retain(kiln_elementwise *ew) {
    return kiln__gen_retain_public(ew ? &ew->gen : NULL, "kiln_elementwise_retain", "elementwise");
}

void kiln_elementwise_release(kiln_elementwise *ew) {
    if (ew)
        kiln__gen_release(&ew->gen);
}

/* Sizes of a 1-D launch over n items. */
static void ew_sizes(const kiln__plan *p, size_t n, int plain, size_t *global, size_t *local,
                     int64_t *chunk) {
    if (p->cpu) {
        size_t groups = kiln__cpu_groups(p, n, 4096);
        size_t c = (n + groups - 1) / groups;
        c = (c + 15) / 16 * 16;
        if (!c)
            c = 16;
        *global = (n + c - 1) / c;
        if (!*global)
            *global = 1;
        *local = 1;
        *chunk = (int64_t)c;
    } else {
        size_t groups = (n + p->local - 1) / p->local;
        /* Blocks per compute unit. Plain memory-bound kernels (contiguous,
         * same shape) want many, but each thread wants about 8 items of the
         * grid-stride loop (its unrolled loads in flight): on an H200 axpy
         * over 2^28 float32 reached 88% of copy bandwidth with 32 blocks
         * and 98% with 1024 (8 items a thread), on cuda:0 and NVIDIA's
         * OpenCL alike (4096: 81%); over 2^26, where() took 0.263 ms with
         * 32, 0.267 with 256 and 0.373 with 1024 (under 2 items a thread).
         * Any-shape kernels (the random fills: heavy per item, 4 items at
         * once) keep 32: 1024 made the uniform fill 15% slower. */
        size_t bpc = (size_t)kiln__knobs_get()->ew_blocks_per_cu;
        if (!bpc && plain) {
            bpc = n / ((size_t)(p->cu ? p->cu : 1) * p->local * 8);
            bpc = bpc < 32 ? 32 : bpc > 1024 ? 1024 : bpc;
        } else if (!bpc)
            bpc = 32;
        if (groups > (size_t)p->cu * bpc)
            groups = (size_t)p->cu * bpc;
        if (!groups)
            groups = 1;
        *global = groups * p->local;
        *local = p->local;
        *chunk = 0;
    }
}

kiln_status kiln_elementwise_launch(kiln_queue *queue, kiln_elementwise *ew, size_t n,
                                    size_t num_args, const kiln_arg *args, size_t num_wait,
                                    kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln__plan plan;
    kiln__bound b = { 0 };
    kiln_status st = kiln__gen_prepare(queue, ew ? &ew->gen : NULL, n, num_args, args,
                                       ew && (ew->flags & KILN_ELEMENTWISE_ANY_SHAPE),
                                       "kiln_elementwise_launch", &plan, &b);
    kiln__variant *v = NULL;
    if (st == KILN_OK && n)
        st = kiln__gen_variant(&ew->gen, b.layout, &plan, &v);
    if (st == KILN_OK && !n && event)
        st = kiln_queue_marker(queue, num_wait, wait, event);
    if (st == KILN_OK && n) {
        size_t global, local;
        int64_t chunk;
        /* a gather of contiguous arrays that do not alias (take) sizes
         * like a plain kernel: on a GPU its random reads want many
         * threads in flight */
        int plain = b.layout == KILN__CONTIG && (!(ew->flags & KILN_ELEMENTWISE_ANY_SHAPE) ||
                                                 (ew->flags & KILN__ELEMENTWISE_NOALIAS));
        ew_sizes(&plan, n, plain, &global, &local, &chunk);
        kiln_arg pre = KILN_ARG_I64(chunk);
        st = kiln__launch(queue, v->k[0], global, local, &pre, 1, &b, num_wait, wait, event);
    }
    kiln__bound_free(&b);
    return st;
}
