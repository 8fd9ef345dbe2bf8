/* kiln arrays and DLPack: export a kiln array to another framework (NumPy,
 * CuPy, PyTorch, JAX...) and import theirs, without copying where the memory
 * allows it.
 *
 * The DLPack structures below are written from the published ABI (DLPack
 * 1.0, include/dlpack/dlpack.h of github.com/dmlc/dlpack; ABI-compatible
 * with 1.1). They share the official header's include guard, so a program
 * that includes both gets one definition (whichever comes first; the
 * layouts are the same).
 *
 * Where the data lives (docs/api.md, "DLPack"):
 *  - arrays of a CUDA context: kDLCUDA, device_id the CUDA ordinal, data the
 *    device pointer (zero copy, both ways);
 *  - arrays of an OpenCL context: kDLCPU, data a host pointer obtained by
 *    mapping the array's bytes (kiln_buffer_map), unmapped by the deleter.
 *    On CPU devices (PoCL) the mapping is the buffer's own memory: zero
 *    copy. On a GPU no DLPack consumer imports OpenCL device memory, so the
 *    driver copies the bytes to the host at export and back at the deleter:
 *    the consumer sees a host copy, and its writes reach the array when it
 *    calls the deleter. While exported, the array must not be used by
 *    kiln's own work, nor exported again (OpenCL's rules for mapped
 *    memory).
 * Import (kiln_array_from_dlpack*): kDLCUDA and kDLCUDAManaged memory of
 * the context's CUDA device is wrapped (zero copy; kiln calls the deleter
 * when the last array or view over it is released); kDLCPU and kDLCUDAHost
 * memory is copied into a new array of the context (kiln has no public way
 * yet to make a device buffer over foreign host memory) and the deleter is
 * called before the call returns.
 *
 * Included after kiln.h. */
#ifndef KILN_DLPACK_H
#define KILN_DLPACK_H

#include <stdint.h>

#include "kiln.h"

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3, /* pinned host memory (cudaMallocHost) */
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13, /* cudaMallocManaged */
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
    kDLMAIA = 17,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type; /* an int32 in the ABI */
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U, /* a compact struct of two floats per element */
    kDLBool = 6U,    /* one byte per element */
} DLDataTypeCode;

typedef struct {
    uint8_t code;   /* a DLDataTypeCode */
    uint8_t bits;   /* of one lane */
    uint16_t lanes; /* 1 for scalars */
} DLDataType;

typedef struct {
    void *data; /* base pointer (device pointer on kDLCUDA) */
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;       /* ndim entries */
    int64_t *strides;     /* ndim entries, in elements; NULL: C order */
    uint64_t byte_offset; /* element 0 is at (char *)data + byte_offset */
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* DLPACK_DLPACK_H_ */

#ifdef __cplusplus
extern "C" {
#endif

/* Export: a new DLPack tensor over array (same shape, strides, dtype;
 * byte_offset is element 0's offset from the base pointer). The tensor
 * holds a reference to the array (and, for a mapping, to queue) until its
 * deleter is called; call the deleter exactly once. queue: a queue of the
 * array's context; the call Blocks until the work queued on it before has
 * ended, so the consumer may read the memory at once. A dtype DLPack
 * cannot express, or an array of 0 elements on no addressable memory, is
 * KILN_ERROR_UNSUPPORTED with a message; *tensor is NULL on failure. */
KILN_API kiln_status kiln_array_to_dlpack(kiln_queue *queue, kiln_array *array,
                                          DLManagedTensor **tensor);
/* The same as a DLManagedTensorVersioned (version 1.0, flags 0). */
KILN_API kiln_status kiln_array_to_dlpack_versioned(kiln_queue *queue, kiln_array *array,
                                                    DLManagedTensorVersioned **tensor);

/* Import: a new array of context over tensor (1 to 3 dimensions; a 0-d
 * tensor becomes shape (1,); any strides, byte_offset). kDLBool (8 bits)
 * imports as KILN_BOOL, and KILN_BOOL exports as kDLBool. On
 * success kiln owns the tensor and calls its deleter (see the top of this
 * file for when). On failure *array is NULL and the tensor is still the
 * caller's: kiln did not call its deleter. A versioned tensor whose major
 * version is not 1 is KILN_ERROR_UNSUPPORTED (the caller must then call its
 * deleter and touch nothing else, as DLPack says). Bad tensors (NULL
 * shape, negative sizes, vector lanes, an unknown dtype, a misaligned data
 * pointer, memory of another device than the context's) are errors with a
 * message naming the field. */
KILN_API kiln_status kiln_array_from_dlpack(kiln_context *context, DLManagedTensor *tensor,
                                            kiln_array **array);
KILN_API kiln_status kiln_array_from_dlpack_versioned(kiln_context *context,
                                                      DLManagedTensorVersioned *tensor,
                                                      kiln_array **array);

#ifdef __cplusplus
}
#endif

#endif
