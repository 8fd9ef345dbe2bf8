/* The elementwise generator (kiln_elementwise_*), like PyOpenCL's
 * ElementwiseKernel. One kernel per (layout, device kind) variant, built on
 * first use; the contiguous CPU/GPU variant of the creating context's first
 * device is built at create time so a bad expression fails there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"

struct kiln_elementwise {
    kiln_context *context;
    kiln__gargs args;
    char *operation, *name, *preamble;
    unsigned flags;
    pthread_mutex_t lock;
    kiln__variant var[2][2]; /* [strided][cpu] */
};

static int valid_name(const char *s) {
    if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                       *s == '_'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

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
                                    const char *arguments,
                                    const char *operation, const char *name,
                                    const char *preamble, unsigned flags,
                                    kiln_elementwise **kernel) {
    return kiln__elementwise_create_ex(context, arguments, operation, name,
                                       preamble, flags, 1, kernel);
}

kiln_status kiln__elementwise_create_ex(kiln_context *context,
                                        const char *arguments,
                                        const char *operation,
                                        const char *name, const char *preamble,
                                        unsigned flags, int eager,
                                        kiln_elementwise **kernel) {
    if (!kernel)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_elementwise_create: kernel is NULL");
    *kernel = NULL;
    if (!context || !arguments || !operation)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_elementwise_create: context, arguments "
                               "and operation are required");
    if (!name)
        name = "kiln_elementwise";
    if (!valid_name(name))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_elementwise_create: name '%s' is not an "
                               "identifier",
                               name);
    kiln_elementwise *ew = calloc(1, sizeof *ew);
    if (!ew)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_elementwise_create");
    kiln_status st = kiln__gargs_parse(arguments, "kiln_elementwise_create",
                                       &ew->args);
    if (st != KILN_OK) {
        free(ew);
        return st;
    }
    pthread_mutex_init(&ew->lock, NULL);
    /* No handle on the context: the built programs keep it alive, and the
     * context cache (ctxcache.c) may hold this object. */
    ew->context = context;
    ew->flags = flags;
    ew->operation = kiln__strdup(operation);
    ew->name = kiln__strdup(name);
    ew->preamble = preamble ? kiln__strdup(preamble) : NULL;
    if (!ew->operation || !ew->name || (preamble && !ew->preamble)) {
        kiln_elementwise_release(ew);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_elementwise_create");
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
    return kiln__elementwise_create_ex(a->context, a->args, a->op, a->name,
                                       NULL, 0, 0, (kiln_elementwise **)obj);
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
        return kiln__elementwise_create_ex(context, arguments, operation,
                                           name, NULL, 0, 0, ew);
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

void kiln_elementwise_release(kiln_elementwise *ew) {
    if (!ew)
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
                                    size_t num_values,
                                    const kiln_value *values, size_t num_wait,
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
    st = kiln__bind_values(queue, &ew->args, num_values, values,
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
