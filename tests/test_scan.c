/* Scans: cumsum/cumprod (inclusive and exclusive) over dtypes at awkward
 * sizes; a NON-commutative operator (composition of affine maps
 * x -> a*x + b mod 2^32) that catches any reordering, in an 8-byte and a
 * 24-byte struct; segmented scans with single-element segments, a start at
 * 0 and none at all; prev_item; strided views; build errors and
 * mismatches. The sizes (up to 2^20+1) span hundreds of tiles of the
 * single-pass scans. ctest runs this program twice: as is, and with
 * KILN_SCAN_VARIANT=onepass (the portable single-pass template, which is
 * otherwise used on OpenCL GPUs only). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* X holding the host's n elements x of dtype d, Y its cumsum (prod: its
 * cumprod), read back into y. */
static void scan_from_host(kiln_queue *q, int prod, kiln_dtype d, size_t n, const void *x, void *y,
                           kiln_array **X, kiln_array **Y) {
    kiln_context *c = kiln_queue_context(q);
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, X));
    CHECK_OK(kiln_array_empty(c, d, 1, &n, Y));
    if (prod)
        CHECK_OK(kiln_array_cumprod_out(q, *Y, *X, 0, 0, NULL, NULL));
    else
        CHECK_OK(kiln_array_cumsum_out(q, *Y, *X, 0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, *Y, y));
}

static void t_cumsum(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    static const kiln_dtype ds[] = { KILN_INT8,  KILN_UINT16, KILN_INT32,   KILN_UINT32,
                                     KILN_INT64, KILN_UINT64, KILN_FLOAT32, KILN_FLOAT64 };
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, (1u << 20) + 1);
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
        kiln_dtype d = ds[di];
        if (d == KILN_FLOAT64 && !info.fp64)
            continue;
        size_t es = kiln_dtype_size(d);
        for (size_t si = 0; si < ns; si++) {
            size_t n = sizes[si];
            if (d != KILN_INT32 && si % 3 != 2)
                continue;
            /* values in [0, 4): the int32/float sums stay exact */
            int64_t *ref = malloc((n + 1) * sizeof *ref);
            char *x = malloc(n * es + 8), *y = malloc(n * es + 8);
            int64_t acc = 0;
            for (size_t i = 0; i < n; i++) {
                int v = (int)(kt_rand_u64() % 4);
                kt_set(d, x, i, v);
                acc += v;
                ref[i] = acc;
            }
            kiln_array *X = NULL, *Y = NULL;
            scan_from_host(q, 0, d, n, x, y, &X, &Y);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                /* kt_get is exact here: the sums stay below 2^22 */
                int64_t got = (int64_t)kt_get(d, y, i);
                int64_t want = ref[i];
                if (d == KILN_INT8)
                    want = (int8_t)want;
                if (d == KILN_UINT16)
                    want = (uint16_t)want;
                bad += got != want;
            }
            CHECK_MSG(bad == 0, "cumsum %s n=%zu: %zu wrong", kiln_dtype_name(d), n, bad);
            if (d == KILN_INT32) {
                /* exclusive, in place */
                CHECK_OK(kiln_array_cumsum_out(q, X, X, 1, 0, NULL, NULL));
                CHECK_OK(kiln_array_read(q, X, y));
                bad = 0;
                for (size_t i = 0; i < n; i++)
                    bad += ((int32_t *)y)[i] != (i ? ref[i - 1] : 0);
                CHECK_MSG(bad == 0,
                          "exclusive in-place cumsum n=%zu: %zu "
                          "wrong",
                          n, bad);
            }
            KT_RELEASE(X, Y);
            KT_FREE(x, y, ref);
        }
    }
    /* cumprod of int64 with ±1 and a few 2s */
    size_t n = 4093;
    int64_t *x = malloc(n * 8), *y = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        x[i] = i % 97 == 0 ? 2 : ((kt_rand_u64() & 1) ? 1 : -1);
    kiln_array *X = NULL, *Y = NULL;
    scan_from_host(q, 1, KILN_INT64, n, x, y, &X, &Y);
    int64_t p = 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        p *= x[i];
        bad += y[i] != p;
    }
    CHECK_MSG(bad == 0, "cumprod: %zu wrong", bad);
    /* cumsum over a reversed strided view */
    CHECK_OK(kiln_array_fill(q, Y, KILN_ARG_I64(0), 0, NULL, NULL));
    kiln_array *rv = NULL;
    kiln_slice sl = KILN_SLICE_REVERSED;
    CHECK_OK(kiln_array_view(X, &sl, &rv));
    CHECK_OK(kiln_array_cumsum_out(q, Y, rv, 0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Y, y));
    int64_t s = 0;
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[n - 1 - i];
        bad += y[i] != s;
    }
    CHECK_MSG(bad == 0, "reversed-view cumsum: %zu wrong", bad);
    size_t m = 10;
    kiln_array *F = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &m, &F));
    CHECK_STATUS(kiln_array_cumsum_out(q, F, X, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    KT_RELEASE(F, rv, X, Y);
    KT_FREE(x, y);
}

static const char *kAffPre =
    "typedef struct { uint a, b; } aff;\n"
    "KILN_FUNC aff mk(uint a, uint b) { aff r; r.a = a; r.b = b; return r; }\n"
    /* x -> f then g: g.a*(f.a*x + f.b) + g.b */
    "KILN_FUNC aff then(aff f, aff g) { return mk(g.a*f.a, g.a*f.b + g.b); }\n";

/* 24 bytes (no packed status word; the OpenCL template's in-place totals
 * scan): the affine map, the number of items and the sum of the b's since
 * the segment start, and padding. */
static const char *kWidePre =
    "typedef struct { uint a, b, n, z, p0, p1; } wide;\n"
    "KILN_FUNC wide wmk(uint a, uint b, uint n) { wide r; r.a = a; r.b = b; "
    "r.n = n; r.z = n ? b : 0u; r.p0 = 0u; r.p1 = 0u; return r; }\n"
    "KILN_FUNC wide wthen(wide f, wide g) { wide r = wmk(g.a*f.a, "
    "g.a*f.b + g.b, f.n + g.n); r.z = f.z + g.z; return r; }\n";

typedef struct {
    uint32_t a, b;
} aff;

static aff then(aff f, aff g) {
    aff r = { g.a * f.a, g.a * f.b + g.b };
    return r;
}

/* segmented = 0: plain; 1: with flags. wide: the 24-byte struct (OA gets
 * a checksum of its other fields). Checks item and prev_item. */
static void t_affine(kiln_queue *q, int segmented, int wide) {
    kiln_context *c = kiln_queue_context(q);
    kiln_scan_desc d =
        KILN_SCAN_DESC(segmented ? "const uint *A, const uint *B, const uchar *F, uint *OA, "
                                   "uint *OB, uint *PB"
                                 : "const uint *A, const uint *B, uint *OA, uint *OB, uint "
                                   "*PB",
                       "aff", 8, "mk(1u, 0u)", "then(a, b)", "mk(A[i], B[i])",
                       "OA[i] = item.a; OB[i] = item.b; PB[i] = prev_item.b",
                       segmented ? "F[i]" : NULL, kAffPre, segmented ? "affine_seg" : "affine");
    if (wide) {
        d.scan_type = "wide";
        d.scan_size = 24;
        d.neutral = "wmk(1u, 0u, 0u)";
        d.scan = "wthen(a, b)";
        d.input = "wmk(A[i], B[i], 1u)";
        d.output = "OA[i] = item.a ^ (item.n << 20) ^ (item.z << 7) ^ "
                   "item.p0 ^ item.p1; OB[i] = item.b; PB[i] = prev_item.b";
        d.preamble = kWidePre;
        d.name = segmented ? "wide_seg" : "wide";
    }
    kiln_scan *s = NULL;
    if (!CHECK_OK(kiln_scan_create(c, &d, &s)))
        return;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, (1u << 20) + 1);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si];
        if (wide && si % 2 && si + 1 != ns) /* half the sizes, the largest */
            continue;
        uint32_t *A = malloc(n * 4 + 4), *B = malloc(n * 4 + 4), *OA = malloc(n * 4 + 4),
                 *OB = malloc(n * 4 + 4), *PB = malloc(n * 4 + 4);
        uint8_t *F = malloc(n + 1);
        int mode = (int)(si % 3); /* flags: random, runs of starts, none */
        for (size_t i = 0; i < n; i++) {
            A[i] = (uint32_t)(kt_rand_u64() % 5) + 1;
            B[i] = (uint32_t)(kt_rand_u64() % 1000);
            if (mode == 0)
                F[i] = (kt_rand_u64() % 50) == 0;
            else if (mode == 1)
                F[i] = (i % 300) < 5; /* five single-element segments in a row */
            else
                F[i] = 0;
        }
        if (n && mode == 0)
            F[0] = 1;
        kiln_array *dA = NULL, *dB = NULL, *dF = NULL, *dOA = NULL, *dOB = NULL, *dPB = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, A, &dA));
        CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, B, &dB));
        CHECK_OK(kiln_array_from_host(c, KILN_UINT8, 1, &n, F, &dF));
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &dOA));
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &dOB));
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &dPB));
        kiln_arg v[6];
        size_t nv = 0;
        v[nv++] = KILN_ARG_ARRAY(dA);
        v[nv++] = KILN_ARG_ARRAY(dB);
        if (segmented)
            v[nv++] = KILN_ARG_ARRAY(dF);
        v[nv++] = KILN_ARG_ARRAY(dOA);
        v[nv++] = KILN_ARG_ARRAY(dOB);
        v[nv++] = KILN_ARG_ARRAY(dPB);
        kiln_event *e = NULL;
        CHECK_OK(kiln_scan_launch(q, s, n, nv, v, 0, NULL, &e));
        CHECK_OK(kiln_array_read_async(q, dOA, OA, 1, &e, NULL));
        CHECK_OK(kiln_array_read_async(q, dOB, OB, 1, &e, NULL));
        CHECK_OK(kiln_array_read_async(q, dPB, PB, 1, &e, NULL));
        CHECK_OK(kiln_queue_finish(q));
        kiln_event_release(e);
        aff acc = { 1, 0 };
        uint32_t cnt = 0, z = 0; /* wide: items and sum of b since start */
        size_t bad = 0, first = (size_t)-1;
        for (size_t i = 0; i < n; i++) {
            aff prev = acc;
            if (segmented && F[i]) {
                prev = (aff){ 1, 0 };
                cnt = z = 0;
            }
            aff in = { A[i], B[i] };
            acc = then(prev, in);
            cnt++;
            z += B[i];
            uint32_t wa = wide ? acc.a ^ (cnt << 20) ^ (z << 7) : acc.a;
            if (OA[i] != wa || OB[i] != acc.b || PB[i] != prev.b) {
                if (first == (size_t)-1)
                    first = i;
                bad++;
            }
        }
        CHECK_MSG(bad == 0, "%s%s n=%zu flags=%d: %zu wrong, first at %zu",
                  wide ? "wide affine" : "affine", segmented ? " segmented" : "", n, mode, bad,
                  first);
        KT_RELEASE(dA, dB, dF, dOA, dOB, dPB);
        KT_FREE(A, B, F, OA, OB, PB);
    }
    kiln_scan_release(s);
}

static void t_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_scan_desc d = KILN_SCAN_DESC("const int *x, int *y", "int", 0, "0", "a + b", "x[i]",
                                      "y[i] = itme", NULL, NULL, "typo");
    kiln_scan *s = (kiln_scan *)1;
    CHECK_STATUS(kiln_scan_create(c, &d, &s), KILN_ERROR_BUILD);
    CHECK(s == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "itme") != NULL, "%s", kiln_last_error_message());
    CHECK_MSG(strstr(kiln_last_build_log(), "output") != NULL, "%s", kiln_last_build_log());
    d.output = "y[i] = item";
    d.scan_type = "struct nope";
    CHECK_STATUS(kiln_scan_create(c, &d, &s), KILN_ERROR_INVALID_ARGUMENT);
    d.scan_type = "int";
    d.scan = NULL;
    CHECK_STATUS(kiln_scan_create(c, &d, &s), KILN_ERROR_NULL_HANDLE);
    kiln_scan_release(NULL);
    CHECK_STATUS(kiln_scan_retain(NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_cumsum_out(NULL, NULL, NULL, 0, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    /* a descriptor not made with the macro */
    d.scan = "a + b";
    kiln_scan_desc raw = d;
    raw.struct_size = 0;
    CHECK_STATUS(kiln_scan_create(c, &raw, &s), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "KILN_SCAN_DESC") != NULL, "%s",
              kiln_last_error_message());
    /* a descriptor of a later, larger version: the known prefix is read */
    struct {
        kiln_scan_desc d;
        char future[16];
    } later = { d, { 0 } };
    later.d.struct_size = sizeof later;
    later.d.name = "later";
    s = NULL;
    CHECK_OK(kiln_scan_create(c, &later.d, &s));
    kiln_scan_release(s);
    /* a 200-character name: refused before any kernel name is formed */
    char longname[201];
    kt_long_name(longname, sizeof longname, 'q');
    d.name = longname;
    CHECK_STATUS(kiln_scan_create(c, &d, &s), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(s == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "63") != NULL, "%s", kiln_last_error_message());
    /* explicit range: arrays of another size, n = 0, retain */
    d.name = "rng";
    if (!CHECK_OK(kiln_scan_create(c, &d, &s)))
        return;
    size_t n = 10, m = 12;
    int x[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, y[10] = { 0 };
    kiln_array *X = NULL, *Y = NULL, *Z = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, x, &X));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &Z));
    kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Y) };
    kiln_arg vz[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Z) };
    CHECK_STATUS(kiln_scan_launch(q, s, 11, 2, v, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH); /* n past the arrays' end */
    CHECK_STATUS(kiln_scan_launch(q, s, 10, 2, vz, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH); /* y has 12 elements */
    kiln_arg vs[2] = { KILN_ARG_ARRAY(X), KILN_ARG_I32(1) };
    CHECK_STATUS(kiln_scan_launch(q, s, 10, 2, vs, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS); /* a scalar for an array */
    kiln_event *e = NULL;
    CHECK_STATUS(kiln_scan_launch(q, s, 0, 2, v, 0, NULL, &e),
                 KILN_ERROR_MISMATCH); /* the arrays have 10, not 0 */
    CHECK(e == NULL);
    CHECK_OK(kiln_scan_retain(s));
    kiln_scan_release(s); /* the retain's reference: s stays usable */
    CHECK_OK(kiln_scan_launch(q, s, n, 2, v, 0, NULL, NULL));
    kiln_scan_release(s);
    CHECK_OK(kiln_array_read(q, Y, y));
    CHECK_MSG(y[0] == 1 && y[9] == 55, "scan: %d %d", y[0], y[9]);
    /* n = 0 over empty arrays: nothing runs, the event completes */
    kiln_array *E0 = NULL, *E1 = NULL;
    size_t zero = 0;
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &E0));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &E1));
    kiln_arg ve[2] = { KILN_ARG_ARRAY(E0), KILN_ARG_ARRAY(E1) };
    s = NULL;
    if (CHECK_OK(kiln_scan_create(c, &d, &s)) &&
        CHECK_OK(kiln_scan_launch(q, s, 0, 2, ve, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
    }
    KT_RELEASE(s, E0, E1, X, Y, Z);
}

/* Scans of the form y[i] = item / prev_item of x[i] (kiln_array_cumsum_out,
 * and user scans written that way): the single-pass templates move quads
 * of 4-byte items in 16-byte accesses when both arrays are aligned, item
 * by item otherwise (scan_variants.c vec_io). Views at element offsets
 * 0..4 of larger arrays give every pairing of aligned and unaligned; the
 * elements around each output view must stay untouched. The user scans
 * spell the form with spaces and a semicolon, and one variant is not of
 * the form (a parenthesised input) and takes the item-by-item path. */
static void t_quads(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const kiln_dtype ds[] = { KILN_INT32, KILN_FLOAT32, KILN_UINT32 };
    static const size_t sizes[] = { 1, 4, 131, 4096, 24577, 100003 };
    static const char *const outs[] = { "y [ i ]= item ;", "y[i] = prev_item", "y[i] = item" };
    static const char *const ins[] = { "x [ i ]", "x[i]", "(x[i])" };
    const size_t nmax = 100003, pad = 8;
    int32_t *x = malloc((nmax + pad) * 4), *y = malloc((nmax + pad) * 4);
    int64_t *ref = malloc(nmax * sizeof *ref);
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
        kiln_dtype d = ds[di];
        char args[64];
        snprintf(args, sizeof args, "const %s *x, %s *y", kiln_dtype_name(d), kiln_dtype_name(d));
        for (int form = 0; form < 5; form++) {
            /* 0/1: kiln_array_cumsum_out inclusive / exclusive; 2..4: user
             * scans (outs/ins above) */
            int excl = form == 1 || form == 3;
            kiln_scan *sc = NULL;
            if (form >= 2) {
                kiln_scan_desc sd =
                    KILN_SCAN_DESC(args, kiln_dtype_name(d), 0, "0", "a + b", ins[form - 2],
                                   outs[form - 2], NULL, NULL, "quad_scan");
                if (!CHECK_OK(kiln_scan_create(c, &sd, &sc)))
                    continue;
            }
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                size_t n = sizes[si];
                size_t ox = (si + (size_t)form) % 5, oy = (si * 3 + di) % 5;
                size_t nb = n + pad;
                for (size_t i = 0; i < nb; i++) {
                    int v = (int)(kt_rand_u64() % 4);
                    if (d == KILN_FLOAT32)
                        ((float *)x)[i] = (float)v;
                    else
                        x[i] = v;
                    y[i] = 0x5a5a5a5a;
                }
                int64_t acc = 0;
                for (size_t i = 0; i < n; i++) {
                    int64_t v =
                        d == KILN_FLOAT32 ? (int64_t)((float *)x)[ox + i] : (int64_t)x[ox + i];
                    ref[i] = excl ? acc : acc + v;
                    acc += v;
                }
                kiln_array *X = NULL, *Y = NULL, *XV = NULL, *YV = NULL;
                CHECK_OK(kiln_array_from_host(c, d, 1, &nb, x, &X));
                CHECK_OK(kiln_array_from_host(c, d, 1, &nb, y, &Y));
                kiln_slice sx = KILN_SLICE((ptrdiff_t)ox, (ptrdiff_t)(ox + n), 1);
                kiln_slice sy = KILN_SLICE((ptrdiff_t)oy, (ptrdiff_t)(oy + n), 1);
                CHECK_OK(kiln_array_view(X, &sx, &XV));
                CHECK_OK(kiln_array_view(Y, &sy, &YV));
                if (form < 2) {
                    CHECK_OK(kiln_array_cumsum_out(q, YV, XV, excl, 0, NULL, NULL));
                } else {
                    kiln_arg v[2] = { KILN_ARG_ARRAY(XV), KILN_ARG_ARRAY(YV) };
                    CHECK_OK(kiln_scan_launch(q, sc, n, 2, v, 0, NULL, NULL));
                }
                CHECK_OK(kiln_array_read(q, Y, y));
                size_t bad = 0, outside = 0;
                for (size_t i = 0; i < nb; i++) {
                    if (i < oy || i >= oy + n) {
                        outside += y[i] != 0x5a5a5a5a;
                        continue;
                    }
                    int64_t got = d == KILN_FLOAT32  ? (int64_t)((float *)y)[i]
                                  : d == KILN_UINT32 ? (int64_t)(uint32_t)y[i]
                                                     : (int64_t)y[i];
                    bad += got != ref[i - oy];
                }
                CHECK_MSG(bad == 0 && outside == 0,
                          "quads %s form %d n=%zu x+%zu y+%zu: %zu wrong, "
                          "%zu written outside",
                          kiln_dtype_name(d), form, n, ox, oy, bad, outside);
                KT_RELEASE(XV, YV, X, Y);
            }
            kiln_scan_release(sc);
        }
    }
    KT_FREE(x, y, ref);
}

/* Multi-tile scans back to back on one queue, read only at the end: each
 * launch finds the tile status words of the launches before it (the warp
 * scan no longer zeroes them: a word of an earlier epoch must read as no
 * status), longer and shorter scans mixed so that a scan meets words two
 * launches old beyond the previous one's tiles. int32 (status and value
 * packed in one word) and float64 (separate status and value words). */
static void t_repeat(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    static const size_t ns[6] = { 100003, 20011, 100003, 6145, 100003, 49157 };
    for (int wide = 0; wide < 2; wide++) {
        if (wide && !info.fp64)
            continue;
        kiln_dtype d = wide ? KILN_FLOAT64 : KILN_INT32;
        size_t es = kiln_dtype_size(d), nmax = 100003;
        kiln_array *X[2] = { NULL, NULL }, *Y[6] = { NULL };
        int64_t *ref[2];
        char *x = malloc(nmax * es), *y = malloc(nmax * es);
        for (int k = 0; k < 2; k++) {
            int64_t acc = 0;
            ref[k] = malloc(nmax * sizeof *ref[k]);
            for (size_t i = 0; i < nmax; i++) {
                int v = (int)(kt_rand_u64() % 4) + k; /* the two differ */
                if (wide)
                    ((double *)x)[i] = v;
                else
                    ((int32_t *)x)[i] = v;
                ref[k][i] = acc += v;
            }
            CHECK_OK(kiln_array_from_host(c, d, 1, &nmax, x, &X[k]));
        }
        for (int r = 0; r < 6; r++) {
            kiln_slice head = KILN_SLICE(0, (int64_t)ns[r], 1);
            kiln_array *xv = NULL;
            CHECK_OK(kiln_array_empty(c, d, 1, &ns[r], &Y[r]));
            CHECK_OK(kiln_array_view(X[r % 2], &head, &xv));
            CHECK_OK(kiln_array_cumsum_out(q, Y[r], xv, 0, 0, NULL, NULL));
            kiln_array_release(xv);
        }
        for (int r = 0; r < 6; r++) {
            size_t bad = 0;
            CHECK_OK(kiln_array_read(q, Y[r], y));
            for (size_t i = 0; i < ns[r]; i++) {
                int64_t got = wide ? (int64_t)((double *)y)[i] : (int64_t)((int32_t *)y)[i];
                bad += got != ref[r % 2][i];
            }
            CHECK_MSG(bad == 0, "repeat %s scan %d (n=%zu): %zu wrong", kiln_dtype_name(d), r,
                      ns[r], bad);
            kiln_array_release(Y[r]);
        }
        for (int k = 0; k < 2; k++) {
            kiln_array_release(X[k]);
            free(ref[k]);
        }
        KT_FREE(x, y);
    }
}

/* A new context whose first scan is one tile, then longer ones: the first
 * user of the new status buffer must leave it zeroed for the next (the
 * warp scan zeroes it only when new), even when it did not need the words
 * itself. The pool is first given back a block of words that look like
 * the next launches' status words, so a missing fill reads them. */
static void t_fresh(kiln_queue *q0) {
    kiln_device *dev = kiln_queue_device(q0);
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    if (!KT_OPEN_QUEUE(dev, 0, &c, &q))
        return;
    size_t nj = 1 << 14;
    uint64_t *junk = malloc(nj * sizeof *junk);
    for (size_t i = 0; i < nj; i++) /* epoch 1 + (i % 3), inclusive, 777 */
        junk[i] = ((uint64_t)((1u + (unsigned)(i % 3)) << 2 | 2u) << 32) | 777u;
    kiln_array *J = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_UINT64, 1, &nj, junk, &J));
    CHECK_OK(kiln_queue_finish(q));
    kiln_array_release(J);
    free(junk);
    static const size_t ns[4] = { 1000, 7001, 20011, 13000 };
    for (int r = 0; r < 4; r++) {
        size_t n = ns[r];
        int32_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++)
            x[i] = (int32_t)(kt_rand_u64() % 4);
        kiln_array *X = NULL, *Y = NULL;
        scan_from_host(q, 0, KILN_INT32, n, x, y, &X, &Y);
        int64_t acc = 0;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += y[i] != (int32_t)(acc += x[i]);
        CHECK_MSG(bad == 0, "fresh context, scan %d (n=%zu): %zu wrong", r, n, bad);
        KT_RELEASE(X, Y);
        KT_FREE(x, y);
    }
    KT_RELEASE(q, c);
}

/* An int32 cumsum long enough that a CPU device runs it in rounds (4 MiB
 * of items each; the carry passes between them), the last one short. */
static void t_rounds(kiln_queue *q) {
    size_t n = (size_t)3 << 21 | 77;
    int32_t *x = malloc(n * 4), *y = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = (int32_t)(kt_rand_u64() % 2001) - 1000;
    kiln_array *X = NULL, *Y = NULL;
    scan_from_host(q, 0, KILN_INT32, n, x, y, &X, &Y);
    int32_t acc = 0;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        acc += x[i];
        if (y[i] != acc && !bad++)
            first = i;
    }
    CHECK_MSG(bad == 0, "cumsum in rounds n=%zu: %zu wrong, first at %zu", n, bad, first);
    KT_RELEASE(X, Y);
    KT_FREE(x, y);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    t_cumsum(q);
    t_rounds(q);
    t_repeat(q);
    t_fresh(q);
    t_quads(q);
    t_affine(q, 0, 0);
    t_affine(q, 1, 0);
    t_affine(q, 0, 1);
    t_affine(q, 1, 1);
    t_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
