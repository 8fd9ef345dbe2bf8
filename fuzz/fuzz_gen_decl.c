/* The generators' argument declarations ("float a, const float *x") and
 * type names (src/algo/gen/gen_decl.c), as given to kiln_elementwise_create,
 * kiln_reduction_create and kiln_scan_create. */
#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *decl = fz_string(data, size);
    kiln__gargs args;
    memset(&args, 0, sizeof args);
    if (kiln__gargs_parse(decl, "fuzz", &args) == KILN_OK) {
        if (args.n == 0 || args.first_array >= args.n || !args.v[args.first_array].is_ptr)
            abort(); /* documented: at least one array argument */
        for (size_t k = 0; k < args.n; k++)
            (void)kiln__dtype_from_name(args.v[k].type);
        kiln__gargs_free(&args);
    }
    (void)kiln__dtype_from_name(decl);
    free(decl);
    return 0;
}
