/* The selection engine and generator (kiln_select_*), like PyOpenCL's
 * copy_if: a scan of 0/1 flags whose output step scatters each selected
 * item to its rank. The scan is the scan generator's (its templates and
 * their choice by device capability, algo/scan.h) in the any-shape layout:
 * outputs and the count are indexed freely, not sized like the input. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "algo/prim/prim.h"
#include "algo/prim/select.h"
#include "base/error.h"

typedef struct sel_scan {
    kiln_scan s; /* first: its base is the generator's */
    char *text;  /* the user's expressions, for build errors */
} sel_scan;

static kiln_status sel_build(kiln__gen *gen, int strided, const kiln__plan *plan,
                             kiln__variant *v) {
    sel_scan *x = (sel_scan *)gen;
    v->tmpl = kiln__scan_template(&x->s, plan);
    v->local = kiln__scan_local(v->tmpl, plan);
    v->items = kiln__scan_items(v->tmpl, &x->s, plan);
    kiln__sb sb = { 0 };
    /* layout bit 1: only the first array is shaped */
    kiln_status st = kiln__scan_source(&x->s, strided | 2, plan, &sb);
    if (st == KILN_OK) {
        static const char *const three[3] = { "_reduce", "_spine", "_final" };
        static const char *const one[1] = { "_onepass" };
        int single = v->tmpl != KILN__SCAN_THREEPHASE;
        st = kiln__gen_program(gen, &sb, kiln__scan_languages(v->tmpl), x->text,
                               single ? one : three, single ? 1 : 3, v);
    }
    kiln__sb_free(&sb);
    return st;
}

static void sel_destroy(kiln__gen *gen) {
    sel_scan *x = (sel_scan *)gen;
    free(x->s.scan_type);
    free(x->s.neutral);
    free(x->s.op);
    free(x->s.input);
    free(x->s.output);
    free(x->s.seg);
    free(x->s.preamble);
    free(x->s.keep_type);
    free(x->s.keep);
    free(x->s.keep_input);
    free(x->s.last);
    free(x->text);
    free(x);
}

static const kiln__gen_kind sel_kind = { "kiln_select", "kiln_select", sel_build, sel_destroy };

/* The arguments become user_args then internal_args: the user's are
 * checked (reserved names) by kiln__gen_init, the whole list is parsed
 * again with the internal ones (which use the reserved kiln_ prefix). */
static kiln_status sel_args(kiln__gen *gen, const char *user_args, const char *internal_args) {
    kiln__sb sb = { 0 };
    if (user_args)
        kiln__sb_addf(&sb, "%s, ", user_args);
    kiln__sb_add(&sb, internal_args);
    if (sb.oom)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_select");
    kiln__gargs all = { 0 };
    kiln_status st = kiln__gargs_parse(sb.p, "kiln_select", &all);
    kiln__sb_free(&sb);
    if (st == KILN_OK) {
        kiln__gargs_free(&gen->args);
        gen->args = all;
    }
    return st;
}

kiln_status kiln__sel_create(kiln_context *context, const char *user_args,
                             const char *internal_args, const kiln_scan_desc *d, const char *text,
                             const kiln__sel_keep *keep, const char *last, int eager,
                             kiln_scan **out) {
    *out = NULL;
    sel_scan *x = kiln__calloc(1, sizeof *x);
    if (!x)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_select");
    /* built-ins have no user arguments: a placeholder passes the checks */
    kiln_status st = kiln__gen_init(&x->s.gen, &sel_kind, context,
                                    user_args ? user_args : "char *unused", d->name);
    if (st != KILN_OK) {
        free(x);
        return st;
    }
    kiln_scan *s = &x->s;
    s->scan_size =
        d->scan_size ? d->scan_size : kiln_dtype_size(kiln__dtype_from_name(d->scan_type));
    s->scan_type = kiln__strdup(d->scan_type);
    s->neutral = kiln__strdup(d->neutral);
    s->op = kiln__strdup(d->scan);
    s->input = kiln__strdup(d->input);
    s->output = kiln__strdup(d->output);
    /* INFINITY in every expression, as the reductions' (CUDA C lacks it) */
    kiln__sb pre = { 0 };
    kiln__sb_addf(&pre,
                  "#if KILN_CUDA_C && !defined(INFINITY)\n"
                  "#define INFINITY __int_as_float(0x7f800000)\n#endif\n%s",
                  d->preamble ? d->preamble : "");
    s->preamble = kiln__sb_take(&pre);
    x->text = kiln__strdup(text);
    if (keep && keep->expr) {
        s->keep_type = kiln__strdup(keep->type);
        s->keep = kiln__strdup(keep->expr);
        s->keep_size = keep->size;
        s->keep_input = keep->input ? kiln__strdup(keep->input) : NULL;
        if (!s->keep_type || !s->keep || (keep->input && !s->keep_input))
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_select");
    }
    if (last && st == KILN_OK && !(s->last = kiln__strdup(last)))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_select");
    if (st == KILN_OK && (!s->scan_type || !s->neutral || !s->op || !s->input || !s->output ||
                          !s->preamble || !x->text))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_select");
    if (st == KILN_OK)
        st = sel_args(&s->gen, user_args, internal_args);
    st = kiln__gen_create_end(&s->gen, st, eager);
    if (st == KILN_OK)
        *out = s;
    return st;
}

void kiln__sel_release(kiln_scan *s) {
    if (s)
        kiln__gen_release(&s->gen);
}

int kiln__sel_wide(size_t n) {
    return n > (size_t)INT_MAX;
}

kiln_status kiln__sel_launch(kiln_queue *queue, kiln_scan *s, size_t n, size_t num_args,
                             const kiln_arg *args, const char *what, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    kiln__plan plan;
    kiln__bound b = { 0 };
    kiln_status st = kiln__gen_prepare(queue, &s->gen, n, num_args, args, 1, what, &plan, &b);
    kiln__variant *v = NULL;
    if (st == KILN_OK && n)
        st = kiln__gen_variant(&s->gen, b.layout, &plan, &v);
    if (st == KILN_OK && !n) {
        /* nothing selected: the count is 0 */
        static const int64_t zero = 0;
        const kiln_array *c = args[num_args - 1].value.array;
        st = kiln_buffer_fill(queue, c->buffer, &zero, sizeof zero, c->offset * sizeof zero,
                              sizeof zero, num_wait, wait, event);
    }
    if (st == KILN_OK && n)
        st = v->tmpl == KILN__SCAN_THREEPHASE
                 ? kiln__scan_run_threephase(queue, s, v, &plan, &b, num_wait, wait, event)
                 : kiln__scan_run_onepass(queue, s, v, &b, num_wait, wait, event);
    kiln__bound_free(&b);
    return st;
}

/* One function of the selection: signature, then the arrays bound at i,
 * the prologue and the user's text under its label. */
static void sel_function(kiln__sb *sb, const char *head, const char *prologue, const char *label,
                         const char *text) {
    kiln__sb_addf(sb, "KILN_FUNC %s\n{\n    KILN_BIND(i)\n    %s\n", head,
                  prologue ? prologue : "");
    kiln__gen_user(sb, label, text);
    kiln__sb_add(sb, "}\n");
}

/* sel_function over the statement "text;"; 0 (and sb failed) when that
 * ran out of memory. */
static int sel_statement(kiln__sb *sb, const char *head, const char *prologue, const char *label,
                         const char *text) {
    kiln__sb p = { 0 };
    kiln__sb_addf(&p, "%s;\n", text);
    /* a scratch string that ran out of memory fails the whole source (it
     * gave a kernel with an empty output step: KILN_OK and nothing
     * stored, found by the algorithms' fault walk) */
    if (p.oom) {
        sb->oom = 1;
        kiln__sb_free(&p);
        return 0;
    }
    sel_function(sb, head, prologue, label, p.p);
    kiln__sb_free(&p);
    return 1;
}

void kiln__sel_functions(kiln__sb *sb, const char *prologue, const char *predicate, int negate,
                         const char *output, const char *rejected) {
    kiln__sb_addf(sb,
                  "KILN_FUNC int kiln_sel_pred(long i, KILN_PARAMS)\n"
                  "{\n    KILN_BIND(i)\n    %s\n    return (\n",
                  prologue ? prologue : "");
    kiln__gen_user(sb, "predicate", predicate);
    kiln__sb_addf(sb, ") ? %d : %d;\n}\n", !negate, negate);
    if (sel_statement(sb,
                      "void kiln_sel_out(long i, long out_index, KILN_KEPT_PARAM "
                      "KILN_PARAMS)",
                      prologue, "output", output) &&
        rejected)
        sel_statement(sb,
                      "void kiln_sel_rej(long i, long out_index, "
                      "KILN_KEPT_PARAM KILN_PARAMS)",
                      prologue, "rejected_output", rejected);
}

/* The output steps by mode (algo/select.h). On a CPU the stores of the
 * ready-made operations are branch-free: an item not kept stores too, into
 * the last element, which holds no kept item unless every item is kept
 * (and then none stores there): a data-dependent branch around a store
 * keeps PoCL from vectorising across work-items (~8x slower). GPUs branch
 * (a store into one element from every thread would contend).
 * KILN_KEPT_ARG passes the kept value (kiln_scan.keep) where the operation
 * has one, else it is empty. */
#define OUT_AT(where) "kiln_sel_out(i, " where ", KILN_KEPT_ARG KILN_PASS)"
#define REJ_AT(where) "kiln_sel_rej(i, " where ", KILN_KEPT_ARG KILN_PASS)"
static const char *const kOutput[] = {
    [KILN__SEL_USER] = "if (item != prev_item) " OUT_AT("(long)prev_item"),
    [KILN__SEL_USER_REJ] =
        "if (item != prev_item) " OUT_AT("(long)prev_item") ";\n"
                                                            "else " REJ_AT("i - (long)prev_item"),
    [KILN__SEL_STORE] = "\n#if KILN_CPU\n" OUT_AT(
        "item != prev_item ? (long)prev_item : n - 1") ";\n#else\n"
                                                       "if (item != prev_item) " OUT_AT(
                                                           "(long)prev_item") ";\n"
                                                                              "#endif"
                                                                              "\n",
    [KILN__SEL_STORE_TWO] =
        "\n#if KILN_CPU\n"
        "const int kiln_k = item != prev_item;\n" OUT_AT(
            "kiln_k ? (long)prev_item : n "
            "- 1") ";\n" REJ_AT("kiln_k ? n - 1 : i - (long)prev_item") ";\n"
                                                                        "#else\n"
                                                                        "if (item != "
                                                                        "prev_item)"
                                                                        " " OUT_AT(
                                                                            "(long)prev_"
                                                                            "item") ";\n"
                                                                                    "else"
                                                                                    " " REJ_AT(
                                                                                        "i "
                                                                                        "- "
                                                                                        "(l"
                                                                                        "on"
                                                                                        "g)"
                                                                                        "pr"
                                                                                        "ev"
                                                                                        "_"
                                                                                        "it"
                                                                                        "e"
                                                                                        "m") ";\n#"
                                                                                             "endif"
                                                                                             "\n",
    /* one output, rejected items from the back: every element is some
     * item's, so one store with a computed place */
    [KILN__SEL_STORE_BACK] = OUT_AT("item != prev_item ? (long)prev_item\n"
                                    "                 : n - 1 - (i - (long)prev_item)"),
};

kiln_scan_desc kiln__sel_desc(int wide, int mode, const char *preamble, const char *name,
                              kiln__sb *output) {
    kiln__sb_addf(output, "%s", kOutput[mode]);
    return KILN_SCAN_DESC(.scan_type = wide ? "long" : "int", .neutral = "0", .scan = "a + b",
                          .input = "kiln_sel_pred(i, KILN_PASS)", .output = output->p,
                          .preamble = preamble, .name = name);
}

kiln_status kiln__sel_count_begin(kiln_queue *queue, kiln_array *count, int64_t *host_count,
                                  const char *what, kiln_array **dev, int *temp) {
    *dev = NULL;
    *temp = 0;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", what);
    if (!count && !host_count)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: give a count array, a host_count or both", what);
    kiln_context *ctx = kiln_queue_context(queue);
    if (!count) {
        size_t one = 1;
        *temp = 1;
        return kiln_array_empty(ctx, KILN_INT64, 1, &one, dev);
    }
    if (count->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: count belongs to another context than "
                               "the queue",
                               what);
    if (count->dtype != KILN_INT64 || !count->size || !kiln__array_contiguous(count))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: count must be a contiguous int64 array "
                               "of at least 1 element (got %s, %zu elements%s)",
                               what, kiln_dtype_name(count->dtype), count->size,
                               kiln__array_contiguous(count) ? "" : ", strided");
    *dev = count;
    return KILN_OK;
}

kiln_status kiln__sel_count_end(kiln_queue *queue, kiln_status st, kiln_array *dev, int temp,
                                int64_t *host_count, kiln_event **e, kiln_event **event) {
    if (st == KILN_OK && host_count) {
        kiln_event *r = NULL;
        st = kiln_buffer_read_async(queue, dev->buffer, dev->offset * sizeof(int64_t),
                                    sizeof(int64_t), host_count, *e ? 1 : 0, e, &r);
        kiln__event_drop(e);
        *e = r;
    }
    if (temp)
        kiln_array_release(dev); /* in-flight work keeps its buffer */
    if (st == KILN_OK && event) {
        *event = *e;
        *e = NULL;
    }
    kiln__event_drop(e);
    return st;
}

/* ---------------------------------------------------- the public generator */

struct kiln_select {
    atomic_int refs;
    /* counts in int below 2^31 items (built at create), else long (built
     * on first use) */
    kiln_scan *narrow, *wide;
};

kiln_status kiln_select_create(kiln_context *context, const kiln_select_desc *desc,
                               kiln_select **out) {
    static const char what[] = "kiln_select_create";
    if (out)
        *out = NULL;
    kiln_select_desc d;
    size_t v1 = offsetof(kiln_select_desc, name) + sizeof d.name;
    kiln_status st = kiln__gen_create_begin(context, desc, out != NULL, v1, sizeof d, &d, what,
                                            "KILN_SELECT_DESC");
    if (st != KILN_OK)
        return st;
    if (!d.arguments || !d.predicate || !d.output)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, predicate and output are "
                               "required",
                               what);
    kiln__sb pre = { 0 }, text = { 0 };
    if (d.preamble)
        kiln__sb_addf(&pre, "%s\n", d.preamble);
    kiln__sel_functions(&pre, NULL, d.predicate, 0, d.output, d.rejected_output);
    kiln__sb_addf(&text, "predicate: %s; output: %s%s%s", d.predicate, d.output,
                  d.rejected_output ? "; rejected_output: " : "",
                  d.rejected_output ? d.rejected_output : "");
    kiln_select *sel = kiln__calloc(1, sizeof *sel);
    if (pre.oom || text.oom || !sel)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    const char *name = d.name ? d.name : "kiln_select";
    for (int w = 0; st == KILN_OK && w < 2; w++) {
        kiln__sb outs = { 0 };
        kiln_scan_desc sd = kiln__sel_desc(
            w, d.rejected_output ? KILN__SEL_USER_REJ : KILN__SEL_USER, pre.p, name, &outs);
        st = outs.oom ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what)
                      : kiln__sel_create(context, d.arguments, "long *kiln_count", &sd, text.p,
                                         NULL, KILN__SEL_COUNT, !w, w ? &sel->wide : &sel->narrow);
        kiln__sb_free(&outs);
    }
    kiln__sb_free(&pre);
    kiln__sb_free(&text);
    if (st != KILN_OK) {
        if (sel) {
            kiln__sel_release(sel->narrow);
            kiln__sel_release(sel->wide);
            free(sel);
        }
        return kiln__error_prefix(st, "%s", what);
    }
    atomic_init(&sel->refs, 1);
    *out = sel;
    return KILN_OK;
}

kiln_status kiln_select_retain(kiln_select *sel) {
    return kiln__ref_retain(sel ? &sel->refs : NULL, "kiln_select_retain", "select");
}

void kiln_select_release(kiln_select *sel) {
    if (!sel || !kiln__ref_release(&sel->refs))
        return;
    kiln__sel_release(sel->narrow);
    kiln__sel_release(sel->wide);
    free(sel);
}

kiln_status kiln_select_run_async(kiln_queue *queue, kiln_select *sel, size_t n, size_t num_args,
                                  const kiln_arg *args, kiln_array *count, int64_t *host_count,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_select_run_async";
    if (event)
        *event = NULL;
    if (!sel)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: select is NULL", what);
    kiln_scan *s = kiln__sel_wide(n) ? sel->wide : sel->narrow;
    size_t nargs = s->gen.args.n - 1; /* the user's */
    if (num_args != nargs || (nargs && !args))
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0, "%s: %s takes %zu arguments, got %zu",
                               what, s->gen.name, nargs, num_args);
    kiln_array *dev = NULL;
    int temp = 0;
    kiln_status st = kiln__sel_count_begin(queue, count, host_count, what, &dev, &temp);
    if (st != KILN_OK)
        return st;
    kiln_arg stack[16];
    kiln_arg *all = nargs + 1 <= 16 ? stack : kiln__malloc((nargs + 1) * sizeof *all);
    kiln_event *e = NULL;
    if (!all)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK) {
        memcpy(all, args, nargs * sizeof *all);
        all[nargs] = KILN_ARG_ARRAY(dev);
        st = kiln__sel_launch(queue, s, n, nargs + 1, all, what, num_wait, wait, &e);
    }
    if (all != stack)
        free(all);
    return kiln__sel_count_end(queue, st, dev, temp, host_count, &e, event);
}

kiln_status kiln_select_run(kiln_queue *queue, kiln_select *sel, size_t n, size_t num_args,
                            const kiln_arg *args, size_t *count) {
    if (!count)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_select_run: count is NULL");
    int64_t c = 0;
    kiln_event *e = NULL;
    kiln_status st = kiln_select_run_async(queue, sel, n, num_args, args, NULL, &c, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln__event_drop(&e);
    if (st == KILN_OK)
        *count = (size_t)c;
    return st;
}
