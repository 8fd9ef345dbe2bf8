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
#include "base/thread.h"

typedef struct kiln__cu_job {
    kiln__fifo_link link; /* first: the FIFO's node */
    void (*fn)(void *arg);
    void *arg;
} kiln__cu_job;

static kiln__fifo kiln__cu_jobs = KILN__FIFO_INITIALIZER;
static int kiln__cu_worker_state; /* 0: not started, 1: running, -1: failed */

static void *kiln__cu_worker(void *unused) {
    (void)unused;
    kiln__thread_name("kiln-cuda-free");
    for (;;) {
        kiln__cu_job *j = (kiln__cu_job *)kiln__fifo_wait_pop(&kiln__cu_jobs);
        j->fn(j->arg);
        free(j);
    }
    return NULL;
}

void kiln__cu_defer(void (*fn)(void *arg), void *arg) {
    kiln__cu_job *j = kiln__calloc(1, sizeof *j);
    pthread_mutex_lock(&kiln__cu_jobs.lock);
    if (j && kiln__cu_worker_state == 0)
        kiln__cu_worker_state = kiln__thread_detached(kiln__cu_worker, NULL) ? 1 : -1;
    if (!j || kiln__cu_worker_state != 1) {
        pthread_mutex_unlock(&kiln__cu_jobs.lock);
        free(j);
        fn(arg); /* no thread: the old behaviour, on this thread */
        return;
    }
    j->fn = fn;
    j->arg = arg;
    kiln__fifo_push_locked(&kiln__cu_jobs, &j->link);
    pthread_mutex_unlock(&kiln__cu_jobs.lock);
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
