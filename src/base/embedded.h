/* Kernel templates from src/kernels/, embedded by the build (cmake/embed.cmake). */
#ifndef KILN_BASE_EMBEDDED_H
#define KILN_BASE_EMBEDDED_H
/* The text of src/kernels/<name> (e.g. "prelude_opencl.h"), NULL if absent. */
const char *kiln__embedded_file(const char *name);
#endif
