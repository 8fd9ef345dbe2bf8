/* Data regions after begin: looking a host pointer up, `target update`
 * copies, and the region's counters. */
#include "algo/offload/offload_internal.h"
#include "base/error.h"

/* The mapping *m, in region or its parents, of host (bytes 0) or of
 * [host, +bytes); KILN_ERROR_INVALID_ARGUMENT naming them where none is. */
static kiln_status find_mapped(kiln_data_region *region, const void *host, size_t bytes,
                               const char *what, const kiln__dmap **m) {
    kiln_status st = KILN_OK;
    int found = kiln__find_map(region, (uintptr_t)host, bytes, what, m, &st);
    if (found < 0)
        return st;
    if (found)
        return KILN_OK;
    if (!bytes)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: %p is not mapped in the region or its "
                               "parents",
                               what, host);
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: [%p, +%zu bytes) is not mapped in the "
                           "region or its parents",
                           what, host, bytes);
}

kiln_status kiln_data_region_lookup(kiln_data_region *region, const void *host,
                                    kiln_buffer **buffer, size_t *offset, size_t *bytes_left) {
    static const char *what = "kiln_data_region_lookup";
    if (buffer)
        *buffer = NULL;
    const char *missing = KILN__FIRST_NULL4(region, host, buffer, offset);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, missing);
    const kiln__dmap *m = NULL;
    kiln_status st = find_mapped(region, host, 0, what, &m);
    if (st != KILN_OK)
        return st;
    *buffer = m->buf;
    *offset = m->off + ((uintptr_t)host - m->host);
    if (bytes_left)
        *bytes_left = m->bytes - ((uintptr_t)host - m->host);
    return KILN_OK;
}

/* Enqueues the copy of [host, +bytes) (inside mapping m) after `after`;
 * the caller holds root->mu (the stats are under it). */
static kiln_status update_copy(kiln_data_region *r, const kiln__dmap *m, void *host, size_t bytes,
                               kiln_data_kind kind, kiln_event *after, kiln_event **e) {
    size_t off = m->off + ((uintptr_t)host - m->host);
    kiln_status st;
    if (kind == KILN_DATA_TO) {
        st = kiln_buffer_write_async(r->queue, m->buf, off, bytes, host, after ? 1 : 0, &after, e);
        if (st == KILN_OK) {
            r->stats.copies_to++;
            r->stats.bytes_to += bytes;
        }
    } else {
        st = kiln_buffer_read_async(r->queue, m->buf, off, bytes, host, after ? 1 : 0, &after, e);
        if (st == KILN_OK) {
            r->stats.copies_from++;
            r->stats.bytes_from += bytes;
        }
    }
    return st;
}

kiln_status kiln_data_region_update(kiln_data_region *region, void *host, size_t bytes,
                                    kiln_data_kind kind, size_t num_wait, kiln_event *const *wait,
                                    kiln_event **event) {
    static const char *what = "kiln_data_region_update";
    if (event)
        *event = NULL;
    if (!region || (!host && bytes))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what,
                               !region ? "region" : "host");
    kiln_status st = kiln__check_wait(what, num_wait, wait);
    if (st != KILN_OK)
        return st;
    if (kind != KILN_DATA_TO && kind != KILN_DATA_FROM)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: kind is %s (%d); want KILN_DATA_TO or "
                               "KILN_DATA_FROM",
                               what, kiln__map_kind_name(kind), (int)kind);
    const kiln__dmap *m = NULL;
    if (bytes && (st = find_mapped(region, host, bytes, what, &m)) != KILN_OK)
        return st;
    pthread_mutex_lock(&region->root->mu);
    kiln_event *tail = kiln__region_tail(region), *after = NULL, *e = NULL;
    st = kiln__event_after(region->queue, tail, num_wait, wait, &after);
    if (st == KILN_OK && bytes) {
        st = update_copy(region, m, host, bytes, kind, after, &e);
    } else if (st == KILN_OK && after) {
        e = after; /* nothing to copy: the event follows the wait list */
        after = NULL;
    } else if (st == KILN_OK) {
        st = kiln_queue_marker(region->queue, 0, NULL, &e);
    }
    if (st == KILN_OK)
        kiln__region_set_tail(region, e);
    pthread_mutex_unlock(&region->root->mu);
    kiln_event_release(tail);
    kiln_event_release(after);
    if (st != KILN_OK)
        return st;
    return kiln__event_give(event, e);
}

kiln_status(kiln_data_region_get_stats)(kiln_data_region *region, kiln_offload_stats *stats,
                                        size_t stats_size) {
    if (!region || !stats)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_data_region_get_stats: %s is NULL",
                               region ? "stats" : "region");
    pthread_mutex_lock(&region->root->mu);
    kiln_status st =
        kiln__stats_copy("kiln_data_region_get_stats", &region->stats, stats, stats_size);
    pthread_mutex_unlock(&region->root->mu);
    return st;
}
