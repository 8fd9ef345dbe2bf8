/* Loading libOpenCL with dlopen, and the cl_int error names. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/opencl/ocl.h"

kiln__cl_api kiln__cl;
atomic_uint kiln__ocl_mem_epoch;

static void *cl_lib;

const char *kiln__ocl_error_name(cl_int code) {
    switch (code) {
    case 0:
        return "CL_SUCCESS";
    case -1:
        return "CL_DEVICE_NOT_FOUND";
    case -2:
        return "CL_DEVICE_NOT_AVAILABLE";
    case -3:
        return "CL_COMPILER_NOT_AVAILABLE";
    case -4:
        return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5:
        return "CL_OUT_OF_RESOURCES";
    case -6:
        return "CL_OUT_OF_HOST_MEMORY";
    case -7:
        return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8:
        return "CL_MEM_COPY_OVERLAP";
    case -9:
        return "CL_IMAGE_FORMAT_MISMATCH";
    case -10:
        return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11:
        return "CL_BUILD_PROGRAM_FAILURE";
    case -12:
        return "CL_MAP_FAILURE";
    case -13:
        return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14:
        return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15:
        return "CL_COMPILE_PROGRAM_FAILURE";
    case -16:
        return "CL_LINKER_NOT_AVAILABLE";
    case -17:
        return "CL_LINK_PROGRAM_FAILURE";
    case -18:
        return "CL_DEVICE_PARTITION_FAILED";
    case -19:
        return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30:
        return "CL_INVALID_VALUE";
    case -31:
        return "CL_INVALID_DEVICE_TYPE";
    case -32:
        return "CL_INVALID_PLATFORM";
    case -33:
        return "CL_INVALID_DEVICE";
    case -34:
        return "CL_INVALID_CONTEXT";
    case -35:
        return "CL_INVALID_QUEUE_PROPERTIES";
    case -36:
        return "CL_INVALID_COMMAND_QUEUE";
    case -37:
        return "CL_INVALID_HOST_PTR";
    case -38:
        return "CL_INVALID_MEM_OBJECT";
    case -39:
        return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40:
        return "CL_INVALID_IMAGE_SIZE";
    case -41:
        return "CL_INVALID_SAMPLER";
    case -42:
        return "CL_INVALID_BINARY";
    case -43:
        return "CL_INVALID_BUILD_OPTIONS";
    case -44:
        return "CL_INVALID_PROGRAM";
    case -45:
        return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46:
        return "CL_INVALID_KERNEL_NAME";
    case -47:
        return "CL_INVALID_KERNEL_DEFINITION";
    case -48:
        return "CL_INVALID_KERNEL";
    case -49:
        return "CL_INVALID_ARG_INDEX";
    case -50:
        return "CL_INVALID_ARG_VALUE";
    case -51:
        return "CL_INVALID_ARG_SIZE";
    case -52:
        return "CL_INVALID_KERNEL_ARGS";
    case -53:
        return "CL_INVALID_WORK_DIMENSION";
    case -54:
        return "CL_INVALID_WORK_GROUP_SIZE";
    case -55:
        return "CL_INVALID_WORK_ITEM_SIZE";
    case -56:
        return "CL_INVALID_GLOBAL_OFFSET";
    case -57:
        return "CL_INVALID_EVENT_WAIT_LIST";
    case -58:
        return "CL_INVALID_EVENT";
    case -59:
        return "CL_INVALID_OPERATION";
    case -60:
        return "CL_INVALID_GL_OBJECT";
    case -61:
        return "CL_INVALID_BUFFER_SIZE";
    case -62:
        return "CL_INVALID_MIP_LEVEL";
    case -63:
        return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64:
        return "CL_INVALID_PROPERTY";
    case -65:
        return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66:
        return "CL_INVALID_COMPILER_OPTIONS";
    case -67:
        return "CL_INVALID_LINKER_OPTIONS";
    case -68:
        return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69:
        return "CL_INVALID_PIPE_SIZE";
    case -70:
        return "CL_INVALID_DEVICE_QUEUE";
    case -71:
        return "CL_INVALID_SPEC_ID";
    case -72:
        return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    case -1057:
        return "CL_DEVICE_PARTITION_FAILED_EXT";
    case -1058:
        return "CL_INVALID_PARTITION_COUNT_EXT";
    case -1059:
        return "CL_INVALID_PARTITION_NAME_EXT";
    case -1121:
        return "CL_CONTEXT_TERMINATED_KHR";
    case -1138:
        return "CL_INVALID_COMMAND_BUFFER_KHR";
    case -1139:
        return "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR";
    case -1140:
        return "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR";
    case -1141:
        return "CL_INVALID_MUTABLE_COMMAND_KHR";
    case -1142:
        return "CL_INVALID_SEMAPHORE_KHR";
    default:
        return "CL_UNKNOWN_ERROR";
    }
}

kiln_status kiln__ocl_fail(cl_int code, const char *what) {
    kiln_status st;
    switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
        st = KILN_ERROR_OUT_OF_DEVICE_MEMORY;
        break;
    case CL_OUT_OF_HOST_MEMORY:
        st = KILN_ERROR_OUT_OF_HOST_MEMORY;
        break;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
        st = KILN_ERROR_BUILD;
        break;
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        st = KILN_ERROR_EVENT_FAILED;
        break;
    default:
        st = KILN_ERROR_DRIVER;
        break;
    }
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
