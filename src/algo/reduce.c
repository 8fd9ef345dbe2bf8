/* The reduction generator (kiln_reduction_*), like PyOpenCL's
 * ReductionKernel, and the built-in reductions over arrays. Two launches:
 * stage 1 reduces each work-group's part into a partial, stage 2 (one
 * work-group) reduces the partials and writes the result on the device; a
 * host result is then read back asynchronously. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"
#include "base/ident.h"

struct kiln_reduction {
    atomic_int refs;
    kiln_context *context;
    kiln__gargs args;
    char *out_type, *neutral, *reduce, *map, *preamble, *name, *finish;
    char *final_type;
    size_t out_size, final_size;
    kiln_dtype final_dtype; /* 0 for a struct */
    pthread_mutex_t lock;
    kiln__variant var[2][2]; /* [strided][cpu] */
    size_t local[2][2];
};

/* The whole generated source (without the backend prelude) of a variant. */
kiln_status kiln__reduction_source(kiln_reduction *r, int strided,
                                   const kiln__plan *plan, kiln__sb *sb) {
    kiln__sb params = {0};
    kiln__sb_addf(sb,
                  "#define KILN_CPU %d\n#define KILN_LOCAL_SIZE %zu\n"
                  "#if defined(KILN_BACKEND_CUDA) && !defined(INFINITY)\n"
                  "#define INFINITY __int_as_float(0x7f800000)\n#endif\n",
                  plan->cpu, plan->local);
    kiln__gen_common(sb, &r->args, strided);
    if (r->preamble)
        kiln__gen_user(sb, "preamble", r->preamble);
    kiln__sb_add(sb, "typedef\n");
    kiln__gen_user(sb, "out_type", r->out_type);
    kiln__sb_add(sb, "kiln_out_t;\ntypedef ");
    kiln__sb_add(sb, r->final_type ? r->final_type : "kiln_out_t");
    kiln__sb_add(sb, " kiln_final_t;\n"
                     "KILN_FUNC kiln_out_t kiln_neutral(void)\n{\n"
                     "    return (\n");
    kiln__gen_user(sb, "neutral", r->neutral);
    kiln__sb_add(sb, ");\n}\nKILN_FUNC kiln_out_t kiln_reduce(kiln_out_t "
                     "a, kiln_out_t b)\n{\n    return (\n");
    kiln__gen_user(sb, "reduce", r->reduce);
    kiln__sb_add(sb, ");\n}\nKILN_FUNC kiln_out_t kiln_map(long i, "
                     "KILN_PARAMS)\n{\n    KILN_BIND(i)\n    return (\n");
    kiln__gen_user(sb, "map", r->map);
    kiln__sb_add(sb, ");\n}\nKILN_FUNC kiln_final_t kiln_finish(kiln_out_t "
                     "a)\n{\n    return (kiln_final_t)(");
    kiln__sb_add(sb, r->finish ? r->finish : "a");
    kiln__sb_add(sb, ");\n}\n");
    kiln__gen_params(&params, &r->args, strided);
    kiln_status st = kiln__gen_template(sb, "algo_reduce.cl", r->name,
                                        params.p ? params.p : "");
    if (st == KILN_OK && (sb->oom || params.oom))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                             "reduction source");
    kiln__sb_free(&params);
    return st;
}

static kiln_status red_variant(kiln_reduction *r, int strided,
                               const kiln__plan *plan, kiln__variant **out) {
    int cpu = plan->cpu;
    kiln__variant *v = &r->var[strided][cpu];
    pthread_mutex_lock(&r->lock);
    kiln_status st = KILN_OK;
    if (!v->k[0]) {
        kiln__sb sb = {0};
        r->local[strided][cpu] = plan->local;
        st = kiln__reduction_source(r, strided, plan, &sb);
        if (st == KILN_OK) {
            char text[1024];
            snprintf(text, sizeof text, "map: %s; reduce: %s; neutral: %s",
                     r->map, r->reduce, r->neutral);
            st = kiln__gen_build(r->context, sb.p, "kiln_reduction", text,
                                 &v->prog);
        }
        char kn[160];
        if (st == KILN_OK) {
            snprintf(kn, sizeof kn, "%s_stage1", r->name);
            st = kiln_kernel_create(v->prog, kn, &v->k[0]);
        }
        if (st == KILN_OK) {
            snprintf(kn, sizeof kn, "%s_stage2", r->name);
            st = kiln_kernel_create(v->prog, kn, &v->k[1]);
        }
        if (st != KILN_OK)
            kiln__variant_free(v);
        kiln__sb_free(&sb);
    }
    pthread_mutex_unlock(&r->lock);
    *out = v;
    return st;
}

kiln_status kiln__reduction_create_ex(kiln_context *context,
                                      const kiln_reduction_desc *desc,
                                      const char *finish,
                                      const char *final_type,
                                      size_t final_size, int eager,
                                      kiln_reduction **out) {
    static const char what[] = "kiln_reduction_create";
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: reduction is NULL", what);
    *out = NULL;
    if (!context || !desc)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context and desc are required", what);
    kiln_reduction_desc dc;
    kiln_status st = kiln__desc_read(
        desc, offsetof(kiln_reduction_desc, name) + sizeof dc.name,
        sizeof dc, &dc, what, "KILN_REDUCTION_DESC");
    if (st != KILN_OK)
        return st;
    const kiln_reduction_desc *d = &dc;
    if (!d->arguments || !d->out_type || !d->neutral || !d->reduce || !d->map)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, out_type, neutral, reduce and "
                               "map are required",
                               what);
    const char *name = d->name ? d->name : "kiln_reduction";
    if (!kiln__is_ident(name, KILN__MAX_NAME))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: name '%.80s' is not an identifier of at "
                               "most %d characters",
                               what, name, KILN__MAX_NAME);
    kiln_dtype odt = kiln__dtype_from_name(d->out_type);
    size_t osz = d->out_size ? d->out_size : kiln_dtype_size(odt);
    if (!osz)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_reduction_create: out_type '%s' is not a "
                               "scalar type; set out_size",
                               d->out_type);
    kiln_reduction *r = calloc(1, sizeof *r);
    if (!r)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_reduction_create");
    st = kiln__gargs_parse(d->arguments, what, &r->args);
    if (st != KILN_OK) {
        free(r);
        return st;
    }
    atomic_init(&r->refs, 1);
    pthread_mutex_init(&r->lock, NULL);
    /* No handle on the context: the built programs keep it alive, and the
     * context cache (ctxcache.c) may hold this object. */
    r->context = context;
    r->out_size = osz;
    r->final_size = final_type ? final_size : osz;
    r->final_dtype = final_type ? kiln__dtype_from_name(final_type) : odt;
    r->out_type = kiln__strdup(d->out_type);
    r->neutral = kiln__strdup(d->neutral);
    r->reduce = kiln__strdup(d->reduce);
    r->map = kiln__strdup(d->map);
    r->name = kiln__strdup(name);
    r->preamble = d->preamble ? kiln__strdup(d->preamble) : NULL;
    r->finish = finish ? kiln__strdup(finish) : NULL;
    r->final_type = final_type ? kiln__strdup(final_type) : NULL;
    if (!r->out_type || !r->neutral || !r->reduce || !r->map || !r->name ||
        (d->preamble && !r->preamble) || (finish && !r->finish) ||
        (final_type && !r->final_type)) {
        kiln_reduction_release(r);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_reduction_create");
    }
    if (eager) {
        kiln__plan plan;
        kiln__variant *v;
        st = kiln__plan_for_device(kiln_context_device(context, 0), &plan);
        if (st == KILN_OK)
            st = red_variant(r, 0, &plan, &v);
        if (st != KILN_OK) {
            kiln_reduction_release(r);
            return st;
        }
    }
    *out = r;
    return KILN_OK;
}

kiln_status kiln_reduction_create(kiln_context *context,
                                  const kiln_reduction_desc *desc,
                                  kiln_reduction **reduction) {
    return kiln__reduction_create_ex(context, desc, NULL, NULL, 0, 1,
                                     reduction);
}

kiln_status kiln_reduction_retain(kiln_reduction *r) {
    if (!r)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_reduction_retain: reduction is NULL");
    atomic_fetch_add(&r->refs, 1);
    return KILN_OK;
}

void kiln_reduction_release(kiln_reduction *r) {
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            kiln__variant_free(&r->var[a][b]);
    kiln__gargs_free(&r->args);
    free(r->out_type);
    free(r->neutral);
    free(r->reduce);
    free(r->map);
    free(r->name);
    free(r->preamble);
    free(r->finish);
    free(r->final_type);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

kiln_status kiln_reduction_launch(kiln_queue *queue, kiln_reduction *r,
                                  size_t n, size_t num_args,
                                  const kiln_arg *args,
                                  kiln_array *result, void *host_result,
                                  size_t num_wait, kiln_event *const *wait,
                                  kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !r)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_reduction_launch: queue and reduction "
                               "are required");
    if (!result && !host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_reduction_launch: give a result array, a "
                               "host_result pointer or both");
    kiln_context *ctx = kiln_queue_context(queue);
    if (ctx != r->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_reduction_launch: the queue belongs to "
                               "another context than the reduction");
    if (result) {
        if (result->context != ctx)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "kiln_reduction_launch: the result array "
                                   "belongs to another context");
        if (result->size < 1)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "kiln_reduction_launch: the result array "
                                   "is empty");
        if ((r->final_dtype && result->dtype != r->final_dtype) ||
            (!r->final_dtype &&
             kiln_dtype_size(result->dtype) != r->final_size))
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "kiln_reduction_launch: the result array "
                                   "has dtype %s, the reduction gives %s",
                                   kiln_dtype_name(result->dtype),
                                   r->final_type ? r->final_type
                                                 : r->out_type);
    }
    kiln__plan plan;
    kiln_status st = kiln__plan_for(queue, &plan);
    if (st != KILN_OK)
        return st;
    kiln__bound b = {0};
    st = kiln__bind_values(queue, &r->args, n, num_args, args, 0, r->name,
                           &b);
    if (st != KILN_OK) {
        kiln__bound_free(&b);
        return st;
    }
    kiln__variant *v = NULL;
    st = red_variant(r, b.layout, &plan, &v);
    if (st != KILN_OK) {
        kiln__bound_free(&b);
        return st;
    }
    size_t local = r->local[b.layout][plan.cpu];
    size_t groups;
    int64_t chunk = 0;
    if (plan.cpu) {
        groups = plan.cu * 4;
        size_t by_size = (n + 8191) / 8192;
        if (groups > by_size)
            groups = by_size;
        if (!groups)
            groups = 1;
        size_t c = (n + groups - 1) / groups;
        c = (c + 63) / 64 * 64 * local;
        if (!c)
            c = 64 * local;
        groups = (n + c - 1) / c;
        if (!groups)
            groups = 1;
        chunk = (int64_t)c;
    } else {
        groups = (n + local - 1) / local;
        /* KILN_RED_BLOCKS_PER_CU: tuning knob (default 64: on an H200 8
         * gave sum 97%, dot 89% of copy; 64 gave 99% and 106%). */
        static int bpc = -1;
        if (bpc < 0) {
            const char *e = getenv("KILN_RED_BLOCKS_PER_CU");
            int k = e ? atoi(e) : 0;
            bpc = k >= 1 && k <= 64 ? k : 64;
        }
        if (groups > (size_t)plan.cu * (size_t)bpc)
            groups = (size_t)plan.cu * (size_t)bpc;
        if (!groups)
            groups = 1;
    }
    /* Partials, then one slot for the result when there is no result
     * array: the context's scratch buffer. */
    kiln__scratch scr;
    st = kiln__scratch_get(queue, KILN__SCRATCH_PARTIALS,
                           (groups + 1) * r->out_size + 2 * r->final_size,
                           &scr);
    kiln_buffer *tmp = scr.buf;
    kiln_event *e1 = NULL, *e2 = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    if (st == KILN_OK)
        st = kiln__wait_plus(num_wait, wait, scr.dep, &wl, &nwl);
    if (st == KILN_OK) {
        kiln_arg pre[2] = {KILN_ARG_BUF(tmp), KILN_ARG_I64(chunk)};
        st = kiln__launch(queue, v->k[0], groups * local, local, pre, 2, &b,
                          nwl, wl, &e1);
    }
    if (wl != wait)
        free((void *)wl);
    /* The final value goes to the result array, or to the byte offset
     * (groups+1)*out_size of tmp, expressed in final_t elements. */
    size_t tmp_final_off = ((groups + 1) * r->out_size + r->final_size - 1) /
                           r->final_size;
    if (st == KILN_OK) {
        kiln_buffer *dst = result ? result->buffer : tmp;
        int64_t off = result ? (int64_t)result->offset : (int64_t)tmp_final_off;
        {
            kiln_arg a2[4] = {KILN_ARG_BUF(tmp), KILN_ARG_I64((int64_t)groups),
                              KILN_ARG_BUF(dst), KILN_ARG_I64(off)};
            st = kiln__launch(queue, v->k[1], local, local, a2, 4, NULL, 1,
                              &e1, &e2);
        }
    }
    if (st == KILN_OK && host_result) {
        kiln_event *e3 = NULL;
        if (result)
            st = kiln_buffer_read_async(queue, result->buffer,
                                        result->offset * r->final_size,
                                        r->final_size, host_result, 1, &e2,
                                        &e3);
        else
            st = kiln_buffer_read_async(queue, tmp,
                                        tmp_final_off * r->final_size,
                                        r->final_size, host_result, 1, &e2,
                                        &e3);
        kiln__event_drop(&e2);
        e2 = e3;
    }
    /* The scratch is free again once the last command that reads it ends
     * (the read, or stage 2). */
    if (scr.buf || scr.dep)
        kiln__scratch_put(queue, &scr, st == KILN_OK ? e2 : e1);
    if (st == KILN_OK && event) {
        *event = e2;
        e2 = NULL;
    }
    kiln__event_drop(&e1);
    kiln__event_drop(&e2);
    kiln__bound_free(&b);
    return st;
}

kiln_status kiln_reduction_run(kiln_queue *queue, kiln_reduction *r,
                               size_t n, size_t num_args,
                               const kiln_arg *args, void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_reduction_run: host_result is NULL");
    kiln_event *e = NULL;
    kiln_status st = kiln_reduction_launch(queue, r, n, num_args, args, NULL,
                                           host_result, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}

/* ------------------------------------------------------------- built-ins */

kiln_dtype kiln_reduce_result_dtype(kiln_reduce_op op, kiln_dtype dtype) {
    if (!kiln_dtype_size(dtype))
        return (kiln_dtype)0;
    /* float16 accumulates in float32 and gives a float32 result (as CuPy
     * does, for accuracy). */
    if (dtype == KILN_FLOAT16)
        dtype = KILN_FLOAT32;
    int fl = dtype == KILN_FLOAT32 || dtype == KILN_FLOAT64;
    switch (op) {
    case KILN_REDUCE_SUM:
    case KILN_REDUCE_PROD:
    case KILN_REDUCE_MIN:
    case KILN_REDUCE_MAX:
        return dtype;
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        return fl ? dtype : KILN_FLOAT64;
    case KILN_REDUCE_ARGMIN:
    case KILN_REDUCE_ARGMAX:
        return KILN_INT64;
    }
    return (kiln_dtype)0;
}

typedef struct red_make_arg {
    kiln_context *context;
    const kiln_reduction_desc *d;
    const char *finish, *final_type;
    size_t final_size;
} red_make_arg;

static kiln_status red_make(void *arg, void **obj) {
    red_make_arg *a = arg;
    return kiln__reduction_create_ex(a->context, a->d, a->finish, a->final_type,
                                     a->final_size, 0,
                                     (kiln_reduction **)obj);
}

static kiln_status run_builtin(kiln_queue *queue, const char *what,
                               const kiln_reduction_desc *d,
                               const char *finish, const char *final_type,
                               size_t final_size, size_t nv,
                               const kiln_arg *vals, kiln_array *result,
                               void *host_result, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event) {
    /* The built-in reduction comes from the context's cache: no source is
     * generated or hashed after the first call. */
    kiln_context *ctx = kiln_queue_context(queue);
    kiln__sb key = {0};
    kiln__sb_addf(&key, "%s|%s|%zu|%s|%s|%s|%s|%s|%s|%zu|%s", d->arguments,
                  d->out_type, d->out_size, d->neutral, d->reduce, d->map,
                  d->preamble ? d->preamble : "", finish ? finish : "",
                  final_type ? final_type : "", final_size,
                  d->name ? d->name : "");
    if (key.oom) {
        kiln__sb_free(&key);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    red_make_arg ma = {ctx, d, finish, final_type, final_size};
    void *obj = NULL;
    int owned = 0;
    kiln_status st = kiln__cached_obj(ctx, KILN__OBJ_REDUCTION, key.p,
                                      red_make, &ma, &obj, &owned);
    kiln__sb_free(&key);
    if (st == KILN_OK)
        st = kiln_reduction_launch(queue, obj, vals[0].value.array->size, nv,
                                   vals, result, host_result, num_wait, wait,
                                   event);
    if (owned)
        kiln_reduction_release(obj);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

kiln_status kiln_array_reduce_async(kiln_queue *queue, kiln_reduce_op op,
                                    kiln_array *a, kiln_array *result,
                                    void *host_result, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reduce: queue and array are "
                               "required");
    kiln_dtype rd = kiln_reduce_result_dtype(op, a->dtype);
    if (!rd) /* every dtype has every op: the op is unknown */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_reduce: unknown op %d", (int)op);
    /* float16 is read as its ushort bits and widened to float: the element
     * type t is then float and X the widened element. */
    int f16 = a->dtype == KILN_FLOAT16;
    kiln_dtype et = f16 ? KILN_FLOAT32 : a->dtype;
    const char *t = kiln_dtype_name(et);
    const char *rt = kiln_dtype_name(rd);
    const char *X = f16 ? "kiln_h2f(x[i])" : "x[i]";
    char args[64], map[160], neutral[160], pre[1024], reduce[160], amap[96];
    snprintf(args, sizeof args, "const %s *x", f16 ? "ushort" : t);
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
        .arguments = args, .out_type = rt, .neutral = "0", .reduce = "a+b",
        .map = X, .name = "kiln_sum");
    const char *finish = NULL, *final_type = NULL;
    size_t final_size = 0;
    switch (op) {
    case KILN_REDUCE_SUM:
        break;
    case KILN_REDUCE_PROD:
        d.neutral = "1";
        d.reduce = "a*b";
        d.name = "kiln_prod";
        break;
    case KILN_REDUCE_MIN:
        d.neutral = kiln__dtype_max_literal(et, neutral, sizeof neutral);
        d.reduce = "b < a ? b : a";
        d.name = "kiln_min";
        break;
    case KILN_REDUCE_MAX:
        d.neutral = kiln__dtype_min_literal(et, neutral, sizeof neutral);
        d.reduce = "b > a ? b : a";
        d.name = "kiln_max";
        break;
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        if (op == KILN_REDUCE_NORM2) {
            snprintf(map, sizeof map, "(%s)%s*(%s)%s", rt, X, rt, X);
            finish = "sqrt(a)";
            d.name = "kiln_norm2";
        } else {
            snprintf(map, sizeof map, "fabs((%s)%s)", rt, X);
            d.name = op == KILN_REDUCE_NORM1 ? "kiln_norm1" : "kiln_norminf";
        }
        d.map = map;
        if (op == KILN_REDUCE_NORM_INF)
            d.reduce = "b > a ? b : a";
        break;
    case KILN_REDUCE_ARGMIN:
    case KILN_REDUCE_ARGMAX: {
        int mx = op == KILN_REDUCE_ARGMAX;
        snprintf(pre, sizeof pre,
                 "typedef struct { %s v; long i; } kiln_argpair;\n"
                 "KILN_FUNC kiln_argpair kiln_argpair_make(%s v, long i)\n"
                 "{ kiln_argpair p; p.v = v; p.i = i; return p; }\n"
                 "KILN_FUNC kiln_argpair kiln_argpair_pick(kiln_argpair a, "
                 "kiln_argpair b)\n"
                 "{ return (b.v %c a.v || (b.v == a.v && b.i < a.i)) ? b : a; "
                 "}\n",
                 t, t, mx ? '>' : '<');
        char lit[96];
        if (mx)
            kiln__dtype_min_literal(et, lit, sizeof lit);
        else
            kiln__dtype_max_literal(et, lit, sizeof lit);
        snprintf(neutral, sizeof neutral,
                 "kiln_argpair_make(%s, 9223372036854775807L)", lit);
        snprintf(reduce, sizeof reduce, "kiln_argpair_pick(a, b)");
        d.preamble = pre;
        d.out_type = "kiln_argpair";
        d.out_size = 16;
        d.neutral = neutral;
        d.reduce = reduce;
        snprintf(amap, sizeof amap, "kiln_argpair_make(%s, i)", X);
        d.map = amap;
        d.name = mx ? "kiln_argmax" : "kiln_argmin";
        finish = "a.i == 9223372036854775807L ? -1L : a.i";
        final_type = "long";
        final_size = 8;
        break;
    }
    default:
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_reduce: unknown op %d", (int)op);
    }
    kiln_arg v = KILN_ARG_ARRAY(a);
    return run_builtin(queue, "kiln_array_reduce", &d, finish, final_type,
                       final_size, 1, &v, result, host_result, num_wait, wait,
                       event);
}

kiln_status kiln_array_dot_async(kiln_queue *queue, kiln_array *a,
                                 kiln_array *b, kiln_array *result,
                                 void *host_result, size_t num_wait,
                                 kiln_event *const *wait,
                                 kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !a || !b)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_dot: queue and arrays are required");
    if (a->dtype != b->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_dot: dtypes %s and %s differ",
                               kiln_dtype_name(a->dtype),
                               kiln_dtype_name(b->dtype));
    /* float16: products and sum in float, a float32 result */
    int f16 = a->dtype == KILN_FLOAT16;
    const char *t = f16 ? "float" : kiln_dtype_name(a->dtype);
    char args[96];
    snprintf(args, sizeof args, "const %s *x, const %s *y",
             f16 ? "ushort" : t, f16 ? "ushort" : t);
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
        .arguments = args, .out_type = t, .neutral = "0", .reduce = "a+b",
        .map = f16 ? "kiln_h2f(x[i])*kiln_h2f(y[i])" : "x[i]*y[i]",
        .name = "kiln_dot");
    kiln_arg v[2] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b)};
    return run_builtin(queue, "kiln_array_dot", &d, NULL, NULL, 0, 2, v,
                       result, host_result, num_wait, wait, event);
}

/* Blocking forms: the asynchronous one, then a wait for its event. */
static kiln_status wait_for(kiln_status st, kiln_event *e) {
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}

kiln_status kiln_array_reduce(kiln_queue *queue, kiln_reduce_op op,
                              kiln_array *a, void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reduce: host_result is NULL");
    kiln_event *e = NULL;
    kiln_status st = kiln_array_reduce_async(queue, op, a, NULL, host_result,
                                             0, NULL, &e);
    return wait_for(st, e);
}

kiln_status kiln_array_dot(kiln_queue *queue, kiln_array *a, kiln_array *b,
                           void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_dot: host_result is NULL");
    kiln_event *e = NULL;
    kiln_status st = kiln_array_dot_async(queue, a, b, NULL, host_result, 0,
                                          NULL, &e);
    return wait_for(st, e);
}
