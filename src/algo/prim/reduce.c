/* The reduction generator (kiln_reduction_*), like PyOpenCL's
 * ReductionKernel. Two launches: stage 1 reduces each work-group's part
 * into a partial, stage 2 (one work-group) reduces the partials and writes
 * the result on the device; a host result is then read back
 * asynchronously. When stage 1 has one work-group (small n), it writes the
 * result itself and there is no stage 2 (red_enqueue); on GPUs with several
 * groups, the group that finishes last folds the partials itself (fused,
 * KILN_RED_FUSED), so there is no stage 2 either. The built-in reductions
 * are in reduce_builtin.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/prim/prim.h"
#include "algo/gen/knobs.h"
#include "base/error.h"

struct kiln_reduction {
    kiln__gen gen; /* first: the base */
    char *out_type, *neutral, *reduce, *map, *preamble, *finish, *initial;
    char *final_type;
    size_t out_size, final_size;
    kiln_dtype final_dtype; /* 0 for a struct */
    int lanes;              /* kiln__reduction_allow_lanes: a built-in whose map reads
                               its arrays at [i] only */
    /* the variants along an axis (array_axis.c), built on first use under
     * gen.lock: [strided][cpu] */
    kiln__variant axis_var[KILN__LAYOUT_SLOTS][2];
};

/* The whole generated source (without the backend prelude) of a variant,
 * on the template file tmpl. */
static kiln_status red_source(kiln_reduction *r, int strided, const kiln__plan *plan,
                              const char *tmpl, kiln__sb *sb) {
    kiln__gen_device_defines(sb, plan);
    kiln__sb_addf(sb,
                  "#define KILN_LOCAL_SIZE %zu\n"
                  "#if KILN_CUDA_C && !defined(INFINITY)\n"
                  "#define INFINITY __int_as_float(0x7f800000)\n#endif\n",
                  plan->local);
    kiln__gen_common(sb, &r->gen.args, strided, r->preamble);
    kiln__sb_add(sb, "typedef\n");
    kiln__gen_user(sb, "out_type", r->out_type);
    kiln__sb_add(sb, "kiln_out_t;\n");
    kiln__gen_size_check(sb, "kiln_out_t", "out_size", r->out_size, r->out_type);
    kiln__sb_add(sb, "typedef ");
    kiln__sb_add(sb, r->final_type ? r->final_type : "kiln_out_t");
    kiln__sb_add(sb, " kiln_final_t;\n");
    kiln__gen_return_func(sb, "kiln_out_t kiln_neutral(void)", 0, "neutral", r->neutral);
    kiln__gen_return_func(sb,
                          "kiln_out_t kiln_reduce(kiln_out_t a, "
                          "kiln_out_t b)",
                          0, "reduce", r->reduce);
    kiln__gen_return_func(sb, "kiln_out_t kiln_map(long i, KILN_PARAMS)", 1, "map", r->map);
    /* GPU stage 1 over contiguous arrays: quads of items in lanes */
    if (r->lanes && !plan->cpu && !strided && !strcmp(tmpl, "algo_reduce.cl") &&
        kiln__knobs_get()->red_lanes && kiln__gen_lanes_ok(&r->gen.args))
        kiln__gen_lanes(sb, &r->gen.args, "kiln_out_t", "map", r->map);
    if (r->initial) {
        /* combined once, by work-group 0 of stage 1, so that it counts
         * once whatever n is (n = 0 too) */
        kiln__sb_add(sb, "#define KILN_HAS_INITIAL 1\n");
        kiln__gen_return_func(sb, "kiln_out_t kiln_initial(KILN_PARAMS)", 0, "initial", r->initial);
    }
    kiln__sb_add(sb, "KILN_FUNC kiln_final_t kiln_finish(kiln_out_t "
                     "a)\n{\n    return (kiln_final_t)(");
    kiln__sb_add(sb, r->finish ? r->finish : "a");
    kiln__sb_add(sb, ");\n}\n");
    return kiln__gen_template(sb, tmpl, r->gen.name, &r->gen.args, strided);
}

void kiln__reduction_allow_lanes(kiln_reduction *r) {
    r->lanes = 1;
}

kiln_status kiln__reduction_source(kiln_reduction *r, int strided, const kiln__plan *plan,
                                   kiln__sb *sb) {
    return red_source(r, strided, plan, "algo_reduce.cl", sb);
}

/* Builds one variant of template tmpl with the kernels name + suffix[k]. */
static kiln_status red_build_tmpl(kiln_reduction *r, int strided, const kiln__plan *plan,
                                  const char *tmpl, const char *const *suffix, int nk,
                                  kiln__variant *v) {
    kiln__sb sb = { 0 };
    v->local = plan->local;
    kiln_status st = red_source(r, strided, plan, tmpl, &sb);
    if (st == KILN_OK) {
        char text[1024];
        snprintf(text, sizeof text, "map: %s; reduce: %s; neutral: %s%s%s", r->map, r->reduce,
                 r->neutral, r->initial ? "; initial: " : "", r->initial ? r->initial : "");
        st = kiln__gen_program(&r->gen, &sb, KILN__LANGS_PORTABLE, text, suffix, nk, v);
    }
    kiln__sb_free(&sb);
    return st;
}

int kiln__reduction_has_initial(const kiln_reduction *r) {
    return r->initial != NULL;
}

kiln_status kiln__reduction_axis_variant(kiln_reduction *r, int layout, const kiln__plan *plan,
                                         kiln__variant **out) {
    static const char *const suffix[3] = { "_axrows", "_axcols", "_axfinish" };
    kiln__variant *v = &r->axis_var[kiln__layout_slot(layout)][plan->cpu ? 1 : 0];
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&r->gen.lock);
    if (!v->k[0]) {
        st = red_build_tmpl(r, kiln__layout_strided(layout), plan, "algo_reduce_axis.cl", suffix, 3,
                            v);
        if (st != KILN_OK)
            kiln__variant_free(v);
    }
    pthread_mutex_unlock(&r->gen.lock);
    *out = v;
    return st;
}

void kiln__reduction_sizes(const kiln_reduction *r, size_t *out_size, size_t *final_size,
                           kiln_dtype *final_dtype, const char **final_type) {
    *out_size = r->out_size;
    *final_size = r->final_size;
    *final_dtype = r->final_dtype;
    *final_type = r->final_type ? r->final_type : r->out_type;
}

static kiln_status red_build(kiln__gen *gen, int strided, const kiln__plan *plan,
                             kiln__variant *v) {
    static const char *const suffix[2] = { "_stage1", "_stage2" };
    return red_build_tmpl((kiln_reduction *)gen, strided, plan, "algo_reduce.cl", suffix, 2, v);
}

static void red_destroy(kiln__gen *gen) {
    kiln_reduction *r = (kiln_reduction *)gen;
    for (int a = 0; a < KILN__LAYOUT_SLOTS; a++)
        for (int b = 0; b < 2; b++)
            kiln__variant_free(&r->axis_var[a][b]);
    free(r->out_type);
    free(r->neutral);
    free(r->reduce);
    free(r->map);
    free(r->preamble);
    free(r->finish);
    free(r->final_type);
    free(r->initial);
    free(r);
}

static const kiln__gen_kind red_kind = { "kiln_reduction", "kiln_reduction", red_build,
                                         red_destroy };

/* Copies the descriptor's strings (and the built-ins' finish). */
static kiln_status red_fill(kiln_reduction *r, const kiln_reduction_desc *d, const char *finish,
                            const char *final_type, size_t final_size) {
    kiln_dtype odt = kiln__dtype_from_name(d->out_type);
    r->out_size = d->out_size ? d->out_size : kiln_dtype_size(odt);
    r->final_size = final_type ? final_size : r->out_size;
    r->final_dtype = final_type ? kiln__dtype_from_name(final_type) : odt;
    r->out_type = kiln__strdup(d->out_type);
    r->neutral = kiln__strdup(d->neutral);
    r->reduce = kiln__strdup(d->reduce);
    r->map = kiln__strdup(d->map);
    r->preamble = d->preamble ? kiln__strdup(d->preamble) : NULL;
    r->finish = finish ? kiln__strdup(finish) : NULL;
    r->final_type = final_type ? kiln__strdup(final_type) : NULL;
    r->initial = d->initial ? kiln__strdup(d->initial) : NULL;
    if (!r->out_type || !r->neutral || !r->reduce || !r->map || (d->initial && !r->initial) ||
        (d->preamble && !r->preamble) || (finish && !r->finish) || (final_type && !r->final_type))
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_reduction_create");
    return KILN_OK;
}

kiln_status kiln__reduction_create_ex(kiln_context *context, const kiln_reduction_desc *desc,
                                      const char *finish, const char *final_type, size_t final_size,
                                      int eager, kiln_reduction **out) {
    static const char what[] = "kiln_reduction_create";
    if (out)
        *out = NULL;
    kiln_reduction_desc d;
    size_t v1 = offsetof(kiln_reduction_desc, name) + sizeof d.name;
    kiln_status st = kiln__gen_create_begin(context, desc, out != NULL, v1, sizeof d, &d, what,
                                            "KILN_REDUCTION_DESC");
    if (st != KILN_OK)
        return st;
    if (!d.arguments || !d.out_type || !d.neutral || !d.reduce || !d.map)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, out_type, neutral, reduce and "
                               "map are required",
                               what);
    if (!d.out_size && !kiln_dtype_size(kiln__dtype_from_name(d.out_type)))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: out_type '%s' is not a scalar type; set "
                               "out_size",
                               what, d.out_type);
    kiln_reduction *r = kiln__calloc(1, sizeof *r);
    if (!r)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln__gen_init(&r->gen, &red_kind, context, d.arguments, d.name);
    if (st != KILN_OK) {
        free(r);
        return st;
    }
    st = kiln__gen_set_options(&r->gen, d.options);
    if (st == KILN_OK)
        st = red_fill(r, &d, finish, final_type, final_size);
    st = kiln__gen_create_end(&r->gen, st, eager);
    if (st == KILN_OK)
        *out = r;
    return st;
}

kiln_status kiln__reduction_make(void *arg, kiln__gen **gen) {
    const kiln__reduction_make_arg *a = arg;
    kiln_reduction *r = NULL;
    kiln_status st =
        kiln__reduction_create_ex(a->context, a->d, a->finish, a->final_type, a->final_size, 0, &r);
    *gen = (kiln__gen *)r; /* the base is its first member */
    return st;
}

kiln_status kiln_reduction_create(kiln_context *context, const kiln_reduction_desc *desc,
                                  kiln_reduction **reduction) {
    return kiln__reduction_create_ex(context, desc, NULL, NULL, 0, 1, reduction);
}

kiln_status kiln_reduction_retain(kiln_reduction *r) {
    return kiln__gen_retain_public(r ? &r->gen : NULL, "kiln_reduction_retain", "reduction");
}

void kiln_reduction_release(kiln_reduction *r) {
    if (r)
        kiln__gen_release(&r->gen);
}

/* The result array fits: this context, one element of the final type. */
static kiln_status check_result(const kiln_reduction *r, const kiln_array *result,
                                kiln_context *ctx) {
    static const char what[] = "kiln_reduction_run_async";
    if (result->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the result array belongs to another "
                               "context",
                               what);
    if (result->size < 1)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: the result array is empty", what);
    /* a uchar result (any, all) may be a BOOL array: the same bytes */
    int bool_bytes = r->final_dtype == KILN_UINT8 && result->dtype == KILN_BOOL;
    if ((r->final_dtype && result->dtype != r->final_dtype && !bool_bytes) ||
        (!r->final_dtype && kiln_dtype_size(result->dtype) != r->final_size))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the result array has dtype %s, the "
                               "reduction gives %s",
                               what, kiln_dtype_name(result->dtype),
                               r->final_type ? r->final_type : r->out_type);
    return KILN_OK;
}

/* Stage 1's work-groups (and, on CPUs, the items per group) for n items. */
size_t kiln__reduction_groups(const kiln__plan *plan, size_t local, size_t n, int64_t *chunk) {
    size_t groups;
    *chunk = 0;
    if (plan->cpu) {
        /* Up to 2^16 items one group, one launch: the work (a few us) is
         * less than a second launch and waking other threads cost. Above,
         * up to 16 groups per unit: a CPU runtime may run the first group
         * alone (timed, to decide whether to wake the other threads); with
         * 4 a unit the first eighth of a large dot ran on one core. */
        groups = n <= 65536 ? 1 : (n + 8191) / 8192;
        if (groups > (size_t)plan->cu * 16)
            groups = (size_t)plan->cu * 16;
        size_t c = (n + groups - 1) / groups;
        c = (c + 63) / 64 * 64 * local;
        if (!c)
            c = 64 * local;
        groups = (n + c - 1) / c;
        *chunk = (int64_t)c;
    } else if (n <= local * (size_t)kiln__knobs_get()->red_single_items) {
        /* small: one group loops over it and writes the result itself; a
         * second launch (stage 2) costs more than the loop (issue 16: a
         * sum of 2^10 floats took 20 us of device time on an H100 against
         * CuPy's 13) */
        groups = 1;
    } else {
        size_t per = local * (size_t)kiln__knobs_get()->red_items;
        groups = (n + per - 1) / per;
        size_t bpc = (size_t)kiln__knobs_get()->red_blocks_per_cu;
        if (groups > (size_t)plan->cu * bpc)
            groups = (size_t)plan->cu * bpc;
    }
    return groups ? groups : 1;
}

/* Stage 1, stage 2 and the host read. The partials, then (without a
 * result array) the final value, live in the context's scratch buffer.
 * With one work-group, stage 1 writes the final value itself (the
 * template applies stage 2's folds to its one partial: the same value,
 * bit for bit) and no stage 2 is launched; two_stage (for tests) keeps
 * the two launches then too. */
static kiln_status red_enqueue(kiln_queue *queue, kiln_reduction *r, const kiln__variant *v,
                               const kiln__plan *plan, const kiln__bound *b, kiln_array *result,
                               void *host_result, int two_stage, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event) {
    size_t local = v->local;
    int64_t chunk;
    size_t groups = kiln__reduction_groups(plan, local, b->n, &chunk);
    int single = groups == 1 && !two_stage;
    /* GPUs: one launch for several groups too, the last to finish folds
     * the partials (the template's "fused") */
    int fused = groups > 1 && !two_stage && !plan->cpu && kiln__knobs_get()->red_fused;
    kiln__scratch scr = { 0 }, cnt = { 0 };
    kiln_status st = KILN_OK;
    /* a single launch into a result array needs no scratch */
    if (!single || !result)
        st = kiln__scratch_get(queue, KILN__SCRATCH_PARTIALS,
                               (groups + 1) * r->out_size + 2 * r->final_size, &scr);
    if (st == KILN_OK && fused)
        st = kiln__scratch_get(queue, KILN__SCRATCH_COUNTERS, sizeof(uint32_t), &cnt);
    kiln_buffer *tmp = scr.buf;
    /* The final value goes to the result array, or to the byte offset
     * (groups+1)*out_size of tmp, expressed in final_t elements. */
    size_t tmp_final_off = ((groups + 1) * r->out_size + r->final_size - 1) / r->final_size;
    kiln_buffer *dst = result ? result->buffer : tmp;
    size_t off = result ? result->offset : tmp_final_off;
    kiln_event *e1 = NULL, *e2 = NULL, *zeroed = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    if (st == KILN_OK)
        st = kiln__wait_plus(num_wait, wait, scr.dep, cnt.dep, &wl, &nwl);
    if (st == KILN_OK && fused && cnt.fresh) {
        /* a new counter buffer: zero once; every launch leaves it zero */
        static const uint32_t zero = 0;
        st = kiln_buffer_fill(queue, cnt.buf, &zero, sizeof zero, 0,
                              cnt.size / sizeof zero * sizeof zero, nwl, wl, &zeroed);
        if (wl != wait)
            free((void *)wl);
        wl = &zeroed;
        nwl = zeroed ? 1 : 0;
    }
    if (st == KILN_OK) {
        /* stage 1's final-value offset: -1 = write the partial instead (a
         * kernel that writes partials never touches dst); fused: where the
         * last group writes the final value (-1: not fused) */
        kiln_arg pre[6] = { KILN_ARG_BUF(tmp ? tmp : dst),
                            KILN_ARG_I64(chunk),
                            KILN_ARG_BUF(dst),
                            KILN_ARG_I64(single ? (int64_t)off : -1),
                            KILN_ARG_BUF(fused ? cnt.buf : (tmp ? tmp : dst)),
                            KILN_ARG_I64(fused ? (int64_t)off : -1) };
        /* Stage 1's event only where something follows it or waits for
         * it: a single launch into a result array, with no event asked
         * for, needs none (on CUDA the event cost ~1.5 us of a small
         * sum's round trip, issue 16: H200, 12 -> 10.7 us). */
        /* On an in-order queue the host read follows the launch anyway:
         * no event for it to wait on (one event less in a small dot).
         * Not with a wait list: a failed event in it must fail the read. */
        int ordered = !(kiln_queue_get_flags(queue) & KILN_QUEUE_OUT_OF_ORDER) &&
                      !kiln_graph_recording(queue) && nwl == 0;
        int need_e1 = !single || (host_result ? !ordered : event || scr.buf || scr.dep);
        st = kiln__launch(queue, v->k[0], groups * local, local, pre, 6, b, nwl, wl,
                          need_e1 ? &e1 : NULL);
    }
    if (wl != wait && wl != &zeroed)
        free((void *)wl);
    kiln__event_drop(&zeroed);
    if (cnt.buf || cnt.dep)
        kiln__scratch_put(queue, &cnt, e1);
    if (st == KILN_OK && !single && !fused) {
        kiln_arg a2[4] = { KILN_ARG_BUF(tmp), KILN_ARG_I64((int64_t)groups), KILN_ARG_BUF(dst),
                           KILN_ARG_I64((int64_t)off) };
        st = kiln__launch(queue, v->k[1], local, local, a2, 4, NULL, 1, &e1, &e2);
    } else {
        e2 = e1; /* stage 1 wrote the final value (or failed: NULL) */
        e1 = NULL;
    }
    if (st == KILN_OK && host_result) {
        kiln_event *e3 = NULL;
        st = kiln_buffer_read_async(queue, dst, off * r->final_size, r->final_size, host_result,
                                    e2 ? 1 : 0, e2 ? &e2 : NULL, &e3);
        if (st == KILN_OK) {
            kiln__event_drop(&e2);
            e2 = e3;
        }
    }
    /* The scratch is free again once the last command enqueued ends (the
     * read, or the last stage): every one of them may use it. */
    if (scr.buf || scr.dep)
        kiln__scratch_put(queue, &scr, e2 ? e2 : e1);
    if (st == KILN_OK && event) {
        *event = e2;
        e2 = NULL;
    }
    kiln__event_drop(&e1);
    kiln__event_drop(&e2);
    return st;
}

kiln_status kiln__reduction_launch_ex(kiln_queue *queue, kiln_reduction *r, size_t n,
                                      size_t num_args, const kiln_arg *args, kiln_array *result,
                                      void *host_result, int two_stage, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_reduction_run_async";
    if (event)
        *event = NULL;
    if (queue && r && !result && !host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: give a result array, a host_result "
                               "pointer or both",
                               what);
    kiln__plan plan;
    kiln__bound b = { 0 };
    kiln_status st =
        kiln__gen_prepare(queue, r ? &r->gen : NULL, n, num_args, args, 0, what, &plan, &b);
    if (st == KILN_OK && result)
        st = check_result(r, result, kiln_queue_context(queue));
    kiln__variant *v = NULL;
    if (st == KILN_OK)
        st = kiln__gen_variant(&r->gen, b.layout, &plan, &v);
    if (st == KILN_OK)
        st = red_enqueue(queue, r, v, &plan, &b, result, host_result, two_stage, num_wait, wait,
                         event);
    kiln__bound_free(&b);
    return st;
}

kiln_status kiln_reduction_run_async(kiln_queue *queue, kiln_reduction *r, size_t n,
                                     size_t num_args, const kiln_arg *args, kiln_array *result,
                                     void *host_result, size_t num_wait, kiln_event *const *wait,
                                     kiln_event **event) {
    return kiln__reduction_launch_ex(queue, r, n, num_args, args, result, host_result, 0, num_wait,
                                     wait, event);
}

kiln_status kiln_reduction_run(kiln_queue *queue, kiln_reduction *r, size_t n, size_t num_args,
                               const kiln_arg *args, void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_reduction_run: host_result is NULL");
    kiln_event *e = NULL;
    kiln_status st =
        kiln_reduction_run_async(queue, r, n, num_args, args, NULL, host_result, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}
