/* The FFT providers (one file per library) behind kiln_fft_c2c_out / rfft / irfft
 * (fft.c). fft.c checks shapes, makes dense temporaries where needed and
 * scales when the provider does not; a provider plans (cached) and runs. */
#ifndef KILN_ALGO_FFT_PROVIDER_H
#define KILN_ALGO_FFT_PROVIDER_H

#include "algo/linalg/linalg_lib.h"

enum { KILN__FFT_C2C, KILN__FFT_R2C, KILN__FFT_C2R };

/* batch transforms of rank 1..3 over dense C-order data: n[0] the slowest
 * transformed dimension, n[rank-1] the fastest (its real length for R2C and
 * C2R); idist/odist: elements (of the in/out type) between transforms. */
typedef struct kiln__fft {
    int kind, dbl, inverse;
    unsigned rank;
    size_t n[3], batch, idist, odist;
    double scale;             /* to apply to the output (1: none) */
    kiln_context *ctx;        /* home of the plan cache */
    kiln_buffer *in, *out;    /* offset 0, dense */
    void *in_host, *out_host; /* host providers */
} kiln__fft;

/* Registered for the devices it serves by capability fields, as BLAS
 * providers are (algo/blas/blas_provider.h): languages, host. */
typedef struct kiln__fft_provider {
    const char *name;
    unsigned languages;
    int host;   /* runs on host pointers in a host task (q is NULL) */
    int scales; /* applies f->scale itself: 1 always, 2 in single
                   precision only (clFFT's scale is a float) */
    kiln_status (*load)(void);
    /* KILN_ERROR_UNSUPPORTED (message set) for what it cannot do */
    kiln_status (*check)(kiln_queue *q, const kiln__fft *f);
    kiln_status (*exec)(kiln_queue *q, const kiln__fft *f);
} kiln__fft_provider;

extern const kiln__fft_provider kiln__fft_clfft;
extern const kiln__fft_provider kiln__fft_fftw;
#if KILN_HAVE_CUDA
extern const kiln__fft_provider kiln__fft_cufft;
#endif

/* A per-context plan cache: plans under a key of the transform's shape,
 * made by make(), destroyed by destroy() with the context. The cache's
 * lock is held around make() and returned locked for the call's use:
 * release it with kiln__plan_unlock. */
typedef struct kiln__plan_cache kiln__plan_cache;
kiln_status kiln__plan_get(kiln_context *ctx, const void *owner, const kiln__fft *f,
                           kiln_status (*make)(kiln_context *ctx, const kiln__fft *f, void **plan),
                           void (*destroy)(void *plan), void **plan, kiln__plan_cache **locked);
void kiln__plan_unlock(kiln__plan_cache *c);

#endif
