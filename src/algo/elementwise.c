/* The elementwise generator (kiln_elementwise_*), like PyOpenCL's
 * ElementwiseKernel. One kernel per (layout, device kind) variant, built on
 * first use; the contiguous CPU/GPU variant of the creating context's first
 * device is built at create time so a bad expression fails there. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"
#include "base/ident.h"

struct kiln_elementwise {
    atomic_int refs;
    kiln_context *context;
    kiln__gargs args;
    char *operation, *name, *preamble;
    unsigned flags;
    pthread_mutex_t lock;
    kiln__variant var[2][2]; /* [strided][cpu] */
};

/* The whole generated source (without the backend prelude) of a variant. */
kiln_status kiln__elementwise_source(kiln_elementwise *ew, int strided,
                                     int cpu, kiln__sb *sb) {
    int layout = strided | ((ew->flags & KILN_ELEMENTWISE_ANY_SHAPE) ? 2 : 0);
    /* GPU, contiguous, same shape: the arrays are declared restrict, so the
     * unrolled grid-stride loop can issue the next items' loads before this
     * item's stores (more bytes in flight). Safe for element-wise work at
     * index i even when two arguments are the same array: each item's loads
     * still precede its own store. */
    if (!cpu && layout == 0)
        layout = 4;
    kiln__sb params = {0};
    kiln__sb_addf(sb, "#define KILN_CPU %d\n", cpu);
    kiln__gen_common(sb, &ew->args, layout);
    if (ew->preamble)
        kiln__gen_user(sb, "preamble", ew->preamble);
    kiln__sb_add(sb, "KILN_FUNC void kiln_op(long i, KILN_PARAMS)\n{\n"
                     "    KILN_BIND(i)\n");
    kiln__gen_user(sb, "operation", ew->operation);
    kiln__sb_add(sb, ";\n}\n");
    kiln__gen_params(&params, &ew->args, layout);
    kiln_status st = kiln__gen_template(sb, "algo_elementwise.cl", ew->name,
                                        params.p ? params.p : "");
    if (st == KILN_OK && (sb->oom || params.oom))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                             "elementwise source");
    kiln__sb_free(&params);
    return st;
}

static kiln_status ew_variant(kiln_elementwise *ew, int strided, int cpu,
                              kiln__variant **out) {
    kiln__variant *v = &ew->var[strided][cpu];
    pthread_mutex_lock(&ew->lock);
    kiln_status st = KILN_OK;
    if (!v->k[0]) {
        kiln__sb sb = {0};
        st = kiln__elementwise_source(ew, strided, cpu, &sb);
        if (st == KILN_OK)
            st = kiln__gen_build(ew->context, sb.p, "kiln_elementwise",
                                 ew->operation, &v->prog);
        if (st == KILN_OK)
            st = kiln_kernel_create(v->prog, ew->name, &v->k[0]);
        if (st != KILN_OK)
            kiln__variant_free(v);
        kiln__sb_free(&sb);
    }
    pthread_mutex_unlock(&ew->lock);
    *out = v;
    return st;
}

kiln_status kiln_elementwise_create(kiln_context *context,
                                    const kiln_elementwise_desc *desc,
                                    kiln_elementwise **elementwise) {
    return kiln__elementwise_create_ex(context, desc, 1, elementwise);
}

kiln_status kiln__elementwise_create_ex(kiln_context *context,
                                        const kiln_elementwise_desc *desc,
                                        int eager, kiln_elementwise **kernel) {
    static const char what[] = "kiln_elementwise_create";
    if (!kernel)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: elementwise is NULL", what);
    *kernel = NULL;
    if (!context || !desc)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context and desc are required", what);
    kiln_elementwise_desc d;
    kiln_status st = kiln__desc_read(
        desc, offsetof(kiln_elementwise_desc, flags) + sizeof d.flags,
        sizeof d, &d, what, "KILN_ELEMENTWISE_DESC");
    if (st != KILN_OK)
        return st;
    if (!d.arguments || !d.operation)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments and operation are required",
                               what);
    if (d.flags & ~(unsigned)KILN_ELEMENTWISE_ANY_SHAPE)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown flags 0x%x", what, d.flags);
    const char *name = d.name ? d.name : "kiln_elementwise";
    if (!kiln__is_ident(name, KILN__MAX_NAME))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: name '%.80s' is not an identifier of at "
                               "most %d characters",
                               what, name, KILN__MAX_NAME);
    kiln_elementwise *ew = calloc(1, sizeof *ew);
    if (!ew)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln__gargs_parse(d.arguments, what, &ew->args);
    if (st != KILN_OK) {
        free(ew);
        return st;
    }
    atomic_init(&ew->refs, 1);
    pthread_mutex_init(&ew->lock, NULL);
    /* No handle on the context: the built programs keep it alive, and the
     * context cache (ctxcache.c) may hold this object. */
    ew->context = context;
    ew->flags = d.flags;
    ew->operation = kiln__strdup(d.operation);
    ew->name = kiln__strdup(name);
    ew->preamble = d.preamble ? kiln__strdup(d.preamble) : NULL;
    if (!ew->operation || !ew->name || (d.preamble && !ew->preamble)) {
        kiln_elementwise_release(ew);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    if (!eager) {
        *kernel = ew;
        return KILN_OK;
    }
    kiln_device_info info;
    int cpu = kiln_device_get_info(kiln_context_device(context, 0), &info) ==
                      KILN_OK &&
              info.type == KILN_DEVICE_CPU;
    kiln__variant *v;
    st = ew_variant(ew, 0, cpu, &v);
    if (st != KILN_OK) {
        kiln_elementwise_release(ew);
        return st;
    }
    *kernel = ew;
    return KILN_OK;
}

typedef struct ew_make_arg {
    kiln_context *context;
    const char *args, *op, *name;
} ew_make_arg;

static kiln_status ew_make(void *arg, void **obj) {
    ew_make_arg *a = arg;
    kiln_elementwise_desc d = KILN_ELEMENTWISE_DESC(
        .arguments = a->args, .operation = a->op, .name = a->name);
    return kiln__elementwise_create_ex(a->context, &d, 0,
                                       (kiln_elementwise **)obj);
}

kiln_status kiln__elementwise_cached(kiln_context *context,
                                     const char *arguments,
                                     const char *operation, const char *name,
                                     kiln_elementwise **ew, int *owned) {
    char key[640];
    int w = snprintf(key, sizeof key, "%s|%s|%s", arguments, operation, name);
    *owned = 0;
    if (w < 0 || (size_t)w >= sizeof key) { /* too long to cache */
        *owned = 1;
        kiln_elementwise_desc d = KILN_ELEMENTWISE_DESC(
            .arguments = arguments, .operation = operation, .name = name);
        return kiln__elementwise_create_ex(context, &d, 0, ew);
    }
    ew_make_arg a = {context, arguments, operation, name};
    void *obj = NULL;
    kiln_status st = kiln__cached_obj(context, KILN__OBJ_ELEMENTWISE, key,
                                      ew_make, &a, &obj, owned);
    *ew = obj;
    return st;
}

void kiln__elementwise_done(kiln_elementwise *ew, int owned) {
    if (!ew)
        return;
    if (owned)
        kiln_elementwise_release(ew);
}

kiln_status kiln_elementwise_retain(kiln_elementwise *ew) {
    if (!ew)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_elementwise_retain: elementwise is NULL");
    atomic_fetch_add(&ew->refs, 1);
    return KILN_OK;
}

void kiln_elementwise_release(kiln_elementwise *ew) {
    if (!ew || atomic_fetch_sub(&ew->refs, 1) != 1)
        return;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            kiln__variant_free(&ew->var[a][b]);
    kiln__gargs_free(&ew->args);
    free(ew->operation);
    free(ew->name);
    free(ew->preamble);
    pthread_mutex_destroy(&ew->lock);
    free(ew);
}

/* Sizes of a 1-D launch over n items. */
static void ew_sizes(const kiln__plan *p, size_t n, size_t *global,
                     size_t *local, int64_t *chunk) {
    if (p->cpu) {
        size_t groups = p->cu * 4;
        size_t by_size = (n + 4095) / 4096;
        if (groups > by_size)
            groups = by_size;
        if (!groups)
            groups = 1;
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
        /* KILN_EW_BLOCKS_PER_CU: tuning knob (default 32). */
        static int bpc = -1;
        if (bpc < 0) {
            const char *e = getenv("KILN_EW_BLOCKS_PER_CU");
            int k = e ? atoi(e) : 0;
            bpc = k >= 1 && k <= 4096 ? k : 32;
        }
        if (groups > (size_t)p->cu * (size_t)bpc)
            groups = (size_t)p->cu * (size_t)bpc;
        if (!groups)
            groups = 1;
        *global = groups * p->local;
        *local = p->local;
        *chunk = 0;
    }
}

kiln_status kiln_elementwise_launch(kiln_queue *queue, kiln_elementwise *ew,
                                    size_t n, size_t num_args,
                                    const kiln_arg *args, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !ew)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_elementwise_launch: queue and kernel are "
                               "required");
    if (kiln_queue_context(queue) != ew->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_elementwise_launch: the queue belongs to "
                               "another context than the kernel");
    kiln__plan plan;
    kiln_status st = kiln__plan_for(queue, &plan);
    if (st != KILN_OK)
        return st;
    kiln__bound b = {0};
    st = kiln__bind_values(queue, &ew->args, n, num_args, args,
                           (ew->flags & KILN_ELEMENTWISE_ANY_SHAPE) != 0,
                           ew->name, &b);
    if (st != KILN_OK) {
        kiln__bound_free(&b);
        return st;
    }
    if (b.n == 0) {
        kiln__bound_free(&b);
        return event ? kiln_queue_marker(queue, num_wait, wait, event)
                     : KILN_OK;
    }
    kiln__variant *v;
    st = ew_variant(ew, b.layout, plan.cpu, &v);
    if (st == KILN_OK) {
        size_t global, local;
        int64_t chunk;
        ew_sizes(&plan, b.n, &global, &local, &chunk);
        kiln_arg pre = KILN_ARG_I64(chunk);
        st = kiln__launch(queue, v->k[0], global, local, &pre, 1, &b,
                          num_wait, wait, event);
    }
    kiln__bound_free(&b);
    return st;
}
