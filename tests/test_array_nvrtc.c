/* Every generated algorithm kernel compiles for CUDA, checked with NVRTC
 * (no GPU needed; skipped when NVRTC cannot be loaded).
 *
 * 1. The array operations, built-in reductions and scans run on the default
 *    (PoCL) device for every dtype, contiguous and strided, while a hook
 *    records each generated source that can compile as CUDA C; each is
 *    then rebuilt as its CUDA GPU variant (KILN_CPU 0, 256 work-items, the
 *    capability defines of a CUDA GPU) with the CUDA prelude for sm_90.
 *    Sources of native OpenCL C templates (the OpenCL single-pass scan,
 *    chosen on OpenCL GPUs) are skipped: a CUDA device gets the warp scan
 *    instead, which part 2 compiles for the same scans.
 * 2. The CUDA-only single-pass scan (decoupled look-back) is generated for
 *    cumsum/cumprod of every dtype, inclusive and exclusive, contiguous and
 *    strided, and for user scans over structs (the non-commutative affine
 *    map, segmented and not; 2-, 24- and 48-byte types) and compiled the
 *    same way, as are user reductions over structs.
 * NVRTC takes ~0.4 s a source, so by default part 1 covers int8 and
 * float32, part 2 two scans per dtype, and only every third source of both
 * is compiled (KILN_NVRTC_EVERY); KILN_NVRTC_ALL=1 checks every dtype and
 * variant, for sm_90 and sm_80 (~1800 compiles, ~10 minutes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

static const kiln_dtype kDtypes[] = { KILN_INT8,    KILN_UINT8,   KILN_INT16,     KILN_UINT16,
                                      KILN_INT32,   KILN_UINT32,  KILN_INT64,     KILN_UINT64,
                                      KILN_FLOAT32, KILN_FLOAT64, KILN_COMPLEX64, KILN_COMPLEX128,
                                      KILN_BOOL };
#define NDT (sizeof kDtypes / sizeof kDtypes[0])

static char **g_src;
static size_t g_n, g_cap;
static size_t g_opencl_only; /* sources NVRTC cannot compile: skipped */

static void hook(const char *s, unsigned languages) {
    /* A native OpenCL C template (the OpenCL single-pass scan on an OpenCL
     * GPU) is not for NVRTC: its CUDA C counterpart, the warp scan, is
     * what a CUDA device gets, and part 2 compiles it for the same scans. */
    if (!(languages & (1u << KILN_LANG_CUDA_C))) {
        g_opencl_only++;
        return;
    }
    for (size_t k = 0; k < g_n; k++)
        if (!strcmp(g_src[k], s))
            return;
    if (g_n == g_cap) {
        size_t cap = g_cap ? 2 * g_cap : 64;
        char **p = realloc(g_src, cap * sizeof *p);
        if (!p)
            return;
        g_src = p;
        g_cap = cap;
    }
    size_t len = strlen(s) + 1;
    g_src[g_n] = malloc(len);
    if (g_src[g_n]) {
        memcpy(g_src[g_n], s, len);
        g_n++;
    }
}

/* Replaces every occurrence of from by to. */
static char *replace(const char *s, const char *from, const char *to) {
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
        n++;
    char *r = malloc(strlen(s) + n * (tl > fl ? tl - fl : 0) + 1), *w = r;
    if (!r)
        return NULL;
    for (const char *p; (p = strstr(s, from)) != NULL; s = p + fl) {
        memcpy(w, s, (size_t)(p - s));
        w += p - s;
        memcpy(w, to, tl);
        w += tl;
    }
    strcpy(w, s);
    return r;
}

static size_t g_compiled;
static int g_all; /* KILN_NVRTC_ALL=1 */
/* KILN_NVRTC_EVERY=k (default 3; 1 with KILN_NVRTC_ALL=1): only every k-th
 * source is compiled, from a start that varies with $KILN_TEST_SEED, so
 * that CI's runs rotate over all of them at a third of the NVRTC time
 * (~280 s for every source under AddressSanitizer on 2 cores). */
static size_t g_every = 3, g_start, g_seen;

static int dtype_wanted(kiln_dtype d) {
    return g_all || d == KILN_INT8 || d == KILN_FLOAT32 || d == KILN_COMPLEX64 || d == KILN_BOOL;
}

/* Rewrites the device defines of a source generated for another device to
 * those of a CUDA GPU (sm_80+): KILN_CPU 0, 256 work-items, CUDA C with
 * warp shuffles and __nanosleep. */
static char *as_cuda_gpu(const char *src) {
    static const char *const from_to[][2] = {
        { "#define KILN_CPU 1\n", "#define KILN_CPU 0\n" },
        { "#define KILN_LOCAL_SIZE 1\n", "#define KILN_LOCAL_SIZE 256\n" },
        { "#define KILN_CUDA_C 0\n", "#define KILN_CUDA_C 1\n" },
        { "#define KILN_HAS_WARP_SHUFFLE 0\n", "#define KILN_HAS_WARP_SHUFFLE 1\n" },
        { "#define KILN_HAS_SLEEP 0\n", "#define KILN_HAS_SLEEP 1\n" },
    };
    char *cur = replace(src, from_to[0][0], from_to[0][1]);
    for (size_t k = 1; cur && k < sizeof from_to / sizeof from_to[0]; k++) {
        char *next = replace(cur, from_to[k][0], from_to[k][1]);
        free(cur);
        cur = next;
    }
    return cur;
}

/* The plan of a CUDA GPU like an H100 (kiln__plan_for_device's result). */
static kiln__plan cuda_plan(void) {
    kiln__plan plan = { 0 };
    plan.cu = 132;
    plan.local = 256;
    plan.fp64 = 1;
    plan.cuda_c = 1;
    plan.warp_shuffle = 1;
    plan.subgroup_size = 32;
    plan.forward_progress = 1;
    plan.device_sleep = 1;
    return plan;
}

/* KT_SRC_DIR=DIR: each CUDA source compiled here (prelude included) goes
 * to DIR/src-NNN.cu, its first line a comment naming it, for offline
 * checks of the kernels' registers and spills
 * (scripts/cuda-kernel-resources.py). */
static void save_source(const char *full, const char *what) {
    const char *dir = getenv("KT_SRC_DIR");
    static int count;
    char name[64], head[512];
    if (!dir)
        return;
    snprintf(name, sizeof name, "src-%03d.cu", count++);
    snprintf(head, sizeof head, "// %s\n", what);
    kt_save(dir, name, head, full, strlen(full));
}

static void compile_cuda(const char *src, const char *what) {
    if (g_seen++ % g_every != g_start)
        return;
    char *b = as_cuda_gpu(src);
    const char *pre = kiln__embedded_file(kiln__backend_cuda.prelude_file);
    size_t pl = strlen(pre), bl = b ? strlen(b) : 0;
    char *full = b ? malloc(pl + bl + 1) : NULL;
    if (!full) {
        CHECK(full != NULL);
        free(b);
        return;
    }
    memcpy(full, pre, pl);
    memcpy(full + pl, b, bl + 1);
    save_source(full, what);
    static const unsigned ccs[] = { 90, 80 };
    for (size_t k = 0; k < (g_all ? 2u : 1u); k++) {
        void *bin = NULL;
        size_t size = 0;
        int is_ptx = 0;
        char *log = NULL;
        kiln_status st = kiln__cuda_compile(full, NULL, ccs[k], &bin, &size, &is_ptx, &log);
        CHECK_MSG(st == KILN_OK, "%s (sm_%u): %s", what, ccs[k], kiln_last_error_message());
        if (st != KILN_OK)
            printf("--- log ---\n%s\n--- source ---\n%s\n", log ? log : "", b);
        g_compiled += st == KILN_OK;
        KT_FREE(bin, log);
    }
    KT_FREE(full, b);
}

/* The array toolkit's kernels (include/kiln/toolkit.h) for a (1-D) and t
 * (2-D, strided): with once (an integer dtype) all of them, else only the
 * histogram whose edge type depends on the dtype (NVRTC time). */
static void run_toolkit_ops(kiln_queue *q, kiln_array *a, kiln_array *t, int once) {
    kiln_context *c = kiln_queue_context(q);
    /* the ops differ only in expressions: one plain, one struct each */
    static const int axis_ops[] = { KILN_REDUCE_SUM, KILN_REDUCE_ARGMAX, 66 /* STD */ };
    for (size_t k = 0; once && t && k < sizeof axis_ops / sizeof axis_ops[0]; k++)
        for (int ax = 0; ax < 2; ax++) {
            kiln_array *r = NULL;
            (void)kiln_array_reduce_axis(q, (kiln_reduce_op)axis_ops[k], t, ax, 0, 0, NULL, NULL,
                                         &r);
            kiln_array_release(r);
        }
    kiln_array *h = NULL, *e = NULL, *w = NULL;
    (void)kiln_array_histogram(q, a, 16, 0, 1, NULL, 0, NULL, NULL, &h);
    kiln_array_release(h);
    h = NULL;
    if (once)
        (void)kiln_array_histogram(q, a, 5000, 0, 1, NULL, 0, NULL, NULL, &h);
    kiln_array_release(h);
    h = NULL;
    size_t n = kiln_array_size(a);
    if (once && CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, (size_t[]){ 3 },
                                              (double[]){ 0, 1, 2 }, &e)))
        (void)kiln_array_histogram_edges(q, a, e, NULL, 0, NULL, NULL, &h);
    kiln_array_release(h);
    h = NULL;
    if (once)
        (void)kiln_array_bincount(q, a, NULL, 4, &h);
    kiln_array_release(h);
    h = NULL;
    static const kiln_dtype wds[] = { KILN_FLOAT32, KILN_FLOAT64, KILN_INT32, KILN_INT64 };
    for (size_t k = 0; once && k < 4; k++) {
        if (CHECK_OK(kiln_array_zeros(q, wds[k], 1, &n, 0, NULL, NULL, &w)))
            (void)kiln_array_histogram(q, a, 16, 0, 1, w, 0, NULL, NULL, &h);
        KT_RELEASE(h, w);
        h = w = NULL;
    }
    kiln_array_release(e);
    static const kiln_dtype vds[] = { KILN_INT32, KILN_UINT32, KILN_FLOAT32 };
    for (size_t k = 0; once && k < 3; k++) {
        kiln_hash_table *ht = NULL;
        kiln_array *keys = NULL, *vals = NULL;
        if (CHECK_OK(kiln_hash_table_create(q, 8, KILN_UINT32, vds[k], &ht)) &&
            CHECK_OK(kiln_array_arange(q, KILN_UINT32, 4, 0, 1, 0, NULL, NULL, &keys)) &&
            CHECK_OK(kiln_array_zeros(q, vds[k], 1, (size_t[]){ 4 }, 0, NULL, NULL, &vals))) {
            CHECK_OK(kiln_hash_table_add(q, ht, keys, vals));
            CHECK_OK(
                kiln_hash_table_lookup(q, ht, keys, vals, KILN_ARG_U32(0), NULL, 0, NULL, NULL));
            CHECK_OK(kiln_hash_table_erase(q, ht, keys, 0, NULL, NULL));
        }
        KT_RELEASE(keys, vals, ht);
    }
    kiln_allocate *al = NULL;
    if (once && CHECK_OK(kiln_allocate_create(c,
                                              &KILN_ALLOCATE_DESC(.arguments = "const uint *x",
                                                                  .item_type = "uint",
                                                                  .operation = "KILN_EMIT(x[i]);"),
                                              &al))) {
        kiln_array *x = NULL, *it = NULL, *of = NULL;
        if (CHECK_OK(kiln_array_zeros(q, KILN_UINT32, 1, (size_t[]){ 3 }, 0, NULL, NULL, &x))) {
            kiln_arg arg = KILN_ARG_ARRAY(x);
            CHECK_OK(kiln_allocate_run(q, al, 3, 1, &arg, &it, &of));
        }
        KT_RELEASE(x, it, of, al);
    }
    CHECK_OK(kiln_queue_finish(q));
}

/* Part 1: run the operations on the default device with the hook set. */
/* The strided variant over 8 dimensions (views of 4-8 dimensions that do
 * not merge into 3): elementwise, copy, full and axis reductions. */
static void run_nd(kiln_queue *q, kiln_dtype dt) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[5] = { 2, 3, 2, 2, 2 }, ps[5];
    static const int perm[5] = { 4, 0, 3, 1, 2 };
    for (int d = 0; d < 5; d++)
        ps[d] = sh[perm[d]];
    kiln_array *a = NULL, *v = NULL, *o = NULL, *r = NULL;
    if (CHECK_OK(kiln_array_zeros(q, dt, 5, sh, 0, NULL, NULL, &a)) &&
        CHECK_OK(kiln_array_permute(a, perm, &v)) && CHECK_OK(kiln_array_empty(c, dt, 5, ps, &o))) {
        CHECK_OK(kiln_array_copy_out(q, o, v, 0, NULL, NULL));
        CHECK_OK(kiln_array_binary_out(q, KILN_OP_ADD, o, v, v, 0, NULL, NULL));
        unsigned char host[16];
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, v, NULL, host, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_axes(q, KILN_REDUCE_SUM, v, 2, (int[]){ 0, 2 }, 0, 0, NULL, NULL,
                                        &r));
        CHECK_OK(kiln_queue_finish(q));
    }
    KT_RELEASE(r, o, v, a);
}

static void run_ops(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (size_t d = 0; d < NDT; d++) {
        kiln_dtype dt = kDtypes[d];
        if (!dtype_wanted(dt))
            continue;
        size_t shape[2] = { 2, 3 }, n = 6;
        kiln_array *a = NULL, *b = NULL, *o = NULL, *t = NULL, *ot = NULL;
        if (!CHECK_OK(kiln_array_zeros(q, dt, 1, &n, 0, NULL, NULL, &a)) ||
            !CHECK_OK(kiln_array_full(q, dt, 1, &n, KILN_ARG_I32(0), 0, NULL, NULL, &b)) ||
            !CHECK_OK(kiln_array_empty(c, dt, 1, &n, &o)))
            goto done;
        kiln_array *m = NULL;
        if (CHECK_OK(kiln_array_reshape(a, 2, shape, &m))) {
            CHECK_OK(kiln_array_swapaxes(m, 0, 1, &t)); /* strided */
            kiln_array_release(m);
        }
        if (CHECK_OK(kiln_array_empty(c, dt, 2, (size_t[]){ 3, 2 }, &ot)))
            (void)0;
        /* every op (those a dtype does not take fail before any source);
         * the scalar and strided forms for the first twelve */
        for (int op = KILN_OP_ADD; op <= KILN_OP_LOGADDEXP; op++) {
            (void)kiln_array_binary_out(q, (kiln_binary_op)op, o, a, b, 0, NULL, NULL);
            if (op > KILN_OP_GE)
                continue;
            (void)kiln_array_binary_scalar_out(q, (kiln_binary_op)op, o, a, kt_scalar(dt, 3.0), 0,
                                               NULL, NULL);
            if (t && ot)
                (void)kiln_array_binary_out(q, (kiln_binary_op)op, ot, t, t, 0, NULL, NULL);
        }
        for (int op = KILN_OP_NEG; op <= KILN_OP_SIGNBIT; op++)
            (void)kiln_array_unary_out(q, (kiln_unary_op)op, o, a, 0, NULL, NULL);
        (void)kiln_array_axpy_out(q, o, kt_scalar(dt, 2.0), a, b, 0, NULL, NULL);
        if (dt == KILN_FLOAT32) { /* the scalar astype kernel to float16 */
            kiln_array *h = NULL;
            if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &h)))
                CHECK_OK(kiln_array_astype_out(q, h, a, 0, NULL, NULL));
            kiln_array_release(h);
        }
        if (dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128) {
            /* the complex ops with a real side */
            kiln_dtype pd = dt == KILN_COMPLEX64 ? KILN_FLOAT32 : KILN_FLOAT64;
            kiln_array *re = NULL, *h = NULL;
            if (CHECK_OK(kiln_array_empty(c, pd, 1, &n, &re))) {
                CHECK_OK(kiln_array_unary_out(q, KILN_OP_ABS, re, a, 0, NULL, NULL));
                CHECK_OK(kiln_array_complex_cast_out(q, re, a, 0, NULL, NULL));
                CHECK_OK(kiln_array_complex_cast_out(q, o, re, 0, NULL, NULL));
                CHECK_OK(kiln_array_binary_out(q, KILN_OP_EQ, re, a, b, 0, NULL, NULL));
            }
            if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &h)))
                CHECK_OK(kiln_array_complex_cast_out(q, o, h, 0, NULL, NULL));
            KT_RELEASE(re, h);
        }
        kiln_array *r = NULL;
        for (int op = KILN_REDUCE_SUM; op <= KILN_REDUCE_ALL; op++) {
            kiln_dtype rd = kiln_dtype_reduce_result((kiln_reduce_op)op, dt);
            if (!rd)
                continue;
            unsigned char host[16];
            (void)kiln_array_reduce_async(q, (kiln_reduce_op)op, a, NULL, host, 0, NULL, NULL);
            if (t)
                (void)kiln_array_reduce_async(q, (kiln_reduce_op)op, t, NULL, host, 0, NULL, NULL);
            CHECK_OK(kiln_queue_finish(q)); /* host is read into */
        }
        if (CHECK_OK(kiln_array_empty(c, dt, 1, (size_t[]){ 1 }, &r))) {
            (void)kiln_array_dot_async(q, a, b, r, NULL, 0, NULL, NULL);
            (void)kiln_array_vdot_async(q, a, b, r, NULL, 0, NULL, NULL);
            (void)kiln_array_conj_out(q, o, a, 0, NULL, NULL);
            kiln_array_release(r);
        }
        for (int ex = 0; ex < 2; ex++) {
            (void)kiln_array_cumsum_out(q, o, a, ex, 0, NULL, NULL);
            (void)kiln_array_cumprod_out(q, o, a, ex, 0, NULL, NULL);
        }
        (void)kiln_array_copy_out(q, ot, t, 0, NULL, NULL);
        CHECK_OK(kiln_queue_finish(q));
        run_toolkit_ops(q, a, t, dt == KILN_INT8);
        if (dt == KILN_FLOAT32)
            run_nd(q, dt);
    done:
        KT_RELEASE(a, b, o, t, ot);
    }
}

/* The toolkit's kernels with CUDA-specific text: the emulated atomic adds
 * of put (8/16-bit, float16, float64, 64-bit CAS), the double-to-half
 * conversion of astype, the status words of take's error mode, mask
 * assignment and where with promotion. */
static void run_toolkit(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    /* one of each kind of atomic add: sub-word CAS (int8, float16), a
     * 64-bit CAS (float64), 64-bit add (int64); the other ops once */
    static const kiln_dtype add[] = { KILN_INT8, KILN_FLOAT16, KILN_FLOAT64, KILN_INT64 };
    size_t n = 6;
    kiln_array *idx = NULL, *m = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT64, 1, &n, 0, NULL, NULL, &idx));
    CHECK_OK(kiln_array_zeros(q, KILN_UINT8, 1, &n, 0, NULL, NULL, &m));
    for (size_t k = 0; k < sizeof add / sizeof add[0]; k++) {
        kiln_array *a = NULL, *h = NULL, *o = NULL;
        if (!CHECK_OK(kiln_array_zeros(q, add[k], 1, &n, 0, NULL, NULL, &a)))
            continue;
        (void)kiln_array_put(q, a, idx, a, KILN_INDEX_WRAP, KILN_PUT_ADD, 0, NULL, NULL);
        if (k == 0) {
            (void)kiln_array_put(q, a, idx, a, KILN_INDEX_WRAP, KILN_PUT_ASSIGN_LAST, 0, NULL,
                                 NULL);
            (void)kiln_array_mask_assign(q, a, m, a, 0, NULL, &e);
            kiln_event_release(e);
            e = NULL;
        }
        if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &h)) &&
            add[k] == KILN_FLOAT64) /* double to half */
            (void)kiln_array_astype_out(q, h, a, 0, NULL, NULL);
        if (k == 0 && CHECK_OK(kiln_array_empty(c, add[k], 1, &n, &o))) {
            (void)kiln_array_take_out(q, o, a, idx, KILN_INDEX_ERROR, 0, NULL, &e);
            kiln_event_release(e);
            e = NULL;
            (void)kiln_array_astype_out(q, o, h, 0, NULL, NULL);
            (void)kiln_array_where_out(q, o, m, a, a, 0, NULL, NULL);
            (void)kiln_array_clip_out(q, o, a, KILN_ARG_F64(-1), KILN_ARG_F64(1), 0, NULL, NULL);
        }
        CHECK_OK(kiln_queue_finish(q));
        KT_RELEASE(a, h, o);
    }
    KT_RELEASE(idx, m);
}

static const char *kAffPre =
    "typedef struct { uint a, b; } aff;\n"
    "KILN_FUNC aff mk(uint a, uint b) { aff r; r.a = a; r.b = b; return r; }\n"
    "KILN_FUNC aff then(aff f, aff g) { return mk(g.a*f.a, g.a*f.b + g.b); }\n"
    "typedef struct { double x, y, z; } v3;\n"
    "KILN_FUNC v3 v3mk(double x) { v3 r; r.x = x; r.y = 2*x; r.z = 0; return r; }\n"
    "KILN_FUNC v3 v3add(v3 a, v3 b) { v3 r; r.x = a.x+b.x; r.y = a.y+b.y; "
    "r.z = a.z+b.z; return r; }\n"
    "typedef struct { double m[6]; } big;\n"
    "KILN_FUNC big bigmk(double x) { big r; for (int k = 0; k < 6; k++) "
    "r.m[k] = x; return r; }\n"
    "KILN_FUNC big bigadd(big a, big b) { for (int k = 0; k < 6; k++) "
    "a.m[k] += b.m[k]; return a; }\n";

static void scan_cuda(kiln_context *c, const kiln_scan_desc *d, const char *what) {
    kiln_scan *s = NULL;
    if (!CHECK_OK(kiln__scan_create_ex(c, d, 0, &s)))
        return;
    kiln__plan plan = cuda_plan();
    for (int strided = 0; strided < 2; strided++) {
        kiln__sb sb = { 0 };
        if (CHECK_OK(kiln__scan_source(s, strided, &plan, &sb))) {
            CHECK_MSG(strstr(sb.p, "_onepass(") != NULL && strstr(sb.p, "__shfl_") != NULL,
                      "%s: not the warp single-pass kernel", what);
            /* a tile's value rides in its status word up to 8 bytes: a
             * 64-bit word up to 4, a 16-byte one above */
            int packed = s->scan_size <= 4 ? 1 : s->scan_size <= 8 ? 2 : 0;
            char def[40];
            snprintf(def, sizeof def, "#define KILN_PACKED %d\n", packed);
            CHECK_MSG(strstr(sb.p, def) != NULL, "%s: status words not packed as %d (%zu bytes)",
                      what, packed, s->scan_size);
            char w[160];
            snprintf(w, sizeof w, "%s%s", what, strided ? " (strided)" : "");
            compile_cuda(sb.p, w);
        }
        kiln__sb_free(&sb);
    }
    kiln_scan_release(s);
}

/* The selection engine's warp scan with a kept value (kiln_scan.keep: the
 * stored item rides in registers from the load to the output), as the
 * ready-made copy_if and unique build it: counts of int (and long for 2^31
 * items or more), kept values of 4 and 8 bytes. */
static void sel_cuda(kiln_context *c) {
    static const struct {
        const char *bits, *pred;
        size_t size;
        int wide;
    } k[] = { { "float", "kiln_a[i] > 0.5f", 4, 0 },
              { "uint", "i == 0 || kiln_a[i] != kiln_a[i - 1]", 4, 0 },
              { "uint", "i == 0 || kiln_a[i] != kiln_a[i - 1]", 4, 1 },
              { "double", "kiln_a[i] < 0.0", 8, 0 },
              { "uchar", "kiln_a[i] & 1", 1, 0 } };
    for (size_t j = 0; j < sizeof k / sizeof k[0]; j++) {
        char args[128], what[96];
        snprintf(args, sizeof args, "const %s *kiln_a, %s *kiln_out, long *kiln_count", k[j].bits,
                 k[j].bits);
        kiln__sb pre = { 0 }, out = { 0 };
        kiln__sel_functions(&pre, NULL, k[j].pred, 0, "kiln_out[out_index] = kiln_kept", NULL);
        kiln_scan_desc d = kiln__sel_desc(k[j].wide, KILN__SEL_STORE, pre.p, "kiln_copy_if", &out);
        /* the second and third compare neighbours' kept values, as
         * unique */
        kiln__sel_keep keep = { k[j].bits, "kiln_a[i]",
                                j == 1 || j == 2 ? "(i == 0) | (kiln_kept != "
                                                   "kiln_prev_kept)"
                                                 : NULL,
                                k[j].size };
        kiln_scan *s = NULL;
        if (CHECK_OK(
                kiln__sel_create(c, NULL, args, &d, k[j].pred, &keep, KILN__SEL_COUNT, 0, &s))) {
            kiln__plan plan = cuda_plan();
            kiln__sb sb = { 0 };
            if (CHECK_OK(kiln__scan_source(s, 0, &plan, &sb))) {
                CHECK_MSG(strstr(sb.p, "#define KILN_SCAN_KEEP 1") && strstr(sb.p, "__shfl_"),
                          "selection %zu: not the warp scan with kept values", j);
                /* the count's store: once, in the lane with the last item */
                CHECK_MSG(strstr(sb.p, "#define KILN_SCAN_LAST 1") &&
                              !strstr(sb.p, "if (i == n - 1)"),
                          "selection %zu: the count's store not apart", j);
                snprintf(what, sizeof what, "selection keeping %s (%s)", k[j].bits,
                         k[j].wide ? "long counts" : "int counts");
                compile_cuda(sb.p, what);
            }
            kiln__sb_free(&sb);
        }
        kiln__sel_release(s);
        kiln__sb_free(&pre);
        kiln__sb_free(&out);
    }
}

static void red_cuda(kiln_context *c, const kiln_reduction_desc *d, const char *what) {
    kiln_reduction *r = NULL;
    if (!CHECK_OK(kiln__reduction_create_ex(c, d, NULL, NULL, 0, 0, &r)))
        return;
    kiln__plan plan = cuda_plan();
    for (int strided = 0; strided < 2; strided++) {
        kiln__sb sb = { 0 };
        if (CHECK_OK(kiln__reduction_source(r, strided, &plan, &sb)))
            compile_cuda(sb.p, what);
        kiln__sb_free(&sb);
    }
    kiln_reduction_release(r);
}

/* astype's vector kernel (four elements per thread, 16-byte loads; a GPU
 * path, so PoCL never generates it for the hook): the conversions whose
 * text differs, float to half, saturating float to integer, integer to
 * float, integer wrapping. */
static void astype_cuda(kiln_context *c) {
    static const kiln_dtype pairs[][2] = { { KILN_FLOAT32, KILN_FLOAT16 },
                                           { KILN_FLOAT32, KILN_INT16 },
                                           { KILN_FLOAT32, KILN_UINT32 },
                                           { KILN_INT32, KILN_FLOAT32 },
                                           { KILN_UINT32, KILN_UINT16 } };
    kiln__plan plan = cuda_plan();
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        kiln_elementwise *ew = NULL;
        if (!CHECK_OK(kiln__astype_vec_kernel(c, pairs[k][0], pairs[k][1], &ew)))
            continue;
        kiln__sb sb = { 0 };
        if (CHECK_OK(kiln__elementwise_source(ew, 0, &plan, &sb))) {
            CHECK_MSG(strstr(sb.p, "KILN_AST_LD4(") != NULL,
                      "astype %s -> %s: not the vector kernel", kiln_dtype_name(pairs[k][0]),
                      kiln_dtype_name(pairs[k][1]));
            char what[96];
            snprintf(what, sizeof what, "astype vector %s -> %s", kiln_dtype_name(pairs[k][0]),
                     kiln_dtype_name(pairs[k][1]));
            compile_cuda(sb.p, what);
        }
        kiln__sb_free(&sb);
        kiln_elementwise_release(ew);
    }
}

/* Checks that a generated source (status st) has the lanes path and
 * compiles it; frees it. */
static void compile_lanes(kiln_status st, kiln__sb *sb, const char *kind, size_t k) {
    if (CHECK_OK(st)) {
        CHECK_MSG(strstr(sb->p, "kiln_lanes_fn(") != NULL, "%s lanes case %zu: no lanes path", kind,
                  k);
        char what[64];
        snprintf(what, sizeof what, "%s lanes case %zu", kind, k);
        compile_cuda(sb->p, what);
    }
    kiln__sb_free(sb);
}

/* The lanes path of kiln's own elementwise operators (a GPU path, so the
 * PoCL hook never records it): element sizes 4 (one 16-byte access), 1
 * with 8 (4 bytes; two 16-byte accesses), 2 (8 bytes) with a scalar. */
static void lanes_cuda(kiln_context *c) {
    static const char *const cases[][2] = {
        { "float a, const float *x, const float *y, float *z", "z[i] = a*x[i] + y[i]" },
        { "const char *c, const double *x, double *z", "z[i] = c[i] != 0 ? x[i] : -x[i]" },
        { "const ushort *x, ushort s, ushort *z", "z[i] = x[i] ^ s" }
    };
    kiln__plan plan = cuda_plan();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kiln_elementwise *ew = NULL;
        if (!CHECK_OK(kiln__elementwise_cached_ex(c, cases[k][0], cases[k][1], "kiln_lanes_nvrtc",
                                                  NULL, KILN__ELEMENTWISE_LANES, &ew)))
            continue;
        kiln__sb sb = { 0 };
        compile_lanes(kiln__elementwise_source(ew, 0, &plan, &sb), &sb, "elementwise", k);
        kiln_elementwise_release(ew);
    }
}

/* The lanes path of the built-in reductions' stage 1 (sum of float32, dot
 * of float64, any of int8). */
static void red_lanes_cuda(kiln_context *c) {
    static const char *const cases[][4] = {
        { "const float *x", "float", "x[i]", "a+b" },
        { "const double *x, const double *y", "double", "x[i]*y[i]", "a+b" },
        { "const char *x", "uchar", "(uchar)(x[i] != 0)", "a | b" }
    };
    kiln__plan plan = cuda_plan();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kiln_reduction_desc d =
            KILN_REDUCTION_DESC(.arguments = cases[k][0], .out_type = cases[k][1], .neutral = "0",
                                .reduce = cases[k][3], .map = cases[k][2],
                                .name = "kiln_red_lanes");
        kiln_reduction *r = NULL;
        if (!CHECK_OK(kiln__reduction_create_ex(c, &d, NULL, NULL, 0, 0, &r)))
            continue;
        kiln__reduction_allow_lanes(r);
        kiln__sb sb = { 0 };
        compile_lanes(kiln__reduction_source(r, 0, &plan, &sb), &sb, "reduction", k);
        kiln_reduction_release(r);
    }
}

/* Part 2: the CUDA-only variants, generated directly. */
static void cuda_only(kiln_context *c) {
    for (size_t k = 0; k < NDT; k++) {
        if (kDtypes[k] == KILN_COMPLEX64 || kDtypes[k] == KILN_COMPLEX128 ||
            kDtypes[k] == KILN_BOOL) /* bool: no scans (not numeric) */
            continue;                /* no built-in scans of complex arrays */
        const char *t = kiln_dtype_name(kDtypes[k]);
        char args[96], what[96];
        snprintf(args, sizeof args, "const %s *x, %s *y", t, t);
        for (int v = 0; v < 4; v++) {
            int prod = v & 1, ex = v >> 1;
            if (!g_all && v != 0 && v != 3)
                continue;
            kiln_scan_desc d =
                KILN_SCAN_DESC(args, t, 0, prod ? "1" : "0", prod ? "a*b" : "a+b", "x[i]",
                               ex ? "y[i] = prev_item" : "y[i] = item", NULL, NULL, "kiln_cum");
            snprintf(what, sizeof what, "cum%s %s%s", prod ? "prod" : "sum", t,
                     ex ? " exclusive" : "");
            scan_cuda(c, &d, what);
        }
    }
    kiln_scan_desc aff = KILN_SCAN_DESC("const uint *A, const uint *B, uint *OA, uint *OB, "
                                        "uint *PB",
                                        "aff", 8, "mk(1u, 0u)", "then(a, b)", "mk(A[i], B[i])",
                                        "OA[i] = item.a; OB[i] = item.b; PB[i] = "
                                        "prev_item.b",
                                        NULL, kAffPre, "affine");
    scan_cuda(c, &aff, "affine");
    aff.arguments = "const uint *A, const uint *B, const uchar *F, uint *OA, "
                    "uint *OB, uint *PB";
    aff.segment_start = "F[i]";
    scan_cuda(c, &aff, "affine segmented");
    kiln_scan_desc sh =
        KILN_SCAN_DESC("const short *x, const uchar *f, short *y", "short", 0, "0", "a+b", "x[i]",
                       "y[i] = item + prev_item", "f[i] != 0", NULL, "segshort");
    scan_cuda(c, &sh, "segmented short");
    kiln_scan_desc v3 =
        KILN_SCAN_DESC("const double *x, double *y", "v3", 24, "v3mk(0)", "v3add(a, b)",
                       "v3mk(x[i])", "y[i] = item.y", NULL, kAffPre, "v3scan");
    scan_cuda(c, &v3, "24-byte struct");
    kiln_scan_desc big =
        KILN_SCAN_DESC("const double *x, double *y", "big", 48, "bigmk(0)", "bigadd(a, b)",
                       "bigmk(x[i])", "y[i] = item.m[5]", "x[i] < 0", kAffPre, "bigscan");
    scan_cuda(c, &big, "48-byte struct segmented");

    kiln_reduction_desc rd = KILN_REDUCTION_DESC("const double *x", "v3", 24, "v3mk(0)",
                                                 "v3add(a, b)", "v3mk(x[i])", kAffPre, "v3red");
    red_cuda(c, &rd, "reduction over a 24-byte struct");
    kiln_reduction_desc rc =
        KILN_REDUCTION_DESC("const char *x", "char", 0, "0", "a+b", "x[i]", NULL, "charred");
    red_cuda(c, &rc, "reduction over char");
    sel_cuda(c);
    astype_cuda(c);
    lanes_cuda(c);
    red_lanes_cuda(c);
}

/* The scan template is chosen by capability: the warp scan where CUDA C
 * with warp shuffles and forward progress is there (never on an OpenCL
 * device, whose source NVRTC could not compile), the OpenCL single pass on
 * OpenCL GPUs with forward progress, the three-phase one otherwise. */
static void variant_choice(kiln_context *c) {
    kiln_scan_desc d =
        KILN_SCAN_DESC(.arguments = "const int *x, int *y", .scan_type = "int", .neutral = "0",
                       .scan = "a+b", .input = "x[i]", .output = "y[i] = item", .name = "choice");
    kiln_scan *s = NULL;
    if (!CHECK_OK(kiln__scan_create_ex(c, &d, 0, &s)))
        return;
    kiln__plan cuda = cuda_plan(), ocl_gpu = { 0 }, slow = { 0 }, cpu = { 0 };
    ocl_gpu.cu = 132;
    ocl_gpu.local = 256;
    ocl_gpu.opencl_c = 1;
    ocl_gpu.forward_progress = 1;
    ocl_gpu.subgroup_size = 32; /* NVIDIA's OpenCL reports its warp size */
    slow = ocl_gpu;
    slow.forward_progress = 0;
    cpu.cpu = 1;
    cpu.cu = 4;
    cpu.local = 1;
    cpu.opencl_c = 1;
    static const char *const names[4] = { "CUDA GPU", "OpenCL GPU",
                                          "OpenCL GPU without forward progress", "CPU" };
    const kiln__plan *plans[4] = { &cuda, &ocl_gpu, &slow, &cpu };
    for (int k = 0; k < 4; k++) {
        kiln__sb sb = { 0 };
        if (CHECK_OK(kiln__scan_source(s, 0, plans[k], &sb))) {
            int warp = strstr(sb.p, "__shfl_") != NULL;
            int onepass = strstr(sb.p, "_onepass(") != NULL;
            CHECK_MSG(warp == (k == 0) && onepass == (k < 2), "%s: warp %d, single pass %d",
                      names[k], warp, onepass);
            CHECK_MSG(!strstr(sb.p, "KILN_BACKEND"), "%s: names a backend", names[k]);
        }
        kiln__sb_free(&sb);
    }
    kiln_scan_release(s);
}

/* The random fills, every algorithm, distribution and dtype, on the GPU
 * walks: 16-byte stores (contiguous; CUDA's are inline PTX) and per element
 * (a strided view). main sets KILN_RNG_WIDE=0 so that PoCL generates the
 * blocked walk a GPU gets instead of its own wide CPU one. */
static void run_random(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const kiln_dtype real[] = { KILN_FLOAT32, KILN_FLOAT64 },
                            ints[] = { KILN_INT32, KILN_UINT32, KILN_INT64 };
    for (int alg = 0; alg < 3; alg++) {
        kiln_rng *rng = NULL;
        kiln_rng_desc d = KILN_RNG_DESC(.algorithm = (kiln_rng_algorithm)alg, .seed = 7);
        if (!CHECK_OK(kiln_rng_create(&d, &rng)))
            continue;
        size_t n = 64;
        kiln_slice every_other = KILN_SLICE(0, 64, 2);
        for (int k = 0; k < 5; k++) {
            kiln_dtype t = k < 2 ? real[k] : ints[k - 2];
            kiln_array *a = NULL, *v = NULL;
            if (!CHECK_OK(kiln_array_empty(c, t, 1, &n, &a)))
                continue;
            CHECK_OK(kiln_array_view(a, &every_other, &v));
            kiln_array *both[2] = { a, v };
            for (int w = 0; w < 2; w++) {
                if (k < 2) {
                    CHECK_OK(kiln_rng_uniform(q, rng, both[w], 0, NULL, NULL));
                    CHECK_OK(kiln_rng_normal(q, rng, both[w], 0.0, 1.0, 0, NULL, NULL));
                } else {
                    CHECK_OK(kiln_rng_integers(q, rng, both[w], 0, 1000, 0, NULL, NULL));
                }
            }
            CHECK_OK(kiln_queue_finish(q));
            KT_RELEASE(v, a);
        }
        kiln_rng_release(rng);
    }
}

int main(void) {
    setenv("KILN_RNG_WIDE", "0", 1); /* before kiln reads its knobs */
    /* the warp scan's quads (off by default there): their kernels hold
     * both paths, so this compiles both */
    setenv("KILN_SCAN_VEC", "1", 0);
    /* kept values in registers for every width (by default only 4-byte
     * values and counts): sel_cuda compiles them all */
    setenv("KILN_SCAN_KEEP", "1", 0);
    if (getenv("KILN_SCAN_VARIANT") == NULL) {
        kiln_queue *q0 = NULL;
        if (kiln_queue_create_default(NULL, 0, &q0) == KILN_OK)
            variant_choice(kiln_queue_context(q0));
        kiln_queue_release(q0);
    }
    if (!kiln__cuda_nvrtc_ready()) {
        /* the template-choice checks above ran (a failure there still
         * fails); the compiles, this test's point, cannot */
        KT_SKIP("NVRTC not found: CUDA compile checks not run");
    }
    kiln_queue *q = NULL;
    if (kiln_queue_create_default(NULL, 0, &q) != KILN_OK) {
        KT_SKIP("no device to generate on");
    }
    const char *all = getenv("KILN_NVRTC_ALL");
    g_all = all && all[0] == '1';
    const char *every = getenv("KILN_NVRTC_EVERY");
    if (g_all)
        g_every = 1;
    if (every && strtoul(every, NULL, 10) > 0)
        g_every = strtoul(every, NULL, 10);
    g_start = (size_t)(kt_rand_u64() % g_every);
    kiln__gen_source_hook = hook;
    run_ops(q);
    run_toolkit(q);
    run_random(q);
    kiln__gen_source_hook = NULL;
    CHECK_MSG(g_n > (g_all ? 300u : 60u), "only %zu sources recorded", g_n);
    for (size_t k = 0; k < g_n; k++) {
        char what[64];
        snprintf(what, sizeof what, "generated source %zu", k);
        compile_cuda(g_src[k], what);
        free(g_src[k]);
    }
    free(g_src);
    size_t recorded = g_n;
    cuda_only(kiln_queue_context(q));
    printf("%zu recorded sources (%zu native OpenCL C ones skipped) and the "
           "CUDA-only variants, 1 in %zu of %zu sources compiled: %zu NVRTC compiles OK\n",
           recorded, g_opencl_only, g_every, g_seen, g_compiled);
    CHECK_MSG(g_compiled >= g_seen / g_every, "%zu of %zu sources compiled", g_compiled, g_seen);
    kiln_queue_release(q);
    return kt_report();
}
