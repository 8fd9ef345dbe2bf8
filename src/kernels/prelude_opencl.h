/* kiln portable kernel dialect, OpenCL C side (docs/dialect.md).
 * Prepended by the core to every source built for an OpenCL device. Only
 * macros, typedefs and kiln_-prefixed functions: native OpenCL C still
 * compiles unchanged. */
#define KILN_BACKEND_OPENCL 1

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif

#define KILN_KERNEL __kernel
#define KILN_GLOBAL __global
#define KILN_CONSTANT __constant
#define KILN_LOCAL __local
#define KILN_RESTRICT restrict
/* A plain C99 "inline" emits no out-of-line copy, so an un-inlined call
 * (e.g. under -cl-opt-disable) fails to link; static is allowed from
 * OpenCL C 1.2 on. */
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 120
#define KILN_FUNC static inline
#else
#define KILN_FUNC inline __attribute__((always_inline))
#endif

typedef long kiln_int64;
typedef ulong kiln_uint64;

#define kiln_global_id(d) get_global_id(d)
#define kiln_local_id(d) get_local_id(d)
#define kiln_group_id(d) get_group_id(d)
#define kiln_global_size(d) get_global_size(d)
#define kiln_local_size(d) get_local_size(d)
#define kiln_num_groups(d) get_num_groups(d)

#define kiln_barrier() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define kiln_local_fence() mem_fence(CLK_LOCAL_MEM_FENCE)
#define kiln_global_fence() mem_fence(CLK_GLOBAL_MEM_FENCE)

/* Atomics on global memory; each returns the old value. */
KILN_FUNC int kiln_atomic_add_int(__global int *p, int v)
{
    return atomic_add((volatile __global int *)p, v);
}
KILN_FUNC uint kiln_atomic_add_uint(__global uint *p, uint v)
{
    return atomic_add((volatile __global uint *)p, v);
}
KILN_FUNC int kiln_atomic_min_int(__global int *p, int v)
{
    return atomic_min((volatile __global int *)p, v);
}
KILN_FUNC int kiln_atomic_max_int(__global int *p, int v)
{
    return atomic_max((volatile __global int *)p, v);
}
KILN_FUNC int kiln_atomic_cas_int(__global int *p, int cmp, int val)
{
    return atomic_cmpxchg((volatile __global int *)p, cmp, val);
}
/* No float atomics in OpenCL 1.2: a compare-and-swap loop on the bits. */
KILN_FUNC float kiln_atomic_add_float(__global float *p, float v)
{
    volatile __global uint *u = (volatile __global uint *)p;
    uint expected = *u;
    for (;;) {
        uint desired = as_uint(as_float(expected) + v);
        uint seen = atomic_cmpxchg(u, expected, desired);
        if (seen == expected)
            break;
        expected = seen;
    }
    return as_float(expected);
}
#ifdef cl_khr_int64_base_atomics
KILN_FUNC ulong kiln_atomic_add_ulong(__global ulong *p, ulong v)
{
    return atom_add((volatile __global ulong *)p, v);
}
#else
/* Makes a use on a device without 64-bit atomics fail with a clear name. */
#define kiln_atomic_add_ulong(p, v) \
    kiln_atomic_add_ulong_needs_cl_khr_int64_base_atomics(p, v)
#endif

/* Bit casts between float and uint (as_uint / as_float). */
#define kiln_as_uint(f) as_uint(f)
#define kiln_as_float(u) as_float(u)

/* float16 without fp16 hardware (docs/dialect.md): half values travel as
 * their ushort bits and are computed in float. kiln_h2f is exact (normals,
 * subnormals, +-0, +-inf, NaN payload kept); kiln_f2h rounds to nearest
 * even, overflows to inf, gives subnormals, keeps NaN a (quiet) NaN. Pure
 * integer code: no cl_khr_fp16 and no cuda_fp16.h needed. */
KILN_FUNC float kiln_h2f(ushort h)
{
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
KILN_FUNC ushort kiln_f2h(float f)
{
    uint x = kiln_as_uint(f);
    uint s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: keep the top payload bits, set quiet */
        return (ushort)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
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
}
#line 1
