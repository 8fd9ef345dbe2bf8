/* NumPy's broadcasting of shapes: kiln_shape_broadcast, and the views
 * with stride 0 that let the operators read broadcast operands through
 * the generators' strided layout (no copy). */
#include <stdio.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"

/* Broadcasts (nb, b) into (*na, a) in place: shapes aligned at their last
 * dimension; each pair equal, or one of them 1. 0 if they do not. */
static int broadcast_into(unsigned *na, size_t *a, unsigned nb, const size_t *b) {
    unsigned n = *na > nb ? *na : nb;
    if (n > KILN_ARRAY_MAX_DIMS)
        return 0;
    size_t r[KILN_ARRAY_MAX_DIMS];
    for (unsigned k = 0; k < n; k++) { /* k counts from the last dimension */
        size_t x = k < *na ? a[*na - 1 - k] : 1;
        size_t y = k < nb ? b[nb - 1 - k] : 1;
        if (x != y && x != 1 && y != 1)
            return 0;
        r[n - 1 - k] = x == 1 ? y : x;
    }
    memcpy(a, r, n * sizeof *r);
    *na = n;
    return 1;
}

kiln_status kiln_shape_broadcast(unsigned ndim_a, const size_t *shape_a, unsigned ndim_b,
                                 const size_t *shape_b, unsigned *ndim, size_t *shape) {
    static const char what[] = "kiln_shape_broadcast";
    if (!ndim || !shape || (ndim_a && !shape_a) || (ndim_b && !shape_b))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: a shape or result pointer is NULL",
                               what);
    if (ndim_a > KILN_ARRAY_MAX_DIMS || ndim_b > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: more than %d dimensions", what,
                               KILN_ARRAY_MAX_DIMS);
    size_t r[KILN_ARRAY_MAX_DIMS];
    unsigned nr = ndim_a;
    if (ndim_a)
        memcpy(r, shape_a, ndim_a * sizeof *r);
    if (!broadcast_into(&nr, r, ndim_b, shape_b)) {
        char ta[160], tb[160];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: shapes %s and %s do not broadcast",
                               what, kiln__shape_text(ndim_a, shape_a, ta, sizeof ta),
                               kiln__shape_text(ndim_b, shape_b, tb, sizeof tb));
    }
    *ndim = nr;
    memcpy(shape, r, nr * sizeof *r);
    return KILN_OK;
}

/* A view of a with shape (ndim, shape), which a broadcasts to once its
 * first skip dimensions (all of size 1) are dropped: stride 0 in the
 * dimensions it repeats. */
static kiln_array *broadcast_view(const kiln_array *a, unsigned skip, unsigned ndim,
                                  const size_t *shape) {
    /* already of that shape: the array itself (a reference, no header to
     * copy: the common case costs an atomic, not an allocation) */
    if (!skip && a->ndim == ndim && !memcmp(a->shape, shape, ndim * sizeof *shape) &&
        kiln_array_retain((kiln_array *)a) == KILN_OK)
        return (kiln_array *)a;
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return NULL;
    unsigned pad = ndim - (a->ndim - skip);
    size_t size = 1;
    for (unsigned d = 0; d < ndim; d++) {
        int own = d >= pad && a->shape[d - pad + skip] == shape[d];
        v->shape[d] = shape[d];
        v->strides[d] = own ? a->strides[d - pad + skip] : 0;
        size *= shape[d];
    }
    for (unsigned d = ndim; d < KILN_ARRAY_MAX_DIMS; d++) {
        v->shape[d] = 0;
        v->strides[d] = 0;
    }
    v->ndim = ndim;
    v->size = size;
    return v;
}

kiln_status kiln__broadcast_to(const char *what, const char *name, const kiln_array *a,
                               unsigned ndim, const size_t *shape, kiln_array **view) {
    *view = NULL;
    /* NumPy's assignment drops leading dimensions of size 1 that the
     * target does not have (a[i] = v[None] works) */
    unsigned skip = 0;
    while (a->ndim - skip > ndim && a->shape[skip] == 1)
        skip++;
    int ok = a->ndim - skip <= ndim;
    unsigned pad = ok ? ndim - (a->ndim - skip) : 0;
    for (unsigned d = pad; ok && d < ndim; d++)
        ok = a->shape[d - pad + skip] == shape[d] || a->shape[d - pad + skip] == 1;
    if (!ok) {
        char ta[160], tb[160];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s of shape %s do not broadcast to %s",
                               what, name, kiln__shape_text(a->ndim, a->shape, ta, sizeof ta),
                               kiln__shape_text(ndim, shape, tb, sizeof tb));
    }
    *view = broadcast_view(a, skip, ndim, shape);
    return *view ? KILN_OK : kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
}

kiln_status kiln__broadcast_operands(const char *what, const kiln_array *out, size_t n,
                                     kiln_array *const *ops, const char *const *names,
                                     kiln_array **views) {
    for (size_t k = 0; k < n; k++)
        views[k] = NULL;
    unsigned nr = out->ndim;
    size_t r[KILN_ARRAY_MAX_DIMS];
    memcpy(r, out->shape, nr * sizeof *r);
    /* the operands together first: an error names the two that clash */
    unsigned no = 0;
    size_t o[KILN_ARRAY_MAX_DIMS];
    size_t first = n;
    for (size_t k = 0; k < n; k++) {
        if (!ops[k])
            continue;
        if (first == n) {
            first = k;
            no = ops[k]->ndim;
            memcpy(o, ops[k]->shape, no * sizeof *o);
        } else if (!broadcast_into(&no, o, ops[k]->ndim, ops[k]->shape)) {
            char ta[160], tb[160];
            return kiln__error_set(
                KILN_ERROR_MISMATCH, 0, "%s: shapes %s (%s) and %s (%s) do not broadcast", what,
                kiln__shape_text(no, o, ta, sizeof ta),
                k == first + 1 ? names[first] : "the operands before",
                kiln__shape_text(ops[k]->ndim, ops[k]->shape, tb, sizeof tb), names[k]);
        }
    }
    /* then out, which is never broadcast itself (NumPy) */
    size_t w[KILN_ARRAY_MAX_DIMS];
    unsigned nw = nr;
    memcpy(w, r, nr * sizeof *w);
    if (first < n && (!broadcast_into(&nw, w, no, o) || nw != nr || memcmp(w, r, nr * sizeof *r))) {
        char ta[160], tb[160];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the operands broadcast to shape %s, but "
                               "out has shape %s",
                               what, kiln__shape_text(no, o, ta, sizeof ta),
                               kiln__shape_text(nr, r, tb, sizeof tb));
    }
    for (size_t k = 0; k < n; k++) {
        if (!ops[k])
            continue;
        views[k] = broadcast_view(ops[k], 0, nr, r);
        if (!views[k]) {
            for (size_t j = 0; j < k; j++)
                kiln_array_release(views[j]);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
        }
    }
    return KILN_OK;
}
