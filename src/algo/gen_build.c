/* Builds of generated sources, and the error text of a failed build: the
 * generator, the user's expressions and the compiler's first complaints. */
#include <ctype.h>
#include <string.h>

#include "algo/generator.h"
#include "base/buildlog_quote.h"
#include "base/error.h"

void (*kiln__gen_source_hook)(const char *source, unsigned languages);

/* 1 if source uses the word `half` and a device of context has no half
 * arithmetic: the likely cause of a failed build, worth saying. */
static int needs_half(kiln_context *context, const char *source) {
    int used = 0;
    for (const char *p = source; !used && (p = strstr(p, "half")); p += 4)
        used = (p == source || !(isalnum((unsigned char)p[-1]) ||
                                 p[-1] == '_')) &&
               !(isalnum((unsigned char)p[4]) || p[4] == '_');
    if (!used)
        return 0;
    for (size_t k = 0; k < kiln_context_num_devices(context); k++) {
        kiln_device_info info;
        if (kiln_device_get_info(kiln_context_device(context, k), &info) ==
                KILN_OK &&
            !info.fp16)
            return 1;
    }
    return 0;
}

kiln_status kiln__gen_build(kiln_context *context, const char *source,
                            unsigned languages, const char *what,
                            const char *user_text, kiln_program **program) {
    if (kiln__gen_source_hook)
        kiln__gen_source_hook(source, languages);
    kiln_status st = kiln_program_create(context, source, NULL, program);
    if (st != KILN_ERROR_BUILD)
        return st;
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
