/* kiln_fft_c2c_out, kiln_fft_r2c_out, kiln_fft_c2r_out (include/kiln/linalg.h): shapes, dense
 * temporaries, NumPy's normalisation, the provider of the queue's device
 * (cuFFT on CUDA, clFFT on OpenCL, FFTW on the host memory of OpenCL CPU
 * devices: docs/linalg.md says why) and the per-context plan cache. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/linalg/fft/fft_provider.h"
#include "base/error.h"

/* ------------------------------------------------------------ plan cache */

typedef struct plan_entry {
    const void *owner;
    kiln__fft key; /* buffers and host pointers cleared; in == out marked */
    void *plan;
    void (*destroy)(void *plan);
} plan_entry;

struct kiln__plan_cache {
    pthread_mutex_t lock;
    plan_entry *e;
    size_t n, cap;
};

static void cache_free(void *p) {
    kiln__plan_cache *c = p;
    for (size_t k = 0; k < c->n; k++)
        c->e[k].destroy(c->e[k].plan);
    free(c->e);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void *cache_make(kiln_context *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    kiln__plan_cache *c = kiln__calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static const char cache_key = 0;

static kiln__fft key_of(const kiln__fft *f) {
    kiln__fft k;
    memset(&k, 0, sizeof k); /* padding too: keys compare with memcmp */
    k.kind = f->kind;
    k.dbl = f->dbl;
    k.inverse = f->inverse;
    k.rank = f->rank;
    memcpy(k.n, f->n, sizeof k.n);
    k.batch = f->batch;
    k.idist = f->idist;
    k.odist = f->odist;
    k.scale = f->scale;
    k.in = f->in == f->out ? (kiln_buffer *)1 : NULL; /* in place or not */
    return k;
}

kiln_status kiln__plan_get(kiln_context *ctx, const void *owner, const kiln__fft *f,
                           kiln_status (*make)(kiln_context *ctx, const kiln__fft *f, void **plan),
                           void (*destroy)(void *plan), void **plan, kiln__plan_cache **locked) {
    void *data = NULL;
    kiln_status st = kiln_context_attach(ctx, &cache_key, cache_make, NULL, cache_free, &data);
    if (st == KILN_OK && !data)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "FFT plans");
    if (st != KILN_OK)
        return st;
    kiln__plan_cache *c = data;
    kiln__fft k = key_of(f);
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].owner == owner && !memcmp(&c->e[i].key, &k, sizeof k)) {
            *plan = c->e[i].plan;
            *locked = c;
            return KILN_OK;
        }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        plan_entry *g = kiln__realloc(c->e, cap * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&c->lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "FFT plans");
        }
        c->e = g;
        c->cap = cap;
    }
    st = make(ctx, f, plan);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&c->lock);
        return st;
    }
    c->e[c->n++] = (plan_entry){ owner, k, *plan, destroy };
    *locked = c;
    return KILN_OK;
}

void kiln__plan_unlock(kiln__plan_cache *c) {
    if (c)
        pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------- providers */

/* The providers, in order of preference; each serves the devices its
 * capability fields name (fft_provider.h). KILN_FFT=<name> (any case):
 * only that one, where it serves. */
static const kiln__fft_provider *const providers[] = {
#if KILN_HAVE_CUDA
    &kiln__fft_cufft,
#endif
    &kiln__fft_fftw,
    &kiln__fft_clfft,
};

static const kiln__fft_provider *provider_for(kiln_queue *q) {
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    if (kiln_device_get_info(kiln_queue_device(q), &info) != KILN_OK)
        return NULL;
    for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
        if (kiln__lib_serves(providers[i]->name, providers[i]->languages, providers[i]->host,
                             "KILN_FFT", &info))
            return providers[i];
    return NULL;
}

const char *kiln_fft_library(kiln_queue *q) {
    const kiln__fft_provider *p = q ? provider_for(q) : NULL;
    return p ? p->name : NULL;
}

/* ------------------------------------------------------------- transforms */

typedef struct fft_task {
    const kiln__fft_provider *p;
    kiln__fft f;
} fft_task;

static kiln_status host_run(void *user, void *const *host) {
    fft_task *t = user;
    t->f.in_host = host[0];
    t->f.out_host = host[1];
    return t->p->exec(NULL, &t->f);
}

/* A dense, offset-0 array holding x's elements (x itself if it is one),
 * copied after the queue's barrier when copy. */
static kiln_status dense_of(kiln_queue *q, kiln_array *x, int copy, kiln_array **out,
                            kiln_array **tmp) {
    *tmp = NULL;
    *out = x;
    if (kiln__array_contiguous(x) && x->offset == 0)
        return KILN_OK;
    kiln_status st = kiln_array_empty(x->context, x->dtype, x->ndim, x->shape, tmp);
    if (st == KILN_OK && copy)
        st = kiln_array_copy_out(q, *tmp, x, 0, NULL, NULL);
    *out = *tmp;
    return st;
}

/* Checks the norm, the axes and the operands' dtypes and shapes of a
 * transform of kind; *rd: the real side's dtype. */
static kiln_status check_operands(const char *what, int kind, const kiln_array *out,
                                  const kiln_array *in, unsigned axes, kiln_fft_norm norm,
                                  kiln_dtype *rd) {
    if ((unsigned)norm > 2)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown norm %d", what,
                               (int)norm);
    if (axes < 1 || axes > 3 || axes > in->ndim)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: axes %u for a %u-D array (1..3, at most "
                               "the array's)",
                               what, axes, in->ndim);
    /* dtypes: complex in and out (C2C), real in (R2C), real out (C2R) */
    kiln_dtype cd = kind == KILN__FFT_R2C ? out->dtype : in->dtype;
    *rd = kind == KILN__FFT_R2C   ? in->dtype
          : kind == KILN__FFT_C2R ? out->dtype
                                  : kiln__complex_part_dtype(cd);
    if (!kiln__is_complex_dtype(cd) || kiln__complex_part_dtype(cd) != *rd ||
        (kind == KILN__FFT_C2C && out->dtype != in->dtype)) {
        char ti[96], to[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: dtypes do not fit (in %s, out %s)",
                               what, kiln__array_describe(in, ti, sizeof ti),
                               kiln__array_describe(out, to, sizeof to));
    }
    /* shapes: equal but for the last dim of the real side */
    int fits = in->ndim == out->ndim;
    for (unsigned d = 0; fits && d < in->ndim; d++) {
        size_t a = in->shape[d], b = out->shape[d];
        if (d + 1 == in->ndim && kind == KILN__FFT_R2C)
            fits = b == a / 2 + 1;
        else if (d + 1 == in->ndim && kind == KILN__FFT_C2R)
            fits = a == b / 2 + 1;
        else
            fits = a == b;
    }
    if (!fits) {
        char ti[96], to[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: shapes do not fit (in %s, out %s%s)",
                               what, kiln__array_describe(in, ti, sizeof ti),
                               kiln__array_describe(out, to, sizeof to),
                               kind == KILN__FFT_C2C ? ""
                                                     : "; the complex side's last length is "
                                                       "n/2 + 1 of the real side's n");
    }
    return KILN_OK;
}

/* The provider's description *f of a checked transform (buffers not yet
 * set): lengths, batch, distances and NumPy's scale; *empty when there is
 * nothing to transform. */
static kiln_status describe(const char *what, int kind, const kiln_array *out, const kiln_array *in,
                            kiln_dtype rd, unsigned axes, int inverse, kiln_fft_norm norm,
                            kiln__fft *f, int *empty) {
    const kiln_array *real_side = kind == KILN__FFT_C2R ? out : in;
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->ctx = in->context;
    f->dbl = rd == KILN_FLOAT64;
    f->inverse = inverse;
    f->rank = axes;
    size_t total = 1, batch = 1;
    for (unsigned d = 0; d < in->ndim; d++) {
        size_t len = real_side->shape[d];
        if (d + axes >= in->ndim) {
            f->n[d + axes - in->ndim] = len;
            total *= len;
        } else {
            batch *= len;
        }
    }
    /* NumPy raises for a transformed length of 0 ("Invalid number of FFT
     * data points"); an empty batch is an empty result. */
    for (unsigned k = 0; k < axes; k++)
        if (!f->n[k]) {
            char ti[96];
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: transformed axis %u of %s has length 0 (NumPy: "
                                   "invalid number of FFT data points)",
                                   what, in->ndim - axes + k,
                                   kiln__array_describe(real_side, ti, sizeof ti));
        }
    f->batch = batch;
    size_t inner = total / (f->n[axes - 1] ? f->n[axes - 1] : 1);
    size_t half = f->n[axes - 1] / 2 + 1;
    f->idist = kind == KILN__FFT_C2R ? inner * half : total;
    f->odist = kind == KILN__FFT_R2C ? inner * half : total;
    double sc = norm == KILN_FFT_NORM_ORTHO                          ? 1 / sqrt((double)total)
                : (norm == KILN_FFT_NORM_BACKWARD) == (inverse != 0) ? 1 / (double)total
                                                                     : 1;
    f->scale = total ? sc : 1;
    *empty = total == 0 || batch == 0;
    return KILN_OK;
}

/* Loads provider p and checks that it can run f on q's device (fp64 for
 * double precision). */
static kiln_status provider_ready(kiln_queue *q, const kiln__fft_provider *p, const kiln__fft *f) {
    kiln_status st = p->load();
    if (st == KILN_OK && f->dbl) {
        kiln_device_info info;
        memset(&info, 0, sizeof info);
        kiln_device_get_info(kiln_queue_device(q), &info);
        if (!info.fp64)
            st = kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                                 "double precision needs fp64, which %s "
                                 "lacks",
                                 info.name);
    }
    if (st == KILN_OK)
        st = p->check(q, f);
    return st;
}

/* Runs f with provider p: a host task over the buffers' host memory for
 * a host library, else enqueued on q. */
static kiln_status execute(kiln_queue *q, const kiln__fft_provider *p, const kiln__fft *f,
                           const char *what) {
    if (!p->host)
        return p->exec(q, f);
    fft_task *t = kiln__malloc(sizeof *t);
    if (!t)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    t->p = p;
    t->f = *f;
    kiln_buffer *bufs[2] = { f->in, f->out };
    return kiln__host_task(q, 2, bufs, host_run, t, free, 0, NULL, NULL);
}

static kiln_status transform(kiln_queue *q, const char *what, int kind, kiln_array *out,
                             kiln_array *in, unsigned axes, int inverse, kiln_fft_norm norm,
                             size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln_status st = kiln__array_op_begin(q, out, in, event, what);
    kiln_dtype rd = (kiln_dtype)0;
    if (st == KILN_OK)
        st = check_operands(what, kind, out, in, axes, norm, &rd);
    kiln__fft f;
    int empty = 0;
    if (st == KILN_OK)
        st = describe(what, kind, out, in, rd, axes, inverse, norm, &f, &empty);
    if (st != KILN_OK)
        return st;
    if (empty)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    const kiln__fft_provider *p = provider_for(q);
    if (!p)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: no FFT library for this device",
                               what);
    st = provider_ready(q, p, &f);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    kiln_array *src = NULL, *dst = NULL, *tsrc = NULL, *tdst = NULL;
    st = kiln__native_begin(q, num_wait, wait);
    /* C2R libraries overwrite their input: always a copy (in is kept) */
    if (st == KILN_OK && kind == KILN__FFT_C2R) {
        st = kiln_array_empty(in->context, in->dtype, in->ndim, in->shape, &tsrc);
        if (st == KILN_OK)
            st = kiln_array_copy_out(q, tsrc, in, 0, NULL, NULL);
        src = tsrc;
    } else if (st == KILN_OK) {
        st = dense_of(q, in, 1, &src, &tsrc);
    }
    if (st == KILN_OK)
        st = out == in ? (dst = src, KILN_OK) : dense_of(q, out, 0, &dst, &tdst);
    if (st == KILN_OK && (tsrc || tdst))
        st = kiln__native_step(q);
    if (st == KILN_OK) {
        f.in = src->buffer;
        f.out = dst->buffer;
        st = execute(q, p, &f, what);
    }
    int scaled = p->scales == 1 || (p->scales == 2 && !f.dbl);
    if (st == KILN_OK && !scaled && f.scale != 1) {
        st = kiln__native_step(q);
        if (st == KILN_OK)
            st = kiln_array_binary_scalar_out(q, KILN_OP_MUL, dst, dst, KILN_ARG_F64(f.scale), 0,
                                              NULL, NULL);
    }
    if (st == KILN_OK && dst != out) {
        st = kiln__native_step(q);
        if (st == KILN_OK)
            st = kiln_array_copy_out(q, out, dst, 0, NULL, NULL);
    }
    kiln_array_release(tsrc);
    kiln_array_release(tdst);
    if (st == KILN_OK)
        st = kiln__native_end(q, event);
    else
        kiln__native_abandon();
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

kiln_status kiln_fft_c2c_out(kiln_queue *q, kiln_array *out, kiln_array *in, unsigned axes,
                             int inverse, kiln_fft_norm norm, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    return transform(q, "kiln_fft_c2c_out", KILN__FFT_C2C, out, in, axes, inverse, norm, num_wait,
                     wait, event);
}

kiln_status kiln_fft_r2c_out(kiln_queue *q, kiln_array *out, kiln_array *in, unsigned axes,
                             kiln_fft_norm norm, size_t num_wait, kiln_event *const *wait,
                             kiln_event **event) {
    return transform(q, "kiln_fft_r2c_out", KILN__FFT_R2C, out, in, axes, 0, norm, num_wait, wait,
                     event);
}

kiln_status kiln_fft_c2r_out(kiln_queue *q, kiln_array *out, kiln_array *in, unsigned axes,
                             kiln_fft_norm norm, size_t num_wait, kiln_event *const *wait,
                             kiln_event **event) {
    return transform(q, "kiln_fft_c2r_out", KILN__FFT_C2R, out, in, axes, 1, norm, num_wait, wait,
                     event);
}
