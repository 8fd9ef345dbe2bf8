/* Internal entry points of the elementwise generator (elementwise.c),
 * shared by the built-in operations. */
#ifndef KILN_ALGO_BUILTIN_H
#define KILN_ALGO_BUILTIN_H

#include "algo/gen/algo.h"

/* kiln_elementwise_create that builds nothing yet. */
kiln_status kiln__elementwise_create_ex(kiln_context *context, const kiln_elementwise_desc *desc,
                                        int eager, kiln_elementwise **kernel);

/* A built-in elementwise kernel from the context's cache, with a new
 * reference: release it with kiln_elementwise_release. */
kiln_status kiln__elementwise_cached(kiln_context *context, const char *arguments,
                                     const char *operation, const char *name,
                                     kiln_elementwise **ew);

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

#endif
