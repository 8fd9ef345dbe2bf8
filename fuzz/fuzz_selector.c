/* The device selector (kiln_device_select, $KILN_DEVICE): "opencl:0:1",
 * "cuda:0", "gpu", "cpu", a name fragment, "all"... any string gives a
 * device or a clear error, never a crash. Needs the OpenCL runtime. */
#include "fuzz_util.h"
#include "kiln.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *sel = fz_string(data, size);
    kiln_device *dev = (kiln_device *)1;
    kiln_status st = kiln_device_select(*sel ? sel : "x", &dev);
    if ((st == KILN_OK) != (dev != NULL))
        abort();
    if (st != KILN_OK && !kiln_last_error_message()[0])
        abort(); /* every refusal says why */
    free(sel);
    return 0;
}
