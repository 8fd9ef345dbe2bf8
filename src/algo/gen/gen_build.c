/* Builds of generated sources, and the error text of a failed build: the
 * generator, the user's expressions and the compiler's first complaints. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/generator.h"
#include "base/buildlog_quote.h"
#include "base/error.h"

void (*kiln__gen_source_hook)(const char *source, unsigned languages);

/* 1 if source uses the word `half` and a device of context has no half
 * arithmetic: the likely cause of a failed build, worth saying. */
static int word_char(char c) {
    return isalnum((unsigned char)c) || c == '_';
}

/* 1 if source names `half` outside comments (the half prelude's comments
 * say "half" in every generated source, so the note came with every
 * failed build; issue 41). */
static int uses_half(const char *p) {
    const char *start = p;
    while (*p) {
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
        } else if (word_char(*p)) {
            const char *w = p;
            while (word_char(*p))
                p++;
            if (p - w == 4 && !memcmp(w, "half", 4) && (w == start || !word_char(w[-1])))
                return 1;
        } else {
            p++;
        }
    }
    return 0;
}

static int needs_half(kiln_context *context, const char *source) {
    if (!uses_half(source))
        return 0;
    for (size_t k = 0; k < kiln_context_num_devices(context); k++) {
        kiln_device_info info;
        if (kiln_device_get_info(kiln_context_device(context, k), &info) == KILN_OK && !info.fp16)
            return 1;
    }
    return 0;
}

/* Runs the source's kiln_size_probe kernel on the context's first device:
 * the device's sizeof of the checked type, or 0 if that cannot be learnt.
 * The probe is the source up to its size check only, built with
 * KILN_SIZE_PROBE: the kernels after it may fail to build for the very
 * reason the size is wrong (a tile of the declared size that does not fit
 * in local memory, as ptxas said on an H100). */
static size_t probe_size(kiln_context *context, const char *source) {
    static const char define[] = "#define KILN_SIZE_PROBE 1\n";
    const char *mark = strstr(source, "// kiln_size_check: ");
    const char *end = mark ? strstr(mark, "#endif\n") : NULL;
    if (!end)
        return 0;
    size_t len = (size_t)(end + strlen("#endif\n") - source);
    char *probe = kiln__malloc(sizeof define + len);
    if (!probe)
        return 0;
    memcpy(probe, define, sizeof define - 1);
    memcpy(probe + sizeof define - 1, source, len);
    probe[sizeof define - 1 + len] = '\0';
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_queue *q = NULL;
    kiln_buffer *b = NULL;
    uint64_t size = 0;
    size_t one = 1;
    if (kiln_program_create(context, probe, NULL, &p) == KILN_OK &&
        kiln_kernel_create(p, "kiln_size_probe", &k) == KILN_OK &&
        kiln_queue_create(context, kiln_context_device(context, 0), 0, &q) == KILN_OK &&
        kiln_buffer_create(context, sizeof size, 0, NULL, &b) == KILN_OK) {
        kiln_arg arg = KILN_ARG_BUF(b);
        if (kiln_kernel_launch(q, k, 1, &one, NULL, 1, &arg, 0, NULL, NULL) != KILN_OK ||
            kiln_buffer_read(q, b, 0, sizeof size, &size) != KILN_OK)
            size = 0;
    }
    kiln_buffer_release(b);
    kiln_queue_release(q);
    kiln_kernel_release(k);
    kiln_program_release(p);
    free(probe);
    return (size_t)size;
}

/* A build that failed at the check kiln__gen_size_check emitted: the
 * declared size (out_size, scan_size) is not the device's sizeof. Returns
 * KILN_ERROR_INVALID_ARGUMENT naming both, or KILN_OK if that was not the
 * cause (the probe builds too only when the rest of the source is fine). */
static kiln_status size_mismatch(kiln_context *context, const char *source, const char *what) {
    const char *mark = strstr(source, "// kiln_size_check: ");
    if (!mark)
        return KILN_OK;
    mark += strlen("// kiln_size_check: ");
    char type[256], field[32];
    size_t declared = 0;
    const char *bar = strchr(mark, '|');
    if (!bar || (size_t)(bar - mark) >= sizeof type ||
        sscanf(bar + 1, "%31[^|]|%zu", field, &declared) != 2)
        return KILN_OK;
    memcpy(type, mark, (size_t)(bar - mark));
    type[bar - mark] = '\0';
    size_t actual = probe_size(context, source);
    if (!actual || actual == declared)
        return KILN_OK;
    kiln_device_info info;
    if (kiln_device_get_info(kiln_context_device(context, 0), &info) != KILN_OK)
        info.id[0] = '\0';
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: %s is %zu, but sizeof(%s) is %zu on device %s; "
                           "set %s = sizeof(%s) (and declare the type alike on the "
                           "host and the device)",
                           what, field, declared, type, actual, info.id, field, type);
}

kiln_status kiln__gen_build(kiln_context *context, const char *source, unsigned languages,
                            const char *what, const char *user_text, const char *options,
                            kiln_program **program) {
    if (kiln__gen_source_hook)
        kiln__gen_source_hook(source, languages);
    kiln_program_opts opts = KILN_PROGRAM_OPTS(.build_options = options);
    kiln_status st = kiln_program_create(context, source, &opts, program);
    if (st != KILN_ERROR_BUILD)
        return st;
    /* A declared size that is not the device's sizeof can fail the build
     * at the size check or earlier in the kernels (a tile sized from it
     * that does not fit): any failure of a source with a size check is
     * worth a probe. The user keeps the original log and status. */
    if (strstr(source, "// kiln_size_check: ")) {
        char *log = kiln__strdup(kiln_last_build_log());
        long native = kiln_last_error_native();
        kiln_status mismatch = size_mismatch(context, source, what);
        if (log)
            kiln__error_set_build_log(log);
        free(log);
        if (mismatch != KILN_OK)
            return mismatch;
        kiln__error_set(KILN_ERROR_BUILD, native, "%s", "");
    }
    /* Quote the user's text and the compiler's first error lines. */
    char first[1024];
    kiln__quote_log_errors(kiln_last_build_log(), 4, first, sizeof first);
    return kiln__error_set(KILN_ERROR_BUILD, kiln_last_error_native(),
                           "%s: the generated kernel for `%s` failed to "
                           "build: %s (full log: kiln_last_build_log())%s",
                           what, user_text ? user_text : "", first,
                           needs_half(context, source)
                               ? "; note: the type 'half' needs a device "
                                 "with half arithmetic (cl_khr_fp16), which "
                                 "this one lacks: declare float16 arrays "
                                 "'ushort *' and convert with kiln_h2f / "
                                 "kiln_f2h"
                               : "");
}
