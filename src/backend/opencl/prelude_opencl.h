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

/* -DKILN_NO_FP_CONTRACT (a build option; $KILN_FP_CONTRACT=off adds it to
 * every program): a * b + c is rounded twice, as in C and NumPy, not
 * contracted into one fma (clang, and so PoCL, contracts by default). */
#ifdef KILN_NO_FP_CONTRACT
#pragma OPENCL FP_CONTRACT OFF
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
/* NVIDIA's OpenCL: mem_fence(CLK_GLOBAL_MEM_FENCE) does not order a
 * work-group's global stores for other work-groups (the single-pass scan's
 * value-then-flag publication of wide types was seen out of order: 9 of
 * 45 test_scan runs wrong on an H100); membar.gl, CUDA's __threadfence,
 * does (0 of 45). cl_nv_pragma_unroll is defined only by NVIDIA's
 * compiler. */
#if defined(cl_nv_pragma_unroll)
#define kiln_global_fence() __asm__ __volatile__("membar.gl;" ::: "memory")
/* a pause of about ns nanoseconds (sm_70 and later: device_sleep) */
#define kiln_sleep_ns(ns) __asm__ __volatile__("nanosleep.u32 %0;" ::"r"((uint)(ns)) : "memory")
#else
#define kiln_global_fence() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

/* Atomics on global memory; each returns the old value. */
KILN_FUNC int kiln_atomic_add_int(__global int *p, int v) {
    return atomic_add((volatile __global int *)p, v);
}
KILN_FUNC uint kiln_atomic_add_uint(__global uint *p, uint v) {
    return atomic_add((volatile __global uint *)p, v);
}
KILN_FUNC int kiln_atomic_min_int(__global int *p, int v) {
    return atomic_min((volatile __global int *)p, v);
}
KILN_FUNC int kiln_atomic_max_int(__global int *p, int v) {
    return atomic_max((volatile __global int *)p, v);
}
KILN_FUNC int kiln_atomic_cas_int(__global int *p, int cmp, int val) {
    return atomic_cmpxchg((volatile __global int *)p, cmp, val);
}
/* No float atomics in OpenCL 1.2: a compare-and-swap loop on the bits. */
KILN_FUNC float kiln_atomic_add_float(__global float *p, float v) {
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
KILN_FUNC ulong kiln_atomic_add_ulong(__global ulong *p, ulong v) {
    return atom_add((volatile __global ulong *)p, v);
}
#else
/* Makes a use on a device without 64-bit atomics fail with a clear name. */
#define kiln_atomic_add_ulong(p, v) kiln_atomic_add_ulong_needs_cl_khr_int64_base_atomics(p, v)
#endif

/* Bit casts between float and uint (as_uint / as_float). */
#define kiln_as_uint(f) as_uint(f)
#define kiln_as_float(u) as_float(u)

/* @embed prelude_half.h */

/* Complex numbers: float2 / double2 (prelude_complex.h). */
typedef float2 cfloat;
#define kiln_cfloat_make(re, im) ((cfloat)((re), (im)))
#ifdef cl_khr_fp64
#define KILN_HAS_FP64 1
typedef double2 cdouble;
#define kiln_cdouble_make(re, im) ((cdouble)((re), (im)))
#endif
/* @embed prelude_complex.h */
#line 1
