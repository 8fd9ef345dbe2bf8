/* The one scalar rule (docs/api.md section 4): a kiln_arg value converted
 * to an array's dtype as NumPy 2's a[...] = value, through every call that
 * takes one (fill, full, mask_fill, reduce_initial, reduce_axes_initial).
 * The expected elements are NumPy's answers, worked by hand from its rules
 * (np.array(..., dtype) / np.float16(...) at these values); where NumPy
 * writes an undefined value with a warning (NaN or an out-of-range float
 * into an integer array), kiln refuses, as documented. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* One case: value into a one-element array of dtype; want: the element's
 * bytes, or NULL for a refusal that names the call, and mentions say. */
typedef struct {
    const char *what;
    kiln_dtype dtype;
    kiln_arg value;
    const void *want;
    const char *say;
} scalar_case;

#define BYTES(type, ...) ((const void *)&(const type){ __VA_ARGS__ })

static void check_fill(kiln_queue *q, const scalar_case *c) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t n = 3, es = kiln_dtype_size(c->dtype);
    kiln_array *a = NULL, *f = NULL;
    unsigned char got[3 * 16];
    memset(got, 0xab, sizeof got);
    if (!CHECK_OK(kiln_array_empty(ctx, c->dtype, 1, &n, &a)))
        return;
    kiln_status st = kiln_array_fill(q, a, c->value, 0, NULL, NULL);
    if (!c->want) {
        const char *m = kiln_last_error_message();
        CHECK_MSG(
            st == KILN_ERROR_INVALID_ARGUMENT && strstr(m, "kiln_array_fill") && strstr(m, c->say),
            "fill %s: status %d, '%s' (wanted a refusal saying '%s')", c->what, (int)st, m, c->say);
        /* the constructor refuses it the same way, and makes nothing */
        st = kiln_array_full(q, c->dtype, 1, &n, c->value, 0, NULL, NULL, &f);
        CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT && f == NULL &&
                      strstr(kiln_last_error_message(), "kiln_array_full"),
                  "full %s: status %d, '%s'", c->what, (int)st, kiln_last_error_message());
    } else if (st != KILN_OK) {
        CHECK_MSG(0, "fill %s: %s", c->what, kiln_last_error_message());
    } else if (CHECK_OK(kiln_array_read(q, a, got))) {
        int same = 1;
        for (size_t i = 0; i < n; i++)
            same &= memcmp(got + i * es, c->want, es) == 0;
        CHECK_MSG(same, "fill %s: element differs from NumPy's", c->what);
        if (CHECK_OK(kiln_array_full(q, c->dtype, 1, &n, c->value, 0, NULL, NULL, &f)) &&
            CHECK_OK(kiln_array_read(q, f, got)))
            CHECK_MSG(memcmp(got + es, c->want, es) == 0, "full %s: element differs", c->what);
    }
    KT_RELEASE(f, a);
}

static void test_fill_rule(kiln_queue *q) {
    const scalar_case cases[] = {
        /* integers into integers: in range or refused (NumPy: OverflowError) */
        { "300 -> int8", KILN_INT8, KILN_ARG_I64(300), NULL, "300 does not fit int8" },
        { "-129 -> int8", KILN_INT8, KILN_ARG_I32(-129), NULL, "-129" },
        { "-128 -> int8", KILN_INT8, KILN_ARG_I64(-128), BYTES(int8_t, -128), NULL },
        { "127 -> int8", KILN_INT8, KILN_ARG_U64(127), BYTES(int8_t, 127), NULL },
        { "-1 -> uint8", KILN_UINT8, KILN_ARG_I32(-1), NULL, "-1 does not fit uint8" },
        { "255 -> uint8", KILN_UINT8, KILN_ARG_I16(255), BYTES(uint8_t, 255), NULL },
        { "2^64-1 -> uint64", KILN_UINT64, KILN_ARG_U64(UINT64_MAX), BYTES(uint64_t, UINT64_MAX),
          NULL },
        { "2^64-1 -> int64", KILN_INT64, KILN_ARG_U64(UINT64_MAX), NULL, "does not fit int64" },
        { "int64 min -> int64", KILN_INT64, KILN_ARG_I64(INT64_MIN), BYTES(int64_t, INT64_MIN),
          NULL },
        { "65536 -> uint16", KILN_UINT16, KILN_ARG_I32(65536), NULL, "65536" },
        /* floats into integers: truncated toward zero; NaN, inf, out of range refused */
        { "2.7 -> int32", KILN_INT32, KILN_ARG_F64(2.7), BYTES(int32_t, 2), NULL },
        { "-2.7 -> int32", KILN_INT32, KILN_ARG_F64(-2.7), BYTES(int32_t, -2), NULL },
        { "-0.5 -> uint8", KILN_UINT8, KILN_ARG_F32(-0.5f), BYTES(uint8_t, 0), NULL },
        { "2^31-1 -> int32", KILN_INT32, KILN_ARG_F64(2147483647.0), BYTES(int32_t, INT32_MAX),
          NULL },
        { "2^31 -> int32", KILN_INT32, KILN_ARG_F64(2147483648.0), NULL,
          "2147483648 does not fit int32" },
        { "nan -> int16", KILN_INT16, KILN_ARG_F64(NAN), NULL, "nan" },
        { "inf -> int64", KILN_INT64, KILN_ARG_F32(INFINITY), NULL, "inf" },
        { "2^63 -> uint64", KILN_UINT64, KILN_ARG_F64(9223372036854775808.0),
          BYTES(uint64_t, (uint64_t)1 << 63), NULL },
        /* into floats: rounded to nearest; past the range inf */
        { "2^24+1 -> float32", KILN_FLOAT32, KILN_ARG_I64(16777217), BYTES(float, 16777216.0f),
          NULL },
        { "0.1 -> float32", KILN_FLOAT32, KILN_ARG_F64(0.1), BYTES(float, 0.1f), NULL },
        { "1e300 -> float32", KILN_FLOAT32, KILN_ARG_F64(1e300), BYTES(float, INFINITY), NULL },
        { "-1e300 -> float32", KILN_FLOAT32, KILN_ARG_F64(-1e300), BYTES(float, -INFINITY), NULL },
        { "true -> float64", KILN_FLOAT64, KILN_ARG_BOOL(1), BYTES(double, 1.0), NULL },
        { "2^53+1 -> float64", KILN_FLOAT64, KILN_ARG_I64(9007199254740993),
          BYTES(double, 9007199254740992.0), NULL },
        /* float16 (np.float16(x)) */
        { "1 -> float16", KILN_FLOAT16, KILN_ARG_F64(1.0), BYTES(uint16_t, 0x3c00), NULL },
        { "-2 -> float16", KILN_FLOAT16, KILN_ARG_I32(-2), BYTES(uint16_t, 0xc000), NULL },
        { "65504 -> float16", KILN_FLOAT16, KILN_ARG_F64(65504), BYTES(uint16_t, 0x7bff), NULL },
        { "65520 -> float16", KILN_FLOAT16, KILN_ARG_F64(65520), BYTES(uint16_t, 0x7c00), NULL },
        { "2^-24 -> float16", KILN_FLOAT16, KILN_ARG_F64(0x1p-24), BYTES(uint16_t, 0x0001), NULL },
        { "2^-25 -> float16", KILN_FLOAT16, KILN_ARG_F64(0x1p-25), BYTES(uint16_t, 0x0000), NULL },
        { "0.1 -> float16", KILN_FLOAT16, KILN_ARG_F64(0.1), BYTES(uint16_t, 0x2e66), NULL },
        { "-0.0 -> float16", KILN_FLOAT16, KILN_ARG_F64(-0.0), BYTES(uint16_t, 0x8000), NULL },
        { "half 1.5 -> float32", KILN_FLOAT32, KILN_ARG_F16_BITS(0x3e00), BYTES(float, 1.5f),
          NULL },
        /* into bool: non-zero is true (NaN too) */
        { "0.5 -> bool", KILN_BOOL, KILN_ARG_F64(0.5), BYTES(uint8_t, 1), NULL },
        { "0 -> bool", KILN_BOOL, KILN_ARG_I32(0), BYTES(uint8_t, 0), NULL },
        { "-0.0 -> bool", KILN_BOOL, KILN_ARG_F64(-0.0), BYTES(uint8_t, 0), NULL },
        { "nan -> bool", KILN_BOOL, KILN_ARG_F32(NAN), BYTES(uint8_t, 1), NULL },
        { "1j -> bool", KILN_BOOL, KILN_ARG_C128(0, 1), BYTES(uint8_t, 1), NULL },
        { "2^63 -> bool", KILN_BOOL, KILN_ARG_U64((uint64_t)1 << 63), BYTES(uint8_t, 1), NULL },
        /* complex: a real scalar has imaginary part 0; complex into real refused */
        { "2 -> complex64", KILN_COMPLEX64, KILN_ARG_F32(2), BYTES(float[2], 2, 0), NULL },
        { "1-2j -> complex64", KILN_COMPLEX64, KILN_ARG_C128(1, -2), BYTES(float[2], 1, -2), NULL },
        { "7 -> complex128", KILN_COMPLEX128, KILN_ARG_I8(7), BYTES(double[2], 7, 0), NULL },
        { "1+2j -> float64", KILN_FLOAT64, KILN_ARG_C64(1, 2), NULL, "complex value" },
        { "1+2j -> int32", KILN_INT32, KILN_ARG_C128(1, 2), NULL, "real part" },
        /* not a scalar at all */
        { "a buffer -> float32", KILN_FLOAT32, KILN_ARG_BUF(NULL), NULL, "not a scalar" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_fill(q, &cases[i]);
    printf("fill/full: %zu cases\n", sizeof cases / sizeof *cases);
}

/* The other calls that take a scalar: same rule, their own names. */
static void test_other_calls(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t n = 5, zero = 0;
    const int8_t h8[5] = { 1, -2, 3, -4, 5 };
    const uint8_t hm[5] = { 1, 0, 1, 0, 0 };
    kiln_array *a = NULL, *m = NULL, *e = NULL, *r = NULL;
    if (!CHECK_OK(kiln_array_from_host(ctx, KILN_INT8, 1, &n, h8, &a)) ||
        !CHECK_OK(kiln_array_from_host(ctx, KILN_BOOL, 1, &n, hm, &m)) ||
        !CHECK_OK(kiln_array_empty(ctx, KILN_UINT8, 1, &zero, &e)))
        goto done;
    /* a[m] = 2.9: truncated to 2 (NumPy: a[m] = 2.9 on int8) */
    int8_t got[5];
    if (CHECK_OK(kiln_array_mask_fill(q, a, m, KILN_ARG_F64(2.9), 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, a, got)))
        CHECK(got[0] == 2 && got[1] == -2 && got[2] == 2 && got[3] == -4 && got[4] == 5);
    CHECK_STATUS(kiln_array_mask_fill(q, a, m, KILN_ARG_I32(200), 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_mask_fill") &&
          strstr(kiln_last_error_message(), "200 does not fit int8"));
    /* sum of int8 is int64: initial 2.5 becomes 2, as a fill value would */
    int64_t s = 0;
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_SUM, a, KILN_ARG_F64(2.5), &s)))
        CHECK_MSG(s == 2 + -2 + 2 + -4 + 5 + 2, "sum with initial 2.5: %lld", (long long)s);
    /* max of an empty uint8 array, initial -1: does not fit uint8 */
    uint8_t mx = 0;
    CHECK_STATUS(kiln_array_reduce_initial(q, KILN_REDUCE_MAX, e, KILN_ARG_I32(-1), &mx),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_reduce_initial") &&
          strstr(kiln_last_error_message(), "uint8"));
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_MAX, e, KILN_ARG_BOOL(1), &mx)))
        CHECK(mx == 1);
    /* along an axis: an empty axis gives the initial value, converted to
     * uint8 as a fill value (7.5 -> 7) */
    int axis = 0;
    uint8_t one = 0;
    if (CHECK_OK(kiln_array_reduce_axes_initial(q, KILN_REDUCE_MIN, e, 1, &axis, KILN_ARG_F32(7.5f),
                                                1, 0, NULL, NULL, &r)) &&
        CHECK_OK(kiln_array_read(q, r, &one)))
        CHECK_MSG(one == 7, "min over an empty axis, initial 7.5 into uint8: %u", one);
    kiln_array_release(r);
    r = NULL;
    CHECK_STATUS(kiln_array_reduce_axes_initial(q, KILN_REDUCE_MIN, e, 1, &axis, KILN_ARG_C64(1, 1),
                                                0, 0, NULL, NULL, &r),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL && strstr(kiln_last_error_message(), "kiln_array_reduce_axes_initial"));
done:
    KT_RELEASE(r, e, m, a);
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(test_fill_rule, test_other_calls);
    return kt_report();
}
