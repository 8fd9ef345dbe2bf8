/* The timeline: while a trace is on (kiln_trace_start, or KILN_TRACE=path
 * in the environment), every command kiln enqueues is recorded with its
 * name, queue and device, the host time it was enqueued and, when it
 * completes, the device's queued/submitted/started/ended times; the trace is
 * written as a Chrome/Perfetto trace file (the JSON "traceEvents" format).
 *
 * Why completion callbacks: each record is finished on kiln's callback
 * thread as its command completes, so a long trace holds no driver events,
 * only small records. Queues created while a trace is on are given device
 * profiling; commands of other queues get host times (enqueue to observed
 * completion), marked so in the file. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fault.h"
#include "base/strbuf.h"
#include "core/internal.h"

#define TRACE_MAX_RECORDS (1u << 22) /* ~4M commands; later ones are counted */
#define TRACE_MAX_DEVICES 64

typedef struct trace_record {
    struct trace_record *next;
    unsigned generation; /* the trace it belongs to */
    size_t seq;          /* enqueue order: the file lists commands by it */
    unsigned queue_serial;
    const kiln_device *device;
    char name[64];
    uint64_t enqueued_ns;  /* host CLOCK_MONOTONIC */
    uint64_t completed_ns; /* host, as the callback saw it */
    int have_times, failed;
    kiln_event_times times; /* the device's clock */
} trace_record;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t idle;
    atomic_int on;       /* read without the lock on every enqueue */
    unsigned generation; /* bumped by every start and stop */
    char *path;
    uint64_t start_ns;
    trace_record *head, **tail;
    size_t recorded, dropped, pending, next_seq;
} g_trace = { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

uint64_t kiln__trace_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void trace_free_records(trace_record *r) {
    while (r) {
        trace_record *next = r->next;
        free(r);
        r = next;
    }
}

/* KILN_TRACE=path: a trace from the first command to the process's exit. */
static void trace_at_exit(void) {
    if (atomic_load(&g_trace.on))
        (void)kiln_trace_stop();
}

static void trace_from_env(void) {
    const char *path = getenv("KILN_TRACE");
    if (path && *path && kiln_trace_start(path) == KILN_OK)
        atexit(trace_at_exit);
}

int kiln__trace_on(void) {
    pthread_once(&g_env_once, trace_from_env);
    return atomic_load_explicit(&g_trace.on, memory_order_relaxed);
}

kiln_status kiln_trace_start(const char *path) {
    if (!path || !*path)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_trace_start: path is NULL or empty");
    /* fail now, not at the end of a long run */
    FILE *f = fopen(path, "w");
    if (!f)
        return kiln__error_set(KILN_ERROR_IO, 0, "kiln_trace_start: cannot write %s", path);
    fclose(f);
    char *copy = kiln__strdup(path);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_trace_start: out of memory");
    pthread_mutex_lock(&g_trace.lock);
    if (atomic_load(&g_trace.on)) {
        pthread_mutex_unlock(&g_trace.lock);
        free(copy);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_trace_start: a trace to %s is already on; stop it first",
                               g_trace.path);
    }
    free(g_trace.path);
    g_trace.path = copy;
    g_trace.generation++;
    g_trace.start_ns = kiln__trace_now_ns();
    g_trace.head = NULL;
    g_trace.tail = &g_trace.head;
    g_trace.recorded = g_trace.dropped = 0;
    atomic_store(&g_trace.on, 1);
    pthread_mutex_unlock(&g_trace.lock);
    return KILN_OK;
}

/* kiln's callback thread: the command is done; finish its record. */
static void trace_done(kiln_event *event, kiln_event_state state, void *arg) {
    trace_record *r = arg;
    r->completed_ns = kiln__trace_now_ns();
    r->failed = state != KILN_EVENT_COMPLETE;
    if (!r->failed && event->backend->event_times(event->handle, &r->times) == KILN_OK)
        r->have_times = 1;
    /* else a queue without profiling: host times */
    pthread_mutex_lock(&g_trace.lock);
    if (r->generation == g_trace.generation) {
        *g_trace.tail = r;
        g_trace.tail = &r->next;
        g_trace.recorded++;
        r = NULL;
    }
    if (--g_trace.pending == 0)
        pthread_cond_broadcast(&g_trace.idle);
    pthread_mutex_unlock(&g_trace.lock);
    free(r); /* a record of a trace already written */
}

void kiln__trace_command(kiln_queue *queue, const char *name, uint64_t enqueued_ns,
                         kiln_event *event) {
    trace_record *r = kiln__calloc(1, sizeof *r);
    if (!r)
        return; /* tracing never fails a command */
    pthread_mutex_lock(&g_trace.lock);
    int take = atomic_load(&g_trace.on) && g_trace.recorded + g_trace.pending < TRACE_MAX_RECORDS;
    if (take) {
        r->generation = g_trace.generation;
        r->seq = g_trace.next_seq++;
        g_trace.pending++;
    } else if (atomic_load(&g_trace.on)) {
        g_trace.dropped++;
    }
    pthread_mutex_unlock(&g_trace.lock);
    if (!take) {
        free(r);
        return;
    }
    r->queue_serial = queue->serial;
    r->device = queue->device;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "command");
    r->enqueued_ns = enqueued_ns;
    if (kiln_event_on_complete(event, trace_done, r) != KILN_OK) {
        pthread_mutex_lock(&g_trace.lock);
        if (--g_trace.pending == 0)
            pthread_cond_broadcast(&g_trace.idle);
        pthread_mutex_unlock(&g_trace.lock);
        free(r);
    }
}

/* JSON string contents: kernel names are identifiers, but device names and
 * paths may hold anything. */
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static double us_since(uint64_t t, uint64_t start) {
    return ((double)t - (double)start) / 1e3;
}

/* One "X" (complete) event per command, one line each. Device times are
 * moved onto the host clock by the command's own enqueue: the device's
 * "queued" time is taken at the same moment on its clock. */
static void write_record(FILE *f, const trace_record *r, unsigned pid, uint64_t start) {
    double ts, dur, queued_us = us_since(r->enqueued_ns, start);
    if (r->have_times) {
        double shift = (double)r->enqueued_ns - (double)r->times.queued;
        ts = ((double)r->times.started + shift - (double)start) / 1e3;
        dur = ((double)r->times.ended - (double)r->times.started) / 1e3;
    } else {
        ts = queued_us;
        dur = us_since(r->completed_ns, r->enqueued_ns);
    }
    fprintf(f, ",\n{\"ph\":\"X\",\"name\":");
    json_string(f, r->name);
    fprintf(f,
            ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"enqueued_us\":%.3f,"
            "\"timing\":\"%s\"%s",
            pid, r->queue_serial, ts, dur < 0 ? 0 : dur, queued_us,
            r->have_times ? "device" : "host", r->failed ? ",\"failed\":true" : "");
    if (r->have_times)
        fprintf(f, ",\"wait_us\":%.3f", ((double)r->times.started - (double)r->times.queued) / 1e3);
    fprintf(f, "}}");
}

static int by_seq(const void *a, const void *b) {
    size_t x = (*(const trace_record *const *)a)->seq, y = (*(const trace_record *const *)b)->seq;
    return x < y ? -1 : x > y;
}

static kiln_status trace_write(const char *path, const trace_record *list, uint64_t start,
                               size_t dropped, size_t pending) {
    /* Records arrive in completion-callback order, which a backend may not
     * keep (NVIDIA's OpenCL ran a read's callback before the write's that
     * it followed): list them in enqueue order. Without memory for the
     * index, callback order. */
    size_t n = 0;
    for (const trace_record *r = list; r; r = r->next)
        n++;
    const trace_record **order = n ? kiln__malloc(n * sizeof *order) : NULL;
    if (order) {
        size_t i = 0;
        for (const trace_record *r = list; r; r = r->next)
            order[i++] = r;
        qsort(order, n, sizeof *order, by_seq);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        free(order);
        return kiln__error_set(KILN_ERROR_IO, 0, "kiln_trace_stop: cannot write %s", path);
    }
    const kiln_device *devices[TRACE_MAX_DEVICES];
    unsigned ndev = 0;
    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"kiln %s\","
            "\"dropped\":%zu,\"unfinished\":%zu},\n\"traceEvents\":[\n"
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"kiln\"}}",
            kiln_version(), dropped, pending);
    size_t i = 0;
    for (const trace_record *r = order ? order[0] : list; r;
         r = order ? (++i < n ? order[i] : NULL) : r->next) {
        unsigned pid = 0;
        while (pid < ndev && devices[pid] != r->device)
            pid++;
        if (pid == ndev && ndev < TRACE_MAX_DEVICES) {
            devices[ndev++] = r->device;
            char label[320];
            snprintf(label, sizeof label, "%s %s", r->device->b.info.id, r->device->b.info.name);
            fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":",
                    pid + 1);
            json_string(f, label);
            fprintf(f, "}}");
        }
        write_record(f, r, pid + 1, start);
    }
    free(order);
    fprintf(f, "\n]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return kiln__error_set(KILN_ERROR_IO, 0, "kiln_trace_stop: writing %s failed", path);
    return KILN_OK;
}

kiln_status kiln_trace_stop(void) {
    pthread_mutex_lock(&g_trace.lock);
    if (!atomic_load(&g_trace.on)) {
        pthread_mutex_unlock(&g_trace.lock);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "kiln_trace_stop: no trace is on");
    }
    atomic_store(&g_trace.on, 0);
    /* Commands still running finish their records first; a bounded wait,
     * since one may wait behind a user event nobody sets. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (g_trace.pending && pthread_cond_timedwait(&g_trace.idle, &g_trace.lock, &until) == 0)
        ;
    trace_record *list = g_trace.head;
    size_t dropped = g_trace.dropped, pending = g_trace.pending;
    uint64_t start = g_trace.start_ns;
    char *path = g_trace.path;
    g_trace.path = NULL;
    g_trace.head = NULL;
    g_trace.tail = &g_trace.head;
    g_trace.generation++; /* late records are freed, not listed */
    pthread_mutex_unlock(&g_trace.lock);
    kiln_status st = trace_write(path, list, start, dropped, pending);
    trace_free_records(list);
    free(path);
    return st;
}
