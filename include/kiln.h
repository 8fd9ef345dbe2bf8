/* kiln — parallel computing on GPUs and multicore CPUs from C.
 *
 * This is the one header users include. It pulls in no vendor header:
 * OpenCL and CUDA are loaded at run time. Native interop (kiln's objects as
 * cl_mem, CUstream, ... and those wrapped as kiln's) lives in the opt-in
 * headers kiln/opencl.h and kiln/cuda.h, which include the vendor headers.
 *
 * Conventions (the same for every object; docs/api.md has the full rules):
 *  - Every function that can fail returns a kiln_status. The others are
 *    kiln_X_release (void), accessors that cannot fail (kiln_X_size,
 *    kiln_queue_context, ...: each says what it returns for NULL) and the
 *    name/version/message functions. Constructors hand the object back
 *    through their last argument, which is set to NULL on failure; on any
 *    failure nothing has been enqueued.
 *  - The same mistake gets the same status everywhere: a NULL handle is
 *    KILN_ERROR_NULL_HANDLE, an unknown enum value or bad count
 *    KILN_ERROR_INVALID_ARGUMENT, an offset past the end
 *    KILN_ERROR_OUT_OF_RANGE, objects that do not fit together
 *    KILN_ERROR_MISMATCH, what this device cannot do KILN_ERROR_UNSUPPORTED.
 *  - Shared objects (context, queue, buffer, program, kernel, event, array,
 *    the generators, offload) have kiln_X_retain and kiln_X_release;
 *    kiln_X_release(NULL) is a no-op. Release drops the caller's reference,
 *    and the object lives on until the queued work that uses it has ended.
 *    Accessors that return an object borrow it (do not release it).
 *  - On failure, kiln_last_error_message() (per thread) says what exactly was
 *    wrong: which argument, the driver's own code and name, what to install.
 *    It stays readable until the next failing kiln call on the same thread.
 *  - No call aborts, exits or prints because of a user's mistake. The one
 *    line kiln may print (stderr, once per process) says that the program
 *    cache was refused as untrusted (kiln_cache_status; KILN_CACHE_QUIET=1
 *    silences it): someone else could have planted code there.
 *  - A call that takes a wait list (num_wait, wait) never blocks: it
 *    enqueues, returns, and hands back an event (event may be NULL). A call
 *    without one may block, and says "Blocks". The suffix _async marks the
 *    non-blocking twin of a blocking call of the same name
 *    (kiln_buffer_read / kiln_buffer_read_async).
 *  - Descriptors (option structs the caller fills) start with struct_size:
 *    make them with their macro (KILN_PROGRAM_OPTS(...), KILN_SCAN_DESC(...)).
 *    Info structs are filled through macros that pass the caller's sizeof.
 *  - Threads: all calls are thread-safe. Several threads may enqueue on the
 *    same queue or on different queues at once, and use one kernel or
 *    generator at once. Callbacks run on kiln's own "kiln-callback" thread.
 *  - Wait lists (num_wait, wait) may hold events of any context: of another
 *    device, or another backend. Such an event is bridged through the host
 *    (a user event of the queue's context, completed from kiln's callback
 *    thread when it ends), so a command on one GPU can wait for a command
 *    on another without blocking the host. A failure does not cross: the
 *    waiting command runs once the foreign event has ended, failed or not
 *    (check that event's state).
 *
 * Device selection strings (kiln_device_select, $KILN_DEVICE):
 *    "N"           the N-th device in kiln_device_at order
 *    "B:N"         the N-th device of backend B over all its platforms,
 *                  B being a backend's name as kiln_device_info.backend_name
 *                  says it ("opencl:1", "cuda:0"; case-insensitive)
 *    "B:P:D"       platform P, device D of backend B ("opencl:0:1"); a
 *                  backend without platforms (CUDA) has one, platform 0
 *    "B"           the first device of backend B ("host", "cuda"), when it
 *                  has one (else the substring rule below)
 *    "cpu", "gpu", "accelerator"
 *                  the first device of that type
 *    anything else a case-insensitive substring of the device's name, vendor,
 *                  platform, version or id ("pocl", "nvidia")
 *  A device's id (kiln_device_info.id) selects it. Sub-devices
 *  (kiln_device_partition) are selected by "N" only.
 *  With NULL or "" and no $KILN_DEVICE: prefer a GPU, then an accelerator,
 *  then a CPU; among devices of one type, the backend that ranks higher by
 *  default (CUDA before OpenCL before host), then kiln_device_at order.
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"
#include "kiln/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define KILN_API __declspec(dllexport)
#elif defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

/* ---------------------------------------------------------------- errors */

/* "KILN_ERROR_BUILD" for KILN_ERROR_BUILD; "KILN_UNKNOWN_STATUS" otherwise. */
KILN_API const char *kiln_status_name(kiln_status status);
/* A one-line English message for the code. Never NULL. */
KILN_API const char *kiln_status_string(kiln_status status);
/* Detail of this thread's last failing kiln call ("" if none): what was
 * wrong, the driver's error name and code, what to install. */
KILN_API const char *kiln_last_error_message(void);
/* The driver's own error code of this thread's last failure (cl_int or
 * CUresult), 0 if the failure did not come from a driver. */
KILN_API long kiln_last_error_native(void);
/* The complete compiler log of this thread's last failed program build
 * ("" if none). */
KILN_API const char *kiln_last_build_log(void);

/* kiln's version string, e.g. "0.1.0". */
KILN_API const char *kiln_version(void);

/* ----------------------------------------------------------------- dtypes */

typedef enum kiln_dtype {
    KILN_INT8 = 1,
    KILN_UINT8,
    KILN_INT16,
    KILN_UINT16,
    KILN_INT32,
    KILN_UINT32,
    KILN_INT64,
    KILN_UINT64,
    KILN_FLOAT16,
    KILN_FLOAT32,
    KILN_FLOAT64,
    /* Complex numbers, (re, im) interleaved as in NumPy and C99: two
     * float32 / two float64. In kernels they are cfloat / cdouble
     * (docs/dialect.md). */
    KILN_COMPLEX64 = 12,
    KILN_COMPLEX128 = 13,
    /* NumPy's bool: one byte holding 0 (false) or 1 (true). In kernels
     * its elements are uchar (OpenCL C has no bool kernel arguments); its
     * name is "bool". Comparisons, isnan..signbit and the logical
     * operations give it (docs/api.md, "Element-wise functions"). */
    KILN_BOOL = 14,
} kiln_dtype;

/* Size in bytes (0 for an unknown dtype). */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype);
/* The C type name used in kernels: "int", "float", "ulong"... ("?" if unknown).
 * int64 is "long" and uint64 "ulong", in every backend's dialect; complex64
 * is "cfloat" and complex128 "cdouble"; KILN_BOOL is "bool" (its elements
 * are passed to kernels as uchar). */
KILN_API const char *kiln_dtype_name(kiln_dtype dtype);

/* ---------------------------------------------------------------- devices */

typedef struct kiln_device kiln_device; /* owned by kiln; never released */
typedef struct kiln_context kiln_context;
typedef struct kiln_queue kiln_queue;
typedef struct kiln_buffer kiln_buffer;
typedef struct kiln_program kiln_program;
typedef struct kiln_kernel kiln_kernel;
typedef struct kiln_event kiln_event;

typedef enum kiln_backend_kind {
    KILN_BACKEND_OPENCL = 1,
    KILN_BACKEND_CUDA = 2,
    KILN_BACKEND_HOST = 3, /* kernels compiled by the system C compiler (OpenMP) */
} kiln_backend_kind;

typedef enum kiln_device_type {
    KILN_DEVICE_CPU = 1,
    KILN_DEVICE_GPU = 2,
    KILN_DEVICE_ACCELERATOR = 4,
    KILN_DEVICE_OTHER = 8,
} kiln_device_type;

typedef struct kiln_device_info {
    kiln_backend_kind backend;
    kiln_device_type type;
    char id[32]; /* "opencl:0:1", "cuda:0" */
    char name[256];
    char vendor[256];
    char platform[256]; /* OpenCL platform name; "CUDA" */
    char version[256];  /* device version: "OpenCL 3.0 PoCL", "CUDA 9.0" */
    char driver_version[128];
    unsigned compute_units; /* OpenCL compute units; CUDA SMs */
    unsigned clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t local_mem_bytes; /* per work-group / block (CUDA: the opt-in limit) */
    uint64_t max_alloc_bytes;
    uint64_t l2_cache_bytes; /* 0 when unknown */
    size_t max_work_group_size;
    size_t max_work_item_sizes[3];
    unsigned compute_capability; /* CUDA: major*10+minor (90 on Hopper); 0 */
    unsigned subgroup_size;      /* work-items the hardware schedules together
                                    (a warp): 32 on CUDA and on NVIDIA's
                                    OpenCL; 0 when unknown */
    int fp64;                    /* 1 if double is supported */
    int fp16;                    /* 1 if half arithmetic is supported */
    int is_subdevice;            /* 1 for a device made by kiln_device_partition */
    /* Capabilities, as the device's backend reports them. Algorithms pick
     * their variants from these, never from the backend's name. A field
     * this kiln predates reads 0 (kiln_device_get_info). */
    char backend_name[16]; /* the backend's name, which is also its
                              selector prefix: "opencl", "cuda" */
    unsigned languages;    /* the native kernel languages the device
                              compiles: bit (1u << L) for each
                              kiln_language L; OpenCL devices have
                              KILN_LANG_OPENCL_C, CUDA devices
                              KILN_LANG_CUDA_C. Every device also
                              compiles the portable dialect
                              (KILN_LANG_AUTO, not a bit here). */
    int forward_progress;  /* 1 if kiln may rely on forward progress
                              between the work-groups of one launch: a
                              work-group that has started keeps running
                              while others spin-wait for a value it will
                              write, so a work-group may wait for one that
                              started before it (what the single-pass
                              look-back scan needs). CUDA: 1. OpenCL: 1
                              on GPUs (the standard does not promise it;
                              every GPU driver kiln ran on gives it), 0
                              on CPUs and other devices. 0 never means
                              wrong results: algorithms then use
                              variants that do not wait across
                              work-groups. */
    int device_sleep;      /* 1 if kernels in the native language can
                              pause a work-item for a while (CUDA
                              __nanosleep: compute capability 7.0 and
                              later; NVIDIA's OpenCL on the same
                              devices, through inline PTX); 0 on other
                              OpenCL devices */
    int warp_shuffle;      /* 1 if kernels in the native language can
                              exchange values between the work-items of a
                              sub-group without local memory (CUDA
                              __shfl_*_sync, sub-groups of subgroup_size);
                              0 on OpenCL, where kiln does not use them */
} kiln_device_info;

/* Loads the backends (once, thread-safe) and counts the devices of all of
 * them. A backend that is missing is skipped; if no backend loads at all the
 * call returns KILN_ERROR_NO_RUNTIME and the message names what to install.
 * Zero devices with a loaded backend is KILN_OK with *count = 0. */
KILN_API kiln_status kiln_device_count(size_t *count);
/* The index-th device (0-based) in a stable order: the backends in the order
 * they are built in (OpenCL, then CUDA), each backend's devices in its own
 * order (OpenCL: platforms and their devices; CUDA: ordinals), then
 * sub-devices in the order kiln_device_partition made them. */
KILN_API kiln_status kiln_device_at(size_t index, kiln_device **device);
/* Selects a device by the string described at the top of this header. NULL
 * or "" uses $KILN_DEVICE, then the default preference. An unknown selector
 * is KILN_ERROR_NO_DEVICE, and the message lists the devices that exist. */
KILN_API kiln_status kiln_device_select(const char *selector, kiln_device **device);
/* Fills *info. info_size is sizeof(kiln_device_info) as the caller was
 * compiled (the macro passes it), so the struct can grow at its end without
 * breaking programs built against an older kiln. */
KILN_API kiln_status kiln_device_get_info(const kiln_device *device, kiln_device_info *info,
                                          size_t info_size);
#define kiln_device_get_info(device, info) kiln_device_get_info((device), (info), sizeof *(info))
/* The device's extension list (space separated; "" on CUDA). The string is
 * owned by kiln and lives as long as the process. */
KILN_API const char *kiln_device_extensions(const kiln_device *device);
/* Device fission: splits a device into sub-devices of units_each compute
 * units (OpenCL 1.2 CL_DEVICE_PARTITION_EQUALLY). Writes up to capacity
 * sub-devices into subdevices and their number into *count. Sub-devices are
 * owned by kiln like any device. KILN_ERROR_UNSUPPORTED where the device
 * cannot be partitioned (CUDA, most GPUs). */
KILN_API kiln_status kiln_device_partition(kiln_device *device, unsigned units_each,
                                           kiln_device **subdevices, size_t capacity,
                                           size_t *count);

/* One fission call (docs/api.md §17): a device split into disjoint parts,
 * each a device of its own (selected by "N", usable in one context with
 * its siblings). Give either units_each (parts of that many compute units,
 * as many as fit: OpenCL CL_DEVICE_PARTITION_EQUALLY, what
 * kiln_device_partition does) or num_counts entries of counts (one part of
 * counts[i] units each: CL_DEVICE_PARTITION_BY_COUNTS). Parts of one split
 * never share units. On CUDA, SM partitions would be green contexts (driver
 * 12.4+): KILN_ERROR_UNSUPPORTED says whether the driver lacks them or
 * this kiln does. Make the descriptor with KILN_SPLIT_DESC(...). */
typedef struct kiln_split_desc {
    size_t struct_size; /* sizeof (set by KILN_SPLIT_DESC) */
    unsigned units_each;
    size_t num_counts;
    const unsigned *counts;
} kiln_split_desc;
#define KILN_SPLIT_DESC(...) \
    ((kiln_split_desc){ .struct_size = sizeof(kiln_split_desc), __VA_ARGS__ })
KILN_API kiln_status kiln_device_split(kiln_device *device, const kiln_split_desc *desc,
                                       kiln_device **parts, size_t capacity, size_t *count);

/* --------------------------------------------------------------- contexts */

/* A context over one or several devices of the same backend (and, on OpenCL,
 * the same platform). Buffers and programs belong to a context. */
KILN_API kiln_status kiln_context_create(kiln_device *const *devices, size_t num_devices,
                                         kiln_context **context);
KILN_API kiln_status kiln_context_retain(kiln_context *context);
KILN_API void kiln_context_release(kiln_context *context);
KILN_API size_t kiln_context_num_devices(const kiln_context *context);
KILN_API kiln_device *kiln_context_device(const kiln_context *context, size_t index);

/* Attached data: per-context state of a library built on kiln (kiln's own
 * algorithms keep their compiled built-in kernels and scratch buffers this
 * way). Returns in *data the data attached under key (any unique address,
 * e.g. of a static variable of the library); the first call makes it with
 * make(context, arg), under the context's lock (make must not call kiln
 * functions on this context; it returns NULL on failure). destroy(data)
 * runs once, when the last handle on the context goes: the caller's last
 * kiln_context_release and the release of its last queue. The data may
 * hold buffers, programs, kernels and events of the context (they do not
 * keep it in use) but no queue and no kiln_context_retain of it, or it
 * would never go. If the context is used again afterwards (through a
 * buffer's kiln_buffer_context, say), the next call makes the data anew. */
KILN_API kiln_status kiln_context_attach(kiln_context *context, const void *key,
                                         void *(*make)(kiln_context *context, void *arg), void *arg,
                                         void (*destroy)(void *data), void **data);

/* ----------------------------------------------------------------- queues */

typedef enum kiln_queue_flags {
    KILN_QUEUE_IN_ORDER = 0,
    KILN_QUEUE_OUT_OF_ORDER = 1, /* commands ordered only by their wait lists */
    KILN_QUEUE_PROFILING = 2,    /* events carry kiln_event_get_times() */
} kiln_queue_flags;

/* A queue on one device of the context. flags: kiln_queue_flags OR-ed.
 * The queue holds a reference to its context. */
KILN_API kiln_status kiln_queue_create(kiln_context *context, kiln_device *device, unsigned flags,
                                       kiln_queue **queue);
/* Shortcut for the common case: selects a device (as kiln_device_select),
 * makes a context over it alone and a queue on it. Release the queue only:
 * it holds the context. */
KILN_API kiln_status kiln_queue_create_default(const char *selector, unsigned flags,
                                               kiln_queue **queue);
KILN_API kiln_status kiln_queue_retain(kiln_queue *queue);
KILN_API void kiln_queue_release(kiln_queue *queue);
KILN_API kiln_context *kiln_queue_context(const kiln_queue *queue);
KILN_API kiln_device *kiln_queue_device(const kiln_queue *queue);
/* The kiln_queue_flags the queue was made with (0 for NULL). */
KILN_API unsigned kiln_queue_get_flags(const kiln_queue *queue);
/* Blocks until every command enqueued so far has ended.
 * KILN_ERROR_EVENT_FAILED if, since the last finish, a command enqueued
 * with a wait list did not run because an event it waited on failed (once:
 * the next finish starts afresh). A command that fails on its own is
 * reported by its event (and by the finish where the driver's is: CUDA's
 * sticky errors); its event says which. */
KILN_API kiln_status kiln_queue_finish(kiln_queue *queue);
/* Submits enqueued commands to the device without waiting. */
KILN_API kiln_status kiln_queue_flush(kiln_queue *queue);
/* A marker: an event that completes when the events in wait (or, with no
 * wait list, every command enqueued before it) have completed. */
KILN_API kiln_status kiln_queue_marker(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event);
/* A barrier: like a marker, and commands enqueued after it also wait for it
 * (matters on out-of-order queues). */
KILN_API kiln_status kiln_queue_barrier(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event);

/* ---------------------------------------------------------------- buffers */

typedef enum kiln_buffer_flags {
    KILN_BUFFER_READ_WRITE = 0,
    KILN_BUFFER_READ_ONLY = 1,   /* kernels only read it */
    KILN_BUFFER_WRITE_ONLY = 2,  /* kernels only write it */
    KILN_BUFFER_HOST_PINNED = 4, /* page-locked host memory the device reads */
    KILN_BUFFER_POOLED = 8,      /* from the context's memory pool (see below):
                                    a released buffer's memory is kept for the
                                    next pooled buffer of its size class */
} kiln_buffer_flags;

typedef enum kiln_map_flags {
    KILN_MAP_READ = 1,
    KILN_MAP_WRITE = 2,
    KILN_MAP_WRITE_INVALIDATE = 4, /* previous contents need not be copied */
} kiln_map_flags;

/* Creates a buffer of size bytes (size > 0). With host_data, the buffer
 * starts as a copy of size bytes from it (copied before the call returns;
 * kiln keeps no pointer to it). */
KILN_API kiln_status kiln_buffer_create(kiln_context *context, size_t size, unsigned flags,
                                        const void *host_data, kiln_buffer **buffer);
/* A view on bytes [offset, offset+size) of parent (no copy). The view holds a
 * reference to its parent. offset should be a multiple of the device's base
 * address alignment (128 bytes is always safe). */
KILN_API kiln_status kiln_buffer_create_sub(kiln_buffer *parent, size_t offset, size_t size,
                                            kiln_buffer **buffer);
KILN_API kiln_status kiln_buffer_retain(kiln_buffer *buffer);
KILN_API void kiln_buffer_release(kiln_buffer *buffer);
KILN_API size_t kiln_buffer_size(const kiln_buffer *buffer);
KILN_API kiln_context *kiln_buffer_context(const kiln_buffer *buffer);

/* ----------------------------------------------------------- memory pools
 *
 * Each context keeps a caching allocator (docs/pools.md). A buffer created
 * with KILN_BUFFER_POOLED (arrays and the algorithms' scratch are) takes a
 * block of its size class from the pool; its release gives the block back
 * without freeing or synchronising, and the block is handed out again only
 * once every command enqueued on the context's queues before the release
 * has ended. KILN_BUFFER_POOLED with host_data, or with the pool off, is a
 * plain allocation. A failed allocation (pooled or not) empties the cache
 * and tries once more. KILN_POOL=0 in the environment turns pools off for
 * contexts created afterwards. */

/* Filled by kiln_pool_get_stats. Byte counts are of whole blocks (a
 * buffer's size rounded up to its size class). */
typedef struct kiln_pool_stats {
    size_t bytes_in_use;        /* blocks held by live pooled buffers */
    size_t bytes_cached;        /* blocks the pool keeps for reuse ... */
    size_t bytes_waiting;       /* ... of which still used by queued work */
    size_t peak_in_use;         /* highest bytes_in_use so far */
    size_t pinned_bytes_in_use; /* the KILN_BUFFER_HOST_PINNED part of */
    size_t pinned_bytes_cached; /* bytes_in_use and bytes_cached */
    uint64_t allocations;       /* pooled allocations made */
    uint64_t hits;              /* of which served from the cache */
    uint64_t blocks_freed;      /* blocks handed back to the driver */
    uint64_t oom_retries;       /* failed allocations retried after
                                   emptying the cache */
} kiln_pool_stats;

/* Fills *stats (stats_size: the caller's sizeof, passed by the macro). */
KILN_API kiln_status kiln_pool_get_stats(kiln_context *context, kiln_pool_stats *stats,
                                         size_t stats_size);
#define kiln_pool_get_stats(context, stats) kiln_pool_get_stats((context), (stats), sizeof *(stats))
/* Hands cached blocks back to the driver until at most keep_bytes stay
 * cached (0: all). Blocks still used by queued work are freed too (the
 * driver keeps their memory until that work ends). freed (may be NULL)
 * gets the bytes freed. Does not block on queued work. */
KILN_API kiln_status kiln_pool_trim(kiln_context *context, size_t keep_bytes, size_t *freed);

/* Pool settings: make with KILN_POOL_OPTS(.max_cached_bytes = ...). */
typedef struct kiln_pool_opts {
    size_t struct_size;      /* sizeof(kiln_pool_opts) */
    int disabled;            /* 1: no pooling (the cache is emptied;
                                pooled buffers still live are freed when
                                released) */
    size_t max_cached_bytes; /* trim to this after each release; 0: no
                                limit */
} kiln_pool_opts;
#define KILN_POOL_OPTS(...) ((kiln_pool_opts){ .struct_size = sizeof(kiln_pool_opts), __VA_ARGS__ })
/* Sets the context's pool options (opts replaces the previous ones). */
KILN_API kiln_status kiln_pool_configure(kiln_context *context, const kiln_pool_opts *opts);

/* Transfers. The _async forms return at once; the host memory must stay
 * valid and untouched until *event completes. The plain forms block until
 * the transfer is done. Offsets and sizes are in bytes and are checked
 * against the buffer: an overrun is KILN_ERROR_OUT_OF_RANGE and nothing is
 * enqueued. event may be NULL. */
KILN_API kiln_status kiln_buffer_write(kiln_queue *queue, kiln_buffer *dst, size_t offset,
                                       size_t size, const void *src);
KILN_API kiln_status kiln_buffer_write_async(kiln_queue *queue, kiln_buffer *dst, size_t offset,
                                             size_t size, const void *src, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_buffer_read(kiln_queue *queue, kiln_buffer *src, size_t offset,
                                      size_t size, void *dst);
KILN_API kiln_status kiln_buffer_read_async(kiln_queue *queue, kiln_buffer *src, size_t offset,
                                            size_t size, void *dst, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_buffer_copy(kiln_queue *queue, kiln_buffer *src, size_t src_offset,
                                      kiln_buffer *dst, size_t dst_offset, size_t size,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Fills size bytes at offset with a repeating pattern of pattern_size bytes
 * (1, 2, 4, 8, 16, 32, 64 or 128; offset and size multiples of it). */
KILN_API kiln_status kiln_buffer_fill(kiln_queue *queue, kiln_buffer *buffer, const void *pattern,
                                      size_t pattern_size, size_t offset, size_t size,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Copies size bytes of src, a buffer of another context (another device)
 * of the same backend, into dst on queue, device to device where the
 * driver can: on CUDA cuMemcpyPeerAsync (peer access enabled once per pair
 * of devices when they can reach each other; otherwise the driver stages
 * it). KILN_ERROR_UNSUPPORTED where the backend has no such copy (OpenCL:
 * contexts cannot share memory) or for two backends: then
 * kiln_buffer_copy_between stages it through the host, and tries this
 * first. The wait list may hold events of either context. */
KILN_API kiln_status kiln_buffer_copy_peer(kiln_queue *queue, kiln_buffer *dst, size_t dst_offset,
                                           kiln_buffer *src, size_t src_offset, size_t size,
                                           size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event);
/* Maps a region into host memory. Blocks until the mapping is ready and
 * returns the host pointer in *host_ptr. Unmap with kiln_buffer_unmap
 * before the device uses the buffer again; unmapping a pointer that
 * kiln_buffer_map did not return for this buffer, or one already unmapped,
 * is KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_buffer_map(kiln_queue *queue, kiln_buffer *buffer, unsigned map_flags,
                                     size_t offset, size_t size, void **host_ptr);
KILN_API kiln_status kiln_buffer_unmap(kiln_queue *queue, kiln_buffer *buffer, void *host_ptr,
                                       size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event);

/* --------------------------------------------------------------- programs */

typedef enum kiln_language {
    /* kiln's portable dialect (docs/dialect.md), which also accepts native
     * source for the backend: the prelude only adds macros and functions. */
    KILN_LANG_AUTO = 0,
    /* Native source: KILN_ERROR_UNSUPPORTED on a device whose
     * kiln_device_info.languages lacks the language's bit. */
    KILN_LANG_OPENCL_C = 1, /* native OpenCL C (OpenCL devices) */
    KILN_LANG_CUDA_C = 2,   /* native CUDA C (CUDA devices) */
} kiln_language;

/* Build options, a descriptor (docs/api.md rule 7): make it with
 * KILN_PROGRAM_OPTS(.build_options = "-DN=4"), which sets struct_size. */
typedef struct kiln_program_opts {
    size_t struct_size; /* sizeof(kiln_program_opts) */
    kiln_language language;
    const char *build_options; /* "-DN=4 -cl-fast-relaxed-math"; NULL = "" */
    int no_cache;              /* 1: skip the on-disk cache (both ways) */
} kiln_program_opts;
#define KILN_PROGRAM_OPTS(...) \
    ((kiln_program_opts){ .struct_size = sizeof(kiln_program_opts), __VA_ARGS__ })

/* Builds source for every device of the context, through the caches
 * (memory, then disk under $KILN_CACHE_DIR, then the compiler). Blocks.
 * A compile error is KILN_ERROR_BUILD; the full log is then in
 * kiln_last_build_log(). opts may be NULL (the defaults); a struct_size
 * smaller than the first version's is KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_program_create(kiln_context *context, const char *source,
                                         const kiln_program_opts *opts, kiln_program **program);
/* The same, reading the source from a file (KILN_ERROR_IO if unreadable). */
KILN_API kiln_status kiln_program_create_from_file(kiln_context *context, const char *path,
                                                   const kiln_program_opts *opts,
                                                   kiln_program **program);
KILN_API kiln_status kiln_program_retain(kiln_program *program);
KILN_API void kiln_program_release(kiln_program *program);
/* The build log of a successful build on the device (warnings; may be "").
 * Owned by the program. */
KILN_API const char *kiln_program_build_log(const kiln_program *program, const kiln_device *device);
/* 1 if this program's binary for device came from the disk cache. */
KILN_API int kiln_program_from_cache(const kiln_program *program, const kiln_device *device);

/* ---------------------------------------------------------------- kernels */

typedef enum kiln_arg_kind {
    KILN_ARG_BUFFER = 1, /* a global-memory pointer parameter (kernels) */
    KILN_ARG_SCALAR = 2, /* a by-value scalar of a kiln_dtype (everywhere) */
    KILN_ARG_LOCAL = 3,  /* local (shared) memory of a given size (kernels) */
    KILN_ARG_ARRAY = 4,  /* a kiln_array (generators: kiln/array.h) */
    KILN_ARG_MAP = 5,    /* mapped host memory (offload: kiln/offload.h) */
} kiln_arg_kind;

/* How mapped host memory moves (KILN_ARG_MAP; see kiln/offload.h). */
typedef enum kiln_data_kind {
    KILN_DATA_PRESENT = 0,
    KILN_DATA_TO = 1,
    KILN_DATA_FROM = 2,
    KILN_DATA_TOFROM = 3, /* KILN_DATA_TO | KILN_DATA_FROM */
    KILN_DATA_ALLOC = 4,
} kiln_data_kind;

typedef struct kiln_array kiln_array; /* kiln/array.h */

/* One argument, of a kernel launch, a generator launch or an offload run:
 * the one value type of the API. Build them with the KILN_ARG_* macros
 * below (scalars, buffers, local memory), KILN_ARG_ARRAY (kiln/array.h) and
 * KILN_TO / KILN_FROM / ... (kiln/offload.h). */
/* 32 bytes: dtype and map share a word (no argument has both), so that
 * argument arrays copied on every enqueue stay as small as they can. */
typedef struct kiln_arg {
    kiln_arg_kind kind;
    union {
        kiln_dtype dtype;   /* KILN_ARG_SCALAR */
        kiln_data_kind map; /* KILN_ARG_MAP */
    };
    size_t bytes; /* KILN_ARG_LOCAL: local memory; KILN_ARG_MAP: host bytes */
    union {
        kiln_buffer *buffer; /* KILN_ARG_BUFFER */
        kiln_array *array;   /* KILN_ARG_ARRAY */
        void *host;          /* KILN_ARG_MAP */
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        uint16_t f16_bits;
        float f32;
        double f64;
        uint8_t b;      /* KILN_BOOL: 0 or 1 */
        float c64[2];   /* KILN_COMPLEX64: real, imaginary */
        double c128[2]; /* KILN_COMPLEX128: real, imaginary */
    } value;
} kiln_arg;

#define KILN_ARG_BUF(b) ((kiln_arg){ .kind = KILN_ARG_BUFFER, .value.buffer = (b) })
#define KILN_ARG_I8(x) ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_INT8, .value.i8 = (x) })
#define KILN_ARG_U8(x) ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_UINT8, .value.u8 = (x) })
#define KILN_ARG_I16(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_INT16, .value.i16 = (x) })
#define KILN_ARG_U16(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_UINT16, .value.u16 = (x) })
#define KILN_ARG_I32(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_INT32, .value.i32 = (x) })
#define KILN_ARG_U32(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_UINT32, .value.u32 = (x) })
#define KILN_ARG_I64(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_INT64, .value.i64 = (x) })
#define KILN_ARG_U64(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_UINT64, .value.u64 = (x) })
#define KILN_ARG_F16_BITS(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_FLOAT16, .value.f16_bits = (x) })
#define KILN_ARG_F32(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_FLOAT32, .value.f32 = (x) })
#define KILN_ARG_F64(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_FLOAT64, .value.f64 = (x) })
#define KILN_ARG_BOOL(x) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_BOOL, .value.b = (x) ? 1 : 0 })
#define KILN_ARG_C64(re, im) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_COMPLEX64, .value.c64 = { (re), (im) } })
#define KILN_ARG_C128(re, im) \
    ((kiln_arg){ .kind = KILN_ARG_SCALAR, .dtype = KILN_COMPLEX128, .value.c128 = { (re), (im) } })
#define KILN_ARG_LOCAL_BYTES(n) ((kiln_arg){ .kind = KILN_ARG_LOCAL, .bytes = (n) })
#define KILN_ARG_ARRAY(a) ((kiln_arg){ .kind = KILN_ARG_ARRAY, .value.array = (a) })

/* Looks a kernel up by name. KILN_ERROR_KERNEL_NOT_FOUND lists the kernels
 * the program has. The kernel holds a reference to its program. */
KILN_API kiln_status kiln_kernel_create(kiln_program *program, const char *name,
                                        kiln_kernel **kernel);
KILN_API kiln_status kiln_kernel_retain(kiln_kernel *kernel);
KILN_API void kiln_kernel_release(kiln_kernel *kernel);
/* Number of parameters the kernel declares. */
KILN_API size_t kiln_kernel_num_args(const kiln_kernel *kernel);
/* How many work-groups of local_size work-items one compute unit of device
 * (a device of the kernel's context) runs at once for this kernel, as its
 * registers and local memory allow: for sizing launches to whole waves.
 * CUDA: cuOccupancyMaxActiveBlocksPerMultiprocessor. KILN_ERROR_UNSUPPORTED
 * where the driver cannot tell (OpenCL). */
KILN_API kiln_status kiln_kernel_occupancy(kiln_kernel *kernel, kiln_device *device,
                                           size_t local_size, unsigned *groups_per_cu);
/* Launches the kernel over a dims-dimensional (1..3) range of global work
 * items; local may be NULL (the backend chooses). Global sizes need not be
 * multiples of local sizes on devices that allow it; where the device needs
 * it, KILN_ERROR_INVALID_ARGUMENT says so. A zero global size enqueues
 * nothing but still returns a completed event.
 *
 * Arguments are checked against the kernel's parameters before anything is
 * enqueued: a wrong count, a scalar where a buffer is declared, a scalar of
 * the wrong dtype, a buffer of another context, is KILN_ERROR_KERNEL_ARGS and
 * the message names the parameter. Launches are stateless: several threads
 * may launch the same kernel at once with different arguments. */
KILN_API kiln_status kiln_kernel_launch(kiln_queue *queue, kiln_kernel *kernel, unsigned dims,
                                        const size_t *global, const size_t *local, size_t num_args,
                                        const kiln_arg *args, size_t num_wait,
                                        kiln_event *const *wait, kiln_event **event);

/* ----------------------------------------------------------------- events */

typedef enum kiln_event_state {
    KILN_EVENT_QUEUED = 3,
    KILN_EVENT_SUBMITTED = 2,
    KILN_EVENT_RUNNING = 1,
    KILN_EVENT_COMPLETE = 0,
    KILN_EVENT_ERROR = -1, /* the command failed or a dependency failed */
} kiln_event_state;

typedef struct kiln_event_times { /* nanoseconds on the device's clock */
    uint64_t queued, submitted, started, ended;
} kiln_event_times;

/* Called once when the event completes or fails: state is KILN_EVENT_COMPLETE
 * or KILN_EVENT_ERROR. Runs on kiln's callback thread, named "kiln-callback",
 * never on a driver thread; callbacks run one at a time, in completion order.
 * It may call any kiln function, including enqueueing new work, but must not
 * block for long (it delays the other callbacks). */
typedef void (*kiln_event_callback)(kiln_event *event, kiln_event_state state, void *user_data);

KILN_API kiln_status kiln_event_retain(kiln_event *event);
KILN_API void kiln_event_release(kiln_event *event);
/* Blocks until the event completes. KILN_ERROR_EVENT_FAILED if it failed. */
KILN_API kiln_status kiln_event_wait(kiln_event *event);
/* Blocks until the event completes or timeout_ms milliseconds have passed,
 * whichever comes first (0: looks once, does not wait). KILN_OK if it
 * completed; KILN_ERROR_EVENT_FAILED if it failed; KILN_ERROR_TIMEOUT if it
 * is still pending: its work goes on, and the event may be waited on again
 * or released. A pending event is noticed within about a millisecond of
 * completing. */
KILN_API kiln_status kiln_event_wait_timeout(kiln_event *event, uint64_t timeout_ms);
/* Blocks until all events complete (NULL entries are skipped). */
KILN_API kiln_status kiln_event_wait_all(size_t num, kiln_event *const *events);
KILN_API kiln_status kiln_event_get_state(kiln_event *event, kiln_event_state *state);
/* Profiling times; the event must be complete and its queue made with
 * KILN_QUEUE_PROFILING (else KILN_ERROR_WRONG_STATE). */
KILN_API kiln_status kiln_event_get_times(kiln_event *event, kiln_event_times *times);
/* Registers a completion callback. It is called exactly once, even when the
 * event has already completed. The event is kept alive until then. */
KILN_API kiln_status kiln_event_on_complete(kiln_event *event, kiln_event_callback callback,
                                            void *user_data);
/* A user event, completed by the host with kiln_event_set_complete(); other
 * commands may wait on it. Releasing its last reference before completing
 * it fails it (KILN_EVENT_ERROR): the work behind it fails rather than wait
 * for ever. */
KILN_API kiln_status kiln_event_create_user(kiln_context *context, kiln_event **event);
/* Completes a user event, with KILN_EVENT_COMPLETE or KILN_EVENT_ERROR.
 * Only once: a second call is KILN_ERROR_WRONG_STATE. */
KILN_API kiln_status kiln_event_set_complete(kiln_event *event, kiln_event_state state);

/* Continuations: a future of a future. Once event completes (or fails),
 * kiln's callback thread calls fn(state, user_data); *next is a new event
 * that completes when fn returns: with KILN_EVENT_COMPLETE if fn returned
 * KILN_OK (and event did not fail), with KILN_EVENT_ERROR otherwise. Other
 * commands and continuations can wait on *next, so host steps chain with
 * device steps without blocking the host. fn is called exactly once. */
typedef kiln_status (*kiln_continuation)(kiln_event_state state, void *user_data);
KILN_API kiln_status kiln_event_then(kiln_event *event, kiln_continuation fn, void *user_data,
                                     kiln_event **next);

/* ---------------------------------------------------------------- futures */

/* A future: a value the host will have, and the storage that holds it
 * (docs/api.md, "Futures"). It settles once: complete, with its value, or
 * failed, with a status and the first failure's message. Nothing here
 * blocks except kiln_future_wait and kiln_future_copy. kiln_future_event
 * gives an event (borrowed: valid while the future is) that completes or
 * fails with the future, so device commands can wait on a future. */
typedef struct kiln_future kiln_future;

/* Reads size bytes at offset of buffer into storage the future owns, after
 * the wait list (a non-blocking read; e.g. a reduction's result, a
 * selection's count). */
KILN_API kiln_status kiln_buffer_read_future(kiln_queue *queue, kiln_buffer *buffer, size_t offset,
                                             size_t size, size_t num_wait, kiln_event *const *wait,
                                             kiln_future **future);
/* A future of size bytes filled by commands of the caller's
 * (kiln_future_data is the storage, e.g. the destination of a non-blocking
 * read): it completes when event completes (fails if event fails), once
 * kiln_future_complete_after has been called. */
KILN_API kiln_status kiln_future_create(kiln_context *context, size_t size, kiln_future **future);
KILN_API void *kiln_future_data(kiln_future *future);
KILN_API kiln_status kiln_future_complete_after(kiln_future *future, kiln_event *event);
/* A future already complete with a copy of value (for a continuation that
 * returns a value computed on the host). */
KILN_API kiln_status kiln_future_ready(kiln_context *context, const void *value, size_t size,
                                       kiln_future **future);
KILN_API kiln_status kiln_future_retain(kiln_future *future);
/* The last release of a future that has not settled (one that nothing can
 * settle any more: pending work holds its own reference) fails its event
 * with KILN_ERROR_CANCELED. */
KILN_API void kiln_future_release(kiln_future *future);

KILN_API kiln_event *kiln_future_event(kiln_future *future);
/* KILN_EVENT_QUEUED while pending, then KILN_EVENT_COMPLETE or _ERROR. */
KILN_API kiln_status kiln_future_get_state(kiln_future *future, kiln_event_state *state);
/* The value once complete (NULL before, and for a future without a value;
 * *size gets its size). Valid while the future is. */
KILN_API const void *kiln_future_value(kiln_future *future, size_t *size);
/* Blocks until the future settles; its failure's status and message.
 * Called on kiln's callback thread (in a callback or continuation) for a
 * future that has not settled, it would wait for itself:
 * KILN_ERROR_WRONG_STATE at once. */
KILN_API kiln_status kiln_future_wait(kiln_future *future);
/* Waits, then copies the value (size must be the value's size, else
 * KILN_ERROR_MISMATCH). */
KILN_API kiln_status kiln_future_copy(kiln_future *future, void *out, size_t size);

/* A continuation: called on kiln's callback thread with the completed
 * value of the future it follows. It may enqueue work and return, in
 * *next, a future that the step's future then settles with (its value,
 * or its failure); with *next left NULL the step completes without a
 * value. A status other than KILN_OK fails the step with it. */
typedef kiln_status (*kiln_future_fn)(const void *value, size_t size, void *user_data,
                                      kiln_future **next);
/* A step after future: *next settles with the continuation's outcome. If
 * future fails, fn is not called and *next fails with future's status and
 * message (so the first failure travels down a chain). */
KILN_API kiln_status kiln_future_then(kiln_future *future, kiln_future_fn fn, void *user_data,
                                      kiln_future **next);
/* Completes when all n futures have completed (no value); fails as soon as
 * one fails, with its status and message. n >= 1. */
KILN_API kiln_status kiln_future_when_all(size_t n, kiln_future *const *futures, kiln_future **all);
/* Completes when the first of n futures completes; its value is that
 * future's index (a size_t). Fails only when all n have failed (with the
 * last failure). n >= 1. */
KILN_API kiln_status kiln_future_when_any(size_t n, kiln_future *const *futures, kiln_future **any);
/* Cancels a step (kiln_future_then) or join (when_all/any) whose
 * continuation has not started: it fails with KILN_ERROR_CANCELED, its fn
 * never runs, and the steps after it fail with the same status.
 * KILN_ERROR_WRONG_STATE for a future already settled, a continuation
 * already running, and a future of device work (kiln_buffer_read_future/create):
 * work submitted to OpenCL or CUDA cannot be recalled. */
KILN_API kiln_status kiln_future_cancel(kiln_future *future);

/* --------------------------------------------------------------- timeline */

/* A timeline of every command kiln enqueues (kernels, the generators'
 * kernels, copies, fills, markers), written as a Chrome/Perfetto trace file
 * that a browser shows (ui.perfetto.dev, or chrome://tracing): one row per
 * queue, grouped by device, each command at the time the device ran it,
 * with its enqueue time and its wait in the queue (docs/api.md, "Timeline").
 * KILN_TRACE=path in the environment does the same from the first command
 * to the process's exit. Queues created while a trace is on get device
 * profiling; commands of older queues are shown from enqueue to their
 * observed completion ("timing": "host"). Tracing never fails a command.
 * kiln_trace_start: KILN_ERROR_WRONG_STATE if a trace is on, KILN_ERROR_IO
 * if path cannot be written. kiln_trace_stop waits up to 5 s for traced
 * commands still running (those that do not finish are counted as
 * "unfinished" in the file), writes the file and ends the trace;
 * KILN_ERROR_WRONG_STATE if no trace is on. */
KILN_API kiln_status kiln_trace_start(const char *path);
KILN_API kiln_status kiln_trace_stop(void);

/* ------------------------------------------------------------------ cache */

/* Compiled programs are cached on disk, in $KILN_CACHE_DIR, else
 * $XDG_CACHE_HOME/kiln, else ~/.cache/kiln, else (no home at all)
 * /tmp/kiln-cache-<euid>. The variables are read with secure_getenv (a
 * setuid program ignores them).
 *
 * An entry is native code loaded into the process, so kiln trusts the
 * cache only if nobody else can write it: the directory must be a real
 * directory (not a symbolic link), owned by the effective user and not
 * writable by group or others; an entry must be a regular file (not a
 * link) owned by the effective user. kiln creates directories 0700 and
 * entries 0600, and works through the directory's open descriptor once
 * it is checked. An untrusted directory or entry is never read: programs
 * are built from source, kiln says once on stderr why caching is off, and
 * kiln_cache_status() returns the reason.
 *
 * A shared team cache is an explicit opt-in: KILN_CACHE_SHARED=1 with
 * KILN_CACHE_DIR naming an existing directory accepts one that is group-
 * writable and owned by anyone, and entries of any owner (written 0640).
 * Everyone who can write that directory can run code as every user of
 * it. World-writable directories and entries, and symbolic links, are
 * refused even then. */

typedef struct kiln_cache_entry {
    char file[512];  /* full path of the entry file */
    char label[256]; /* what was built: backend, device, kernels */
    uint64_t bytes;  /* file size */
    int64_t mtime;   /* seconds since the epoch */
    int valid;       /* 1 if trusted and the header and checksum verify */
} kiln_cache_entry;

typedef void (*kiln_cache_visit)(const kiln_cache_entry *entry, void *user);

/* Copies the cache directory's path into buf (capacity bytes, NUL
 * included); KILN_ERROR_OUT_OF_RANGE if it does not fit. */
KILN_API kiln_status kiln_cache_path(char *buf, size_t capacity);
/* Whether the cache is trusted and in use. KILN_OK if it is (or does not
 * exist yet and will be created privately); KILN_ERROR_UNTRUSTED if the
 * directory is refused (a symbolic link, owned by another user, writable by
 * group or others); KILN_ERROR_IO if it cannot be used (not a directory, a
 * shared cache that does not exist). Either way why (capacity bytes, NUL
 * included; may be NULL) gets a one-line description or reason, truncated
 * to fit; on failure it is also kiln_last_error_message(). */
KILN_API kiln_status kiln_cache_status(char *why, size_t capacity);
/* Calls visit for each entry in the cache (none if the directory does not
 * exist yet). An entry that is not trusted is listed with valid 0 and its
 * reason as the label, never read. Refuses an untrusted directory with
 * kiln_cache_status()'s status and reason. */
KILN_API kiln_status kiln_cache_list(kiln_cache_visit visit, void *user);
/* Removes every entry; *removed (may be NULL) gets the count. Refuses an
 * untrusted directory with kiln_cache_status()'s status and reason. */
KILN_API kiln_status kiln_cache_clear(size_t *removed);

#include "kiln/array.h"
#include "kiln/select.h"
#include "kiln/toolkit.h"
#include "kiln/linalg.h"
#include "kiln/offload.h"
#include "kiln/random.h"
#include "kiln/sort.h"
#include "kiln/graph.h"
#include "kiln/split.h"

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
