/* Programs (build from source, binaries for the disk cache), kernels and the
 * launch path. The launch path is the hot one: no allocation, one mutex,
 * and clSetKernelArg only for arguments that changed since the last launch
 * of the same kernel. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/opencl/ocl.h"
#include "base/bytes.h"
#include "base/lock.h"
#include "base/fault.h"

/* ------------------------------------------------------------ programs */

/* The build log of prog for dev, malloc'd; NULL when empty or blank. */
static char *build_log(cl_program prog, cl_device_id dev) {
    size_t n = 0;
    char *log;
    if (kiln__cl.clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) !=
            CL_SUCCESS ||
        n == 0)
        return NULL;
    log = kiln__malloc(n + 1);
    if (!log)
        return NULL;
    if (kiln__cl.clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) !=
        CL_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    for (const char *p = log; *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
            return log;
    free(log);
    return NULL;
}

/* The options handed to the driver: the user's, plus
 * -cl-fp32-correctly-rounded-divide-sqrt where the device can round float
 * division and sqrt correctly. OpenCL C lets x / y be 2.5 ulp off by
 * default (NVIDIA's compiler is); CUDA rounds them correctly by default
 * (NVRTC's -prec-div/-prec-sqrt), and NumPy's results are correctly
 * rounded, so one source gives the same float32 bits on every backend.
 * -cl-fast-relaxed-math or -cl-unsafe-math-optimizations keep the fast
 * forms. Malloc'd, or NULL (out of memory). */
static char *effective_options(cl_device_id dev, const char *options) {
    static const char flag[] = " -cl-fp32-correctly-rounded-divide-sqrt";
    const char *o = options ? options : "";
    cl_device_fp_config cfg = 0;
    int add = kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof cfg, &cfg, NULL) ==
                  CL_SUCCESS &&
              (cfg & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) && !strstr(o, "-cl-fast-relaxed-math") &&
              !strstr(o, "-cl-unsafe-math-optimizations") && !strstr(o, flag + 1);
    size_t n = strlen(o) + (add ? sizeof flag : 1);
    char *r = kiln__malloc(n);
    if (r)
        snprintf(r, n, "%s%s", o, add ? flag : "");
    return r;
}

/* Builds prog for dev; on failure releases prog and returns the status
 * with *log set where the compiler said something. */
static kiln_status build_for(cl_program prog, cl_device_id dev, const char *options, char **log,
                             const char *what) {
    char *eff = effective_options(dev, options);
    if (!eff) {
        kiln__cl.clReleaseProgram(prog);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of host memory", what);
    }
    cl_int err = kiln__cl.clBuildProgram(prog, 1, &dev, eff, NULL, NULL);
    free(eff);
    char *text = build_log(prog, dev);
    if (err == CL_SUCCESS) {
        if (log)
            *log = text;
        else
            free(text);
        return KILN_OK;
    }
    kiln_status st;
    if (err == CL_INVALID_BUILD_OPTIONS) {
        st = kiln__ocl_fail_as(err, KILN_ERROR_BUILD, what,
                               "the compiler refused the build options "
                               "\"%s\"",
                               options ? options : "");
        if (!text) {
            const char *fmt = "invalid build options: %s\n";
            size_t n = strlen(fmt) + strlen(options ? options : "") + 1;
            text = kiln__malloc(n);
            if (text)
                snprintf(text, n, fmt, options ? options : "");
        }
    } else if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BINARY) {
        st = kiln__error_set(KILN_ERROR_BUILD, err, "%s: %s (%d)", what, kiln__ocl_error_name(err),
                             (int)err);
    } else {
        st = kiln__ocl_fail(err, what);
    }
    if (log)
        *log = text;
    else
        free(text);
    kiln__cl.clReleaseProgram(prog);
    return st;
}

/* PoCL races with itself: processes building one program into a shared
 * POCL_CACHE_DIR (its default, one per user) each rewrite its program.bc,
 * and the one whose remove of the old file finds it already gone fails
 * the build with CL_BUILD_PROGRAM_FAILURE and no compiler message. A
 * failure like that says nothing about the source, so it is built again
 * after a short pause (by then the other writer is done); a real compile
 * error always carries a diagnostic. */
enum { SPURIOUS_BUILD_RETRIES = 4 };

static int spurious_build_failure(kiln_status st, const char *log) {
    return st == KILN_ERROR_BUILD && kiln_last_error_native() == CL_BUILD_PROGRAM_FAILURE &&
           (!log || !strstr(log, "error"));
}

static void pause_before_retry(int attempt) {
    struct timespec t = { 0, (long)(attempt + 1) * 20 * 1000000L };
    nanosleep(&t, NULL);
}

static kiln_status build_once(cl_context context, cl_device_id dev, const char *source,
                              const char *options, cl_program *program, char **log) {
    cl_int err = CL_SUCCESS;
    cl_program prog = kiln__cl.clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (!prog || err != CL_SUCCESS)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_VALUE,
                              "clCreateProgramWithSource");
    kiln_status st = build_for(prog, dev, options, log, "clBuildProgram");
    if (st == KILN_OK)
        *program = prog;
    return st;
}

kiln_status kiln__ocl_program_build(void *context, const kiln__bdevice *device, const char *source,
                                    const char *options, void **program, char **log) {
    cl_program prog = NULL;
    char *text = NULL;
    kiln_status st;
    *program = NULL;
    for (int attempt = 0;; attempt++) {
        st = build_once((cl_context)context, (cl_device_id)device->handle, source, options, &prog,
                        &text);
        if (attempt == SPURIOUS_BUILD_RETRIES || !spurious_build_failure(st, text))
            break;
        free(text);
        text = NULL;
        pause_before_retry(attempt);
    }
    if (log)
        *log = text;
    else
        free(text);
    *program = prog;
    return st;
}

/* Binaries handed to the cache are wrapped in a small header with a
 * checksum, so that a damaged one is refused here and never reaches the
 * driver (some drivers crash on malformed binaries). */
/* kilnOCL2: binaries built with effective_options (kilnOCL1 ones, built
 * without correctly rounded division, are refused and rebuilt) */
#define KILN__OCL_BIN_MAGIC "kilnOCL2"
enum { KILN__OCL_BIN_HEADER = 24 }; /* magic[8], size u64, fnv1a-64 u64 */

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

kiln_status kiln__ocl_program_binary(void *program, void **binary, size_t *size) {
    cl_program prog = (cl_program)program;
    cl_uint ndev = 0;
    size_t *sizes = NULL;
    unsigned char **bins = NULL;
    unsigned char *out = NULL;
    size_t pick = 0;
    cl_int err;
    kiln_status st = KILN_OK;

    *binary = NULL;
    *size = 0;
    err = kiln__cl.clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL);
    if (err != CL_SUCCESS || ndev == 0)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_PROGRAM,
                              "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)");
    sizes = kiln__calloc(ndev, sizeof *sizes);
    bins = kiln__calloc(ndev, sizeof *bins);
    if (!sizes || !bins) {
        st =
            kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "program binary: out of host memory");
        goto done;
    }
    err =
        kiln__cl.clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, ndev * sizeof *sizes, sizes, NULL);
    if (err != CL_SUCCESS) {
        st = kiln__ocl_fail(err, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
        goto done;
    }
    /* The program was built for one device of the context: its binary is
     * the one with a size. */
    while (pick < ndev && sizes[pick] == 0)
        pick++;
    if (pick == ndev) {
        st = kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                             "the OpenCL driver gives no binary for this "
                             "program");
        goto done;
    }
    out = kiln__malloc(KILN__OCL_BIN_HEADER + sizes[pick]);
    if (!out) {
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                             "program binary: out of host memory (%zu bytes)", sizes[pick]);
        goto done;
    }
    bins[pick] = out + KILN__OCL_BIN_HEADER;
    err = kiln__cl.clGetProgramInfo(prog, CL_PROGRAM_BINARIES, ndev * sizeof *bins, bins, NULL);
    if (err != CL_SUCCESS) {
        st = kiln__ocl_fail(err, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
        free(out);
        out = NULL;
        goto done;
    }
    /* A PoCL binary serialised while another process rewrote PoCL's cache
     * files would crash every later load: it is never handed out. */
    const unsigned char *native = out + KILN__OCL_BIN_HEADER;
    if (kiln__ocl_is_pocl_binary(native, sizes[pick])) {
        const char *bad = kiln__ocl_pocl_binary_check(native, sizes[pick]);
        if (bad) {
            st = kiln__error_set(KILN_ERROR_IO, 0,
                                 "the PoCL binary of this program is incomplete (%s): another "
                                 "process was writing PoCL's cache; it is not cached",
                                 bad);
            free(out);
            out = NULL;
            goto done;
        }
    }
    memcpy(out, KILN__OCL_BIN_MAGIC, 8);
    kiln__put_u64(out + 8, sizes[pick]);
    kiln__put_u64(out + 16, fnv1a64(out + KILN__OCL_BIN_HEADER, sizes[pick]));
    *binary = out;
    *size = KILN__OCL_BIN_HEADER + sizes[pick];
done:
    free(sizes);
    free(bins);
    return st;
}

kiln_status kiln__ocl_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                   size_t size, const char *options, void **program) {
    const unsigned char *b = binary;
    cl_device_id dev = (cl_device_id)device->handle;
    cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
    cl_program prog;
    size_t n;
    char *log = NULL;
    kiln_status st;

    *program = NULL;
    if (!b || size < KILN__OCL_BIN_HEADER || memcmp(b, KILN__OCL_BIN_MAGIC, 8) != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "not a kiln OpenCL program binary");
    n = (size_t)kiln__get_u64(b + 8);
    if (n != size - KILN__OCL_BIN_HEADER)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "program binary is truncated (%zu of %zu "
                               "bytes)",
                               size - KILN__OCL_BIN_HEADER, n);
    if (kiln__get_u64(b + 16) != fnv1a64(b + KILN__OCL_BIN_HEADER, n))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "program binary is corrupted (checksum "
                               "mismatch)");
    const unsigned char *native = b + KILN__OCL_BIN_HEADER;
    if (kiln__ocl_is_pocl_binary(native, n)) {
        const char *bad = kiln__ocl_pocl_binary_check(native, n);
        if (bad)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "the cached PoCL binary is incomplete (%s): refused, the "
                                   "program is rebuilt",
                                   bad);
    }
    prog = kiln__cl.clCreateProgramWithBinary((cl_context)context, 1, &dev, &n, &native,
                                              &bin_status, &err);
    if (!prog || err != CL_SUCCESS || bin_status != CL_SUCCESS) {
        if (prog)
            kiln__cl.clReleaseProgram(prog);
        if (err == CL_SUCCESS)
            err = bin_status != CL_SUCCESS ? bin_status : CL_INVALID_BINARY;
        return kiln__ocl_fail(err, "clCreateProgramWithBinary");
    }
    st = build_for(prog, dev, options, &log, "clBuildProgram (binary)");
    free(log);
    if (st == KILN_OK)
        *program = prog;
    return st;
}

void kiln__ocl_program_release(void *program) {
    if (program)
        kiln__cl.clReleaseProgram((cl_program)program);
}

/* ------------------------------------------------------------- kernels */

enum { KILN__OCL_ARG_INLINE = 16 };

/* What was last passed to clSetKernelArg for one argument index. */
typedef struct ocl_arg_memo {
    int valid;
    kiln_arg_kind kind;
    size_t size;
    void *mem;
    unsigned char bytes[KILN__OCL_ARG_INLINE];
} ocl_arg_memo;

typedef struct ocl_kernel {
    cl_kernel k;
    kiln__lock mu;  /* clSetKernelArg + enqueue are one step */
    unsigned epoch; /* kiln__ocl_mem_epoch when memo's buffers were set */
    cl_uint num_args;
    ocl_arg_memo *memo; /* num_args entries */
} ocl_kernel;

kiln_status kiln__ocl_kernel_create(void *program, const char *name, void **kernel) {
    cl_int err = CL_SUCCESS;
    cl_kernel k;
    ocl_kernel *w;
    cl_uint nargs = 0;

    *kernel = NULL;
    k = kiln__cl.clCreateKernel((cl_program)program, name, &err);
    if (!k || err != CL_SUCCESS) {
        if (err == CL_INVALID_KERNEL_NAME)
            return kiln__error_set(KILN_ERROR_KERNEL_NOT_FOUND, err,
                                   "clCreateKernel: %s (%d): no kernel "
                                   "named \"%s\"",
                                   kiln__ocl_error_name(err), (int)err, name);
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_KERNEL, "clCreateKernel");
    }
    err = kiln__cl.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    if (err != CL_SUCCESS) {
        kiln__cl.clReleaseKernel(k);
        return kiln__ocl_fail(err, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
    }
    w = kiln__calloc(1, sizeof *w);
    if (w && nargs)
        w->memo = kiln__calloc(nargs, sizeof *w->memo);
    if (!w || (nargs && !w->memo)) {
        free(w);
        kiln__cl.clReleaseKernel(k);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kernel: out of host memory");
    }
    w->k = k;
    w->num_args = nargs;
    w->epoch = atomic_load_explicit(&kiln__ocl_mem_epoch, memory_order_acquire);
    kiln__lock_init(&w->mu);
    *kernel = w;
    return KILN_OK;
}

void kiln__ocl_kernel_release(void *kernel) {
    ocl_kernel *w = kernel;
    if (!w)
        return;
    kiln__cl.clReleaseKernel(w->k);
    kiln__lock_destroy(&w->mu);
    free(w->memo);
    free(w);
}

/* Sets argument i unless the kernel already holds the same value. Called
 * with w->mu held. */
static cl_int set_arg(ocl_kernel *w, cl_uint i, const kiln__barg *a) {
    assert(kiln__lock_held(&w->mu) && "a kernel's arguments are set under its lock");
    ocl_arg_memo *m = i < w->num_args ? &w->memo[i] : NULL;
    cl_int err;

    switch (a->kind) {
    case KILN_ARG_BUFFER:
        if (m && m->valid && m->kind == KILN_ARG_BUFFER && m->mem == a->mem)
            return CL_SUCCESS;
        err = kiln__cl.clSetKernelArg(w->k, i, sizeof(cl_mem), &a->mem);
        if (m) {
            m->valid = err == CL_SUCCESS;
            m->kind = KILN_ARG_BUFFER;
            m->mem = a->mem;
        }
        return err;
    case KILN_ARG_LOCAL:
        if (m && m->valid && m->kind == KILN_ARG_LOCAL && m->size == a->size)
            return CL_SUCCESS;
        err = kiln__cl.clSetKernelArg(w->k, i, a->size, NULL);
        if (m) {
            m->valid = err == CL_SUCCESS;
            m->kind = KILN_ARG_LOCAL;
            m->size = a->size;
        }
        return err;
    default:
        if (m && m->valid && m->kind == KILN_ARG_SCALAR && m->size == a->size &&
            a->size <= KILN__OCL_ARG_INLINE && memcmp(m->bytes, a->bytes, a->size) == 0)
            return CL_SUCCESS;
        err = kiln__cl.clSetKernelArg(w->k, i, a->size, a->bytes);
        if (m) {
            m->valid = err == CL_SUCCESS && a->size <= KILN__OCL_ARG_INLINE;
            m->kind = KILN_ARG_SCALAR;
            m->size = a->size;
            assert((!m->valid || a->size <= sizeof m->bytes) && "a remembered argument fits");
            if (m->valid)
                memcpy(m->bytes, a->bytes, a->size);
        }
        return err;
    }
}

static kiln_status launch_error(cl_int err, unsigned dims, const size_t *global,
                                const size_t *local) {
    char g[96], l[96];
    size_t gl = 0, ll = 0;
    g[0] = l[0] = '\0';
    for (unsigned d = 0; d < dims && d < 3; d++) {
        gl += (size_t)snprintf(g + gl, sizeof g - gl, d ? "x%zu" : "%zu", global[d]);
        if (local)
            ll += (size_t)snprintf(l + ll, sizeof l - ll, d ? "x%zu" : "%zu", local[d]);
    }
    switch (err) {
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_INVALID_WORK_DIMENSION:
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, err,
                               "clEnqueueNDRangeKernel: %s (%d): global %s, local %s (the device "
                               "may need global sizes that are multiples of the local ones and "
                               "local sizes within its work-group limits)",
                               kiln__ocl_error_name(err), (int)err, g, local ? l : "NULL");
    case CL_INVALID_KERNEL_ARGS:
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, err,
                               "clEnqueueNDRangeKernel: %s (%d): some "
                               "kernel arguments were not set",
                               kiln__ocl_error_name(err), (int)err);
    default:
        return kiln__ocl_fail(err, "clEnqueueNDRangeKernel");
    }
}

/* Under w->mu: sets the arguments (skipping those the kernel holds
 * already). On failure unlocks and returns the status. */
static kiln_status set_args_locked(ocl_kernel *w, size_t num_args, const kiln__barg *args) {
    cl_int err;
    assert(kiln__lock_held(&w->mu) && "a launch's arguments and enqueue are one step");
    unsigned epoch = atomic_load_explicit(&kiln__ocl_mem_epoch, memory_order_acquire);
    if (epoch != w->epoch) {
        /* Some cl_mem was released since: remembered buffers may be stale. */
        for (cl_uint i = 0; i < w->num_args; i++)
            if (w->memo[i].kind == KILN_ARG_BUFFER)
                w->memo[i].valid = 0;
        w->epoch = epoch;
    }
    for (size_t i = 0; i < num_args; i++) {
        err = set_arg(w, (cl_uint)i, &args[i]);
        if (err != CL_SUCCESS) {
            kiln__lock_release(&w->mu);
            return err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES
                       ? kiln__ocl_fail(err, "clSetKernelArg")
                       : kiln__error_set(KILN_ERROR_KERNEL_ARGS, err,
                                         "clSetKernelArg (argument %zu): %s (%d)", i,
                                         kiln__ocl_error_name(err), (int)err);
        }
    }
    return KILN_OK;
}

kiln_status kiln__ocl_kernel_with_args(void *kernel, size_t num_args, const kiln__barg *args,
                                       cl_int (*fn)(cl_kernel k, void *user), void *user,
                                       cl_int *err) {
    ocl_kernel *w = kernel;
    kiln__lock_acquire(&w->mu);
    kiln_status st = set_args_locked(w, num_args, args);
    if (st != KILN_OK)
        return st;
    *err = fn(w->k, user);
    kiln__lock_release(&w->mu);
    return KILN_OK;
}

kiln_status kiln__ocl_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                    const size_t *local, size_t num_args, const kiln__barg *args,
                                    size_t num_wait, void *const *wait, void **out_event) {
    ocl_kernel *w = kernel;
    cl_int err = CL_SUCCESS;

    if (out_event)
        *out_event = NULL;
    for (unsigned d = 0; d < dims; d++) {
        if (global[d] == 0) {
            /* Nothing to run; the event still completes after the wait
             * list, as the caller expects. */
            if (!out_event)
                return KILN_OK;
            return kiln__ocl_queue_marker(queue, 0, num_wait, wait, out_event);
        }
    }
    kiln__lock_acquire(&w->mu);
    kiln_status st = set_args_locked(w, num_args, args);
    if (st != KILN_OK)
        return st;
    err = kiln__cl.clEnqueueNDRangeKernel((cl_command_queue)queue, w->k, dims, NULL, global, local,
                                          KILN__OCL_WAIT(num_wait, wait), (cl_event *)out_event);
    kiln__lock_release(&w->mu);
    if (err != CL_SUCCESS)
        return launch_error(err, dims, global, local);
    return KILN_OK;
}
