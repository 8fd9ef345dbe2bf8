/* Kernel signatures parsed from source, so that launches can be checked
 * before anything is enqueued (see /tmp/dialect.md "Kernel signatures").
 *
 * The parser is deliberately shallow: it strips comments, string literals
 * and preprocessor lines, then looks for kernel qualifiers (KILN_KERNEL,
 * __kernel, kernel, __global__) followed by `void name(params)` and a body.
 * Macros that expand to kernels are not seen; such kernels launch
 * unchecked. */
#ifndef KILN_CORE_SIGNATURE_H
#define KILN_CORE_SIGNATURE_H

#include <stddef.h>

#include "kiln.h"

typedef struct kiln__param {
    kiln_arg_kind kind; /* BUFFER, SCALAR or LOCAL */
    kiln_dtype dtype;   /* SCALAR: the dtype, 0 if the type is not a kiln
                         * dtype (a struct, a vector): any scalar passes */
    char name[64];      /* parameter name ("" if unnamed) */
    char type[64];      /* the type as written, normalised ("uint", "float*") */
} kiln__param;

typedef struct kiln__sig {
    char name[128];
    size_t num_params;
    kiln__param *params; /* malloc'd */
} kiln__sig;

typedef struct kiln__sig_list {
    size_t count;
    kiln__sig *sigs; /* malloc'd */
} kiln__sig_list;

/* Parses source. KILN_OK with the kernels found (possibly none);
 * KILN_ERROR_OUT_OF_HOST_MEMORY only on allocation failure. */
kiln_status kiln__sig_parse(const char *source, kiln__sig_list *list);
void kiln__sig_list_free(kiln__sig_list *list);
/* The kernel called name, or NULL. */
const kiln__sig *kiln__sig_find(const kiln__sig_list *list, const char *name);
/* The dtype of a scalar type name as written in a kernel ("uint",
 * "unsigned int", "int32_t", "half"...), 0 if it is not one. */
kiln_dtype kiln__sig_dtype(const char *type);

#endif
