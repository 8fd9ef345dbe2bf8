/* What the BLAS and FFT providers share: loading the field's libraries
 * with dlopen, ordering their native calls with kiln's events, and running
 * host libraries (OpenBLAS, FFTW) on mapped buffers of CPU devices. */
#ifndef KILN_ALGO_LINALG_LIB_H
#define KILN_ALGO_LINALG_LIB_H

#include <pthread.h>

#include "algo/ops/complex.h"

/* A library loaded on first use, once per process (never unloaded: the
 * libraries keep per-process state). */
typedef struct kiln__lib {
    const char *what;           /* "CLBlast" */
    const char *const *sonames; /* tried in order, NULL-terminated */
    const char *package;        /* the Debian package that ships it */
    pthread_mutex_t lock;
    int state; /* 0 not tried, 1 loaded, -1 missing */
    void *handle;
} kiln__lib;
#define KILN__LIB(what, package, ...)                                                             \
    {                                                                                             \
        (what), (const char *const[]){ __VA_ARGS__, NULL }, (package), PTHREAD_MUTEX_INITIALIZER, \
            0, NULL                                                                               \
    }

/* Loads lib and resolves each of n symbols names[k] into fns[k]. A missing
 * library or symbol is KILN_ERROR_NO_RUNTIME with a message naming the
 * package to install. Cheap after the first call. */
kiln_status kiln__lib_load(kiln__lib *lib, size_t n, const char *const *names, void **fns);

/* Whether a library provider (BLAS, FFT) serves the device: it compiles
 * one of `languages` (kiln_language bits; 0: any), a host provider only CPU
 * devices, and $env (KILN_BLAS, KILN_FFT), when set, names this provider
 * (any case). By capability fields, never by the backend's name. */
int kiln__lib_serves(const char *name, unsigned languages, int host, const char *env,
                     const kiln_device_info *info);

/* Orders a library's native calls on q: begin() makes the work enqueued
 * next wait for the wait list (a barrier); end() hands back in *event (may
 * be NULL) an event that completes after everything enqueued on q so far
 * (a barrier, so that later commands of an out-of-order queue wait too). */
kiln_status kiln__native_begin(kiln_queue *q, size_t num_wait, kiln_event *const *wait);
kiln_status kiln__native_end(kiln_queue *q, kiln_event **event);
/* Instead of _end when the call fails: forgets its host tasks' barrier. */
void kiln__native_abandon(void);
/* Between two steps of one call (a temporary's copy, the library call, the
 * scaling): a barrier on an out-of-order queue, nothing on an in-order one
 * (it orders them by itself). */
kiln_status kiln__native_step(kiln_queue *q);

/* A host task: once the wait list (and, on an in-order queue, the earlier
 * work) has completed, kiln's callback thread maps the nbuf buffers (their
 * whole size, read and write), calls run(user, host) with their host
 * pointers in buffer order, unmaps them, and then lets q go on: commands
 * enqueued on q afterwards wait for it, and *event completes with it
 * (failed if run failed). free_user(user) is called once, in every case.
 * For CPU devices, whose buffers are host memory: mapping copies nothing. */
typedef kiln_status (*kiln__host_fn)(void *user, void *const *host);
kiln_status kiln__host_task(kiln_queue *q, size_t nbuf, kiln_buffer *const *bufs, kiln__host_fn run,
                            void *user, void (*free_user)(void *), size_t num_wait,
                            kiln_event *const *wait, kiln_event **event);

#endif
