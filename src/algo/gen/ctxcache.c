/* Per-context cache of the built-in operations (their generators, keyed by
 * declaration + expressions, so a call neither regenerates nor hashes its
 * source) and of scratch buffers (grown on demand, reused across calls
 * instead of allocated and released each time; a release can synchronise
 * the device on some backends). It is attached to the context
 * (kiln_context_attach) and goes with the context's last handle; the
 * generators hold no handle on the context, and the cache holds one
 * reference to each: a call using one holds its own. */
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "base/error.h"

#define MAX_OBJS 256

typedef struct cobj {
    char *key;
    kiln__gen *gen; /* one reference */
} cobj;

/* the fast path's entries (kiln__gen_fast_find) */
#define MAX_FAST 64
typedef struct fobj {
    unsigned char key[16];
    size_t len;
    kiln__gen *gen; /* one reference */
} fobj;

typedef struct scratch {
    kiln_buffer *buf;
    size_t size;
    kiln_event *last;  /* completion of the last work that used it */
    kiln_queue *lastq; /* its queue (compared only, not retained) */
    int busy;
    unsigned uses; /* hand-outs since buf was new (kiln__scratch.uses) */
} scratch;

typedef struct kiln__ctxcache {
    kiln_context *context;
    pthread_mutex_t lock;
    cobj objs[MAX_OBJS];
    size_t nobjs;
    fobj fast[MAX_FAST];
    size_t nfast;
    scratch slots[KILN__SCRATCH_SLOTS];
} kiln__ctxcache;

static void cache_free(void *p) {
    kiln__ctxcache *c = p;
    for (size_t k = 0; k < c->nobjs; k++) {
        kiln__gen_release(c->objs[k].gen);
        free(c->objs[k].key);
    }
    for (size_t k = 0; k < c->nfast; k++)
        kiln__gen_release(c->fast[k].gen);
    for (int s = 0; s < KILN__SCRATCH_SLOTS; s++) {
        kiln__event_drop(&c->slots[s].last);
        kiln_buffer_release(c->slots[s].buf);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void *cache_make(kiln_context *context, void *arg) {
    (void)arg;
    kiln__ctxcache *c = kiln__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->context = context;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static const char cache_key = 0; /* its address names the attachment */

static kiln__ctxcache *get_cache(kiln_context *context) {
    void *c = NULL;
    if (kiln_context_attach(context, &cache_key, cache_make, NULL, cache_free, &c) != KILN_OK)
        return NULL;
    return c;
}

/* The cached generator under key, with a new reference; NULL if none.
 * Called under c->lock. */
static kiln__gen *find(kiln__ctxcache *c, const char *key) {
    for (size_t k = 0; k < c->nobjs; k++)
        if (!strcmp(c->objs[k].key, key)) {
            kiln__gen_retain(c->objs[k].gen);
            return c->objs[k].gen;
        }
    return NULL;
}

kiln__gen *kiln__gen_fast_find(kiln_context *context, const void *key, size_t len) {
    kiln__ctxcache *c = get_cache(context);
    if (!c || len > sizeof c->fast[0].key)
        return NULL;
    kiln__gen *g = NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t k = 0; k < c->nfast && !g; k++)
        if (c->fast[k].len == len && !memcmp(c->fast[k].key, key, len)) {
            g = c->fast[k].gen;
            kiln__gen_retain(g);
        }
    pthread_mutex_unlock(&c->lock);
    return g;
}

void kiln__gen_fast_put(kiln_context *context, const void *key, size_t len, kiln__gen *gen) {
    kiln__ctxcache *c = get_cache(context);
    if (!c || !gen || len > sizeof c->fast[0].key)
        return;
    pthread_mutex_lock(&c->lock);
    int known = 0;
    for (size_t k = 0; k < c->nfast && !known; k++)
        known = c->fast[k].len == len && !memcmp(c->fast[k].key, key, len);
    if (!known && c->nfast < MAX_FAST) { /* full: the slow path keeps working */
        fobj *f = &c->fast[c->nfast++];
        memcpy(f->key, key, len);
        f->len = len;
        f->gen = gen;
        kiln__gen_retain(gen);
    }
    pthread_mutex_unlock(&c->lock);
}

kiln_status kiln__gen_cached(kiln_context *context, const char *key,
                             kiln_status (*make)(void *arg, kiln__gen **gen), void *arg,
                             kiln__gen **gen) {
    *gen = NULL;
    kiln__ctxcache *c = get_cache(context);
    if (c) {
        pthread_mutex_lock(&c->lock);
        *gen = find(c, key);
        pthread_mutex_unlock(&c->lock);
        if (*gen)
            return KILN_OK;
    }
    /* Made outside the lock: a build may take a while. */
    kiln__gen *made = NULL;
    kiln_status st = make(arg, &made);
    if (st != KILN_OK)
        return st;
    *gen = made;
    char *kc = kiln__strdup(key);
    if (!c || !kc) {
        free(kc); /* not cached: the caller's is the only reference */
        return KILN_OK;
    }
    pthread_mutex_lock(&c->lock);
    kiln__gen *first = find(c, key); /* another thread's, made meanwhile */
    if (!first && c->nobjs < MAX_OBJS) {
        kiln__gen_retain(made);
        c->objs[c->nobjs].key = kc;
        c->objs[c->nobjs].gen = made;
        c->nobjs++;
        kc = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    free(kc);
    if (first) {
        kiln__gen_release(made);
        *gen = first;
    }
    return KILN_OK;
}

kiln_status kiln__scratch_get(kiln_queue *queue, int slot, size_t bytes, kiln__scratch *out) {
    memset(out, 0, sizeof *out);
    out->slot = slot;
    kiln_context *ctx = kiln_queue_context(queue);
    /* A call being recorded into a command graph gets a private buffer: the
     * graph keeps it for its replays (docs/api.md §16), which must not share
     * it with later calls, and its first use is then "fresh" (zeroed by the
     * recorded commands at every replay, never relying on an epoch of an
     * earlier call), and no event of a recorded command stays in the cache. */
    kiln__ctxcache *c = kiln_graph_recording(queue) ? NULL : get_cache(ctx);
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
                st = kiln_buffer_create(ctx, want, KILN_BUFFER_POOLED, NULL, &nb);
                if (st == KILN_OK) {
                    kiln_buffer_release(s->buf);
                    kiln__event_drop(&s->last);
                    s->buf = nb;
                    s->size = want;
                    s->lastq = NULL;
                    s->uses = 0;
                    out->fresh = 1;
                }
            }
            if (st == KILN_OK) {
                s->busy = 1;
                out->buf = s->buf;
                out->size = s->size;
                out->cached = 1;
                /* 1 .. 2^30 - 1, then 1 again with the buffer as if new
                 * (its users zero it) */
                if (++s->uses >= (1u << 30)) {
                    s->uses = 1;
                    out->fresh = 1;
                }
                out->uses = s->uses;
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
    out->fresh = 1;
    out->uses = 1;
    out->size = bytes;
    return kiln_buffer_create(ctx, bytes, KILN_BUFFER_POOLED, NULL, &out->buf);
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

kiln_status kiln__wait_plus(size_t num_wait, kiln_event *const *wait, kiln_event *dep_a,
                            kiln_event *dep_b, kiln_event *const **list, size_t *n) {
    *list = wait;
    *n = num_wait;
    if (!dep_a && !dep_b)
        return KILN_OK;
    kiln_event **l = kiln__malloc((num_wait + 2) * sizeof *l);
    if (!l)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "wait list");
    size_t k = 0;
    for (; k < num_wait; k++)
        l[k] = wait[k];
    if (dep_a)
        l[k++] = dep_a;
    if (dep_b)
        l[k++] = dep_b;
    *list = l;
    *n = k;
    return KILN_OK;
}
