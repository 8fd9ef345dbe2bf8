/* The backend registry: the backends compiled in, in the order
 * kiln_device_at lists their devices. Core reads it and each backend's
 * table (selector prefix, priority, languages, prelude); registry.c is the
 * one place outside src/backend/<name>/ that names a backend. Adding one is
 * a folder, kiln_add_backend(<name>) in CMakeLists.txt and its line in
 * registry.c (docs/architecture.md). */
#ifndef KILN_BACKEND_REGISTRY_H
#define KILN_BACKEND_REGISTRY_H

#include <stddef.h>

#include "backend/backend.h"

/* The backends compiled in, in registry order; *count gets their number. */
const kiln__backend *const *kiln__backend_registry(size_t *count);

#endif
