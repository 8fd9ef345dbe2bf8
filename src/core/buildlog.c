/* Build logs that point at the user's source on every compiler.
 *
 * The final source is the backend's prelude, ending with "#line 1", then the
 * user's text (which, when generated, has its own `#line N "label"`
 * directives). PoCL and NVRTC honour the directives; NVIDIA's OpenCL
 * compiler ignores them and counts lines from the start of the prelude. So
 * after a failed build the core scans the final source's directives into a
 * table (final line -> label, line), decides from the log's references
 * whether the compiler honoured them, rewrites the references if it did not,
 * and appends the source lines the errors point at. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fault.h"
#include "base/strbuf.h"
#include "core/internal.h"

typedef struct {
    const char *text; /* the final source line (not terminated) */
    size_t len;
    const char *label; /* from #line N "label"; NULL: the user's source */
    size_t label_len;
    long line;     /* presumed line number */
    int directive; /* this line is a #line directive */
} kiln__srcline;

typedef struct {
    kiln__srcline *lines; /* lines[0] is final line 1 */
    size_t count;
    size_t prelude; /* final lines 1..prelude are the prelude */
} kiln__linemap;

/* One line reference in a log: "TOKEN:N:" or "TOKEN(N):" at a line start
 * (or after "from "). */
typedef struct {
    size_t tok, tok_len; /* offsets into the log */
    size_t num, num_len;
    long n;
    size_t log_line; /* index of the log line holding it */
} kiln__ref;

/* "#line N" or "#line N "label"": returns 1 and fills n / label. */
static int kiln__parse_directive(const char *s, size_t len, long *n, const char **label,
                                 size_t *label_len) {
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i >= len || s[i] != '#')
        return 0;
    i++;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (len - i < 4 || strncmp(s + i, "line", 4) != 0)
        return 0;
    i += 4;
    if (i >= len || (s[i] != ' ' && s[i] != '\t'))
        return 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i >= len || !isdigit((unsigned char)s[i]))
        return 0;
    long v = 0;
    while (i < len && isdigit((unsigned char)s[i]) && v < 100000000L)
        v = v * 10 + (s[i++] - '0');
    *n = v;
    *label = NULL;
    *label_len = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < len && s[i] == '"') {
        size_t start = ++i;
        while (i < len && s[i] != '"')
            i++;
        if (i < len && i > start) {
            *label = s + start;
            *label_len = i - start;
        }
    }
    return 1;
}

static int kiln__linemap_make(const char *final, size_t prelude_lines, kiln__linemap *m) {
    /* Lines end as the compiler ends them: "\n", "\r\n" or a lone "\r"
     * (a source with bare CRs, or random bytes, would otherwise have fewer
     * lines here than in the log, and its errors be blamed on the
     * prelude). */
    size_t count = 1;
    for (const char *p = final; *p; p++)
        count += *p == '\n' || *p == '\r';
    m->lines = kiln__calloc(count, sizeof *m->lines);
    if (!m->lines)
        return 0;
    m->count = 0;
    m->prelude = prelude_lines;
    const char *label = NULL;
    size_t label_len = 0;
    long next = 1;
    const char *p = final;
    while (*p || m->count == 0) {
        size_t len = strcspn(p, "\r\n");
        const char *end = p[len] ? p + len : NULL;
        kiln__srcline *l = &m->lines[m->count++];
        l->text = p;
        l->len = len;
        l->label = label;
        l->label_len = label_len;
        l->line = next;
        long n;
        const char *lab;
        size_t lab_len;
        if (kiln__parse_directive(p, len, &n, &lab, &lab_len)) {
            l->directive = 1;
            next = n;
            if (lab) {
                label = lab;
                label_len = lab_len;
            }
        } else {
            next++;
        }
        if (!end)
            break;
        p = end + (end[0] == '\r' && end[1] == '\n' ? 2 : 1);
        if (!*p)
            break;
    }
    return 1;
}

static int kiln__ends(const char *tok, size_t len, const char *suffix) {
    size_t n = strlen(suffix);
    return len >= n && memcmp(tok + len - n, suffix, n) == 0;
}

/* Names of other files than the main source (headers, the compiler's own
 * pseudo-files): never mapped. */
static int kiln__foreign(const char *tok, size_t len) {
    return kiln__ends(tok, len, ".h") || kiln__ends(tok, len, ".hpp") ||
           kiln__ends(tok, len, ".cuh") || (len >= 9 && memcmp(tok, "<built-in", 9) == 0) ||
           (len >= 13 && memcmp(tok, "<command line", 13) == 0) ||
           (len >= 8 && memcmp(tok, "<scratch", 8) == 0);
}

static int kiln__label_is(const kiln__srcline *l, const char *tok, size_t tok_len) {
    return l->label && l->label_len == tok_len && memcmp(l->label, tok, tok_len) == 0;
}

static int kiln__map_has_label(const kiln__linemap *m, const char *tok, size_t tok_len) {
    for (size_t i = m->prelude; i < m->count; i++)
        if (kiln__label_is(&m->lines[i], tok, tok_len))
            return 1;
    return 0;
}

/* The final line (0-based) that presumed line n of tok names when the
 * compiler honours the directives: a labelled line, else one of the
 * user's unlabelled lines after the prelude. -1 if none. */
static long kiln__honoured_line(const kiln__linemap *m, const char *tok, size_t tok_len, long n,
                                int labelled) {
    for (size_t i = m->prelude; i < m->count; i++) {
        const kiln__srcline *l = &m->lines[i];
        if (l->directive || l->line != n)
            continue;
        if (labelled ? kiln__label_is(l, tok, tok_len) : l->label == NULL)
            return (long)i;
    }
    return -1;
}

/* Compares a log line (the compiler quoting the source) with a source
 * line, both trimmed. */
static int kiln__same_text(const char *a, size_t alen, const char *b, size_t blen) {
    while (alen && isspace((unsigned char)*a))
        a++, alen--;
    while (alen && isspace((unsigned char)a[alen - 1]))
        alen--;
    while (blen && isspace((unsigned char)*b))
        b++, blen--;
    while (blen && isspace((unsigned char)b[blen - 1]))
        blen--;
    return alen > 0 && alen == blen && memcmp(a, b, alen) == 0;
}

/* A reference starting at log + at ("TOKEN:N:" or "TOKEN(N):"), or 0. */
static int kiln__ref_at(const char *log, size_t at, size_t line_end, kiln__ref *r) {
    size_t i = at;
    while (i < line_end && !isspace((unsigned char)log[i]) && log[i] != ':' && log[i] != '(' &&
           log[i] != ')' && log[i] != '\'' && log[i] != '"')
        i++;
    if (i == at || i >= line_end)
        return 0;
    char open = log[i];
    if (open != ':' && open != '(')
        return 0;
    size_t d = i + 1, e = d;
    long v = 0;
    while (e < line_end && isdigit((unsigned char)log[e]) && v < 100000000L)
        v = v * 10 + (log[e++] - '0');
    if (e == d || e >= line_end)
        return 0;
    if (open == ':' && log[e] != ':')
        return 0;
    if (open == '(' && !(log[e] == ',' || (log[e] == ')' && e + 1 < line_end && log[e + 1] == ':')))
        return 0;
    r->tok = at;
    r->tok_len = i - at;
    r->num = d;
    r->num_len = e - d;
    r->n = v;
    return 1;
}

/* Finds the references of a log: at most cap, in order. */
static size_t kiln__refs(const char *log, kiln__ref *refs, size_t cap) {
    size_t count = 0, line = 0, p = 0, n = strlen(log);
    while (p < n && count < cap) {
        const char *nl = memchr(log + p, '\n', n - p);
        size_t end = nl ? (size_t)(nl - log) : n;
        kiln__ref r;
        /* "<kernel>:3:4: error", PoCL's "error: /tmp/x.cl:3:4: ...", NVRTC's
         * "kiln.cu(3): error"; not inside quoted source lines. */
        static const char *const lead[] = { "", "error: ", "warning: ", "note: ", "fatal error: " };
        int found = 0;
        for (size_t j = 0; j < sizeof lead / sizeof lead[0] && !found; j++) {
            size_t l = strlen(lead[j]);
            if (end - p > l && strncmp(log + p, lead[j], l) == 0 &&
                kiln__ref_at(log, p + l, end, &r))
                found = 1;
        }
        /* "In file included from <kernel>:3:" and the like */
        for (size_t i = p; !found && i + 5 <= end; i++)
            if (memcmp(log + i, "from ", 5) == 0 && kiln__ref_at(log, i + 5, end, &r))
                found = 1;
        if (found) {
            r.log_line = line;
            refs[count++] = r;
        }
        p = end + 1;
        line++;
    }
    return count;
}

/* The text of log line index idx, or NULL. */
static const char *kiln__log_line(const char *log, size_t idx, size_t *len) {
    const char *p = log;
    for (size_t i = 0; i < idx && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p || !*p)
        return NULL;
    *len = strcspn(p, "\n");
    return p;
}

#define KILN__MAX_REFS 64

/* 1 when the log's references fit the final source's own line numbers
 * (the compiler ignored #line) better than the directives' numbers. */
static int kiln__ignored_directives(const kiln__linemap *m, const char *log, const kiln__ref *refs,
                                    size_t nrefs) {
    int honoured = 0, ignored = 0;
    for (size_t k = 0; k < nrefs; k++) {
        const kiln__ref *r = &refs[k];
        const char *tok = log + r->tok;
        if (kiln__foreign(tok, r->tok_len))
            continue;
        /* A generator's label in the log: the directives were honoured. */
        if (kiln__map_has_label(m, tok, r->tok_len))
            return 0;
        long h = kiln__honoured_line(m, tok, r->tok_len, r->n, 0);
        long g = r->n >= 1 && (size_t)r->n <= m->count ? r->n - 1 : -1;
        if (h < 0 && g >= 0)
            ignored += 2;
        else if (h >= 0 && g < 0)
            honoured += 2;
        /* Clang-based compilers quote the line after the message. */
        size_t qlen = 0;
        const char *q = kiln__log_line(log, r->log_line + 1, &qlen);
        kiln__ref dummy;
        if (!q || kiln__ref_at(q, 0, qlen, &dummy))
            continue;
        if (g >= 0 && kiln__same_text(q, qlen, m->lines[g].text, m->lines[g].len))
            ignored++;
        if (h >= 0 && kiln__same_text(q, qlen, m->lines[h].text, m->lines[h].len))
            honoured++;
    }
    return ignored > honoured;
}

/* "label:line: text" for final line i (0-based) into b. */
static void kiln__describe(kiln__sb *b, const kiln__linemap *m, size_t i) {
    const kiln__srcline *l = &m->lines[i];
    if (i < m->prelude) {
        kiln__sb_addn(b, "kiln-prelude", 12);
        kiln__sb_addf(b, ":%ld: ", (long)((long)i + 1));
    } else {
        if (l->label)
            kiln__sb_addn(b, l->label, l->label_len);
        else
            kiln__sb_addn(b, "source", 6);
        kiln__sb_addf(b, ":%ld: ", (long)(l->line));
    }
    const char *t = l->text;
    size_t n = l->len;
    while (n && isspace((unsigned char)*t))
        t++, n--;
    while (n && isspace((unsigned char)t[n - 1]))
        n--;
    if (n > 200)
        n = 200;
    kiln__sb_addn(b, t, n);
}

static int kiln__line_has_error(const char *log, size_t log_line) {
    size_t len = 0;
    const char *p = kiln__log_line(log, log_line, &len);
    for (size_t i = 0; p && i + 5 <= len; i++)
        if (strncasecmp(p + i, "error", 5) == 0)
            return 1;
    return 0;
}

char *kiln__build_log_map(const char *final, size_t prelude_lines, const char *log, char *where,
                          size_t where_cap) {
    if (where && where_cap)
        where[0] = 0;
    if (!final || !log)
        return log ? kiln__strdup(log) : NULL;
    kiln__linemap m;
    if (!kiln__linemap_make(final, prelude_lines, &m))
        return NULL;
    kiln__ref refs[KILN__MAX_REFS];
    size_t nrefs = kiln__refs(log, refs, KILN__MAX_REFS);
    int ignored = kiln__ignored_directives(&m, log, refs, nrefs);

    kiln__sb out = { 0 };
    /* The final line each reference names (0-based; -1 if none). */
    long at[KILN__MAX_REFS];
    size_t copied = 0;
    for (size_t k = 0; k < nrefs; k++) {
        const kiln__ref *r = &refs[k];
        const char *tok = log + r->tok;
        at[k] = -1;
        if (kiln__foreign(tok, r->tok_len))
            continue;
        if (ignored) {
            if (r->n >= 1 && (size_t)r->n <= m.count)
                at[k] = r->n - 1;
        } else {
            int labelled = kiln__map_has_label(&m, tok, r->tok_len);
            at[k] = kiln__honoured_line(&m, tok, r->tok_len, r->n, labelled);
        }
        if (at[k] < 0)
            continue;
        /* Rewrite "TOKEN:N" into the user's "label:line", "source:line"
         * for the user's unlabelled source: the compiler's own name for it
         * ("<kernel>", "kiln.cu", PoCL's temporary file's path) means
         * nothing to the user, and kiln's quoted line says "source:N". */
        const kiln__srcline *l = &m.lines[at[k]];
        if (l->directive)
            continue;
        kiln__sb_addn(&out, log + copied, r->tok - copied);
        if ((size_t)at[k] < m.prelude)
            kiln__sb_addn(&out, "kiln-prelude", 12);
        else if (l->label)
            kiln__sb_addn(&out, l->label, l->label_len);
        else
            kiln__sb_addn(&out, "source", 6);
        kiln__sb_addn(&out, log + r->tok + r->tok_len, r->num - r->tok - r->tok_len);
        kiln__sb_addf(&out, "%ld", (long)((size_t)at[k] < m.prelude ? at[k] + 1 : l->line));
        copied = r->num + r->num_len;
    }
    kiln__sb_addn(&out, log + copied, strlen(log + copied));

    /* The source lines the errors point at (at most 3 distinct ones). */
    long shown[3];
    size_t nshown = 0;
    for (int pass = 0; pass < 2 && nshown < 3; pass++)
        for (size_t k = 0; k < nrefs && nshown < 3; k++) {
            if (at[k] < 0 || m.lines[at[k]].directive)
                continue;
            /* error lines first, then anything else (notes, warnings) */
            if ((pass == 0) != kiln__line_has_error(log, refs[k].log_line))
                continue;
            if (pass == 1 && nshown > 0)
                break;
            int dup = 0;
            for (size_t j = 0; j < nshown; j++)
                dup |= shown[j] == at[k];
            if (dup)
                continue;
            if (nshown == 0) {
                const char *head = ignored ? "\nkiln: the source at the lines above (this "
                                             "compiler ignores #line; kiln mapped its line "
                                             "numbers back to yours):\n"
                                           : "\nkiln: the source at the lines above:\n";
                kiln__sb_addn(&out, head, strlen(head));
            }
            kiln__sb_addn(&out, "  ", 2);
            size_t before = out.len;
            kiln__describe(&out, &m, (size_t)at[k]);
            if (nshown == 0 && where && where_cap && !out.oom) {
                size_t n = out.len - before;
                if (n >= where_cap)
                    n = where_cap - 1;
                memcpy(where, out.p + before, n);
                where[n] = 0;
            }
            kiln__sb_addn(&out, "\n", 1);
            shown[nshown++] = at[k];
        }
    free(m.lines);
    if (out.oom) {
        kiln__sb_free(&out);
        return NULL;
    }
    return kiln__sb_take(&out);
}
