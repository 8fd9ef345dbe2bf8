/* kiln_gl over CUDA's graphics interop (docs/gl.md): the GL object is
 * registered once (cuGraphicsGLRegisterBuffer / _Image, with the GL
 * context current), and mapped / unmapped on the queue's stream at every
 * acquire / release. libcuda's entry points are looked up at run time. A
 * buffer's mapped pointer becomes a kiln buffer (kiln_cuda_buffer_wrap);
 * a texture's mapped array is copied into the object's buffer and back
 * (cuMemcpy2DAsync, device to device). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gl_internal.h"

#if KILN_GL_HAVE_CUDA

#include <dlfcn.h>
#include <pthread.h>

#include <cuda.h>

#include "kiln/cuda.h"

/* cudaGL.h needs GL's headers; its two entry points used here: */
typedef CUresult (*pfn_register_buffer)(CUgraphicsResource *, unsigned int, unsigned int);
typedef CUresult (*pfn_register_image)(CUgraphicsResource *, unsigned int, unsigned int,
                                       unsigned int);

static struct kgl_cu_api {
    pfn_register_buffer register_buffer;
    pfn_register_image register_image;
    CUresult (*unregister)(CUgraphicsResource);
    CUresult (*map)(unsigned int, CUgraphicsResource *, CUstream);
    CUresult (*unmap)(unsigned int, CUgraphicsResource *, CUstream);
    CUresult (*mapped_pointer)(CUdeviceptr *, size_t *, CUgraphicsResource);
    CUresult (*mapped_array)(CUarray *, CUgraphicsResource, unsigned int, unsigned int);
    CUresult (*memcpy2d_async)(const CUDA_MEMCPY2D *, CUstream);
    CUresult (*push)(CUcontext);
    CUresult (*pop)(CUcontext *);
    CUresult (*error_name)(CUresult, const char **);
} cu;
static int cu_ok;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_load(void) {
    static const char names[] = "cuGraphicsGLRegisterBuffer cuGraphicsGLRegisterImage "
                                "cuGraphicsUnregisterResource cuGraphicsMapResources "
                                "cuGraphicsUnmapResources cuGraphicsResourceGetMappedPointer_v2 "
                                "cuGraphicsSubResourceGetMappedArray cuMemcpy2DAsync_v2 "
                                "cuCtxPushCurrent_v2 cuCtxPopCurrent_v2 cuGetErrorName";
    size_t n = sizeof cu / sizeof(void *);
    cu_ok = kgl_load_library("libcuda.so.1", names, (void **)&cu, n) == n;
}

static const char *cu_name(CUresult r) {
    const char *s = NULL;
    if (cu.error_name(r, &s) != CUDA_SUCCESS || !s)
        s = "CUDA_ERROR_UNKNOWN";
    return s;
}

static int cuda_register(kiln_gl_object *o) {
    pthread_once(&cu_once, cu_load);
    if (!cu_ok) {
        snprintf(o->describe, sizeof o->describe,
                 "host copies: libcuda.so.1 has no graphics interop entry points");
        return 0;
    }
    CUcontext ctx;
    if (kiln_cuda_context_native(o->context, &ctx) != KILN_OK || cu.push(ctx) != CUDA_SUCCESS) {
        snprintf(o->describe, sizeof o->describe, "host copies: no CUDA context to register in");
        return 0;
    }
    CUgraphicsResource res = NULL;
    CUresult r = o->is_texture
                     ? cu.register_image(&res, o->name, o->target, CU_GRAPHICS_REGISTER_FLAGS_NONE)
                     : cu.register_buffer(&res, o->name, CU_GRAPHICS_REGISTER_FLAGS_NONE);
    CUcontext dummy;
    cu.pop(&dummy);
    if (r != CUDA_SUCCESS) {
        snprintf(o->describe, sizeof o->describe, "host copies: %s failed with %s (%d)",
                 o->is_texture ? "cuGraphicsGLRegisterImage" : "cuGraphicsGLRegisterBuffer",
                 cu_name(r), (int)r);
        return 0;
    }
    return kgl_shared(o, KILN_GL_SHARING_CUDA, res,
                      o->is_texture ? "CUDA graphics interop (cuGraphicsGLRegisterImage, "
                                      "copied array <-> buffer on the device)"
                                    : "CUDA graphics interop (cuGraphicsGLRegisterBuffer, "
                                      "mapped in place)");
}

static void cuda_unregister(kiln_gl_object *o) {
    if (!o->native)
        return;
    CUcontext ctx, dummy;
    if (kiln_cuda_context_native(o->context, &ctx) != KILN_OK || cu.push(ctx) != CUDA_SUCCESS)
        return;
    CUgraphicsResource res = o->native;
    if (o->state == KGL_ACQUIRED)
        cu.unmap(1, &res, 0);
    cu.unregister(res);
    cu.pop(&dummy);
    o->native = NULL;
}

/* The array <-> buffer copy of a texture, on stream. */
static CUresult copy_texture(kiln_gl_object *o, CUstream stream, int to_buffer) {
    CUarray array;
    CUresult r = cu.mapped_array(&array, (CUgraphicsResource)o->native, 0, (unsigned)o->level);
    if (r != CUDA_SUCCESS)
        return r;
    CUdeviceptr ptr;
    if (kiln_cuda_buffer_native(o->buffer, &ptr) != KILN_OK)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    size_t row = o->width * o->fmt.bytes;
    if (to_buffer) {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = array;
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c.dstDevice = ptr;
        c.dstPitch = row;
    } else {
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c.srcDevice = ptr;
        c.srcPitch = row;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = array;
    }
    c.WidthInBytes = row;
    c.Height = o->height;
    return cu.memcpy2d_async(&c, stream);
}

/* Runs the native step between two barriers of q (the kiln order rule
 * for work put on a kiln queue's stream, include/kiln/cuda.h). */
static kiln_status on_stream(kiln_queue *q, kiln_gl_object *o, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event, int acquire) {
    const char *fn = acquire ? "kiln_gl_acquire" : "kiln_gl_release";
    CUstream stream;
    CUcontext ctx, dummy;
    kiln_status st = kiln_queue_barrier(q, num_wait, wait, NULL);
    if (st != KILN_OK || (st = kiln_cuda_queue_native(q, &stream)) != KILN_OK ||
        (st = kiln_cuda_context_native(o->context, &ctx)) != KILN_OK)
        return kgl_error_kiln(st, fn);
    if (cu.push(ctx) != CUDA_SUCCESS)
        return kgl_error(KILN_ERROR_DRIVER, "%s: cuCtxPushCurrent failed", fn);
    CUgraphicsResource res = o->native;
    CUresult r = CUDA_SUCCESS;
    const char *what = "";
    if (acquire) {
        what = "cuGraphicsMapResources";
        r = cu.map(1, &res, stream);
        if (r == CUDA_SUCCESS && o->is_texture) {
            what = "cuMemcpy2DAsync (array to buffer)";
            r = copy_texture(o, stream, 1);
        } else if (r == CUDA_SUCCESS) {
            CUdeviceptr ptr;
            size_t size;
            what = "cuGraphicsResourceGetMappedPointer";
            r = cu.mapped_pointer(&ptr, &size, res);
            if (r == CUDA_SUCCESS &&
                (st = kiln_cuda_buffer_wrap(o->context, ptr, o->size < size ? o->size : size, 0,
                                            &o->buffer)) != KILN_OK) {
                cu.unmap(1, &res, stream);
                cu.pop(&dummy);
                return kgl_error_kiln(st, fn);
            }
        }
        if (r != CUDA_SUCCESS)
            cu.unmap(1, &res, stream);
    } else {
        if (o->is_texture) {
            what = "cuMemcpy2DAsync (buffer to array)";
            r = copy_texture(o, stream, 0);
        } else {
            kiln_buffer_release(o->buffer); /* kiln holds it for queued work */
            o->buffer = NULL;
        }
        CUresult u = cu.unmap(1, &res, stream);
        if (r == CUDA_SUCCESS) {
            what = "cuGraphicsUnmapResources";
            r = u;
        }
    }
    cu.pop(&dummy);
    if (r != CUDA_SUCCESS)
        return kgl_error(KILN_ERROR_DRIVER, "%s: GL object %u: %s failed with %s (%d)", fn, o->name,
                         what, cu_name(r), (int)r);
    if ((st = kiln_queue_barrier(q, 0, NULL, event)) != KILN_OK)
        return kgl_error_kiln(st, fn);
    return KILN_OK;
}

const kgl_path kgl_cuda_path = { cuda_register, cuda_unregister, on_stream };

#else /* built without CUDA's headers */

static int cuda_register(kiln_gl_object *o) {
    return kgl_unshared(o, "kiln_gl was built without CUDA's headers");
}

const kgl_path kgl_cuda_path = { cuda_register, NULL, NULL };

#endif
