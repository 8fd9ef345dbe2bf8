/* Arrays over existing buffers (kiln_array_from_buffer) and DLPack export
 * and import (kiln/dlpack.h): layouts (offsets, strides, negative and zero
 * strides) against a host gather of the same bytes, bounds errors; export
 * of every dtype (type codes, shape, strides, byte_offset, the elements
 * read through the tensor, writes through it reaching the array after the
 * deleter), round trips through both managed tensor kinds, imports of
 * hand-made tensors (strided, byte_offset, 0-d, empty, bool), and bad
 * tensors as errors that leave the deleter uncalled. On a CUDA device the
 * import is zero copy and the deleter runs when the last view goes. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kiln/dlpack.h"

/* ------------------------------------------------- arrays over buffers */

/* Reads arr and compares it with the elements of bytes at the given
 * layout (element offset off0, strides in elements, up to 3 dims). */
static int same_as_layout(kiln_queue *q, kiln_array *arr, const float *bytes, unsigned ndim,
                          const size_t *shape, const ptrdiff_t *strides, ptrdiff_t off0) {
    size_t n = kiln_array_size(arr);
    float *got = malloc((n ? n : 1) * sizeof *got);
    if (!got) {
        CHECK(0);
        return 0;
    }
    if (!CHECK_OK(kiln_array_read(q, arr, got))) {
        free(got);
        return 0;
    }
    size_t sh[3] = { 1, 1, 1 };
    ptrdiff_t sd[3] = { 0, 0, 0 };
    for (unsigned d = 0; d < ndim; d++) {
        sh[3 - ndim + d] = shape[d];
        sd[3 - ndim + d] = strides[d];
    }
    int ok = 1;
    size_t at = 0;
    for (size_t i = 0; i < sh[0]; i++)
        for (size_t j = 0; j < sh[1]; j++)
            for (size_t k = 0; k < sh[2]; k++)
                ok &= got[at++] == bytes[off0 + (ptrdiff_t)i * sd[0] + (ptrdiff_t)j * sd[1] +
                                         (ptrdiff_t)k * sd[2]];
    free(got);
    return ok;
}

static void test_from_buffer(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    enum { N = 256 };
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i * 0.5f - 7.0f;
    kiln_buffer *buf = NULL;
    if (!CHECK_OK(kiln_buffer_create(ctx, sizeof host, 0, host, &buf)))
        return;
    static const struct {
        unsigned ndim;
        size_t shape[3];
        ptrdiff_t strides[3]; /* all 0: NULL (dense) */
        size_t offset;        /* elements */
    } cases[] = {
        { 1, { N }, { 0 }, 0 },                /* the whole buffer */
        { 1, { 17 }, { 0 }, 64 },              /* dense at an offset */
        { 2, { 3, 4 }, { 8, 2 }, 2 },          /* strided */
        { 1, { 11 }, { -1 }, 10 },             /* reversed: elements 10..0 */
        { 2, { 5, 7 }, { -20, 3 }, 100 },      /* negative outer stride */
        { 2, { 4, 3 }, { 0, 1 }, 5 },          /* zero stride: repeated rows */
        { 3, { 2, 3, 5 }, { 60, -5, 1 }, 10 }, /* 3-D, mixed */
        { 3, { 2, 3, 4 }, { 0 }, 1 },          /* 3-D dense */
        { 1, { 1 }, { 0 }, N - 1 },            /* the last element */
        { 2, { 0, 5 }, { 0 }, N },             /* empty at the very end */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int dense = cases[c].strides[0] == 0 && cases[c].strides[1] == 0;
        ptrdiff_t st[3];
        memcpy(st, cases[c].strides, sizeof st);
        if (dense)
            for (unsigned d = cases[c].ndim, s = 1; d-- > 0;) {
                st[d] = (ptrdiff_t)s;
                s *= (unsigned)cases[c].shape[d];
            }
        kiln_array *a = NULL;
        if (!CHECK_OK(kiln_array_from_buffer(buf, cases[c].offset * sizeof(float), KILN_FLOAT32,
                                             cases[c].ndim, cases[c].shape,
                                             dense ? NULL : cases[c].strides, &a)))
            continue;
        kiln_array_info info;
        CHECK(kiln_array_get_info(a, &info) == KILN_OK && info.offset == cases[c].offset &&
              info.ndim == cases[c].ndim);
        CHECK(kiln_array_buffer(a) == buf && kiln_array_context(a) == ctx);
        CHECK_MSG(same_as_layout(q, a, host, cases[c].ndim, cases[c].shape, st,
                                 (ptrdiff_t)cases[c].offset),
                  "from_buffer case %zu", c);
        kiln_array_release(a);
    }
    /* A view of an array over a buffer, and a write through one. */
    kiln_array *a = NULL, *v = NULL;
    size_t shape2[2] = { 8, 8 };
    if (CHECK_OK(
            kiln_array_from_buffer(buf, 128 * sizeof(float), KILN_FLOAT32, 2, shape2, NULL, &a))) {
        kiln_slice sl[2] = { KILN_SLICE(1, 7, 2), KILN_SLICE_REVERSED };
        if (CHECK_OK(kiln_array_view(a, sl, &v))) {
            float one = 1.0f;
            CHECK_OK(kiln_array_fill(q, v, KILN_ARG_F32(one), 0, NULL, NULL));
            float all[N];
            CHECK_OK(kiln_buffer_read(q, buf, 0, sizeof all, all));
            int ok = 1;
            for (int i = 0; i < N; i++) {
                int r = (i - 128) / 8;
                int in = i >= 128 && i < 192 && r % 2 == 1 && r < 7;
                ok &= all[i] == (in ? 1.0f : host[i]);
            }
            CHECK_MSG(ok, "a fill through a view of a buffer array");
        }
        KT_RELEASE(v, a);
    }
    /* Bounds and arguments. */
    size_t s1[1] = { N + 1 }, s4[4] = { 1, 1, 1, 1 }, s2[2] = { 4, 4 };
    ptrdiff_t back[1] = { -1 }, big[2] = { PTRDIFF_MAX / 2, 1 };
    size_t s10[1] = { 10 };
    kiln_array *bad = (kiln_array *)1;
    CHECK_STATUS(kiln_array_from_buffer(buf, 0, KILN_FLOAT32, 1, s1, NULL, &bad),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(bad == NULL);
    CHECK_STATUS(kiln_array_from_buffer(buf, 2, KILN_FLOAT32, 1, s10, NULL, &bad),
                 KILN_ERROR_INVALID_ARGUMENT); /* not a multiple of 4 */
    CHECK_STATUS(kiln_array_from_buffer(buf, sizeof host + 4, KILN_FLOAT32, 1, s10, NULL, &bad),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(
        kiln_array_from_buffer(buf, (N - 5) * sizeof(float), KILN_FLOAT32, 1, s10, NULL, &bad),
        KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_from_buffer(buf, 5 * sizeof(float), KILN_FLOAT32, 1, s10, back, &bad),
                 KILN_ERROR_OUT_OF_RANGE); /* reaches before byte 0 */
    CHECK_STATUS(kiln_array_from_buffer(buf, 0, KILN_FLOAT32, 2, s2, big, &bad),
                 KILN_ERROR_OUT_OF_RANGE);                                     /* overflows */
    CHECK_OK(kiln_array_from_buffer(buf, 0, KILN_FLOAT32, 4, s4, NULL, &bad)); /* 4-D */
    kiln_array_release(bad);
    CHECK_STATUS(kiln_array_from_buffer(buf, 0, KILN_FLOAT32, 9, s4, NULL, &bad),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_from_buffer(buf, 0, (kiln_dtype)99, 1, s10, NULL, &bad),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_from_buffer(NULL, 0, KILN_FLOAT32, 1, s10, NULL, &bad),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_from_buffer(buf, 0, KILN_FLOAT32, 1, s10, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_buffer_release(buf);
}

/* ------------------------------------------------------------- DLPack */

static const struct {
    kiln_dtype dtype;
    uint8_t code, bits;
} type_table[] = {
    { KILN_INT8, kDLInt, 8 },       { KILN_UINT8, kDLUInt, 8 },     { KILN_INT16, kDLInt, 16 },
    { KILN_UINT16, kDLUInt, 16 },   { KILN_INT32, kDLInt, 32 },     { KILN_UINT32, kDLUInt, 32 },
    { KILN_INT64, kDLInt, 64 },     { KILN_UINT64, kDLUInt, 64 },   { KILN_FLOAT16, kDLFloat, 16 },
    { KILN_FLOAT32, kDLFloat, 32 }, { KILN_FLOAT64, kDLFloat, 64 },
};
#define NUM_TYPES (sizeof type_table / sizeof type_table[0])

/* A consumer's view of an exported tensor: its elements through data +
 * byte_offset and the strides, gathered in C order into out (host memory
 * only: kDLCPU). */
static void gather_tensor(const DLTensor *t, size_t es, void *out) {
    size_t sh[3] = { 1, 1, 1 };
    ptrdiff_t sd[3] = { 0, 0, 0 };
    for (int d = 0; d < t->ndim; d++) {
        sh[3 - t->ndim + d] = (size_t)t->shape[d];
        sd[3 - t->ndim + d] = (ptrdiff_t)t->strides[d];
    }
    const char *e0 = (const char *)t->data + t->byte_offset;
    char *dst = out;
    for (size_t i = 0; i < sh[0]; i++)
        for (size_t j = 0; j < sh[1]; j++)
            for (size_t k = 0; k < sh[2]; k++, dst += es)
                memcpy(dst,
                       e0 + ((ptrdiff_t)i * sd[0] + (ptrdiff_t)j * sd[1] + (ptrdiff_t)k * sd[2]) *
                                (ptrdiff_t)es,
                       es);
}

/* Export of every dtype, of a strided view with an offset: the tensor's
 * fields, and its elements equal the view's. */
static void test_export(kiln_queue *q, int host_memory) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t shape[2] = { 7, 9 };
    for (size_t t = 0; t < NUM_TYPES; t++) {
        kiln_dtype dt = type_table[t].dtype;
        size_t es = kiln_dtype_size(dt), n = 63;
        unsigned char *host = malloc(n * es), *want = malloc(n * es), *got = malloc(n * es);
        kiln_array *a = NULL, *v = NULL;
        for (size_t i = 0; i < n * es; i++)
            host[i] = (unsigned char)kt_rand_u64();
        if (dt == KILN_FLOAT16) /* no NaN patterns: compare bits anyway */
            for (size_t i = 0; i < n; i++)
                host[2 * i + 1] &= 0x3f;
        if (!host || !want || !got) {
            CHECK(0);
            goto next;
        }
        if (!CHECK_OK(kiln_array_from_host(ctx, dt, 2, shape, host, &a)))
            goto next;
        kiln_slice sl[2] = { KILN_SLICE(1, 6, 2), KILN_SLICE(8, 0, -3) };
        if (!CHECK_OK(kiln_array_view(a, sl, &v)))
            goto next;
        size_t vn = kiln_array_size(v);
        CHECK_OK(kiln_array_read(q, v, want));
        for (int versioned = 0; versioned < 2; versioned++) {
            DLManagedTensor *mt = NULL;
            DLManagedTensorVersioned *vt = NULL;
            DLTensor *dl;
            if (versioned) {
                if (!CHECK_OK(kiln_array_to_dlpack_versioned(q, v, &vt)))
                    continue;
                CHECK(vt->version.major == 1 && vt->flags == 0 && vt->deleter && vt->manager_ctx);
                dl = &vt->dl_tensor;
            } else {
                if (!CHECK_OK(kiln_array_to_dlpack(q, v, &mt)))
                    continue;
                CHECK(mt->deleter != NULL);
                dl = &mt->dl_tensor;
            }
            CHECK_MSG(dl->dtype.code == type_table[t].code &&
                          dl->dtype.bits == type_table[t].bits && dl->dtype.lanes == 1,
                      "%s: code %u bits %u", kiln_dtype_name(dt), dl->dtype.code, dl->dtype.bits);
            CHECK(dl->ndim == 2 && dl->shape[0] == 3 && dl->shape[1] == 3);
            CHECK(dl->strides[0] == 18 && dl->strides[1] == -3);
            if (host_memory) {
                CHECK(dl->device.device_type == kDLCPU && dl->device.device_id == 0);
                /* Element 0 of the view is (1, 8): 17 elements in. */
                CHECK(dl->byte_offset == 6 * es); /* (1,2) is its lowest */
                memset(got, 0, vn * es);
                gather_tensor(dl, es, got);
                CHECK_MSG(memcmp(got, want, vn * es) == 0, "%s: exported elements (versioned %d)",
                          kiln_dtype_name(dt), versioned);
            } else {
                CHECK(dl->device.device_type == kDLCUDA);
                CHECK(dl->byte_offset == 17 * es);
            }
            if (versioned)
                vt->deleter(vt);
            else
                mt->deleter(mt);
        }
    next:
        kiln_array_release(v);
        kiln_array_release(a); /* the tensors held their own references */
        free(host);
        KT_FREE(want, got);
    }
    /* Writes through an exported host tensor reach the array after the
     * deleter; the array outlives the caller's reference. */
    if (host_memory) {
        float vals[12];
        size_t s1[1] = { 12 };
        for (int i = 0; i < 12; i++)
            vals[i] = (float)i;
        kiln_array *a = NULL;
        DLManagedTensor *mt = NULL;
        if (CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, s1, vals, &a)) &&
            CHECK_OK(kiln_array_to_dlpack(q, a, &mt))) {
            kiln_array_retain(a);
            kiln_array_release(a);
            float *p = (float *)((char *)mt->dl_tensor.data + mt->dl_tensor.byte_offset);
            p[3] = 42.0f;
            mt->deleter(mt);
            float back[12];
            CHECK_OK(kiln_array_read(q, a, back));
            CHECK(back[3] == 42.0f && back[2] == 2.0f && back[4] == 4.0f);
        }
        kiln_array_release(a);
    }
    /* Empty arrays: no data pointer. Errors. */
    size_t s0[1] = { 0 };
    kiln_array *e = NULL;
    DLManagedTensor *mt = (DLManagedTensor *)1;
    if (CHECK_OK(kiln_array_empty(ctx, KILN_INT32, 1, s0, &e)) &&
        CHECK_OK(kiln_array_to_dlpack(q, e, &mt))) {
        CHECK(mt->dl_tensor.data == NULL && mt->dl_tensor.shape[0] == 0);
        mt->deleter(mt);
    }
    CHECK_STATUS(kiln_array_to_dlpack(NULL, e, &mt), KILN_ERROR_NULL_HANDLE);
    CHECK(mt == NULL);
    CHECK_STATUS(kiln_array_to_dlpack(q, NULL, &mt), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_to_dlpack(q, e, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_to_dlpack_versioned(q, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    /* A successful export leaves the thread's last error as it was (it
     * was overwritten by an internal probe's "not CUDA memory", issue 41). */
    {
        size_t s5[1] = { 5 };
        kiln_array *f = NULL;
        DLManagedTensor *m1 = NULL;
        DLManagedTensorVersioned *m2 = NULL;
        char before[512];
        if (CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, s5, 0, NULL, NULL, &f))) {
            CHECK_STATUS(kiln_array_to_dlpack(q, e, NULL), KILN_ERROR_NULL_HANDLE);
            snprintf(before, sizeof before, "%s", kiln_last_error_message());
            if (CHECK_OK(kiln_array_to_dlpack(q, f, &m1)))
                m1->deleter(m1);
            CHECK_MSG(strcmp(before, kiln_last_error_message()) == 0,
                      "kiln_array_to_dlpack changed the last error: \"%s\" -> \"%s\"", before,
                      kiln_last_error_message());
            if (CHECK_OK(kiln_array_to_dlpack_versioned(q, f, &m2)))
                m2->deleter(m2);
            CHECK_MSG(strcmp(before, kiln_last_error_message()) == 0,
                      "kiln_array_to_dlpack_versioned changed the last error: \"%s\" -> \"%s\"",
                      before, kiln_last_error_message());
        }
        kiln_array_release(f);
    }
    kiln_array_release(e);
}

/* A hand-made tensor whose deleter counts its calls. */
typedef struct made {
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
    int64_t shape[4], strides[4];
    int deleted;
} made;

static void made_delete(DLManagedTensor *self) {
    ((made *)self->manager_ctx)->deleted++;
}
static void made_delete_v(DLManagedTensorVersioned *self) {
    ((made *)self->manager_ctx)->deleted++;
}

static void made_init(made *m, void *data, uint64_t byte_offset, DLDevice dev, DLDataType dt,
                      int ndim, const int64_t *shape, const int64_t *strides) {
    memset(m, 0, sizeof *m);
    for (int d = 0; d < ndim && d < 4; d++) {
        m->shape[d] = shape[d];
        if (strides)
            m->strides[d] = strides[d];
    }
    DLTensor t = { data, dev, ndim, dt, m->shape, strides ? m->strides : NULL, byte_offset };
    m->legacy = (DLManagedTensor){ t, m, made_delete };
    m->versioned = (DLManagedTensorVersioned){ { 1, 0 }, m, made_delete_v, 0, t };
}

static const DLDevice cpu = { kDLCPU, 0 };

/* Imports of host tensors: copies, with the deleter called once. */
static void test_import_host(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    double grid[4 * 6]; /* a 6 x 4 Fortran-order matrix, 2 elements in */
    for (int i = 0; i < 24; i++)
        grid[i] = (double)i * 1.25 - 3.0;
    static const struct {
        int ndim;
        int64_t shape[3], strides[3]; /* strides[0] == 0 and ndim > 0 */
        uint64_t byte_offset;
        int null_strides;
    } cases[] = {
        { 2, { 5, 4 }, { 1, 5 }, 2 * sizeof(double), 0 }, /* column-major */
        { 2, { 3, 4 }, { 4, 1 }, 0, 1 },                  /* NULL strides */
        { 1, { 6 }, { -2 }, 11 * sizeof(double), 0 },     /* backwards */
        { 3, { 2, 2, 3 }, { 12, 3, 1 }, 0, 0 },           /* 3-D dense */
        { 2, { 2, 3 }, { 0, 1 }, 8 * sizeof(double), 0 }, /* repeated rows */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int versioned = 0; versioned < 2; versioned++) {
            made m;
            made_init(&m, grid, cases[c].byte_offset, cpu, (DLDataType){ kDLFloat, 64, 1 },
                      cases[c].ndim, cases[c].shape,
                      cases[c].null_strides ? NULL : cases[c].strides);
            kiln_array *a = NULL;
            kiln_status st = versioned ? kiln_array_from_dlpack_versioned(ctx, &m.versioned, &a)
                                       : kiln_array_from_dlpack(ctx, &m.legacy, &a);
            if (!CHECK_OK(st))
                continue;
            CHECK_MSG(m.deleted == 1,
                      "host import %zu: deleter called %d "
                      "times",
                      c, m.deleted);
            CHECK(kiln_array_dtype(a) == KILN_FLOAT64);
            /* Compare with the consumer-side gather. */
            DLTensor t = versioned ? m.versioned.dl_tensor : m.legacy.dl_tensor;
            int64_t dense[3];
            if (!t.strides) {
                int64_t s = 1;
                for (int d = t.ndim; d-- > 0;) {
                    dense[d] = s;
                    s *= t.shape[d];
                }
                t.strides = dense;
            }
            double want[24], got[24];
            gather_tensor(&t, sizeof(double), want);
            CHECK_OK(kiln_array_read(q, a, got));
            CHECK_MSG(memcmp(want, got, kiln_array_size(a) * sizeof(double)) == 0,
                      "host import %zu (versioned %d)", c, versioned);
            kiln_array_release(a);
            CHECK(m.deleted == 1);
        }
    }
    /* 0-d, empty, bool. */
    made m;
    kiln_array *a = NULL;
    int32_t scalar = -77;
    made_init(&m, &scalar, 0, cpu, (DLDataType){ kDLInt, 32, 1 }, 0, NULL, NULL);
    if (CHECK_OK(kiln_array_from_dlpack(ctx, &m.legacy, &a))) {
        kiln_array_info info;
        int32_t back = 0;
        CHECK(kiln_array_get_info(a, &info) == KILN_OK && info.ndim == 0 && info.size == 1);
        CHECK(kiln_array_read(q, a, &back) == KILN_OK && back == -77);
        CHECK(m.deleted == 1);
        kiln_array_release(a);
    }
    int64_t empty_shape[2] = { 0, 3 };
    made_init(&m, NULL, 0, cpu, (DLDataType){ kDLUInt, 16, 1 }, 2, empty_shape, NULL);
    if (CHECK_OK(kiln_array_from_dlpack(ctx, &m.legacy, &a))) {
        CHECK(kiln_array_size(a) == 0 && kiln_array_dtype(a) == KILN_UINT16);
        CHECK(m.deleted == 1);
        kiln_array_release(a);
    }
    uint8_t flags[5] = { 1, 0, 0, 1, 1 };
    int64_t five = 5;
    made_init(&m, flags, 0, cpu, (DLDataType){ kDLBool, 8, 1 }, 1, &five, NULL);
    if (CHECK_OK(kiln_array_from_dlpack_versioned(ctx, &m.versioned, &a))) {
        uint8_t back[5] = { 0 };
        CHECK(kiln_array_dtype(a) == KILN_BOOL);
        CHECK(kiln_array_read(q, a, back) == KILN_OK && memcmp(back, flags, 5) == 0);
        /* and back out as kDLBool */
        DLManagedTensor *t = NULL;
        if (CHECK_OK(kiln_array_to_dlpack(q, a, &t))) {
            CHECK(t->dl_tensor.dtype.code == kDLBool && t->dl_tensor.dtype.bits == 8 &&
                  t->dl_tensor.dtype.lanes == 1);
            t->deleter(t);
        }
        kiln_array_release(a);
    }
}

/* Bad tensors: an error, *array NULL, the deleter not called. */
static void test_import_bad(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    float data[16] = { 0 };
    int64_t shape[5] = { 4, 4, 1, 1, 1 }, neg = -1, four = 4;
    int64_t shape9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    const DLDataType f32 = { kDLFloat, 32, 1 };
    struct {
        const char *what;
        void *data;
        uint64_t byte_offset;
        DLDevice dev;
        DLDataType dt;
        int ndim;
        const int64_t *shape;
        kiln_status want;
    } bad[] = {
        { "negative ndim", data, 0, cpu, f32, -1, shape, KILN_ERROR_INVALID_ARGUMENT },
        { "9 dimensions", data, 0, cpu, f32, 9, shape9, KILN_ERROR_INVALID_ARGUMENT },
        { "NULL shape", data, 0, cpu, f32, 2, NULL, KILN_ERROR_INVALID_ARGUMENT },
        { "negative size", data, 0, cpu, f32, 1, &neg, KILN_ERROR_INVALID_ARGUMENT },
        { "4 lanes", data, 0, cpu, (DLDataType){ kDLFloat, 32, 4 }, 1, &four,
          KILN_ERROR_UNSUPPORTED },
        { "bfloat16", data, 0, cpu, (DLDataType){ kDLBfloat, 16, 1 }, 1, &four,
          KILN_ERROR_UNSUPPORTED },
        { "float of 24 bits", data, 0, cpu, (DLDataType){ kDLFloat, 24, 1 }, 1, &four,
          KILN_ERROR_UNSUPPORTED },
        { "opaque handles", data, 0, cpu, (DLDataType){ kDLOpaqueHandle, 64, 1 }, 1, &four,
          KILN_ERROR_UNSUPPORTED },
        { "misaligned", data, 1, cpu, f32, 1, &four, KILN_ERROR_INVALID_ARGUMENT },
        { "NULL data", NULL, 0, cpu, f32, 1, &four, KILN_ERROR_INVALID_ARGUMENT },
        { "ROCm memory", data, 0, (DLDevice){ kDLROCM, 0 }, f32, 1, &four, KILN_ERROR_UNSUPPORTED },
        { "OpenCL memory", data, 0, (DLDevice){ kDLOpenCL, 0 }, f32, 1, &four,
          KILN_ERROR_UNSUPPORTED },
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        made m;
        made_init(&m, bad[b].data, bad[b].byte_offset, bad[b].dev, bad[b].dt,
                  bad[b].ndim > 0 ? bad[b].ndim : 0, shape, NULL);
        m.legacy.dl_tensor.ndim = m.versioned.dl_tensor.ndim = bad[b].ndim;
        m.legacy.dl_tensor.shape = m.versioned.dl_tensor.shape = (int64_t *)bad[b].shape;
        kiln_array *a = (kiln_array *)1;
        CHECK_MSG(kiln_array_from_dlpack(ctx, &m.legacy, &a) == bad[b].want && a == NULL, "%s: %s",
                  bad[b].what, kiln_last_error_message());
        CHECK_MSG(kiln_array_from_dlpack_versioned(ctx, &m.versioned, &a) == bad[b].want &&
                      a == NULL,
                  "%s (versioned): %s", bad[b].what, kiln_last_error_message());
        CHECK_MSG(m.deleted == 0, "%s: the deleter ran", bad[b].what);
    }
    made m;
    kiln_array *a = NULL;
    made_init(&m, data, 0, cpu, f32, 1, &four, NULL);
    m.versioned.version.major = 2;
    CHECK_STATUS(kiln_array_from_dlpack_versioned(ctx, &m.versioned, &a), KILN_ERROR_UNSUPPORTED);
    CHECK_STATUS(kiln_array_from_dlpack(NULL, &m.legacy, &a), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_from_dlpack(ctx, NULL, &a), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_from_dlpack(ctx, &m.legacy, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK(m.deleted == 0);
}

/* Export, then import into the same context: the same elements; on CUDA
 * the same memory, and the exporter's deleter runs when the last array
 * (here a view) over the import goes. */
static void test_round_trip(kiln_queue *q, int host_memory) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t shape[3] = { 3, 5, 7 }, n = 105;
    int64_t *vals = malloc(n * sizeof *vals), *back = malloc(n * sizeof *back);
    kiln_array *a = NULL, *b = NULL, *c = NULL, *v = NULL;
    for (size_t i = 0; i < n; i++)
        vals[i] = (int64_t)(kt_rand_u64() >> 1) - (INT64_MAX / 2);
    if (!vals || !back) {
        CHECK(0);
        goto done;
    }
    if (!CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 3, shape, vals, &a)))
        goto done;
    DLManagedTensor *mt = NULL;
    DLManagedTensorVersioned *vt = NULL;
    if (CHECK_OK(kiln_array_to_dlpack(q, a, &mt)) &&
        CHECK_OK(kiln_array_from_dlpack(ctx, mt, &b))) {
        memset(back, 0, n * sizeof *back);
        CHECK(kiln_array_read(q, b, back) == KILN_OK && memcmp(back, vals, n * sizeof *back) == 0);
        CHECK(kiln_array_dtype(b) == KILN_INT64);
        if (!host_memory)
            CHECK(kiln_array_buffer(b) != kiln_array_buffer(a));
    }
    if (CHECK_OK(kiln_array_to_dlpack_versioned(q, a, &vt)) &&
        CHECK_OK(kiln_array_from_dlpack_versioned(ctx, vt, &c))) {
        kiln_slice sl[3] = { KILN_SLICE_ALL, KILN_SLICE(1, 4, 1), KILN_SLICE_REVERSED };
        if (CHECK_OK(kiln_array_view(c, sl, &v))) {
            kiln_array_release(c); /* the view keeps the import alive */
            c = NULL;
            int64_t part[3 * 3 * 7];
            CHECK_OK(kiln_array_read(q, v, part));
            int ok = 1;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    for (int k = 0; k < 7; k++)
                        ok &= part[(i * 3 + j) * 7 + k] == vals[(i * 5 + j + 1) * 7 + 6 - k];
            CHECK_MSG(ok, "a view of an imported array");
        }
    }
done:
    KT_RELEASE(v, c, b, a);
    KT_FREE(vals, back);
}

/* CUDA only: an imported array shares the exporter's memory, and kiln
 * calls the deleter when its last view goes, not before. */
static void test_cuda_lifetime(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t s[1] = { 1000 };
    kiln_array *a = NULL, *b = NULL, *v = NULL;
    DLManagedTensor *mt = NULL;
    if (!CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, s, 0, NULL, NULL, &a)) ||
        !CHECK_OK(kiln_array_to_dlpack(q, a, &mt))) {
        kiln_array_release(a);
        return;
    }
    made m; /* wraps kiln's tensor to count the deleter */
    made_init(&m, mt->dl_tensor.data, mt->dl_tensor.byte_offset, mt->dl_tensor.device,
              mt->dl_tensor.dtype, 1, mt->dl_tensor.shape, NULL);
    if (CHECK_OK(kiln_array_from_dlpack(ctx, &m.legacy, &b))) {
        float five = 5.0f;
        CHECK_OK(kiln_array_fill(q, b, KILN_ARG_F32(five), 0, NULL, NULL));
        float back[1000];
        CHECK(kiln_array_read(q, a, back) == KILN_OK && back[999] == 5.0f);
        CHECK_OK(kiln_array_view(b, NULL, &v));
        kiln_array_release(b);
        CHECK(m.deleted == 0);
        kiln_queue_finish(q);
        kiln_array_release(v);
        CHECK(m.deleted == 1);
    }
    mt->deleter(mt);
    kiln_array_release(a);
}

static void on_device(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    if (!CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info)))
        return;
    /* CUDA arrays export as kDLCUDA; everything else as host memory. */
    int host_memory = strcmp(info.backend_name, "cuda") != 0;
    test_from_buffer(q);
    test_export(q, host_memory);
    test_import_bad(q);
    test_round_trip(q, host_memory);
    test_import_host(q); /* copies, into any context */
    if (!host_memory)
        test_cuda_lifetime(q);
}

int main(void) {
    kt_for_each_device(on_device, NULL);
    return kt_report();
}
