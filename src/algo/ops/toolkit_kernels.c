/* The array toolkit's fixed kernels: one generator kind whose "variant" is
 * an embedded template (kernels/algo_<name>.cl) compiled with defines
 * (element types, modes), cached per context under file and defines. */
#include <stdlib.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/ops/toolkit_internal.h"
#include "base/embedded.h"
#include "base/error.h"

typedef struct tk_gen {
    kiln__gen gen; /* first: the base */
    char *file, *defines;
    const char *const *suffixes;
    int nk;
} tk_gen;

static kiln_status tk_build(kiln__gen *gen, int layout, const kiln__plan *plan, kiln__variant *v) {
    (void)layout;
    tk_gen *t = (tk_gen *)gen;
    kiln__sb sb = { 0 };
    v->local = plan->local;
    kiln__gen_device_defines(&sb, plan);
    kiln__sb_addf(&sb, "#define KILN_LOCAL_SIZE %zu\n%s\n", plan->local, t->defines);
    kiln__sb_add(&sb, kiln__embedded_file("algo_hash.cl"));
    kiln_status st = kiln__gen_template(&sb, t->file, gen->name, &gen->args, KILN__CONTIG);
    if (st == KILN_OK)
        st = kiln__gen_program(gen, &sb, KILN__LANGS_PORTABLE, t->defines, t->suffixes, t->nk, v);
    kiln__sb_free(&sb);
    return st;
}

static void tk_destroy(kiln__gen *gen) {
    tk_gen *t = (tk_gen *)gen;
    free(t->file);
    free(t->defines);
    free(t);
}

static const kiln__gen_kind tk_kind = { "kiln_toolkit", "kiln_toolkit", tk_build, tk_destroy };

typedef struct tk_make_arg {
    kiln_context *context;
    const char *file, *name, *defines;
    const char *const *suffixes;
    int nk;
} tk_make_arg;

static kiln_status tk_make(void *arg, kiln__gen **gen) {
    tk_make_arg *a = arg;
    tk_gen *t = kiln__calloc(1, sizeof *t);
    if (!t)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_toolkit");
    /* the base wants one array argument; the templates do not use it */
    kiln_status st = kiln__gen_init(&t->gen, &tk_kind, a->context, "const int *unused", a->name);
    if (st != KILN_OK) {
        free(t);
        return st;
    }
    t->file = kiln__strdup(a->file);
    t->defines = kiln__strdup(a->defines);
    t->suffixes = a->suffixes; /* static tables of the callers */
    t->nk = a->nk;
    if (!t->file || !t->defines) {
        kiln__gen_release(&t->gen);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_toolkit");
    }
    *gen = &t->gen;
    return KILN_OK;
}

kiln_status kiln__tk_kernels(kiln_queue *queue, const char *file, const char *name,
                             const char *defines, int nk, const char *const *suffixes,
                             kiln__gen **gen, kiln__variant **v, kiln__plan *plan) {
    *gen = NULL;
    kiln_context *ctx = kiln_queue_context(queue);
    kiln_status st = kiln__plan_for(queue, plan);
    if (st != KILN_OK)
        return st;
    kiln__sb key = { 0 };
    kiln__sb_addf(&key, "toolkit|%s|%s|%s", file, name, defines);
    if (key.oom) {
        kiln__sb_free(&key);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", name);
    }
    tk_make_arg a = { ctx, file, name, defines, suffixes, nk };
    st = kiln__gen_cached(ctx, key.p, tk_make, &a, gen);
    kiln__sb_free(&key);
    if (st == KILN_OK)
        st = kiln__gen_variant(*gen, KILN__CONTIG, plan, v);
    if (st != KILN_OK) {
        kiln__gen_release(*gen);
        *gen = NULL;
    }
    return st;
}

kiln_status kiln__tk_dense(kiln_queue *queue, kiln_array *a, size_t num_wait,
                           kiln_event *const *wait, kiln_array **dense, kiln_event **dep) {
    *dep = NULL;
    if (kiln__array_contiguous(a)) {
        kiln_array_retain(a);
        *dense = a;
        return KILN_OK;
    }
    kiln_status st = kiln__array_make(kiln_queue_context(queue), a->dtype, a->ndim, a->shape, NULL,
                                      "a dense copy", dense);
    if (st == KILN_OK)
        st = kiln__array_copy_kernel(queue, *dense, a, num_wait, wait, dep);
    if (st != KILN_OK) {
        kiln_array_release(*dense);
        *dense = NULL;
    }
    return st;
}
