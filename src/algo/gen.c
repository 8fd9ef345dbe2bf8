/* Shared machinery of the generators: argument declarations, the source
 * pieces every variant shares, per-device plans, builds and argument
 * binding. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "base/embedded.h"
#include "base/error.h"


void kiln__event_drop(kiln_event **e) {
    if (*e)
        kiln_event_release(*e);
    *e = NULL;
}

/* ------------------------------------------------------------ declarations */

kiln_dtype kiln__dtype_from_name(const char *t) {
    static const struct {
        const char *name;
        kiln_dtype dtype;
    } map[] = {
        {"char", KILN_INT8},           {"signed char", KILN_INT8},
        {"uchar", KILN_UINT8},         {"unsigned char", KILN_UINT8},
        {"short", KILN_INT16},         {"ushort", KILN_UINT16},
        {"unsigned short", KILN_UINT16}, {"int", KILN_INT32},
        {"uint", KILN_UINT32},         {"unsigned int", KILN_UINT32},
        {"unsigned", KILN_UINT32},     {"long", KILN_INT64},
        {"kiln_int64", KILN_INT64},    {"ulong", KILN_UINT64},
        {"unsigned long", KILN_UINT64}, {"kiln_uint64", KILN_UINT64},
        {"half", KILN_FLOAT16},        {"float", KILN_FLOAT32},
        {"double", KILN_FLOAT64},
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (strcmp(map[k].name, t) == 0)
            return map[k].dtype;
    return (kiln_dtype)0;
}

static int is_ident(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static kiln_status parse_one(const char *p, size_t len, const char *what,
                             kiln__garg *g) {
    char buf[256];
    if (len >= sizeof buf)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: argument declaration too long", what);
    memcpy(buf, p, len);
    buf[len] = 0;
    memset(g, 0, sizeof *g);
    /* Tokens: words and '*'. */
    char words[16][64];
    size_t nw = 0;
    int stars = 0;
    for (char *s = buf; *s;) {
        if (isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        if (*s == '*') {
            stars++;
            s++;
            continue;
        }
        if (isalnum((unsigned char)*s) || *s == '_') {
            char *b = s;
            while (*s && (isalnum((unsigned char)*s) || *s == '_'))
                s++;
            size_t wl = (size_t)(s - b);
            if (nw == 16 || wl >= 64)
                goto bad;
            memcpy(words[nw], b, wl);
            words[nw][wl] = 0;
            nw++;
            continue;
        }
        goto bad;
    }
    if (nw < 2 || stars > 1)
        goto bad;
    g->is_ptr = stars;
    snprintf(g->name, sizeof g->name, "%s", words[nw - 1]);
    if (!is_ident(g->name))
        goto bad;
    for (size_t k = 0; k + 1 < nw; k++) {
        const char *w = words[k];
        if (!strcmp(w, "const")) {
            g->is_const = 1;
            continue;
        }
        if (!strcmp(w, "volatile") || !strcmp(w, "__global") ||
            !strcmp(w, "global") || !strcmp(w, "KILN_GLOBAL") ||
            !strcmp(w, "restrict") || !strcmp(w, "__restrict") ||
            !strcmp(w, "__restrict__") || !strcmp(w, "KILN_RESTRICT"))
            continue;
        size_t tl = strlen(g->type), wl = strlen(w);
        if (tl + wl + 2 > sizeof g->type)
            goto bad;
        if (tl)
            g->type[tl++] = ' ';
        memcpy(g->type + tl, w, wl + 1);
    }
    if (!g->type[0])
        goto bad;
    g->dtype = kiln__dtype_from_name(g->type);
    if (!g->is_ptr && !g->dtype)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: scalar argument '%s' has type '%s'; "
                               "scalars must be of a kiln dtype (int, float, "
                               "...)",
                               what, g->name, g->type);
    return KILN_OK;
bad:
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "%s: cannot parse the argument declaration '%s' "
                           "(want e.g. \"float a\" or \"const float *x\")",
                           what, buf);
}

kiln_status kiln__gargs_parse(const char *decl, const char *what,
                              kiln__gargs *out) {
    memset(out, 0, sizeof *out);
    if (!decl)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: arguments is NULL", what);
    size_t cap = 1;
    for (const char *s = decl; *s; s++)
        cap += *s == ',';
    out->v = calloc(cap, sizeof *out->v);
    if (!out->v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    const char *s = decl;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        kiln_status st = parse_one(s, len, what, &out->v[out->n]);
        if (st != KILN_OK) {
            kiln__gargs_free(out);
            return st;
        }
        for (size_t k = 0; k < out->n; k++)
            if (!strcmp(out->v[k].name, out->v[out->n].name)) {
                const char *nm = out->v[out->n].name;
                kiln_status r = kiln__error_set(
                    KILN_ERROR_INVALID_ARGUMENT, 0,
                    "%s: argument '%s' is declared twice", what, nm);
                kiln__gargs_free(out);
                return r;
            }
        out->n++;
        if (!e)
            break;
        s = e + 1;
    }
    out->first_array = (size_t)-1;
    for (size_t k = 0; k < out->n; k++)
        if (out->v[k].is_ptr) {
            out->first_array = k;
            break;
        }
    if (out->first_array == (size_t)-1) {
        kiln__gargs_free(out);
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: at least one array (pointer) argument is "
                               "needed",
                               what);
    }
    return KILN_OK;
}

void kiln__gargs_free(kiln__gargs *a) {
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

/* ------------------------------------------------------------ source parts */

static int arg_shaped(const kiln__gargs *args, size_t k, int any_shape) {
    return args->v[k].is_ptr && (!any_shape || k == args->first_array);
}

void kiln__gen_params(kiln__sb *sb, const kiln__gargs *args, int layout) {
    int strided = layout & 1, any = (layout >> 1) & 1;
    kiln__sb_add(sb, "long n");
    if (strided)
        kiln__sb_add(sb, ", long kiln_d1, long kiln_d2");
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr) {
            /* layout bit 2: the arrays do not alias (see elementwise.c) */
            kiln__sb_addf(sb, ", KILN_GLOBAL %s%s *%skiln_p_%s, long kiln_o_%s",
                          g->is_const ? "const " : "", g->type,
                          (layout & 4) ? "KILN_RESTRICT " : "", g->name,
                          g->name);
            if (strided && arg_shaped(args, k, any))
                kiln__sb_addf(sb,
                              ", long kiln_s0_%s, long kiln_s1_%s, long "
                              "kiln_s2_%s",
                              g->name, g->name, g->name);
        } else {
            kiln__sb_addf(sb, ", %s %s", g->type, g->name);
        }
    }
}

kiln_status kiln__gen_template(kiln__sb *sb, const char *file,
                               const char *name, const char *params) {
    const char *t = kiln__embedded_file(file);
    if (!t)
        return kiln__error_set(KILN_ERROR_INTERNAL, 0,
                               "kernel template %s is not embedded", file);
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
            kiln__sb_add(sb, params);
            t = at + 8;
        } else {
            kiln__sb_add(sb, "@");
            t = at + 1;
        }
    }
    return sb->oom ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                     "generating source")
                   : KILN_OK;
}

void kiln__variant_free(kiln__variant *v) {
    for (int k = 0; k < 3; k++)
        kiln_kernel_release(v->k[k]);
    kiln_program_release(v->prog);
    memset(v, 0, sizeof *v);
}

kiln_status kiln__launch(kiln_queue *queue, kiln_kernel *kernel,
                         size_t global, size_t local, const kiln_arg *prefix,
                         size_t nprefix, const kiln__bound *b,
                         size_t num_wait, kiln_event *const *wait,
                         kiln_event **event) {
    size_t nb = b ? b->nk : 0;
    kiln_arg stack[48] = {{0}};
    kiln_arg *all = nprefix + nb <= 48 ? stack
                                       : malloc((nprefix + nb) * sizeof *all);
    if (!all)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "launch");
    for (size_t k = 0; k < nprefix; k++)
        all[k] = prefix[k];
    for (size_t k = 0; k < nb; k++)
        all[nprefix + k] = b->kargs[k];
    if (global % local)
        global += local - global % local;
    kiln_status st = kiln_kernel_launch(queue, kernel, 1, &global, &local,
                                        nprefix + nb, all, num_wait, wait,
                                        event);
    if (all != stack)
        free(all);
    return st;
}

void kiln__gen_common(kiln__sb *sb, const kiln__gargs *args, int layout) {
    /* layout bit 0: strided; bit 1: any-shape (only the first array is
     * strided). */
    int strided = layout & 1, any = (layout >> 1) & 1;
    kiln__sb_add(sb, "#define KILN_PARAMS ");
    kiln__gen_params(sb, args, layout);
    kiln__sb_add(sb, "\n#define KILN_PASS n");
    if (strided)
        kiln__sb_add(sb, ", kiln_d1, kiln_d2");
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr) {
            kiln__sb_addf(sb, ", kiln_p_%s, kiln_o_%s", g->name, g->name);
            if (strided && arg_shaped(args, k, any))
                kiln__sb_addf(sb, ", kiln_s0_%s, kiln_s1_%s, kiln_s2_%s",
                              g->name, g->name, g->name);
        } else {
            kiln__sb_addf(sb, ", %s", g->name);
        }
    }
    /* KILN_BIND(i) declares each array name as a pointer such that name[i]
     * is element i of the (possibly strided) view. */
    kiln__sb_add(sb, "\n#define KILN_BIND(kiln_ix) \\\n");
    if (strided)
        kiln__sb_add(sb,
                     "  long kiln_t = (kiln_ix); long kiln_i2 = kiln_t % "
                     "kiln_d2; kiln_t /= kiln_d2; \\\n"
                     "  long kiln_i1 = kiln_t % kiln_d1; long kiln_i0 = kiln_t "
                     "/ kiln_d1; \\\n");
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (!g->is_ptr)
            continue;
        if (strided && arg_shaped(args, k, any))
            kiln__sb_addf(sb,
                          "  KILN_GLOBAL %s%s *%s = kiln_p_%s + (kiln_o_%s + "
                          "kiln_i0*kiln_s0_%s + kiln_i1*kiln_s1_%s + "
                          "kiln_i2*kiln_s2_%s - (kiln_ix)); \\\n",
                          g->is_const ? "const " : "", g->type, g->name,
                          g->name, g->name, g->name, g->name, g->name);
        else
            kiln__sb_addf(sb,
                          "  KILN_GLOBAL %s%s *%s = kiln_p_%s + kiln_o_%s; "
                          "\\\n",
                          g->is_const ? "const " : "", g->type, g->name,
                          g->name, g->name);
    }
    kiln__sb_add(sb, "  (void)0;\n");
}

void kiln__gen_user(kiln__sb *sb, const char *label, const char *text) {
    kiln__sb_addf(sb, "#line 1 \"%s\"\n%s\n#line 1 \"kiln-generated\"\n",
                  label, text ? text : "");
}

/* --------------------------------------------------------------- plans */

kiln_status kiln__plan_for_device(kiln_device *device, kiln__plan *plan) {
    kiln_device_info info;
    memset(plan, 0, sizeof *plan);
    kiln_status st = kiln_device_get_info(device, &info);
    if (st != KILN_OK)
        return st;
    plan->cpu = info.type == KILN_DEVICE_CPU;
    plan->cuda = info.backend == KILN_BACKEND_CUDA;
    plan->cu = info.compute_units ? info.compute_units : 1;
    plan->fp64 = info.fp64;
    plan->fp16 = info.fp16;
    if (plan->cpu) {
        plan->local = 1; /* one long chunk per work-item; LLVM vectorises it */
    } else {
        size_t l = 256;
        while (info.max_work_group_size && l > info.max_work_group_size)
            l /= 2;
        plan->local = l ? l : 1;
    }
    return KILN_OK;
}

kiln_status kiln__plan_for(kiln_queue *queue, kiln__plan *plan) {
    return kiln__plan_for_device(kiln_queue_device(queue), plan);
}

/* --------------------------------------------------------------- builds */

void (*kiln__gen_source_hook)(const char *source);

/* 1 if source uses the word `half` and a device of context has no half
 * arithmetic: the likely cause of a failed build, worth saying. */
static int needs_half(kiln_context *context, const char *source) {
    int used = 0;
    for (const char *p = source; !used && (p = strstr(p, "half")); p += 4)
        used = (p == source || !(isalnum((unsigned char)p[-1]) ||
                                 p[-1] == '_')) &&
               !(isalnum((unsigned char)p[4]) || p[4] == '_');
    if (!used)
        return 0;
    for (size_t k = 0; k < kiln_context_num_devices(context); k++) {
        kiln_device_info info;
        if (kiln_device_get_info(kiln_context_device(context, k), &info) ==
                KILN_OK &&
            !info.fp16)
            return 1;
    }
    return 0;
}

kiln_status kiln__gen_build(kiln_context *context, const char *source,
                            const char *what, const char *user_text,
                            kiln_program **program) {
    if (kiln__gen_source_hook)
        kiln__gen_source_hook(source);
    kiln_program_opts opts = {KILN_LANG_AUTO, NULL, 0};
    kiln_status st = kiln_program_create(context, source, &opts, program);
    if (st != KILN_ERROR_BUILD)
        return st;
    /* Quote the user's text and the compiler's first error lines. */
    const char *log = kiln_last_build_log();
    char first[1024] = "";
    size_t used = 0;
    int lines = 0;
    for (const char *l = log ? log : ""; *l && lines < 4;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (strstr(l, "error") && (size_t)(strstr(l, "error") - l) < len) {
            if (used + len + 3 < sizeof first) {
                memcpy(first + used, l, len);
                used += len;
                memcpy(first + used, " | ", 4);
                used += 3;
                lines++;
            }
        }
        if (!e)
            break;
        l = e + 1;
    }
    if (!used && log)
        snprintf(first, sizeof first, "%.600s", log);
    return kiln__error_set(KILN_ERROR_BUILD, kiln_last_error_native(),
                           "%s: the generated kernel for `%s` failed to "
                           "build: %s(full log: kiln_last_build_log())%s",
                           what, user_text ? user_text : "", first,
                           needs_half(context, source)
                               ? "; note: the type 'half' needs a device "
                                 "with half arithmetic (cl_khr_fp16), which "
                                 "this one lacks: declare float16 arrays "
                                 "'ushort *' and convert with kiln_h2f / "
                                 "kiln_f2h"
                               : "");
}

/* --------------------------------------------------------------- binding */

kiln_status kiln__bound_push(kiln__bound *b, kiln_arg a) {
    if (b->nk == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        kiln_arg *p = realloc(b->kargs, cap * sizeof *p);
        if (!p)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kernel arguments");
        b->kargs = p;
        b->cap = cap;
    }
    b->kargs[b->nk++] = a;
    return KILN_OK;
}

void kiln__bound_free(kiln__bound *b) {
    free(b->kargs);
    memset(b, 0, sizeof *b);
}

static int is_float(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}

kiln_status kiln__arg_convert(kiln_arg in, kiln_dtype dtype, kiln_arg *out) {
    if (in.kind != KILN_ARG_SCALAR)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "expected a scalar value");
    if (in.dtype == dtype) {
        *out = in;
        return KILN_OK;
    }
    double d = 0;
    int64_t s = 0;
    uint64_t u = 0;
    int isf = 0, isu = 0;
    switch (in.dtype) {
    case KILN_INT8: s = in.value.i8; break;
    case KILN_UINT8: s = in.value.u8; break;
    case KILN_INT16: s = in.value.i16; break;
    case KILN_UINT16: s = in.value.u16; break;
    case KILN_INT32: s = in.value.i32; break;
    case KILN_UINT32: s = in.value.u32; break;
    case KILN_INT64: s = in.value.i64; break;
    case KILN_UINT64: u = in.value.u64; isu = 1; break;
    case KILN_FLOAT32: d = in.value.f32; isf = 1; break;
    case KILN_FLOAT64: d = in.value.f64; isf = 1; break;
    default:
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "cannot convert a scalar of dtype %s",
                               kiln_dtype_name(in.dtype));
    }
    if (!isf)
        d = isu ? (double)u : (double)s;
    if (isf) {
        s = (int64_t)d;
        u = (uint64_t)(d < 0 ? 0 : d);
    } else if (isu) {
        s = (int64_t)u;
    } else {
        u = (uint64_t)s;
    }
    kiln_arg r = {.kind = KILN_ARG_SCALAR, .dtype = dtype};
    switch (dtype) {
    case KILN_INT8: r.value.i8 = (int8_t)s; break;
    case KILN_UINT8: r.value.u8 = (uint8_t)u; break;
    case KILN_INT16: r.value.i16 = (int16_t)s; break;
    case KILN_UINT16: r.value.u16 = (uint16_t)u; break;
    case KILN_INT32: r.value.i32 = (int32_t)s; break;
    case KILN_UINT32: r.value.u32 = (uint32_t)u; break;
    case KILN_INT64: r.value.i64 = s; break;
    case KILN_UINT64: r.value.u64 = u; break;
    case KILN_FLOAT32: r.value.f32 = (float)d; break;
    case KILN_FLOAT64: r.value.f64 = d; break;
    default:
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "cannot convert a scalar to dtype %s",
                               kiln_dtype_name(dtype));
    }
    (void)is_float;
    *out = r;
    return KILN_OK;
}

/* Shape and strides padded in front to 3 dimensions. */
static void norm3(const kiln_array *a, size_t sh[3], ptrdiff_t st[3]) {
    unsigned pad = 3 - a->ndim;
    for (unsigned d = 0; d < 3; d++) {
        if (d < pad) {
            sh[d] = 1;
            st[d] = 0;
        } else {
            sh[d] = a->shape[d - pad];
            st[d] = a->strides[d - pad];
        }
    }
}

/* Checks one array argument k against its declaration; *strided is set when
 * it is a shaped, non-contiguous view. */
static kiln_status check_array(const kiln__gargs *args, size_t k,
                               const kiln_array *a, const kiln_array *first,
                               size_t n, kiln_context *ctx, int any_shape,
                               const char *what, int *strided) {
    const kiln__garg *g = &args->v[k];
    if (a->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' belongs to another context "
                               "than the queue",
                               what, g->name);
    /* A float16 array may be passed to a ushort pointer: its bits,
     * converted in the kernel with kiln_h2f / kiln_f2h. A struct element
     * type (dtype 0) cannot be checked. */
    int f16_bits = g->dtype == KILN_UINT16 && a->dtype == KILN_FLOAT16;
    if (g->dtype && g->dtype != a->dtype && !f16_bits)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' is declared %s but has dtype "
                               "%s",
                               what, g->name, g->type,
                               kiln_dtype_name(a->dtype));
    int contiguous = kiln__array_contiguous(a);
    if (any_shape && k != args->first_array) {
        if (!contiguous)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: array '%s' is a strided view; with "
                                   "KILN_ELEMENTWISE_ANY_SHAPE only the first "
                                   "array may be strided (copy it first)",
                                   what, g->name);
        return KILN_OK;
    }
    if (any_shape && contiguous)
        return KILN_OK; /* indexed freely: any size */
    if (a->size != n)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' has %zu elements, the range "
                               "has n = %zu",
                               what, g->name, a->size, n);
    int same = a->ndim == first->ndim;
    for (unsigned d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == first->shape[d];
    if (!same)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: array '%s' has another shape than '%s'",
                               what, g->name,
                               args->v[args->first_array].name);
    if (!contiguous)
        *strided = 1;
    return KILN_OK;
}

/* Checks the kinds of the arguments against the declarations. */
static kiln_status check_kinds(const kiln__gargs *args, size_t num_args,
                               const kiln_arg *vals, const char *what) {
    if (num_args != args->n || (num_args && !vals))
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: %zu arguments given, %zu declared", what,
                               num_args, args->n);
    for (size_t k = 0; k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (g->is_ptr && (vals[k].kind != KILN_ARG_ARRAY ||
                          !vals[k].value.array))
            return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                   "%s: argument '%s' is an array: pass "
                                   "KILN_ARG_ARRAY(a) with a non-NULL array",
                                   what, g->name);
        if (!g->is_ptr && vals[k].kind != KILN_ARG_SCALAR)
            return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                   "%s: argument '%s' is a scalar: pass "
                                   "KILN_ARG_I32(x), KILN_ARG_F64(x), ...",
                                   what, g->name);
    }
    return KILN_OK;
}

/* Appends the kernel arguments of the checked values. */
static kiln_status push_values(const kiln__gargs *args, const kiln_arg *vals,
                               int any_shape, const char *what,
                               kiln__bound *b) {
    const kiln_array *first = vals[args->first_array].value.array;
    int strided = b->layout == KILN__STRIDED;
    size_t sh[3];
    ptrdiff_t st[3];
    norm3(first, sh, st);
    kiln_status s = kiln__bound_push(b, KILN_ARG_I64((int64_t)b->n));
    if (s == KILN_OK && strided) {
        s = kiln__bound_push(b, KILN_ARG_I64((int64_t)(sh[1] ? sh[1] : 1)));
        if (s == KILN_OK)
            s = kiln__bound_push(b, KILN_ARG_I64((int64_t)(sh[2] ? sh[2] : 1)));
    }
    for (size_t k = 0; s == KILN_OK && k < args->n; k++) {
        const kiln__garg *g = &args->v[k];
        if (!g->is_ptr) {
            kiln_arg v;
            s = kiln__arg_convert(vals[k], g->dtype, &v);
            if (s != KILN_OK)
                return kiln__error_prefix(s, "%s: argument '%s'", what,
                                          g->name);
            s = kiln__bound_push(b, v);
            continue;
        }
        const kiln_array *a = vals[k].value.array;
        s = kiln__bound_push(b, KILN_ARG_BUF(a->buffer));
        if (s == KILN_OK)
            s = kiln__bound_push(b, KILN_ARG_I64((int64_t)a->offset));
        if (s == KILN_OK && strided && (!any_shape || k == args->first_array)) {
            size_t ash[3];
            ptrdiff_t ast[3];
            norm3(a, ash, ast);
            for (int d = 0; s == KILN_OK && d < 3; d++)
                s = kiln__bound_push(b, KILN_ARG_I64((int64_t)ast[d]));
        }
    }
    return s;
}

kiln_status kiln__bind_values(kiln_queue *queue, const kiln__gargs *args,
                              size_t n, size_t num_args, const kiln_arg *vals,
                              int any_shape, const char *what,
                              kiln__bound *b) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL",
                               what);
    kiln_status s = check_kinds(args, num_args, vals, what);
    if (s != KILN_OK)
        return s;
    kiln_context *ctx = kiln_queue_context(queue);
    const kiln_array *first = vals[args->first_array].value.array;
    int strided = 0;
    for (size_t k = 0; s == KILN_OK && k < args->n; k++)
        if (args->v[k].is_ptr)
            s = check_array(args, k, vals[k].value.array, first, n, ctx,
                            any_shape, what, &strided);
    if (s != KILN_OK)
        return s;
    b->n = n;
    b->layout = strided ? KILN__STRIDED : KILN__CONTIG;
    return push_values(args, vals, any_shape, what, b);
}

/* ------------------------------------------------------------ descriptors */

kiln_status kiln__desc_read(const void *desc, size_t v1_size, size_t size,
                            void *copy, const char *what, const char *macro) {
    memset(copy, 0, size);
    size_t given = *(const size_t *)desc;
    if (given < v1_size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the descriptor's struct_size is %zu (at "
                               "least %zu expected): make it with %s(...)",
                               what, given, v1_size, macro);
    memcpy(copy, desc, given < size ? given : size);
    return KILN_OK;
}
