/* kiln's CUDA worker thread: runs, in order, work that synchronises a
 * context (freeing device memory) when doing it on the caller's thread
 * could wait for ever. cuMemFree synchronises the device, and a stream may
 * be waiting for a user event that only the caller (or kiln's callback
 * thread) will set later: releasing a temporary buffer inside a gated
 * kiln_array_write_async, or a region's memory in kiln_data_region_end_async
 * behind a user event, deadlocked. Such frees run here instead. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"
#include "base/fault.h"

typedef struct kiln__cu_job {
    struct kiln__cu_job *next;
    void (*fn)(void *arg);
    void *arg;
} kiln__cu_job;

static pthread_mutex_t kiln__cu_jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kiln__cu_jobs_cond = PTHREAD_COND_INITIALIZER;
static kiln__cu_job *kiln__cu_jobs_head, *kiln__cu_jobs_tail;
static int kiln__cu_worker_state; /* 0: not started, 1: running, -1: failed */

static void *kiln__cu_worker(void *unused) {
    (void)unused;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "kiln-cuda-free");
#endif
    for (;;) {
        pthread_mutex_lock(&kiln__cu_jobs_lock);
        while (!kiln__cu_jobs_head)
            pthread_cond_wait(&kiln__cu_jobs_cond, &kiln__cu_jobs_lock);
        kiln__cu_job *j = kiln__cu_jobs_head;
        kiln__cu_jobs_head = j->next;
        if (!kiln__cu_jobs_head)
            kiln__cu_jobs_tail = NULL;
        pthread_mutex_unlock(&kiln__cu_jobs_lock);
        j->fn(j->arg);
        free(j);
    }
    return NULL;
}

void kiln__cu_defer(void (*fn)(void *arg), void *arg) {
    kiln__cu_job *j = kiln__calloc(1, sizeof *j);
    pthread_mutex_lock(&kiln__cu_jobs_lock);
    if (j && kiln__cu_worker_state == 0) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        kiln__cu_worker_state = pthread_create(&t, &attr, kiln__cu_worker, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy(&attr);
    }
    if (!j || kiln__cu_worker_state != 1) {
        pthread_mutex_unlock(&kiln__cu_jobs_lock);
        free(j);
        fn(arg); /* no thread: the old behaviour, on this thread */
        return;
    }
    j->fn = fn;
    j->arg = arg;
    if (kiln__cu_jobs_tail)
        kiln__cu_jobs_tail->next = j;
    else
        kiln__cu_jobs_head = j;
    kiln__cu_jobs_tail = j;
    pthread_cond_signal(&kiln__cu_jobs_cond);
    pthread_mutex_unlock(&kiln__cu_jobs_lock);
}

/* cuMemFree, cuMemFreeHost and cuModuleUnload synchronise the device while
 * holding a driver lock that every other CUDA call waits for: with work
 * still gated behind a user event, the thread that would set it could not
 * make its next call (test_pool on an H100 hung so). The worker waits
 * until no user event is pending before such a call: for ever if one
 * never completes, and then the memory stays until exit. */
void kiln__cu_wait_no_user_events(void) {
    while (kiln__cu_user_events_unset() > 0)
        usleep(1000);
}
