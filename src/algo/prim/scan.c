/* The scan generator (kiln_scan_*), like PyOpenCL's GenericScanKernel: the
 * object, its builds and launches. The templates and their choice are in
 * scan_variants.c, the launches of each in scan_run.c. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/prim/prim.h"
#include "algo/prim/scan.h"
#include "base/error.h"

static kiln_status scan_build(kiln__gen *gen, int strided, const kiln__plan *plan,
                              kiln__variant *v) {
    kiln_scan *s = (kiln_scan *)gen;
    v->tmpl = kiln__scan_template(s, plan);
    v->local = kiln__scan_local(v->tmpl, plan);
    v->items = kiln__scan_items(v->tmpl, s, plan);
    kiln__sb sb = { 0 };
    kiln_status st = kiln__scan_source(s, strided, plan, &sb);
    if (st == KILN_OK) {
        char text[1200];
        snprintf(text, sizeof text, "input: %s; scan: %s; output: %s; neutral: %s%s%s", s->input,
                 s->op, s->output, s->neutral, s->seg ? "; segment_start: " : "",
                 s->seg ? s->seg : "");
        static const char *const three[3] = { "_reduce", "_spine", "_final" };
        static const char *const one[1] = { "_onepass" };
        int single = v->tmpl != KILN__SCAN_THREEPHASE;
        st = kiln__gen_program(gen, &sb, kiln__scan_languages(v->tmpl), text, single ? one : three,
                               single ? 1 : 3, v);
    }
    kiln__sb_free(&sb);
    return st;
}

static void scan_destroy(kiln__gen *gen) {
    kiln_scan *s = (kiln_scan *)gen;
    free(s->scan_type);
    free(s->neutral);
    free(s->op);
    free(s->input);
    free(s->output);
    free(s->seg);
    free(s->preamble);
    free(s);
}

static const kiln__gen_kind scan_kind = { "kiln_scan", "kiln_scan", scan_build, scan_destroy };

/* Copies the descriptor's strings. */
static kiln_status scan_fill(kiln_scan *s, const kiln_scan_desc *d, size_t size) {
    s->scan_size = size;
    s->scan_type = kiln__strdup(d->scan_type);
    s->neutral = kiln__strdup(d->neutral);
    s->op = kiln__strdup(d->scan);
    s->input = kiln__strdup(d->input);
    s->output = kiln__strdup(d->output);
    s->seg = d->segment_start ? kiln__strdup(d->segment_start) : NULL;
    s->preamble = d->preamble ? kiln__strdup(d->preamble) : NULL;
    if (!s->scan_type || !s->neutral || !s->op || !s->input || !s->output ||
        (d->segment_start && !s->seg) || (d->preamble && !s->preamble))
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_scan_create");
    return KILN_OK;
}

kiln_status kiln__scan_create_ex(kiln_context *context, const kiln_scan_desc *desc, int eager,
                                 kiln_scan **out) {
    static const char what[] = "kiln_scan_create";
    if (out)
        *out = NULL;
    kiln_scan_desc d;
    size_t v1 = offsetof(kiln_scan_desc, name) + sizeof d.name;
    kiln_status st = kiln__gen_create_begin(context, desc, out != NULL, v1, sizeof d, &d, what,
                                            "KILN_SCAN_DESC");
    if (st != KILN_OK)
        return st;
    if (!d.arguments || !d.scan_type || !d.neutral || !d.scan || !d.input || !d.output)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, scan_type, neutral, scan, "
                               "input and output are required",
                               what);
    size_t size = d.scan_size ? d.scan_size : kiln_dtype_size(kiln__dtype_from_name(d.scan_type));
    if (!size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: scan_type '%s' is not a scalar type; set "
                               "scan_size",
                               what, d.scan_type);
    kiln_scan *s = kiln__calloc(1, sizeof *s);
    if (!s)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    st = kiln__gen_init(&s->gen, &scan_kind, context, d.arguments, d.name);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    st = kiln__gen_set_options(&s->gen, d.options);
    if (st == KILN_OK)
        st = scan_fill(s, &d, size);
    st = kiln__gen_create_end(&s->gen, st, eager);
    if (st == KILN_OK)
        *out = s;
    return st;
}

kiln_status kiln__scan_make(void *arg, kiln__gen **gen) {
    const kiln__scan_make_arg *a = arg;
    kiln_scan *s = NULL;
    kiln_status st = kiln__scan_create_ex(a->context, a->d, 0, &s);
    *gen = s ? &s->gen : NULL;
    return st;
}

kiln_status kiln_scan_create(kiln_context *context, const kiln_scan_desc *desc, kiln_scan **scan) {
    return kiln__scan_create_ex(context, desc, 1, scan);
}

kiln_status kiln_scan_retain(kiln_scan *s) {
    return kiln__gen_retain_public(s ? &s->gen : NULL, "kiln_scan_retain", "scan");
}

void kiln_scan_release(kiln_scan *s) {
    if (s)
        kiln__gen_release(&s->gen);
}

kiln_status kiln_scan_launch(kiln_queue *queue, kiln_scan *s, size_t n, size_t num_args,
                             const kiln_arg *args, size_t num_wait, kiln_event *const *wait,
                             kiln_event **event) {
    if (event)
        *event = NULL;
    kiln__plan plan;
    kiln__bound b = { 0 };
    kiln_status st = kiln__gen_prepare(queue, s ? &s->gen : NULL, n, num_args, args, 0,
                                       "kiln_scan_launch", &plan, &b);
    kiln__variant *v = NULL;
    if (st == KILN_OK && n)
        st = kiln__gen_variant(&s->gen, b.layout, &plan, &v);
    if (st == KILN_OK && !n && event)
        st = kiln_queue_marker(queue, num_wait, wait, event);
    if (st == KILN_OK && n)
        st = v->tmpl == KILN__SCAN_THREEPHASE
                 ? kiln__scan_run_threephase(queue, s, v, &plan, &b, num_wait, wait, event)
                 : kiln__scan_run_onepass(queue, s, v, &b, num_wait, wait, event);
    kiln__bound_free(&b);
    return st;
}
