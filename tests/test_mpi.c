/* kiln_mpi (include/kiln/mpi.h) under mpirun, on the CPU device (PoCL):
 * every collective at awkward sizes and dtypes against a serial reference
 * each rank computes for all ranks' inputs (which are functions of rank and
 * index), the distributed arrays against one-device results, and the
 * faults: mismatched calls, a deadline passed, a thread level too low.
 *
 *   mpirun -np N test_mpi             the program initialises MPI itself
 *   mpirun -np N test_mpi selfinit    kiln initialises (and finalises) it
 *   mpirun -np 1 test_mpi threadlevel MPI at MPI_THREAD_SERIALIZED: refused
 *
 * Every rank runs its checks and returns kt_report()'s code; mpirun fails
 * if any rank does. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "kiln/mpi.h"

static int R, P;

/* rank r's element i of a test input, as a double that every dtype holds
 * exactly (small integers; signed dtypes get negatives) */
static double input(kiln_dtype d, int r, size_t i) {
    int s = d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64 ||
            d == KILN_FLOAT32 || d == KILN_FLOAT64;
    double v = (double)((i * 7 + (size_t)r * 13 + 3) % 23);
    return s ? v - 11 : v;
}

static kiln_array *make(kiln_mpi *m, kiln_dtype d, size_t n, int r) {
    size_t es = kiln_dtype_size(d);
    char *h = calloc(n ? n : 1, es);
    for (size_t i = 0; i < n; i++)
        kt_set(d, h, i, input(d, r, i));
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_from_host(kiln_mpi_context(m), d, 1, &n, h, &a));
    free(h);
    return a;
}

static double *readback(kiln_mpi *m, kiln_array *a, kiln_dtype d, size_t n) {
    size_t es = kiln_dtype_size(d);
    char *h = calloc(n ? n : 1, es);
    double *out = calloc(n ? n : 1, sizeof *out);
    CHECK_OK(kiln_array_read(kiln_mpi_queue(m), a, h));
    for (size_t i = 0; i < n; i++)
        out[i] = kt_get(d, h, i);
    free(h);
    return out;
}

static double fold(kiln_mpi_op op, double a, double b) {
    return op == KILN_MPI_SUM ? a + b : op == KILN_MPI_MIN ? (a < b ? a : b) : (a > b ? a : b);
}

/* the reduction's wrap for narrow integers: what the dtype holds */
static double wrap(kiln_dtype d, double v) {
    char buf[16];
    kt_set(d, buf, 0, v);
    return kt_get(d, buf, 0);
}

static void test_allreduce(kiln_mpi *m) {
    size_t sizes[] = { 0, 1, 7, 64, 65, 257, 1000 };
    kiln_mpi_op ops[] = { KILN_MPI_SUM, KILN_MPI_MIN, KILN_MPI_MAX };
    int bad = 0, runs = 0;
    for (size_t di = 0; di < KT_NDTYPES; di++) {
        kiln_dtype d = kt_dtypes[di];
        for (size_t oi = 0; oi < 3; oi++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                size_t n = sizes[si];
                kiln_array *a = make(m, d, n, R);
                kiln_event *e = NULL;
                if (!CHECK_OK(kiln_mpi_allreduce(m, NULL, a, ops[oi], 0, NULL, &e))) {
                    kiln_array_release(a);
                    continue;
                }
                CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
                kiln_event_release(e);
                double *got = readback(m, a, d, n);
                for (size_t i = 0; i < n; i++) {
                    double want = input(d, 0, i);
                    for (int r = 1; r < P; r++)
                        want = fold(ops[oi], want, input(d, r, i));
                    want = wrap(d, want);
                    if (got[i] != want && bad++ < 5)
                        CHECK_MSG(0, "allreduce %s %s n=%zu [%zu]: %g, want %g", kiln_dtype_name(d),
                                  ops[oi] == 1 ? "sum" : "min/max", n, i, got[i], want);
                }
                runs++;
                free(got);
                kiln_array_release(a);
            }
    }
    CHECK_MSG(bad == 0, "%d allreduce elements wrong over %d runs", bad, runs);
}

static void test_broadcast_gather(kiln_mpi *m) {
    size_t sizes[] = { 0, 1, 13, 300 };
    int bad = 0;
    for (size_t si = 0; si < 4; si++) {
        size_t n = sizes[si];
        kiln_dtype d = si % 2 ? KILN_FLOAT64 : KILN_INT16;
        int root = P - 1;
        kiln_array *a = make(m, d, n, R);
        kiln_event *e = NULL;
        CHECK_OK(kiln_mpi_broadcast(m, NULL, a, root, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        double *got = readback(m, a, d, n);
        for (size_t i = 0; i < n; i++)
            bad += got[i] != input(d, root, i);
        free(got);
        kiln_array_release(a);

        /* allgather: P blocks of n */
        kiln_array *s = make(m, d, n, R), *g = NULL;
        size_t gn = n * (size_t)P;
        CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &gn, 0, NULL, NULL, &g));
        CHECK_OK(kiln_mpi_allgather(m, NULL, s, g, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        got = readback(m, g, d, gn);
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < n; i++)
                bad += got[(size_t)r * n + i] != input(d, r, i);
        free(got);

        /* reduce-scatter of the gathered-size arrays: block R of the sum */
        kiln_array *big = make(m, d, gn, R), *rs = NULL;
        CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &n, 0, NULL, NULL, &rs));
        CHECK_OK(kiln_mpi_reduce_scatter(m, NULL, big, rs, KILN_MPI_SUM, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        got = readback(m, rs, d, n);
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < P; r++)
                want += input(d, r, (size_t)R * n + i);
            bad += got[i] != wrap(d, want);
        }
        free(got);
        /* all-to-all: block j of big goes to rank j */
        kiln_array *a2 = NULL;
        CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &gn, 0, NULL, NULL, &a2));
        CHECK_OK(kiln_mpi_alltoall(m, NULL, big, a2, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        got = readback(m, a2, d, gn);
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < n; i++)
                bad += got[(size_t)r * n + i] != input(d, r, (size_t)R * n + i);
        free(got);
        /* gather to a root and scatter back from it (root 0, then the
         * last rank): recv only on the root */
        for (int k = 0; k < 2; k++) {
            int rt = k ? P - 1 : 0;
            kiln_array *gr = NULL, *back = NULL;
            if (R == rt)
                CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &gn, 0, NULL, NULL, &gr));
            CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &n, 0, NULL, NULL, &back));
            CHECK_OK(kiln_mpi_gather(m, NULL, s, gr, rt, 0, NULL, &e));
            CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "gather: %s", kiln_mpi_last_error_message());
            kiln_event_release(e);
            if (R == rt) {
                got = readback(m, gr, d, gn);
                for (int r = 0; r < P; r++)
                    for (size_t i = 0; i < n; i++)
                        bad += got[(size_t)r * n + i] != input(d, r, i);
                free(got);
            }
            /* scatter big's blocks from the root: rank R gets the root's
             * block R */
            kiln_array *src = R == rt ? big : NULL;
            CHECK_OK(kiln_mpi_scatter(m, NULL, src, back, rt, 0, NULL, &e));
            CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "scatter: %s", kiln_mpi_last_error_message());
            kiln_event_release(e);
            got = readback(m, back, d, n);
            for (size_t i = 0; i < n; i++)
                bad += got[i] != input(d, rt, (size_t)R * n + i);
            free(got);
            KT_RELEASE(gr, back);
        }
        KT_RELEASE(a2, s, g, big, rs);
    }
    CHECK_MSG(bad == 0,
              "%d broadcast/allgather/reduce_scatter/alltoall/gather/scatter elements wrong", bad);
    /* the root out of range (every rank refuses), a wrong root size */
    kiln_array *x = make(m, KILN_FLOAT32, 5, R), *y = make(m, KILN_FLOAT32, 5, R);
    kiln_event *e = (kiln_event *)&e;
    CHECK_STATUS(kiln_mpi_gather(m, NULL, x, y, P, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    CHECK(e == NULL);
    CHECK_STATUS(kiln_mpi_scatter(m, NULL, x, y, -1, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    if (P > 1) /* recv must hold P blocks: refused on the root */
        CHECK_STATUS(kiln_mpi_gather(m, NULL, x, y, R, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_mpi_gather(m, NULL, NULL, y, 0, 0, NULL, &e), KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(x, y);
}

/* a ring: every rank sends to the next and receives from the previous, both
 * in flight at once (a deadlock if sends waited for receives in order) */
static void test_p2p(kiln_mpi *m) {
    size_t n = 100003; /* past the eager limit: rendezvous */
    kiln_dtype d = KILN_FLOAT32;
    kiln_array *s = make(m, d, n, R), *r = NULL;
    CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), d, 1, &n, 0, NULL, NULL, &r));
    kiln_event *es = NULL, *er = NULL;
    int next = (R + 1) % P, prev = (R + P - 1) % P;
    CHECK_OK(kiln_mpi_send(m, NULL, s, next, 5, 0, NULL, &es));
    CHECK_OK(kiln_mpi_recv(m, NULL, r, prev, 5, 0, NULL, &er));
    CHECK_MSG(kiln_mpi_wait(m, er) == KILN_OK, "%s", kiln_mpi_last_error_message());
    CHECK_MSG(kiln_mpi_wait(m, es) == KILN_OK, "%s", kiln_mpi_last_error_message());
    KT_RELEASE(es, er);
    double *got = readback(m, r, d, n);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != input(d, prev, i);
    CHECK_MSG(bad == 0, "ring send/recv: %d elements wrong", bad);
    free(got);
    KT_RELEASE(s, r);
}

static void test_darray(kiln_mpi *m) {
    kiln_queue *q = kiln_mpi_queue(m);
    size_t sizes[] = { 0, 1, 3, 1001, 4099 };
    for (size_t si = 0; si < 5; si++) {
        size_t n = sizes[si];
        /* scatter int32 from rank 0, gather to rank 1 % P */
        int32_t *h = calloc(n + 1, sizeof *h), *back = calloc(n + 1, sizeof *back);
        for (size_t i = 0; i < n; i++)
            h[i] = (int32_t)(i * 2654435761u % 1000) - 500;
        kiln_mpi_darray *d = NULL;
        kiln_event *e = NULL;
        if (!CHECK_OK(kiln_mpi_darray_scatter(m, NULL, KILN_INT32, n, R == 0 ? h : NULL, 0, 0, NULL,
                                              &e, &d)))
            return;
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        size_t cnt = kiln_mpi_darray_count(d), st0 = kiln_mpi_darray_start(d);
        CHECK(cnt == n / (size_t)P + ((size_t)R < n % (size_t)P));
        int root = 1 % P;
        CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == root ? back : NULL, root, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        if (R == root)
            CHECK_MSG(n == 0 || memcmp(h, back, n * sizeof *h) == 0, "scatter/gather n=%zu", n);

        /* global inclusive and exclusive scan, in place and not */
        for (int ex = 0; ex < 2; ex++) {
            kiln_mpi_darray *o = NULL;
            CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, n, &o));
            CHECK_OK(kiln_mpi_darray_cumsum(m, NULL, o, d, ex, 0, NULL, &e));
            CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
            kiln_event_release(e);
            int32_t *loc = calloc(cnt + 1, sizeof *loc);
            CHECK_OK(kiln_array_read(q, kiln_mpi_darray_local(o), loc));
            int64_t acc = 0;
            int bad = 0;
            for (size_t i = 0; i < st0 + cnt; i++) {
                int64_t before = acc;
                acc += h[i];
                if (i >= st0)
                    bad += loc[i - st0] != (int32_t)(ex ? before : acc);
            }
            CHECK_MSG(bad == 0, "cumsum exclusive=%d n=%zu: %d wrong", ex, n, bad);
            free(loc);
            kiln_mpi_darray_release(o);
        }
        /* in place */
        CHECK_OK(kiln_mpi_darray_cumsum(m, NULL, d, d, 0, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == 0 ? back : NULL, 0, 0, NULL, &e));
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
        if (R == 0) {
            int64_t acc = 0;
            int bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += back[i] != (int32_t)(acc += h[i]);
            CHECK_MSG(bad == 0, "cumsum in place n=%zu: %d wrong", n, bad);
        }

        /* global histogram of the scanned values */
        {
            kiln_array *hist = NULL;
            CHECK_OK(kiln_mpi_darray_histogram(m, NULL, d, 13, -3000, 3000, 0, NULL, &e, &hist));
            CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
            kiln_event_release(e);
            int64_t hc[13] = { 0 }, want[13] = { 0 };
            if (hist)
                CHECK_OK(kiln_array_read(q, hist, hc));
            int64_t sacc = 0;
            for (size_t i = 0; i < n; i++) {
                double v = (double)(int32_t)(sacc += h[i]);
                if (v < -3000 || v > 3000)
                    continue;
                int b = (int)((v + 3000) / (6000.0 / 13));
                want[b > 12 ? 12 : b]++;
            }
            CHECK_MSG(memcmp(hc, want, sizeof hc) == 0, "darray histogram n=%zu", n);
            kiln_array_release(hist);
        }
        /* global sum */
        kiln_array *res = NULL;
        size_t one = 1;
        CHECK_OK(kiln_array_empty(kiln_mpi_context(m), KILN_INT32, 1, &one, &res));
        CHECK_OK(kiln_mpi_darray_sum(m, NULL, d, res, 0, NULL, &e)); /* of the scan */
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        int32_t sum = 0;
        CHECK_OK(kiln_array_read(q, res, &sum));
        int64_t acc = 0, want = 0;
        for (size_t i = 0; i < n; i++)
            want += (acc += h[i]);
        CHECK_MSG(sum == (int32_t)want, "darray sum n=%zu: %d, want %lld", n, sum, (long long)want);
        kiln_array_release(res);

        /* elementwise: d + d */
        kiln_mpi_darray *o = NULL;
        CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, n, &o));
        CHECK_OK(kiln_mpi_darray_binary(m, NULL, KILN_OP_ADD, o, d, d, 0, NULL, NULL));
        CHECK_OK(kiln_mpi_darray_gather(m, NULL, o, R == 0 ? back : NULL, 0, 0, NULL, &e));
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
        if (R == 0) {
            int bad = 0;
            acc = 0;
            for (size_t i = 0; i < n; i++)
                bad += back[i] != (int32_t)(2 * (acc += h[i]));
            CHECK_MSG(bad == 0, "darray binary n=%zu: %d wrong", n, bad);
        }
        kiln_mpi_darray_release(o);
        kiln_mpi_darray_release(d);
        KT_FREE(h, back);
    }
}

/* 2-D row blocks: scatter with a halo, halo exchange, gather */
static void test_rows(kiln_mpi *m) {
    kiln_queue *q = kiln_mpi_queue(m);
    size_t shapes[][3] = { { 17, 3, 1 }, { 64, 5, 2 }, { 9, 1, 2 }, { 13, 4, 0 } };
    for (size_t k = 0; k < 4; k++) {
        size_t rows = shapes[k][0], cols = shapes[k][1], h = shapes[k][2];
        if (h && rows / (size_t)P < h) {
            kiln_mpi_darray *d = NULL;
            CHECK_STATUS(kiln_mpi_darray_rows_empty(m, KILN_FLOAT64, rows, cols, h, &d),
                         KILN_ERROR_INVALID_ARGUMENT);
            continue;
        }
        double *host = calloc(rows * cols, sizeof *host), *back = calloc(rows * cols, 8);
        for (size_t i = 0; i < rows * cols; i++)
            host[i] = (double)(i / cols) * 100 + (double)(i % cols);
        kiln_mpi_darray *d = NULL;
        kiln_event *e = NULL;
        if (!CHECK_OK(kiln_mpi_darray_rows_scatter(m, NULL, KILN_FLOAT64, rows, cols, h,
                                                   R == 0 ? host : NULL, 0, 0, NULL, &e, &d)))
            return;
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
        size_t c = kiln_mpi_darray_count(d), s0 = kiln_mpi_darray_start(d);
        CHECK(kiln_mpi_darray_cols(d) == cols && kiln_mpi_darray_halo(d) == h);
        /* mark the halos, then exchange */
        double mark = -1;
        for (int side = 0; side < 2 && h; side++) {
            kiln_array *v = NULL;
            kiln_slice sl[2] = { side ? KILN_SLICE((ptrdiff_t)(h + c), (ptrdiff_t)(2 * h + c), 1)
                                      : KILN_SLICE(0, (ptrdiff_t)h, 1),
                                 KILN_SLICE_ALL };
            CHECK_OK(kiln_array_view(kiln_mpi_darray_local(d), sl, &v));
            CHECK_OK(kiln_array_fill(q, v, KILN_ARG_F64(mark), 0, NULL, NULL));
            kiln_array_release(v);
        }
        CHECK_OK(kiln_mpi_darray_halo_exchange(m, NULL, d, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
        kiln_event_release(e);
        size_t lr = c + 2 * h;
        double *loc = calloc(lr * cols, sizeof *loc);
        CHECK_OK(kiln_array_read(q, kiln_mpi_darray_local(d), loc));
        int bad = 0;
        for (size_t r = 0; r < lr; r++)
            for (size_t j = 0; j < cols; j++) {
                ptrdiff_t g = (ptrdiff_t)s0 + (ptrdiff_t)r - (ptrdiff_t)h; /* global row */
                int halo_up = r < h, halo_down = r >= h + c;
                double want = (double)g * 100 + (double)j;
                if ((halo_up && R == 0) || (halo_down && R == P - 1))
                    want = -1; /* left as it was */
                bad += loc[r * cols + j] != want;
            }
        if (bad && getenv("KT_MPI_VERBOSE"))
            for (size_t r = 0; r < lr; r++) {
                fprintf(stderr, "rank %d row %zu:", R, r);
                for (size_t j = 0; j < cols; j++)
                    fprintf(stderr, " %g", loc[r * cols + j]);
                fprintf(stderr, "\n");
            }
        CHECK_MSG(bad == 0, "rows %zu x %zu halo %zu: %d elements wrong after the exchange", rows,
                  cols, h, bad);
        free(loc);
        CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == 0 ? back : NULL, 0, 0, NULL, &e));
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
        if (R == 0)
            CHECK_MSG(memcmp(host, back, rows * cols * sizeof *host) == 0, "rows %zu x %zu gather",
                      rows, cols);
        CHECK_STATUS(kiln_mpi_darray_cumsum(m, NULL, d, d, 0, 0, NULL, &e), KILN_ERROR_UNSUPPORTED);
        kiln_mpi_darray_release(d);
        KT_FREE(host, back);
    }
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_f64(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the sample sort against qsort of the whole array */
static void test_sort(kiln_mpi *m) {
    size_t sizes[] = { 0, 1, 7, 1001, 5003 };
    for (size_t si = 0; si < 5; si++)
        for (int f = 0; f < 2; f++) {
            size_t n = sizes[si], es = f ? 8 : 4;
            kiln_dtype dt = f ? KILN_FLOAT64 : KILN_INT32;
            char *h = calloc(n + 1, es), *back = calloc(n + 1, es);
            for (size_t i = 0; i < n; i++) {
                /* many duplicates, negatives, a skewed half */
                int64_t v = (int64_t)((i * 2654435761u) % 97) - 40;
                if (i % 2)
                    v = 5;
                if (f)
                    ((double *)h)[i] = (double)v * 0.5 - (i % 3 == 0 ? 0.25 : 0);
                else
                    ((int32_t *)h)[i] = (int32_t)v;
            }
            kiln_mpi_darray *d = NULL;
            kiln_event *e = NULL;
            CHECK_OK(
                kiln_mpi_darray_scatter(m, NULL, dt, n, R == 0 ? h : NULL, 0, 0, NULL, &e, &d));
            CHECK_OK(kiln_mpi_wait(m, e));
            kiln_event_release(e);
            CHECK_MSG(kiln_mpi_darray_sort(m, NULL, d) == KILN_OK, "%s",
                      kiln_mpi_last_error_message());
            CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == 0 ? back : NULL, 0, 0, NULL, &e));
            CHECK_OK(kiln_mpi_wait(m, e));
            kiln_event_release(e);
            if (R == 0) {
                qsort(h, n, es, f ? cmp_f64 : cmp_i32);
                CHECK_MSG(n == 0 || memcmp(h, back, n * es) == 0, "sort %s n=%zu differs",
                          kiln_dtype_name(dt), n);
            }
            kiln_mpi_darray_release(d);
            KT_FREE(h, back);
        }
    /* mismatch: the ranks sort different sizes */
    if (P > 1) {
        kiln_mpi_darray *d = NULL;
        CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, R == 1 ? 11 : 10, &d));
        CHECK_STATUS(kiln_mpi_darray_sort(m, NULL, d), KILN_ERROR_MISMATCH);
        CHECK_MSG(strstr(kiln_mpi_last_error_message(), "rank 1 11 int"), "%s",
                  kiln_mpi_last_error_message());
        kiln_mpi_darray_release(d);
    }
}

/* The seeds' two workloads in their distributed form (kernels of this test,
 * not kiln demo's; `kiln demo --mpi` is not written): pairwise distances
 * and the polygon mask split by row blocks, each rank computing its rows
 * into a row-block array, gathered on rank 0 and checked there against a
 * serial loop. */
static void test_workloads(kiln_mpi *m) {
    kiln_queue *q = kiln_mpi_queue(m);
    kiln_context *ctx = kiln_mpi_context(m);
    /* pairwise distances of m x d points */
    int npts = 97, d = 5;
    size_t nx = (size_t)npts * (size_t)d;
    float *x = calloc(nx, sizeof *x);
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)kt_rand_unit() * 4 - 2; /* the same on every rank: same seed */
    kiln_array *X = make(m, KILN_FLOAT32, nx, 0);
    CHECK_OK(kiln_array_write(q, X, x));
    /* rank 0's points go to everyone (they are the same here: checked) */
    kiln_event *e = NULL;
    CHECK_OK(kiln_mpi_broadcast(m, NULL, X, 0, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    kiln_mpi_darray *D = NULL;
    CHECK_OK(kiln_mpi_darray_rows_empty(m, KILN_FLOAT32, (size_t)npts, (size_t)npts, 0, &D));
    kiln_elementwise *pd = NULL;
    CHECK_OK(kiln_elementwise_create(
        ctx,
        &KILN_ELEMENTWISE_DESC(.arguments = "float *D, const float *X, long i0, int m, int d",
                               .operation =
                                   "long r = i / m, c = i % m; float s = 0;"
                                   "for (int k = 0; k < d; k++) {"
                                   "  float t = X[(i0 + r) * d + k] - X[c * d + k]; s += t * t; }"
                                   "D[i] = sqrt(s);",
                               .flags = KILN_ELEMENTWISE_ANY_SHAPE),
        &pd));
    size_t c = kiln_mpi_darray_count(D), s0 = kiln_mpi_darray_start(D);
    kiln_arg args[] = { KILN_ARG_ARRAY(kiln_mpi_darray_local(D)), KILN_ARG_ARRAY(X),
                        KILN_ARG_I64((int64_t)s0), KILN_ARG_I32(npts), KILN_ARG_I32(d) };
    CHECK_OK(kiln_elementwise_launch(q, pd, c * (size_t)npts, 5, args, 0, NULL, NULL));
    float *all = calloc((size_t)npts * (size_t)npts, sizeof *all);
    CHECK_OK(kiln_mpi_darray_gather(m, NULL, D, R == 0 ? all : NULL, 0, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    if (R == 0) {
        int bad = 0;
        for (int i = 0; i < npts; i++)
            for (int j = 0; j < npts; j++) {
                double s = 0;
                for (int k = 0; k < d; k++) {
                    double t = (double)x[i * d + k] - x[j * d + k];
                    s += t * t;
                }
                double want = sqrt(s), got = all[(size_t)i * (size_t)npts + (size_t)j];
                bad += fabs(got - want) > 1e-5 * (1 + want);
            }
        CHECK_MSG(bad == 0, "distributed distances %dx%d: %d of %d wrong", npts, d, bad,
                  npts * npts);
    }
    free(all);
    kiln_mpi_darray_release(D);
    KT_RELEASE(pd, X);
    free(x);

    /* the polygon mask, rows split */
    int w = 67, h = 41, nv = 7;
    float px[7], py[7];
    for (int v = 0; v < nv; v++) { /* a star-ish polygon, integer vertices */
        double a = 2 * 3.14159265358979 * v / nv, rad = v % 2 ? 9 : 19;
        px[v] = (float)(int)(33 + rad * cos(a));
        py[v] = (float)(int)(20 + rad * sin(a));
    }
    size_t snv = (size_t)nv;
    kiln_array *PX = NULL, *PY = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &snv, px, &PX));
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &snv, py, &PY));
    kiln_mpi_darray *M = NULL;
    CHECK_OK(kiln_mpi_darray_rows_empty(m, KILN_UINT8, (size_t)h, (size_t)w, 0, &M));
    kiln_elementwise *mk = NULL;
    CHECK_OK(kiln_elementwise_create(
        ctx,
        &KILN_ELEMENTWISE_DESC(
                .arguments = "uchar *M, const float *px, const float *py, int nv, long y0, int w",
                .operation = "long y = y0 + i / w, x = i % w; float fx = x + 0.5f, fy = y + 0.5f;"
                             "int in = 0;"
                             "for (int a = 0, b = nv - 1; a < nv; b = a++) {"
                             "  if ((py[a] > fy) != (py[b] > fy)) {"
                             "    float xc = (px[b] - px[a]) * (fy - py[a]) / (py[b] - py[a]) "
                             "+ px[a];"
                             "    if (fx < xc) in = !in; } }"
                             "M[i] = (uchar)in;",
                .flags = KILN_ELEMENTWISE_ANY_SHAPE),
        &mk));
    c = kiln_mpi_darray_count(M);
    s0 = kiln_mpi_darray_start(M);
    kiln_arg margs[] = { KILN_ARG_ARRAY(kiln_mpi_darray_local(M)),
                         KILN_ARG_ARRAY(PX),
                         KILN_ARG_ARRAY(PY),
                         KILN_ARG_I32(nv),
                         KILN_ARG_I64((int64_t)s0),
                         KILN_ARG_I32(w) };
    CHECK_OK(kiln_elementwise_launch(q, mk, c * (size_t)w, 6, margs, 0, NULL, NULL));
    uint8_t *mask = calloc((size_t)w * (size_t)h, 1);
    CHECK_OK(kiln_mpi_darray_gather(m, NULL, M, R == 0 ? mask : NULL, 0, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    if (R == 0) {
        int bad = 0, inside = 0;
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++) {
                double fx = xx + 0.5, fy = y + 0.5;
                int in = 0;
                for (int a = 0, b = nv - 1; a < nv; b = a++)
                    if ((py[a] > fy) != (py[b] > fy) &&
                        fx < (px[b] - px[a]) * (fy - py[a]) / (py[b] - py[a]) + px[a])
                        in = !in;
                inside += in;
                bad += mask[y * w + xx] != in;
            }
        /* integer vertices, pixel centres at .5: a crossing's abscissa is a
         * fraction of denominator below 40, so it equals a centre exactly
         * (computed exactly in float and double alike) or lies at least
         * 1/80 from it, far beyond float rounding: the masks agree exactly */
        CHECK_MSG(bad == 0 && inside > 100, "distributed mask %dx%d: %d wrong, %d inside", w, h,
                  bad, inside);
    }
    free(mask);
    kiln_mpi_darray_release(M);
    KT_RELEASE(mk, PX, PY);
}

/* the distributed random fill is the one-device fill of the whole array */
static void test_random(kiln_mpi *m) {
    kiln_queue *q = kiln_mpi_queue(m);
    size_t sizes[] = { 1, 5, 1023, 4097 };
    for (size_t si = 0; si < 4; si++)
        for (int dd = 0; dd < 2; dd++)
            for (int normal = 0; normal < 2; normal++) {
                size_t n = sizes[si];
                kiln_dtype dt = dd ? KILN_FLOAT64 : KILN_FLOAT32;
                size_t es = kiln_dtype_size(dt);
                kiln_rng *g = NULL, *g1 = NULL;
                kiln_rng_desc desc = KILN_RNG_DESC(.seed = 1234 + si, .offset = 6);
                CHECK_OK(kiln_rng_create(&desc, &g));
                CHECK_OK(kiln_rng_create(&desc, &g1));
                kiln_mpi_darray *d = NULL;
                CHECK_OK(kiln_mpi_darray_empty(m, dt, n, &d));
                kiln_event *e = NULL;
                if (normal)
                    CHECK_OK(kiln_mpi_darray_normal(m, NULL, g, d, 1.5, 2.0, 0, NULL, NULL));
                else
                    CHECK_OK(kiln_mpi_darray_uniform(m, NULL, g, d, 0, NULL, NULL));
                char *all = calloc(n, es), *ref = calloc(n, es);
                CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == 0 ? all : NULL, 0, 0, NULL, &e));
                CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
                kiln_event_release(e);
                uint64_t off = 0, off1 = 0;
                kiln_rng_get_offset(g, &off);
                if (R == 0) {
                    kiln_array *a = NULL;
                    CHECK_OK(kiln_array_empty(kiln_mpi_context(m), dt, 1, &n, &a));
                    if (normal)
                        CHECK_OK(kiln_rng_normal(q, g1, a, 1.5, 2.0, 0, NULL, NULL));
                    else
                        CHECK_OK(kiln_rng_uniform(q, g1, a, 0, NULL, NULL));
                    CHECK_OK(kiln_array_read(q, a, ref));
                    kiln_array_release(a);
                    kiln_rng_get_offset(g1, &off1);
                    CHECK_MSG(off == off1, "offset after the fill %llu, one device %llu",
                              (unsigned long long)off, (unsigned long long)off1);
                    /* the same device kind computes both: the same bits */
                    CHECK_MSG(memcmp(all, ref, n * es) == 0,
                              "distributed %s %s n=%zu differs from the one-device fill",
                              normal ? "normal" : "uniform", kiln_dtype_name(dt), n);
                }
                KT_FREE(all, ref);
                kiln_mpi_darray_release(d);
                KT_RELEASE(g, g1);
            }
}

/* calls that disagree fail on every rank with both ranks' values, and the
 * communicator stays usable */
static void test_mismatch(kiln_mpi *m) {
    if (P < 2)
        return;
    size_t n = R == 1 ? 9 : 8;
    kiln_array *a = make(m, KILN_FLOAT32, n, R);
    kiln_event *e = NULL;
    CHECK_OK(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e));
    CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_MISMATCH);
    const char *msg = kiln_mpi_last_error_message();
    CHECK_MSG(strstr(msg, "rank 0 has allreduce of 8 float elements") &&
                  strstr(msg, "rank 1 has allreduce of 9 float elements"),
              "message: %s", msg);
    KT_RELEASE(e, a);
    /* dtype and op */
    a = make(m, R == 1 ? KILN_INT32 : KILN_FLOAT32, 4, R);
    CHECK_OK(kiln_mpi_allreduce(m, NULL, a, R == 1 ? KILN_MPI_MAX : KILN_MPI_SUM, 0, NULL, &e));
    CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_MISMATCH);
    msg = kiln_mpi_last_error_message();
    CHECK_MSG(strstr(msg, "int elements, op max") && strstr(msg, "float elements, op sum"),
              "message: %s", msg);
    KT_RELEASE(e, a);
    /* send/recv of different counts: both sides fail */
    if (R < 2) {
        size_t k = R == 0 ? 5 : 6;
        a = make(m, KILN_INT32, k, R);
        if (R == 0)
            CHECK_OK(kiln_mpi_send(m, NULL, a, 1, 3, 0, NULL, &e));
        else
            CHECK_OK(kiln_mpi_recv(m, NULL, a, 0, 3, 0, NULL, &e));
        CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_MISMATCH);
        msg = kiln_mpi_last_error_message();
        CHECK_MSG(strstr(msg, "send of 5 int") && strstr(msg, "recv of 6 int"), "message: %s", msg);
        KT_RELEASE(e, a);
    }
    /* still usable */
    a = make(m, KILN_INT64, 3, R);
    CHECK_OK(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    KT_RELEASE(e, a);
}

/* (deadline 1 s.) A receive whose send comes 2 s late times out and leaves
 * the communicator usable. Then rank 0 makes a collective the others make
 * only 2.5 s later: rank 0's
 * deadline passes (KILN_ERROR_TIMEOUT), its communicator is broken; the
 * others' late call (another count) meets rank 0's header and fails as a
 * mismatch, so no MPI request is left behind */
static void test_timeout(void) {
    if (P < 2)
        return;
    kiln_mpi *m = NULL;
    if (!CHECK_OK(kiln_mpi_create(MPI_COMM_WORLD, &KILN_MPI_OPTS(.timeout_ms = 1000), &m)))
        return;
    CHECK(kiln_mpi_timeout_ms(m) == 1000);
    kiln_event *e = NULL;
    /* a receive whose send comes late times out, and leaves the
     * communicator usable (the late send then meets its header) */
    if (R < 2) {
        kiln_array *b = make(m, KILN_INT32, 6, R);
        if (R == 0) {
            CHECK_OK(kiln_mpi_recv(m, NULL, b, 1, 9, 0, NULL, &e));
            CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_TIMEOUT);
            CHECK_MSG(strstr(kiln_mpi_last_error_message(), "still usable"), "message: %s",
                      kiln_mpi_last_error_message());
        } else {
            usleep(2000 * 1000);
            CHECK_OK(kiln_mpi_send(m, NULL, b, 0, 9, 0, NULL, &e));
            CHECK_OK(kiln_mpi_wait(m, e));
        }
        KT_RELEASE(e, b);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 is late: wait for it */
    {
        kiln_array *b = make(m, KILN_INT64, 3, R);
        CHECK_OK(kiln_mpi_allreduce(m, NULL, b, KILN_MPI_SUM, 0, NULL, &e));
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "after a receive's timeout: %s",
                  kiln_mpi_last_error_message());
        KT_RELEASE(e, b);
    }
    kiln_array *a = make(m, KILN_FLOAT64, R == 0 ? 10 : 0, R);
    if (R == 0) {
        uint64_t t0 = (uint64_t)time(NULL);
        CHECK_OK(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e));
        CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_TIMEOUT);
        CHECK_MSG(strstr(kiln_mpi_last_error_message(), "deadline of 1000 ms"), "message: %s",
                  kiln_mpi_last_error_message());
        CHECK((uint64_t)time(NULL) - t0 < 30);
        kiln_event_release(e);
        CHECK_STATUS(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e),
                     KILN_ERROR_WRONG_STATE);
    } else {
        usleep(2500 * 1000);
        CHECK_OK(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e));
        CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_MISMATCH);
        kiln_event_release(e);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    kiln_array_release(a);
    kiln_mpi_release(m);
}

static void test_bad_input(kiln_mpi *m) {
    kiln_array *a = NULL;
    kiln_event *e = NULL;
    size_t four = 4;
    CHECK_OK(kiln_array_zeros(kiln_mpi_queue(m), KILN_FLOAT16, 1, &four, 0, NULL, NULL, &a));
    CHECK_STATUS(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e), KILN_ERROR_UNSUPPORTED);
    CHECK(e == NULL);
    kiln_array_release(a);
    a = make(m, KILN_FLOAT32, 4, R);
    CHECK_STATUS(kiln_mpi_allreduce(m, NULL, a, (kiln_mpi_op)9, 0, NULL, &e),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_mpi_broadcast(m, NULL, a, P, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    CHECK_MSG(strstr(kiln_mpi_last_error_message(), "root"), "%s", kiln_mpi_last_error_message());
    CHECK_STATUS(kiln_mpi_send(m, NULL, a, 0, -1, 0, NULL, &e), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_mpi_allreduce(NULL, NULL, a, KILN_MPI_SUM, 0, NULL, &e),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_mpi_allreduce(m, NULL, NULL, KILN_MPI_SUM, 0, NULL, &e),
                 KILN_ERROR_NULL_HANDLE);
    kiln_array *v = NULL;
    kiln_slice sl = KILN_SLICE(0, 4, 2);
    CHECK_OK(kiln_array_view(a, &sl, &v));
    CHECK_STATUS(kiln_mpi_allreduce(m, NULL, v, KILN_MPI_SUM, 0, NULL, &e), KILN_ERROR_UNSUPPORTED);
    kiln_array_release(v);
    kiln_array *g = NULL;
    CHECK_STATUS(kiln_mpi_allgather(m, NULL, a, a, 0, NULL, &e),
                 P == 1 ? KILN_OK : KILN_ERROR_MISMATCH);
    if (P == 1) {
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
    }
    KT_RELEASE(g, a);
}

/* gathers d to rank 0 and compares with want (int32, total elements) */
static void check_gather(kiln_mpi *m, kiln_mpi_darray *d, const int32_t *want, size_t total,
                         const char *what) {
    int32_t *back = calloc(total + 1, sizeof *back);
    kiln_event *e = NULL;
    CHECK_OK(kiln_mpi_darray_gather(m, NULL, d, R == 0 ? back : NULL, 0, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s: %s", what, kiln_mpi_last_error_message());
    kiln_event_release(e);
    if (R == 0)
        CHECK_MSG(total == 0 || memcmp(want, back, total * sizeof *back) == 0,
                  "%s: %zu elements gathered wrong", what, total);
    free(back);
}

/* 1-D blocks -> row blocks (halo) -> 1-D on one rank -> row blocks on
 * P-1 ranks -> 1-D on every rank, each step gathered and compared */
static void test_redistribute(kiln_mpi *m) {
    kiln_queue *q = kiln_mpi_queue(m);
    size_t shapes[][2] = { { 0, 3 }, { 1, 1 }, { 7, 1 }, { 13, 4 }, { 257, 3 }, { 31, 33 } };
    for (size_t k = 0; k < 6; k++) {
        size_t rows = shapes[k][0], cols = shapes[k][1], n = rows * cols;
        int32_t *h = calloc(n + 1, sizeof *h);
        for (size_t i = 0; i < n; i++)
            h[i] = (int32_t)(i * 2654435761u % 100003) - 5000;
        kiln_mpi_darray *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e1 = NULL;
        kiln_event *e = NULL;
        char what[120];
        if (!CHECK_OK(kiln_mpi_darray_scatter(m, NULL, KILN_INT32, n, R == 0 ? h : NULL, 0, 0, NULL,
                                              &e, &a)))
            return;
        CHECK_OK(kiln_mpi_wait(m, e));
        kiln_event_release(e);
        size_t halo = rows / (size_t)P >= 1 ? 1 : 0;
        int pm1 = P > 1 ? P - 1 : 1;
        CHECK_OK(kiln_mpi_darray_create(
            m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = rows, .cols = cols, .halo = halo), &b));
        CHECK_OK(
            kiln_mpi_darray_create(m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = n, .ranks = 1), &c));
        CHECK_OK(kiln_mpi_darray_create(
            m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = rows, .cols = cols, .ranks = pm1), &d));
        CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, n, &e1));
        if (!b || !c || !d || !e1)
            return;
        CHECK(kiln_mpi_darray_ranks(c) == 1 && kiln_mpi_darray_ranks(b) == P);
        CHECK(kiln_mpi_darray_count(c) == (R == 0 ? n : 0));
        kiln_mpi_darray *chain[5] = { a, b, c, d, e1 };
        const char *names[5] = { "1-D", "row blocks", "1-D on rank 0", "row blocks on P-1 ranks",
                                 "1-D again" };
        for (int s = 1; s < 5; s++) {
            kiln_status st = kiln_mpi_darray_redistribute(m, NULL, chain[s - 1], chain[s]);
            snprintf(what, sizeof what, "%zu x %zu: %s -> %s", rows, cols, names[s - 1], names[s]);
            CHECK_MSG(st == KILN_OK, "%s: %s", what, kiln_mpi_last_error_message());
            check_gather(m, chain[s], h, n, what);
        }
        /* the row blocks' halos after an exchange hold the neighbours' rows */
        if (halo) {
            CHECK_OK(kiln_mpi_darray_halo_exchange(m, NULL, b, 0, NULL, &e));
            CHECK_OK(kiln_mpi_wait(m, e));
            kiln_event_release(e);
            size_t cnt = kiln_mpi_darray_count(b), s0 = kiln_mpi_darray_start(b);
            int32_t *loc = calloc((cnt + 2) * cols, sizeof *loc);
            CHECK_OK(kiln_array_read(q, kiln_mpi_darray_local(b), loc));
            int bad = 0;
            for (size_t j = 0; j < cols; j++) {
                if (R > 0)
                    bad += loc[j] != h[(s0 - 1) * cols + j];
                if (R < P - 1)
                    bad += loc[(cnt + 1) * cols + j] != h[(s0 + cnt) * cols + j];
            }
            CHECK_MSG(bad == 0, "%zu x %zu: %d halo elements wrong after redistribute + exchange",
                      rows, cols, bad);
            free(loc);
        }
        /* another element count is refused on every rank */
        kiln_mpi_darray *x = NULL;
        CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, n + 1, &x));
        CHECK_STATUS(kiln_mpi_darray_redistribute(m, NULL, a, x), KILN_ERROR_MISMATCH);
        kiln_mpi_darray_release(x);
        for (int s = 0; s < 5; s++)
            kiln_mpi_darray_release(chain[s]);
        free(h);
    }
    /* ranks that disagree on the layout: both named */
    if (P > 1) {
        kiln_mpi_darray *a = NULL, *b = NULL;
        CHECK_OK(kiln_mpi_darray_empty(m, KILN_FLOAT32, 12, &a));
        CHECK_OK(kiln_mpi_darray_create(
            m, KILN_FLOAT32, &KILN_MPI_LAYOUT(.rows = R == 1 ? 4 : 6, .cols = R == 1 ? 3 : 2), &b));
        CHECK_STATUS(kiln_mpi_darray_redistribute(m, NULL, a, b), KILN_ERROR_MISMATCH);
        const char *msg = kiln_mpi_last_error_message();
        CHECK_MSG(strstr(msg, "rank 0 has 12 float elements, 1-D blocks on") &&
                      strstr(msg, "6 x 2 row blocks") && strstr(msg, "rank 1 12 float") &&
                      strstr(msg, "4 x 3 row blocks"),
                  "message: %s", msg);
        kiln_mpi_darray_release(a);
        kiln_mpi_darray_release(b);
    }
    /* bad layouts */
    kiln_mpi_darray *x = NULL;
    CHECK_STATUS(
        kiln_mpi_darray_create(m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = 4, .ranks = P + 1), &x),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_mpi_last_error_message(), "ranks is"), "%s",
              kiln_mpi_last_error_message());
    CHECK_STATUS(kiln_mpi_darray_create(m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = 4, .halo = 1), &x),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_mpi_darray_create(m, KILN_INT32, NULL, &x), KILN_ERROR_NULL_HANDLE);
    CHECK(x == NULL);
    /* the sort wants every rank */
    if (P > 1) {
        CHECK_OK(
            kiln_mpi_darray_create(m, KILN_INT32, &KILN_MPI_LAYOUT(.rows = 4, .ranks = 1), &x));
        CHECK_STATUS(kiln_mpi_darray_sort(m, NULL, x), KILN_ERROR_UNSUPPORTED);
        kiln_mpi_darray_release(x);
    }
}

/* user reductions: a long sum of squares over ranks of different n (rank
 * 0 none), a struct min/max, all-empty (the neutral element) */
static void test_user_reduction(kiln_mpi *m) {
    kiln_context *ctx = kiln_mpi_context(m);
    kiln_mpi_reduction *sq = NULL, *mm = NULL;
    kiln_reduction_desc ds =
        KILN_REDUCTION_DESC(.arguments = "const int *x", .out_type = "long", .neutral = "0",
                            .reduce = "a + b", .map = "(long)x[i] * x[i]", .name = "t_mpi_sq");
    if (!CHECK_OK(kiln_mpi_reduction_create(m, &ds, &sq)))
        return;
    kiln_reduction_desc dm = KILN_REDUCTION_DESC(
            .arguments = "const float *x", .out_type = "mm", .out_size = 8,
            .preamble = "typedef struct { float lo, hi; } mm;\n"
                        "KILN_FUNC mm mm_make(float lo, float hi) { mm r; r.lo = lo; r.hi = hi; "
                        "return r; }\n",
            .neutral = "mm_make(INFINITY, -INFINITY)",
            .reduce = "mm_make(fmin(a.lo, b.lo), fmax(a.hi, b.hi))", .map = "mm_make(x[i], x[i])",
            .name = "t_mpi_minmax");
    if (!CHECK_OK(kiln_mpi_reduction_create(m, &dm, &mm))) {
        kiln_mpi_reduction_release(sq);
        return;
    }
    size_t base[] = { 0, 1, 6, 1000 };
    for (size_t k = 0; k < 4; k++) {
        size_t nr = (size_t)R * base[k]; /* rank 0 has none */
        int64_t want = 0;
        float lo = INFINITY, hi = -INFINITY;
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < (size_t)r * base[k]; i++) {
                double v = input(KILN_INT32, r, i);
                want += (int64_t)v * (int64_t)v;
                lo = (float)v < lo ? (float)v : lo;
                hi = (float)v > hi ? (float)v : hi;
            }
        kiln_array *xi = make(m, KILN_INT32, nr, R), *xf = make(m, KILN_FLOAT32, nr, R);
        kiln_arg ai = KILN_ARG_ARRAY(xi), af = KILN_ARG_ARRAY(xf);
        int64_t got = -1;
        float res[2] = { 0, 0 };
        kiln_status st = kiln_mpi_reduction_allreduce(m, NULL, sq, nr, 1, &ai, &got);
        CHECK_MSG(st == KILN_OK && got == want,
                  "sum of squares, %zu per rank step: %lld, want %lld (%s)", base[k],
                  (long long)got, (long long)want, kiln_mpi_last_error_message());
        st = kiln_mpi_reduction_allreduce(m, NULL, mm, nr, 1, &af, res);
        CHECK_MSG(st == KILN_OK && res[0] == lo && res[1] == hi,
                  "min/max, %zu per rank step: %g %g, want %g %g (%s)", base[k], res[0], res[1], lo,
                  hi, kiln_mpi_last_error_message());
        KT_RELEASE(xi, xf);
    }
    kiln_mpi_reduction_release(sq);
    kiln_mpi_reduction_release(mm);
    /* initial would be folded in once per rank: refused */
    kiln_mpi_reduction *bad = NULL;
    kiln_reduction_desc di = ds;
    di.initial = "5";
    CHECK_STATUS(kiln_mpi_reduction_create(m, &di, &bad), KILN_ERROR_UNSUPPORTED);
    CHECK(bad == NULL);
    CHECK_STATUS(kiln_mpi_reduction_allreduce(m, NULL, NULL, 0, 0, NULL, &bad),
                 KILN_ERROR_NULL_HANDLE);
    (void)ctx;
}

/* The jobs' event forms: a sort behind an unset user event waits for it
 * (and an all-reduce queued after it on the same queue waits for the
 * sort), the darray released before its event ends, a redistribution and
 * a user reduction as events, a failed wait list failing the job as
 * EVENT_FAILED on this rank while the ranks stay in step. */
static void test_jobs_async(kiln_mpi *m) {
    kiln_context *ctx = kiln_mpi_context(m);
    size_t n = 4099;
    int32_t *h = calloc(n, sizeof *h), *back = calloc(n, sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = (int32_t)((i * 2654435761u) % 1009) - 500;
    kiln_mpi_darray *d = NULL, *rows = NULL;
    kiln_event *e = NULL, *ue = NULL, *se = NULL, *re = NULL;
    CHECK_OK(
        kiln_mpi_darray_scatter(m, NULL, KILN_INT32, n, R == 0 ? h : NULL, 0, 0, NULL, &e, &d));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    CHECK_OK(kiln_event_create_user(ctx, &ue));
    CHECK_OK(kiln_mpi_darray_sort_async(m, NULL, d, 1, &ue, &se));
    /* after the sort on the same queue: the global count of the sorted
     * blocks' first elements' sign, through an all-reduce */
    size_t one = 1;
    kiln_array *cnt = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &one, &(int64_t){ 1 }, &cnt));
    CHECK_OK(kiln_mpi_allreduce(m, NULL, cnt, KILN_MPI_SUM, 0, NULL, &re));
    usleep(50 * 1000);
    kiln_event_state es = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(se, &es));
    CHECK_MSG(es != KILN_EVENT_COMPLETE && es != KILN_EVENT_ERROR,
              "a sort behind an unset user event ended (state %d)", (int)es);
    kiln_mpi_darray_release(d); /* the job holds it */
    kiln_mpi_darray *keep = NULL;
    CHECK_OK(kiln_mpi_darray_empty(m, KILN_INT32, n, &keep));
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_COMPLETE));
    CHECK_MSG(kiln_mpi_wait(m, se) == KILN_OK, "%s", kiln_mpi_last_error_message());
    CHECK_MSG(kiln_mpi_wait(m, re) == KILN_OK, "%s", kiln_mpi_last_error_message());
    int64_t c = 0;
    CHECK_OK(kiln_array_read(kiln_mpi_queue(m), cnt, &c));
    CHECK(c == P);
    KT_RELEASE(se, re, ue);
    kiln_array_release(cnt);
    /* sort again (into keep, through a redistribution as an event) and
     * check the order against qsort */
    CHECK_OK(
        kiln_mpi_darray_scatter(m, NULL, KILN_INT32, n, R == 0 ? h : NULL, 0, 0, NULL, &e, &d));
    CHECK_OK(kiln_mpi_darray_rows_empty(m, KILN_INT32, n, 1, 0, &rows));
    kiln_event *ev[3] = { NULL, NULL, NULL };
    CHECK_OK(kiln_mpi_darray_sort_async(m, NULL, d, 1, &e, &ev[0]));
    CHECK_OK(kiln_mpi_darray_redistribute_async(m, NULL, d, rows, 1, &ev[0], &ev[1]));
    CHECK_OK(kiln_mpi_darray_redistribute_async(m, NULL, rows, keep, 1, &ev[1], &ev[2]));
    for (int i = 0; i < 3; i++)
        CHECK_MSG(kiln_mpi_wait(m, ev[i]) == KILN_OK, "job %d: %s", i,
                  kiln_mpi_last_error_message());
    KT_RELEASE(e, ev[0], ev[1], ev[2]);
    CHECK_OK(kiln_mpi_darray_gather(m, NULL, keep, R == 0 ? back : NULL, 0, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    if (R == 0) {
        qsort(h, n, sizeof *h, cmp_i32);
        CHECK_MSG(memcmp(h, back, n * sizeof *h) == 0, "async sort + redistributions differ");
    }
    /* a user reduction as an event, then one behind a failed event */
    kiln_mpi_reduction *sq = NULL;
    kiln_reduction_desc ds =
        KILN_REDUCTION_DESC(.arguments = "const int *x", .out_type = "long", .neutral = "0",
                            .reduce = "a + b", .map = "(long)x[i]", .name = "t_mpi_async_sum");
    if (CHECK_OK(kiln_mpi_reduction_create(m, &ds, &sq))) {
        kiln_array *x = make(m, KILN_INT32, 333, R);
        kiln_arg ax = KILN_ARG_ARRAY(x);
        int64_t got = -1, want = 0;
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < 333; i++)
                want += (int64_t)input(KILN_INT32, r, i);
        CHECK_OK(kiln_mpi_reduction_allreduce_async(m, NULL, sq, 333, 1, &ax, &got, 0, NULL, &e));
        kiln_array_release(x); /* held by the job */
        kiln_mpi_reduction_release(sq);
        CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK && got == want,
                  "async reduction: %lld, want %lld (%s)", (long long)got, (long long)want,
                  kiln_mpi_last_error_message());
        kiln_event_release(e);
    }
    CHECK_OK(kiln_event_create_user(ctx, &ue));
    CHECK_OK(kiln_mpi_darray_sort_async(m, NULL, keep, 1, &ue, &e));
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_EVENT_FAILED);
    CHECK_MSG(strstr(kiln_mpi_last_error_message(), "kiln_mpi_darray_sort"), "%s",
              kiln_mpi_last_error_message());
    KT_RELEASE(e, ue);
    /* the same for a collective of the progress thread */
    kiln_array *w = make(m, KILN_FLOAT32, 1000, R);
    CHECK_OK(kiln_event_create_user(ctx, &ue));
    CHECK_OK(kiln_mpi_allreduce(m, NULL, w, KILN_MPI_SUM, 1, &ue, &e));
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_EVENT_FAILED);
    CHECK_MSG(strstr(kiln_mpi_last_error_message(), "kiln_mpi_allreduce"), "%s",
              kiln_mpi_last_error_message());
    KT_RELEASE(e, ue);
    CHECK_OK(kiln_mpi_allreduce(m, NULL, w, KILN_MPI_SUM, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "after a failed wait list: %s",
              kiln_mpi_last_error_message());
    KT_RELEASE(e, w);
    /* bad input fails the call, not its event */
    e = (kiln_event *)&e;
    CHECK_STATUS(kiln_mpi_darray_sort_async(m, NULL, NULL, 0, NULL, &e), KILN_ERROR_NULL_HANDLE);
    CHECK(e == NULL);
    CHECK_STATUS(kiln_mpi_darray_redistribute_async(m, NULL, keep, NULL, 0, NULL, &e),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_mpi_reduction_allreduce_async(m, NULL, NULL, 0, 0, NULL, &c, 0, NULL, &e),
                 KILN_ERROR_NULL_HANDLE);
    kiln_mpi_darray_release(d);
    kiln_mpi_darray_release(rows);
    kiln_mpi_darray_release(keep);
    KT_FREE(h, back);
}

/* KT_MPI_VERBOSE=1: each rank names the part it starts (to find a hang);
 * KT_MPI_ONLY=test_sort,test_rows: only those parts (debugging; every rank
 * must be given the same list) */
static int phase(const char *what) {
    const char *only = getenv("KT_MPI_ONLY");
    if (only && !strstr(only, what))
        return 0;
    if (getenv("KT_MPI_VERBOSE"))
        fprintf(stderr, "rank %d: %s\n", R, what);
    return 1;
}

static void check_device(kiln_mpi *m) {
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_mpi_device(m), &info));
    CHECK(kiln_mpi_local_size(m) >= 1 && kiln_mpi_local_rank(m) < kiln_mpi_local_size(m));
    if (info.type == KILN_DEVICE_CPU && kiln_mpi_local_size(m) > 1 && strstr(info.name, "pocl"))
        CHECK_MSG(info.is_subdevice, "rank %d: %s is not a sub-device", R, info.id);
    if (R == 0)
        printf("rank 0: device %s (%s), %u compute units, sub-device %d, %d ranks on the node\n",
               info.id, info.name, info.compute_units, info.is_subdevice, kiln_mpi_local_size(m));
}

/* `test_mpi nccl` (the GPU machine: one rank per GPU, e.g. -np 1 on
 * cuda:0): the NCCL transport's collectives against the serial reference;
 * skips (77) where NCCL or a CUDA device is missing */
static int run_nccl(void) {
    kiln_mpi *m = NULL;
    kiln_status st =
        kiln_mpi_create(MPI_COMM_WORLD, &KILN_MPI_OPTS(.transport = KILN_MPI_TRANSPORT_NCCL), &m);
    if (st == KILN_ERROR_NO_RUNTIME || st == KILN_ERROR_NO_DEVICE || st == KILN_ERROR_UNSUPPORTED) {
        MPI_Finalize();
        KT_SKIP("no NCCL transport here: %s", kiln_mpi_last_error_message());
    }
    CHECK_MSG(st == KILN_OK, "kiln_mpi_create(nccl): %s", kiln_mpi_last_error_message());
    if (st != KILN_OK) {
        MPI_Finalize();
        return kt_report();
    }
    R = kiln_mpi_rank(m);
    P = kiln_mpi_size(m);
    CHECK(kiln_mpi_get_transport(m) == KILN_MPI_TRANSPORT_NCCL);
    kiln_dtype dts[] = { KILN_FLOAT32, KILN_FLOAT64, KILN_INT32, KILN_INT64, KILN_UINT8 };
    kiln_mpi_op ops[] = { KILN_MPI_SUM, KILN_MPI_MIN, KILN_MPI_MAX };
    size_t sizes[] = { 0, 1, 1000, 65537 };
    for (size_t di = 0; di < 5; di++)
        for (size_t oi = 0; oi < 3; oi++)
            for (size_t si = 0; si < 4; si++) {
                kiln_dtype d = dts[di];
                size_t n = sizes[si];
                kiln_array *a = make(m, d, n, R);
                kiln_event *e = NULL;
                if (CHECK_OK(kiln_mpi_allreduce(m, NULL, a, ops[oi], 0, NULL, &e)))
                    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
                kiln_event_release(e);
                double *got = readback(m, a, d, n);
                int bad = 0;
                for (size_t i = 0; i < n; i++) {
                    double want = input(d, 0, i);
                    for (int r = 1; r < P; r++)
                        want = fold(ops[oi], want, input(d, r, i));
                    bad += got[i] != wrap(d, want);
                }
                CHECK_MSG(bad == 0, "nccl allreduce %s op %d n=%zu: %d wrong", kiln_dtype_name(d),
                          (int)ops[oi], n, bad);
                free(got);
                kiln_array_release(a);
            }
    /* broadcast, all-gather, reduce-scatter */
    size_t n = 4099;
    kiln_array *a = make(m, KILN_FLOAT32, n, R), *g = NULL, *rs = make(m, KILN_FLOAT32, 7, R);
    size_t gn = n * (size_t)P;
    CHECK_OK(kiln_array_empty(kiln_mpi_context(m), KILN_FLOAT32, 1, &gn, &g));
    kiln_array *big = make(m, KILN_FLOAT32, 7 * (size_t)P, R);
    kiln_event *e = NULL;
    CHECK_OK(kiln_mpi_allgather(m, NULL, a, g, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    double *got = readback(m, g, KILN_FLOAT32, gn);
    int bad = 0;
    for (size_t i = 0; i < gn; i++)
        bad += got[i] != input(KILN_FLOAT32, (int)(i / n), i % n);
    CHECK_MSG(bad == 0, "nccl allgather: %d wrong", bad);
    free(got);
    CHECK_OK(kiln_mpi_reduce_scatter(m, NULL, big, rs, KILN_MPI_SUM, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    got = readback(m, rs, KILN_FLOAT32, 7);
    bad = 0;
    for (size_t i = 0; i < 7; i++) {
        double want = 0;
        for (int r = 0; r < P; r++)
            want += input(KILN_FLOAT32, r, (size_t)R * 7 + i);
        bad += got[i] != want;
    }
    CHECK_MSG(bad == 0, "nccl reduce_scatter: %d wrong", bad);
    free(got);
    CHECK_OK(kiln_mpi_broadcast(m, NULL, a, 0, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    got = readback(m, a, KILN_FLOAT32, n);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != input(KILN_FLOAT32, 0, i);
    CHECK_MSG(bad == 0, "nccl broadcast: %d wrong", bad);
    free(got);
    /* all-to-all: grouped sends and receives; in place refused */
    size_t tn = 5 * (size_t)P;
    kiln_array *ta = make(m, KILN_FLOAT32, tn, R), *tb = NULL;
    CHECK_OK(kiln_array_empty(kiln_mpi_context(m), KILN_FLOAT32, 1, &tn, &tb));
    CHECK_OK(kiln_mpi_alltoall(m, NULL, ta, tb, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    got = readback(m, tb, KILN_FLOAT32, tn);
    bad = 0;
    for (int r = 0; r < P; r++)
        for (size_t i = 0; i < 5; i++)
            bad += got[(size_t)r * 5 + i] != input(KILN_FLOAT32, r, (size_t)R * 5 + i);
    CHECK_MSG(bad == 0, "nccl alltoall: %d wrong", bad);
    free(got);
    CHECK_STATUS(kiln_mpi_alltoall(m, NULL, ta, ta, 0, NULL, &e), KILN_ERROR_UNSUPPORTED);
    KT_RELEASE(ta, tb);
    /* collectives NCCL lacks take the staged path on an NCCL communicator,
     * in order with the NCCL ones: a gather to rank 0, then a job (sort) */
    kiln_array *gs = make(m, KILN_INT32, 9, R), *gr = NULL;
    size_t gn9 = 9 * (size_t)P;
    if (R == 0)
        CHECK_OK(kiln_array_empty(kiln_mpi_context(m), KILN_INT32, 1, &gn9, &gr));
    CHECK_OK(kiln_mpi_gather(m, NULL, gs, gr, 0, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "nccl gather: %s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    if (R == 0) {
        got = readback(m, gr, KILN_INT32, gn9);
        bad = 0;
        for (size_t i = 0; i < gn9; i++)
            bad += got[i] != input(KILN_INT32, (int)(i / 9), i % 9);
        CHECK_MSG(bad == 0, "nccl communicator, staged gather: %d wrong", bad);
        free(got);
    }
    KT_RELEASE(gs, gr);
    int32_t sh[5] = { 4, -1, 3, 3, 0 }, sb[5];
    kiln_mpi_darray *sd = NULL;
    CHECK_OK(
        kiln_mpi_darray_scatter(m, NULL, KILN_INT32, 5, R == 0 ? sh : NULL, 0, 0, NULL, &e, &sd));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    CHECK_MSG(kiln_mpi_darray_sort(m, NULL, sd) == KILN_OK, "nccl communicator, sort: %s",
              kiln_mpi_last_error_message());
    CHECK_OK(kiln_mpi_darray_gather(m, NULL, sd, R == 0 ? sb : NULL, 0, 0, NULL, &e));
    CHECK_OK(kiln_mpi_wait(m, e));
    kiln_event_release(e);
    if (R == 0)
        CHECK(sb[0] == -1 && sb[1] == 0 && sb[2] == 3 && sb[3] == 3 && sb[4] == 4);
    kiln_mpi_darray_release(sd);
    /* ordered on the host: a collective behind a user event not yet set
     * waits (and lets a new kernel be built meanwhile), then runs; one
     * behind a failed event fails as EVENT_FAILED on this rank and leaves
     * the communicator usable */
    kiln_event *ue = NULL;
    CHECK_OK(kiln_event_create_user(kiln_mpi_context(m), &ue));
    kiln_array *w = make(m, KILN_FLOAT64, 513, R);
    CHECK_OK(kiln_mpi_allreduce(m, NULL, w, KILN_MPI_SUM, 1, &ue, &e));
    usleep(50 * 1000);
    kiln_event_state es = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(e, &es));
    CHECK_MSG(es != KILN_EVENT_COMPLETE && es != KILN_EVENT_ERROR,
              "a collective behind an unset user event ended (state %d)", (int)es);
    kiln_queue *side = NULL;
    CHECK_OK(
        kiln_queue_create(kiln_mpi_context(m), kiln_mpi_device(m), KILN_QUEUE_IN_ORDER, &side));
    kiln_array *prod_in = make(m, KILN_INT16, 37, R);
    int16_t prod = 0;
    CHECK_OK(kiln_array_reduce(side, KILN_REDUCE_MAX, prod_in, &prod));
    CHECK(prod == 11 || P > 1); /* input's largest value is 23 - 1 - 11 */
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_COMPLETE));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "%s", kiln_mpi_last_error_message());
    kiln_event_release(e);
    got = readback(m, w, KILN_FLOAT64, 513);
    bad = 0;
    for (size_t i = 0; i < 513; i++) {
        double want = 0;
        for (int r = 0; r < P; r++)
            want += input(KILN_FLOAT64, r, i);
        bad += got[i] != want;
    }
    CHECK_MSG(bad == 0, "nccl allreduce behind a user event: %d wrong", bad);
    free(got);
    kiln_event_release(ue);
    CHECK_OK(kiln_event_create_user(kiln_mpi_context(m), &ue));
    CHECK_OK(kiln_mpi_allreduce(m, NULL, w, KILN_MPI_SUM, 1, &ue, &e));
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_mpi_wait(m, e), KILN_ERROR_EVENT_FAILED);
    kiln_event_release(e);
    kiln_event_release(ue);
    CHECK_OK(kiln_mpi_allreduce(m, NULL, a, KILN_MPI_MAX, 0, NULL, &e));
    CHECK_MSG(kiln_mpi_wait(m, e) == KILN_OK, "after a failed collective: %s",
              kiln_mpi_last_error_message());
    kiln_event_release(e);
    kiln_queue_release(side);
    KT_RELEASE(w, prod_in);
    /* NCCL has no 16-bit integers */
    kiln_array *s16 = make(m, KILN_INT16, 5, R);
    CHECK_STATUS(kiln_mpi_allreduce(m, NULL, s16, KILN_MPI_SUM, 0, NULL, &e),
                 KILN_ERROR_UNSUPPORTED);
    KT_RELEASE(s16, a, g, rs, big);
    printf("rank %d: NCCL transport, %d ranks\n", R, P);
    kiln_mpi_release(m);
    MPI_Finalize();
    return kt_report();
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "threadlevel")) {
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &prov);
        kiln_mpi *m = NULL;
        if (prov < MPI_THREAD_MULTIPLE) {
            CHECK_STATUS(kiln_mpi_create(MPI_COMM_WORLD, NULL, &m), KILN_ERROR_UNSUPPORTED);
            CHECK(m == NULL);
            CHECK_MSG(strstr(kiln_mpi_last_error_message(), "MPI_THREAD_SERIALIZED"), "%s",
                      kiln_mpi_last_error_message());
        } else {
            CHECK_MSG(0, "MPI gave MPI_THREAD_MULTIPLE when asked for less");
        }
        int fin = 1;
        MPI_Finalized(&fin);
        CHECK(!fin);
        MPI_Finalize();
        return kt_report();
    }
    if (!strcmp(mode, "kill")) {
        /* rank 1 dies (SIGKILL) while rank 0 waits in a collective:
         * mpirun must end the job (tests/mpi_kill_test.sh checks how fast
         * and that it names the rank) */
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
        kiln_mpi *m = NULL;
        if (kiln_mpi_create(MPI_COMM_WORLD, NULL, &m) != KILN_OK)
            return 1;
        R = kiln_mpi_rank(m);
        kiln_array *a = make(m, KILN_FLOAT32, 1000, R);
        if (R == 1) {
            usleep(200 * 1000);
            raise(SIGKILL);
        }
        kiln_event *e = NULL;
        kiln_mpi_allreduce(m, NULL, a, KILN_MPI_SUM, 0, NULL, &e);
        kiln_status st = kiln_mpi_wait(m, e);
        fprintf(stderr, "rank %d: the collective ended with %s: %s\n", R, kiln_status_name(st),
                kiln_mpi_last_error_message());
        return 3;
    }
    if (!strcmp(mode, "nccl")) {
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
        return run_nccl();
    }
    int selfinit = !strcmp(mode, "selfinit");
    if (!selfinit) {
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    }
    kiln_mpi *m = NULL;
    /* small chunks, so that every collective above 64 elements is pipelined */
    kiln_status st = kiln_mpi_create(MPI_COMM_WORLD, &KILN_MPI_OPTS(.chunk_bytes = 256), &m);
    if (st == KILN_ERROR_NO_DEVICE || st == KILN_ERROR_NO_RUNTIME)
        KT_SKIP("no device: %s", kiln_mpi_last_error_message());
    CHECK_MSG(st == KILN_OK, "kiln_mpi_create: %s", kiln_mpi_last_error_message());
    if (st != KILN_OK)
        return kt_report();
    R = kiln_mpi_rank(m);
    P = kiln_mpi_size(m);
    CHECK(kiln_mpi_get_transport(m) == KILN_MPI_TRANSPORT_STAGED);
    /* Debian's Open MPI is built without CUDA (KT_MPI_CUDA_AWARE=1 where
     * the MPI under test is CUDA-aware) */
    CHECK(kiln_mpi_cuda_aware(m) == (getenv("KT_MPI_CUDA_AWARE") ? 1 : 0));
    CHECK(kiln_mpi_cuda_aware(NULL) == 0);
    {
        /* MPI takes the host backend's memory directly; PoCL's is staged */
        kiln_device_info di;
        CHECK_OK(kiln_device_get_info(kiln_mpi_device(m), &di));
        const char *dir = getenv("KILN_MPI_DIRECT");
        int want = !(dir && !strcmp(dir, "0")) &&
                   (di.backend == KILN_BACKEND_HOST ||
                    (di.backend == KILN_BACKEND_CUDA && kiln_mpi_cuda_aware(m)));
        CHECK_MSG(kiln_mpi_direct(m) == want, "direct %d on %s", kiln_mpi_direct(m), di.id);
        CHECK(kiln_mpi_direct(NULL) == 0);
    }
    CHECK(kiln_mpi_timeout_ms(m) == 60000 || getenv("KILN_MPI_TIMEOUT_MS"));
    check_device(m);
    if (phase("test_allreduce"))
        test_allreduce(m);
    if (phase("test_broadcast_gather"))
        test_broadcast_gather(m);
    if (phase("test_p2p"))
        test_p2p(m);
    if (!selfinit) {
        if (phase("test_darray"))
            test_darray(m);
        if (phase("test_rows"))
            test_rows(m);
        if (phase("test_workloads"))
            test_workloads(m);
        if (phase("test_sort"))
            test_sort(m);
        if (phase("test_redistribute"))
            test_redistribute(m);
        if (phase("test_user_reduction"))
            test_user_reduction(m);
        if (phase("test_jobs_async"))
            test_jobs_async(m);
        if (phase("test_random"))
            test_random(m);
        if (phase("test_mismatch"))
            test_mismatch(m);
        if (phase("test_bad_input"))
            test_bad_input(m);
    }
    kiln_mpi_release(m);
    /* NCCL asked for on a CPU device, or by ranks sharing one GPU (the
     * GPU machine's cuda:0): refused on every rank, nothing left */
    if (!selfinit) {
        kiln_mpi *n2 = NULL;
        CHECK_STATUS(kiln_mpi_create(MPI_COMM_WORLD,
                                     &KILN_MPI_OPTS(.transport = KILN_MPI_TRANSPORT_NCCL), &n2),
                     KILN_ERROR_UNSUPPORTED);
        CHECK(n2 == NULL);
        CHECK_MSG(strstr(kiln_mpi_last_error_message(), "not a CUDA device") ||
                      strstr(kiln_mpi_last_error_message(), "ranks share GPU"),
                  "%s", kiln_mpi_last_error_message());
    }
    int fin = 0;
    MPI_Finalized(&fin);
    if (selfinit) {
        CHECK_MSG(fin, "kiln initialised MPI and should have finalised it");
    } else {
        CHECK_MSG(!fin, "kiln finalised an MPI it did not initialise");
        if (phase("test_timeout"))
            test_timeout();
        MPI_Finalize();
    }
    return kt_report();
}
