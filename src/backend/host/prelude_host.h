/* kiln portable kernel dialect, host side (docs/dialect.md): C11 compiled by
 * the system C compiler with OpenMP (src/backend/host/program.c). The
 * source is preprocessed first; the backend then rewrites what the C
 * preprocessor cannot: KILN_KERNEL functions get a hidden first parameter
 * (the work-item's ids, kiln__w) and an entry point each, and KILN_LOCAL
 * declarations become per-thread (= per-work-group) storage, or plain
 * pointers where they declare a pointer. Work-items of a group run as a
 * loop; a kernel that reaches kiln_barrier() runs its group's work-items as
 * fibers switched at every barrier (the runtime appended after the source,
 * prelude_host_rt.h). */
#define KILN_BACKEND_HOST 1

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#if !defined(__x86_64__)
#include <ucontext.h> /* the runtime's fibers (prelude_host_rt.h) */
#endif

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long kiln_int64;
typedef unsigned long kiln_uint64;

/* Markers the backend rewrites after preprocessing. */
#define KILN_KERNEL __kiln_kernel__
#define __kernel __kiln_kernel__
#define KILN_LOCAL __kiln_local__
#define __local __kiln_local__
#define KILN_GLOBAL
#define __global
#define __private
#define KILN_CONSTANT const
#define __constant const
#define KILN_FUNC static inline
#define KILN_RESTRICT restrict

/* A work-item's position: the kernel's hidden parameter, and (for helper
 * functions) the thread's current work-item. */
typedef struct kiln__wi {
    size_t lid[3], grp[3], lsz[3], ngr[3];
} kiln__wi_t;
static __thread const kiln__wi_t *kiln__w;
#define kiln__d(d) ((unsigned)(d) < 3u ? (unsigned)(d) : 0u)
#define kiln_local_id(d) ((unsigned)(d) < 3u ? kiln__w->lid[kiln__d(d)] : (size_t)0)
#define kiln_group_id(d) ((unsigned)(d) < 3u ? kiln__w->grp[kiln__d(d)] : (size_t)0)
#define kiln_local_size(d) ((unsigned)(d) < 3u ? kiln__w->lsz[kiln__d(d)] : (size_t)1)
#define kiln_num_groups(d) ((unsigned)(d) < 3u ? kiln__w->ngr[kiln__d(d)] : (size_t)1)
#define kiln_global_id(d)                                                                 \
    ((unsigned)(d) < 3u                                                                   \
         ? kiln__w->grp[kiln__d(d)] * kiln__w->lsz[kiln__d(d)] + kiln__w->lid[kiln__d(d)] \
         : (size_t)0)
#define kiln_global_size(d) \
    ((unsigned)(d) < 3u ? kiln__w->ngr[kiln__d(d)] * kiln__w->lsz[kiln__d(d)] : (size_t)1)
/* OpenCL C's names, which kiln's templates also use */
#define get_global_id(d) kiln_global_id(d)
#define get_local_id(d) kiln_local_id(d)
#define get_group_id(d) kiln_group_id(d)
#define get_global_size(d) kiln_global_size(d)
#define get_local_size(d) kiln_local_size(d)
#define get_num_groups(d) kiln_num_groups(d)
#define get_global_offset(d) ((size_t)0)
#define get_work_dim() kiln__work_dim()

void kiln__barrier_impl(void);
unsigned kiln__work_dim(void);
#define kiln_barrier() kiln__barrier_impl()
#define barrier(flags) kiln__barrier_impl()
#define work_group_barrier(flags) kiln__barrier_impl()
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define kiln_local_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define kiln_global_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define mem_fence(flags) __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define read_mem_fence(flags) __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define write_mem_fence(flags) __atomic_thread_fence(__ATOMIC_SEQ_CST)
/* Sub-group operations are not provided: a kernel using them fails to
 * build with the function's name (the device reports no sub-groups). */

/* Bit casts */
#define kiln__bits(T, x)                                                               \
    ({                                                                                 \
        __typeof__(x) kiln__bx = (x);                                                  \
        T kiln__by;                                                                    \
        _Static_assert(sizeof kiln__bx == sizeof kiln__by, "as_" #T ": sizes differ"); \
        __builtin_memcpy(&kiln__by, &kiln__bx, sizeof kiln__by);                       \
        kiln__by;                                                                      \
    })
#define as_uint(x) kiln__bits(uint, x)
#define as_int(x) kiln__bits(int, x)
#define as_float(x) kiln__bits(float, x)
#define as_ulong(x) kiln__bits(ulong, x)
#define as_long(x) kiln__bits(long, x)
#define as_double(x) kiln__bits(double, x)
#define as_ushort(x) kiln__bits(ushort, x)
#define as_short(x) kiln__bits(short, x)
#define kiln_as_uint(f) as_uint(f)
#define kiln_as_float(u) as_float(u)
#define __float_as_uint(x) as_uint(x)
#define __uint_as_float(x) as_float(x)
#define __float_as_int(x) as_int(x)
#define __int_as_float(x) as_float(x)
#define __double_as_longlong(x) kiln__bits(long long, x)
#define __longlong_as_double(x) as_double(x)

/* Math: the C library's, type-generic like OpenCL's overloads. */
#define kiln__tg1(fn, x) _Generic((x), float : fn##f, long double : fn##l, default : fn)(x)
#define kiln__tg2(fn, x, y) \
    _Generic((x) + (y), float : fn##f, long double : fn##l, default : fn)(x, y)
#define kiln__tg3(fn, x, y, z) \
    _Generic((x) + (y) + (z), float : fn##f, long double : fn##l, default : fn)(x, y, z)
#undef sqrt
#define sqrt(x) kiln__tg1(sqrt, x)
#define cbrt(x) kiln__tg1(cbrt, x)
#define fabs(x) kiln__tg1(fabs, x)
#define exp(x) kiln__tg1(exp, x)
#define exp2(x) kiln__tg1(exp2, x)
#define expm1(x) kiln__tg1(expm1, x)
#define log(x) kiln__tg1(log, x)
#define log2(x) kiln__tg1(log2, x)
#define log10(x) kiln__tg1(log10, x)
#define log1p(x) kiln__tg1(log1p, x)
#define sin(x) kiln__tg1(sin, x)
#define cos(x) kiln__tg1(cos, x)
#define tan(x) kiln__tg1(tan, x)
#define asin(x) kiln__tg1(asin, x)
#define acos(x) kiln__tg1(acos, x)
#define atan(x) kiln__tg1(atan, x)
#define sinh(x) kiln__tg1(sinh, x)
#define cosh(x) kiln__tg1(cosh, x)
#define tanh(x) kiln__tg1(tanh, x)
#define asinh(x) kiln__tg1(asinh, x)
#define acosh(x) kiln__tg1(acosh, x)
#define atanh(x) kiln__tg1(atanh, x)
#define floor(x) kiln__tg1(floor, x)
#define ceil(x) kiln__tg1(ceil, x)
#define trunc(x) kiln__tg1(trunc, x)
#define round(x) kiln__tg1(round, x)
#define rint(x) kiln__tg1(rint, x)
#define erf(x) kiln__tg1(erf, x)
#define erfc(x) kiln__tg1(erfc, x)
#define tgamma(x) kiln__tg1(tgamma, x)
#define lgamma(x) kiln__tg1(lgamma, x)
#define pow(x, y) kiln__tg2(pow, x, y)
#define atan2(x, y) kiln__tg2(atan2, x, y)
#define fmin(x, y) kiln__tg2(fmin, x, y)
#define fmax(x, y) kiln__tg2(fmax, x, y)
#define fmod(x, y) kiln__tg2(fmod, x, y)
#define hypot(x, y) kiln__tg2(hypot, x, y)
#define copysign(x, y) kiln__tg2(copysign, x, y)
#define nextafter(x, y) kiln__tg2(nextafter, x, y)
#define fdim(x, y) kiln__tg2(fdim, x, y)
#define remainder(x, y) kiln__tg2(remainder, x, y)
#define fma(x, y, z) kiln__tg3(fma, x, y, z)
#define rsqrt(x) ((__typeof__((x) + 0.0f))1 / sqrt(x))
#define mad(a, b, c) ((a) * (b) + (c))
#define exp10(x) pow((__typeof__((x) + 0.0f))10, (x))
#define pown(x, n) pow((x), (__typeof__((x) + 0.0f))(n))
#define powr(x, y) pow(x, y)
#define sinpi(x) sin((x) * (__typeof__((x) + 0.0f))M_PI)
#define cospi(x) cos((x) * (__typeof__((x) + 0.0f))M_PI)
/* GNU libm (as CUDA): sincos(x, &s, &c) */
void sincos(double x, double *s, double *c);
void sincosf(float x, float *s, float *c);
#define native_sin(x) sin(x)
#define native_cos(x) cos(x)
#define native_exp(x) exp(x)
#define native_log(x) log(x)
#define native_sqrt(x) sqrt(x)
#define native_rsqrt(x) rsqrt(x)
#define native_divide(x, y) ((x) / (y))
#define native_recip(x) ((__typeof__((x) + 0.0f))1 / (x))
#define half_sqrt(x) sqrt(x)
#define min(a, b)                                             \
    ({                                                        \
        __typeof__((a) + (b)) kiln__ma = (a), kiln__mb = (b); \
        kiln__mb < kiln__ma ? kiln__mb : kiln__ma;            \
    })
#define max(a, b)                                             \
    ({                                                        \
        __typeof__((a) + (b)) kiln__ma = (a), kiln__mb = (b); \
        kiln__ma < kiln__mb ? kiln__mb : kiln__ma;            \
    })
#define clamp(x, lo, hi)                                                              \
    ({                                                                                \
        __typeof__(x) kiln__cx = (x), kiln__cl = (__typeof__(x))(lo),                 \
                      kiln__ch = (__typeof__(x))(hi);                                 \
        kiln__cx < kiln__cl ? kiln__cl : (kiln__cx > kiln__ch ? kiln__ch : kiln__cx); \
    })
#define select(a, b, c) ((c) ? (b) : (a))
#define popcount(x)                                                                \
    ((__typeof__(x))(sizeof(x) > 4 ? __builtin_popcountll((unsigned long long)(x)) \
                                   : __builtin_popcount((unsigned)(x) &            \
                                                        (0xffffffffu >> (32 - 8 * sizeof(x))))))
#define clz(x)                                                                                \
    ({                                                                                        \
        __typeof__(x) kiln__zx = (x);                                                         \
        (__typeof__(x))(kiln__zx == 0         ? 8 * (int)sizeof kiln__zx                      \
                        : sizeof kiln__zx > 4 ? __builtin_clzll((unsigned long long)kiln__zx) \
                                              : __builtin_clz((unsigned)kiln__zx) -           \
                                                    (32 - 8 * (int)sizeof kiln__zx));         \
    })
#define ctz(x)                                                                          \
    ({                                                                                  \
        __typeof__(x) kiln__zx = (x);                                                   \
        (__typeof__(x))(kiln__zx == 0 ? 8 * (int)sizeof kiln__zx                        \
                                      : __builtin_ctzll((unsigned long long)kiln__zx)); \
    })
#define rotate(x, n)                                                                             \
    ({                                                                                           \
        __typeof__(x) kiln__rx = (x);                                                            \
        unsigned kiln__rb = 8u * (unsigned)sizeof kiln__rx, kiln__rn = (unsigned)(n) % kiln__rb; \
        (__typeof__(x))(kiln__rn ? (kiln__rx << kiln__rn) | (kiln__rx >> (kiln__rb - kiln__rn))  \
                                 : kiln__rx);                                                    \
    })
#define mul_hi(a, b)                                                                               \
    ({                                                                                             \
        __typeof__((a) + (b)) kiln__ha = (a), kiln__hb = (b);                                      \
        (__typeof__(kiln__ha))(sizeof kiln__ha > 4                                                 \
                                   ? (__typeof__(kiln__ha))(((__int128)kiln__ha * kiln__hb) >> 64) \
                                   : (__typeof__(kiln__ha))(((long long)kiln__ha * kiln__hb) >>    \
                                                            32));                                  \
    })
#define mul24(a, b) ((a) * (b))
#define mad24(a, b, c) ((a) * (b) + (c))
#define convert_int(x) ((int)(x))
#define convert_uint(x) ((uint)(x))
#define convert_long(x) ((long)(x))
#define convert_ulong(x) ((ulong)(x))
#define convert_float(x) ((float)(x))
/* double to float rounded toward zero (astype's float16 path) */
KILN_FUNC float convert_float_rtz(double d) {
    float f = (float)d;
    if (__builtin_fabs((double)f) > __builtin_fabs(d))
        f = __builtin_nextafterf(f, 0.0f);
    return f;
}
#define convert_double(x) ((double)(x))

/* Atomics (the compiler's __atomic builtins, which C11's <stdatomic.h> is
 * built on, on plain memory); each returns the old value. */
#define kiln__aofs(op, p, v) __atomic_fetch_##op((p), (v), __ATOMIC_SEQ_CST)
#define kiln__acas(p, cmp, val)                                                                    \
    ({                                                                                             \
        __typeof__((*(p)) + 0) kiln__ae = (cmp);                                                   \
        __atomic_compare_exchange_n((p), &kiln__ae, (val), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        kiln__ae;                                                                                  \
    })
#define kiln__aminmax(p, v, less)                                                                 \
    ({                                                                                            \
        __typeof__((*(p)) + 0) kiln__av = (v), kiln__ao = __atomic_load_n((p), __ATOMIC_SEQ_CST); \
        while ((less) && !__atomic_compare_exchange_n((p), &kiln__ao, kiln__av, 1,                \
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))        \
            ;                                                                                     \
        kiln__ao;                                                                                 \
    })
#define atomic_add(p, v) kiln__aofs(add, p, v)
#define atomic_sub(p, v) kiln__aofs(sub, p, v)
#define atomic_and(p, v) kiln__aofs(and, p, v)
#define atomic_or(p, v) kiln__aofs(or, p, v)
#define atomic_xor(p, v) kiln__aofs(xor, p, v)
#define atomic_inc(p) kiln__aofs(add, p, 1)
#define atomic_dec(p) kiln__aofs(sub, p, 1)
#define atomic_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define atomic_cmpxchg(p, cmp, val) kiln__acas(p, cmp, val)
#define atomic_min(p, v) kiln__aminmax(p, v, kiln__av < kiln__ao)
#define atomic_max(p, v) kiln__aminmax(p, v, kiln__av > kiln__ao)
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor
#define atom_inc atomic_inc
#define atom_dec atomic_dec
#define atom_xchg atomic_xchg
#define atom_cmpxchg atomic_cmpxchg
#define atom_min atomic_min
#define atom_max atomic_max

KILN_FUNC int kiln_atomic_add_int(int *p, int v) {
    return atomic_add(p, v);
}
KILN_FUNC uint kiln_atomic_add_uint(uint *p, uint v) {
    return atomic_add(p, v);
}
KILN_FUNC int kiln_atomic_min_int(int *p, int v) {
    return atomic_min(p, v);
}
KILN_FUNC int kiln_atomic_max_int(int *p, int v) {
    return atomic_max(p, v);
}
KILN_FUNC int kiln_atomic_cas_int(int *p, int cmp, int val) {
    return atomic_cmpxchg(p, cmp, val);
}
KILN_FUNC float kiln_atomic_add_float(float *p, float v) {
    uint *u = (uint *)p;
    uint expected = __atomic_load_n(u, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(u, &expected, as_uint(as_float(expected) + v), 1,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    return as_float(expected);
}
KILN_FUNC ulong kiln_atomic_add_ulong(ulong *p, ulong v) {
    return atomic_add(p, v);
}

/* @embed prelude_half.h */

/* Small vector types: structs with OpenCL's component names (no
 * arithmetic operators: the dialect leaves vector types out). */
#define KILN__VEC(T)  \
    typedef struct {  \
        T x, y;       \
    } T##2;           \
    typedef struct {  \
        T x, y, z, w; \
    } T##4;
KILN__VEC(float)
KILN__VEC(double)
KILN__VEC(short)
KILN__VEC(ushort)
KILN__VEC(int)
KILN__VEC(uint)
KILN__VEC(long)
KILN__VEC(ulong)
#undef KILN__VEC
#define make_float2(a, b) ((float2){ (a), (b) })
#define make_double2(a, b) ((double2){ (a), (b) })
#define make_float4(a, b, c, d) ((float4){ (a), (b), (c), (d) })
#define make_uint4(a, b, c, d) ((uint4){ (a), (b), (c), (d) })
#define make_int4(a, b, c, d) ((int4){ (a), (b), (c), (d) })
#define make_short4(a, b, c, d) ((short4){ (a), (b), (c), (d) })
#define make_ushort4(a, b, c, d) ((ushort4){ (a), (b), (c), (d) })

/* Complex numbers (prelude_complex.h) */
#define KILN_HAS_FP64 1
typedef float2 cfloat;
typedef double2 cdouble;
#define kiln_cfloat_make(re, im) ((cfloat){ (re), (im) })
#define kiln_cdouble_make(re, im) ((cdouble){ (re), (im) })
/* @embed prelude_complex.h */
#line 1
