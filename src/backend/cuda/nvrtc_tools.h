/* The CUDA backend's functions that need no CUDA types and no GPU: the NVRTC
 * compile, the cubin check and the block choice. cuda_internal.h includes
 * this; the tests reach it through src/testing/kiln_test_internal.h. */
#ifndef KILN_BACKEND_CUDA_NVRTC_TOOLS_H
#define KILN_BACKEND_CUDA_NVRTC_TOOLS_H

#include <stddef.h>

#include "kiln.h"

/* NVRTC compile of one source for compute capability cc. On success the
 * binary (cubin, or PTX if NVRTC cannot target cc) is malloc'd in *binary,
 * *is_ptx says which; *log gets the log (malloc'd, maybe NULL). On a
 * compile error returns KILN_ERROR_BUILD with *log set. Usable without a
 * GPU (tests, benchmarks). */
kiln_status kiln__cuda_compile(const char *source, const char *options, unsigned cc, void **binary,
                               size_t *size, int *is_ptx, char **log);

/* 0 if p[0..n) looks like a loadable cubin (CUDA ELF whose header and
 * sections lie inside the data) or PTX text; else -1 and *why. */
int kiln__cuda_check_image(const unsigned char *p, size_t n, const char **why);
/* 1 once NVRTC is loaded (loading it if needed), 0 if it cannot be. */
int kiln__cuda_nvrtc_ready(void);

/* Block sizes for a launch without local sizes: per dimension the largest
 * divisor of global[d] within the budget. */
void kiln__cuda_pick_block(unsigned dims, const size_t *global, int max_threads,
                           const int *max_block, size_t *block);

#endif
