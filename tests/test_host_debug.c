/* KILN_HOST_DEBUG=1 on the host backend (issue 45, item 5): kernels built
 * with -g -O0 and, in a process under AddressSanitizer, instrumented too, so
 * an out-of-bounds write in a kernel is reported like one in the caller's
 * code. A child process (forked before any kiln call) builds a kernel on
 * host:0 with KILN_HOST_DEBUG=1, checks an in-bounds launch against a serial
 * loop at awkward sizes, then launches one work-item past the end of a
 * 16-float buffer; the parent reads the child's stderr and checks that
 * AddressSanitizer reported a heap-buffer-overflow WRITE of size 4 there
 * in the kernel's own line (kernel.c:3) and that the child died of it; the
 * second run of the test loads the kernel from the disk cache, whose object
 * is kept for the symbolizer too. Exits 77 where the process has no
 * AddressSanitizer (a build without KILN_SANITIZE) or there is no host
 * device (no C compiler). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kiln.h"

#if defined(__SANITIZE_ADDRESS__)
#define KT_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KT_HAVE_ASAN 1
#endif
#endif

#ifdef KT_HAVE_ASAN
static const char *src = "KILN_KERNEL void put(KILN_GLOBAL float *p, float v) {\n"
                         "    size_t i = kiln_global_id(0);\n"
                         "    p[i] = v + (float)i;\n"
                         "}\n";

/* The child: 0 when the in-bounds launches were right (it should not get
 * to return after the out-of-bounds one), 77 without a host device, 3 on a
 * wrong in-bounds result, 4 on a kiln error. */
static int child(void) {
    kiln_queue *q = NULL;
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    if (kiln_queue_create_default("host:0", 0, &q) != KILN_OK) {
        fprintf(stderr, "no host device: %s\n", kiln_last_error_message());
        return 77;
    }
    kiln_context *c = kiln_queue_context(q);
    if (kiln_program_create(c, src, NULL, &p) != KILN_OK ||
        kiln_kernel_create(p, "put", &k) != KILN_OK) {
        fprintf(stderr, "build: %s\n", kiln_last_error_message());
        return 4;
    }
    static const size_t sizes[] = { 1, 2, 16, 17, 31, 257, 65537 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        kiln_buffer *b = NULL;
        float *h = malloc(n * sizeof *h);
        if (!h || kiln_buffer_create(c, n * sizeof *h, 0, NULL, &b) != KILN_OK)
            return 4;
        kiln_arg a[] = { KILN_ARG_BUF(b), KILN_ARG_F32(0.5f) };
        if (kiln_kernel_launch(q, k, 1, &n, NULL, 2, a, 0, NULL, NULL) != KILN_OK ||
            kiln_buffer_read(q, b, 0, n * sizeof *h, h) != KILN_OK) {
            fprintf(stderr, "launch: %s\n", kiln_last_error_message());
            return 4;
        }
        for (size_t i = 0; i < n; i++)
            if (h[i] != 0.5f + (float)i) {
                fprintf(stderr, "n = %zu: p[%zu] = %g, want %g\n", n, i, h[i], 0.5f + (float)i);
                return 3;
            }
        free(h);
        kiln_buffer_release(b);
    }
    fprintf(stderr, "in-bounds launches right\n");
    fflush(stderr);
    /* one work-item past the end of 16 floats (64 bytes: the allocation's
     * end, AddressSanitizer's red zone right after it) */
    kiln_buffer *b = NULL;
    size_t n = 17;
    if (kiln_buffer_create(c, 16 * sizeof(float), 0, NULL, &b) != KILN_OK)
        return 4;
    kiln_arg a[] = { KILN_ARG_BUF(b), KILN_ARG_F32(1.0f) };
    if (kiln_kernel_launch(q, k, 1, &n, NULL, 2, a, 0, NULL, NULL) != KILN_OK ||
        kiln_queue_finish(q) != KILN_OK)
        return 4;
    fprintf(stderr, "the out-of-bounds launch ended unreported\n");
    KT_RELEASE(b, k, p, q);
    return 0;
}
#endif

int main(void) {
#ifndef KT_HAVE_ASAN
    KT_SKIP("this build has no AddressSanitizer (configure with -DKILN_SANITIZE=ON)");
#else
    setenv("KILN_HOST_DEBUG", "1", 1);
    int fds[2];
    if (pipe(fds) != 0)
        KT_SKIP("pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        KT_SKIP("fork failed");
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        close(fds[1]);
        _exit(child());
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap + 1);
    ssize_t r;
    while (out && (r = read(fds[0], out + len, cap - len)) > 0) {
        len += (size_t)r;
        if (len == cap) {
            char *bigger = realloc(out, 2 * cap + 1);
            if (!bigger)
                break;
            out = bigger;
            cap *= 2;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (!out)
        KT_SKIP("out of memory");
    out[len] = 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("child exit %d; its stderr:\n%s\n", code, out);
    if (code == 77)
        KT_SKIP("no host device");
    CHECK_MSG(strstr(out, "in-bounds launches right") != NULL,
              "the in-bounds launches (sizes 1 ... 65537) were wrong or failed (child exit %d)",
              code);
    CHECK_MSG(strstr(out, "ERROR: AddressSanitizer: heap-buffer-overflow") != NULL,
              "no AddressSanitizer report of the kernel's out-of-bounds write");
    CHECK(strstr(out, "WRITE of size 4") != NULL);
    /* the report's first frame is the kernel at the user's line (its
     * source's third line: p[i] = ...), symbolized from the kept object */
    CHECK_MSG(strstr(out, "#0 ") && strstr(out, " in put ") && strstr(out, "kernel.c:3"),
              "the report does not name the kernel put at kernel.c:3");
    CHECK(strstr(out, "the out-of-bounds launch ended unreported") == NULL);
    CHECK_MSG(code != 0, "the child exited 0 after the out-of-bounds write");
    free(out);
    return kt_report();
#endif
}
