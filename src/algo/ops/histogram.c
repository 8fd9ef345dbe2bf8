/* histogram, histogram with edges, bincount (kernels/algo_histogram.cl).
 * One kernel per (input dtype, edge type, mode, weights, bins when
 * privatised): counts go to local memory per work-group where the bins fit
 * (KILN__HIST_PRIV_MAX) and are then added to the result with one global
 * atomic per bin and group; weighted sums use global atomics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/gen/knobs.h"
#include "algo/ops/complex.h"
#include "algo/ops/toolkit_internal.h"
#include "base/error.h"

/* Most bins counted in local memory (16 KiB of uint counters). */
enum { KILN__HIST_PRIV_MAX = 4096 };

enum { MODE_EDGES = 0, MODE_UNIFORM = 1, MODE_DIRECT = 2 };

typedef struct hist_job {
    const char *what;
    kiln_array *a, *weights; /* weights may be NULL */
    int mode;
    size_t nb;
    int edge_double;    /* edge type double (else float) */
    kiln_buffer *edges; /* nb + 1 edges (NULL for MODE_DIRECT) */
    double lo, scale;
} hist_job;

static kiln_status check_weights(kiln_queue *q, const kiln_array *a, const kiln_array *w,
                                 const char *what) {
    if (!w)
        return KILN_OK;
    kiln_status st = kiln__array_check_queue(q, w, what);
    if (st != KILN_OK)
        return st;
    if (w->size != a->size)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: weights have %zu elements, the input %zu", what, w->size,
                               a->size);
    if (w->dtype != KILN_FLOAT32 && w->dtype != KILN_FLOAT64 && w->dtype != KILN_INT32 &&
        w->dtype != KILN_INT64)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: weights of dtype %s; use float32, "
                               "float64, int32 or int64",
                               what, kiln_dtype_name(w->dtype));
    return KILN_OK;
}

/* The kernel's defines for job j. */
static void hist_defines(const hist_job *j, kiln__sb *sb) {
    int f16 = j->a->dtype == KILN_FLOAT16;
    const char *E = j->mode == MODE_DIRECT ? "long" : j->edge_double ? "double" : "float";
    kiln__sb_addf(sb,
                  "#define KILN_HIST_T %s\n#define KILN_HIST_E %s\n"
                  "#define KILN_HIST_X(v) %s\n#define KILN_HIST_MODE %d\n",
                  kiln__bits_type(j->a->dtype), E,
                  f16                      ? "kiln_h2f(v)"
                  : j->mode == MODE_DIRECT ? "(long)(v)"
                                           : "(KILN_HIST_E)(v)",
                  j->mode);
    if (!j->weights) {
        int priv = j->nb <= KILN__HIST_PRIV_MAX;
        kiln__sb_addf(sb, "#define KILN_HIST_PRIV %d\n", priv);
        /* the local array's size, a power of two (few programs); the
         * bins past nb stay 0 */
        if (priv) {
            size_t nb = 64;
            while (nb < j->nb)
                nb *= 2;
            kiln__sb_addf(sb, "#define KILN_HIST_NB %zu\n", nb);
        }
        return;
    }
    kiln__sb_add(sb, "#define KILN_HIST_PRIV 0\n");
    switch (j->weights->dtype) {
    case KILN_FLOAT32:
        kiln__sb_add(sb, "#define KILN_HIST_W float\n#define KILN_HIST_ADD(p, "
                         "v) kiln_atomic_add_float((p), (v))\n");
        break;
    case KILN_FLOAT64:
        kiln__sb_add(sb, "#define KILN_HIST_W double\n#define "
                         "KILN_HIST_ADD_DOUBLE 1\n#define KILN_HIST_ADD(p, v) "
                         "kiln_hist_add_double((p), (v))\n");
        break;
    case KILN_INT32:
        kiln__sb_add(sb, "#define KILN_HIST_W int\n#define KILN_HIST_ADD(p, "
                         "v) kiln_atomic_add_int((p), (v))\n");
        break;
    default: /* INT64: two's complement adds as unsigned */
        kiln__sb_add(sb, "#define KILN_HIST_W long\n#define KILN_HIST_ADD(p, "
                         "v) kiln_atomic_add_ulong((KILN_GLOBAL ulong *)(p), "
                         "(ulong)(v))\n");
        break;
    }
}

/* Zeroes *hist (new, nb elements) and enqueues the counting kernel. */
static kiln_status hist_run(kiln_queue *q, const hist_job *j, size_t num_wait,
                            kiln_event *const *wait, kiln_event **event, kiln_array **hist) {
    kiln_dtype hd = j->weights ? j->weights->dtype : KILN_INT64;
    kiln_event *deps[3] = { 0 };
    kiln_array *x = NULL, *w = NULL;
    kiln_status st = kiln_array_zeros(q, hd, 1, &j->nb, num_wait, wait, &deps[0], hist);
    if (st == KILN_OK)
        st = kiln__tk_dense(q, j->a, num_wait, wait, &x, &deps[1]);
    if (st == KILN_OK && j->weights)
        st = kiln__tk_dense(q, j->weights, num_wait, wait, &w, &deps[2]);
    kiln__sb defs = { 0 };
    hist_defines(j, &defs);
    kiln__gen *gen = NULL;
    kiln__variant *v = NULL;
    kiln__plan plan;
    static const char *const suffix[1] = { "_hist" };
    if (st == KILN_OK && defs.oom)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", j->what);
    if (st == KILN_OK)
        st = kiln__tk_kernels(q, "algo_histogram.cl", "kiln_histogram", defs.p, 1, suffix, &gen, &v,
                              &plan);
    kiln__sb_free(&defs);
    size_t n = x ? x->size : 0;
    if (st == KILN_OK && n) {
        size_t local = v->local, groups;
        int64_t chunk = 0;
        if (plan.cpu) {
            groups = kiln__cpu_groups(&plan, n, 65536);
            chunk = (int64_t)((n + groups - 1) / groups);
        } else {
            /* at least KILN_HIST_ITEMS (8) items a work-item: every group
             * ends by adding its private bins to the same global ones, so
             * a group per item or two made those atomics a cost */
            size_t per = local * (size_t)kiln__knobs_get()->hist_items;
            groups = (n + per - 1) / per;
            if (groups > (size_t)plan.cu * 8)
                groups = (size_t)plan.cu * 8;
        }
        kiln_event *dl[3];
        size_t nd = 0;
        for (int k = 0; k < 3; k++)
            if (deps[k])
                dl[nd++] = deps[k];
        int dbl = j->edge_double;
        kiln_arg E0 = j->mode == MODE_DIRECT ? KILN_ARG_I64(0)
                      : dbl                  ? KILN_ARG_F64(j->lo)
                                             : KILN_ARG_F32((float)j->lo);
        kiln_arg E1 = j->mode == MODE_DIRECT ? KILN_ARG_I64(0)
                      : dbl                  ? KILN_ARG_F64(j->scale)
                                             : KILN_ARG_F32((float)j->scale);
        /* unused buffers (no edges, no weights) get x's: never read */
        kiln_arg args[11] = { KILN_ARG_BUF(x->buffer),
                              KILN_ARG_I64((int64_t)x->offset),
                              KILN_ARG_I64((int64_t)n),
                              KILN_ARG_BUF(j->edges ? j->edges : x->buffer),
                              KILN_ARG_I64((int64_t)j->nb),
                              E0,
                              E1,
                              KILN_ARG_BUF((*hist)->buffer),
                              KILN_ARG_BUF(w ? w->buffer : x->buffer),
                              KILN_ARG_I64(w ? (int64_t)w->offset : 0),
                              KILN_ARG_I64(chunk) };
        kiln_event *e = NULL;
        st = kiln__launch(q, v->k[0], groups * local, local, args, 11, NULL, nd, dl, &e);
        if (st == KILN_OK && event)
            *event = e;
        else
            kiln_event_release(e);
    } else if (st == KILN_OK && event) {
        st = kiln_queue_marker(q, 1, &deps[0], event);
    }
    kiln__gen_release(gen);
    for (int k = 0; k < 3; k++)
        kiln_event_release(deps[k]);
    kiln_array_release(x);
    kiln_array_release(w);
    if (st != KILN_OK) {
        kiln_array_release(*hist);
        *hist = NULL;
    }
    return st;
}

/* The checks every entry point shares. */
static kiln_status hist_begin(kiln_queue *q, kiln_array *a, kiln_array *w, kiln_event **event,
                              kiln_array **out, const char *what) {
    if (event)
        *event = NULL;
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: the result pointer is required",
                               what);
    *out = NULL;
    kiln_status st = kiln__array_check_queue(q, a, what);
    if (st == KILN_OK && kiln__is_complex_dtype(a->dtype))
        /* complex numbers have no order to bin by (NumPy would silently
         * drop the imaginary part) */
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: a %s input has no order to bin by; "
                               "count its real or imaginary view "
                               "(kiln_array_real / kiln_array_imag)",
                               what, kiln_dtype_name(a->dtype));
    if (st == KILN_OK)
        st = check_weights(q, a, w, what);
    return st;
}

kiln_status kiln_array_histogram(kiln_queue *queue, kiln_array *a, size_t bins, double lo,
                                 double hi, kiln_array *weights, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event, kiln_array **hist) {
    static const char what[] = "kiln_array_histogram";
    kiln_status st = hist_begin(queue, a, weights, event, hist, what);
    if (st == KILN_OK)
        st = kiln__check_wait(what, num_wait, wait);
    if (st != KILN_OK)
        return st;
    if (!bins || bins > ((size_t)1 << 31))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: bins = %zu; give 1 to 2^31",
                               what, bins);
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the range [%g, %g] must be finite with "
                               "lo <= hi",
                               what, lo, hi);
    if (lo == hi) { /* NumPy widens an empty range */
        lo -= 0.5;
        hi += 0.5;
    }
    /* the edges as numpy.linspace: lo + k*step in double, the last one hi,
     * rounded to the edge type (float for float32/float16 input) */
    int dbl = a->dtype != KILN_FLOAT32 && a->dtype != KILN_FLOAT16;
    size_t es = dbl ? 8 : 4;
    void *e = kiln__malloc((bins + 1) * es);
    if (!e)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    double step = (hi - lo) / (double)bins;
    for (size_t k = 0; k <= bins; k++) {
        double v = k == bins ? hi : lo + (double)k * step;
        if (dbl)
            ((double *)e)[k] = v;
        else
            ((float *)e)[k] = (float)v;
    }
    kiln_buffer *eb = NULL;
    st = kiln_buffer_create(kiln_queue_context(queue), (bins + 1) * es, 0, e, &eb);
    free(e);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    hist_job j = { what, a, weights, MODE_UNIFORM, bins, dbl, eb, lo, (double)bins / (hi - lo) };
    st = hist_run(queue, &j, num_wait, wait, event, hist);
    kiln_buffer_release(eb);
    return st;
}

kiln_status kiln_array_histogram_edges(kiln_queue *queue, kiln_array *a, kiln_array *edges,
                                       kiln_array *weights, size_t num_wait,
                                       kiln_event *const *wait, kiln_event **event,
                                       kiln_array **hist) {
    static const char what[] = "kiln_array_histogram_edges";
    kiln_status st = hist_begin(queue, a, weights, event, hist, what);
    if (st == KILN_OK)
        st = kiln__check_wait(what, num_wait, wait);
    if (st == KILN_OK)
        st = kiln__array_check_queue(queue, edges, what);
    if (st != KILN_OK)
        return st;
    if (edges->dtype != KILN_FLOAT64 || edges->ndim != 1 || edges->size < 2)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: edges must be a 1-D float64 array of at "
                               "least 2 values",
                               what);
    /* the edges are read back to check their order (Blocks) */
    size_t ne = edges->size;
    double *h = kiln__malloc(ne * sizeof *h);
    if (!h)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln_array_read(queue, edges, h);
    for (size_t k = 0; st == KILN_OK && k < ne; k++)
        if (!isfinite(h[k]) || (k && h[k] < h[k - 1]))
            st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                 "%s: edges must be finite and "
                                 "non-decreasing (edge %zu is %g)",
                                 what, k, h[k]);
    kiln_buffer *eb = NULL;
    if (st == KILN_OK)
        st = kiln_buffer_create(kiln_queue_context(queue), ne * 8, 0, h, &eb);
    free(h);
    if (st != KILN_OK)
        return st;
    hist_job j = { what, a, weights, MODE_EDGES, ne - 1, 1, eb, 0, 0 };
    st = hist_run(queue, &j, num_wait, wait, event, hist);
    kiln_buffer_release(eb);
    return st;
}

/* bincount's checks: an integer input, a length of at most 2^40 (the same
 * limit as for the largest value: a larger count array cannot be
 * allocated anyway; above 2^63 the kernel's sizing looped for ever, issue
 * 41). */
static kiln_status bincount_begin(kiln_queue *queue, kiln_array *a, kiln_array *weights,
                                  kiln_event **event, kiln_array **counts, size_t length,
                                  const char *length_name, const char *what) {
    kiln_status st = hist_begin(queue, a, weights, event, counts, what);
    if (st != KILN_OK)
        return st;
    if (kiln__is_float_dtype(a->dtype))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the input must have an integer or bool dtype, "
                               "not %s",
                               what, kiln_dtype_name(a->dtype));
    if (length > ((size_t)1 << 40))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: %s = %zu; give at most 2^40",
                               what, length_name, length);
    return KILN_OK;
}

/* The integer of dtype d at p as an int64; a uint64 above 2^40 (past any
 * count array) reads as -1. */
static int64_t count_value(kiln_dtype d, const char *p) {
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
    } v;
    memcpy(&v, p, 8);
    switch (d) {
    case KILN_INT8:
        return v.i8;
    case KILN_BOOL:
    case KILN_UINT8:
        return v.u8;
    case KILN_INT16:
        return v.i16;
    case KILN_UINT16:
        return v.u16;
    case KILN_INT32:
        return v.i32;
    case KILN_UINT32:
        return v.u32;
    case KILN_UINT64:
        return v.u64 > ((uint64_t)1 << 40) ? -1 : (int64_t)v.u64;
    default:
        return v.i64;
    }
}

kiln_status kiln_array_bincount(kiln_queue *queue, kiln_array *a, kiln_array *weights,
                                size_t minlength, kiln_array **counts) {
    static const char what[] = "kiln_array_bincount";
    kiln_status st = bincount_begin(queue, a, weights, NULL, counts, minlength, "minlength", what);
    if (st != KILN_OK)
        return st;
    size_t len = minlength;
    if (a->size) {
        int64_t mn = 0, mx = 0;
        char r[8], rmin[8];
        /* the largest value sizes the result; a signed input's smallest
         * must not be negative. Both reductions go before one wait (a
         * round trip each cost a GPU some 10 us); unsigned inputs need
         * only the largest. */
        int sgn = kiln__is_signed_dtype(a->dtype);
        kiln_event *ev[2] = { NULL, NULL };
        if (sgn)
            st = kiln_array_reduce_async(queue, KILN_REDUCE_MIN, a, NULL, rmin, 0, NULL, &ev[0]);
        if (st == KILN_OK)
            st = kiln_array_reduce_async(queue, KILN_REDUCE_MAX, a, NULL, r, 0, NULL, &ev[1]);
        /* the host results are written when the events complete: wait
         * for whatever was enqueued, even after a failure */
        kiln_status wst = kiln_event_wait_all(2, ev);
        kiln_event_release(ev[0]);
        kiln_event_release(ev[1]);
        if (st == KILN_OK)
            st = wst;
        if (st != KILN_OK)
            return kiln__error_prefix(st, "%s", what);
        if (sgn)
            mn = count_value(a->dtype, rmin);
        if (mn < 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the input holds a negative value "
                                   "(%lld)",
                                   what, (long long)mn);
        mx = count_value(a->dtype, r);
        if (mx < 0 || mx >= ((int64_t)1 << 40))
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: the largest value is too large for "
                                   "a count array",
                                   what);
        if ((size_t)mx + 1 > len)
            len = (size_t)mx + 1;
    }
    if (!len) { /* numpy.bincount of nothing: an empty array */
        size_t zero = 0;
        return kiln__array_make(kiln_queue_context(queue), weights ? weights->dtype : KILN_INT64, 1,
                                &zero, NULL, what, counts);
    }
    hist_job j = { what, a, weights, MODE_DIRECT, len, 0, NULL, 0, 0 };
    kiln_event *e = NULL;
    st = hist_run(queue, &j, 0, NULL, &e, counts);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    if (st != KILN_OK) {
        kiln_array_release(*counts);
        *counts = NULL;
    }
    return st;
}

kiln_status kiln_array_bincount_async(kiln_queue *queue, kiln_array *a, kiln_array *weights,
                                      size_t length, size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event, kiln_array **counts) {
    static const char what[] = "kiln_array_bincount_async";
    kiln_status st = bincount_begin(queue, a, weights, event, counts, length, "length", what);
    if (st != KILN_OK)
        return st;
    if (!length) /* nothing is counted: an empty array, after the wait list */
        return kiln_array_zeros(queue, weights ? weights->dtype : KILN_INT64, 1, &length, num_wait,
                                wait, event, counts);
    hist_job j = { what, a, weights, MODE_DIRECT, length, 0, NULL, 0, 0 };
    return hist_run(queue, &j, num_wait, wait, event, counts);
}
