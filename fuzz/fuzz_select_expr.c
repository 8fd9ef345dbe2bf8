/* The selection and list-builder generators' user text (issue 41, item
 * 14): a predicate, an output statement and a rejected-output statement,
 * as given to kiln_array_copy_if_out/partition/remove_if, kiln_select_create
 * and (output, through the same #line-wrapped pasting) kiln_allocate_create.
 * kiln parses none of it (the device compiler does), but pastes it into
 * generated source, builds the scan descriptor around it, and maps a
 * compiler log back to the user's lines. Invariants: no crash; each user
 * text appears verbatim in the source; the mapped log's "where" line, when
 * there is one, names one of the user's labels or kiln-generated.
 * Input: fields separated by 0x01: predicate, output, rejected (empty: none),
 * prologue, a compiler log. */
#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *f[5] = { "", "", "", "", "" }, *buf;
    fz_fields(data, size, '\x01', f, 5, &buf);
    kiln__sb pre = { 0 };
    kiln__sel_functions(&pre, *f[3] ? f[3] : NULL, f[0], size % 2, f[1], *f[2] ? f[2] : NULL);
    if (!pre.oom && pre.p) {
        for (int k = 0; k < 3; k++)
            if (*f[k] && !strstr(pre.p, f[k]))
                abort(); /* the user's text is pasted whole */
        kiln__sb out = { 0 };
        int modes[] = { KILN__SEL_USER, KILN__SEL_USER_REJ, KILN__SEL_STORE, KILN__SEL_STORE_TWO,
                        KILN__SEL_STORE_BACK };
        kiln_scan_desc d =
            kiln__sel_desc((int)(size % 3 == 0), modes[size % 5], pre.p, "fuzz_select", &out);
        if (!out.oom && (!d.output || d.output != out.p || d.preamble != pre.p))
            abort(); /* the descriptor carries the pasted text (its arguments are the caller's) */
        char where[320];
        char *mapped = kiln__build_log_map(pre.p, 2, f[4], where, sizeof where);
        if (mapped && where[0] && !strstr(where, "predicate") && !strstr(where, "output") &&
            !strstr(where, "rejected") && !strstr(where, "kiln-generated") && !strchr(where, ':'))
            abort();
        free(mapped);
        kiln__sb_free(&out);
    }
    kiln__sb_free(&pre);
    free(buf);
    return 0;
}
