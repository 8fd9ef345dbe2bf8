/* Pinned staging blocks and host jobs for transfers that must not block the
 * host (see cuda_internal.h, "pinned staging memory"). */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

#define KILN__CU_STAGE_MIN_CLS 12 /* 4 KiB */
#define KILN__CU_STAGE_CLASSES 64
#define KILN__CU_STAGE_BUDGET (64u << 20) /* pooled bytes kept by trim */

static pthread_mutex_t kiln__cu_stage_lock = PTHREAD_MUTEX_INITIALIZER;
static kiln__cu_stage *kiln__cu_stage_free[KILN__CU_STAGE_CLASSES];
static size_t kiln__cu_stage_pooled; /* bytes in the free lists */

/* ---- primary contexts kept for the process ---------------------------- */

#define KILN__CU_MAX_KEPT 64
static pthread_mutex_t kiln__cu_keep_lock = PTHREAD_MUTEX_INITIALIZER;
static CUdevice kiln__cu_kept[KILN__CU_MAX_KEPT];
static size_t kiln__cu_num_kept;

kiln_status kiln__cu_keep_primary(kiln__cu_dev *d) {
    pthread_mutex_lock(&kiln__cu_keep_lock);
    for (size_t i = 0; i < kiln__cu_num_kept; i++)
        if (kiln__cu_kept[i] == d->dev) {
            pthread_mutex_unlock(&kiln__cu_keep_lock);
            return KILN_OK;
        }
    kiln_status st = KILN_OK;
    if (kiln__cu_num_kept == KILN__CU_MAX_KEPT) {
        st = kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "more than %d CUDA devices",
                             KILN__CU_MAX_KEPT);
    } else {
        CUcontext c = NULL;
        CUresult r = kiln__cu.cuDevicePrimaryCtxRetain(&c, d->dev);
        if (r == CUDA_SUCCESS)
            kiln__cu_kept[kiln__cu_num_kept++] = d->dev;
        else
            st = kiln__cu_fail("cuDevicePrimaryCtxRetain", r);
    }
    pthread_mutex_unlock(&kiln__cu_keep_lock);
    return st;
}

/* Pinned host memory is owned by the context current at allocation and goes
 * with it. kiln's long-lived blocks (this pool, user-event words) are made
 * in the device's primary context, which kiln keeps, even while a user's
 * context (kiln_cuda_context_wrap) is current: that one may be destroyed
 * while the blocks live on. */
kiln_status kiln__cu_pinned_alloc(kiln__cu_dev *d, size_t n, unsigned flags, void **p,
                                  CUcontext *owner) {
    *p = NULL;
    kiln_status st = kiln__cu_keep_primary(d);
    if (st != KILN_OK)
        return st;
    CUcontext prim = NULL, popped = NULL;
    CUresult r = kiln__cu.cuDevicePrimaryCtxRetain(&prim, d->dev);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuDevicePrimaryCtxRetain", r);
    r = kiln__cu.cuCtxPushCurrent(prim);
    if (r == CUDA_SUCCESS) {
        r = kiln__cu.cuMemHostAlloc(p, n, flags);
        kiln__cu.cuCtxPopCurrent(&popped);
    }
    kiln__cu.cuDevicePrimaryCtxRelease(d->dev); /* keep_primary holds it */
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuMemHostAlloc", r);
    if (owner)
        *owner = prim;
    return KILN_OK;
}

/* CUDA reports pinned host memory running out as device memory: say what
 * it is (a message naming `what`). */
kiln_status kiln__cu_pinned_status(kiln_status st, const char *what) {
    return st == KILN_ERROR_OUT_OF_DEVICE_MEMORY
               ? kiln__error_prefix(KILN_ERROR_OUT_OF_HOST_MEMORY, "pinned %s", what)
               : st;
}

/* ---- the pool ---------------------------------------------------------- */

static int kiln__cu_stage_class(size_t n) {
    int c = KILN__CU_STAGE_MIN_CLS;
    while (c < KILN__CU_STAGE_CLASSES - 1 && ((size_t)1 << c) < n)
        c++;
    return c;
}

kiln_status kiln__cu_stage_get(kiln__cu_dev *d, size_t n, kiln__cu_stage **out) {
    *out = NULL;
    int cls = kiln__cu_stage_class(n);
    if (((size_t)1 << cls) < n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "a staging block of %zu bytes", n);
    pthread_mutex_lock(&kiln__cu_stage_lock);
    kiln__cu_stage *s = kiln__cu_stage_free[cls];
    if (s) {
        kiln__cu_stage_free[cls] = s->next;
        kiln__cu_stage_pooled -= s->cap;
    }
    pthread_mutex_unlock(&kiln__cu_stage_lock);
    if (s) {
        s->next = NULL;
        *out = s;
        return KILN_OK;
    }
    s = kiln__calloc(1, sizeof *s);
    if (!s)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    s->cls = cls;
    s->cap = (size_t)1 << cls;
    /* portable: usable by every context; no DEVICEMAP, only DMA uses it */
    kiln_status st = kiln__cu_pinned_alloc(d, s->cap, CU_MEMHOSTALLOC_PORTABLE, &s->host, &s->ctx);
    if (st != KILN_OK) {
        free(s);
        kiln__error_prefix(st, "staging memory");
        return kiln__cu_pinned_status(st, "staging memory");
    }
    *out = s;
    return KILN_OK;
}

void kiln__cu_stage_put(kiln__cu_stage *s) {
    if (!s)
        return;
    pthread_mutex_lock(&kiln__cu_stage_lock);
    s->next = kiln__cu_stage_free[s->cls];
    kiln__cu_stage_free[s->cls] = s;
    kiln__cu_stage_pooled += s->cap;
    pthread_mutex_unlock(&kiln__cu_stage_lock);
}

void kiln__cu_stage_trim(CUcontext ctx) {
    kiln__cu_stage *doomed = NULL;
    pthread_mutex_lock(&kiln__cu_stage_lock);
    /* largest first: they cost the most pinned memory */
    for (int c = KILN__CU_STAGE_CLASSES - 1;
         c >= 0 && kiln__cu_stage_pooled > KILN__CU_STAGE_BUDGET; c--) {
        kiln__cu_stage **pp = &kiln__cu_stage_free[c];
        while (*pp && kiln__cu_stage_pooled > KILN__CU_STAGE_BUDGET) {
            kiln__cu_stage *s = *pp;
            if (s->ctx != ctx) {
                pp = &s->next;
                continue;
            }
            *pp = s->next;
            kiln__cu_stage_pooled -= s->cap;
            s->next = doomed;
            doomed = s;
        }
    }
    pthread_mutex_unlock(&kiln__cu_stage_lock);
    if (doomed && kiln__cu_ctx_use(ctx) != KILN_OK)
        return; /* cannot happen for a kept context; leak rather than crash */
    while (doomed) {
        kiln__cu_stage *next = doomed->next;
        kiln__cu.cuMemFreeHost(doomed->host);
        free(doomed);
        doomed = next;
    }
}

int kiln__cu_host_pinned(const void *p, size_t n) {
    if (!p || n == 0)
        return 0;
    const unsigned char *c = p;
    unsigned long long id[2] = { 0, 0 };
    for (int end = 0; end < 2; end++) {
        unsigned int type = 0;
        unsigned long long managed = 0; /* zeroed: any width reads as 0/1 */
        CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                         CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                         CU_POINTER_ATTRIBUTE_BUFFER_ID };
        void *data[3] = { &type, &managed, &id[end] };
        const unsigned char *at = end ? c + n - 1 : c;
        CUresult r = kiln__cu.cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)at);
        /* unknown pointers read as type 0: pageable */
        if (r != CUDA_SUCCESS || type != CU_MEMORYTYPE_HOST || managed)
            return 0;
    }
    return id[0] != 0 && id[0] == id[1];
}

/* ---- host jobs --------------------------------------------------------- */

kiln__cu_hostjob *kiln__cu_hostjob_new(size_t extra) {
    kiln__cu_hostjob *j = kiln__malloc(sizeof *j + extra);
    if (!j) {
        kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "CUDA host job (%zu bytes)",
                        sizeof *j + extra);
        return NULL;
    }
    j->dst = NULL;
    j->src = NULL;
    j->n = 0;
    j->pattern_size = 0;
    j->stage = NULL;
    return j;
}

/* Runs on a driver thread: no CUDA calls here. */
static void CUDA_CB kiln__cu_hostjob_run(void *p) {
    kiln__cu_hostjob *j = p;
    if (j->pattern_size) {
        unsigned char *d = j->dst;
        for (size_t i = 0; i < j->n; i += j->pattern_size)
            memcpy(d + i, j->data, j->pattern_size);
    } else if (j->src && j->n) {
        memmove(j->dst, j->src, j->n);
    }
    kiln__cu_stage_put(j->stage);
    free(j);
}

kiln_status kiln__cu_hostjob_launch(CUstream s, kiln__cu_hostjob *j) {
    CUresult r = kiln__cu.cuLaunchHostFunc(s, kiln__cu_hostjob_run, j);
    if (r != CUDA_SUCCESS) {
        free(j);
        return kiln__cu_fail("cuLaunchHostFunc", r);
    }
    return KILN_OK;
}
