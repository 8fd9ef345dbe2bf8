/* Movement counters of offloads and regions (kiln_offload_stats). */
#include <stddef.h>
#include <string.h>

#include "algo/offload/offload_internal.h"
#include "base/error.h"

/* The first version of kiln_offload_stats ends after launches. */
#define STATS_V1_SIZE (offsetof(kiln_offload_stats, launches) + sizeof(uint64_t))

void kiln__stats_add(kiln_offload_stats *s, const kiln_offload_stats *d) {
    s->copies_to += d->copies_to;
    s->bytes_to += d->bytes_to;
    s->copies_from += d->copies_from;
    s->bytes_from += d->bytes_from;
    s->allocations += d->allocations;
    s->bytes_allocated += d->bytes_allocated;
    s->launches += d->launches;
}

kiln_status kiln__stats_copy(const char *what, const kiln_offload_stats *src,
                             kiln_offload_stats *stats, size_t stats_size) {
    if (stats_size < STATS_V1_SIZE)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: stats_size is %zu, less than any version "
                               "of kiln_offload_stats (call it through the "
                               "%s macro)",
                               what, stats_size, what);
    size_t n = stats_size < sizeof *src ? stats_size : sizeof *src;
    memcpy(stats, src, n);
    memset((char *)stats + n, 0, stats_size - n);
    return KILN_OK;
}
