/* kiln's own threads (the callback thread, the CUDA backend's workers):
 * started detached, named for debuggers, fed through a FIFO of nodes. */
#ifndef KILN_BASE_THREAD_H
#define KILN_BASE_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* Starts fn(arg) on a detached thread: 1 when it runs, 0 when it could not
 * be started. */
static inline int kiln__thread_detached(void *(*fn)(void *), void *arg) {
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return 0;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&t, &attr, fn, arg) == 0;
    pthread_attr_destroy(&attr);
    return started;
}

/* Names the calling thread (Linux: at most 15 characters). */
static inline void kiln__thread_name(const char *name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}

/* A FIFO of nodes whose first member is a kiln__fifo_link, guarded by
 * lock; cond is signalled on each push. */
typedef struct kiln__fifo_link {
    struct kiln__fifo_link *next;
} kiln__fifo_link;

typedef struct kiln__fifo {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    kiln__fifo_link *head, *tail;
} kiln__fifo;

#define KILN__FIFO_INITIALIZER \
    { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL }

/* With q->lock held. */
static inline void kiln__fifo_push_locked(kiln__fifo *q, kiln__fifo_link *n) {
    n->next = NULL;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
    pthread_cond_signal(&q->cond);
}

static inline void kiln__fifo_push(kiln__fifo *q, kiln__fifo_link *n) {
    pthread_mutex_lock(&q->lock);
    kiln__fifo_push_locked(q, n);
    pthread_mutex_unlock(&q->lock);
}

/* The oldest node, once there is one. */
static inline kiln__fifo_link *kiln__fifo_wait_pop(kiln__fifo *q) {
    pthread_mutex_lock(&q->lock);
    while (!q->head)
        pthread_cond_wait(&q->cond, &q->lock);
    kiln__fifo_link *n = q->head;
    q->head = n->next;
    if (!q->head)
        q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return n;
}

#endif
