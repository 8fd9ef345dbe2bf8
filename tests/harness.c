/* strdup and strtok_r are POSIX, not C11. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ctest's skip code: tests/CMakeLists.txt sets SKIP_RETURN_CODE to it. */
#define KT_SKIP_CODE 77

/* Atomic: checks also run on worker threads and kiln's callback thread. */
static atomic_int kt_passed, kt_failed;
/* The device loop was asked for devices and found none of them. */
static int kt_no_device;
static uint64_t kt_state;

/* The last check that ran, for the watchdog's message (a hung test
 * otherwise leaves nothing in ctest's log but its timeout). */
static const char *_Atomic kt_last_file;
static atomic_int kt_last_line;

static void kt_note(const char *file, int line) {
    atomic_store(&kt_last_file, file);
    atomic_store(&kt_last_line, line);
}

/* Async-signal-safe: write(2) of fixed pieces and a number. */
static void kt_put(const char *s) {
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}
static void kt_put_int(long v) {
    char buf[24], *p = buf + sizeof buf;
    *--p = 0;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) > 0 && p > buf);
    kt_put(p);
}

/* SIGUSR2, sent to each thread in turn by the watchdog: its stack. Hidden
 * library symbols print as "libkiln.so(+0xOFFSET)": `addr2line -f -e
 * libkiln.so 0xOFFSET` names them. */
static void kt_stack_here(int sig) {
    (void)sig;
    void *frames[48];
    int n = backtrace(frames, 48);
    kt_put("--- thread ");
    kt_put_int((long)syscall(SYS_gettid));
    kt_put(":\n");
    backtrace_symbols_fd(frames, n, 2);
}

/* Every thread's stack: readdir of /proc/self/task and tgkill, one thread at
 * a time (a short sleep between, so the stacks do not interleave). Not
 * strictly async-signal-safe (opendir), acceptable in a dying test. */
static void kt_all_stacks(void) {
    signal(SIGUSR2, kt_stack_here);
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = atol(e->d_name);
        if (tid <= 0)
            continue;
        syscall(SYS_tgkill, (long)getpid(), tid, SIGUSR2);
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    closedir(d);
}

static void kt_watchdog_fired(int sig) {
    (void)sig;
    const char *file = atomic_load(&kt_last_file);
    kt_put("FAIL: watchdog (KILN_TEST_WATCHDOG): the test ran too long, likely a hang; "
           "the last check to finish was ");
    if (file) {
        kt_put(file);
        kt_put(":");
        kt_put_int(atomic_load(&kt_last_line));
    } else {
        kt_put("none");
    }
    kt_put(" (the hang is after it)\n");
    kt_all_stacks();
    _exit(1);
}

/* KILN_TEST_WATCHDOG=SECONDS: fail with the last check's place instead of
 * being killed silently by ctest's timeout (scripts/gpu-test.sh sets it). */
static void kt_watchdog_arm(void) {
    static int armed;
    const char *s = getenv("KILN_TEST_WATCHDOG");
    if (armed || !s || atoi(s) <= 0)
        return;
    armed = 1;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress survives the _exit */
    signal(SIGALRM, kt_watchdog_fired);
    alarm((unsigned)atoi(s));
}

void kt_record(int ok, const char *file, int line, const char *what, const char *detail) {
    kt_note(file, line);
    if (ok) {
        kt_passed++;
        return;
    }
    kt_failed++;
    fprintf(stderr, "FAIL %s:%d: %s%s%s\n", file, line, what, detail ? " -- " : "",
            detail ? detail : "");
}

void kt_recordf(int ok, const char *file, int line, const char *what, const char *fmt, ...) {
    if (ok) {
        kt_record(1, file, line, what, NULL);
        return;
    }
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    kt_record(0, file, line, what, detail);
}

int kt_check_status(kiln_status got, kiln_status want, const char *file, int line,
                    const char *what) {
    kt_note(file, line);
    if (got == want) {
        kt_passed++;
        return 1;
    }
    kt_failed++;
    fprintf(stderr, "FAIL %s:%d: %s returned %s, wanted %s\n  detail: %s\n", file, line, what,
            kiln_status_name(got), kiln_status_name(want), kiln_last_error_message());
    const char *log = kiln_last_build_log();
    if (got == KILN_ERROR_BUILD && log && *log)
        fprintf(stderr, "  build log:\n%s\n", log);
    return 0;
}

int kt_report(void) {
    int passed = atomic_load(&kt_passed), failed = atomic_load(&kt_failed);
    printf("%d passed, %d failed\n", passed, failed);
    if (failed)
        return 1;
    if (kt_no_device) {
        printf("SKIPPED: none of the devices in KILN_TEST_DEVICES exists here\n");
        fflush(stdout);
        return KT_SKIP_CODE;
    }
    if (passed == 0) {
        fprintf(stderr, "FAIL: the test ran no check\n");
        return 1;
    }
    fflush(stdout);
    return 0;
}

void kt_skip(const char *file, int line, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("SKIPPED (%s:%d): %s\n", file, line, why);
    int failed = atomic_load(&kt_failed);
    printf("%d passed, %d failed\n", atomic_load(&kt_passed), failed);
    fflush(stdout);
    exit(failed ? 1 : KT_SKIP_CODE);
}

static void kt_seed(void) {
    if (kt_state)
        return;
    const char *s = getenv("KILN_TEST_SEED");
    kt_state = s && *s ? strtoull(s, NULL, 0) : 0x9E3779B97F4A7C15ull;
    if (!kt_state)
        kt_state = 1;
    fprintf(stderr, "seed: KILN_TEST_SEED=%llu\n", (unsigned long long)kt_state);
}

uint64_t kt_rand_u64(void) {
    kt_seed();
    kt_state ^= kt_state >> 12;
    kt_state ^= kt_state << 25;
    kt_state ^= kt_state >> 27;
    return kt_state * 2685821657736338717ull;
}

double kt_rand_unit(void) {
    return (kt_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
}

size_t kt_awkward_sizes(size_t *sizes, size_t max_size) {
    static const size_t base[] = {
        0,   1,    2,    3,    7,    31,   32,    33,    127,   255,    256,
        257, 1000, 1023, 1024, 1025, 4093, 65535, 65536, 65537, 100003, (1u << 20) + 1
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0] && n < 64; i++)
        if (base[i] <= max_size)
            sizes[n++] = base[i];
    return n;
}

/* Runs fn on the device `selector` names; returns 0 (and notes it) if no
 * such device exists, 1 otherwise (ran, or failed a check). */
static int kt_run_on(const char *selector, kt_device_fn fn, void *user) {
    kiln_device *device = NULL;
    kiln_status st = kiln_device_select(selector, &device);
    if (selector && (st == KILN_ERROR_NO_DEVICE || st == KILN_ERROR_NO_RUNTIME)) {
        printf("== device %s: not here (%s), left out\n", selector, kiln_status_name(st));
        return 0;
    }
    kiln_queue *queue = NULL;
    if (!CHECK_OK(st) ||
        !CHECK_OK(kiln_queue_create_default(selector, KILN_QUEUE_PROFILING, &queue)))
        return 1;
    kiln_device_info info;
    if (kiln_device_get_info(kiln_queue_device(queue), &info) == KILN_OK)
        printf("== device: %s %s\n", info.id, info.name);
    fn(queue, user);
    /* No work may outlive the test: PoCL compiles a kernel on its worker
     * thread at first launch, and a process that exits meanwhile tears
     * LLVM down under it (a SEGV in test_fft_clfft with a cold PoCL
     * cache). A failed command's status was the test's to check. */
    (void)kiln_queue_finish(queue);
    kiln_queue_release(queue);
    return 1;
}

void kt_for_each_device(kt_device_fn fn, void *user) {
    kt_watchdog_arm();
    const char *list = getenv("KILN_TEST_DEVICES");
    if (!list || !*list) {
        kt_run_on(NULL, fn, user); /* the default device must exist */
        return;
    }
    int ran = 0;
    if (strcmp(list, "all") == 0) {
        size_t count = 0;
        kiln_status st = kiln_device_count(&count);
        if (st != KILN_ERROR_NO_RUNTIME)
            CHECK_OK(st);
        for (size_t i = 0; i < count; i++) {
            char sel[32];
            snprintf(sel, sizeof sel, "%zu", i);
            ran += kt_run_on(sel, fn, user);
        }
    } else {
        char *copy = strdup(list);
        CHECK(copy != NULL);
        char *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
             tok = strtok_r(NULL, ",", &save))
            ran += kt_run_on(tok, fn, user);
        free(copy);
    }
    if (!ran)
        kt_no_device = 1;
}

typedef struct kt_steps {
    size_t n;
    const kt_step_fn *steps;
} kt_steps;

void kt_run_steps(kiln_queue *queue, size_t n, const kt_step_fn *steps) {
    for (size_t i = 0; i < n; i++)
        steps[i](queue);
}

static void kt_steps_on(kiln_queue *queue, void *user) {
    const kt_steps *s = user;
    kt_run_steps(queue, s->n, s->steps);
}

void kt_for_each_device_steps(size_t n, const kt_step_fn *steps) {
    kt_steps s = { n, steps };
    kt_for_each_device(kt_steps_on, &s);
}

void kt_for_each_device_fns(size_t n, const kt_device_fn *fns) {
    for (size_t i = 0; i < n; i++)
        kt_for_each_device(fns[i], NULL);
}

int kt_group_sums_ok(const int *in, const int *out, size_t groups, size_t lsz) {
    int ok = 1;
    for (size_t g = 0; g < groups; g++) {
        int sum = 0;
        for (size_t i = 0; i < lsz; i++)
            sum += in[g * lsz + i];
        ok &= out[g] == sum;
    }
    return ok;
}

void kt_long_name(char *name, size_t cap, char c) {
    memset(name, c, cap - 1);
    name[cap - 1] = 0;
}

int kt_event_done(kiln_event *e) {
    kiln_event_state st = KILN_EVENT_QUEUED;
    kiln_event_get_state(e, &st);
    return st == KILN_EVENT_COMPLETE;
}

uint32_t kt_fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

uint64_t kt_fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

void kt_run_host_steps(size_t n, const kt_host_step_fn *steps) {
    for (size_t i = 0; i < n; i++)
        steps[i]();
}

int kt_open_queue_at(const char *file, int line, kiln_device *dev, unsigned flags,
                     kiln_context **ctx, kiln_queue **q) {
    *ctx = NULL;
    *q = NULL;
    if (kt_check_status(kiln_context_create(&dev, 1, ctx), KILN_OK, file, line,
                        "kiln_context_create") &&
        kt_check_status(kiln_queue_create(*ctx, dev, flags, q), KILN_OK, file, line,
                        "kiln_queue_create"))
        return 1;
    KT_RELEASE(*q, *ctx);
    *ctx = NULL;
    *q = NULL;
    return 0;
}

int kt_build_at(const char *file, int line, kiln_context *ctx, const char *src,
                const kiln_program_opts *opts, kiln_program **prog, ...) {
    if (!kt_check_status(kiln_program_create(ctx, src, opts, prog), KILN_OK, file, line,
                         "kiln_program_create"))
        return 0;
    int ok = 1;
    va_list ap;
    va_start(ap, prog);
    for (const char *name = va_arg(ap, const char *); name; name = va_arg(ap, const char *)) {
        kiln_kernel **k = va_arg(ap, kiln_kernel **);
        char what[160];
        snprintf(what, sizeof what, "kiln_kernel_create(\"%s\")", name);
        ok &= kt_check_status(kiln_kernel_create(*prog, name, k), KILN_OK, file, line, what);
    }
    va_end(ap);
    return ok;
}

static const char kt_inc_twice_src[] = "KILN_KERNEL void inc(KILN_GLOBAL int *x, int n) {\n"
                                       "    int i = (int)kiln_global_id(0); if (i < n) x[i] += 1;\n"
                                       "}\n"
                                       "KILN_KERNEL void twice(KILN_GLOBAL int *x, int n) {\n"
                                       "    int i = (int)kiln_global_id(0); if (i < n) x[i] *= 2;\n"
                                       "}\n";

int kt_inc_twice_open(kt_inc_twice *f, kiln_queue *q, kiln_device *dev) {
    memset(f, 0, sizeof *f);
    if (q) {
        f->q = q;
        kiln_queue_retain(q);
        f->ctx = kiln_queue_context(q);
        kiln_context_retain(f->ctx);
    } else if (!KT_OPEN_QUEUE(dev, 0, &f->ctx, &f->q)) {
        return 0;
    }
    return KT_BUILD(f->ctx, kt_inc_twice_src, NULL, &f->prog, "inc", &f->inc, "twice", &f->twice);
}

void kt_inc_twice_close(kt_inc_twice *f) {
    KT_RELEASE(f->inc, f->twice, f->prog, f->q, f->ctx);
}

const kiln_dtype kt_dtypes[KT_NDTYPES] = { KILN_INT8,    KILN_UINT8,  KILN_INT16, KILN_UINT16,
                                           KILN_INT32,   KILN_UINT32, KILN_INT64, KILN_UINT64,
                                           KILN_FLOAT32, KILN_FLOAT64 };

double kt_get(kiln_dtype d, const void *p, size_t i) {
    switch (d) {
    case KILN_INT8:
        return ((const int8_t *)p)[i];
    case KILN_UINT8:
        return ((const uint8_t *)p)[i];
    case KILN_INT16:
        return ((const int16_t *)p)[i];
    case KILN_UINT16:
        return ((const uint16_t *)p)[i];
    case KILN_INT32:
        return ((const int32_t *)p)[i];
    case KILN_UINT32:
        return ((const uint32_t *)p)[i];
    case KILN_INT64:
        return (double)((const int64_t *)p)[i];
    case KILN_UINT64:
        return (double)((const uint64_t *)p)[i];
    case KILN_FLOAT32:
        return ((const float *)p)[i];
    case KILN_FLOAT64:
        return ((const double *)p)[i];
    default:
        return 0;
    }
}

void kt_set(kiln_dtype d, void *p, size_t i, double v) {
    switch (d) {
    case KILN_INT8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case KILN_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case KILN_INT16:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case KILN_UINT16:
        ((uint16_t *)p)[i] = (uint16_t)v;
        break;
    case KILN_INT32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case KILN_UINT32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case KILN_INT64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case KILN_UINT64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case KILN_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case KILN_FLOAT64:
        ((double *)p)[i] = v;
        break;
    default:
        break;
    }
}

kiln_arg kt_arg(kiln_dtype d, const void *p) {
    kiln_arg a = { .kind = KILN_ARG_SCALAR, .dtype = d };
    memcpy(&a.value, p, kiln_dtype_size(d));
    return a;
}

kiln_arg kt_scalar(kiln_dtype d, double v) {
    switch (d) {
    case KILN_BOOL:
        return KILN_ARG_BOOL(v != 0);
    case KILN_INT8:
    case KILN_UINT8:
    case KILN_INT16:
    case KILN_UINT16:
    case KILN_INT32:
    case KILN_UINT32:
    case KILN_INT64:
        return KILN_ARG_I64((int64_t)v);
    case KILN_UINT64:
        return KILN_ARG_U64((uint64_t)v);
    default:
        return KILN_ARG_F64(v); /* float and complex dtypes */
    }
}

void kt_release_arrays(size_t n, kiln_array *const *arrays) {
    for (size_t i = 0; i < n; i++)
        kiln_array_release(arrays[i]);
}

void kt_free_all(size_t n, void *const *blocks) {
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
}

kiln_array *kt_strided_same(kiln_queue *q, kiln_array *a) {
    kiln_array_info in;
    if (!CHECK_OK(kiln_array_get_info(a, &in)) || in.ndim < 2)
        return a;
    int perm[KILN_ARRAY_MAX_DIMS];
    for (unsigned d = 0; d < in.ndim; d++)
        perm[d] = (int)(in.ndim - 1 - d);
    kiln_array *tv = NULL, *copy = NULL, *back = NULL;
    CHECK_OK(kiln_array_permute(a, perm, &tv));
    CHECK_OK(kiln_array_copy(q, tv, 0, NULL, NULL, &copy));
    CHECK_OK(kiln_array_permute(copy, perm, &back));
    kiln_array_release(tv);
    kiln_array_release(copy);
    kiln_array_release(a);
    return back;
}

void kt_make_tmpdir(char *buf, size_t cap, const char *prefix) {
    snprintf(buf, cap, "/tmp/%s-XXXXXX", prefix);
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(1);
    }
}

void kt_remove_tmpdir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int kt_run_captured(const char *cmd, const char *dir, char *out, size_t outcap, char *err,
                    size_t errcap) {
    char full[8192], path[1024];
    snprintf(full, sizeof full, "%s >'%s/out' 2>'%s/err'", cmd, dir, dir);
    int status = system(full);
    snprintf(path, sizeof path, "%s/out", dir);
    kt_slurp(path, out, outcap);
    snprintf(path, sizeof path, "%s/err", dir);
    kt_slurp(path, err, errcap);
    if (status == -1 || !WIFEXITED(status)) {
        fprintf(stderr, "%s: did not exit normally (status %d)\nstderr: %s\n", cmd, status, err);
        return -1;
    }
    return WEXITSTATUS(status);
}

int kt_run_children(int n, void (*before)(int c, void *arg), int (*fn)(int c, void *arg), void *arg,
                    int *signalled) {
    int go[2];
    fflush(stdout); /* or the children print it again */
    fflush(stderr);
    if (pipe(go) != 0)
        return n;
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    if (!pids) {
        close(go[0]);
        close(go[1]);
        return n;
    }
    for (int c = 0; c < n; c++) {
        pids[c] = fork();
        if (pids[c] == 0) {
            char x;
            if (before)
                before(c, arg);
            close(go[1]);
            if (read(go[0], &x, 1) < 0) /* wait for the start: all at once */
                _exit(4);
            _exit(fn(c, arg));
        }
    }
    close(go[0]);
    close(go[1]); /* EOF releases them together */
    int failed = 0;
    for (int c = 0; c < n; c++) {
        int status = 0;
        waitpid(pids[c], &status, 0);
        if (signalled && WIFSIGNALED(status))
            (*signalled)++;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("  child %d: %s %d\n", c, WIFEXITED(status) ? "exit" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            failed++;
        }
    }
    free(pids);
    return failed;
}

void kt_slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

void kt_save(const char *dir, const char *name, const char *head, const void *data, size_t size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    if (head)
        CHECK(fputs(head, f) >= 0);
    CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
}
