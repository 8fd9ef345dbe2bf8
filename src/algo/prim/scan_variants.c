/* The scan's three templates (scan.h): which one a device gets, the shape
 * of its tiles and the source of a variant. The tuning values are the
 * measured ones quoted below; the knobs (knobs.h) override them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "algo/prim/prim.h"
#include "algo/gen/knobs.h"
#include "algo/prim/scan.h"

/* Threads per block of the warp scan (KILN_SCAN_THREADS). */
static size_t warp_threads(void) {
    int knob = kiln__knobs_get()->scan_threads;
    return knob ? (size_t)knob : 256;
}

/* Items per thread of the warp scan for a scan type of size bytes (a
 * tile of 256*items values stays within 16 KiB of shared memory, scaled
 * for other block sizes); 0: too large a type, use the three-phase
 * template. KILN_SCAN_ITEMS sets it for types of up to 8 bytes. */
static int warp_items(size_t size) {
    int knob = kiln__knobs_get()->scan_items;
    /* 24 for up to 4 bytes: 68% of copy on an H200 at 2^28 int32 (16: 51%,
     * with 6 blocks per SM; see bench/README.md); 16 for 5 to 8 bytes
     * (H200, 2^28 int64 cumsum with 16-byte status words: 8 items 62-74%
     * of copy at 1 to 4 blocks an SM, 16 items with 4 blocks 86-90%) */
    int items = size <= 4    ? 24
                : size <= 8  ? 16
                : size <= 16 ? 4
                : size <= 32 ? 2
                : size <= 64 ? 1
                             : 0;
    if (size <= 8 && knob)
        items = knob;
    size_t threads = warp_threads();
    /* static shared memory stays under 48 KiB (the tile, padded) */
    while (items > 1 && threads * (size_t)items * size * 33 / 32 > 44 * 1024)
        items--;
    return items;
}

/* The warp scan's look-back settings for a scan type of size bytes (cl:
 * the OpenCL single-pass scan's pauses instead), from the knobs
 * KILN_SCAN_LB, _SLEEP, _EVERY, _PRE and _MINB (knobs.h). The delays apply
 * only to grids of 512 tiles or more. */
static void warp_lookback(size_t size, int cl, int *lb, int *sleep_ns, int *minb, int *pre_ns,
                          int *every) {
    const kiln__knobs *k = kiln__knobs_get();
    int k_lb = k->scan_lb, k_sleep = k->scan_sleep, k_minb = k->scan_minb;
    int k_pre = k->scan_pre, k_every = k->scan_every;
    /* Defaults from H200 sweeps at 2^28 int32 (scripts/gpu-scan-sweep.sh):
     * a wider window (LB 4) cost registers and was slower; 6 blocks of 256
     * per SM (<= 40 registers) was best. Polling less was the big step:
     * 1200 ns before the first poll and 650 ns before each one took the
     * scan from 69% to 83% of copy (polls that find nothing load the L2
     * the loads and stores need; 1500 ns a poll is too long: 70%). Types
     * of 5 to 8 bytes (one 16-byte status word in the warp scan): see
     * below; larger ones were not measured and keep the earlier settings. */
    int packed = size <= (cl ? 4 : 8); /* the value in the status word */
    *lb = packed ? k_lb : 1;
    /* cl: the OpenCL single-pass scan where the device can pause (H100,
     * NVIDIA's OpenCL, 2^28 int32, ms, two rounds: no pauses 0.988 /
     * 0.970, 1200 + 650 ns 0.926 / 0.956, 2000 + 1000 0.928 / 0.939) */
    *sleep_ns = k_sleep >= 0 ? k_sleep : !packed ? 100 : cl ? 1000 : 650;
    *pre_ns = k_pre >= 0 ? k_pre : !packed ? 0 : cl ? 2000 : 1200;
    *every = k_every >= 0 ? k_every : packed;
    /* 5 to 8 bytes: 4 blocks of 16 items (32 KiB of shared memory each) */
    *minb = k_minb ? k_minb : size <= 4 ? 6 : packed ? 4 : 1;
    if ((size_t)*minb * warp_threads() > 2048) /* threads per SM */
        *minb = (int)(2048 / warp_threads());
}

/* __launch_bounds__ blocks of the warp scan of a packed type whose
 * selection keeps values of keep bytes in registers (one register a thread
 * and item, two above 4 bytes): 4 blocks (64 registers), else 2. */
static int keep_minb(size_t keep) {
    return keep <= 4 ? 4 : 2;
}

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
    int knob = kiln__knobs_get()->scan_items;
    int items = size <= 4 ? (seg ? 16 : 24) : size <= 8 ? 8 : size <= 16 ? 4 : size <= 32 ? 2 : 0;
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
    int knob = kiln__knobs_get()->scan_window;
    int w = knob ? knob : plan->cpu ? 4 : 32;
    size_t local = plan->cpu ? 64 : CL_THREADS; /* kiln__scan_local() */
    return (size_t)w > local ? (int)local : w;
}

/* The files of the templates and the languages they compile as. */
static const struct {
    const char *file;
    unsigned languages;
} kTemplates[] = {
    [KILN__SCAN_THREEPHASE] = { "algo_scan.cl", KILN__LANGS_PORTABLE },
    [KILN__SCAN_WARP] = { "algo_scan_warp.cu", 1u << KILN_LANG_CUDA_C },
    [KILN__SCAN_ONEPASS_CL] = { "algo_scan_onepass.cl", 1u << KILN_LANG_OPENCL_C },
};

int kiln__scan_template(const kiln_scan *s, const kiln__plan *plan) {
    int knob = kiln__knobs_get()->scan_variant;
    if (knob == 2)
        return KILN__SCAN_THREEPHASE;
    /* the look-back waits for groups that started earlier: it needs
     * forward progress */
    if (plan->cuda_c && plan->warp_shuffle && plan->subgroup_size == 32 && plan->forward_progress)
        return plan->local == 256 && warp_items(s->scan_size) ? KILN__SCAN_WARP
                                                              : KILN__SCAN_THREEPHASE;
    if (!plan->opencl_c || !cl_items(s->scan_size, s->seg != NULL))
        return KILN__SCAN_THREEPHASE;
    /* GPUs only by default: on a CPU the contiguous ranges of the
     * three-phase template are the fast layout */
    if (knob == 1 || (plan->forward_progress && !plan->cpu && plan->local == CL_THREADS))
        return KILN__SCAN_ONEPASS_CL;
    return KILN__SCAN_THREEPHASE;
}

/* The OpenCL single-pass template runs on a CPU only when forced (tests):
 * there small groups and tiles build faster (PoCL) and give more tiles,
 * and a look-back window of 4 tiles takes the multi-window path more
 * often. */
size_t kiln__scan_local(int tmpl, const kiln__plan *plan) {
    return tmpl == KILN__SCAN_WARP         ? warp_threads()
           : tmpl == KILN__SCAN_ONEPASS_CL ? (plan->cpu ? 64 : CL_THREADS)
                                           : plan->local;
}

int kiln__scan_items(int tmpl, const kiln_scan *s, const kiln__plan *plan) {
    int items = tmpl == KILN__SCAN_WARP         ? warp_items(s->scan_size)
                : tmpl == KILN__SCAN_ONEPASS_CL ? cl_items(s->scan_size, s->seg != NULL)
                                                : 1;
    return tmpl == KILN__SCAN_ONEPASS_CL && plan->cpu && items > 4 ? 4 : items;
}

int kiln__scan_packed(int tmpl, size_t size) {
    return tmpl == KILN__SCAN_THREEPHASE ? 0 : size <= 4 ? 1 : size <= 8 ? 2 : 0;
}

/* The languages a template's source compiles as. */
unsigned kiln__scan_languages(int tmpl) {
    return kTemplates[tmpl].languages;
}

/* Text matching for vec_io: skips spaces, then takes word (an identifier
 * when word is NULL, copied to id) and moves *p past it; 0 if absent. */
static int take(const char **p, const char *word, char *id, size_t idn) {
    const char *q = *p;
    while (isspace((unsigned char)*q))
        q++;
    size_t n = 0;
    if (word) {
        n = strlen(word);
        if (strncmp(q, word, n) != 0 ||
            (isalnum((unsigned char)word[n - 1]) && (isalnum((unsigned char)q[n]) || q[n] == '_')))
            return 0;
    } else {
        while (isalnum((unsigned char)q[n]) || q[n] == '_')
            n++;
        if (!n || n >= idn || isdigit((unsigned char)*q))
            return 0;
        memcpy(id, q, n);
        id[n] = 0;
    }
    *p = q + n;
    return 1;
}

static const kiln__garg *array_arg(const kiln_scan *s, const char *name) {
    for (size_t k = 0; k < s->gen.args.n; k++)
        if (s->gen.args.v[k].is_ptr && !strcmp(s->gen.args.v[k].name, name))
            return &s->gen.args.v[k];
    return NULL;
}

/* A scan of a 4-byte type whose input is x[i] of one array and whose
 * output stores item (or prev_item) at y[i] of another, both arrays of
 * the scan type: the single-pass templates may then move a quad of items
 * in one 16-byte access (KILN_SCAN_VEC; kiln_array_cumsum_out is one).
 * Writes the defines the templates use; 0 if the scan is not of this
 * form. */
static int vec_io(const kiln_scan *s, kiln__sb *sb) {
    char in[64], out[64], what[16];
    const char *p = s->input;
    if (s->seg || s->scan_size != 4 || !p || !s->output)
        return 0;
    if (!take(&p, NULL, in, sizeof in) || !take(&p, "[", 0, 0) || !take(&p, "i", 0, 0) ||
        !take(&p, "]", 0, 0))
        return 0;
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return 0;
    p = s->output;
    if (!take(&p, NULL, out, sizeof out) || !take(&p, "[", 0, 0) || !take(&p, "i", 0, 0) ||
        !take(&p, "]", 0, 0) || !take(&p, "=", 0, 0) || !take(&p, NULL, what, sizeof what))
        return 0;
    take(&p, ";", 0, 0);
    while (isspace((unsigned char)*p))
        p++;
    int excl = !strcmp(what, "prev_item");
    if (*p || (!excl && strcmp(what, "item")))
        return 0;
    const kiln__garg *x = array_arg(s, in), *y = array_arg(s, out);
    char st[96];
    snprintf(st, sizeof st, "%s", s->scan_type);
    char *a = st, *e = st + strlen(st);
    while (isspace((unsigned char)*a))
        a++;
    while (e > a && isspace((unsigned char)e[-1]))
        *--e = 0;
    if (!x || !y || y->is_const || strcmp(x->type, a) || strcmp(y->type, a))
        return 0;
    kiln__sb_addf(sb,
                  "#define KILN_SCAN_VEC 1\n"
                  "#define KILN_VEC_IN (kiln_p_%s + kiln_o_%s)\n"
                  "#define KILN_VEC_OUT (kiln_p_%s + kiln_o_%s)\n"
                  "#define KILN_VEC_EXCL %d\n",
                  in, in, out, out, excl);
    return 1;
}

/* The variant's shape: the device's defines, work-group size, items a
 * work-item scans, packing, padding, and vec_io's quads where they
 * apply. */
static void scan_shape_defines(const kiln_scan *s, int kind, int strided, const kiln__plan *plan,
                               kiln__sb *sb) {
    kiln__gen_device_defines(sb, plan);
    kiln__sb_addf(sb,
                  "#define KILN_LOCAL_SIZE %zu\n"
                  "#define KILN_SEGMENTED %d\n#define KILN_ITEMS %d\n"
                  "#define KILN_PACKED %d\n",
                  kiln__scan_local(kind, plan), s->seg ? 1 : 0, kiln__scan_items(kind, s, plan),
                  kiln__scan_packed(kind, s->scan_size));
    /* the warp scan's status words carry the scratch buffer's use count
     * (scan_run.c) */
    if (kind == KILN__SCAN_WARP)
        kiln__sb_addf(sb, "#define KILN_SCAN_EPOCH %d\n", kiln__knobs_get()->scan_epoch);
    kiln__sb_addf(sb, "#define KILN_SCAN_PAD %d\n", kiln__knobs_get()->scan_pad);
    /* quads (vec_io) by default in the OpenCL single pass only. H100,
     * 2^28 int32, three rounds: NVIDIA's OpenCL 82-83% of copy with them,
     * 73-81% without; the warp scan 78-80% with them (NVRTC: 32 bytes of
     * spill under its 40-register cap), 88-89% without */
    int vec = kiln__knobs_get()->scan_vec;
    if (vec < 0)
        vec = kind == KILN__SCAN_ONEPASS_CL;
    if (vec && kind != KILN__SCAN_THREEPHASE && !strided && !s->keep &&
        kiln__scan_items(kind, s, plan) % 4 == 0)
        vec_io(s, sb);
    /* a CPU's three-phase rescan of an int32 sum: 16 items in a vector
     * (algo_scan.cl, where a C compiler builds it) */
    else if (kind == KILN__SCAN_THREEPHASE && plan->cpu && !strided && !s->keep &&
             !strcmp(s->op, "a+b") &&
             (!strcmp(s->scan_type, "int") || !strcmp(s->scan_type, "uint")) && vec_io(s, sb))
        kiln__sb_add(sb, "#define KILN_SCAN_ADD32 1\n");
}

/* The kept value's defines; 1 when it rides in registers. A kept value
 * (kiln_scan.keep): carried in registers from the load to the output by
 * the warp scan (its loads and outputs handle item i in the same thread;
 * so does the OpenCL single pass, with KILN_SCAN_KEEP=1), else evaluated
 * again by kiln_output. The output text's helpers take it through
 * KILN_KEPT_PARAM / KILN_KEPT_ARG. H100, 2^28 float32 copy_if, two
 * rounds: cuda:0 0.862 / 0.880 ms without, 0.790 / 0.804 with; NVIDIA's
 * OpenCL 0.903 / 0.887 without, 1.000 / 0.955 with. By default only where
 * measured: values and counts of up to 4 bytes (8-byte values would take
 * the warp scan from 6 blocks an SM to 2, and 3 were already 20% slower
 * for 4-byte ones). */
static int scan_keep_defines(const kiln_scan *s, int kind, kiln__sb *sb) {
    int keep_knob = kiln__knobs_get()->scan_keep;
    int keep_small = s->keep_size <= 4 && s->scan_size <= 4;
    int keep_regs =
        s->keep && (kind == KILN__SCAN_WARP ? keep_knob == 1 || (keep_knob == -1 && keep_small)
                    : kind == KILN__SCAN_ONEPASS_CL ? keep_knob == 1
                                                    : 0);
    if (s->keep)
        kiln__sb_addf(sb,
                      "#define KILN_SCAN_KEEP %d\ntypedef %s kiln_keep_t;\n"
                      "#define KILN_KEPT_PARAM kiln_keep_t kiln_kept,\n"
                      "#define KILN_KEPT_ARG kiln_kept,\n",
                      keep_regs, s->keep_type);
    else
        kiln__sb_add(sb, "#define KILN_SCAN_KEEP 0\n#define KILN_KEPT_PARAM\n"
                         "#define KILN_KEPT_ARG\n");
    return keep_regs;
}

/* The single-pass templates' look-back: the OpenCL totals scan and
 * pauses, the warp scan's polling and blocks an SM. */
static void scan_lookback_defines(const kiln_scan *s, int kind, int keep_regs,
                                  const kiln__plan *plan, kiln__sb *sb) {
    /* the OpenCL template's totals scan: one barrier a step with two
     * buffers, where local memory allows */
    if (kind == KILN__SCAN_ONEPASS_CL) {
        kiln__sb_addf(sb,
                      "#define KILN_DB %d\n#define KILN_LB_W %d\n"
                      "#define KILN_GLOBAL_BARRIER %d\n",
                      s->scan_size <= 16, cl_window(plan), kiln__knobs_get()->scan_gbar);
        /* where the device can pause (NVIDIA's OpenCL), the look-back
         * polls less, as the warp scan does (same knobs and defaults) */
        int lb, sleep_ns = 0, minb, pre_ns = 0, every;
        if (plan->device_sleep)
            warp_lookback(s->scan_size, 1, &lb, &sleep_ns, &minb, &pre_ns, &every);
        kiln__sb_addf(sb, "#define KILN_LB_SLEEP %d\n#define KILN_LB_PRE %d\n", sleep_ns, pre_ns);
    }
    if (kind == KILN__SCAN_WARP) {
        int lb, sleep_ns, minb, pre_ns, every;
        warp_lookback(s->scan_size, 0, &lb, &sleep_ns, &minb, &pre_ns, &every);
        /* kept values take a register an item: fewer blocks */
        if (keep_regs && !kiln__knobs_get()->scan_minb && s->scan_size <= 4)
            minb = keep_minb(s->keep_size);
        /* ... and with 4 blocks an SM, not 6, tiles finish further apart:
         * shorter pauses (H100, 2^28, copy_if / unique, ms: 1200 + 650 ns
         * 0.731 / 0.765, 600 + 300 ns 0.726 / 0.696, 300 + 150 ns
         * 0.844 / 0.739) */
        /* likewise selections scanning 8-byte pairs (unique with counts;
         * H200, 2^28: 1.51 ms at 1200 + 650 ns, 1.45 at 600 + 300) */
        if ((keep_regs && s->scan_size <= 4) ||
            (s->keep && s->scan_size > 4 && s->scan_size <= 8)) {
            const kiln__knobs *k = kiln__knobs_get();
            if (k->scan_pre < 0)
                pre_ns = 600;
            if (k->scan_sleep < 0)
                sleep_ns = 300;
        }
        kiln__sb_addf(sb,
                      "#define KILN_LB %d\n#define KILN_LB_SLEEP %d\n"
                      "#define KILN_MINB %d\n#define KILN_LB_PRE %d\n"
                      "#define KILN_LB_EVERY %d\n",
                      lb, sleep_ns, minb, pre_ns, every);
    }
}

/* The functions of the user's texts: the scan type, neutral, operator,
 * input, segment start and kept value. */
static void scan_functions(const kiln_scan *s, int kind, int strided, int keep_regs, kiln__sb *sb) {
    kiln__gen_common(sb, &s->gen.args, strided, s->preamble);
    kiln__sb_add(sb, "typedef\n");
    kiln__gen_user(sb, "scan_type", s->scan_type);
    kiln__sb_add(sb, "kiln_scan_t;\n");
    kiln__gen_size_check(sb, "kiln_scan_t", "scan_size", s->scan_size, s->scan_type);
    kiln__gen_return_func(sb, "kiln_scan_t kiln_neutral(void)", 0, "neutral", s->neutral);
    kiln__gen_return_func(sb,
                          "kiln_scan_t kiln_scan_op(kiln_scan_t a, "
                          "kiln_scan_t b)",
                          0, "scan", s->op);
    kiln__gen_return_func(sb, "kiln_scan_t kiln_input(long i, KILN_PARAMS)", 1, "input", s->input);
    if (s->seg) {
        kiln__sb_add(sb, "KILN_FUNC int kiln_seg_start(long i, "
                         "KILN_PARAMS)\n{\n    KILN_BIND(i)\n"
                         "    return (\n");
        kiln__gen_user(sb, "segment_start", s->seg);
        kiln__sb_add(sb, ") ? 1 : 0;\n}\n");
    }
    if (s->keep)
        kiln__gen_return_func(sb, "kiln_keep_t kiln_keep(long i, KILN_PARAMS)", 1, "keep", s->keep);
    if (keep_regs && kind == KILN__SCAN_WARP && s->keep_input) {
        kiln__sb_add(sb, "#define KILN_SCAN_KEEP_INPUT 1\n");
        kiln__gen_return_func(sb,
                              "kiln_scan_t kiln_input_kept(long i, kiln_keep_t "
                              "kiln_kept, kiln_keep_t kiln_prev_kept, "
                              "KILN_PARAMS)",
                              1, "input", s->keep_input);
    }
}

/* kiln_output, from the output text, and the last item's statement. */
static void scan_output(const kiln_scan *s, int kind, int keep_regs, kiln__sb *sb) {
    kiln__sb_addf(sb,
                  "KILN_FUNC void kiln_output(long i, kiln_scan_t "
                  "item, kiln_scan_t prev_item, %sKILN_PARAMS)\n{\n"
                  "    KILN_BIND(i)\n",
                  keep_regs ? "kiln_keep_t kiln_kept, " : "");
    if (s->keep && !keep_regs)
        kiln__sb_add(sb, "    const kiln_keep_t kiln_kept = "
                         "kiln_keep(i, KILN_PASS);\n");
    kiln__gen_user(sb, "output", s->output);
    /* the last item's statement: in the single-pass scans a function
     * they call once, in the three-phase one behind a test in the output */
    int last_apart = s->last && kind != KILN__SCAN_THREEPHASE;
    if (s->last && !last_apart) {
        kiln__sb_add(sb, ";\nif (i == n - 1) {\n");
        kiln__gen_user(sb, "output", s->last);
        kiln__sb_add(sb, ";\n}");
    }
    kiln__sb_add(sb, ";\n}\n");
    if (last_apart) {
        kiln__sb_add(sb, "#define KILN_SCAN_LAST 1\n"
                         "KILN_FUNC void kiln_last(long i, kiln_scan_t item, "
                         "KILN_PARAMS)\n{\n    KILN_BIND(i)\n");
        kiln__gen_user(sb, "output", s->last);
        kiln__sb_add(sb, ";\n}\n");
    }
}

/* The whole generated source (without the backend prelude) of a variant. */
kiln_status kiln__scan_source(kiln_scan *s, int strided, const kiln__plan *plan, kiln__sb *sb) {
    int kind = kiln__scan_template(s, plan);
    scan_shape_defines(s, kind, strided, plan, sb);
    int keep_regs = scan_keep_defines(s, kind, sb);
    scan_lookback_defines(s, kind, keep_regs, plan, sb);
    scan_functions(s, kind, strided, keep_regs, sb);
    scan_output(s, kind, keep_regs, sb);
    return kiln__gen_template(sb, kTemplates[kind].file, s->gen.name, &s->gen.args, strided);
}
