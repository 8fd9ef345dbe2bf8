/* Device registry and selection, contexts and queues. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness.h"

static int type_rank(kiln_device_type t) {
    return t == KILN_DEVICE_GPU           ? 0
           : t == KILN_DEVICE_ACCELERATOR ? 1
           : t == KILN_DEVICE_CPU         ? 2
                                          : 3;
}

/* What each backend reports, as include/kiln.h documents it. */
static void check_capabilities(const kiln_device_info *info) {
    size_t blen = strnlen(info->backend_name, sizeof info->backend_name);
    CHECK(blen > 0 && blen < sizeof info->backend_name);
    /* the id starts with the selector prefix */
    CHECK_MSG(strncmp(info->id, info->backend_name, blen) == 0 && info->id[blen] == ':',
              "id %s, backend_name %s", info->id, info->backend_name);
    CHECK(info->forward_progress == 0 || info->forward_progress == 1);
    CHECK(info->device_sleep == 0 || info->device_sleep == 1);
    CHECK(info->warp_shuffle == 0 || info->warp_shuffle == 1);
    if (info->backend == KILN_BACKEND_OPENCL) {
        CHECK(strcmp(info->backend_name, "opencl") == 0);
        CHECK(info->languages == 1u << KILN_LANG_OPENCL_C);
        /* the look-back scan's assumption: GPUs only */
        CHECK_MSG(info->forward_progress == (info->type == KILN_DEVICE_GPU),
                  "%s type %d forward_progress %d", info->id, info->type, info->forward_progress);
        /* NVIDIA's OpenCL pauses through inline PTX from sm_70 */
        CHECK_MSG(info->device_sleep == (info->compute_capability >= 70), "%s sm_%u sleep %d",
                  info->id, info->compute_capability, info->device_sleep);
        CHECK(info->warp_shuffle == 0);
    } else if (info->backend == KILN_BACKEND_HOST) {
        /* the host backend: the portable dialect only, no sub-groups, no
         * forward progress between work-groups */
        CHECK(strcmp(info->backend_name, "host") == 0);
        CHECK(info->languages == 0);
        CHECK(info->type == KILN_DEVICE_CPU);
        CHECK(info->forward_progress == 0 && info->device_sleep == 0);
        CHECK(info->warp_shuffle == 0 && info->subgroup_size == 0);
    } else {
        CHECK(info->backend == KILN_BACKEND_CUDA);
        CHECK(strcmp(info->backend_name, "cuda") == 0);
        CHECK(info->languages == 1u << KILN_LANG_CUDA_C);
        CHECK(info->type == KILN_DEVICE_GPU);
        CHECK(info->forward_progress == 1);
        CHECK_MSG(info->device_sleep == (info->compute_capability >= 70), "%s sm_%u sleep %d",
                  info->id, info->compute_capability, info->device_sleep);
        CHECK(info->warp_shuffle == 1);
        CHECK(info->subgroup_size == 32);
    }
}

/* The info getter's size argument: an older caller's shorter struct gets
 * its prefix, a newer caller's longer one gets zeros beyond ours. */
static void test_info_sizes(kiln_device *dev) {
    kiln_device_info full;
    CHECK_OK(kiln_device_get_info(dev, &full));
    /* a caller built before the capability fields */
    size_t old_size = offsetof(kiln_device_info, backend_name);
    kiln_device_info old;
    memset(&old, 0xAB, sizeof old);
    CHECK_OK((kiln_device_get_info)(dev, &old, old_size));
    CHECK(memcmp(&old, &full, old_size) == 0);
    CHECK(((unsigned char *)&old)[old_size] == 0xAB); /* nothing written past it */
    /* a caller with a longer struct */
    unsigned char big[sizeof(kiln_device_info) + 64];
    memset(big, 0xAB, sizeof big);
    CHECK_OK((kiln_device_get_info)(dev, (kiln_device_info *)(void *)big, sizeof big));
    CHECK(memcmp(big, &full, sizeof full) == 0);
    int zeros = 1;
    for (size_t i = sizeof full; i < sizeof big; i++)
        zeros &= big[i] == 0;
    CHECK(zeros);
    /* too small for any version */
    CHECK_STATUS((kiln_device_get_info)(dev, &old, 8), KILN_ERROR_INVALID_ARGUMENT);
}

/* The languages bit agrees with what kiln_program_create accepts. */
static void test_languages(kiln_device *dev) {
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(dev, &info));
    kiln_context *ctx = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &ctx)))
        return;
    static const struct {
        kiln_language lang;
        const char *source;
    } native[] = {
        { KILN_LANG_OPENCL_C, "__kernel void nat(__global int *x) { x[get_global_id(0)] = 5; }" },
        { KILN_LANG_CUDA_C, "extern \"C\" __global__ void nat(int *x) { x[threadIdx.x] = 5; }" },
    };
    for (size_t i = 0; i < sizeof native / sizeof native[0]; i++) {
        kiln_program_opts opts = { .struct_size = sizeof opts, .language = native[i].lang };
        kiln_program *p = NULL;
        kiln_status st = kiln_program_create(ctx, native[i].source, &opts, &p);
        if (info.languages & (1u << native[i].lang)) {
            CHECK_MSG(st == KILN_OK, "%s: language %d listed but refused: %s", info.id,
                      (int)native[i].lang, kiln_last_error_message());
        } else {
            CHECK_STATUS(st, KILN_ERROR_UNSUPPORTED);
            CHECK(p == NULL);
            const char *msg = kiln_last_error_message();
            CHECK_MSG(strstr(msg, info.backend_name) && strstr(msg, info.id) &&
                          strstr(msg, "KILN_LANG_AUTO"),
                      "%s", msg);
        }
        kiln_program_release(p);
    }
    kiln_context_release(ctx);
}

/* "B:N" and "B:P:D" for each device, B its backend_name, counted here in
 * kiln_device_at order. */
static void test_backend_selectors(size_t count) {
    for (size_t i = 0; i < count; i++) {
        kiln_device *dev = NULL, *got = NULL;
        kiln_device_info info;
        kiln_device_at(i, &dev);
        kiln_device_get_info(dev, &info);
        if (info.is_subdevice)
            continue;
        size_t nth = 0;
        for (size_t j = 0; j < i; j++) {
            kiln_device *d;
            kiln_device_info di;
            kiln_device_at(j, &d);
            kiln_device_get_info(d, &di);
            nth += !di.is_subdevice && strcmp(di.backend_name, info.backend_name) == 0;
        }
        char sel[64];
        snprintf(sel, sizeof sel, "%s:%zu", info.backend_name, nth);
        CHECK_OK(kiln_device_select(sel, &got));
        CHECK_MSG(got == dev, "%s selects %s", sel, info.id);
        /* the prefix is case-insensitive */
        for (char *c = sel; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        got = NULL;
        CHECK_OK(kiln_device_select(sel, &got));
        CHECK_MSG(got == dev, "%s selects %s", sel, info.id);
        /* B:P:D, where the id says P and D (OpenCL ids are B:P:D) */
        unsigned pi, di;
        char tail;
        if (sscanf(info.id + strlen(info.backend_name), ":%u:%u%c", &pi, &di, &tail) == 2) {
            snprintf(sel, sizeof sel, "%s:%u:%u", info.backend_name, pi, di);
            got = NULL;
            CHECK_OK(kiln_device_select(sel, &got));
            CHECK(got == dev);
        } else if (sscanf(info.id + strlen(info.backend_name), ":%u%c", &di, &tail) == 1) {
            /* a backend without platforms has platform 0 */
            snprintf(sel, sizeof sel, "%s:0:%u", info.backend_name, di);
            got = NULL;
            CHECK_OK(kiln_device_select(sel, &got));
            CHECK_MSG(got == dev, "%s selects %s", sel, info.id);
        }
    }
    /* The message lists each backend's selector forms */
    kiln_device *dev = NULL, *first = NULL;
    kiln_device_info info;
    kiln_device_at(0, &first);
    kiln_device_get_info(first, &info);
    CHECK_STATUS(kiln_device_select("no-such-device-xyz", &dev), KILN_ERROR_NO_DEVICE);
    char form[40];
    snprintf(form, sizeof form, "%s:N", info.backend_name);
    CHECK_MSG(strstr(kiln_last_error_message(), form) != NULL, "%s", kiln_last_error_message());
    snprintf(form, sizeof form, "%s:P:D", info.backend_name);
    CHECK_MSG(strstr(kiln_last_error_message(), form) != NULL, "%s", kiln_last_error_message());
}

/* Device i of the listing, its info in *di. */
static kiln_device *device_at(size_t i, kiln_device_info *di) {
    kiln_device *d = NULL;
    kiln_device_at(i, &d);
    kiln_device_get_info(d, di);
    return d;
}

/* Among devices of the default's type the default is the first of the
 * highest-ranked backend: CUDA before OpenCL, and the host backend before
 * OpenCL's CPU devices (kiln.h, docs/architecture.md). */
static void check_default_backend(kiln_device *dflt, size_t count) {
    kiln_device_info dinfo;
    kiln_device_get_info(dflt, &dinfo);
    int seen_default = 0;
    for (size_t i = 0; i < count; i++) {
        kiln_device_info di;
        kiln_device *d = device_at(i, &di);
        seen_default |= d == dflt;
        if (di.is_subdevice || di.type != dinfo.type || d == dflt)
            continue;
        if (dinfo.backend == KILN_BACKEND_OPENCL)
            CHECK_MSG(di.backend != KILN_BACKEND_CUDA && di.backend != KILN_BACKEND_HOST,
                      "default %s, but %s device %s has its type", dinfo.id, di.backend_name,
                      di.id);
        if (di.backend == dinfo.backend)
            CHECK_MSG(seen_default, "default %s is listed after %s of its type and backend",
                      dinfo.id, di.id);
    }
    CHECK(seen_default);
}

static void test_listing(size_t count) {
    kiln_device *dev = NULL;
    for (size_t i = 0; i < count; i++) {
        kiln_device_info info;
        if (!CHECK_OK(kiln_device_at(i, &dev)))
            continue;
        CHECK_OK(kiln_device_get_info(dev, &info));
        printf("  %zu: %s \"%s\" vendor \"%s\" platform \"%s\" type %d cu %u wg %zu\n", i, info.id,
               info.name, info.vendor, info.platform, info.type, info.compute_units,
               info.max_work_group_size);
        CHECK(info.id[0] != 0);
        CHECK(info.name[0] != 0);
        CHECK(info.backend == KILN_BACKEND_OPENCL || info.backend == KILN_BACKEND_CUDA ||
              info.backend == KILN_BACKEND_HOST);
        CHECK(info.max_work_group_size >= 1);
        CHECK(info.global_mem_bytes > 0);
        CHECK(kiln_device_extensions(dev) != NULL);
        check_capabilities(&info);
        /* "N" selects the N-th device */
        char sel[32];
        snprintf(sel, sizeof sel, "%zu", i);
        kiln_device *again = NULL;
        CHECK_OK(kiln_device_select(sel, &again));
        CHECK(again == dev);
        /* its own id selects it (opencl:P:D, cuda:N) */
        CHECK_OK(kiln_device_select(info.id, &again));
        CHECK_MSG(again == dev, "selector %s", info.id);
        /* the same pointer each time: devices are owned by kiln */
        kiln_device *same = NULL;
        CHECK_OK(kiln_device_at(i, &same));
        CHECK(same == dev);
    }
    CHECK_STATUS(kiln_device_at(count, &dev), KILN_ERROR_OUT_OF_RANGE);
    CHECK(dev == NULL);
    CHECK_STATUS(kiln_device_at(0, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_device_count(NULL), KILN_ERROR_NULL_HANDLE);
    kiln_device_info info;
    CHECK_STATUS(kiln_device_get_info(NULL, &info), KILN_ERROR_NULL_HANDLE);
    CHECK(strcmp(kiln_device_extensions(NULL), "") == 0);
}

static void test_selection(size_t count) {
    kiln_device *first = NULL, *dev = NULL;
    CHECK_OK(kiln_device_at(0, &first));
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(first, &info));

    /* opencl:N counts OpenCL devices over all platforms */
    if (info.backend == KILN_BACKEND_OPENCL) {
        CHECK_OK(kiln_device_select("opencl:0", &dev));
        CHECK(dev == first);
        CHECK_OK(kiln_device_select("OpenCL:0", &dev)); /* the prefix is case-insensitive */
        CHECK(dev == first);
    }
    /* A substring of the name, in another case */
    char sub[8] = { 0 };
    size_t nlen = strlen(info.name);
    memcpy(sub, info.name + (nlen > 6 ? 1 : 0), nlen > 6 ? 5 : nlen);
    for (char *p = sub; *p; p++)
        *p = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : (*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    CHECK_MSG(kiln_device_select(sub, &dev) == KILN_OK && dev != NULL, "substring '%s'", sub);
    if (dev) {
        kiln_device_info di;
        kiln_device_get_info(dev, &di);
        CHECK(strcasestr(di.name, sub) || strcasestr(di.vendor, sub) ||
              strcasestr(di.platform, sub));
    }
    /* "pocl" finds PoCL although neither name nor vendor says so */
    if (strstr(info.platform, "Portable Computing Language")) {
        CHECK_OK(kiln_device_select("pocl", &dev));
        CHECK_OK(kiln_device_select("PoCL", &dev));
    }
    /* The platform name, and the type words */
    CHECK_OK(kiln_device_select(info.platform, &dev));
    const char *word = info.type == KILN_DEVICE_CPU   ? "cpu"
                       : info.type == KILN_DEVICE_GPU ? "gpu"
                                                      : NULL;
    if (word) {
        CHECK_OK(kiln_device_select(word, &dev));
        kiln_device_info di;
        kiln_device_get_info(dev, &di);
        CHECK(di.type == info.type);
        CHECK_OK(kiln_device_select(info.type == KILN_DEVICE_CPU ? "CPU" : "GPU", &dev));
    }
    /* cuda:0 finds a CUDA device exactly when one is listed */
    int have_cuda = 0;
    for (size_t i = 0; i < count; i++) {
        kiln_device_info di;
        device_at(i, &di);
        have_cuda |= di.backend == KILN_BACKEND_CUDA && !di.is_subdevice;
    }
    kiln_status st = kiln_device_select("cuda:0", &dev);
    CHECK_STATUS(st, have_cuda ? KILN_OK : KILN_ERROR_NO_DEVICE);
    if (st == KILN_OK) {
        kiln_device_info di;
        kiln_device_get_info(dev, &di);
        CHECK(di.backend == KILN_BACKEND_CUDA);
    }

    /* Unknown selectors: KILN_ERROR_NO_DEVICE naming every device */
    const char *bad[] = { "no-such-device-xyz",
                          "opencl:99:0",
                          "opencl:0:99",
                          "opencl:x:y",
                          "9999",
                          "cuda:77",
                          "opencl:",
                          "cuda:",
                          "opencl:0:",
                          "opencl:0:0:0",
                          "opencl:-1",
                          "opencl: 0",
                          "openclx:0",
                          "cuda:0:77",
                          "cuda:1:0",
                          "opencl:99999999999999999999999" };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        dev = first;
        CHECK_STATUS(kiln_device_select(bad[b], &dev), KILN_ERROR_NO_DEVICE);
        CHECK(dev == NULL);
        const char *msg = kiln_last_error_message();
        CHECK_MSG(strstr(msg, bad[b]) != NULL, "message names the selector: %s", msg);
        for (size_t i = 0; i < count; i++) {
            kiln_device *d;
            kiln_device_info di;
            kiln_device_at(i, &d);
            kiln_device_get_info(d, &di);
            CHECK_MSG(strstr(msg, di.id) && strstr(msg, di.name), "message lists %s: %s", di.id,
                      msg);
        }
    }
    CHECK_STATUS(kiln_device_select("x", NULL), KILN_ERROR_NULL_HANDLE);

    /* Default preference: GPU, then accelerator, then CPU */
    const char *saved = getenv("KILN_DEVICE");
    char *saved_copy = saved ? strdup(saved) : NULL;
    unsetenv("KILN_DEVICE");
    CHECK_OK(kiln_device_select(NULL, &dev));
    kiln_device *dflt = dev;
    CHECK_OK(kiln_device_select("", &dev));
    CHECK(dev == dflt);
    check_default_backend(dflt, count);
    kiln_device_info dinfo;
    kiln_device_get_info(dflt, &dinfo);
    for (size_t i = 0; i < count; i++) {
        kiln_device *d;
        kiln_device_info di;
        kiln_device_at(i, &d);
        kiln_device_get_info(d, &di);
        if (!di.is_subdevice)
            CHECK_MSG(type_rank(dinfo.type) <= type_rank(di.type), "default %s over %s", dinfo.id,
                      di.id);
    }
    /* $KILN_DEVICE applies to NULL and "" */
    char sel[32];
    snprintf(sel, sizeof sel, "%zu", count - 1);
    setenv("KILN_DEVICE", sel, 1);
    kiln_device *last = NULL;
    kiln_device_at(count - 1, &last);
    CHECK_OK(kiln_device_select(NULL, &dev));
    CHECK(dev == last);
    CHECK_OK(kiln_device_select("", &dev));
    CHECK(dev == last);
    CHECK_OK(kiln_device_select("0", &dev)); /* an explicit selector wins */
    CHECK(dev == first);
    setenv("KILN_DEVICE", "bogus-device-name", 1);
    CHECK_STATUS(kiln_device_select(NULL, &dev), KILN_ERROR_NO_DEVICE);
    CHECK_MSG(strstr(kiln_last_error_message(), "KILN_DEVICE") != NULL, "%s",
              kiln_last_error_message());
    kiln_queue *q = NULL;
    CHECK_STATUS(kiln_queue_create_default(NULL, 0, &q), KILN_ERROR_NO_DEVICE);
    CHECK(q == NULL);
    if (saved_copy)
        setenv("KILN_DEVICE", saved_copy, 1);
    else
        unsetenv("KILN_DEVICE");
    free(saved_copy);
}

static void test_contexts(void) {
    kiln_device *dev = NULL;
    CHECK_OK(kiln_device_at(0, &dev));
    kiln_context *ctx = NULL;
    CHECK_STATUS(kiln_context_create(&dev, 0, &ctx), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_context_create(NULL, 1, &ctx), KILN_ERROR_NULL_HANDLE);
    kiln_device *twice[2] = { dev, dev };
    CHECK_STATUS(kiln_context_create(twice, 2, &ctx), KILN_ERROR_INVALID_ARGUMENT);
    kiln_device *withnull[2] = { dev, NULL };
    CHECK_STATUS(kiln_context_create(withnull, 2, &ctx), KILN_ERROR_NULL_HANDLE);
    CHECK(ctx == NULL);
    if (!CHECK_OK(kiln_context_create(&dev, 1, &ctx)))
        return;
    CHECK(kiln_context_num_devices(ctx) == 1);
    CHECK(kiln_context_device(ctx, 0) == dev);
    CHECK(kiln_context_device(ctx, 1) == NULL);
    CHECK(kiln_context_num_devices(NULL) == 0);
    CHECK(kiln_context_device(NULL, 0) == NULL);
    CHECK_OK(kiln_context_retain(ctx));
    kiln_context_release(ctx);

    kiln_queue *q = NULL;
    CHECK_STATUS(kiln_queue_create(ctx, dev, 0x100, &q), KILN_ERROR_INVALID_ARGUMENT);
    unsigned flags[] = { KILN_QUEUE_IN_ORDER, KILN_QUEUE_PROFILING, KILN_QUEUE_OUT_OF_ORDER,
                         KILN_QUEUE_OUT_OF_ORDER | KILN_QUEUE_PROFILING };
    for (size_t i = 0; i < 4; i++) {
        kiln_status st = kiln_queue_create(ctx, dev, flags[i], &q);
        if (st == KILN_ERROR_UNSUPPORTED && (flags[i] & KILN_QUEUE_OUT_OF_ORDER))
            continue; /* allowed: the message says why */
        if (!CHECK_OK(st))
            continue;
        CHECK(kiln_queue_context(q) == ctx);
        CHECK(kiln_queue_device(q) == dev);
        CHECK_OK(kiln_queue_flush(q));
        CHECK_OK(kiln_queue_finish(q));
        CHECK_OK(kiln_queue_retain(q));
        KT_RELEASE(q, q);
    }
    /* The queue keeps the context alive */
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q));
    kiln_context_release(ctx);
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(kiln_queue_context(q), 64, 0, NULL, &b));
    int v = 7, r = 0;
    CHECK_OK(kiln_buffer_write(q, b, 0, sizeof v, &v));
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof r, &r));
    CHECK(r == 7);
    KT_RELEASE(b, q);

    /* A device of another context */
    size_t count = 0;
    kiln_device_count(&count);
    if (count >= 2) {
        kiln_device *other = NULL;
        kiln_device_at(1, &other);
        CHECK_OK(kiln_context_create(&dev, 1, &ctx));
        CHECK_STATUS(kiln_queue_create(ctx, other, 0, &q), KILN_ERROR_MISMATCH);
        kiln_context_release(ctx);
    }
}

static void test_partition(void) {
    kiln_device *dev = NULL;
    CHECK_OK(kiln_device_at(0, &dev));
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    kiln_device *subs[64];
    size_t n = 0, before = 0, after = 0;
    CHECK_STATUS(kiln_device_partition(NULL, 1, subs, 64, &n), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_device_partition(dev, 0, subs, 64, &n), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_device_partition(dev, 1, NULL, 64, &n), KILN_ERROR_NULL_HANDLE);
    kiln_device_count(&before);
    if (info.compute_units < 2) {
        printf("  partition: %s has %u compute unit(s); not tried\n", info.id, info.compute_units);
        return;
    }
    kiln_status st = kiln_device_partition(dev, 1, subs, 64, &n);
    if (info.backend == KILN_BACKEND_CUDA ||
        (st == KILN_ERROR_UNSUPPORTED && info.type != KILN_DEVICE_CPU)) {
        /* CUDA has no fission; many OpenCL GPU drivers have none either,
         * every OpenCL CPU driver kiln knows has it */
        printf("  partition: %s (%s)\n", kiln_status_name(st), kiln_last_error_message());
        CHECK_STATUS(st, KILN_ERROR_UNSUPPORTED);
        CHECK(n == 0);
        CHECK(strstr(kiln_last_error_message(), info.id) != NULL);
        return;
    }
    if (!CHECK_OK(st))
        return;
    size_t n_too_big = 99;
    CHECK_STATUS(kiln_device_partition(dev, info.compute_units + 1, subs, 64, &n_too_big),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(n_too_big == 0);
    CHECK(n >= 1 && n <= 64);
    kiln_device_count(&after);
    CHECK(after == before + n);
    for (size_t i = 0; i < n; i++) {
        kiln_device_info si;
        CHECK_OK(kiln_device_get_info(subs[i], &si));
        CHECK(si.is_subdevice == 1);
        CHECK(si.compute_units == 0 || si.compute_units == 1);
    }
    /* A context and a kernel on a sub-device */
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    if (CHECK_OK(kiln_context_create(&subs[0], 1, &ctx)) &&
        CHECK_OK(kiln_queue_create(ctx, subs[0], 0, &q))) {
        kiln_program *p = NULL;
        kiln_kernel *k = NULL;
        kiln_buffer *b = NULL;
        CHECK_OK(
            kiln_program_create(ctx,
                                "KILN_KERNEL void f(KILN_GLOBAL int *x) { x[kiln_global_id(0)] = "
                                "(int)kiln_global_id(0) * 3; }",
                                NULL, &p));
        CHECK_OK(kiln_kernel_create(p, "f", &k));
        CHECK_OK(kiln_buffer_create(ctx, 100 * sizeof(int), 0, NULL, &b));
        size_t g = 100;
        kiln_arg a = KILN_ARG_BUF(b);
        CHECK_OK(kiln_kernel_launch(q, k, 1, &g, NULL, 1, &a, 0, NULL, NULL));
        int out[100];
        CHECK_OK(kiln_buffer_read(q, b, 0, sizeof out, out));
        int good = 1;
        for (int i = 0; i < 100; i++)
            good &= out[i] == 3 * i;
        CHECK(good);
        /* the parent device is not in this context */
        kiln_queue *q2 = NULL;
        CHECK_STATUS(kiln_queue_create(ctx, dev, 0, &q2), KILN_ERROR_MISMATCH);
        KT_RELEASE(b, k, p);
    }
    KT_RELEASE(q, ctx);
}

int main(void) {
    size_t count = 0;
    if (!CHECK_OK(kiln_device_count(&count)))
        return kt_report();
    CHECK(count >= 1);
    if (count == 0)
        return kt_report();
    printf("%zu devices\n", count);
    test_listing(count);
    test_selection(count);
    test_backend_selectors(count);
    kiln_device *first = NULL;
    if (CHECK_OK(kiln_device_at(0, &first))) {
        test_info_sizes(first);
        test_languages(first);
    }
    test_contexts();
    test_partition();
    return kt_report();
}
