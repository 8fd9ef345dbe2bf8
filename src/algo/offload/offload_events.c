/* Event lists of the offload code: the copies of one step are collected and
 * joined into the one event that the next step (or the caller) waits on. */
#include <stdlib.h>
#include <string.h>

#include "algo/offload/offload_internal.h"
#include "base/error.h"

kiln_status kiln__evlist_push(kiln__evlist *l, kiln_event *e) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        kiln_event **p = kiln__realloc(l->v, cap * sizeof *p);
        if (!p) {
            /* The work is enqueued already: let it end before failing, so
             * the caller may reuse its host memory. */
            kiln_event_wait(e);
            kiln_event_release(e);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "offload: event list");
        }
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = e;
    return KILN_OK;
}

void kiln__evlist_drain(kiln__evlist *l, int wait) {
    if (wait && l->n)
        kiln_event_wait_all(l->n, l->v);
    for (size_t k = 0; k < l->n; k++)
        kiln_event_release(l->v[k]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

kiln_status kiln__evlist_join(kiln_queue *q, kiln__evlist *l, kiln_event **out) {
    *out = NULL;
    if (l->n == 1) {
        *out = l->v[0];
        free(l->v);
        memset(l, 0, sizeof *l);
        return KILN_OK;
    }
    kiln_status st = kiln_queue_marker(q, l->n, l->v, out);
    kiln__evlist_drain(l, st != KILN_OK);
    return st;
}

kiln_status kiln__check_wait(const char *what, size_t num_wait, kiln_event *const *wait) {
    if (num_wait && !wait)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: wait is NULL but num_wait is %zu",
                               what, num_wait);
    for (size_t k = 0; k < num_wait; k++)
        if (!wait[k])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: wait[%zu] is NULL", what, k);
    return KILN_OK;
}

kiln_status kiln__event_after(kiln_queue *q, kiln_event *tail, size_t num_wait,
                              kiln_event *const *wait, kiln_event **out) {
    *out = NULL;
    if (!tail && !num_wait)
        return KILN_OK;
    if (tail && !num_wait) {
        kiln_event_retain(tail);
        *out = tail;
        return KILN_OK;
    }
    kiln_event *const *list = NULL;
    size_t n = 0;
    kiln_status st = kiln__wait_plus(num_wait, wait, tail, NULL, &list, &n);
    if (st != KILN_OK)
        return st;
    st = kiln_queue_marker(q, n, list, out);
    if (list != wait)
        free((void *)list);
    return st;
}
