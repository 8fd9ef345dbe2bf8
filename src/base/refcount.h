/* Reference counts of shared objects: one retain and one release rule for
 * every object of every layer (C11 atomics: objects move between host
 * threads and kiln's callback thread). */
#ifndef KILN_BASE_REFCOUNT_H
#define KILN_BASE_REFCOUNT_H

#include <assert.h>
#include <stdatomic.h>

#include "base/error.h"

/* The body of a public kiln_X_retain: refs is &object->refs, or NULL when
 * the object is NULL; then fn ("kiln_buffer_retain") and name ("buffer")
 * make the KILN_ERROR_NULL_HANDLE message. */
static inline kiln_status kiln__ref_retain(atomic_int *refs, const char *fn, const char *name) {
    if (!refs)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, name);
    int before = atomic_fetch_add_explicit(refs, 1, memory_order_relaxed);
    assert(before > 0 && "retained after its last release");
    (void)before;
    return KILN_OK;
}

/* A reference taken by kiln itself on an object it already holds. */
static inline void kiln__ref_take(atomic_int *refs) {
    int before = atomic_fetch_add_explicit(refs, 1, memory_order_relaxed);
    assert(before > 0 && "an internal reference taken on a released object");
    (void)before;
}

/* Drops one reference; 1 if it was the last (the caller frees the object).
 * NULL (a NULL object) is 0: releasing NULL is a no-op. */
static inline int kiln__ref_release(atomic_int *refs) {
    if (!refs)
        return 0;
    int before = atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel);
    assert(before > 0 && "released more often than retained");
    return before == 1;
}

#endif
