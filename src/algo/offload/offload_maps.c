/* Host ranges of the offload code: checking a list of maps, overlaps, and
 * finding the mapping a range lies in along a region tree. */
#include <stdio.h>

#include "algo/offload/offload_internal.h"
#include "base/error.h"

const char *kiln__map_kind_name(kiln_data_kind k) {
    /* indexed by kiln_data_kind: KILN_DATA_PRESENT (0) to KILN_DATA_ALLOC (4) */
    static const char *const names[] = { "PRESENT", "TO", "FROM", "TOFROM", "ALLOC" };
    unsigned i = (unsigned)k;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "?";
}

const char *kiln__arg_kind_text(const kiln_arg *a, char *buf, size_t cap) {
    static const char *const texts[] = { [KILN_ARG_BUFFER] = "a buffer (KILN_ARG_BUF)",
                                         [KILN_ARG_LOCAL] = "local memory (KILN_ARG_LOCAL_BYTES)",
                                         [KILN_ARG_ARRAY] = "an array (KILN_ARG_ARRAY)",
                                         [KILN_ARG_MAP] = "mapped host memory" };
    unsigned i = (unsigned)a->kind;
    if (a->kind == KILN_ARG_SCALAR) {
        snprintf(buf, cap, "a scalar (%s)", kiln_dtype_name(a->dtype));
        return buf;
    }
    if (i < sizeof texts / sizeof *texts && texts[i])
        return texts[i];
    snprintf(buf, cap,
             "an unknown kind %d (build arguments with the "
             "KILN_ARG_* and KILN_TO/FROM/... macros)",
             (int)a->kind);
    return buf;
}

int kiln__ranges_overlap(uintptr_t a, size_t na, uintptr_t b, size_t nb) {
    return na && nb && a < b + nb && b < a + na;
}

static kiln_status check_one_map(const char *what, size_t k, const kiln_arg *m, int present_ok) {
    if (m->kind != KILN_ARG_MAP) {
        char buf[160];
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: map %zu is %s; a region maps host memory "
                               "only (KILN_TO, KILN_FROM, KILN_TOFROM, "
                               "KILN_ALLOC, KILN_PRESENT)",
                               what, k, kiln__arg_kind_text(m, buf, sizeof buf));
    }
    if ((unsigned)m->map > KILN_DATA_ALLOC)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: map %zu has map kind %d; want "
                               "KILN_DATA_TO, FROM, TOFROM, ALLOC or PRESENT",
                               what, k, (int)m->map);
    if (m->map == KILN_DATA_PRESENT && !present_ok)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: map %zu is PRESENT (no kind) but there is no enclosing "
                               "region to find it in",
                               what, k);
    if (!m->value.host && m->bytes)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: map %zu has a NULL host pointer and "
                               "%zu bytes",
                               what, k, m->bytes);
    return KILN_OK;
}

kiln_status kiln__check_region_maps(const char *what, size_t n, const kiln_arg *maps,
                                    int present_ok) {
    for (size_t k = 0; k < n; k++) {
        const kiln_arg *m = &maps[k];
        kiln_status st = check_one_map(what, k, m, present_ok);
        if (st != KILN_OK)
            return st;
        for (size_t l = 0; l < k; l++)
            if (kiln__ranges_overlap((uintptr_t)m->value.host, m->bytes,
                                     (uintptr_t)maps[l].value.host, maps[l].bytes))
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "%s: maps %zu [%p, +%zu bytes) and %zu [%p, +%zu bytes) "
                                       "overlap: the same host memory may be mapped only once "
                                       "in a region (as in OpenMP)",
                                       what, l, maps[l].value.host, maps[l].bytes, k, m->value.host,
                                       m->bytes);
    }
    return KILN_OK;
}

int kiln__find_map(kiln_data_region *r, uintptr_t h, size_t n, const char *what,
                   const kiln__dmap **out, kiln_status *st) {
    for (; r; r = r->parent)
        for (size_t k = 0; k < r->n; k++) {
            const kiln__dmap *m = &r->maps[k];
            if (!m->bytes)
                continue;
            if (h >= m->host && h < m->host + m->bytes) {
                if (n > m->host + m->bytes - h) {
                    *st = kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                          "%s: [%p, +%zu bytes) runs %zu bytes past the end of "
                                          "the mapping [%p, +%zu bytes) it starts in",
                                          what, (void *)h, n, n - (m->host + m->bytes - h),
                                          (void *)m->host, m->bytes);
                    return -1;
                }
                *out = m;
                return 1;
            }
            if (kiln__ranges_overlap(h, n, m->host, m->bytes)) {
                *st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                      "%s: [%p, +%zu bytes) overlaps the mapped range [%p, +%zu "
                                      "bytes) without lying inside it (map the whole range, or "
                                      "only part of it, not both)",
                                      what, (void *)h, n, (void *)m->host, m->bytes);
                return -1;
            }
        }
    return 0;
}
