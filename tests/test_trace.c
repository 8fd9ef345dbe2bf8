/* The timeline (kiln_trace_start / kiln_trace_stop, KILN_TRACE): every
 * command appears once with its name, device and queue; commands of one
 * in-order queue do not overlap and keep their order; queues made before the
 * trace get host times; the file lists commands in enqueue order, whatever
 * order they complete in; KILN_TRACE=path traces a whole process; bad calls
 * are clear errors. The file is read back line by line (kiln writes one
 * event per line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *src = "KILN_KERNEL void bump(KILN_GLOBAL int *x, int n) {\n"
                         "    int i = (int)kiln_global_id(0); if (i < n) x[i] += 1;\n"
                         "}\n";

typedef struct command {
    char name[64], timing[16];
    unsigned pid, tid;
    double ts, dur;
} command;

/* The "X" events of a trace file, in file order. */
static size_t read_trace(const char *path, command *out, size_t cap, int *complete) {
    FILE *f = fopen(path, "r");
    *complete = 0;
    if (!f)
        return 0;
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "]}", 2))
            *complete = 1;
        command c;
        if (n < cap &&
            sscanf(line,
                   "{\"ph\":\"X\",\"name\":\"%63[^\"]\",\"pid\":%u,\"tid\":%u,\"ts\":%lf,"
                   "\"dur\":%lf",
                   c.name, &c.pid, &c.tid, &c.ts, &c.dur) == 5) {
            const char *t = strstr(line, "\"timing\":\"");
            snprintf(c.timing, sizeof c.timing, "%.*s", t ? (int)strcspn(t + 10, "\"") : 0,
                     t ? t + 10 : "");
            out[n++] = c;
        }
    }
    fclose(f);
    return n;
}

static void tmp_path(char *buf, size_t cap, const char *what) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, cap, "%s/kiln-trace-%d-%s.json", dir && *dir ? dir : "/tmp", (int)getpid(), what);
}

static int by_start(const void *a, const void *b) {
    double x = ((const command *)a)->ts, y = ((const command *)b)->ts;
    return x < y ? -1 : x > y;
}

/* Commands on a queue made while the trace is on: device times, in order. */
static void traced_queue(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_device *dev = kiln_queue_device(q);
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    char path[256];
    tmp_path(path, sizeof path, "queue");
    if (!CHECK_OK(kiln_trace_start(path)))
        return;
    kiln_queue *tq = NULL, *old = q; /* q was made before the trace */
    CHECK_OK(kiln_queue_create(ctx, dev, KILN_QUEUE_IN_ORDER, &tq));
    kiln_program *prog = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    int data[4099] = { 0 }, n = 4099;
    KT_BUILD(ctx, src, NULL, &prog, "bump", &k);
    CHECK_OK(kiln_buffer_create(ctx, sizeof data, 0, NULL, &b));
    CHECK_OK(kiln_buffer_write(tq, b, 0, sizeof data, data));
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(n) };
    size_t g = (size_t)n;
    enum { LAUNCHES = 5 };
    for (int r = 0; r < LAUNCHES; r++)
        CHECK_OK(kiln_kernel_launch(tq, k, 1, &g, NULL, 2, args, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(tq, b, 0, sizeof data, data));
    CHECK(data[0] == LAUNCHES && data[n - 1] == LAUNCHES);
    kiln_event *ev = NULL; /* a command on the older queue */
    CHECK_OK(kiln_kernel_launch(old, k, 1, &g, NULL, 2, args, 0, NULL, &ev));
    CHECK_OK(kiln_event_wait(ev));
    kiln_event_release(ev);
    CHECK_OK(kiln_trace_stop());
    CHECK_STATUS(kiln_trace_stop(), KILN_ERROR_WRONG_STATE);

    command cmds[64];
    int complete = 0;
    size_t nc = read_trace(path, cmds, 64, &complete);
    CHECK_MSG(complete, "%s: the trace file is not complete", path);
    /* the traced queue's row is the write's; the older queue has its own
     * (device times where its backend gives them without profiling, as
     * PoCL does, else host times) */
    unsigned row = nc ? cmds[0].tid : 0;
    size_t bumps = 0, on_old = 0, writes = 0, reads = 0;
    const command *prev = NULL;
    for (size_t i = 0; i < nc; i++) {
        const command *c = &cmds[i];
        CHECK_MSG(c->dur >= 0, "%s: negative duration %g", c->name, c->dur);
        CHECK_MSG(!strcmp(c->timing, "device") || !strcmp(c->timing, "host"), "timing %s",
                  c->timing);
        if (c->tid != row) {
            on_old += !strcmp(c->name, "bump");
            continue;
        }
        bumps += !strcmp(c->name, "bump");
        writes += !strcmp(c->name, "kiln_buffer_write");
        reads += !strcmp(c->name, "kiln_buffer_read");
        CHECK_MSG(!strcmp(c->timing, "device"), "%s on a profiled queue has %s times", c->name,
                  c->timing);
    }
    /* The file lists commands as their completion callbacks ran, which
     * need not be queue order (OpenCL's callbacks are not ordered): in
     * start order, the commands of an in-order queue do not overlap
     * (device-to-host clock shifts differ per command by the enqueue
     * latency, so allow 200 us). */
    qsort(cmds, nc, sizeof *cmds, by_start);
    for (size_t i = 0; i < nc; i++) {
        const command *c = &cmds[i];
        if (c->tid != row)
            continue;
        if (prev)
            CHECK_MSG(c->ts + 200 >= prev->ts + prev->dur,
                      "%s at %.3f us starts before %s ends (%.3f + %.3f)", c->name, c->ts,
                      prev->name, prev->ts, prev->dur);
        prev = c;
    }
    CHECK_MSG(bumps == LAUNCHES && writes == 1 && reads == 1 && on_old == 1,
              "%s: on the traced queue %zu bump, %zu writes, %zu reads; %zu bump on the older",
              info.id, bumps, writes, reads, on_old);
    CHECK_MSG(nc == LAUNCHES + 3, "%zu commands in the trace, expected %d", nc, LAUNCHES + 3);
    remove(path);
    KT_RELEASE(b, k, prog, tq);
}

/* The file lists commands in enqueue order even when they complete in
 * another: a copy held back by a user event completes after a fill
 * enqueued later on a second queue (NVIDIA's OpenCL reordered completion
 * callbacks even of one queue: the file once listed a read before the
 * write it followed). */
static void enqueue_order(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    char path[256];
    tmp_path(path, sizeof path, "order");
    if (!CHECK_OK(kiln_trace_start(path)))
        return;
    kiln_queue *q2 = NULL;
    kiln_event *gate = NULL, *held = NULL, *quick = NULL;
    kiln_buffer *a = NULL, *b = NULL;
    int zero = 0;
    CHECK_OK(kiln_queue_create(ctx, kiln_queue_device(q), KILN_QUEUE_IN_ORDER, &q2));
    CHECK_OK(kiln_buffer_create(ctx, 4096, 0, NULL, &a));
    CHECK_OK(kiln_buffer_create(ctx, 4096, 0, NULL, &b));
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    CHECK_OK(kiln_buffer_copy(q, a, 0, b, 0, 4096, 1, &gate, &held));
    CHECK_OK(kiln_buffer_fill(q2, b, &zero, sizeof zero, 0, 4096, 0, NULL, &quick));
    CHECK_OK(kiln_event_wait(quick)); /* done while the copy still waits */
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(held));
    CHECK_OK(kiln_trace_stop());
    command c[8];
    int complete = 0;
    size_t n = read_trace(path, c, 8, &complete);
    CHECK_MSG(complete && n == 2 && !strcmp(c[0].name, "kiln_buffer_copy") &&
                  !strcmp(c[1].name, "kiln_buffer_fill"),
              "enqueue order: %zu commands, first %s", n, n ? c[0].name : "-");
    KT_RELEASE(quick, held, gate, a, b, q2);
    remove(path);
}

static void bad_calls(void) {
    CHECK_STATUS(kiln_trace_stop(), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_trace_start(NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_trace_start(""), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_trace_start("/nonexistent-dir-kiln/x.json"), KILN_ERROR_IO);
    CHECK_MSG(strstr(kiln_last_error_message(), "/nonexistent-dir-kiln/x.json") != NULL,
              "message: %s", kiln_last_error_message());
    char path[256];
    tmp_path(path, sizeof path, "twice");
    CHECK_OK(kiln_trace_start(path));
    CHECK_STATUS(kiln_trace_start(path), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_trace_stop());
    command c[4];
    int complete = 0;
    CHECK_MSG(read_trace(path, c, 4, &complete) == 0 && complete, "an empty trace");
    remove(path);
}

/* The child of env_trace: a few commands under KILN_TRACE, then exit. */
static int child(void) {
    kiln_queue *q = NULL;
    char sel[128] = ""; /* the first of the suite's devices, else the default */
    const char *list = getenv("KILN_TEST_DEVICES");
    if (list)
        snprintf(sel, sizeof sel, "%.*s", (int)strcspn(list, ","), list);
    if (kiln_queue_create_default(*sel ? sel : NULL, 0, &q) != KILN_OK)
        return 3;
    kiln_buffer *b = NULL;
    int x[256] = { 0 };
    if (kiln_buffer_create(kiln_queue_context(q), sizeof x, 0, NULL, &b) != KILN_OK ||
        kiln_buffer_write(q, b, 0, sizeof x, x) != KILN_OK ||
        kiln_buffer_read(q, b, 0, sizeof x, x) != KILN_OK)
        return 4;
    KT_RELEASE(b, q);
    return 0; /* the trace is written at exit */
}

static void env_trace(const char *self) {
    char path[256];
    tmp_path(path, sizeof path, "env");
    remove(path);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("KILN_TRACE", path, 1);
        execl(self, self, "--child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    command c[16];
    int complete = 0;
    size_t n = read_trace(path, c, 16, &complete);
    CHECK_MSG(complete && n == 2 && !strcmp(c[0].name, "kiln_buffer_write") &&
                  !strcmp(c[1].name, "kiln_buffer_read") && !strcmp(c[0].timing, "device"),
              "KILN_TRACE: %zu commands, complete %d, first %s", n, complete, n ? c[0].name : "-");
    remove(path);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--child"))
        return child();
    bad_calls();
    kt_for_each_device(traced_queue, NULL);
    kt_for_each_device(enqueue_order, NULL);
    env_trace(argv[0]);
    return kt_report();
}
