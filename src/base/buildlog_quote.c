#include "base/buildlog_quote.h"

#include <string.h>
#include <strings.h>

static int mentions_error(const char *p, size_t len) {
    for (size_t i = 0; i + 5 <= len; i++)
        if (strncasecmp(p + i, "error", 5) == 0)
            return 1;
    return 0;
}

static int is_blank(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

/* Appends len bytes of p (and a separator before all but the first). */
static void append(char *out, size_t cap, size_t *used, const char *p, size_t len) {
    if (*used && *used + 3 < cap) {
        memcpy(out + *used, " | ", 3);
        *used += 3;
    }
    if (*used + len >= cap)
        len = cap - 1 - *used;
    memcpy(out + *used, p, len);
    *used += len;
    out[*used] = 0;
}

char *kiln__quote_log_errors(const char *log, unsigned max_lines, char *out, size_t cap) {
    if (!cap)
        return out;
    out[0] = 0;
    if (!log)
        return out;
    size_t used = 0;
    unsigned lines = 0;
    const char *first = NULL;
    size_t first_len = 0;
    for (const char *p = log; *p && lines < max_lines;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && p[len - 1] == '\r')
            len--;
        if (!first && !is_blank(p, len)) {
            first = p;
            first_len = len;
        }
        if (mentions_error(p, len) && used + 4 < cap) {
            append(out, cap, &used, p, len);
            lines++;
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (!used && first)
        append(out, cap, &used, first, first_len);
    return out;
}
