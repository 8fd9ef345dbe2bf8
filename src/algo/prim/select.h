/* The selection operations' parts (src/algo/prim/select*.c): the engine, a scan
 * whose arrays after the first are indexed freely (select.c), the public
 * generator (select.c) and the ready-made array operations
 * (select_ops.c). They run on the scan's templates and variants
 * (algo/scan.h); the count of written items is the scan's total, stored by
 * the output step of the last item into the count array. */
#ifndef KILN_ALGO_SELECT_H
#define KILN_ALGO_SELECT_H

#include "algo/prim/scan.h"

/* A scan (desc: as kiln_scan_desc; desc->arguments is ignored) over the
 * arguments user_args (may be NULL; checked as a generator's are) followed
 * by internal_args (names may start with kiln_; the last one is
 * "long *kiln_count"). Only the first array has n elements and may be
 * strided; the others are contiguous and of any size. keep (may be NULL):
 * a value the output uses, kept from the load. last (may be NULL): the
 * statement for the last item (kiln_scan.last), usually KILN__SEL_COUNT.
 * eager: build for the
 * context's first device now. text: the user's expressions, quoted by
 * build errors. */
/* A value the output step stores, kept from the load (kiln_scan.keep):
 * type (of size bytes) and the expression at i; the output text names it
 * kiln_kept. input (may be NULL): the scan's input written with kiln_kept
 * and kiln_prev_kept (kiln_scan.keep_input). */
typedef struct kiln__sel_keep {
    const char *type, *expr, *input;
    size_t size;
} kiln__sel_keep;
kiln_status kiln__sel_create(kiln_context *context, const char *user_args,
                             const char *internal_args, const kiln_scan_desc *desc,
                             const char *text, const kiln__sel_keep *keep, const char *last,
                             int eager, kiln_scan **out);
/* The count's store: the number of selected items, at the last item. */
#define KILN__SEL_COUNT "kiln_count[0] = (long)item"
void kiln__sel_release(kiln_scan *s);
/* Launches s over [0, n); args end with the count array (n = 0: the count
 * is set to 0). */
kiln_status kiln__sel_launch(kiln_queue *queue, kiln_scan *s, size_t n, size_t num_args,
                             const kiln_arg *args, const char *what, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event);

/* The scan type counting items: "int" below 2^31 items, else "long". */
int kiln__sel_wide(size_t n);

/* Appends the selection's functions to sb: kiln_sel_pred(i, KILN_PASS)
 * (1 where predicate holds; negated with negate), kiln_sel_out(i,
 * out_index, KILN_KEPT_ARG KILN_PASS) and, with rejected,
 * kiln_sel_rej(...) (KILN_KEPT_ARG: the kept value, when there is one). prologue
 * (may be NULL) runs first in each, after the arrays are bound. */
void kiln__sel_functions(kiln__sb *sb, const char *prologue, const char *predicate, int negate,
                         const char *output, const char *rejected);
/* How the output step stores: the user's statements (for the selected
 * items, and the rejected ones); or plain stores of the ready-made
 * operations (branch-free on CPUs, select.c): selected only, selected and
 * rejected into two arrays, or one array with the rejected from the back. */
enum {
    KILN__SEL_USER,
    KILN__SEL_USER_REJ,
    KILN__SEL_STORE,
    KILN__SEL_STORE_TWO,
    KILN__SEL_STORE_BACK
};
/* The scan descriptor of a predicate selection with those functions:
 * counts of type wide ? long : int; the output step (its text appended to
 * output, which the descriptor points into) stores by mode and writes the
 * total. preamble: the text of kiln__sel_functions (with any user preamble
 * before it). */
kiln_scan_desc kiln__sel_desc(int wide, int mode, const char *preamble, const char *name,
                              kiln__sb *output);

/* The device count of an operation: count itself (checked: a contiguous
 * INT64 array of queue's context with an element), or a new 1-element
 * temporary when only host_count is given (*temp = 1). */
kiln_status kiln__sel_count_begin(kiln_queue *queue, kiln_array *count, int64_t *host_count,
                                  const char *what, kiln_array **dev, int *temp);
/* After the launch (its event *e): reads the count into host_count (when
 * given) after *e, replacing *e with the read's event; releases a
 * temporary; hands *e to event (or drops it). */
kiln_status kiln__sel_count_end(kiln_queue *queue, kiln_status st, kiln_array *dev, int temp,
                                int64_t *host_count, kiln_event **e, kiln_event **event);

#endif
