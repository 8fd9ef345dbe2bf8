/* Wait lists across contexts: a command waits for an event of another
 * context (another device or backend in real use), bridged through the
 * host. A gate opened from the other context, failures that propagate,
 * device work chained across contexts through host memory (also within one
 * context: a write from memory a read is still filling), long mixed wait
 * lists, empty operations that must still follow their wait list, and
 * kiln_array_copy_between_async on strided views of every size.
 * The second context is on the same device, or on $KILN_TEST_PEER (a
 * selector: on the GPU machine, cuda:0 with KILN_TEST_PEER=nvidia chains
 * CUDA and OpenCL). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kiln/array.h"

static const char *src =
    "KILN_KERNEL void inc(KILN_GLOBAL int *x, int n) {\n"
    "    int i = (int)kiln_global_id(0); if (i < n) x[i] += 1;\n"
    "}\n"
    "KILN_KERNEL void twice(KILN_GLOBAL int *x, int n) {\n"
    "    int i = (int)kiln_global_id(0); if (i < n) x[i] *= 2;\n"
    "}\n";

typedef struct side {
    kiln_context *ctx;
    kiln_queue *q;
    kiln_program *prog;
    kiln_kernel *inc, *twice;
} side;

static int side_open(side *s, kiln_queue *q, kiln_device *dev) {
    memset(s, 0, sizeof *s);
    if (q) {
        s->q = q;
        kiln_queue_retain(q);
        s->ctx = kiln_queue_context(q);
        kiln_context_retain(s->ctx);
    } else if (!CHECK_OK(kiln_context_create(&dev, 1, &s->ctx)) ||
               !CHECK_OK(kiln_queue_create(s->ctx, dev, 0, &s->q))) {
        return 0;
    }
    return CHECK_OK(kiln_program_create(s->ctx, src, NULL, &s->prog)) &&
           CHECK_OK(kiln_kernel_create(s->prog, "inc", &s->inc)) &&
           CHECK_OK(kiln_kernel_create(s->prog, "twice", &s->twice));
}

static void side_close(side *s) {
    kiln_kernel_release(s->inc);
    kiln_kernel_release(s->twice);
    kiln_program_release(s->prog);
    kiln_queue_release(s->q);
    kiln_context_release(s->ctx);
}

static kiln_status launch(side *s, kiln_kernel *k, kiln_buffer *b, int n,
                          size_t nw, kiln_event *const *w, kiln_event **ev) {
    kiln_arg args[] = {KILN_ARG_BUF(b), KILN_ARG_I32(n)};
    size_t g = (size_t)(n ? n : 1);
    return kiln_kernel_launch(s->q, k, 1, &g, NULL, 2, args, nw, w, ev);
}

static int pending(kiln_event *e) {
    kiln_event_state st = KILN_EVENT_COMPLETE;
    usleep(20000); /* long enough for a command that did not wait to end */
    return kiln_event_get_state(e, &st) == KILN_OK &&
           st != KILN_EVENT_COMPLETE && st != KILN_EVENT_ERROR;
}

/* A user event of A gates a write and a kernel on B. */
static void test_gate(side *a, side *b) {
    enum { N = 1000 };
    int host[N], got[N];
    for (int i = 0; i < N; i++)
        host[i] = (int)(kt_rand_u64() % 1000);
    kiln_buffer *buf = NULL;
    kiln_event *gate = NULL, *w = NULL, *k = NULL;
    CHECK_OK(kiln_buffer_create(b->ctx, sizeof host, 0, NULL, &buf));
    CHECK_OK(kiln_event_create_user(a->ctx, &gate));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof host, host, 1, &gate,
                                     &w));
    CHECK_OK(launch(b, b->inc, buf, N, 1, &w, &k));
    CHECK_MSG(pending(k), "work on B ran before A's gate opened");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(k));
    CHECK_OK(kiln_buffer_read(b->q, buf, 0, sizeof got, got));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != host[i] + 1;
    CHECK_MSG(bad == 0, "%d of %d wrong after the gate", bad, N);
    kiln_event_release(gate);
    kiln_event_release(w);
    kiln_event_release(k);

    /* a failed gate fails the command behind it */
    kiln_event *gate2 = NULL, *w2 = NULL;
    CHECK_OK(kiln_event_create_user(a->ctx, &gate2));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof host, host, 1,
                                     &gate2, &w2));
    CHECK_OK(kiln_event_set_complete(gate2, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(w2), KILN_ERROR_EVENT_FAILED);
    kiln_event_state st = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(w2, &st));
    CHECK(st == KILN_EVENT_ERROR);
    kiln_event_release(gate2);
    kiln_event_release(w2);
    CHECK_OK(kiln_queue_finish(b->q));
    kiln_buffer_release(buf);
}

/* x on A: +1, read into host memory; on B: written from that memory once
 * the read ended, doubled, read back: (x + 1) * 2, nothing waited on by the
 * host in between. With a == b the write reads memory that a read earlier
 * in the same queue is still filling. */
static void test_chain(side *a, side *b, const char *what) {
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    for (size_t s = 0; s < ns; s++) {
        int n = (int)sizes[s];
        size_t bytes = (size_t)(n ? n : 1) * sizeof(int);
        int *x = malloc(bytes), *mid = malloc(bytes), *got = malloc(bytes);
        kiln_buffer *ba = NULL, *bb = NULL;
        if (!x || !mid || !got) {
            CHECK(!"out of host memory");
            free(x), free(mid), free(got);
            return;
        }
        for (int i = 0; i < n; i++)
            x[i] = (int)(kt_rand_u64() % 100000) - 50000;
        memset(mid, 0x5a, bytes);
        CHECK_OK(kiln_buffer_create(a->ctx, bytes, 0, x, &ba));
        CHECK_OK(kiln_buffer_create(b->ctx, bytes, 0, NULL, &bb));
        kiln_event *e[4] = {NULL, NULL, NULL, NULL};
        CHECK_OK(launch(a, a->inc, ba, n, 0, NULL, &e[0]));
        CHECK_OK(kiln_buffer_read_async(a->q, ba, 0, (size_t)n * sizeof(int),
                                        mid, 1, &e[0], &e[1]));
        CHECK_OK(kiln_buffer_write_async(b->q, bb, 0, (size_t)n * sizeof(int),
                                         mid, 1, &e[1], &e[2]));
        CHECK_OK(launch(b, b->twice, bb, n, 1, &e[2], &e[3]));
        CHECK_OK(kiln_event_wait(e[3]));
        CHECK_OK(kiln_buffer_read(b->q, bb, 0, (size_t)n * sizeof(int), got));
        int bad = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (got[i] != (x[i] + 1) * 2 && bad++ == 0)
                first = i;
        CHECK_MSG(bad == 0, "%s, n = %d: %d wrong, first at %d", what, n, bad,
                  first);
        for (int i = 0; i < 4; i++)
            kiln_event_release(e[i]);
        kiln_buffer_release(ba);
        kiln_buffer_release(bb);
        free(x);
        free(mid);
        free(got);
    }
}

/* 20 events, every other one from A, opened in reverse order; and an empty
 * write, which must still follow its wait list. */
static void test_long_list(side *a, side *b) {
    enum { M = 20 };
    kiln_event *w[M];
    for (int i = 0; i < M; i++)
        CHECK_OK(kiln_event_create_user(i % 2 ? a->ctx : b->ctx, &w[i]));
    kiln_buffer *buf = NULL;
    int v = 7, got = 0;
    kiln_event *e = NULL, *empty = NULL;
    CHECK_OK(kiln_buffer_create(b->ctx, sizeof v, 0, NULL, &buf));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof v, &v, M, w, &e));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, 0, &v, 1, &w[M - 1],
                                     &empty));
    for (int i = M - 1; i >= 1; i--)
        CHECK_OK(kiln_event_set_complete(w[i], KILN_EVENT_COMPLETE));
    CHECK_MSG(pending(e), "a command ran before the last of its %d events", M);
    /* (the empty write is behind e in this in-order queue) */
    CHECK_OK(kiln_event_set_complete(w[0], KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    CHECK_OK(kiln_event_wait(empty));
    CHECK_OK(kiln_buffer_read(b->q, buf, 0, sizeof got, &got));
    CHECK(got == 7);
    for (int i = 0; i < M; i++)
        kiln_event_release(w[i]);
    kiln_event_release(e);
    kiln_event_release(empty);

    /* an empty write waiting on a closed gate is not complete */
    kiln_event *gate = NULL, *e2 = NULL;
    CHECK_OK(kiln_event_create_user(a->ctx, &gate));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, 0, &v, 1, &gate, &e2));
    CHECK_MSG(pending(e2), "an empty write ignored its wait list");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e2));
    kiln_event_release(gate);
    kiln_event_release(e2);
    kiln_buffer_release(buf);
}

/* kiln_array_copy_between_async: a strided view of A (every other element,
 * reversed) into a contiguous array of B, int32 and float64. */
static void test_array_copy(side *a, side *b) {
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 5000);
    for (int t = 0; t < 2; t++) {
        kiln_dtype d = t ? KILN_FLOAT64 : KILN_INT32;
        size_t es = kiln_dtype_size(d);
        for (size_t s = 0; s < ns; s++) {
            size_t n = sizes[s], full = 2 * n + 1;
            char *h = malloc(full * es), *got = malloc((n ? n : 1) * es);
            if (!h || !got) {
                CHECK(!"out of host memory");
                free(h), free(got);
                return;
            }
            for (size_t i = 0; i < full; i++)
                kt_set(d, h, i, (double)(kt_rand_u64() % 2000000) - 1e6);
            kiln_array *A = NULL, *V = NULL, *B = NULL;
            CHECK_OK(kiln_array_from_host(a->ctx, d, 1, &full, h, &A));
            /* elements full-2, full-4, ..., 1: n of them */
            kiln_slice sl = n ? KILN_SLICE((ptrdiff_t)full - 2, PTRDIFF_MIN, -2)
                              : KILN_SLICE(0, 0, 1);
            CHECK_OK(kiln_array_view(A, &sl, &V));
            CHECK_OK(kiln_array_empty(b->ctx, d, 1, &n, &B));
            kiln_event *gate = NULL, *e = NULL;
            CHECK_OK(kiln_event_create_user(b->ctx, &gate));
            CHECK_OK(kiln_array_copy_between_async(b->q, B, a->q, V, 1, &gate,
                                                   &e));
            kiln_array_release(V); /* in flight: kept alive by the copy */
            CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
            CHECK_OK(kiln_event_wait(e));
            CHECK_OK(kiln_array_read(b->q, B, got));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += kt_get(d, got, i) != kt_get(d, h, full - 2 - 2 * i);
            CHECK_MSG(bad == 0, "%s n = %zu: %zu wrong", kiln_dtype_name(d), n,
                      bad);
            kiln_event_release(gate);
            kiln_event_release(e);
            kiln_array_release(A);
            kiln_array_release(B);
            free(h);
            free(got);
        }
    }
    /* bad input: clear errors, no event */
    size_t n = 4;
    kiln_array *I = NULL, *F = NULL;
    kiln_event *e = (kiln_event *)1;
    CHECK_OK(kiln_array_zeros(a->q, KILN_INT32, 1, &n, NULL, &I));
    CHECK_OK(kiln_array_zeros(b->q, KILN_FLOAT32, 1, &n, NULL, &F));
    CHECK_STATUS(kiln_array_copy_between_async(b->q, F, a->q, I, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    CHECK(e == NULL);
    CHECK_STATUS(kiln_array_copy_between_async(a->q, F, b->q, I, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_copy_between_async(NULL, F, a->q, I, 0, NULL, &e),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_copy_between_async(b->q, NULL, a->q, I, 0, NULL,
                                               &e),
                 KILN_ERROR_NULL_HANDLE);
    kiln_array_release(I);
    kiln_array_release(F);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device *peer = kiln_queue_device(q);
    const char *sel = getenv("KILN_TEST_PEER");
    if (sel && *sel && !CHECK_OK(kiln_device_select(sel, &peer)))
        return;
    side a, b;
    if (side_open(&a, q, NULL) && side_open(&b, NULL, peer)) {
        kiln_device_info ia, ib;
        kiln_device_get_info(kiln_queue_device(a.q), &ia);
        kiln_device_get_info(kiln_queue_device(b.q), &ib);
        printf("   A: %s (%s), B: %s (%s), another context\n", ia.name, ia.id,
               ib.name, ib.id);
        test_gate(&a, &b);
        test_gate(&b, &a);
        test_chain(&a, &b, "A to B");
        test_chain(&b, &a, "B to A");
        test_chain(&a, &a, "within A");
        test_long_list(&a, &b);
        test_array_copy(&a, &b);
        test_array_copy(&b, &a);
    }
    side_close(&a);
    side_close(&b);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
