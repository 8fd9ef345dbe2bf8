/* Growable strings (see strbuf.h). */
#include "base/fault.h"
#include "base/strbuf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sb_reserve(kiln__sb *sb, size_t extra) {
    assert((sb->p ? sb->len < sb->cap : sb->len == 0 && sb->cap == 0) &&
           "a string builder's text fits its storage");
    assert(extra < SIZE_MAX / 2 - sb->len && "a string builder asked for more than any memory");
    if (sb->oom || sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *p = kiln__realloc(sb->p, cap);
    if (!p) {
        sb->oom = 1;
        return;
    }
    sb->p = p;
    sb->cap = cap;
}

void kiln__sb_addn(kiln__sb *sb, const char *s, size_t n) {
    sb_reserve(sb, n);
    if (sb->oom)
        return;
    assert(sb->len + n < sb->cap && "an append inside the reserved storage");
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = 0;
}

void kiln__sb_add(kiln__sb *sb, const char *s) {
    kiln__sb_addn(sb, s, strlen(s));
}

void kiln__sb_addf(kiln__sb *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        sb->oom = 1;
        return;
    }
    sb_reserve(sb, (size_t)n);
    if (sb->oom)
        return;
    va_start(ap, fmt);
    vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void kiln__sb_free(kiln__sb *sb) {
    free(sb->p);
    sb->p = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
}

char *kiln__sb_take(kiln__sb *sb) {
    char *p = sb->oom ? NULL : sb->p ? sb->p : kiln__strdup("");
    if (sb->oom)
        free(sb->p);
    sb->p = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
    return p;
}

char *kiln__strdup(const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = kiln__malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}
