/* A mutex that knows which thread holds it, so that the functions that
 * must run under a lock can say so with an assert (issue 43: invariants at
 * the seams), and a release by a thread that never took the lock, or a
 * second acquire by its holder (a self-deadlock), stops at an assert in the
 * Debug build instead of corrupting what the lock guards. Under NDEBUG the
 * owner is still kept (one relaxed store each way) but nothing checks it. */
#ifndef KILN_BASE_LOCK_H
#define KILN_BASE_LOCK_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct kiln__lock {
    pthread_mutex_t mutex;
    atomic_uintptr_t owner; /* kiln__lock_self() of the holder, or 0 */
} kiln__lock;

#define KILN__LOCK_INITIALIZER \
    { PTHREAD_MUTEX_INITIALIZER, 0 }

/* A number unique to the calling thread among live threads (never 0). */
uintptr_t kiln__lock_self(void);

static inline void kiln__lock_init(kiln__lock *l) {
    pthread_mutex_init(&l->mutex, NULL);
    atomic_init(&l->owner, 0);
}

static inline void kiln__lock_destroy(kiln__lock *l) {
    assert(atomic_load_explicit(&l->owner, memory_order_relaxed) == 0 &&
           "a lock destroyed while held");
    pthread_mutex_destroy(&l->mutex);
}

static inline int kiln__lock_held(kiln__lock *l) {
    return atomic_load_explicit(&l->owner, memory_order_relaxed) == kiln__lock_self();
}

static inline void kiln__lock_acquire(kiln__lock *l) {
    assert(!kiln__lock_held(l) && "a lock taken twice by one thread (a self-deadlock)");
    pthread_mutex_lock(&l->mutex);
    assert(atomic_load_explicit(&l->owner, memory_order_relaxed) == 0 &&
           "a lock acquired while another thread is recorded as its holder");
    atomic_store_explicit(&l->owner, kiln__lock_self(), memory_order_relaxed);
}

static inline void kiln__lock_release(kiln__lock *l) {
    assert(kiln__lock_held(l) && "a lock released by a thread that does not hold it");
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&l->mutex);
}

/* pthread_cond_wait on the lock: the holder gives it up while it sleeps. */
static inline void kiln__lock_wait(pthread_cond_t *cond, kiln__lock *l) {
    assert(kiln__lock_held(l) && "a condition waited on without its lock");
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
    pthread_cond_wait(cond, &l->mutex);
    atomic_store_explicit(&l->owner, kiln__lock_self(), memory_order_relaxed);
}

#endif
