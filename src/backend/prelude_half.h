/* Shared by both preludes (spliced in by cmake/embed.cmake where a prelude
 * says @embed prelude_half.h); needs KILN_FUNC, ushort, uint, kiln_as_uint
 * and kiln_as_float. */
/* float16 without fp16 hardware (docs/dialect.md): half values travel as
 * their ushort bits and are computed in float. kiln_h2f is exact (normals,
 * subnormals, +-0, +-inf, NaN payload kept); kiln_f2h rounds to nearest
 * even, overflows to inf, gives subnormals, keeps NaN a (quiet) NaN. Pure
 * integer code: no cl_khr_fp16 and no cuda_fp16.h needed. */
KILN_FUNC float kiln_h2f(ushort h) {
    uint s = ((uint)h & 0x8000u) << 16, e = ((uint)h >> 10) & 0x1fu;
    uint m = (uint)h & 0x3ffu;
    if (e == 0x1fu) /* inf, NaN */
        return kiln_as_float(s | 0x7f800000u | (m << 13));
    if (e != 0)
        return kiln_as_float(s | ((e + 112u) << 23) | (m << 13));
    if (m == 0)
        return kiln_as_float(s);
    e = 113u; /* subnormal: normalise the mantissa */
    while (!(m & 0x400u)) {
        m <<= 1;
        e--;
    }
    return kiln_as_float(s | (e << 23) | ((m & 0x3ffu) << 13));
}
KILN_FUNC ushort kiln_f2h(float f) {
    uint x = kiln_as_uint(f);
    uint s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: keep the top payload bits, set quiet */
        return (ushort)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    /* CUDA GPUs convert in one instruction, rounding the same way (to
     * nearest even, overflow to inf, subnormals kept); the integer code
     * below made astype float32 -> float16 compute-bound (0.61x torch on
     * an H200) */
    unsigned short bits;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
    return (ushort)bits;
#else
    if (a >= 0x477ff000u) /* >= 65520 (and inf) round to inf */
        return (ushort)(s | 0x7c00u);
    if (a >= 0x38800000u) { /* normal half: rebias, round to nearest even */
        uint r = a - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u);
        return (ushort)(s | (r >> 13));
    }
    if (a <= 0x33000000u) /* <= 2^-25: rounds to (signed) zero */
        return (ushort)s;
    /* subnormal half: the float's significand shifted right by 14..24 */
    uint sh = 126u - (a >> 23), mm = (a & 0x7fffffu) | 0x800000u;
    uint q = mm >> sh, rem = mm & ((1u << sh) - 1u), hw = 1u << (sh - 1u);
    if (rem > hw || (rem == hw && (q & 1u)))
        q++;
    return (ushort)(s | q);
#endif
}
