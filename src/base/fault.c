#include "base/fault.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* kind + 1 while armed, 0 when inert. */
static atomic_int kiln__fault_armed;
static atomic_ulong kiln__fault_target;
static atomic_ulong kiln__fault_counts[KILN__FAULT_KINDS];
static atomic_int kiln__fault_done;

void kiln__fault_arm(kiln__fault_kind kind, unsigned long n) {
    atomic_store(&kiln__fault_armed, 0);
    for (int k = 0; k < KILN__FAULT_KINDS; k++)
        atomic_store(&kiln__fault_counts[k], 0);
    atomic_store(&kiln__fault_done, 0);
    atomic_store(&kiln__fault_target, n);
    if (n && kind >= 0 && kind < KILN__FAULT_KINDS)
        atomic_store(&kiln__fault_armed, (int)kind + 1);
}

unsigned long kiln__fault_seen(kiln__fault_kind kind) {
    return kind >= 0 && kind < KILN__FAULT_KINDS ? atomic_load(&kiln__fault_counts[kind]) : 0;
}

int kiln__fault_fired(void) {
    return atomic_load(&kiln__fault_done);
}

int kiln__fault_hit(kiln__fault_kind kind) {
    if (atomic_load_explicit(&kiln__fault_armed, memory_order_relaxed) != (int)kind + 1)
        return 0;
    unsigned long seen = atomic_fetch_add(&kiln__fault_counts[kind], 1) + 1;
    if (seen != atomic_load(&kiln__fault_target))
        return 0;
    atomic_store(&kiln__fault_done, 1);
    return 1;
}

void *kiln__malloc(size_t size) {
    return kiln__fault_hit(KILN__FAULT_HOST_ALLOC) ? NULL : malloc(size);
}

void *kiln__calloc(size_t count, size_t size) {
    return kiln__fault_hit(KILN__FAULT_HOST_ALLOC) ? NULL : calloc(count, size);
}

void *kiln__realloc(void *p, size_t size) {
    return kiln__fault_hit(KILN__FAULT_HOST_ALLOC) ? NULL : realloc(p, size);
}
