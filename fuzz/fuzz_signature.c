/* The kernel-signature parser (src/core/signature.c) reads every program
 * source a user gives kiln_program_create. */
#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = fz_string(data, size);
    kiln__sig_list list;
    memset(&list, 0, sizeof list);
    if (kiln__sig_parse(src, &list) == KILN_OK) {
        for (size_t k = 0; k < list.count; k++) /* every kernel found can be looked up */
            if (kiln__sig_find(&list, list.sigs[k].name) == NULL)
                abort();
        kiln__sig_list_free(&list);
    }
    free(src);
    return 0;
}
