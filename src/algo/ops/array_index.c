/* Gather and scatter by index arrays (kiln_array_take_out / kiln_array_put)
 * and boolean-mask assignment (kiln_array_mask_fill / _assign).
 *
 * Bad indices are found on the device: the kernels set a word of a small
 * status array (never reading or writing out of bounds), which is read
 * back after the work; a continuation (kiln_event_then) turns a set word
 * into a failed event, so nothing blocks and nothing crashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/chain.h"
#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "algo/prim/scan.h"
#include "base/error.h"

/* a itself (retained) when dense, else a dense copy made after the chain. */
static kiln_status dense(kiln_queue *q, kiln_array *a, kiln__chain *c, kiln_array **out) {
    *out = NULL;
    if (kiln__array_contiguous(a)) {
        kiln_array_retain(a);
        *out = a;
        return KILN_OK;
    }
    kiln_array *t = NULL;
    kiln_event *e = NULL;
    kiln_status st = kiln_array_empty(a->context, a->dtype, a->ndim, a->shape, &t);
    if (st == KILN_OK)
        st = kiln_array_copy_out(q, t, a, kiln__chain_nw(c), kiln__chain_w(c), &e);
    if (st != KILN_OK) {
        kiln_array_release(t);
        return st;
    }
    kiln__chain_add(c, KILN_OK, e);
    *out = t;
    return KILN_OK;
}

/* ---- the device-side status: word 0 is set by a bad index, word 1 holds
 * the count of a mask */

typedef struct check {
    int64_t words[2];
    int64_t want_count; /* -1: not checked */
    const char *what;
} check;

static kiln_status check_done(kiln_event_state state, void *user) {
    check *c = user;
    kiln_status st = KILN_OK;
    if (state == KILN_EVENT_COMPLETE && c->words[0])
        st = kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: an index was out of range", c->what);
    else if (state == KILN_EVENT_COMPLETE && c->want_count >= 0 && c->words[1] != c->want_count)
        st = kiln__error_set(KILN_ERROR_MISMATCH, 0,
                             "%s: %lld values for the %lld elements where "
                             "the mask is true",
                             c->what, (long long)c->want_count, (long long)c->words[1]);
    free(c);
    return st;
}

static kiln_status status_begin(kiln_queue *q, kiln__chain *c, kiln_array **flags) {
    size_t two = 2;
    kiln_event *e = NULL;
    kiln_status st =
        kiln_array_zeros(q, KILN_INT64, 1, &two, kiln__chain_nw(c), kiln__chain_w(c), &e, flags);
    st = kiln__chain_add(c, st, e);
    return st;
}

/* Reads the status back after the chain; the chain's last event becomes
 * one that fails when the status says so. */
static kiln_status status_end(kiln_queue *q, kiln__chain *c, kiln_array *flags, int64_t want_count,
                              const char *what) {
    check *k = kiln__calloc(1, sizeof *k);
    if (!k)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    k->want_count = want_count;
    k->what = what;
    kiln_event *e = NULL, *next = NULL;
    kiln_status st = kiln_buffer_read_async(q, flags->buffer, flags->offset * 8, sizeof k->words,
                                            k->words, kiln__chain_nw(c), kiln__chain_w(c), &e);
    if (st == KILN_OK)
        st = kiln_event_then(e, check_done, k, &next);
    if (st != KILN_OK) {
        /* the read, if enqueued, must end before k goes */
        if (e)
            kiln_event_wait(e);
        free(k);
    }
    kiln__event_drop(&e);
    st = kiln__chain_add(c, st, next);
    return st;
}

/* ---- index resolution */

/* Statements that set `long j` (and `int ok`) from idx[i], of index dtype
 * it, for an axis of na elements. KILN_INDEX_ERROR: -na..-1 count from the
 * end; others set err[0] and ok = 0 (j = 0, never used). */
static void index_code(kiln_dtype it, kiln_index_mode mode, char *buf, size_t cap) {
    static const char *const sgn[3] = {
        "if (j < 0) j += na; if (j < 0 || j >= na) { err[0] = 1; ok = 0; j = 0; }",
        "if (j < 0) j = 0; if (j >= na) j = na - 1;",
        /* the division only for an index out of range */
        "if ((ulong)j >= (ulong)na) { j %= na; if (j < 0) j += na; }"
    };
    static const char *const uns[3] = { "if (u >= (ulong)na) { err[0] = 1; ok = 0; u = 0; }",
                                        "if (u >= (ulong)na) u = (ulong)(na - 1);",
                                        "if (u >= (ulong)na) u %= (ulong)na;" };
    if (kiln__dtype_kind(it) == 'u')
        snprintf(buf, cap,
                 "int ok = 1; ulong u = (ulong)idx[i]; %s long j = (long)u; "
                 "(void)ok;",
                 uns[mode]);
    else
        snprintf(buf, cap, "int ok = 1; long j = (long)idx[i]; %s (void)ok;", sgn[mode]);
}

/* take's and put's checks: x and y on q (*event cleared first), then the
 * indices into `indexed` (x or y) and the mode. */
static kiln_status check_index_op(kiln_queue *q, kiln_array *x, kiln_array *y,
                                  const kiln_array *indexed, kiln_array *indices,
                                  kiln_index_mode mode, kiln_event **event, const char *what) {
    kiln_status st = kiln__array_op_begin(q, x, y, event, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, indices, what);
    if (st != KILN_OK)
        return st;
    size_t na = indexed->size;
    char k = kiln__dtype_kind(indices->dtype);
    if (k != 'i' && k != 'u')
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: indices have dtype %s; an integer dtype "
                               "is needed",
                               what, kiln_dtype_name(indices->dtype));
    if ((unsigned)mode > KILN_INDEX_WRAP)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown index mode %d", what,
                               (int)mode);
    if (mode == KILN_INDEX_ERROR && !event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: KILN_INDEX_ERROR reports a bad index "
                               "through the event: pass one",
                               what);
    if (mode != KILN_INDEX_ERROR && na == 0 && indices->size)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: %zu indices into an empty array (no "
                               "element to clip or wrap to)",
                               what, indices->size);
    return KILN_OK;
}

static kiln_status launch(kiln_queue *q, const char *args, const char *op, const char *name,
                          const char *preamble, unsigned flags, size_t n, size_t nv,
                          const kiln_arg *v, kiln__chain *c) {
    kiln_elementwise *ew = NULL;
    kiln_event *e = NULL;
    kiln_status st =
        kiln__elementwise_cached_ex(kiln_queue_context(q), args, op, name, preamble, flags, &ew);
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, n, nv, v, kiln__chain_nw(c), kiln__chain_w(c), &e);
    kiln_elementwise_release(ew);
    st = kiln__chain_add(c, st, e);
    return st;
}

/* ---- take */

kiln_status kiln_array_take_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                kiln_array *indices, kiln_index_mode mode, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_take_out";
    kiln_status st = check_index_op(queue, out, a, a, indices, mode, event, what);
    if (st != KILN_OK)
        return st;
    if (out->dtype != a->dtype || !kiln__array_same_shape(out, indices)) {
        char to[96], ta[96], ti[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: out is %s; it needs a's dtype and the "
                               "indices' shape (a %s, indices %s)",
                               what, kiln__array_describe(out, to, sizeof to),
                               kiln__array_describe(a, ta, sizeof ta),
                               kiln__array_describe(indices, ti, sizeof ti));
    }
    if (!kiln__array_contiguous(out))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: out is a strided view; take into a "
                               "dense array and copy it",
                               what);
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_array *src = NULL, *flags = NULL;
    st = dense(queue, a, &c, &src);
    if (st == KILN_OK && mode == KILN_INDEX_ERROR)
        st = status_begin(queue, &c, &flags);
    const char *t = kiln__bits_type(a->dtype);
    char args[192], ix[256], op[400];
    snprintf(args, sizeof args,
             "const %s *idx, %s *out, const %s *src, "
             "long na%s",
             kiln_dtype_name(indices->dtype), t, t, flags ? ", long *err" : "");
    index_code(indices->dtype, mode, ix, sizeof ix);
    snprintf(op, sizeof op, "%s out[i] = ok ? src[j] : 0", ix);
    kiln_arg v[5] = { KILN_ARG_ARRAY(indices), KILN_ARG_ARRAY(out), KILN_ARG_ARRAY(src),
                      KILN_ARG_I64((int64_t)a->size), KILN_ARG_ARRAY(flags) };
    /* out sharing no memory with the source or the indices lets GPUs
     * keep several gathers in flight a thread (restrict, more threads) */
    unsigned ewf = KILN_ELEMENTWISE_ANY_SHAPE;
    if (src && out->buffer != src->buffer && out->buffer != indices->buffer)
        ewf |= KILN__ELEMENTWISE_NOALIAS;
    if (st == KILN_OK)
        st = launch(queue, args, op, "kiln_take", NULL, ewf, indices->size, flags ? 5 : 4, v, &c);
    if (st == KILN_OK && flags)
        st = status_end(queue, &c, flags, -1, what);
    kiln_array_release(src);
    kiln_array_release(flags);
    st = kiln__chain_end(&c, st, event);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* ---- put */

/* Atomic read-modify-write on both backends: 32- and 64-bit compare and
 * swap, 64-bit add, double bits. */
static const char atomics_preamble[] =
    "#if KILN_CUDA_C\n"
    "#define KILN_CAS32(p, c, v) atomicCAS((unsigned int *)(p), (c), (v))\n"
    "#define KILN_CAS64(p, c, v) atomicCAS((unsigned long long *)(p), (c), "
    "(v))\n"
    "#define KILN_ADD64(p, v) atomicAdd((unsigned long long *)(p), "
    "(unsigned long long)(v))\n"
    "#define KILN_D2U(d) ((ulong)__double_as_longlong(d))\n"
    "#define KILN_U2D(u) __longlong_as_double((long long)(u))\n"
    "#else\n"
    "#define KILN_CAS32(p, c, v) atomic_cmpxchg((volatile __global uint "
    "*)(p), (c), (v))\n"
    "#define KILN_CAS64(p, c, v) atom_cmpxchg((volatile __global ulong "
    "*)(p), (c), (v))\n"
    "#define KILN_ADD64(p, v) atom_add((volatile __global ulong *)(p), "
    "(ulong)(v))\n"
    "#define KILN_D2U(d) as_ulong(d)\n"
    "#define KILN_U2D(u) as_double(u)\n"
    "#endif\n";

/* kiln_put_add(p, v): *p += v atomically, for element type t of dtype d.
 * Devices have 32- and 64-bit atomics only: 8- and 16-bit elements are
 * added by a compare-and-swap loop on the 32-bit word that holds them
 * (the other bytes are written back unchanged), float16 in float rounded
 * once, float64 by a 64-bit CAS loop where there is no native add. */
static void put_add_func(kiln_dtype d, kiln__sb *sb) {
    const char *t = kiln__bits_type(d);
    kiln__sb_add(sb, atomics_preamble);
    kiln__sb_addf(sb, "KILN_FUNC void kiln_put_add(KILN_GLOBAL %s *p, %s v)\n{\n", t, t);
    size_t size = kiln_dtype_size(d);
    if (size <= 2) {
        const char *next = d == KILN_FLOAT16 ? "(uint)kiln_f2h(kiln_h2f((ushort)cur) + kiln_h2f(v))"
                           : size == 1       ? "(uint)(uchar)(cur + (uint)(uchar)v)"
                                             : "(uint)(ushort)(cur + (uint)(ushort)v)";
        kiln__sb_addf(sb,
                      "    ulong addr = (ulong)p;\n"
                      "    KILN_GLOBAL uint *w = (KILN_GLOBAL uint *)((KILN_GLOBAL uchar "
                      "*)p - (addr & 3));\n"
                      "    uint sh = (uint)(addr & 3) * 8u;\n"
                      "    uint mask = %su << sh;\n"
                      "    uint old = *w;\n"
                      "    for (;;) {\n"
                      "        uint cur = (old & mask) >> sh;\n"
                      "        uint nxt = %s;\n"
                      "        uint seen = KILN_CAS32(w, old, (old & ~mask) | ((nxt << "
                      "sh) & mask));\n"
                      "        if (seen == old) break;\n"
                      "        old = seen;\n"
                      "    }\n",
                      size == 1 ? "0xff" : "0xffff", next);
    } else if (d == KILN_INT32) {
        kiln__sb_add(sb, "    kiln_atomic_add_int(p, v);\n");
    } else if (d == KILN_UINT32) {
        kiln__sb_add(sb, "    kiln_atomic_add_uint(p, v);\n");
    } else if (d == KILN_FLOAT32) {
        kiln__sb_add(sb, "    kiln_atomic_add_float(p, v);\n");
    } else if (d == KILN_FLOAT64) {
        kiln__sb_add(sb, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600\n"
                         "    atomicAdd(p, v);\n"
                         "#else\n"
                         "    ulong old = KILN_D2U(*p);\n"
                         "    for (;;) {\n"
                         "        ulong seen = KILN_CAS64(p, old, "
                         "KILN_D2U(KILN_U2D(old) + v));\n"
                         "        if (seen == old) break;\n"
                         "        old = seen;\n"
                         "    }\n"
                         "#endif\n");
    } else {
        kiln__sb_add(sb, "    KILN_ADD64(p, v);\n");
    }
    kiln__sb_add(sb, "}\n");
}

/* 64-bit atomics on OpenCL need cl_khr_int64_base_atomics. */
static kiln_status check_atomics(kiln_queue *q, kiln_dtype d, const char *what) {
    kiln__plan plan;
    kiln_status st = kiln__plan_for(q, &plan);
    if (st != KILN_OK || kiln_dtype_size(d) != 8 || !plan.opencl_c)
        return st;
    const char *ext = kiln_device_extensions(kiln_queue_device(q));
    if (ext && strstr(ext, "cl_khr_int64_base_atomics"))
        return KILN_OK;
    return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                           "%s: adding %s atomically needs 64-bit atomics "
                           "(cl_khr_int64_base_atomics), which this OpenCL "
                           "device lacks",
                           what, kiln_dtype_name(d));
}

kiln_status kiln_array_put(kiln_queue *queue, kiln_array *a, kiln_array *indices,
                           kiln_array *values, kiln_index_mode mode, kiln_put_mode put,
                           size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_put";
    kiln_status st = check_index_op(queue, a, values, a, indices, mode, event, what);
    if (st != KILN_OK)
        return st;
    if ((unsigned)put > KILN_PUT_ADD)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown put mode %d", what,
                               (int)put);
    if (values->dtype != a->dtype || (values->size != indices->size && values->size != 1)) {
        char ta[96], tv[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: values are %s; they need a's dtype (a is "
                               "%s) and one element per index (%zu) or one "
                               "in all",
                               what, kiln__array_describe(values, tv, sizeof tv),
                               kiln__array_describe(a, ta, sizeof ta), indices->size);
    }
    if (!kiln__array_contiguous(a))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: a is a strided view; put into a dense "
                               "array",
                               what);
    if (put == KILN_PUT_ASSIGN_LAST && indices->size > INT32_MAX)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: KILN_PUT_ASSIGN_LAST takes at most 2^31-1 "
                               "indices (%zu given)",
                               what, indices->size);
    if (put == KILN_PUT_ADD)
        st = check_atomics(queue, a->dtype, what);
    if (st != KILN_OK)
        return st;
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_array *vals = NULL, *flags = NULL, *own = NULL;
    st = dense(queue, values, &c, &vals);
    if (st == KILN_OK && mode == KILN_INDEX_ERROR)
        st = status_begin(queue, &c, &flags);
    if (st == KILN_OK && put == KILN_PUT_ASSIGN_LAST) {
        kiln_event *e = NULL;
        st = kiln_array_full(queue, KILN_INT32, 1, &a->size, KILN_ARG_I32(-1), kiln__chain_nw(&c),
                             kiln__chain_w(&c), &e, &own);
        st = kiln__chain_add(&c, st, e);
    }
    const char *t = kiln__bits_type(a->dtype);
    const char *v_i = values->size == 1 ? "vals[0]" : "vals[i]";
    char args[256], ix[256], op[600];
    snprintf(args, sizeof args, "const %s *idx, %s *dst, const %s *vals, long na%s%s",
             kiln_dtype_name(indices->dtype), t, t, flags ? ", long *err" : "",
             own ? ", int *own" : "");
    index_code(indices->dtype, mode, ix, sizeof ix);
    kiln_arg v[6] = { KILN_ARG_ARRAY(indices), KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(vals),
                      KILN_ARG_I64((int64_t)a->size) };
    size_t nv = 4;
    if (flags)
        v[nv++] = KILN_ARG_ARRAY(flags);
    if (own)
        v[nv++] = KILN_ARG_ARRAY(own);
    kiln__sb pre = { 0 };
    const char *name = "kiln_put";
    if (put == KILN_PUT_ADD) {
        put_add_func(a->dtype, &pre);
        snprintf(op, sizeof op, "%s if (ok) kiln_put_add(dst + j, %s)", ix, v_i);
        name = "kiln_scatter_add";
    } else if (put == KILN_PUT_ASSIGN_LAST) {
        /* the largest i of each target wins: claimed first, then written */
        snprintf(op, sizeof op, "%s if (ok) kiln_atomic_max_int(own + j, (int)i)", ix);
        if (st == KILN_OK)
            st = launch(queue, args, op, "kiln_put_claim", NULL, KILN_ELEMENTWISE_ANY_SHAPE,
                        indices->size, nv, v, &c);
        snprintf(op, sizeof op, "%s if (ok && own[j] == (int)i) dst[j] = %s", ix, v_i);
    } else {
        snprintf(op, sizeof op, "%s if (ok) dst[j] = %s", ix, v_i);
    }
    if (pre.oom)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK)
        st = launch(queue, args, op, name, pre.p, KILN_ELEMENTWISE_ANY_SHAPE, indices->size, nv, v,
                    &c);
    kiln__sb_free(&pre);
    if (st == KILN_OK && flags)
        st = status_end(queue, &c, flags, -1, what);
    kiln_array_release(vals);
    kiln_array_release(flags);
    kiln_array_release(own);
    st = kiln__chain_end(&c, st, event);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* ---- boolean masks */

static const char *truth(kiln_dtype d, char *buf, size_t cap) {
    /* NaN is true, -0.0 false, as NumPy's bool() */
    snprintf(buf, cap, d == KILN_FLOAT16 ? "((m[i] & 0x7fff) != 0)" : "(m[i] != 0)");
    return buf;
}

static kiln_status check_mask(kiln_queue *q, kiln_array *a, kiln_array *mask, const char *what) {
    kiln_status st = kiln__array_check_queue(q, a, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, mask, what);
    if (st == KILN_OK && !kiln__array_same_shape(a, mask)) {
        char ta[96], tm[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the mask is %s, a is %s: a boolean index "
                               "needs a's shape",
                               what, kiln__array_describe(mask, tm, sizeof tm),
                               kiln__array_describe(a, ta, sizeof ta));
    }
    return st;
}

kiln_status kiln_array_mask_fill(kiln_queue *queue, kiln_array *a, kiln_array *mask, kiln_arg value,
                                 size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_mask_fill";
    if (event)
        *event = NULL;
    kiln_status st = check_mask(queue, a, mask, what);
    uint64_t element[2];
    if (st == KILN_OK)
        st = kiln__scalar_to_element(value, a->dtype, element, what);
    if (st != KILN_OK)
        return st;
    const char *t = kiln__bits_type(a->dtype);
    char args[128], T[48], op[160];
    snprintf(args, sizeof args, "%s *dst, const %s *m, %s v", t, kiln__bits_type(mask->dtype), t);
    /* every element rewritten (a select, no branch: vectorises) */
    snprintf(op, sizeof op, "%s kiln_old = dst[i]; dst[i] = %s ? v : kiln_old", t,
             truth(mask->dtype, T, sizeof T));
    kiln_arg v[3] = { KILN_ARG_ARRAY(a),
                      KILN_ARG_ARRAY(mask),
                      { .kind = KILN_ARG_SCALAR,
                        .dtype = a->dtype == KILN_FLOAT16 ? KILN_UINT16 : a->dtype } };
    memcpy(&v[2].value, element, kiln_dtype_size(a->dtype));
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    st = launch(queue, args, op, "kiln_mask_fill", NULL, 0, a->size, 3, v, &c);
    st = kiln__chain_end(&c, st, event);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* pos[i] = the number of true elements before i, where the mask is true;
 * -(that number) - 2 where it is false (so the last one tells the count). */
static kiln_status mask_positions(kiln_queue *q, kiln_array *mask, kiln_array *pos,
                                  kiln__chain *c) {
    char args[96], T[48], input[96], output[128];
    snprintf(args, sizeof args, "const %s *m, long *pos", kiln__bits_type(mask->dtype));
    truth(mask->dtype, T, sizeof T);
    snprintf(input, sizeof input, "(long)%s", T);
    snprintf(output, sizeof output, "pos[i] = %s ? prev_item : -prev_item - 2", T);
    kiln_scan_desc d =
        KILN_SCAN_DESC(.arguments = args, .scan_type = "long", .neutral = "0", .scan = "a + b",
                       .input = input, .output = output, .name = "kiln_mask_positions");
    kiln_context *ctx = kiln_queue_context(q);
    char key[160];
    snprintf(key, sizeof key, "scan|kiln_mask_positions|%s", args);
    kiln__scan_make_arg ma = { ctx, &d };
    kiln__gen *gen = NULL;
    kiln_event *e = NULL;
    kiln_status st = kiln__gen_cached(ctx, key, kiln__scan_make, &ma, &gen);
    kiln_arg v[2] = { KILN_ARG_ARRAY(mask), KILN_ARG_ARRAY(pos) };
    if (st == KILN_OK)
        st = kiln_scan_launch(q, (kiln_scan *)gen, mask->size, 2, v, kiln__chain_nw(c),
                              kiln__chain_w(c), &e);
    kiln__gen_release(gen);
    st = kiln__chain_add(c, st, e);
    return st;
}

kiln_status kiln_array_mask_assign(kiln_queue *queue, kiln_array *a, kiln_array *mask,
                                   kiln_array *values, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    static const char what[] = "kiln_array_mask_assign";
    if (event)
        *event = NULL;
    kiln_status st = check_mask(queue, a, mask, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(queue, values, what);
    if (st != KILN_OK)
        return st;
    if (values->dtype != a->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: values have dtype %s, a has %s", what,
                               kiln_dtype_name(values->dtype), kiln_dtype_name(a->dtype));
    int one = values->size == 1;
    if (!one && !event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: the count of values is checked against "
                               "the mask on the device and reported through "
                               "the event: pass one",
                               what);
    kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
    kiln_array *vals = NULL, *flags = NULL, *pos = NULL;
    st = dense(queue, values, &c, &vals);
    if (st == KILN_OK && !one)
        st = status_begin(queue, &c, &flags);
    if (st == KILN_OK)
        st = kiln_array_empty(a->context, KILN_INT64, a->ndim, a->shape, &pos);
    if (st == KILN_OK)
        st = mask_positions(queue, mask, pos, &c);
    const char *t = kiln__bits_type(a->dtype);
    char args[160];
    snprintf(args, sizeof args,
             "%s *dst, const long *pos, const %s *vals, "
             "long nv%s",
             t, t, one ? "" : ", long *err");
    const char *op = one ? "if (pos[i] >= 0) dst[i] = vals[0]"
                         : "long p = pos[i]; if (p >= 0 && p < nv) dst[i] = vals[p]; "
                           "if (i == n - 1) err[1] = p >= 0 ? p + 1 : -p - 2";
    kiln_arg v[5] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(pos), KILN_ARG_ARRAY(vals),
                      KILN_ARG_I64((int64_t)values->size), KILN_ARG_ARRAY(flags) };
    if (st == KILN_OK)
        st = launch(queue, args, op, "kiln_mask_assign", NULL, KILN_ELEMENTWISE_ANY_SHAPE, a->size,
                    one ? 4 : 5, v, &c);
    if (st == KILN_OK && !one)
        st = status_end(queue, &c, flags, (int64_t)values->size, what);
    kiln_array_release(vals);
    kiln_array_release(flags);
    kiln_array_release(pos);
    st = kiln__chain_end(&c, st, event);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}
