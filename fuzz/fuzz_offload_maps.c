/* The offload map checks (src/algo/offload/offload_maps.c): a region's maps as
 * kiln_arg entries, checked by kiln_data_region_begin before anything is
 * allocated. Each 12 input bytes make one entry: kind, map kind, a host
 * pointer into a scratch block (or NULL) and a byte count. */
#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

static uint8_t scratch[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t n = size / 12;
    if (n > 64)
        n = 64;
    kiln_arg maps[64];
    memset(maps, 0, sizeof maps);
    for (size_t k = 0; k < n; k++) {
        const uint8_t *d = data + 12 * k;
        maps[k].kind = (kiln_arg_kind)(d[0] % 8);
        maps[k].map = (kiln_data_kind)((int8_t)d[1]);
        uint32_t off = (uint32_t)d[2] | (uint32_t)d[3] << 8;
        maps[k].value.host = d[4] & 1 ? NULL : scratch + (off % sizeof scratch);
        uint64_t bytes = 0;
        memcpy(&bytes, d + 4, 8);
        maps[k].bytes = (size_t)(bytes >> 8) & (d[4] & 2 ? SIZE_MAX : 0xffff);
    }
    int present_ok = size % 2;
    kiln_status st = kiln__check_region_maps("fuzz", n, maps, present_ok);
    if (st == KILN_OK) {
        /* Accepted: every entry is a map of a known kind and no two overlap. */
        for (size_t k = 0; k < n; k++) {
            if (maps[k].kind != KILN_ARG_MAP || (unsigned)maps[k].map > KILN_DATA_ALLOC)
                abort();
            for (size_t l = 0; l < k; l++)
                if (kiln__ranges_overlap((uintptr_t)maps[k].value.host, maps[k].bytes,
                                         (uintptr_t)maps[l].value.host, maps[l].bytes))
                    abort();
        }
    } else if (!kiln_last_error_message()[0]) {
        abort();
    }
    return 0;
}
