# cython: language_level=3
# kiln's C API for Cython: `cimport kiln` (or `from kiln cimport *`) and
# call it, from `with nogil:` blocks too (every function is declared
# nogil). Compile with include_dirs=[kiln.get_include()],
# library_dirs=[kiln.get_library_dir()], libraries=["kiln"] and
# runtime_library_dirs=[kiln.get_library_dir()] (see
# python/examples/pairwise.pyx). The declarations follow include/kiln.h;
# the descriptor macros (KILN_PROGRAM_OPTS(...)) are the inline functions
# at the end.
from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t

cdef extern from "kiln.h" nogil:
    ctypedef enum kiln_status:
        KILN_OK
        KILN_ERROR_INVALID_ARGUMENT
        KILN_ERROR_NULL_HANDLE
        KILN_ERROR_OUT_OF_HOST_MEMORY
        KILN_ERROR_OUT_OF_DEVICE_MEMORY
        KILN_ERROR_NO_RUNTIME
        KILN_ERROR_NO_DEVICE
        KILN_ERROR_BUILD
        KILN_ERROR_KERNEL_NOT_FOUND
        KILN_ERROR_KERNEL_ARGS
        KILN_ERROR_OUT_OF_RANGE
        KILN_ERROR_DRIVER
        KILN_ERROR_UNSUPPORTED
        KILN_ERROR_IO
        KILN_ERROR_EVENT_FAILED
        KILN_ERROR_WRONG_STATE
        KILN_ERROR_MISMATCH
        KILN_ERROR_INTERNAL
        KILN_ERROR_UNTRUSTED
        KILN_ERROR_TIMEOUT
        KILN_ERROR_CANCELED

    const char *kiln_status_name(kiln_status status)
    const char *kiln_status_string(kiln_status status)
    const char *kiln_last_error_message()
    long kiln_last_error_native()
    const char *kiln_last_build_log()
    const char *kiln_version()

    ctypedef enum kiln_dtype:
        KILN_INT8
        KILN_UINT8
        KILN_INT16
        KILN_UINT16
        KILN_INT32
        KILN_UINT32
        KILN_INT64
        KILN_UINT64
        KILN_FLOAT16
        KILN_FLOAT32
        KILN_FLOAT64
        KILN_COMPLEX64
        KILN_COMPLEX128
    size_t kiln_dtype_size(kiln_dtype dtype)
    const char *kiln_dtype_name(kiln_dtype dtype)

    ctypedef struct kiln_device
    ctypedef struct kiln_context
    ctypedef struct kiln_queue
    ctypedef struct kiln_buffer
    ctypedef struct kiln_program
    ctypedef struct kiln_kernel
    ctypedef struct kiln_event
    ctypedef struct kiln_array
    ctypedef struct kiln_future

    ctypedef enum kiln_backend_kind:
        KILN_BACKEND_OPENCL
        KILN_BACKEND_CUDA
    ctypedef enum kiln_device_type:
        KILN_DEVICE_CPU
        KILN_DEVICE_GPU
        KILN_DEVICE_ACCELERATOR
        KILN_DEVICE_OTHER

    ctypedef struct kiln_device_info:
        kiln_backend_kind backend
        kiln_device_type type
        char id[32]
        char name[256]
        char vendor[256]
        char platform[256]
        char version[256]
        char driver_version[128]
        unsigned compute_units
        unsigned clock_mhz
        uint64_t global_mem_bytes
        uint64_t local_mem_bytes
        uint64_t max_alloc_bytes
        size_t max_work_group_size
        int fp64
        int fp16
        char backend_name[16]

    kiln_status kiln_device_count(size_t *count)
    kiln_status kiln_device_at(size_t index, kiln_device **device)
    kiln_status kiln_device_select(const char *selector, kiln_device **device)
    kiln_status kiln_device_get_info(const kiln_device *device, kiln_device_info *info)

    kiln_status kiln_context_create(kiln_device *const *devices, size_t num_devices,
                                    kiln_context **context)
    kiln_status kiln_context_retain(kiln_context *context)
    void kiln_context_release(kiln_context *context)
    size_t kiln_context_num_devices(const kiln_context *context)
    kiln_device *kiln_context_device(const kiln_context *context, size_t index)

    ctypedef enum kiln_queue_flags:
        KILN_QUEUE_IN_ORDER
        KILN_QUEUE_OUT_OF_ORDER
        KILN_QUEUE_PROFILING
    kiln_status kiln_queue_create(kiln_context *context, kiln_device *device, unsigned flags,
                                  kiln_queue **queue)
    kiln_status kiln_queue_create_default(const char *selector, unsigned flags, kiln_queue **queue)
    kiln_status kiln_queue_retain(kiln_queue *queue)
    void kiln_queue_release(kiln_queue *queue)
    kiln_context *kiln_queue_context(const kiln_queue *queue)
    kiln_device *kiln_queue_device(const kiln_queue *queue)
    kiln_status kiln_queue_finish(kiln_queue *queue)
    kiln_status kiln_queue_flush(kiln_queue *queue)

    ctypedef enum kiln_buffer_flags:
        KILN_BUFFER_READ_WRITE
        KILN_BUFFER_READ_ONLY
        KILN_BUFFER_WRITE_ONLY
        KILN_BUFFER_HOST_PINNED
        KILN_BUFFER_POOLED
    kiln_status kiln_buffer_create(kiln_context *context, size_t size, unsigned flags,
                                   const void *host_data, kiln_buffer **buffer)
    kiln_status kiln_buffer_retain(kiln_buffer *buffer)
    void kiln_buffer_release(kiln_buffer *buffer)
    size_t kiln_buffer_size(const kiln_buffer *buffer)
    kiln_status kiln_buffer_write(kiln_queue *queue, kiln_buffer *dst, size_t offset, size_t size,
                                  const void *src)
    kiln_status kiln_buffer_read(kiln_queue *queue, kiln_buffer *src, size_t offset, size_t size,
                                 void *dst)
    kiln_status kiln_buffer_write_async(kiln_queue *queue, kiln_buffer *dst, size_t offset,
                                        size_t size, const void *src, size_t num_wait,
                                        kiln_event *const *wait, kiln_event **event)
    kiln_status kiln_buffer_read_async(kiln_queue *queue, kiln_buffer *src, size_t offset,
                                       size_t size, void *dst, size_t num_wait,
                                       kiln_event *const *wait, kiln_event **event)

    ctypedef enum kiln_language:
        KILN_LANG_AUTO
        KILN_LANG_OPENCL_C
        KILN_LANG_CUDA_C
    ctypedef struct kiln_program_opts:
        size_t struct_size
        kiln_language language
        const char *build_options
        int no_cache
    kiln_status kiln_program_create(kiln_context *context, const char *source,
                                    const kiln_program_opts *opts, kiln_program **program)
    void kiln_program_release(kiln_program *program)

    ctypedef enum kiln_arg_kind:
        KILN_ARG_BUFFER
        KILN_ARG_SCALAR
        KILN_ARG_LOCAL
        KILN_ARG_ARRAY
        KILN_ARG_MAP
    ctypedef enum kiln_data_kind:
        KILN_DATA_PRESENT
        KILN_DATA_TO
        KILN_DATA_FROM
        KILN_DATA_TOFROM
        KILN_DATA_ALLOC
    ctypedef union kiln__arg_value:
        kiln_buffer *buffer
        kiln_array *array
        void *host
        int8_t i8
        uint8_t u8
        int16_t i16
        uint16_t u16
        int32_t i32
        uint32_t u32
        int64_t i64
        uint64_t u64
        uint16_t f16_bits
        float f32
        double f64
        uint8_t b
        float c64[2]
        double c128[2]
    ctypedef struct kiln_arg:
        kiln_arg_kind kind
        kiln_dtype dtype
        size_t bytes
        kiln_data_kind map
        kiln__arg_value value
    # the argument macros of kiln.h
    kiln_arg KILN_ARG_BUF(kiln_buffer *b)
    kiln_arg KILN_ARG_I32(int32_t x)
    kiln_arg KILN_ARG_U32(uint32_t x)
    kiln_arg KILN_ARG_I64(int64_t x)
    kiln_arg KILN_ARG_U64(uint64_t x)
    kiln_arg KILN_ARG_F32(float x)
    kiln_arg KILN_ARG_F64(double x)
    kiln_arg KILN_ARG_BOOL(int x)
    kiln_arg KILN_ARG_C64(float re, float im)
    kiln_arg KILN_ARG_C128(double re, double im)
    kiln_arg KILN_ARG_LOCAL_BYTES(size_t n)
    kiln_arg KILN_ARG_ARRAY_OF "KILN_ARG_ARRAY"(kiln_array *a)  # the macro (the enum constant has the name)
    kiln_arg KILN_TO(const void *p, size_t n)
    kiln_arg KILN_FROM(void *p, size_t n)
    kiln_arg KILN_TOFROM(void *p, size_t n)
    kiln_arg KILN_ALLOC(void *p, size_t n)
    kiln_arg KILN_PRESENT(const void *p)

    kiln_status kiln_kernel_create(kiln_program *program, const char *name, kiln_kernel **kernel)
    void kiln_kernel_release(kiln_kernel *kernel)
    size_t kiln_kernel_num_args(const kiln_kernel *kernel)
    kiln_status kiln_kernel_launch(kiln_queue *queue, kiln_kernel *kernel, unsigned dims,
                                   const size_t *global_size, const size_t *local_size,
                                   size_t num_args, const kiln_arg *args, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event)

    ctypedef enum kiln_event_state:
        KILN_EVENT_QUEUED
        KILN_EVENT_SUBMITTED
        KILN_EVENT_RUNNING
        KILN_EVENT_COMPLETE
        KILN_EVENT_ERROR
    kiln_status kiln_event_retain(kiln_event *event)
    void kiln_event_release(kiln_event *event)
    kiln_status kiln_event_wait(kiln_event *event)
    kiln_status kiln_event_wait_all(size_t num, kiln_event *const *events)
    kiln_status kiln_event_get_state(kiln_event *event, kiln_event_state *state)

    # arrays (kiln/array.h)
    ctypedef struct kiln_array_info:
        kiln_dtype dtype
        unsigned ndim
        size_t shape[8]
        ptrdiff_t strides[8]
        size_t offset
        size_t size
        int contiguous
    kiln_status kiln_array_empty(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                                 const size_t *shape, kiln_array **array)
    kiln_status kiln_array_from_host(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                                     const size_t *shape, const void *host, kiln_array **array)
    kiln_status kiln_array_retain(kiln_array *array)
    void kiln_array_release(kiln_array *array)
    kiln_status kiln_array_get_info(const kiln_array *array, kiln_array_info *info)
    size_t kiln_array_size(const kiln_array *array)
    kiln_dtype kiln_array_dtype(const kiln_array *array)
    kiln_buffer *kiln_array_buffer(const kiln_array *array)
    kiln_context *kiln_array_context(const kiln_array *array)
    kiln_status kiln_array_read(kiln_queue *queue, kiln_array *array, void *host)
    kiln_status kiln_array_write(kiln_queue *queue, kiln_array *array, const void *host)

    kiln_status kiln_array_zeros(kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                                 const size_t *shape, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event, kiln_array **array)
    kiln_status kiln_array_copy_out(kiln_queue *queue, kiln_array *dst, kiln_array *src,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event)
    ctypedef enum kiln_binary_op:
        KILN_OP_ADD
        KILN_OP_SUB
        KILN_OP_MUL
        KILN_OP_DIV
        KILN_OP_MIN
        KILN_OP_MAX
        KILN_OP_EQ
        KILN_OP_NE
        KILN_OP_LT
        KILN_OP_LE
        KILN_OP_GT
        KILN_OP_GE
    ctypedef enum kiln_unary_op:
        KILN_OP_NEG
        KILN_OP_ABS
        KILN_OP_SQRT
        KILN_OP_EXP
        KILN_OP_LOG
        KILN_OP_SIN
        KILN_OP_COS
    kiln_status kiln_array_binary_out(kiln_queue *queue, kiln_binary_op op, kiln_array *out,
                                  kiln_array *a, kiln_array *b, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event)
    kiln_status kiln_array_binary_scalar_out(kiln_queue *queue, kiln_binary_op op, kiln_array *out,
                                         kiln_array *a, kiln_arg scalar, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event)
    kiln_status kiln_array_unary_out(kiln_queue *queue, kiln_unary_op op, kiln_array *out,
                                 kiln_array *a, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event)
    ctypedef enum kiln_reduce_op:
        KILN_REDUCE_SUM
        KILN_REDUCE_PROD
        KILN_REDUCE_MIN
        KILN_REDUCE_MAX
        KILN_REDUCE_NORM1
        KILN_REDUCE_NORM2
        KILN_REDUCE_NORM_INF
        KILN_REDUCE_ARGMIN
        KILN_REDUCE_ARGMAX
        KILN_REDUCE_ANY
        KILN_REDUCE_ALL
    kiln_dtype kiln_dtype_reduce_result(kiln_reduce_op op, kiln_dtype dtype)
    kiln_status kiln_array_reduce(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                  void *host_result)
    kiln_status kiln_array_dot(kiln_queue *queue, kiln_array *a, kiln_array *b, void *host_result)
    ctypedef struct kiln_elementwise
    ctypedef struct kiln_elementwise_desc:
        size_t struct_size
        const char *arguments
        const char *operation
        const char *name
        const char *preamble
        unsigned flags
        const char *options
    kiln_status kiln_elementwise_create(kiln_context *context, const kiln_elementwise_desc *desc,
                                        kiln_elementwise **elementwise)
    kiln_status kiln_elementwise_launch(kiln_queue *queue, kiln_elementwise *elementwise, size_t n,
                                        size_t num_args, const kiln_arg *args, size_t num_wait,
                                        kiln_event *const *wait, kiln_event **event)
    void kiln_elementwise_release(kiln_elementwise *elementwise)
    ctypedef struct kiln_sort_desc:
        size_t struct_size
        int descending
        unsigned begin_bit
        unsigned end_bit
    kiln_status kiln_array_sort_out(kiln_queue *queue, kiln_array *keys_out, kiln_array *values_out,
                                kiln_array *keys, kiln_array *values, const kiln_sort_desc *desc,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event)

    # offload (kiln/offload.h): loop bodies with to/from/tofrom/alloc maps
    ctypedef struct kiln_data_region
    ctypedef struct kiln_offload
    ctypedef struct kiln_offload_opts:
        size_t struct_size
        const char *index_names
        const char *preamble
        const char *name
        const char *build_options
    kiln_status kiln_data_region_begin(kiln_queue *queue, kiln_data_region *parent,
                                       size_t num_maps, const kiln_arg *maps,
                                       kiln_data_region **region)
    kiln_status kiln_data_region_wait(kiln_data_region *region)
    kiln_status kiln_data_region_end(kiln_data_region *region)
    kiln_status kiln_offload_create(kiln_context *context, const char *params, const char *body,
                                    unsigned dims, const kiln_offload_opts *opts,
                                    kiln_offload **offload)
    void kiln_offload_release(kiln_offload *offload)
    kiln_status kiln_offload_run(kiln_queue *queue, kiln_offload *offload,
                                 kiln_data_region *region, const size_t *range, size_t num_args,
                                 const kiln_arg *args)


cdef inline kiln_program_opts kiln_program_opts_make(const char *build_options) noexcept nogil:
    """KILN_PROGRAM_OPTS(.build_options = build_options)"""
    cdef kiln_program_opts o
    o.struct_size = sizeof(kiln_program_opts)
    o.language = KILN_LANG_AUTO
    o.build_options = build_options
    o.no_cache = 0
    return o


cdef inline kiln_offload_opts kiln_offload_opts_make(const char *index_names) noexcept nogil:
    """KILN_OFFLOAD_OPTS(.index_names = index_names)"""
    cdef kiln_offload_opts o
    o.struct_size = sizeof(kiln_offload_opts)
    o.index_names = index_names
    o.preamble = NULL
    o.name = NULL
    o.build_options = NULL
    return o


cdef inline kiln_elementwise_desc kiln_elementwise_desc_make(const char *arguments,
                                                             const char *operation) noexcept nogil:
    """KILN_ELEMENTWISE_DESC(.arguments = arguments, .operation = operation)"""
    cdef kiln_elementwise_desc d
    d.struct_size = sizeof(kiln_elementwise_desc)
    d.arguments = arguments
    d.operation = operation
    d.name = NULL
    d.preamble = NULL
    d.flags = 0
    d.options = NULL
    return d


cdef inline kiln_sort_desc kiln_sort_desc_make(int descending) noexcept nogil:
    """KILN_SORT_DESC(.descending = descending)"""
    cdef kiln_sort_desc d
    d.struct_size = sizeof(kiln_sort_desc)
    d.descending = descending
    d.begin_bit = 0
    d.end_bit = 0
    return d
