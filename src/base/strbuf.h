/* A growable string. Appends never fail loudly: on out-of-memory the
 * builder sets oom and ignores further appends, so a caller checks once at
 * the end. */
#ifndef KILN_BASE_STRBUF_H
#define KILN_BASE_STRBUF_H

#include <stddef.h>

typedef struct kiln__sb {
    char *p; /* NUL-terminated text, NULL while empty */
    size_t len, cap;
    int oom; /* 1 after an allocation failed */
} kiln__sb;

void kiln__sb_add(kiln__sb *sb, const char *s);
/* Appends n bytes of s (which need not be NUL-terminated). */
void kiln__sb_addn(kiln__sb *sb, const char *s, size_t n);
void kiln__sb_addf(kiln__sb *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void kiln__sb_free(kiln__sb *sb);
/* Hands the text over to the caller (malloc'd; "" when empty; NULL after
 * out-of-memory) and resets the builder. */
char *kiln__sb_take(kiln__sb *sb);

/* strdup for C11 (NULL for NULL or out of memory). */
char *kiln__strdup(const char *s);

#endif
