/* Generated source from user text: no expression is parsed by kiln (the
 * device compiler does that), but the text a user gives is scanned and
 * pasted: the offload code generator (parameter declarations, index names,
 * kernel name, body; src/algo/offload/offload_codegen.c), and the compiler-log
 * readers that map a failed build back to the user's lines
 * (src/core/buildlog.c, src/base/buildlog_quote.c).
 * Input: fields separated by 0x01: params, body, index names, name,
 * a compiler log; the first byte picks dims. */
#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    unsigned dims = 1 + data[0] % 3; /* kiln_offload_create refuses others first */
    char *f[5] = { "", "", NULL, NULL, "" }, *buf;
    size_t n = fz_fields(data + 1, size - 1, '\x01', f, 5, &buf);
    (void)n;
    kiln_offload_opts o = KILN_OFFLOAD_OPTS(.index_names = f[2] && *f[2] ? f[2] : NULL,
                                            .name = f[3] && *f[3] ? f[3] : NULL);
    char *source = NULL;
    kiln__gargs args;
    memset(&args, 0, sizeof args);
    if (kiln__offload_generate(f[0], f[1], dims, &o, &source, &args) == KILN_OK) {
        char where[320];
        const char *log = f[4] ? f[4] : "";
        char *mapped = kiln__build_log_map(source, 3, log, where, sizeof where);
        free(mapped);
        free(source);
        kiln__gargs_free(&args);
    }
    char line[512];
    kiln__quote_log_errors(f[4] ? f[4] : f[0], 4, line, sizeof line);
    free(buf);
    return 0;
}
