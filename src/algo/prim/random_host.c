/* The raw generators on the host: the same text as the device functions
 * (kernels/algo_random.cl, compiled here as C, so one text is checked
 * against Random123's known answers on both sides), the stream words the
 * fills use, and that text for user kernels. */
#include <stdint.h>

#include "base/embedded.h"
#include "base/error.h"
#include "kiln.h"

typedef uint32_t uint;
typedef uint64_t kiln_uint64;
#define KILN_FUNC static inline
#define KILN_RANDOM_HOST 1
/* the public host functions below take these names */
#define kiln_rng_philox4x32_10 kiln__dev_philox4x32_10
#define kiln_rng_threefry4x32_20 kiln__dev_threefry4x32_20
#define kiln_rng_threefry2x64_20 kiln__dev_threefry2x64_20
#include "algo/kernels/algo_random.cl"
#undef kiln_rng_philox4x32_10
#undef kiln_rng_threefry4x32_20
#undef kiln_rng_threefry2x64_20

void kiln_rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    kiln_u32x4 r = kiln__dev_philox4x32_10(kiln_make_u32x4(ctr[0], ctr[1], ctr[2], ctr[3]),
                                           kiln_make_u32x2(key[0], key[1]));
    out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}

void kiln_rng_threefry4x32_20(const uint32_t ctr[4], const uint32_t key[4], uint32_t out[4]) {
    kiln_u32x4 r = kiln__dev_threefry4x32_20(kiln_make_u32x4(ctr[0], ctr[1], ctr[2], ctr[3]),
                                             kiln_make_u32x4(key[0], key[1], key[2], key[3]));
    out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}

void kiln_rng_threefry2x64_20(const uint64_t ctr[2], const uint64_t key[2], uint64_t out[2]) {
    kiln_u64x2 r =
        kiln__dev_threefry2x64_20(kiln_make_u64x2(ctr[0], ctr[1]), kiln_make_u64x2(key[0], key[1]));
    out[0] = r.x, out[1] = r.y;
}

kiln_status kiln_rng_words_host(kiln_rng_algorithm algorithm, uint64_t seed, uint64_t substream,
                                uint64_t offset, size_t n, uint32_t *out) {
    if ((unsigned)algorithm > KILN_RNG_THREEFRY2X64_20)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_rng_words_host: unknown algorithm %d", (int)algorithm);
    if (n && !out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_rng_words_host: out is NULL");
    if (n && offset + (n - 1) < offset)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_rng_words_host: the words wrap the "
                               "counter");
    for (size_t i = 0; i < n; i++)
        kiln_rng_words((int)algorithm, seed, substream, offset + i, 1, &out[i]);
    return KILN_OK;
}

const char *kiln_rng_kernel_source(void) {
    const char *t = kiln__embedded_file("algo_random.cl");
    return t ? t : "";
}
