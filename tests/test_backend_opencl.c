/* The OpenCL backend table, driven directly (no core objects): loading,
 * devices, contexts and queues, buffers, programs and binaries, launches
 * checked against serial C loops, events. Runs on the first OpenCL device
 * (PoCL in CI). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the OpenCL backend's own header (its driver function table) */
#define KILN_TEST_OPENCL_BACKEND 1
#include "testing/kiln_test_internal.h"
#include "harness.h"

static const kiln__backend *B = &kiln__backend_opencl;

/* Prelude + source, as the core builds it. */
static kiln_status build(void *ctx, const kiln__bdevice *dev, const char *src, const char *opts,
                         void **prog, char **log) {
    const char *pre = kiln__embedded_file(B->prelude_file);
    size_t n = strlen(pre) + strlen(src) + 1;
    char *full = malloc(n);
    if (!full)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    snprintf(full, n, "%s%s", pre, src);
    kiln_status st = B->program_build(ctx, dev, full, opts, prog, log);
    free(full);
    return st;
}

static void sleep_ms(int ms) {
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ devices */

static void check_devices(const kiln__bdevice *devs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const kiln_device_info *in = &devs[i].info;
        printf("  %s  %s | %s | %s | %s | CU %u | %u MHz | %llu MiB | wg %zu | "
               "fp64 %d fp16 %d\n",
               in->id, in->name, in->vendor, in->platform, in->version, in->compute_units,
               in->clock_mhz, (unsigned long long)(in->global_mem_bytes >> 20),
               in->max_work_group_size, in->fp64, in->fp16);
        CHECK(in->backend == KILN_BACKEND_OPENCL);
        CHECK(strncmp(in->id, "opencl:", 7) == 0);
        CHECK(in->name[0] != '\0');
        CHECK(in->version[0] != '\0');
        CHECK(in->platform[0] != '\0');
        CHECK(in->driver_version[0] != '\0');
        CHECK(in->compute_units > 0);
        CHECK(in->global_mem_bytes > 0);
        CHECK(in->local_mem_bytes > 0);
        CHECK(in->max_alloc_bytes > 0 && in->max_alloc_bytes <= in->global_mem_bytes);
        CHECK(in->max_work_group_size > 0);
        CHECK(in->max_work_item_sizes[0] > 0);
        CHECK(in->type == KILN_DEVICE_CPU || in->type == KILN_DEVICE_GPU ||
              in->type == KILN_DEVICE_ACCELERATOR || in->type == KILN_DEVICE_OTHER);
        CHECK(devs[i].extensions != NULL);
        CHECK(devs[i].handle != NULL && devs[i].platform != NULL);
        CHECK(strstr(devs[i].identity, in->name) != NULL);
        CHECK(strstr(devs[i].identity, in->driver_version) != NULL);
        /* capabilities (include/kiln.h) */
        CHECK(strcmp(in->backend_name, B->selector_prefix) == 0);
        CHECK(in->languages == B->languages);
        CHECK(in->forward_progress == (in->type == KILN_DEVICE_GPU));
        CHECK(in->device_sleep == (in->compute_capability >= 70));
        CHECK(in->warp_shuffle == 0);
        /* fp16 agrees with the extension list */
        CHECK(in->fp16 == (strstr(devs[i].extensions, "cl_khr_fp16") != NULL));
        /* fp64 agrees with the extension list where the device names it */
        if (strstr(devs[i].extensions, "cl_khr_fp64"))
            CHECK(in->fp64 == 1);
    }
}

static void test_partition(const kiln__bdevice *dev) {
    kiln__bdevice subs[64];
    size_t count = 0;
    cl_device_partition_property props[8];
    size_t props_size = 0;
    int equally = 0;
    if (kiln__cl.clGetDeviceInfo((cl_device_id)dev->handle, CL_DEVICE_PARTITION_PROPERTIES,
                                 sizeof props, props, &props_size) == CL_SUCCESS)
        for (size_t i = 0; i < props_size / sizeof props[0]; i++)
            equally |= props[i] == CL_DEVICE_PARTITION_EQUALLY;
    kiln_status st = B->partition(dev, 1, subs, 64, &count);
    if (!equally) {
        /* the driver says it cannot: the backend must say so too */
        printf("  partition: %s (%s)\n", kiln_status_name(st), kiln_last_error_message());
        CHECK_STATUS(st, KILN_ERROR_UNSUPPORTED);
        CHECK(count == 0);
        CHECK(strstr(kiln_last_error_message(), dev->info.name) != NULL ||
              strstr(kiln_last_error_message(), "clCreateSubDevices") != NULL);
        return;
    }
    CHECK_OK(st);
    CHECK(count >= 1 && count <= dev->info.compute_units);
    for (size_t i = 0; i < count; i++) {
        CHECK(subs[i].info.is_subdevice == 1);
        CHECK(subs[i].info.compute_units == 1);
        CHECK(strcmp(subs[i].info.backend_name, "opencl") == 0);
        CHECK(subs[i].info.languages == B->languages);
        CHECK(subs[i].info.forward_progress == dev->info.forward_progress);
        free(subs[i].extensions);
    }
    /* 0 units per part, or more than the device has: a clear error */
    CHECK_STATUS(B->partition(dev, 0, subs, 64, &count), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(B->partition(dev, dev->info.compute_units + 1, subs, 64, &count),
                 KILN_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ buffers */

static void test_buffers(void *ctx, void *q) {
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 1u << 20);
    for (size_t s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n == 0)
            continue; /* the core refuses size 0 before the backend */
        unsigned char *src = malloc(n), *dst = malloc(n);
        void *buf = NULL, *ev = NULL;
        for (size_t i = 0; i < n; i++)
            src[i] = (unsigned char)kt_rand_u64();
        memset(dst, 0, n);
        if (!CHECK_OK(B->buffer_create(ctx, n, KILN_BUFFER_READ_WRITE, NULL, &buf))) {
            KT_FREE(src, dst);
            continue;
        }
        CHECK_OK(B->buffer_write(q, buf, 0, n, src, 0, 0, NULL, &ev));
        CHECK(ev != NULL);
        CHECK_OK(B->buffer_read(q, buf, 0, n, dst, 1, 1, &ev, NULL));
        CHECK_MSG(memcmp(src, dst, n) == 0, "round trip of %zu bytes", n);
        B->event_release(ev);

        /* an odd offset and length */
        if (n > 3) {
            size_t off = 1 + (size_t)(kt_rand_u64() % (n - 2));
            size_t len = n - off;
            memset(dst, 0, n);
            CHECK_OK(B->buffer_read(q, buf, off, len, dst, 1, 0, NULL, NULL));
            CHECK_MSG(memcmp(src + off, dst, len) == 0, "read at offset %zu of %zu", off, n);
        }
        B->buffer_release(buf);
        KT_FREE(src, dst);
    }

    /* host_data, pinned, copy, fill, map */
    enum { N = 1000 };
    int host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (int)(kt_rand_u64() & 0x7fffffff);
    void *a = NULL, *b = NULL, *ev = NULL;
    CHECK_OK(B->buffer_create(ctx, sizeof host, KILN_BUFFER_READ_ONLY, host, &a));
    CHECK_OK(B->buffer_create(ctx, sizeof host, KILN_BUFFER_HOST_PINNED, NULL, &b));
    if (!a || !b) {
        B->buffer_release(a);
        B->buffer_release(b);
        return;
    }
    CHECK_OK(B->buffer_copy(q, a, 4 * sizeof(int), b, 0, (N - 4) * sizeof(int), 0, NULL, &ev));
    int pattern = 0x5a5a1234;
    CHECK_OK(B->buffer_fill(q, b, &pattern, sizeof pattern, (N - 4) * sizeof(int), 4 * sizeof(int),
                            1, &ev, NULL));
    CHECK_OK(B->buffer_read(q, b, 0, sizeof back, back, 1, 0, NULL, NULL));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= back[i] == (i < N - 4 ? host[i + 4] : pattern);
    CHECK_MSG(ok, "copy + fill");
    B->event_release(ev);

    void *p = NULL;
    CHECK_OK(B->buffer_map(q, b, KILN_MAP_READ | KILN_MAP_WRITE, 8, 16, &p));
    if (p) {
        int *ip = p;
        CHECK(ip[0] == host[6] && ip[3] == host[9]);
        ip[0] = -7;
        ev = NULL;
        CHECK_OK(B->buffer_unmap(q, b, p, 0, NULL, &ev));
        CHECK_OK(B->event_wait(1, &ev));
        B->event_release(ev);
        CHECK_OK(B->buffer_read(q, b, 8, 4, back, 1, 0, NULL, NULL));
        CHECK(back[0] == -7);
    }

    /* sub-buffers: aligned works, misaligned names the alignment */
    void *sub = NULL;
    CHECK_OK(B->buffer_create_sub(a, 128, 256, &sub));
    if (sub) {
        CHECK_OK(B->buffer_read(q, sub, 0, 256, back, 1, 0, NULL, NULL));
        CHECK(memcmp(back, host + 32, 256) == 0);
        B->buffer_release(sub);
    }
    sub = NULL;
    CHECK_STATUS(B->buffer_create_sub(a, 4, 16, &sub), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(sub == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "alignment") != NULL &&
                  strstr(kiln_last_error_message(), "CL_MISALIGNED_SUB_BUFFER_OFFSET") != NULL,
              "message: %s", kiln_last_error_message());

    /* an impossible allocation is an error, not a crash: beyond the
     * device's CL_DEVICE_MAX_MEM_ALLOC_SIZE the driver must answer
     * CL_INVALID_BUFFER_SIZE, which kiln reports as out of device memory */
    cl_device_id qdev = NULL;
    cl_ulong max_alloc = 0;
    CHECK(kiln__cl.clGetCommandQueueInfo((cl_command_queue)q, CL_QUEUE_DEVICE, sizeof qdev, &qdev,
                                         NULL) == CL_SUCCESS);
    CHECK(kiln__cl.clGetDeviceInfo(qdev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc,
                                   NULL) == CL_SUCCESS);
    CHECK_MSG(max_alloc > 0 && max_alloc < (cl_ulong)1 << 62, "max alloc %llu",
              (unsigned long long)max_alloc);
    void *huge = NULL;
    CHECK_STATUS(B->buffer_create(ctx, (size_t)1 << 62, 0, NULL, &huge),
                 KILN_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK_MSG(strstr(kiln_last_error_message(), "CL_INVALID_BUFFER_SIZE") != NULL, "message: %s",
              kiln_last_error_message());
    CHECK(huge == NULL);

    B->buffer_release(a);
    B->buffer_release(b);
}

/* ------------------------------------------------------------ kernels */

static const char *kernels_src =
    "KILN_KERNEL void groups(KILN_GLOBAL const int *in, KILN_GLOBAL int *out,\n"
    "                        KILN_GLOBAL int *isum, KILN_GLOBAL float *fsum,\n"
    "                        int n, float scale)\n"
    "{\n"
    "    KILN_LOCAL int tile[64];\n"
    "    size_t gid = kiln_global_id(0), lid = kiln_local_id(0);\n"
    "    int v = gid < (size_t)n ? in[gid] : 0;\n"
    "    tile[lid] = v;\n"
    "    kiln_barrier();\n"
    "    int r = tile[kiln_local_size(0) - 1 - lid];\n"
    "    if (gid < (size_t)n) {\n"
    "        out[gid] = r * 3 + 1;\n"
    "        kiln_atomic_add_int(isum, v);\n"
    "        kiln_atomic_add_float(fsum, (float)v * scale);\n"
    "    }\n"
    "}\n"
    "KILN_KERNEL void setv(KILN_GLOBAL int *out, int v, __local int *scratch)\n"
    "{\n"
    "    size_t lid = kiln_local_id(0);\n"
    "    scratch[lid] = v + (int)lid;\n"
    "    kiln_barrier();\n"
    "    out[kiln_global_id(0)] = scratch[lid] - (int)lid;\n"
    "}\n"
    "KILN_KERNEL void empty(KILN_GLOBAL int *p, int i, float f) { }\n";

/* A launch of groups over n items, checked against a serial loop. */
static void run_groups(void *ctx, void *q, void *kern, size_t n) {
    size_t ng = (n + 63) / 64 * 64;
    int *in = calloc(ng + 1, sizeof *in); /* +1: the buffer has 4 spare bytes */
    int *out = calloc(n ? n : 1, sizeof *out);
    int *want = calloc(n ? n : 1, sizeof *want);
    long long isum_want = 0;
    for (size_t i = 0; i < n; i++) {
        in[i] = (int)(kt_rand_u64() % 201) - 100;
        isum_want += in[i];
    }
    for (size_t i = 0; i < n; i++) {
        size_t base = i / 64 * 64, lid = i % 64;
        want[i] = in[base + 63 - lid] * 3 + 1; /* in[] is 0 past n */
    }
    void *bin = NULL, *bout = NULL, *bi = NULL, *bf = NULL, *ev = NULL;
    int zero = 0;
    float fzero = 0.0f, scale = 0.5f;
    int nn = (int)n;
    CHECK_OK(B->buffer_create(ctx, ng * sizeof(int) + 4, 0, in, &bin));
    CHECK_OK(B->buffer_create(ctx, n * sizeof(int) + 4, 0, NULL, &bout));
    CHECK_OK(B->buffer_create(ctx, sizeof(int), 0, &zero, &bi));
    CHECK_OK(B->buffer_create(ctx, sizeof(float), 0, &fzero, &bf));
    if (bin && bout && bi && bf) {
        kiln__barg args[6] = {
            { KILN_ARG_BUFFER, bin, NULL, 0 },
            { KILN_ARG_BUFFER, bout, NULL, 0 },
            { KILN_ARG_BUFFER, bi, NULL, 0 },
            { KILN_ARG_BUFFER, bf, NULL, 0 },
            { KILN_ARG_SCALAR, NULL, &nn, sizeof nn },
            { KILN_ARG_SCALAR, NULL, &scale, sizeof scale },
        };
        size_t global = ng, local = 64;
        CHECK_OK(B->kernel_launch(q, kern, 1, &global, &local, 6, args, 0, NULL, &ev));
        CHECK(ev != NULL);
        int isum = 0;
        float fsum = 0;
        if (n)
            CHECK_OK(B->buffer_read(q, bout, 0, n * sizeof(int), out, 1, 1, &ev, NULL));
        CHECK_OK(B->buffer_read(q, bi, 0, sizeof isum, &isum, 1, 1, &ev, NULL));
        CHECK_OK(B->buffer_read(q, bf, 0, sizeof fsum, &fsum, 1, 1, &ev, NULL));
        CHECK_MSG(memcmp(out, want, n * sizeof(int)) == 0, "groups output, n=%zu", n);
        CHECK_MSG(isum == (int)isum_want, "int atomics n=%zu: %d vs %lld", n, isum, isum_want);
        CHECK_MSG(fsum == (float)(isum_want * 0.5), "float atomics n=%zu: %g vs %g", n,
                  (double)fsum, (double)isum_want * 0.5);
        if (ev)
            B->event_release(ev);
    }
    B->buffer_release(bin);
    B->buffer_release(bout);
    B->buffer_release(bi);
    B->buffer_release(bf);
    KT_FREE(in, out, want);
}

/* setv(out, v) over 64 items; returns 1 if out holds v everywhere. */
static int run_setv(void *q, void *kern, void *buf, int v) {
    int out[64];
    size_t global = 64, local = 16;
    kiln__barg args[3] = { { KILN_ARG_BUFFER, buf, NULL, 0 },
                           { KILN_ARG_SCALAR, NULL, &v, sizeof v },
                           { KILN_ARG_LOCAL, NULL, NULL, 16 * sizeof(int) } };
    if (B->kernel_launch(q, kern, 1, &global, &local, 3, args, 0, NULL, NULL) != KILN_OK)
        return 0;
    if (B->buffer_read(q, buf, 0, sizeof out, out, 1, 0, NULL, NULL) != KILN_OK)
        return 0;
    for (int i = 0; i < 64; i++)
        if (out[i] != v)
            return 0;
    return 1;
}

typedef struct thread_job {
    void *ctx;
    const kiln__bdevice *dev;
    void *kern;
    int id;
    int ok;
} thread_job;

static void *thread_main(void *p) {
    thread_job *j = p;
    void *q = NULL, *buf = NULL;
    j->ok = 0;
    if (B->queue_create(j->ctx, j->dev, 0, &q) != KILN_OK)
        return NULL;
    if (B->buffer_create(j->ctx, 64 * sizeof(int), 0, NULL, &buf) == KILN_OK) {
        j->ok = 1;
        for (int i = 0; i < 40; i++)
            j->ok &= run_setv(q, j->kern, buf, j->id * 1000 + i);
        B->buffer_release(buf);
    }
    B->queue_release(q);
    return NULL;
}

static void test_kernels(void *ctx, const kiln__bdevice *dev, void *q) {
    void *prog = NULL, *kg = NULL, *ks = NULL;
    char *log = NULL;
    if (!CHECK_OK(build(ctx, dev, kernels_src, "", &prog, &log))) {
        if (log)
            fprintf(stderr, "%s\n", log);
        free(log);
        return;
    }
    free(log);
    CHECK_OK(B->kernel_create(prog, "groups", &kg));
    CHECK_OK(B->kernel_create(prog, "setv", &ks));
    void *nokern = (void *)1;
    CHECK_STATUS(B->kernel_create(prog, "no_such_kernel", &nokern), KILN_ERROR_KERNEL_NOT_FOUND);
    CHECK(nokern == NULL);
    if (!kg || !ks)
        goto out;

    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 5000);
    for (size_t s = 0; s < ns; s++)
        if (sizes[s])
            run_groups(ctx, q, kg, sizes[s]);

    /* The argument memo: changed scalars, swapped buffers, and a buffer
     * released and reallocated between launches all take effect. */
    void *b1 = NULL, *b2 = NULL;
    CHECK_OK(B->buffer_create(ctx, 64 * sizeof(int), 0, NULL, &b1));
    CHECK_OK(B->buffer_create(ctx, 64 * sizeof(int), 0, NULL, &b2));
    if (b1 && b2) {
        CHECK(run_setv(q, ks, b1, 1));
        CHECK(run_setv(q, ks, b1, 1));
        CHECK(run_setv(q, ks, b1, 2));
        CHECK(run_setv(q, ks, b2, 3));
        CHECK(run_setv(q, ks, b1, 4));
        for (int i = 0; i < 5; i++) {
            B->buffer_release(b2);
            b2 = NULL;
            CHECK_OK(B->buffer_create(ctx, 64 * sizeof(int), 0, NULL, &b2));
            if (b2)
                CHECK(run_setv(q, ks, b2, 10 + i));
        }
    }
    B->buffer_release(b1);
    B->buffer_release(b2);

    /* Several threads launching the same kernel at once, each with its own
     * queue and arguments. */
    {
        enum { T = 4 };
        pthread_t th[T];
        thread_job jobs[T];
        for (int t = 0; t < T; t++) {
            jobs[t] = (thread_job){ ctx, dev, ks, t + 1, 0 };
            pthread_create(&th[t], NULL, thread_main, &jobs[t]);
        }
        for (int t = 0; t < T; t++) {
            pthread_join(th[t], NULL);
            CHECK_MSG(jobs[t].ok, "thread %d", t);
        }
    }

    /* A work-group larger than the device allows: the CL name and code. */
    {
        void *b = NULL;
        int v = 0;
        CHECK_OK(B->buffer_create(ctx, 4096 * 4, 0, NULL, &b));
        size_t local = dev->info.max_work_group_size * 2;
        size_t global = local;
        kiln__barg args[3] = { { KILN_ARG_BUFFER, b, NULL, 0 },
                               { KILN_ARG_SCALAR, NULL, &v, sizeof v },
                               { KILN_ARG_LOCAL, NULL, NULL, 64 } };
        kiln_status st = B->kernel_launch(q, ks, 1, &global, &local, 3, args, 0, NULL, NULL);
        CHECK(st == KILN_ERROR_INVALID_ARGUMENT);
        CHECK_MSG(strstr(kiln_last_error_message(), "clEnqueueNDRangeKernel: CL_INVALID_WORK_") !=
                      NULL,
                  "message: %s", kiln_last_error_message());
        CHECK(kiln_last_error_native() == -54 || kiln_last_error_native() == -55);
        /* A scalar of the wrong size: the argument's index in the message */
        double d = 1.0;
        args[1].bytes = &d;
        args[1].size = sizeof d;
        global = local = 16;
        CHECK_STATUS(B->kernel_launch(q, ks, 1, &global, &local, 3, args, 0, NULL, NULL),
                     KILN_ERROR_KERNEL_ARGS);
        CHECK_MSG(strstr(kiln_last_error_message(), "argument 1") != NULL, "message: %s",
                  kiln_last_error_message());
        /* A zero global size: nothing runs, the event completes */
        void *ev = NULL;
        global = 0;
        args[1].bytes = &v;
        args[1].size = sizeof v;
        CHECK_OK(B->kernel_launch(q, ks, 1, &global, NULL, 3, args, 0, NULL, &ev));
        CHECK(ev != NULL);
        if (ev) {
            CHECK_OK(B->event_wait(1, &ev));
            B->event_release(ev);
        }
        B->buffer_release(b);
    }

out:
    B->kernel_release(kg);
    B->kernel_release(ks);
    B->program_release(prog);
}

/* ------------------------------------------------------------ programs */

static void test_build_error(void *ctx, const kiln__bdevice *dev) {
    const char *bad = "KILN_KERNEL void f(KILN_GLOBAL int *p)\n"
                      "{\n"
                      "    p[0] = undeclared_thing + 1;\n"
                      "}\n";
    void *prog = (void *)1;
    char *log = NULL;
    CHECK_STATUS(build(ctx, dev, bad, NULL, &prog, &log), KILN_ERROR_BUILD);
    CHECK(prog == NULL);
    CHECK(log != NULL);
    if (log) {
        CHECK_MSG(strstr(log, "undeclared_thing") != NULL, "log: %s", log);
        /* the prelude's #line 1 keeps line numbers the user's; NVIDIA's
         * compiler ignores it and counts from the prelude's first line
         * (the core maps those back; see test_core_buildlog) */
        char ignored[32];
        int pre_lines = 0;
        for (const char *c = kiln__embedded_file(B->prelude_file); *c; c++)
            pre_lines += *c == '\n';
        snprintf(ignored, sizeof ignored, ":%d:", pre_lines + 3);
        CHECK_MSG(strstr(log, ":3:") != NULL || strstr(log, ignored) != NULL, "log: %s", log);
    }
    CHECK(strstr(kiln_last_error_message(), "CL_BUILD_PROGRAM_FAILURE") != NULL);
    free(log);

    /* bad options are a build error with a log, too */
    log = NULL;
    prog = NULL;
    kiln_status st =
        build(ctx, dev, "KILN_KERNEL void g(void) {}\n", "-this-is-not-an-option", &prog, &log);
    CHECK(st == KILN_ERROR_BUILD);
    CHECK(prog == NULL);
    free(log);
}

static void test_binaries(void *ctx, const kiln__bdevice *dev, void *q) {
    const char *src = "KILN_KERNEL void twice(KILN_GLOBAL int *p) {\n"
                      "    size_t i = kiln_global_id(0); p[i] = 2 * p[i] + 1; }\n";
    void *prog = NULL, *bin = NULL;
    size_t size = 0;
    char *log = NULL;
    if (!CHECK_OK(build(ctx, dev, src, "-DX=1", &prog, &log))) {
        free(log);
        return;
    }
    free(log);
    CHECK_OK(B->program_binary(prog, &bin, &size));
    B->program_release(prog);
    if (!bin)
        return;
    CHECK(size > 24);

    void *p2 = NULL, *k = NULL, *buf = NULL;
    CHECK_OK(B->program_load(ctx, dev, bin, size, "-DX=1", &p2));
    if (p2 && CHECK_OK(B->kernel_create(p2, "twice", &k))) {
        int data[33];
        for (int i = 0; i < 33; i++)
            data[i] = i - 5;
        CHECK_OK(B->buffer_create(ctx, sizeof data, 0, data, &buf));
        size_t global = 33;
        kiln__barg a = { KILN_ARG_BUFFER, buf, NULL, 0 };
        CHECK_OK(B->kernel_launch(q, k, 1, &global, NULL, 1, &a, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, buf, 0, sizeof data, data, 1, 0, NULL, NULL));
        int ok = 1;
        for (int i = 0; i < 33; i++)
            ok &= data[i] == 2 * (i - 5) + 1;
        CHECK_MSG(ok, "kernel from a loaded binary");
        B->buffer_release(buf);
        B->kernel_release(k);
    }
    B->program_release(p2);

    /* Damaged binaries: flipped bytes (header, middle, end), truncation,
     * garbage, empty. Each is an error and nothing crashes. */
    unsigned char *bad = malloc(size);
    size_t spots[4] = { 0, 10, size / 2, size - 1 };
    for (int i = 0; i < 4; i++) {
        memcpy(bad, bin, size);
        bad[spots[i]] ^= 0x5a;
        void *pb = (void *)1;
        CHECK_MSG(B->program_load(ctx, dev, bad, size, "", &pb) != KILN_OK, "flipped byte at %zu",
                  spots[i]);
        CHECK(pb == NULL);
    }
    size_t cuts[3] = { size - 1, size / 2, 5 };
    for (int i = 0; i < 3; i++) {
        void *pb = (void *)1;
        CHECK_MSG(B->program_load(ctx, dev, bin, cuts[i], "", &pb) != KILN_OK, "truncated to %zu",
                  cuts[i]);
        CHECK(pb == NULL);
    }
    for (size_t i = 0; i < size; i++)
        bad[i] = (unsigned char)kt_rand_u64();
    void *pb = NULL;
    CHECK(B->program_load(ctx, dev, bad, size, "", &pb) != KILN_OK);
    CHECK(B->program_load(ctx, dev, bad, 0, "", &pb) != KILN_OK);
    KT_FREE(bad, bin);
}

/* -------------------------------------------------------------- events */

typedef struct notify_count {
    atomic_int calls;
    atomic_int failed;
} notify_count;

static void on_notify(void *arg, int failed) {
    notify_count *c = arg;
    atomic_fetch_add(&c->calls, 1);
    if (failed)
        atomic_fetch_add(&c->failed, 1);
}

/* Driver callbacks may run a little after the wait returns. */
static int wait_calls(notify_count *c, int want) {
    for (int i = 0; i < 200 && atomic_load(&c->calls) < want; i++)
        sleep_ms(5);
    sleep_ms(20); /* and no second call comes */
    return atomic_load(&c->calls);
}

static void test_events(void *ctx, const kiln__bdevice *dev, void *q) {
    void *buf = NULL, *ev = NULL, *user = NULL, *dep = NULL;
    int data[256], back[256];
    for (int i = 0; i < 256; i++)
        data[i] = i * 7;
    if (!CHECK_OK(B->buffer_create(ctx, sizeof data, 0, NULL, &buf)))
        return;

    /* notify fires exactly once, on completion */
    notify_count c1 = { 0, 0 }, c2 = { 0, 0 };
    CHECK_OK(B->buffer_write(q, buf, 0, sizeof data, data, 0, 0, NULL, &ev));
    CHECK_OK(B->event_notify(ev, on_notify, &c1));
    CHECK_OK(B->event_wait(1, &ev));
    CHECK(wait_calls(&c1, 1) == 1);
    CHECK(atomic_load(&c1.failed) == 0);
    /* ... and also when registered after completion */
    CHECK_OK(B->event_notify(ev, on_notify, &c2));
    CHECK(wait_calls(&c2, 1) == 1);
    kiln_event_state state = KILN_EVENT_QUEUED;
    CHECK_OK(B->event_state(ev, &state));
    CHECK(state == KILN_EVENT_COMPLETE);

    /* profiling times are ordered */
    kiln_event_times t;
    if (CHECK_OK(B->event_times(ev, &t)))
        CHECK_MSG(t.queued <= t.submitted && t.submitted <= t.started && t.started <= t.ended &&
                      t.ended > 0,
                  "times %llu %llu %llu %llu", (unsigned long long)t.queued,
                  (unsigned long long)t.submitted, (unsigned long long)t.started,
                  (unsigned long long)t.ended);
    B->event_retain(ev);
    B->event_release(ev);
    B->event_release(ev);

    /* user events gate other commands */
    CHECK_OK(B->user_event_create(ctx, &user));
    if (user) {
        notify_count c3 = { 0, 0 };
        CHECK_OK(B->buffer_read(q, buf, 0, sizeof back, back, 0, 1, &user, &dep));
        CHECK_OK(B->event_notify(dep, on_notify, &c3));
        sleep_ms(20);
        CHECK_OK(B->event_state(dep, &state));
        CHECK(state != KILN_EVENT_COMPLETE && state != KILN_EVENT_ERROR);
        CHECK(atomic_load(&c3.calls) == 0);
        CHECK_OK(B->user_event_set(user, 0));
        CHECK_STATUS(B->user_event_set(user, 0), KILN_ERROR_WRONG_STATE);
        CHECK_OK(B->event_wait(1, &dep));
        CHECK(memcmp(back, data, sizeof data) == 0);
        CHECK(wait_calls(&c3, 1) == 1);
        CHECK(atomic_load(&c3.failed) == 0);
        B->event_release(dep);
        B->event_release(user);
    }

    /* a failed user event: its notify says failed, dependents fail */
    user = dep = NULL;
    CHECK_OK(B->user_event_create(ctx, &user));
    if (user) {
        notify_count c4 = { 0, 0 }, c5 = { 0, 0 };
        void *q2 = NULL;
        /* a separate queue, so the failure does not poison q */
        CHECK_OK(B->queue_create(ctx, dev, 0, &q2));
        CHECK_OK(B->event_notify(user, on_notify, &c4));
        if (q2) {
            CHECK_OK(B->queue_marker(q2, 0, 1, &user, &dep));
            if (dep)
                CHECK_OK(B->event_notify(dep, on_notify, &c5));
        }
        CHECK_OK(B->user_event_set(user, 1));
        CHECK(wait_calls(&c4, 1) == 1);
        CHECK(atomic_load(&c4.failed) == 1);
        CHECK_OK(B->event_state(user, &state));
        CHECK(state == KILN_EVENT_ERROR);
        if (dep) {
            CHECK_STATUS(B->event_wait(1, &dep), KILN_ERROR_EVENT_FAILED);
            CHECK(wait_calls(&c5, 1) == 1);
            CHECK(atomic_load(&c5.failed) == 1);
            B->event_release(dep);
        }
        B->event_release(user);
        if (q2) {
            B->queue_finish(q2);
            B->queue_release(q2);
        }
    }

    /* markers and barriers */
    void *e1 = NULL, *m = NULL, *bar = NULL;
    CHECK_OK(B->buffer_write(q, buf, 0, sizeof data, data, 0, 0, NULL, &e1));
    CHECK_OK(B->queue_marker(q, 0, 1, &e1, &m));
    CHECK_OK(B->queue_marker(q, 1, 0, NULL, &bar));
    CHECK_OK(B->queue_flush(q));
    if (m && bar) {
        void *both[2] = { m, bar };
        CHECK_OK(B->event_wait(2, both));
        CHECK_OK(B->event_state(e1, &state));
        CHECK(state == KILN_EVENT_COMPLETE);
    }
    B->event_release(e1);
    B->event_release(m);
    B->event_release(bar);
    CHECK_OK(B->queue_finish(q));
    B->buffer_release(buf);
}

/* NVIDIA's clWaitForEvents returns CL_SUCCESS for a user event set to an
 * error status, and for a user event depending on nothing that failed that
 * way. Emulate it by hiding the error code the real call returns. */
static __typeof__(kiln__cl.clWaitForEvents) real_wait;
static cl_int CL_API_CALL nvidia_style_wait(cl_uint n, const cl_event *evs) {
    cl_int err = real_wait(n, evs);
    return err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ? CL_SUCCESS : err;
}

static void test_wait_nvidia_style(void *ctx) {
    void *bad = NULL, *good = NULL;
    real_wait = kiln__cl.clWaitForEvents;
    kiln__cl.clWaitForEvents = nvidia_style_wait;
    if (CHECK_OK(B->user_event_create(ctx, &bad)) && CHECK_OK(B->user_event_create(ctx, &good))) {
        CHECK_OK(B->user_event_set(good, 0));
        CHECK_OK(B->user_event_set(bad, 1));
        CHECK_STATUS(B->event_wait(1, &bad), KILN_ERROR_EVENT_FAILED);
        CHECK_OK(B->event_wait(1, &good));
        /* one failed event among several fails the wait */
        void *both[2] = { good, bad };
        CHECK_STATUS(B->event_wait(2, both), KILN_ERROR_EVENT_FAILED);
        CHECK(strstr(kiln_last_error_message(), "event 1 of 2") != NULL);
    }
    kiln__cl.clWaitForEvents = real_wait;
    B->event_release(bad);
    B->event_release(good);
}

int main(void) {
    kiln__bdevice *devs = NULL;
    size_t n = 0;

    CHECK(B->abi == KILN__BACKEND_ABI);
    CHECK(B->kind == KILN_BACKEND_OPENCL);
    CHECK(strcmp(B->name, "opencl") == 0);
    /* what the table says about the backend */
    CHECK(B->selector_prefix && strcmp(B->selector_prefix, "opencl") == 0);
    CHECK(B->languages == 1u << KILN_LANG_OPENCL_C);
    CHECK(B->priority > 0);
    CHECK(B->prelude_file && strcmp(B->prelude_file, "prelude_opencl.h") == 0);
    CHECK(B->install_hint && strstr(B->install_hint, "pocl") != NULL);
    /* the prelude ends with #line 1 */
    const char *pre = kiln__embedded_file(B->prelude_file);
    size_t pl = strlen(pre);
    CHECK(pl > 9 && strcmp(pre + pl - 8, "#line 1\n") == 0);

    if (!CHECK_OK(B->load()))
        return kt_report();
    CHECK_OK(B->load()); /* twice is fine */
    int enumerated = CHECK_OK(B->enumerate(&devs, &n));
    CHECK_MSG(n >= 1, "no OpenCL device: install pocl-opencl-icd");
    if (!enumerated || n == 0) {
        free(devs);
        return kt_report();
    }
    printf("%zu OpenCL device(s)\n", n);
    check_devices(devs, n);

    const kiln__bdevice *dev = &devs[0];
    const kiln__bdevice *one[1] = { dev };
    void *ctx = NULL, *q = NULL, *qo = NULL;
    test_partition(dev);
    if (CHECK_OK(B->context_create(one, 1, &ctx)) &&
        CHECK_OK(B->queue_create(ctx, dev, KILN_QUEUE_PROFILING, &q))) {
        /* an out-of-order queue exactly where the driver offers one */
        cl_command_queue_properties have = 0;
        CHECK(kiln__cl.clGetDeviceInfo((cl_device_id)dev->handle, CL_DEVICE_QUEUE_PROPERTIES,
                                       sizeof have, &have, NULL) == CL_SUCCESS);
        kiln_status st =
            B->queue_create(ctx, dev, KILN_QUEUE_OUT_OF_ORDER | KILN_QUEUE_PROFILING, &qo);
        CHECK_STATUS(st, (have & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) ? KILN_OK
                                                                         : KILN_ERROR_UNSUPPORTED);
        CHECK((st == KILN_OK) == (qo != NULL));
        B->queue_release(qo);
        test_buffers(ctx, q);
        test_kernels(ctx, dev, q);
        test_build_error(ctx, dev);
        test_binaries(ctx, dev, q);
        test_events(ctx, dev, q);
        test_wait_nvidia_style(ctx);
        CHECK_OK(B->queue_finish(q));
    }
    B->queue_release(q);
    B->context_release(ctx);
    for (size_t i = 0; i < n; i++)
        free(devs[i].extensions);
    free(devs);
    return kt_report();
}
