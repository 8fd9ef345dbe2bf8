/* Kernels and launches.
 *
 * The launch path is kept lean: arguments are checked by a loop over the
 * kernel's parsed parameter table and translated into a stack array (no
 * malloc for up to KILN__STACK_ARGS arguments), then handed to the backend;
 * an event is allocated only when the caller asks for one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/strbuf.h"
#include "core/internal.h"

kiln_status kiln_kernel_create(kiln_program *program, const char *name, kiln_kernel **kernel) {
    static const char fn[] = "kiln_kernel_create";
    if (!kernel)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: kernel is NULL", fn);
    *kernel = NULL;
    const char *missing = KILN__FIRST_NULL2(program, name);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_context *ctx = program->context;
    const kiln__sig *sig = kiln__sig_find(&program->sigs, name);
    kiln_kernel *k = kiln__calloc(1, sizeof *k);
    if (k) {
        k->handles = kiln__calloc(ctx->num_devices, sizeof *k->handles);
        k->name = kiln__strdup(name);
    }
    if (!k || !k->handles || !k->name) {
        if (k) {
            free(k->handles);
            free(k->name);
        }
        free(k);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    kiln_status st = KILN_OK;
    size_t made = 0;
    for (; made < ctx->num_devices; made++) {
        st = program->backend->kernel_create(program->built[made]->handle, name, &k->handles[made]);
        if (st != KILN_OK)
            break;
    }
    if (st != KILN_OK) {
        for (size_t i = 0; i < made; i++)
            program->backend->kernel_release(k->handles[i]);
        free(k->handles);
        free(k->name);
        free(k);
        if (sig) /* the parser saw it, so the driver's reason matters */
            return kiln__error_prefix(st, "%s(\"%s\")", fn, name);
        char list[1024] = "";
        size_t len = 0;
        for (size_t i = 0; i < program->sigs.count && len + 1 < sizeof list; i++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                             program->sigs.sigs[i].name);
            if (w < 0)
                break;
            len += (size_t)w;
        }
        return kiln__error_set(KILN_ERROR_KERNEL_NOT_FOUND, kiln_last_error_native(),
                               "%s: no kernel \"%s\" in the program; it has: %s", fn, name,
                               program->sigs.count ? list : "(no kernel found)");
    }
    atomic_init(&k->refs, 1);
    k->backend = program->backend;
    k->program = program;
    kiln__ref_take(&program->refs);
    k->context = ctx;
    k->sig = sig;
    *kernel = k;
    return KILN_OK;
}

kiln_status kiln_kernel_retain(kiln_kernel *kernel) {
    return kiln__ref_retain(kernel ? &kernel->refs : NULL, "kiln_kernel_retain", "kernel");
}

void kiln_kernel_release(kiln_kernel *kernel) {
    if (!kiln__ref_release(kernel ? &kernel->refs : NULL))
        return;
    for (size_t i = 0; i < kernel->context->num_devices; i++)
        kernel->backend->kernel_release(kernel->handles[i]);
    free(kernel->handles);
    free(kernel->name);
    kiln_program_release(kernel->program);
    free(kernel);
}

size_t kiln_kernel_num_args(const kiln_kernel *kernel) {
    return kernel && kernel->sig ? kernel->sig->num_params : 0;
}

kiln_status kiln_kernel_occupancy(kiln_kernel *kernel, kiln_device *device, size_t local_size,
                                  unsigned *groups_per_cu) {
    static const char fn[] = "kiln_kernel_occupancy";
    if (groups_per_cu)
        *groups_per_cu = 0;
    const char *missing = KILN__FIRST_NULL3(kernel, device, groups_per_cu);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    if (local_size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: local_size is 0", fn);
    size_t i = 0;
    while (i < kernel->context->num_devices && kernel->context->devices[i] != device)
        i++;
    if (i == kernel->context->num_devices)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the device is not one of the kernel's context", fn);
    if (!kernel->backend->kernel_occupancy)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: the driver of %s cannot tell a kernel's occupancy", fn,
                               device->b.info.id);
    kiln_status st =
        kernel->backend->kernel_occupancy(kernel->handles[i], local_size, groups_per_cu);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s(\"%s\")", fn, kernel->name);
}

static const char *kiln__kind_name(kiln_arg_kind kind) {
    static const char *const names[] = { [KILN_ARG_BUFFER] = "a buffer",
                                         [KILN_ARG_SCALAR] = "a scalar",
                                         [KILN_ARG_LOCAL] = "local memory",
                                         [KILN_ARG_ARRAY] = "an array",
                                         [KILN_ARG_MAP] = "mapped host memory" };
    unsigned i = (unsigned)kind;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "an unknown kind";
}

/* Reports a bad argument i; cold path. */
static kiln_status kiln__arg_error(const kiln_kernel *k, size_t i, const char *fmt, const char *a,
                                   const char *b) {
    char what[512];
    snprintf(what, sizeof what, fmt, a, b);
    const char *pname = k->sig && i < k->sig->num_params ? k->sig->params[i].name : "";
    return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                           "kiln_kernel_launch(%s): argument %zu%s%s%s: %s", k->name, i,
                           *pname ? " ('" : "", pname, *pname ? "')" : "", what);
}

static kiln_status kiln__count_error(const kiln_kernel *k, size_t num_args) {
    char list[768] = "";
    size_t len = 0;
    for (size_t i = 0; i < k->sig->num_params && len + 1 < sizeof list; i++) {
        const kiln__param *p = &k->sig->params[i];
        int w = snprintf(list + len, sizeof list - len, "%s%s %s", i ? ", " : "", p->type, p->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                           "kiln_kernel_launch(%s): the kernel takes %zu argument%s (%s), got %zu",
                           k->name, k->sig->num_params, k->sig->num_params == 1 ? "" : "s", list,
                           num_args);
}

/* Checks args[i] against parameter p (NULL when unknown) and fills *out. */
static inline kiln_status kiln__arg_check(const kiln_kernel *k, const kiln_context *ctx, size_t i,
                                          const kiln_arg *a, const kiln__param *p,
                                          kiln__barg *out) {
    if (p && a->kind != p->kind) {
        char got[64];
        snprintf(got, sizeof got, "%s%s%s%s", kiln__kind_name(a->kind),
                 a->kind == KILN_ARG_SCALAR ? " (" : "",
                 a->kind == KILN_ARG_SCALAR ? kiln_dtype_name(a->dtype) : "",
                 a->kind == KILN_ARG_SCALAR ? ")" : "");
        char decl[128];
        snprintf(decl, sizeof decl, "%s (%s)", kiln__kind_name(p->kind), p->type);
        return kiln__arg_error(k, i, "kernel declares %s, got %s", decl, got);
    }
    out->kind = a->kind;
    switch (a->kind) {
    case KILN_ARG_BUFFER:
        if (!a->value.buffer)
            return kiln__arg_error(k, i, "the buffer is NULL%s%s", "", "");
        if (a->value.buffer->context != ctx)
            return kiln__arg_error(k, i, "the buffer belongs to another context than the queue%s%s",
                                   "", "");
        out->mem = a->value.buffer->handle;
        out->bytes = NULL;
        out->size = 0;
        return KILN_OK;
    case KILN_ARG_SCALAR: {
        size_t size = kiln_dtype_size(a->dtype);
        if (size == 0)
            return kiln__arg_error(k, i, "unknown dtype in a scalar argument%s%s", "", "");
        if (p && p->dtype && p->dtype != a->dtype)
            return kiln__arg_error(k, i, "kernel declares %s, got %s", p->type,
                                   kiln_dtype_name(a->dtype));
        out->mem = NULL;
        out->bytes = &a->value;
        out->size = size;
        return KILN_OK;
    }
    case KILN_ARG_LOCAL:
        if (a->bytes == 0)
            return kiln__arg_error(k, i, "local memory of 0 bytes%s%s", "", "");
        out->mem = NULL;
        out->bytes = NULL;
        out->size = a->bytes;
        return KILN_OK;
    case KILN_ARG_ARRAY:
    case KILN_ARG_MAP:
        return kiln__arg_error(k, i, "%s is not a kernel argument (pass the buffer: %s)",
                               a->kind == KILN_ARG_ARRAY ? "an array" : "mapped host memory",
                               a->kind == KILN_ARG_ARRAY ? "kiln_array_buffer"
                                                         : "kiln_data_region_lookup");
    }
    return kiln__arg_error(k, i, "unknown argument kind (build it with a KILN_ARG_* macro)%s%s", "",
                           "");
}

/* A local size the device cannot run (each dimension, and in all). */
static kiln_status kiln__local_check(const kiln_kernel *kernel, const kiln_queue *queue,
                                     unsigned dims, const size_t *local) {
    const kiln_device_info *info = &queue->device->b.info;
    size_t items = 1;
    for (unsigned d = 0; d < dims; d++) {
        if (local[d] == 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_kernel_launch(%s): local[%u] is 0", kernel->name, d);
        if (info->max_work_item_sizes[d] && local[d] > info->max_work_item_sizes[d])
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_kernel_launch(%s): local[%u] = %zu exceeds the "
                                   "device's limit of %zu in that dimension (%s)",
                                   kernel->name, d, local[d], info->max_work_item_sizes[d],
                                   info->name);
        items *= local[d];
    }
    if (info->max_work_group_size && items > info->max_work_group_size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_kernel_launch(%s): a work-group of %zu items exceeds the "
                               "device's maximum work-group size of %zu (%s)",
                               kernel->name, items, info->max_work_group_size, info->name);
    return KILN_OK;
}

/* The status of a launch the backend refused: a global size that is not a
 * multiple of the local size is the likely cause (devices that need it
 * refuse it), so say so; otherwise the backend's own message. */
static kiln_status kiln__launch_failed(const kiln_kernel *kernel, const kiln_queue *queue,
                                       unsigned dims, const size_t *global, const size_t *local,
                                       kiln_status st) {
    for (unsigned d = 0; local && d < dims; d++) {
        if (global[d] % local[d] == 0)
            continue;
        char said[1024];
        snprintf(said, sizeof said, "%s", kiln_last_error_message());
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, kiln_last_error_native(),
                               "kiln_kernel_launch(%s): global[%u] = %zu is not a multiple of "
                               "local[%u] = %zu, and device %s requires it (round global up "
                               "and bounds-check in the kernel, or pass local = NULL); the "
                               "driver said: %s",
                               kernel->name, d, global[d], d, local[d], queue->device->b.info.id,
                               said);
    }
    return kiln__error_prefix(st, "kiln_kernel_launch(%s)", kernel->name);
}

/* The most work-items one launch may have: 2^48, the address space of
 * every 64-bit GPU and CPU kiln runs on. More items than addressable bytes
 * cannot each touch memory of their own, so such a size is a bug (an
 * `n - 1` that wrapped to SIZE_MAX), not a workload; refusing it beats a
 * launch that keeps the device busy until the process is killed. */
#define KILN__MAX_GLOBAL_ITEMS ((uint64_t)1 << 48)

/* Refuses a global size whose product overflows or passes the limit above;
 * the message names the size. A size with a 0 is empty, not too big. */
static kiln_status kiln__global_check(const kiln_kernel *kernel, unsigned dims,
                                      const size_t *global) {
    uint64_t items = 1;
    int overflow = 0;
    for (unsigned d = 0; d < dims; d++) {
        if (global[d] == 0)
            return KILN_OK;
        if (!overflow && __builtin_mul_overflow(items, (uint64_t)global[d], &items))
            overflow = 1;
    }
    if (!overflow && items <= KILN__MAX_GLOBAL_ITEMS)
        return KILN_OK;
    char shown[96];
    int at = snprintf(shown, sizeof shown, "{");
    for (unsigned d = 0; d < dims; d++)
        at += snprintf(shown + at, sizeof shown - (size_t)at, "%s%zu", d ? ", " : "", global[d]);
    snprintf(shown + at, sizeof shown - (size_t)at, "}");
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "kiln_kernel_launch(%s): global size %s is %s work-items; at most "
                           "2^48 (%llu) can be launched at once (an `n - 1` that wrapped below "
                           "0?)",
                           kernel->name, shown, overflow ? "more than 2^64" : "too many",
                           (unsigned long long)KILN__MAX_GLOBAL_ITEMS);
}

kiln_status kiln__kernel_arg_check(const kiln_kernel *k, const kiln_context *ctx, size_t i,
                                   const kiln_arg *a, kiln__barg *out) {
    return kiln__arg_check(k, ctx, i, a,
                           k->sig && i < k->sig->num_params ? &k->sig->params[i] : NULL, out);
}

/* "kernel 'name'" (the name cut at 64 bytes) without snprintf, which was
 * a few percent of a small launch's call. */
static void label_event(kiln_event *e, const char *name) {
    size_t n = strnlen(name, 64);
    _Static_assert(sizeof e->label >= 64 + 10, "the label holds a cut name");
    memcpy(e->label, "kernel '", 8);
    memcpy(e->label + 8, name, n);
    e->label[8 + n] = '\'';
    e->label[9 + n] = 0;
}

kiln_status kiln_kernel_launch(kiln_queue *queue, kiln_kernel *kernel, unsigned dims,
                               const size_t *global, const size_t *local, size_t num_args,
                               const kiln_arg *args, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !kernel)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_kernel_launch: %s is NULL",
                               queue ? "kernel" : "queue");
    kiln_context *ctx = queue->context;
    if (kernel->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_kernel_launch(%s): the kernel's program belongs to another "
                               "context than the queue",
                               kernel->name);
    if (dims < 1 || dims > 3)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_kernel_launch(%s): dims is %u; it must be 1, 2 or 3",
                               kernel->name, dims);
    if (!global)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_kernel_launch(%s): global is NULL",
                               kernel->name);
    kiln_status too_big = kiln__global_check(kernel, dims, global);
    if (too_big != KILN_OK)
        return too_big;
    if (num_args && !args)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_kernel_launch(%s): args is NULL but num_args is %zu",
                               kernel->name, num_args);
    const kiln__sig *sig = kernel->sig;
    if (sig && num_args != sig->num_params)
        return kiln__count_error(kernel, num_args);

    kiln__barg stack[KILN__STACK_ARGS];
    kiln__barg *bargs = stack;
    if (num_args > KILN__STACK_ARGS) {
        bargs = kiln__malloc(num_args * sizeof *bargs);
        if (!bargs)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kiln_kernel_launch: out of memory");
    }
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < num_args; i++) {
        st = kiln__arg_check(kernel, ctx, i, &args[i], sig ? &sig->params[i] : NULL, &bargs[i]);
        if (st != KILN_OK)
            goto out;
    }

    int empty = 0;
    for (unsigned d = 0; d < dims; d++)
        if (global[d] == 0)
            empty = 1;
    if (local && (st = kiln__local_check(kernel, queue, dims, local)) != KILN_OK)
        goto out;
    if (empty) {
        st = kiln__nothing_done(queue, num_wait, wait, event);
        goto out;
    }
    struct kiln_graph *rec = NULL;
    if ((st = kiln__graph_of("kiln_kernel_launch", queue, num_wait, wait, &rec)) != KILN_OK)
        goto out;
    if (rec) {
        st = kiln__graph_add_launch(rec, queue, kernel, dims, global, local, num_args, args,
                                    num_wait, wait, event);
        goto out;
    }
    kiln__enqueue e;
    st = kiln__enqueue_begin(&e, NULL, queue, num_wait, wait, event);
    if (st != KILN_OK) {
        st = kiln__error_prefix(st, "kiln_kernel_launch(%s)", kernel->name);
        goto out;
    }
    e.name = kernel->name;
    e.nvtx = kiln__nvtx_push(kernel->name); /* the range is the kernel's */
    kiln_status launched = queue->backend->kernel_launch(
        queue->handle, kernel->handles[queue->device_slot], dims, global, local, num_args, bargs,
        num_wait, e.wait, kiln__enqueue_out(&e, event));
    st = kiln__enqueue_end(&e, NULL, launched, queue, event);
    if (st == KILN_OK && event && *event)
        label_event(*event, kernel->name);
    if (launched != KILN_OK)
        st = kiln__launch_failed(kernel, queue, dims, global, local, launched);
out:
    if (bargs != stack)
        free(bargs);
    return st;
}
