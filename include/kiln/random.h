/* kiln random numbers: counter-based generators (Random123).
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * A kiln_rng is a host-side state: (algorithm, seed, substream, offset).
 * It belongs to no context: one generator can fill arrays on any queue,
 * and the numbers do not depend on the device, backend or launch shape.
 *
 * The stream. Every (algorithm, seed, substream) is a sequence of 32-bit
 * words; word w is word w % 4 of the block the generator gives for counter
 * (w / 4, substream) and key seed (see kiln_rng_kernel_source for the exact
 * packing). A fill of n elements that needs k words per element reads
 * words offset + k*i .. offset + k*i + k-1 for element i, and then
 * advances the offset by k*n (like cuRAND's host generators, which count
 * offsets in values; PyTorch rounds its Philox offset up to a multiple of
 * 4, kiln does not, so a fill in ragged pieces gives the same numbers as
 * one fill of the whole). k: uniform float32 1, float64 2; normal float32
 * 1, float64 2; integers int32/uint32 1, int64 2.
 *
 * Distributions (docs/algorithms.md, "Random numbers"):
 *  - uniform float32: (w >> 8) * 2^-24, in [0, 1), 2^24 equally likely
 *    values; float64: (w64 >> 11) * 2^-53 (w64 = low word | high word << 32),
 *    in [0, 1). Bit-identical everywhere.
 *  - normal: Box-Muller, both branches: the words at stream positions 2m,
 *    2m+1 (float64: 4m..4m+3) are a pair (u1 in (0, 1], u2 in [0, 1));
 *    the element at the pair's first position gets mean + stddev *
 *    sqrt(-2 ln u1) * cos(2 pi u2), the one at its second position the
 *    same with sin. Ragged pieces give the same bits as one fill on one
 *    device. Uses the device's log, sqrt and sincos (float64: cospi,
 *    sinpi), so not bit-identical across devices:
 *    tested within 1e-5 * (1 + |x|) (float32) and 1e-12 * (1 + |x|)
 *    (float64) of a double host transform of the same words.
 *  - integers in [low, high): Lemire's multiply-and-reject, no modulo bias;
 *    int32 / uint32 from one word, int64 from two; a rejected candidate is
 *    replaced from a side stream that depends only on the element's word
 *    index. Bit-identical everywhere.
 *
 * Every fill is asynchronous (docs/api.md rule 2): it reserves its range of
 * the stream at once (the offset advances before the work runs, so calls
 * from several threads get disjoint ranges) and returns. */
#ifndef KILN_RANDOM_H
#define KILN_RANDOM_H

typedef struct kiln_rng kiln_rng;

typedef enum kiln_rng_algorithm {
    KILN_RNG_PHILOX4X32_10 = 0, /* the default, as cuRAND's and PyTorch's */
    KILN_RNG_THREEFRY4X32_20 = 1,
    KILN_RNG_THREEFRY2X64_20 = 2
} kiln_rng_algorithm;

/* A descriptor (docs/api.md rule 7): make it with KILN_RNG_DESC(...). */
typedef struct kiln_rng_desc {
    size_t struct_size;           /* sizeof (set by KILN_RNG_DESC) */
    kiln_rng_algorithm algorithm; /* 0 = Philox4x32-10 */
    uint64_t seed;
    uint64_t substream; /* independent streams of one seed (per device,
                           per rank): the high half of the counter */
    uint64_t offset;    /* first word to use (in 32-bit words) */
} kiln_rng_desc;
#define KILN_RNG_DESC(...) ((kiln_rng_desc){ .struct_size = sizeof(kiln_rng_desc), __VA_ARGS__ })

/* A new generator. An unknown algorithm is KILN_ERROR_INVALID_ARGUMENT.
 * *rng is NULL on failure. */
KILN_API kiln_status kiln_rng_create(const kiln_rng_desc *desc, kiln_rng **rng);
/* A new generator with the same algorithm and seed, another substream and
 * offset 0. */
KILN_API kiln_status kiln_rng_substream_create(const kiln_rng *rng, uint64_t substream,
                                               kiln_rng **out);
KILN_API kiln_status kiln_rng_retain(kiln_rng *rng);
KILN_API void kiln_rng_release(kiln_rng *rng);

/* The offset (in 32-bit words) the next fill starts at. */
KILN_API kiln_status kiln_rng_get_offset(const kiln_rng *rng, uint64_t *offset);
KILN_API kiln_status kiln_rng_set_offset(kiln_rng *rng, uint64_t offset);
/* Advances the offset by words (a fill of n float32 uniforms is n words);
 * KILN_ERROR_OUT_OF_RANGE (nothing changed) if that would wrap. */
KILN_API kiln_status kiln_rng_skip_ahead(kiln_rng *rng, uint64_t words);

/* Fills every element of array (float32 or float64, any layout) with
 * uniform numbers in [0, 1). Another dtype is KILN_ERROR_INVALID_ARGUMENT;
 * a fill that would wrap the offset is KILN_ERROR_OUT_OF_RANGE. Returns at
 * once. */
KILN_API kiln_status kiln_rng_uniform(kiln_queue *queue, kiln_rng *rng, kiln_array *array,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Normal numbers with mean and stddev (float32 or float64). */
KILN_API kiln_status kiln_rng_normal(kiln_queue *queue, kiln_rng *rng, kiln_array *array,
                                     double mean, double stddev, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event);
/* Integers uniform in [low, high) (int32, uint32 or int64; the bounds must
 * fit the dtype). low >= high is KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_rng_integers(kiln_queue *queue, kiln_rng *rng, kiln_array *array,
                                       int64_t low, int64_t high, size_t num_wait,
                                       kiln_event *const *wait, kiln_event **event);

/* The raw generators on the host (Random123's, for references and tests):
 * counter and key in, words out. */
KILN_API void kiln_rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
KILN_API void kiln_rng_threefry4x32_20(const uint32_t ctr[4], const uint32_t key[4],
                                       uint32_t out[4]);
KILN_API void kiln_rng_threefry2x64_20(const uint64_t ctr[2], const uint64_t key[2],
                                       uint64_t out[2]);
/* Words offset .. offset+n-1 of (algorithm, seed, substream) on the host,
 * the stream the fills use. Unknown algorithm: KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_rng_words_host(kiln_rng_algorithm algorithm, uint64_t seed,
                                         uint64_t substream, uint64_t offset, size_t n,
                                         uint32_t *out);

/* The device functions (the raw generators, kiln_rng_block, and the
 * per-item helpers kiln_rand_uniform(seed, index), kiln_rand_normal,
 * kiln_rand_u32, kiln_rand_u32x4(seed, index, n)) as portable-dialect
 * text, to put before a user kernel's source. Generated kernels
 * (elementwise, reduction, scan) have them already. Owned by kiln. */
KILN_API const char *kiln_rng_kernel_source(void);

#endif /* KILN_RANDOM_H */
