/* Several host threads at once: each enqueueing on its own queue, several
 * on one shared queue, the same kernel launched concurrently with different
 * arguments, and programs built concurrently in one context. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define NTHREADS 4
#define ROUNDS 40
#define N 4099

static const char *src = "KILN_KERNEL void axpb(KILN_GLOBAL uint *x, uint a, uint b, int n) {\n"
                         "    int i = (int)kiln_global_id(0); if (i < n) x[i] = a * x[i] + b;\n"
                         "}\n";

typedef struct shared {
    kiln_context *ctx;
    kiln_device *dev;
    kiln_kernel *kernel; /* one kernel, launched by every thread */
    kiln_queue *common;  /* one queue, shared by every thread */
    atomic_int failures;
    atomic_int callbacks;
} shared;

typedef struct job {
    shared *s;
    int id;
    int use_common;
} job;

static void on_done(kiln_event *e, kiln_event_state st, void *user) {
    (void)e;
    shared *s = user;
    if (st == KILN_EVENT_COMPLETE)
        atomic_fetch_add(&s->callbacks, 1);
}

static void *worker(void *arg) {
    job *j = arg;
    shared *s = j->s;
    kiln_queue *q = NULL;
    if (j->use_common) {
        q = s->common;
        kiln_queue_retain(q);
    } else if (kiln_queue_create(s->ctx, s->dev, 0, &q) != KILN_OK) {
        atomic_fetch_add(&s->failures, 1000);
        return NULL;
    }
    uint32_t *host = malloc(N * sizeof *host), *ref = malloc(N * sizeof *ref),
             *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        host[i] = ref[i] = (uint32_t)(i * (j->id + 1));
    kiln_buffer *b = NULL;
    if (kiln_buffer_create(s->ctx, N * sizeof *host, 0, host, &b) != KILN_OK)
        atomic_fetch_add(&s->failures, 1000);
    for (int r = 0; r < ROUNDS && b; r++) {
        uint32_t a = (uint32_t)(r % 3) + 1, c = (uint32_t)(j->id * 7 + r);
        for (int i = 0; i < N; i++)
            ref[i] = a * ref[i] + c;
        kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_U32(a), KILN_ARG_U32(c), KILN_ARG_I32(N) };
        size_t g = N;
        kiln_event *e = NULL;
        if (kiln_kernel_launch(q, s->kernel, 1, &g, NULL, 4, args, 0, NULL, &e) != KILN_OK) {
            atomic_fetch_add(&s->failures, 1);
            continue;
        }
        if (kiln_event_on_complete(e, on_done, s) != KILN_OK)
            atomic_fetch_add(&s->failures, 1);
        kiln_event_release(e);
        if (r % 10 == 9) {
            if (kiln_buffer_read(q, b, 0, N * sizeof *out, out) != KILN_OK ||
                memcmp(out, ref, N * sizeof *out) != 0)
                atomic_fetch_add(&s->failures, 1);
        }
    }
    if (kiln_queue_finish(q) != KILN_OK)
        atomic_fetch_add(&s->failures, 1);
    KT_RELEASE(b, q);
    KT_FREE(host, ref, out);
    return NULL;
}

typedef struct build_job {
    kiln_context *ctx;
    int id;
    atomic_int *failures;
} build_job;

static void *builder(void *arg) {
    build_job *j = arg;
    char text[256];
    /* two threads share each source: the memory cache sees both */
    snprintf(text, sizeof text, "KILN_KERNEL void k%d(KILN_GLOBAL int *x) { x[0] = %d; }\n",
             j->id / 2, j->id / 2);
    for (int r = 0; r < 3; r++) {
        kiln_program *p = NULL;
        kiln_kernel *k = NULL;
        char name[16];
        snprintf(name, sizeof name, "k%d", j->id / 2);
        if (kiln_program_create(j->ctx, text, NULL, &p) != KILN_OK ||
            kiln_kernel_create(p, name, &k) != KILN_OK)
            atomic_fetch_add(j->failures, 1);
        KT_RELEASE(k, p);
    }
    return NULL;
}

static void run(kiln_queue *q0, void *user) {
    (void)user;
    shared s = { .ctx = kiln_queue_context(q0), .dev = kiln_queue_device(q0) };
    atomic_init(&s.failures, 0);
    atomic_init(&s.callbacks, 0);
    kiln_program *p = NULL;
    if (!KT_BUILD(s.ctx, src, NULL, &p, "axpb", &s.kernel))
        return;
    CHECK_OK(kiln_queue_create(s.ctx, s.dev, 0, &s.common));
    for (int mode = 0; mode < 2; mode++) {
        pthread_t th[NTHREADS];
        job jobs[NTHREADS];
        atomic_store(&s.callbacks, 0);
        for (int i = 0; i < NTHREADS; i++) {
            jobs[i] = (job){ .s = &s, .id = i, .use_common = mode };
            CHECK(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0);
        }
        for (int i = 0; i < NTHREADS; i++)
            pthread_join(th[i], NULL);
        CHECK_MSG(atomic_load(&s.failures) == 0, "%s queues: %d failures", mode ? "shared" : "own",
                  atomic_load(&s.failures));
        for (int i = 0; i < 5000 && atomic_load(&s.callbacks) < NTHREADS * ROUNDS; i++) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
        CHECK_MSG(atomic_load(&s.callbacks) == NTHREADS * ROUNDS, "callbacks %d of %d",
                  atomic_load(&s.callbacks), NTHREADS * ROUNDS);
    }
    /* concurrent builds in one context */
    pthread_t th[NTHREADS];
    build_job bj[NTHREADS];
    atomic_int bfail;
    atomic_init(&bfail, 0);
    for (int i = 0; i < NTHREADS; i++) {
        bj[i] = (build_job){ .ctx = s.ctx, .id = i, .failures = &bfail };
        CHECK(pthread_create(&th[i], NULL, builder, &bj[i]) == 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&bfail) == 0);
    KT_RELEASE(s.common, s.kernel, p);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
