/* Source pieces every generated kernel shares: the capability defines, the
 * parameter list and argument binding macros of a layout, user text under
 * #line markers, and the embedded templates. */
#include <stdio.h>
#include <string.h>

#include "algo/gen/generator.h"
#include "base/embedded.h"
#include "base/error.h"

void kiln__gen_device_defines(kiln__sb *sb, const kiln__plan *plan) {
    /* What the templates may test (never the backend's name): */
    kiln__sb_addf(sb,
                  "#define KILN_CPU %d\n#define KILN_CUDA_C %d\n"
                  "#define KILN_HAS_WARP_SHUFFLE %d\n"
                  "#define KILN_HAS_SLEEP %d\n",
                  plan->cpu, plan->cuda_c, plan->warp_shuffle && plan->subgroup_size == 32,
                  plan->device_sleep);
}

static int arg_shaped(const kiln__gargs *args, size_t k, int any_shape) {
    return args->v[k].is_ptr && (!any_shape || k == args->first_array);
}

void kiln__gen_params(kiln__sb *sb, const kiln__gargs *args, int layout) {
    int strided = layout & 1, any = (layout >> 1) & 1, nd = kiln__layout_dims(layout);
    kiln__sb_add(sb, "long n");
    for (int d = 1; strided && d < nd; d++)
        kiln__sb_addf(sb, ", long kiln_d%d", d);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr) {
            /* layout bit 2: the arrays do not alias (see elementwise.c) */
            kiln__sb_addf(sb, ", KILN_GLOBAL %s%s *%skiln_p_%s, long kiln_o_%s",
                          g->is_const ? "const " : "", g->type,
                          (layout & 4) ? "KILN_RESTRICT " : "", g->name, g->name);
            for (int d = 0; strided && arg_shaped(args, k, any) && d < nd; d++)
                kiln__sb_addf(sb, ", long kiln_s%d_%s", d, g->name);
        } else {
            kiln__sb_addf(sb, ", %s %s", g->type, g->name);
        }
    }
}

kiln_status kiln__gen_template(kiln__sb *sb, const char *file, const char *name,
                               const kiln__gargs *args, int layout) {
    const char *t = kiln__embedded_file(file);
    if (!t)
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "kernel template %s is not embedded", file);
    kiln__sb params = { 0 };
    kiln__gen_params(&params, args, layout);
    if (params.oom) {
        kiln__sb_free(&params);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "generating source");
    }
    while (*t) {
        const char *at = strchr(t, '@');
        if (!at) {
            kiln__sb_add(sb, t);
            break;
        }
        kiln__sb_addf(sb, "%.*s", (int)(at - t), t);
        if (!strncmp(at, "@NAME@", 6)) {
            kiln__sb_add(sb, name);
            t = at + 6;
        } else if (!strncmp(at, "@PARAMS@", 8)) {
            kiln__sb_add(sb, params.p ? params.p : "");
            t = at + 8;
        } else {
            kiln__sb_add(sb, "@");
            t = at + 1;
        }
    }
    kiln__sb_free(&params);
    return sb->oom ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "generating source")
                   : KILN_OK;
}

void kiln__gen_common(kiln__sb *sb, const kiln__gargs *args, int layout, const char *preamble) {
    /* layout bit 0: strided; bit 1: any-shape (only the first array is
     * strided). */
    int strided = layout & 1, any = (layout >> 1) & 1, nd = kiln__layout_dims(layout);
    /* the random number functions, callable from every expression
     * (include/kiln/random.h) */
    kiln__sb_add(sb, kiln__embedded_file("algo_random.cl"));
    /* and the hash functions (include/kiln/toolkit.h) */
    kiln__sb_add(sb, kiln__embedded_file("algo_hash.cl"));
    kiln__sb_add(sb, "#define KILN_PARAMS ");
    kiln__gen_params(sb, args, layout);
    kiln__sb_add(sb, "\n#define KILN_PASS n");
    for (int d = 1; strided && d < nd; d++)
        kiln__sb_addf(sb, ", kiln_d%d", d);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr) {
            kiln__sb_addf(sb, ", kiln_p_%s, kiln_o_%s", g->name, g->name);
            for (int d = 0; strided && arg_shaped(args, k, any) && d < nd; d++)
                kiln__sb_addf(sb, ", kiln_s%d_%s", d, g->name);
        } else {
            kiln__sb_addf(sb, ", %s", g->name);
        }
    }
    /* KILN_BIND(i) declares each array name as a pointer such that name[i]
     * is element i of the (possibly strided) view. */
    kiln__sb_add(sb, "\n#define KILN_BIND(kiln_ix) \\\n");
    if (strided && nd == 3) /* the 3-D index math, unchanged */
        kiln__sb_add(sb, "  long kiln_t = (kiln_ix); long kiln_i2 = kiln_t % "
                         "kiln_d2; kiln_t /= kiln_d2; \\\n"
                         "  long kiln_i1 = kiln_t % kiln_d1; long kiln_i0 = kiln_t "
                         "/ kiln_d1; \\\n");
    else if (strided) { /* N-d: the C-order index decomposed from the last dimension */
        kiln__sb_add(sb, "  long kiln_t = (kiln_ix); \\\n");
        for (int d = nd - 1; d > 0; d--)
            kiln__sb_addf(sb, "  long kiln_i%d = kiln_t %% kiln_d%d; kiln_t /= kiln_d%d; \\\n", d,
                          d, d);
        kiln__sb_add(sb, "  long kiln_i0 = kiln_t; \\\n");
    }
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (!g->is_ptr)
            continue;
        if (strided && arg_shaped(args, k, any)) {
            kiln__sb_addf(sb, "  KILN_GLOBAL %s%s *%s = kiln_p_%s + (kiln_o_%s",
                          g->is_const ? "const " : "", g->type, g->name, g->name, g->name);
            for (int d = 0; d < nd; d++)
                kiln__sb_addf(sb, " + kiln_i%d*kiln_s%d_%s", d, d, g->name);
            kiln__sb_add(sb, " - (kiln_ix)); \\\n");
        } else
            kiln__sb_addf(sb,
                          "  KILN_GLOBAL %s%s *%s = kiln_p_%s + kiln_o_%s; "
                          "\\\n",
                          g->is_const ? "const " : "", g->type, g->name, g->name, g->name);
    }
    kiln__sb_add(sb, "  (void)0;\n");
    if (preamble)
        kiln__gen_user(sb, "preamble", preamble);
}

void kiln__gen_user(kiln__sb *sb, const char *label, const char *text) {
    kiln__sb_addf(sb, "#line 1 \"%s\"\n%s\n#line 1 \"kiln-generated\"\n", label, text ? text : "");
}

void kiln__gen_return_func(kiln__sb *sb, const char *signature, int bind, const char *label,
                           const char *expr) {
    kiln__sb_addf(sb, "KILN_FUNC %s\n{\n%s    return (\n", signature,
                  bind ? "    KILN_BIND(i)\n" : "");
    kiln__gen_user(sb, label, expr);
    kiln__sb_add(sb, ");\n}\n");
}

void kiln__gen_size_check(kiln__sb *sb, const char *alias, const char *field, size_t declared,
                          const char *type) {
    /* The marker line carries the message's words; a type name never holds
     * a newline that could end it early (it is one declaration). */
    kiln__sb_add(sb, "// kiln_size_check: ");
    for (const char *c = type; *c; c++)
        kiln__sb_addf(sb, "%c", *c == '\n' ? ' ' : *c);
    kiln__sb_addf(sb,
                  "|%s|%zu\n"
                  "#ifndef KILN_SIZE_PROBE\n"
                  "typedef char kiln_size_check_%s[(sizeof(%s) == %zu) ? 1 : -1];\n"
                  "#else\n"
                  "KILN_KERNEL void kiln_size_probe(KILN_GLOBAL ulong *out) "
                  "{ out[0] = (ulong)sizeof(%s); }\n"
                  "#endif\n",
                  field, declared, field, alias, declared, alias);
}

/* Bytes of one element of a lanes array, 0 if it cannot take part. */
static size_t lane_elem_size(const kiln__garg *g) {
    size_t s = g->dtype ? kiln_dtype_size(g->dtype) : 0;
    return s == 1 || s == 2 || s == 4 || s == 8 ? s : 0;
}

int kiln__gen_lanes_ok(const kiln__gargs *args) {
    for (size_t k = 0; k < args->n; k++)
        if (args->v[k].is_ptr && !lane_elem_size(&args->v[k]))
            return 0;
    return 1;
}

void kiln__gen_lanes(kiln__sb *sb, const kiln__gargs *args, const char *ret_type, const char *label,
                     const char *text) {
    int expr = strcmp(ret_type, "void") != 0;
    /* the user's text over private arrays of 4 elements, at lane i */
    kiln__sb_addf(sb,
                  "#define KILN_LANES 1\nKILN_FUNC %s kiln_lanes_fn(long i, "
                  "long n",
                  ret_type);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        kiln__sb_addf(sb, ", %s%s %s%s", g->is_ptr && g->is_const ? "const " : "", g->type,
                      g->is_ptr ? "*" : "", g->name);
    }
    kiln__sb_addf(sb, ")\n{\n%s", expr ? "    return (\n" : "");
    kiln__gen_user(sb, label, text);
    kiln__sb_addf(sb, "%s;\n}\n", expr ? ")" : "");
    /* its arguments after (lane, n) */
    kiln__sb_add(sb, "#define KILN_LANES_ARGS ");
    for (size_t k = 0; k < args->n; k++)
        kiln__sb_addf(sb, args->v[k].is_ptr ? ", kiln_l_%s.t" : ", %s", args->v[k].name);
    kiln__sb_add(sb, "\n");
    /* every array aligned for its access (4 elements, at most 16 bytes) */
    kiln__sb_add(sb, "#define KILN_LANES_ALIGNED ((0");
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        size_t bytes = 4 * lane_elem_size(g);
        if (g->is_ptr)
            kiln__sb_addf(sb, " | ((ulong)(kiln_p_%s + kiln_o_%s) & %zu)", g->name, g->name,
                          (bytes > 16 ? 16 : bytes) - 1);
    }
    kiln__sb_add(sb, ") == 0)\n");
    /* the loop over quads both templates run (nvcc honours the hint) */
    kiln__sb_add(sb, "#if KILN_CUDA_C\n#define KILN_LANES_UNROLL "
                     "_Pragma(\"unroll 2\")\n#else\n#define KILN_LANES_UNROLL\n"
                     "#endif\n#define KILN_LANES_FOR(kiln_q, first, step) "
                     "KILN_LANES_UNROLL for (long kiln_q = (first); kiln_q < "
                     "(n >> 2); kiln_q += (step))\n");
    /* quad q: declare every array's lanes and load the const ones; store
     * the others */
    for (int pass = 0; pass < 2; pass++) {
        kiln__sb_addf(sb, "#define KILN_LANES_%s(kiln_q) \\\n", pass ? "STORE" : "LOAD");
        for (size_t k = 0; k < args->n; k++) {
            const kiln__garg *g = &args->v[k];
            if (!g->is_ptr)
                continue;
            size_t bytes = 4 * lane_elem_size(g);
            const char *vt = bytes == 4 ? "uint" : bytes == 8 ? "uint2" : "uint4";
            size_t nv = bytes > 16 ? bytes / 16 : 1;
            if (pass == 0)
                kiln__sb_addf(sb, "  union { %s v[%zu]; %s t[4]; } kiln_l_%s; \\\n", vt, nv,
                              g->type, g->name);
            for (size_t j = 0; j < nv; j++) {
                if (pass == 0 && g->is_const)
                    kiln__sb_addf(sb,
                                  "  kiln_l_%s.v[%zu] = ((KILN_GLOBAL const %s "
                                  "*)(kiln_p_%s + kiln_o_%s))[(kiln_q) * %zu "
                                  "+ %zu]; \\\n",
                                  g->name, j, vt, g->name, g->name, nv, j);
                if (pass == 1 && !g->is_const)
                    kiln__sb_addf(sb,
                                  "  ((KILN_GLOBAL %s *)(kiln_p_%s + "
                                  "kiln_o_%s))[(kiln_q) * %zu + %zu] = "
                                  "kiln_l_%s.v[%zu]; \\\n",
                                  vt, g->name, g->name, nv, j, g->name, j);
            }
        }
        kiln__sb_add(sb, "  (void)0\n");
    }
}
