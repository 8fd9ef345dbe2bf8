/* The host backend's source rewrite (rewrite.c). */
#ifndef KILN_BACKEND_HOST_REWRITE_H
#define KILN_BACKEND_HOST_REWRITE_H

#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

typedef struct kiln__hparam {
    char *type; /* malloc'd: the parameter's type as written (after preprocessing) */
    char name[128];
} kiln__hparam;

typedef struct kiln__hkdecl {
    char name[128];
    kiln__hparam *params;
    size_t num_params;
} kiln__hkdecl;

typedef struct kiln__hrw {
    char *text; /* the rewritten source */
    kiln__hkdecl *kernels;
    size_t num_kernels;
    int has_barrier; /* the program calls kiln_barrier() somewhere */
    int need_tls;    /* a helper function uses the work-item functions */
} kiln__hrw;

/* Rewrites the preprocessed source in; on failure *why says what. */
kiln_status kiln__hrw_run(const char *in, kiln__hrw *rw, char *why, size_t why_cap);
/* The items loops and entry points of rw's kernels. */
void kiln__hrw_entries(const kiln__hrw *rw, kiln__sb *sb);
void kiln__hrw_free(kiln__hrw *rw);

#endif
