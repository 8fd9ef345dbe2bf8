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
    /* Masks and selects, no branches: kind and desc are uniform, but a
     * branch on them per key kept NVRTC's onesweep pass in divergent-branch
     * blocks (BSSY/BSYNC) around every key's ranking. */
    kiln_uk_t u = (kiln_uk_t)k;
    kiln_uk_t neg = ((kiln_uk_t)0 - (u >> (KILN_KEY_BYTES * 8 - 1))) & KILN_ALL;
    kiln_uk_t flip = (kind == 2 ? neg : (kiln_uk_t)0) | (kind ? KILN_SIGN : (kiln_uk_t)0);
    u ^= flip ^ (desc ? KILN_ALL : (kiln_uk_t)0);
#if KILN_KEY_BYTES > 1
    u = kind == 2 && ((kiln_uk_t)k & ~KILN_SIGN) > (kiln_uk_t)KILN_INF_BITS ? KILN_ALL : u;
#endif
    return u;
}

/* The same bits with branches on kind and desc (the form before
 * 2026-11-27): the onesweep passes take it with KILN_SORT_OS_FORM bit 0
 * clear (algo_sort_onesweep.*, which form is faster depends on the
 * compiler's register allocation). */
KILN_FUNC kiln_uk_t kiln_sort_bits_br(KILN_KEY_T k, int kind, int desc)
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
