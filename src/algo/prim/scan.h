/* The scan generator's parts (src/algo/prim/scan*.c): the object (scan.c), its
 * three templates and their choice and shape (scan_variants.c), their
 * launches (scan_run.c) and the built-in cumsum / cumprod
 * (scan_builtin.c). */
#ifndef KILN_ALGO_SCAN_H
#define KILN_ALGO_SCAN_H

#include "algo/gen/algo.h"

struct kiln_scan {
    kiln__gen gen; /* first: the base */
    char *scan_type, *neutral, *op, *input, *output, *seg, *preamble;
    size_t scan_size;
    /* Optional (selections, select.c): a value of type keep_type that the
     * output step uses, the expression keep at i. The single-pass
     * templates load it beside the input and keep it in registers until
     * the output step (the same thread handles item i in both), so the
     * output reads no input again; elsewhere kiln_output evaluates it.
     * The output text names it kiln_kept. NULL: none. keep_input (may be
     * NULL): the input expression again in terms of kiln_kept and
     * kiln_prev_kept (item i - 1's kept value; unspecified at i == 0), for
     * the warp scan, which hands a thread its neighbour's value by a
     * shuffle instead of a second load. */
    char *keep_type, *keep, *keep_input;
    size_t keep_size;
    /* Optional (selections): a statement run once, for the last item
     * (i == n - 1) with item, e.g. the count's store. The single-pass
     * scans run it after the rescan in the thread that holds that item, so the
     * loop tests nothing a item for it; elsewhere kiln_output runs it
     * behind an if. NULL: none. */
    char *last;
};

/* The templates, all keeping the operator's order:
 *  WARP        single pass, decoupled look-back with warp shuffles, in
 *              CUDA C (algo_scan_warp.cu): devices that compile CUDA C,
 *              have warp shuffles over warps of 32 and forward progress;
 *  ONEPASS_CL  the same algorithm in portable OpenCL C 1.2
 *              (algo_scan_onepass.cl): OpenCL GPUs with forward progress;
 *  THREEPHASE  three launches (algo_scan.cl): block totals, a scan of the
 *              totals, a rescan of each block with its carry-in; CPUs,
 *              types too large for the single-pass tiles, anything else. */
enum { KILN__SCAN_THREEPHASE, KILN__SCAN_WARP, KILN__SCAN_ONEPASS_CL };

/* The template for s on a device of plan (KILN_SCAN_VARIANT may force
 * one), with its work-items per group and items per work-item. */
int kiln__scan_template(const kiln_scan *s, const kiln__plan *plan);
size_t kiln__scan_local(int tmpl, const kiln__plan *plan);
int kiln__scan_items(int tmpl, const kiln_scan *s, const kiln__plan *plan);
/* How the single-pass templates publish a tile's status and value of a
 * scan type of size bytes: 1 one 64-bit word (up to 4 bytes), 2 16 bytes
 * with the status in both halves (5 to 8 bytes: one store in the warp
 * scan, two 64-bit ones in the OpenCL single pass), 0 a status int with
 * the value apart behind a fence. */
int kiln__scan_packed(int tmpl, size_t size);
/* The languages the template's source compiles as (KILN__LANGS_PORTABLE or
 * one native language). */
unsigned kiln__scan_languages(int tmpl);

/* The launches of a built variant over b's range. */
kiln_status kiln__scan_run_onepass(kiln_queue *queue, const kiln_scan *s, const kiln__variant *v,
                                   const kiln__bound *b, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event);
kiln_status kiln__scan_run_threephase(kiln_queue *queue, const kiln_scan *s, const kiln__variant *v,
                                      const kiln__plan *plan, const kiln__bound *b, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);

#endif
