/* Hash functions in the portable dialect. Put before every generated
 * kernel (gen_source.c, next to algo_random.cl), so every generator
 * expression can call them; user kernels get this text from
 * kiln_hash_kernel_source(). Integer-only: the same words on every device.
 *   kiln_hash_fmix32(h)           murmur3's 32-bit finaliser (a bijection)
 *   kiln_hash_fmix64(h)           murmur3's 64-bit finaliser
 *   kiln_hash_xxh32_u32(v, seed)  xxHash32 of the 4 bytes of v
 *   kiln_hash_xxh32_u64(v, seed)  xxHash32 of the 8 bytes of v, low word
 *                                 first (little-endian) */
#ifndef KILN_HASH_CL
#define KILN_HASH_CL

KILN_FUNC uint kiln_hash_fmix32(uint h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

KILN_FUNC kiln_uint64 kiln_hash_fmix64(kiln_uint64 h)
{
    h ^= h >> 33;
    h *= (kiln_uint64)0xff51afd7ed558ccdUL;
    h ^= h >> 33;
    h *= (kiln_uint64)0xc4ceb9fe1a85ec53UL;
    h ^= h >> 33;
    return h;
}

KILN_FUNC uint kiln__xxh32_rotl(uint x, int r)
{
    return (x << r) | (x >> (32 - r));
}

/* one 4-byte lane of xxHash32's tail */
KILN_FUNC uint kiln__xxh32_word(uint h, uint w)
{
    h += w * 0xC2B2AE3Du;
    return kiln__xxh32_rotl(h, 17) * 0x27D4EB2Fu;
}

KILN_FUNC uint kiln__xxh32_avalanche(uint h)
{
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    h *= 0xC2B2AE3Du;
    h ^= h >> 16;
    return h;
}

KILN_FUNC uint kiln_hash_xxh32_u32(uint v, uint seed)
{
    return kiln__xxh32_avalanche(
        kiln__xxh32_word(seed + 0x165667B1u + 4u, v));
}

KILN_FUNC uint kiln_hash_xxh32_u64(kiln_uint64 v, uint seed)
{
    uint h = kiln__xxh32_word(seed + 0x165667B1u + 8u, (uint)v);
    return kiln__xxh32_avalanche(kiln__xxh32_word(h, (uint)(v >> 32)));
}

#endif
