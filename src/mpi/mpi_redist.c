/* Redistribution of a distributed array onto another layout (1-D blocks,
 * row blocks, another halo, another number of ranks), and reductions of a
 * user's kiln_reduction across the ranks. Both run as jobs (mpi_jobs.c):
 * their MPI calls are made on the job thread, on the kiln_mpi's
 * communicator for such calls (m->direct), non-blocking and bounded by
 * the deadline, as the sort's. The _check functions run on the caller's
 * thread first, so bad arguments fail the call, not its event. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* A blocking call's MPI request passed the deadline: the communicator is
 * broken (MPI cannot cancel it) */
static kiln_status deadline_passed(kiln_mpi *m, const char *call, const char *what) {
    atomic_store(&m->broken, 1);
    return kmpi_error(KILN_ERROR_TIMEOUT,
                      "%s: rank %d: %s did not complete within the deadline of %llu ms; the "
                      "communicator is now broken",
                      call, m->rank, what, (unsigned long long)m->timeout_ms);
}

/* Every rank's words all-gathered into *hall (P * nw, malloc'ed);
 * KILN_ERROR_TIMEOUT (and the communicator broken) past the deadline. */
static kiln_status agree(kiln_mpi *m, const char *call, const int64_t *hdr, int nw,
                         uint64_t deadline, int64_t **hall) {
    *hall = calloc((size_t)m->size * (size_t)nw, sizeof **hall);
    if (!*hall)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Iallgather(hdr, nw, MPI_INT64_T, *hall, nw, MPI_INT64_T, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline)) {
        *hall = NULL; /* the request still writes into it: left to MPI */
        return deadline_passed(m, call, "the agreement");
    }
    return KILN_OK;
}

static kiln_status check_mpi(kiln_mpi *m, kiln_queue **q, const char *call) {
    if (!m)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: mpi is NULL", call);
    if (!*q)
        *q = m->queue;
    if (kiln_queue_context(*q) != m->ctx)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: the queue belongs to another context", call);
    if (atomic_load(&m->broken))
        return kmpi_error(KILN_ERROR_WRONG_STATE,
                          "%s: the communicator is broken (an earlier collective timed out)", call);
    return KILN_OK;
}

kiln_status kiln_mpi_darray_create(kiln_mpi *m, kiln_dtype dt, const kiln_mpi_layout *layout,
                                   kiln_mpi_darray **out) {
    static const char call[] = "kiln_mpi_darray_create";
    if (out)
        *out = NULL;
    if (!layout)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: layout is NULL", call);
    if (layout->struct_size < sizeof(kiln_mpi_layout))
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: layout->struct_size is %zu (make it with KILN_MPI_LAYOUT(...))",
                          call, layout->struct_size);
    if (!layout->cols && layout->halo)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: a halo of %zu rows on a 1-D layout (cols = 0); halos are for row "
                          "blocks",
                          call, layout->halo);
    return kmpi_darray_make(m, dt, layout->rows, layout->cols ? layout->cols : 1, layout->halo,
                            layout->cols != 0, layout->ranks, call, out);
}

int kiln_mpi_darray_ranks(const kiln_mpi_darray *d) {
    return d ? d->ranks : 0;
}

/* [lo, hi) of the global elements rank r owns in d */
static void owned(const kiln_mpi_darray *d, int r, size_t *lo, size_t *hi) {
    size_t s, c;
    kmpi_block_of(d->n, d->ranks, r, &s, &c);
    *lo = s * d->cols;
    *hi = (s + c) * d->cols;
}

static void describe(char *buf, size_t len, const int64_t *h) {
    if (h[3])
        snprintf(buf, len, "%lld %s elements, %lld x %lld row blocks on %lld ranks -> ",
                 (long long)h[1], kiln_dtype_name((kiln_dtype)h[0]), (long long)(h[1] / h[3]),
                 (long long)h[3], (long long)h[2]);
    else
        snprintf(buf, len, "%lld %s elements, 1-D blocks on %lld ranks -> ", (long long)h[1],
                 kiln_dtype_name((kiln_dtype)h[0]), (long long)h[2]);
    size_t at = strlen(buf);
    if (h[5])
        snprintf(buf + at, len - at, "%lld x %lld row blocks on %lld ranks",
                 (long long)(h[1] / h[5]), (long long)h[5], (long long)h[4]);
    else
        snprintf(buf + at, len - at, "1-D blocks on %lld ranks", (long long)h[4]);
}

/* the owned rows (or elements) of d's local array: a view, or d->local retained */
static kiln_status owned_view(kiln_mpi_darray *d, kiln_array **v) {
    if (!d->two_d || d->halo == 0) {
        *v = d->local;
        return kiln_array_retain(d->local);
    }
    return kmpi_rows_view(d, d->halo, d->count, v);
}

kiln_status kmpi_redistribute_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                    kiln_mpi_darray *dst) {
    static const char call[] = "kiln_mpi_darray_redistribute";
    kiln_status st = check_mpi(m, &q, call);
    if (st != KILN_OK)
        return st;
    if (!src || !dst)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, src ? "dst" : "src");
    if (src->m != m || dst->m != m)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: %s belongs to another kiln_mpi", call,
                          src->m != m ? "src" : "dst");
    return KILN_OK;
}

/* On the job thread, after kmpi_redistribute_check. */
kiln_status kmpi_redistribute_run(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                  kiln_mpi_darray *dst) {
    static const char call[] = "kiln_mpi_darray_redistribute";
    kiln_status st = KILN_OK;
    size_t total = src->n * src->cols, es = kiln_dtype_size(src->dt);
    int P = m->size;
    uint64_t deadline = kmpi_now_ns() + m->timeout_ms * 1000000ull;
    int64_t hdr[6] = { src->dt,    (int64_t)total,
                       src->ranks, src->two_d ? (int64_t)src->cols : 0,
                       dst->ranks, dst->two_d ? (int64_t)dst->cols : 0 };
    int64_t *hall = NULL;
    if ((st = agree(m, call, hdr, 6, deadline, &hall)) != KILN_OK)
        return st;
    for (int r = 1; r < P && st == KILN_OK; r++)
        if (memcmp(hall, hall + 6 * r, 6 * sizeof *hall) != 0) {
            char a[200], b[200];
            describe(a, sizeof a, hall);
            describe(b, sizeof b, hall + 6 * r);
            st = kmpi_error(KILN_ERROR_MISMATCH,
                            "%s: the ranks disagree: rank 0 has %s, rank %d %s", call, a, r, b);
        }
    free(hall);
    if (st != KILN_OK)
        return st;
    /* the same on every rank from here: refusals are collective */
    if (dst->dt != src->dt)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: src is %s, dst %s", call,
                          kiln_dtype_name(src->dt), kiln_dtype_name(dst->dt));
    if (dst->n * dst->cols != total)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: src has %zu elements, dst %zu", call, total,
                          dst->n * dst->cols);
    if (total > (size_t)INT_MAX)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts", call,
                          total);
    size_t slo, shi, dlo, dhi;
    owned(src, m->rank, &slo, &shi);
    owned(dst, m->rank, &dlo, &dhi);
    int *sc = calloc((size_t)P * 4, sizeof *sc), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    /* one allocation, the receive part one byte past the send part: equal
     * pointers (both parts empty) would make Open MPI's non-blocking
     * all-to-all take the call for MPI_IN_PLACE and run another schedule
     * than the other ranks */
    char *sbuf = malloc((shi - slo + dhi - dlo) * es + 2), *rbuf = sbuf + (shi - slo) * es + 1;
    kiln_array *v[2] = { NULL, NULL }; /* src's owned part, dst's */
    if (!sc || !sbuf) {
        st = kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
        goto out;
    }
    for (int p = 0; p < P; p++) {
        size_t lo, hi, a, b;
        owned(dst, p, &lo, &hi); /* what p will own, from what I own */
        a = lo > slo ? lo : slo;
        b = hi < shi ? hi : shi;
        sc[p] = b > a ? (int)(b - a) : 0;
        sd[p] = b > a ? (int)(a - slo) : 0;
        owned(src, p, &lo, &hi); /* what p owns, of what I will */
        a = lo > dlo ? lo : dlo;
        b = hi < dhi ? hi : dhi;
        rc[p] = b > a ? (int)(b - a) : 0;
        rd[p] = b > a ? (int)(a - dlo) : 0;
    }
    if (shi > slo) {
        if ((st = owned_view(src, &v[0])) == KILN_OK)
            st = kiln_array_read(q, v[0], sbuf);
        if (st != KILN_OK) {
            kmpi_error_kiln(st, call);
            /* the others wait in the exchange: take part, then fail */
        }
    }
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ialltoallv(sbuf, sc, sd, kmpi_mpi_dtype(src->dt), rbuf, rc, rd, kmpi_mpi_dtype(src->dt),
                   m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline)) {
        st = deadline_passed(m, call, "the all-to-all");
        sc = NULL, sbuf = NULL; /* MPI may still use them */
        goto out;
    }
    if (st == KILN_OK && dhi > dlo) {
        if ((st = owned_view(dst, &v[1])) == KILN_OK)
            st = kiln_array_write(q, v[1], rbuf);
        if (st != KILN_OK)
            kmpi_error_kiln(st, call);
    }
out:
    for (int i = 0; i < 2; i++)
        kiln_array_release(v[i]);
    free(sc);
    free(sbuf);
    return st;
}

/* ------------------------------------------------ user-defined reductions */

/* The combining reduction reads the partials from an array: of the out
 * type's dtype (P elements) for a scalar out type; for a struct, whose
 * pointer kiln cannot check, a UINT8 array of P * out_size bytes over a
 * range of as many, the partial at every out_size-th index and the neutral
 * element elsewhere (the generators want arrays of n elements). */
struct kiln_mpi_reduction {
    atomic_int refs; /* the caller's and each job's */
    kiln_mpi *m;
    kiln_reduction *local, *combine;
    size_t out_size;
    kiln_dtype parts_dtype; /* 0: a struct, bytes */
};

/* a scalar out type's size and dtype (0 for a struct) */
static size_t scalar_type(const char *t, kiln_dtype *dt) {
    static const struct {
        const char *name;
        size_t size;
        kiln_dtype dt;
    } k[] = { { "char", 1, KILN_INT8 },     { "uchar", 1, KILN_UINT8 }, { "short", 2, KILN_INT16 },
              { "ushort", 2, KILN_UINT16 }, { "int", 4, KILN_INT32 },   { "uint", 4, KILN_UINT32 },
              { "float", 4, KILN_FLOAT32 }, { "long", 8, KILN_INT64 },  { "ulong", 8, KILN_UINT64 },
              { "double", 8, KILN_FLOAT64 } };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (!strcmp(t, k[i].name)) {
            *dt = k[i].dt;
            return k[i].size;
        }
    *dt = (kiln_dtype)0;
    return 0;
}

void kmpi_reduction_retain(kiln_mpi_reduction *r) {
    atomic_fetch_add(&r->refs, 1);
}

void kiln_mpi_reduction_release(kiln_mpi_reduction *r) {
    if (!r || !kmpi_unref(&r->refs))
        return;
    kiln_reduction_release(r->local);
    kiln_reduction_release(r->combine);
    free(r);
}

kiln_status kiln_mpi_reduction_create(kiln_mpi *m, const kiln_reduction_desc *desc,
                                      kiln_mpi_reduction **out) {
    static const char call[] = "kiln_mpi_reduction_create";
    if (out)
        *out = NULL;
    if (!m || !desc || !out)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call,
                          !m      ? "mpi"
                          : !desc ? "desc"
                                  : "reduction");
    if (desc->struct_size < sizeof(kiln_reduction_desc) || !desc->out_type || !desc->neutral ||
        !desc->reduce)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: desc needs struct_size (KILN_REDUCTION_DESC), out_type, neutral "
                          "and reduce",
                          call);
    if (desc->initial)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: desc->initial (\"%s\") would be folded in on every rank; fold it "
                          "into the result yourself",
                          call, desc->initial);
    kiln_dtype pdt;
    size_t ss = scalar_type(desc->out_type, &pdt);
    size_t os = desc->out_size ? desc->out_size : ss;
    if (!os)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: out_type \"%s\" is not a scalar type name kiln_mpi knows; give "
                          "out_size",
                          call, desc->out_type);
    kiln_mpi_reduction *r = calloc(1, sizeof *r);
    if (r)
        atomic_init(&r->refs, 1);
    char *args = malloc(strlen(desc->out_type) + 40);
    char *map = malloc(strlen(desc->neutral) + 80);
    if (!r || !args || !map) {
        free(r);
        free(args);
        free(map);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    }
    r->m = m;
    r->out_size = os;
    r->parts_dtype = ss == os ? pdt : (kiln_dtype)0;
    sprintf(args, "const %s *kmpi_parts", desc->out_type);
    if (r->parts_dtype)
        sprintf(map, "kmpi_parts[i]");
    else
        sprintf(map, "i %% %zu == 0 ? kmpi_parts[i / %zu] : (%s)", os, os, desc->neutral);
    kiln_reduction_desc c = *desc;
    c.arguments = args;
    c.map = map;
    c.name = "kiln_mpi_combine";
    kiln_status st = kiln_reduction_create(m->ctx, desc, &r->local);
    if (st == KILN_OK)
        st = kiln_reduction_create(m->ctx, &c, &r->combine);
    free(args);
    free(map);
    if (st != KILN_OK) {
        kiln_mpi_reduction_release(r);
        return kmpi_error_kiln(st, call);
    }
    *out = r;
    return KILN_OK;
}

kiln_status kmpi_reduction_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r,
                                 void *host_result) {
    static const char call[] = "kiln_mpi_reduction_allreduce";
    kiln_status st = check_mpi(m, &q, call);
    if (st != KILN_OK)
        return st;
    if (!r || !host_result)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call,
                          r ? "host_result" : "reduction");
    if (r->m != m)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: the reduction is of another kiln_mpi", call);
    return KILN_OK;
}

/* On the job thread, after kmpi_reduction_check. */
kiln_status kmpi_reduction_run(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r, size_t n,
                               size_t nargs, const kiln_arg *args, void *host_result) {
    static const char call[] = "kiln_mpi_reduction_allreduce";
    kiln_status st = KILN_OK;
    int P = m->size;
    size_t os = r->out_size;
    uint64_t deadline = kmpi_now_ns() + m->timeout_ms * 1000000ull;
    char *mine = calloc((size_t)P + 1, os), *parts = mine ? mine + os : NULL;
    kiln_array *pa = NULL;
    if (!mine)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    /* the local part (the neutral element where n = 0); a failure here
     * still takes part in the exchange, which the others wait in */
    kiln_status local = kiln_reduction_run(q, r->local, n, nargs, args, mine);
    if (local != KILN_OK)
        kmpi_error_kiln(local, call);
    /* the ranks agree on the partial's size, and say whether theirs failed */
    int64_t hdr[2] = { (int64_t)os, local != KILN_OK }, *hall = NULL;
    if ((st = agree(m, call, hdr, 2, deadline, &hall)) != KILN_OK)
        goto out;
    for (int p = 0; p < P && st == KILN_OK; p++)
        if (hall[2 * p] != hall[0])
            st = kmpi_error(KILN_ERROR_MISMATCH,
                            "%s: the ranks disagree: rank 0's reduction has partials of %lld "
                            "bytes, rank %d's %lld",
                            call, (long long)hall[0], p, (long long)hall[2 * p]);
        else if (hall[2 * p + 1] && local == KILN_OK)
            st = kmpi_error(KILN_ERROR_EVENT_FAILED,
                            "%s: rank %d's local reduction failed (its message says why)", call, p);
    free(hall);
    if (local != KILN_OK)
        st = local; /* its own message stays */
    if (st != KILN_OK)
        goto out;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Iallgather(mine, (int)os, MPI_BYTE, parts, (int)os, MPI_BYTE, m->direct, &req);
    if (!kmpi_wait_deadline(&req, deadline)) {
        st = deadline_passed(m, call, "the partials' all-gather");
        mine = NULL; /* left to MPI */
        goto out;
    }
    /* the ranks' partials combined by the same reduce, in rank order */
    size_t pn = r->parts_dtype ? (size_t)P : (size_t)P * os;
    st = kiln_array_from_host(m->ctx, r->parts_dtype ? r->parts_dtype : KILN_UINT8, 1, &pn, parts,
                              &pa);
    if (st == KILN_OK) {
        kiln_arg a = KILN_ARG_ARRAY(pa);
        st = kiln_reduction_run(q, r->combine, pn, 1, &a, host_result);
    }
    if (st != KILN_OK)
        kmpi_error_kiln(st, call);
out:
    kiln_array_release(pa);
    free(mine);
    return st;
}
