/* Views of arrays (no copy): slices, swapped axes, new shapes. */
#include <assert.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"

ptrdiff_t kiln__slice_len(kiln_slice s, ptrdiff_t n, ptrdiff_t *first) {
    ptrdiff_t b = s.start, e = s.stop;
    if (s.step > 0) {
        if (b < 0)
            b = b < -n ? 0 : b + n;
        if (b > n)
            b = n;
        if (e < 0)
            e = e < -n ? 0 : e + n;
        if (e > n)
            e = n;
        *first = b;
        /* (e - b - 1) / step + 1, not (e - b + step - 1) / step: a step
         * near PTRDIFF_MAX must not overflow */
        return e > b ? (e - b - 1) / s.step + 1 : 0;
    }
    if (b < 0)
        b = b < -n ? -1 : b + n;
    if (b > n - 1)
        b = n - 1;
    if (e < 0)
        e = e < -n ? -1 : e + n;
    if (e > n - 1)
        e = n - 1;
    *first = b;
    if (b <= e)
        return 0;
    /* -step overflows for PTRDIFF_MIN, which takes one element */
    return s.step == PTRDIFF_MIN ? 1 : (b - e - 1) / (-s.step) + 1;
}

/* The NULL checks each view starts with: view (then cleared), then a. */
static kiln_status view_begin(const char *what, const kiln_array *a, kiln_array **view) {
    if (!view)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: view is NULL", what);
    *view = NULL;
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: array is NULL", what);
    return KILN_OK;
}

kiln_status kiln_array_view(kiln_array *a, const kiln_slice *slices, kiln_array **view) {
    kiln_status st = view_begin("kiln_array_view", a, view);
    if (st != KILN_OK)
        return st;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t off = (ptrdiff_t)a->offset;
    size_t size = 1;
    for (unsigned d = 0; d < a->ndim; d++) {
        kiln_slice s = slices ? slices[d] : KILN_SLICE_ALL;
        if (s.step == 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_array_view: dimension %u has step 0", d);
        ptrdiff_t first = 0;
        ptrdiff_t len = kiln__slice_len(s, (ptrdiff_t)a->shape[d], &first);
        shape[d] = (size_t)len;
        /* checked (kiln__mul_stride): a huge step overflows the stride. A
         * dimension of at most one element never steps, so its step may be
         * anything (NumPy takes a[::2**63-1] too): its stride is the
         * array's. */
        strides[d] = a->strides[d];
        if ((len > 1 && !kiln__mul_stride(a->strides[d], s.step, &strides[d])) ||
            (len > 0 && !kiln__muladd_stride(first, a->strides[d], off, &off)))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_array_view: dimension %u: step %td times stride %td "
                                   "overflows",
                                   d, s.step, a->strides[d]);
        size *= (size_t)len;
    }
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_array_view");
    for (unsigned d = 0; d < a->ndim; d++) {
        v->shape[d] = shape[d];
        v->strides[d] = strides[d];
    }
    v->offset = size ? (size_t)off : a->offset;
    v->size = size;
    assert(kiln__array_inside(v) && "a view lies inside its buffer");
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_swapaxes(kiln_array *a, unsigned d0, unsigned d1, kiln_array **view) {
    kiln_status st = view_begin("kiln_array_swapaxes", a, view);
    if (st != KILN_OK)
        return st;
    if (d0 >= a->ndim || d1 >= a->ndim)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_array_swapaxes: dimensions %u, %u of a "
                               "%u-D array",
                               d0, d1, a->ndim);
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_array_swapaxes");
    size_t s = v->shape[d0];
    v->shape[d0] = v->shape[d1];
    v->shape[d1] = s;
    ptrdiff_t t = v->strides[d0];
    v->strides[d0] = v->strides[d1];
    v->strides[d1] = t;
    assert(kiln__array_inside(v) && "a view lies inside its buffer");
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_reshape(kiln_array *a, unsigned ndim, const size_t *shape,
                               kiln_array **view) {
    size_t n;
    kiln_status st = view_begin("kiln_array_reshape", a, view);
    if (st == KILN_OK)
        st = kiln__array_check_shape("kiln_array_reshape", a->dtype, ndim, shape, &n);
    if (st != KILN_OK)
        return st;
    if (n != a->size)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_reshape: %zu elements into a shape "
                               "of %zu",
                               a->size, n);
    if (!kiln__array_contiguous(a))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_reshape: the array is a strided "
                               "view; copy it first");
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_array_reshape");
    kiln__array_set_dense(v, ndim, shape);
    assert(kiln__array_inside(v) && "a view lies inside its buffer");
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_permute(kiln_array *a, const int *axes, kiln_array **view) {
    static const char what[] = "kiln_array_permute";
    kiln_status st = view_begin(what, a, view);
    if (st != KILN_OK)
        return st;
    unsigned nd = a->ndim, from[KILN_ARRAY_MAX_DIMS];
    unsigned char seen[KILN_ARRAY_MAX_DIMS] = { 0 };
    for (unsigned d = 0; d < nd; d++) {
        if (!axes) { /* NULL: the axes reversed (NumPy's transpose) */
            from[d] = nd - 1 - d;
            continue;
        }
        int ax = axes[d];
        if (ax < -(int)nd || ax >= (int)nd)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: axes[%u] = %d is out of range for an array of %u "
                                   "dimensions",
                                   what, d, ax, nd);
        from[d] = (unsigned)(ax < 0 ? ax + (int)nd : ax);
        if (seen[from[d]])
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: axes[%u] = %d repeats axis %u: axes must be a "
                                   "permutation of 0..%u",
                                   what, d, ax, from[d], nd ? nd - 1 : 0);
        seen[from[d]] = 1;
    }
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    for (unsigned d = 0; d < nd; d++) {
        v->shape[d] = a->shape[from[d]];
        v->strides[d] = a->strides[from[d]];
    }
    assert(kiln__array_inside(v) && "a view lies inside its buffer");
    *view = v;
    return KILN_OK;
}
