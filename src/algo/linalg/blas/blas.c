/* kiln's BLAS calls (include/kiln/linalg.h): kiln's row-major, strided,
 * batched arrays turned into column-major BLAS operands, and the provider
 * of the queue's device, chosen by the capabilities each provider
 * registers for: cuBLAS where CUDA C compiles, OpenBLAS on the host memory
 * of CPU devices (OpenCL's and the host backend's), CLBlast where OpenCL C
 * compiles (docs/linalg.md says why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/linalg/blas/blas_provider.h"
#include "base/error.h"

int kiln__blas_dtype_index(kiln_dtype d) {
    switch (d) {
    case KILN_FLOAT32:
        return 0;
    case KILN_FLOAT64:
        return 1;
    case KILN_COMPLEX64:
        return 2;
    case KILN_COMPLEX128:
        return 3;
    case KILN_FLOAT16:
        return 4;
    default:
        return -1;
    }
}

/* The providers, in order of preference; each serves the devices its
 * capability fields name (blas_provider.h). */
static const kiln__blas_provider *const providers[] = {
#if KILN_HAVE_CUDA
    &kiln__blas_cublas,
#endif
    &kiln__blas_openblas,
    &kiln__blas_clblast,
};
#define NPROV (sizeof providers / sizeof providers[0])

static int serves(const kiln__blas_provider *p, const kiln_device_info *info) {
    return kiln__lib_serves(p->name, p->languages, p->host, "KILN_BLAS", info);
}

/* The provider for q's device and dtype: the first that serves the device
 * and has the dtype (OpenBLAS has no float16: CLBlast's turn on an OpenCL
 * CPU device). */
static kiln_status pick(kiln_queue *q, kiln_dtype dtype, const char *what,
                        const kiln__blas_provider **out) {
    *out = NULL;
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    kiln_status st = kiln_device_get_info(kiln_queue_device(q), &info);
    if (st != KILN_OK)
        return st;
    if (dtype && kiln__blas_dtype_index(dtype) < 0)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: BLAS has no %s (float16, float32, "
                               "float64, complex64, complex128)",
                               what, kiln_dtype_name(dtype));
    const kiln__blas_provider *p = NULL, *lacks = NULL;
    for (size_t i = 0; i < NPROV && !p; i++) {
        if (!serves(providers[i], &info))
            continue;
        if (dtype && !providers[i]->has_dtype(q, dtype))
            lacks = lacks ? lacks : providers[i];
        else
            p = providers[i];
    }
    if (!p && lacks) {
        lacks->has_dtype(q, dtype); /* its message */
        return kiln__error_prefix(KILN_ERROR_UNSUPPORTED, "%s", what);
    }
    if (!p)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: no BLAS library serves %s (%s)%s%s",
                               what, info.id, info.name, getenv("KILN_BLAS") ? "; KILN_BLAS=" : "",
                               getenv("KILN_BLAS") ? getenv("KILN_BLAS") : "");
    st = p->load();
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    *out = p;
    return KILN_OK;
}

const char *kiln_blas_library(kiln_queue *q) {
    const kiln__blas_provider *p = NULL;
    if (!q)
        return NULL;
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    if (kiln_device_get_info(kiln_queue_device(q), &info) != KILN_OK)
        return NULL;
    pick(q, 0, "kiln_blas_library", &p);
    if (p)
        return p->name;
    /* not loadable: still say which library it would be */
    for (size_t i = 0; i < NPROV; i++)
        if (serves(providers[i], &info))
            return providers[i]->name;
    return NULL;
}

/* ------------------------------------------------------------- operands */

/* A matrix operand: its storage as a row-major matrix S (rows x cols, ld)
 * with S = the matrix (trans 0) or its transpose (trans 1); batch items
 * bstride apart. tmp: a dense copy made because the view had neither
 * contiguous rows nor columns. */
typedef struct operand {
    kiln_array *arr; /* what the library reads: the array, or tmp */
    kiln_array *tmp;
    size_t rows, cols, batch;
    int trans;
    size_t ld, bstride;
} operand;

/* The layout of a 2-D array x, or of a batch of them (every dimension
 * before the last two), if BLAS can read it: the batch's dimensions must
 * step as one (each a stride apart, non-negative). rows, cols and batch
 * are set either way. */
static int layout(const kiln_array *x, operand *o) {
    unsigned d = x->ndim - 2;
    size_t r = x->shape[d], c = x->shape[d + 1];
    ptrdiff_t s0 = x->strides[d], s1 = x->strides[d + 1];
    o->rows = r;
    o->cols = c;
    o->batch = 1;
    ptrdiff_t sb = 0;
    int merged = 1;
    size_t inner = 0; /* the dimension below, as merged so far */
    for (unsigned j = d; j-- > 0;) {
        o->batch *= x->shape[j];
        if (x->shape[j] == 1)
            continue;
        if (!inner)
            sb = x->strides[j];
        else if (x->strides[j] != sb * (ptrdiff_t)inner)
            merged = 0;
        inner = inner ? inner * x->shape[j] : x->shape[j];
    }
    if (o->batch <= 1)
        sb = 0;
    if (!merged || sb < 0)
        return 0;
    o->bstride = (size_t)sb;
    /* a dimension of size 1 has any stride: pick the one that fits */
    if (c <= 1)
        s1 = 1;
    if (r <= 1)
        s0 = (ptrdiff_t)(s1 == 1 ? (c ? c : 1) : 1);
    if (s1 == 1 && s0 >= (ptrdiff_t)(c ? c : 1)) {
        o->trans = 0;
        o->ld = (size_t)s0;
        return 1;
    }
    if (s0 == 1 && s1 >= (ptrdiff_t)(r ? r : 1)) {
        o->trans = 1;
        o->ld = (size_t)s1;
        return 1;
    }
    return 0;
}

/* o for x, copying x to a dense temporary (after the queue's barrier) if
 * BLAS cannot read it, or if force_dense. */
static kiln_status operand_of(kiln_queue *q, kiln_array *x, int force_dense, operand *o) {
    memset(o, 0, sizeof *o);
    o->arr = x;
    if (!force_dense && layout(x, o))
        return KILN_OK;
    kiln_status st = kiln_array_empty(x->context, x->dtype, x->ndim, x->shape, &o->tmp);
    if (st == KILN_OK)
        st = kiln_array_copy_out(q, o->tmp, x, 0, NULL, NULL);
    if (st != KILN_OK)
        return st;
    o->arr = o->tmp;
    layout(o->tmp, o);
    return KILN_OK;
}

static kiln__blas_mat mat_of(const operand *o) {
    kiln__blas_mat m = { o->arr->buffer, o->arr->offset, o->ld, o->bstride, NULL };
    return m;
}

/* ---------------------------------------------------------- the calls */

typedef struct call {
    const kiln__blas_provider *p;
    int is_gemm;
    kiln__blas_gemm g;
    kiln__blas_l1 l;
} call;

static kiln_status host_run(void *user, void *const *host) {
    call *c = user;
    if (c->is_gemm) {
        c->g.a.host = host[0];
        c->g.b.host = host[1];
        c->g.c.host = host[2];
        return c->p->gemm(NULL, &c->g);
    }
    c->l.x.host = host[0];
    c->l.y.host = host[1];
    c->l.r.host = host[2];
    return c->p->level1(NULL, &c->l);
}

/* Runs c on q after the queue's earlier work (the caller's barrier). */
static kiln_status dispatch(kiln_queue *q, const call *c) {
    if (!c->p->host)
        return c->is_gemm ? c->p->gemm(q, &c->g) : c->p->level1(q, &c->l);
    call *copy = kiln__malloc(sizeof *copy);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "BLAS");
    *copy = *c;
    kiln_buffer *bufs[3];
    if (c->is_gemm) {
        bufs[0] = c->g.a.buf;
        bufs[1] = c->g.b.buf;
        bufs[2] = c->g.c.buf;
    } else {
        bufs[0] = c->l.x.buf;
        bufs[1] = c->l.y.buf ? c->l.y.buf : c->l.x.buf;
        bufs[2] = c->l.r.buf ? c->l.r.buf : c->l.x.buf;
    }
    return kiln__host_task(q, 3, bufs, host_run, copy, free, 0, NULL, NULL);
}

static kiln_status check_arrays(kiln_queue *q, const char *what, size_t n, kiln_array *const *xs,
                                const char *const *names) {
    if (!q)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", what);
    for (size_t k = 0; k < n; k++) {
        if (!xs[k])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, names[k]);
        kiln_status st = kiln__array_check_queue(q, xs[k], what);
        if (st != KILN_OK)
            return st;
        if (xs[k]->dtype != xs[0]->dtype)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s is %s, %s is %s", what, names[k],
                                   kiln_dtype_name(xs[k]->dtype), names[0],
                                   kiln_dtype_name(xs[0]->dtype));
    }
    return KILN_OK;
}

static kiln_status shape_error(const char *what, kiln_array *a, kiln_array *b, kiln_array *c) {
    char ta[96], tb[96], tc[96];
    return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: shapes do not fit (a %s, b %s, out %s)",
                           what, kiln__array_describe(a, ta, sizeof ta),
                           kiln__array_describe(b, tb, sizeof tb),
                           kiln__array_describe(c, tc, sizeof tc));
}

/* x is one matrix (2-D, used for every item of out's batch) or has out's
 * batch dimensions exactly. */
static int batch_fits(const kiln_array *x, const kiln_array *out) {
    if (x->ndim == 2)
        return 1;
    if (x->ndim != out->ndim)
        return 0;
    for (unsigned d = 0; d + 2 < x->ndim; d++)
        if (x->shape[d] != out->shape[d])
            return 0;
    return 1;
}

/* The column-major op of an operand: its storage read column-major is
 * S^T; the product needs op(X)^T (see docs/linalg.md). -1: not
 * expressible (a conjugate of a transposed view: copy it dense). */
static int colmajor_op(int storage_trans, kiln_blas_op op) {
    if (!storage_trans)
        return (int)op;
    return op == KILN_BLAS_N ? 1 : op == KILN_BLAS_T ? 0 : -1;
}

/* g's shapes, ops and matrices in the providers' column-major terms. C
 * row-major is C^T column-major: C^T = op(B)^T op(A)^T. An output stored
 * transposed (a swapaxes view) is C column-major: C = op(A) op(B) with the
 * storage of A and B read as is. */
static void column_major(kiln__blas_gemm *g, const operand *oa, const operand *ob,
                         const operand *oc, kiln_blas_op opa, kiln_blas_op opb, size_t m,
                         size_t n) {
    g->c = mat_of(oc);
    if (!oc->trans) {
        g->m = n;
        g->n = m;
        g->ta = colmajor_op(ob->trans, opb);
        g->tb = colmajor_op(oa->trans, opa);
        g->a = mat_of(ob);
        g->b = mat_of(oa);
        return;
    }
    /* column-major reading of S is S^T; S^T = X when trans: op(X) needs N
     * for a transposed storage, T for a plain one */
    g->m = m;
    g->n = n;
    g->ta = oa->trans ? (int)opa : opa == KILN_BLAS_N;
    g->tb = ob->trans ? (int)opb : opb == KILN_BLAS_N;
    g->a = mat_of(oa);
    g->b = mat_of(ob);
}

static kiln_status gemm_impl(kiln_queue *q, const char *what, kiln_blas_op opa, kiln_blas_op opb,
                             kiln__blas_scalar alpha, kiln_array *a, kiln_array *b,
                             kiln__blas_scalar beta, kiln_array *c, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_array *xs[3] = { c, a, b };
    static const char *const names[3] = { "out", "a", "b" };
    kiln_status st = check_arrays(q, what, 3, xs, names);
    if (st != KILN_OK)
        return st;
    if ((unsigned)opa > 2 || (unsigned)opb > 2)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown op", what);
    if (a->ndim < 2 || b->ndim < 2 || c->ndim < 2)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: operands must be 2-D (or batches of them, up to %d-D)", what,
                               KILN_ARRAY_MAX_DIMS);
    /* zeroed: a failure before operand_of reaches them releases their
     * tmp (a garbage pointer crashed in the algorithms' fault walk) */
    operand oa = { 0 }, ob = { 0 }, oc = { 0 };
    layout(a, &oa);
    layout(b, &ob);
    layout(c, &oc);
    size_t m = opa ? oa.cols : oa.rows, k = opa ? oa.rows : oa.cols;
    size_t kb = opb ? ob.cols : ob.rows, n = opb ? ob.rows : ob.cols;
    size_t batch = oc.batch;
    if (k != kb || oc.rows != m || oc.cols != n || !batch_fits(a, c) || !batch_fits(b, c))
        return shape_error(what, a, b, c);
    const kiln__blas_provider *p = NULL;
    st = pick(q, a->dtype, what, &p);
    if (st != KILN_OK)
        return st;
    int cplx = kiln__is_complex_dtype(a->dtype);
    if (!cplx) { /* C is T for real dtypes */
        opa = opa ? KILN_BLAS_T : KILN_BLAS_N;
        opb = opb ? KILN_BLAS_T : KILN_BLAS_N;
    }
    if (m == 0 || n == 0 || batch == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    /* The output is written in place if its rows or columns are
     * contiguous and batch items apart, else through a dense temporary.
     * A transposed output takes op(A) op(B) from the storage as is, where a
     * conjugate of a plain operand has no BLAS op: then dense too. */
    int fc = !layout(c, &oc) || (oc.batch > 1 && oc.bstride == 0) ||
             (oc.trans && (opa == KILN_BLAS_C || opb == KILN_BLAS_C));
    int fa = !layout(a, &oa) || colmajor_op(oa.trans, opa) < 0;
    int fb = !layout(b, &ob) || colmajor_op(ob.trans, opb) < 0;
    st = kiln__native_begin(q, num_wait, wait);
    if (st == KILN_OK)
        st = operand_of(q, a, fa, &oa);
    if (st == KILN_OK)
        st = operand_of(q, b, fb, &ob);
    if (st == KILN_OK)
        st = operand_of(q, c, fc, &oc);
    if (st == KILN_OK) {
        if (a->ndim == 2)
            oa.bstride = 0;
        if (b->ndim == 2)
            ob.bstride = 0;
        call cl = { .p = p, .is_gemm = 1 };
        kiln__blas_gemm *g = &cl.g;
        g->dtype = a->dtype;
        g->batch = batch;
        g->k = k;
        g->alpha = alpha;
        g->beta = beta;
        column_major(g, &oa, &ob, &oc, opa, opb, m, n);
        if (st == KILN_OK && (oa.tmp || ob.tmp || oc.tmp))
            st = kiln__native_step(q);
        if (st == KILN_OK)
            st = dispatch(q, &cl);
    }
    if (st == KILN_OK && oc.tmp) {
        st = kiln__native_step(q);
        if (st == KILN_OK)
            st = kiln_array_copy_out(q, c, oc.tmp, 0, NULL, NULL);
    }
    kiln_array_release(oa.tmp);
    kiln_array_release(ob.tmp);
    kiln_array_release(oc.tmp);
    if (st == KILN_OK)
        st = kiln__native_end(q, event);
    else
        kiln__native_abandon();
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* A user's scalar factor as the providers take it, checked against like's
 * dtype (like may be NULL: the arrays' checks come later). */
static kiln_status factor_of(kiln_arg v, const kiln_array *like, const char *what, const char *name,
                             kiln__blas_scalar *out) {
    char named[64];
    snprintf(named, sizeof named, "%s: %s", what, name);
    uint64_t element[2];
    double c[2] = { 0, 0 };
    kiln_status st = like ? kiln__scalar_to_element(v, like->dtype, element, named) : KILN_OK;
    if (st == KILN_OK)
        st = kiln__scalar_to_element(v, KILN_COMPLEX128, c, named);
    out->re = c[0];
    out->im = c[1];
    return st;
}

kiln_status kiln_blas_gemm(kiln_queue *q, kiln_blas_op opa, kiln_blas_op opb, kiln_arg alpha,
                           kiln_array *a, kiln_array *b, kiln_arg beta, kiln_array *c,
                           size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln__blas_scalar fa, fb;
    kiln_status st = factor_of(alpha, c, "kiln_blas_gemm", "alpha", &fa);
    if (st == KILN_OK)
        st = factor_of(beta, c, "kiln_blas_gemm", "beta", &fb);
    if (st != KILN_OK) {
        if (event)
            *event = NULL;
        return st;
    }
    return gemm_impl(q, "kiln_blas_gemm", opa, opb, fa, a, b, fb, c, num_wait, wait, event);
}

kiln_status kiln_linalg_matmul_out(kiln_queue *q, kiln_array *c, kiln_array *a, kiln_array *b,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return gemm_impl(q, "kiln_linalg_matmul_out", KILN_BLAS_N, KILN_BLAS_N, KILN__BLAS_SCALAR(1), a,
                     b, KILN__BLAS_SCALAR(0), c, num_wait, wait, event);
}

/* A vector as an (n, 1) matrix view: gemv is gemm with one column. */
static kiln_status column_of(kiln_array *v, kiln_array **col) {
    *col = kiln__array_clone_header(v);
    if (!*col)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "BLAS");
    (*col)->ndim = 2;
    (*col)->shape[1] = 1;
    (*col)->strides[1] = 1;
    return KILN_OK;
}

kiln_status kiln_blas_gemv(kiln_queue *q, kiln_blas_op op, kiln_arg alpha, kiln_array *a,
                           kiln_array *x, kiln_arg beta, kiln_array *y, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_blas_gemv";
    if (event)
        *event = NULL;
    kiln_array *xs[3] = { a, x, y };
    static const char *const names[3] = { "a", "x", "y" };
    kiln__blas_scalar fa, fb;
    kiln_status st = check_arrays(q, what, 3, xs, names);
    if (st == KILN_OK)
        st = factor_of(alpha, y, what, "alpha", &fa);
    if (st == KILN_OK)
        st = factor_of(beta, y, what, "beta", &fb);
    if (st != KILN_OK)
        return st;
    if (a->ndim != 2 || x->ndim != 1 || y->ndim != 1)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: a must be 2-D, x and y 1-D", what);
    /* The shapes in gemv's own terms (the gemm it becomes would name an
     * (n, 1) b; issue 41). An unknown op is gemm's to report. */
    int t = op == KILN_BLAS_T || op == KILN_BLAS_C;
    size_t m = a->shape[t ? 1 : 0], k = a->shape[t ? 0 : 1];
    if ((op == KILN_BLAS_N || t) && (x->shape[0] != k || y->shape[0] != m)) {
        char ta[96], tx[96], ty[96];
        return kiln__error_set(
            KILN_ERROR_MISMATCH, 0,
            "%s: shapes do not fit (a %s%s, x %s, y %s): x needs %zu "
            "elements and y %zu",
            what, kiln__array_describe(a, ta, sizeof ta), op == KILN_BLAS_N ? "" : " transposed",
            kiln__array_describe(x, tx, sizeof tx), kiln__array_describe(y, ty, sizeof ty), k, m);
    }
    kiln_array *xc = NULL, *yc = NULL;
    st = column_of(x, &xc);
    if (st == KILN_OK)
        st = column_of(y, &yc);
    if (st == KILN_OK)
        st = gemm_impl(q, what, op, KILN_BLAS_N, fa, a, xc, fb, yc, num_wait, wait, event);
    kiln_array_release(xc);
    kiln_array_release(yc);
    return st;
}

/* A 1-D operand with a positive increment. */
static kiln_status vector_of(const char *what, const char *name, kiln_array *v, kiln__blas_mat *m) {
    if (v->ndim != 1)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s must be 1-D", what, name);
    ptrdiff_t s = v->size <= 1 ? 1 : v->strides[0];
    if (s <= 0)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: %s has a negative stride (BLAS "
                               "libraries differ there): copy it first",
                               what, name);
    kiln__blas_mat r = { v->buffer, v->offset, (size_t)s, 0, NULL };
    *m = r;
    return KILN_OK;
}

static kiln_status level1(kiln_queue *q, const char *what, int op, kiln__blas_scalar alpha,
                          kiln_array *x, kiln_array *y, kiln_array *r, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_array *xs[2] = { x, y };
    static const char *const names[2] = { "x", "y" };
    kiln_status st = check_arrays(q, what, y ? 2 : 1, xs, names);
    if (st != KILN_OK)
        return st;
    call cl = { .is_gemm = 0 };
    kiln__blas_l1 *l = &cl.l;
    l->op = op;
    l->dtype = x->dtype;
    l->n = x->size;
    l->alpha = alpha;
    st = vector_of(what, "x", x, &l->x);
    if (st == KILN_OK && y) {
        st = vector_of(what, "y", y, &l->y);
        if (st == KILN_OK && y->size != x->size)
            st = kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: x has %zu elements, y %zu", what,
                                 x->size, y->size);
    }
    if (st == KILN_OK && (op == KILN__BLAS_DOT || op == KILN__BLAS_DOTC || op == KILN__BLAS_NRM2)) {
        kiln_dtype want = op == KILN__BLAS_NRM2 ? kiln__complex_part_dtype(x->dtype) : x->dtype;
        if (!r)
            st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: result is NULL", what);
        else if ((st = kiln__array_check_queue(q, r, what)) != KILN_OK)
            ;
        else if (r->dtype != want || r->size < 1)
            st = kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                 "%s: result must be a %s array of at least "
                                 "one element, not %s (%zu)",
                                 what, kiln_dtype_name(want), kiln_dtype_name(r->dtype), r->size);
        else
            l->r = (kiln__blas_mat){ r->buffer, r->offset, 1, 0, NULL };
    }
    if (st == KILN_OK && x->dtype == KILN_FLOAT16)
        st = kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: level-1 BLAS has no float16", what);
    if (st == KILN_OK)
        st = pick(q, x->dtype, what, &cl.p);
    if (st != KILN_OK)
        return st;
    if (l->n == 0) { /* an empty sum is 0; libraries differ on n = 0 */
        static const double zero[2] = { 0, 0 };
        if (!l->r.buf)
            return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
        size_t es = kiln_dtype_size(r->dtype);
        return kiln_buffer_fill(q, r->buffer, zero, es, r->offset * es, es, num_wait, wait, event);
    }
    st = kiln__native_begin(q, num_wait, wait);
    if (st == KILN_OK)
        st = dispatch(q, &cl);
    if (st == KILN_OK)
        st = kiln__native_end(q, event);
    else
        kiln__native_abandon();
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

kiln_status kiln_blas_axpy(kiln_queue *q, kiln_arg alpha, kiln_array *x, kiln_array *y,
                           size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    if (q && x && !y)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_blas_axpy: y is NULL");
    kiln__blas_scalar fa;
    kiln_status st = factor_of(alpha, x, "kiln_blas_axpy", "alpha", &fa);
    return st != KILN_OK ? st
                         : level1(q, "kiln_blas_axpy", KILN__BLAS_AXPY, fa, x, y, NULL, num_wait,
                                  wait, event);
}

kiln_status kiln_blas_scal(kiln_queue *q, kiln_arg alpha, kiln_array *x, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln__blas_scalar fa;
    kiln_status st = factor_of(alpha, x, "kiln_blas_scal", "alpha", &fa);
    return st != KILN_OK ? st
                         : level1(q, "kiln_blas_scal", KILN__BLAS_SCAL, fa, x, NULL, NULL, num_wait,
                                  wait, event);
}

kiln_status kiln_blas_dot(kiln_queue *q, int conj, kiln_array *x, kiln_array *y, kiln_array *result,
                          size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    if (q && x && !y)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_blas_dot: y is NULL");
    int op = conj && x && kiln__is_complex_dtype(x->dtype) ? KILN__BLAS_DOTC : KILN__BLAS_DOT;
    return level1(q, "kiln_blas_dot", op, KILN__BLAS_SCALAR(0), x, y, result, num_wait, wait,
                  event);
}

kiln_status kiln_blas_nrm2(kiln_queue *q, kiln_array *x, kiln_array *result, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event) {
    return level1(q, "kiln_blas_nrm2", KILN__BLAS_NRM2, KILN__BLAS_SCALAR(0), x, NULL, result,
                  num_wait, wait, event);
}
