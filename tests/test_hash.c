/* Hashing: the hash functions in generator expressions against serial C
 * references (xxHash32's checked on published vectors), and the device
 * hash table (insert, insert-or-add, lookup, erase, count) against a
 * sorted host reference at awkward sizes; full tables, reserved keys and
 * bad arguments as errors, never a hang. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---- serial references */
static uint32_t rotl32(uint32_t x, int r) {
    return (x << r) | (x >> (32 - r));
}

/* xxHash32 of any bytes (the reference algorithm, all branches). */
static uint32_t xxh32(const uint8_t *p, size_t len, uint32_t seed) {
    const uint32_t P1 = 0x9E3779B1u, P2 = 0x85EBCA77u, P3 = 0xC2B2AE3Du, P4 = 0x27D4EB2Fu,
                   P5 = 0x165667B1u;
    const uint8_t *end = p + len;
    uint32_t h;
#define RD32(q) \
    ((uint32_t)(q)[0] | (uint32_t)(q)[1] << 8 | (uint32_t)(q)[2] << 16 | (uint32_t)(q)[3] << 24)
    if (len >= 16) {
        uint32_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        do {
            v1 = rotl32(v1 + RD32(p) * P2, 13) * P1;
            v2 = rotl32(v2 + RD32(p + 4) * P2, 13) * P1;
            v3 = rotl32(v3 + RD32(p + 8) * P2, 13) * P1;
            v4 = rotl32(v4 + RD32(p + 12) * P2, 13) * P1;
            p += 16;
        } while (p + 16 <= end);
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = seed + P5;
    }
    h += (uint32_t)len;
    for (; p + 4 <= end; p += 4)
        h = rotl32(h + RD32(p) * P3, 17) * P4;
    for (; p < end; p++)
        h = rotl32(h + *p * P5, 11) * P1;
    h ^= h >> 15;
    h *= P2;
    h ^= h >> 13;
    h *= P3;
    h ^= h >> 16;
    return h;
#undef RD32
}

static void check_functions(kiln_queue *q) {
    /* the reference on xxHash's published vectors */
    CHECK(xxh32((const uint8_t *)"", 0, 0) == 0x02CC5D05u);
    CHECK(xxh32((const uint8_t *)"a", 1, 0) == 0x550D7456u);
    CHECK(xxh32((const uint8_t *)"abc", 3, 0) == 0x32D153FFu);
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1001;
    uint32_t *k32 = malloc(n * 4), *out = malloc(n * 4 * 4);
    uint64_t *k64 = malloc(n * 8), *o64 = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        k64[i] = kt_rand_u64();
        k32[i] = (uint32_t)k64[i];
    }
    kiln_array *K32 = NULL, *K64 = NULL, *O = NULL, *O64 = NULL;
    size_t shape[2] = { n, 4 };
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, k32, &K32));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT64, 1, &n, k64, &K64));
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 2, shape, &O));
    CHECK_OK(kiln_array_empty(c, KILN_UINT64, 1, &n, &O64));
    kiln_elementwise *ew = NULL;
    if (CHECK_OK(kiln_elementwise_create(
            c,
            &KILN_ELEMENTWISE_DESC(.arguments = "const uint *k, const ulong *w, uint *h, ulong "
                                                "*h64, uint seed",
                                   .operation = "h[4*i] = kiln_hash_fmix32(k[i]);\n"
                                                "h[4*i+1] = kiln_hash_xxh32_u32(k[i], seed);\n"
                                                "h[4*i+2] = kiln_hash_xxh32_u64(w[i], seed);\n"
                                                "h[4*i+3] = kiln_hash_xxh32_u32(k[i], 0);\n"
                                                "h64[i] = kiln_hash_fmix64(w[i]);",
                                   .flags = KILN_ELEMENTWISE_ANY_SHAPE),
            &ew))) {
        kiln_arg a[5] = { KILN_ARG_ARRAY(K32), KILN_ARG_ARRAY(K64), KILN_ARG_ARRAY(O),
                          KILN_ARG_ARRAY(O64), KILN_ARG_U32(12345) };
        kiln_event *e = NULL;
        CHECK_OK(kiln_elementwise_launch(q, ew, n, 5, a, 0, NULL, &e));
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        CHECK_OK(kiln_array_read(q, O, out));
        CHECK_OK(kiln_array_read(q, O64, o64));
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            uint8_t b4[4], b8[8];
            for (int j = 0; j < 4; j++)
                b4[j] = (uint8_t)(k32[i] >> (8 * j));
            for (int j = 0; j < 8; j++)
                b8[j] = (uint8_t)(k64[i] >> (8 * j));
            ok &= out[4 * i] == kt_fmix32(k32[i]);
            ok &= out[4 * i + 1] == xxh32(b4, 4, 12345);
            ok &= out[4 * i + 2] == xxh32(b8, 8, 12345);
            ok &= out[4 * i + 3] == xxh32(b4, 4, 0);
            ok &= o64[i] == kt_fmix64(k64[i]);
        }
        CHECK_MSG(ok, "hash functions on the device vs the serial references");
    }
    CHECK(strstr(kiln_hash_kernel_source(), "kiln_hash_xxh32_u32") != NULL);
    KT_RELEASE(ew, K32, K64, O, O64);
    KT_FREE(k32, k64, out, o64);
}

/* ---- the table */
/* n distinct keys, none reserved */
static void distinct_keys(uint32_t *k, size_t n) {
    for (size_t i = 0; i < n; i++) {
        /* an odd multiplier is a bijection: distinct for distinct i */
        k[i] = (uint32_t)(i * 2654435761u + 17u);
        if (k[i] >= 0xFFFFFFFEu)
            k[i] = (uint32_t)(n + 5 + i); /* cannot collide: i*odd+17 wraps */
    }
}

static void check_table(kiln_queue *q, size_t n, kiln_dtype kd, kiln_dtype vd) {
    kiln_context *c = kiln_queue_context(q);
    kiln_hash_table *t = NULL;
    if (!CHECK_OK(kiln_hash_table_create(q, n ? n : 1, kd, vd, &t)))
        return;
    uint32_t *keys = malloc((2 * n + 1) * 4), *vals = malloc((n + 1) * 4);
    uint32_t *got = malloc((2 * n + 1) * 4);
    uint8_t *found = malloc(2 * n + 1);
    distinct_keys(keys, 2 * n + 1); /* the second half: absent keys */
    for (size_t i = 0; i < n; i++) {
        if (vd == KILN_FLOAT32) {
            float f = (float)(kt_rand_u64() % 1000) - 500;
            memcpy(&vals[i], &f, 4);
        } else {
            vals[i] = (uint32_t)kt_rand_u64();
        }
    }
    kiln_array *K = NULL, *V = NULL, *Q = NULL, *R = NULL, *F = NULL;
    size_t n2 = 2 * n;
    CHECK_OK(kiln_array_from_host(c, kd, 1, &n, keys, &K));
    CHECK_OK(kiln_array_from_host(c, vd, 1, &n, vals, &V));
    CHECK_OK(kiln_array_from_host(c, kd, 1, &n2, keys, &Q));
    CHECK_OK(kiln_array_empty(c, vd, 1, &n2, &R));
    CHECK_OK(kiln_array_empty(c, KILN_UINT8, 1, &n2, &F));
    CHECK_OK(kiln_hash_table_insert(q, t, K, V));
    size_t count = 99;
    CHECK_OK(kiln_hash_table_count(q, t, &count));
    CHECK_MSG(count == n, "count %zu after %zu inserts", count, n);
    uint32_t miss = 0xDEADBEEFu;
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_hash_table_lookup(q, t, Q, R, kt_arg(vd, &miss), F, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        if (n) {
            CHECK_OK(kiln_array_read(q, R, got));
            CHECK_OK(kiln_array_read(q, F, found));
        }
        int ok = 1;
        for (size_t i = 0; i < n2; i++)
            ok &= i < n ? (got[i] == vals[i] && found[i] == 1) : (got[i] == miss && found[i] == 0);
        CHECK_MSG(ok, "lookup after insert, n=%zu %s->%s", n, kiln_dtype_name(kd),
                  kiln_dtype_name(vd));
    }
    /* erase the even keys, look up again (found may be NULL) */
    if (n) {
        uint32_t *ev = malloc(n * 4);
        size_t ne = 0;
        for (size_t i = 0; i < n; i += 2)
            ev[ne++] = keys[i];
        kiln_array *E = NULL;
        CHECK_OK(kiln_array_from_host(c, kd, 1, &ne, ev, &E));
        CHECK_OK(kiln_hash_table_erase(q, t, E, 0, NULL, NULL));
        CHECK_OK(kiln_hash_table_erase(q, t, E, 0, NULL, NULL)); /* again */
        CHECK_OK(kiln_hash_table_count(q, t, &count));
        CHECK_MSG(count == n - ne, "count %zu after erasing %zu of %zu", count, ne, n);
        CHECK_OK(kiln_hash_table_lookup(q, t, Q, R, kt_arg(vd, &miss), NULL, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, R, got));
        int ok = 1;
        for (size_t i = 0; i < n2; i++)
            ok &= got[i] == (i < n && (i & 1) ? vals[i] : miss);
        CHECK_MSG(ok, "lookup after erase, n=%zu", n);
        kiln_array_release(E);
        free(ev);
    }
    KT_RELEASE(K, V, Q, R, F, t);
    KT_FREE(keys, vals, got, found);
}

/* insert-or-add with repeated keys: counts (values NULL) and sums. */
static void check_add(kiln_queue *q, size_t n, size_t distinct, kiln_dtype vd) {
    kiln_context *c = kiln_queue_context(q);
    uint32_t *pool = malloc(distinct * 4), *keys = malloc(n * 4);
    uint32_t *vals = malloc(n * 4), *got = malloc(distinct * 4);
    distinct_keys(pool, distinct);
    for (size_t i = 0; i < n; i++) {
        keys[i] = pool[kt_rand_u64() % distinct];
        if (vd == KILN_FLOAT32) {
            float f = (float)(kt_rand_u64() % 7);
            memcpy(&vals[i], &f, 4);
        } else {
            vals[i] = (uint32_t)(kt_rand_u64() % 1000);
        }
    }
    kiln_hash_table *t = NULL;
    kiln_array *K = NULL, *V = NULL, *P = NULL, *R = NULL;
    CHECK_OK(kiln_hash_table_create(q, distinct, KILN_UINT32, vd, &t));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, keys, &K));
    CHECK_OK(kiln_array_from_host(c, vd, 1, &n, vals, &V));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &distinct, pool, &P));
    CHECK_OK(kiln_array_empty(c, vd, 1, &distinct, &R));
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(kiln_hash_table_clear(q, t));
        CHECK_OK(kiln_hash_table_add(q, t, K, pass ? V : NULL));
        CHECK_OK(kiln_hash_table_add(q, t, K, pass ? V : NULL)); /* twice */
        uint32_t zero = 0;
        CHECK_OK(kiln_hash_table_lookup(q, t, P, R, kt_arg(vd, &zero), NULL, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, R, got));
        /* the reference: per distinct key, twice its count or sum */
        int ok = 1;
        for (size_t d = 0; d < distinct; d++) {
            double s = 0;
            for (size_t i = 0; i < n; i++)
                if (keys[i] == pool[d]) {
                    if (!pass)
                        s += 1;
                    else if (vd == KILN_FLOAT32) {
                        float f;
                        memcpy(&f, &vals[i], 4);
                        s += f;
                    } else
                        s += vals[i];
                }
            double g;
            if (vd == KILN_FLOAT32) {
                float f;
                memcpy(&f, &got[d], 4);
                g = f;
            } else {
                g = vd == KILN_INT32 ? (double)(int32_t)got[d] : got[d];
            }
            ok &= g == 2 * s;
        }
        CHECK_MSG(ok, "insert-or-add %s, n=%zu distinct=%zu %s", pass ? "values" : "counts", n,
                  distinct, kiln_dtype_name(vd));
    }
    KT_RELEASE(K, V, P, R, t);
    KT_FREE(pool, keys, vals, got);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_hash_table *t = (kiln_hash_table *)1;
    CHECK_STATUS(kiln_hash_table_create(q, 0, KILN_INT32, KILN_INT32, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(t == NULL);
    CHECK_STATUS(kiln_hash_table_create(q, 8, KILN_INT64, KILN_INT32, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_hash_table_create(q, 8, KILN_INT32, KILN_FLOAT64, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_hash_table_create(NULL, 8, KILN_INT32, KILN_INT32, &t),
                 KILN_ERROR_NULL_HANDLE);
    /* full: capacity 100, 101 distinct keys; the table stays usable */
    CHECK_OK(kiln_hash_table_create(q, 100, KILN_UINT32, KILN_UINT32, &t));
    size_t n = 101, m = 100;
    uint32_t k[101], v[101];
    distinct_keys(k, n);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    kiln_array *K = NULL, *V = NULL, *K100 = NULL, *V100 = NULL, *I = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, k, &K));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, v, &V));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &m, k, &K100));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &m, v, &V100));
    CHECK_STATUS(kiln_hash_table_insert(q, t, K, V), KILN_ERROR_OUT_OF_RANGE);
    size_t count = 0;
    CHECK_OK(kiln_hash_table_count(q, t, &count));
    CHECK_MSG(count == 100, "a full table holds its capacity: %zu", count);
    /* keys already in need no room: inserting them again works */
    CHECK_OK(kiln_hash_table_clear(q, t));
    CHECK_OK(kiln_hash_table_insert(q, t, K100, V100));
    CHECK_OK(kiln_hash_table_insert(q, t, K100, V100));
    /* reserved keys */
    int32_t rk[2] = { 5, -1 };
    uint32_t rv[2] = { 1, 2 };
    size_t two = 2;
    kiln_array *RK = NULL, *RV = NULL, *IK = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &two, rk, &RK));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &two, rv, &RV));
    CHECK_OK(kiln_hash_table_clear(q, t));
    CHECK_STATUS(kiln_hash_table_insert(q, t, RK, RV), KILN_ERROR_INVALID_ARGUMENT);
    /* checked first: the call stored nothing, not even key 5 (issue 41) */
    count = 99;
    CHECK_OK(kiln_hash_table_count(q, t, &count));
    CHECK_MSG(count == 0, "an insert refused for a reserved key stored %zu keys", count);
    CHECK_STATUS(kiln_hash_table_add(q, t, RK, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_hash_table_add(q, t, RK, RV), KILN_ERROR_INVALID_ARGUMENT);
    count = 99;
    CHECK_OK(kiln_hash_table_count(q, t, &count));
    CHECK_MSG(count == 0, "an add refused for a reserved key stored %zu keys", count);
    {
        uint32_t got[2] = { 7, 7 }, miss7 = 77;
        uint8_t fnd[2] = { 9, 9 };
        kiln_array *G = NULL, *F = NULL;
        CHECK_OK(kiln_array_zeros(q, KILN_UINT32, 1, &two, 0, NULL, NULL, &G));
        CHECK_OK(kiln_array_zeros(q, KILN_UINT8, 1, &two, 0, NULL, NULL, &F));
        CHECK_OK(kiln_hash_table_lookup(q, t, RK, G, KILN_ARG_U32(miss7), F, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, G, got));
        CHECK_OK(kiln_array_read(q, F, fnd));
        CHECK(got[0] == 77 && got[1] == 77 && fnd[0] == 0 && fnd[1] == 0);
        KT_RELEASE(G, F);
    }
    /* and the next good insert works */
    CHECK_OK(kiln_hash_table_insert(q, t, K100, V100));
    CHECK_OK(kiln_hash_table_count(q, t, &count));
    CHECK(count == 100);
    /* wrong dtypes and sizes */
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &two, rk, &IK));
    CHECK_STATUS(kiln_hash_table_insert(q, t, IK, RV), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_hash_table_insert(q, t, K, V100), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_hash_table_insert(q, t, NULL, V), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_array_zeros(q, KILN_UINT32, 1, &m, 0, NULL, NULL, &I));
    uint32_t miss = 0;
    CHECK_STATUS(kiln_hash_table_lookup(q, t, K, I, KILN_ARG_U32(miss), NULL, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    /* a missing value that is not a scalar, and one that does not fit */
    CHECK_STATUS(kiln_hash_table_lookup(q, t, K100, I, KILN_ARG_BUF(NULL), NULL, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_hash_table_lookup(q, t, K100, I, KILN_ARG_I32(-1), NULL, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_hash_table_lookup") &&
          strstr(kiln_last_error_message(), "-1 does not fit uint32"));
    kiln_array *S = NULL;
    kiln_slice step = KILN_SLICE(0, PTRDIFF_MAX, 2);
    CHECK_OK(kiln_array_view(K, &step, &S));
    CHECK_STATUS(kiln_hash_table_erase(q, t, S, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    KT_RELEASE(S, I, IK, RK, RV, K, V, K100, V100, t);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    check_functions(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 100000);
    for (size_t s = 0; s < ns; s += 2)
        check_table(q, sizes[s], KILN_UINT32, KILN_UINT32);
    check_table(q, 4099, KILN_INT32, KILN_INT32);
    check_table(q, 1023, KILN_UINT32, KILN_FLOAT32);
    check_add(q, 10007, 97, KILN_UINT32);
    check_add(q, 5003, 1, KILN_INT32);
    check_add(q, 20011, 3001, KILN_FLOAT32);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
