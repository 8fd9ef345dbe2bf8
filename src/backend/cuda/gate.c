/* Host gating: commands held on the host while they wait for a user event.
 *
 * A CUDA stream cannot skip a command: one that waited on a user event's
 * word (cuStreamWaitValue32) ran even when the event failed, where OpenCL
 * drivers skip it (issue 13, finding 9). So a command whose wait list holds
 * something a stream cannot wait for yet (a user event not set, a command
 * event still held) is not given to the driver: kiln__cu_gate_hold keeps
 * it, with a copy of its arguments (type->hold: buffers and module
 * retained, the caller's bytes copied where the call promises they may
 * change on return), in its queue's list. On an in-order queue every later
 * command joins the list behind it; on an out-of-order queue only those
 * that wait for it (or for everything before them: markers, and whatever
 * follows a held barrier).
 *
 * When a user event completes (or is released unset, which fails it),
 * kiln__cu_gate_kick walks the queues with held commands and submits, in
 * order, every command that can go now: kiln__cu_submit runs it on its
 * stream, or only records its event, failed, when something it waits for
 * failed. Submitting one command can free others (on other queues) that
 * wait for it, so the walk repeats until nothing moves. Notifications
 * asked for on a held event are registered then.
 *
 * Where kiln cannot see a stream's work, it cannot hold it back: a queue
 * whose CUstream was handed out (kiln_cuda_queue_native, which the cuBLAS and
 * cuFFT paths use too) or wrapped is "native": it holds nothing, its
 * streams wait for user events on the device (cuStreamWaitValue32, as
 * before host gating), so there a command behind a failed user event still
 * runs. A queue that holds commands does not go native (WRONG_STATE): its
 * stream would wait on the device for a user event, and a module load
 * meanwhile (cuBLAS loads its kernels lazily at the first call) waits for
 * that stream: the process hung (test_gate_native, cuda:0). Asking for a
 * held command's CUevent first submits everything held
 * (kiln__cu_gate_flush_all, the same walk with unset user events left to
 * the streams).
 *
 * Threads: the kick runs on the thread that completed the event, or, on a
 * driver callback thread (where CUDA calls are forbidden), on kiln's gate
 * thread. One kick at a time (gate_lock); a kick asked for during one
 * (an event released from inside it) makes it walk again. Locks: gate_lock,
 * then a queue's lock, then an event's; list_lock is taken alone. */
#include <pthread.h>
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int in_kick;
static atomic_int kick_again;

/* queues with held commands (each holds a queue reference) */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct gated_queue {
    struct gated_queue *next;
    kiln__cu_queue *q;
} gated_queue;
static gated_queue *gated_list;
static atomic_int held_total; /* held commands, all queues */

int kiln__cu_gate_must_hold(kiln__cu_queue *q, unsigned order, size_t num_wait, void *const *wait) {
    if (q->native) {
        /* streams wait for user events; a held command's event has no
         * CUevent yet: everything held must go to the streams first */
        for (size_t i = 0; i < num_wait; i++) {
            kiln__cu_event *w = wait[i];
            if (w && !w->is_user && kiln__cu_event_pending(w))
                return 2;
        }
        return 0;
    }
    if (q->held_head) {
        if (q->nlanes == 1 || q->held_barrier || (order & KILN__CU_JOINS))
            return 1;
    }
    for (size_t i = 0; i < num_wait; i++)
        if (wait[i] && kiln__cu_event_pending(wait[i]))
            return 1;
    return 0;
}

kiln_status kiln__cu_gate_hold(kiln__cu_queue *q, const kiln__cu_optype *type, const void *args,
                               unsigned order, size_t num_wait, void *const *wait,
                               kiln__cu_event **ev) {
    kiln__cu_held *h = kiln__calloc(1, sizeof *h);
    void **w = num_wait ? kiln__malloc(num_wait * sizeof *w) : NULL;
    gated_queue *g = q->gated ? NULL : kiln__malloc(sizeof *g);
    kiln_status st = KILN_OK;
    if (!h || (num_wait && !w) || (!q->gated && !g))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                             "holding a command behind a user event");
    if (st == KILN_OK && !*ev)
        st = kiln__cu_event_new(q, ev);
    /* last, so that nothing fails after the copy took over the arguments */
    if (st == KILN_OK && !(h->args = type->hold(args)))
        st =
            kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "copying a held command's arguments");
    if (st != KILN_OK) {
        free(h);
        free(w);
        free(g);
        return st;
    }
    h->type = type;
    h->order = order;
    for (size_t i = 0; i < num_wait; i++)
        if (wait[i]) {
            kiln__cu_event_retain(wait[i]);
            w[h->num_wait++] = wait[i];
        }
    h->wait = w;
    kiln__cu_event_retain(*ev);
    h->ev = *ev;
    h->ev->queued_ns = kiln__cu_now_ns();
    h->ev->stream = q->lanes[0];
    pthread_mutex_lock(&h->ev->lock);
    h->ev->held = 1;
    pthread_mutex_unlock(&h->ev->lock);
    if (q->held_tail)
        q->held_tail->next = h;
    else
        q->held_head = h;
    q->held_tail = h;
    if (order & KILN__CU_BARRIER)
        q->held_barrier = 1;
    atomic_fetch_add(&held_total, 1);
    if (!q->gated) {
        q->gated = 1;
        kiln__cu_queue_ref(q);
        g->q = q;
        pthread_mutex_lock(&list_lock);
        g->next = gated_list;
        gated_list = g;
        pthread_mutex_unlock(&list_lock);
    }
    return KILN_OK;
}

void kiln__cu_gate_drain_wait(kiln__cu_queue *q) {
    while (q->held_head)
        pthread_cond_wait(&q->held_cond, &q->lock);
}

/* What a walk leaves to do once the queue's lock is gone. */
typedef struct after {
    kiln__cu_held *done; /* submitted: notes, drop, releases */
} after;

/* force: unset user events do not stop it (the stream waits for them). */
static int ready(const kiln__cu_held *h, int force) {
    for (size_t i = 0; i < h->num_wait; i++) {
        kiln__cu_event *w = h->wait[i];
        if ((!force || !w->is_user) && kiln__cu_event_pending(w))
            return 0;
    }
    return 1;
}

/* Submits what can go on q; returns how many went. */
static int drain_queue(kiln__cu_queue *q, after *a, int force) {
    int moved = 0;
    if (kiln__cu_ctx_use(q->dev->ctx) != KILN_OK)
        return 0; /* tried again at the next kick */
    pthread_mutex_lock(&q->lock);
    kiln__cu_held **pp = &q->held_head, *prev = NULL;
    int earlier_held = 0, barrier_held = 0;
    while (*pp) {
        kiln__cu_held *h = *pp;
        int go = !barrier_held && ready(h, force) && !(earlier_held && (h->order & KILN__CU_JOINS));
        if (!go) {
            if (q->nlanes == 1)
                break; /* in order: nothing passes a held command */
            earlier_held = 1;
            if (h->order & KILN__CU_BARRIER)
                barrier_held = 1;
            prev = h;
            pp = &h->next;
            continue;
        }
        *pp = h->next;
        if (q->held_tail == h)
            q->held_tail = prev;
        if (kiln__cu_submit(q, h->type, h->args, h->num_wait, h->wait, h->ev) != KILN_OK) {
            /* the driver refused it (the error is on this thread): the
             * command is lost, its event reports failure */
            pthread_mutex_lock(&h->ev->lock);
            h->ev->failed = 1;
            pthread_mutex_unlock(&h->ev->lock);
        }
        pthread_mutex_lock(&h->ev->lock);
        h->ev->held = 0;
        pthread_cond_broadcast(&h->ev->cond);
        pthread_mutex_unlock(&h->ev->lock);
        atomic_fetch_sub(&held_total, 1);
        h->next = a->done;
        a->done = h;
        moved++;
    }
    if (!q->held_head) {
        q->held_barrier = 0;
        pthread_cond_broadcast(&q->held_cond);
    } else if (q->held_barrier) {
        int b = 0;
        for (kiln__cu_held *h = q->held_head; h; h = h->next)
            b |= (h->order & KILN__CU_BARRIER) != 0;
        q->held_barrier = b;
    }
    pthread_mutex_unlock(&q->lock);
    return moved;
}

static void finish_after(after *a) {
    /* oldest first, so notifications are registered in enqueue order */
    kiln__cu_held *rev = NULL;
    while (a->done) {
        kiln__cu_held *next = a->done->next;
        a->done->next = rev;
        rev = a->done;
        a->done = next;
    }
    while (rev) {
        kiln__cu_held *h = rev;
        rev = h->next;
        kiln__cu_event_attach_notes(h->ev);
        h->type->drop(h->args);
        for (size_t i = 0; i < h->num_wait; i++)
            kiln__cu_event_release(h->wait[i]);
        free(h->wait);
        kiln__cu_event_release(h->ev);
        free(h);
    }
}

static void kick_now(int force) {
    pthread_mutex_lock(&gate_lock);
    in_kick = 1;
    int moved;
    do {
        atomic_store(&kick_again, 0);
        moved = 0;
        /* the queues, each with a reference for this walk */
        pthread_mutex_lock(&list_lock);
        size_t n = 0;
        for (gated_queue *g = gated_list; g; g = g->next)
            n++;
        kiln__cu_queue **qs = n ? kiln__malloc(n * sizeof *qs) : NULL;
        n = 0;
        if (qs)
            for (gated_queue *g = gated_list; g; g = g->next) {
                kiln__cu_queue_ref(g->q);
                qs[n++] = g->q;
            }
        pthread_mutex_unlock(&list_lock);
        if (!qs && n)
            break; /* out of memory: the next kick tries again */
        for (size_t i = 0; i < n; i++) {
            after a = { NULL };
            moved += drain_queue(qs[i], &a, force);
            finish_after(&a);
        }
        /* queues whose list emptied leave the gated list */
        for (size_t i = 0; i < n; i++) {
            kiln__cu_queue *q = qs[i];
            gated_queue *gone = NULL;
            pthread_mutex_lock(&q->lock);
            if (!q->held_head && q->gated) {
                q->gated = 0;
                pthread_mutex_lock(&list_lock);
                for (gated_queue **pp = &gated_list; *pp; pp = &(*pp)->next)
                    if ((*pp)->q == q) {
                        gone = *pp;
                        *pp = gone->next;
                        break;
                    }
                pthread_mutex_unlock(&list_lock);
            }
            pthread_mutex_unlock(&q->lock);
            if (gone) {
                kiln__cu_queue_unref(q); /* the list's reference */
                free(gone);
            }
            kiln__cu_queue_unref(q); /* this walk's */
        }
        free(qs);
    } while (moved > 0 || atomic_load(&kick_again));
    in_kick = 0;
    pthread_mutex_unlock(&gate_lock);
}

/* ---- kiln's gate thread: kicks asked for on driver threads ------------- */

static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thread_cond = PTHREAD_COND_INITIALIZER;
static int thread_state; /* 0: not started, 1: running, -1: could not start */
static int thread_pending;

static void *gate_thread(void *unused) {
    (void)unused;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "kiln-cuda-gate");
#endif
    for (;;) {
        pthread_mutex_lock(&thread_lock);
        while (!thread_pending)
            pthread_cond_wait(&thread_cond, &thread_lock);
        thread_pending = 0;
        pthread_mutex_unlock(&thread_lock);
        kick_now(0);
    }
    return NULL;
}

void kiln__cu_gate_kick(void) {
    if (atomic_load(&held_total) == 0)
        return;
    if (in_kick) {
        atomic_store(&kick_again, 1);
        return;
    }
    if (!kiln__cu_in_callback) {
        kick_now(0);
        return;
    }
    pthread_mutex_lock(&thread_lock);
    if (thread_state == 0) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        thread_state = pthread_create(&t, &attr, gate_thread, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy(&attr);
    }
    thread_pending = 1;
    pthread_cond_signal(&thread_cond);
    pthread_mutex_unlock(&thread_lock);
    /* thread_state -1: no thread (out of resources); the next kick from
     * an ordinary thread walks the queues */
}

void kiln__cu_gate_flush_all(void) {
    if (atomic_load(&held_total) == 0 || in_kick)
        return;
    kick_now(1);
}

kiln_status kiln__cu_gate_go_native(kiln__cu_queue *q) {
    pthread_mutex_lock(&q->lock);
    int held = q->held_head != NULL;
    if (!held)
        q->native = 1;
    pthread_mutex_unlock(&q->lock);
    if (held)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "the queue's CUstream cannot be handed out (to cuBLAS, cuFFT, "
                               "NCCL or the caller) while the queue holds commands behind a "
                               "user event that is not set: its stream would wait for it on "
                               "the device, and the driver's lazy kernel loading then "
                               "deadlocks; set the event first");
    return KILN_OK;
}
