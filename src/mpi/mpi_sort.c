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

/* One sort's state: the ranks, the deadline and the buffers, all freed by
 * sort_job_free. sc/sd and rc/rd are the byte counts and displacements
 * sent and received by an all-to-all. */
typedef struct {
    kiln_mpi *m;
    kiln_queue *q;
    kiln_mpi_darray *d;
    const char *call;
    int P, R;
    size_t es, c; /* element size, this rank's element count */
    size_t nb;    /* this rank's bucket, in elements */
    uint64_t deadline;
    char *keys, *recv, *out;
    uint64_t *samp, *all, *spl;
    int *sc, *sd, *rc, *rd;
    kiln_array *bucket;
} sort_job;

static kiln_status sort_alloc(sort_job *s) {
    size_t P = (size_t)s->P;
    s->keys = malloc(s->c * s->es + 1);
    s->samp = calloc(P, 2 * sizeof *s->samp);
    s->all = calloc(P * P, 2 * sizeof *s->all);
    s->spl = calloc(P, sizeof *s->spl);
    s->sc = calloc(P, sizeof *s->sc), s->sd = calloc(P, sizeof *s->sd);
    s->rc = calloc(P, sizeof *s->rc), s->rd = calloc(P, sizeof *s->rd);
    if (!s->keys || !s->samp || !s->all || !s->spl || !s->sc || !s->sd || !s->rc || !s->rd)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", s->call);
    return KILN_OK;
}

static void sort_job_free(sort_job *s) {
    kiln_array_release(s->bucket);
    free(s->keys);
    free(s->recv);
    free(s->out);
    free(s->samp);
    free(s->all);
    free(s->spl);
    free(s->sc);
    free(s->sd);
    free(s->rc);
    free(s->rd);
}

/* Waits for req until the sort's deadline; past it, the communicator is
 * broken. */
static kiln_status sort_wait(sort_job *s, MPI_Request *req, const char *what) {
    if (kmpi_wait_deadline(req, s->deadline))
        return KILN_OK;
    atomic_store(&s->m->broken, 1);
    return kmpi_error(KILN_ERROR_TIMEOUT,
                      "%s: rank %d: %s did not complete within the deadline of %llu ms; the "
                      "communicator is now broken",
                      s->call, s->R, what, (unsigned long long)s->m->timeout_ms);
}

/* The all-to-all of the byte counts sc into rc; rd gets the receive
 * displacements and *total their sum. */
static kiln_status sort_exchange_counts(sort_job *s, size_t *total) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ialltoall(s->sc, 1, MPI_INT, s->rc, 1, MPI_INT, s->m->direct, &req);
    kiln_status st = sort_wait(s, &req, "the all-to-all of the counts");
    if (st != KILN_OK)
        return st;
    size_t t = 0;
    for (int j = 0; j < s->P; j++) {
        s->rd[j] = (int)t;
        t += (size_t)s->rc[j];
    }
    *total = t;
    return KILN_OK;
}

/* The all-to-all of the bytes that sc/sd and rc/rd describe. */
static kiln_status sort_exchange_bytes(sort_job *s, const char *from, char *to, const char *what) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ialltoallv(from, s->sc, s->sd, MPI_BYTE, to, s->rc, s->rd, MPI_BYTE, s->m->direct, &req);
    return sort_wait(s, &req, what);
}

/* 0. the ranks agree on the call (dtype and length), which MPI's int
 * counts must hold */
static kiln_status sort_agree(sort_job *s) {
    int P = s->P;
    int64_t hdr[3] = { 1, s->d->dt, (int64_t)s->d->n }, *hall = calloc((size_t)P * 3, sizeof *hall);
    if (!hall)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", s->call);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Iallgather(hdr, 3, MPI_INT64_T, hall, 3, MPI_INT64_T, s->m->direct, &req);
    kiln_status st = sort_wait(s, &req, "the agreement");
    for (int r = 1; st == KILN_OK && r < P; r++)
        if (memcmp(hall, hall + 3 * r, 3 * sizeof *hall) != 0)
            st = kmpi_error(KILN_ERROR_MISMATCH,
                            "%s: the ranks disagree: rank 0 sorts %lld %s elements, rank %d "
                            "%lld %s elements",
                            s->call, (long long)hall[2], kiln_dtype_name((kiln_dtype)hall[1]), r,
                            (long long)hall[3 * r + 2],
                            kiln_dtype_name((kiln_dtype)hall[3 * r + 1]));
    free(hall);
    if (st == KILN_OK && s->d->n > (size_t)INT_MAX / s->es)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts",
                        s->call, s->d->n);
    return st;
}

/* 2. samples (valid flag, bits) of the sorted keys and splitters */
/* 1. the local sort */
static kiln_status sort_local(sort_job *s) {
    return sort_device(s->q, s->d->local, s->keys, s->c, s->call);
}

static kiln_status sort_splitters(sort_job *s) {
    int P = s->P;
    size_t c = s->c;
    for (int i = 0; i < P - 1; i++) {
        s->samp[2 * i] = c > 0;
        s->samp[2 * i + 1] =
            c ? order_bits(s->d->dt, s->keys + ((size_t)(i + 1) * c / (size_t)P) * s->es) : 0;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Iallgather(s->samp, 2 * (P - 1), MPI_UINT64_T, s->all, 2 * (P - 1), MPI_UINT64_T,
                   s->m->direct, &req);
    kiln_status st = sort_wait(s, &req, "the samples' all-gather");
    if (st != KILN_OK)
        return st;
    uint64_t *all = s->all;
    size_t ns = 0;
    for (size_t i = 0; i < (size_t)P * (size_t)(P - 1); i++)
        if (all[2 * i])
            all[ns++] = all[2 * i + 1];
    qsort(all, ns, sizeof *all, cmp_u64);
    for (int j = 0; j < P - 1; j++)
        s->spl[j] = ns ? all[(size_t)(j + 1) * ns / (size_t)P] : UINT64_MAX;
    return KILN_OK;
}

/* 3. cut at the splitters (keys <= spl[j] and > spl[j-1] go to rank j)
 * and exchange the pieces: recv gets this rank's bucket */
static kiln_status sort_to_buckets(sort_job *s) {
    size_t at = 0, es = s->es, c = s->c;
    for (int j = 0; j < s->P; j++) {
        size_t b = at;
        while (b < c && (j == s->P - 1 || order_bits(s->d->dt, s->keys + b * es) <= s->spl[j]))
            b++;
        s->sc[j] = (int)((b - at) * es);
        s->sd[j] = (int)(at * es);
        at = b;
    }
    size_t nb = 0;
    kiln_status st = sort_exchange_counts(s, &nb);
    if (st != KILN_OK)
        return st;
    s->recv = malloc(nb + 1);
    if (!s->recv)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", s->call);
    st = sort_exchange_bytes(s, s->keys, s->recv, "the all-to-all of the keys");
    s->nb = nb / es;
    return st;
}

/* 4. the bucket, sorted on the device */
static kiln_status sort_bucket(sort_job *s) {
    if (!s->nb)
        return KILN_OK;
    kiln_status st = kiln_array_from_host(s->m->ctx, s->d->dt, 1, &s->nb, s->recv, &s->bucket);
    if (st != KILN_OK) {
        kmpi_error_kiln(st, s->call);
        return st;
    }
    return sort_device(s->q, s->bucket, s->recv, s->nb, s->call);
}

/* 5. back to blocks: the bucket holds global indices [off, off + nb) */
static kiln_status sort_to_blocks(sort_job *s) {
    size_t es = s->es, c = s->c, nb = s->nb;
    uint64_t mine = nb, off = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Iexscan(&mine, &off, 1, MPI_UINT64_T, MPI_SUM, s->m->direct, &req);
    kiln_status st = sort_wait(s, &req, "the scan of the bucket sizes");
    if (st != KILN_OK)
        return st;
    if (s->R == 0)
        off = 0;
    for (int j = 0; j < s->P; j++) {
        size_t s0, cj;
        kmpi_block_of(s->d->n, s->P, j, &s0, &cj);
        size_t lo = s0 > off ? s0 : off, hi = s0 + cj < off + nb ? s0 + cj : off + nb;
        s->sc[j] = hi > lo ? (int)((hi - lo) * es) : 0;
        s->sd[j] = hi > lo ? (int)((lo - off) * es) : 0;
    }
    size_t got = 0;
    if ((st = sort_exchange_counts(s, &got)) != KILN_OK)
        return st;
    s->out = malloc(c * es + 1);
    if (!s->out || got != c * es)
        return s->out
                   ? kmpi_error(KILN_ERROR_INTERNAL, "%s: rank %d got %zu bytes for %zu elements",
                                s->call, s->R, got, c)
                   : kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", s->call);
    if ((st = sort_exchange_bytes(s, s->recv, s->out, "the all-to-all back to blocks")) != KILN_OK)
        return st;
    if (c) {
        st = kiln_array_write(s->q, s->d->local, s->out);
        if (st != KILN_OK)
            kmpi_error_kiln(st, s->call);
    }
    return st;
}

kiln_status kmpi_sort_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d) {
    static const char call[] = "kiln_mpi_darray_sort";
    if (!m || !d)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, m ? "darray" : "mpi");
    if ((q && kiln_queue_context(q) != m->ctx) || d->m != m)
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
    return KILN_OK;
}

/* Runs on the job thread (mpi_jobs.c), after kmpi_sort_check. */
kiln_status kmpi_sort_run(kiln_mpi *m, kiln_queue *q, void *arg) {
    static const char call[] = "kiln_mpi_darray_sort";
    kiln_mpi_darray *d = arg;
    sort_job s = { .m = m,
                   .q = q,
                   .d = d,
                   .call = call,
                   .P = m->size,
                   .R = m->rank,
                   .es = kiln_dtype_size(d->dt),
                   .c = d->count,
                   .deadline = kmpi_now_ns() + m->timeout_ms * 1000000ull };
    /* the stages in order, each while all before it succeeded */
    static kiln_status (*const stages[])(sort_job *) = {
        sort_alloc,      sort_agree,  sort_local,     sort_splitters,
        sort_to_buckets, sort_bucket, sort_to_blocks,
    };
    kiln_status st = KILN_OK;
    for (size_t i = 0; st == KILN_OK && i < sizeof stages / sizeof stages[0]; i++)
        st = stages[i](&s);
    sort_job_free(&s);
    return st;
}
