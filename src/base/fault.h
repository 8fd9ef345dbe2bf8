/* Fault injection for the tests (tests/test_fault_injection.c), in the
 * spirit of SQLite's pluggable allocator: always compiled in, inert unless a
 * test arms it through src/testing/kiln_test_internal.h. Armed with (kind,
 * n), the n-th event of that kind from then on fails as if the system had
 * refused it: a host allocation returns NULL, a device allocation reports
 * KILN_ERROR_OUT_OF_DEVICE_MEMORY, a program build KILN_ERROR_BUILD.
 *
 * kiln's own host allocations go through kiln__malloc and friends so that
 * each one is a site (kiln__strdup, in strbuf.h, uses kiln__malloc);
 * free() stays free(). */
#ifndef KILN_BASE_FAULT_H
#define KILN_BASE_FAULT_H

#include <stddef.h>

typedef enum kiln__fault_kind {
    KILN__FAULT_HOST_ALLOC,
    KILN__FAULT_DEVICE_ALLOC,
    KILN__FAULT_PROGRAM_BUILD,
    KILN__FAULT_KINDS
} kiln__fault_kind;

/* Arms kind so that its n-th event (1-based) fails, and resets the counts;
 * n == 0 disarms every kind. Not for use while other threads run kiln
 * calls that the test does not expect to count. */
void kiln__fault_arm(kiln__fault_kind kind, unsigned long n);
/* Events of kind seen since the last arm (counted only while armed). */
unsigned long kiln__fault_seen(kiln__fault_kind kind);
/* 1 once the armed event has failed. */
int kiln__fault_fired(void);
/* At a site: 1 if this event must fail. One relaxed load when unarmed. */
int kiln__fault_hit(kiln__fault_kind kind);

void *kiln__malloc(size_t size);
void *kiln__calloc(size_t count, size_t size);
void *kiln__realloc(void *p, size_t size);

#endif
