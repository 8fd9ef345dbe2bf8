/* Build-log line mapping (src/core/buildlog.c) on canned compiler logs: no
 * device needed. NVIDIA's OpenCL compiler ignores #line and counts lines
 * from the start of the prelude; PoCL and NVRTC honour #line (PoCL names a
 * temp file, NVRTC writes "file(N): error"). Whatever the compiler, the
 * mapped log must name the user's line (and a generator's label) and end
 * with the offending source line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

/* A prelude of 10 lines, the last one "#line 1", as the backends write. */
static const char prelude[] = "// kiln prelude line 1\n"
                              "#define KILN_KERNEL __kernel\n"
                              "#define KILN_GLOBAL __global\n"
                              "#define KILN_LOCAL __local\n"
                              "// 5\n"
                              "// 6\n"
                              "// 7\n"
                              "// 8\n"
                              "// 9\n"
                              "#line 1\n";
#define PRELUDE_LINES 10

static char *join(const char *user) {
    size_t n = strlen(prelude) + strlen(user) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", prelude, user);
    return s;
}

/* Maps log against prelude + user; returns the new log (caller frees). */
static char *map(const char *user, const char *log, char *where, size_t cap) {
    char *final = join(user);
    if (!final)
        return NULL;
    char *out = kiln__build_log_map(final, PRELUDE_LINES, log, where, cap);
    free(final);
    return out;
}

#define HAS(s, sub)                                                              \
    CHECK_MSG((s) && strstr((s), (sub)) != NULL, "wanted \"%s\" in:\n%s", (sub), \
              (s) ? (s) : "(null)")
#define LACKS(s, sub)                                                                  \
    CHECK_MSG((s) && strstr((s), (sub)) == NULL, "did not want \"%s\" in:\n%s", (sub), \
              (s) ? (s) : "(null)")

static const char small_src[] = "KILN_KERNEL void broken(KILN_GLOBAL int *x) {\n"
                                "    x[0] = undeclared_thing_42;\n"
                                "}\n";

static void t_nvidia_small(void) {
    char where[256];
    /* user line 2 is final line 12 */
    const char *log = "<kernel>:12:12: error: use of undeclared identifier 'undeclared_thing_42'\n"
                      "    x[0] = undeclared_thing_42;\n"
                      "           ^\n"
                      "\n"
                      "1 error generated.\n";
    char *m = map(small_src, log, where, sizeof where);
    /* the compiler's name for the source is replaced by kiln's ("source") */
    HAS(m, "source:2:12: error: use of undeclared identifier 'undeclared_thing_42'");
    LACKS(m, "<kernel>:");
    HAS(m, "1 error generated.");
    HAS(m, "ignores #line");
    HAS(m, "  source:2: x[0] = undeclared_thing_42;\n");
    CHECK_MSG(strcmp(where, "source:2: x[0] = undeclared_thing_42;") == 0, "where: %s", where);
    free(m);
}

/* A user source longer than the prelude: the line numbers alone fit both
 * readings; the compiler's quote of the line decides. */
static char *long_src(void) {
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    for (int i = 1; i <= 30; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                i == 15 ? "    int v15 = missing_fn(15);\n" : "    int v%d = %d;\n",
                                i, i);
    return s;
}

static void t_nvidia_long(void) {
    char where[256];
    char *src = long_src();
    CHECK(src != NULL);
    if (!src)
        return;
    /* user line 15 is final line 25 */
    const char *log = "<kernel>:25:15: error: implicit declaration of function 'missing_fn'\n"
                      "    int v15 = missing_fn(15);\n"
                      "              ^\n";
    char *m = map(src, log, where, sizeof where);
    HAS(m, "source:15:15: error: implicit declaration");
    CHECK_MSG(strcmp(where, "source:15: int v15 = missing_fn(15);") == 0, "where: %s", where);
    free(m);

    /* PoCL on the same source: honoured; only the temporary file's path is
     * replaced by the user's name */
    const char *pocl = "error: /root/.cache/pocl/kcache/tempfile_Q1UasZ.cl:15:15: implicit "
                       "declaration of function 'missing_fn'\n"
                       "    int v15 = missing_fn(15);\n"
                       "              ^\n"
                       "Device pthread failed to build the program\n";
    m = map(src, pocl, where, sizeof where);
    HAS(m, "error: source:15:15: implicit");
    LACKS(m, "tempfile");
    LACKS(m, "ignores #line");
    HAS(m, "  source:15: int v15 = missing_fn(15);\n");
    CHECK_MSG(strcmp(where, "source:15: int v15 = missing_fn(15);") == 0, "where: %s", where);
    KT_FREE(m, src);
}

static void t_pocl_small(void) {
    char where[256];
    const char *log = "error: /root/.cache/pocl/kcache/tempfile_Q1UasZ.cl:2:12: use of undeclared "
                      "identifier 'undeclared_thing_42'\n"
                      "Device pthread-haswell-AMD EPYC failed to build the program\n";
    char *m = map(small_src, log, where, sizeof where);
    /* the driver's temporary file is not quoted: the user's name only */
    HAS(m, "error: source:2:12: use of undeclared identifier 'undeclared_thing_42'\n"
           "Device pthread-haswell-AMD EPYC failed to build the program\n");
    LACKS(m, "tempfile");
    LACKS(m, "kcache");
    HAS(m, "  source:2: x[0] = undeclared_thing_42;\n");
    CHECK_MSG(strcmp(where, "source:2: x[0] = undeclared_thing_42;") == 0, "where: %s", where);
    free(m);
}

static void t_nvrtc_small(void) {
    char where[256];
    const char *log = "kiln.cu(2): error: identifier \"undeclared_thing_42\" is undefined\n"
                      "\n"
                      "1 error detected in the compilation of \"kiln.cu\".\n";
    char *m = map(small_src, log, where, sizeof where);
    HAS(m, "source(2): error: identifier \"undeclared_thing_42\" is undefined\n");
    HAS(m, "  source:2: x[0] = undeclared_thing_42;\n");
    CHECK_MSG(strcmp(where, "source:2: x[0] = undeclared_thing_42;") == 0, "where: %s", where);
    free(m);
}

/* A generator's source: its own #line directives with labels. */
static const char gen_src[] = "#define KILN_N 4\n"                             /* final 11 */
                              "#line 1 \"operation\"\n"                        /* 12 */
                              "z[i] = x[i] +* no_such_var\n"                   /* 13: operation:1 */
                              "#line 1 \"kiln-generated\"\n"                   /* 14 */
                              "KILN_KERNEL void bad(KILN_GLOBAL float *z) {\n" /* 15: gen:1 */
                              "  z[0] = oops;\n"                               /* 16: gen:2 */
                              "}\n"
                              "#line 1 \"reduce\"\n" /* 18 */
                              "a + + b;\n";          /* 19: reduce:1 */

static void t_generated(void) {
    char where[256];
    const char *nv = "<kernel>:13:16: error: use of undeclared identifier 'no_such_var'\n"
                     "z[i] = x[i] +* no_such_var\n"
                     "               ^\n"
                     "<kernel>:16:10: error: use of undeclared identifier 'oops'\n"
                     "  z[0] = oops;\n"
                     "         ^\n"
                     "<kernel>:19:8: error: unexpected ';' before ')'\n"
                     "3 errors generated.\n";
    char *m = map(gen_src, nv, where, sizeof where);
    HAS(m, "operation:1:16: error: use of undeclared identifier 'no_such_var'");
    HAS(m, "kiln-generated:2:10: error: use of undeclared identifier 'oops'");
    HAS(m, "reduce:1:8: error: unexpected ';'");
    LACKS(m, "<kernel>:");
    HAS(m, "  operation:1: z[i] = x[i] +* no_such_var\n");
    HAS(m, "  kiln-generated:2: z[0] = oops;\n");
    HAS(m, "  reduce:1: a + + b;\n");
    CHECK_MSG(strcmp(where, "operation:1: z[i] = x[i] +* no_such_var") == 0, "where: %s", where);
    free(m);

    const char *pocl = "error: operation:1:16: use of undeclared identifier 'no_such_var'\n"
                       "Device pthread failed to build the program\n";
    m = map(gen_src, pocl, where, sizeof where);
    CHECK(m && strncmp(m, pocl, strlen(pocl)) == 0);
    HAS(m, "  operation:1: z[i] = x[i] +* no_such_var\n");
    free(m);

    const char *nvrtc = "reduce(1): error: expected an expression\n"
                        "\n1 error detected in the compilation of \"kiln.cu\".\n";
    m = map(gen_src, nvrtc, where, sizeof where);
    CHECK(m && strncmp(m, nvrtc, strlen(nvrtc)) == 0);
    CHECK_MSG(strcmp(where, "reduce:1: a + + b;") == 0, "where: %s", where);
    free(m);
}

static void t_prelude_and_headers(void) {
    char where[256];
    /* NVIDIA: a warning in the prelude, an error in the user's line 2 */
    const char *nv = "<kernel>:3:9: warning: macro redefined\n"
                     "<kernel>:12:12: error: use of undeclared identifier 'undeclared_thing_42'\n"
                     "In file included from <kernel>:11:\n"
                     "/opt/include/thing.h:3:1: error: unknown type name 'foo'\n";
    char *m = map(small_src, nv, where, sizeof where);
    HAS(m, "kiln-prelude:3:9: warning: macro redefined");
    HAS(m, "source:2:12: error");
    HAS(m, "In file included from source:1:");
    HAS(m, "/opt/include/thing.h:3:1: error"); /* another file: untouched */
    CHECK_MSG(strcmp(where, "source:2: x[0] = undeclared_thing_42;") == 0, "where: %s", where);
    free(m);
}

static void t_degenerate(void) {
    char where[64] = "junk";
    /* no line references: the log unchanged, nothing appended */
    const char *log = "clBuildProgram failed: out of resources\n";
    char *m = map(small_src, log, where, sizeof where);
    CHECK(m && strcmp(m, log) == 0);
    CHECK(where[0] == 0);
    free(m);
    m = map(small_src, "", where, sizeof where);
    CHECK(m && strcmp(m, "") == 0);
    free(m);
    /* references past the end of the source: left alone */
    log = "<kernel>:999:1: error: what\n";
    m = map(small_src, log, where, sizeof where);
    CHECK(m && strncmp(m, log, strlen(log)) == 0);
    CHECK(where[0] == 0);
    free(m);
    /* a tiny where buffer is cut, not overrun */
    char tiny[8];
    m = map(small_src, "<kernel>:12:12: error: x\n", tiny, sizeof tiny);
    CHECK(strlen(tiny) == 7 && strncmp(tiny, "source:", 7) == 0);
    free(m);
    CHECK(kiln__build_log_map("x", 0, NULL, NULL, 0) == NULL);
    m = kiln__build_log_map(NULL, 0, "log", NULL, 0);
    CHECK(m && strcmp(m, "log") == 0);
    free(m);
    /* no prelude at all, source without a trailing newline */
    m = kiln__build_log_map("int a;\nint b = c;", 0, "<kernel>:2:9: error: c\n", where,
                            sizeof where);
    HAS(m, "source:2:9: error: c");
    CHECK_MSG(strcmp(where, "source:2: int b = c;") == 0, "where: %s", where);
    free(m);
}

/* Bare carriage returns end lines for the compiler (random bytes given to
 * `kiln cache build` have them): the map counts lines the same way, so the
 * error is the user's line 2, never the prelude's. */
static void t_carriage_returns(void) {
    char where[256];
    const char *log =
        "error: /root/.cache/pocl/kcache/tempfile_Q1UasZ.cl:1:1: unknown type name 'garbage'\n"
        "error: /root/.cache/pocl/kcache/tempfile_Q1UasZ.cl:2:5: expected ';'\n"
        "error: /root/.cache/pocl/kcache/tempfile_Q1UasZ.cl:3:1: expected ';'\n";
    char *m = map("garbage\rmore\r\nstuff\r x", log, where, sizeof where);
    HAS(m, "error: source:2:5: expected ';'");
    HAS(m, "  source:3: stuff\n");
    LACKS(m, "kiln-prelude");
    LACKS(m, "tempfile");
    CHECK_MSG(strcmp(where, "source:1: garbage") == 0, "where: %s", where);
    free(m);
}

int main(void) {
    KT_RUN_HOST_STEPS(t_carriage_returns, t_nvidia_small, t_nvidia_long, t_pocl_small,
                      t_nvrtc_small, t_generated, t_prelude_and_headers, t_degenerate);
    return kt_report();
}
