/* The ready-made selections over arrays (include/kiln/select.h): copy_if,
 * remove_if, partition, unique and reduce_by_key, each a selection engine
 * (select.c) from the context's cache, keyed by operation, dtypes, count
 * width and expressions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/ops/op_names.h"
#include "algo/ops/ops_internal.h"
#include "algo/gen/algo.h"
#include "algo/prim/prim.h"
#include "algo/gen/generator.h"
#include "algo/prim/select.h"
#include "base/check.h"
#include "base/error.h"

/* ---- dtype text */

/* The type the expressions see: float for FLOAT16 (stored as ushort). */
static const char *value_type(kiln_dtype d) {
    return kiln__compute_type(d); /* bool: uchar */
}

/* "kiln_h2f(p[i])" for FLOAT16, else "p[i]". */
static void load(char *buf, size_t cap, kiln_dtype d, const char *elem) {
    snprintf(buf, cap, d == KILN_FLOAT16 ? "kiln_h2f(%s)" : "%s", elem);
}

/* Item i starts a run: i is 0 or differs from item i - 1 (==, so NaN
 * differs from everything). No short-circuit: branch-free on CPUs. */
static void run_start(char *buf, size_t cap, kiln_dtype d, const char *p) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "(i == 0) | (kiln_h2f(%s[i]) != kiln_h2f(%s[i - (i > 0)]))", p, p);
    else
        snprintf(buf, cap, "(i == 0) | (%s[i] != %s[i - (i > 0)])", p, p);
}

/* The same test on kept values (kiln__sel_keep.input): kiln_kept and
 * kiln_prev_kept, item i - 1's. */
static void run_start_kept(char *buf, size_t cap, kiln_dtype d) {
    snprintf(buf, cap,
             d == KILN_FLOAT16 ? "(i == 0) | (kiln_h2f(kiln_kept) != kiln_h2f(kiln_prev_kept))"
                               : "(i == 0) | (kiln_kept != kiln_prev_kept)");
}

/* An array header with FLOAT16 relabelled as UINT16 (the bits type the
 * generated arguments declare). */
static kiln_array bits_view(const kiln_array *a) {
    kiln_array h = *a;
    if (h.dtype == KILN_FLOAT16)
        h.dtype = KILN_UINT16;
    return h;
}

/* ---- cached engines */

typedef struct make_arg {
    kiln_context *context;
    const char *args;
    kiln_scan_desc d;
    const char *text;
    kiln__sel_keep keep; /* the value stored, kept from the load */
    const char *last;    /* kiln_scan.last */
} make_arg;

static kiln_status make(void *arg, kiln__gen **gen) {
    make_arg *m = arg;
    kiln_scan *s = NULL;
    kiln_status st =
        kiln__sel_create(m->context, NULL, m->args, &m->d, m->text, &m->keep, m->last, 0, &s);
    *gen = s ? &s->gen : NULL;
    return st;
}

/* The engine cached under key, made from m on a miss, launched over n. */
static kiln_status run_cached(kiln_queue *q, const char *key, make_arg *m, size_t n, size_t nargs,
                              const kiln_arg *args, const char *what, size_t num_wait,
                              kiln_event *const *wait, kiln_event **e) {
    m->context = kiln_queue_context(q);
    kiln__gen *gen = NULL;
    kiln_status st = kiln__gen_cached(m->context, key, make, m, &gen);
    if (st == KILN_OK)
        st = kiln__sel_launch(q, (kiln_scan *)gen, n, nargs, args, what, num_wait, wait, e);
    kiln__gen_release(gen);
    return st;
}

/* ---- argument checks */

static kiln_status need(const void *p, const char *name, const char *what) {
    return p ? KILN_OK : kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, name);
}

/* An input of queue's context with a known dtype. */
static kiln_status check_in(kiln_queue *q, const kiln_array *a, const char *name,
                            const char *what) {
    kiln_status st = need(a, name, what);
    if (st == KILN_OK && a->context != kiln_queue_context(q))
        st = kiln__error_set(KILN_ERROR_MISMATCH, 0,
                             "%s: %s belongs to another context than the "
                             "queue",
                             what, name);
    return st;
}

/* An output: of queue's context, dtype like `like`, contiguous, room for n
 * items, not sharing the input's buffer. */
static kiln_status check_out(kiln_queue *q, const kiln_array *o, const char *name, kiln_dtype dtype,
                             size_t n, const kiln_array *in, const char *what) {
    kiln_status st = check_in(q, o, name, what);
    if (st != KILN_OK)
        return st;
    char t[96];
    if (o->dtype != dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s is %s; it must be %s%s", what, name,
                               kiln__array_describe(o, t, sizeof t), kiln_dtype_name(dtype),
                               dtype == in->dtype ? " (the input's dtype)" : "");
    if (!kiln__array_contiguous(o) || o->size < n)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %s (%s) must be contiguous with room for "
                               "%zu items",
                               what, name, kiln__array_describe(o, t, sizeof t), n);
    if (o->buffer == in->buffer)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s shares the input's buffer", what,
                               name);
    return KILN_OK;
}

/* A selection's end: st prefixed with what, then the count's end. */
static kiln_status sel_end(kiln_queue *q, kiln_status st, const char *what, kiln_array *dev,
                           int temp, int64_t *host_count, kiln_event **e, kiln_event **event) {
    if (st != KILN_OK)
        st = kiln__error_prefix(st, "%s", what);
    return kiln__sel_count_end(q, st, dev, temp, host_count, e, event);
}

/* ---- copy_if, remove_if, partition */

enum { SEL_COPY, SEL_REMOVE, SEL_PART2, SEL_PART1 };

static kiln_status pred_op(kiln_queue *q, int op, kiln_array *out, kiln_array *rej,
                           kiln_array *count, int64_t *host_count, kiln_array *a,
                           const char *predicate, size_t num_wait, kiln_event *const *wait,
                           kiln_event **event, const char *what) {
    if (event)
        *event = NULL;
    const char *oname = op >= SEL_PART2 ? "selected" : "out";
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, need(q, "queue", what));
    KILN__CHECK_CALL(&ck, check_in(q, a, "a", what));
    KILN__CHECK_CALL(&ck, need(predicate, "predicate", what));
    KILN__CHECK_CALL(&ck, check_out(q, out, oname, a->dtype, a->size, a, what));
    if (op == SEL_PART2) {
        KILN__CHECK_CALL(&ck, check_out(q, rej, "rejected", a->dtype, a->size, a, what));
        KILN__CHECK(&ck, rej->buffer != out->buffer, KILN_ERROR_MISMATCH,
                    "%s: selected and rejected share a buffer", what);
    }
    kiln_status st = ck.st;
    kiln_array *dev = NULL;
    int temp = 0;
    if (st == KILN_OK)
        st = kiln__sel_count_begin(q, count, host_count, what, &dev, &temp);
    if (st != KILN_OK)
        return st;
    size_t n = a->size;
    int wide = kiln__sel_wide(n);
    const char *bt = kiln__bits_type(a->dtype);
    char args[160], prologue[96], x[48];
    snprintf(args, sizeof args, "const %s *kiln_a, %s *kiln_out, %s%s%slong *kiln_count", bt, bt,
             op == SEL_PART2 ? bt : "", op == SEL_PART2 ? " *kiln_rej" : "",
             op == SEL_PART2 ? ", " : "");
    load(x, sizeof x, a->dtype, "kiln_a[i]");
    snprintf(prologue, sizeof prologue, "const %s x = %s; (void)x;", value_type(a->dtype), x);
    kiln__sb pre = { 0 }, key = { 0 }, text = { 0 }, out_s = { 0 };
    kiln__sb_addf(&text, "predicate: %s", predicate);
    kiln__sel_functions(&pre, prologue, predicate, op == SEL_REMOVE,
                        "kiln_out[out_index] = kiln_kept",
                        op == SEL_PART2   ? "kiln_rej[out_index] = kiln_kept"
                        : op == SEL_PART1 ? "kiln_out[n - 1 - out_index] = "
                                            "kiln_kept"
                                          : NULL);
    static const char *const names[] = { "kiln_copy_if", "kiln_remove_if", "kiln_partition",
                                         "kiln_partition" };
    kiln__sb_addf(&key, "select|%d|%s|%d|%s", op, kiln_dtype_name(a->dtype), wide, predicate);
    make_arg m = { .args = args,
                   .d = kiln__sel_desc(wide,
                                       op == SEL_PART2   ? KILN__SEL_STORE_TWO
                                       : op == SEL_PART1 ? KILN__SEL_STORE_BACK
                                                         : KILN__SEL_STORE,
                                       pre.p, names[op], &out_s),
                   .text = text.p,
                   .keep = { bt, "kiln_a[i]", NULL, kiln_dtype_size(a->dtype) },
                   .last = KILN__SEL_COUNT };
    kiln_array ha = bits_view(a), ho = bits_view(out), hr = rej ? bits_view(rej) : ho;
    kiln_arg v[4] = { KILN_ARG_ARRAY(&ha), KILN_ARG_ARRAY(&ho), KILN_ARG_ARRAY(&hr),
                      KILN_ARG_ARRAY(dev) };
    if (op != SEL_PART2)
        v[2] = v[3];
    kiln_event *e = NULL;
    if (pre.oom || key.oom || text.oom || out_s.oom)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    else
        st = run_cached(q, key.p, &m, n, op == SEL_PART2 ? 4 : 3, v, what, num_wait, wait, &e);
    kiln__sb_free(&text);
    kiln__sb_free(&out_s);
    kiln__sb_free(&pre);
    kiln__sb_free(&key);
    return sel_end(q, st, what, dev, temp, host_count, &e, event);
}

kiln_status kiln_array_copy_if_out(kiln_queue *q, kiln_array *out, kiln_array *count,
                                   int64_t *host_count, kiln_array *a, const char *predicate,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return pred_op(q, SEL_COPY, out, NULL, count, host_count, a, predicate, num_wait, wait, event,
                   "kiln_array_copy_if_out");
}

kiln_status kiln_array_remove_if_out(kiln_queue *q, kiln_array *out, kiln_array *count,
                                     int64_t *host_count, kiln_array *a, const char *predicate,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return pred_op(q, SEL_REMOVE, out, NULL, count, host_count, a, predicate, num_wait, wait, event,
                   "kiln_array_remove_if_out");
}

kiln_status kiln_array_partition_out(kiln_queue *q, kiln_array *selected, kiln_array *rejected,
                                     kiln_array *count, int64_t *host_count, kiln_array *a,
                                     const char *predicate, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event) {
    return pred_op(q, rejected ? SEL_PART2 : SEL_PART1, selected, rejected, count, host_count, a,
                   predicate, num_wait, wait, event, "kiln_array_partition_out");
}

/* ---- unique and reduce_by_key: neighbours are compared, so the inputs
 * are read contiguously (a strided view is copied first) */

typedef struct dense {
    kiln_array *a[2]; /* the arrays to use (borrowed or temporaries) */
    int temp[2];
    kiln_event *ev[2]; /* the copies' events */
    kiln_event **wait; /* the launch's wait list */
    size_t num_wait;
} dense;

static kiln_status dense_begin(kiln_queue *q, kiln_array *const *in, int nin, size_t num_wait,
                               kiln_event *const *wait, dense *dn) {
    memset(dn, 0, sizeof *dn);
    kiln_status st = KILN_OK;
    for (int k = 0; k < nin && st == KILN_OK; k++) {
        dn->a[k] = in[k];
        if (kiln__array_contiguous(in[k]))
            continue;
        st = kiln_array_empty(in[k]->context, in[k]->dtype, in[k]->ndim, in[k]->shape, &dn->a[k]);
        if (st == KILN_OK) {
            dn->temp[k] = 1;
            st = kiln_array_copy_out(q, dn->a[k], in[k], num_wait, wait, &dn->ev[k]);
        }
    }
    dn->wait = kiln__malloc((num_wait + 2) * sizeof *dn->wait);
    if (!dn->wait)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "selection");
    for (size_t k = 0; k < num_wait; k++)
        dn->wait[dn->num_wait++] = wait[k];
    for (int k = 0; k < 2; k++)
        if (dn->ev[k])
            dn->wait[dn->num_wait++] = dn->ev[k];
    return st;
}

/* After the checks (*st): the device count (kiln__sel_count_begin, into
 * *dev and *temp), then the dense inputs, whose failure (in *st) the
 * caller cleans up after. 0: return *st at once. */
static int dense_count_begin(kiln_status *st, kiln_queue *q, kiln_array *count, int64_t *host_count,
                             const char *what, kiln_array **dev, int *temp, kiln_array *const *in,
                             int nin, size_t num_wait, kiln_event *const *wait, dense *dn) {
    *dev = NULL;
    *temp = 0;
    if (*st == KILN_OK)
        *st = kiln__sel_count_begin(q, count, host_count, what, dev, temp);
    if (*st != KILN_OK)
        return 0;
    *st = dense_begin(q, in, nin, num_wait, wait, dn);
    return 1;
}

static void dense_end(dense *dn) {
    for (int k = 0; k < 2; k++) {
        if (dn->temp[k])
            kiln_array_release(dn->a[k]); /* queued work keeps the buffer */
        kiln__event_drop(&dn->ev[k]);
    }
    free(dn->wait);
}

/* counts[k] = starts[k + 1] - starts[k] for the count[0] runs of a unique
 * of n items with counts (the next start of the last run: n), after *e
 * (replaced by the new event). A fixed number of work-items, each a
 * contiguous range (CPU) or a grid-stride loop (GPU): the number of runs
 * is known only on the device. */
static kiln_status count_diff(kiln_queue *q, kiln_array *counts, kiln_array *starts,
                              kiln_array *count, size_t n, kiln_event **e) {
    kiln__plan plan;
    kiln_status st = kiln__plan_for(q, &plan);
    if (st != KILN_OK)
        return st;
    kiln_elementwise *ew = NULL;
    st = kiln__elementwise_cached_ex(
        kiln_queue_context(q), "long *cnt, const long *st, const long *cnt_n, long total",
        "const long c = cnt_n[0];\n"
        "#if KILN_CPU\n"
        "const long per = (c + n - 1) / n;\n"
        "const long e = (i + 1) * per < c ? (i + 1) * per : c;\n"
        "for (long k = i * per; k < e; k++)\n"
        "    cnt[k] = (k + 1 < c ? st[k + 1] : total) - st[k];\n"
        "#else\n"
        "for (long k = i; k < c; k += n)\n"
        "    cnt[k] = (k + 1 < c ? st[k + 1] : total) - st[k];\n"
        "#endif\n",
        "kiln_unique_count_diff", NULL, KILN_ELEMENTWISE_ANY_SHAPE, &ew);
    size_t items = plan.cpu ? (size_t)plan.cu * 4 : (size_t)plan.cu * 1024;
    kiln_arg v[4] = { KILN_ARG_ARRAY(counts), KILN_ARG_ARRAY(starts), KILN_ARG_ARRAY(count),
                      KILN_ARG_I64((int64_t)n) };
    kiln_event *d = NULL;
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, items, 4, v, *e ? 1 : 0, e, &d);
    kiln_elementwise_release(ew);
    if (st == KILN_OK) {
        kiln__event_drop(e);
        *e = d;
    }
    return st;
}

/* unique without counts: the plain selection of the runs' first items.
 * The warp scan compares each item with its neighbour's kept value (a
 * shuffle) instead of loading a[i - 1]. */
static void unique_plain_desc(make_arg *m, kiln__sb *pre, kiln__sb *out_s, kiln_dtype dt, int wide,
                              const char *ne1, const char *ne1_kept) {
    m->keep = (kiln__sel_keep){ kiln__bits_type(dt), "kiln_a[i]", ne1_kept, kiln_dtype_size(dt) };
    kiln__sel_functions(pre, NULL, ne1, 0, "kiln_out[out_index] = kiln_kept", NULL);
    m->d = kiln__sel_desc(wide, KILN__SEL_STORE, pre->p, "kiln_unique", out_s);
    m->last = KILN__SEL_COUNT;
}

/* unique with counts on a CPU, from the runs' starts.
 * The plain selection's count scan (runs started so far) with
 * one more store: where run k starts, its start into the scratch
 * kiln_st[k]; then counts[k] = kiln_st[k + 1] - kiln_st[k]
 * (count_diff). The GPUs' scan of pairs (below) does it in one
 * pass, but its operator is a longer serial chain of 64-bit
 * operations an item, in both of the CPU's passes over the input:
 * 2.5x slower here at 2^24 items (on an H100 a variant of this
 * way was no faster than the pairs, and it takes a scratch of 8n
 * bytes). CPUs store branch-free, as kiln__sel_desc's (select.c):
 * an item that starts no run stores its start into its
 * work-group's own cache line past the scratch's n starts (an
 * element shared by all cores, as the last one of counts, made
 * them fight over it: 5x slower). */
static void unique_starts_desc(make_arg *m, kiln__sb *pre, kiln__sb *out_s, int wide,
                               const char *ne1) {
    kiln__sel_functions(pre, NULL, ne1, 0, "(void)out_index", NULL);
    kiln__sb_add(out_s, "\n#if KILN_CPU\n"
                        "const int kiln_s = item != prev_item;\n"
                        "kiln_out[kiln_s ? (long)prev_item : n - 1] = "
                        "kiln_a[i];\n"
                        "*(kiln_s ? kiln_st + (long)prev_item\n"
                        "         : kiln_st + n + 8 * (long)(kiln_group_id(0) & "
                        "63)) = i;\n"
                        "#else /* not chosen on GPUs */\n"
                        "if (item != prev_item) {\n"
                        "    kiln_out[prev_item] = kiln_a[i];\n"
                        "    kiln_st[prev_item] = i;\n"
                        "}\n"
                        "#endif\n"
                        "if (i == n - 1) kiln_count[0] = (long)item");
    m->d = KILN_SCAN_DESC(.scan_type = wide ? "long" : "int", .neutral = "0", .scan = "a + b",
                          .input = "kiln_sel_pred(i, KILN_PASS)", .output = out_s->p,
                          .preamble = pre->p, .name = "kiln_unique_counts");
}

/* unique with counts on a GPU: one scan of pairs. */
static void unique_pairs_desc(make_arg *m, kiln__sb *pre, kiln__sb *out_s, kiln_dtype dt, int wide,
                              const char *ne1) {
    char pre_s[640];
    /* (runs so far, start of the latest run): the start of a run is
     * known at its end, where its length is written. Below 2^31 items
     * both halves share one long (c high, s low): a scalar operator
     * that CPU compilers vectorise, where a struct's is ~5x slower. */
    if (wide)
        snprintf(pre_s, sizeof pre_s,
                 "typedef struct { long c; long s; } kiln_uq_t;\n"
                 "KILN_FUNC kiln_uq_t kiln_uq_make(long c, long s)\n"
                 "{ kiln_uq_t r; r.c = c; r.s = s; return r; }\n"
                 "#define KILN_UQ_C(v) ((v).c)\n"
                 "#define KILN_UQ_S(v) ((v).s)\n"
                 "KILN_FUNC kiln_uq_t kiln_uq_op(kiln_uq_t a, kiln_uq_t b)"
                 "\n{ return kiln_uq_make(a.c + b.c, b.c ? b.s : a.s); }"
                 "\n");
    else
        snprintf(pre_s, sizeof pre_s,
                 "typedef long kiln_uq_t;\n"
                 "#define KILN_UQ_LOW 0xffffffffL\n"
                 "KILN_FUNC long kiln_uq_make(long c, long s)\n"
                 "{ return (c << 32) | s; }\n"
                 "#define KILN_UQ_C(v) ((v) >> 32)\n"
                 "#define KILN_UQ_S(v) ((v) & KILN_UQ_LOW)\n"
                 "KILN_FUNC long kiln_uq_op(long a, long b)\n"
                 "{ return ((a & ~KILN_UQ_LOW) + (b & ~KILN_UQ_LOW)) |\n"
                 "         ((b >> 32) ? (b & KILN_UQ_LOW) : "
                 "(a & KILN_UQ_LOW)); }\n");
    kiln__sb_add(pre, pre_s);
    kiln__sel_functions(pre, NULL, ne1, 0, "(void)out_index", NULL);
    m->keep = (kiln__sel_keep){ kiln__bits_type(dt), "kiln_a[i]", NULL, kiln_dtype_size(dt) };
    /* a run ends where the next item starts one (or at the end) */
    /* branch-free stores on CPUs, as kiln__sel_desc's (select.c) */
    kiln__sb_add(out_s, "const int kiln_end = (i == n - 1) | "
                        "kiln_sel_pred(i + (i < n - 1), KILN_PASS);\n"
                        "\n#if KILN_CPU\n"
                        "const long kiln_c = KILN_UQ_C(item);\n"
                        "kiln_out[kiln_c != KILN_UQ_C(prev_item) ? kiln_c - 1 "
                        ": n - 1] = kiln_kept;\n"
                        "kiln_cnt[kiln_end ? kiln_c - 1 : n - 1] = "
                        "i + 1 - KILN_UQ_S(item);\n"
                        "#else\n"
                        "const long kiln_c = KILN_UQ_C(item);\n"
                        "if (kiln_c != KILN_UQ_C(prev_item)) kiln_out[kiln_c - 1] "
                        "= kiln_kept;\n"
                        "if (kiln_end) kiln_cnt[kiln_c - 1] = "
                        "i + 1 - KILN_UQ_S(item);\n"
                        "#endif\n"
                        "if (i == n - 1) kiln_count[0] = KILN_UQ_C(item)");
    m->d = KILN_SCAN_DESC(.scan_type = "kiln_uq_t", .scan_size = wide ? 16 : 8,
                          .neutral = "kiln_uq_make(0, 0)", .scan = "kiln_uq_op(a, b)",
                          .input = "kiln_sel_pred(i, KILN_PASS) ? "
                                   "kiln_uq_make(1, i) : kiln_uq_make(0, 0)",
                          .output = out_s->p, .preamble = pre->p, .name = "kiln_unique_counts");
}

kiln_status kiln_array_unique_out(kiln_queue *q, kiln_array *out, kiln_array *counts,
                                  kiln_array *count, int64_t *host_count, kiln_array *a,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_unique_out";
    if (event)
        *event = NULL;
    kiln_status st = need(q, "queue", what);
    if (st == KILN_OK)
        st = check_in(q, a, "a", what);
    if (st == KILN_OK)
        st = check_out(q, out, "out", a->dtype, a->size, a, what);
    if (st == KILN_OK && counts)
        st = check_out(q, counts, "counts", KILN_INT64, a->size, a, what);
    kiln_array *dev;
    int temp;
    dense dn;
    if (!dense_count_begin(&st, q, count, host_count, what, &dev, &temp, &a, 1, num_wait, wait,
                           &dn))
        return st;
    kiln_event *e = NULL;
    size_t n = a->size;
    int wide = kiln__sel_wide(n);
    const char *bt = kiln__bits_type(a->dtype);
    /* counts on a CPU: starts and ends (below); on a GPU: one scan of
     * (runs, start of the latest run) pairs */
    kiln__plan plan = { 0 };
    if (st == KILN_OK && counts)
        st = kiln__plan_for(q, &plan);
    int ends = counts && plan.cpu;
    char args[160], ne1[160];
    snprintf(args, sizeof args, "const %s *kiln_a, %s *kiln_out, %slong *kiln_count", bt, bt,
             !counts ? ""
             : ends  ? "long *kiln_st, "
                     : "long *kiln_cnt, ");
    run_start(ne1, sizeof ne1, a->dtype, "kiln_a");
    char ne1_kept[160];
    run_start_kept(ne1_kept, sizeof ne1_kept, a->dtype);
    kiln__sb pre = { 0 }, key = { 0 }, out_s = { 0 };
    make_arg m = { .args = args, .text = "unique" };
    if (!counts)
        unique_plain_desc(&m, &pre, &out_s, a->dtype, wide, ne1, ne1_kept);
    else if (ends)
        unique_starts_desc(&m, &pre, &out_s, wide, ne1);
    else
        unique_pairs_desc(&m, &pre, &out_s, a->dtype, wide, ne1);
    kiln__sb_addf(&key, "unique|%s|%d|%d", kiln_dtype_name(a->dtype), wide, counts ? 1 + ends : 0);
    kiln_array ha = dn.a[0] ? bits_view(dn.a[0]) : *a, ho = bits_view(out);
    /* the runs' starts (counts only): a scratch buffer of n, then 64
     * cache lines of junk for the CPU's branch-free stores */
    kiln__scratch scr = { 0 };
    kiln_array *sta = NULL;
    kiln_event *const *wl = dn.wait;
    size_t nwl = dn.num_wait;
    size_t ns = n + 64 * 8;
    if (st == KILN_OK && ends) {
        st = kiln__scratch_get(q, KILN__SCRATCH_UNIQUE_STARTS, ns * sizeof(int64_t), &scr);
        if (st == KILN_OK)
            st = kiln__wait_plus(dn.num_wait, dn.wait, scr.dep, NULL, &wl, &nwl);
        if (st == KILN_OK)
            st = kiln_array_from_buffer(scr.buf, 0, KILN_INT64, 1, &ns, NULL, &sta);
    }
    kiln_arg v[4] = { KILN_ARG_ARRAY(&ha), KILN_ARG_ARRAY(&ho), KILN_ARG_ARRAY(ends ? sta : counts),
                      KILN_ARG_ARRAY(dev) };
    size_t nv = counts ? 4 : 3;
    v[nv - 1] = v[3];
    if (st == KILN_OK && (pre.oom || key.oom || out_s.oom))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK)
        st = run_cached(q, key.p, &m, n, nv, v, what, nwl, wl, &e);
    if (st == KILN_OK && ends && n)
        st = count_diff(q, counts, sta, dev, n, &e);
    if (wl != dn.wait)
        free((void *)wl);
    if (scr.buf || scr.dep)
        kiln__scratch_put(q, &scr, e);
    kiln_array_release(sta); /* queued work keeps the buffer */
    dense_end(&dn);
    kiln__sb_free(&pre);
    kiln__sb_free(&key);
    kiln__sb_free(&out_s);
    return sel_end(q, st, what, dev, temp, host_count, &e, event);
}

/* reduce_by_key's arguments: inputs of equal sizes, the texts, outputs
 * sharing no buffer with each other or an input. */
static kiln_status rbk_check(kiln_queue *q, kiln_array *ok, kiln_array *ov, kiln_array *keys,
                             kiln_array *values, const char *reduce, const char *neutral,
                             const char *what) {
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, need(q, "queue", what));
    KILN__CHECK_CALL(&ck, check_in(q, keys, "keys", what));
    KILN__CHECK_CALL(&ck, check_in(q, values, "values", what));
    KILN__CHECK(&ck, values->size == keys->size, KILN_ERROR_MISMATCH,
                "%s: values has %zu elements, keys %zu", what, values->size, keys->size);
    KILN__CHECK_CALL(&ck, need(reduce, "reduce", what));
    KILN__CHECK_CALL(&ck, need(neutral, "neutral", what));
    KILN__CHECK_CALL(&ck, check_out(q, ok, "out_keys", keys->dtype, keys->size, keys, what));
    KILN__CHECK_CALL(&ck, check_out(q, ov, "out_values", values->dtype, keys->size, values, what));
    KILN__CHECK(
        &ck, ok->buffer != values->buffer && ov->buffer != keys->buffer && ok->buffer != ov->buffer,
        KILN_ERROR_MISMATCH,
        "%s: the outputs share a buffer with each "
        "other or an input",
        what);
    return ck.st;
}

/* reduce_by_key's pair type kiln_rk_t (a count of type it, a value of
 * type at) and its operator, around the user's reduce and neutral texts. */
static void rbk_operator(kiln__sb *pre, const char *it, const char *at, const char *reduce,
                         const char *neutral) {
    kiln__sb_addf(pre,
                  "typedef struct { %s c; %s v; } kiln_rk_t;\n"
                  "KILN_FUNC kiln_rk_t kiln_rk_make(%s c, %s v)\n"
                  "{ kiln_rk_t r; r.c = c; r.v = v; return r; }\n"
                  "KILN_FUNC %s kiln_rk_red(%s a, %s b)\n{\n    return (\n",
                  it, at, it, at, at, at, at);
    kiln__gen_user(pre, "reduce", reduce);
    kiln__sb_addf(pre,
                  ");\n}\nKILN_FUNC %s kiln_rk_neutral(void)\n{\n"
                  "    return (\n",
                  at);
    kiln__gen_user(pre, "neutral", neutral);
    kiln__sb_add(pre, ");\n}\n"
                      "KILN_FUNC kiln_rk_t kiln_rk_op(kiln_rk_t a, kiln_rk_t b)\n"
                      "{ return kiln_rk_make(a.c + b.c, b.c ? b.v : "
                      "kiln_rk_red(a.v, b.v)); }\n");
}

/* reduce_by_key: a scan of (runs so far, value folded since the latest run
 * start), the segmented-scan pair: b's value wins where b holds a start. */
static kiln_status rbk(kiln_queue *q, kiln_array *ok, kiln_array *ov, kiln_array *count,
                       int64_t *host_count, kiln_array *keys, kiln_array *values,
                       const char *reduce, const char *neutral, const char *opname, size_t num_wait,
                       kiln_event *const *wait, kiln_event **event, const char *what) {
    if (event)
        *event = NULL;
    kiln_status st = rbk_check(q, ok, ov, keys, values, reduce, neutral, what);
    kiln_array *dev, *in[2] = { keys, values };
    int temp;
    dense dn;
    if (!dense_count_begin(&st, q, count, host_count, what, &dev, &temp, in, 2, num_wait, wait,
                           &dn))
        return st;
    kiln_event *e = NULL;
    size_t n = keys->size;
    int wide = kiln__sel_wide(n);
    kiln_dtype vd = values->dtype;
    const char *kt = kiln__bits_type(keys->dtype);
    const char *vt = kiln__bits_type(vd), *at = value_type(vd);
    const char *it = wide ? "long" : "int";
    size_t isz = wide ? 8 : 4, asz = vd == KILN_FLOAT16 ? 4 : kiln_dtype_size(vd);
    size_t align = isz > asz ? isz : asz;
    size_t size = (isz + asz + align - 1) / align * align;
    char args[160], ne1[160], lv[64], sv[64];
    snprintf(args, sizeof args,
             "const %s *kiln_k, const %s *kiln_v, %s *kiln_ok, %s *kiln_ov, "
             "long *kiln_count",
             kt, vt, kt, vt);
    run_start(ne1, sizeof ne1, keys->dtype, "kiln_k");
    load(lv, sizeof lv, vd, "kiln_v[i]");
    snprintf(sv, sizeof sv, vd == KILN_FLOAT16 ? "kiln_f2h(item.v)" : "(%s)item.v", vt);
    kiln__sb pre = { 0 }, key = { 0 }, out_s = { 0 }, in_s = { 0 }, text = { 0 };
    rbk_operator(&pre, it, at, reduce, neutral);
    kiln__sel_functions(&pre, NULL, ne1, 0, "(void)out_index", NULL);
    kiln__sb_addf(&in_s, "kiln_rk_make(kiln_sel_pred(i, KILN_PASS), %s)", lv);
    /* a run's value is stored at its end; branch-free on CPUs, as
     * kiln__sel_desc's stores (select.c) */
    kiln__sb_addf(&out_s,
                  "const int kiln_end = (i == n - 1) | "
                  "kiln_sel_pred(i + (i < n - 1), KILN_PASS);\n"
                  "\n#if KILN_CPU\n"
                  "const long kiln_r = kiln_end ? (long)item.c - 1 : n - 1;\n"
                  "kiln_ok[kiln_r] = kiln_k[i];\nkiln_ov[kiln_r] = %s;\n"
                  "#else\n"
                  "if (kiln_end) {\n    kiln_ok[item.c - 1] = kiln_k[i];\n"
                  "    kiln_ov[item.c - 1] = %s;\n}\n"
                  "#endif\n"
                  "if (i == n - 1) kiln_count[0] = (long)item.c",
                  sv, sv);
    kiln__sb_addf(&text, "reduce: %s; neutral: %s", reduce, neutral);
    /* the reduce text's length keeps "a|b" + "c" apart from "a" + "b|c" */
    kiln__sb_addf(&key, "rbk|%s|%s|%d|%s|%zu|%s|%s", kiln_dtype_name(keys->dtype),
                  kiln_dtype_name(vd), wide, opname, strlen(reduce), reduce, neutral);
    make_arg m = { .args = args, .text = text.p };
    m.d = KILN_SCAN_DESC(.scan_type = "kiln_rk_t", .scan_size = size,
                         .neutral = "kiln_rk_make(0, kiln_rk_neutral())",
                         .scan = "kiln_rk_op(a, b)", .input = in_s.p, .output = out_s.p,
                         .preamble = pre.p, .name = "kiln_reduce_by_key");
    kiln_array hk = bits_view(dn.a[0] ? dn.a[0] : keys), hv = bits_view(dn.a[1] ? dn.a[1] : values),
               hok = bits_view(ok), hov = bits_view(ov);
    kiln_arg v[5] = { KILN_ARG_ARRAY(&hk), KILN_ARG_ARRAY(&hv), KILN_ARG_ARRAY(&hok),
                      KILN_ARG_ARRAY(&hov), KILN_ARG_ARRAY(dev) };
    if (st == KILN_OK && (pre.oom || key.oom || out_s.oom || in_s.oom || text.oom))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK)
        st = run_cached(q, key.p, &m, n, 5, v, what, dn.num_wait, dn.wait, &e);
    dense_end(&dn);
    kiln__sb_free(&pre);
    kiln__sb_free(&key);
    kiln__sb_free(&out_s);
    kiln__sb_free(&in_s);
    kiln__sb_free(&text);
    return sel_end(q, st, what, dev, temp, host_count, &e, event);
}

kiln_status kiln_array_reduce_by_key_out(kiln_queue *q, kiln_array *out_keys,
                                         kiln_array *out_values, kiln_array *count,
                                         int64_t *host_count, kiln_array *keys, kiln_array *values,
                                         kiln_reduce_op op, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_reduce_by_key_out";
    if (event)
        *event = NULL;
    if (!values)
        return need(values, "values", what);
    kiln_dtype vd = values->dtype, ad = vd == KILN_FLOAT16 ? KILN_FLOAT32 : vd;
    int fl = kiln__is_float_dtype(vd);
    char lit[64];
    const char *reduce = NULL, *neutral = NULL;
    switch (op) {
    case KILN_REDUCE_SUM:
        reduce = "a + b";
        neutral = "0";
        break;
    case KILN_REDUCE_PROD:
        reduce = "a * b";
        neutral = "1";
        break;
    case KILN_REDUCE_MIN:
        reduce = fl ? "(b < a || b != b) ? b : a" : "b < a ? b : a";
        neutral = kiln__dtype_max_literal(ad, lit, sizeof lit);
        break;
    case KILN_REDUCE_MAX:
        reduce = fl ? "(b > a || b != b) ? b : a" : "b > a ? b : a";
        neutral = kiln__dtype_min_literal(ad, lit, sizeof lit);
        break;
    default:
        if (kiln__reduce_op_name(op))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: %s is not KILN_REDUCE_SUM, PROD, MIN or MAX", what,
                                   kiln__reduce_op_name(op));
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: op %d is not KILN_REDUCE_SUM, PROD, MIN or MAX", what, (int)op);
    }
    char opname[16];
    snprintf(opname, sizeof opname, "op%d", (int)op);
    return rbk(q, out_keys, out_values, count, host_count, keys, values, reduce, neutral, opname,
               num_wait, wait, event, what);
}

kiln_status kiln_array_reduce_by_key_expr_out(kiln_queue *q, kiln_array *out_keys,
                                              kiln_array *out_values, kiln_array *count,
                                              int64_t *host_count, kiln_array *keys,
                                              kiln_array *values, const char *reduce,
                                              const char *neutral, size_t num_wait,
                                              kiln_event *const *wait, kiln_event **event) {
    return rbk(q, out_keys, out_values, count, host_count, keys, values, reduce, neutral, "expr",
               num_wait, wait, event, "kiln_array_reduce_by_key_expr_out");
}
