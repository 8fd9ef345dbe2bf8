/* The source rewrite after preprocessing (see prelude_host.h): KILN_LOCAL
 * markers become `static __thread` (per-thread, hence per-work-group,
 * storage) or vanish where they qualify a pointer; each KILN_KERNEL function
 * becomes a static function with the hidden work-item parameter, and gets
 * an items loop and an exported entry point (kiln__launch_<name>). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/rewrite.h"
#include "base/fault.h"
#include "base/strbuf.h"

static int is_id0(char c) {
    return isalpha((unsigned char)c) || c == '_';
}
static int is_id(char c) {
    return isalnum((unsigned char)c) || c == '_';
}

/* Skips a string or character literal starting at s[i]; returns the index
 * after it. */
static size_t skip_lit(const char *s, size_t n, size_t i) {
    char q = s[i++];
    while (i < n && s[i] != q) {
        if (s[i] == '\\' && i + 1 < n)
            i++;
        if (s[i] == '\n')
            break;
        i++;
    }
    return i < n ? i + 1 : n;
}

/* Skips a line marker or other directive line starting at s[i] ('#' first
 * on its line). */
static size_t skip_line(const char *s, size_t n, size_t i) {
    while (i < n && s[i] != '\n')
        i++;
    return i;
}

/* Where a scan of the code goes on from s[i]: after a literal, or at the
 * end of a directive line, starting there (the scans' one rule for what
 * is not code); i itself where code starts. */
static size_t past_noncode(const char *s, size_t n, size_t i) {
    if (s[i] == '"' || s[i] == '\'')
        return skip_lit(s, n, i);
    if (s[i] == '#' && (i == 0 || s[i - 1] == '\n'))
        return skip_line(s, n, i);
    return i;
}

/* The start of the next identifier of the code at or after s[i] (n if
 * none): the word scans step past what is not code (past_noncode) and
 * past the characters where no identifier starts. */
static size_t next_word(const char *s, size_t n, size_t i) {
    while (i < n) {
        size_t past = past_noncode(s, n, i);
        if (past != i)
            i = past;
        else if (!is_id0(s[i]) || (i > 0 && is_id(s[i - 1])))
            i++;
        else
            break;
    }
    return i;
}

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* Index of the bracket matching the one at s[i] ('(' or '{'); n if none. */
static size_t match(const char *s, size_t n, size_t i) {
    char open = s[i], close = open == '(' ? ')' : open == '{' ? '}' : ']';
    int depth = 0;
    for (; i < n; i++) {
        char c = s[i];
        size_t past = past_noncode(s, n, i);
        if (past != i) {
            i = past - 1; /* the loop steps past it */
            continue;
        }
        if (c == open)
            depth++;
        else if (c == close && --depth == 0)
            return i;
    }
    return n;
}

static int word_at(const char *s, size_t n, size_t i, const char *w) {
    size_t len = strlen(w);
    return i + len <= n && memcmp(s + i, w, len) == 0 && (i + len == n || !is_id(s[i + len])) &&
           (i == 0 || !is_id(s[i - 1]));
}

static void trim(const char **a, const char **b) {
    while (*a < *b && isspace((unsigned char)**a))
        (*a)++;
    while (*b > *a && isspace((unsigned char)(*b)[-1]))
        (*b)--;
}

/* One parameter "type name" (or "type name[...]") into its type and name. */
static int split_param(const char *a, const char *b, kiln__hparam *p) {
    trim(&a, &b);
    const char *br = memchr(a, '[', (size_t)(b - a));
    int array = br != NULL;
    const char *end = array ? br : b;
    while (end > a && isspace((unsigned char)end[-1]))
        end--;
    const char *nm = end;
    while (nm > a && is_id(nm[-1]))
        nm--;
    if (nm == end || nm == a || (size_t)(end - nm) >= sizeof p->name)
        return 0;
    snprintf(p->name, sizeof p->name, "%.*s", (int)(end - nm), nm);
    size_t tl = (size_t)(nm - a);
    p->type = kiln__malloc(tl + 3);
    if (!p->type)
        return 0;
    memcpy(p->type, a, tl);
    while (tl && isspace((unsigned char)p->type[tl - 1]))
        tl--;
    if (array)
        p->type[tl++] = '*';
    p->type[tl] = 0;
    return 1;
}

static kiln_status kiln__hrw_kernels(const char *in, kiln__hrw *rw, char *why, size_t why_cap);

void kiln__hrw_free(kiln__hrw *rw) {
    for (size_t k = 0; k < rw->num_kernels; k++) {
        for (size_t i = 0; i < rw->kernels[k].num_params; i++)
            free(rw->kernels[k].params[i].type);
        free(rw->kernels[k].params);
    }
    free(rw->kernels);
    free(rw->text);
    memset(rw, 0, sizeof *rw);
}

static int add_kernel(kiln__hrw *rw, const char *name, size_t nlen, const char *pa,
                      const char *pb) {
    kiln__hkdecl *grown = kiln__realloc(rw->kernels, (rw->num_kernels + 1) * sizeof *grown);
    if (!grown)
        return 0;
    rw->kernels = grown;
    kiln__hkdecl *k = &rw->kernels[rw->num_kernels++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%.*s", (int)nlen, name);
    const char *a = pa, *b = pb;
    trim(&a, &b);
    if (a == b || (b - a == 4 && memcmp(a, "void", 4) == 0))
        return 1;
    /* top-level commas */
    size_t cap = 8;
    k->params = kiln__calloc(cap, sizeof *k->params);
    if (!k->params)
        return 0;
    int depth = 0;
    const char *start = a;
    for (const char *c = a; c <= b; c++) {
        if (c < b && (*c == '(' || *c == '['))
            depth++;
        else if (c < b && (*c == ')' || *c == ']'))
            depth--;
        if (c == b || (*c == ',' && depth == 0)) {
            if (k->num_params == cap) {
                kiln__hparam *g = kiln__realloc(k->params, cap * 2 * sizeof *g);
                if (!g)
                    return 0;
                k->params = g;
                cap *= 2;
            }
            if (!split_param(start, c, &k->params[k->num_params]))
                return -1;
            k->num_params++;
            start = c + 1;
        }
    }
    return 1;
}

static size_t count_word(const char *s, size_t a, size_t b, const char *w) {
    size_t n = 0;
    for (size_t i = a; i < b; i++) {
        char c = s[i];
        size_t past = past_noncode(s, b, i);
        if (past != i) {
            i = past - 1; /* the loop steps past it */
            continue;
        }
        if (is_id0(c) && (i == 0 || !is_id(s[i - 1]))) {
            size_t j = i;
            while (j < b && is_id(s[j]))
                j++;
            if (word_at(s, b, i, w))
                n++;
            i = j - 1;
        }
    }
    return n;
}

/* Pass 1: the KILN_LOCAL markers. */
static char *locals(const char *in) {
    size_t n = strlen(in), i = 0, copied = 0;
    kiln__sb out = { 0 };
    while ((i = next_word(in, n, i)) < n) {
        if (word_at(in, n, i, "__kiln_local__")) {
            /* pointer declarator or cast: no storage */
            size_t j = i + 14;
            int depth = 0, pointer = 0;
            for (; j < n; j++) {
                char d = in[j];
                if (d == '(')
                    depth++;
                else if (d == ')') {
                    if (depth == 0)
                        break;
                    depth--;
                } else if (depth == 0 && (d == ';' || d == ',' || d == '=' || d == '[' || d == '{'))
                    break;
                else if (depth == 0 && d == '*') {
                    pointer = 1;
                    break;
                }
            }
            kiln__sb_addn(&out, in + copied, i - copied);
            kiln__sb_add(&out, pointer ? "              " : "static __thread");
            i += 14;
            copied = i;
            continue;
        }
        while (i < n && is_id(in[i]))
            i++;
    }
    kiln__sb_addn(&out, in + copied, n - copied);
    if (out.oom) {
        kiln__sb_free(&out);
        return NULL;
    }
    return kiln__sb_take(&out);
}

kiln_status kiln__hrw_run(const char *in0, kiln__hrw *rw, char *why, size_t why_cap) {
    char *in = locals(in0);
    if (!in) {
        snprintf(why, why_cap, "out of memory");
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    kiln_status st = kiln__hrw_kernels(in, rw, why, why_cap);
    free(in);
    return st;
}

static kiln_status kiln__hrw_kernels(const char *in, kiln__hrw *rw, char *why, size_t why_cap) {
    size_t n = strlen(in);
    kiln__sb out = { 0 };
    size_t outside_w = 0, i = 0, copied = 0;
    memset(rw, 0, sizeof *rw);
    why[0] = 0;
    size_t total_w = count_word(in, 0, n, "kiln__w");
    size_t inside_w = 0;
    rw->has_barrier = count_word(in, 0, n, "kiln__barrier_impl") > 1;
    while ((i = next_word(in, n, i)) < n) {
        if (word_at(in, n, i, "__kiln_kernel__")) {
            size_t j = i + 15;
            const char *name = NULL;
            size_t nlen = 0, open = 0;
            while (j < n) {
                j = skip_ws(in, n, j);
                if (j >= n)
                    break;
                if (is_id0(in[j])) {
                    size_t e = j;
                    while (e < n && is_id(in[e]))
                        e++;
                    size_t after = skip_ws(in, n, e);
                    if (word_at(in, n, j, "__attribute__") && after < n && in[after] == '(') {
                        j = match(in, n, after) + 1;
                        continue;
                    }
                    if (after < n && in[after] == '(') {
                        name = in + j;
                        nlen = e - j;
                        open = after;
                        break;
                    }
                    j = e;
                    continue;
                }
                if (in[j] == '*') {
                    j++;
                    continue;
                }
                break;
            }
            if (!name) {
                snprintf(why, why_cap, "a KILN_KERNEL without a function after it");
                kiln__sb_free(&out);
                return KILN_ERROR_BUILD;
            }
            size_t close = match(in, n, open);
            if (close >= n) {
                snprintf(why, why_cap, "kernel %.*s: no end to its parameter list", (int)nlen,
                         name);
                kiln__sb_free(&out);
                return KILN_ERROR_BUILD;
            }
            size_t k = skip_ws(in, n, close + 1);
            while (k < n && word_at(in, n, k, "__attribute__")) {
                size_t p = skip_ws(in, n, k + 13);
                k = p < n && in[p] == '(' ? skip_ws(in, n, match(in, n, p) + 1) : p;
            }
            int definition = k < n && in[k] == '{';
            kiln__sb_addn(&out, in + copied, i - copied);
            kiln__sb_add(&out, "static inline  ");
            kiln__sb_addn(&out, in + i + 15, open + 1 - (i + 15));
            const char *pa = in + open + 1, *pb = in + close;
            const char *ta = pa, *tb = pb;
            trim(&ta, &tb);
            int none = ta == tb || (tb - ta == 4 && memcmp(ta, "void", 4) == 0);
            kiln__sb_add(&out, none ? "const kiln__wi_t *kiln__w" : "const kiln__wi_t *kiln__w, ");
            if (!none)
                kiln__sb_addn(&out, pa, (size_t)(pb - pa));
            kiln__sb_add(&out, ")");
            copied = close + 1;
            if (definition) {
                size_t end = match(in, n, k);
                inside_w += count_word(in, open, end < n ? end : n, "kiln__w");
                int r = add_kernel(rw, name, nlen, pa, pb);
                if (r <= 0) {
                    if (r < 0)
                        snprintf(why, why_cap, "kernel %.*s: a parameter without a name", (int)nlen,
                                 name);
                    else
                        snprintf(why, why_cap, "out of memory");
                    kiln__sb_free(&out);
                    return r < 0 ? KILN_ERROR_BUILD : KILN_ERROR_OUT_OF_HOST_MEMORY;
                }
            }
            i = close + 1;
            continue;
        }
        while (i < n && is_id(in[i]))
            i++;
    }
    kiln__sb_addn(&out, in + copied, n - copied);
    outside_w = total_w - inside_w;
    rw->need_tls = outside_w > 1;
    if (out.oom) {
        kiln__sb_free(&out);
        snprintf(why, why_cap, "out of memory");
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    rw->text = kiln__sb_take(&out);
    return KILN_OK;
}

void kiln__hrw_entries(const kiln__hrw *rw, kiln__sb *sb) {
    kiln__sb_addf(sb,
                  "\n#line 1 \"kiln-host-entries.h\"\n"
                  "__attribute__((visibility(\"default\"))) int kiln__has_barrier = %d;\n",
                  rw->has_barrier);
    for (size_t k = 0; k < rw->num_kernels; k++) {
        const kiln__hkdecl *d = &rw->kernels[k];
        kiln__sb_addf(sb,
                      "static void kiln__items_%s(void **kiln__a, const kiln__wi_t *kiln__wi0, "
                      "size_t kiln__x0, size_t kiln__x1, size_t kiln__y0, size_t kiln__y1, "
                      "size_t kiln__z0, size_t kiln__z1) {\n"
                      "    kiln__wi_t kiln__wv = *kiln__wi0;\n"
                      "    (void)kiln__a;\n",
                      d->name);
        for (size_t i = 0; i < d->num_params; i++)
            kiln__sb_addf(sb, "    %s kiln__p%zu = *(%s *)kiln__a[%zu];\n", d->params[i].type, i,
                          d->params[i].type, i);
        if (rw->need_tls)
            kiln__sb_add(sb, "    kiln__w = &kiln__wv;\n");
        kiln__sb_add(sb, "    for (size_t kiln__z = kiln__z0; kiln__z < kiln__z1; kiln__z++)\n"
                         "        for (size_t kiln__y = kiln__y0; kiln__y < kiln__y1; kiln__y++)\n"
                         "            for (size_t kiln__x = kiln__x0; kiln__x < kiln__x1; "
                         "kiln__x++) {\n"
                         "                kiln__wv.lid[0] = kiln__x;\n"
                         "                kiln__wv.lid[1] = kiln__y;\n"
                         "                kiln__wv.lid[2] = kiln__z;\n");
        kiln__sb_addf(sb, "                %s(&kiln__wv", d->name);
        for (size_t i = 0; i < d->num_params; i++)
            kiln__sb_addf(sb, ", kiln__p%zu", i);
        kiln__sb_add(sb, ");\n            }\n}\n");
        kiln__sb_addf(sb,
                      "__attribute__((visibility(\"default\"))) int kiln__launch_%s("
                      "kiln__launch_t *L) {\n    return kiln__rt_launch(L, kiln__items_%s);\n}\n",
                      d->name, d->name);
        kiln__sb_addf(sb,
                      "__attribute__((visibility(\"default\"))) const unsigned "
                      "kiln__nparams_%s = %zu;\n",
                      d->name, d->num_params);
    }
}
