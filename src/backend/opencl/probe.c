/* Loading libOpenCL with dlopen, and the cl_int error names. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/opencl/ocl.h"

kiln__cl_api kiln__cl;
atomic_uint kiln__ocl_mem_epoch;

static void *cl_lib;

/* The cl_int codes' names (OpenCL 3.0 and the KHR extensions kiln uses). */
static const struct {
    cl_int code;
    const char *name;
} ocl_errors[] = {
    { 0, "CL_SUCCESS" },
    { -1, "CL_DEVICE_NOT_FOUND" },
    { -2, "CL_DEVICE_NOT_AVAILABLE" },
    { -3, "CL_COMPILER_NOT_AVAILABLE" },
    { -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" },
    { -5, "CL_OUT_OF_RESOURCES" },
    { -6, "CL_OUT_OF_HOST_MEMORY" },
    { -7, "CL_PROFILING_INFO_NOT_AVAILABLE" },
    { -8, "CL_MEM_COPY_OVERLAP" },
    { -9, "CL_IMAGE_FORMAT_MISMATCH" },
    { -10, "CL_IMAGE_FORMAT_NOT_SUPPORTED" },
    { -11, "CL_BUILD_PROGRAM_FAILURE" },
    { -12, "CL_MAP_FAILURE" },
    { -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
    { -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" },
    { -15, "CL_COMPILE_PROGRAM_FAILURE" },
    { -16, "CL_LINKER_NOT_AVAILABLE" },
    { -17, "CL_LINK_PROGRAM_FAILURE" },
    { -18, "CL_DEVICE_PARTITION_FAILED" },
    { -19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE" },
    { -30, "CL_INVALID_VALUE" },
    { -31, "CL_INVALID_DEVICE_TYPE" },
    { -32, "CL_INVALID_PLATFORM" },
    { -33, "CL_INVALID_DEVICE" },
    { -34, "CL_INVALID_CONTEXT" },
    { -35, "CL_INVALID_QUEUE_PROPERTIES" },
    { -36, "CL_INVALID_COMMAND_QUEUE" },
    { -37, "CL_INVALID_HOST_PTR" },
    { -38, "CL_INVALID_MEM_OBJECT" },
    { -39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR" },
    { -40, "CL_INVALID_IMAGE_SIZE" },
    { -41, "CL_INVALID_SAMPLER" },
    { -42, "CL_INVALID_BINARY" },
    { -43, "CL_INVALID_BUILD_OPTIONS" },
    { -44, "CL_INVALID_PROGRAM" },
    { -45, "CL_INVALID_PROGRAM_EXECUTABLE" },
    { -46, "CL_INVALID_KERNEL_NAME" },
    { -47, "CL_INVALID_KERNEL_DEFINITION" },
    { -48, "CL_INVALID_KERNEL" },
    { -49, "CL_INVALID_ARG_INDEX" },
    { -50, "CL_INVALID_ARG_VALUE" },
    { -51, "CL_INVALID_ARG_SIZE" },
    { -52, "CL_INVALID_KERNEL_ARGS" },
    { -53, "CL_INVALID_WORK_DIMENSION" },
    { -54, "CL_INVALID_WORK_GROUP_SIZE" },
    { -55, "CL_INVALID_WORK_ITEM_SIZE" },
    { -56, "CL_INVALID_GLOBAL_OFFSET" },
    { -57, "CL_INVALID_EVENT_WAIT_LIST" },
    { -58, "CL_INVALID_EVENT" },
    { -59, "CL_INVALID_OPERATION" },
    { -60, "CL_INVALID_GL_OBJECT" },
    { -61, "CL_INVALID_BUFFER_SIZE" },
    { -62, "CL_INVALID_MIP_LEVEL" },
    { -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
    { -64, "CL_INVALID_PROPERTY" },
    { -65, "CL_INVALID_IMAGE_DESCRIPTOR" },
    { -66, "CL_INVALID_COMPILER_OPTIONS" },
    { -67, "CL_INVALID_LINKER_OPTIONS" },
    { -68, "CL_INVALID_DEVICE_PARTITION_COUNT" },
    { -69, "CL_INVALID_PIPE_SIZE" },
    { -70, "CL_INVALID_DEVICE_QUEUE" },
    { -71, "CL_INVALID_SPEC_ID" },
    { -72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED" },
    { -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
    { -1057, "CL_DEVICE_PARTITION_FAILED_EXT" },
    { -1058, "CL_INVALID_PARTITION_COUNT_EXT" },
    { -1059, "CL_INVALID_PARTITION_NAME_EXT" },
    { -1121, "CL_CONTEXT_TERMINATED_KHR" },
    { -1138, "CL_INVALID_COMMAND_BUFFER_KHR" },
    { -1139, "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR" },
    { -1140, "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR" },
    { -1141, "CL_INVALID_MUTABLE_COMMAND_KHR" },
    { -1142, "CL_INVALID_SEMAPHORE_KHR" },
};

const char *kiln__ocl_error_name(cl_int code) {
    for (size_t i = 0; i < sizeof ocl_errors / sizeof ocl_errors[0]; i++)
        if (ocl_errors[i].code == code)
            return ocl_errors[i].name;
    return "CL_UNKNOWN_ERROR";
}

/* kiln's status for an OpenCL error code. */
static kiln_status status_of(cl_int code) {
    if (code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES)
        return KILN_ERROR_OUT_OF_DEVICE_MEMORY;
    if (code == CL_OUT_OF_HOST_MEMORY)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    if (code == CL_BUILD_PROGRAM_FAILURE || code == CL_COMPILE_PROGRAM_FAILURE ||
        code == CL_LINK_PROGRAM_FAILURE)
        return KILN_ERROR_BUILD;
    if (code == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        return KILN_ERROR_EVENT_FAILED;
    return KILN_ERROR_DRIVER;
}

kiln_status kiln__ocl_fail(cl_int code, const char *what) {
    kiln_status st = status_of(code);
    return kiln__error_set(st, code, "%s: %s (%d)", what, kiln__ocl_error_name(code), (int)code);
}

kiln_status kiln__ocl_fail_as(cl_int code, kiln_status status, const char *what, const char *why,
                              ...) {
    char text[4096];
    va_list ap;
    va_start(ap, why);
    vsnprintf(text, sizeof text, why, ap);
    va_end(ap);
    return kiln__error_set(status, code, "%s: %s (%d): %s", what, kiln__ocl_error_name(code),
                           (int)code, text);
}

/* Called once, under the registry's lock. A second call after success is a
 * no-op. */
void *kiln__ocl_symbol(const char *name) {
    return cl_lib ? dlsym(cl_lib, name) : NULL;
}

kiln_status kiln__ocl_load(void) {
    static const char *const names[] = { "libOpenCL.so.1", "libOpenCL.so" };
    void *lib = NULL;
    if (cl_lib)
        return KILN_OK;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                               "libOpenCL.so.1 not found: install the OpenCL ICD loader "
                               "(Debian: apt-get install ocl-icd-libopencl1) and a driver "
                               "(pocl-opencl-icd for the CPU; the GPU vendor's OpenCL for a GPU)");

    kiln__cl_api api;
    memset(&api, 0, sizeof api);
    /* dlsym returns void *; memcpy into the function pointer avoids the
     * ISO C object/function pointer conversion warning. */
#define KILN__CL_RESOLVE_REQ(fn)                                                               \
    {                                                                                          \
        void *sym = dlsym(lib, #fn);                                                           \
        if (!sym) {                                                                            \
            dlclose(lib);                                                                      \
            return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,                                   \
                                   "the OpenCL loader lacks %s: install a current ICD loader " \
                                   "(Debian: apt-get install ocl-icd-libopencl1)",             \
                                   #fn);                                                       \
        }                                                                                      \
        memcpy(&api.fn, &sym, sizeof sym);                                                     \
    }
#define KILN__CL_RESOLVE_OPT(fn)               \
    {                                          \
        void *sym = dlsym(lib, #fn);           \
        if (sym)                               \
            memcpy(&api.fn, &sym, sizeof sym); \
    }
    KILN__CL_REQUIRED(KILN__CL_RESOLVE_REQ)
    KILN__CL_OPTIONAL(KILN__CL_RESOLVE_OPT)
#undef KILN__CL_RESOLVE_REQ
#undef KILN__CL_RESOLVE_OPT
    kiln__cl = api;
    cl_lib = lib;
    return KILN_OK;
}
