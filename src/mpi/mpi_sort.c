/* The global sort of a 1-D distributed array: a sample sort.
 *   1. each rank sorts its block on its device (kiln_array_sort_out);
 *   2. P-1 evenly spaced samples of every block are all-gathered, sorted,
 *      and P-1 splitters picked from them;
 *   3. each block is cut at the splitters and the pieces exchanged
 *      (all-to-all of counts, then of keys): rank r gets bucket r;
 *   4. each bucket is sorted on its device;
 *   5. the buckets, of uneven sizes, are moved back to the block layout
 *      (an exclusive scan of their sizes gives each element's global
 *      index), so that the result is the one-device sort of the whole.
 * Keys are compared on the host by their order bits (kiln's total order:
 * signed integers with the sign flipped, floats by value with -0 before +0
 * and NaNs last). The MPI calls are made from the caller's thread on a
 * communicator of their own, non-blocking with the kiln_mpi's deadline. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

static uint64_t order_bits(kiln_dtype dt, const void *p) {
    switch (dt) {
    case KILN_INT8:
        return (uint64_t)(uint8_t)(*(const int8_t *)p ^ INT8_MIN);
    case KILN_UINT8:
        return *(const uint8_t *)p;
    case KILN_INT16:
        return (uint64_t)(uint16_t)(*(const int16_t *)p ^ INT16_MIN);
    case KILN_UINT16:
        return *(const uint16_t *)p;
    case KILN_INT32:
        return (uint64_t)((uint32_t) * (const int32_t *)p ^ 0x80000000u);
    case KILN_UINT32:
        return *(const uint32_t *)p;
    case KILN_INT64:
        return (uint64_t) * (const int64_t *)p ^ 0x8000000000000000ull;
    case KILN_UINT64:
        return *(const uint64_t *)p;
    case KILN_FLOAT32: {
        float f;
        uint32_t u;
        memcpy(&f, p, 4);
        memcpy(&u, p, 4);
        if (isnan(f))
            return UINT64_MAX;
        return u & 0x80000000u ? (uint64_t)(uint32_t)~u : (uint64_t)(u | 0x80000000u);
    }
    case KILN_FLOAT64: {
        double f;
        uint64_t u;
        memcpy(&f, p, 8);
        memcpy(&u, p, 8);
        if (isnan(f))
            return UINT64_MAX;
        return u & 0x8000000000000000ull ? ~u : u | 0x8000000000000000ull;
    }
    default:
        return 0;
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int kmpi_wait_deadline(MPI_Request *req, uint64_t deadline) {
    for (;;) {
        int flag = 0;
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 1;
        if (kmpi_now_ns() > deadline)
            return 0;
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
}

static kiln_status sort_device(kiln_queue *q, kiln_array *a, void *host, size_t n,
                               const char *call) {
    if (n == 0)
        return KILN_OK;
    kiln_status st = kiln_array_sort_out(q, a, NULL, a, NULL, NULL, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_array_read(q, a, host);
    return st == KILN_OK ? st : kmpi_error_kiln(st, call);
}

kiln_status kiln_mpi_darray_sort(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d) {
    static const char call[] = "kiln_mpi_darray_sort";
    if (!m || !d)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, m ? "darray" : "mpi");
    if (!q)
        q = m->queue;
    if (kiln_queue_context(q) != m->ctx || d->m != m)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: the queue or darray is of another kiln_mpi",
                          call);
    if (atomic_load(&m->broken))
        return kmpi_error(KILN_ERROR_WRONG_STATE, "%s: the communicator is broken", call);
    kiln_dtype dt = d->dt;
    if (d->ranks != m->size)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: the darray is on %d of the %d ranks; sort takes one on every rank "
                          "(kiln_mpi_darray_redistribute it first)",
                          call, d->ranks, m->size);
    if (d->two_d || dt == KILN_FLOAT16 || dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: 1-D arrays of integers, float32 or float64 only (%s%s)", call,
                          kiln_dtype_name(dt), d->two_d ? ", row blocks" : "");
    int P = m->size, R = m->rank;
    size_t es = kiln_dtype_size(dt), c = d->count;
    uint64_t deadline = kmpi_now_ns() + m->timeout_ms * 1000000ull;
    kiln_status st = KILN_OK;
    char *keys = NULL, *recv = NULL, *out = NULL;
    uint64_t *samp = NULL, *all = NULL, *spl = NULL;
    int *sc = NULL, *sd = NULL, *rc = NULL, *rd = NULL;
    kiln_array *bucket = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype mdt = kmpi_mpi_dtype(dt);
#define FAIL_TIMEOUT(what)                                                                      \
    do {                                                                                        \
        atomic_store(&m->broken, 1);                                                            \
        st = kmpi_error(KILN_ERROR_TIMEOUT,                                                     \
                        "%s: rank %d: %s did not complete within the deadline of %llu ms; the " \
                        "communicator is now broken",                                           \
                        call, R, what, (unsigned long long)m->timeout_ms);                      \
        goto out;                                                                               \
    } while (0)

    /* 0. the ranks agree on the call */
    int64_t hdr[3] = { 1, dt, (int64_t)d->n }, *hall = calloc((size_t)P * 3, sizeof *hall);
    keys = malloc(c * es + 1);
    samp = calloc((size_t)P, 2 * sizeof *samp);
    all = calloc((size_t)P * (size_t)P, 2 * sizeof *all);
    spl = calloc((size_t)P, sizeof *spl);
    sc = calloc((size_t)P, sizeof *sc), sd = calloc((size_t)P, sizeof *sd);
    rc = calloc((size_t)P, sizeof *rc), rd = calloc((size_t)P, sizeof *rd);
    if (!hall || !keys || !samp || !all || !spl || !sc || !sd || !rc || !rd) {
        st = kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
        free(hall);
        goto out;
    }
    MPI_Iallgather(hdr, 3, MPI_INT64_T, hall, 3, MPI_INT64_T, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline)) {
        free(hall);
        FAIL_TIMEOUT("the agreement");
    }
    for (int r = 1; r < P; r++)
        if (memcmp(hall, hall + 3 * r, 3 * sizeof *hall) != 0) {
            st = kmpi_error(KILN_ERROR_MISMATCH,
                            "%s: the ranks disagree: rank 0 sorts %lld %s elements, rank %d "
                            "%lld %s elements",
                            call, (long long)hall[2], kiln_dtype_name((kiln_dtype)hall[1]), r,
                            (long long)hall[3 * r + 2],
                            kiln_dtype_name((kiln_dtype)hall[3 * r + 1]));
            break;
        }
    free(hall);
    if (st != KILN_OK)
        goto out;
    if (d->n > (size_t)INT_MAX / es) {
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts", call,
                        d->n);
        goto out;
    }

    /* 1. the local sort */
    if ((st = sort_device(q, d->local, keys, c, call)) != KILN_OK)
        goto out;

    /* 2. samples (valid flag, bits) and splitters */
    for (int i = 0; i < P - 1; i++) {
        samp[2 * i] = c > 0;
        samp[2 * i + 1] = c ? order_bits(dt, keys + ((size_t)(i + 1) * c / (size_t)P) * es) : 0;
    }
    MPI_Iallgather(samp, 2 * (P - 1), MPI_UINT64_T, all, 2 * (P - 1), MPI_UINT64_T, m->direct,
                   &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the samples' all-gather");
    size_t ns = 0;
    for (size_t i = 0; i < (size_t)P * (size_t)(P - 1); i++)
        if (all[2 * i])
            all[ns++] = all[2 * i + 1];
    qsort(all, ns, sizeof *all, cmp_u64);
    for (int j = 0; j < P - 1; j++)
        spl[j] = ns ? all[(size_t)(j + 1) * ns / (size_t)P] : UINT64_MAX;

    /* 3. cut at the splitters (keys <= spl[j] and > spl[j-1] go to rank j) */
    size_t at = 0;
    for (int j = 0; j < P; j++) {
        size_t b = at;
        while (b < c && (j == P - 1 || order_bits(dt, keys + b * es) <= spl[j]))
            b++;
        sc[j] = (int)((b - at) * es);
        sd[j] = (int)(at * es);
        at = b;
    }
    MPI_Ialltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the all-to-all of the counts");
    size_t nb = 0;
    for (int j = 0; j < P; j++) {
        rd[j] = (int)nb;
        nb += (size_t)rc[j];
    }
    recv = malloc(nb + 1);
    if (!recv) {
        st = kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
        goto out;
    }
    MPI_Ialltoallv(keys, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the all-to-all of the keys");
    nb /= es;

    /* 4. the bucket, sorted on the device */
    if (nb) {
        st = kiln_array_from_host(m->ctx, dt, 1, &nb, recv, &bucket);
        if (st != KILN_OK) {
            kmpi_error_kiln(st, call);
            goto out;
        }
        if ((st = sort_device(q, bucket, recv, nb, call)) != KILN_OK)
            goto out;
    }

    /* 5. back to blocks: the bucket holds global indices [off, off + nb) */
    uint64_t mine = nb, off = 0;
    MPI_Iexscan(&mine, &off, 1, MPI_UINT64_T, MPI_SUM, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the scan of the bucket sizes");
    if (R == 0)
        off = 0;
    for (int j = 0; j < P; j++) {
        size_t s0, cj;
        kmpi_block_of(d->n, P, j, &s0, &cj);
        size_t lo = s0 > off ? s0 : off, hi = s0 + cj < off + nb ? s0 + cj : off + nb;
        sc[j] = hi > lo ? (int)((hi - lo) * es) : 0;
        sd[j] = hi > lo ? (int)((lo - off) * es) : 0;
    }
    MPI_Ialltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the all-to-all of the counts");
    size_t got = 0;
    for (int j = 0; j < P; j++) {
        rd[j] = (int)got;
        got += (size_t)rc[j];
    }
    out = malloc(c * es + 1);
    if (!out || got != c * es) {
        st = out ? kmpi_error(KILN_ERROR_INTERNAL, "%s: rank %d got %zu bytes for %zu elements",
                              call, R, got, c)
                 : kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
        goto out;
    }
    MPI_Ialltoallv(recv, sc, sd, MPI_BYTE, out, rc, rd, MPI_BYTE, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline))
        FAIL_TIMEOUT("the all-to-all back to blocks");
    if (c) {
        st = kiln_array_write(q, d->local, out);
        if (st != KILN_OK)
            kmpi_error_kiln(st, call);
    }
out:
    (void)mdt;
    kiln_array_release(bucket);
    free(keys);
    free(recv);
    free(out);
    free(samp);
    free(all);
    free(spl);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return st;
#undef FAIL_TIMEOUT
}
