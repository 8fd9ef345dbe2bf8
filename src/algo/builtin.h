/* Internal entry points shared by the built-in operations. */
#ifndef KILN_ALGO_BUILTIN_H
#define KILN_ALGO_BUILTIN_H

#include "algo/algo.h"

/* kiln_reduction_create with a finishing expression of `a` (e.g. "sqrt(a)")
 * whose type is final_type (NULL = the out type) of final_size bytes, and
 * eager = 0 to build nothing until the first launch. */
kiln_status kiln__reduction_create_ex(kiln_context *context,
                                      const kiln_reduction_desc *desc,
                                      const char *finish,
                                      const char *final_type,
                                      size_t final_size, int eager,
                                      kiln_reduction **out);
/* kiln_scan_create / kiln_elementwise_create that build nothing yet. */
kiln_status kiln__scan_create_ex(kiln_context *context,
                                 const kiln_scan_desc *desc, int eager,
                                 kiln_scan **out);
kiln_status kiln__elementwise_create_ex(kiln_context *context,
                                        const kiln_elementwise_desc *desc,
                                        int eager, kiln_elementwise **kernel);

/* A built-in elementwise kernel from the context's cache, with a new
 * reference: release it with kiln_elementwise_release. */
kiln_status kiln__elementwise_cached(kiln_context *context,
                                     const char *arguments,
                                     const char *operation, const char *name,
                                     kiln_elementwise **ew);

/* The same with a preamble (may be NULL) and kiln_elementwise_desc flags. */
kiln_status kiln__elementwise_cached_ex(kiln_context *context,
                                        const char *arguments,
                                        const char *operation,
                                        const char *name,
                                        const char *preamble, unsigned flags,
                                        kiln_elementwise **ew);

/* The generated source of one variant (without the backend prelude),
 * appended to sb: for checks that compile it for another backend (NVRTC). */
kiln_status kiln__elementwise_source(kiln_elementwise *ew, int strided,
                                     const kiln__plan *plan, kiln__sb *sb);
kiln_status kiln__reduction_source(kiln_reduction *r, int strided,
                                   const kiln__plan *plan, kiln__sb *sb);
kiln_status kiln__scan_source(kiln_scan *s, int strided,
                              const kiln__plan *plan, kiln__sb *sb);

/* Kernel-source literals of a dtype's largest / smallest value; returns
 * buf. */
const char *kiln__dtype_max_literal(kiln_dtype d, char *buf, size_t cap);
const char *kiln__dtype_min_literal(kiln_dtype d, char *buf, size_t cap);

#endif
