/* Kernel text embedded by the build (cmake/embed.cmake): algo's templates
 * (src/algo/kernels/) and each backend's prelude (src/backend/<name>/). */
#ifndef KILN_BASE_EMBEDDED_H
#define KILN_BASE_EMBEDDED_H
/* The text of the embedded file of that name (e.g. "prelude_opencl.h",
 * "algo_scan.cl"), NULL if absent. File names are unique over the
 * embedded folders. */
const char *kiln__embedded_file(const char *name);
#endif
