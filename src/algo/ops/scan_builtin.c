/* The built-in scans over arrays (kiln_array_cumsum_out / cumprod): scan
 * generators from the context's cache. */
#include <stdio.h>

#include "algo/prim/prim.h"
#include "algo/prim/scan.h"
#include "base/error.h"

static kiln_status cum(kiln_queue *queue, kiln_array *out, kiln_array *a, int exclusive, int prod,
                       size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    const char *what = prod ? "kiln_array_cumprod_out" : "kiln_array_cumsum_out";
    if (event)
        *event = NULL;
    if (!queue || !out || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue and arrays are required",
                               what);
    if (a->dtype == KILN_COMPLEX64 || a->dtype == KILN_COMPLEX128)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: complex dtypes are not supported",
                               what);
    if (a->dtype == KILN_BOOL) /* NumPy sums bools in int64: convert first */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: bool is not numeric: convert it first (kiln_array_astype_out, "
                               "to int64 as NumPy's cumsum)",
                               what);
    if (out->dtype != a->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: dtypes %s and %s differ", what,
                               kiln_dtype_name(out->dtype), kiln_dtype_name(a->dtype));
    if (!kiln_dtype_size(a->dtype))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown dtype %d", what,
                               (int)a->dtype);
    const char *t = kiln_dtype_name(a->dtype);
    /* float16: scanned in float from the ushort bits, each output rounded
     * once to half (the running value stays float). */
    int f16 = a->dtype == KILN_FLOAT16;
    char args[96];
    snprintf(args, sizeof args, "const %s *x, %s *y", f16 ? "ushort" : t, f16 ? "ushort" : t);
    kiln_scan_desc d =
        KILN_SCAN_DESC(.arguments = args, .scan_type = f16 ? "float" : t,
                       .neutral = prod ? "1" : "0", .scan = prod ? "a*b" : "a+b",
                       .input = f16 ? "kiln_h2f(x[i])" : "x[i]",
                       .output = f16 ? (exclusive ? "y[i] = kiln_f2h(prev_item)"
                                                  : "y[i] = kiln_f2h(item)")
                                     : (exclusive ? "y[i] = prev_item" : "y[i] = item"),
                       .name = prod ? (exclusive ? "kiln_cumprod_ex" : "kiln_cumprod")
                                    : (exclusive ? "kiln_cumsum_ex" : "kiln_cumsum"));
    /* The scan object comes from the context's cache (built once). */
    kiln_context *ctx = kiln_queue_context(queue);
    char key[256];
    snprintf(key, sizeof key, "scan|%s|%s", d.name, t);
    kiln__scan_make_arg ma = { ctx, &d };
    kiln__gen *gen = NULL;
    kiln_status st = kiln__gen_cached(ctx, key, kiln__scan_make, &ma, &gen);
    kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out) };
    if (st == KILN_OK)
        st = kiln_scan_launch(queue, (kiln_scan *)gen, a->size, 2, v, num_wait, wait, event);
    kiln__gen_release(gen);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

kiln_status kiln_array_cumsum_out(kiln_queue *queue, kiln_array *out, kiln_array *a, int exclusive,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return cum(queue, out, a, exclusive, 0, num_wait, wait, event);
}

kiln_status kiln_array_cumprod_out(kiln_queue *queue, kiln_array *out, kiln_array *a, int exclusive,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return cum(queue, out, a, exclusive, 1, num_wait, wait, event);
}
