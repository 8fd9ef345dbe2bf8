/* Arrays over existing buffers (kiln_array_from_buffer): the layout is the
 * caller's, checked against the buffer's size. */
#include <stdint.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"

kiln_status kiln_array_from_buffer(kiln_buffer *buffer, size_t offset, kiln_dtype dtype,
                                   unsigned ndim, const size_t *shape, const ptrdiff_t *strides,
                                   kiln_array **array) {
    static const char fn[] = "kiln_array_from_buffer";
    size_t n;
    kiln_status st = kiln__array_begin(fn, array, buffer, "buffer", dtype, ndim, shape, &n);
    if (st != KILN_OK)
        return st;
    size_t es = kiln_dtype_size(dtype), bytes = kiln_buffer_size(buffer);
    if (offset % es != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: offset %zu bytes is not a multiple of "
                               "the size of %s (%zu bytes)",
                               fn, offset, kiln_dtype_name(dtype), es);
    if (offset > bytes)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: offset %zu is past the end of the buffer "
                               "(%zu bytes)",
                               fn, offset, bytes);
    /* Strides in elements; NULL: dense C order (a product that wraps is
     * clamped, and the bounds check below refuses it). */
    ptrdiff_t st_el[KILN_ARRAY_MAX_DIMS], dense = 1;
    for (unsigned d = ndim; d-- > 0;) {
        st_el[d] = strides ? strides[d] : dense;
        if (!strides && shape[d] > 1 &&
            (shape[d] > (size_t)PTRDIFF_MAX ||
             __builtin_mul_overflow(dense, (ptrdiff_t)shape[d], &dense)))
            dense = PTRDIFF_MAX;
    }
    if (n > 0) {
        /* The lowest and highest element, relative to element 0, then in
         * bytes from the buffer's start: all of [lo, hi] must fit. */
        ptrdiff_t lo = 0, hi = 0;
        int overflow = 0;
        for (unsigned d = 0; d < ndim; d++) {
            ptrdiff_t ext;
            if (shape[d] - 1 > (size_t)PTRDIFF_MAX ||
                __builtin_mul_overflow((ptrdiff_t)(shape[d] - 1), st_el[d], &ext) ||
                __builtin_add_overflow(ext < 0 ? lo : hi, ext, ext < 0 ? &lo : &hi))
                overflow = 1;
        }
        ptrdiff_t first = 0, end = 0;
        if (!overflow && (__builtin_mul_overflow(lo, (ptrdiff_t)es, &first) ||
                          __builtin_add_overflow(first, (ptrdiff_t)offset, &first) ||
                          __builtin_mul_overflow(hi + 1, (ptrdiff_t)es, &end) ||
                          __builtin_add_overflow(end, (ptrdiff_t)offset, &end)))
            overflow = 1;
        if (overflow)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: the shape and strides reach beyond "
                                   "any address (buffer of %zu bytes)",
                                   fn, bytes);
        if (first < 0 || (size_t)end > bytes)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: the elements reach bytes [%td, %td) "
                                   "of a buffer of %zu bytes",
                                   fn, first, end, bytes);
    }
    kiln_array *a = kiln__array_new(buffer, dtype);
    if (!a)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", fn);
    a->ndim = ndim;
    for (unsigned d = 0; d < KILN_ARRAY_MAX_DIMS; d++) {
        a->shape[d] = d < ndim ? shape[d] : 1;
        a->strides[d] = d < ndim ? st_el[d] : 0;
    }
    a->offset = offset / es;
    a->size = n;
    *array = a;
    return KILN_OK;
}
