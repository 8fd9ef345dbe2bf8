/* The generators' shared machinery (src/algo): the base object that
 * elementwise, reduction and scan (and the sort, select and random
 * generators to come) build on, and the pieces every generator uses:
 *   gen_decl.c    argument declarations ("float a, const float *x")
 *   gen_source.c  source pieces shared by the templates
 *   gen_plan.c    per-device launch plans and capabilities
 *   gen_build.c   builds, and the error text of a failed one
 *   gen_bind.c    launch arguments checked and bound to kernel arguments
 *   generator.c   the base object: create, retain/release, variants
 *   ctxcache.c    the per-context cache of built-in generators
 * Only the public API of kiln.h is used, plus base/. */
#ifndef KILN_ALGO_GENERATOR_H
#define KILN_ALGO_GENERATOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "base/desc.h"
#include "base/fault.h" /* kiln__malloc and friends: each allocation is a fault site */
#include "base/strbuf.h"
#include "kiln.h"

/* Longest generator name: kernel names add a suffix ("_stage1") to it. */
#define KILN__MAX_NAME 63

/* ---- argument declarations (gen_decl.c) */
typedef struct kiln__garg {
    char name[64];
    char type[96]; /* element type as written, without const/global */
    int is_ptr;
    int is_const;
    kiln_dtype dtype; /* 0 if not a kiln dtype (a struct) */
} kiln__garg;

typedef struct kiln__gargs {
    kiln__garg *v;
    size_t n;
    size_t first_array; /* index of the first pointer argument */
} kiln__gargs;

/* Parses "float a, const float *x"; at least one pointer (array) argument
 * is needed. what names the caller in messages. */
kiln_status kiln__gargs_parse(const char *decl, const char *what, kiln__gargs *out);
void kiln__gargs_free(kiln__gargs *a);
/* dtype of a type name ("float", "unsigned int", "long"...), 0 if none. */
kiln_dtype kiln__dtype_from_name(const char *type);

/* ---- per-device plans and capabilities (gen_plan.c) */
typedef struct kiln__plan {
    int cpu;      /* 1: chunked CPU variant */
    unsigned cu;  /* compute units */
    size_t local; /* work-group size (power of two) */
    int fp64, fp16;
    /* What the variants are chosen by (never the backend's name): */
    int cuda_c;             /* sources compile as CUDA C (nvcc pragmas) */
    int opencl_c;           /* sources compile as OpenCL C */
    int warp_shuffle;       /* CUDA C __shfl_*_sync over warps of 32 */
    int forward_progress;   /* started groups run on while others wait */
    int device_sleep;       /* __nanosleep */
    unsigned subgroup_size; /* 0 when unknown */
    int ptx_warp;           /* OpenCL C with inline PTX warp votes and
                               shuffles over warps of 32 (NVIDIA's OpenCL,
                               compute capability 7.0 on) */
} kiln__plan;
kiln_status kiln__plan_for(kiln_queue *queue, kiln__plan *plan);
kiln_status kiln__plan_for_device(kiln_device *device, kiln__plan *plan);
/* Work-groups for n items on a CPU: 4 per compute unit, fewer when that
 * would leave a group under min_items items; at least 1. */
size_t kiln__cpu_groups(const kiln__plan *plan, size_t n, size_t min_items);

/* ---- source pieces (gen_source.c) */

/* Layout variants: bit 0 strided; bit 1 any-shape (only the first array is
 * strided); bit 2 restrict (the arrays do not alias); bit 3 (with bit 0)
 * strided over KILN_ARRAY_MAX_DIMS dimensions instead of 3 (shapes that
 * do not merge into 3 dimensions: gen_bind.c). */
enum { KILN__CONTIG = 0, KILN__STRIDED = 1, KILN__STRIDED_ND = 9 };
/* The dimensions of a strided layout's index math (3 or 8). */
static inline int kiln__layout_dims(int layout) {
    return (layout & 8) ? KILN_ARRAY_MAX_DIMS : 3;
}
/* The variant slot of a layout: 0 contiguous, 1 strided, 2 strided N-d;
 * and the layout bits a slot's build gets. */
enum { KILN__LAYOUT_SLOTS = 3 };
static inline int kiln__layout_slot(int layout) {
    return (layout & 8) ? 2 : (layout & 1);
}
static inline int kiln__layout_strided(int layout) {
    return layout & 9;
}

/* Appends the capability defines every template may test: KILN_CPU,
 * KILN_CUDA_C, KILN_HAS_WARP_SHUFFLE, KILN_HAS_SLEEP. */
void kiln__gen_device_defines(kiln__sb *sb, const kiln__plan *plan);
/* Appends the shared definitions for one layout: KILN_PARAMS, KILN_PASS and
 * KILN_BIND(i) (which declares the user's array names for index i), then
 * the user's preamble (may be NULL) under its #line label. */
void kiln__gen_common(kiln__sb *sb, const kiln__gargs *args, int layout, const char *preamble);
/* Appends the kernel parameter list text ("long n, ...") for a layout. */
void kiln__gen_params(kiln__sb *sb, const kiln__gargs *args, int layout);
/* Appends the embedded template file with @NAME@ and @PARAMS@ replaced
 * (PARAMS: kiln__gen_params of args and layout). */
kiln_status kiln__gen_template(kiln__sb *sb, const char *file, const char *name,
                               const kiln__gargs *args, int layout);
/* Appends user text under a #line marker named label. */
void kiln__gen_user(kiln__sb *sb, const char *label, const char *text);
/* Appends "KILN_FUNC signature { [KILN_BIND(i)] return (expr); }" with
 * the user's expr under label. */
void kiln__gen_return_func(kiln__sb *sb, const char *signature, int bind, const char *label,
                           const char *expr);

/* Lanes (kiln's own operations, whose text touches each array at [i] only
 * and uses i for nothing else; docs/algorithms.md "Variants"): on a GPU a
 * work-item takes 4 consecutive items and moves each array's 4 elements as
 * one 4-16 byte access (two 16-byte ones for 8-byte types). 1 if every
 * array argument has an element of 1, 2, 4 or 8 bytes. */
int kiln__gen_lanes_ok(const kiln__gargs *args);
/* Appends, after kiln__gen_common of a contiguous layout:
 * kiln_lanes_fn(lane, n, ...), text (a statement when ret_type is "void",
 * else an expression it returns) over private arrays of 4 elements;
 * KILN_LANES_ARGS, its arguments after (lane, n); KILN_LANES_ALIGNED, 1
 * when every array is aligned for its access; KILN_LANES_FOR(q, first,
 * step), the loop header over quads q of [0, n / 4) (unrolled twice on
 * CUDA); KILN_LANES_LOAD(q), which
 * declares each array's lanes and loads the const ones for quad q; and
 * KILN_LANES_STORE(q), which stores the others. */
void kiln__gen_lanes(kiln__sb *sb, const kiln__gargs *args, const char *ret_type, const char *label,
                     const char *text);

/* Appends a check that sizeof(alias) on the device equals declared (the
 * user's out_size / scan_size, or the dtype's size): a mismatch fails the
 * build, and kiln__gen_build then names both sizes (it rebuilds the source
 * with KILN_SIZE_PROBE defined, which writes the device's sizeof instead).
 * field and type are for the message ("out_size", "struct pair"). */
void kiln__gen_size_check(kiln__sb *sb, const char *alias, const char *field, size_t declared,
                          const char *type);

/* ---- builds (gen_build.c) */

/* The languages a generated source can be compiled as: the portable
 * templates compile as either (through the backend's prelude). */
#define KILN__LANGS_PORTABLE ((1u << KILN_LANG_OPENCL_C) | (1u << KILN_LANG_CUDA_C))

/* Builds source for every device of context. On a build error the message
 * names `what` and quotes `user_text` and the compiler's first error
 * lines. languages: what the source can be compiled as (for the hook);
 * options: the user's build options ("-DN=4"; may be NULL). */
kiln_status kiln__gen_build(kiln_context *context, const char *source, unsigned languages,
                            const char *what, const char *user_text, const char *options,
                            kiln_program **program);

/* Test hook: when set, called with every generated source before it is
 * built and the languages it can be compiled as (tests/test_array_nvrtc.c
 * recompiles the CUDA C ones with NVRTC). */
extern void (*kiln__gen_source_hook)(const char *source, unsigned languages);

/* ---- launch arguments (gen_bind.c) */
typedef struct kiln__bound {
    kiln_arg *kargs;
    size_t nk, cap;
    size_t n;
    int layout;
} kiln__bound;
/* Checks args against the declarations for a launch over [0, n) on queue
 * and appends the kernel arguments (after any algorithm-specific ones
 * already in b); b->layout gets the variant needed. */
kiln_status kiln__bind_values(kiln_queue *queue, const kiln__gargs *args, size_t n, size_t num_args,
                              const kiln_arg *vals, int any_shape, const char *what,
                              kiln__bound *b);
kiln_status kiln__bound_push(kiln__bound *b, kiln_arg a);
void kiln__bound_free(kiln__bound *b);
/* Converts a scalar to dtype (numerically). */
kiln_status kiln__arg_convert(kiln_arg in, kiln_dtype dtype, kiln_arg *out);

/* ---- the base object (generator.c) */

/* One built variant: its program, up to 3 kernels and its launch shape. */
typedef struct kiln__variant {
    kiln_program *prog;
    kiln_kernel *k[3];
    size_t local; /* work-items per group */
    int items;    /* items per work-item (scan) */
    int tmpl;     /* which template (scan) */
} kiln__variant;
void kiln__variant_free(kiln__variant *v);

typedef struct kiln__gen kiln__gen;

/* What a kind of generator adds to the base. */
typedef struct kiln__gen_kind {
    const char *what;         /* "kiln_scan": messages, build errors */
    const char *default_name; /* when the descriptor has none */
    /* Fills v (program, kernels, launch shape) for a layout on a device of
     * the plan, with kiln__gen_program. */
    kiln_status (*build)(kiln__gen *gen, int layout, const kiln__plan *plan, kiln__variant *v);
    /* Frees the kind's own members and the object itself. */
    void (*destroy)(kiln__gen *gen);
} kiln__gen_kind;

/* The base, the first member of every generator. It holds no handle on the
 * context (kiln_context_attach): the built programs keep the context alive,
 * and the context's cache (ctxcache.c) may hold the generator. */
struct kiln__gen {
    atomic_int refs;
    const kiln__gen_kind *kind;
    kiln_context *context;
    kiln__gargs args;
    char *name;
    char *options;                            /* the descriptor's build options, or NULL */
    pthread_mutex_t lock;                     /* guards var */
    kiln__variant var[KILN__LAYOUT_SLOTS][2]; /* [kiln__layout_slot][cpu], built on first
                                                 use */
};

/* The common start of kiln_X_create: context and desc are required
 * (has_out: the result pointer too), and the descriptor is copied
 * (kiln__desc_read). */
kiln_status kiln__gen_create_begin(kiln_context *context, const void *desc, int has_out,
                                   size_t v1_size, size_t size, void *copy, const char *what,
                                   const char *macro);
/* Checks name (NULL: the kind's default) and parses arguments into gen
 * (zeroed by the caller), with one reference. On failure nothing is left
 * to free in gen. */
kiln_status kiln__gen_init(kiln__gen *gen, const kiln__gen_kind *kind, kiln_context *context,
                           const char *arguments, const char *name);
/* Copies the descriptor's build options (NULL or "" = none) into gen. */
kiln_status kiln__gen_set_options(kiln__gen *gen, const char *options);
kiln_status kiln__gen_retain(kiln__gen *gen);
/* The body of a public kiln_X_retain of a generator (gen NULL for a NULL
 * object): kiln__ref_retain's KILN_ERROR_NULL_HANDLE "fn: name is NULL". */
kiln_status kiln__gen_retain_public(kiln__gen *gen, const char *fn, const char *name);
/* Drops a reference; the last one frees the base and calls destroy. */
void kiln__gen_release(kiln__gen *gen);
/* The built variant for layout (KILN__CONTIG / KILN__STRIDED) on a device
 * of plan: built on first use, under the generator's lock. */
kiln_status kiln__gen_variant(kiln__gen *gen, int layout, const kiln__plan *plan,
                              kiln__variant **out);
/* Builds the contiguous variant for the context's first device, so that a
 * bad expression fails at create time. */
kiln_status kiln__gen_build_first(kiln__gen *gen);
/* The end of each generator's create, given its status so far: the first
 * variant built when eager, and gen released on any failure. */
kiln_status kiln__gen_create_end(kiln__gen *gen, kiln_status st, int eager);
/* Builds source into v->prog and looks up the kernels named name +
 * suffixes[k] (k < nk <= 3). */
kiln_status kiln__gen_program(kiln__gen *gen, kiln__sb *source, unsigned languages,
                              const char *user_text, const char *const *suffixes, int nk,
                              kiln__variant *v);
/* The common start of a launch: checks queue and gen, the plan of the
 * queue's device, and the arguments for [0, n) bound into b. */
kiln_status kiln__gen_prepare(kiln_queue *queue, kiln__gen *gen, size_t n, size_t num_args,
                              const kiln_arg *args, int any_shape, const char *what,
                              kiln__plan *plan, kiln__bound *b);
/* Launch of kernel over global work-items (rounded up to local) with
 * prefix args, then the bound ones. */
/* A wait list checked at a call's entry, so that its message names the
 * call, not the first kernel it launches (offload_events.c). */
kiln_status kiln__check_wait(const char *what, size_t num_wait, kiln_event *const *wait);
kiln_status kiln__launch(kiln_queue *queue, kiln_kernel *kernel, size_t global, size_t local,
                         const kiln_arg *prefix, size_t nprefix, const kiln__bound *b,
                         size_t num_wait, kiln_event *const *wait, kiln_event **event);

/* ---- the per-context cache of built-in generators (ctxcache.c) */

/* A new reference to the context's generator cached under key, made by
 * make(arg, &gen) on a miss (and cached when there is room). The caller
 * releases it with kiln__gen_release. */
/* The array operations' fast path: a generator remembered under a short
 * binary key (the operation and its dtypes, at most 16 bytes), so a call
 * that finds it builds no source strings and searches no string keys.
 * find: a new reference, or NULL (then make it as usual and put it). */
kiln__gen *kiln__gen_fast_find(kiln_context *context, const void *key, size_t len);
void kiln__gen_fast_put(kiln_context *context, const void *key, size_t len, kiln__gen *gen);
kiln_status kiln__gen_cached(kiln_context *context, const char *key,
                             kiln_status (*make)(void *arg, kiln__gen **gen), void *arg,
                             kiln__gen **gen);

#endif
