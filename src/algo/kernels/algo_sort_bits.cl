/* The order bits of a sort key (src/algo/sort.c puts this before the
 * sort templates). Defined before it: KILN_KEY_BYTES, KILN_KEY_T (the
 * key's storage, the unsigned type of its width), kiln_uk_t (uint or
 * ulong). */

#define KILN_SIGN ((kiln_uk_t)1 << (KILN_KEY_BYTES * 8 - 1))
#define KILN_ALL (KILN_SIGN | (KILN_SIGN - 1))
#if KILN_KEY_BYTES == 2
#define KILN_INF_BITS 0x7c00u
#elif KILN_KEY_BYTES == 4
#define KILN_INF_BITS 0x7f800000u
#else
#define KILN_INF_BITS 0x7ff0000000000000ul
#endif

/* The key's order bits: unsigned order equals the sort order. kind 0
 * unsigned, 1 signed (sign bit flipped), 2 IEEE float (negatives flipped
 * whole, positives get the sign bit: -0 before +0; every NaN becomes all
 * ones, after +inf, in either direction). desc reverses all but NaN. */
KILN_FUNC kiln_uk_t kiln_sort_bits(KILN_KEY_T k, int kind, int desc)
{
    kiln_uk_t u = (kiln_uk_t)k;
    if (kind == 2) {
#if KILN_KEY_BYTES > 1
        if ((u & ~KILN_SIGN) > (kiln_uk_t)KILN_INF_BITS)
            return KILN_ALL;
#endif
        u = (u & KILN_SIGN) ? (~u & KILN_ALL) : (u | KILN_SIGN);
    } else if (kind == 1) {
        u ^= KILN_SIGN;
    }
    return desc ? (~u & KILN_ALL) : u;
}

/* What integer keys' order bits xor their own: the sign bit for signed
 * keys, every bit descending (kind 1 / desc above). A digit of the order
 * bits is then the key's digit xor'ed with this one's, which lets the
 * onesweep histograms count the keys' own digits. 0 for floats, whose
 * order bits are no constant xor. */
KILN_FUNC kiln_uk_t kiln_sort_xkey(int kind, int desc)
{
    if (kind == 2)
        return 0;
    return (kind ? KILN_SIGN : (kiln_uk_t)0) ^ (desc ? KILN_ALL : (kiln_uk_t)0);
}

/* The same bits by masks and selects, without branches on kind and desc
 * (uniform, but branched on per key): the CUDA onesweep pass takes this
 * form for 4-byte keys alone or with 8-byte values (KILN_OS_FORM4): with
 * it and the pass's 32-bit bounds NVRTC's code sorted faster (H200, 2^28
 * int32 keys, a 3-blocks register cap: 7.73 ms against 8.09). The same two
 * changes in the OpenCL C pass made NVIDIA's OpenCL slower (8.6 ms against
 * 7.5), so the OpenCL C kernels keep kiln_sort_bits. */
KILN_FUNC kiln_uk_t kiln_sort_bits_sel(KILN_KEY_T k, int kind, int desc)
{
    kiln_uk_t u = (kiln_uk_t)k;
    kiln_uk_t neg = ((kiln_uk_t)0 - (u >> (KILN_KEY_BYTES * 8 - 1))) & KILN_ALL;
    kiln_uk_t flip = (kind == 2 ? neg : (kiln_uk_t)0) | (kind ? KILN_SIGN : (kiln_uk_t)0);
    u ^= flip ^ (desc ? KILN_ALL : (kiln_uk_t)0);
#if KILN_KEY_BYTES > 1
    u = kind == 2 && ((kiln_uk_t)k & ~KILN_SIGN) > (kiln_uk_t)KILN_INF_BITS ? KILN_ALL : u;
#endif
    return u;
}
