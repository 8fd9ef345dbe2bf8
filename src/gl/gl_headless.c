/* A headless OpenGL context over EGL, loaded at run time (docs/gl.md):
 * Mesa's surfaceless platform (CI: llvmpipe), else the first EGL device
 * (NVIDIA's driver), else EGL's default display. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include "gl_internal.h"

struct kiln_gl_headless {
    EGLDisplay display;
    EGLContext context;
    char describe[512];
    EGLBoolean (*make_current)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
    EGLBoolean (*destroy_context)(EGLDisplay, EGLContext);
};

typedef struct egl_api {
    EGLDisplay (*get_display)(EGLNativeDisplayType);
    EGLBoolean (*initialize)(EGLDisplay, EGLint *, EGLint *);
    EGLBoolean (*terminate)(EGLDisplay);
    const char *(*query_string)(EGLDisplay, EGLint);
    EGLBoolean (*choose_config)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *);
    EGLBoolean (*bind_api)(EGLenum);
    EGLContext (*create_context)(EGLDisplay, EGLConfig, EGLContext, const EGLint *);
    EGLBoolean (*destroy_context)(EGLDisplay, EGLContext);
    EGLBoolean (*make_current)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
    EGLint (*get_error)(void);
    void *(*get_proc)(const char *);
} egl_api;

static void *egl_find(void *lib, const char *name) {
    (void)lib;
    return kgl_egl_symbol(name);
}

static int load_egl(egl_api *e) {
    static const char names[] = "eglGetDisplay eglInitialize eglTerminate eglQueryString "
                                "eglChooseConfig eglBindAPI eglCreateContext eglDestroyContext "
                                "eglMakeCurrent eglGetError eglGetProcAddress";
    size_t n = sizeof *e / sizeof(void *);
    return kgl_load_symbols(egl_find, NULL, names, (void **)e, n, NULL) == n;
}

/* An initialised display: surfaceless, else a device, else the default. */
static EGLDisplay open_display(const egl_api *e, const char **how) {
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)e->get_proc("eglGetPlatformDisplayEXT");
    const char *client = e->query_string(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    EGLint major, minor;
    if (platform_display && client && strstr(client, "EGL_MESA_platform_surfaceless")) {
        EGLDisplay d = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        if (d != EGL_NO_DISPLAY && e->initialize(d, &major, &minor)) {
            *how = "surfaceless";
            return d;
        }
    }
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)e->get_proc("eglQueryDevicesEXT");
    if (platform_display && query_devices && client && strstr(client, "EGL_EXT_platform_device")) {
        EGLDeviceEXT dev[8];
        EGLint n = 0;
        if (query_devices(8, dev, &n) && n > 0)
            for (EGLint i = 0; i < n; i++) {
                EGLDisplay d = platform_display(EGL_PLATFORM_DEVICE_EXT, dev[i], NULL);
                if (d != EGL_NO_DISPLAY && e->initialize(d, &major, &minor)) {
                    *how = "EGL device";
                    return d;
                }
            }
    }
    EGLDisplay d = e->get_display(EGL_DEFAULT_DISPLAY);
    if (d != EGL_NO_DISPLAY && e->initialize(d, &major, &minor)) {
        *how = "default display";
        return d;
    }
    return EGL_NO_DISPLAY;
}

kiln_status kiln_gl_headless_create(kiln_gl_headless **headless) {
    static const char fn[] = "kiln_gl_headless_create";
    if (!headless)
        return kgl_error(KILN_ERROR_NULL_HANDLE, "%s: headless is NULL", fn);
    *headless = NULL;
    egl_api e;
    if (!load_egl(&e))
        return kgl_error(KILN_ERROR_NO_RUNTIME,
                         "%s: libEGL.so.1 not found or incomplete (Debian: libegl1 and a driver, "
                         "libegl-mesa0 for Mesa)",
                         fn);
    const char *how = "";
    EGLDisplay d = open_display(&e, &how);
    if (d == EGL_NO_DISPLAY)
        return kgl_error(KILN_ERROR_NO_RUNTIME,
                         "%s: no EGL display initialises (surfaceless, device or default; EGL "
                         "error 0x%x)",
                         fn, (unsigned)e.get_error());
    static const EGLint attribs[] = { EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE };
    EGLConfig config = NULL;
    EGLint n = 0;
    if (!e.choose_config(d, attribs, &config, 1, &n) || n < 1)
        config = NULL; /* EGL_KHR_no_config_context */
    EGLContext ctx = EGL_NO_CONTEXT;
    if (e.bind_api(EGL_OPENGL_API))
        ctx = e.create_context(d, config, EGL_NO_CONTEXT, NULL);
    if (ctx == EGL_NO_CONTEXT || !e.make_current(d, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        EGLint err = e.get_error();
        if (ctx != EGL_NO_CONTEXT)
            e.destroy_context(d, ctx);
        e.terminate(d);
        return kgl_error(KILN_ERROR_NO_RUNTIME,
                         "%s: no desktop OpenGL context without a surface on the %s EGL "
                         "display (EGL error 0x%x)",
                         fn, how, (unsigned)err);
    }
    kiln_gl_headless *h = calloc(1, sizeof *h);
    if (!h) {
        e.make_current(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        e.destroy_context(d, ctx);
        e.terminate(d);
        return kgl_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    }
    h->display = d;
    h->context = ctx;
    h->make_current = e.make_current;
    h->destroy_context = e.destroy_context;
    const unsigned char *(*get_string)(unsigned) =
        (const unsigned char *(*)(unsigned))e.get_proc("glGetString");
    const char *version = get_string ? (const char *)get_string(0x1F02) : NULL;  /* VERSION */
    const char *renderer = get_string ? (const char *)get_string(0x1F01) : NULL; /* RENDERER */
    snprintf(h->describe, sizeof h->describe, "EGL %s (%s, %s); GL %s; %s",
             e.query_string(d, EGL_VERSION), e.query_string(d, EGL_VENDOR), how,
             version ? version : "?", renderer ? renderer : "?");
    *headless = h;
    return KILN_OK;
}

const char *kiln_gl_headless_describe(const kiln_gl_headless *h) {
    return h ? h->describe : "";
}

/* The display stays initialised: EGL hands one display per platform to the
 * whole process, and eglTerminate would end every other context on it. */
void kiln_gl_headless_destroy(kiln_gl_headless *h) {
    if (!h)
        return;
    h->make_current(h->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    h->destroy_context(h->display, h->context);
    free(h);
}
