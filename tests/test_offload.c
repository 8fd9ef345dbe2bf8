/* Offload regions and data maps: each map kind's exact semantics (TO is not
 * copied back, FROM is not copied in, ALLOC moves nothing, TOFROM both), data
 * staying on the device across runs (host changes are not seen; the counters
 * show one copy in), the seed's row-by-row pairwise distances against a
 * serial C reference (float and double, M = 1, 7, 33, 100), 2-D and 3-D
 * loops, nested regions, async forms, an out-of-order queue, and the error
 * cases. Every generated source is also compiled for CUDA with NVRTC (no GPU
 * needed; skipped when NVRTC cannot be loaded). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"
#include "nvrtc_prelude.h"

/* Generated sources seen by the hook (distinct ones). */
static char *g_src[64];
static size_t g_nsrc;

static void hook(const char *s) {
    if (strstr(s, "no_such_variable_zq")) /* the build-error test */
        return;
    for (size_t k = 0; k < g_nsrc; k++)
        if (!strcmp(g_src[k], s))
            return;
    if (g_nsrc < 64) {
        size_t n = strlen(s) + 1;
        g_src[g_nsrc] = malloc(n);
        if (g_src[g_nsrc])
            memcpy(g_src[g_nsrc++], s, n);
    }
}

#define N_INTS 37

static kiln_offload *make(kiln_context *c, const char *params, const char *body, unsigned dims,
                          const kiln_offload_opts *o) {
    kiln_offload *off = NULL;
    CHECK_OK(kiln_offload_create(c, params, body, dims, o, &off));
    return off;
}

static int all_eq(const int *h, size_t n, int base, int mul, int add) {
    for (size_t i = 0; i < n; i++)
        if (h[i] != base * 0 + mul * (int)i + add)
            return 0;
    return 1;
}

/* Reads the device copy of a mapped range through lookup. */
static void read_device(kiln_queue *q, kiln_data_region *r, const void *host, size_t bytes,
                        void *out) {
    kiln_buffer *b = NULL;
    size_t off = 0, left = 0;
    if (!CHECK_OK(kiln_data_region_lookup(r, host, &b, &off, &left)))
        return;
    CHECK(left >= bytes);
    CHECK_OK(kiln_data_region_wait(r));
    CHECK_OK(kiln_buffer_read(q, b, off, bytes, out));
}

static void fill(int *h, size_t n, int mul, int add) {
    for (size_t i = 0; i < n; i++)
        h[i] = mul * (int)i + add;
}

static void t_map_kinds(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *twice = make(c, "int *x", "x[i] = 2 * x[i] + 1;", 1, NULL);
    kiln_offload *poison = make(c, "int *x, int v", "x[i] = v;", 1, NULL);
    kiln_offload *iota = make(c, "int *x", "x[i] = 7 * (int)i;", 1, NULL);
    if (!twice || !poison || !iota)
        goto out;
    int h[N_INTS], dev[N_INTS];
    size_t n = N_INTS, bytes = sizeof h;
    kiln_data_region *r = NULL, *inner = NULL;
    kiln_offload_stats s;

    /* TO: copied in, never back. Poison the host after begin. */
    fill(h, n, 3, 1);
    kiln_arg m = KILN_TO(h, bytes);
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r));
    CHECK_OK(kiln_data_region_wait(r));
    fill(h, n, 0, -7);
    kiln_arg a1 = KILN_PRESENT(h);
    CHECK_OK(kiln_offload_run(q, twice, r, &n, 1, &a1));
    read_device(q, r, h, bytes, dev);
    CHECK_MSG(all_eq(dev, n, 0, 6, 3), "TO: device sees %d, want 3", dev[0]);
    CHECK_OK(kiln_data_region_get_stats(r, &s));
    CHECK(s.copies_to == 1 && s.bytes_to == bytes && s.copies_from == 0);
    CHECK(s.allocations == 1 && s.launches == 1);
    CHECK_OK(kiln_data_region_end(r));
    CHECK_MSG(all_eq(h, n, 0, 0, -7), "TO copied back: h[0] = %d", h[0]);

    /* ALLOC moves nothing either way. */
    fill(h, n, 1, 0);
    m = KILN_ALLOC(h, bytes);
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r));
    kiln_arg a2[2] = { KILN_PRESENT(h), KILN_ARG_I32(-5) };
    CHECK_OK(kiln_offload_run(q, poison, r, &n, 2, a2));
    read_device(q, r, h, bytes, dev);
    CHECK(all_eq(dev, n, 0, 0, -5));
    /* FROM is not copied in: a nested FROM region on the poisoned device
     * copy; the host's values never reach the device. */
    m = KILN_FROM(h, bytes);
    CHECK_OK(kiln_data_region_begin(q, r, 1, &m, &inner));
    CHECK_OK(kiln_offload_run(q, twice, inner, &n, 1, &a1));
    CHECK_STATUS(kiln_data_region_end(r), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_data_region_get_stats(inner, &s));
    CHECK(s.copies_to == 0 && s.allocations == 0); /* reused the parent's */
    CHECK_OK(kiln_data_region_end(inner));
    CHECK_MSG(all_eq(h, n, 0, 0, -9), "FROM: h[0] = %d, want -9", h[0]);
    /* A run's own FROM map on present data copies that slice back. */
    fill(h, n, 1, 0);
    kiln_arg a3 = KILN_FROM(h + 5, 10 * sizeof *h);
    size_t ten = 10;
    CHECK_OK(kiln_offload_run(q, twice, r, &ten, 1, &a3));
    CHECK(h[4] == 4 && h[5] == -17 && h[14] == -17 && h[15] == 15);
    fill(h, n, 1, 0);
    CHECK_OK(kiln_data_region_get_stats(r, &s));
    CHECK(s.copies_to == 0 && s.copies_from == 1 && s.bytes_from == 10 * sizeof *h);
    CHECK_OK(kiln_data_region_end(r));
    CHECK_MSG(all_eq(h, n, 0, 1, 0), "ALLOC copied back: h[0] = %d", h[0]);

    /* TOFROM: both. */
    fill(h, n, 2, 5);
    m = KILN_TOFROM(h, bytes);
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r));
    CHECK_OK(kiln_offload_run(q, twice, r, &n, 1, &a1));
    CHECK_OK(kiln_data_region_end(r));
    CHECK(all_eq(h, n, 0, 4, 11));

    /* The same kinds on a run without a region. */
    fill(h, n, 2, 5);
    kiln_arg b = KILN_TOFROM(h, bytes);
    CHECK_OK(kiln_offload_run(q, twice, NULL, &n, 1, &b));
    CHECK(all_eq(h, n, 0, 4, 11));
    b = KILN_TO(h, bytes);
    CHECK_OK(kiln_offload_run(q, twice, NULL, &n, 1, &b));
    CHECK(all_eq(h, n, 0, 4, 11)); /* not copied back */
    b = KILN_FROM(h, bytes);
    CHECK_OK(kiln_offload_run(q, iota, NULL, &n, 1, &b));
    CHECK(all_eq(h, n, 0, 7, 0));
    b = KILN_ALLOC(h, bytes);
    CHECK_OK(kiln_offload_run(q, iota, NULL, &n, 1, &b));
    CHECK_OK(kiln_queue_finish(q));
    fill(h, n, 1, 0);
    CHECK(all_eq(h, n, 0, 1, 0));
    CHECK_OK(kiln_offload_get_stats(iota, &s));
    CHECK(s.launches == 2 && s.copies_to == 0 && s.copies_from == 1 && s.allocations == 2);
out:
    KT_RELEASE(twice, poison, iota);
}

/* Data stays on the device between runs: host changes are not seen, and
 * only the region's one copy in happens. */
static void t_stays(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *add = make(c, "int *x, int d", "x[i] += d;", 1, NULL);
    if (!add)
        return;
    enum { n = 1000 };
    static int h[n], dev[n];
    size_t range = n;
    fill(h, n, 1, 0);
    kiln_arg m = KILN_TO(h, sizeof h);
    kiln_data_region *r = NULL;
    if (!CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r)))
        goto out;
    CHECK_OK(kiln_data_region_wait(r));
    for (int it = 0; it < 5; it++) {
        kiln_arg a[2] = { KILN_PRESENT(h), KILN_ARG_I32(1) };
        CHECK_OK(kiln_offload_run(q, add, r, &range, 2, a));
        fill(h, n, 0, 1000 + it); /* the device must not see this */
    }
    read_device(q, r, h, sizeof h, dev);
    CHECK(all_eq(dev, n, 0, 1, 5));
    kiln_offload_stats s;
    CHECK_OK(kiln_data_region_get_stats(r, &s));
    CHECK(s.copies_to == 1 && s.copies_from == 0 && s.launches == 5 && s.allocations == 1);
    /* An explicit update sends the host's values. */
    CHECK_OK(kiln_data_region_update(r, h, sizeof h, KILN_DATA_TO, 0, NULL, NULL));
    kiln_arg a[2] = { KILN_PRESENT(h), KILN_ARG_I32(2) };
    CHECK_OK(kiln_offload_run(q, add, r, &range, 2, a));
    kiln_event *e = NULL;
    CHECK_OK(kiln_data_region_update(r, h + 10, 5 * sizeof *h, KILN_DATA_FROM, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    CHECK(h[9] == 1004 && h[10] == 1006 && h[14] == 1006 && h[15] == 1004);
    CHECK_OK(kiln_data_region_end(r));
    CHECK(h[0] == 1004); /* TO: nothing copied back at end */
out:
    kiln_offload_release(add);
}

/* ------------------------------------------------------------- pairwise */

static void pairwise_ref(const double *X, size_t M, size_t N, double *D) {
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < M; j++) {
            double d = 0;
            for (size_t k = 0; k < N; k++) {
                double t = X[i * N + k] - X[j * N + k];
                d += t * t;
            }
            D[i * M + j] = sqrt(d);
        }
}

/* The seed's pairwise_distance_target_row_context_annotated_func: X mapped
 * TO once in a region, one offload per row with that row of D mapped FROM,
 * the distance in a device helper function (the preamble). */
static void t_pairwise(kiln_queue *q, int dbl) {
    kiln_context *c = kiln_queue_context(q);
    const char *T = dbl ? "double" : "float";
    size_t es = dbl ? sizeof(double) : sizeof(float);
    char params[256], pre[512];
    snprintf(params, sizeof params, "const %s *X, %s *Dslice, int i, int M, int N", T, T);
    snprintf(pre, sizeof pre,
             "KILN_FUNC %s dist(KILN_GLOBAL const %s *a, KILN_GLOBAL const "
             "%s *b, int n) {\n"
             "    %s d = 0;\n"
             "    for (int k = 0; k < n; k++) { %s t = a[k] - b[k]; d += t*t; }\n"
             "    return sqrt(d);\n}\n",
             T, T, T, T, T);
    kiln_offload_opts o = KILN_OFFLOAD_OPTS(.index_names = "j", .preamble = pre,
                                            .name = dbl ? "pairwise_row_d" : "pairwise_row_f");
    kiln_offload *row = make(c, params, "Dslice[j] = dist(X + (long)i*N, X + j*N, N);", 1, &o);
    /* The whole matrix in one 2-D offload, for comparison. */
    char body2[256];
    snprintf(body2, sizeof body2,
             "%s d = 0; for (int k = 0; k < N; k++) { %s t = X[i*N+k] - "
             "X[j*N+k]; d += t*t; } D[i*M+j] = sqrt(d);",
             T, T);
    snprintf(params, sizeof params, "const %s *X, %s *D, int M, int N", T, T);
    kiln_offload *full = make(c, params, body2, 2, NULL);
    if (!row || !full)
        goto out;
    static const size_t Ms[] = { 1, 7, 33, 100 };
    const size_t N = 5;
    for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++) {
        size_t M = Ms[mi];
        double *Xd = malloc(M * N * sizeof *Xd), *ref = malloc(M * M * sizeof *ref);
        void *X = malloc(M * N * es), *D = malloc(M * M * es), *D2 = malloc(M * M * es);
        for (size_t k = 0; k < M * N; k++) {
            Xd[k] = kt_rand_unit() * 4 - 2;
            if (dbl)
                ((double *)X)[k] = Xd[k];
            else
                Xd[k] = ((float *)X)[k] = (float)Xd[k];
        }
        pairwise_ref(Xd, M, N, ref);
        memset(D, 0xff, M * M * es);
        kiln_arg xm = KILN_TO(X, M * N * es);
        kiln_data_region *r = NULL;
        CHECK_OK(kiln_data_region_begin(q, NULL, 1, &xm, &r));
        for (size_t i = 0; i < M; i++) {
            kiln_arg a[5] = { KILN_PRESENT(X), KILN_FROM((char *)D + i * M * es, M * es),
                              KILN_ARG_I32((int)i), KILN_ARG_I32((int)M), KILN_ARG_I32((int)N) };
            CHECK_OK(kiln_offload_run(q, row, r, &M, 5, a));
        }
        kiln_offload_stats s;
        CHECK_OK(kiln_data_region_get_stats(r, &s));
        /* X once; each row's Dslice is mapped (allocated) per run */
        CHECK_MSG(s.copies_to == 1 && s.copies_from == M && s.launches == M &&
                      s.allocations == 1 + M,
                  "M=%zu: %llu in, %llu out, %llu launches, %llu allocs", M,
                  (unsigned long long)s.copies_to, (unsigned long long)s.copies_from,
                  (unsigned long long)s.launches, (unsigned long long)s.allocations);
        CHECK_OK(kiln_data_region_end(r));
        /* 2-D, no region: X TO, D FROM for this run alone. */
        size_t range2[2] = { M, M };
        kiln_arg a2[4] = { KILN_TO(X, M * N * es), KILN_FROM(D2, M * M * es), KILN_ARG_I32((int)M),
                           KILN_ARG_I32((int)N) };
        CHECK_OK(kiln_offload_run(q, full, NULL, range2, 4, a2));
        double tol = dbl ? 1e-12 : 1e-5, worst = 0, worst2 = 0;
        for (size_t k = 0; k < M * M; k++) {
            double v = dbl ? ((double *)D)[k] : ((float *)D)[k];
            double v2 = dbl ? ((double *)D2)[k] : ((float *)D2)[k];
            double e1 = fabs(v - ref[k]) / (1 + ref[k]);
            double e2 = fabs(v2 - ref[k]) / (1 + ref[k]);
            if (!(e1 <= worst))
                worst = e1;
            if (!(e2 <= worst2))
                worst2 = e2;
        }
        CHECK_MSG(worst <= tol, "%s M=%zu rows: rel err %g", T, M, worst);
        CHECK_MSG(worst2 <= tol, "%s M=%zu 2-D: rel err %g", T, M, worst2);
        KT_FREE(Xd, ref, X, D, D2);
    }
out:
    KT_RELEASE(row, full);
}

static void t_3d_async(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *o3 =
        make(c, "int *x, int J, int K", "x[(i*J + j)*K + k] = (int)(i*100 + j*10 + k);", 3, NULL);
    if (!o3)
        return;
    size_t range[3] = { 3, 4, 33 };
    int *h = calloc(3 * 4 * 33, sizeof *h);
    kiln_arg a[3] = { KILN_FROM(h, 3 * 4 * 33 * sizeof *h), KILN_ARG_I32(4), KILN_ARG_I32(33) };
    kiln_event *e = NULL;
    CHECK_OK(kiln_offload_run_async(q, o3, NULL, range, 3, a, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 33; k++)
                bad += h[(i * 4 + j) * 33 + k] != i * 100 + j * 10 + k;
    CHECK_MSG(bad == 0, "3-D: %d wrong", bad);
    /* end_async: the event completes once the copy back has ended. */
    memset(h, 0, 3 * 4 * 33 * sizeof *h);
    kiln_arg m = KILN_ALLOC(h, 3 * 4 * 33 * sizeof *h);
    kiln_data_region *r = NULL;
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r));
    a[0] = KILN_PRESENT(h);
    CHECK_OK(kiln_offload_run_async(q, o3, r, range, 3, a, 0, NULL, NULL));
    CHECK_OK(kiln_data_region_update(r, h, 33 * sizeof *h, KILN_DATA_FROM, 0, NULL, NULL));
    CHECK_OK(kiln_data_region_end_async(r, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    CHECK(h[0] == 0 && h[32] == 32 && h[33] == 0); /* only the update */
    free(h);
    kiln_offload_release(o3);
}

/* Ordering inside a region on an out-of-order queue. */
static void t_out_of_order(kiln_queue *q0) {
    kiln_context *c = kiln_queue_context(q0);
    kiln_queue *q = NULL;
    kiln_status st = kiln_queue_create(c, kiln_queue_device(q0), KILN_QUEUE_OUT_OF_ORDER, &q);
    if (st == KILN_ERROR_UNSUPPORTED) { /* the device's own answer (CUDA: always) */
        CHECK(q == NULL);
        printf("no out-of-order queues on this device: region ordering on them not run\n");
        return;
    }
    if (!CHECK_OK(st))
        return;
    kiln_offload *twice = make(c, "int *x", "x[i] = 2 * x[i] + 1;", 1, NULL);
    enum { n = 4099 };
    static int h[n];
    fill(h, n, 0, 0);
    kiln_arg m = KILN_TOFROM(h, sizeof h);
    kiln_data_region *r = NULL;
    size_t range = n;
    if (twice && CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r))) {
        kiln_arg a = KILN_PRESENT(h);
        for (int it = 0; it < 6; it++)
            CHECK_OK(kiln_offload_run_async(q, twice, r, &range, 1, &a, 0, NULL, NULL));
        CHECK_OK(kiln_data_region_end(r));
        CHECK_MSG(all_eq(h, n, 0, 0, 63), "out of order: h[0] = %d", h[0]);
    }
    KT_RELEASE(twice, q);
}

/* ----------------------------------------------------------- wait lists */

/* The copies of update, end_async and run_async wait for the caller's wait
 * list: gated by a user event, nothing reaches the host until it opens. */
static void t_wait_lists(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *twice = make(c, "int *x", "x[i] = 2 * x[i] + 1;", 1, NULL);
    if (!twice)
        return;
    int h[N_INTS];
    size_t n = N_INTS, bytes = sizeof h;
    kiln_data_region *r = NULL;
    kiln_event *gate = NULL, *e = NULL;
    fill(h, n, 1, 0);
    kiln_arg m = KILN_TOFROM(h, bytes);
    if (!CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r)))
        goto out;
    kiln_arg p = KILN_PRESENT(h);
    CHECK_OK(kiln_offload_run(q, twice, r, &n, 1, &p)); /* device: 2i+1 */
    CHECK_OK(kiln_data_region_wait(r));

    /* update FROM behind a gate */
    fill(h, n, 0, -1);
    CHECK_OK(kiln_event_create_user(c, &gate));
    CHECK_OK(kiln_data_region_update(r, h, bytes, KILN_DATA_FROM, 1, &gate, &e));
    usleep(50 * 1000);
    CHECK_MSG(!kt_event_done(e) && h[1] == -1, "update ran before its wait list");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    CHECK_MSG(all_eq(h, n, 0, 2, 1), "update FROM: h[1] = %d, want 3", h[1]);
    KT_RELEASE(e, gate);

    /* bytes 0: the event still follows the wait list */
    CHECK_OK(kiln_event_create_user(c, &gate));
    CHECK_OK(kiln_data_region_update(r, h, 0, KILN_DATA_TO, 1, &gate, &e));
    usleep(20 * 1000);
    CHECK(e != NULL && !kt_event_done(e));
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    KT_RELEASE(e, gate);

    /* run_async behind a gate, then end_async behind another */
    kiln_event *gate2 = NULL, *run = NULL;
    CHECK_OK(kiln_event_create_user(c, &gate));
    CHECK_OK(kiln_event_create_user(c, &gate2));
    CHECK_OK(kiln_offload_run_async(q, twice, r, &n, 1, &p, 1, &gate, &run));
    fill(h, n, 0, -1);
    CHECK_OK(kiln_data_region_end_async(r, 1, &gate2, &e));
    r = NULL;
    usleep(50 * 1000);
    CHECK_MSG(!kt_event_done(run) && !kt_event_done(e) && h[1] == -1,
              "run or end ran before its wait list");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(run));
    usleep(20 * 1000);
    CHECK_MSG(!kt_event_done(e) && h[1] == -1, "end ran before its wait list");
    CHECK_OK(kiln_event_set_complete(gate2, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    CHECK_MSG(all_eq(h, n, 0, 4, 3), "end_async: h[1] = %d, want 7", h[1]);
    KT_RELEASE(run, e, gate, gate2);

    /* bad wait lists: nothing happens, the region stays usable */
    fill(h, n, 1, 0);
    if (CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r))) {
        kiln_event *nul = NULL;
        e = (kiln_event *)&e;
        CHECK_STATUS(kiln_data_region_update(r, h, bytes, KILN_DATA_FROM, 1, NULL, &e),
                     KILN_ERROR_NULL_HANDLE);
        CHECK(e == NULL);
        CHECK_STATUS(kiln_data_region_update(r, h, bytes, KILN_DATA_FROM, 1, &nul, NULL),
                     KILN_ERROR_NULL_HANDLE);
        CHECK_STATUS(kiln_offload_run_async(q, twice, r, &n, 1, &p, 1, NULL, NULL),
                     KILN_ERROR_NULL_HANDLE);
        CHECK_STATUS(kiln_offload_run_async(q, twice, r, &n, 1, &p, 1, &nul, NULL),
                     KILN_ERROR_NULL_HANDLE);
        CHECK_STATUS(kiln_data_region_end_async(r, 1, NULL, NULL), KILN_ERROR_NULL_HANDLE);
        CHECK_STATUS(kiln_data_region_end_async(r, 1, &nul, NULL), KILN_ERROR_NULL_HANDLE);
        CHECK_OK(kiln_offload_run(q, twice, r, &n, 1, &p));
        CHECK_OK(kiln_data_region_end_async(r, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(q));
        CHECK_MSG(all_eq(h, n, 0, 2, 1), "after bad wait lists: h[1] = %d", h[1]);
    }
    e = (kiln_event *)&e;
    CHECK_OK(kiln_data_region_end_async(NULL, 0, NULL, &e));
    CHECK(e == NULL);
out:
    kiln_offload_release(twice);
}

/* ------------------------------------- retain, sized structs, arg kinds */

static void t_retain_and_sizes(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *off = make(c, "int *x", "x[i] = (int)i;", 1, NULL);
    if (!off)
        return;
    int h[8];
    size_t n = 8;
    kiln_arg a = KILN_FROM(h, sizeof h);
    /* retain: two references, each release drops one */
    CHECK_OK(kiln_offload_retain(off));
    kiln_offload_release(off);
    memset(h, 0, sizeof h);
    CHECK_OK(kiln_offload_run(q, off, NULL, &n, 1, &a));
    CHECK(h[7] == 7);
    CHECK_STATUS(kiln_offload_retain(NULL), KILN_ERROR_NULL_HANDLE);

    /* stats through the sized getters: an older caller's prefix, a newer
     * caller's zeroed tail, a size below any version refused */
    struct {
        kiln_offload_stats s;
        uint64_t later[2];
    } big;
    memset(&big, 0xff, sizeof big);
    CHECK_OK((kiln_offload_get_stats)(off, &big.s, sizeof big));
    CHECK(big.s.launches == 1 && big.s.copies_from == 1 && big.later[0] == 0 && big.later[1] == 0);
    CHECK_STATUS((kiln_offload_get_stats)(off, &big.s, 8), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_offload_get_stats") != NULL);
    CHECK_STATUS((kiln_offload_get_stats)(off, &big.s, 0), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_get_stats(off, (kiln_offload_stats *)NULL), KILN_ERROR_NULL_HANDLE);
    kiln_data_region *r = NULL;
    kiln_arg m = KILN_TO(h, sizeof h);
    if (CHECK_OK(kiln_data_region_begin(q, NULL, 1, &m, &r))) {
        memset(&big, 0xff, sizeof big);
        CHECK_OK((kiln_data_region_get_stats)(r, &big.s, sizeof big));
        CHECK(big.s.copies_to == 1 && big.s.allocations == 1 && big.later[0] == 0);
        CHECK_STATUS((kiln_data_region_get_stats)(r, &big.s, 16), KILN_ERROR_INVALID_ARGUMENT);
        CHECK_OK(kiln_data_region_end(r));
    }

    /* options: struct_size from the macro, or refused */
    kiln_offload *o2 = NULL;
    kiln_offload_opts bad = KILN_OFFLOAD_OPTS(.name = "sized");
    CHECK(bad.struct_size == sizeof bad);
    bad.struct_size = 0;
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[i] = 1;", 1, &bad, &o2),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(o2 == NULL);
    CHECK(strstr(kiln_last_error_message(), "KILN_OFFLOAD_OPTS") != NULL);
    bad.struct_size = sizeof(size_t) + sizeof(const char *);
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[i] = 1;", 1, &bad, &o2),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* a newer caller's larger struct: the known prefix is used */
    struct {
        kiln_offload_opts o;
        const char *later;
    } newer = { KILN_OFFLOAD_OPTS(.index_names = "q"), NULL };
    newer.o.struct_size = sizeof newer;
    if (CHECK_OK(kiln_offload_create(c, "int *x", "x[q] = 5;", 1, &newer.o, &o2))) {
        CHECK_OK(kiln_offload_run(q, o2, NULL, &n, 1, &a));
        CHECK(h[0] == 5 && h[7] == 5);
        kiln_offload_release(o2);
    }
    kiln_offload_release(off);
}

/* Arguments of a kind that does not fit: a clear KILN_ERROR_KERNEL_ARGS
 * naming the parameter (runs) or KILN_ERROR_INVALID_ARGUMENT (region maps,
 * which are not parameters). */
static void t_arg_kinds(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *off = make(c, "int *x, int v", "x[i] = v;", 1, NULL);
    if (!off)
        return;
    int h[16];
    size_t n = 16;
    kiln_array *arr = NULL;
    size_t shape = 16;
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &shape, &arr));
    kiln_buffer *buf = NULL;
    CHECK_OK(kiln_buffer_create(c, sizeof h, KILN_BUFFER_READ_WRITE, NULL, &buf));
    struct {
        kiln_arg a[2];
        const char *says;
    } cases[] = {
        { { KILN_ARG_ARRAY(arr), KILN_ARG_I32(1) }, "an array" },
        { { KILN_ARG_BUF(buf), KILN_ARG_I32(1) }, "a buffer" },
        { { KILN_ARG_LOCAL_BYTES(64), KILN_ARG_I32(1) }, "local memory" },
        { { KILN_ARG_I32(1), KILN_ARG_I32(1) }, "a scalar (int)" },
        { { KILN_FROM(h, sizeof h), KILN_TO(h, sizeof h) }, "mapped host memory" },
        { { KILN_FROM(h, sizeof h), KILN_ARG_ARRAY(arr) }, "an array" },
        { { { .kind = (kiln_arg_kind)0 }, KILN_ARG_I32(1) }, "unknown kind" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, cases[k].a), KILN_ERROR_KERNEL_ARGS);
        const char *msg = kiln_last_error_message();
        CHECK_MSG(strstr(msg, cases[k].says) != NULL &&
                      strstr(msg, k == 4 || k == 5 ? "'v'" : "'x'") != NULL,
                  "case %zu: %s", k, msg);
    }
    /* region maps must be KILN_ARG_MAP */
    kiln_data_region *r = (kiln_data_region *)&r;
    kiln_arg maps[2] = { KILN_TO(h, sizeof h), KILN_ARG_ARRAY(arr) };
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 2, maps, &r), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    CHECK(strstr(kiln_last_error_message(), "an array") != NULL);
    maps[1] = KILN_ARG_I32(3);
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 2, maps, &r), KILN_ERROR_INVALID_ARGUMENT);
    maps[1] = KILN_MAP(h + 8, 4, 7); /* unknown map kind */
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 1, maps + 1, &r), KILN_ERROR_INVALID_ARGUMENT);
    KT_RELEASE(buf, arr, off);
}

/* ---------------------------------------------------------------- errors */

static void t_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_offload *off = NULL;
    kiln_data_region *r = NULL, *r2 = NULL;
    int h[64];
    fill(h, 64, 1, 0);
    size_t n = 16;

    /* create */
    CHECK_STATUS(kiln_offload_create(NULL, "int *x", "x[i]=0;", 1, NULL, &off),
                 KILN_ERROR_NULL_HANDLE);
    CHECK(off == NULL);
    CHECK_STATUS(kiln_offload_create(c, "int *x", NULL, 1, NULL, &off), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[i]=0;", 0, NULL, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[i]=0;", 4, NULL, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_create(c, "int *i", "i[0]=0;", 1, NULL, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_create(c, "int n", "(void)n;", 1, NULL, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_offload_opts bad_idx = KILN_OFFLOAD_OPTS(.index_names = "a,a");
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[a]=0;", 2, &bad_idx, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    bad_idx.index_names = "a";
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[a]=0;", 2, &bad_idx, &off),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_create(c, "int *x", "x[i] = no_such_variable_zq;", 1, NULL, &off),
                 KILN_ERROR_BUILD);
    CHECK(strstr(kiln_last_error_message(), "no_such_variable_zq") != NULL);
    CHECK_MSG(strstr(kiln_last_build_log(), "offload body") != NULL, "build log: %.300s",
              kiln_last_build_log());
    CHECK(off == NULL);
    kiln_offload_release(NULL);

    off = make(c, "int *x, int v", "x[i] = v;", 1, NULL);
    if (!off)
        return;
    /* arguments */
    kiln_arg good[2] = { KILN_FROM(h, n * sizeof *h), KILN_ARG_I32(3) };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 1, good), KILN_ERROR_KERNEL_ARGS);
    kiln_arg three[3] = { good[0], good[1], good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 3, three), KILN_ERROR_KERNEL_ARGS);
    kiln_arg swapped[2] = { good[1], good[0] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, swapped), KILN_ERROR_KERNEL_ARGS);
    kiln_arg wrong_dtype[2] = { good[0], KILN_ARG_F64(3.0) };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, wrong_dtype), KILN_ERROR_KERNEL_ARGS);
    CHECK(strstr(kiln_last_error_message(), "'v'") != NULL);
    kiln_arg odd_bytes[2] = { KILN_FROM(h, 10), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, odd_bytes), KILN_ERROR_KERNEL_ARGS);
    kiln_arg null_host[2] = { KILN_FROM(NULL, 64), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, null_host), KILN_ERROR_NULL_HANDLE);
    kiln_arg unmapped[2] = { KILN_PRESENT(h), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, unmapped), KILN_ERROR_INVALID_ARGUMENT);
    kiln_arg bad_kind[2] = { KILN_MAP(h, 64, 9), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &n, 2, bad_kind), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_offload_run(NULL, off, NULL, &n, 2, good), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_offload_run(q, NULL, NULL, &n, 2, good), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_offload_run(q, off, NULL, NULL, 2, good), KILN_ERROR_NULL_HANDLE);
    /* a run's own overlapping maps */
    kiln_offload *two = make(c, "int *a, int *b", "a[i] = b[i];", 1, NULL);
    if (two) {
        kiln_arg ov[2] = { KILN_FROM(h, 16 * sizeof *h), KILN_TO(h + 8, 16 * sizeof *h) };
        CHECK_STATUS(kiln_offload_run(q, two, NULL, &n, 2, ov), KILN_ERROR_INVALID_ARGUMENT);
        /* ...which a region makes legal (the device copy is shared) */
        kiln_arg whole = KILN_TOFROM(h, 64 * sizeof *h);
        CHECK_OK(kiln_data_region_begin(q, NULL, 1, &whole, &r));
        kiln_arg sh[2] = { KILN_PRESENT(h), KILN_PRESENT(h + 20) };
        CHECK_OK(kiln_offload_run(q, two, r, &n, 2, sh));
        CHECK_OK(kiln_data_region_end(r));
        CHECK(h[0] == 20 && h[15] == 35 && h[16] == 16);
        fill(h, 64, 1, 0);
        kiln_offload_release(two);
    }
    /* range 0: a no-op that moves nothing (still checks arguments) */
    size_t zero = 0;
    kiln_offload_stats s0, s1;
    CHECK_OK(kiln_offload_get_stats(off, &s0));
    CHECK_OK(kiln_offload_run(q, off, NULL, &zero, 2, good));
    kiln_event *e = NULL;
    CHECK_OK(kiln_offload_run_async(q, off, NULL, &zero, 2, good, 0, NULL, &e));
    CHECK(e != NULL);
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    CHECK_STATUS(kiln_offload_run(q, off, NULL, &zero, 1, good), KILN_ERROR_KERNEL_ARGS);
    CHECK_OK(kiln_offload_get_stats(off, &s1));
    CHECK(memcmp(&s0, &s1, sizeof s0) == 0);
    CHECK(h[0] == 0 && h[15] == 15);

    /* regions */
    kiln_arg ov[2] = { KILN_TO(h, 40), KILN_FROM(h + 4, 8) };
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 2, ov, &r), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    kiln_arg same[2] = { KILN_TO(h, 40), KILN_TO(h, 40) };
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 2, same, &r), KILN_ERROR_INVALID_ARGUMENT);
    kiln_arg nul = KILN_TO(NULL, 40);
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 1, &nul, &r), KILN_ERROR_NULL_HANDLE);
    kiln_arg pres = KILN_PRESENT(h);
    CHECK_STATUS(kiln_data_region_begin(q, NULL, 1, &pres, &r), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_data_region_begin(NULL, NULL, 0, NULL, &r), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_data_region_end(NULL));
    /* an empty region is fine; zero-byte maps map nothing */
    kiln_arg empty = KILN_TO(NULL, 0);
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &empty, &r));
    CHECK_OK(kiln_data_region_end(r));

    kiln_arg part = KILN_TOFROM(h + 8, 16 * sizeof *h);
    CHECK_OK(kiln_data_region_begin(q, NULL, 1, &part, &r));
    /* runs past the mapping's end */
    kiln_arg past[2] = { KILN_FROM(h + 16, 16 * sizeof *h), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, r, &n, 2, past), KILN_ERROR_OUT_OF_RANGE);
    /* starts before the mapping and overlaps it */
    kiln_arg before[2] = { KILN_FROM(h, 16 * sizeof *h), good[1] };
    CHECK_STATUS(kiln_offload_run(q, off, r, &n, 2, before), KILN_ERROR_INVALID_ARGUMENT);
    kiln_arg child_bad = KILN_TO(h + 4, 8 * sizeof *h);
    CHECK_STATUS(kiln_data_region_begin(q, r, 1, &child_bad, &r2), KILN_ERROR_INVALID_ARGUMENT);
    kiln_arg child_out = KILN_MAP(h + 40, 8, KILN_DATA_PRESENT);
    CHECK_STATUS(kiln_data_region_begin(q, r, 1, &child_out, &r2), KILN_ERROR_INVALID_ARGUMENT);
    /* lookup: a slice resolves to buffer + offset */
    kiln_buffer *b = NULL;
    size_t bo = 99, left = 0;
    CHECK_OK(kiln_data_region_lookup(r, h + 10, &b, &bo, &left));
    CHECK(b != NULL && bo == 2 * sizeof *h && left == 14 * sizeof *h);
    CHECK_STATUS(kiln_data_region_lookup(r, h + 30, &b, &bo, &left), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_data_region_update(r, h, 4, KILN_DATA_TOFROM, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_data_region_update(r, h + 30, 4, KILN_DATA_TO, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* a run inside the region, on a slice */
    kiln_arg slice[2] = { KILN_PRESENT(h + 12), KILN_ARG_I32(-1) };
    size_t four = 4;
    CHECK_OK(kiln_offload_run(q, off, r, &four, 2, slice));
    CHECK_OK(kiln_data_region_end(r));
    CHECK(h[11] == 11 && h[12] == -1 && h[15] == -1 && h[16] == 16);
    /* another context */
    kiln_context *c2 = NULL;
    kiln_device *dev = kiln_queue_device(q);
    if (kiln_context_create(&dev, 1, &c2) == KILN_OK) {
        kiln_queue *q2 = NULL;
        if (CHECK_OK(kiln_queue_create(c2, dev, 0, &q2))) {
            CHECK_STATUS(kiln_offload_run(q2, off, NULL, &n, 2, good), KILN_ERROR_MISMATCH);
            kiln_queue_release(q2);
        }
        kiln_context_release(c2);
    }
    kiln_offload_release(off);
}

static void per_device(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    t_map_kinds(q);
    t_stays(q);
    t_pairwise(q, 0);
    if (info.fp64)
        t_pairwise(q, 1);
    else
        printf("no fp64 on this device: double pairwise not run\n");
    KT_STEPS(q, t_3d_async, t_out_of_order, t_wait_lists, t_retain_and_sizes, t_arg_kinds,
             t_errors);
}

/* The same generated sources, with the CUDA prelude, through NVRTC. */
static int t_nvrtc(void) {
    if (!kiln__cuda_nvrtc_ready())
        return 0;
    CHECK(g_nsrc >= 8);
    size_t ok = 0;
    for (size_t k = 0; k < g_nsrc; k++) {
        kt_nvrtc o;
        kiln_status st = kt_nvrtc_compile(g_src[k], &o);
        CHECK(o.full != NULL);
        CHECK_MSG(st == KILN_OK, "NVRTC: %s", kiln_last_error_message());
        if (st != KILN_OK)
            printf("--- log ---\n%s\n--- source ---\n%s\n", o.log ? o.log : "", g_src[k]);
        ok += st == KILN_OK;
        KT_FREE(o.bin, o.log, o.full);
    }
    printf("NVRTC (sm_90): %zu of %zu offload sources compiled\n", ok, g_nsrc);
    return 1;
}

int main(void) {
    kiln__offload_source_hook = hook;
    kt_for_each_device(per_device, NULL);
    kiln__offload_source_hook = NULL;
    int ran_nvrtc = t_nvrtc();
    for (size_t k = 0; k < g_nsrc; k++)
        free(g_src[k]);
    if (!ran_nvrtc) /* after the device part: a failure there still fails */
        KT_SKIP("NVRTC not loadable: the CUDA compile check of the offload sources did not run");
    return kt_report();
}
