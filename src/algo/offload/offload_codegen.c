/* The kernel of an offload: a loop body wrapped into a kernel of kiln's
 * portable dialect (the last index is dimension 0, each pointer arrives as
 * buffer + byte offset), and its build. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "algo/offload/offload_internal.h"
#include "base/buildlog_quote.h"
#include "base/error.h"
#include "base/ident.h"

enum { INDEX_NAME_MAX = 63, KERNEL_NAME_MAX = 128 };

static kiln_status bad_indices(const char *names, unsigned dims) {
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "kiln_offload_create: index_names \"%s\" must be "
                           "%u distinct identifiers separated by commas "
                           "(not starting with kiln_)",
                           names, dims);
}

/* Splits "i, j" into dims identifiers. */
static kiln_status parse_indices(const char *names, unsigned dims,
                                 char out[3][INDEX_NAME_MAX + 1]) {
    static const char *defaults[3] = { "i", "j", "k" };
    if (!names) {
        for (unsigned d = 0; d < dims; d++)
            strcpy(out[d], defaults[d]);
        return KILN_OK;
    }
    unsigned d = 0;
    for (const char *s = names;;) {
        while (isspace((unsigned char)*s))
            s++;
        const char *b = s;
        while (*s && *s != ',' && !isspace((unsigned char)*s))
            s++;
        size_t len = (size_t)(s - b);
        while (isspace((unsigned char)*s))
            s++;
        if (d == dims || len == 0 || len > INDEX_NAME_MAX)
            return bad_indices(names, dims);
        memcpy(out[d], b, len);
        out[d][len] = 0;
        if (!kiln__is_ident(out[d], INDEX_NAME_MAX) || !strncmp(out[d], "kiln_", 5))
            return bad_indices(names, dims);
        for (unsigned e = 0; e < d; e++)
            if (!strcmp(out[e], out[d]))
                return bad_indices(names, dims);
        d++;
        if (!*s)
            break;
        if (*s != ',')
            return bad_indices(names, dims);
        s++;
    }
    return d == dims ? KILN_OK : bad_indices(names, dims);
}

/* Parameters may not shadow an index or use kiln's prefix. */
static kiln_status check_params(const kiln__gargs *args, unsigned dims,
                                char idx[3][INDEX_NAME_MAX + 1]) {
    for (size_t k = 0; k < args->n; k++) {
        int clash = !strncmp(args->v[k].name, "kiln_", 5);
        for (unsigned d = 0; d < dims; d++)
            clash |= !strcmp(args->v[k].name, idx[d]);
        if (clash)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_offload_create: parameter '%s' "
                                   "clashes with an index name or kiln's "
                                   "reserved kiln_ prefix",
                                   args->v[k].name);
    }
    return KILN_OK;
}

/* The kernel's signature and the index/bounds prologue. */
static void gen_head(kiln__sb *sb, const char *name, const kiln__gargs *args, unsigned dims,
                     char idx[3][INDEX_NAME_MAX + 1]) {
    kiln__sb_addf(sb,
                  "KILN_KERNEL void %s(long kiln_r0, long kiln_r1, long "
                  "kiln_r2",
                  name);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr)
            kiln__sb_addf(sb, ", KILN_GLOBAL %s%s *kiln_p_%s, long kiln_o_%s",
                          g->is_const ? "const " : "", g->type, g->name, g->name);
        else
            kiln__sb_addf(sb, ", %s %s", g->type, g->name);
    }
    kiln__sb_add(sb, ") {\n");
    for (unsigned d = 0; d < dims; d++)
        kiln__sb_addf(sb, "    long %s = (long)kiln_global_id(%u);\n", idx[d], dims - 1 - d);
    kiln__sb_addf(sb, "    if (%s >= kiln_r0", idx[0]);
    if (dims > 1)
        kiln__sb_addf(sb, " || %s >= kiln_r1", idx[1]);
    if (dims > 2)
        kiln__sb_addf(sb, " || %s >= kiln_r2", idx[2]);
    kiln__sb_add(sb, ") return;\n    (void)kiln_r1; (void)kiln_r2;\n");
    /* Each pointer is its buffer plus the mapping's byte offset. */
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (!g->is_ptr)
            continue;
        const char *c = g->is_const ? "const " : "";
        kiln__sb_addf(sb,
                      "    KILN_GLOBAL %s%s *%s = (KILN_GLOBAL %s%s *)"
                      "((KILN_GLOBAL %schar *)kiln_p_%s + kiln_o_%s);\n",
                      c, g->type, g->name, c, g->type, c, g->name, g->name);
    }
}

kiln_status kiln__offload_generate(const char *params, const char *body, unsigned dims,
                                   const kiln_offload_opts *o, char **source, kiln__gargs *args) {
    static const char *what = "kiln_offload_create";
    *source = NULL;
    const char *name = o->name ? o->name : "kiln_offload";
    if (!kiln__is_ident(name, KERNEL_NAME_MAX))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: name \"%.200s\" is not an identifier of "
                               "at most %d characters",
                               what, name, KERNEL_NAME_MAX);
    char idx[3][INDEX_NAME_MAX + 1];
    kiln_status st = parse_indices(o->index_names, dims, idx);
    if (st != KILN_OK)
        return st;
    if (!strchr(params, '*'))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: params \"%s\" declare no pointer; an "
                               "offload needs at least one mapped array",
                               what, params);
    st = kiln__gargs_parse(params, what, args);
    if (st != KILN_OK)
        return st;
    st = check_params(args, dims, idx);
    if (st != KILN_OK) {
        kiln__gargs_free(args);
        return st;
    }
    kiln__sb sb = { 0 };
    if (o->preamble)
        kiln__gen_user(&sb, "offload preamble", o->preamble);
    gen_head(&sb, name, args, dims, idx);
    kiln__sb_add(&sb, "    {\n");
    kiln__gen_user(&sb, "offload body", body);
    kiln__sb_add(&sb, "    }\n}\n");
    *source = kiln__sb_take(&sb);
    if (!*source) {
        kiln__gargs_free(args);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    return KILN_OK;
}

kiln_status kiln__offload_build(kiln_context *ctx, const char *source, const char *build_options,
                                const char *body, kiln_program **prog) {
    kiln_program_opts po = { .struct_size = sizeof po,
                             .language = KILN_LANG_AUTO,
                             .build_options = build_options };
    kiln_status st = kiln_program_create(ctx, source, &po, prog);
    if (st != KILN_ERROR_BUILD)
        return st;
    char first[1024];
    kiln__quote_log_errors(kiln_last_build_log(), 3, first, sizeof first);
    return kiln__error_set(KILN_ERROR_BUILD, kiln_last_error_native(),
                           "kiln_offload_create: the body `%.400s` failed to "
                           "build: %s (full log: kiln_last_build_log())",
                           body, first);
}
