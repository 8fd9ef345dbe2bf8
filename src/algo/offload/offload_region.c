/* Data regions (include/kiln/offload.h): begin, wait and end, and the
 * tree's tail that orders every step on a region tree. */
#include <stdlib.h>

#include "algo/offload/offload_internal.h"
#include "base/error.h"

kiln_event *kiln__region_tail(kiln_data_region *r) {
    kiln_event *t = r->root->tail;
    if (t)
        kiln_event_retain(t);
    return t;
}

void kiln__region_set_tail(kiln_data_region *r, kiln_event *e) {
    kiln_event_retain(e);
    kiln_event_release(r->root->tail);
    r->root->tail = e;
}

static void region_free(kiln_data_region *r) {
    for (size_t k = 0; k < r->n; k++)
        kiln_buffer_release(r->maps[k].buf);
    free(r->maps);
    if (r->parent)
        atomic_fetch_sub(&r->parent->children, 1);
    if (r->root == r) {
        kiln_event_release(r->tail);
        pthread_mutex_destroy(&r->mu);
    }
    kiln_queue_release(r->queue);
    free(r);
}

/* A region with room for n maps, linked under parent; nothing mapped yet. */
static kiln_status region_new(const char *what, kiln_queue *queue, kiln_data_region *parent,
                              size_t n, kiln_data_region **out) {
    kiln_data_region *r = kiln__calloc(1, sizeof *r);
    kiln__dmap *dm = n ? kiln__calloc(n, sizeof *dm) : NULL;
    if (!r || (n && !dm)) {
        free(r);
        free(dm);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    if (!parent && pthread_mutex_init(&r->mu, NULL) != 0) {
        free(dm);
        free(r);
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "%s: mutex", what);
    }
    kiln_queue_retain(queue);
    r->queue = queue;
    r->context = kiln_queue_context(queue);
    r->parent = parent;
    r->root = parent ? parent->root : r;
    r->maps = dm;
    r->n = n;
    atomic_init(&r->children, 0);
    if (parent)
        atomic_fetch_add(&parent->children, 1);
    *out = r;
    return KILN_OK;
}

/* Map k of r: the parent's device memory where the range lies inside one
 * of its mappings, else a new buffer. Nothing is enqueued. */
static kiln_status map_range(const char *what, kiln_data_region *r, size_t k, const kiln_arg *a) {
    kiln__dmap *m = &r->maps[k];
    m->host = (uintptr_t)a->value.host;
    m->bytes = a->bytes;
    m->kind = a->map;
    /* PRESENT with 0 bytes (KILN_PRESENT(p)) is "from p to the end of its
     * mapping": it must still be found, or the promise of
     * KILN_ERROR_INVALID_ARGUMENT for unmapped memory is broken. A NULL
     * pointer with 0 bytes maps nothing, as for the other kinds. */
    if (!m->bytes && (m->kind != KILN_DATA_PRESENT || !m->host))
        return KILN_OK;
    const kiln__dmap *pm = NULL;
    kiln_status st = KILN_OK;
    int found = r->parent ? kiln__find_map(r->parent, m->host, m->bytes, what, &pm, &st) : 0;
    if (found < 0)
        return st;
    if (found) {
        kiln_buffer_retain(pm->buf);
        m->buf = pm->buf;
        m->off = pm->off + (m->host - pm->host);
        if (!m->bytes)
            m->bytes = pm->host + pm->bytes - m->host;
        return KILN_OK;
    }
    if (m->kind == KILN_DATA_PRESENT)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: map %zu [%p, +%zu bytes) is PRESENT but "
                               "no enclosing region maps it",
                               what, k, (void *)m->host, m->bytes);
    st = kiln_buffer_create(r->context, m->bytes, KILN_BUFFER_READ_WRITE, NULL, &m->buf);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s: map %zu (%zu bytes)", what, k, m->bytes);
    m->owned = 1;
    r->stats.allocations++;
    r->stats.bytes_allocated += m->bytes;
    return KILN_OK;
}

/* Enqueues r's TO/TOFROM copies after the tree's tail; their join becomes
 * the new tail. On failure, waits for what was enqueued. */
static kiln_status copy_in(kiln_data_region *r) {
    kiln_data_region *root = r->root;
    pthread_mutex_lock(&root->mu);
    kiln_event *tail = kiln__region_tail(r);
    kiln__evlist evs = { 0 };
    kiln_status st = KILN_OK;
    for (size_t k = 0; k < r->n && st == KILN_OK; k++) {
        kiln__dmap *m = &r->maps[k];
        if (!m->bytes || !(m->kind & KILN_DATA_TO))
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_write_async(r->queue, m->buf, m->off, m->bytes, (const void *)m->host,
                                     tail ? 1 : 0, &tail, &e);
        if (st == KILN_OK) {
            st = kiln__evlist_push(&evs, e);
            r->stats.copies_to++;
            r->stats.bytes_to += m->bytes;
        }
    }
    kiln_event *fin = NULL;
    if (st == KILN_OK && evs.n)
        st = kiln__evlist_join(r->queue, &evs, &fin);
    if (st == KILN_OK && fin)
        kiln__region_set_tail(r, fin);
    kiln_event_release(fin);
    kiln_event_release(tail);
    pthread_mutex_unlock(&root->mu);
    kiln__evlist_drain(&evs, 1); /* empty unless something failed */
    return st;
}

kiln_status kiln_data_region_begin(kiln_queue *queue, kiln_data_region *parent, size_t num_maps,
                                   const kiln_arg *maps, kiln_data_region **region) {
    static const char *what = "kiln_data_region_begin";
    if (region)
        *region = NULL;
    if (!queue || !region || (num_maps && !maps))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what,
                               !queue    ? "queue"
                               : !region ? "region"
                                         : "maps");
    if (parent && parent->context != kiln_queue_context(queue))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue belongs to another context than "
                               "the parent region",
                               what);
    kiln_status st = kiln__check_region_maps(what, num_maps, maps, parent != NULL);
    if (st != KILN_OK)
        return st;
    kiln_data_region *r = NULL;
    st = region_new(what, queue, parent, num_maps, &r);
    if (st != KILN_OK)
        return st;
    /* Resolve or allocate every range before enqueueing anything. */
    for (size_t k = 0; k < num_maps && st == KILN_OK; k++)
        st = map_range(what, r, k, &maps[k]);
    if (st == KILN_OK)
        st = copy_in(r);
    if (st != KILN_OK) {
        region_free(r);
        return st;
    }
    *region = r;
    return KILN_OK;
}

kiln_status kiln_data_region_wait(kiln_data_region *region) {
    if (!region)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_data_region_wait: region is NULL");
    pthread_mutex_lock(&region->root->mu);
    kiln_event *t = kiln__region_tail(region);
    pthread_mutex_unlock(&region->root->mu);
    if (!t)
        return KILN_OK;
    kiln_status st = kiln_event_wait(t);
    kiln_event_release(t);
    return st;
}

/* Enqueues r's FROM/TOFROM copies after the tail and wait[]; *fin gets the
 * event of the end (a marker when nothing is copied). The caller holds
 * root->mu. */
static kiln_status copy_out(kiln_data_region *r, size_t num_wait, kiln_event *const *wait,
                            kiln_event **fin) {
    kiln_event *tail = kiln__region_tail(r), *after = NULL;
    kiln_status st = kiln__event_after(r->queue, tail, num_wait, wait, &after);
    kiln_event_release(tail);
    kiln__evlist evs = { 0 };
    for (size_t k = 0; k < r->n && st == KILN_OK; k++) {
        kiln__dmap *m = &r->maps[k];
        if (!m->bytes || !(m->kind & KILN_DATA_FROM))
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_read_async(r->queue, m->buf, m->off, m->bytes, (void *)m->host,
                                    after ? 1 : 0, &after, &e);
        if (st == KILN_OK)
            st = kiln__evlist_push(&evs, e);
    }
    if (st == KILN_OK && evs.n) {
        st = kiln__evlist_join(r->queue, &evs, fin);
        kiln_event_release(after);
    } else if (st == KILN_OK && after) {
        *fin = after;
    } else if (st == KILN_OK) {
        st = kiln_queue_marker(r->queue, 0, NULL, fin);
    } else {
        kiln__evlist_drain(&evs, 1);
        kiln_event_release(after);
    }
    return st;
}

static kiln_status region_end(kiln_data_region *r, size_t num_wait, kiln_event *const *wait,
                              kiln_event **event, int block) {
    const char *what = block ? "kiln_data_region_end" : "kiln_data_region_end_async";
    if (event)
        *event = NULL;
    if (!r)
        return KILN_OK;
    kiln_status st = kiln__check_wait(what, num_wait, wait);
    if (st != KILN_OK)
        return st;
    if (atomic_load(&r->children) > 0)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: %d nested region(s) are still open; end "
                               "them first",
                               what, atomic_load(&r->children));
    kiln_data_region *root = r->root;
    kiln_event *fin = NULL;
    pthread_mutex_lock(&root->mu);
    st = copy_out(r, num_wait, wait, &fin);
    if (st == KILN_OK && r != root)
        kiln__region_set_tail(r, fin);
    kiln_event *pending = st != KILN_OK ? kiln__region_tail(r) : NULL;
    pthread_mutex_unlock(&root->mu);
    /* A failed end still returns only once nothing the region enqueued can
     * touch the caller's memory (its copies in read it): a copy still
     * queued behind the region's work once read a stack array after the
     * function that owned it had returned (test_fault_injection). */
    if (pending) {
        (void)kiln_event_wait(pending);
        kiln_event_release(pending);
    }
    region_free(r); /* in-flight copies hold their own buffer references */
    if (st != KILN_OK)
        return st;
    if (block) {
        st = kiln_event_wait(fin);
        kiln_event_release(fin);
        return st;
    }
    return kiln__event_give(event, fin);
}

kiln_status kiln_data_region_end(kiln_data_region *region) {
    return region_end(region, 0, NULL, NULL, 1);
}

kiln_status kiln_data_region_end_async(kiln_data_region *region, size_t num_wait,
                                       kiln_event *const *wait, kiln_event **event) {
    return region_end(region, num_wait, wait, event, 0);
}
