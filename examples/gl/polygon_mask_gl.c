/* polygon_mask_gl — the seeds' polygon mask computed by a kiln kernel
 * straight into an OpenGL texture (kiln_gl, docs/gl.md), drawn headless
 * by OpenGL into an offscreen framebuffer, read back, checked pixel by
 * pixel against a serial C loop, and written as a PNG.
 *
 * usage: polygon_mask_gl [OUT.png [SIDE [SELECTOR]]]  (device also from
 *        $KILN_DEVICE; $KILN_GL_SHARING=host forces copies through the host)
 *
 * The GL context is EGL's, without a window (kiln_gl_headless_create):
 * Mesa's llvmpipe in CI, NVIDIA's driver on a GPU machine. The kiln device
 * shares the texture through CUDA's graphics interop or cl_khr_gl_sharing
 * where its driver can; elsewhere (PoCL, the host backend, Mesa) acquire
 * and release copy through host memory. The line "sharing:" says which. */
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#include <kiln.h>
#include <kiln/gl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EDGES 24

static const char *source =
    "KILN_KERNEL void polygon_mask(KILN_GLOBAL const int *v, int edges, int width,\n"
    "                              int height, KILN_GLOBAL unsigned char *mask) {\n"
    "    int x = (int)kiln_global_id(0), y = (int)kiln_global_id(1);\n"
    "    if (x >= width || y >= height)\n"
    "        return;\n"
    "    int px = 2 * x + 1, py = 2 * y + 1, inside = 0;\n"
    "    for (int i = 0, j = edges - 1; i < edges; j = i++) {\n"
    "        int xi = v[2 * i], yi = v[2 * i + 1], xj = v[2 * j], yj = v[2 * j + 1];\n"
    "        if ((yi > py) != (yj > py)) {\n"
    "            int lhs = (px - xi) * (yj - yi), rhs = (py - yi) * (xj - xi);\n"
    "            if (yj > yi ? lhs < rhs : lhs > rhs)\n"
    "                inside ^= 1;\n"
    "        }\n"
    "    }\n"
    "    mask[y * width + x] = (unsigned char)(inside ? 255 : 0);\n"
    "}\n";

/* The reference: the same even-odd test, serially (doubled integer
 * coordinates: exact on every device). */
static void mask_serial(const int *v, int side, unsigned char *mask) {
    for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++) {
            int px = 2 * x + 1, py = 2 * y + 1, inside = 0;
            for (int i = 0, j = EDGES - 1; i < EDGES; j = i++) {
                int xi = v[2 * i], yi = v[2 * i + 1], xj = v[2 * j], yj = v[2 * j + 1];
                if ((yi > py) != (yj > py)) {
                    int lhs = (px - xi) * (yj - yi), rhs = (py - yi) * (xj - xi);
                    if (yj > yi ? lhs < rhs : lhs > rhs)
                        inside ^= 1;
                }
            }
            mask[y * side + x] = (unsigned char)(inside ? 255 : 0);
        }
}

/* A star-shaped polygon around the centre (xorshift64*, fixed seed). */
static void polygon(int side, int *v) {
    uint64_t s = 2014u * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < EDGES; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        double r = (0.3 + 0.7 * (double)((s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0) *
                   (side / 2 - 4);
        double a = 2.0 * 3.14159265358979323846 * (i + 0.5) / EDGES;
        v[2 * i] = 2 * (int)lround(side / 2 + r * cos(a));
        v[2 * i + 1] = 2 * (int)lround(side / 2 + r * sin(a));
    }
}

/* ------------------------------------------------ a small PNG writer:
 * RGBA8, zlib stream of stored (uncompressed) deflate blocks. */
static uint32_t crc_table[256];
static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}
static uint32_t crc(uint32_t c, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c;
}
static void put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}
static int chunk(FILE *f, const char *type, const unsigned char *data, size_t n) {
    unsigned char h[8];
    put32(h, (uint32_t)n);
    memcpy(h + 4, type, 4);
    uint32_t c = crc(0xFFFFFFFFu, h + 4, 4);
    if (n)
        c = crc(c, data, n);
    c ^= 0xFFFFFFFFu;
    unsigned char t[4];
    put32(t, c);
    return fwrite(h, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) &&
           fwrite(t, 1, 4, f) == 4;
}
static int write_png(const char *path, const unsigned char *rgba, int w, int h) {
    size_t row = (size_t)w * 4 + 1, raw = row * (size_t)h, blocks = (raw + 65534) / 65535;
    unsigned char *z = malloc(2 + raw + 5 * blocks + 4);
    if (!z)
        return 0;
    size_t o = 0, done = 0;
    uint32_t a = 1, b = 0; /* adler-32 */
    z[o++] = 0x78, z[o++] = 0x01;
    unsigned char *filtered = malloc(raw);
    if (!filtered) {
        free(z);
        return 0;
    }
    for (int y = 0; y < h; y++) {
        filtered[(size_t)y * row] = 0; /* filter: none */
        memcpy(filtered + (size_t)y * row + 1, rgba + (size_t)y * w * 4, (size_t)w * 4);
    }
    for (size_t i = 0; i < raw; i++)
        a = (a + filtered[i]) % 65521, b = (b + a) % 65521;
    while (done < raw) {
        size_t n = raw - done < 65535 ? raw - done : 65535;
        z[o++] = done + n == raw; /* BFINAL, BTYPE 00 */
        z[o++] = (unsigned char)n, z[o++] = (unsigned char)(n >> 8);
        z[o++] = (unsigned char)~n, z[o++] = (unsigned char)(~n >> 8);
        memcpy(z + o, filtered + done, n);
        o += n, done += n;
    }
    put32(z + o, (b << 16) | a);
    o += 4;
    free(filtered);
    unsigned char ihdr[13] = { 0 };
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8, ihdr[9] = 6; /* 8 bits, RGBA */
    FILE *f = fopen(path, "wb");
    crc_init();
    int ok = f && fwrite("\x89PNG\r\n\x1a\n", 1, 8, f) == 8 && chunk(f, "IHDR", ihdr, 13) &&
             chunk(f, "IDAT", z, o) && chunk(f, "IEND", NULL, 0);
    if (f && fclose(f) != 0)
        ok = 0;
    free(z);
    return ok;
}

/* ------------------------------------------------ drawing */

static const char *vertex_shader = "#version 110\n"
                                   "void main() {\n"
                                   "    gl_TexCoord[0] = gl_MultiTexCoord0;\n"
                                   "    gl_Position = gl_Vertex;\n"
                                   "}\n";
static const char *fragment_shader =
    "#version 110\n"
    "uniform sampler2D mask;\n"
    "void main() {\n"
    "    float m = texture2D(mask, gl_TexCoord[0].xy).r;\n"
    "    gl_FragColor = mix(vec4(0.125, 0.125, 0.25, 1.0), vec4(1.0, 0.5, 0.0, 1.0), m);\n"
    "}\n";
static const unsigned char outside_rgba[4] = { 32, 32, 64, 255 },
                           inside_rgba[4] = { 255, 128, 0, 255 };

static GLuint shader_program(void) {
    GLuint p = glCreateProgram();
    const char *src[2] = { vertex_shader, fragment_shader };
    GLenum kind[2] = { GL_VERTEX_SHADER, GL_FRAGMENT_SHADER };
    for (int i = 0; i < 2; i++) {
        GLuint s = glCreateShader(kind[i]);
        glShaderSource(s, 1, &src[i], NULL);
        glCompileShader(s);
        GLint ok = 0;
        glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
        if (!ok) {
            char log[1024];
            glGetShaderInfoLog(s, sizeof log, NULL, log);
            fprintf(stderr, "polygon_mask_gl: shader: %s\n", log);
            return 0;
        }
        glAttachShader(p, s);
        glDeleteShader(s);
    }
    glLinkProgram(p);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    return ok ? p : 0;
}

/* Draws texture over the whole side x side framebuffer (texture row 0 at
 * the framebuffer's row 0) and reads it back into rgba. */
static int draw(GLuint texture, int side, unsigned char *rgba) {
    GLuint fbo, target, prog = shader_program();
    if (!prog)
        return 0;
    glGenTextures(1, &target);
    glBindTexture(GL_TEXTURE_2D, target);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, side, side, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target, 0);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        return 0;
    glViewport(0, 0, side, side);
    glUseProgram(prog);
    glUniform1i(glGetUniformLocation(prog, "mask"), 0);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, texture);
    glBegin(GL_QUADS);
    glTexCoord2f(0, 0), glVertex2f(-1, -1);
    glTexCoord2f(1, 0), glVertex2f(1, -1);
    glTexCoord2f(1, 1), glVertex2f(1, 1);
    glTexCoord2f(0, 1), glVertex2f(-1, 1);
    glEnd();
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, side, side, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &target);
    glDeleteProgram(prog);
    return glGetError() == GL_NO_ERROR;
}

#define TRY(call)                                                                 \
    do {                                                                          \
        if ((call) != KILN_OK) {                                                  \
            fprintf(stderr, "polygon_mask_gl: %s%s\n", kiln_last_error_message(), \
                    kiln_gl_last_error_message());                                \
            return 1;                                                             \
        }                                                                         \
    } while (0)

int main(int argc, char **argv) {
    const char *out = argc > 1 ? argv[1] : "polygon_mask_gl.png";
    int side = argc > 2 ? atoi(argv[2]) : 1024;
    const char *selector = argc > 3 ? argv[3] : NULL;
    if (side < 8 || side > 8192) {
        fprintf(stderr, "polygon_mask_gl: SIDE %d is not in [8, 8192]\n", side);
        return 2;
    }
    kiln_gl_headless *gl;
    if (kiln_gl_headless_create(&gl) != KILN_OK) {
        fprintf(stderr, "polygon_mask_gl: %s\n", kiln_gl_last_error_message());
        return 77; /* no OpenGL here: nothing to show */
    }
    int v[2 * EDGES];
    polygon(side, v);
    size_t pixels = (size_t)side * (size_t)side;
    unsigned char *want = malloc(pixels), *rgba = malloc(pixels * 4);
    if (!want || !rgba)
        return 1;

    kiln_device *device;
    kiln_context *ctx;
    kiln_queue *q;
    kiln_device_info info;
    TRY(kiln_device_select(selector, &device));
    TRY(kiln_device_get_info(device, &info));
    TRY(kiln_gl_context_create(device, &ctx));
    char context_note[1024];
    snprintf(context_note, sizeof context_note, "%s", kiln_gl_last_error_message());
    TRY(kiln_queue_create(ctx, device, 0, &q));

    /* The GL texture the mask goes into: one byte a texel. */
    GLuint texture;
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, side, side, 0, GL_RED, GL_UNSIGNED_BYTE, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    kiln_gl_object *tex;
    TRY(kiln_gl_texture_create(ctx, GL_TEXTURE_2D, texture, 0, &tex));

    kiln_buffer *dv, *dmask;
    kiln_program *prog;
    kiln_kernel *k;
    kiln_event *acquired, *ran, *released;
    TRY(kiln_buffer_create(ctx, sizeof v, KILN_BUFFER_READ_ONLY, v, &dv));
    TRY(kiln_program_create(ctx, source, NULL, &prog));
    TRY(kiln_kernel_create(prog, "polygon_mask", &k));
    TRY(kiln_gl_acquire(q, 1, &tex, 0, NULL, &acquired));
    TRY(kiln_gl_object_get_buffer(tex, &dmask));
    kiln_arg args[] = { KILN_ARG_BUF(dv), KILN_ARG_I32(EDGES), KILN_ARG_I32(side),
                        KILN_ARG_I32(side), KILN_ARG_BUF(dmask) };
    size_t global[2] = { (size_t)side, (size_t)side };
    TRY(kiln_kernel_launch(q, k, 2, global, NULL, 5, args, 1, &acquired, &ran));
    TRY(kiln_gl_release(q, 1, &tex, 1, &ran, &released));
    TRY(kiln_gl_finish(1, &tex)); /* GL may use the texture from here on */

    int drawn = draw(texture, side, rgba);
    mask_serial(v, side, want);
    long bad = 0, inside = 0;
    for (size_t i = 0; drawn && i < pixels; i++) {
        const unsigned char *c = want[i] ? inside_rgba : outside_rgba;
        inside += want[i] != 0;
        for (int ch = 0; ch < 4; ch++)
            if (abs((int)rgba[4 * i + ch] - (int)c[ch]) > 1) {
                if (bad++ < 5)
                    fprintf(stderr, "pixel (x=%zu, y=%zu) channel %d: drawn %d, expected %d\n",
                            i % (size_t)side, i / (size_t)side, ch, rgba[4 * i + ch], c[ch]);
                break;
            }
    }
    int saved = drawn && write_png(out, rgba, side, side);
    printf("polygon_mask_gl: %dx%d mask, %ld pixels inside\n", side, side, inside);
    printf("  GL:       %s\n", kiln_gl_headless_describe(gl));
    printf("  device:   %s (%s)\n", info.name, info.id);
    printf("  sharing:  %s\n", kiln_gl_object_describe(tex));
    if (context_note[0])
        printf("  context:  %s\n", context_note);
    printf("  picture:  %s%s\n", out, saved ? "" : " NOT WRITTEN");
    printf("  check:    %s\n", !drawn ? "GL drawing failed"
                               : bad  ? "MISMATCH with the serial loop"
                                      : "OK, every drawn pixel as the serial loop says");

    kiln_event_release(acquired);
    kiln_event_release(ran);
    kiln_event_release(released);
    kiln_gl_object_release(tex);
    kiln_kernel_release(k);
    kiln_program_release(prog);
    kiln_buffer_release(dv);
    kiln_queue_release(q);
    kiln_context_release(ctx);
    glDeleteTextures(1, &texture);
    kiln_gl_headless_destroy(gl);
    free(want);
    free(rgba);
    return drawn && saved && !bad ? 0 : 1;
}
