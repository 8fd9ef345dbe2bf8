/* kiln_gl: objects, acquire/release, and the host-copy path (docs/gl.md).
 * The GL entry points are looked up at run time; the CUDA and OpenCL paths
 * are in gl_cuda.c and gl_opencl.c. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_internal.h"

static _Thread_local char kgl_msg[1024];

kiln_status kgl_error(kiln_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(kgl_msg, sizeof kgl_msg, fmt, ap);
    va_end(ap);
    return n < 0 ? KILN_ERROR_INTERNAL : st;
}

kiln_status kgl_error_kiln(kiln_status st, const char *what) {
    return kgl_error(st, "%s: %s (%s)", what, kiln_last_error_message(), kiln_status_name(st));
}

const char *kiln_gl_last_error_message(void) {
    return kgl_msg;
}

/* ------------------------------------------------------ GL entry points */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static kgl_api api;
static int api_ok;
static char api_missing[64];
static void *egl_lib;

void *kgl_egl_symbol(const char *name) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p)
        return p;
    if (!egl_lib)
        egl_lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    return egl_lib ? dlsym(egl_lib, name) : NULL;
}

size_t kgl_load_symbols(void *(*find)(void *, const char *), void *lib, const char *names,
                        void **slots, size_t n, char *missing) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        char name[64];
        size_t len = strcspn(names, " ");
        snprintf(name, sizeof name, "%.*s", (int)len, names);
        names += len + (names[len] == ' ');
        slots[i] = find(lib, name);
        if (!slots[i] && found == i && missing)
            snprintf(missing, 64, "%s", name);
        found += slots[i] && found == i;
    }
    return found;
}

size_t kgl_load_library(const char *file, const char *names, void **slots, size_t n) {
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    return lib ? kgl_load_symbols(kgl_dlsym, lib, names, slots, n, NULL) : 0;
}

void *kgl_dlsym(void *lib, const char *name) {
    return lib ? dlsym(lib, name) : NULL;
}

/* From the process, else libGL/libOpenGL, else eglGetProcAddress. */
static void *gl_find(void *lib, const char *name) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p && lib)
        p = dlsym(lib, name);
    void *(*gpa)(const char *) = (void *(*)(const char *))kgl_egl_symbol("eglGetProcAddress");
    if (!p && gpa && strncmp(name, "glX", 3) != 0)
        p = gpa(name);
    return p;
}

static void *egl_find(void *lib, const char *name) {
    (void)lib;
    return kgl_egl_symbol(name);
}

static void load_api(void) {
    void *lib = dlopen("libOpenGL.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libGL.so.1", RTLD_NOW | RTLD_LOCAL);
    static const char names[] = "glGetError glFinish glGetIntegerv glBindBuffer glIsBuffer "
                                "glIsTexture glGetBufferParameteriv glGetBufferSubData "
                                "glBufferSubData glBindTexture glGetTexLevelParameteriv "
                                "glGetTexImage glTexSubImage2D glPixelStorei";
    size_t n = offsetof(kgl_api, eglGetCurrentContext) / sizeof(void *);
    api_ok = kgl_load_symbols(gl_find, lib, names, (void **)&api, n, api_missing) == n;
    /* optional: whichever of EGL and GLX the program uses */
    kgl_load_symbols(egl_find, NULL, "eglGetCurrentContext eglGetCurrentDisplay",
                     (void **)&api.eglGetCurrentContext, 2, NULL);
    kgl_load_symbols(gl_find, lib, "glXGetCurrentContext glXGetCurrentDisplay",
                     (void **)&api.glXGetCurrentContext, 2, NULL);
}

const kgl_api *kgl_load(const char *fn) {
    pthread_once(&load_once, load_api);
    if (!api_ok) {
        kgl_error(KILN_ERROR_NO_RUNTIME,
                  "%s: OpenGL entry point %s not found (libOpenGL.so.0 / libGL.so.1: install "
                  "libgl1 and libegl1, and a driver such as libgl1-mesa-dri)",
                  fn, api_missing);
        return NULL;
    }
    return &api;
}

/* A current GL context on this thread (else the message). */
static const kgl_api *gl_current(const char *fn) {
    const kgl_api *gl = kgl_load(fn);
    if (!gl)
        return NULL;
    int cur = (gl->eglGetCurrentContext && gl->eglGetCurrentContext()) ||
              (gl->glXGetCurrentContext && gl->glXGetCurrentContext());
    if (!cur) {
        kgl_error(KILN_ERROR_NO_RUNTIME,
                  "%s: no OpenGL context is current on this thread (make the context that "
                  "owns the GL object current first: eglMakeCurrent, glXMakeCurrent)",
                  fn);
        return NULL;
    }
    gl->GetError(); /* clear what came before */
    return gl;
}

/* ------------------------------------------------------------- formats */

static const kgl_format formats[] = {
    { 0x8229, 0x1903, 0x1401, 1 },  /* GL_R8: RED, UNSIGNED_BYTE */
    { 0x1903, 0x1903, 0x1401, 1 },  /* GL_RED (unsized) */
    { 0x822B, 0x8227, 0x1401, 2 },  /* GL_RG8: RG */
    { 0x8058, 0x1908, 0x1401, 4 },  /* GL_RGBA8: RGBA */
    { 0x1908, 0x1908, 0x1401, 4 },  /* GL_RGBA (unsized) */
    { 0x822E, 0x1903, 0x1406, 4 },  /* GL_R32F: RED, FLOAT */
    { 0x8230, 0x8227, 0x1406, 8 },  /* GL_RG32F */
    { 0x8814, 0x1908, 0x1406, 16 }, /* GL_RGBA32F */
    { 0x8236, 0x8D94, 0x1405, 4 },  /* GL_R32UI: RED_INTEGER, UNSIGNED_INT */
    { 0x8235, 0x8D94, 0x1404, 4 },  /* GL_R32I: RED_INTEGER, INT */
};

static const kgl_format *find_format(unsigned internal) {
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].internal == internal)
            return &formats[i];
    return NULL;
}

size_t kiln_gl_format_bytes(unsigned internal_format) {
    const kgl_format *f = find_format(internal_format);
    return f ? f->bytes : 0;
}

/* ------------------------------------------------------------- objects */

int kgl_shared(kiln_gl_object *o, kiln_gl_sharing how, void *native, const char *describe) {
    o->native = native;
    o->sharing = how;
    snprintf(o->describe, sizeof o->describe, "%s", describe);
    return 1;
}

int kgl_unshared(kiln_gl_object *o, const char *why) {
    snprintf(o->describe, sizeof o->describe, "host copies: %s", why);
    return 0;
}

/* The native path an object takes, NULL for host copies. */
static const kgl_path *native_path(const kiln_gl_object *o) {
    return o->sharing == KILN_GL_SHARING_CUDA     ? &kgl_cuda_path
           : o->sharing == KILN_GL_SHARING_OPENCL ? &kgl_opencl_path
                                                  : NULL;
}

static int host_forced(void) {
    const char *e = getenv("KILN_GL_SHARING");
    return e && strcmp(e, "host") == 0;
}

/* Native sharing where the context's backend has it, else host copies
 * (with the device buffer and staging memory made here). */
static kiln_status object_finish_create(kiln_gl_object *o, const char *fn,
                                        kiln_gl_object **object) {
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(kiln_context_device(o->context, 0), &info);
    if (st != KILN_OK) {
        kiln_gl_object_release(o);
        return kgl_error_kiln(st, fn);
    }
    int shared = 0;
    if (host_forced())
        snprintf(o->describe, sizeof o->describe, "host copies: KILN_GL_SHARING=host");
    else if (info.backend == KILN_BACKEND_CUDA)
        shared = kgl_cuda_path.register_object(o);
    else if (info.backend == KILN_BACKEND_OPENCL)
        shared = kgl_opencl_path.register_object(o);
    else
        snprintf(o->describe, sizeof o->describe, "host copies: the %s backend has no GL sharing",
                 info.backend_name);
    if (!shared)
        o->sharing = KILN_GL_SHARING_HOST;
    if (o->sharing == KILN_GL_SHARING_HOST || o->is_texture) {
        if (o->sharing == KILN_GL_SHARING_HOST && !(o->staging = malloc(o->size))) {
            kiln_gl_object_release(o);
            return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: %zu bytes of staging memory", fn,
                             o->size);
        }
        if (!o->buffer) {
            st = kiln_buffer_create(o->context, o->size, 0, NULL, &o->buffer);
            if (st != KILN_OK) {
                kiln_gl_object_release(o);
                return kgl_error_kiln(st, fn);
            }
        }
    }
    *object = o;
    return KILN_OK;
}

static kiln_gl_object *object_new(kiln_context *context) {
    kiln_gl_object *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    kiln_context_retain(context);
    o->context = context;
    o->state = KGL_RELEASED;
    return o;
}

/* KILN_ERROR_INVALID_ARGUMENT naming GL's error after `what` on GL object
 * name (and hint), or KILN_OK when GL has none. */
static kiln_status gl_check(const kgl_api *gl, const char *fn, const char *what, unsigned name,
                            const char *hint) {
    kgl_enum err = gl->GetError();
    if (err == KGL_NO_ERROR)
        return KILN_OK;
    return kgl_error(KILN_ERROR_INVALID_ARGUMENT, "%s: %s GL object %u failed with GL error 0x%x%s",
                     fn, what, name, err, hint);
}

/* The checks both create calls begin with: the handles, a current GL
 * context, and name being an object of the kind (texture or buffer). */
static const kgl_api *create_begin(const char *fn, kiln_context *context, kiln_gl_object **object,
                                   unsigned name, int texture, kiln_status *st) {
    *st = KILN_OK;
    if (!context || !object) {
        *st = kgl_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", fn,
                        !context ? "context" : "object");
        return NULL;
    }
    *object = NULL;
    const kgl_api *gl = gl_current(fn);
    if (!gl) {
        *st = KILN_ERROR_NO_RUNTIME;
        return NULL;
    }
    if (name == 0 || !(texture ? gl->IsTexture(name) : gl->IsBuffer(name))) {
        *st = kgl_error(
            KILN_ERROR_INVALID_ARGUMENT, "%s: gl_%s %u is not a %s of the current GL context", fn,
            texture ? "texture" : "buffer", name, texture ? "texture" : "buffer object");
        return NULL;
    }
    return gl;
}

kiln_status kiln_gl_buffer_create(kiln_context *context, unsigned gl_buffer,
                                  kiln_gl_object **object) {
    static const char fn[] = "kiln_gl_buffer_create";
    kiln_status st;
    const kgl_api *gl = create_begin(fn, context, object, gl_buffer, 0, &st);
    if (!gl)
        return st;
    kgl_int old = 0, size = 0;
    gl->GetIntegerv(KGL_COPY_READ_BUFFER_BINDING, &old);
    gl->BindBuffer(KGL_COPY_READ_BUFFER, gl_buffer);
    gl->GetBufferParameteriv(KGL_COPY_READ_BUFFER, KGL_BUFFER_SIZE, &size);
    gl->BindBuffer(KGL_COPY_READ_BUFFER, (kgl_uint)old);
    if ((st = gl_check(gl, fn, "asking the size of", gl_buffer, "")) != KILN_OK)
        return st;
    if (size <= 0)
        return kgl_error(KILN_ERROR_INVALID_ARGUMENT,
                         "%s: gl_buffer %u has no storage (GL_BUFFER_SIZE %d): give it some with "
                         "glBufferData first",
                         fn, gl_buffer, size);
    kiln_gl_object *o = object_new(context);
    if (!o)
        return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    o->name = gl_buffer;
    o->size = (size_t)size;
    o->width = o->size;
    o->height = 1;
    return object_finish_create(o, fn, object);
}

kiln_status kiln_gl_texture_create(kiln_context *context, unsigned target, unsigned gl_texture,
                                   int level, kiln_gl_object **object) {
    static const char fn[] = "kiln_gl_texture_create";
    if (object)
        *object = NULL;
    if (target != KGL_TEXTURE_2D)
        return kgl_error(KILN_ERROR_UNSUPPORTED,
                         "%s: target 0x%x: only GL_TEXTURE_2D (0x0DE1) textures are shared", fn,
                         target);
    if (level < 0)
        return kgl_error(KILN_ERROR_INVALID_ARGUMENT, "%s: level %d is negative", fn, level);
    kiln_status st;
    const kgl_api *gl = create_begin(fn, context, object, gl_texture, 1, &st);
    if (!gl)
        return st;
    kgl_int old = 0, w = 0, h = 0, internal = 0;
    gl->GetIntegerv(KGL_TEXTURE_BINDING_2D, &old);
    gl->BindTexture(KGL_TEXTURE_2D, gl_texture);
    gl->GetTexLevelParameteriv(KGL_TEXTURE_2D, level, KGL_TEXTURE_WIDTH, &w);
    gl->GetTexLevelParameteriv(KGL_TEXTURE_2D, level, KGL_TEXTURE_HEIGHT, &h);
    gl->GetTexLevelParameteriv(KGL_TEXTURE_2D, level, KGL_TEXTURE_INTERNAL_FORMAT, &internal);
    gl->BindTexture(KGL_TEXTURE_2D, (kgl_uint)old);
    if ((st = gl_check(gl, fn, "reading the level of", gl_texture,
                       " (is it a GL_TEXTURE_2D texture?)")) != KILN_OK)
        return st;
    if (w <= 0 || h <= 0)
        return kgl_error(KILN_ERROR_INVALID_ARGUMENT,
                         "%s: gl_texture %u level %d has no image (%d x %d): give it one with "
                         "glTexImage2D or glTexStorage2D first",
                         fn, gl_texture, level, w, h);
    const kgl_format *f = find_format((unsigned)internal);
    if (!f)
        return kgl_error(KILN_ERROR_UNSUPPORTED,
                         "%s: gl_texture %u has internal format 0x%x; kiln_gl shares GL_R8, "
                         "GL_RG8, GL_RGBA8, GL_R32F, GL_RG32F, GL_RGBA32F, GL_R32UI, GL_R32I",
                         fn, gl_texture, (unsigned)internal);
    kiln_gl_object *o = object_new(context);
    if (!o)
        return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    o->is_texture = 1;
    o->name = gl_texture;
    o->target = target;
    o->level = level;
    o->width = (size_t)w;
    o->height = (size_t)h;
    o->fmt = *f;
    o->size = o->width * o->height * f->bytes;
    return object_finish_create(o, fn, object);
}

void kiln_gl_object_release(kiln_gl_object *o) {
    if (!o)
        return;
    /* The commands that use the staging memory and buffer end first. */
    kiln_event *last[2] = { o->acquired, o->released };
    for (int i = 0; i < 2; i++)
        if (last[i]) {
            kiln_event_wait(last[i]);
            kiln_event_release(last[i]);
        }
    const kgl_path *path = native_path(o);
    if (path && path->unregister_object)
        path->unregister_object(o);
    kiln_buffer_release(o->buffer);
    free(o->staging);
    kiln_context_release(o->context);
    free(o);
}

kiln_gl_sharing kiln_gl_object_sharing(const kiln_gl_object *o) {
    return o ? o->sharing : (kiln_gl_sharing)0;
}

const char *kiln_gl_object_describe(const kiln_gl_object *o) {
    return o ? o->describe : "";
}

size_t kiln_gl_object_size(const kiln_gl_object *o) {
    return o ? o->size : 0;
}

kiln_status kiln_gl_object_get_extent(const kiln_gl_object *o, size_t *width, size_t *height) {
    if (!o || !width || !height)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "kiln_gl_object_get_extent: %s is NULL",
                         !o       ? "object"
                         : !width ? "width"
                                  : "height");
    *width = o->width;
    *height = o->height;
    return KILN_OK;
}

kiln_status kiln_gl_object_get_buffer(kiln_gl_object *o, kiln_buffer **buffer) {
    static const char fn[] = "kiln_gl_object_get_buffer";
    if (!o || !buffer)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", fn, !o ? "object" : "buffer");
    *buffer = NULL;
    if (o->state != KGL_ACQUIRED)
        return kgl_error(KILN_ERROR_WRONG_STATE,
                         "%s: GL object %u is not acquired (kiln_gl_acquire it first)", fn,
                         o->name);
    *buffer = o->buffer;
    return KILN_OK;
}

/* ----------------------------------------------------------- host path */

/* GL object <-> staging on this thread (to_host: GL to staging), GL's
 * bindings and pixel-store state put back afterwards. */
static kiln_status host_copy_gl(const kgl_api *gl, kiln_gl_object *o, int to_host, const char *fn) {
    kgl_int old = 0, pixel_buffer = 0, align = 0;
    kgl_enum pb_binding = to_host ? KGL_PIXEL_PACK_BUFFER_BINDING : KGL_PIXEL_UNPACK_BUFFER_BINDING;
    kgl_enum pb_target = to_host ? KGL_PIXEL_PACK_BUFFER : KGL_PIXEL_UNPACK_BUFFER;
    kgl_enum alignment = to_host ? KGL_PACK_ALIGNMENT : KGL_UNPACK_ALIGNMENT;
    if (!o->is_texture) {
        gl->GetIntegerv(KGL_COPY_READ_BUFFER_BINDING, &old);
        gl->BindBuffer(KGL_COPY_READ_BUFFER, o->name);
        if (to_host)
            gl->GetBufferSubData(KGL_COPY_READ_BUFFER, 0, (kgl_intptr)o->size, o->staging);
        else
            gl->BufferSubData(KGL_COPY_READ_BUFFER, 0, (kgl_intptr)o->size, o->staging);
        gl->BindBuffer(KGL_COPY_READ_BUFFER, (kgl_uint)old);
    } else {
        gl->GetIntegerv(KGL_TEXTURE_BINDING_2D, &old);
        gl->GetIntegerv(pb_binding, &pixel_buffer);
        gl->GetIntegerv(alignment, &align);
        gl->BindBuffer(pb_target, 0);
        gl->PixelStorei(alignment, 1);
        gl->BindTexture(KGL_TEXTURE_2D, o->name);
        if (to_host)
            gl->GetTexImage(KGL_TEXTURE_2D, o->level, o->fmt.format, o->fmt.type, o->staging);
        else
            gl->TexSubImage2D(KGL_TEXTURE_2D, o->level, 0, 0, (int)o->width, (int)o->height,
                              o->fmt.format, o->fmt.type, o->staging);
        gl->BindTexture(KGL_TEXTURE_2D, (kgl_uint)old);
        gl->PixelStorei(alignment, align);
        gl->BindBuffer(pb_target, (kgl_uint)pixel_buffer);
    }
    return gl_check(gl, fn, to_host ? "reading" : "writing", o->name,
                    " (deleted, or resized since kiln_gl_buffer/texture_create?)");
}

/* ------------------------------------------------------ acquire/release */

static kiln_status check_objects(const char *fn, kiln_queue *q, size_t n,
                                 kiln_gl_object *const *objects, kgl_state want) {
    if (!q)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: queue is NULL", fn);
    if (n == 0 || !objects)
        return kgl_error(KILN_ERROR_INVALID_ARGUMENT, "%s: no objects (num_objects %zu)", fn, n);
    for (size_t i = 0; i < n; i++) {
        const kiln_gl_object *o = objects[i];
        if (!o)
            return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: objects[%zu] is NULL", fn, i);
        if (o->context != kiln_queue_context(q))
            return kgl_error(KILN_ERROR_MISMATCH,
                             "%s: objects[%zu] (GL object %u) belongs to another kiln context "
                             "than the queue's",
                             fn, i, o->name);
        int ok = want == KGL_ACQUIRED ? o->state == KGL_ACQUIRED : o->state != KGL_ACQUIRED;
        if (!ok)
            return kgl_error(KILN_ERROR_WRONG_STATE, "%s: objects[%zu] (GL object %u) is %s", fn, i,
                             o->name,
                             o->state == KGL_ACQUIRED ? "acquired already (kiln_gl_release it)"
                                                      : "not acquired");
        for (size_t j = 0; j < i; j++)
            if (objects[j] == o)
                return kgl_error(KILN_ERROR_INVALID_ARGUMENT,
                                 "%s: objects[%zu] and objects[%zu] are the same object", fn, j, i);
    }
    return KILN_OK;
}

/* One event for all (a marker over them), the parts released. */
static kiln_status join_events(kiln_queue *q, size_t n, kiln_event **parts, kiln_event **event,
                               const char *fn) {
    kiln_status st = KILN_OK;
    if (event) {
        if (n == 1) {
            *event = parts[0];
            return KILN_OK;
        }
        st = kiln_queue_marker(q, n, parts, event);
        if (st != KILN_OK)
            kgl_error_kiln(st, fn);
    }
    for (size_t i = 0; i < n; i++)
        kiln_event_release(parts[i]);
    return st;
}

static kiln_status finish_one(const kgl_api *gl, kiln_gl_object *o, const char *fn) {
    if (o->state != KGL_PENDING)
        return KILN_OK;
    kiln_status st = kiln_event_wait(o->released);
    o->state = KGL_RELEASED;
    if (st != KILN_OK)
        return kgl_error_kiln(st, fn);
    if (o->sharing == KILN_GL_SHARING_HOST)
        return host_copy_gl(gl, o, 0, fn);
    return KILN_OK;
}

/* One object's acquire: GL's bytes to the device (host copies), or the
 * native path's step. */
static kiln_status acquire_one(const kgl_api *gl, kiln_queue *q, kiln_gl_object *o, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event, const char *fn) {
    kiln_status st = finish_one(gl, o, fn);
    if (st != KILN_OK)
        return st;
    if (native_path(o))
        return native_path(o)->step(q, o, num_wait, wait, event, 1);
    if ((st = host_copy_gl(gl, o, 1, fn)) != KILN_OK)
        return st;
    st = kiln_buffer_write_async(q, o->buffer, 0, o->size, o->staging, num_wait, wait, event);
    return st == KILN_OK ? KILN_OK : kgl_error_kiln(st, fn);
}

/* One object's release: the device's bytes to staging (host copies; a
 * barrier first keeps the read behind the queue's work on an
 * out-of-order queue), or the native path's step. */
static kiln_status release_one(kiln_queue *q, kiln_gl_object *o, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event, const char *fn) {
    if (native_path(o))
        return native_path(o)->step(q, o, num_wait, wait, event, 0);
    kiln_status st = kiln_queue_barrier(q, num_wait, wait, NULL);
    if (st == KILN_OK)
        st = kiln_buffer_read_async(q, o->buffer, 0, o->size, o->staging, 0, NULL, event);
    return st == KILN_OK ? KILN_OK : kgl_error_kiln(st, fn);
}

/* kiln_gl_acquire (acquire 1) and kiln_gl_release: each object's step,
 * its event kept by the object, one event for all. On a failure part way,
 * the objects done so far keep their new state (their commands are
 * enqueued). */
static kiln_status transfer(kiln_queue *q, size_t n, kiln_gl_object *const *objects,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event,
                            int acquire) {
    const char *fn = acquire ? "kiln_gl_acquire" : "kiln_gl_release";
    if (event)
        *event = NULL;
    kiln_status st = check_objects(fn, q, n, objects, acquire ? KGL_RELEASED : KGL_ACQUIRED);
    if (st != KILN_OK)
        return st;
    const kgl_api *gl = NULL;
    if (acquire && !(gl = gl_current(fn)))
        return KILN_ERROR_NO_RUNTIME;
    kiln_event **parts = calloc(n, sizeof *parts);
    if (!parts)
        return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    int native = 0;
    for (size_t i = 0; i < n; i++)
        native |= native_path(objects[i]) != NULL;
    if (acquire && native)
        gl->Finish(); /* GL's commands on the objects end before the device's */
    size_t done = 0;
    for (; done < n; done++) {
        kiln_gl_object *o = objects[done];
        st = acquire ? acquire_one(gl, q, o, num_wait, wait, &parts[done], fn)
                     : release_one(q, o, num_wait, wait, &parts[done], fn);
        if (st != KILN_OK)
            break;
        kiln_event **keep = acquire ? &o->acquired : &o->released;
        kiln_event_release(*keep);
        kiln_event_retain(parts[done]);
        *keep = parts[done];
        o->state = acquire ? KGL_ACQUIRED : KGL_PENDING;
    }
    if (st != KILN_OK) {
        for (size_t i = 0; i < done; i++)
            kiln_event_release(parts[i]);
        free(parts);
        return st;
    }
    st = join_events(q, n, parts, event, fn);
    free(parts);
    return st;
}

kiln_status kiln_gl_acquire(kiln_queue *q, size_t n, kiln_gl_object *const *objects,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return transfer(q, n, objects, num_wait, wait, event, 1);
}

kiln_status kiln_gl_release(kiln_queue *q, size_t n, kiln_gl_object *const *objects,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return transfer(q, n, objects, num_wait, wait, event, 0);
}

kiln_status kiln_gl_finish(size_t n, kiln_gl_object *const *objects) {
    static const char fn[] = "kiln_gl_finish";
    if (n && !objects)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: objects is NULL", fn);
    const kgl_api *gl = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!objects[i])
            return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: objects[%zu] is NULL", fn, i);
        if (objects[i]->state == KGL_PENDING && objects[i]->sharing == KILN_GL_SHARING_HOST &&
            !gl && !(gl = gl_current(fn)))
            return KILN_ERROR_NO_RUNTIME;
    }
    kiln_status first = KILN_OK;
    for (size_t i = 0; i < n; i++) {
        kiln_status st = finish_one(gl, objects[i], fn);
        if (first == KILN_OK)
            first = st;
    }
    return first;
}

kiln_status kiln_gl_context_create(kiln_device *device, kiln_context **context) {
    static const char fn[] = "kiln_gl_context_create";
    kgl_msg[0] = '\0'; /* a fallback's reason is left here */
    if (!device || !context)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", fn,
                         !device ? "device" : "context");
    *context = NULL;
    kiln_device_info info;
    kiln_status st = kiln_device_get_info(device, &info);
    if (st != KILN_OK)
        return kgl_error_kiln(st, fn);
    if (info.backend == KILN_BACKEND_OPENCL && !host_forced()) {
        const kgl_api *gl = gl_current(fn);
        if (!gl)
            return KILN_ERROR_NO_RUNTIME;
        if (kgl_opencl_context_create(device, gl, context) == KILN_OK)
            return KILN_OK;
    }
    st = kiln_context_create(&device, 1, context);
    return st == KILN_OK ? KILN_OK : kgl_error_kiln(st, fn);
}
