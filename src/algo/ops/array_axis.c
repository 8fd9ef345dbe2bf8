/* Reductions along one axis: the reduction generator with an axis
 * (kiln_reduction_launch_axis, kernels/algo_reduce_axis.cl) and the
 * built-in ones over arrays (kiln_array_reduce_axis, kiln_array_var_axis).
 * The first array is seen as (outer, len, inner) around the axis; a
 * contiguous last axis (inner == 1) is read by work-groups along rows, any
 * other by work-items that own columns and walk down them; both cut the
 * axis into chunks across work-groups when there are few outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "algo/gen/knobs.h"
#include "base/error.h"

static size_t ceil_div(size_t a, size_t b) {
    return (a + b - 1) / b;
}

/* The launch shape: items (GPU work-items or CPU blocks) for nout outputs
 * of len elements each: split chunks of the axis per output. */
static size_t pick_split(size_t units, size_t target, size_t len, size_t min_chunk) {
    if (!units || units >= target)
        return 1;
    size_t split = ceil_div(target, units);
    size_t cap = len / min_chunk;
    if (split > cap)
        split = cap;
    return split ? split : 1;
}

/* The split of a GPU column reduction for nout outputs of len elements
 * when `resident` work-items run at once: the smallest whose work-items
 * fill their waves (the last one included) to at least 95%, else the
 * fullest within four waves. On an H100 (792 work-groups of 256 resident)
 * it picks what measured best: 16384 columns 12 chunks (0.39 ms where the
 * 17 of KILN_AXIS_COLS_THREADS took 0.41), 4096 x 65536 rows x columns 3,
 * 2048 x 131072 3 (one chunk, 65% of a wave, took 0.42 ms against 0.38),
 * 65536 x 4096 48. */
size_t kiln__axis_wave_split(size_t nout, size_t len, size_t resident) {
    size_t cap = len / 16 ? len / 16 : 1;
    if (cap <= resident / nout) /* cannot fill one wave: all there is */
        return cap;
    size_t most = (4 * resident + nout - 1) / nout;
    if (most > cap)
        most = cap;
    /* below s0 the work-items fill under 95% of the first wave, the most
     * at s0 - 1: the search starts there (a few steps, whatever nout) */
    size_t s0 = (size_t)ceil(0.95 * (double)resident / (double)nout);
    size_t best = s0 > 1 ? s0 - 1 : 1;
    double best_fill = -1;
    for (size_t s = best; s <= most; s++) {
        size_t t = nout * s, waves = (t + resident - 1) / resident;
        double fill = (double)t / (double)(waves * resident);
        if (fill >= 0.95)
            return s;
        if (fill > best_fill) {
            best_fill = fill;
            best = s;
        }
    }
    return best;
}

/* The launch shape of variant v's axis kernels over (outer, len, inner):
 * the kernel, the chunks each output's axis is cut into, the global size,
 * and whether the kernel writes partials (folded by _axfinish, or fused by
 * each column's last chunk) rather than the outputs. */
typedef struct axis_shape {
    kiln_kernel *k;
    size_t split, global;
    int parts;
} axis_shape;

static axis_shape axis_launch_shape(kiln_queue *queue, const kiln__variant *v,
                                    const kiln__plan *plan, size_t outer, size_t len,
                                    size_t inner) {
    size_t nout = outer * inner, local = v->local;
    size_t bpc = (size_t)kiln__knobs_get()->red_blocks_per_cu;
    size_t split, global;
    int parts = 0;
    kiln_kernel *k;
    if (inner == 1) {
        size_t target = plan->cpu ? (size_t)plan->cu * 4 : plan->cu * bpc;
        split = pick_split(nout, target, len, plan->cpu ? 8192 : 4 * local);
        size_t groups = nout * split;
        size_t cap = plan->cpu ? (size_t)plan->cu * 64 : plan->cu * bpc * 4;
        global = (groups < cap ? groups : cap) * local;
        k = v->k[0];
    } else if (plan->cpu && inner >= 256 && len >= 64) {
        /* (KILN_AXIS_COLS, KILN_AXIS_MINLEN) blocks of up to
         * KILN_AXIS_WIDE columns of one outer index, each chunk folded
         * into its partials (always: a short axis would pay more for the
         * extra pass than it saves) */
        size_t units = outer * ceil_div(inner, 4096); /* KILN_AXIS_WIDE */
        split = pick_split(units, (size_t)plan->cu * 2, len, 16);
        global = units * split;
        parts = 1;
        k = v->k[1];
    } else if (plan->cpu) {
        size_t blocks = ceil_div(nout, 256); /* KILN_AXIS_COLS */
        split = pick_split(blocks, (size_t)plan->cu * 16, len, 64);
        global = blocks * split;
        k = v->k[1];
    } else {
        /* Where the driver tells how many work-groups a compute unit holds
         * (CUDA), whole waves of them: a fraction of a second wave ran as a
         * slow tail (H100, 16384 columns: 1088 work-groups where 792 fit at
         * once, 89% of copy bandwidth). Elsewhere a target number of
         * work-items per compute unit. */
        unsigned occ = 0;
        k = v->k[1];
        if (plan->cuda_c && kiln__knobs_get()->axis_cols_occupancy &&
            kiln_kernel_occupancy(k, kiln_queue_device(queue), local, &occ) != KILN_OK)
            occ = 0;
        size_t resident = (size_t)plan->cu * occ * local;
        if (resident)
            split = kiln__axis_wave_split(nout, len, resident);
        else
            split = pick_split(
                nout, (size_t)plan->cu * (size_t)kiln__knobs_get()->axis_cols_threads, len, 16);
        global = nout * split;
    }
    if (split > 1)
        parts = 1;
    return (axis_shape){ .k = k, .split = split, .global = global, .parts = parts };
}

/* Enqueues the axis kernels of variant v: the bound arguments in b, the
 * geometry (outer, len, inner), the output at element out_off of out. */
static kiln_status axis_enqueue(kiln_queue *queue, kiln_reduction *r, const kiln__variant *v,
                                const kiln__plan *plan, const kiln__bound *b, size_t outer,
                                size_t len, size_t inner, kiln_buffer *out, size_t out_off,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    size_t out_size, final_size;
    kiln_dtype fd;
    const char *ft;
    kiln__reduction_sizes(r, &out_size, &final_size, &fd, &ft);
    size_t nout = outer * inner, local = v->local;
    axis_shape sh = axis_launch_shape(queue, v, plan, outer, len, inner);
    size_t split = sh.split, global = sh.global;
    int parts = sh.parts; /* the kernel writes partials, _axfinish the outputs */
    kiln_kernel *k = sh.k;
    /* GPU columns in chunks: the last chunk of each column combines the
     * partials itself (KILN_AXIS_FUSED), no _axfinish launch */
    int fused = !plan->cpu && inner > 1 && split > 1 && kiln__knobs_get()->axis_fused;
    kiln__scratch scr = { 0 }, cnt = { 0 };
    kiln_status st = KILN_OK;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    kiln_event *zeroed = NULL;
    if (parts) {
        st = kiln__scratch_get(queue, KILN__SCRATCH_PARTIALS, split * nout * out_size, &scr);
        if (st == KILN_OK && fused)
            st = kiln__scratch_get(queue, KILN__SCRATCH_COUNTERS, nout * sizeof(uint32_t), &cnt);
        if (st == KILN_OK)
            st = kiln__wait_plus(num_wait, wait, scr.dep, cnt.dep, &wl, &nwl);
        if (st == KILN_OK && fused && cnt.fresh) {
            /* a new counter buffer: zero once, all of it (a later call
             * with more columns reuses it); every launch leaves it zero */
            static const uint32_t zero = 0;
            st = kiln_buffer_fill(queue, cnt.buf, &zero, sizeof zero, 0,
                                  cnt.size / sizeof zero * sizeof zero, nwl, wl, &zeroed);
            if (wl != wait)
                free((void *)wl);
            wl = &zeroed;
            nwl = zeroed ? 1 : 0;
        }
    }
    /* without partials the kernels never touch kiln_part: any buffer */
    kiln_buffer *part = parts ? scr.buf : out;
    kiln_event *e1 = NULL, *e2 = NULL;
    if (st == KILN_OK) {
        kiln_arg rows[6] = {
            KILN_ARG_BUF(part),          KILN_ARG_BUF(out),          KILN_ARG_I64((int64_t)out_off),
            KILN_ARG_I64((int64_t)nout), KILN_ARG_I64((int64_t)len), KILN_ARG_I64((int64_t)split)
        };
        kiln_arg cols[9] = { KILN_ARG_BUF(part),
                             KILN_ARG_BUF(out),
                             KILN_ARG_I64((int64_t)out_off),
                             KILN_ARG_I64((int64_t)outer),
                             KILN_ARG_I64((int64_t)len),
                             KILN_ARG_I64((int64_t)inner),
                             KILN_ARG_I64((int64_t)split),
                             KILN_ARG_BUF(fused ? cnt.buf : part),
                             KILN_ARG_I64((int64_t)fused) };
        if (inner == 1)
            st = kiln__launch(queue, k, global, local, rows, 6, b, nwl, wl, &e1);
        else
            st = kiln__launch(queue, k, global, local, cols, 9, b, nwl, wl, &e1);
    }
    if (wl != wait && wl != &zeroed)
        free((void *)wl);
    kiln__event_drop(&zeroed);
    if (fused && (cnt.buf || cnt.dep))
        kiln__scratch_put(queue, &cnt, e1);
    if (st == KILN_OK && parts && !fused) {
        kiln_arg fin[7] = { KILN_ARG_BUF(part),
                            KILN_ARG_BUF(out),
                            KILN_ARG_I64((int64_t)out_off),
                            KILN_ARG_I64((int64_t)nout),
                            KILN_ARG_I64((int64_t)split),
                            KILN_ARG_I64((int64_t)inner),
                            KILN_ARG_I64((int64_t)len) };
        /* CPU: a few work-items over contiguous ranges of outputs */
        size_t fg = plan->cpu && nout > (size_t)plan->cu * 4 ? (size_t)plan->cu * 4 : nout;
        st = kiln__launch(queue, v->k[2], fg, local, fin, 7, NULL, 1, &e1, &e2);
    } else {
        e2 = e1;
        e1 = NULL;
    }
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

/* The first array argument of a launch (the range's shape). */
static kiln_array *first_array(const kiln__gen *gen, size_t num_args, const kiln_arg *args) {
    size_t k = gen->args.first_array;
    if (k >= num_args || args[k].kind != KILN_ARG_ARRAY)
        return NULL;
    return args[k].value.array;
}

/* Checks an axis (negative counts from the end) of an ndim array and
 * gives its geometry. */
static kiln_status axis_geometry(const kiln_array *a, int axis, const char *what, unsigned *ax,
                                 size_t *outer, size_t *len, size_t *inner) {
    if (axis < -(int)a->ndim || axis >= (int)a->ndim)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: axis %d is out of range for an array of "
                               "%u dimensions",
                               what, axis, a->ndim);
    *ax = (unsigned)(axis < 0 ? axis + (int)a->ndim : axis);
    *outer = *inner = 1;
    for (unsigned d = 0; d < a->ndim; d++) {
        if (d < *ax)
            *outer *= a->shape[d];
        else if (d > *ax)
            *inner *= a->shape[d];
    }
    *len = a->shape[*ax];
    return KILN_OK;
}

/* The reduction generator over the first array a seen as (outer, len,
 * inner) in C order (len the reduced part), into out (outer * inner
 * elements, contiguous). */
static kiln_status launch_geometry(kiln_queue *queue, kiln_reduction *reduction, const char *what,
                                   kiln_array *a, size_t outer, size_t len, size_t inner,
                                   const char *reduced, size_t num_args, const kiln_arg *args,
                                   kiln_array *out, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    kiln__gen *gen = (kiln__gen *)reduction; /* the base is first */
    kiln__plan plan;
    kiln__bound b = { 0 };
    kiln_status st = kiln__gen_prepare(queue, gen, a->size, num_args, args, 0, what, &plan, &b);
    size_t out_size, final_size;
    kiln_dtype fd;
    const char *ft;
    kiln__reduction_sizes(reduction, &out_size, &final_size, &fd, &ft);
    if (st == KILN_OK && out->context != gen->context)
        st = kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: out belongs to another context", what);
    if (st == KILN_OK &&
        ((fd && out->dtype != fd && !(fd == KILN_UINT8 && out->dtype == KILN_BOOL)) ||
         (!fd && kiln_dtype_size(out->dtype) != final_size)))
        st = kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: out has dtype %s, the reduction gives %s",
                             what, kiln_dtype_name(out->dtype), ft);
    if (st == KILN_OK && (out->size != outer * inner || !kiln__array_contiguous(out)))
        st = kiln__error_set(KILN_ERROR_MISMATCH, 0,
                             "%s: out must be a contiguous array of %zu "
                             "elements (the shape without %s); it has "
                             "%zu%s",
                             what, outer * inner, reduced, out->size,
                             kiln__array_contiguous(out) ? "" : " and is strided");
    kiln__variant *v = NULL;
    if (st == KILN_OK && out->size == 0) {
        if (event)
            st = kiln_queue_marker(queue, num_wait, wait, event);
    } else if (st == KILN_OK) {
        st = kiln__reduction_axis_variant(reduction, b.layout, &plan, &v);
        if (st == KILN_OK)
            st = axis_enqueue(queue, reduction, v, &plan, &b, outer, len, inner, out->buffer,
                              out->offset, num_wait, wait, event);
    }
    kiln__bound_free(&b);
    return st;
}

kiln_status kiln_reduction_launch_axis(kiln_queue *queue, kiln_reduction *reduction, int axis,
                                       size_t num_args, const kiln_arg *args, kiln_array *out,
                                       size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event) {
    static const char what[] = "kiln_reduction_launch_axis";
    if (event)
        *event = NULL;
    if (!queue || !reduction || !out || (num_args && !args))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: queue, reduction, args and out are "
                               "required",
                               what);
    if (kiln__reduction_has_initial(reduction))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: a reduction with an initial value cannot "
                               "run along an axis yet",
                               what);
    kiln__gen *gen = (kiln__gen *)reduction; /* the base is first */
    kiln_array *a = first_array(gen, num_args, args);
    if (!a)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: argument %zu ('%s') must be an array: its "
                               "shape is the range",
                               what, gen->args.first_array,
                               gen->args.v[gen->args.first_array].name);
    unsigned ax = 0;
    size_t outer = 0, len = 0, inner = 0;
    kiln_status st = axis_geometry(a, axis, what, &ax, &outer, &len, &inner);
    if (st != KILN_OK)
        return st;
    char reduced[32];
    snprintf(reduced, sizeof reduced, "axis %u", ax);
    return launch_geometry(queue, reduction, what, a, outer, len, inner, reduced, num_args, args,
                           out, num_wait, wait, event);
}

/* ------------------------------------------------- built-in reductions */

kiln_dtype kiln_dtype_reduce_axis_result(kiln_reduce_op op, kiln_dtype dtype) {
    if (!kiln_dtype_size(dtype))
        return (kiln_dtype)0;
    if (op == KILN_REDUCE_MEAN || op == KILN_REDUCE_VAR || op == KILN_REDUCE_STD)
        return dtype == KILN_FLOAT16 || dtype == KILN_FLOAT32 ? KILN_FLOAT32 : KILN_FLOAT64;
    return kiln_dtype_reduce_result(op, dtype);
}

/* The texts of a built-in axis reduction. */
typedef struct axis_text {
    char args[64], map[160], neutral[160], pre[1200], finish[200];
    kiln__arg_text tx;
} axis_text;

/* Welford's one-pass update is Chan et al.'s merge with a count of one:
 * every merge of the mean/var/std reductions is that formula, in double. */
static const char welford_preamble[] = "typedef struct { double n, mean, m2; } kiln_welford;\n"
                                       "KILN_FUNC kiln_welford kiln_welford_make(double n, double "
                                       "mean, double m2)\n"
                                       "{ kiln_welford w; w.n = n; w.mean = mean; w.m2 = m2; "
                                       "return w; }\n"
                                       "KILN_FUNC kiln_welford kiln_welford_merge(kiln_welford a, "
                                       "kiln_welford b)\n"
                                       "{\n"
                                       "    if (a.n == 0) return b;\n"
                                       "    if (b.n == 0) return a;\n"
                                       "    double n = a.n + b.n, d = b.mean - a.mean;\n"
                                       "    return kiln_welford_make(n, a.mean + d * (b.n / n),\n"
                                       "                             a.m2 + b.m2 + d * d * (a.n * "
                                       "b.n / n));\n"
                                       "}\n"
                                       "#define KILN_NAN_D ((double)kiln_as_float(0x7fc00000u))\n";

/* Fills d (and finish/final type) for op over dtype; ddof for VAR/STD. */
static void axis_desc(kiln_reduce_op op, kiln_dtype dtype, double ddof, axis_text *t,
                      kiln_reduction_desc *d, const char **finish, const char **final_type,
                      size_t *final_size) {
    int f16 = dtype == KILN_FLOAT16;
    /* a bool array is read as its uchar bytes */
    kiln_dtype et = f16 ? KILN_FLOAT32 : dtype == KILN_BOOL ? KILN_UINT8 : dtype;
    kiln_dtype rd = kiln_dtype_reduce_axis_result(op, dtype);
    const char *rt = kiln__bits_type(rd);
    const char *X = f16 ? "kiln_h2f(x[i])" : "x[i]";
    snprintf(t->args, sizeof t->args, "const %s *x", f16 ? "ushort" : kiln_dtype_name(et));
    *d = KILN_REDUCTION_DESC(.arguments = t->args, .out_type = rt, .neutral = "0", .reduce = "a+b",
                             .map = X, .name = "kiln_sum_axis");
    *finish = NULL;
    *final_type = NULL;
    *final_size = 0;
    int fl = kiln__is_float_dtype(et);
    switch ((int)op) { /* MEAN..STD are outside the enum */
    case KILN_REDUCE_PROD:
        d->neutral = "1";
        d->reduce = "a*b";
        d->name = "kiln_prod_axis";
        break;
    case KILN_REDUCE_MIN:
    case KILN_REDUCE_MAX: {
        int mx = op == KILN_REDUCE_MAX;
        d->neutral = mx ? kiln__dtype_min_literal(et, t->neutral, sizeof t->neutral)
                        : kiln__dtype_max_literal(et, t->neutral, sizeof t->neutral);
        /* a NaN propagates, as in kiln_array_reduce and NumPy */
        d->reduce = mx ? (fl ? "(b > a || b != b) ? b : a" : "b > a ? b : a")
                       : (fl ? "(b < a || b != b) ? b : a" : "b < a ? b : a");
        d->name = mx ? "kiln_max_axis" : "kiln_min_axis";
        break;
    }
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        if (op == KILN_REDUCE_NORM2) {
            snprintf(t->map, sizeof t->map, "(%s)%s*(%s)%s", rt, X, rt, X);
            *finish = "sqrt(a)";
        } else {
            snprintf(t->map, sizeof t->map, "fabs((%s)%s)", rt, X);
        }
        if (op == KILN_REDUCE_NORM_INF)
            d->reduce = "(b > a || b != b) ? b : a";
        d->map = t->map;
        d->name = "kiln_norm_axis";
        break;
    case KILN_REDUCE_ARGMIN:
    case KILN_REDUCE_ARGMAX:
        kiln__arg_desc(op == KILN_REDUCE_ARGMAX, et, X, &t->tx, d);
        /* the template turns the flat index into the index along the axis */
        snprintf(t->pre, sizeof t->pre, "#define KILN_AXIS_ARG 1\n%s", t->tx.pre);
        d->preamble = t->pre;
        d->name = op == KILN_REDUCE_ARGMAX ? "kiln_argmax_axis" : "kiln_argmin_axis";
        *finish = "a.i == 9223372036854775807L ? -1L : a.i";
        *final_type = "long";
        *final_size = 8;
        break;
    case KILN_REDUCE_MEAN:
    case KILN_REDUCE_VAR:
    case KILN_REDUCE_STD:
        snprintf(t->map, sizeof t->map, "kiln_welford_make(1, (double)%s, 0)", X);
        d->preamble = welford_preamble;
        d->out_type = "kiln_welford";
        d->out_size = 24;
        d->neutral = "kiln_welford_make(0, 0, 0)";
        d->reduce = "kiln_welford_merge(a, b)";
        d->map = t->map;
        if (op == KILN_REDUCE_MEAN) {
            d->name = "kiln_mean_axis";
            snprintf(t->finish, sizeof t->finish, "(%s)(a.n > 0 ? a.mean : KILN_NAN_D)", rt);
        } else {
            d->name = op == KILN_REDUCE_STD ? "kiln_std_axis" : "kiln_var_axis";
            snprintf(t->finish, sizeof t->finish,
                     "(%s)(a.n - %.17g > 0 ? %s(a.m2 / (a.n - %.17g)) : "
                     "KILN_NAN_D)",
                     rt, ddof, op == KILN_REDUCE_STD ? "sqrt" : "", ddof);
        }
        *finish = t->finish;
        *final_type = rt;
        *final_size = kiln_dtype_size(rd);
        break;
    default: /* SUM */
        break;
    }
}

static int known_op(kiln_reduce_op op) {
    return (op >= KILN_REDUCE_SUM && op <= KILN_REDUCE_ARGMAX) || op == KILN_REDUCE_MEAN ||
           op == KILN_REDUCE_VAR || op == KILN_REDUCE_STD;
}

/* The reduced axes of an ndim array: naxes entries of axes (negative
 * count from the end; NULL: all axes), each once. mask[d] = 1 for a
 * reduced d; *text names them for messages. */
static kiln_status axes_mask(const char *what, unsigned ndim, size_t naxes, const int *axes,
                             unsigned char *mask, char *text, size_t cap) {
    memset(mask, 0, KILN_ARRAY_MAX_DIMS);
    if (!axes) {
        memset(mask, 1, ndim);
        snprintf(text, cap, "all axes");
        return KILN_OK;
    }
    if (naxes > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: %zu axes for an array of %u dimensions", what, naxes, ndim);
    int at = snprintf(text, cap, "axes (");
    for (size_t k = 0; k < naxes; k++) {
        int ax = axes[k];
        if (ax < -(int)ndim || ax >= (int)ndim)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: axis %d is out of range for an array of "
                                   "%u dimensions",
                                   what, ax, ndim);
        unsigned d = (unsigned)(ax < 0 ? ax + (int)ndim : ax);
        if (mask[d])
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: axis %d is given twice (as %u)", what, ax, d);
        mask[d] = 1;
        if (at > 0 && (size_t)at < cap)
            at += snprintf(text + at, cap - (size_t)at, "%s%u", k ? ", " : "", d);
    }
    if (at > 0 && (size_t)at < cap)
        snprintf(text + at, cap - (size_t)at, ")");
    return KILN_OK;
}

/* A view of a with the kept axes first and the reduced ones (mask) last,
 * each in their order; NULL when out of memory. */
static kiln_array *reduced_last(kiln_array *a, const unsigned char *mask) {
    kiln_array *src = kiln__array_clone_header(a);
    if (!src)
        return NULL;
    unsigned j = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned d = 0; d < a->ndim; d++)
            if (mask[d] == pass) {
                src->shape[j] = a->shape[d];
                src->strides[j] = a->strides[d];
                j++;
            }
    return src;
}

static kiln_status reduce_axes(kiln_queue *queue, const char *what, kiln_reduce_op op,
                               kiln_array *a, size_t naxes, const int *axes, double ddof,
                               int keepdims, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event, kiln_array **out) {
    if (event)
        *event = NULL;
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: out is required", what);
    *out = NULL;
    kiln_status st = kiln__array_check_queue(queue, a, what);
    if (st != KILN_OK)
        return st;
    if (!known_op(op))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown op %d", what, (int)op);
    unsigned char mask[KILN_ARRAY_MAX_DIMS];
    char reduced[64];
    st = axes_mask(what, a->ndim, naxes, axes, mask, reduced, sizeof reduced);
    if (st != KILN_OK)
        return st;
    int arg = op == KILN_REDUCE_ARGMIN || op == KILN_REDUCE_ARGMAX;
    unsigned nred = 0, first = a->ndim, lastd = 0;
    for (unsigned d = 0; d < a->ndim; d++)
        if (mask[d]) {
            nred++;
            if (first == a->ndim)
                first = d;
            lastd = d;
        }
    if (arg && nred != 1)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: argmin/argmax take exactly one axis (%u given; "
                               "flatten with kiln_array_reshape first)",
                               what, nred);
    /* The geometry (outer, len, inner): the reduced axes in one run keep
     * a's own layout; others read a view with them moved last. */
    int run = nred == 0 || lastd - first + 1 == nred;
    size_t outer = 1, len = 1, inner = 1;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    unsigned nd = 0;
    for (unsigned d = 0; d < a->ndim; d++) {
        if (mask[d])
            len *= a->shape[d];
        else if (run && nred && d > lastd)
            inner *= a->shape[d];
        else
            outer *= a->shape[d];
        if (!mask[d])
            shape[nd++] = a->shape[d];
        else if (keepdims)
            shape[nd++] = 1;
    }
    int no_identity = op == KILN_REDUCE_MIN || op == KILN_REDUCE_MAX || arg;
    if (no_identity && len == 0 && outer * inner > 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a zero-size reduction over %s has "
                               "no identity for this op (as in NumPy)",
                               what, reduced);
    kiln_array *src = run ? a : reduced_last(a, mask);
    if (!src)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    kiln_context *ctx = kiln_queue_context(queue);
    axis_text t;
    kiln_reduction_desc d;
    const char *finish, *final_type;
    size_t final_size;
    axis_desc(op, a->dtype, ddof, &t, &d, &finish, &final_type, &final_size);
    st = kiln__array_make(ctx, kiln_dtype_reduce_axis_result(op, a->dtype), nd, shape, NULL, what,
                          out);
    kiln__sb key = { 0 };
    kiln__sb_addf(&key, "axisreduce|%s|%s|%s|%s|%s|%s|%s|%s", d.arguments, d.out_type, d.neutral,
                  d.reduce, d.map, d.preamble ? d.preamble : "", finish ? finish : "", d.name);
    if (st == KILN_OK && key.oom)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    kiln__gen *gen = NULL;
    kiln__reduction_make_arg ma = { ctx, &d, finish, final_type, final_size };
    if (st == KILN_OK)
        st = kiln__gen_cached(ctx, key.p, kiln__reduction_make, &ma, &gen);
    kiln__sb_free(&key);
    kiln_arg v = KILN_ARG_ARRAY(src);
    if (st == KILN_OK)
        st = launch_geometry(queue, (kiln_reduction *)gen, what, src, outer, len, inner, reduced, 1,
                             &v, *out, num_wait, wait, event);
    kiln__gen_release(gen);
    if (src != a)
        kiln_array_release(src);
    if (st != KILN_OK) {
        kiln_array_release(*out);
        *out = NULL;
        /* named once: the launch's own messages already start with what */
        if (strncmp(kiln_last_error_message(), what, strlen(what)) != 0)
            st = kiln__error_prefix(st, "%s", what);
        return st;
    }
    return KILN_OK;
}

static kiln_status reduce_axis(kiln_queue *queue, kiln_reduce_op op, kiln_array *a, int axis,
                               double ddof, int keepdims, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event, kiln_array **out) {
    return reduce_axes(queue, "kiln_array_reduce_axis", op, a, 1, &axis, ddof, keepdims, num_wait,
                       wait, event, out);
}

kiln_status kiln_array_reduce_axis(kiln_queue *queue, kiln_reduce_op op, kiln_array *a, int axis,
                                   int keepdims, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event, kiln_array **out) {
    return reduce_axis(queue, op, a, axis, 0, keepdims, num_wait, wait, event, out);
}

/* var's and std's ddof: finite, >= 0. */
static kiln_status bad_ddof(const char *what, double ddof, kiln_event **event, kiln_array **out) {
    if (out)
        *out = NULL;
    if (event)
        *event = NULL;
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: ddof must be a finite number >= 0, not %g", what, ddof);
}

kiln_status kiln_array_var_axis(kiln_queue *queue, kiln_array *a, int axis, double ddof, int std,
                                int keepdims, size_t num_wait, kiln_event *const *wait,
                                kiln_event **event, kiln_array **out) {
    if (!(ddof >= 0) || !isfinite(ddof))
        return bad_ddof("kiln_array_var_axis", ddof, event, out);
    return reduce_axis(queue, std ? KILN_REDUCE_STD : KILN_REDUCE_VAR, a, axis, ddof, keepdims,
                       num_wait, wait, event, out);
}

kiln_status kiln_array_reduce_axes(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                   size_t naxes, const int *axes, int keepdims, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    return reduce_axes(queue, "kiln_array_reduce_axes", op, a, naxes, axes, 0, keepdims, num_wait,
                       wait, event, out);
}

kiln_status kiln_array_var_axes(kiln_queue *queue, kiln_array *a, size_t naxes, const int *axes,
                                double ddof, int std, int keepdims, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    if (!(ddof >= 0) || !isfinite(ddof))
        return bad_ddof("kiln_array_var_axes", ddof, event, out);
    return reduce_axes(queue, "kiln_array_var_axes", std ? KILN_REDUCE_STD : KILN_REDUCE_VAR, a,
                       naxes, axes, ddof, keepdims, num_wait, wait, event, out);
}
