/* Internal entry points shared by the built-in operations. */
#ifndef KILN_ALGO_BUILTIN_H
#define KILN_ALGO_BUILTIN_H

#include "algo/algo.h"

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
/* kiln_scan_create / kiln_elementwise_create that build nothing yet. */
kiln_status kiln__scan_create_ex(kiln_context *context, const kiln_scan_desc *desc, int eager,
                                 kiln_scan **out);
kiln_status kiln__elementwise_create_ex(kiln_context *context, const kiln_elementwise_desc *desc,
                                        int eager, kiln_elementwise **kernel);

/* A built-in elementwise kernel from the context's cache, with a new
 * reference: release it with kiln_elementwise_release. */
kiln_status kiln__elementwise_cached(kiln_context *context, const char *arguments,
                                     const char *operation, const char *name,
                                     kiln_elementwise **ew);

/* The split (chunks of the axis) of a GPU column reduction of nout
 * outputs of len elements when `resident` work-items run at once
 * (array_axis.c; tests/test_axis.c). */
size_t kiln__axis_wave_split(size_t nout, size_t len, size_t resident);

/* Internal elementwise flag (never accepted from users): the arrays are
 * contiguous and no two of them share memory, so on GPUs an any-shape
 * kernel declares them restrict and is sized like a plain one. */
#define KILN__ELEMENTWISE_NOALIAS (1u << 16)
/* Internal elementwise flag for kiln's own operators: the operation uses i
 * only as the index [i] of its arrays, reads only its const arrays and
 * writes every other array on every item. On GPUs the contiguous variant then
 * moves 4 consecutive items of each array as one access (elementwise.c,
 * "lanes"). */
#define KILN__ELEMENTWISE_LANES (1u << 17)

/* The same with a preamble (may be NULL) and kiln_elementwise_desc flags
 * (KILN_ELEMENTWISE_ANY_SHAPE, KILN__ELEMENTWISE_NOALIAS,
 * KILN__ELEMENTWISE_LANES). */
kiln_status kiln__elementwise_cached_ex(kiln_context *context, const char *arguments,
                                        const char *operation, const char *name,
                                        const char *preamble, unsigned flags,
                                        kiln_elementwise **ew);

/* The generated source of one variant (without the backend prelude),
 * appended to sb: for checks that compile it for another backend (NVRTC). */
kiln_status kiln__elementwise_source(kiln_elementwise *ew, int strided, const kiln__plan *plan,
                                     kiln__sb *sb);
kiln_status kiln__reduction_source(kiln_reduction *r, int strided, const kiln__plan *plan,
                                   kiln__sb *sb);
/* Stage 1's work-groups for n items with work-groups of local items (and,
 * on CPUs, the items per work-group in *chunk). */
size_t kiln__reduction_groups(const kiln__plan *plan, size_t local, size_t n, int64_t *chunk);
/* kiln_reduction_launch; two_stage: launch stage 2 even when stage 1 has
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

/* Texts of an argmin/argmax reduction (pairs of value and index). */
typedef struct kiln__arg_text {
    char pre[1024], neutral[160], map[96];
} kiln__arg_text;
/* Makes d the reduction of (value, index) pairs keeping the first minimum
 * (mx = 0) or maximum of the elements X of element type et. */
void kiln__arg_desc(int mx, kiln_dtype et, const char *X, kiln__arg_text *tx,
                    kiln_reduction_desc *d);

/* astype's vector kernel (array_cast.c) from the context's cache: four
 * elements per item, for from of 4 bytes and to of 2 or 4 (release it with
 * kiln_elementwise_release; tests/test_array_nvrtc.c compiles it for
 * CUDA). */
kiln_status kiln__astype_vec_kernel(kiln_context *ctx, kiln_dtype from, kiln_dtype to,
                                    kiln_elementwise **ew);

/* Kernel-source literals of a dtype's largest / smallest value; returns
 * buf. */
const char *kiln__dtype_max_literal(kiln_dtype d, char *buf, size_t cap);
const char *kiln__dtype_min_literal(kiln_dtype d, char *buf, size_t cap);

#endif
