/* kiln_mpi's internals: the communicator, the progress engine's
 * operations, NCCL. Uses kiln's public API only (kiln_mpi links libkiln). */
#ifndef KILN_MPI_INTERNAL_H
#define KILN_MPI_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kiln/dlpack.h"
#include "kiln/mpi.h"

/* the words every rank of a collective exchanges before data moves */
enum { KMPI_HDR = 6 }; /* kind, dtype, count, op, root/peer, tag */

typedef enum kmpi_kind {
    KMPI_ALLREDUCE = 1,
    KMPI_BCAST,
    KMPI_ALLGATHER,
    KMPI_REDSCAT,
    KMPI_SEND,
    KMPI_RECV,
    KMPI_SCATTER,
    KMPI_GATHER,
    KMPI_EXSCAN,
    KMPI_NCCL, /* header check and deadline of a collective NCCL runs */
    KMPI_ALLTOALL,
} kmpi_kind;

typedef struct kmpi_op kmpi_op;

typedef struct kmpi_failure {
    kiln_event *event; /* retained */
    kiln_status status;
    char msg[600];
} kmpi_failure;

enum { KMPI_FAILURES = 32 };

typedef struct kmpi_nccl kmpi_nccl;

struct kiln_mpi {
    MPI_Comm user_comm, coll, p2p; /* coll and p2p: kiln's duplicates */
    MPI_Comm direct;               /* blocking calls of the caller's thread (sort) */
    int rank, size, local_rank, local_size;
    kiln_device *device;
    kiln_context *ctx;
    kiln_queue *queue;   /* kiln_mpi_queue */
    kiln_queue *stage_q; /* map/unmap of staging buffers */
    uint64_t timeout_ms;
    size_t chunk_bytes;
    kiln_mpi_transport transport;
    kmpi_nccl *nccl;
    /* MPI can address the device's memory (the host backend's; a CUDA
     * device's where MPI is CUDA-aware) and $KILN_MPI_DIRECT is not 0:
     * all-reduce and broadcast skip the staging */
    int direct_ok;

    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    kmpi_op *submitted_head, *submitted_tail; /* not yet seen by the thread */
    int stopping;
    atomic_int broken; /* a collective timed out */
    atomic_int in_flight;

    kmpi_failure failures[KMPI_FAILURES]; /* under lock; a ring */
    /* under lock: the returned events of ops not yet ended (a queue may
     * fail one before its op has recorded why: kiln_mpi_wait waits) */
    kiln_event **pending;
    size_t npending, pending_cap;
    pthread_cond_t ended;
    unsigned nfail;
    /* jobs (mpi_jobs.c): blocking collectives run in call order */
    kiln_queue *job_q;
    pthread_t job_thread;
    int job_thread_started, jobs_stopping;
    pthread_mutex_t job_lock;
    pthread_cond_t job_cond;
    struct kmpi_job *job_head, *job_tail;
    void *scan_cache[16]; /* elementwise fix-up kernels by dtype */
    pthread_mutex_t cache_lock;
};

struct kmpi_op {
    kiln_mpi *m;
    kmpi_kind kind;
    const char *call; /* "kiln_mpi_allreduce" */
    int p2p, peer, tag;
    int64_t hdr[KMPI_HDR];
    MPI_Datatype mdt;
    MPI_Op mop;
    size_t esize;
    kiln_mpi_op op;
    int root;

    kiln_buffer *stage;  /* page-locked staging, mapped at host */
    DLManagedTensor *dl; /* direct: the array's own memory (holds it) */
    char *host;          /* staging, or the array's memory (direct) */
    size_t host_bytes;
    size_t count; /* elements each rank contributes (see kind) */
    size_t nchunks, chunk_elems;
    kiln_event **ready; /* [nchunks]: the copy into staging (or NULL) */
    kiln_event **gate;  /* [nchunks]: user events the copies back wait for */
    kiln_event **after; /* [nafter]: device commands that use staging */
    size_t nafter;
    kiln_event *done; /* user event: MPI's part ended */
    MPI_Request *req; /* [nchunks] */
    unsigned char *cstate;
    size_t next_start, ndone;

    /* scatter/gather: root's host memory, counts and displacements */
    void *user_host;
    const void *user_src;
    int *counts, *displs;

    /* NCCL: the arguments the progress thread launches with once ready[0]
     * (the caller's wait list) has ended, and the command whose end the
     * op waits for (the NCCL queue's marker behind the launch) */
    kiln_buffer *nccl_send, *nccl_recv; /* retained */
    size_t nccl_send_off, nccl_recv_off;
    kiln_dtype nccl_dt;
    int nccl_launched;
    kiln_event *watch;

    MPI_Request hreq[2];
    int64_t *hall; /* the ranks' headers (size * KMPI_HDR) */
    int hstate;    /* 0 not started, 1 exchanging, 2 agreed */
    int started;
    uint64_t deadline_ns;
    int local_failed; /* a copy into staging failed: MPI goes on */
    kiln_status status;
    char msg[600];
    kiln_event *ret; /* the event handed to the caller (retained) */
    kmpi_op *next;
};

struct kiln_mpi_darray {
    atomic_int refs; /* the caller's and each job's */
    kiln_mpi *m;
    kiln_dtype dt;
    size_t n, start, count; /* in rows for 2-D */
    size_t cols, halo;      /* 1-D: 1 and 0 */
    int two_d;
    int ranks; /* the blocks are on ranks [0, ranks); the others hold none */
    kiln_array *local;
};

/* Block r of n over P ranks (r >= P: none, starting at n). */
static inline void kmpi_block_of(size_t n, int P, int r, size_t *start, size_t *count) {
    if (r >= P) {
        *start = n;
        *count = 0;
        return;
    }
    size_t b = n / (size_t)P, e = n % (size_t)P, rr = (size_t)r;
    *count = b + (rr < e);
    *start = rr * b + (rr < e ? rr : e);
}

/* errors: kiln_mpi's thread-local message */
kiln_status kmpi_error(kiln_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* st with kiln's own last message, prefixed by what */
kiln_status kmpi_error_kiln(kiln_status st, const char *what);
void kmpi_set_message(const char *msg);

uint64_t kmpi_now_ns(void);
/* Tests req until it completes (1) or the deadline passes (0; the request
 * is left); for the blocking calls made on m->direct. */
int kmpi_wait_deadline(MPI_Request *req, uint64_t deadline_ns);

/* the engine */
kmpi_op *kmpi_op_new(kiln_mpi *m, kmpi_kind kind, const char *call);
void kmpi_op_free(kmpi_op *op);
/* Hands op to the progress thread (which owns it from then on). */
void kmpi_submit(kiln_mpi *m, kmpi_op *op);
int kmpi_thread_start(kiln_mpi *m);
/* pthread_create and the thread's name; 1 if it started */
int kmpi_start_named(pthread_t *t, void *(*fn)(void *), void *arg, const char *name);
/* sets *stopping under lock, wakes the thread and joins it */
void kmpi_stop_named(pthread_t t, pthread_mutex_t *lock, pthread_cond_t *cond, int *stopping,
                     int *started);
void kmpi_thread_stop(kiln_mpi *m);
void kmpi_record_failure(kiln_mpi *m, kiln_event *event, kiln_status st, const char *msg);
/* event's op is under way / has ended (recorded its failure, if any) */
int kmpi_pending_add(kiln_mpi *m, kiln_event *event);
void kmpi_pending_remove(kiln_mpi *m, kiln_event *event);

/* Jobs (mpi_jobs.c): the collectives whose MPI calls block (sort,
 * redistribution, user reductions) run one after another on the job
 * thread, in the order they were called, behind a marker over their wait
 * list on the caller's queue, their device work on m->job_q; the caller's
 * queue waits for a gate the job thread sets at the end. fn gets
 * m->job_q; drop(arg) frees arg afterwards. */
typedef kiln_status (*kmpi_job_fn)(kiln_mpi *m, kiln_queue *q, void *arg);
kiln_status kmpi_job_submit(kiln_mpi *m, kiln_queue *q, const char *call, kmpi_job_fn fn, void *arg,
                            void (*drop)(void *), size_t num_wait, kiln_event *const *wait,
                            kiln_event **event);
int kmpi_jobs_start(kiln_mpi *m);
void kmpi_jobs_stop(kiln_mpi *m);
kiln_status kmpi_sort_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d);
kiln_status kmpi_sort_run(kiln_mpi *m, kiln_queue *q, void *darray);
kiln_status kmpi_redistribute_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                    kiln_mpi_darray *dst);
kiln_status kmpi_redistribute_run(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                  kiln_mpi_darray *dst);
kiln_status kmpi_reduction_check(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r,
                                 void *host_result);
kiln_status kmpi_reduction_run(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r, size_t n,
                               size_t nargs, const kiln_arg *args, void *host_result);
/* the last reference dropped */
static inline int kmpi_unref(atomic_int *refs) {
    return atomic_fetch_sub(refs, 1) == 1;
}
static inline void kmpi_darray_retain(kiln_mpi_darray *d) {
    atomic_fetch_add(&d->refs, 1);
}
void kmpi_reduction_retain(kiln_mpi_reduction *r);

/* dtype/op mapping */
MPI_Datatype kmpi_mpi_dtype(kiln_dtype dt);
const char *kmpi_op_name(kiln_mpi_op op);
const char *kmpi_kind_name(int kind);

/* distributed arrays (mpi_coll.c): a new one (ranks 0 = every rank) */
kiln_status kmpi_darray_make(kiln_mpi *m, kiln_dtype dt, size_t n, size_t cols, size_t halo,
                             int two_d, int ranks, const char *call, kiln_mpi_darray **out);
/* rows [r0, r0 + k) of d's local array, a view */
kiln_status kmpi_rows_view(kiln_mpi_darray *d, size_t r0, size_t k, kiln_array **v);

/* NCCL (mpi_nccl.c) */
kiln_status kmpi_nccl_open(kiln_mpi *m, int required);
void kmpi_nccl_close(kiln_mpi *m);
kiln_status kmpi_nccl_connect(kiln_mpi *m);
void kmpi_nccl_abort(kiln_mpi *m);
/* Launches op's NCCL call on the NCCL queue (its own native stream, on
 * which nothing waits for a user event) and puts a marker behind it in
 * *watch. Called by the progress thread once op's wait list has ended. */
kiln_status kmpi_nccl_launch(kmpi_op *op, kiln_event **watch);
/* Whether NCCL has a type for dt (complex as pairs of floats). */
int kmpi_nccl_has_dtype(kiln_dtype dt);

#endif
