/* Launch arguments of a generator: checked against its declarations
 * (kinds, dtypes, contexts, the range n and the shapes) and bound to the
 * kernel's arguments (buffers, offsets, strides, converted scalars). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/array/array_internal.h"
#include "base/error.h"

kiln_status kiln__bound_push(kiln__bound *b, kiln_arg a) {
    if (b->nk == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        kiln_arg *p = kiln__realloc(b->kargs, cap * sizeof *p);
        if (!p)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kernel arguments");
        b->kargs = p;
        b->cap = cap;
    }
    b->kargs[b->nk++] = a;
    return KILN_OK;
}

void kiln__bound_free(kiln__bound *b) {
    free(b->kargs);
    memset(b, 0, sizeof *b);
}

kiln_status kiln__arg_convert(kiln_arg in, kiln_dtype dtype, kiln_arg *out) {
    if (in.kind != KILN_ARG_SCALAR)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0, "expected a scalar value");
    if (in.dtype == dtype) {
        *out = in;
        return KILN_OK;
    }
    double d = 0;
    int64_t s = 0;
    uint64_t u = 0;
    int isf = 0, isu = 0;
    switch (in.dtype) {
    case KILN_INT8:
        s = in.value.i8;
        break;
    case KILN_UINT8:
        s = in.value.u8;
        break;
    case KILN_INT16:
        s = in.value.i16;
        break;
    case KILN_UINT16:
        s = in.value.u16;
        break;
    case KILN_INT32:
        s = in.value.i32;
        break;
    case KILN_UINT32:
        s = in.value.u32;
        break;
    case KILN_INT64:
        s = in.value.i64;
        break;
    case KILN_UINT64:
        u = in.value.u64;
        isu = 1;
        break;
    case KILN_FLOAT32:
        d = in.value.f32;
        isf = 1;
        break;
    case KILN_FLOAT64:
        d = in.value.f64;
        isf = 1;
        break;
    default:
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cannot convert a scalar of dtype %s",
                               kiln_dtype_name(in.dtype));
    }
    if (!isf)
        d = isu ? (double)u : (double)s;
    if (isf) {
        s = (int64_t)d;
        u = (uint64_t)(d < 0 ? 0 : d);
    } else if (isu) {
        s = (int64_t)u;
    } else {
        u = (uint64_t)s;
    }
    kiln_arg r = { .kind = KILN_ARG_SCALAR, .dtype = dtype };
    switch (dtype) {
    case KILN_INT8:
        r.value.i8 = (int8_t)s;
        break;
    case KILN_UINT8:
        r.value.u8 = (uint8_t)u;
        break;
    case KILN_INT16:
        r.value.i16 = (int16_t)s;
        break;
    case KILN_UINT16:
        r.value.u16 = (uint16_t)u;
        break;
    case KILN_INT32:
        r.value.i32 = (int32_t)s;
        break;
    case KILN_UINT32:
        r.value.u32 = (uint32_t)u;
        break;
    case KILN_INT64:
        r.value.i64 = s;
        break;
    case KILN_UINT64:
        r.value.u64 = u;
        break;
    case KILN_FLOAT32:
        r.value.f32 = (float)d;
        break;
    case KILN_FLOAT64:
        r.value.f64 = d;
        break;
    default:
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cannot convert a scalar to dtype %s",
                               kiln_dtype_name(dtype));
    }
    *out = r;
    return KILN_OK;
}

/* The strided layout of a launch: the first array's dimensions as the
 * kernel sees them, nd (3, or KILN_ARRAY_MAX_DIMS) padded in front. Up to
 * 3 dimensions they are the array's own; beyond, adjacent dimensions that
 * every shaped array steps through as one (stride[d] = stride[d+1] *
 * shape[d+1]) are merged into groups, and dimensions of size 1 dropped:
 * a 4-D view that merges into 3 keeps the 3-D index math. Group g is
 * dims[g0..g1] of the array; its stride is that of its last dimension. */
typedef struct geom {
    int nd;
    size_t sh[KILN_ARRAY_MAX_DIMS];
    unsigned last[KILN_ARRAY_MAX_DIMS]; /* the array dimension whose stride group g takes */
    int own;                            /* 1: the array's own dimensions (ndim <= 3) */
} geom;

static int shaped_arg(const kiln__gargs *args, size_t k, int any_shape) {
    return args->v[k].is_ptr && (!any_shape || k == args->first_array);
}

static void geom_of(const kiln__gargs *args, const kiln_arg *vals, int any_shape, geom *g) {
    const kiln_array *first = vals[args->first_array].value.array;
    memset(g, 0, sizeof *g);
    if (first->ndim <= 3) {
        g->nd = 3;
        g->own = 1;
        return;
    }
    size_t sh[KILN_ARRAY_MAX_DIMS];
    unsigned last[KILN_ARRAY_MAX_DIMS];
    int m = 0;
    for (unsigned d = 0; d < first->ndim; d++) {
        if (first->shape[d] == 1)
            continue;
        int merge = m > 0;
        for (size_t k = 0; merge && k < args->n; k++) {
            if (!shaped_arg(args, k, any_shape))
                continue;
            const kiln_array *a = vals[k].value.array;
            ptrdiff_t step;
            merge = !__builtin_mul_overflow(a->strides[d], (ptrdiff_t)a->shape[d], &step) &&
                    a->strides[last[m - 1]] == step;
        }
        if (merge) {
            sh[m - 1] *= first->shape[d];
            last[m - 1] = d;
        } else {
            sh[m] = first->shape[d];
            last[m] = d;
            m++;
        }
    }
    g->nd = m <= 3 ? 3 : KILN_ARRAY_MAX_DIMS;
    int pad = g->nd - m;
    for (int d = 0; d < g->nd; d++) {
        g->sh[d] = d < pad ? 1 : sh[d - pad];
        g->last[d] = d < pad ? KILN_ARRAY_MAX_DIMS : last[d - pad];
    }
}

/* a's shape and strides in the layout g. */
static void geom_apply(const geom *g, const kiln_array *a, size_t *sh, ptrdiff_t *st) {
    if (g->own) { /* padded in front to 3 dimensions */
        unsigned pad = 3 - a->ndim;
        for (unsigned d = 0; d < 3; d++) {
            sh[d] = d < pad ? 1 : a->shape[d - pad];
            st[d] = d < pad ? 0 : a->strides[d - pad];
        }
        return;
    }
    for (int d = 0; d < g->nd; d++) {
        sh[d] = g->sh[d];
        st[d] = g->last[d] < KILN_ARRAY_MAX_DIMS ? a->strides[g->last[d]] : 0;
    }
}

/* Checks one array argument k against its declaration; *strided is set when
 * it is a shaped, non-contiguous view. */
static kiln_status check_array(const kiln__gargs *args, size_t k, const kiln_array *a,
                               const kiln_array *first, size_t n, kiln_context *ctx, int any_shape,
                               const char *what, int *strided) {
    const kiln__garg *g = &args->v[k];
    if (a->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' belongs to another context "
                               "than the queue",
                               what, g->name);
    /* A float16 array may be passed to a ushort pointer: its bits,
     * converted in the kernel with kiln_h2f / kiln_f2h. A struct element
     * type (dtype 0) cannot be checked. */
    int f16_bits = g->dtype == KILN_UINT16 && a->dtype == KILN_FLOAT16;
    /* A bool array is passed to a uchar pointer (its bytes are 0 or 1). */
    int bool_bits = g->dtype == KILN_UINT8 && a->dtype == KILN_BOOL;
    if (g->dtype && g->dtype != a->dtype && !f16_bits && !bool_bits)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' is declared %s but has dtype "
                               "%s",
                               what, g->name, g->type, kiln_dtype_name(a->dtype));
    int contiguous = kiln__array_contiguous(a);
    if (any_shape && k != args->first_array) {
        if (!contiguous)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: array '%s' is a strided view; with "
                                   "KILN_ELEMENTWISE_ANY_SHAPE only the first "
                                   "array may be strided (copy it first)",
                                   what, g->name);
        return KILN_OK;
    }
    if (any_shape && contiguous)
        return KILN_OK; /* indexed freely: any size */
    if (a->size != n)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' has %zu elements, the range "
                               "has n = %zu",
                               what, g->name, a->size, n);
    int same = a->ndim == first->ndim;
    for (unsigned d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == first->shape[d];
    if (!same) {
        char ta[96], tf[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' is %s, another shape than "
                               "'%s', %s",
                               what, g->name, kiln__array_describe(a, ta, sizeof ta),
                               args->v[args->first_array].name,
                               kiln__array_describe(first, tf, sizeof tf));
    }
    if (!contiguous)
        *strided = 1;
    return KILN_OK;
}

/* Checks the kinds of the arguments against the declarations. */
static kiln_status check_kinds(const kiln__gargs *args, size_t num_args, const kiln_arg *vals,
                               const char *what) {
    if (num_args && !vals)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: the argument list is NULL but num_args "
                               "is %zu",
                               what, num_args);
    if (num_args != args->n)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0, "%s: %zu argument%s given, %zu declared",
                               what, num_args, num_args == 1 ? "" : "s", args->n);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr && (vals[k].kind != KILN_ARG_ARRAY || !vals[k].value.array))
            return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                   "%s: argument '%s' is an array: pass "
                                   "KILN_ARG_ARRAY(a) with a non-NULL array",
                                   what, g->name);
        if (!g->is_ptr && vals[k].kind != KILN_ARG_SCALAR)
            return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                   "%s: argument '%s' is a scalar: pass "
                                   "KILN_ARG_I32(x), KILN_ARG_F64(x), ...",
                                   what, g->name);
    }
    return KILN_OK;
}

/* Appends the kernel arguments of the checked values. */
static kiln_status push_values(const kiln__gargs *args, const kiln_arg *vals, int any_shape,
                               const char *what, kiln__bound *b) {
    const kiln_array *first = vals[args->first_array].value.array;
    int strided = b->layout != KILN__CONTIG;
    geom geo;
    geo.nd = 3; /* read only when strided (set by geom_of) */
    geo.own = 1;
    if (strided)
        geom_of(args, vals, any_shape, &geo);
    if (strided && geo.nd > 3)
        b->layout = KILN__STRIDED_ND;
    size_t sh[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t st[KILN_ARRAY_MAX_DIMS];
    if (strided)
        geom_apply(&geo, first, sh, st);
    kiln_status s = kiln__bound_push(b, KILN_ARG_I64((int64_t)b->n));
    for (int d = 1; s == KILN_OK && strided && d < geo.nd; d++)
        s = kiln__bound_push(b, KILN_ARG_I64((int64_t)(sh[d] ? sh[d] : 1)));
    for (size_t k = 0; s == KILN_OK && k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (!g->is_ptr) {
            kiln_arg v;
            s = kiln__arg_convert(vals[k], g->dtype, &v);
            if (s != KILN_OK)
                return kiln__error_prefix(s, "%s: argument '%s'", what, g->name);
            s = kiln__bound_push(b, v);
            continue;
        }
        const kiln_array *a = vals[k].value.array;
        assert(kiln__array_inside(a) && "an array bound to a kernel lies inside its buffer");
        s = kiln__bound_push(b, KILN_ARG_BUF(a->buffer));
        if (s == KILN_OK)
            s = kiln__bound_push(b, KILN_ARG_I64((int64_t)a->offset));
        if (s == KILN_OK && strided && (!any_shape || k == args->first_array)) {
            size_t ash[KILN_ARRAY_MAX_DIMS];
            ptrdiff_t ast[KILN_ARRAY_MAX_DIMS];
            geom_apply(&geo, a, ash, ast);
            for (int d = 0; s == KILN_OK && d < geo.nd; d++)
                s = kiln__bound_push(b, KILN_ARG_I64((int64_t)ast[d]));
        }
    }
    return s;
}

kiln_status kiln__bind_values(kiln_queue *queue, const kiln__gargs *args, size_t n, size_t num_args,
                              const kiln_arg *vals, int any_shape, const char *what,
                              kiln__bound *b) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", what);
    kiln_status s = check_kinds(args, num_args, vals, what);
    if (s != KILN_OK)
        return s;
    kiln_context *ctx = kiln_queue_context(queue);
    const kiln_array *first = vals[args->first_array].value.array;
    int strided = 0;
    for (size_t k = 0; s == KILN_OK && k < args->n; k++)
        if (args->v[k].is_ptr)
            s = check_array(args, k, vals[k].value.array, first, n, ctx, any_shape, what, &strided);
    if (s != KILN_OK)
        return s;
    b->n = n;
    b->layout = strided ? KILN__STRIDED : KILN__CONTIG;
    return push_values(args, vals, any_shape, what, b);
}
