/* kiln_gl over cl_khr_gl_sharing (docs/gl.md). A kiln context made by
 * kiln_gl_context_create on a device that lists the extension is a
 * cl_context with the current GL context's properties (EGL's display, or
 * GLX's); in it, GL objects become cl_mem objects (clCreateFromGLBuffer,
 * clCreateFromGLTexture), acquired and released on the kiln queue's
 * cl_command_queue. Any failure (the driver refuses the GL context, an
 * ordinary kiln context) leaves the object to host copies. The ICD
 * loader's entry points are looked up at run time. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_internal.h"

#if KILN_GL_HAVE_OPENCL

#include <dlfcn.h>
#include <pthread.h>

#include <CL/cl.h>
#include <CL/cl_gl.h>

#include "kiln/opencl.h"

static struct kgl_cl_api {
    cl_context (*create_context)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                 void(CL_CALLBACK *)(const char *, const void *, size_t, void *),
                                 void *, cl_int *);
    cl_int (*release_context)(cl_context);
    cl_int (*device_info)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    cl_int (*context_info)(cl_context, cl_context_info, size_t, void *, size_t *);
    cl_mem (*from_buffer)(cl_context, cl_mem_flags, cl_GLuint, cl_int *);
    cl_mem (*from_texture)(cl_context, cl_mem_flags, cl_GLenum, cl_GLint, cl_GLuint, cl_int *);
    cl_int (*acquire)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                      cl_event *);
    cl_int (*release)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                      cl_event *);
    cl_int (*image_to_buffer)(cl_command_queue, cl_mem, cl_mem, const size_t *, const size_t *,
                              size_t, cl_uint, const cl_event *, cl_event *);
    cl_int (*buffer_to_image)(cl_command_queue, cl_mem, cl_mem, size_t, const size_t *,
                              const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_int (*release_mem)(cl_mem);
    cl_int (*release_event)(cl_event);
} cl;
static int cl_ok;
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;

static void cl_load(void) {
    size_t n = sizeof cl / sizeof(void *);
    static const char names[] = "clCreateContext clReleaseContext clGetDeviceInfo clGetContextInfo "
                                "clCreateFromGLBuffer clCreateFromGLTexture "
                                "clEnqueueAcquireGLObjects clEnqueueReleaseGLObjects "
                                "clEnqueueCopyImageToBuffer clEnqueueCopyBufferToImage "
                                "clReleaseMemObject clReleaseEvent";
    cl_ok = kgl_load_library("libOpenCL.so.1", names, (void **)&cl, n) == n;
}

static int has_gl_sharing(cl_device_id dev) {
    size_t n = 0;
    if (cl.device_info(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return 0;
    char *ext = malloc(n + 1);
    if (!ext)
        return 0;
    int has = cl.device_info(dev, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS &&
              strstr(ext, "cl_khr_gl_sharing") != NULL;
    free(ext);
    return has;
}

kiln_status kgl_opencl_context_create(kiln_device *device, const kgl_api *gl,
                                      kiln_context **context) {
    pthread_once(&cl_once, cl_load);
    cl_device_id dev;
    cl_platform_id platform;
    if (!cl_ok || kiln_opencl_device_native(device, &dev) != KILN_OK ||
        kiln_opencl_device_platform(device, &platform) != KILN_OK || !has_gl_sharing(dev))
        return kgl_error(KILN_ERROR_UNSUPPORTED,
                         "kiln_gl_context_create: the device's OpenCL driver does not list "
                         "cl_khr_gl_sharing: an ordinary context (host copies)");
    cl_context_properties props[7] = { CL_CONTEXT_PLATFORM, (cl_context_properties)platform };
    void *egl = gl->eglGetCurrentContext ? gl->eglGetCurrentContext() : NULL;
    if (egl) {
        props[2] = CL_GL_CONTEXT_KHR;
        props[3] = (cl_context_properties)egl;
        props[4] = CL_EGL_DISPLAY_KHR;
        props[5] = (cl_context_properties)gl->eglGetCurrentDisplay();
    } else if (gl->glXGetCurrentContext && gl->glXGetCurrentContext()) {
        props[2] = CL_GL_CONTEXT_KHR;
        props[3] = (cl_context_properties)gl->glXGetCurrentContext();
        props[4] = CL_GLX_DISPLAY_KHR;
        props[5] = (cl_context_properties)gl->glXGetCurrentDisplay();
    } else
        return kgl_error(KILN_ERROR_UNSUPPORTED,
                         "kiln_gl_context_create: neither an EGL nor a GLX context is current: "
                         "an ordinary context (host copies)");
    props[6] = 0;
    cl_int err = CL_SUCCESS;
    cl_context ctx = cl.create_context(props, 1, &dev, NULL, NULL, &err);
    if (!ctx || err != CL_SUCCESS)
        return kgl_error(KILN_ERROR_UNSUPPORTED,
                         "kiln_gl_context_create: clCreateContext with the current %s context "
                         "failed with %d: an ordinary context (host copies)",
                         egl ? "EGL" : "GLX", (int)err);
    kiln_status st = kiln_opencl_context_wrap(ctx, context);
    cl.release_context(ctx); /* the kiln context holds its own */
    return st;
}

/* 1 when the cl_context was made with a GL context. */
static int context_shares_gl(cl_context ctx) {
    size_t n = 0;
    if (cl.context_info(ctx, CL_CONTEXT_PROPERTIES, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return 0;
    cl_context_properties *p = malloc(n);
    if (!p)
        return 0;
    int shares = 0;
    if (cl.context_info(ctx, CL_CONTEXT_PROPERTIES, n, p, NULL) == CL_SUCCESS)
        for (size_t i = 0; i + 1 < n / sizeof *p && p[i]; i += 2)
            shares |= p[i] == CL_GL_CONTEXT_KHR;
    free(p);
    return shares;
}

static int opencl_register(kiln_gl_object *o) {
    pthread_once(&cl_once, cl_load);
    cl_context ctx;
    if (!cl_ok || kiln_opencl_context_native(o->context, &ctx) != KILN_OK) {
        snprintf(o->describe, sizeof o->describe,
                 "host copies: the OpenCL ICD loader has no GL sharing entry points");
        return 0;
    }
    cl_device_id dev;
    if (kiln_opencl_device_native(kiln_context_device(o->context, 0), &dev) == KILN_OK &&
        !has_gl_sharing(dev)) {
        snprintf(o->describe, sizeof o->describe,
                 "host copies: the device's OpenCL driver does not list cl_khr_gl_sharing");
        return 0;
    }
    if (!context_shares_gl(ctx)) {
        snprintf(o->describe, sizeof o->describe,
                 "host copies: the kiln context was not made with a GL context "
                 "(kiln_gl_context_create makes one where the driver has cl_khr_gl_sharing)");
        return 0;
    }
    cl_int err = CL_SUCCESS;
    cl_mem mem = o->is_texture
                     ? cl.from_texture(ctx, CL_MEM_READ_WRITE, o->target, o->level, o->name, &err)
                     : cl.from_buffer(ctx, CL_MEM_READ_WRITE, o->name, &err);
    if (!mem || err != CL_SUCCESS) {
        snprintf(o->describe, sizeof o->describe, "host copies: %s failed with %d",
                 o->is_texture ? "clCreateFromGLTexture" : "clCreateFromGLBuffer", (int)err);
        return 0;
    }
    if (o->is_texture)
        o->native_image = mem;
    else if (kiln_opencl_buffer_wrap(o->context, mem, &o->buffer) != KILN_OK) {
        cl.release_mem(mem);
        snprintf(o->describe, sizeof o->describe,
                 "host copies: kiln_opencl_buffer_wrap refused clCreateFromGLBuffer's cl_mem");
        return 0;
    }
    return kgl_shared(o, KILN_GL_SHARING_OPENCL, mem,
                      o->is_texture ? "cl_khr_gl_sharing (clCreateFromGLTexture, copied image "
                                      "<-> buffer on the device)"
                                    : "cl_khr_gl_sharing (clCreateFromGLBuffer, in place)");
}

static void opencl_unregister(kiln_gl_object *o) {
    if (o->native) {
        /* a buffer's cl_mem is held by its kiln buffer as well */
        cl.release_mem((cl_mem)o->native);
        o->native = o->native_image = NULL;
    }
}

/* The native wait list of kiln events (owned by the kiln events). */
static kiln_status native_wait(size_t n, kiln_event *const *wait, cl_event **out, const char *fn) {
    *out = NULL;
    if (n == 0)
        return KILN_OK;
    cl_event *ev = malloc(n * sizeof *ev);
    if (!ev)
        return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    for (size_t i = 0; i < n; i++) {
        kiln_status st = kiln_opencl_event_native(wait[i], &ev[i]);
        if (st != KILN_OK) {
            free(ev);
            return kgl_error_kiln(st, fn);
        }
    }
    *out = ev;
    return KILN_OK;
}

static kiln_status gl_step(kiln_queue *q, kiln_gl_object *o, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event, int acquire) {
    const char *fn = acquire ? "kiln_gl_acquire" : "kiln_gl_release";
    cl_command_queue cq;
    cl_mem buf, mem = (cl_mem)o->native;
    cl_event *ev = NULL, a = NULL, b = NULL;
    /* a barrier first: behind the queue's work on an out-of-order queue */
    kiln_status st = kiln_queue_barrier(q, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_opencl_queue_native(q, &cq);
    if (st == KILN_OK)
        st = kiln_opencl_buffer_native(o->buffer, &buf);
    if (st != KILN_OK)
        return kgl_error_kiln(st, fn);
    if ((st = native_wait(num_wait, wait, &ev, fn)) != KILN_OK)
        return st;
    size_t origin[3] = { 0, 0, 0 }, region[3] = { o->width, o->height, 1 };
    cl_int err;
    const char *what;
    if (acquire) {
        what = "clEnqueueAcquireGLObjects";
        err = cl.acquire(cq, 1, &mem, (cl_uint)num_wait, ev, &a);
        if (err == CL_SUCCESS && o->is_texture) {
            what = "clEnqueueCopyImageToBuffer";
            err = cl.image_to_buffer(cq, mem, buf, origin, region, 0, 1, &a, &b);
        }
    } else if (o->is_texture) {
        what = "clEnqueueCopyBufferToImage";
        err = cl.buffer_to_image(cq, buf, mem, 0, origin, region, (cl_uint)num_wait, ev, &a);
        if (err == CL_SUCCESS) {
            what = "clEnqueueReleaseGLObjects";
            err = cl.release(cq, 1, &mem, 1, &a, &b);
        }
    } else {
        what = "clEnqueueReleaseGLObjects";
        err = cl.release(cq, 1, &mem, (cl_uint)num_wait, ev, &a);
    }
    free(ev);
    cl_event last = b ? b : a;
    if (err == CL_SUCCESS)
        st = event ? kiln_opencl_event_wrap(o->context, last, event) : KILN_OK;
    if (a)
        cl.release_event(a);
    if (b)
        cl.release_event(b);
    if (err != CL_SUCCESS)
        return kgl_error(KILN_ERROR_DRIVER, "%s: GL object %u: %s failed with %d", fn, o->name,
                         what, (int)err);
    if (st != KILN_OK)
        return kgl_error_kiln(st, fn);
    /* commands enqueued after this on an out-of-order queue follow it */
    st = kiln_queue_barrier(q, event ? 1 : 0, event, NULL);
    return st == KILN_OK ? KILN_OK : kgl_error_kiln(st, fn);
}

const kgl_path kgl_opencl_path = { opencl_register, opencl_unregister, gl_step };

#else /* built without OpenCL's headers */

static int opencl_register(kiln_gl_object *o) {
    return kgl_unshared(o, "kiln_gl was built without OpenCL's headers");
}

const kgl_path kgl_opencl_path = { opencl_register, NULL, NULL };

kiln_status kgl_opencl_context_create(kiln_device *device, const kgl_api *gl,
                                      kiln_context **context) {
    return KILN_ERROR_UNSUPPORTED;
}

#endif
