/* kiln_rng: the generator state (algorithm, seed, substream, offset) and
 * the fills of arrays (uniform, normal, integers). Each fill is an
 * elementwise generator from the context's cache whose operation reads the
 * element's words of the stream (kernels/algo_random.cl); the offset range
 * is reserved under the state's lock before the work is enqueued. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "algo/gen/generator.h"
#include "algo/gen/knobs.h"
#include "base/error.h"

struct kiln_rng {
    atomic_int refs;
    pthread_mutex_t lock; /* guards offset */
    kiln_rng_algorithm alg;
    uint64_t seed, sub, offset;
};

static kiln_status rng_new(kiln_rng_algorithm alg, uint64_t seed, uint64_t sub, uint64_t offset,
                           kiln_rng **out) {
    kiln_rng *r = kiln__calloc(1, sizeof *r);
    if (!r)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_rng");
    atomic_init(&r->refs, 1);
    pthread_mutex_init(&r->lock, NULL);
    r->alg = alg, r->seed = seed, r->sub = sub, r->offset = offset;
    *out = r;
    return KILN_OK;
}

kiln_status kiln_rng_create(const kiln_rng_desc *desc, kiln_rng **rng) {
    if (rng)
        *rng = NULL;
    if (!desc || !rng)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_rng_create: desc or rng is NULL");
    kiln_rng_desc d;
    kiln_status st =
        kiln__desc_read(desc, sizeof d, sizeof d, &d, "kiln_rng_create", "KILN_RNG_DESC");
    if (st != KILN_OK)
        return st;
    if ((unsigned)d.algorithm > KILN_RNG_THREEFRY2X64_20)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_rng_create: unknown algorithm %d", (int)d.algorithm);
    return rng_new(d.algorithm, d.seed, d.substream, d.offset, rng);
}

kiln_status kiln_rng_substream_create(const kiln_rng *rng, uint64_t substream, kiln_rng **out) {
    if (out)
        *out = NULL;
    if (!rng || !out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_rng_substream_create: rng or out is "
                               "NULL");
    return rng_new(rng->alg, rng->seed, substream, 0, out);
}

kiln_status kiln_rng_retain(kiln_rng *rng) {
    return kiln__ref_retain(rng ? &rng->refs : NULL, "kiln_rng_retain", "rng");
}

void kiln_rng_release(kiln_rng *rng) {
    if (!rng || !kiln__ref_release(&rng->refs))
        return;
    pthread_mutex_destroy(&rng->lock);
    free(rng);
}

kiln_status kiln_rng_get_offset(const kiln_rng *rng, uint64_t *offset) {
    if (!rng || !offset)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_rng_get_offset: rng or offset is NULL");
    kiln_rng *r = (kiln_rng *)rng; /* the lock only */
    pthread_mutex_lock(&r->lock);
    *offset = r->offset;
    pthread_mutex_unlock(&r->lock);
    return KILN_OK;
}

kiln_status kiln_rng_set_offset(kiln_rng *rng, uint64_t offset) {
    if (!rng)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_rng_set_offset: rng is NULL");
    pthread_mutex_lock(&rng->lock);
    rng->offset = offset;
    pthread_mutex_unlock(&rng->lock);
    return KILN_OK;
}

/* Takes words from the stream: *start gets the first; the offset moves
 * past them. Refuses (nothing changed) when that would wrap 2^64. */
static kiln_status reserve(kiln_rng *rng, uint64_t n, unsigned k, const char *what,
                           uint64_t *start) {
    if (n > UINT64_MAX / k)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: %llu elements overflow the counter",
                               what, (unsigned long long)n);
    uint64_t words = n * k;
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&rng->lock);
    if (words > UINT64_MAX - rng->offset)
        st = kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                             "%s: offset %llu + %llu words would wrap the "
                             "counter (2^64 words)",
                             what, (unsigned long long)rng->offset, (unsigned long long)words);
    else {
        *start = rng->offset;
        rng->offset += words;
    }
    pthread_mutex_unlock(&rng->lock);
    return st;
}

kiln_status kiln_rng_skip_ahead(kiln_rng *rng, uint64_t words) {
    if (!rng)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_rng_skip_ahead: rng is NULL");
    uint64_t skipped_from;
    return reserve(rng, words, 1, "kiln_rng_skip_ahead", &skipped_from);
}

/* ---- fills */

typedef enum { DIST_UNIFORM, DIST_NORMAL, DIST_INTEGERS } dist_kind;

/* What a fill generates: its words per element k, its extra parameters'
 * declaration and the value of an element: prefix + value, where value
 * reads the element's words kiln_w[0..k-1] (first word at stream position
 * kiln_w0). Normals read their pair instead: `at` computes the element at
 * position kiln_w0 alone, `block` the 4/k elements kiln_z[] of one aligned
 * block of words kiln_v[4] (both branches of each Box-Muller pair). */
typedef struct fill_spec {
    unsigned k;
    const char *ctype, *params, *prefix, *value, *at, *block;
    /* WIDE walk (CPU devices; float fills, else NULL): from the words
     * kiln_r (kiln_u32x4x16) of sixteen blocks, float32: float16
     * kiln_a0..kiln_a3, element 4l + j of them in lane l of kiln_aj;
     * float64: double16 kiln_a0, kiln_a1, element 2l + j in lane l */
    const char *x16;
} fill_spec;

static int fill_spec_for(dist_kind dist, kiln_dtype dtype, fill_spec *s) {
    static const char *const ints32 =
        "kiln_rng_bounded_u32(KILN_RNG_ALG, rng_seed, rng_sub, kiln_w0, "
        "kiln_w[0], (uint)rng_range)";
    static const char *const low = "(ulong)rng_low + ";
    static const char *const scaled = "rng_mean + rng_sd * ";
    switch (dist) {
    case DIST_UNIFORM:
        if (dtype == KILN_FLOAT32)
            *s = (fill_spec){ 1,
                              "float",
                              "",
                              "",
                              "kiln_rng_u01f(kiln_w[0])",
                              NULL,
                              NULL,
                              "float16 kiln_a0 = kiln_rng_u01f16(kiln_r.x), "
                              "kiln_a1 = kiln_rng_u01f16(kiln_r.y), kiln_a2 = "
                              "kiln_rng_u01f16(kiln_r.z), kiln_a3 = "
                              "kiln_rng_u01f16(kiln_r.w);\n" };
        else if (dtype == KILN_FLOAT64)
            *s = (fill_spec){ 2,
                              "double",
                              "",
                              "",
                              "kiln_rng_u01d(kiln_w[0], kiln_w[1])",
                              NULL,
                              NULL,
                              "double16 kiln_a0 = kiln_rng_u01d16(kiln_r.x, "
                              "kiln_r.y), kiln_a1 = kiln_rng_u01d16(kiln_r.z, "
                              "kiln_r.w);\n" };
        else
            return 0;
        return 1;
    case DIST_NORMAL:
        if (dtype == KILN_FLOAT32)
            *s = (fill_spec){ 1,
                              "float",
                              ", float rng_mean, float rng_sd",
                              scaled,
                              NULL,
                              "kiln_rng_normalf_at(KILN_RNG_ALG, rng_seed, rng_sub, "
                              "kiln_w0)",
                              "float kiln_z[4];\n"
                              "kiln_rng_normal2f(kiln_v[0], kiln_v[1], &kiln_z[0], "
                              "&kiln_z[1]);\n"
                              "kiln_rng_normal2f(kiln_v[2], kiln_v[3], &kiln_z[2], "
                              "&kiln_z[3]);\n",
                              "float16 kiln_a0, kiln_a1, kiln_a2, kiln_a3;\n"
                              "kiln_rng_normal2f16(kiln_r.x, kiln_r.y, &kiln_a0, "
                              "&kiln_a1);\n"
                              "kiln_rng_normal2f16(kiln_r.z, kiln_r.w, &kiln_a2, "
                              "&kiln_a3);\n" };
        else if (dtype == KILN_FLOAT64)
            *s = (fill_spec){ 2,
                              "double",
                              ", double rng_mean, double rng_sd",
                              scaled,
                              NULL,
                              "kiln_rng_normald_at(KILN_RNG_ALG, rng_seed, rng_sub, "
                              "kiln_w0)",
                              "double kiln_z[2];\n"
                              "kiln_rng_normal2d(kiln_v[0], kiln_v[1], kiln_v[2], "
                              "kiln_v[3], &kiln_z[0], &kiln_z[1]);\n",
                              "double16 kiln_a0, kiln_a1;\n"
                              "kiln_rng_normal2d16(kiln_r.x, kiln_r.y, kiln_r.z, kiln_r.w, "
                              "&kiln_a0, &kiln_a1);\n" };
        else
            return 0;
        return 1;
    case DIST_INTEGERS:
        if (dtype == KILN_INT32 || dtype == KILN_UINT32)
            *s = (fill_spec){ 1,
                              dtype == KILN_INT32 ? "int" : "uint",
                              ", ulong rng_range, long rng_low",
                              low,
                              ints32,
                              NULL,
                              NULL,
                              NULL };
        else if (dtype == KILN_INT64)
            *s = (fill_spec){ 2,
                              "long",
                              ", ulong rng_range, long rng_low",
                              low,
                              "kiln_rng_bounded_u64(KILN_RNG_ALG, rng_seed, rng_sub, "
                              "kiln_w0, ((ulong)kiln_w[1] << 32) | kiln_w[0], rng_range)",
                              NULL,
                              NULL,
                              NULL };
        else
            return 0;
        return 1;
    }
    return 0;
}

typedef struct fill_make_arg {
    kiln_context *ctx;
    const kiln_elementwise_desc *d;
} fill_make_arg;

static kiln_status fill_make(void *arg, kiln__gen **gen) {
    fill_make_arg *a = arg;
    kiln_elementwise *ew = NULL;
    kiln_status st = kiln_elementwise_create(a->ctx, a->d, &ew);
    *gen = (kiln__gen *)ew; /* the base is its first member */
    return st;
}

/* How a fill's kernel walks the stream. PER_ELEMENT: item i is element i
 * and computes its own words (any layout). BLOCKED (contiguous arrays whose
 * start is a multiple of k words): item j owns the aligned block of four
 * words (offset / 4) + j, computes it once and writes the 4/k elements whose
 * words lie in it (the first and last items fewer); BLOCKED_VEC also starts
 * on a block and writes 16-byte aligned memory, so each item stores its
 * elements with one vector store. WIDE (OpenCL C on a CPU device, float
 * fills): item j owns the sixteen blocks (offset / 64) * 16 + 16j .. +15,
 * computes them in vector lanes (kiln_rng_block16: SIMD on the CPU, where
 * one block per item leaves the generator scalar) and writes the elements
 * whose words lie in them. Same values in all four. */
typedef enum { PER_ELEMENT, BLOCKED, BLOCKED_VEC, WIDE } fill_walk;

static void fill_operation(char *op, size_t cap, const fill_spec *s, fill_walk walk) {
    if (walk == PER_ELEMENT) {
        if (s->at)
            snprintf(op, cap,
                     "ulong kiln_w0 = rng_off + %uu * (ulong)i; rng_y[i] = "
                     "(%s)(%s%s);",
                     s->k, s->ctype, s->prefix, s->at);
        else
            snprintf(op, cap,
                     "ulong kiln_w0 = rng_off + %uu * (ulong)i; uint "
                     "kiln_w[%u]; kiln_rng_words(KILN_RNG_ALG, rng_seed, "
                     "rng_sub, kiln_w0, %u, kiln_w); rng_y[i] = (%s)(%s%s);",
                     s->k, s->k, s->k, s->ctype, s->prefix, s->value);
        return;
    }
    if (walk == WIDE) { /* k = 1 (float32) or 2 (float64) */
        char scale[256];
        if (s->k == 1)
            snprintf(scale, sizeof scale,
                     "kiln_a0 = %skiln_a0; kiln_a1 = %skiln_a1;\n"
                     "kiln_a2 = %skiln_a2; kiln_a3 = %skiln_a3;\n"
                     "kiln_rng_put16_float(rng_y, kiln_e, rng_n, kiln_a0, "
                     "kiln_a1, kiln_a2, kiln_a3);",
                     s->prefix, s->prefix, s->prefix, s->prefix);
        else
            snprintf(scale, sizeof scale,
                     "kiln_a0 = %skiln_a0; kiln_a1 = %skiln_a1;\n"
                     "kiln_rng_put16_double(rng_y, kiln_e, rng_n, kiln_a0, "
                     "kiln_a1);",
                     s->prefix, s->prefix);
        snprintf(op, cap,
                 "ulong kiln_sb = (rng_off >> 6) + (ulong)i;\n"
                 "long kiln_e = ((long)(kiln_sb << 6) - (long)rng_off) / "
                 "%u;\n"
                 "kiln_u32x4x16 kiln_r = kiln_rng_block16(KILN_RNG_ALG, "
                 "rng_seed, rng_sub, kiln_sb << 4);\n%s%s",
                 s->k, s->x16, scale);
        return;
    }
    unsigned per = 4 / s->k;
    char vals[900] = "", one[320], store[320];
    if (s->block)
        snprintf(vals, sizeof vals, "%s", s->block);
    for (unsigned l = 0; l < per; l++) {
        if (s->block)
            snprintf(one, sizeof one, "%s kiln_y%u = (%s)(%skiln_z[%u]);\n", s->ctype, l, s->ctype,
                     s->prefix, l);
        else
            snprintf(one, sizeof one,
                     "%s kiln_y%u; { ulong kiln_w0 = kiln_b0 + %uu; uint "
                     "*kiln_w = kiln_v + %u; kiln_y%u = (%s)(%s%s); }\n",
                     s->ctype, l, s->k * l, s->k * l, l, s->ctype, s->prefix, s->value);
        strncat(vals, one, sizeof vals - strlen(vals) - 1);
    }
    if (walk == BLOCKED_VEC)
        snprintf(store, sizeof store,
                 per == 4 ? "KILN_RNG_ST4_%s(rng_y + kiln_e, kiln_y0, "
                            "kiln_y1, kiln_y2, kiln_y3);"
                          : "KILN_RNG_ST2_%s(rng_y + kiln_e, kiln_y0, "
                            "kiln_y1);",
                 s->ctype);
    else
        snprintf(store, sizeof store, "%s",
                 per == 4 ? "rng_y[kiln_e] = kiln_y0; rng_y[kiln_e + 1] = "
                            "kiln_y1; rng_y[kiln_e + 2] = kiln_y2; "
                            "rng_y[kiln_e + 3] = kiln_y3;"
                          : "rng_y[kiln_e] = kiln_y0; rng_y[kiln_e + 1] = "
                            "kiln_y1;");
    snprintf(op, cap,
             "ulong kiln_blk = (rng_off >> 2) + (ulong)i, kiln_b0 = kiln_blk "
             "<< 2;\n"
             "long kiln_e = ((long)kiln_b0 - (long)rng_off) / %u;\n"
             "kiln_u32x4 kiln_v4 = kiln_rng_block(KILN_RNG_ALG, rng_seed, "
             "rng_sub, kiln_blk);\n"
             "uint kiln_v[4] = {kiln_v4.x, kiln_v4.y, kiln_v4.z, "
             "kiln_v4.w};\n%s"
             "if (kiln_e >= 0 && kiln_e + %u <= rng_n) { %s }\n"
             "else {\n"
             "#define KILN_RNG_PUT(l, y) if (kiln_e + l >= 0 && kiln_e + l < "
             "rng_n) rng_y[kiln_e + l] = y\n"
             "  KILN_RNG_PUT(0, kiln_y0); KILN_RNG_PUT(1, kiln_y1);%s\n"
             "#undef KILN_RNG_PUT\n}",
             s->k, vals, per, store,
             per == 4 ? " KILN_RNG_PUT(2, kiln_y2); KILN_RNG_PUT(3, kiln_y3);" : "");
}

/* The cached elementwise generator of a fill. */
static kiln_status fill_generator(kiln_context *ctx, kiln_rng_algorithm alg, dist_kind dist,
                                  const fill_spec *s, fill_walk walk, kiln__gen **gen) {
    char args[192], op[3072], pre[64], key[64];
    snprintf(args, sizeof args,
             "ulong rng_seed, ulong rng_sub, ulong rng_off, long "
             "rng_n%s, %s *rng_y",
             s->params, s->ctype);
    fill_operation(op, sizeof op, s, walk);
    snprintf(pre, sizeof pre, "#define KILN_RNG_ALG %d\n", (int)alg);
    snprintf(key, sizeof key, "rng|%d|%d|%s|%d", (int)alg, (int)dist, s->ctype, (int)walk);
    kiln_elementwise_desc d =
        KILN_ELEMENTWISE_DESC(.arguments = args, .operation = op, .name = "kiln_rng_fill",
                              .preamble = pre,
                              .flags = walk != PER_ELEMENT ? KILN_ELEMENTWISE_ANY_SHAPE : 0);
    fill_make_arg ma = { ctx, &d };
    return kiln__gen_cached(ctx, key, fill_make, &ma, gen);
}

static kiln_status fill(kiln_queue *queue, kiln_rng *rng, kiln_array *array, dist_kind dist,
                        const kiln_arg *params, size_t nparams, const char *what, size_t num_wait,
                        kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    const char *missing = KILN__FIRST_NULL3(queue, rng, array);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, missing);
    if (kiln__check_wait(what, num_wait, wait) != KILN_OK)
        return KILN_ERROR_NULL_HANDLE;
    fill_spec s;
    if (!fill_spec_for(dist, kiln_array_dtype(array), &s))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: dtype %s is not supported (%s)",
                               what, kiln_dtype_name(kiln_array_dtype(array)),
                               dist == DIST_INTEGERS ? "int32, uint32 or int64"
                                                     : "float32 or float64");
    kiln_array_info info;
    kiln_status st = kiln_array_get_info(array, &info);
    kiln__plan plan;
    if (st == KILN_OK)
        st = kiln__plan_for(queue, &plan);
    if (st != KILN_OK)
        return st;
    size_t n = kiln_array_size(array);
    uint64_t start = 0;
    st = reserve(rng, n, s.k, what, &start);
    if (st != KILN_OK)
        return st;
    /* 16-byte alignment of the first element: the buffer's base is
     * aligned far more than that, so its offset decides */
    size_t esize = kiln_dtype_size(info.dtype);
    fill_walk walk = !info.contiguous || start % s.k ? PER_ELEMENT
                     : s.x16 && plan.cpu && plan.opencl_c && kiln__knobs_get()->rng_wide ? WIDE
                     : start % 4 == 0 && info.offset * esize % 16 == 0 && kiln__knobs_get()->rng_vec
                         ? BLOCKED_VEC
                         : BLOCKED;
    unsigned words_per_item = walk == WIDE ? 64 : 4;
    size_t items =
        walk == PER_ELEMENT
            ? n
            : (size_t)((start % words_per_item + (uint64_t)n * s.k + words_per_item - 1) /
                       words_per_item);
    kiln__gen *gen = NULL;
    st = fill_generator(kiln_queue_context(queue), rng->alg, dist, &s, walk, &gen);
    if (st == KILN_OK) {
        kiln_arg args[7] = { KILN_ARG_U64(rng->seed), KILN_ARG_U64(rng->sub), KILN_ARG_U64(start),
                             KILN_ARG_I64((int64_t)n) };
        for (size_t j = 0; j < nparams; j++)
            args[4 + j] = params[j];
        args[4 + nparams] = KILN_ARG_ARRAY(array);
        st = kiln_elementwise_launch(queue, (kiln_elementwise *)gen, items, 5 + nparams, args,
                                     num_wait, wait, event);
    }
    if (st != KILN_OK) { /* nothing was enqueued: give the words back */
        pthread_mutex_lock(&rng->lock);
        if (rng->offset == start + (uint64_t)n * s.k)
            rng->offset = start;
        pthread_mutex_unlock(&rng->lock);
    }
    kiln__gen_release(gen);
    return st;
}

kiln_status kiln_rng_uniform(kiln_queue *queue, kiln_rng *rng, kiln_array *array, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    return fill(queue, rng, array, DIST_UNIFORM, NULL, 0, "kiln_rng_uniform", num_wait, wait,
                event);
}

kiln_status kiln_rng_normal(kiln_queue *queue, kiln_rng *rng, kiln_array *array, double mean,
                            double stddev, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event) {
    kiln_arg p[2] = { KILN_ARG_F64(mean), KILN_ARG_F64(stddev) };
    if (kiln_array_dtype(array) == KILN_FLOAT32)
        p[0] = KILN_ARG_F32((float)mean), p[1] = KILN_ARG_F32((float)stddev);
    return fill(queue, rng, array, DIST_NORMAL, p, 2, "kiln_rng_normal", num_wait, wait, event);
}

kiln_status kiln_rng_integers(kiln_queue *queue, kiln_rng *rng, kiln_array *array, int64_t low,
                              int64_t high, size_t num_wait, kiln_event *const *wait,
                              kiln_event **event) {
    const char *what = "kiln_rng_integers";
    if (event)
        *event = NULL;
    if (low >= high)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: low (%lld) >= high (%lld)",
                               what, (long long)low, (long long)high);
    kiln_dtype dt = kiln_array_dtype(array);
    int64_t lo_min = dt == KILN_INT32 ? INT32_MIN : dt == KILN_UINT32 ? 0 : INT64_MIN;
    int64_t hi_max = dt == KILN_INT32    ? (int64_t)INT32_MAX + 1
                     : dt == KILN_UINT32 ? (int64_t)UINT32_MAX + 1
                                         : INT64_MAX;
    if (array && (dt == KILN_INT32 || dt == KILN_UINT32) && (low < lo_min || high > hi_max))
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: [%lld, %lld) does not fit %s", what,
                               (long long)low, (long long)high, kiln_dtype_name(dt));
    /* the range as an unsigned count; 2^64 (int64 only) cannot occur:
     * high <= INT64_MAX */
    uint64_t range = (uint64_t)high - (uint64_t)low;
    kiln_arg p[2] = { KILN_ARG_U64(range), KILN_ARG_I64(low) };
    return fill(queue, rng, array, DIST_INTEGERS, p, 2, what, num_wait, wait, event);
}
