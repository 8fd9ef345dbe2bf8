#include "base/ident.h"

int kiln__is_ident(const char *s, size_t max_len) {
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return 0;
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
        if (n >= max_len)
            return 0;
    }
    return 1;
}
