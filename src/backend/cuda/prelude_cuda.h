/* kiln portable kernel dialect: the CUDA side (compiled by NVRTC as C++).
 * No standard headers: NVRTC has none. Only macros, typedefs and kiln_
 * functions are added, so native CUDA C still compiles unchanged. */
#define KILN_BACKEND_CUDA 1

#define KILN_KERNEL extern "C" __global__
#define KILN_GLOBAL
#define KILN_CONSTANT const
#define KILN_LOCAL __shared__
#define KILN_FUNC __device__ inline
#define KILN_RESTRICT __restrict__

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long long ulong;
typedef long long kiln_int64;
typedef unsigned long long kiln_uint64;

/* Index functions, as unsigned 64-bit values (products in 64 bits). */
__device__ inline unsigned long kiln__dim3(const uint3 v, int d) {
    return d == 0 ? v.x : d == 1 ? v.y : v.z;
}
__device__ inline unsigned long kiln__dim3(const dim3 v, int d) {
    return d == 0 ? v.x : d == 1 ? v.y : v.z;
}
__device__ inline unsigned long kiln_local_id(int d) {
    return kiln__dim3(threadIdx, d);
}
__device__ inline unsigned long kiln_group_id(int d) {
    return kiln__dim3(blockIdx, d);
}
__device__ inline unsigned long kiln_local_size(int d) {
    return kiln__dim3(blockDim, d);
}
__device__ inline unsigned long kiln_num_groups(int d) {
    return kiln__dim3(gridDim, d);
}
__device__ inline unsigned long kiln_global_id(int d) {
    return kiln_group_id(d) * kiln_local_size(d) + kiln_local_id(d);
}
__device__ inline unsigned long kiln_global_size(int d) {
    return kiln_num_groups(d) * kiln_local_size(d);
}

#define kiln_barrier() __syncthreads()
#define kiln_local_fence() __threadfence_block()
#define kiln_global_fence() __threadfence()

/* Math: CUDA has float and double overloads of sqrt, rsqrt, fabs, fmin,
 * fmax, exp, log, sin, cos, pow, floor, ceil, fma, hypot, and min/max on
 * integers and floats; OpenCL's clamp and mad are added. */
template <typename T, typename L, typename H>
__device__ inline T clamp(T x, L lo, H hi) {
    return x < (T)lo ? (T)lo : (x > (T)hi ? (T)hi : x);
}
__device__ inline float mad(float a, float b, float c) {
    return a * b + c;
}
__device__ inline double mad(double a, double b, double c) {
    return a * b + c;
}

/* Atomics on global memory; each returns the old value. */
__device__ inline int kiln_atomic_add_int(int *p, int v) {
    return atomicAdd(p, v);
}
__device__ inline uint kiln_atomic_add_uint(uint *p, uint v) {
    return atomicAdd(p, v);
}
__device__ inline int kiln_atomic_min_int(int *p, int v) {
    return atomicMin(p, v);
}
__device__ inline int kiln_atomic_max_int(int *p, int v) {
    return atomicMax(p, v);
}
__device__ inline int kiln_atomic_cas_int(int *p, int cmp, int val) {
    return atomicCAS(p, cmp, val);
}
__device__ inline float kiln_atomic_add_float(float *p, float v) {
    return atomicAdd(p, v);
}
__device__ inline ulong kiln_atomic_add_ulong(ulong *p, ulong v) {
    return atomicAdd(p, v);
}
/* A `KILN_LOCAL T *name` kernel parameter (OpenCL's __local T *): the
 * backend rewrites it to kiln__local_ptr<T> name before compiling. Its
 * 8-byte value, set at launch, is its byte offset in the block's dynamic
 * shared memory, which is sized from the KILN_ARG_LOCAL arguments. */
extern __shared__ __align__(16) unsigned char kiln__dyn_shared[];
template <typename T>
struct kiln__local_ptr {
    unsigned long long off;
    __device__ T *get() const {
        return (T *)(kiln__dyn_shared + off);
    }
    __device__ operator T *() const {
        return get();
    }
    __device__ T *operator->() const {
        return get();
    }
    template <typename I>
    __device__ T &operator[](I i) const {
        return get()[i];
    }
};

/* Bit casts between float and uint (OpenCL's as_uint / as_float). */
#define kiln_as_uint(f) __float_as_uint(f)
#define kiln_as_float(u) __uint_as_float(u)

/* @embed prelude_half.h */

/* Complex numbers: float2 / double2 (prelude_complex.h). */
#define KILN_HAS_FP64 1
typedef float2 cfloat;
typedef double2 cdouble;
#define kiln_cfloat_make(re, im) make_float2((re), (im))
#define kiln_cdouble_make(re, im) make_double2((re), (im))
/* @embed prelude_complex.h */
#line 1
