/* kiln_gl (docs/gl.md): GL buffers and textures acquired by kiln, changed
 * by a kernel, released and read back through GL, against a serial loop;
 * the state rules and bad input; and examples/gl/polygon_mask_gl run as a
 * user runs it (its own check against the serial loop, and its PNG).
 *
 * Needs an OpenGL context without a window (kiln_gl_headless_create: EGL
 * surfaceless on Mesa in CI); skips (77) where none can be made. Runs on
 * every test device twice: in an ordinary kiln context and in one made by
 * kiln_gl_context_create (cl_khr_gl_sharing where the driver accepts the
 * GL context); each object says which path it took. */
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#include <kiln/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

static const char *source =
    "KILN_KERNEL void mix_u32(KILN_GLOBAL unsigned *x, unsigned n) {\n"
    "    unsigned i = (unsigned)kiln_global_id(0);\n"
    "    if (i < n) x[i] = x[i] * 3u + i;\n"
    "}\n"
    "KILN_KERNEL void invert_u8(KILN_GLOBAL unsigned char *x, unsigned n) {\n"
    "    unsigned i = (unsigned)kiln_global_id(0);\n"
    "    if (i < n) x[i] = (unsigned char)(255 - x[i]);\n"
    "}\n"
    "KILN_KERNEL void halve_f32(KILN_GLOBAL float *x, unsigned n) {\n"
    "    unsigned i = (unsigned)kiln_global_id(0);\n"
    "    if (i < n) x[i] = x[i] * 0.5f + 1.0f;\n"
    "}\n";

static kiln_status run(kiln_queue *q, kiln_program *prog, const char *name, kiln_buffer *b,
                       size_t n, size_t num_wait, kiln_event *const *wait, kiln_event **ev) {
    kiln_kernel *k;
    kiln_status st = kiln_kernel_create(prog, name, &k);
    if (st != KILN_OK)
        return st;
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_U32((uint32_t)n) };
    size_t global = (n + 63) / 64 * 64;
    st = kiln_kernel_launch(q, k, 1, &global, NULL, 2, args, num_wait, wait, ev);
    kiln_kernel_release(k);
    return st;
}

/* A GL buffer of n uint32 through two rounds (GL changes part of it in
 * between, and kiln must see that change). */
static void check_buffer(kiln_queue *q, kiln_program *prog, size_t n) {
    kiln_context *ctx = kiln_queue_context(q);
    uint32_t *host = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        host[i] = want[i] = (uint32_t)kt_rand_u64();
    GLuint name;
    glGenBuffers(1, &name);
    glBindBuffer(GL_ARRAY_BUFFER, name);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(n * 4), host, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    kiln_gl_object *o = NULL;
    CHECK_OK(kiln_gl_buffer_create(ctx, name, &o));
    if (!o)
        goto out;
    printf("  buffer of %zu bytes: %s\n", n * 4, kiln_gl_object_describe(o));
    CHECK(kiln_gl_object_size(o) == n * 4);
    kiln_buffer *b = NULL;
    CHECK_STATUS(kiln_gl_object_get_buffer(o, &b), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_gl_release(q, 1, &o, 0, NULL, NULL), KILN_ERROR_WRONG_STATE);
    for (int round = 0; round < 2; round++) {
        kiln_event *acq = NULL, *ran = NULL, *rel = NULL;
        CHECK_OK(kiln_gl_acquire(q, 1, &o, 0, NULL, &acq));
        CHECK_STATUS(kiln_gl_acquire(q, 1, &o, 0, NULL, NULL), KILN_ERROR_WRONG_STATE);
        CHECK_OK(kiln_gl_object_get_buffer(o, &b));
        CHECK(b && kiln_buffer_size(b) == n * 4);
        CHECK_OK(run(q, prog, "mix_u32", b, n, 1, &acq, &ran));
        CHECK_OK(kiln_gl_release(q, 1, &o, 1, &ran, &rel));
        CHECK_STATUS(kiln_gl_object_get_buffer(o, &b), KILN_ERROR_WRONG_STATE);
        CHECK_OK(kiln_gl_finish(1, &o));
        CHECK_OK(kiln_event_wait(rel));
        KT_RELEASE(acq, ran, rel);
        for (size_t i = 0; i < n; i++)
            want[i] = want[i] * 3u + (uint32_t)i;
        glBindBuffer(GL_ARRAY_BUFFER, name);
        glGetBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(n * 4), got);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += got[i] != want[i];
        CHECK_MSG(bad == 0, "round %d: %zu of %zu words differ from the serial loop", round, bad,
                  n);
        /* GL writes the first third; the next round must start from it */
        for (size_t i = 0; i < n / 3; i++)
            want[i] = (uint32_t)(i * 7u + 1u);
        glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(n / 3 * 4), want);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
    }
    kiln_gl_object_release(o);
out:
    glDeleteBuffers(1, &name);
    KT_FREE(host, want, got);
}

/* A w x h texture of internal format fmt (upload format/type), one round. */
static void check_texture(kiln_queue *q, kiln_program *prog, GLenum fmt, GLenum format, GLenum type,
                          size_t texel, int w, int h) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t bytes = (size_t)w * (size_t)h * texel;
    unsigned char *host = malloc(bytes), *got = malloc(bytes);
    int is_float = type == GL_FLOAT;
    for (size_t i = 0; i < bytes; i++)
        host[i] = (unsigned char)kt_rand_u64();
    if (is_float)
        for (size_t i = 0; i < bytes / 4; i++)
            ((float *)host)[i] = (float)(kt_rand_u64() % 100000) / 8.0f;
    GLuint name;
    glGenTextures(1, &name);
    glBindTexture(GL_TEXTURE_2D, name);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)fmt, w, h, 0, format, type, host);
    /* complete without mipmaps (CUDA registers complete textures only) */
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    kiln_gl_object *o = NULL;
    CHECK_OK(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, name, 0, &o));
    if (!o)
        goto out;
    printf("  texture %dx%d of format 0x%x: %s\n", w, h, fmt, kiln_gl_object_describe(o));
    size_t ew = 0, eh = 0;
    CHECK_OK(kiln_gl_object_get_extent(o, &ew, &eh));
    CHECK(ew == (size_t)w && eh == (size_t)h && kiln_gl_object_size(o) == bytes);
    CHECK(kiln_gl_format_bytes(fmt) == texel);
    kiln_buffer *b = NULL;
    kiln_event *ran = NULL;
    CHECK_OK(kiln_gl_acquire(q, 1, &o, 0, NULL, NULL));
    CHECK_OK(kiln_gl_object_get_buffer(o, &b));
    if (is_float)
        CHECK_OK(run(q, prog, "halve_f32", b, bytes / 4, 0, NULL, &ran));
    else
        CHECK_OK(run(q, prog, "invert_u8", b, bytes, 0, NULL, &ran));
    CHECK_OK(kiln_gl_release(q, 1, &o, 1, &ran, NULL)); /* no event asked */
    CHECK_OK(kiln_gl_finish(1, &o));
    kiln_event_release(ran);
    glBindTexture(GL_TEXTURE_2D, name);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, format, type, got);
    glBindTexture(GL_TEXTURE_2D, 0);
    size_t bad = 0;
    if (is_float)
        for (size_t i = 0; i < bytes / 4; i++)
            bad += ((float *)got)[i] != ((float *)host)[i] * 0.5f + 1.0f;
    else
        for (size_t i = 0; i < bytes; i++)
            bad += got[i] != (unsigned char)(255 - host[i]);
    CHECK_MSG(bad == 0, "texture 0x%x %dx%d: %zu values differ from the serial loop", fmt, w, h,
              bad);
    kiln_gl_object_release(o);
out:
    glDeleteTextures(1, &name);
    KT_FREE(host, got);
}

/* Two objects in one acquire and one release (one joined event). */
static void check_two(kiln_queue *q, kiln_program *prog) {
    kiln_context *ctx = kiln_queue_context(q);
    enum { N = 777 };
    uint32_t a[N], c[N];
    for (int i = 0; i < N; i++)
        a[i] = (uint32_t)i;
    GLuint names[2];
    glGenBuffers(2, names);
    for (int j = 0; j < 2; j++) {
        glBindBuffer(GL_ARRAY_BUFFER, names[j]);
        glBufferData(GL_ARRAY_BUFFER, sizeof a, a, GL_DYNAMIC_DRAW);
    }
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    kiln_gl_object *o[2] = { NULL, NULL };
    CHECK_OK(kiln_gl_buffer_create(ctx, names[0], &o[0]));
    CHECK_OK(kiln_gl_buffer_create(ctx, names[1], &o[1]));
    if (o[0] && o[1]) {
        kiln_gl_object *same[2] = { o[0], o[0] };
        CHECK_STATUS(kiln_gl_acquire(q, 2, same, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
        kiln_event *acq = NULL, *rel = NULL, *ran[2] = { NULL, NULL };
        CHECK_OK(kiln_gl_acquire(q, 2, o, 0, NULL, &acq));
        for (int j = 0; j < 2; j++) {
            kiln_buffer *b = NULL;
            CHECK_OK(kiln_gl_object_get_buffer(o[j], &b));
            for (int r = 0; r <= j; r++) {
                kiln_event *prev = ran[j] ? ran[j] : acq, *next = NULL;
                CHECK_OK(run(q, prog, "mix_u32", b, N, 1, &prev, &next));
                kiln_event_release(ran[j]);
                ran[j] = next;
            }
        }
        CHECK_OK(kiln_gl_release(q, 2, o, 2, ran, &rel));
        CHECK_OK(kiln_event_wait(rel));
        CHECK_OK(kiln_gl_finish(2, o));
        for (int j = 0; j < 2; j++) {
            glBindBuffer(GL_ARRAY_BUFFER, names[j]);
            glGetBufferSubData(GL_ARRAY_BUFFER, 0, sizeof c, c);
            size_t bad = 0;
            for (int i = 0; i < N; i++) {
                uint32_t w = (uint32_t)i;
                for (int r = 0; r <= j; r++)
                    w = w * 3u + (uint32_t)i;
                bad += c[i] != w;
            }
            CHECK_MSG(bad == 0, "object %d of two: %zu words differ", j, bad);
            kiln_event_release(ran[j]);
        }
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        KT_RELEASE(acq, rel);
    }
    kiln_gl_object_release(o[0]);
    kiln_gl_object_release(o[1]);
    glDeleteBuffers(2, names);
}

static void check_bad_input(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_gl_object *o = (kiln_gl_object *)1;
    CHECK_STATUS(kiln_gl_buffer_create(NULL, 1, &o), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_gl_buffer_create(ctx, 1, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_gl_buffer_create(ctx, 987654, &o), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(o == NULL);
    CHECK(strstr(kiln_gl_last_error_message(), "kiln_gl_buffer_create") &&
          strstr(kiln_gl_last_error_message(), "987654"));
    GLuint empty;
    glGenBuffers(1, &empty);
    glBindBuffer(GL_ARRAY_BUFFER, empty); /* a name, but no storage */
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK_STATUS(kiln_gl_buffer_create(ctx, empty, &o), KILN_ERROR_INVALID_ARGUMENT);
    glDeleteBuffers(1, &empty);
    CHECK_STATUS(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, 987654, 0, &o),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_gl_texture_create(ctx, 0x806F /* GL_TEXTURE_3D */, 1, 0, &o),
                 KILN_ERROR_UNSUPPORTED);
    CHECK_STATUS(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, 1, -1, &o),
                 KILN_ERROR_INVALID_ARGUMENT);
    GLuint t;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, 5, 3, 0, GL_RGB, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    CHECK_STATUS(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, t, 0, &o), KILN_ERROR_UNSUPPORTED);
    CHECK(strstr(kiln_gl_last_error_message(), "0x8051") != NULL);
    CHECK_STATUS(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, t, 3, &o),
                 KILN_ERROR_INVALID_ARGUMENT); /* level without an image */
    glDeleteTextures(1, &t);
    CHECK(kiln_gl_format_bytes(0x8051) == 0 && kiln_gl_format_bytes(GL_RGBA32F) == 16);
    CHECK_STATUS(kiln_gl_acquire(NULL, 0, NULL, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_gl_acquire(q, 0, NULL, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_gl_object *none = NULL;
    CHECK_STATUS(kiln_gl_acquire(q, 1, &none, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_gl_release(q, 1, &none, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_gl_finish(1, &none), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_gl_finish(0, NULL));
    CHECK(kiln_gl_object_sharing(NULL) == 0 && kiln_gl_object_size(NULL) == 0);
    kiln_gl_object_release(NULL);

    /* an object of another kiln context than the queue's */
    kiln_context *other;
    kiln_device *dev = kiln_queue_device(q);
    if (kiln_context_create(&dev, 1, &other) == KILN_OK) {
        GLuint name;
        uint32_t z[4] = { 0 };
        glGenBuffers(1, &name);
        glBindBuffer(GL_ARRAY_BUFFER, name);
        glBufferData(GL_ARRAY_BUFFER, sizeof z, z, GL_STATIC_DRAW);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        kiln_gl_object *x = NULL;
        CHECK_OK(kiln_gl_buffer_create(other, name, &x));
        CHECK_STATUS(kiln_gl_acquire(q, 1, &x, 0, NULL, NULL), KILN_ERROR_MISMATCH);
        /* released while acquired: no leak, no crash */
        kiln_queue *oq;
        if (x && kiln_queue_create(other, dev, 0, &oq) == KILN_OK) {
            CHECK_OK(kiln_gl_acquire(oq, 1, &x, 0, NULL, NULL));
            kiln_queue_finish(oq);
            kiln_queue_release(oq);
        }
        kiln_gl_object_release(x);
        glDeleteBuffers(1, &name);
        kiln_context_release(other);
    }
}

static void each(kiln_context *ctx, kiln_device *dev, const char *what) {
    kiln_queue *q;
    kiln_program *prog;
    if (kiln_queue_create(ctx, dev, 0, &q) != KILN_OK) {
        CHECK_MSG(0, "queue: %s", kiln_last_error_message());
        return;
    }
    printf(" %s\n", what);
    if (kiln_program_create(ctx, source, NULL, &prog) == KILN_OK) {
        size_t sizes[] = { 1, 61, 4099, 100003 };
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            check_buffer(q, prog, sizes[i]);
        check_texture(q, prog, GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, 37, 19);
        check_texture(q, prog, GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, 1, 1);
        check_texture(q, prog, GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, 257, 3);
        check_texture(q, prog, GL_R32F, GL_RED, GL_FLOAT, 4, 129, 5);
        check_texture(q, prog, GL_RGBA32F, GL_RGBA, GL_FLOAT, 16, 7, 11);
        check_two(q, prog);
        check_bad_input(q);
        kiln_program_release(prog);
    } else
        CHECK_MSG(0, "program: %s", kiln_last_error_message());
    kiln_queue_release(q);
}

static void on_device(kiln_queue *queue, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(queue);
    each(kiln_queue_context(queue), dev, "an ordinary kiln context:");
    kiln_context *ctx = NULL;
    CHECK_OK(kiln_gl_context_create(dev, &ctx));
    if (ctx) {
        each(ctx, dev, "a context of kiln_gl_context_create:");
        kiln_context_release(ctx);
    }
}

/* The example, as a user runs it; it checks itself against a serial
 * loop. env: NULL or "VAR=value". */
static void check_example(const char *env) {
    char dir[] = "/tmp/kiln-test-gl-XXXXXX", cmd[1024], out[4096] = "";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    snprintf(cmd, sizeof cmd, "%s %s %s/mask.png 300 2>&1", env ? env : "", KILN_GL_EXAMPLE, dir);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int rc = p ? pclose(p) : -1;
    printf("%s\n", out);
    CHECK_MSG(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "%s: exit status %d", cmd,
              WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    CHECK_MSG(strstr(out, "check:    OK") != NULL, "%s said no OK", cmd);
    if (env)
        CHECK(strstr(out, "sharing:  host copies") != NULL);
    char png[600];
    snprintf(png, sizeof png, "%s/mask.png", dir);
    FILE *f = fopen(png, "rb");
    unsigned char h[24] = { 0 };
    CHECK_MSG(f && fread(h, 1, 24, f) == 24, "%s: not written", png);
    if (f)
        fclose(f);
    CHECK(memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(h + 12, "IHDR", 4) == 0);
    CHECK(h[16] == 0 && h[17] == 0 && h[18] == 0x01 && h[19] == 0x2C); /* width 300 */
    CHECK(h[20] == 0 && h[21] == 0 && h[22] == 0x01 && h[23] == 0x2C); /* height 300 */
    remove(png);
    rmdir(dir);
}

int main(void) {
    kiln_gl_headless *gl;
    if (kiln_gl_headless_create(&gl) != KILN_OK)
        KT_SKIP("no headless OpenGL context: %s", kiln_gl_last_error_message());
    printf("GL: %s\n", kiln_gl_headless_describe(gl));
    /* without a current context: a clear error, not a crash */
    kiln_context *ctx = NULL;
    kiln_device *dev = NULL;
    if (kiln_device_select(NULL, &dev) == KILN_OK &&
        kiln_context_create(&dev, 1, &ctx) == KILN_OK) {
        kiln_gl_headless_destroy(gl);
        kiln_gl_object *o = NULL;
        CHECK_STATUS(kiln_gl_buffer_create(ctx, 1, &o), KILN_ERROR_NO_RUNTIME);
        CHECK(strstr(kiln_gl_last_error_message(), "no OpenGL context is current") != NULL);
        kiln_context_release(ctx);
        CHECK_OK(kiln_gl_headless_create(&gl));
    }
    kt_for_each_device(on_device, NULL);
    kiln_gl_headless_destroy(gl);
    check_example(NULL);
    check_example("KILN_GL_SHARING=host");
    return kt_report();
}
