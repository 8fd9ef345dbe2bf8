/* The FFTW provider: libfftw3f / libfftw3 (their _threads libraries, which
 * pull them in), loaded with dlopen, run on the host memory of OpenCL CPU
 * devices inside a host task, with as many threads as the machine has
 * cores. Plans: FFTW_ESTIMATE (planning never touches the data), cached per
 * context and shape, run on each call's arrays (fftw_execute_dft). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/linalg/fft/fft_provider.h"
#include "base/error.h"

enum { ESTIMATE = 1u << 6, UNALIGNED = 1u << 1 };

typedef void *(*plan_c2c_fn)(int, const int *, int, void *, const int *, int, int, void *,
                             const int *, int, int, int, unsigned);
typedef void *(*plan_r_fn)(int, const int *, int, void *, const int *, int, int, void *,
                           const int *, int, int, unsigned);
typedef void (*exec_fn)(void *, void *, void *);
typedef void (*destroy_fn)(void *);
typedef int (*init_threads_fn)(void);
typedef void (*nthreads_fn)(int);
typedef int (*align_fn)(const void *);

/* The same symbols with fftwf_ (float) and fftw_ (double). */
static const char *const fnames[] = { "fftwf_plan_many_dft",      "fftwf_plan_many_dft_r2c",
                                      "fftwf_plan_many_dft_c2r",  "fftwf_execute_dft",
                                      "fftwf_execute_dft_r2c",    "fftwf_execute_dft_c2r",
                                      "fftwf_destroy_plan",       "fftwf_init_threads",
                                      "fftwf_plan_with_nthreads", "fftwf_alignment_of" };
static const char *const dnames[] = { "fftw_plan_many_dft",      "fftw_plan_many_dft_r2c",
                                      "fftw_plan_many_dft_c2r",  "fftw_execute_dft",
                                      "fftw_execute_dft_r2c",    "fftw_execute_dft_c2r",
                                      "fftw_destroy_plan",       "fftw_init_threads",
                                      "fftw_plan_with_nthreads", "fftw_alignment_of" };
enum {
    PLAN_C2C,
    PLAN_R2C,
    PLAN_C2R,
    EXEC_C2C,
    EXEC_R2C,
    EXEC_C2R,
    DESTROY,
    INIT_THREADS,
    NTHREADS,
    ALIGN,
    N_SYMS
};
static void *fns[2][N_SYMS];

static kiln__lib libf = KILN__LIB("FFTW (single precision)", "libfftw3-single3 (libfftw3-dev)",
                                  "libfftw3f_threads.so.3");
static kiln__lib libd = KILN__LIB("FFTW (double precision)", "libfftw3-double3 (libfftw3-dev)",
                                  "libfftw3_threads.so.3");
/* FFTW's planner is not thread-safe: every plan and destroy under one
 * lock. */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER;
static int threads_ready[2];

static kiln_status load_one(int dbl) {
    kiln_status st = kiln__lib_load(dbl ? &libd : &libf, N_SYMS, dbl ? dnames : fnames, fns[dbl]);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&planner);
    if (!threads_ready[dbl]) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ((init_threads_fn)fns[dbl][INIT_THREADS])();
        ((nthreads_fn)fns[dbl][NTHREADS])(cores > 0 ? (int)cores : 1);
        threads_ready[dbl] = 1;
    }
    pthread_mutex_unlock(&planner);
    return KILN_OK;
}

static kiln_status load(void) {
    /* single precision is needed first; double is loaded on first use */
    return load_one(0);
}

static kiln_status check(kiln_queue *q, const kiln__fft *f) {
    (void)q;
    if (f->batch > 0x7fffffffu || f->idist > 0x7fffffffu || f->odist > 0x7fffffffu)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "FFTW: a size above 2^31-1");
    return f->dbl ? load_one(1) : KILN_OK;
}

typedef struct fplan {
    void *p;
    int dbl;
} fplan;

static void plan_destroy(void *p) {
    fplan *fp = p;
    pthread_mutex_lock(&planner);
    ((destroy_fn)fns[fp->dbl][DESTROY])(fp->p);
    pthread_mutex_unlock(&planner);
    free(fp);
}

/* A plan for f's shape over the arrays at in, out (not touched). */
static void *plan_for(const kiln__fft *f, void *in, void *out, unsigned flags) {
    void *const *t = fns[f->dbl];
    int n[3] = { (int)f->n[0], (int)f->n[1], (int)f->n[2] };
    int r = (int)f->rank, b = (int)f->batch, id = (int)f->idist, od = (int)f->odist;
    pthread_mutex_lock(&planner);
    void *p = f->kind == KILN__FFT_C2C
                  ? ((plan_c2c_fn)t[PLAN_C2C])(r, n, b, in, NULL, 1, id, out, NULL, 1, od,
                                               f->inverse ? 1 : -1, flags)
              : f->kind == KILN__FFT_R2C
                  ? ((plan_r_fn)t[PLAN_R2C])(r, n, b, in, NULL, 1, id, out, NULL, 1, od, flags)
                  : ((plan_r_fn)t[PLAN_C2R])(r, n, b, in, NULL, 1, id, out, NULL, 1, od, flags);
    pthread_mutex_unlock(&planner);
    return p;
}

static kiln_status make(kiln_context *ctx, const kiln__fft *f, void **plan) {
    (void)ctx;
    fplan *fp = kiln__malloc(sizeof *fp);
    if (!fp)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "FFTW plan");
    fp->dbl = f->dbl;
    fp->p = plan_for(f, f->in_host, f->out_host, ESTIMATE);
    if (!fp->p) {
        free(fp);
        return kiln__error_set(KILN_ERROR_DRIVER, 0, "FFTW could not plan this transform");
    }
    *plan = fp;
    return KILN_OK;
}

static const char owner = 0;

/* The scale on the host: the memory is the device's, and already here. */
static void scale(const kiln__fft *f) {
    size_t n = f->batch * f->odist * (f->kind == KILN__FFT_C2R ? 1 : 2);
    if (f->dbl) {
        double *o = f->out_host, s = f->scale;
        for (size_t i = 0; i < n; i++)
            o[i] *= s;
    } else {
        float *o = f->out_host, s = (float)f->scale;
        for (size_t i = 0; i < n; i++)
            o[i] *= s;
    }
}

static kiln_status exec(kiln_queue *q, const kiln__fft *f) {
    (void)q;
    void *const *t = fns[f->dbl];
    int aligned = ((align_fn)t[ALIGN])(f->in_host) == 0 && ((align_fn)t[ALIGN])(f->out_host) == 0;
    void *one_off = NULL, *plan;
    kiln__plan_cache *locked = NULL;
    kiln_status st = KILN_OK;
    if (aligned) {
        void *p = NULL;
        st = kiln__plan_get(f->ctx, &owner, f, make, plan_destroy, &p, &locked);
        plan = st == KILN_OK ? ((fplan *)p)->p : NULL;
    } else {
        plan = one_off = plan_for(f, f->in_host, f->out_host, ESTIMATE | UNALIGNED);
        if (!plan)
            st = kiln__error_set(KILN_ERROR_DRIVER, 0, "FFTW could not plan this transform");
    }
    if (st == KILN_OK) {
        ((exec_fn)t[f->kind == KILN__FFT_C2C   ? EXEC_C2C
                    : f->kind == KILN__FFT_R2C ? EXEC_R2C
                                               : EXEC_C2R])(plan, f->in_host, f->out_host);
        if (f->scale != 1)
            scale(f);
    }
    kiln__plan_unlock(locked);
    if (one_off) {
        pthread_mutex_lock(&planner);
        ((destroy_fn)t[DESTROY])(one_off);
        pthread_mutex_unlock(&planner);
    }
    return st;
}

const kiln__fft_provider kiln__fft_fftw = {
    .name = "FFTW",
    .host = 1,
    .scales = 1,
    .load = load,
    .check = check,
    .exec = exec,
};
