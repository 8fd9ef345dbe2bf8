/* The status codes every kiln call returns.
 *
 * One X-macro list generates the enum, kiln_status_name() and
 * kiln_status_string(). Add new codes at the end of the list only: the
 * numbers are part of the ABI. */
#ifndef KILN_STATUS_H
#define KILN_STATUS_H

/* X(NAME, number, "message") */
#define KILN_STATUS_LIST(X)                                                                    \
    X(OK, 0, "success")                                                                        \
    X(ERROR_INVALID_ARGUMENT, -1, "an argument is invalid")                                    \
    X(ERROR_NULL_HANDLE, -2, "a required handle or pointer is NULL")                           \
    X(ERROR_OUT_OF_HOST_MEMORY, -3, "out of host memory")                                      \
    X(ERROR_OUT_OF_DEVICE_MEMORY, -4, "out of device memory")                                  \
    X(ERROR_NO_RUNTIME, -5,                                                                    \
      "no GPU/CPU compute runtime could be loaded (OpenCL ICD loader, "                        \
      "libcuda)")                                                                              \
    X(ERROR_NO_DEVICE, -6, "no device matches the request")                                    \
    X(ERROR_BUILD, -7, "the program failed to build; kiln_last_build_log() has the log")       \
    X(ERROR_KERNEL_NOT_FOUND, -8, "no kernel of that name in the program")                     \
    X(ERROR_KERNEL_ARGS, -9, "the kernel arguments do not match the kernel's parameters")      \
    X(ERROR_OUT_OF_RANGE, -10, "an offset or size lies outside its object")                    \
    X(ERROR_DRIVER, -11, "the driver reported an error")                                       \
    X(ERROR_UNSUPPORTED, -12, "the device or backend does not support this")                   \
    X(ERROR_IO, -13, "a file could not be read or written")                                    \
    X(ERROR_EVENT_FAILED, -14, "a command this depends on ended with an error")                \
    X(ERROR_WRONG_STATE, -15, "the object is not in a state that allows this")                 \
    X(ERROR_MISMATCH, -16, "objects do not belong together (context, device, shape or dtype)") \
    X(ERROR_INTERNAL, -17, "internal error in kiln (please report it)")                        \
    X(ERROR_UNTRUSTED, -18,                                                                    \
      "a file or directory is not trusted (a symbolic link, or writable by "                   \
      "another user)")                                                                         \
    X(ERROR_TIMEOUT, -19, "the wait timed out; the work it waited for goes on")                \
    X(ERROR_CANCELED, -20, "the step was canceled before it ran")

typedef enum kiln_status {
#define KILN__STATUS_ENUM(name, num, msg) KILN_##name = num,
    KILN_STATUS_LIST(KILN__STATUS_ENUM)
#undef KILN__STATUS_ENUM
} kiln_status;

#endif
