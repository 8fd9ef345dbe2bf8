/* A queue's thread pool: the work-groups of one launch spread over the
 * launching thread and the pool's threads (prelude_host_rt.h calls
 * kiln__host_pool_run through the launch's pfor pointer).
 *
 * Why not OpenMP's parallel for: its region ends with a barrier that waits
 * for every thread of the team, also one the (shared, loaded) machine has
 * not scheduled yet; a 2^20-float sum took 0.7 ms there against 60 us of
 * work. Here the launching thread claims chunks like the others and is
 * done when every chunk is: a thread that wakes late finds none left and
 * sleeps again, and only threads that joined the job are waited for (they
 * are running). A sub-device's pool threads are pinned to its CPUs. */
#include <sched.h>
#include <stdlib.h>

#include "backend/host/host.h"
#include "base/fault.h"

typedef struct pool_job {
    void (*fn)(void *arg, size_t chunk);
    void *arg;
    size_t n;
    atomic_size_t next, done;
    int refs; /* pool threads inside the job, under the pool's lock */
} pool_job;

struct kiln__hpool {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    pool_job *job;
    unsigned gen;
    int quit;
    unsigned nthreads;
    const kiln__hpart *part;
    pthread_t threads[];
};

static void claim(pool_job *j) {
    for (;;) {
        size_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (c >= j->n)
            return;
        j->fn(j->arg, c);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
    }
}

static void *pool_thread(void *arg) {
    kiln__hpool *p = arg;
    unsigned seen = 0;
    if (p->part)
        kiln__host_pin(p->part);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->quit && (!p->job || p->gen == seen))
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->gen;
        pool_job *j = p->job;
        j->refs++;
        pthread_mutex_unlock(&p->lock);
        claim(j);
        pthread_mutex_lock(&p->lock);
        if (--j->refs == 0)
            pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

kiln__hpool *kiln__host_pool_new(unsigned threads, const kiln__hpart *part) {
    unsigned n = threads > 1 ? threads - 1 : 0; /* the launching thread is one */
    kiln__hpool *p = kiln__calloc(1, sizeof *p + n * sizeof(pthread_t));
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->idle, NULL);
    p->part = part;
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, pool_thread, p) != 0)
            break;
        p->nthreads++;
    }
    return p;
}

void kiln__host_pool_free(kiln__hpool *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->idle);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void kiln__host_pool_run(void *pool, size_t n, void (*fn)(void *arg, size_t chunk), void *arg) {
    kiln__hpool *p = pool;
    pool_job j = { .fn = fn, .arg = arg, .n = n };
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    if (!p || p->nthreads == 0) {
        claim(&j);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->job = &j;
    p->gen++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    claim(&j);
    /* the chunks other threads claimed: they are running them */
    while (atomic_load_explicit(&j.done, memory_order_acquire) < n)
        sched_yield();
    pthread_mutex_lock(&p->lock);
    p->job = NULL;
    while (j.refs)
        pthread_cond_wait(&p->idle, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
