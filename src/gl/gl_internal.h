/* kiln_gl's internals (docs/gl.md): the GL entry points loaded at run time,
 * the object, and the two native paths (gl_cuda.c, gl_opencl.c). */
#ifndef KILN_GL_INTERNAL_H
#define KILN_GL_INTERNAL_H

#include <stddef.h>

#include "kiln/gl.h"

/* The few GL types and enums used (GL/gl.h is not needed to build). */
typedef unsigned int kgl_enum;
typedef unsigned int kgl_uint;
typedef int kgl_int;
typedef long kgl_intptr; /* GLintptr, GLsizeiptr: ptrdiff_t on LP64 */

#define KGL_NO_ERROR 0
#define KGL_TEXTURE_2D 0x0DE1
#define KGL_TEXTURE_WIDTH 0x1000
#define KGL_TEXTURE_HEIGHT 0x1001
#define KGL_TEXTURE_INTERNAL_FORMAT 0x1003
#define KGL_TEXTURE_BINDING_2D 0x8069
#define KGL_COPY_READ_BUFFER 0x8F36
#define KGL_COPY_READ_BUFFER_BINDING 0x8F36
#define KGL_BUFFER_SIZE 0x8764
#define KGL_PACK_ALIGNMENT 0x0D05
#define KGL_UNPACK_ALIGNMENT 0x0CF5
#define KGL_PIXEL_PACK_BUFFER_BINDING 0x88ED
#define KGL_PIXEL_UNPACK_BUFFER_BINDING 0x88EF
#define KGL_PIXEL_PACK_BUFFER 0x88EB
#define KGL_PIXEL_UNPACK_BUFFER 0x88EC

/* GL entry points, from the process (a program that links libGL), else
 * libGL.so.1 / libOpenGL.so.0, else eglGetProcAddress. */
typedef struct kgl_api {
    kgl_enum (*GetError)(void);
    void (*Finish)(void);
    void (*GetIntegerv)(kgl_enum, kgl_int *);
    void (*BindBuffer)(kgl_enum, kgl_uint);
    unsigned char (*IsBuffer)(kgl_uint);
    unsigned char (*IsTexture)(kgl_uint);
    void (*GetBufferParameteriv)(kgl_enum, kgl_enum, kgl_int *);
    void (*GetBufferSubData)(kgl_enum, kgl_intptr, kgl_intptr, void *);
    void (*BufferSubData)(kgl_enum, kgl_intptr, kgl_intptr, const void *);
    void (*BindTexture)(kgl_enum, kgl_uint);
    void (*GetTexLevelParameteriv)(kgl_enum, kgl_int, kgl_enum, kgl_int *);
    void (*GetTexImage)(kgl_enum, kgl_int, kgl_enum, kgl_enum, void *);
    void (*TexSubImage2D)(kgl_enum, kgl_int, kgl_int, kgl_int, int, int, kgl_enum, kgl_enum,
                          const void *);
    void (*PixelStorei)(kgl_enum, kgl_int);
    /* EGL, for kiln_gl_context_create (NULL where GLX is in use) */
    void *(*eglGetCurrentContext)(void);
    void *(*eglGetCurrentDisplay)(void);
    void *(*glXGetCurrentContext)(void);
    void *(*glXGetCurrentDisplay)(void);
} kgl_api;

/* The loaded entry points, or NULL with the message set. */
const kgl_api *kgl_load(const char *fn);
/* Fills slots[0..n) with the entry points named in names (separated by
 * spaces), looked up by find(lib, name); returns how many were found
 * before the first missing one (n: all). A table of function pointers is
 * filled as slots (POSIX: a function pointer converts to void * and
 * back). missing (may be NULL, 64 bytes) gets the first missing name. */
size_t kgl_load_symbols(void *(*find)(void *, const char *), void *lib, const char *names,
                        void **slots, size_t n, char *missing);
/* kgl_load_symbols from library file (dlopen'ed once, never closed). */
size_t kgl_load_library(const char *file, const char *names, void **slots, size_t n);
/* dlsym, as a find function (NULL lib: nothing found). */
void *kgl_dlsym(void *lib, const char *name);
/* A symbol of libEGL.so.1 (loaded once), NULL if absent. */
void *kgl_egl_symbol(const char *name);

typedef enum kgl_state { KGL_RELEASED, KGL_ACQUIRED, KGL_PENDING } kgl_state;

typedef struct kgl_format {
    kgl_enum internal, format, type;
    size_t bytes;
} kgl_format;

struct kiln_gl_object {
    kiln_context *context;
    int is_texture;
    kgl_uint name;
    kgl_enum target;
    int level;
    size_t width, height, size;
    kgl_format fmt;
    kiln_gl_sharing sharing;
    char describe[256];
    kgl_state state;
    kiln_buffer *buffer;  /* the device bytes (host path, textures); the
                             mapped buffer while acquired (CUDA buffers) */
    void *staging;        /* host path: the bytes between GL and device */
    kiln_event *acquired; /* the last acquire's event */
    kiln_event *released; /* the last release's event */
    void *native;         /* the CUDA resource or cl_mem */
    void *native_image;   /* OpenCL: the texture's image */
};

/* errors: kiln_gl's thread-local message */
kiln_status kgl_error(kiln_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
kiln_status kgl_error_kiln(kiln_status st, const char *what);

/* A native path (gl_cuda.c, gl_opencl.c). register_object tries to share
 * the object (sets sharing and describe; returns 0 with describe saying
 * why not, so the caller falls back to host copies). step enqueues the
 * acquire (acquire 1) or release on q after the wait list and gives
 * *event. */
typedef struct kgl_path {
    int (*register_object)(kiln_gl_object *o);
    void (*unregister_object)(kiln_gl_object *o);
    kiln_status (*step)(kiln_queue *q, kiln_gl_object *o, size_t num_wait, kiln_event *const *wait,
                        kiln_event **event, int acquire);
} kgl_path;
extern const kgl_path kgl_cuda_path, kgl_opencl_path;
/* A register_object's success: o shares `how` through native; returns 1. */
int kgl_shared(kiln_gl_object *o, kiln_gl_sharing how, void *native, const char *describe);
/* A register_object's failure: o's describe says why; returns 0. */
int kgl_unshared(kiln_gl_object *o, const char *why);

/* A cl_context sharing the current GL context, as a kiln context
 * (KILN_ERROR_UNSUPPORTED where the driver has no cl_khr_gl_sharing or
 * refuses). */
kiln_status kgl_opencl_context_create(kiln_device *device, const kgl_api *gl,
                                      kiln_context **context);

#endif
