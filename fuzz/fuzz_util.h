/* Shared by the libFuzzer targets: the input as NUL-terminated strings. */
#ifndef KILN_FUZZ_UTIL_H
#define KILN_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd NUL-terminated copy of data (embedded NULs end it early, as
 * they would for a C caller). */
static inline char *fz_string(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Splits a malloc'd copy of data at the byte sep into up to max fields
 * (pointers into *buf, which the caller frees); returns the count. */
static inline size_t fz_fields(const uint8_t *data, size_t size, char sep, char **fields,
                               size_t max, char **buf) {
    *buf = fz_string(data, size);
    size_t n = 0;
    char *p = *buf;
    while (n < max) {
        fields[n++] = p;
        char *q = strchr(p, sep);
        if (!q)
            break;
        *q = '\0';
        p = q + 1;
    }
    return n;
}

#endif
