/* The radix sorter (sort.h): a generator per (key width, value width)
 * from the context's cache, and the passes of a sort over dense buffers:
 * plain LSD passes (kernels/algo_sort.cl), and segments as a second,
 * stable sort of the sorted items' segment numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/knobs.h"
#include "algo/prim/sort.h"
#include "base/embedded.h"
#include "base/error.h"

static const char *const kKernelSuffix[KILN__SORT_NK] = { "_hist",    "_scatter", "_segid",
                                                          "_gather",  "_search",  "_index",
                                                          "_os_hist", "_os_pass", "_bucket",
                                                          "_range" };

static const char *const kCpuFirst[1] = { "_chist" };

static const char *utype(unsigned bytes) {
    return bytes == 1 ? "uchar" : bytes == 2 ? "ushort" : bytes == 4 ? "uint" : "ulong";
}

/* Keys per thread of the onesweep pass (256 threads a block). The pass's
 * static shared memory (algo_sort_onesweep.cu) is a tile of the wider of
 * key and value plus a byte a key, and 10 KiB of counters; it must stay
 * within 48 KiB: at most 32 KiB of tile for 8-byte items (16 a thread).
 * KILN_SORT_OS_ITEMS overrides where it fits. */
#define KILN_OS_THREADS_HOST 256 /* algo_sort_onesweep.*'s KILN_OS_THREADS */

static int os_items(unsigned kb, unsigned vb, int cuda_c) {
    unsigned v = vb ? vb : 4; /* keys only: a uint value type */
    unsigned w = kb > v ? kb : v;
    /* 24 for 4-byte items: H100, 2^28 int32 keys, 8.95 ms at 16, 8.22 at
     * 24, 9.24 at 30 (fewer blocks a multiprocessor). With the shared OR
     * matching (KILN_SORT_OS_RANK), 28 for 4-byte keys alone in the CUDA
     * pass: 6.87 ms against 7.29 at 24 and 7.62 at 20 (H100); H200 6.70
     * against 7.09 at 24, 6.78 at 26, 6.93 at 30. NVIDIA's OpenCL pass
     * stays at 24 (H200: 7.10 against 7.93 at 28), and argsorts were
     * fastest at 24 (H100, 10.34 ms against 10.89 at 20). */
    int dflt = w > 4 ? 16 : cuda_c && kb == 4 && !vb ? 28 : 24;
    int k = kiln__knobs_get()->sort_os_items;
    if (k >= 4 && (size_t)256 * (size_t)k * (w + 1) + 10240 + 64 <= 48 * 1024)
        return k;
    return dflt;
}

/* The portable GPU kernels' digit width (KILN_SORT_TILE_BITS; 0 = by
 * payload). H200, NVIDIA OpenCL, 2^28 int32: keys only 4-bit 16.6 ms,
 * 8-bit 16.9 (the tile's two local rounds cost what the halved passes
 * save); argsort (int64 indices) 4-bit 24.3 ms, 8-bit 19.6 (half the
 * passes move the payload too). */
static int tile_bits(unsigned val_bytes) {
    int k = kiln__knobs_get()->sort_tile_bits;
    return k ? k : val_bytes ? 8 : 4;
}

/* Their items a work-item (KILN_SORT_TILE_ITEMS): with 8-bit digits at
 * most 8 for 8-byte keys, so the tile's keys and indices, the counter
 * table and the starts fit 48 KiB of local memory (algo_sort.cl). */
static int tile_items(unsigned key_bytes, unsigned val_bytes) {
    int k = kiln__knobs_get()->sort_tile_items;
    return tile_bits(val_bytes) == 8 && key_bytes > 4 && k > 8 ? 8 : k;
}

/* The launch shape of a variant (sort.h). CPU: 11-bit digits, 3 passes
 * for 32-bit keys (2048 counters, 8 KiB, stay in L1; 8-bit digits were
 * slower on the 2-core PoCL machine, 4 passes of mostly memory traffic).
 * TILE: the counter table of 16 x 256 fits in 16 KiB of local memory. */
static void shape_for(const kiln__plan *plan, int variant, unsigned val_bytes,
                      kiln__sort_shape *sh) {
    sh->variant = variant;
    sh->cpu = variant == KILN__SORT_CPU;
    sh->local = sh->cpu ? 1 : plan->local;
    sh->radix_bits = variant == KILN__SORT_TILE  ? tile_bits(val_bytes)
                     : variant == KILN__SORT_CPU ? 11
                                                 : 8;
}

/* The variant for a device: chosen by its capabilities, never its
 * backend. The onesweep look-back waits for blocks that started earlier:
 * it needs forward progress. */
static int variant_for(const kiln__plan *plan) {
    if (plan->cpu)
        return KILN__SORT_CPU;
    if (plan->cuda_c && plan->warp_shuffle && plan->subgroup_size == 32 && plan->forward_progress &&
        plan->local == 256)
        return KILN__SORT_ONESWEEP;
    /* the OpenCL C port (algo_sort_onesweep.cl; KILN_SORT_OCL_ONESWEEP) */
    if (plan->ptx_warp && plan->forward_progress && plan->local == 256 &&
        kiln__knobs_get()->sort_ocl_onesweep)
        return KILN__SORT_ONESWEEP;
    return KILN__SORT_TILE;
}

/* The onesweep pass's defines (algo_sort_onesweep.cu / .cl), each knob's
 * default as measured (docs/algorithms.md has the figures). Returns the
 * register cap's blocks (KILN_OS_MINB; 0: none), which NVIDIA's OpenCL
 * takes as a compiler option. */
static int onesweep_defines(kiln__sb *sb, const kiln__plan *plan, const kiln__sorter *s,
                            int variant) {
    const kiln__knobs *kn = kiln__knobs_get();
    int os = variant == KILN__SORT_ONESWEEP;
    int cuda_pass = os && plan->cuda_c; /* else the OpenCL C port, if os */
    unsigned kb = s->key_bytes, vb = s->val_bytes;
    /* 4-byte keys with 4-byte values (argsort's narrowed indices): the
     * shared ORs, both savings (LEAN 3) and the 3-block cap fit the CUDA
     * pass's 80 registers without a spill (ptxas sm_90): H200, 2^28
     * argsort 9.41 ms -> 8.72 (uncapped, 8 ballots, LEAN 0 before) */
    int argsort_form = cuda_pass && kb == 4 && vb == 4;
    /* the CUDA pass's register cap: 3 blocks for 4- and 8-byte keys
     * without values and argsort_form; on NVIDIA's OpenCL only when
     * KILN_SORT_OS_MINB asks. 8-byte keys, 2^27 int64: H200 8.91 ms
     * against 9.04 uncapped (three pairs), H100 9.37-9.40 against
     * 9.54-9.58; NVIDIA's OpenCL unchanged (9.25 / 9.24) */
    int minb = kn->sort_os_minb;
    if (minb < 0)
        minb = cuda_pass && ((!vb && (kb == 4 || kb == 8)) || argsort_form)
                   ? 3 /* measured there only */
                   : 0;
    if (minb)
        kiln__sb_addf(sb, "#define KILN_OS_MINB %d\n", minb);
    /* how the onesweep pass matches a warp's digits (its comment): shared
     * atomic ORs, but 8 ballots in the CUDA pass of 4-byte values, where
     * the ORs made ptxas spill (H100, 2^28: argsort 10.57 ms against
     * 10.35; keys only 7.29 against 7.51, 2^27 int64 9.54 against 10.28,
     * NVIDIA's OpenCL argsort 10.41 against 10.50); argsort_form takes
     * the ORs again */
    int rank_or = kn->sort_os_rank;
    if (rank_or < 0)
        rank_or = argsort_form || !(cuda_pass && vb == 4);
    kiln__sb_addf(sb, "#define KILN_OS_RANK_OR %d\n", rank_or);
    /* the onesweep pass's shared-memory savings (KILN_OS_LEAN) */
    int lean = kn->sort_os_lean;
    if (lean < 0) /* as measured (H200, 2^28; docs/algorithms.md) */
        lean = !os            ? 0
               : !cuda_pass   ? 3
               : argsort_form ? 3 /* with the ORs and 3 blocks (above) */
               : vb           ? 0
               : kb == 4      ? 3 /* 6.59 -> 5.73 ms (KILN_OS_KEYS_ONLY) */
               : kb == 8      ? 3 /* 2^27: 8.91 -> 8.49 ms */
                              : 0;
    kiln__sb_addf(sb, "#define KILN_OS_LEAN %d\n", lean);
    /* the CUDA pass's exchange before its look-back (KILN_OS_XFIRST),
     * where it was measured faster (H200, 2^27 int64 keys 8.38 -> 7.99
     * ms, 2^28 argsort 8.69 -> 8.62). 4-byte keys alone spilled 428
     * bytes with it (5.60 -> 9.38 ms); ptxas (sm_90) gave the unmeasured
     * forms more registers (1-byte keys with 1-byte values 89 -> 138) */
    int xfirst = kn->sort_os_xfirst;
    if (xfirst < 0)
        xfirst = cuda_pass && ((!vb && kb == 8) || argsort_form);
    if (cuda_pass)
        kiln__sb_addf(sb, "#define KILN_OS_XFIRST %d\n", xfirst);
    /* the onesweep pass's argsort switches (its comment) */
    kiln__sb_addf(sb, "#define KILN_OS_SWITCHES %d\n", vb == 4);
    /* a sorter of keys alone: the pass's value code folded away. ptxas
     * (sm_90), 4-byte keys at 28 a thread under 80 registers: the spill
     * went 84 -> 64 bytes with LEAN 1 and 140 -> 0 with LEAN 3 (H200,
     * 2^28 int32 keys: LEAN 1 6.59 ms, LEAN 3 5.73); 8-byte keys 132 -> 0
     * (2^27 int64 8.53 -> 8.41) */
    kiln__sb_addf(sb, "#define KILN_OS_KEYS_ONLY %d\n", vb == 0);
    /* the packed argsort's pass modes, in the CUDA pass of 8-byte keys
     * alone (KILN_OS_PACK; radix_packed) */
    if (cuda_pass)
        kiln__sb_addf(sb, "#define KILN_OS_PACK %d\n", kb == 8 && !vb);
    /* the CUDA histogram's flush interval, shortened by a test's knob */
    if (cuda_pass && kn->sort_os_hlimit > 0)
        kiln__sb_addf(sb, "#define KILN_OS_HLIMIT %d\n", kn->sort_os_hlimit);
    /* the CUDA pass's retuned form where it was measured faster */
    if (cuda_pass)
        kiln__sb_addf(sb, "#define KILN_OS_FORM4 %d\n", kb == 4 && (vb == 0 || vb == 8));
    return minb;
}

static kiln_status sorter_build(kiln__gen *gen, int layout, const kiln__plan *plan,
                                kiln__variant *v) {
    kiln__sorter *s = (kiln__sorter *)gen;
    int variant = layout ? KILN__SORT_ONESWEEP : plan->cpu ? KILN__SORT_CPU : KILN__SORT_TILE;
    kiln__sort_shape sh;
    /* the onesweep program carries the tile variant's kernels too (the
     * segment and search kernels, and sorts of 2^30 keys or more) */
    shape_for(plan, variant == KILN__SORT_ONESWEEP ? KILN__SORT_TILE : variant, s->val_bytes, &sh);
    kiln__sb sb = { 0 };
    kiln__gen_device_defines(&sb, plan);
    kiln__sb_addf(&sb,
                  "#define KILN_LOCAL_SIZE %zu\n#define KILN_RADIX_BITS %d\n"
                  "#define KILN_KEY_BYTES %u\n#define KILN_KEY_T %s\n"
                  "typedef %s kiln_uk_t;\n#define KILN_VAL_T %s\n"
                  "#define KILN_OS_ITEMS %d\n#define KILN_SORT_CPU %d\n"
                  "#define KILN_VAL_BYTES %u\n#define KILN_TILE_ITEMS %d\n"
                  "#define KILN_TILE_PAD %d\n",
                  sh.local, sh.radix_bits, s->key_bytes, utype(s->key_bytes),
                  s->key_bytes == 8 ? "ulong" : "uint", utype(s->val_bytes ? s->val_bytes : 4),
                  os_items(s->key_bytes, s->val_bytes, plan->cuda_c), sh.cpu,
                  s->val_bytes ? s->val_bytes : 4, tile_items(s->key_bytes, s->val_bytes),
                  kiln__knobs_get()->sort_tile_pad);
    int os_cl = variant == KILN__SORT_ONESWEEP && !plan->cuda_c;
    int minb = onesweep_defines(&sb, plan, s, variant);
    kiln__sb_add(&sb, kiln__embedded_file("algo_sort_bits.cl"));
    kiln_status st = kiln__gen_template(&sb, "algo_sort.cl", gen->name, &gen->args, KILN__CONTIG);
    /* the onesweep pass: CUDA C, or its OpenCL C port, after the
     * look-back both share */
    if (st == KILN_OK && variant == KILN__SORT_ONESWEEP) {
        kiln__sb_add(&sb, kiln__embedded_file("algo_sort_lookback.cl"));
        st = kiln__gen_template(&sb, os_cl ? "algo_sort_onesweep.cl" : "algo_sort_onesweep.cu",
                                gen->name, &gen->args, KILN__CONTIG);
    }
    unsigned langs = variant != KILN__SORT_ONESWEEP ? KILN__LANGS_PORTABLE
                     : os_cl                        ? 1u << KILN_LANG_OPENCL_C
                                                    : 1u << KILN_LANG_CUDA_C;
    /* KILN_SORT_OS_MINB on NVIDIA's OpenCL: its register cap, as
     * __launch_bounds__ gives ptxas (allocation in steps of 8) */
    char opts[64] = "";
    if (os_cl && plan->ptx_warp && minb)
        snprintf(opts, sizeof opts, "-cl-nv-maxrregcount=%d",
                 (65536 / (minb * KILN_OS_THREADS_HOST)) & ~7);
    if (st == KILN_OK)
        st = kiln__gen_program(gen, &sb, langs, opts,
                               variant == KILN__SORT_CPU ? kCpuFirst : kKernelSuffix, 1, v);
    kiln__sb_free(&sb);
    v->local = sh.local;
    v->tmpl = variant;
    int nk = variant == KILN__SORT_ONESWEEP ? KILN__SORT_BUCKET : KILN__SORT_OS_HIST;
    kiln_kernel **k = s->k[variant];
    for (int j = 0; st == KILN_OK && j < KILN__SORT_NK; j++) {
        if (j >= nk && !(j >= KILN__SORT_BUCKET && variant == KILN__SORT_CPU))
            continue;
        /* the CPU variant's passes: kernels of their own (a gate) */
        const char *suf = variant != KILN__SORT_CPU ? kKernelSuffix[j]
                          : j == KILN__SORT_HIST    ? "_chist"
                          : j == KILN__SORT_SCATTER ? "_cscatter"
                                                    : kKernelSuffix[j];
        char kn[KILN__MAX_NAME + 16];
        snprintf(kn, sizeof kn, "%s%s", gen->name, suf);
        st = kiln_kernel_create(v->prog, kn, &k[j]);
    }
    if (st != KILN_OK)
        for (int j = 0; j < KILN__SORT_NK; j++) {
            kiln_kernel_release(k[j]);
            k[j] = NULL;
        }
    return st;
}

static void sorter_destroy(kiln__gen *gen) {
    kiln__sorter *s = (kiln__sorter *)gen;
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < KILN__SORT_NK; j++)
            kiln_kernel_release(s->k[c][j]);
    free(s);
}

static const kiln__gen_kind sorter_kind = { "kiln_sort", "kiln_sort", sorter_build,
                                            sorter_destroy };

typedef struct sorter_make_arg {
    kiln_context *ctx;
    unsigned kb, vb;
} sorter_make_arg;

static kiln_status sorter_make(void *arg, kiln__gen **gen) {
    sorter_make_arg *a = arg;
    *gen = NULL;
    kiln__sorter *s = kiln__calloc(1, sizeof *s);
    if (!s)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_sort");
    /* the declaration only satisfies the base: the kernels take their
     * arguments directly */
    kiln_status st = kiln__gen_init(&s->gen, &sorter_kind, a->ctx, "const uint *sort_keys", NULL);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    s->key_bytes = a->kb;
    s->val_bytes = a->vb;
    *gen = &s->gen;
    return KILN_OK;
}

/* KILN_SORT_VARIANT=tile runs the portable GPU variant on any device (on
 * CPUs in groups of 16 work-items: tests), =cpu the CPU one everywhere,
 * =onesweep generates the CUDA C variant for a CUDA GPU's capabilities
 * whatever the device (tests/test_sort_nvrtc.c compiles it with NVRTC; the
 * device's own build then fails unless it compiles CUDA C), =onesweep_cl
 * the OpenCL C onesweep on an OpenCL device (tests: PoCL). */
enum { KILN__SORT_OCL_FORCED = KILN__SORT_ONESWEEP + 1 };
static int variant_override(void) {
    const char *e = getenv("KILN_SORT_VARIANT");
    if (!e)
        return -1;
    return !strcmp(e, "tile")          ? KILN__SORT_TILE
           : !strcmp(e, "cpu")         ? KILN__SORT_CPU
           : !strcmp(e, "onesweep")    ? KILN__SORT_ONESWEEP
           : !strcmp(e, "onesweep_cl") ? KILN__SORT_OCL_FORCED
                                       : -1;
}

/* The plan and variant the queue's device sorts with (KILN_SORT_VARIANT
 * may force one, adjusting the plan to it). */
static kiln_status sort_plan(kiln_queue *queue, kiln__plan *out, int *variant_out) {
    kiln__plan plan;
    kiln_status st = kiln__plan_for(queue, &plan);
    if (st != KILN_OK)
        return st;
    int variant = variant_for(&plan), force = variant_override();
    if (force == KILN__SORT_TILE && variant != KILN__SORT_TILE) {
        if (plan.cpu)
            plan.local = 16;
        plan.cpu = 0;
        variant = force;
    } else if (force == KILN__SORT_CPU) {
        plan.cpu = 1;
        variant = force;
    } else if (force == KILN__SORT_OCL_FORCED && plan.opencl_c) {
        /* the OpenCL C onesweep on any OpenCL device: the barrier form of
         * its votes where the compiler takes no PTX (PoCL: tests) */
        plan.cpu = 0;
        plan.local = 256;
        plan.forward_progress = 1;
        variant = KILN__SORT_ONESWEEP;
    } else if (force == KILN__SORT_ONESWEEP && (variant != force || !plan.cuda_c)) {
        /* the CUDA C source, also where the OpenCL C port would be chosen */
        plan.cpu = 0;
        plan.local = 256;
        plan.cuda_c = plan.warp_shuffle = plan.forward_progress = 1;
        plan.device_sleep = 1;
        plan.subgroup_size = 32;
        variant = force;
    }
    *out = plan;
    *variant_out = variant;
    return KILN_OK;
}

kiln_status kiln__sorter_get(kiln_queue *queue, unsigned key_bytes, unsigned val_bytes,
                             kiln__sorter **out, kiln_kernel *const **k, kiln__sort_shape *shape) {
    *out = NULL;
    kiln__plan plan;
    int variant = 0;
    kiln_status st = sort_plan(queue, &plan, &variant);
    if (st != KILN_OK)
        return st;
    kiln_context *ctx = kiln_queue_context(queue);
    char key[64];
    snprintf(key, sizeof key, "sort|%u|%u", key_bytes, val_bytes);
    sorter_make_arg ma = { ctx, key_bytes, val_bytes };
    kiln__gen *gen = NULL;
    st = kiln__gen_cached(ctx, key, sorter_make, &ma, &gen);
    kiln__variant *v = NULL;
    /* the onesweep program lives in the base's second layout slot */
    if (st == KILN_OK)
        st = kiln__gen_variant(gen, variant == KILN__SORT_ONESWEEP, &plan, &v);
    if (st != KILN_OK) {
        kiln__gen_release(gen);
        return st;
    }
    kiln__sorter *s = (kiln__sorter *)gen;
    shape_for(&plan, variant, val_bytes, shape);
    shape->local = v->local;
    shape->items = tile_items(key_bytes, val_bytes);
    shape->os_items = os_items(key_bytes, val_bytes, plan.cuda_c);
    shape->cu = plan.cu;
    shape->cuda_c = plan.cuda_c;
    *k = s->k[variant];
    *out = s;
    return KILN_OK;
}

/* The LSD passes of one plain sort (no segments). */
typedef struct radix_job {
    kiln_buffer *kin, *vin, *kout, *vout;
    size_t n;
    unsigned kb, vb;
    int kind, desc, iota;
    unsigned begin, end;
    int keys_unused; /* argsort: nobody reads kout */
} radix_job;

/* Argsort into int64 indices on the onesweep passes: the indices travel as
 * uint between passes and the last pass widens them as it stores (4 bytes
 * an item less to read and write in every pass but the last;
 * KILN_SORT_NARROW_IDX=0 turns it off). The pass's status words already
 * limit it to n < 2^30. */
static int narrow_indices(kiln__chain *c, const radix_job *j) {
    if (!j->iota || j->vb != 8 || j->n >= ((size_t)1 << 30) || !kiln__knobs_get()->sort_narrow_idx)
        return 0;
    kiln__plan plan;
    int variant = 0;
    return sort_plan(c->q, &plan, &variant) == KILN_OK && variant == KILN__SORT_ONESWEEP;
}

/* The portable passes' launch shape: items per work-item and tiles. */
static void portable_tiles(kiln__chain *c, const kiln__sort_shape *sh, size_t n, size_t *chunk,
                           size_t *ntiles) {
    *chunk = (size_t)sh->items; /* KILN_TILE_ITEMS */
    if (sh->cpu) {
        kiln__plan plan;
        size_t groups = 1;
        if (kiln__plan_for(c->q, &plan) == KILN_OK)
            groups = kiln__cpu_groups(&plan, n, 1u << 14);
        *chunk = (n + groups - 1) / groups;
    }
    *ntiles = (n + sh->local * *chunk - 1) / (sh->local * *chunk);
}

/* One portable pass: histograms, their scan, the scatter. */
static kiln_status portable_pass(kiln__chain *c, kiln_kernel *const *k, const kiln__sort_shape *sh,
                                 const radix_job *j, kiln_array *counts, kiln_buffer *const io[4],
                                 int has_vals, int iota, unsigned shift, unsigned width,
                                 kiln_buffer *wc, size_t wc_bytes, kiln_buffer *gate, size_t cap,
                                 kiln_buffer *rng, int msd) {
    size_t n = j->n, chunk, ntiles;
    portable_tiles(c, sh, n, &chunk, &ntiles);
    kiln_arg mask = KILN_ARG_U32((1u << width) - 1);
    /* the CPU kernels' gate (algo_sort.cl, kiln_sort_runs): msd 0, a
     * plain pass; else the hybrid's (begin | end << 8 | MSD width << 16):
     * with cap 0 its MSD pass (the digit placed by rng), with cap > 0 a
     * pass that runs when some bucket of gate's counts holds more than
     * cap items */
    kiln_buffer *cb = kiln_array_buffer(counts);
    kiln_arg gt[4] = { KILN_ARG_BUF(gate ? gate : cb), KILN_ARG_I64((int64_t)cap),
                       KILN_ARG_BUF(rng ? rng : cb), KILN_ARG_I32(msd) };
    kiln_arg hist[13] = { KILN_ARG_BUF(io[0]),
                          KILN_ARG_I64((int64_t)n),
                          KILN_ARG_I64((int64_t)chunk),
                          KILN_ARG_I32(j->kind),
                          KILN_ARG_I32(j->desc),
                          KILN_ARG_I32((int)shift),
                          mask,
                          KILN_ARG_BUF(cb),
                          KILN_ARG_I64((int64_t)ntiles),
                          gt[0],
                          gt[1],
                          gt[2],
                          gt[3] };
    kiln_status st = kiln__chain_launch(c, k[KILN__SORT_HIST], ntiles * sh->local, sh->local, hist,
                                        sh->cpu ? 13 : 9);
    /* the counts, digit-major, become each tile's first position of each
     * digit: an exclusive scan in place (the scan generator's variant for
     * the device) */
    if (st == KILN_OK) {
        kiln_event *e = NULL;
        st =
            kiln_array_cumsum_out(c->q, counts, counts, 1, kiln__chain_nw(c), kiln__chain_w(c), &e);
        st = kiln__chain_add(c, st, e);
    }
    /* wc: the CPU variant's scratch (the tile's kernel binds the counts
     * there, unused) */
    kiln_buffer *wcb = wc ? wc : cb;
    kiln_arg sc[20] = { KILN_ARG_BUF(io[0]),
                        KILN_ARG_BUF(io[1]),
                        KILN_ARG_BUF(io[2]),
                        KILN_ARG_BUF(io[3]),
                        KILN_ARG_I32(has_vals),
                        KILN_ARG_I32(iota),
                        KILN_ARG_I64((int64_t)n),
                        KILN_ARG_I64((int64_t)chunk),
                        KILN_ARG_I32(j->kind),
                        KILN_ARG_I32(j->desc),
                        KILN_ARG_I32((int)shift),
                        mask,
                        KILN_ARG_BUF(cb),
                        KILN_ARG_I64((int64_t)ntiles),
                        KILN_ARG_BUF(wcb),
                        KILN_ARG_I64((int64_t)(wc ? wc_bytes : 0)),
                        gt[0],
                        gt[1],
                        gt[2],
                        gt[3] };
    if (st == KILN_OK)
        st = kiln__chain_launch(c, k[KILN__SORT_SCATTER], ntiles * sh->local, sh->local, sc,
                                sh->cpu ? 20 : 16);
    return st;
}

/* Bytes of a group's part of the CPU scatter's scratch (algo_sort.cl):
 * a write-combining buffer per digit of 128 / max(key bytes, value bytes,
 * 4) keys, and as many values. */
static size_t cpu_wc_bytes(const kiln__sort_shape *sh, unsigned kb, unsigned vb) {
    unsigned v = vb ? vb : 4, m = kb > v ? kb : v;
    unsigned w = 128 / (m > 4 ? m : 4);
    size_t bytes = ((size_t)1 << sh->radix_bits) * w * (kb + v);
    return (bytes + 63) / 64 * 64;
}

/* The onesweep histogram's grid (a loop over the keys, 32 KiB of shared
 * counters a block in CUDA): where the driver tells, whole waves of
 * blocks (KILN_SORT_OS_HWAVES of them): a partial last wave would take as
 * long as a whole one. Elsewhere (NVIDIA's OpenCL, 8 KiB a group) 1024,
 * as before. Asked at each onesweep sort only, not at every launch of the
 * sorter's other kernels. */
static size_t os_hist_blocks(kiln_queue *q, kiln_kernel *hist, const kiln__sort_shape *sh) {
    unsigned occ = 0;
    if (!sh->cuda_c ||
        kiln_kernel_occupancy(hist, kiln_queue_device(q), KILN_OS_THREADS_HOST, &occ) != KILN_OK ||
        !occ)
        return 1024;
    return (size_t)sh->cu * occ * (size_t)kiln__knobs_get()->sort_os_hwaves;
}

/* The scratch words of a onesweep sort: histograms of up to 8 passes,
 * 64 tile counters, then each pass's status words (sort.h). Two regions
 * of status words, each pass clearing the next one's, measured no faster
 * on the H200 (2^28 int32 keys 5.60-5.63 ms against 5.61) and made
 * NVIDIA's OpenCL pass slower (7.86 ms against 6.20). */
static size_t os_words(int passes, size_t tiles) {
    return 8 * 256 + 64 + (size_t)passes * tiles * 256;
}

/* The CPU hybrid's smallest sort: buckets of 256 items on average (8-bit
 * MSD digits). */
#define HYB_MIN_N ((size_t)1 << 16)

/* The CPU hybrid's MSD digit: 8 bits up to 2^24 items, wider above, so
 * the buckets keep about 2^16 items (up to 11 bits, the CPU variant's
 * digit; 9 and 10 bits timed the same as 8 at 2^24 on the 2-core PoCL
 * machine). */
static unsigned msd_bits(size_t n) {
    unsigned b = 8;
    while (b < 11 && n > ((size_t)1 << (b + 16)))
        b++;
    return b;
}

typedef struct hybrid_in {
    kiln_kernel *const *k;
    const kiln__sort_shape *sh;
    const radix_job *j;
    kiln_array *counts;
    kiln_buffer *wc;
    size_t wc_bytes;
    kiln_buffer *tk, *tv;
    int passes; /* the LSD passes that stand in */
    size_t ntiles;
} hybrid_in;

/* The CPU hybrid's first steps (algo_sort.cl, @NAME@_range, _bucket):
 * the keys' varying bits (into *rngp), then a stable MSD pass on the
 * msd_bits(n) bits under the highest of them (*msd: its gate argument,
 * kiln_sort_runs) from *ksrc, *vsrc
 * (values: the indices with iota) into tk, tv when the standing-in LSD
 * passes are odd in count, else into the output (so that those passes,
 * from there, end in the output); then every bucket of at most *cap
 * items sorted in cache into the output. *ksrc, *vsrc become the MSD
 * pass's output. */
static kiln_status hybrid_step(kiln__chain *c, const hybrid_in *h, kiln_buffer **ksrc,
                               kiln_buffer **vsrc, size_t *cap, kiln_buffer **rngp, int *msd) {
    const radix_job *j = h->j;
    size_t n = j->n;
    int has_vals = j->vb != 0;
    kiln_buffer *mk = h->passes % 2 ? h->tk : j->kout;
    kiln_buffer *mv = has_vals ? (h->passes % 2 ? h->tv : j->vout) : mk;
    kiln_buffer *io[4] = { *ksrc, mk, has_vals && !j->iota ? *vsrc : *ksrc, mv };
    unsigned mb = msd_bits(n);
    /* the keys' varying bits place the MSD digit (under the highest) */
    size_t chunk, ntiles;
    portable_tiles(c, h->sh, n, &chunk, &ntiles);
    kiln_buffer *rng = NULL;
    kiln_status st = kiln__chain_tmp(c, 2 * ntiles * (j->kb == 8 ? 8 : 4), &rng);
    if (st == KILN_OK) {
        kiln_arg a[6] = { KILN_ARG_BUF(*ksrc),          KILN_ARG_I64((int64_t)n),
                          KILN_ARG_I64((int64_t)chunk), KILN_ARG_I32(j->kind),
                          KILN_ARG_I32(j->desc),        KILN_ARG_BUF(rng) };
        st = kiln__chain_launch(c, h->k[KILN__SORT_RANGE], ntiles, 1, a, 6);
    }
    *rngp = rng;
    *msd = (int)(j->begin | j->end << 8 | mb << 16);
    if (st == KILN_OK)
        st = portable_pass(c, h->k, h->sh, j, h->counts, io, has_vals, j->iota, j->begin, mb, h->wc,
                           h->wc_bytes, NULL, 0, rng, *msd);
    /* digits of up to 12 bits, narrower where buckets are small: about
     * 4 items a counter */
    size_t avg = (n + ((size_t)1 << mb) - 1) >> mb;
    unsigned wmax = 4, r = j->end - j->begin - mb;
    while (wmax < 12 && ((size_t)4 << (wmax + 1)) <= avg)
        wmax++;
    unsigned q = (r + wmax - 1) / wmax;
    *cap = 2 * avg;
    kiln__plan plan;
    size_t groups = 1;
    if (st == KILN_OK)
        st = kiln__plan_for(c->q, &plan);
    if (st == KILN_OK)
        groups = kiln__cpu_groups(&plan, n, 1);
    /* counters, two buffers of keys, two of values (algo_sort.cl) */
    size_t vb = has_vals ? j->vb : 0;
    size_t scr_bytes = ((size_t)q * ((size_t)4 << wmax) + 63) / 64 * 64 +
                       2 * ((*cap * j->kb + 63) / 64 * 64) + 2 * ((*cap * vb + 63) / 64 * 64);
    kiln_buffer *scr = NULL;
    if (st == KILN_OK)
        st = kiln__chain_tmp(c, groups * scr_bytes, &scr);
    if (st == KILN_OK) {
        kiln_buffer *vo = has_vals ? j->vout : j->kout;
        kiln_arg a[19] = { KILN_ARG_BUF(mk),
                           KILN_ARG_BUF(j->kout),
                           KILN_ARG_BUF(mv),
                           KILN_ARG_BUF(vo),
                           KILN_ARG_I32(has_vals),
                           KILN_ARG_I32(mk == j->kout),
                           KILN_ARG_I64((int64_t)n),
                           KILN_ARG_I32(j->kind),
                           KILN_ARG_I32(j->desc),
                           KILN_ARG_I32((int)j->begin),
                           KILN_ARG_I32((int)j->end),
                           KILN_ARG_I32((int)mb),
                           KILN_ARG_I32((int)wmax),
                           KILN_ARG_BUF(kiln_array_buffer(h->counts)),
                           KILN_ARG_I64((int64_t)h->ntiles),
                           KILN_ARG_I64((int64_t)*cap),
                           KILN_ARG_BUF(scr),
                           KILN_ARG_I64((int64_t)scr_bytes),
                           KILN_ARG_BUF(rng) };
        st = kiln__chain_launch(c, h->k[KILN__SORT_BUCKET], groups, 1, a, 19);
    }
    *ksrc = mk;
    *vsrc = mv;
    return st;
}

/* Zeroes a onesweep sort's scratch words and counts the digits of every
 * pass of keys ksrc. */
static kiln_status os_hist_run(kiln__chain *c, kiln_kernel *hist, const kiln__sort_shape *sh,
                               kiln_buffer *ksrc, const radix_job *j, int passes,
                               kiln_buffer *counts, size_t tiles) {
    kiln_status st = kiln__chain_zero(c, counts, os_words(passes, tiles) * 4);
    size_t blocks = os_hist_blocks(c->q, hist, sh);
    if (blocks > tiles)
        blocks = tiles;
    kiln_arg h[8] = { KILN_ARG_BUF(ksrc),    KILN_ARG_I64((int64_t)j->n), KILN_ARG_I32(j->kind),
                      KILN_ARG_I32(j->desc), KILN_ARG_I32((int)j->begin), KILN_ARG_I32((int)j->end),
                      KILN_ARG_I32(passes),  KILN_ARG_BUF(counts) };
    if (st == KILN_OK)
        st = kiln__chain_launch(c, hist, blocks * 256, 256, h, 8);
    return st;
}

/* One onesweep pass (algo_sort_onesweep.cu's arguments). */
typedef struct os_pass_arg {
    kiln_buffer *io[4]; /* keys in, keys out, values in, values out */
    int has_vals, iota, kind, desc, pass, wide_vals, skip_keys, pack;
    unsigned shift, end;
} os_pass_arg;

static kiln_status os_pass_run(kiln__chain *c, kiln_kernel *pass, size_t n, kiln_buffer *counts,
                               size_t tiles, const os_pass_arg *a) {
    kiln_arg v[17] = {
        KILN_ARG_BUF(a->io[0]),      KILN_ARG_BUF(a->io[1]),       KILN_ARG_BUF(a->io[2]),
        KILN_ARG_BUF(a->io[3]),      KILN_ARG_I32(a->has_vals),    KILN_ARG_I32(a->iota),
        KILN_ARG_I64((int64_t)n),    KILN_ARG_I32(a->kind),        KILN_ARG_I32(a->desc),
        KILN_ARG_I32((int)a->shift), KILN_ARG_I32((int)a->end),    KILN_ARG_BUF(counts),
        KILN_ARG_I32(a->pass),       KILN_ARG_I64((int64_t)tiles), KILN_ARG_I32(a->wide_vals),
        KILN_ARG_I32(a->skip_keys),  KILN_ARG_I32(a->pack)
    };
    return kiln__chain_launch(c, pass, tiles * 256, 256, v, 17);
}

/* The packed argsort (KILN_OS_PACK in algo_sort_onesweep.cu): 4-byte keys
 * into int64 indices where the CUDA onesweep sorts, each item one ulong
 * (index above the key's order bits) from the first pass, which packs
 * them, to the last, which stores the indices alone. The 4-byte keys'
 * histogram kernel counts the digits; the passes are those of 8-byte keys
 * alone (KILN_SORT_OS_PACK=0: the key and value passes). */
static int packed_argsort(kiln__chain *c, const radix_job *j) {
    if (!j->iota || !j->keys_unused || j->kb != 4 || j->vb != 8 || j->n >= ((size_t)1 << 30) ||
        !kiln__knobs_get()->sort_os_pack)
        return 0;
    kiln__plan plan;
    int variant = 0;
    return sort_plan(c->q, &plan, &variant) == KILN_OK && variant == KILN__SORT_ONESWEEP &&
           plan.cuda_c;
}

static kiln_status radix_packed(kiln__chain *c, const radix_job *j) {
    kiln__sorter *s4 = NULL, *s8 = NULL;
    kiln_kernel *const *k4 = NULL, *const *k8 = NULL;
    kiln__sort_shape sh4, sh8 = { 0 };
    kiln_status st = kiln__sorter_get(c->q, 4, 0, &s4, &k4, &sh4);
    if (st == KILN_OK)
        st = kiln__sorter_get(c->q, 8, 0, &s8, &k8, &sh8);
    size_t n = j->n, tile = (size_t)256 * (size_t)(sh8.os_items ? sh8.os_items : 1);
    size_t tiles = (n + tile - 1) / tile;
    unsigned bits = j->end - j->begin;
    int passes = bits ? (int)((bits + 7) / 8) : 1;
    int held = c->nscratch;
    kiln_buffer *counts = NULL, *tk = NULL;
    if (st == KILN_OK)
        st =
            kiln__chain_scratch(c, KILN__SCRATCH_SORT_STATUS, os_words(passes, tiles) * 4, &counts);
    if (st == KILN_OK && passes > 1)
        st = kiln__chain_scratch(c, KILN__SCRATCH_SORT_KEYS, n * 8, &tk);
    if (st == KILN_OK)
        st = os_hist_run(c, k4[KILN__SORT_OS_HIST], &sh4, j->kin, j, passes, counts, tiles);
    /* the packed items end in vout: they alternate between it and tk */
    kiln_buffer *src = j->kin;
    for (int p = 0; st == KILN_OK && p < passes; p++) {
        kiln_buffer *dst = (passes - 1 - p) % 2 == 0 ? j->vout : tk;
        unsigned shift = j->begin + 8u * (unsigned)p;
        os_pass_arg a = { { src, dst, src, dst },
                          0,
                          0,
                          0,
                          0,
                          p,
                          0,
                          0,
                          (p == 0) | (p == passes - 1) << 1 | j->kind << 2 | j->desc << 4,
                          shift,
                          bits ? (shift + 8 < j->end ? shift + 8 : j->end) : shift };
        st = os_pass_run(c, k8[KILN__SORT_OS_PASS], n, counts, tiles, &a);
        src = dst;
    }
    kiln__chain_scratch_put(c, held);
    if (s4)
        kiln__gen_release(&s4->gen);
    if (s8)
        kiln__gen_release(&s8->gen);
    return st;
}

/* A radix sort's buffers, taken from the chain (given back at the sort's
 * end): the counts, the CPU scatter's write-combining lines and the
 * second buffers of the keys and values the passes alternate with. */
typedef struct radix_bufs {
    kiln_buffer *counts;    /* the onesweep status words */
    kiln_array *carr;       /* the portable passes' counts */
    kiln_array *lsd_counts; /* the hybrid's own for its LSD passes (else carr) */
    kiln_buffer *wc;        /* the CPU scatter's write-combining lines */
    size_t wc_bytes;        /* a group's part of wc */
    kiln_buffer *tk, *tv;   /* keys, values */
} radix_bufs;

/* Takes b's buffers for passes of job j over ntiles groups (cbytes of
 * counts); kin_place, vin_place: keys, values sorted in place. */
static kiln_status radix_buffers(kiln__chain *c, const radix_job *j, const kiln__sort_shape *sh,
                                 int os, int hyb, int passes, size_t cbytes, size_t ntiles,
                                 int kin_place, int vin_place, radix_bufs *b) {
    kiln_status st;
    size_t m = cbytes / 4;
    if (os)
        st = kiln__chain_scratch(c, KILN__SCRATCH_SORT_STATUS, cbytes, &b->counts);
    else
        st = kiln__chain_array(c, KILN_UINT32, 1, &m, &b->carr);
    b->lsd_counts = b->carr;
    if (st == KILN_OK && hyb)
        st = kiln__chain_array(c, KILN_UINT32, 1, &m, &b->lsd_counts);
    /* the CPU scatter's write-combining lines, a part per group */
    b->wc_bytes = sh->cpu ? cpu_wc_bytes(sh, j->kb, j->vb) : 0;
    if (st == KILN_OK && sh->cpu)
        st = kiln__chain_tmp(c, b->wc_bytes * ntiles, &b->wc);
    if (st == KILN_OK && (passes > 1 || kin_place))
        st = kiln__chain_scratch(c, KILN__SCRATCH_SORT_KEYS, j->n * j->kb, &b->tk);
    if (st == KILN_OK && j->vb && (passes > 1 || vin_place))
        st = kiln__chain_scratch(c, KILN__SCRATCH_SORT_VALS, j->n * j->vb, &b->tv);
    return st;
}

static kiln_status radix(kiln__chain *c, const radix_job *job) {
    if (packed_argsort(c, job))
        return radix_packed(c, job);
    radix_job narrowed = *job, *j = &narrowed;
    int wide_vals = narrow_indices(c, job);
    if (wide_vals)
        narrowed.vb = 4; /* vout still holds 8 bytes an item */
    kiln__sorter *s = NULL;
    kiln_kernel *const *k = NULL;
    kiln__sort_shape sh;
    kiln_status st = kiln__sorter_get(c->q, j->kb, j->vb, &s, &k, &sh);
    if (st != KILN_OK)
        return st;
    size_t n = j->n;
    /* status words count to 2^30 */
    int os = sh.variant == KILN__SORT_ONESWEEP && n < ((size_t)1 << 30);
    if (sh.variant == KILN__SORT_ONESWEEP && !os)
        sh.radix_bits = tile_bits(j->vb); /* the tile kernels of the same program */
    unsigned bits = j->end - j->begin;
    int passes = bits ? (int)((bits + sh.radix_bits - 1) / sh.radix_bits) : 1;
    int has_vals = j->vb != 0;
    /* the CPU hybrid: an MSD pass on the range's top 8 to 11 bits, then
     * the buckets in cache (KILN__SORT_BUCKET), the LSD passes standing
     * in when a bucket is too large (hybrid_step) */
    int hyb = sh.cpu && bits > 22 && n >= HYB_MIN_N;
    size_t os_tile = (size_t)256 * (size_t)sh.os_items;
    size_t os_tiles = (n + os_tile - 1) / os_tile, chunk, ntiles;
    portable_tiles(c, &sh, n, &chunk, &ntiles);
    size_t cbytes = os ? os_words(passes, os_tiles) * 4 : ((size_t)1 << sh.radix_bits) * ntiles * 4;
    radix_bufs b = { 0 };
    int held = c->nscratch; /* this sort's slots are given back at its end */
    int kin_place = j->kin == j->kout;
    int vin_place = has_vals && !j->iota && j->vin == j->vout;
    st = radix_buffers(c, j, &sh, os, hyb, passes, cbytes, ntiles, kin_place, vin_place, &b);
    kiln_buffer *ksrc = j->kin, *vsrc = j->vin;
    /* in place when the first pass writes the output (an odd count of
     * passes; the hybrid's MSD pass with an even count): it reads a copy */
    int first_out = hyb ? passes % 2 == 0 : passes % 2;
    if (st == KILN_OK && first_out && kin_place) {
        st = kiln__chain_copy(c, j->kin, b.tk, n * j->kb);
        ksrc = b.tk;
    }
    if (st == KILN_OK && first_out && vin_place) {
        st = kiln__chain_copy(c, j->vin, b.tv, n * j->vb);
        vsrc = b.tv;
    }
    if (st == KILN_OK && os) /* zeroed words, then every histogram */
        st = os_hist_run(c, k[KILN__SORT_OS_HIST], &sh, ksrc, j, passes, b.counts, os_tiles);
    kiln_buffer *gate = NULL, *rng = NULL;
    size_t cap = 0;
    int msd = 0;
    if (st == KILN_OK && hyb) {
        hybrid_in h = { k, &sh, j, b.carr, b.wc, b.wc_bytes, b.tk, b.tv, passes, ntiles };
        st = hybrid_step(c, &h, &ksrc, &vsrc, &cap, &rng, &msd);
        gate = kiln_array_buffer(b.carr);
    }
    for (int p = 0; st == KILN_OK && p < passes; p++) {
        int to_out = (passes - 1 - p) % 2 == 0;
        kiln_buffer *kdst = to_out ? j->kout : b.tk;
        kiln_buffer *vdst = has_vals ? (to_out ? j->vout : b.tv) : kdst;
        unsigned shift = j->begin + (unsigned)p * (unsigned)sh.radix_bits;
        unsigned width = bits ? j->end - shift : 0;
        if (width > (unsigned)sh.radix_bits)
            width = (unsigned)sh.radix_bits;
        int iota = j->iota && p == 0 && !hyb;
        kiln_buffer *io[4] = { ksrc, kdst, has_vals && !iota ? vsrc : ksrc, vdst };
        if (os) {
            int last = p == passes - 1;
            /* wide_vals and skip_keys: honoured by sorters of 4-byte values */
            os_pass_arg a = { { io[0], io[1], io[2], io[3] },
                              has_vals,
                              iota,
                              j->kind,
                              j->desc,
                              p,
                              wide_vals && last,
                              j->keys_unused && last,
                              0,
                              shift,
                              shift + width };
            st = os_pass_run(c, k[KILN__SORT_OS_PASS], n, b.counts, os_tiles, &a);
        } else {
            st = portable_pass(c, k, &sh, j, b.lsd_counts, io, has_vals, iota, shift, width, b.wc,
                               b.wc_bytes, gate, cap, rng, msd);
        }
        ksrc = kdst;
        vsrc = vdst;
    }
    kiln__chain_scratch_put(c, held);
    kiln__gen_release(&s->gen);
    return st;
}

/* A one-item-per-work-item launch of kernel kind kn of sorter (kb, vb). */
kiln_status kiln__sort_simple(kiln__chain *c, unsigned kb, unsigned vb, int kn, size_t n,
                              const kiln_arg *args, size_t nargs) {
    kiln__sorter *s = NULL;
    kiln_kernel *const *k = NULL;
    kiln__sort_shape sh;
    if (c->st != KILN_OK)
        return c->st;
    kiln_status st = kiln__sorter_get(c->q, kb, vb, &s, &k, &sh);
    if (st != KILN_OK)
        return kiln__chain_fail(c, st);
    size_t local = sh.cpu ? 64 : sh.local;
    st = kiln__chain_launch(c, k[kn], (n + local - 1) / local * local, local, args, nargs);
    kiln__gen_release(&s->gen);
    return st;
}

static kiln_status warm(kiln_queue *q, unsigned kb, unsigned vb) {
    kiln__sorter *s = NULL;
    kiln_kernel *const *k = NULL;
    kiln__sort_shape sh;
    kiln_status st = kiln__sorter_get(q, kb, vb, &s, &k, &sh);
    if (s)
        kiln__gen_release(&s->gen);
    return st;
}

static unsigned bits_for(size_t count) {
    unsigned b = 0;
    while (b < 32 && ((size_t)1 << b) < count)
        b++;
    return b;
}

/* Segments: sort the keys with their indices, then stably sort those
 * indices by their segment, then gather keys and values through them. */
static kiln_status segmented(kiln__chain *c, const kiln__sort_req *r, size_t nseg) {
    size_t n = r->n;
    kiln_buffer *tk = NULL, *p1 = NULL, *seg = NULL, *p2 = NULL;
    /* every program built before anything is enqueued */
    unsigned need[3][2] = { { r->key_bytes, 4 },
                            { 4, 4 },
                            { r->iota ? 4 : r->val_bytes, r->iota ? r->val_bytes : 4 } };
    kiln_status st = KILN_OK;
    for (int p = 0; st == KILN_OK && p < (r->val_bytes ? 3 : 2); p++)
        st = warm(c->q, need[p][0], need[p][1]);
    /* the chain's status is sticky: after a failure the steps are no-ops */
    kiln__chain_fail(c, st);
    kiln__chain_tmp(c, n * r->key_bytes, &tk);
    kiln__chain_tmp(c, n * 4, &p1);
    kiln__chain_tmp(c, n * 4, &seg);
    kiln__chain_tmp(c, n * 4, &p2);
    /* tk's sorted keys are never read (tk is reused below) */
    radix_job a = { r->kin,  NULL, tk,           p1,         n, r->key_bytes, 4, r->kind,
                    r->desc, 1,    r->begin_bit, r->end_bit, 1 };
    KILN__CHAIN_DO(c, radix(c, &a));
    kiln_buffer *off = r->offsets ? r->offsets : p1;
    kiln_arg sa[8] = { KILN_ARG_BUF(p1),
                       KILN_ARG_I64((int64_t)n),
                       KILN_ARG_BUF(off),
                       KILN_ARG_BUF(off),
                       KILN_ARG_I32(r->off_wide),
                       KILN_ARG_I64((int64_t)nseg),
                       KILN_ARG_I64((int64_t)(r->offsets ? 0 : r->seglen)),
                       KILN_ARG_BUF(seg) };
    kiln__sort_simple(c, 4, 4, KILN__SORT_SEGID, n, sa, 8);
    kiln_buffer *seg2 = NULL; /* the sorted segment numbers */
    kiln__chain_tmp(c, n * 4, &seg2);
    radix_job b = {
        seg, p1, seg2, p2, n, 4, 4, KILN__KEY_UNSIGNED, 0, 0, 0, bits_for(nseg), 1
    }; /* only p2 is wanted */
    KILN__CHAIN_DO(c, radix(c, &b));
    /* in place: gather from a copy of the input */
    kiln_buffer *kin = r->kin, *vin = r->vin;
    if (r->kin == r->kout) {
        kiln__chain_copy(c, r->kin, tk, n * r->key_bytes);
        kin = tk;
    }
    kiln_arg ga[4] = { KILN_ARG_BUF(kin), KILN_ARG_BUF(p2), KILN_ARG_BUF(r->kout),
                       KILN_ARG_I64((int64_t)n) };
    kiln__sort_simple(c, r->key_bytes, 4, KILN__SORT_GATHER, n, ga, 4);
    if (r->val_bytes && r->iota) {
        kiln_arg ia[4] = { KILN_ARG_BUF(p2), KILN_ARG_I64((int64_t)n),
                           KILN_ARG_I64((int64_t)r->seglen), KILN_ARG_BUF(r->vout) };
        kiln__sort_simple(c, 4, r->val_bytes, KILN__SORT_INDEX, n, ia, 4);
    } else if (r->val_bytes) {
        if (r->vin == r->vout) {
            kiln_buffer *tv = NULL;
            kiln__chain_tmp(c, n * r->val_bytes, &tv);
            kiln__chain_copy(c, r->vin, tv, n * r->val_bytes);
            vin = tv;
        }
        kiln_arg va[4] = { KILN_ARG_BUF(vin), KILN_ARG_BUF(p2), KILN_ARG_BUF(r->vout),
                           KILN_ARG_I64((int64_t)n) };
        kiln__sort_simple(c, r->val_bytes, 4, KILN__SORT_GATHER, n, va, 4);
    }
    return c->st;
}

kiln_status kiln__sort_run(kiln__chain *c, const kiln__sort_req *r) {
    if (r->n == 0)
        return KILN_OK;
    size_t nseg = r->offsets ? r->nseg : r->seglen ? (r->n + r->seglen - 1) / r->seglen : 1;
    kiln__sort_req req = *r;
    radix_job j = { req.kin,       req.vin,       req.kout,       req.vout, req.n,
                    req.key_bytes, req.val_bytes, req.kind,       req.desc, req.iota,
                    req.begin_bit, req.end_bit,   req.keys_unused };
    /* unwanted keys (argsort) go to a scratch buffer, which the packed
     * argsort does without (at 2^28 int32 keys, 1 GiB of device memory) */
    if (!req.kout && (nseg > 1 || !packed_argsort(c, &j))) {
        kiln_status st =
            kiln__chain_scratch(c, KILN__SCRATCH_SORT_ARGKEYS, req.n * req.key_bytes, &req.kout);
        if (st != KILN_OK)
            return st;
        j.kout = req.kout;
    }
    if (nseg > 1)
        return segmented(c, &req, nseg);
    return radix(c, &j);
}
