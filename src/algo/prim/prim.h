/* Internal entry points of the reduction and scan generators
 * (src/algo/prim/reduce.c, scan*.c), shared by the built-in operations;
 * includes the elementwise generator's (algo/gen/builtin.h). */
#ifndef KILN_ALGO_PRIM_PRIM_H
#define KILN_ALGO_PRIM_PRIM_H

#include "algo/gen/builtin.h"

/* kiln_reduction_create with a finishing expression of `a` (e.g. "sqrt(a)")
 * whose type is final_type (NULL = the out type) of final_size bytes, and
 * eager = 0 to build nothing until the first launch. */
kiln_status kiln__reduction_create_ex(kiln_context *context, const kiln_reduction_desc *desc,
                                      const char *finish, const char *final_type, size_t final_size,
                                      int eager, kiln_reduction **out);
/* Marks a built-in reduction whose map reads its arrays at [i] only and
 * uses i for nothing else: its GPU stage 1 may read them in lanes
 * (kiln__gen_lanes). Before its first variant is built. */
void kiln__reduction_allow_lanes(kiln_reduction *r);
/* What kiln__reduction_make builds: kiln__reduction_create_ex's arguments. */
typedef struct kiln__reduction_make_arg {
    kiln_context *context;
    const kiln_reduction_desc *d;
    const char *finish, *final_type;
    size_t final_size;
} kiln__reduction_make_arg;
/* The make callback of kiln__gen_cached for a reduction built lazily (eager
 * 0) from a kiln__reduction_make_arg; the built-in operations share it. */
kiln_status kiln__reduction_make(void *arg, kiln__gen **gen);
/* kiln_scan_create that builds nothing yet. */
kiln_status kiln__scan_create_ex(kiln_context *context, const kiln_scan_desc *desc, int eager,
                                 kiln_scan **out);
/* What kiln__scan_make builds: the scan of d in context. */
typedef struct kiln__scan_make_arg {
    kiln_context *context;
    const kiln_scan_desc *d;
} kiln__scan_make_arg;
/* The make callback of kiln__gen_cached for a scan built lazily from a
 * kiln__scan_make_arg; the built-in operations share it. */
kiln_status kiln__scan_make(void *arg, kiln__gen **gen);

kiln_status kiln__reduction_source(kiln_reduction *r, int strided, const kiln__plan *plan,
                                   kiln__sb *sb);
/* Stage 1's work-groups for n items with work-groups of local items (and,
 * on CPUs, the items per work-group in *chunk). */
size_t kiln__reduction_groups(const kiln__plan *plan, size_t local, size_t n, int64_t *chunk);
/* kiln_reduction_run_async; two_stage: launch stage 2 even when stage 1 has
 * one work-group (which then writes its partial), for tests comparing the
 * single-launch path with the two-launch one. */
kiln_status kiln__reduction_launch_ex(kiln_queue *queue, kiln_reduction *r, size_t n,
                                      size_t num_args, const kiln_arg *args, kiln_array *result,
                                      void *host_result, int two_stage, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);
kiln_status kiln__scan_source(kiln_scan *s, int strided, const kiln__plan *plan, kiln__sb *sb);

/* The variants of a reduction along an axis (kernels _axrows, _axcols,
 * _axfinish of kernels/algo_reduce_axis.cl), built on first use. */
/* 1 if the reduction has an `initial` expression (not yet supported along
 * an axis). */
int kiln__reduction_has_initial(const kiln_reduction *r);
kiln_status kiln__reduction_axis_variant(kiln_reduction *r, int layout, const kiln__plan *plan,
                                         kiln__variant **out);
/* The accumulator's and final value's sizes, the final dtype (0 for a
 * struct) and type name. */
void kiln__reduction_sizes(const kiln_reduction *r, size_t *out_size, size_t *final_size,
                           kiln_dtype *final_dtype, const char **final_type);

#endif
