/* A shallow parser of kernel signatures (see signature.h). */
#include "base/fault.h"
#include "base/strbuf.h"
#include "core/signature.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kiln__tok {
    const char *s;
    size_t n;
} kiln__tok;

static int kiln__tok_is(const kiln__tok *t, const char *word) {
    size_t n = strlen(word);
    return t->n == n && memcmp(t->s, word, n) == 0;
}

static int kiln__tok_ident(const kiln__tok *t) {
    return isalpha((unsigned char)t->s[0]) || t->s[0] == '_';
}

static int kiln__tok_in(const kiln__tok *t, const char *const *words) {
    for (size_t i = 0; words[i]; i++)
        if (kiln__tok_is(t, words[i]))
            return 1;
    return 0;
}

/* Blanks the block comment starting at p (newlines kept); returns the
 * character after it. */
static char *kiln__blank_block_comment(char *p) {
    *p++ = ' ';
    *p++ = ' ';
    while (*p && !(p[0] == '*' && p[1] == '/')) {
        if (*p != '\n')
            *p = ' ';
        p++;
    }
    if (*p) {
        *p++ = ' ';
        *p++ = ' ';
    }
    return p;
}

/* Blanks comments, string and character literals and preprocessor lines
 * (newlines kept), in place. */
static void kiln__clean(char *s) {
    int line_start = 1;
    for (char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            p = kiln__blank_block_comment(p);
            continue;
        }
        if (*p == '"' || *p == '\'') {
            char q = *p;
            *p++ = ' ';
            while (*p && *p != q && *p != '\n') {
                if (*p == '\\' && p[1] && p[1] != '\n')
                    *p++ = ' ';
                *p++ = ' ';
            }
            if (*p == q)
                *p++ = ' ';
            line_start = 0;
            continue;
        }
        if (*p == '#' && line_start) {
            /* A directive, with its backslash continuations and any
             * comments inside it. */
            while (*p && *p != '\n') {
                if (p[0] == '\\' && p[1] == '\n') {
                    *p++ = ' ';
                    p++;
                    continue;
                }
                if (p[0] == '/' && p[1] == '*') {
                    p = kiln__blank_block_comment(p);
                    continue;
                }
                *p++ = ' ';
            }
            continue;
        }
        if (*p == '\n')
            line_start = 1;
        else if (!isspace((unsigned char)*p))
            line_start = 0;
        p++;
    }
}

static kiln__tok *kiln__tokenize(const char *s, size_t *count) {
    size_t cap = 256, n = 0;
    kiln__tok *toks = kiln__malloc(cap * sizeof *toks);
    if (!toks)
        return NULL;
    for (const char *p = s; *p;) {
        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        const char *start = p;
        if (isalpha((unsigned char)*p) || *p == '_') {
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
                p++;
        } else {
            p++;
        }
        if (n == cap) {
            cap *= 2;
            kiln__tok *grown = kiln__realloc(toks, cap * sizeof *toks);
            if (!grown) {
                free(toks);
                return NULL;
            }
            toks = grown;
        }
        toks[n].s = start;
        toks[n].n = (size_t)(p - start);
        n++;
    }
    *count = n;
    return toks;
}

static const char *const kiln__kernel_words[] = { "KILN_KERNEL", "__kernel", "kernel", "__global__",
                                                  NULL };
/* Identifiers followed by a parenthesised group to skip. */
static const char *const kiln__attr_words[] = { "__attribute__", "__launch_bounds__", "__declspec",
                                                "alignas",       "_Alignas",          NULL };
static const char *const kiln__qualifiers[] = {
    "const",        "volatile",      "restrict",    "__restrict", "__restrict__", "KILN_RESTRICT",
    "__private",    "private",       "__read_only", "read_only",  "__write_only", "write_only",
    "__read_write", "read_write",    "__global",    "global",     "KILN_GLOBAL",  "__constant",
    "constant",     "KILN_CONSTANT", "__local",     "local",      "KILN_LOCAL",   "__shared__",
    "__generic",    "generic",       NULL
};
static const char *const kiln__local_words[] = { "__local", "local", "KILN_LOCAL", "__shared__",
                                                 NULL };

/* Index of the token closing the group opened at toks[open], or n. */
static size_t kiln__match(const kiln__tok *toks, size_t n, size_t open) {
    int depth = 0;
    for (size_t i = open; i < n; i++) {
        if (kiln__tok_is(&toks[i], "(") || kiln__tok_is(&toks[i], "[") ||
            kiln__tok_is(&toks[i], "{"))
            depth++;
        else if (kiln__tok_is(&toks[i], ")") || kiln__tok_is(&toks[i], "]") ||
                 kiln__tok_is(&toks[i], "}")) {
            if (--depth == 0)
                return i;
        }
    }
    return n;
}

static void kiln__copy_tok(char *dst, size_t cap, const kiln__tok *t) {
    size_t n = t->n < cap - 1 ? t->n : cap - 1;
    memcpy(dst, t->s, n);
    dst[n] = 0;
}

static void kiln__append(char *dst, size_t cap, const char *s, size_t n) {
    size_t len = strlen(dst);
    if (len + n + 1 > cap)
        return;
    memcpy(dst + len, s, n);
    dst[len + n] = 0;
}

/* Parses the tokens of one parameter. */
static void kiln__param_parse(const kiln__tok *t, size_t n, kiln__param *p) {
    memset(p, 0, sizeof *p);
    int ptr = 0, local = 0;
    size_t idents[32], ni = 0;
    for (size_t i = 0; i < n; i++) {
        if (kiln__tok_is(&t[i], "*")) {
            ptr = 1;
            continue;
        }
        if (kiln__tok_is(&t[i], "[")) {
            ptr = 1; /* an array parameter is a pointer */
            i = kiln__match(t, n, i);
            continue;
        }
        if (kiln__tok_is(&t[i], "(")) { /* an attribute's arguments */
            i = kiln__match(t, n, i);
            continue;
        }
        if (!kiln__tok_ident(&t[i]))
            continue;
        if (kiln__tok_in(&t[i], kiln__local_words))
            local = 1;
        if (kiln__tok_in(&t[i], kiln__qualifiers) || kiln__tok_in(&t[i], kiln__attr_words))
            continue;
        if (ni < sizeof idents / sizeof idents[0])
            idents[ni++] = i;
    }
    size_t ntype = ni;
    if (ni >= 2) { /* the last identifier is the name */
        kiln__copy_tok(p->name, sizeof p->name, &t[idents[ni - 1]]);
        ntype = ni - 1;
    }
    for (size_t k = 0; k < ntype; k++) {
        if (k)
            kiln__append(p->type, sizeof p->type, " ", 1);
        kiln__append(p->type, sizeof p->type, t[idents[k]].s, t[idents[k]].n);
    }
    if (ptr) {
        kiln__append(p->type, sizeof p->type, "*", 1);
        p->kind = local ? KILN_ARG_LOCAL : KILN_ARG_BUFFER;
    } else {
        p->kind = KILN_ARG_SCALAR;
        p->dtype = kiln__sig_dtype(p->type);
    }
}

kiln_dtype kiln__sig_dtype(const char *type) {
    static const struct {
        const char *name;
        kiln_dtype dtype;
    } table[] = {
        { "char", KILN_INT8 },
        { "signed char", KILN_INT8 },
        { "int8_t", KILN_INT8 },
        { "uchar", KILN_UINT8 },
        { "unsigned char", KILN_UINT8 },
        { "uint8_t", KILN_UINT8 },
        { "short", KILN_INT16 },
        { "short int", KILN_INT16 },
        { "signed short", KILN_INT16 },
        { "int16_t", KILN_INT16 },
        { "ushort", KILN_UINT16 },
        { "unsigned short", KILN_UINT16 },
        { "unsigned short int", KILN_UINT16 },
        { "uint16_t", KILN_UINT16 },
        { "int", KILN_INT32 },
        { "signed", KILN_INT32 },
        { "signed int", KILN_INT32 },
        { "int32_t", KILN_INT32 },
        { "uint", KILN_UINT32 },
        { "unsigned", KILN_UINT32 },
        { "unsigned int", KILN_UINT32 },
        { "uint32_t", KILN_UINT32 },
        { "long", KILN_INT64 },
        { "long int", KILN_INT64 },
        { "signed long", KILN_INT64 },
        { "long long", KILN_INT64 },
        { "long long int", KILN_INT64 },
        { "int64_t", KILN_INT64 },
        { "kiln_int64", KILN_INT64 },
        { "ptrdiff_t", KILN_INT64 },
        { "ulong", KILN_UINT64 },
        { "unsigned long", KILN_UINT64 },
        { "unsigned long int", KILN_UINT64 },
        { "unsigned long long", KILN_UINT64 },
        { "unsigned long long int", KILN_UINT64 },
        { "uint64_t", KILN_UINT64 },
        { "kiln_uint64", KILN_UINT64 },
        { "size_t", KILN_UINT64 },
        { "half", KILN_FLOAT16 },
        { "__half", KILN_FLOAT16 },
        { "float", KILN_FLOAT32 },
        { "double", KILN_FLOAT64 },
        { "cfloat", KILN_COMPLEX64 },
        { "cdouble", KILN_COMPLEX128 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(type, table[i].name) == 0)
            return table[i].dtype;
    return (kiln_dtype)0;
}

static int kiln__sig_add(kiln__sig_list *list, size_t *cap, const kiln__tok *name,
                         const kiln__tok *t, size_t open, size_t close) {
    char nm[128];
    kiln__copy_tok(nm, sizeof nm, name);
    if (kiln__sig_find(list, nm))
        return 1; /* a prototype and its definition: keep the first */
    if (list->count == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        kiln__sig *grown = kiln__realloc(list->sigs, c * sizeof *grown);
        if (!grown)
            return 0;
        list->sigs = grown;
        *cap = c;
    }
    kiln__sig *sig = &list->sigs[list->count];
    memset(sig, 0, sizeof *sig);
    memcpy(sig->name, nm, sizeof nm);
    /* Count the parameters: top-level commas + 1, unless empty or (void). */
    size_t first = open + 1;
    if (first == close || (close == first + 1 && kiln__tok_is(&t[first], "void"))) {
        list->count++;
        return 1;
    }
    size_t np = 1;
    for (size_t i = first; i < close; i++) {
        if (kiln__tok_is(&t[i], "(") || kiln__tok_is(&t[i], "["))
            i = kiln__match(t, close, i);
        else if (kiln__tok_is(&t[i], ","))
            np++;
    }
    sig->params = kiln__calloc(np, sizeof *sig->params);
    if (!sig->params)
        return 0;
    size_t k = 0, start = first;
    for (size_t i = first; i <= close; i++) {
        if (i < close && (kiln__tok_is(&t[i], "(") || kiln__tok_is(&t[i], "["))) {
            i = kiln__match(t, close, i);
            continue;
        }
        if (i == close || kiln__tok_is(&t[i], ",")) {
            if (k < np)
                kiln__param_parse(&t[start], i - start, &sig->params[k++]);
            start = i + 1;
        }
    }
    sig->num_params = k;
    list->count++;
    return 1;
}

kiln_status kiln__sig_parse(const char *source, kiln__sig_list *list) {
    list->count = 0;
    list->sigs = NULL;
    if (!source)
        return KILN_OK;
    char *text = kiln__strdup(source);
    if (!text)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    kiln__clean(text);
    size_t n = 0, cap = 0;
    kiln__tok *t = kiln__tokenize(text, &n);
    if (!t) {
        free(text);
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        if (!kiln__tok_in(&t[i], kiln__kernel_words))
            continue;
        /* qualifier ... void ... name ( params ) [attributes] { or ; */
        int seen_void = 0;
        size_t j = i + 1;
        size_t name = n;
        while (j < n) {
            if (kiln__tok_in(&t[j], kiln__attr_words)) {
                if (j + 1 < n && kiln__tok_is(&t[j + 1], "("))
                    j = kiln__match(t, n, j + 1) + 1;
                else
                    j++;
                continue;
            }
            if (!kiln__tok_ident(&t[j]))
                break;
            if (kiln__tok_is(&t[j], "void"))
                seen_void = 1;
            else if (j + 1 < n && kiln__tok_is(&t[j + 1], "(")) {
                name = j;
                break;
            }
            j++;
        }
        if (!seen_void || name == n)
            continue;
        size_t close = kiln__match(t, n, name + 1);
        if (close == n)
            continue;
        if (!kiln__sig_add(list, &cap, &t[name], t, name + 1, close)) {
            free(t);
            free(text);
            kiln__sig_list_free(list);
            return KILN_ERROR_OUT_OF_HOST_MEMORY;
        }
        i = close;
    }
    free(t);
    free(text);
    return KILN_OK;
}

void kiln__sig_list_free(kiln__sig_list *list) {
    if (!list)
        return;
    for (size_t i = 0; i < list->count; i++)
        free(list->sigs[i].params);
    free(list->sigs);
    list->sigs = NULL;
    list->count = 0;
}

const kiln__sig *kiln__sig_find(const kiln__sig_list *list, const char *name) {
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->sigs[i].name, name) == 0)
            return &list->sigs[i];
    return NULL;
}
