/* The backend registry (see registry.h): one line per backend. */
#include "backend/registry.h"

extern const kiln__backend kiln__backend_opencl;
#if KILN_HAVE_CUDA
extern const kiln__backend kiln__backend_cuda;
#endif

static const kiln__backend *const kiln__backends[] = {
    &kiln__backend_opencl,
#if KILN_HAVE_CUDA
    &kiln__backend_cuda,
#endif
};

const kiln__backend *const *kiln__backend_registry(size_t *count) {
    *count = sizeof kiln__backends / sizeof kiln__backends[0];
    return kiln__backends;
}
