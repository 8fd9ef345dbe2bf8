/* The complex functions of issue 42 item 3 (sin ... atanh, log1p, expm1,
 * log2, log10, sign, round, pow) on complex64 and complex128 against
 * NumPy's answers (tests/numpy_complex_fn.h, scripts/gen-numpy-complex.py):
 * awkward values (signed zeros, branch cuts, tiny and huge parts, infinite
 * and NaN parts) and random ones, on sizes 0, 1, a prime and several
 * work-groups (the table's values repeated). A finite part matches within
 * ulps of itself or of the result's magnitude (the part may be the small
 * remainder of a cancellation); an infinite one exactly; a NaN by being
 * NaN; a zero of the result to its sign where the input has an infinite or
 * NaN part or a zero one (Annex G's special values). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "numpy_complex_fn.h"

static int has_fp64(kiln_queue *q) {
    kiln_device_info info = { 0 };
    return kiln_device_get_info(kiln_queue_device(q), &info) == KILN_OK && info.fp64;
}

/* Element i of a host complex array (float pairs when c64) as doubles. */
static void get(int c64, const void *p, size_t i, double v[2]) {
    for (int k = 0; k < 2; k++)
        v[k] = c64 ? (double)((const float *)p)[2 * i + k] : ((const double *)p)[2 * i + k];
}

static void put(int c64, void *p, size_t i, const double v[2]) {
    for (int k = 0; k < 2; k++) {
        if (c64)
            ((float *)p)[2 * i + k] = (float)v[k];
        else
            ((double *)p)[2 * i + k] = v[k];
    }
}

/* Whether got matches want: within ulps (eps the dtype's) of itself or
 * of mag (the result's finite magnitude); a zero to its sign when strict. */
static int part_ok(double got, double want, double mag, double eps, int strict) {
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    if (want == 0 && got == 0)
        return !strict || signbit(got) == signbit(want);
    double err = fabs(got - want);
    return err <= 16 * eps * fabs(want) || err <= 8 * eps * mag;
}

static int special(const double v[2]) {
    return !isfinite(v[0]) || !isfinite(v[1]) || v[0] == 0 || v[1] == 0;
}

/* Checks the results z of case c over n elements; returns the bad count
 * and prints the first few. */
static size_t check_results(const npc_case *c, const void *z, size_t n) {
    double eps = c->c64 ? 1.1920928955078125e-7 : 2.220446049250313e-16;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const double *w = c->z[i % c->n], *a = c->a[i % c->n];
        double g[2];
        get(c->c64, z, i, g);
        double mag = hypot(isfinite(w[0]) ? w[0] : 0, isfinite(w[1]) ? w[1] : 0);
        /* log1p is NumPy's log|1 + z|: an ulp of |1 + z| (hypot is not
         * correctly rounded on every device) moves it by eps absolute */
        if (!strcmp(c->name, "log1p") && isfinite(a[0]) && isfinite(a[1]))
            mag = fmax(mag, hypot(1 + a[0], a[1]));
        /* pow: exp(b log a) magnifies log's error by |b log a| */
        double k = c->arity == 2 ? 1 + hypot(c->b[i % c->n][0], c->b[i % c->n][1]) *
                                           (fabs(log(hypot(a[0], a[1]))) + 4)
                                 : 1;
        if (!(k <= 1e4)) /* a zero or infinite base, b = 0 */
            k = 1e4;
        int strict = c->arity == 1 && special(a); /* Annex G's zeros */
        if (part_ok(g[0], w[0], mag, k * eps, strict) && part_ok(g[1], w[1], mag, k * eps, strict))
            continue;
        if (c->arity == 2 && (isinf(w[0]) || isinf(w[1])) &&
            !isfinite(g[0]) + !isfinite(g[1]) >= 1 && !isfinite(w[0]) == !isfinite(g[0]) &&
            !isfinite(w[1]) == !isfinite(g[1]))
            continue; /* pow overflowing: inf - inf in one part or not */
        if (bad++ < 6 && i < c->n)
            printf("  %s(%s) (%a, %a)%s: got (%a, %a), NumPy (%a, %a)\n", c->name,
                   c->c64 ? "complex64" : "complex128", a[0], a[1], c->arity == 2 ? " ** b" : "",
                   g[0], g[1], w[0], w[1]);
    }
    return bad;
}

static void run_case(kiln_queue *q, const npc_case *c, size_t n) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_dtype d = c->c64 ? KILN_COMPLEX64 : KILN_COMPLEX128;
    size_t es = kiln_dtype_size(d);
    char *x = malloc(n * es + 16), *y = malloc(n * es + 16), *z = malloc(n * es + 16);
    for (size_t i = 0; i < n; i++) {
        put(c->c64, x, i, c->a[i % c->n]);
        if (c->arity == 2)
            put(c->c64, y, i, c->b[i % c->n]);
    }
    kiln_array *X = NULL, *Y = NULL, *Z = NULL;
    CHECK_OK(kiln_array_from_host(ctx, d, 1, &n, x, &X));
    CHECK_OK(kiln_array_from_host(ctx, d, 1, &n, y, &Y));
    CHECK_OK(kiln_array_empty(ctx, d, 1, &n, &Z));
    kiln_status st = c->arity == 2
                         ? kiln_array_binary_out(q, (kiln_binary_op)c->op, Z, X, Y, 0, NULL, NULL)
                         : kiln_array_unary_out(q, (kiln_unary_op)c->op, Z, X, 0, NULL, NULL);
    CHECK_MSG(st == KILN_OK, "%s(%s) n=%zu: status %d: %s", c->name, kiln_dtype_name(d), n, (int)st,
              kiln_last_error_message());
    if (st == KILN_OK && n) {
        CHECK_OK(kiln_array_read(q, Z, z));
        size_t bad = check_results(c, z, n);
        CHECK_MSG(bad == 0, "%s(%s) n=%zu: %zu of %zu differ from NumPy %s", c->name,
                  kiln_dtype_name(d), n, bad, n, NPC_NUMPY_VERSION);
    }
    KT_RELEASE(X, Y, Z);
    KT_FREE(x, y, z);
}

/* The dtype the op table gives, and pow with a real scalar exponent. */
static void check_table(kiln_queue *q) {
    for (size_t k = 0; k < sizeof npc_cases / sizeof npc_cases[0]; k++) {
        const npc_case *c = &npc_cases[k];
        kiln_dtype d = c->c64 ? KILN_COMPLEX64 : KILN_COMPLEX128;
        kiln_dtype r = c->arity == 2 ? kiln_dtype_binary_result((kiln_binary_op)c->op, d, d)
                                     : kiln_dtype_unary_result((kiln_unary_op)c->op, d);
        CHECK_MSG(r == d, "%s(%s): result dtype %d", c->name, kiln_dtype_name(d), (int)r);
    }
    kiln_context *ctx = kiln_queue_context(q);
    float x[4] = { 3, -4, 0, 0 }, z[4];
    size_t n = 2;
    kiln_array *X = NULL, *Z = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_COMPLEX64, 1, &n, x, &X));
    CHECK_OK(kiln_array_empty(ctx, KILN_COMPLEX64, 1, &n, &Z));
    CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_POW, Z, X, KILN_ARG_F64(2.0), 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Z, z));
    /* (3 - 4i)^2 = -7 - 24i exactly; 0^2 = 0 */
    CHECK_MSG(z[0] == -7 && z[1] == -24 && z[2] == 0 && z[3] == 0, "pow scalar: (%g, %g) (%g, %g)",
              z[0], z[1], z[2], z[3]);
    KT_RELEASE(X, Z);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    int fp64 = has_fp64(q);
    if (!fp64)
        printf("  complex128 skipped: no fp64 on this device\n");
    static const size_t sizes[] = { 0, 1, 97, 1031 };
    for (size_t k = 0; k < sizeof npc_cases / sizeof npc_cases[0]; k++) {
        if (!npc_cases[k].c64 && !fp64)
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            run_case(q, &npc_cases[k], sizes[s]);
    }
    check_table(q);
}

int main(void) {
    printf("NumPy %s tables\n", NPC_NUMPY_VERSION);
    kt_for_each_device(run, NULL);
    return kt_report();
}
