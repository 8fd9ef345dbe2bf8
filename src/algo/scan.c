/* The scan generator (kiln_scan_*), like PyOpenCL's GenericScanKernel, and
 * cumsum/cumprod. Three templates, all keeping the operator's order
 * (scan_kind() picks):
 *  - GPUs through OpenCL: one launch of the single-pass chained scan with
 *    decoupled look-back in portable OpenCL C (algo_scan_onepass.cl);
 *  - CUDA: the same algorithm with warp shuffles (algo_scan_warp.cu);
 *  - CPUs, and types too large for the single-pass templates: three
 *    launches (algo_scan.cl) where each work-item owns a contiguous range:
 *    block totals, a scan of the totals, a rescan of each block with its
 *    carry-in.
 * KILN_SCAN_VARIANT=onepass|threephase (environment, read once) forces the
 * choice: onepass runs the OpenCL single-pass template on any OpenCL device
 * (CI tests it on PoCL's CPU device), threephase the three-phase one on any
 * device. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"
#include "base/ident.h"

struct kiln_scan {
    atomic_int refs;
    kiln_context *context;
    kiln__gargs args;
    char *scan_type, *neutral, *op, *input, *output, *seg, *preamble, *name;
    size_t scan_size;
    pthread_mutex_t lock;
    kiln__variant var[2][2]; /* [strided][cpu] */
    size_t local[2][2];
    int items[2][2];   /* items per work-item of a single-pass variant */
    int kind[2][2];    /* the variant's template: SCAN_* */
};

/* Threads per block of the CUDA single-pass scan. KILN_SCAN_THREADS
 * (64..1024, a multiple of 32): tuning knob. */
static size_t onepass_threads(void) {
    static int knob = -1;
    if (knob < 0) {
        const char *e = getenv("KILN_SCAN_THREADS");
        int k = e ? atoi(e) : 0;
        knob = k >= 64 && k <= 1024 && k % 32 == 0 ? k : 0;
    }
    return knob ? (size_t)knob : 256;
}

/* Items per thread of the CUDA single-pass scan for a scan type of size
 * bytes (a tile of 256*items values stays within 16 KiB of shared memory,
 * scaled for other block sizes); 0: too large a type, use the three-phase
 * template. */
static int onepass_items(size_t size) {
    /* KILN_SCAN_ITEMS (1..40): tuning knob for types of up to 4 bytes. */
    static int knob = -1;
    if (knob < 0) {
        const char *e = getenv("KILN_SCAN_ITEMS");
        int k = e ? atoi(e) : 0;
        knob = k >= 1 && k <= 40 ? k : 0;
    }
    /* 24 for up to 4 bytes: 68% of copy on an H200 at 2^28 int32 (16: 51%,
     * with 6 blocks per SM; see bench/README.md) */
    int items = size <= 4 ? 24 : size <= 8 ? 8 : size <= 16 ? 4
              : size <= 32 ? 2 : size <= 64 ? 1 : 0;
    if (size <= 4 && knob)
        items = knob;
    size_t threads = onepass_threads();
    /* static shared memory stays under 48 KiB (the tile, padded) */
    while (items > 1 && threads * (size_t)items * size * 33 / 32 > 44 * 1024)
        items--;
    return items;
}

/* Integer tuning knob from the environment, read once by the caller. */
static int env_knob(const char *name, int lo, int hi, int dflt) {
    const char *e = getenv(name);
    int k = e ? atoi(e) : dflt;
    return k >= lo && k <= hi ? k : dflt;
}

/* Knobs of the CUDA single-pass scan's look-back:
 *  KILN_SCAN_LB     window in steps of 32 tiles (1..8; packed types only)
 *  KILN_SCAN_SLEEP  backoff in ns while a predecessor has no status yet
 *                   (0..2000; default 650 for packed types, else 100)
 *  KILN_SCAN_EVERY  1: the backoff comes before every poll, not only after
 *                   a failed one (default 1 for packed types)
 *  KILN_SCAN_PRE    ns of sleep between publishing the tile's aggregate and
 *                   the first poll (0..4000; default 1200 for packed types)
 *  KILN_SCAN_MINB   __launch_bounds__ minimum of blocks per SM (1..16;
 *                   default 6 for packed types, else 1)
 * The delays apply only to grids of 512 tiles or more. */
static void onepass_knobs(size_t size, int *lb, int *sleep_ns, int *minb,
                          int *pre_ns, int *every) {
    static int k_lb = -1, k_sleep = -1, k_minb = -1, k_pre = -1, k_every;
    if (k_lb < 0) {
        k_lb = env_knob("KILN_SCAN_LB", 1, 8, 1);
        k_sleep = env_knob("KILN_SCAN_SLEEP", -1, 2000, -1);
        k_minb = env_knob("KILN_SCAN_MINB", 0, 16, 0);
        k_pre = env_knob("KILN_SCAN_PRE", -1, 4000, -1);
        k_every = env_knob("KILN_SCAN_EVERY", -1, 1, -1);
    }
    /* Defaults from H200 sweeps at 2^28 int32 (scripts/gpu-scan-sweep.sh):
     * a wider window (LB 4) cost registers and was slower; 6 blocks of 256
     * per SM (<= 40 registers) was best. Polling less was the big step:
     * 1200 ns before the first poll and 650 ns before each one took the
     * scan from 69% to 83% of copy (polls that find nothing load the L2
     * the loads and stores need; 1500 ns a poll is too long: 70%). Types
     * over 4 bytes were not measured and keep the earlier settings. */
    int packed = size <= 4;
    *lb = packed ? k_lb : 1;
    *sleep_ns = k_sleep >= 0 ? k_sleep : packed ? 650 : 100;
    *pre_ns = k_pre >= 0 ? k_pre : packed ? 1200 : 0;
    *every = k_every >= 0 ? k_every : packed;
    *minb = k_minb ? k_minb : size <= 4 ? 6 : 1;
    if ((size_t)*minb * onepass_threads() > 2048) /* threads per SM */
        *minb = (int)(2048 / onepass_threads());
}

/* The templates: three-phase (algo_scan.cl), single-pass for CUDA
 * (algo_scan_warp.cu), single-pass for OpenCL (algo_scan_onepass.cl). */
enum { SCAN_THREEPHASE, SCAN_CUDA, SCAN_CL };

/* Work-items per group of the OpenCL single-pass scan. */
#define CL_THREADS 256

/* Items per work-item of the OpenCL single-pass scan for a scan type of
 * size bytes (seg: segmented): a tile of 16 KiB (local memory in all at
 * most about 27 KiB, within OpenCL's 32 KiB minimum); 24 KiB for an
 * unsegmented type of up to 4 bytes (its flags need no room): on an H200
 * 24 items were 70% of copy at 2^28 int32, 16 items 63%. 0: too large a
 * type, use the three-phase template. KILN_SCAN_ITEMS sets it for types of
 * up to 4 bytes (the tile stays within 24 KiB). */
static int cl_items(size_t size, int seg) {
    static int knob = -1;
    if (knob < 0)
        knob = env_knob("KILN_SCAN_ITEMS", 1, 40, 0);
    int items = size <= 4 ? (seg ? 16 : 24) : size <= 8 ? 8
              : size <= 16 ? 4 : size <= 32 ? 2 : 0;
    if (size <= 4 && knob) {
        items = knob;
        while (items > 1 && (size_t)items * CL_THREADS * size > 24 * 1024)
            items--;
    }
    return items;
}

/* Look-back window of the OpenCL single-pass scan (predecessors read at
 * once): 32 on GPUs, KILN_SCAN_WINDOW (1..256) to tune; 4 on CPUs, where
 * the multi-window path then runs often (tests). */
static int cl_window(const kiln__plan *plan) {
    static int knob = -1;
    if (knob < 0)
        knob = env_knob("KILN_SCAN_WINDOW", 1, 256, 0);
    int w = knob ? knob : plan->cpu ? 4 : 32;
    size_t local = plan->cpu ? 64 : CL_THREADS; /* kind_local() */
    return (size_t)w > local ? (int)local : w;
}

/* KILN_SCAN_GBAR=1: the OpenCL single-pass scan's barriers fence global
 * memory too (they need not: for measurements). */
static int cl_gbar(void) {
    static int knob = -1;
    if (knob < 0)
        knob = env_knob("KILN_SCAN_GBAR", 0, 1, 0);
    return knob;
}

/* KILN_SCAN_VARIANT: 0 = by device, 1 = onepass, 2 = threephase. */
static int variant_knob(void) {
    static int knob = -1;
    if (knob < 0) {
        const char *e = getenv("KILN_SCAN_VARIANT");
        knob = e && !strcmp(e, "onepass")      ? 1
               : e && !strcmp(e, "threephase") ? 2
                                               : 0;
    }
    return knob;
}

static int scan_kind(const kiln_scan *s, const kiln__plan *plan) {
    int knob = variant_knob();
    if (knob == 2)
        return SCAN_THREEPHASE;
    if (plan->cuda)
        return plan->local == 256 && onepass_items(s->scan_size)
                   ? SCAN_CUDA
                   : SCAN_THREEPHASE;
    if (!cl_items(s->scan_size, s->seg != NULL))
        return SCAN_THREEPHASE;
    /* GPUs only by default: on a CPU the contiguous ranges of the
     * three-phase template are the fast layout */
    if (knob == 1 || (!plan->cpu && plan->local == CL_THREADS))
        return SCAN_CL;
    return SCAN_THREEPHASE;
}

/* Work-items per group and items per work-item of a variant's template.
 * The OpenCL single-pass template runs on a CPU only when forced (tests):
 * there small groups and tiles build faster (PoCL) and give more tiles,
 * and a look-back window of 4 tiles takes the multi-window path more
 * often. */
static size_t kind_local(int kind, const kiln__plan *plan) {
    return kind == SCAN_CUDA ? onepass_threads()
           : kind == SCAN_CL ? (plan->cpu ? 64 : CL_THREADS)
                             : plan->local;
}

static int kind_items(int kind, size_t size, int seg,
                      const kiln__plan *plan) {
    int items = kind == SCAN_CUDA ? onepass_items(size)
                : kind == SCAN_CL ? cl_items(size, seg)
                                  : 1;
    return kind == SCAN_CL && plan->cpu && items > 4 ? 4 : items;
}

/* The whole generated source (without the backend prelude) of a variant. */
kiln_status kiln__scan_source(kiln_scan *s, int strided,
                              const kiln__plan *plan, kiln__sb *sb) {
    kiln__sb params = {0};
    int kind = scan_kind(s, plan);
    kiln__sb_addf(sb,
                  "#define KILN_CPU %d\n#define KILN_LOCAL_SIZE %zu\n"
                  "#define KILN_SEGMENTED %d\n#define KILN_ITEMS %d\n"
                  "#define KILN_PACKED %d\n",
                  plan->cpu, kind_local(kind, plan), s->seg ? 1 : 0,
                  kind_items(kind, s->scan_size, s->seg != NULL, plan),
                  kind != SCAN_THREEPHASE && s->scan_size <= 4);
    /* the OpenCL template's totals scan: one barrier a step with two
     * buffers, where local memory allows */
    if (kind == SCAN_CL)
        kiln__sb_addf(sb, "#define KILN_DB %d\n#define KILN_LB_W %d\n"
                          "#define KILN_GLOBAL_BARRIER %d\n",
                      s->scan_size <= 16, cl_window(plan), cl_gbar());
    if (kind == SCAN_CUDA) {
        int lb, sleep_ns, minb, pre_ns, every;
        onepass_knobs(s->scan_size, &lb, &sleep_ns, &minb, &pre_ns, &every);
        kiln__sb_addf(sb,
                      "#define KILN_LB %d\n#define KILN_LB_SLEEP %d\n"
                      "#define KILN_MINB %d\n#define KILN_LB_PRE %d\n"
                      "#define KILN_LB_EVERY %d\n",
                      lb, sleep_ns, minb, pre_ns, every);
    }
    kiln__gen_common(sb, &s->args, strided);
    if (s->preamble)
        kiln__gen_user(sb, "preamble", s->preamble);
    kiln__sb_add(sb, "typedef\n");
    kiln__gen_user(sb, "scan_type", s->scan_type);
    kiln__sb_add(sb, "kiln_scan_t;\nKILN_FUNC kiln_scan_t "
                     "kiln_neutral(void)\n{\n    return (\n");
    kiln__gen_user(sb, "neutral", s->neutral);
    kiln__sb_add(sb, ");\n}\nKILN_FUNC kiln_scan_t "
                     "kiln_scan_op(kiln_scan_t a, kiln_scan_t b)\n{\n"
                     "    return (\n");
    kiln__gen_user(sb, "scan", s->op);
    kiln__sb_add(sb, ");\n}\nKILN_FUNC kiln_scan_t kiln_input(long i, "
                     "KILN_PARAMS)\n{\n    KILN_BIND(i)\n    return (\n");
    kiln__gen_user(sb, "input", s->input);
    kiln__sb_add(sb, ");\n}\n");
    if (s->seg) {
        kiln__sb_add(sb, "KILN_FUNC int kiln_seg_start(long i, "
                         "KILN_PARAMS)\n{\n    KILN_BIND(i)\n"
                         "    return (\n");
        kiln__gen_user(sb, "segment_start", s->seg);
        kiln__sb_add(sb, ") ? 1 : 0;\n}\n");
    }
    kiln__sb_add(sb, "KILN_FUNC void kiln_output(long i, kiln_scan_t "
                     "item, kiln_scan_t prev_item, KILN_PARAMS)\n{\n"
                     "    KILN_BIND(i)\n");
    kiln__gen_user(sb, "output", s->output);
    kiln__sb_add(sb, ";\n}\n");
    kiln__gen_params(&params, &s->args, strided);
    kiln_status st = kiln__gen_template(
        sb,
        kind == SCAN_CUDA ? "algo_scan_warp.cu"
        : kind == SCAN_CL ? "algo_scan_onepass.cl"
                          : "algo_scan.cl",
        s->name,
        params.p ? params.p : "");
    if (st == KILN_OK && (sb->oom || params.oom))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "scan source");
    kiln__sb_free(&params);
    return st;
}

static kiln_status scan_variant(kiln_scan *s, int strided,
                                const kiln__plan *plan, kiln__variant **out) {
    int cpu = plan->cpu;
    kiln__variant *v = &s->var[strided][cpu];
    pthread_mutex_lock(&s->lock);
    kiln_status st = KILN_OK;
    if (!v->k[0]) {
        kiln__sb sb = {0};
        s->kind[strided][cpu] = scan_kind(s, plan);
        s->local[strided][cpu] = kind_local(s->kind[strided][cpu], plan);
        s->items[strided][cpu] =
            kind_items(s->kind[strided][cpu], s->scan_size, s->seg != NULL,
                       plan);
        st = kiln__scan_source(s, strided, plan, &sb);
        if (st == KILN_OK) {
            char text[1200];
            snprintf(text, sizeof text,
                     "input: %s; scan: %s; output: %s; neutral: %s%s%s",
                     s->input, s->op, s->output, s->neutral,
                     s->seg ? "; segment_start: " : "", s->seg ? s->seg : "");
            st = kiln__gen_build(s->context, sb.p, "kiln_scan", text,
                                 &v->prog);
        }
        static const char *const suffix[3] = {"reduce", "spine", "final"};
        int nk = s->kind[strided][cpu] != SCAN_THREEPHASE ? 1 : 3;
        for (int k = 0; st == KILN_OK && k < nk; k++) {
            char kn[160];
            snprintf(kn, sizeof kn, "%s_%s", s->name,
                     nk == 1 ? "onepass" : suffix[k]);
            st = kiln_kernel_create(v->prog, kn, &v->k[k]);
        }
        if (st != KILN_OK)
            kiln__variant_free(v);
        kiln__sb_free(&sb);
    }
    pthread_mutex_unlock(&s->lock);
    *out = v;
    return st;
}

kiln_status kiln__scan_create_ex(kiln_context *context,
                                 const kiln_scan_desc *desc, int eager,
                                 kiln_scan **out) {
    static const char what[] = "kiln_scan_create";
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: scan is NULL",
                               what);
    *out = NULL;
    if (!context || !desc)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context and desc are required", what);
    kiln_scan_desc dc;
    kiln_status st = kiln__desc_read(
        desc, offsetof(kiln_scan_desc, name) + sizeof dc.name, sizeof dc, &dc,
        what, "KILN_SCAN_DESC");
    if (st != KILN_OK)
        return st;
    const kiln_scan_desc *d = &dc;
    if (!d->arguments || !d->scan_type || !d->neutral || !d->scan ||
        !d->input || !d->output)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments, scan_type, neutral, scan, "
                               "input and output are required",
                               what);
    const char *name = d->name ? d->name : "kiln_scan";
    if (!kiln__is_ident(name, KILN__MAX_NAME))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: name '%.80s' is not an identifier of at "
                               "most %d characters",
                               what, name, KILN__MAX_NAME);
    size_t sz = d->scan_size ? d->scan_size
                             : kiln_dtype_size(kiln__dtype_from_name(d->scan_type));
    if (!sz)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_scan_create: scan_type '%s' is not a "
                               "scalar type; set scan_size",
                               d->scan_type);
    kiln_scan *s = calloc(1, sizeof *s);
    if (!s)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_scan_create");
    st = kiln__gargs_parse(d->arguments, what, &s->args);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->lock, NULL);
    /* No handle on the context: the built programs keep it alive, and the
     * context cache (ctxcache.c) may hold this object. */
    s->context = context;
    s->scan_size = sz;
    s->scan_type = kiln__strdup(d->scan_type);
    s->neutral = kiln__strdup(d->neutral);
    s->op = kiln__strdup(d->scan);
    s->input = kiln__strdup(d->input);
    s->output = kiln__strdup(d->output);
    s->name = kiln__strdup(name);
    s->seg = d->segment_start ? kiln__strdup(d->segment_start) : NULL;
    s->preamble = d->preamble ? kiln__strdup(d->preamble) : NULL;
    if (!s->scan_type || !s->neutral || !s->op || !s->input || !s->output ||
        !s->name || (d->segment_start && !s->seg) ||
        (d->preamble && !s->preamble)) {
        kiln_scan_release(s);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_scan_create");
    }
    if (eager) {
        kiln__plan plan;
        kiln__variant *v;
        st = kiln__plan_for_device(kiln_context_device(context, 0), &plan);
        if (st == KILN_OK)
            st = scan_variant(s, 0, &plan, &v);
        if (st != KILN_OK) {
            kiln_scan_release(s);
            return st;
        }
    }
    *out = s;
    return KILN_OK;
}

kiln_status kiln_scan_create(kiln_context *context, const kiln_scan_desc *desc,
                             kiln_scan **scan) {
    return kiln__scan_create_ex(context, desc, 1, scan);
}

kiln_status kiln_scan_retain(kiln_scan *s) {
    if (!s)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_scan_retain: scan is NULL");
    atomic_fetch_add(&s->refs, 1);
    return KILN_OK;
}

void kiln_scan_release(kiln_scan *s) {
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            kiln__variant_free(&s->var[a][b]);
    kiln__gargs_free(&s->args);
    free(s->scan_type);
    free(s->neutral);
    free(s->op);
    free(s->input);
    free(s->output);
    free(s->seg);
    free(s->preamble);
    free(s->name);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The single-pass scans (CUDA and OpenCL): zero the tile status words (and
 * the tile counter after them), then one launch of one group per tile.
 * Both live in the context's scratch buffers. */
static kiln_status onepass_launch(kiln_queue *queue, kiln_scan *s,
                                  kiln__variant *v, size_t local, int items,
                                  const kiln__bound *b, size_t num_wait,
                                  kiln_event *const *wait,
                                  kiln_event **event) {
    size_t tile = local * (size_t)items;
    size_t tiles = (b->n + tile - 1) / tile;
    size_t stride = (s->scan_size + 15) / 16 * 16;
    int packed = s->scan_size <= 4;
    size_t sbytes = (tiles + 1) * (packed ? 8 : sizeof(int));
    kiln__scratch ss = {0}, sv = {0};
    kiln_event *e0 = NULL, *e1 = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    kiln_status st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_STATUS,
                                       sbytes, &ss);
    if (st == KILN_OK && !packed)
        st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_VALS,
                               2 * tiles * stride, &sv);
    if (st == KILN_OK)
        st = kiln__wait_plus(num_wait, wait, ss.dep, &wl, &nwl);
    if (st == KILN_OK && sv.dep) {
        /* the vals slot's last user: a marker-free way is to wait on it in
         * the fill as well */
        kiln_event *const *wl2 = NULL;
        size_t n2 = 0;
        st = kiln__wait_plus(nwl, wl, sv.dep, &wl2, &n2);
        if (wl != wait)
            free((void *)wl);
        wl = wl2;
        nwl = n2;
    }
    if (st == KILN_OK) {
        static const int zero = 0;
        st = kiln_buffer_fill(queue, ss.buf, &zero, sizeof zero, 0,
                                    sbytes, nwl, wl, &e0);
    }
    if (wl != wait)
        free((void *)wl);
    if (st == KILN_OK) {
        kiln_arg pre[4] = {KILN_ARG_BUF(ss.buf),
                           KILN_ARG_BUF(packed ? ss.buf : sv.buf),
                           KILN_ARG_I64((int64_t)stride),
                           KILN_ARG_I64((int64_t)tiles)};
        st = kiln__launch(queue, v->k[0], tiles * local, local, pre, 4, b, 1,
                          &e0, &e1);
    }
    kiln__scratch_put(queue, &ss, e1 ? e1 : e0);
    kiln__scratch_put(queue, &sv, e1 ? e1 : e0);
    if (st == KILN_OK && event) {
        *event = e1;
        e1 = NULL;
    }
    kiln__event_drop(&e0);
    kiln__event_drop(&e1);
    return st;
}

kiln_status kiln_scan_launch(kiln_queue *queue, kiln_scan *s, size_t n,
                             size_t num_args, const kiln_arg *args,
                             size_t num_wait, kiln_event *const *wait,
                             kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !s)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_scan_launch: queue and scan are "
                               "required");
    kiln_context *ctx = kiln_queue_context(queue);
    if (ctx != s->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_scan_launch: the queue belongs to "
                               "another context than the scan");
    kiln__plan plan;
    kiln_status st = kiln__plan_for(queue, &plan);
    if (st != KILN_OK)
        return st;
    kiln__bound b = {0};
    st = kiln__bind_values(queue, &s->args, n, num_args, args, 0, s->name,
                           &b);
    if (st != KILN_OK) {
        kiln__bound_free(&b);
        return st;
    }
    if (b.n == 0) {
        kiln__bound_free(&b);
        return event ? kiln_queue_marker(queue, num_wait, wait, event)
                     : KILN_OK;
    }
    kiln__variant *v = NULL;
    st = scan_variant(s, b.layout, &plan, &v);
    if (st != KILN_OK) {
        kiln__bound_free(&b);
        return st;
    }
    size_t local = s->local[b.layout][plan.cpu];
    if (s->kind[b.layout][plan.cpu] != SCAN_THREEPHASE) {
        st = onepass_launch(queue, s, v, local, s->items[b.layout][plan.cpu],
                            &b, num_wait, wait, event);
        kiln__bound_free(&b);
        return st;
    }
    size_t groups;
    if (plan.cpu) {
        groups = plan.cu * 4;
        size_t by_size = (n + 8191) / 8192;
        if (groups > by_size)
            groups = by_size;
    } else {
        groups = (n + local * 8 - 1) / (local * 8);
        if (groups > (size_t)plan.cu * 4)
            groups = (size_t)plan.cu * 4;
    }
    if (!groups)
        groups = 1;
    size_t chunk = (n + groups - 1) / groups;
    size_t unit = 64 * local;
    chunk = (chunk + unit - 1) / unit * unit;
    groups = (n + chunk - 1) / chunk;
    kiln__scratch ssum = {0}, sflag = {0};
    kiln_event *e1 = NULL, *e2 = NULL, *e3 = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_SUMS,
                           groups * s->scan_size, &ssum);
    if (st == KILN_OK)
        st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_FLAGS,
                               groups * sizeof(int), &sflag);
    if (st == KILN_OK)
        st = kiln__wait_plus(num_wait, wait, ssum.dep, &wl, &nwl);
    if (st == KILN_OK && sflag.dep) {
        kiln_event *const *wl2 = NULL;
        size_t n2 = 0;
        st = kiln__wait_plus(nwl, wl, sflag.dep, &wl2, &n2);
        if (wl != wait)
            free((void *)wl);
        wl = wl2;
        nwl = n2;
    }
    kiln_buffer *sums = ssum.buf, *flags = sflag.buf;
    if (st == KILN_OK) {
        kiln_arg pre[3] = {KILN_ARG_BUF(sums), KILN_ARG_BUF(flags),
                           KILN_ARG_I64((int64_t)chunk)};
        st = kiln__launch(queue, v->k[0], groups * local, local, pre, 3, &b,
                          nwl, wl, &e1);
    }
    if (wl != wait)
        free((void *)wl);
    if (st == KILN_OK) {
        kiln_arg pre[3] = {KILN_ARG_BUF(sums), KILN_ARG_BUF(flags),
                           KILN_ARG_I64((int64_t)groups)};
        st = kiln__launch(queue, v->k[1], 1, 1, pre, 3, NULL, 1, &e1, &e2);
    }
    if (st == KILN_OK) {
        kiln_arg pre[2] = {KILN_ARG_BUF(sums), KILN_ARG_I64((int64_t)chunk)};
        st = kiln__launch(queue, v->k[2], groups * local, local, pre, 2, &b, 1,
                          &e2, &e3);
    }
    kiln_event *last = e3 ? e3 : e2 ? e2 : e1;
    kiln__scratch_put(queue, &ssum, last);
    kiln__scratch_put(queue, &sflag, last);
    if (st == KILN_OK && event) {
        *event = e3;
        e3 = NULL;
    }
    kiln__event_drop(&e1);
    kiln__event_drop(&e2);
    kiln__event_drop(&e3);
    kiln__bound_free(&b);
    return st;
}

typedef struct scan_make_arg {
    kiln_context *context;
    const kiln_scan_desc *d;
} scan_make_arg;

static kiln_status scan_make(void *arg, void **obj) {
    scan_make_arg *a = arg;
    return kiln__scan_create_ex(a->context, a->d, 0, (kiln_scan **)obj);
}

static kiln_status cum(kiln_queue *queue, kiln_array *out, kiln_array *a,
                       int exclusive, int prod, size_t num_wait,
                       kiln_event *const *wait, kiln_event **event) {
    const char *what = prod ? "kiln_array_cumprod" : "kiln_array_cumsum";
    if (event)
        *event = NULL;
    if (!queue || !out || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: queue and arrays are required", what);
    if (out->dtype != a->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: dtypes %s and %s differ", what,
                               kiln_dtype_name(out->dtype),
                               kiln_dtype_name(a->dtype));
    if (!kiln_dtype_size(a->dtype))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown dtype %d", what, (int)a->dtype);
    const char *t = kiln_dtype_name(a->dtype);
    /* float16: scanned in float from the ushort bits, each output rounded
     * once to half (the running value stays float). */
    int f16 = a->dtype == KILN_FLOAT16;
    char args[96];
    snprintf(args, sizeof args, "const %s *x, %s *y", f16 ? "ushort" : t,
             f16 ? "ushort" : t);
    kiln_scan_desc d = KILN_SCAN_DESC(
        .arguments = args, .scan_type = f16 ? "float" : t,
        .neutral = prod ? "1" : "0", .scan = prod ? "a*b" : "a+b",
        .input = f16 ? "kiln_h2f(x[i])" : "x[i]",
        .output = f16 ? (exclusive ? "y[i] = kiln_f2h(prev_item)"
                                   : "y[i] = kiln_f2h(item)")
                      : (exclusive ? "y[i] = prev_item" : "y[i] = item"),
        .name = prod ? (exclusive ? "kiln_cumprod_ex" : "kiln_cumprod")
                     : (exclusive ? "kiln_cumsum_ex" : "kiln_cumsum"));
    /* The scan object comes from the context's cache (built once). */
    kiln_context *ctx = kiln_queue_context(queue);
    char key[256];
    snprintf(key, sizeof key, "%s|%s", d.name, t);
    scan_make_arg ma = {ctx, &d};
    void *s = NULL;
    int owned = 0;
    kiln_status st = kiln__cached_obj(ctx, KILN__OBJ_SCAN, key, scan_make,
                                      &ma, &s, &owned);
    kiln_arg v[2] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out)};
    if (st == KILN_OK)
        st = kiln_scan_launch(queue, s, a->size, 2, v, num_wait, wait, event);
    if (owned)
        kiln_scan_release(s);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

kiln_status kiln_array_cumsum(kiln_queue *queue, kiln_array *out,
                              kiln_array *a, int exclusive, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event) {
    return cum(queue, out, a, exclusive, 0, num_wait, wait, event);
}

kiln_status kiln_array_cumprod(kiln_queue *queue, kiln_array *out,
                               kiln_array *a, int exclusive, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event) {
    return cum(queue, out, a, exclusive, 1, num_wait, wait, event);
}
