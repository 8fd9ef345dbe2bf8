/* Filling arrays: kiln_array_fill, and the constructors that make an
 * array and fill it (zeros, full, arange). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/ops/complex.h"
#include "algo/prim/prim.h"
#include "base/check.h"
#include "base/error.h"

static kiln_status fill_bytes(kiln_queue *q, kiln_array *a, const void *value, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event);

/* Fill of a strided complex view: its real and imaginary views. */
static kiln_status complex_fill(kiln_queue *q, kiln_array *a, const void *value, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    size_t half = kiln_dtype_size(a->dtype) / 2;
    kiln_array *re = NULL, *im = NULL;
    kiln_event *e[2] = { NULL, NULL };
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln_array_real(a, &re));
    KILN__CHECK_CALL(&ck, kiln_array_imag(a, &im));
    KILN__CHECK_CALL(&ck, fill_bytes(q, re, value, num_wait, wait, &e[0]));
    KILN__CHECK_CALL(&ck, fill_bytes(q, im, (const char *)value + half, num_wait, wait, &e[1]));
    if (event)
        KILN__CHECK_CALL(&ck, kiln_queue_marker(q, 2, e, event));
    kiln_status st = ck.st;
    kiln__event_drop(&e[0]);
    kiln__event_drop(&e[1]);
    kiln_array_release(re);
    kiln_array_release(im);
    return st;
}

static kiln_arg arg_from_bytes(kiln_dtype d, const void *p) {
    kiln_arg a = { .kind = KILN_ARG_SCALAR, .dtype = d };
    memcpy(&a.value, p, kiln_dtype_size(d));
    return a;
}

/* Fills a (checked) with value, one element of its dtype. */
static kiln_status fill_bytes(kiln_queue *q, kiln_array *a, const void *value, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event) {
    kiln_status st;
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(a))
        return kiln_buffer_fill(q, a->buffer, value, es, a->offset * es, a->size * es, num_wait,
                                wait, event);
    if (kiln__is_complex_dtype(a->dtype)) /* no complex scalar argument */
        return complex_fill(q, a, value, num_wait, wait, event);
    const char *t = kiln__bits_type(a->dtype);
    char args[96];
    snprintf(args, sizeof args, "%s *y, %s v", t, t);
    kiln_array h = *a;
    kiln_dtype bd = a->dtype == KILN_FLOAT16 ? KILN_UINT16 : a->dtype;
    h.dtype = bd;
    kiln_elementwise *ew = NULL;
    st = kiln__elementwise_cached_ex(a->context, args, "y[i] = v", "kiln_fill", NULL,
                                     KILN__ELEMENTWISE_LANES, &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(&h), arg_from_bytes(bd, value) };
        st = kiln_elementwise_launch(q, ew, h.size, 2, v, num_wait, wait, event);
    }
    kiln_elementwise_release(ew);
    return st;
}

kiln_status kiln_array_fill(kiln_queue *q, kiln_array *a, kiln_arg value, size_t num_wait,
                            kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = kiln__array_check_queue(q, a, "kiln_array_fill");
    uint64_t element[2];
    if (st == KILN_OK)
        st = kiln__scalar_to_element(value, a->dtype, element, "kiln_array_fill");
    return st == KILN_OK ? fill_bytes(q, a, element, num_wait, wait, event) : st;
}

/* full, its messages naming what (kiln_array_full or kiln_array_zeros);
 * value is one element of dtype. */
static kiln_status full_as(const char *what, kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                           const size_t *shape, const void *value, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event, kiln_array **array) {
    if (event)
        *event = NULL;
    if (array)
        *array = NULL;
    const char *missing = KILN__FIRST_NULL2(queue, array);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, missing);
    kiln_array *a;
    kiln_status st =
        kiln__array_make(kiln_queue_context(queue), dtype, ndim, shape, NULL, what, &a);
    if (st != KILN_OK)
        return st;
    st = fill_bytes(queue, a, value, num_wait, wait, event);
    if (st != KILN_OK) {
        kiln_array_release(a);
        return st;
    }
    *array = a;
    return KILN_OK;
}

kiln_status kiln_array_zeros(kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                             const size_t *shape, size_t num_wait, kiln_event *const *wait,
                             kiln_event **event, kiln_array **array) {
    static const uint64_t zero[2] = { 0, 0 }; /* one element of any dtype */
    return full_as("kiln_array_zeros", queue, dtype, ndim, shape, zero, num_wait, wait, event,
                   array);
}

kiln_status kiln_array_full(kiln_queue *queue, kiln_dtype dtype, unsigned ndim, const size_t *shape,
                            kiln_arg value, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event, kiln_array **array) {
    uint64_t element[2] = { 0, 0 };
    if (event)
        *event = NULL;
    if (array)
        *array = NULL;
    kiln_status st = kiln__scalar_to_element(value, dtype, element, "kiln_array_full");
    if (st != KILN_OK && kiln_dtype_size(dtype)) /* an unknown dtype: the shape check says so */
        return st;
    return full_as("kiln_array_full", queue, dtype, ndim, shape, element, num_wait, wait, event,
                   array);
}

kiln_status kiln_array_arange(kiln_queue *queue, kiln_dtype dtype, size_t n, double start,
                              double step, size_t num_wait, kiln_event *const *wait,
                              kiln_event **event, kiln_array **array) {
    if (event)
        *event = NULL;
    if (array)
        *array = NULL;
    if (!queue || !array)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_array_arange: %s is NULL",
                               !queue ? "queue" : "array");
    kiln_array *a;
    kiln_status st =
        kiln__array_make(kiln_queue_context(queue), dtype, 1, &n, NULL, "kiln_array_arange", &a);
    if (st != KILN_OK)
        return st;
    if (dtype == KILN_BOOL) {
        kiln_array_release(a);
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_arange: bool is not numeric (arange an integer "
                               "array and compare it)");
    }
    if (kiln__is_complex_dtype(dtype)) {
        kiln_array_release(a);
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "kiln_array_arange: complex dtypes are not "
                               "supported (arange a real array and use "
                               "kiln_array_complex_cast_out)");
    }
    kiln__plan plan;
    st = kiln__plan_for(queue, &plan);
    const char *t = kiln_dtype_name(dtype);
    const char *ft = plan.fp64 ? "double" : "float";
    char args[128], op[128];
    if (dtype == KILN_FLOAT16) {
        /* float16 stored as its bits, rounded from the float value */
        snprintf(args, sizeof args, "ushort *y, %s s0, %s ds", ft, ft);
        snprintf(op, sizeof op, "y[i] = kiln_f2h((float)(s0 + (%s)i * ds))", ft);
    } else {
        snprintf(args, sizeof args, "%s *y, %s s0, %s ds", t, ft, ft);
        snprintf(op, sizeof op, "y[i] = (%s)(s0 + (%s)i * ds)", t, ft);
    }
    kiln_elementwise *ew = NULL;
    if (st == KILN_OK)
        st = kiln__elementwise_cached(kiln_queue_context(queue), args, op, "kiln_arange", &ew);
    if (st == KILN_OK) {
        kiln_arg v[3] = { KILN_ARG_ARRAY(a), KILN_ARG_F64(start), KILN_ARG_F64(step) };
        st = kiln_elementwise_launch(queue, ew, a->size, 3, v, num_wait, wait, event);
    }
    kiln_elementwise_release(ew);
    if (st != KILN_OK) {
        kiln_array_release(a);
        return kiln__error_prefix(st, "kiln_array_arange");
    }
    *array = a;
    return KILN_OK;
}
