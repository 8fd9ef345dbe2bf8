/* OpenGL sharing (docs/gl.md): kiln buffers over OpenGL buffers and
 * textures, acquired and released as commands with events.
 *
 * kiln_gl is an optional library over libkiln's public API (link
 * kiln::kiln_gl, -lkiln_gl); libkiln never depends on OpenGL. It loads
 * libGL/libEGL, and the CUDA and OpenCL drivers' GL entry points, at run
 * time: a program that links kiln_gl runs where none of them is installed
 * (kiln_gl_headless_create then says what is missing).
 *
 * Every kiln_gl call that takes a GL object name (kiln_gl_buffer_create,
 * kiln_gl_texture_create, kiln_gl_acquire, kiln_gl_finish) must be made on
 * a thread where the OpenGL context that owns the object is current.
 *
 * How the bytes travel, per object (kiln_gl_object_sharing):
 *  - KILN_GL_SHARING_CUDA: CUDA's graphics interop (cuGraphicsGLRegister
 *    Buffer/Image, mapped and unmapped on the queue's stream). The GL
 *    context must be one the CUDA driver can share with (NVIDIA's, through
 *    GLX or EGL) on the kiln device's GPU.
 *  - KILN_GL_SHARING_OPENCL: cl_khr_gl_sharing (clCreateFromGL*,
 *    clEnqueueAcquire/ReleaseGLObjects). Only in a kiln context made by
 *    kiln_gl_context_create on a device whose driver accepts the GL
 *    context.
 *  - KILN_GL_SHARING_HOST: everywhere else (PoCL, the host backend, Mesa's
 *    renderers, a driver that refused): kiln_gl_acquire reads the GL object
 *    into host memory on the calling thread and enqueues the write to the
 *    device; kiln_gl_release enqueues the read back; kiln_gl_finish puts
 *    the bytes into the GL object. $KILN_GL_SHARING=host forces this path.
 * The results are the same bytes on every path.
 *
 * A texture is seen by kernels as a kiln buffer of width * height texels,
 * row 0 first (GL's row 0, the bottom row when drawn unflipped), tightly
 * packed, of kiln_gl_format_bytes(internal format) bytes each. Textures of
 * 2-D target (GL_TEXTURE_2D) and internal formats GL_R8, GL_RG8, GL_RGBA8,
 * GL_R32F, GL_RG32F, GL_RGBA32F, GL_R32UI, GL_R32I are accepted. CUDA and
 * OpenCL map a texture as an array or image, so there acquire copies it
 * into the object's buffer and release copies back, device to device. */
#ifndef KILN_GL_H
#define KILN_GL_H

#include <kiln.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_gl_object kiln_gl_object;

typedef enum kiln_gl_sharing {
    KILN_GL_SHARING_HOST = 1,   /* copies through host memory */
    KILN_GL_SHARING_CUDA = 2,   /* CUDA graphics interop */
    KILN_GL_SHARING_OPENCL = 3, /* cl_khr_gl_sharing */
} kiln_gl_sharing;

/* Detail of this thread's last failing kiln_gl call ("" if none). */
KILN_API const char *kiln_gl_last_error_message(void);

/* A kiln context on device for sharing with the OpenGL context current on
 * this thread: on an OpenCL device whose driver lists cl_khr_gl_sharing, a
 * cl_context made with that GL context's properties (EGL or GLX), where
 * the driver accepts it; otherwise an ordinary kiln context
 * (kiln_context_create). Objects of an ordinary OpenCL context share by
 * host copies. Where it falls back to an ordinary context on an OpenCL
 * device, kiln_gl_last_error_message says why (the status is KILN_OK). */
KILN_API kiln_status kiln_gl_context_create(kiln_device *device, kiln_context **context);

/* A kiln view of GL buffer object gl_buffer (its whole GL_BUFFER_SIZE).
 * KILN_ERROR_INVALID_ARGUMENT if gl_buffer is not a buffer object of the
 * current GL context or has no storage; KILN_ERROR_NO_RUNTIME without a
 * current GL context. */
KILN_API kiln_status kiln_gl_buffer_create(kiln_context *context, unsigned gl_buffer,
                                           kiln_gl_object **object);
/* A kiln view of level `level` of GL texture gl_texture (target: only
 * GL_TEXTURE_2D, 0x0DE1). Its internal format must be one of those listed
 * above (KILN_ERROR_UNSUPPORTED names it otherwise). */
KILN_API kiln_status kiln_gl_texture_create(kiln_context *context, unsigned target,
                                            unsigned gl_texture, int level,
                                            kiln_gl_object **object);
/* Releases the object (its GL object stays the caller's), after waiting
 * for its last acquire's and release's commands to end. An object still
 * acquired is given back without a release (its contents in GL are then
 * undefined). */
KILN_API void kiln_gl_object_release(kiln_gl_object *object);

KILN_API kiln_gl_sharing kiln_gl_object_sharing(const kiln_gl_object *object);
/* Why the object shares the way it does: "CUDA graphics interop",
 * "host copies: cuGraphicsGLRegisterBuffer failed with
 * CUDA_ERROR_INVALID_GRAPHICS_CONTEXT" ... (never NULL). */
KILN_API const char *kiln_gl_object_describe(const kiln_gl_object *object);
/* Bytes the kiln buffer has (a texture: width * height * texel bytes). */
KILN_API size_t kiln_gl_object_size(const kiln_gl_object *object);
/* A texture's width and height (a buffer's: its size and 1). */
KILN_API kiln_status kiln_gl_object_get_extent(const kiln_gl_object *object, size_t *width,
                                               size_t *height);
/* Bytes of one texel of a GL internal format kiln_gl accepts, else 0. */
KILN_API size_t kiln_gl_format_bytes(unsigned internal_format);

/* Makes the objects the device's, after GL's commands on them so far and
 * after the wait list: *event (may be NULL) completes when their bytes are
 * on the device. GL must not touch them until kiln_gl_finish after their
 * release. An object acquired already is KILN_ERROR_WRONG_STATE (nothing
 * is acquired then). */
KILN_API kiln_status kiln_gl_acquire(kiln_queue *queue, size_t num_objects,
                                     kiln_gl_object *const *objects, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event);
/* The kiln buffer of an acquired object (borrowed, valid until its
 * release; on CUDA a buffer is mapped anew at every acquire).
 * KILN_ERROR_WRONG_STATE when the object is not acquired. */
KILN_API kiln_status kiln_gl_object_get_buffer(kiln_gl_object *object, kiln_buffer **buffer);
/* Gives the objects back to GL after the wait list (on an in-order queue,
 * after the queue's commands so far): *event completes when the device is
 * done with them. Not acquired: KILN_ERROR_WRONG_STATE. */
KILN_API kiln_status kiln_gl_release(kiln_queue *queue, size_t num_objects,
                                     kiln_gl_object *const *objects, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event);
/* Blocks until the objects' releases have ended and (host copies) puts
 * their bytes into the GL objects: call it, with the GL context current,
 * before GL uses objects that kiln released. Objects not released are
 * left alone. Returns the failure of a release's commands, if any. */
KILN_API kiln_status kiln_gl_finish(size_t num_objects, kiln_gl_object *const *objects);

/* A headless OpenGL context made current on this thread, for programs and
 * tests without a window: EGL with the surfaceless platform (Mesa), else
 * EGL on the first EGL device (NVIDIA), else EGL's default display; a
 * desktop GL context (compatibility profile where EGL offers one).
 * KILN_ERROR_NO_RUNTIME with the reason when libEGL/libGL cannot be loaded
 * or no display initialises. */
typedef struct kiln_gl_headless kiln_gl_headless;
KILN_API kiln_status kiln_gl_headless_create(kiln_gl_headless **headless);
/* "EGL 1.5 (Mesa Project, surfaceless); GL 4.5 (Compatibility Profile)
 * Mesa 22.3.6; llvmpipe (LLVM 15.0.6, 256 bits)" */
KILN_API const char *kiln_gl_headless_describe(const kiln_gl_headless *headless);
/* Makes no context current on this thread and destroys the context. The
 * EGL display stays initialised (EGL gives the process one per platform:
 * terminating it would end other contexts on it). */
KILN_API void kiln_gl_headless_destroy(kiln_gl_headless *headless);

#ifdef __cplusplus
}
#endif

#endif
