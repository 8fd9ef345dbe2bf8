/* Shared internals of the generators and arrays (src/algo). They use only
 * the public API of kiln.h, plus the error detail and the embedded kernel
 * templates. */
#ifndef KILN_ALGO_ALGO_H
#define KILN_ALGO_ALGO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "kiln.h"

struct kiln_array {
    atomic_int refs;
    kiln_context *context; /* retained */
    kiln_buffer *buffer;   /* retained */
    kiln_dtype dtype;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS];
    size_t offset;
    size_t size;
};

int kiln__array_contiguous(const kiln_array *a);

typedef struct kiln__bound kiln__bound;

/* Longest generator name: kernel names add a suffix ("_stage1") to it. */
#define KILN__MAX_NAME 63



/* ---- argument declarations ("float a, const float *x") */
typedef struct kiln__garg {
    char name[64];
    char type[96];   /* element type as written, without const/global */
    int is_ptr;
    int is_const;
    kiln_dtype dtype; /* 0 if not a kiln dtype (a struct) */
} kiln__garg;

typedef struct kiln__gargs {
    kiln__garg *v;
    size_t n;
    size_t first_array; /* index of the first pointer argument */
} kiln__gargs;

kiln_status kiln__gargs_parse(const char *decl, const char *what,
                              kiln__gargs *out);
void kiln__gargs_free(kiln__gargs *a);
/* dtype of a type name ("float", "unsigned int", "long"...), 0 if none. */
kiln_dtype kiln__dtype_from_name(const char *type);

/* Layout variants. */
enum { KILN__CONTIG = 0, KILN__STRIDED = 1 };

/* Appends the shared definitions for one layout: KILN_PARAMS, KILN_PASS and
 * KILN_BIND(i) (which declares the user's array names for index i). */
void kiln__gen_common(kiln__sb *sb, const kiln__gargs *args, int layout);
/* Appends the kernel parameter list text ("long n, ...") for a layout. */
void kiln__gen_params(kiln__sb *sb, const kiln__gargs *args, int layout);
/* Appends the embedded template file with @NAME@ and @PARAMS@ replaced. */
kiln_status kiln__gen_template(kiln__sb *sb, const char *file,
                               const char *name, const char *params);
/* One built variant: program and up to 3 kernels. */
typedef struct kiln__variant {
    kiln_program *prog;
    kiln_kernel *k[3];
} kiln__variant;
void kiln__variant_free(kiln__variant *v);
/* Launch of kernel with prefix args then the bound ones. */
kiln_status kiln__launch(kiln_queue *queue, kiln_kernel *kernel,
                         size_t global, size_t local, const kiln_arg *prefix,
                         size_t nprefix, const kiln__bound *b,
                         size_t num_wait, kiln_event *const *wait,
                         kiln_event **event);
/* Appends user text under a #line marker named label. */
void kiln__gen_user(kiln__sb *sb, const char *label, const char *text);

/* Per-device launch plan. */
typedef struct kiln__plan {
    int cpu;           /* 1: chunked CPU variant */
    int cuda;          /* 1: the CUDA backend (CUDA-only variants) */
    unsigned cu;       /* compute units */
    size_t local;      /* work-group size (power of two) */
    int fp64, fp16;
} kiln__plan;
kiln_status kiln__plan_for(kiln_queue *queue, kiln__plan *plan);
kiln_status kiln__plan_for_device(kiln_device *device, kiln__plan *plan);

/* Builds source (with the per-device defines) and looks the kernel up.
 * On a build error the message names `what` and quotes `user_text` and the
 * compiler's first error lines. */
kiln_status kiln__gen_build(kiln_context *context, const char *source,
                            const char *what, const char *user_text,
                            kiln_program **program);

/* Test hook: when set, called with every generated source before it is
 * built (tests/test_array_nvrtc.c recompiles them for CUDA). */
extern void (*kiln__gen_source_hook)(const char *source);

/* Validates values against the declared arguments for a launch on queue and
 * appends the kernel arguments (after any algorithm-specific ones already in
 * kargs[0..*nk)). n gets the index range, layout the variant needed. */
struct kiln__bound {
    kiln_arg *kargs;
    size_t nk, cap;
    size_t n;
    int layout;
};
kiln_status kiln__bind_values(kiln_queue *queue, const kiln__gargs *args,
                              size_t n, size_t num_args, const kiln_arg *vals,
                              int any_shape, const char *what,
                              kiln__bound *b);
kiln_status kiln__bound_push(kiln__bound *b, kiln_arg a);
void kiln__bound_free(kiln__bound *b);


/* Copies a caller's descriptor (which starts with size_t struct_size) into
 * copy (size bytes, zeroed first): at most struct_size bytes, so members
 * added later read as 0. A struct_size under v1_size (the first version's
 * size) is KILN_ERROR_INVALID_ARGUMENT, naming macro. */
kiln_status kiln__desc_read(const void *desc, size_t v1_size, size_t size,
                            void *copy, const char *what, const char *macro);

/* Converts a scalar to dtype (numerically). */
kiln_status kiln__arg_convert(kiln_arg in, kiln_dtype dtype, kiln_arg *out);

/* Event helper: releases *e and sets it NULL. */
void kiln__event_drop(kiln_event **e);


/* ---- per-context cache (ctxcache.c) */
enum { KILN__OBJ_REDUCTION = 1, KILN__OBJ_SCAN = 2, KILN__OBJ_ELEMENTWISE = 3 };
/* The context's cached object of kind for key, made by make(arg, obj) on a
 * miss. Borrowed: valid while the caller holds a reference to the context.
 * *owned = 1 when it could not be cached: the caller releases it. */
kiln_status kiln__cached_obj(kiln_context *context, int kind, const char *key,
                             kiln_status (*make)(void *arg, void **obj),
                             void *arg, void **obj, int *owned);

/* Scratch buffers: one per slot and context, grown on demand. get() hands
 * out the slot's buffer (or a private one while another call holds it) and
 * in dep an event the new work must wait for (NULL: none); put() gives it
 * back with the event of the last command that uses it. */
enum {
    KILN__SCRATCH_PARTIALS = 0,
    KILN__SCRATCH_SCAN_STATUS,
    KILN__SCRATCH_SCAN_VALS,
    KILN__SCRATCH_SCAN_SUMS,
    KILN__SCRATCH_SCAN_FLAGS,
    KILN__SCRATCH_SLOTS
};
typedef struct kiln__scratch {
    kiln_buffer *buf;
    kiln_event *dep;
    int slot, cached;
} kiln__scratch;
kiln_status kiln__scratch_get(kiln_queue *queue, int slot, size_t bytes,
                              kiln__scratch *out);
void kiln__scratch_put(kiln_queue *queue, kiln__scratch *s, kiln_event *last);
/* Wait list = the caller's events plus dep (if any). *list is wait itself
 * or a malloc'd copy (free it when *list != wait); NULL on no memory. */
kiln_status kiln__wait_plus(size_t num_wait, kiln_event *const *wait,
                            kiln_event *dep, kiln_event *const **list,
                            size_t *n);

#endif
