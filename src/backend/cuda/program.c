/* CUDA programs (NVRTC -> cubin -> cuModuleLoadData), kernels and launch. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/embedded.h"
#include "base/error.h"
#include "base/fault.h"

const char *kiln__cu_prelude(void) {
    const char *p = kiln__embedded_file("prelude_cuda.h");
    return p ? p : "";
}

/* ---- options ------------------------------------------------------------ */

typedef struct kiln__cu_opts {
    char **v;
    size_t n, cap;
} kiln__cu_opts;

static int kiln__cu_opts_add(kiln__cu_opts *o, const char *s, size_t len) {
    if (o->n + 1 >= o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        char **v = kiln__realloc(o->v, cap * sizeof *v);
        if (!v)
            return -1;
        o->v = v;
        o->cap = cap;
    }
    char *c = kiln__malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    o->v[o->n++] = c;
    return 0;
}

static void kiln__cu_opts_free(kiln__cu_opts *o) {
    for (size_t i = 0; i < o->n; i++)
        free(o->v[i]);
    free(o->v);
}

/* Splits options at blanks, honouring "..." and '...' quotes (removed). */
static int kiln__cu_split(const char *s, kiln__cu_opts *out) {
    size_t cap = strlen(s) + 1;
    char *tok = kiln__malloc(cap);
    if (!tok)
        return -1;
    while (*s) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        size_t n = 0;
        char quote = 0;
        while (*s && (quote || !isspace((unsigned char)*s))) {
            if (!quote && (*s == '"' || *s == '\'')) {
                quote = *s++;
                continue;
            }
            if (quote && *s == quote) {
                quote = 0;
                s++;
                continue;
            }
            tok[n++] = *s++;
        }
        if (kiln__cu_opts_add(out, tok, n) != 0) {
            free(tok);
            return -1;
        }
    }
    free(tok);
    return 0;
}

/* OpenCL-style options to NVRTC ones: -D/-I/-U kept (a separate value is
 * joined), -cl-fast-relaxed-math -> --use_fast_math, -cl-mad-enable ->
 * --fmad=true, -DKILN_NO_FP_CONTRACT kept and --fmad=false added, other
 * -cl-* and -O<n> dropped (NVRTC always optimises),
 * anything else passed through unchanged. */
static int kiln__cu_translate(const char *options, kiln__cu_opts *out, int *has_arch) {
    kiln__cu_opts raw = { 0 };
    *has_arch = 0;
    if (options && kiln__cu_split(options, &raw) != 0) {
        kiln__cu_opts_free(&raw);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < raw.n && rc == 0; i++) {
        const char *a = raw.v[i];
        if ((strcmp(a, "-D") == 0 || strcmp(a, "-I") == 0 || strcmp(a, "-U") == 0) &&
            i + 1 < raw.n) {
            char buf[4096];
            int len = snprintf(buf, sizeof buf, "%s%s", a, raw.v[++i]);
            rc = len < 0 || (size_t)len >= sizeof buf ? -1
                                                      : kiln__cu_opts_add(out, buf, (size_t)len);
            if (rc == 0 && !strcmp(buf, "-DKILN_NO_FP_CONTRACT"))
                rc = kiln__cu_opts_add(out, "--fmad=false", 12);
        } else if (strcmp(a, "-DKILN_NO_FP_CONTRACT") == 0) {
            /* no fma contraction (the OpenCL prelude's pragma) */
            rc = kiln__cu_opts_add(out, a, strlen(a));
            if (rc == 0)
                rc = kiln__cu_opts_add(out, "--fmad=false", 12);
        } else if (strcmp(a, "-cl-fast-relaxed-math") == 0) {
            rc = kiln__cu_opts_add(out, "--use_fast_math", 15);
        } else if (strcmp(a, "-cl-mad-enable") == 0) {
            rc = kiln__cu_opts_add(out, "--fmad=true", 11);
        } else if (strncmp(a, "-cl-", 4) == 0) {
            continue;
        } else if (a[0] == '-' && a[1] == 'O' &&
                   (a[2] == '\0' || (isdigit((unsigned char)a[2]) && !a[3]))) {
            continue;
        } else {
            if (strncmp(a, "--gpu-architecture", 18) == 0 || strncmp(a, "-arch", 5) == 0)
                *has_arch = 1;
            rc = kiln__cu_opts_add(out, a, strlen(a));
        }
    }
    kiln__cu_opts_free(&raw);
    return rc;
}

/* ---- compile -------------------------------------------------------------- */

static kiln_status kiln__cu_nvrtc_fail(const char *call, nvrtcResult r) {
    return kiln__error_set(KILN_ERROR_DRIVER, (long)r, "%s: %s (%d)", call,
                           kiln__cu.nvrtcGetErrorString(r), (int)r);
}

/* The architecture to compile for: sm_<cc> if NVRTC knows it (a cubin);
 * otherwise PTX for the newest architecture NVRTC knows below cc, which the
 * driver compiles at load time. */
static kiln_status kiln__cu_pick_arch(unsigned cc, char *arch, size_t cap, int *is_ptx) {
    int n = 0;
    *is_ptx = 0;
    if (kiln__cu.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) {
        snprintf(arch, cap, "--gpu-architecture=sm_%u", cc);
        return KILN_OK;
    }
    int *archs = kiln__calloc((size_t)n, sizeof *archs);
    if (!archs)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    int best = -1;
    if (kiln__cu.nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS) {
        for (int i = 0; i < n; i++) {
            if ((unsigned)archs[i] == cc) {
                best = archs[i];
                *is_ptx = 0;
                break;
            }
            if ((unsigned)archs[i] < cc && archs[i] > best) {
                best = archs[i];
                *is_ptx = 1;
            }
        }
    }
    free(archs);
    if (best < 0)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "NVRTC %d.%d cannot compile for compute "
                               "capability %u.%u (too old a GPU for this "
                               "toolkit)",
                               kiln__cu.nvrtc_major, kiln__cu.nvrtc_minor, cc / 10, cc % 10);
    if (*is_ptx)
        snprintf(arch, cap, "--gpu-architecture=compute_%d", best);
    else
        snprintf(arch, cap, "--gpu-architecture=sm_%d", best);
    return KILN_OK;
}

/* ---- KILN_LOCAL pointer parameters -------------------------------------
 *
 * `KILN_LOCAL T *name` followed by ',' or ')' is a kernel parameter (OpenCL's
 * __local T *); on CUDA it becomes `kiln__local_ptr<T> name` (prelude), an
 * offset into dynamic shared memory set at launch. Comments, strings and
 * preprocessor lines are left alone; the line count is kept, so log line
 * numbers do not move. Returns a malloc'd copy, or NULL if nothing changed
 * (or no memory: then NVRTC reports the original error). */
static int kiln__cu_ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Room for need bytes in *out (allocated on first use): reallocated to
 * new_cap bytes when short. 0, with *out freed, when out of memory. */
static int kiln__cu_reserve(char **out, size_t *cap, size_t need, size_t new_cap) {
    if (*out && need <= *cap)
        return 1;
    char *t = kiln__realloc(*out, new_cap);
    if (!t) {
        free(*out);
        *out = NULL;
        return 0;
    }
    *out = t;
    *cap = new_cap;
    return 1;
}

static char *kiln__cu_local_params(const char *src) {
    static const char kw[] = "KILN_LOCAL";
    const size_t kwl = sizeof kw - 1;
    size_t n = strlen(src), cap = n + 64, o = 0;
    char *out = NULL;
    int changed = 0, line_start = 1;
    for (size_t i = 0; i < n;) {
        char c = src[i];
        size_t from = i; /* copy [from, i) verbatim unless rewritten */
        if (line_start && (c == ' ' || c == '\t')) {
            i++;
        } else if (line_start && c == '#') {
            while (i < n && src[i] != '\n')
                i += src[i] == '\\' && i + 1 < n ? 2 : 1;
        } else if (c == '/' && src[i + 1] == '/') {
            while (i < n && src[i] != '\n')
                i++;
        } else if (c == '/' && src[i + 1] == '*') {
            const char *e = strstr(src + i + 2, "*/");
            i = e ? (size_t)(e - src) + 2 : n;
        } else if (c == '"' || c == '\'') {
            i++;
            while (i < n && src[i] != c && src[i] != '\n')
                i += src[i] == '\\' && i + 1 < n ? 2 : 1;
            if (i < n && src[i] == c)
                i++;
        } else if (kiln__cu_ident(c)) {
            while (i < n && kiln__cu_ident(src[i]))
                i++;
            if (i - from == kwl && memcmp(src + from, kw, kwl) == 0) {
                size_t k = i, star = 0;
                while (k < n && !strchr(";{}=[](),", src[k])) {
                    if (src[k] == '*')
                        star = k;
                    k++;
                }
                /* the name: the last identifier before k, after the star */
                size_t ne = k;
                while (ne > i && !kiln__cu_ident(src[ne - 1]))
                    ne--;
                size_t nb = ne;
                while (nb > i && kiln__cu_ident(src[nb - 1]))
                    nb--;
                if (k < n && (src[k] == ',' || src[k] == ')') && star && nb > star && ne > nb &&
                    !(src[nb] >= '0' && src[nb] <= '9')) {
                    size_t need = o + (star - i) + (ne - nb) + 64 + (n - from);
                    if (!kiln__cu_reserve(&out, &cap, need, need * 2))
                        return NULL;
                    o += (size_t)sprintf(out + o, "kiln__local_ptr<");
                    size_t lines = 0;
                    for (size_t t = i; t < star; t++) {
                        out[o++] = src[t] == '\n' ? ' ' : src[t];
                        lines += src[t] == '\n';
                    }
                    o += (size_t)sprintf(out + o, "> %.*s", (int)(ne - nb), src + nb);
                    for (size_t t = star; t < k; t++)
                        lines += src[t] == '\n';
                    while (lines--)
                        out[o++] = '\n';
                    i = k;
                    changed = 1;
                    line_start = 0;
                    continue;
                }
            }
        } else {
            i++;
        }
        if (i > from && src[i - 1] == '\n')
            line_start = 1;
        else if (i > from && !(line_start && (c == ' ' || c == '\t')))
            line_start = 0;
        size_t need = o + (i - from) + 1;
        if (!kiln__cu_reserve(&out, &cap, need, need * 2 > cap ? need * 2 : cap))
            return NULL;
        memcpy(out + o, src + from, i - from);
        o += i - from;
    }
    if (!changed) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    return out;
}

kiln_status kiln__cuda_compile(const char *source, const char *options, unsigned cc, void **binary,
                               size_t *size, int *is_ptx, char **log) {
    *binary = NULL;
    *size = 0;
    *log = NULL;
    *is_ptx = 0;
    if (!kiln__cuda_nvrtc_ready())
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0, "%s", kiln__cu.nvrtc_error);
    kiln__cu_opts opts = { 0 };
    int has_arch = 0;
    char arch[64] = "";
    kiln_status st = KILN_OK;
    if (kiln__cu_translate(options, &opts, &has_arch) != 0) {
        kiln__cu_opts_free(&opts);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "build options");
    }
    if (!has_arch) {
        st = kiln__cu_pick_arch(cc, arch, sizeof arch, is_ptx);
        if (st == KILN_OK && kiln__cu_opts_add(&opts, arch, strlen(arch)) != 0)
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "options");
    }
    if (st != KILN_OK) {
        kiln__cu_opts_free(&opts);
        return st;
    }
    nvrtcProgram prog = NULL;
    char *rewritten = kiln__cu_local_params(source);
    nvrtcResult r = kiln__cu.nvrtcCreateProgram(&prog, rewritten ? rewritten : source, "kiln.cu", 0,
                                                NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        free(rewritten);
        kiln__cu_opts_free(&opts);
        return kiln__cu_nvrtc_fail("nvrtcCreateProgram", r);
    }
    nvrtcResult cr = kiln__cu.nvrtcCompileProgram(prog, (int)opts.n, (const char *const *)opts.v);
    free(rewritten); /* compiled: the source is no longer needed */
    size_t log_size = 0;
    if (kiln__cu.nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        char *l = kiln__malloc(log_size + 1);
        if (l && kiln__cu.nvrtcGetProgramLog(prog, l) == NVRTC_SUCCESS) {
            l[log_size] = '\0';
            *log = l;
        } else {
            free(l);
        }
    }
    if (cr != NVRTC_SUCCESS) {
        const char *l = *log ? *log : "";
        const char *nl = strchr(l, '\n');
        int first = nl ? (int)(nl - l) : (int)strlen(l);
        if (first > 300)
            first = 300;
        st =
            kiln__error_set(cr == NVRTC_ERROR_COMPILATION      ? KILN_ERROR_BUILD
                            : cr == NVRTC_ERROR_INVALID_OPTION ? KILN_ERROR_BUILD
                                                               : KILN_ERROR_DRIVER,
                            (long)cr, "NVRTC compile for %s failed: %s (%d)%s%.*s",
                            arch[0] ? arch + 19 : "the given architecture",
                            kiln__cu.nvrtcGetErrorString(cr), (int)cr, first ? ": " : "", first, l);
        if (!*log) {
            /* the build log must say something */
            char msg[256];
            snprintf(msg, sizeof msg, "%s\n", kiln__cu.nvrtcGetErrorString(cr));
            *log = strdup(msg);
        }
        kiln__cu.nvrtcDestroyProgram(&prog);
        kiln__cu_opts_free(&opts);
        return st;
    }
    kiln__cu_opts_free(&opts);
    size_t n = 0;
    r = *is_ptx ? kiln__cu.nvrtcGetPTXSize(prog, &n) : kiln__cu.nvrtcGetCUBINSize(prog, &n);
    if (r == NVRTC_SUCCESS && n == 0)
        r = NVRTC_ERROR_INTERNAL_ERROR;
    char *bin = r == NVRTC_SUCCESS ? kiln__malloc(n) : NULL;
    if (r == NVRTC_SUCCESS && !bin) {
        kiln__cu.nvrtcDestroyProgram(&prog);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    }
    if (r == NVRTC_SUCCESS)
        r = *is_ptx ? kiln__cu.nvrtcGetPTX(prog, bin) : kiln__cu.nvrtcGetCUBIN(prog, bin);
    kiln__cu.nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(bin);
        return kiln__cu_nvrtc_fail(*is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", r);
    }
    *binary = bin;
    *size = n;
    return KILN_OK;
}

/* ---- binaries ------------------------------------------------------------- */

static uint64_t kiln__cu_rd(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* cuModuleLoadData takes no size, so a damaged image must be caught here:
 * a CUDA ELF (cubin) whose header and every section lie inside the data,
 * or PTX text. Returns 0 if acceptable. */
int kiln__cuda_check_image(const unsigned char *p, size_t n, const char **why) {
    if (n >= 4 && memcmp(p, "\177ELF", 4) == 0) {
        if (n < 64 || p[4] != 2 || p[5] != 1) {
            *why = "truncated or not a 64-bit little-endian ELF";
            return -1;
        }
        if (kiln__cu_rd(p + 18, 2) != 190) { /* EM_CUDA */
            *why = "an ELF file, but not for an NVIDIA GPU";
            return -1;
        }
        uint64_t shoff = kiln__cu_rd(p + 40, 8), shentsize = kiln__cu_rd(p + 58, 2),
                 shnum = kiln__cu_rd(p + 60, 2), phoff = kiln__cu_rd(p + 32, 8),
                 phentsize = kiln__cu_rd(p + 54, 2), phnum = kiln__cu_rd(p + 56, 2);
        if (shentsize != 64 || shnum == 0 || shoff > n || shnum * 64 > n - shoff ||
            (phnum && (phentsize != 56 || phoff > n || phnum * 56 > n - phoff))) {
            *why = "ELF header points outside the data (truncated or corrupt)";
            return -1;
        }
        for (uint64_t i = 0; i < shnum; i++) {
            const unsigned char *sh = p + shoff + i * 64;
            uint64_t type = kiln__cu_rd(sh + 4, 4), off = kiln__cu_rd(sh + 24, 8),
                     sz = kiln__cu_rd(sh + 32, 8);
            if (type != 8 /* SHT_NOBITS */ && type != 0 && (off > n || sz > n - off)) {
                *why = "an ELF section lies outside the data (truncated or "
                       "corrupt)";
                return -1;
            }
        }
        return 0;
    }
    /* PTX: text starting with a comment or a directive */
    size_t i = 0;
    while (i < n && isspace(p[i]))
        i++;
    if (i < n && (p[i] == '/' || p[i] == '.')) {
        for (size_t k = i; k < n && p[k]; k++)
            if (p[k] < 9 || p[k] > 126) {
                *why = "neither a cubin nor PTX text";
                return -1;
            }
        return 0;
    }
    *why = "neither a cubin nor PTX text";
    return -1;
}

static kiln_status kiln__cu_program_make(kiln__cu_context *c, int idx, void *bin, size_t size,
                                         void **program) {
    kiln__cu_dev *d = &c->dev[idx];
    const char *why = NULL;
    if (kiln__cuda_check_image(bin, size, &why) != 0) {
        free(bin);
        return kiln__error_set(KILN_ERROR_BUILD, 0, "refusing to load a %zu-byte binary: %s", size,
                               why);
    }
    kiln_status st = kiln__cu_ctx_use(d->ctx);
    if (st != KILN_OK) {
        free(bin);
        return st;
    }
    /* PTX must be NUL-terminated for cuModuleLoadData */
    char *img = kiln__malloc(size + 1);
    if (!img) {
        free(bin);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    }
    memcpy(img, bin, size);
    img[size] = '\0';
    CUmodule mod = NULL;
    CUresult r = kiln__cu.cuModuleLoadData(&mod, img);
    free(img);
    if (r != CUDA_SUCCESS) {
        free(bin);
        st = kiln__cu_fail("cuModuleLoadData", r);
        if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU)
            st = kiln__error_prefix(KILN_ERROR_BUILD,
                                    "the driver (CUDA %d.%d) cannot load code from NVRTC %d.%d; "
                                    "use an NVRTC no newer than the driver",
                                    kiln__cu.driver_version / 1000,
                                    (kiln__cu.driver_version % 1000) / 10, kiln__cu.nvrtc_major,
                                    kiln__cu.nvrtc_minor);
        return st;
    }
    kiln__cu_program *p = kiln__calloc(1, sizeof *p);
    if (!p) {
        kiln__cu.cuModuleUnload(mod);
        free(bin);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    }
    atomic_init(&p->refs, 1);
    p->ctx = c;
    kiln__cu_context_ref(c);
    p->dev = d;
    p->module = mod;
    p->binary = bin;
    p->binary_size = size;
    *program = p;
    return KILN_OK;
}

/* device's index in c (*idx), or MISMATCH if c does not hold it. */
static kiln_status kiln__cu_dev_index(kiln__cu_context *c, const kiln__bdevice *device, int *idx) {
    *idx = kiln__cu_context_find(c, (int)(intptr_t)device->handle);
    if (*idx < 0)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "device %s is not in the context",
                               device->info.id);
    return KILN_OK;
}

kiln_status kiln__cu_program_build(void *context, const kiln__bdevice *device, const char *source,
                                   const char *options, void **program, char **log) {
    *program = NULL;
    *log = NULL;
    kiln__cu_context *c = context;
    int idx = -1;
    kiln_status st = kiln__cu_dev_index(c, device, &idx);
    if (st != KILN_OK)
        return st;
    kiln__cu_reap();
    void *bin = NULL;
    size_t size = 0;
    int is_ptx = 0;
    st = kiln__cuda_compile(source, options, c->dev[idx].cc, &bin, &size, &is_ptx, log);
    if (st != KILN_OK)
        return st;
    return kiln__cu_program_make(c, idx, bin, size, program);
}

kiln_status kiln__cu_program_binary(void *program, void **binary, size_t *size) {
    kiln__cu_program *p = program;
    *binary = malloc(p->binary_size);
    if (!*binary)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    memcpy(*binary, p->binary, p->binary_size);
    *size = p->binary_size;
    return KILN_OK;
}

kiln_status kiln__cu_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                  size_t size, const char *options, void **program) {
    *program = NULL;
    kiln__cu_context *c = context;
    int idx = -1;
    kiln_status st = kiln__cu_dev_index(c, device, &idx);
    if (st != KILN_OK)
        return st;
    if (!binary || size == 0)
        return kiln__error_set(KILN_ERROR_BUILD, 0, "empty binary");
    kiln__cu_reap();
    void *copy = kiln__malloc(size);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    memcpy(copy, binary, size);
    return kiln__cu_program_make(c, idx, copy, size, program);
}

static void kiln__cu_program_free(void *arg) {
    kiln__cu_program *p = arg;
    if (kiln__cu_ctx_use(p->dev->ctx) == KILN_OK)
        kiln__cu.cuModuleUnload(p->module);
    free(p->binary);
    kiln__cu_context_unref(p->ctx);
    free(p);
}

/* On kiln's CUDA worker thread (kiln__cu_defer). */
static void kiln__cu_program_free_later(void *arg) {
    kiln__cu_wait_no_user_events();
    kiln__cu_program_free(arg);
}

void kiln__cu_program_ref(kiln__cu_program *p) {
    kiln__ref_take(&p->refs);
}

void kiln__cu_program_unref(kiln__cu_program *p) {
    if (!p || !kiln__ref_release(&p->refs))
        return;
    /* cuModuleUnload synchronises like cuMemFree: while work may wait for
     * a user event, unload later on the worker thread. */
    if (kiln__cu_user_events_unset() > 0) {
        kiln__cu_defer(kiln__cu_program_free_later, p);
        return;
    }
    kiln__cu_program_free(p);
}

void kiln__cu_program_release(void *program) {
    if (!program)
        return;
    kiln__cu_reap();
    kiln__cu_program_unref(program);
}

kiln_status kiln__cu_kernel_create(void *program, const char *name, void **kernel) {
    kiln__cu_program *p = program;
    *kernel = NULL;
    kiln_status st = kiln__cu_ctx_use(p->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUfunction fn = NULL;
    CUresult r = kiln__cu.cuModuleGetFunction(&fn, p->module, name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return kiln__error_set(KILN_ERROR_KERNEL_NOT_FOUND, (long)r,
                               "no kernel named '%s' in the module (CUDA "
                               "kernels need extern \"C\", which KILN_KERNEL "
                               "adds)",
                               name);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuModuleGetFunction", r);
    kiln__cu_kernel *k = kiln__calloc(1, sizeof *k);
    if (!k)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    int mt = 0;
    if (kiln__cu.cuFuncGetAttribute(&mt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) !=
            CUDA_SUCCESS ||
        mt <= 0)
        mt = p->dev->max_threads;
    k->program = p;
    k->fn = fn;
    k->max_threads = mt;
    kiln__ref_take(&p->refs);
    *kernel = k;
    return KILN_OK;
}

kiln_status kiln__cu_kernel_occupancy(void *kernel, size_t local, unsigned *groups_per_cu) {
    kiln__cu_kernel *k = kernel;
    *groups_per_cu = 0;
    kiln_status st = kiln__cu_ctx_use(k->program->dev->ctx);
    if (st != KILN_OK)
        return st;
    int n = 0;
    CUresult r = kiln__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, k->fn, (int)local, 0);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuOccupancyMaxActiveBlocksPerMultiprocessor", r);
    *groups_per_cu = n > 0 ? (unsigned)n : 0;
    return KILN_OK;
}

void kiln__cu_kernel_release(void *kernel) {
    kiln__cu_kernel *k = kernel;
    if (!k)
        return;
    kiln__cu_reap();
    kiln__cu_program_unref(k->program);
    free(k);
}

/* ---- launch ---------------------------------------------------------------- */

static size_t kiln__cu_divisor_le(size_t g, size_t t) {
    if (t > g)
        t = g;
    for (size_t b = t; b > 1; b--)
        if (g % b == 0)
            return b;
    return 1;
}

/* Greedy: x gets the largest divisor of global[0] within 256 (or the
 * kernel's limit), then y and z share what is left of that budget. */
void kiln__cuda_pick_block(unsigned dims, const size_t *global, int max_threads,
                           const int *max_block, size_t *block) {
    size_t budget = max_threads > 0 && max_threads < 256 ? (size_t)max_threads : 256;
    for (unsigned d = 0; d < 3; d++)
        block[d] = 1;
    for (unsigned d = 0; d < dims && d < 3; d++) {
        size_t lim = budget;
        if (max_block && max_block[d] > 0 && (size_t)max_block[d] < lim)
            lim = (size_t)max_block[d];
        block[d] = global[d] ? kiln__cu_divisor_le(global[d], lim) : 1;
        budget /= block[d];
        if (budget == 0)
            budget = 1;
    }
}

/* Block and grid of a launch: the local size checked against the device's
 * and the kernel's limits, or picked; *empty when some global size is 0
 * (then nothing runs, and grid is 0). */
kiln_status kiln__cu_launch_shape(const kiln__cu_dev *dev, const kiln__cu_kernel *k, unsigned dims,
                                  const size_t *global, const size_t *local, size_t *b,
                                  size_t *grid, int *empty) {
    size_t g[3] = { 1, 1, 1 };
    *empty = 0;
    for (unsigned d = 0; d < 3; d++)
        b[d] = 1;
    for (unsigned d = 0; d < dims; d++) {
        g[d] = global[d];
        if (g[d] == 0)
            *empty = 1;
    }
    if (local) {
        size_t threads = 1;
        for (unsigned d = 0; d < dims; d++) {
            b[d] = local[d];
            if (b[d] == 0)
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "local size 0 in dimension %u", d);
            if (!*empty && g[d] % b[d] != 0)
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "global size %zu is not a multiple of local size %zu in "
                                       "dimension %u: CUDA launches whole blocks (round the "
                                       "global size up and bounds-check in the kernel, or pass "
                                       "no local size)",
                                       g[d], b[d], d);
            if (b[d] > (size_t)dev->max_block[d])
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "local size %zu exceeds the device's "
                                       "%d in dimension %u",
                                       b[d], dev->max_block[d], d);
            threads *= b[d];
        }
        if (threads > (size_t)k->max_threads)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "a block of %zu threads exceeds this "
                                   "kernel's limit of %d",
                                   threads, k->max_threads);
    } else if (!*empty) {
        kiln__cuda_pick_block(dims, g, k->max_threads, dev->max_block, b);
    }
    for (unsigned d = 0; d < 3; d++) {
        grid[d] = *empty ? 0 : g[d] / b[d];
        if (!*empty && grid[d] > (size_t)dev->max_grid[d])
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%zu blocks in dimension %u exceed the device's grid limit "
                                   "%d (global %zu / block %zu)",
                                   grid[d], d, dev->max_grid[d], g[d], b[d]);
    }
    return KILN_OK;
}

/* cuLaunchKernel's parameter array: buffers by device pointer (in ptrs),
 * scalars by their bytes, local memory as offsets into the dynamic shared
 * memory, whose total size goes to *shared. */
kiln_status kiln__cu_launch_params(const kiln__cu_dev *dev, size_t num_args, const kiln__barg *args,
                                   void **params, CUdeviceptr *ptrs, size_t *shared) {
    *shared = 0;
    for (size_t i = 0; i < num_args; i++) {
        switch (args[i].kind) {
        case KILN_ARG_BUFFER:
            ptrs[i] = args[i].mem ? ((kiln__cu_buffer *)args[i].mem)->ptr : 0;
            params[i] = &ptrs[i];
            break;
        case KILN_ARG_SCALAR:
            params[i] = (void *)args[i].bytes;
            break;
        case KILN_ARG_LOCAL: {
            /* a kiln__local_ptr parameter: its offset in dynamic shared
             * memory, 16-byte aligned */
            size_t at = (*shared + 15) & ~(size_t)15;
            if (args[i].size == 0 || args[i].size > dev->shared_per_block ||
                at > dev->shared_per_block - args[i].size)
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "argument %zu: %zu bytes of local memory (%zu in all) "
                                       "do not fit the device's %zu per block",
                                       i, args[i].size, at + args[i].size, dev->shared_per_block);
            ptrs[i] = (CUdeviceptr)at;
            params[i] = &ptrs[i];
            *shared = at + args[i].size;
            break;
        }
        default:
            return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0, "argument %zu: unknown kind %d", i,
                                   (int)args[i].kind);
        }
    }
    return KILN_OK;
}

kiln_status kiln__cu_allow_shared(const kiln__cu_dev *dev, CUfunction fn, size_t shared) {
    if (shared <= dev->shared_default)
        return KILN_OK;
    kiln_status st = kiln__cu_ctx_use(dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kiln__cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)shared);
    if (r == CUDA_SUCCESS)
        return KILN_OK;
    int fixed = 0;
    kiln__cu.cuFuncGetAttribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    kiln__cu_fail("cuFuncSetAttribute", r);
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, (long)r,
                           "%zu bytes of local memory arguments and the kernel's own %d bytes of "
                           "shared memory exceed the device's %zu per block",
                           shared, fixed, dev->shared_per_block);
}

typedef struct launch_args {
    CUfunction fn;
    unsigned grid[3], block[3], shared;
    void **params;
    /* for hold: what the parameters are */
    const kiln__barg *bargs;
    size_t num_args;
    kiln__cu_program *program;
    /* held: retained buffers */
    kiln__cu_buffer **bufs;
    size_t num_bufs;
} launch_args;

static kiln_status launch_run(kiln__cu_queue *q, void *p) {
    const launch_args *a = p;
    CUresult r =
        kiln__cu.cuLaunchKernel(a->fn, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1],
                                a->block[2], a->shared, q->stream, a->params, NULL);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuLaunchKernel", r);
}

/* One block: the struct, the parameter pointers, the retained buffers and
 * the parameters' bytes (device pointers resolved now; the buffers and the
 * module stay alive until the held launch has gone). */
static void *launch_hold(const void *p) {
    const launch_args *a = p;
    size_t n = a->num_args, bytes = 0, nbuf = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += a->bargs[i].kind == KILN_ARG_SCALAR ? a->bargs[i].size : sizeof(CUdeviceptr);
        bytes = (bytes + 15) & ~(size_t)15;
        nbuf += a->bargs[i].kind == KILN_ARG_BUFFER && a->bargs[i].mem;
    }
    launch_args *h = kiln__malloc(sizeof *h + n * sizeof(void *) +
                                  nbuf * sizeof(kiln__cu_buffer *) + bytes + 16);
    if (!h)
        return NULL;
    *h = *a;
    h->params = (void **)(h + 1);
    h->bufs = (kiln__cu_buffer **)(h->params + n);
    char *at = (char *)(((uintptr_t)(h->bufs + nbuf) + 15) & ~(uintptr_t)15);
    h->num_bufs = 0;
    for (size_t i = 0; i < n; i++) {
        size_t sz = a->bargs[i].kind == KILN_ARG_SCALAR ? a->bargs[i].size : sizeof(CUdeviceptr);
        memcpy(at, a->params[i], sz);
        h->params[i] = at;
        at += (sz + 15) & ~(size_t)15;
        if (a->bargs[i].kind == KILN_ARG_BUFFER && a->bargs[i].mem) {
            h->bufs[h->num_bufs] = a->bargs[i].mem;
            kiln__cu_buffer_ref(h->bufs[h->num_bufs++]);
        }
    }
    h->bargs = NULL;
    kiln__cu_program_ref(h->program);
    return h;
}

static void launch_drop(void *p) {
    launch_args *h = p;
    for (size_t i = 0; i < h->num_bufs; i++)
        kiln__cu_buffer_unref(h->bufs[i]);
    kiln__cu_program_unref(h->program);
    free(h);
}

static const kiln__cu_optype launch_type = { launch_run, launch_hold, launch_drop };

/* An empty range still goes through the queue (its event orders like any
 * command), with nothing launched. */
static kiln_status nothing_run(kiln__cu_queue *q, void *p) {
    (void)q;
    (void)p;
    return KILN_OK;
}

static void *nothing_hold(const void *p) {
    (void)p;
    return kiln__malloc(1);
}

static const kiln__cu_optype nothing_type = { nothing_run, nothing_hold, free };

kiln_status kiln__cu_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                   const size_t *local, size_t num_args, const kiln__barg *args,
                                   size_t num_wait, void *const *wait, void **out_event) {
    kiln__cu_queue *q = queue;
    kiln__cu_kernel *k = kernel;
    if (dims < 1 || dims > 3)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "dims must be 1, 2 or 3 (got %u)",
                               dims);
    if (k->program->dev->ordinal != q->dev->ordinal)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "the kernel was built for cuda:%d, the queue "
                               "is on cuda:%d",
                               k->program->dev->ordinal, q->dev->ordinal);
    size_t b[3], grid[3];
    int empty = 0;
    kiln_status st = kiln__cu_launch_shape(q->dev, k, dims, global, local, b, grid, &empty);
    if (st != KILN_OK)
        return st;
    void *stack_params[32];
    CUdeviceptr stack_ptrs[32];
    void **params = stack_params;
    CUdeviceptr *ptrs = stack_ptrs;
    if (num_args > 32) {
        params = kiln__malloc(num_args * sizeof *params);
        ptrs = kiln__malloc(num_args * sizeof *ptrs);
        if (!params || !ptrs) {
            free(params);
            free(ptrs);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
        }
    }
    size_t shared = 0; /* dynamic shared memory: the KILN_ARG_LOCAL sizes */
    st = kiln__cu_launch_params(q->dev, num_args, args, params, ptrs, &shared);
    if (st == KILN_OK)
        st = kiln__cu_allow_shared(q->dev, k->fn, shared);
    if (st == KILN_OK) {
        launch_args a = { k->fn,
                          { (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2] },
                          { (unsigned)b[0], (unsigned)b[1], (unsigned)b[2] },
                          (unsigned)shared,
                          params,
                          args,
                          num_args,
                          k->program,
                          NULL,
                          0 };
        st = kiln__cu_enqueue(q, num_wait, wait, out_event != NULL, 0, 0,
                              empty ? &nothing_type : &launch_type, &a, out_event);
    }
    if (params != stack_params) {
        free(params);
        free(ptrs);
    }
    return st;
}
