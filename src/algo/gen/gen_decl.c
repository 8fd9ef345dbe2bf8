/* Argument declarations of the generators: "float a, const float *x" into
 * names, element types and dtypes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/generator.h"
#include "base/error.h"
#include "base/ident.h"

kiln_dtype kiln__dtype_from_name(const char *t) {
    static const struct {
        const char *name;
        kiln_dtype dtype;
    } map[] = {
        { "char", KILN_INT8 },
        { "signed char", KILN_INT8 },
        { "uchar", KILN_UINT8 },
        { "unsigned char", KILN_UINT8 },
        { "short", KILN_INT16 },
        { "ushort", KILN_UINT16 },
        { "unsigned short", KILN_UINT16 },
        { "int", KILN_INT32 },
        { "uint", KILN_UINT32 },
        { "unsigned int", KILN_UINT32 },
        { "unsigned", KILN_UINT32 },
        { "long", KILN_INT64 },
        { "kiln_int64", KILN_INT64 },
        { "ulong", KILN_UINT64 },
        { "unsigned long", KILN_UINT64 },
        { "kiln_uint64", KILN_UINT64 },
        { "half", KILN_FLOAT16 },
        { "float", KILN_FLOAT32 },
        { "double", KILN_FLOAT64 },
        { "cfloat", KILN_COMPLEX64 },
        { "cdouble", KILN_COMPLEX128 },
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (strcmp(map[k].name, t) == 0)
            return map[k].dtype;
    return (kiln_dtype)0;
}

static kiln_status parse_one(const char *p, size_t len, const char *what, kiln__garg *g) {
    char buf[256];
    if (len >= sizeof buf)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: argument declaration too long",
                               what);
    memcpy(buf, p, len);
    buf[len] = 0;
    memset(g, 0, sizeof *g);
    /* Tokens: words and '*'. */
    char words[16][64];
    size_t nw = 0;
    int stars = 0;
    for (char *s = buf; *s;) {
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        if (*s == '*') {
            stars++;
            s++;
            continue;
        }
        if (isalnum((unsigned char)*s) || *s == '_') {
            char *b = s;
            while (*s && (isalnum((unsigned char)*s) || *s == '_'))
                s++;
            size_t wl = (size_t)(s - b);
            if (nw == 16 || wl >= 64)
                goto bad;
            memcpy(words[nw], b, wl);
            words[nw][wl] = 0;
            nw++;
            continue;
        }
        goto bad;
    }
    if (nw < 2 || stars > 1)
        goto bad;
    g->is_ptr = stars;
    snprintf(g->name, sizeof g->name, "%s", words[nw - 1]);
    if (!kiln__is_ident(g->name, sizeof g->name - 1))
        goto bad;
    for (size_t k = 0; k + 1 < nw; k++) {
        const char *w = words[k];
        if (!strcmp(w, "const")) {
            g->is_const = 1;
            continue;
        }
        if (!strcmp(w, "volatile") || !strcmp(w, "__global") || !strcmp(w, "global") ||
            !strcmp(w, "KILN_GLOBAL") || !strcmp(w, "restrict") || !strcmp(w, "__restrict") ||
            !strcmp(w, "__restrict__") || !strcmp(w, "KILN_RESTRICT"))
            continue;
        size_t tl = strlen(g->type), wl = strlen(w);
        if (tl + wl + 2 > sizeof g->type)
            goto bad;
        if (tl)
            g->type[tl++] = ' ';
        memcpy(g->type + tl, w, wl + 1);
    }
    if (!g->type[0])
        goto bad;
    g->dtype = kiln__dtype_from_name(g->type);
    if (!g->is_ptr && !g->dtype)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: scalar argument '%s' has type '%s'; "
                               "scalars must be of a kiln dtype (int, float, "
                               "...)",
                               what, g->name, g->type);
    return KILN_OK;
bad:
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: cannot parse the argument declaration '%s' "
                           "(want e.g. \"float a\" or \"const float *x\")",
                           what, buf);
}

kiln_status kiln__gargs_parse(const char *decl, const char *what, kiln__gargs *out) {
    memset(out, 0, sizeof *out);
    if (!decl)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: arguments is NULL", what);
    size_t cap = 1;
    for (const char *s = decl; *s; s++)
        cap += *s == ',';
    out->v = kiln__calloc(cap, sizeof *out->v);
    if (!out->v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    const char *s = decl;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        kiln_status st = parse_one(s, len, what, &out->v[out->n]);
        if (st != KILN_OK) {
            kiln__gargs_free(out);
            return st;
        }
        for (size_t k = 0; k < out->n; k++)
            if (!strcmp(out->v[k].name, out->v[out->n].name)) {
                const char *nm = out->v[out->n].name;
                kiln_status r = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                                "%s: argument '%s' is declared twice", what, nm);
                kiln__gargs_free(out);
                return r;
            }
        out->n++;
        if (!e)
            break;
        s = e + 1;
    }
    out->first_array = (size_t)-1;
    for (size_t k = 0; k < out->n; k++)
        if (out->v[k].is_ptr) {
            out->first_array = k;
            break;
        }
    if (out->first_array == (size_t)-1) {
        kiln__gargs_free(out);
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: at least one array (pointer) argument is "
                               "needed",
                               what);
    }
    return KILN_OK;
}

void kiln__gargs_free(kiln__gargs *a) {
    free(a->v);
    a->v = NULL;
    a->n = 0;
}
