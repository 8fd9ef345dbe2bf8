/* The offload object (include/kiln/offload.h): create, retain, release,
 * counters. Its kernel comes from offload_codegen.c; runs are in
 * offload_run.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "algo/offload/offload_hook.h"
#include "algo/offload/offload_internal.h"
#include "base/desc.h"
#include "base/error.h"
#include "base/refcount.h"

void (*kiln__offload_source_hook)(const char *source);

/* The first version of kiln_offload_opts ends after build_options. */
#define OPTS_V1_SIZE (offsetof(kiln_offload_opts, build_options) + sizeof(const char *))

/* The caller's options as this version knows them (NULL: the defaults). */
static kiln_status read_opts(const kiln_offload_opts *opts, kiln_offload_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    if (!opts)
        return KILN_OK;
    return kiln__desc_read(opts, OPTS_V1_SIZE, sizeof *o, o, "kiln_offload_create",
                           "KILN_OFFLOAD_OPTS");
}

static void offload_free(kiln_offload *off) {
    kiln_kernel_release(off->kernel);
    kiln_program_release(off->program);
    kiln_context_release(off->context);
    kiln__gargs_free(&off->args);
    pthread_mutex_destroy(&off->mu);
    free(off);
}

kiln_status kiln_offload_create(kiln_context *context, const char *params, const char *body,
                                unsigned dims, const kiln_offload_opts *opts,
                                kiln_offload **offload) {
    static const char *what = "kiln_offload_create";
    if (offload)
        *offload = NULL;
    const char *missing = KILN__FIRST_NULL4(context, params, body, offload);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, missing);
    if (dims < 1 || dims > 3)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: dims is %u; want 1, 2 or 3",
                               what, dims);
    kiln_offload_opts o;
    kiln_status st = read_opts(opts, &o);
    if (st != KILN_OK)
        return st;
    kiln_offload *off = kiln__calloc(1, sizeof *off);
    if (!off || pthread_mutex_init(&off->mu, NULL) != 0) {
        free(off);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    atomic_init(&off->refs, 1);
    off->dims = dims;
    kiln_context_retain(context);
    off->context = context;
    char *source = NULL;
    st = kiln__offload_generate(params, body, dims, &o, &source, &off->args);
    if (st == KILN_OK && kiln__offload_source_hook)
        kiln__offload_source_hook(source);
    if (st == KILN_OK)
        st = kiln__offload_build(context, source, o.build_options, body, &off->program);
    free(source);
    if (st == KILN_OK)
        st = kiln_kernel_create(off->program, o.name ? o.name : "kiln_offload", &off->kernel);
    if (st != KILN_OK) {
        offload_free(off);
        return st;
    }
    *offload = off;
    return KILN_OK;
}

kiln_status kiln_offload_retain(kiln_offload *offload) {
    return kiln__ref_retain(offload ? &offload->refs : NULL, "kiln_offload_retain", "offload");
}

void kiln_offload_release(kiln_offload *offload) {
    /* Queued launches hold their own references to the kernel. */
    if (kiln__ref_release(offload ? &offload->refs : NULL))
        offload_free(offload);
}

kiln_status(kiln_offload_get_stats)(kiln_offload *offload, kiln_offload_stats *stats,
                                    size_t stats_size) {
    if (!offload || !stats)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_offload_get_stats: %s is NULL",
                               offload ? "stats" : "offload");
    pthread_mutex_lock(&offload->mu);
    kiln_status st = kiln__stats_copy("kiln_offload_get_stats", &offload->stats, stats, stats_size);
    pthread_mutex_unlock(&offload->mu);
    return st;
}
