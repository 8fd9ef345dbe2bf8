/* Programs: the prelude, the caches (the context's memory cache, then the
 * disk cache, then the compiler), build logs. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fault.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "backend/registry.h"
#include "base/buildlog_quote.h"
#include "base/desc.h"
#include "base/embedded.h"
#include "core/internal.h"

static unsigned kiln__bucket(const char *hex) {
    unsigned h = 0;
    for (int i = 0; i < 8 && hex[i]; i++)
        h = h * 31u + (unsigned char)hex[i];
    return h % KILN__BUILT_BUCKETS;
}

static void kiln__label(char *out, size_t cap, const kiln__backend *be, const kiln_device *dev,
                        const kiln__sig_list *sigs) {
    int w = snprintf(out, cap, "%s %s kernels:", be->name, dev->b.info.name);
    size_t len = w < 0 ? 0 : (size_t)w;
    for (size_t i = 0; i < sigs->count && len + 1 < cap; i++) {
        w = snprintf(out + len, cap - len, " %s", sigs->sigs[i].name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* Builds (or finds) the program for one device. Called with ctx->lock held. */
static kiln_status kiln__build_one(kiln_context *ctx, kiln_device *dev, const char *final,
                                   size_t prelude_lines, const char *options, int no_cache,
                                   const kiln__sig_list *sigs, kiln__built **out) {
    const kiln__backend *be = ctx->backend;
    kiln__cache_key key;
    kiln__cache_key_make(&key, be->name, dev->b.identity, final, options);
    unsigned bucket = kiln__bucket(key.hex);
    for (kiln__built *e = ctx->built[bucket]; e; e = e->next)
        if (strcmp(e->key, key.hex) == 0) {
            *out = e;
            return KILN_OK;
        }
    kiln__built *e = kiln__calloc(1, sizeof *e);
    if (!e)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    memcpy(e->key, key.hex, sizeof e->key);
    if (!no_cache) {
        void *payload = NULL;
        size_t size = 0;
        kiln__cache_guard guard;
        if (kiln__cache_guard_begin(&key, &guard) == KILN_OK &&
            kiln__cache_load(&key, &payload, &size) == KILN_OK) {
            if (be->program_load(ctx->handle, &dev->b, payload, size, options, &e->handle) ==
                KILN_OK)
                e->from_disk = 1;
            else
                e->handle = NULL; /* a binary the driver refuses: rebuild it */
            free(payload);
        }
        kiln__cache_guard_end(&guard);
    }
    if (!e->handle) {
        char *log = NULL;
        kiln_status st =
            kiln__fault_hit(KILN__FAULT_PROGRAM_BUILD)
                ? kiln__error_set(KILN_ERROR_BUILD, 0, "injected build failure (test hook)")
                : be->program_build(ctx->handle, &dev->b, final, options, &e->handle, &log);
        if (st != KILN_OK) {
            free(e);
            if (st == KILN_ERROR_BUILD) {
                /* The log's line numbers mapped back to the user's source
                 * (some compilers ignore #line), plus the offending lines. */
                char line[512], where[320];
                long native = kiln_last_error_native();
                const char *raw = log ? log : kiln_last_error_message();
                char *mapped = kiln__build_log_map(final, prelude_lines, raw, where, sizeof where);
                kiln__error_set_build_log(mapped ? mapped : raw);
                kiln__quote_log_errors(mapped ? mapped : raw, 1, line, sizeof line);
                free(mapped);
                free(log);
                return kiln__error_set(KILN_ERROR_BUILD, native,
                                       "the program failed to build for %s (%s): %s%s%s "
                                       "(full log: kiln_last_build_log())",
                                       dev->b.info.id, dev->b.info.name,
                                       line[0] ? line : "the compiler gave no log",
                                       where[0] ? " -- at " : "", where);
            }
            free(log);
            return kiln__error_prefix(st, "building for %s", dev->b.info.id);
        }
        e->log = log;
        if (!no_cache) {
            void *bin = NULL;
            size_t size = 0;
            if (be->program_binary(e->handle, &bin, &size) == KILN_OK && bin && size) {
                char label[256];
                kiln__label(label, sizeof label, be, dev, sigs);
                /* A cache that cannot be written only costs time later. */
                kiln__cache_store(&key, bin, size, label);
            }
            free(bin);
        }
    }
    if (!e->log)
        e->log = kiln__strdup("");
    if (!e->log) {
        be->program_release(e->handle);
        free(e);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    }
    e->next = ctx->built[bucket];
    ctx->built[bucket] = e;
    *out = e;
    return KILN_OK;
}

/* Indexed by kiln_language, for messages. */
static const char *const kiln__language_names[] = {
    [KILN_LANG_AUTO] = "kiln's portable dialect",
    [KILN_LANG_OPENCL_C] = "OpenCL C",
    [KILN_LANG_CUDA_C] = "CUDA C",
};

/* KILN_ERROR_UNSUPPORTED for native source the context's backend does not
 * compile, naming the backends that do. */
static kiln_status kiln__language_refused(const char *fn, kiln_language lang,
                                          const kiln_context *context) {
    char which[128] = "";
    size_t num_backends = 0, len = 0;
    const kiln__backend *const *backends = kiln__backend_registry(&num_backends);
    for (size_t i = 0; i < num_backends && len + 1 < sizeof which; i++) {
        if (!(backends[i]->languages & (1u << lang)))
            continue;
        int w =
            snprintf(which + len, sizeof which - len, "%s%s", len ? ", " : "", backends[i]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                           "%s: %s source cannot be built for the %s backend (%s); write it "
                           "in kiln's portable dialect (KILN_LANG_AUTO) or pick a device of a "
                           "backend that compiles it (%s)",
                           fn, kiln__language_names[lang], context->backend->name,
                           context->devices[0]->b.info.id,
                           len ? which : "none is built into this kiln");
}

/* KILN_DUMP_SOURCE=DIR: every program's whole source (prelude included)
 * goes to DIR/kiln-<backend>-<n>.txt with its options on the first line,
 * to read what a generator produced or compile it by hand (nvcc -ptx,
 * clang). A debugging aid: failures to write are ignored. */
static void kiln__dump_source(const kiln__backend *be, const char *final, const char *options) {
    static atomic_uint counter;
    const char *dir = getenv("KILN_DUMP_SOURCE");
    if (!dir || !*dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/kiln-%s-%u.txt", dir, be->name, atomic_fetch_add(&counter, 1));
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "// options: %s\n%s", options ? options : "", final);
    fclose(f);
}

static kiln_status program_create(kiln_context *context, const char *source,
                                  const kiln_program_opts *opts, kiln_program **program);

/* $KILN_FP_CONTRACT=off: every program as if built with
 * -DKILN_NO_FP_CONTRACT (no a * b + c fused into an fma: the OpenCL
 * prelude's pragma, NVRTC's --fmad=false). Part of the options, and so of
 * the cache key. */
kiln_status kiln_program_create(kiln_context *context, const char *source,
                                const kiln_program_opts *opts, kiln_program **program) {
    const char *fpc = getenv("KILN_FP_CONTRACT");
    if (!fpc || strcmp(fpc, "off") != 0)
        return program_create(context, source, opts, program);
    kiln_program_opts o = { .struct_size = sizeof o };
    if (opts) {
        kiln_status rs = kiln__desc_read(opts, sizeof o, sizeof o, &o, "kiln_program_create",
                                         "KILN_PROGRAM_OPTS");
        if (rs != KILN_OK)
            return rs;
    }
    const char *options = o.build_options ? o.build_options : "";
    if (strstr(options, "KILN_NO_FP_CONTRACT"))
        return program_create(context, source, &o, program);
    size_t n = strlen(options) + sizeof " -DKILN_NO_FP_CONTRACT";
    char *with = kiln__malloc(n);
    if (!with)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_program_create: out of memory");
    snprintf(with, n, "%s%s-DKILN_NO_FP_CONTRACT", options, *options ? " " : "");
    o.build_options = with;
    kiln_status st = program_create(context, source, &o, program);
    free(with);
    return st;
}

static kiln_status program_create(kiln_context *context, const char *source,
                                  const kiln_program_opts *opts, kiln_program **program) {
    static const char fn[] = "kiln_program_create";
    if (!program)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: program is NULL", fn);
    *program = NULL;
    const char *missing = KILN__FIRST_NULL2(context, source);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_program_opts o = { .struct_size = sizeof o };
    if (opts) {
        kiln_status rs = kiln__desc_read(opts, sizeof o, sizeof o, &o, fn, "KILN_PROGRAM_OPTS");
        if (rs != KILN_OK)
            return rs;
    }
    kiln_language lang = o.language;
    const char *options = o.build_options ? o.build_options : "";
    int no_cache = o.no_cache;
    const kiln__backend *be = context->backend;
    if ((unsigned)lang >= sizeof kiln__language_names / sizeof kiln__language_names[0])
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown language %d", fn,
                               (int)lang);
    if (lang != KILN_LANG_AUTO && !(be->languages & (1u << lang)))
        return kiln__language_refused(fn, lang, context);
    kiln_program *p = kiln__calloc(1, sizeof *p);
    const char *prelude = be->prelude_file ? kiln__embedded_file(be->prelude_file) : "";
    if (!prelude)
        prelude = "";
    size_t plen = strlen(prelude), slen = strlen(source);
    char *final = kiln__malloc(plen + slen + 2);
    if (p)
        p->built = kiln__calloc(context->num_devices, sizeof *p->built);
    if (!p || !final || !p->built || kiln__sig_parse(source, &p->sigs) != KILN_OK) {
        if (p)
            free(p->built);
        free(p);
        free(final);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    memcpy(final, prelude, plen);
    /* The prelude ends with "#line 1"; make sure that line is terminated. */
    size_t at = plen, prelude_lines = 0;
    for (size_t i = 0; i < plen; i++)
        prelude_lines += prelude[i] == '\n';
    if (plen && prelude[plen - 1] != '\n') {
        final[at++] = '\n';
        prelude_lines++;
    }
    memcpy(final + at, source, slen + 1);
    kiln__dump_source(be, final, options);

    kiln_status st = KILN_OK;
    pthread_mutex_lock(&context->lock);
    for (size_t i = 0; i < context->num_devices && st == KILN_OK; i++)
        st = kiln__build_one(context, context->devices[i], final, prelude_lines, options, no_cache,
                             &p->sigs, &p->built[i]);
    pthread_mutex_unlock(&context->lock);
    free(final);
    if (st != KILN_OK) {
        kiln__sig_list_free(&p->sigs);
        free(p->built);
        free(p);
        return st == KILN_ERROR_BUILD ? st : kiln__error_prefix(st, "%s", fn);
    }
    atomic_init(&p->refs, 1);
    p->backend = be;
    p->context = context;
    kiln__context_retain(context);
    *program = p;
    return KILN_OK;
}

kiln_status kiln_program_create_from_file(kiln_context *context, const char *path,
                                          const kiln_program_opts *opts, kiln_program **program) {
    static const char fn[] = "kiln_program_create_from_file";
    if (!program)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: program is NULL", fn);
    *program = NULL;
    const char *missing = KILN__FIRST_NULL2(context, path);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    FILE *f = fopen(path, "rb");
    if (!f)
        return kiln__error_set(KILN_ERROR_IO, errno, "%s: cannot open %s: %s", fn, path,
                               strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = kiln__malloc(cap);
    while (text) {
        if (len + 1 >= cap) {
            char *grown = kiln__realloc(text, cap * 2);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (!text)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory reading %s", fn,
                               path);
    if (err) {
        free(text);
        return kiln__error_set(KILN_ERROR_IO, err, "%s: cannot read %s: %s", fn, path,
                               strerror(err));
    }
    text[len] = 0;
    kiln_status st = kiln_program_create(context, text, opts, program);
    free(text);
    if (st != KILN_OK && st != KILN_ERROR_BUILD)
        return kiln__error_prefix(st, "%s", path);
    return st;
}

kiln_status kiln_program_retain(kiln_program *program) {
    return kiln__ref_retain(program ? &program->refs : NULL, "kiln_program_retain", "program");
}

void kiln_program_release(kiln_program *program) {
    if (!kiln__ref_release(program ? &program->refs : NULL))
        return;
    /* The built programs stay in the context's memory cache. */
    kiln__sig_list_free(&program->sigs);
    free(program->built);
    kiln__context_unref(program->context);
    free(program);
}

static const kiln__built *kiln__built_for(const kiln_program *program, const kiln_device *device) {
    if (!program || !device)
        return NULL;
    for (size_t i = 0; i < program->context->num_devices; i++)
        if (program->context->devices[i] == device)
            return program->built[i];
    return NULL;
}

const char *kiln_program_build_log(const kiln_program *program, const kiln_device *device) {
    const kiln__built *b = kiln__built_for(program, device);
    return b ? b->log : "";
}

int kiln_program_from_cache(const kiln_program *program, const kiln_device *device) {
    const kiln__built *b = kiln__built_for(program, device);
    return b ? b->from_disk : 0;
}
