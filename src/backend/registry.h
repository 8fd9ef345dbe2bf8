/* The backend registry: the list of compiled-in backends, in the order
 * kiln_device_get lists their devices. Core reads it; it is the one place
 * outside src/backend/<name>/ that names a backend (src/backend/registry.c).
 * Adding a backend is a folder plus one line there (docs/architecture.md). */
#ifndef KILN_BACKEND_REGISTRY_H
#define KILN_BACKEND_REGISTRY_H

#include <stddef.h>

#include "backend/backend.h"

/* The backends compiled in, in registry order; *count gets their number. */
const kiln__backend *const *kiln__backend_registry(size_t *count);

#endif
