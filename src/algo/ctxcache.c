/* Per-context cache of the built-in operations (their generator objects,
 * keyed by kind + declaration + expressions, so a call neither regenerates
 * nor hashes its source) and of scratch buffers (grown on demand, reused
 * across calls instead of allocated and released each time; a release can
 * synchronise the device on some backends). It is attached to the
 * context (kiln_context_attach) and goes with the context's last handle;
 * its objects hold no handle on the context. */
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"

#define MAX_OBJS 256

typedef struct cobj {
    char *key;
    int kind;
    void *obj;
} cobj;

typedef struct scratch {
    kiln_buffer *buf;
    size_t size;
    kiln_event *last;  /* completion of the last work that used it */
    kiln_queue *lastq; /* its queue (compared only, not retained) */
    int busy;
} scratch;

typedef struct kiln__ctxcache {
    kiln_context *context;
    pthread_mutex_t lock;
    cobj objs[MAX_OBJS];
    size_t nobjs;
    scratch slots[KILN__SCRATCH_SLOTS];
} kiln__ctxcache;

static void obj_free(int kind, void *obj) {
    switch (kind) {
    case KILN__OBJ_REDUCTION: kiln_reduction_release(obj); break;
    case KILN__OBJ_SCAN: kiln_scan_release(obj); break;
    default: kiln_elementwise_release(obj); break;
    }
}

static void cache_free(void *p) {
    kiln__ctxcache *c = p;
    for (size_t k = 0; k < c->nobjs; k++) {
        obj_free(c->objs[k].kind, c->objs[k].obj);
        free(c->objs[k].key);
    }
    for (int s = 0; s < KILN__SCRATCH_SLOTS; s++) {
        kiln__event_drop(&c->slots[s].last);
        kiln_buffer_release(c->slots[s].buf);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void *cache_make(kiln_context *context, void *arg) {
    (void)arg;
    kiln__ctxcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->context = context;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static const char cache_key = 0; /* its address names the attachment */

static kiln__ctxcache *get_cache(kiln_context *context) {
    void *c = NULL;
    if (kiln_context_attach(context, &cache_key, cache_make, NULL, cache_free,
                            &c) != KILN_OK)
        return NULL;
    return c;
}

kiln_status kiln__cached_obj(kiln_context *context, int kind, const char *key,
                             kiln_status (*make)(void *arg, void **obj),
                             void *arg, void **obj, int *owned) {
    *obj = NULL;
    *owned = 0;
    kiln__ctxcache *c = get_cache(context);
    if (c) {
        pthread_mutex_lock(&c->lock);
        for (size_t k = 0; k < c->nobjs; k++)
            if (c->objs[k].kind == kind && !strcmp(c->objs[k].key, key)) {
                *obj = c->objs[k].obj;
                pthread_mutex_unlock(&c->lock);
                return KILN_OK;
            }
        pthread_mutex_unlock(&c->lock);
    }
    kiln_status st = make(arg, obj);
    if (st != KILN_OK)
        return st;
    char *kc = kiln__strdup(key);
    if (c && kc) {
        pthread_mutex_lock(&c->lock);
        /* Another thread may have made the same meanwhile: keep the first. */
        for (size_t k = 0; k < c->nobjs; k++)
            if (c->objs[k].kind == kind && !strcmp(c->objs[k].key, key)) {
                void *mine = *obj;
                *obj = c->objs[k].obj;
                pthread_mutex_unlock(&c->lock);
                free(kc);
                obj_free(kind, mine);
                return KILN_OK;
            }
        if (c->nobjs < MAX_OBJS) {
            c->objs[c->nobjs].key = kc;
            c->objs[c->nobjs].kind = kind;
            c->objs[c->nobjs].obj = *obj;
            c->nobjs++;
            pthread_mutex_unlock(&c->lock);
            return KILN_OK;
        }
        pthread_mutex_unlock(&c->lock);
    }
    free(kc);
    *owned = 1; /* not cached: the caller releases it */
    return KILN_OK;
}

kiln_status kiln__scratch_get(kiln_queue *queue, int slot, size_t bytes,
                              kiln__scratch *out) {
    memset(out, 0, sizeof *out);
    out->slot = slot;
    kiln_context *ctx = kiln_queue_context(queue);
    kiln__ctxcache *c = get_cache(ctx);
    if (c) {
        pthread_mutex_lock(&c->lock);
        scratch *s = &c->slots[slot];
        if (!s->busy) {
            kiln_status st = KILN_OK;
            if (!s->buf || s->size < bytes) {
                /* Grow (by half again, so a slowly growing n does not
                 * reallocate each call); the old one goes once its last
                 * user ends. */
                size_t want = bytes + bytes / 2;
                kiln_buffer *nb = NULL;
                st = kiln_buffer_create(ctx, want, KILN_BUFFER_READ_WRITE,
                                        NULL, &nb);
                if (st == KILN_OK) {
                    kiln_buffer_release(s->buf);
                    kiln__event_drop(&s->last);
                    s->buf = nb;
                    s->size = want;
                    s->lastq = NULL;
                }
            }
            if (st == KILN_OK) {
                s->busy = 1;
                out->buf = s->buf;
                out->cached = 1;
                /* Work from another queue (or an out-of-order one) may still
                 * use it: wait for that. */
                if (s->last && (s->lastq != queue ||
                                (kiln_queue_get_flags(queue) & KILN_QUEUE_OUT_OF_ORDER))) {
                    out->dep = s->last;
                    kiln_event_retain(out->dep);
                }
            }
            pthread_mutex_unlock(&c->lock);
            if (st != KILN_OK)
                return st;
            return KILN_OK;
        }
        pthread_mutex_unlock(&c->lock);
    }
    /* In use by another thread's call right now: a private one. */
    return kiln_buffer_create(ctx, bytes, KILN_BUFFER_READ_WRITE, NULL,
                              &out->buf);
}

void kiln__scratch_put(kiln_queue *queue, kiln__scratch *s, kiln_event *last) {
    kiln__event_drop(&s->dep);
    if (!s->buf)
        return;
    if (!s->cached) {
        kiln_buffer_release(s->buf);
        s->buf = NULL;
        return;
    }
    kiln__ctxcache *c = get_cache(kiln_queue_context(queue));
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    scratch *sl = &c->slots[s->slot];
    if (last) {
        kiln_event_retain(last);
        kiln__event_drop(&sl->last);
        sl->last = last;
        sl->lastq = queue;
    } else if (sl->last) {
        /* Nothing was enqueued this time; what came before still counts. */
    }
    sl->busy = 0;
    pthread_mutex_unlock(&c->lock);
    s->buf = NULL;
}

kiln_status kiln__wait_plus(size_t num_wait, kiln_event *const *wait,
                            kiln_event *dep, kiln_event *const **list,
                            size_t *n) {
    *list = wait;
    *n = num_wait;
    if (!dep)
        return KILN_OK;
    kiln_event **l = malloc((num_wait + 1) * sizeof *l);
    if (!l)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "wait list");
    for (size_t k = 0; k < num_wait; k++)
        l[k] = wait[k];
    l[num_wait] = dep;
    *list = l;
    *n = num_wait + 1;
    return KILN_OK;
}
