/* The backend registry (see registry.h): one line per backend, guarded by
 * KILN_HAVE_<NAME>, which the build defines for each backend it compiles
 * (kiln_add_backend in CMakeLists.txt). Order: kiln_device_at's. */
#include "backend/registry.h"

#define KILN__BACKEND(name) extern const kiln__backend kiln__backend_##name;
#if KILN_HAVE_OPENCL
KILN__BACKEND(opencl)
#endif
#if KILN_HAVE_CUDA
KILN__BACKEND(cuda)
#endif
#if KILN_HAVE_HOST
KILN__BACKEND(host)
#endif
#undef KILN__BACKEND

static const kiln__backend *const kiln__backends[] = {
#if KILN_HAVE_OPENCL
    &kiln__backend_opencl,
#endif
#if KILN_HAVE_CUDA
    &kiln__backend_cuda,
#endif
#if KILN_HAVE_HOST
    &kiln__backend_host,
#endif
    NULL, /* keeps the array non-empty */
};

const kiln__backend *const *kiln__backend_registry(size_t *count) {
    *count = sizeof kiln__backends / sizeof kiln__backends[0] - 1;
    return kiln__backends;
}
