/* Contexts and queues. A queue is a list of commands and one worker thread
 * (started at the first command) that runs them: in order, or, on an
 * out-of-order queue, the first whose wait list has ended. A command whose
 * wait list holds a failed event does not run; its event fails. A small
 * command on an idle in-order queue whose wait list has ended runs on the
 * enqueuing thread, with the same event and notifications (a kernel of a
 * sub-device never does: it runs on the queue's worker, pinned to the
 * sub-device's CPUs). */
#include <assert.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/host.h"
#include "base/fault.h"
#include "base/strbuf.h"

/* Kernel launches of at most this many work-items, and transfers of at
 * most this many bytes, run on the calling thread when they can. */
#define KILN__HOST_INLINE_ITEMS (1u << 16)
#define KILN__HOST_INLINE_BYTES (1u << 16)

kiln_status kiln__host_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                      void **context) {
    (void)devices;
    *context = NULL;
    if (num_devices == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "a context needs at least one device");
    int *c = kiln__calloc(1, sizeof *c);
    if (!c)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host context: out of memory");
    *context = c;
    return KILN_OK;
}

void kiln__host_context_release(void *context) {
    free(context);
}

kiln_status kiln__host_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                    void **queue) {
    (void)context;
    kiln__hqueue *q = kiln__calloc(1, sizeof *q);
    *queue = NULL;
    if (!q)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host queue: out of memory");
    q->part = device ? device->handle : NULL;
    q->threads = q->part ? (int)q->part->count : (int)kiln__hcc.threads;
    if (pthread_cond_init(&q->idle_cond, NULL) != 0) {
        free(q);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host queue: no condition");
    }
    if (q->threads > 1 && !(q->pool = kiln__host_pool_new((unsigned)q->threads, q->part))) {
        pthread_cond_destroy(&q->idle_cond);
        free(q);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host queue: out of memory");
    }
    q->out_of_order = (flags & KILN_QUEUE_OUT_OF_ORDER) != 0;
    q->profiling = (flags & KILN_QUEUE_PROFILING) != 0;
    *queue = q;
    return KILN_OK;
}

void kiln__host_cmd_free(kiln__hcmd *cmd) {
    if (!cmd)
        return;
    for (size_t i = 0; i < cmd->num_wait; i++)
        kiln__host_event_put(cmd->wait[i]);
    free(cmd->wait);
    kiln__host_buf_put(cmd->buf);
    kiln__host_buf_put(cmd->buf2);
    if (cmd->bufs) {
        for (size_t i = 0; i < cmd->launch.num_args; i++)
            kiln__host_buf_put(cmd->bufs[i]); /* (the array is in storage) */
    }
    kiln__host_prog_put(cmd->prog);
    if (!cmd->storage_inline)
        free(cmd->storage);
    kiln__host_event_put(cmd->ev);
    free(cmd);
}

/* with the lock held */
static int waits_ended(const kiln__hcmd *c, int *failed) {
    assert(kiln__lock_held(&kiln__host_lock) && "event states are read under the backend's lock");
    *failed = 0;
    for (size_t i = 0; i < c->num_wait; i++) {
        if (c->wait[i]->state > KILN_EVENT_COMPLETE)
            return 0;
        if (c->wait[i]->state < 0)
            *failed = 1;
    }
    return 1;
}

static void free_queue(kiln__hqueue *q) {
    kiln__host_event_put(q->barrier);
    kiln__host_event_put(q->last);
    pthread_cond_destroy(&q->idle_cond);
    kiln__host_pool_free(q->pool);
    free(q);
}

static int run_cmd(kiln__hcmd *c) {
    switch (c->op) {
    case KILN__HOP_KERNEL:
        return kiln__host_run_kernel(c);
    case KILN__HOP_WRITE:
        assert(c->off <= c->buf->size && c->size <= c->buf->size - c->off && "a write inside");
        memcpy(c->buf->base + c->off, c->src, c->size);
        return 0;
    case KILN__HOP_READ:
        assert(c->off <= c->buf->size && c->size <= c->buf->size - c->off && "a read inside");
        memcpy(c->host, c->buf->base + c->off, c->size);
        return 0;
    case KILN__HOP_COPY:
        assert(c->off <= c->buf->size && c->size <= c->buf->size - c->off &&
               c->off2 <= c->buf2->size && c->size <= c->buf2->size - c->off2 &&
               "a copy inside both buffers");
        memmove(c->buf2->base + c->off2, c->buf->base + c->off, c->size);
        return 0;
    case KILN__HOP_FILL: {
        char *p = c->buf->base + c->off;
        size_t ps = c->pattern_size;
        assert(c->off <= c->buf->size && c->size <= c->buf->size - c->off && ps > 0 &&
               ps <= sizeof c->pattern && "a fill inside its buffer, with its pattern");
        if (ps == 1) {
            memset(p, c->pattern[0], c->size);
        } else {
            size_t done = c->size < ps ? c->size : ps;
            memcpy(p, c->pattern, done);
            while (done < c->size) { /* doubling copies */
                size_t n = done <= c->size - done ? done : c->size - done;
                memcpy(p + done, p, n);
                done += n;
            }
        }
        return 0;
    }
    case KILN__HOP_NOP:
        return 0;
    }
    return 1;
}

/* Runs c (its wait list ended; failed says how) and ends its event. */
static void execute(kiln__hcmd *c, int failed) {
    if (!failed)
        failed = run_cmd(c) != 0;
    kiln__host_event_end(c->ev, failed);
}

static kiln__hcmd *pick(kiln__hqueue *q, int *failed) {
    assert(kiln__lock_held(&kiln__host_lock) && "a queue's list is walked under the lock");
    if (q->inline_busy)
        return NULL;
    for (kiln__hcmd *prev = NULL, *c = q->head; c; prev = c, c = c->next) {
        if (waits_ended(c, failed)) {
            if (prev)
                prev->next = c->next;
            else
                q->head = c->next;
            if (q->tail == c)
                q->tail = prev;
            c->next = NULL;
            return c;
        }
        if (!q->out_of_order)
            break;
    }
    return NULL;
}

/* A sub-device's worker runs on its CPUs only; the OpenMP threads its
 * launches start inherit the mask (pthread_create copies it). */
void kiln__host_pin(const kiln__hpart *p) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned u = p->first; u < p->first + p->count; u++)
        CPU_SET(kiln__hcc.cpu_ids[u % kiln__hcc.cpus], &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
}

static void *worker(void *arg) {
    kiln__hqueue *q = arg;
    if (q->part)
        kiln__host_pin(q->part);
    kiln__lock_acquire(&kiln__host_lock);
    for (;;) {
        int failed = 0;
        kiln__hcmd *c = pick(q, &failed);
        if (!c) {
            if (q->closing && !q->head && !q->inline_busy)
                break;
            if (!q->head && !q->closing) {
                /* nothing to run: only an enqueue or the release wakes it
                 * (not every event's end, which would cost a command run on
                 * the calling thread a wake-up of this thread: 20 us on a
                 * loaded machine) */
                q->idle = 1;
                kiln__lock_wait(&q->idle_cond, &kiln__host_lock);
                q->idle = 0;
            } else {
                kiln__lock_wait(&kiln__host_cond, &kiln__host_lock);
            }
            continue;
        }
        q->active++;
        q->current = c;
        assert(c->ev->state > KILN_EVENT_RUNNING && "a command starts once, from queued");
        c->ev->state = KILN_EVENT_RUNNING;
        if (c->ev->profiling) {
            c->ev->t[1] = c->ev->t[1] ? c->ev->t[1] : kiln__host_now_ns();
            c->ev->t[2] = kiln__host_now_ns();
        }
        kiln__lock_release(&kiln__host_lock);
        execute(c, failed);
        kiln__lock_acquire(&kiln__host_lock);
        q->active--;
        q->current = NULL;
        pthread_cond_broadcast(&kiln__host_cond);
        kiln__lock_release(&kiln__host_lock);
        kiln__host_cmd_free(c);
        kiln__lock_acquire(&kiln__host_lock);
    }
    int detached = q->closing == 2;
    kiln__lock_release(&kiln__host_lock);
    if (detached)
        free_queue(q);
    return NULL;
}

static int small(const kiln__hcmd *c) {
    switch (c->op) {
    case KILN__HOP_KERNEL: {
        size_t n = 1;
        for (int d = 0; d < 3; d++)
            n *= c->launch.local[d] * c->launch.groups[d];
        return n <= KILN__HOST_INLINE_ITEMS;
    }
    case KILN__HOP_NOP:
        return 1;
    default:
        return c->size <= KILN__HOST_INLINE_BYTES;
    }
}

kiln_status kiln__host_enqueue(kiln__hqueue *q, kiln__hcmd *cmd, size_t num_wait, void *const *wait,
                               void **out_event, int blocking) {
    kiln_status st = KILN_OK;
    kiln__hevent *ev = kiln__host_event_new(0, q->profiling);
    size_t extra = q->out_of_order ? 1 : 0;
    if (out_event)
        *out_event = NULL;
    if (ev && num_wait + extra) {
        cmd->wait = kiln__calloc(num_wait + extra, sizeof *cmd->wait);
        if (!cmd->wait) {
            kiln__host_event_put(ev);
            ev = NULL;
        }
    }
    if (!ev) {
        kiln__host_cmd_free(cmd);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host enqueue: out of memory");
    }
    cmd->ev = ev;
    for (size_t i = 0; i < num_wait; i++) {
        cmd->wait[cmd->num_wait++] = wait[i];
        kiln__host_event_retain(wait[i]);
    }
    kiln__host_event_retain(ev); /* ours, until the end of this call */
    kiln__lock_acquire(&kiln__host_lock);
    if (q->out_of_order && q->barrier) {
        cmd->wait[cmd->num_wait++] = q->barrier;
        kiln__host_event_retain(q->barrier);
    }
    if (!q->started) {
        if (pthread_create(&q->thread, NULL, worker, q) != 0) {
            kiln__lock_release(&kiln__host_lock);
            kiln__host_cmd_free(cmd);
            kiln__host_event_put(ev);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "host queue: cannot start its worker thread");
        }
        q->started = 1;
    }
    kiln__host_event_retain(ev);
    kiln__host_event_put(q->last);
    q->last = ev;
    int failed = 0;
    /* (a sub-device's kernels run on its pinned worker, never here) */
    if (!q->out_of_order && !q->head && !q->active && !q->inline_busy &&
        !(q->part && cmd->op == KILN__HOP_KERNEL) && waits_ended(cmd, &failed) && small(cmd)) {
        q->inline_busy = 1;
        ev->state = KILN_EVENT_RUNNING;
        if (ev->profiling)
            ev->t[2] = kiln__host_now_ns();
        kiln__lock_release(&kiln__host_lock);
        if (out_event) {
            kiln__host_event_retain(ev);
            *out_event = ev;
        }
        execute(cmd, failed);
        kiln__lock_acquire(&kiln__host_lock);
        q->inline_busy = 0;
        pthread_cond_broadcast(&kiln__host_cond);
        kiln__lock_release(&kiln__host_lock);
        kiln__host_cmd_free(cmd);
    } else {
        ev->state = KILN_EVENT_SUBMITTED;
        if (q->tail)
            q->tail->next = cmd;
        else
            q->head = cmd;
        q->tail = cmd;
        pthread_cond_broadcast(&kiln__host_cond);
        if (q->idle)
            pthread_cond_signal(&q->idle_cond);
        kiln__lock_release(&kiln__host_lock);
        if (out_event) {
            kiln__host_event_retain(ev);
            *out_event = ev;
        }
    }
    if (blocking) {
        void *one = ev;
        st = kiln__host_event_wait(1, &one);
    }
    kiln__host_event_put(ev);
    return st;
}

void kiln__host_queue_release(void *queue) {
    kiln__hqueue *q = queue;
    if (!q)
        return;
    kiln__lock_acquire(&kiln__host_lock);
    if (!q->started) {
        kiln__lock_release(&kiln__host_lock);
        free_queue(q);
        return;
    }
    int idle = !q->head && !q->active && !q->inline_busy;
    q->closing = idle ? 1 : 2;
    pthread_cond_broadcast(&kiln__host_cond);
    pthread_cond_signal(&q->idle_cond);
    kiln__lock_release(&kiln__host_lock);
    if (idle) {
        pthread_join(q->thread, NULL);
        free_queue(q);
    } else {
        pthread_detach(q->thread); /* the worker frees q when its list is empty */
    }
}

kiln_status kiln__host_queue_finish(void *queue) {
    kiln__hqueue *q = queue;
    kiln__lock_acquire(&kiln__host_lock);
    while (q->head || q->active || q->inline_busy)
        kiln__lock_wait(&kiln__host_cond, &kiln__host_lock);
    kiln__lock_release(&kiln__host_lock);
    return KILN_OK;
}

kiln_status kiln__host_queue_flush(void *queue) {
    (void)queue;
    return KILN_OK;
}

kiln_status kiln__host_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                    void **out_event) {
    kiln__hqueue *q = queue;
    kiln__hcmd *cmd = kiln__calloc(1, sizeof *cmd);
    void **all = NULL;
    size_t n = num_wait;
    if (!cmd)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host marker: out of memory");
    cmd->op = KILN__HOP_NOP;
    if (q->out_of_order && num_wait == 0) {
        /* everything enqueued before it */
        kiln__lock_acquire(&kiln__host_lock);
        size_t count = q->current ? 1 : 0;
        for (kiln__hcmd *c = q->head; c; c = c->next)
            count++;
        all = kiln__calloc(count ? count : 1, sizeof *all);
        if (all) {
            n = 0;
            if (q->current)
                all[n++] = q->current->ev;
            for (kiln__hcmd *c = q->head; c; c = c->next)
                all[n++] = c->ev;
            for (size_t i = 0; i < n; i++)
                kiln__host_event_retain(all[i]);
        }
        kiln__lock_release(&kiln__host_lock);
        if (!all) {
            free(cmd);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host marker: out of memory");
        }
        wait = all;
    }
    void *ev = NULL;
    kiln_status st = kiln__host_enqueue(q, cmd, n, wait,
                                        (barrier && q->out_of_order) || out_event ? &ev : NULL, 0);
    if (all) {
        for (size_t i = 0; i < n; i++)
            kiln__host_event_put(all[i]);
        free(all);
    }
    if (st != KILN_OK)
        return st;
    if (barrier && q->out_of_order) {
        kiln__lock_acquire(&kiln__host_lock);
        kiln__hevent *old = q->barrier;
        kiln__host_event_retain(ev);
        q->barrier = ev;
        kiln__lock_release(&kiln__host_lock);
        kiln__host_event_put(old);
    }
    if (out_event)
        *out_event = ev;
    else
        kiln__host_event_put(ev);
    return KILN_OK;
}
