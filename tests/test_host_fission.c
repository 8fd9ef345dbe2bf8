/* Device fission on the host backend (issue 45, item 1): host:0 split into
 * parts of equal size and by counts, each part a device whose compute units
 * are its threads and whose kernels run only on its own CPUs (unit u of
 * host:0 pinned to the u-th CPU of the process's affinity mask, modulo
 * their number). Checks: the parts' number, ids and compute units; a kernel
 * on every part at once (one queue each, one context over all parts) whose
 * work-items record sched_getcpu() and a value checked against a serial
 * loop, at awkward sizes (1, 63, 4097 work-items in groups of 64); the
 * CPUs each part ran on lie in its own set; bad splits are
 * refused (INVALID_ARGUMENT / OUT_OF_RANGE) naming the values.
 * compute_units of host:0 is KILN_HOST_THREADS when set
 * (the _threads3 run sets 3). Exits 77 where there is no host device. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kiln.h"

/* host-only kernel source: it calls the C library (this is C, compiled by
 * the system compiler) */
static const char *src = "int sched_getcpu(void);\nKILN_KERNEL void where(KILN_GLOBAL int *cpu, "
                         "KILN_GLOBAL uint *v, uint n, uint salt) {\n    size_t i = "
                         "kiln_global_id(0);\n    if (i < n) { cpu[i] = sched_getcpu(); v[i] = "
                         "(uint)i * 2654435761u ^ salt; }\n}\n";

#define MAXP 64

static unsigned cpu_ids[1024], ncpu;

/* Whether CPU c is one of part p's (units [first, first + n) of host:0). */
static int cpu_in(int c, unsigned first, unsigned n) {
    for (unsigned u = first; u < first + n; u++)
        if ((int)cpu_ids[u % ncpu] == c)
            return 1;
    return 0;
}

static void release_parts(size_t np, kiln_queue **q, kiln_buffer **cb, kiln_buffer **vb) {
    for (size_t i = np; i-- > 0;) {
        KT_RELEASE(q[i], vb[i], cb[i]);
    }
}

static void run_parts(kiln_device **parts, size_t np, const unsigned *firsts,
                      const unsigned *sizes) {
    kiln_context *c = NULL;
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    if (!CHECK_OK(kiln_context_create(parts, np, &c)) ||
        !CHECK_OK(kiln_program_create(c, src, NULL, &p)) ||
        !CHECK_OK(kiln_kernel_create(p, "where", &k))) {
        KT_RELEASE(p, c);
        return;
    }
    static const size_t ns[] = { 1, 63, 4097 };
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        size_t n = ns[s], g = (n + 63) / 64 * 64, l = 64;
        kiln_queue *q[MAXP] = { 0 };
        kiln_buffer *cb[MAXP] = { 0 }, *vb[MAXP] = { 0 };
        for (size_t i = 0; i < np; i++) {
            CHECK_OK(kiln_queue_create(c, parts[i], 0, &q[i]));
            CHECK_OK(kiln_buffer_create(c, n * sizeof(int), 0, NULL, &cb[i]));
            CHECK_OK(kiln_buffer_create(c, n * sizeof(unsigned), 0, NULL, &vb[i]));
            if (!q[i] || !cb[i] || !vb[i])
                goto out;
        }
        for (size_t i = 0; i < np; i++) {
            kiln_arg a[] = { KILN_ARG_BUF(cb[i]), KILN_ARG_BUF(vb[i]), KILN_ARG_U32((uint32_t)n),
                             KILN_ARG_U32((uint32_t)(i * 977u)) };
            CHECK_OK(kiln_kernel_launch(q[i], k, 1, &g, &l, 4, a, 0, NULL, NULL));
        }
        for (size_t i = 0; i < np; i++) {
            int *cpu = malloc(n * sizeof *cpu);
            unsigned *v = malloc(n * sizeof *v);
            if (!cpu || !v) {
                KT_FREE(cpu, v);
                goto out;
            }
            CHECK_OK(kiln_buffer_read(q[i], cb[i], 0, n * sizeof *cpu, cpu));
            CHECK_OK(kiln_buffer_read(q[i], vb[i], 0, n * sizeof *v, v));
            size_t bad_v = 0, bad_cpu = 0;
            for (size_t j = 0; j < n; j++) {
                bad_v += v[j] != ((unsigned)j * 2654435761u ^ (unsigned)(i * 977u));
                bad_cpu += !cpu_in(cpu[j], firsts[i], sizes[i]);
            }
            CHECK_MSG(bad_v == 0, "part %zu, n = %zu: %zu values wrong", i, n, bad_v);
            CHECK_MSG(bad_cpu == 0,
                      "part %zu (units %u..%u), n = %zu: %zu work-items ran on other CPUs "
                      "(the first on CPU %d)",
                      i, firsts[i], firsts[i] + sizes[i] - 1, n, bad_cpu, cpu[0]);
            KT_FREE(cpu, v);
        }
    out:
        release_parts(np, q, cb, vb);
    }
    KT_RELEASE(k, p, c);
}

int main(void) {
    kiln_device *dev = NULL;
    kiln_device_info info;
    if (kiln_device_select("host:0", &dev) != KILN_OK)
        KT_SKIP("no host device: %s", kiln_last_error_message());
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (unsigned c = 0; c < CPU_SETSIZE && ncpu < 1024; c++)
            if (CPU_ISSET(c, &set))
                cpu_ids[ncpu++] = c;
    if (!ncpu)
        KT_SKIP("sched_getaffinity failed");
    CHECK_OK(kiln_device_get_info(dev, &info));
    unsigned units = info.compute_units;
    const char *env = getenv("KILN_HOST_THREADS");
    if (env && atoi(env) > 0)
        CHECK_MSG(units == (unsigned)atoi(env), "compute_units %u, KILN_HOST_THREADS=%s", units,
                  env);
    printf("host:0: %u units, %u CPUs\n", units, ncpu);

    /* equal parts of one unit */
    size_t n = 0;
    kiln_device *parts[MAXP];
    unsigned firsts[MAXP], sizes[MAXP];
    if (units <= MAXP && CHECK_OK(kiln_device_partition(dev, 1, parts, MAXP, &n))) {
        CHECK(n == units);
        for (size_t i = 0; i < n; i++) {
            kiln_device_info si;
            char want[64];
            CHECK_OK(kiln_device_get_info(parts[i], &si));
            snprintf(want, sizeof want, "host:0.%zu", i);
            CHECK_MSG(si.compute_units == 1 && si.is_subdevice && strcmp(si.id, want) == 0,
                      "part %zu: %u units, is_subdevice %d, id %s", i, si.compute_units,
                      si.is_subdevice, si.id);
            firsts[i] = (unsigned)i;
            sizes[i] = 1;
        }
        run_parts(parts, n, firsts, sizes);
    }
    /* by counts: all units but one, then one (when there are two or more) */
    if (units >= 2) {
        unsigned counts[2] = { units - 1, 1 };
        kiln_split_desc d = KILN_SPLIT_DESC(.num_counts = 2, .counts = counts);
        if (CHECK_OK(kiln_device_split(dev, &d, parts, MAXP, &n))) {
            CHECK(n == 2);
            kiln_device_info si;
            CHECK_OK(kiln_device_get_info(parts[0], &si));
            CHECK(si.compute_units == units - 1);
            firsts[0] = 0;
            sizes[0] = units - 1;
            firsts[1] = units - 1;
            sizes[1] = 1;
            run_parts(parts, n, firsts, sizes);
        }
    }
    /* bad splits */
    CHECK_STATUS(kiln_device_partition(dev, 0, parts, MAXP, &n), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_device_partition(dev, units + 1, parts, MAXP, &n),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "units_each") != NULL, "message: %s",
              kiln_last_error_message());
    unsigned too_many[2] = { units, 1 }, zero[2] = { 1, 0 };
    kiln_split_desc d1 = KILN_SPLIT_DESC(.num_counts = 2, .counts = too_many);
    kiln_split_desc d2 = KILN_SPLIT_DESC(.num_counts = 2, .counts = zero);
    CHECK_STATUS(kiln_device_split(dev, &d1, parts, MAXP, &n), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_device_split(dev, &d2, parts, MAXP, &n), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "counts[1] is 0") != NULL, "message: %s",
              kiln_last_error_message());
    return kt_report();
}
