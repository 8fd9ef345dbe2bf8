/* The generator base: creation checks, references, the lazily built
 * variants and the common start of a launch, shared by elementwise,
 * reduction and scan (and the generators to come). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "algo/gen/algo.h"
#include "base/error.h"
#include "base/ident.h"

kiln_status kiln__gen_create_begin(kiln_context *context, const void *desc, int has_out,
                                   size_t v1_size, size_t size, void *copy, const char *what,
                                   const char *macro) {
    if (!has_out || !context || !desc)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context, desc and the result pointer are "
                               "required",
                               what);
    return kiln__desc_read(desc, v1_size, size, copy, what, macro);
}

/* An argument may not take a name the generated code gives a meaning:
 * `i` (the index) and `n` (the range) are in scope in every expression,
 * and kiln_* names are the generator's own. Said here, not as a compiler
 * error about the driver's temporary file. */
static kiln_status reserved_names(const kiln__gargs *args, const char *what) {
    for (size_t k = 0; k < args->n; k++) {
        const char *nm = args->v[k].name;
        if (!strcmp(nm, "i") || !strcmp(nm, "n"))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: argument '%s' is a reserved name: `i` is the "
                                   "index and `n` the size of the range in every "
                                   "expression; rename the argument",
                                   what, nm);
        if (!strncmp(nm, "kiln_", 5))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: argument '%s': names starting with kiln_ are "
                                   "reserved for the generated code; rename it",
                                   what, nm);
    }
    return KILN_OK;
}

kiln_status kiln__gen_init(kiln__gen *gen, const kiln__gen_kind *kind, kiln_context *context,
                           const char *arguments, const char *name) {
    if (!name)
        name = kind->default_name;
    if (!kiln__is_ident(name, KILN__MAX_NAME))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s_create: name '%.80s%s' is not an "
                               "identifier of at most %d characters",
                               kind->what, name, strlen(name) > 80 ? "..." : "", KILN__MAX_NAME);
    char what[64];
    snprintf(what, sizeof what, "%s_create", kind->what);
    kiln_status st = kiln__gargs_parse(arguments, what, &gen->args);
    if (st != KILN_OK)
        return st;
    st = reserved_names(&gen->args, what);
    if (st != KILN_OK) {
        kiln__gargs_free(&gen->args);
        return st;
    }
    gen->name = kiln__strdup(name);
    if (!gen->name) {
        kiln__gargs_free(&gen->args);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    atomic_init(&gen->refs, 1);
    gen->kind = kind;
    gen->context = context;
    pthread_mutex_init(&gen->lock, NULL);
    return KILN_OK;
}

kiln_status kiln__gen_set_options(kiln__gen *gen, const char *options) {
    if (!options || !*options)
        return KILN_OK;
    gen->options = kiln__strdup(options);
    return gen->options ? KILN_OK
                        : kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s_create: options",
                                          gen->kind->what);
}

kiln_status kiln__gen_retain(kiln__gen *gen) {
    kiln__ref_take(&gen->refs);
    return KILN_OK;
}

kiln_status kiln__gen_retain_public(kiln__gen *gen, const char *fn, const char *name) {
    return kiln__ref_retain(gen ? &gen->refs : NULL, fn, name);
}

void kiln__gen_release(kiln__gen *gen) {
    if (!gen || !kiln__ref_release(&gen->refs))
        return;
    for (int a = 0; a < KILN__LAYOUT_SLOTS; a++)
        for (int b = 0; b < 2; b++)
            kiln__variant_free(&gen->var[a][b]);
    kiln__gargs_free(&gen->args);
    free(gen->name);
    free(gen->options);
    pthread_mutex_destroy(&gen->lock);
    gen->kind->destroy(gen);
}

kiln_status kiln__gen_variant(kiln__gen *gen, int layout, const kiln__plan *plan,
                              kiln__variant **out) {
    kiln__variant *v = &gen->var[kiln__layout_slot(layout)][plan->cpu ? 1 : 0];
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&gen->lock);
    if (!v->k[0]) {
        st = gen->kind->build(gen, kiln__layout_strided(layout), plan, v);
        if (st != KILN_OK)
            kiln__variant_free(v);
    }
    pthread_mutex_unlock(&gen->lock);
    *out = v;
    return st;
}

kiln_status kiln__gen_create_end(kiln__gen *gen, kiln_status st, int eager) {
    if (st == KILN_OK && eager)
        st = kiln__gen_build_first(gen);
    if (st != KILN_OK)
        kiln__gen_release(gen);
    return st;
}

kiln_status kiln__gen_build_first(kiln__gen *gen) {
    kiln__plan plan;
    kiln__variant *v;
    kiln_status st = kiln__plan_for_device(kiln_context_device(gen->context, 0), &plan);
    if (st == KILN_OK)
        st = kiln__gen_variant(gen, KILN__CONTIG, &plan, &v);
    return st;
}

kiln_status kiln__gen_program(kiln__gen *gen, kiln__sb *source, unsigned languages,
                              const char *user_text, const char *const *suffixes, int nk,
                              kiln__variant *v) {
    if (source->oom)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: generating source",
                               gen->kind->what);
    kiln_status st = kiln__gen_build(gen->context, source->p, languages, gen->kind->what, user_text,
                                     gen->options, &v->prog);
    for (int k = 0; st == KILN_OK && k < nk; k++) {
        char kn[KILN__MAX_NAME + 16]; /* name: at most 63; suffixes short */
        snprintf(kn, sizeof kn, "%s%s", gen->name, suffixes[k]);
        st = kiln_kernel_create(v->prog, kn, &v->k[k]);
    }
    return st;
}

kiln_status kiln__gen_prepare(kiln_queue *queue, kiln__gen *gen, size_t n, size_t num_args,
                              const kiln_arg *args, int any_shape, const char *what,
                              kiln__plan *plan, kiln__bound *b) {
    if (!queue || !gen)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue and generator are required",
                               what);
    if (kiln_queue_context(queue) != gen->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue belongs to another context "
                               "than the generator",
                               what);
    kiln_status st = kiln__plan_for(queue, plan);
    if (st == KILN_OK)
        st = kiln__bind_values(queue, &gen->args, n, num_args, args, any_shape, gen->name, b);
    return st;
}

void kiln__event_drop(kiln_event **e) {
    if (*e)
        kiln_event_release(*e);
    *e = NULL;
}

kiln_status kiln__event_give(kiln_event **event, kiln_event *e) {
    if (event)
        *event = e;
    else
        kiln_event_release(e);
    return KILN_OK;
}

void kiln__variant_free(kiln__variant *v) {
    for (int k = 0; k < 3; k++)
        kiln_kernel_release(v->k[k]);
    kiln_program_release(v->prog);
    memset(v, 0, sizeof *v);
}

kiln_status kiln__launch(kiln_queue *queue, kiln_kernel *kernel, size_t global, size_t local,
                         const kiln_arg *prefix, size_t nprefix, const kiln__bound *b,
                         size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    size_t nb = b ? b->nk : 0;
    kiln_arg stack[48] = { { 0 } };
    kiln_arg *all = nprefix + nb <= 48 ? stack : kiln__malloc((nprefix + nb) * sizeof *all);
    if (!all)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "launch");
    for (size_t k = 0; k < nprefix; k++)
        all[k] = prefix[k];
    for (size_t k = 0; k < nb; k++)
        all[nprefix + k] = b->kargs[k];
    if (global % local)
        global += local - global % local;
    kiln_status st = kiln_kernel_launch(queue, kernel, 1, &global, &local, nprefix + nb, all,
                                        num_wait, wait, event);
    if (all != stack)
        free(all);
    return st;
}
