/* DLPack export and import of arrays (include/kiln/dlpack.h), written from
 * the published ABI. CUDA memory goes through kiln's CUDA interop
 * (kiln/cuda.h) where kiln was built with CUDA; everything else through
 * kiln_buffer_map (export) or a copy (import of host memory). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"
#include "kiln/dlpack.h"
#if KILN_HAVE_CUDA
#include "kiln/cuda.h"
#endif

/* ------------------------------------------------------------- dtypes */

/* kiln dtypes and DLPack types. A new dtype is one row.
 * import_only: a DLPack type kiln reads as another dtype of the same bytes
 * and never exports (none now: bool is KILN_BOOL both ways). */
static const struct dl_type {
    kiln_dtype dtype;
    uint8_t code, bits;
    int import_only;
} dl_types[] = {
    { KILN_INT8, kDLInt, 8, 0 },           { KILN_UINT8, kDLUInt, 8, 0 },
    { KILN_INT16, kDLInt, 16, 0 },         { KILN_UINT16, kDLUInt, 16, 0 },
    { KILN_INT32, kDLInt, 32, 0 },         { KILN_UINT32, kDLUInt, 32, 0 },
    { KILN_INT64, kDLInt, 64, 0 },         { KILN_UINT64, kDLUInt, 64, 0 },
    { KILN_FLOAT16, kDLFloat, 16, 0 },     { KILN_FLOAT32, kDLFloat, 32, 0 },
    { KILN_FLOAT64, kDLFloat, 64, 0 },     { KILN_BOOL, kDLBool, 8, 0 },
    { KILN_COMPLEX64, kDLComplex, 64, 0 }, { KILN_COMPLEX128, kDLComplex, 128, 0 },
};
#define NUM_DL_TYPES (sizeof dl_types / sizeof dl_types[0])

static const struct dl_type *dl_type_of_dtype(kiln_dtype d) {
    for (size_t i = 0; i < NUM_DL_TYPES; i++)
        if (dl_types[i].dtype == d && !dl_types[i].import_only)
            return &dl_types[i];
    return NULL;
}

static const struct dl_type *dl_type_of_code(uint8_t code, uint8_t bits) {
    for (size_t i = 0; i < NUM_DL_TYPES; i++)
        if (dl_types[i].code == code && dl_types[i].bits == bits)
            return &dl_types[i];
    return NULL;
}

/* ------------------------------------------------------- CUDA memory */

/* cuda_ordinal: the CUDA ordinal of dev; cuda_pointer: the device
 * pointer of a CUDA buffer; cuda_wrap: a kiln buffer of ctx over [ptr,
 * ptr + size) of CUDA memory, not owned. KILN_ERROR_MISMATCH (message set)
 * for what is not CUDA's, or when kiln has no CUDA backend. */
#if KILN_HAVE_CUDA
static kiln_status cuda_ordinal(const kiln_device *dev, int *ordinal) {
    CUdevice d = 0;
    kiln_status st = kiln_cuda_device_native(dev, &d);
    *ordinal = (int)d;
    return st;
}

static kiln_status cuda_pointer(const kiln_buffer *buf, uintptr_t *ptr) {
    CUdeviceptr p = 0;
    kiln_status st = kiln_cuda_buffer_native(buf, &p);
    *ptr = (uintptr_t)p;
    return st;
}

static kiln_status cuda_wrap(kiln_context *ctx, uintptr_t ptr, size_t size, kiln_buffer **buf) {
    return kiln_cuda_buffer_wrap(ctx, (CUdeviceptr)ptr, size, 0, buf);
}
#else
static kiln_status no_cuda(void) {
    return kiln__error_set(KILN_ERROR_MISMATCH, 0, "kiln was built without CUDA");
}

static kiln_status cuda_ordinal(const kiln_device *dev, int *ordinal) {
    (void)dev;
    *ordinal = -1;
    return no_cuda();
}

static kiln_status cuda_pointer(const kiln_buffer *buf, uintptr_t *ptr) {
    (void)buf;
    *ptr = 0;
    return no_cuda();
}

static kiln_status cuda_wrap(kiln_context *ctx, uintptr_t ptr, size_t size, kiln_buffer **buf) {
    (void)ctx, (void)ptr, (void)size;
    *buf = NULL;
    return no_cuda();
}
#endif

/* ------------------------------------------------------------- layout */

/* The lowest and highest element of a layout relative to element 0 (in
 * elements); -1 when they do not fit a ptrdiff_t. */
static int extent(unsigned ndim, const size_t *shape, const ptrdiff_t *strides, ptrdiff_t *lo,
                  ptrdiff_t *hi) {
    *lo = *hi = 0;
    for (unsigned d = 0; d < ndim; d++) {
        ptrdiff_t ext;
        if (shape[d] == 0)
            return 0;
        if (shape[d] - 1 > (size_t)PTRDIFF_MAX ||
            __builtin_mul_overflow((ptrdiff_t)(shape[d] - 1), strides[d], &ext) ||
            __builtin_add_overflow(ext < 0 ? *lo : *hi, ext, ext < 0 ? lo : hi))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- export */

typedef struct dl_export {
    kiln_array *array; /* retained */
    kiln_queue *queue; /* retained while mapped */
    void *mapped;      /* kiln_buffer_map's pointer, or NULL */
    int64_t shape[KILN_ARRAY_MAX_DIMS], strides[KILN_ARRAY_MAX_DIMS];
    DLTensor tensor;
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
} dl_export;

static void export_free(dl_export *e) {
    if (!e)
        return;
    /* A mapping on a GPU writes the consumer's changes back here. */
    if (e->mapped)
        kiln_buffer_unmap(e->queue, e->array->buffer, e->mapped, 0, NULL, NULL);
    kiln_queue_release(e->queue);
    kiln_array_release(e->array);
    free(e);
}

static void delete_legacy(DLManagedTensor *self) {
    if (self)
        export_free(self->manager_ctx);
}

static void delete_versioned(DLManagedTensorVersioned *self) {
    if (self)
        export_free(self->manager_ctx);
}

static kiln_status export_make(const char *fn, kiln_queue *q, kiln_array *a, dl_export **out) {
    kiln_status st = kiln__array_check_queue(q, a, fn);
    if (st != KILN_OK)
        return st;
    const struct dl_type *ty = dl_type_of_dtype(a->dtype);
    if (!ty)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: %s has no DLPack type", fn,
                               kiln_dtype_name(a->dtype));
    size_t es = kiln_dtype_size(a->dtype);
    ptrdiff_t lo, hi;
    if (extent(a->ndim, a->shape, a->strides, &lo, &hi) != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: the array's layout overflows",
                               fn);
    /* The consumer may read at once, on any stream. */
    st = kiln_queue_finish(q);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", fn);
    dl_export *e = kiln__calloc(1, sizeof *e);
    if (!e)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", fn);
    DLTensor *t = &e->tensor;
    uintptr_t ptr = 0;
    size_t elem0 = a->offset * es; /* bytes from the buffer's start */
    /* "not CUDA memory" is an answer here: the caller's last error stays */
    kiln__error_saved saved;
    kiln__error_save(&saved);
    st = cuda_pointer(a->buffer, &ptr);
    if (st == KILN_OK) {
        int ordinal = 0;
        st = cuda_ordinal(kiln_queue_device(q), &ordinal);
        if (st != KILN_OK) {
            free(e);
            return kiln__error_prefix(st, "%s", fn);
        }
        t->device = (DLDevice){ kDLCUDA, ordinal };
        t->data = a->size ? (void *)ptr : NULL;
        t->byte_offset = a->size ? elem0 : 0;
    } else if (st == KILN_ERROR_MISMATCH) {
        /* Not CUDA memory: host memory through a mapping of the bytes the
         * array spans (nothing to map when it is empty). */
        kiln__error_restore(&saved);
        t->device = (DLDevice){ kDLCPU, 0 };
        if (a->size) {
            size_t first = elem0 + (size_t)lo * es; /* lo <= 0 */
            size_t end = elem0 + (size_t)(hi + 1) * es;
            st = kiln_buffer_map(q, a->buffer, KILN_MAP_READ | KILN_MAP_WRITE, first, end - first,
                                 &e->mapped);
            if (st != KILN_OK) {
                free(e);
                return kiln__error_prefix(st, "%s", fn);
            }
            kiln_queue_retain(q);
            e->queue = q;
            t->data = e->mapped;
            t->byte_offset = elem0 - first;
        }
    } else {
        free(e);
        return kiln__error_prefix(st, "%s", fn);
    }
    kiln_array_retain(a);
    e->array = a;
    t->ndim = (int32_t)a->ndim;
    t->dtype = (DLDataType){ ty->code, ty->bits, 1 };
    for (unsigned d = 0; d < a->ndim; d++) {
        e->shape[d] = (int64_t)a->shape[d];
        e->strides[d] = (int64_t)a->strides[d];
    }
    t->shape = e->shape;
    t->strides = e->strides;
    *out = e;
    return KILN_OK;
}

/* An export for either kind of DLPack tensor (both are filled in: the
 * caller hands out one, whose deleter frees the export). */
static kiln_status export_begin(const char *fn, kiln_queue *queue, kiln_array *array,
                                int have_tensor, dl_export **e) {
    *e = NULL;
    if (!have_tensor)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: tensor is NULL", fn);
    kiln_status st = export_make(fn, queue, array, e);
    if (st != KILN_OK)
        return st;
    dl_export *x = *e;
    x->legacy = (DLManagedTensor){ x->tensor, x, delete_legacy };
    x->versioned = (DLManagedTensorVersioned){
        { DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION }, x, delete_versioned, 0, x->tensor
    };
    return KILN_OK;
}

kiln_status kiln_array_to_dlpack(kiln_queue *queue, kiln_array *array, DLManagedTensor **tensor) {
    dl_export *e;
    kiln_status st = export_begin("kiln_array_to_dlpack", queue, array, tensor != NULL, &e);
    if (tensor)
        *tensor = e ? &e->legacy : NULL;
    return st;
}

kiln_status kiln_array_to_dlpack_versioned(kiln_queue *queue, kiln_array *array,
                                           DLManagedTensorVersioned **tensor) {
    dl_export *e;
    kiln_status st =
        export_begin("kiln_array_to_dlpack_versioned", queue, array, tensor != NULL, &e);
    if (tensor)
        *tensor = e ? &e->versioned : NULL;
    return st;
}

/* ------------------------------------------------------------- import */

static void release_legacy(void *arg) {
    DLManagedTensor *t = arg;
    if (t->deleter)
        t->deleter(t);
}

static void release_versioned(void *arg) {
    DLManagedTensorVersioned *t = arg;
    if (t->deleter)
        t->deleter(t);
}

static const char *device_name(int32_t type) {
    static const char *const names[] = {
        [kDLCPU] = "kDLCPU",       [kDLCUDA] = "kDLCUDA", [kDLCUDAHost] = "kDLCUDAHost",
        [kDLOpenCL] = "kDLOpenCL", [kDLROCM] = "kDLROCM", [kDLCUDAManaged] = "kDLCUDAManaged"
    };
    uint32_t i = (uint32_t)type;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "device type";
}

/* Host memory: gathered (strided) or read (dense) into a new array. */
static kiln_status import_host(const char *fn, kiln_context *ctx, kiln_dtype dtype, unsigned ndim,
                               const size_t *shape, const ptrdiff_t *strides, const char *elem0,
                               size_t n, kiln_array **out) {
    size_t es = kiln_dtype_size(dtype);
    ptrdiff_t dense = 1;
    int is_dense = 1;
    for (unsigned d = ndim; d-- > 0;) {
        if (shape[d] != 1 && strides[d] != dense)
            is_dense = 0;
        dense *= (ptrdiff_t)shape[d];
    }
    if (is_dense)
        return kiln_array_from_host(ctx, dtype, ndim, shape, elem0, out);
    char *tmp = kiln__malloc(n * es);
    if (!tmp)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: %zu bytes for the gather", fn,
                               n * es);
    /* any rank: an index counter over the dimensions, C order */
    size_t idx[KILN_ARRAY_MAX_DIMS] = { 0 };
    ptrdiff_t at = 0; /* element offset of idx */
    char *dst = tmp;
    for (size_t i = 0; i < n; i++, dst += es) {
        memcpy(dst, elem0 + at * (ptrdiff_t)es, es);
        for (unsigned d = ndim; d-- > 0;) {
            at += strides[d];
            if (++idx[d] < shape[d])
                break;
            at -= (ptrdiff_t)shape[d] * strides[d];
            idx[d] = 0;
        }
    }
    kiln_status st = kiln_array_from_host(ctx, dtype, ndim, shape, tmp, out);
    free(tmp);
    return st;
}

/* The checks and the import of one tensor; on success kiln owns it
 * (release(arg) runs when it is no longer needed). */
static kiln_status import_tensor(const char *fn, kiln_context *ctx, const DLTensor *t,
                                 void (*release)(void *), void *arg, kiln_array **out) {
    if (!ctx)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: context is NULL", fn);
    if (t->ndim < 0 || t->ndim > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: ndim is %d", fn, (int)t->ndim);
    if (t->ndim > 0 && !t->shape)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: shape is NULL", fn);
    if (t->dtype.lanes != 1)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: vector dtype of %u lanes", fn,
                               (unsigned)t->dtype.lanes);
    const struct dl_type *ty = dl_type_of_code(t->dtype.code, t->dtype.bits);
    if (!ty)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: DLPack dtype code %u with %u bits has "
                               "no kiln dtype",
                               fn, (unsigned)t->dtype.code, (unsigned)t->dtype.bits);
    /* A 0-d tensor (a scalar) is a 0-d array. */
    unsigned ndim = (unsigned)t->ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS] = { 0 };
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS] = { 0 };
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: shape[%d] is %lld", fn, d,
                                   (long long)t->shape[d]);
        shape[d] = (size_t)t->shape[d];
    }
    size_t n;
    kiln_status st = kiln__array_check_shape(fn, ty->dtype, ndim, shape, &n);
    if (st != KILN_OK)
        return st;
    /* NULL strides: C order (the products fit: the shape's bytes do) */
    ptrdiff_t dense = 1;
    for (int d = t->ndim; d-- > 0;) {
        strides[d] = t->strides ? (ptrdiff_t)t->strides[d] : dense;
        if (!kiln__mul_stride(dense, (ptrdiff_t)shape[d], &dense))
            dense = 0; /* an empty shape's: never used */
    }
    size_t es = kiln_dtype_size(ty->dtype);
    if (n == 0) { /* nothing to share: an empty array, the tensor back */
        st = kiln_array_empty(ctx, ty->dtype, ndim, shape, out);
        if (st == KILN_OK)
            release(arg);
        return st;
    }
    ptrdiff_t lo, hi;
    if (extent(ndim, shape, strides, &lo, &hi) != 0 || hi - lo >= PTRDIFF_MAX / (ptrdiff_t)es)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: the shape and strides overflow",
                               fn);
    uintptr_t elem0 = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    if (!t->data || elem0 % es != 0)
        return kiln__error_set(
            KILN_ERROR_INVALID_ARGUMENT, 0, "%s: data + byte_offset (%p + %llu) is %s", fn, t->data,
            (unsigned long long)t->byte_offset,
            t->data ? "not aligned to the dtype's size" : "NULL for a non-empty tensor");
    int32_t type = t->device.device_type;
    if (type == kDLCPU || type == kDLCUDAHost) {
        st = import_host(fn, ctx, ty->dtype, ndim, shape, strides, (const char *)elem0, n, out);
        if (st == KILN_OK)
            release(arg); /* copied */
        return st;
    }
    if (type != kDLCUDA && type != kDLCUDAManaged)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: %s %d memory is not something kiln "
                               "imports (kDLCPU and kDLCUDAHost are copied, "
                               "kDLCUDA and kDLCUDAManaged wrapped)",
                               fn, device_name(type), (int)type);
    int ordinal = -1;
    st = cuda_ordinal(kiln_context_device(ctx, 0), &ordinal);
    if (st != KILN_OK)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: a %s tensor needs a CUDA context (%s)",
                               fn, device_name(type), kiln_last_error_message());
    if (type == kDLCUDA && t->device.device_id != ordinal)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the tensor is on CUDA device %d, the "
                               "context on CUDA device %d",
                               fn, (int)t->device.device_id, ordinal);
    kiln_buffer *buf = NULL;
    size_t span = (size_t)(hi - lo + 1) * es;
    st = cuda_wrap(ctx, elem0 + (uintptr_t)(lo * (ptrdiff_t)es), span, &buf);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", fn);
    kiln__array_owner *owner = kiln__calloc(1, sizeof *owner);
    if (!owner) {
        kiln_buffer_release(buf);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", fn);
    }
    st = kiln_array_from_buffer(buf, (size_t)(-lo) * es, ty->dtype, ndim, shape, strides, out);
    kiln_buffer_release(buf);
    if (st != KILN_OK) {
        free(owner);
        return kiln__error_prefix(st, "%s", fn);
    }
    atomic_init(&owner->refs, 1);
    owner->release = release;
    owner->arg = arg;
    (*out)->owner = owner;
    return KILN_OK;
}

kiln_status kiln_array_from_dlpack(kiln_context *context, DLManagedTensor *tensor,
                                   kiln_array **array) {
    static const char fn[] = "kiln_array_from_dlpack";
    if (!array || !tensor) {
        if (array)
            *array = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               array ? "tensor" : "array");
    }
    *array = NULL;
    return import_tensor(fn, context, &tensor->dl_tensor, release_legacy, tensor, array);
}

kiln_status kiln_array_from_dlpack_versioned(kiln_context *context,
                                             DLManagedTensorVersioned *tensor, kiln_array **array) {
    static const char fn[] = "kiln_array_from_dlpack_versioned";
    if (!array || !tensor) {
        if (array)
            *array = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               array ? "tensor" : "array");
    }
    *array = NULL;
    if (tensor->version.major != DLPACK_MAJOR_VERSION)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: DLPack major version %u; kiln reads %d "
                               "(call the tensor's deleter, touch nothing "
                               "else)",
                               fn, (unsigned)tensor->version.major, DLPACK_MAJOR_VERSION);
    return import_tensor(fn, context, &tensor->dl_tensor, release_versioned, tensor, array);
}
