/* kiln_mpi: MPI's initialisation, the rank's device, the communicator's
 * life, errors. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mpi_internal.h"

static _Thread_local char kmpi_msg[1024];

void kmpi_set_message(const char *msg) {
    snprintf(kmpi_msg, sizeof kmpi_msg, "%s", msg);
}

kiln_status kmpi_error(kiln_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kmpi_msg, sizeof kmpi_msg, fmt, ap);
    va_end(ap);
    return st;
}

kiln_status kmpi_error_kiln(kiln_status st, const char *what) {
    return kmpi_error(st, "%s: %s (%s)", what, kiln_last_error_message(), kiln_status_name(st));
}

const char *kiln_mpi_last_error_message(void) {
    return kmpi_msg;
}

MPI_Datatype kmpi_mpi_dtype(kiln_dtype dt) {
    /* every index named: MPI_DATATYPE_NULL need not be 0 (Open MPI's is
     * an address), and the handles need not be constants */
    const MPI_Datatype types[] = {
        [0] = MPI_DATATYPE_NULL,
        [KILN_INT8] = MPI_INT8_T,
        [KILN_UINT8] = MPI_UINT8_T,
        [KILN_INT16] = MPI_INT16_T,
        [KILN_UINT16] = MPI_UINT16_T,
        [KILN_INT32] = MPI_INT32_T,
        [KILN_UINT32] = MPI_UINT32_T,
        [KILN_INT64] = MPI_INT64_T,
        [KILN_UINT64] = MPI_UINT64_T,
        [KILN_FLOAT16] = MPI_DATATYPE_NULL,
        [KILN_FLOAT32] = MPI_FLOAT,
        [KILN_FLOAT64] = MPI_DOUBLE,
        [KILN_COMPLEX64] = MPI_C_FLOAT_COMPLEX,
        [KILN_COMPLEX128] = MPI_C_DOUBLE_COMPLEX,
        [KILN_BOOL] = MPI_DATATYPE_NULL,
    };
    unsigned i = (unsigned)dt;
    return i < sizeof types / sizeof *types ? types[i] : MPI_DATATYPE_NULL;
}

const char *kmpi_op_name(kiln_mpi_op op) {
    static const char *const names[] = {
        [KILN_MPI_SUM] = "sum", [KILN_MPI_MIN] = "min", [KILN_MPI_MAX] = "max"
    };
    unsigned i = (unsigned)op;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "?";
}

const char *kmpi_kind_name(int kind) {
    static const char *names[] = { "?",    "allreduce", "broadcast", "allgather", "reduce_scatter",
                                   "send", "recv",      "scatter",   "gather",    "exscan",
                                   "nccl", "alltoall" };
    return kind > 0 && kind <= KMPI_ALLTOALL ? names[kind] : "?";
}

/* ------------------------------------------------------------ MPI's life */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_we_initialised; /* kiln called MPI_Init_thread */
static int g_live;           /* kiln_mpi objects alive */

static const char *level_name(int l) {
    return l == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : l == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : l == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : l == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                        : "an unknown level";
}

static kiln_status mpi_acquire(void) {
    pthread_mutex_lock(&g_lock);
    int inited = 0, finalized = 0, provided = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        pthread_mutex_unlock(&g_lock);
        return kmpi_error(KILN_ERROR_WRONG_STATE,
                          "kiln_mpi_create: MPI has already been finalised");
    }
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            pthread_mutex_unlock(&g_lock);
            return kmpi_error(KILN_ERROR_NO_RUNTIME, "kiln_mpi_create: MPI_Init_thread failed");
        }
        g_we_initialised = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (g_we_initialised && g_live == 0) {
            MPI_Finalize();
            g_we_initialised = 0;
        }
        pthread_mutex_unlock(&g_lock);
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "kiln_mpi_create: MPI runs at thread level %s (%d); kiln needs "
                          "MPI_THREAD_MULTIPLE, as its progress thread makes MPI calls while the "
                          "program's threads may make theirs: initialise MPI with "
                          "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) (mpi4py: "
                          "mpi4py.rc.thread_level = \"multiple\"), or let kiln initialise it",
                          level_name(provided), provided);
    }
    g_live++;
    pthread_mutex_unlock(&g_lock);
    return KILN_OK;
}

static void mpi_drop(int may_finalize) {
    pthread_mutex_lock(&g_lock);
    if (--g_live == 0 && g_we_initialised && may_finalize) {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
            MPI_Finalize();
        g_we_initialised = 0;
    }
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------ the device */

static uint64_t env_u64(const char *name, uint64_t dflt) {
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    return end && *end == 0 && v > 0 ? (uint64_t)v : dflt;
}

static kiln_status pick_device(kiln_mpi *m, const kiln_mpi_opts *o) {
    const char *sel = o && o->selector ? o->selector : getenv("KILN_DEVICE");
    char one[256] = "";
    if (sel && strchr(sel, ',')) { /* a list: node-local rank r takes entry r % count */
        size_t cnt = 1;
        for (const char *p = sel; *p; p++)
            cnt += *p == ',';
        size_t want = (size_t)m->local_rank % cnt, k = 0;
        const char *p = sel;
        while (k < want) {
            p = strchr(p, ',') + 1;
            k++;
        }
        size_t len = strcspn(p, ",");
        if (len >= sizeof one)
            len = sizeof one - 1;
        memcpy(one, p, len);
        one[len] = 0;
        kiln_device *d = NULL;
        kiln_status st = kiln_device_select(one, &d);
        if (st != KILN_OK)
            return kmpi_error_kiln(st, "kiln_mpi_create: selecting this rank's device");
        m->device = d;
        return KILN_OK;
    }
    kiln_device *d0 = NULL;
    /* "" with KILN_DEVICE set would be read again by kiln_device_select */
    kiln_status st = kiln_device_select(sel, &d0);
    if (st != KILN_OK)
        return kmpi_error_kiln(st, "kiln_mpi_create: selecting the device");
    kiln_device_info info;
    kiln_device_get_info(d0, &info);
    m->device = d0;
    if (m->local_size <= 1)
        return KILN_OK;
    if (info.type == KILN_DEVICE_GPU) {
        /* the r-th GPU of the same backend, counting from the selected one */
        size_t n = 0, at = 0, ngpu = 0;
        kiln_device_count(&n);
        kiln_device *gpus[64];
        for (size_t i = 0; i < n && ngpu < 64; i++) {
            kiln_device *d = NULL;
            kiln_device_info di;
            if (kiln_device_at(i, &d) != KILN_OK || kiln_device_get_info(d, &di) != KILN_OK)
                continue;
            if (di.type != KILN_DEVICE_GPU || di.backend != info.backend || di.is_subdevice)
                continue;
            if (d == d0)
                at = ngpu;
            gpus[ngpu++] = d;
        }
        if (ngpu > 0)
            m->device = gpus[(at + (size_t)m->local_rank) % ngpu];
        return KILN_OK;
    }
    if (info.type == KILN_DEVICE_CPU && !(o && o->no_fission) && !info.is_subdevice) {
        unsigned each = info.compute_units / (unsigned)m->local_size;
        if (each == 0)
            each = 1;
        kiln_device *subs[256];
        size_t cnt = 0;
        if (kiln_device_partition(d0, each, subs, 256, &cnt) == KILN_OK && cnt > 0)
            m->device = subs[(size_t)m->local_rank % cnt];
        /* a device that cannot be split is shared */
    }
    return KILN_OK;
}

/* Whether two ranks of m's communicator hold the same device (this host's
 * name and the device's id; collective over m->coll). */
static int kmpi_ranks_share_device(kiln_mpi *m, const char *device_id) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = host; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ '/') * 1099511628211ull;
    for (const char *p = device_id; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    uint64_t *all = calloc((size_t)m->size, sizeof *all);
    if (!all)
        return 1; /* cannot tell: the staged path is safe */
    MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, m->coll);
    int shared = 0;
    for (int i = 0; i < m->size && !shared; i++)
        for (int j = i + 1; j < m->size && !shared; j++)
            shared = all[i] == all[j];
    free(all);
    return shared;
}

/* ------------------------------------------------------------ create */

static int transport_from_env(void) {
    const char *s = getenv("KILN_MPI_TRANSPORT");
    if (!s || !*s || !strcmp(s, "auto"))
        return KILN_MPI_TRANSPORT_AUTO;
    if (!strcmp(s, "staged"))
        return KILN_MPI_TRANSPORT_STAGED;
    if (!strcmp(s, "nccl"))
        return KILN_MPI_TRANSPORT_NCCL;
    return -1;
}

/* The transport opts or $KILN_MPI_TRANSPORT asks for, or an error for
 * opts made without KILN_MPI_OPTS or an unknown transport. */
static kiln_status create_transport(const kiln_mpi_opts *opts, int *transport) {
    if (opts && opts->struct_size < sizeof(kiln_mpi_opts))
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "kiln_mpi_create: opts->struct_size is %zu (make opts with "
                          "KILN_MPI_OPTS(...))",
                          opts->struct_size);
    *transport = opts && opts->transport ? (int)opts->transport : transport_from_env();
    if (*transport < 0 || *transport > KILN_MPI_TRANSPORT_NCCL)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "kiln_mpi_create: unknown transport (%d; $KILN_MPI_TRANSPORT is "
                          "auto, staged or nccl)",
                          *transport);
    return KILN_OK;
}

/* m's own communicators (collectives, sends and receives, direct calls),
 * its rank and size in comm and on this node. */
static kiln_status create_comms(kiln_mpi *m, MPI_Comm comm) {
    MPI_Comm local = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &m->coll) != MPI_SUCCESS || MPI_Comm_dup(comm, &m->p2p) != MPI_SUCCESS ||
        MPI_Comm_dup(comm, &m->direct) != MPI_SUCCESS ||
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        return kmpi_error(KILN_ERROR_DRIVER,
                          "kiln_mpi_create: duplicating the communicator failed");
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->size);
    MPI_Comm_rank(local, &m->local_rank);
    MPI_Comm_size(local, &m->local_size);
    MPI_Comm_free(&local);
    return KILN_OK;
}

/* m's device, context and queues. */
static kiln_status create_device(kiln_mpi *m, const kiln_mpi_opts *opts) {
    kiln_status st = pick_device(m, opts);
    if (st != KILN_OK)
        return st;
    st = kiln_context_create(&m->device, 1, &m->ctx);
    if (st == KILN_OK)
        st = kiln_queue_create(m->ctx, m->device, KILN_QUEUE_IN_ORDER, &m->queue);
    if (st == KILN_OK)
        st = kiln_queue_create(m->ctx, m->device, KILN_QUEUE_IN_ORDER, &m->stage_q);
    if (st != KILN_OK)
        kmpi_error_kiln(st, "kiln_mpi_create: making the context and queues");
    return st;
}

/* NCCL where every rank can take it (and the transport allows it), else
 * the staged path (already m->transport); an error where NCCL was asked
 * for and some rank cannot take it. Collective over m->coll. */
static kiln_status create_choose_transport(kiln_mpi *m, int transport) {
    kiln_status st = KILN_OK;
    kiln_device_info info;
    kiln_device_get_info(m->device, &info);
    /* every rank must take the same path: agree on it */
    int want = transport != KILN_MPI_TRANSPORT_STAGED && info.backend == KILN_BACKEND_CUDA;
    /* NCCL takes one rank a GPU: ranks sharing one (several on cuda:0)
     * stay on the staged path, or are refused if NCCL was asked for */
    int shared = want && kmpi_ranks_share_device(m, info.id);
    if (shared && transport == KILN_MPI_TRANSPORT_NCCL)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "kiln_mpi_create: NCCL was asked for but ranks share GPU %s (NCCL "
                          "takes one rank a GPU; the staged transport does not)",
                          info.id);
    want = want && !shared;
    int can = want && kmpi_nccl_open(m, transport == KILN_MPI_TRANSPORT_NCCL) == KILN_OK;
    int all = 0;
    MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, m->coll);
    if (transport == KILN_MPI_TRANSPORT_NCCL && !all) {
        st = can ? kmpi_error(KILN_ERROR_NO_RUNTIME,
                              "kiln_mpi_create: NCCL was asked for but another rank "
                              "could not load it or has no CUDA device")
                 : (want ? KILN_ERROR_NO_RUNTIME
                         : kmpi_error(KILN_ERROR_UNSUPPORTED,
                                      "kiln_mpi_create: NCCL was asked for but rank %d's "
                                      "device %s is not a CUDA device",
                                      m->rank, info.id));
        kmpi_nccl_close(m);
        return st;
    }
    if (all) {
        st = kmpi_nccl_connect(m);
        int ok = st == KILN_OK, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->coll);
        if (!all_ok) {
            if (ok)
                st = kmpi_error(KILN_ERROR_DRIVER,
                                "kiln_mpi_create: another rank failed to join NCCL");
            return st;
        }
        m->transport = KILN_MPI_TRANSPORT_NCCL;
    } else {
        kmpi_nccl_close(m);
    }
    return KILN_OK;
}

/* m's locks and lists, and m */
static void free_struct(kiln_mpi *m) {
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->cache_lock);
    pthread_mutex_destroy(&m->job_lock);
    pthread_cond_destroy(&m->job_cond);
    pthread_cond_destroy(&m->ended);
    free(m->pending);
    free(m);
}

/* Undoes what kiln_mpi_create made of m (all of it, or part) and MPI's
 * use; returns st. */
static kiln_status create_fail(kiln_mpi *m, kiln_status st) {
    kmpi_jobs_stop(m);
    kmpi_thread_stop(m);
    kmpi_nccl_close(m);
    kiln_queue_release(m->stage_q);
    kiln_queue_release(m->queue);
    kiln_context_release(m->ctx);
    if (m->coll != MPI_COMM_NULL)
        MPI_Comm_free(&m->coll);
    if (m->p2p != MPI_COMM_NULL)
        MPI_Comm_free(&m->p2p);
    if (m->direct != MPI_COMM_NULL)
        MPI_Comm_free(&m->direct);
    free_struct(m);
    mpi_drop(1);
    return st;
}

kiln_status kiln_mpi_create(MPI_Comm comm, const kiln_mpi_opts *opts, kiln_mpi **out) {
    if (!out)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "kiln_mpi_create: mpi is NULL");
    *out = NULL;
    int transport = 0;
    kiln_status st = create_transport(opts, &transport);
    if (st != KILN_OK)
        return st;
    st = mpi_acquire();
    if (st != KILN_OK)
        return st;
    if (comm == MPI_COMM_NULL) {
        mpi_drop(1);
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "kiln_mpi_create: comm is MPI_COMM_NULL");
    }
    kiln_mpi *m = calloc(1, sizeof *m);
    if (!m) {
        mpi_drop(1);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "kiln_mpi_create: out of memory");
    }
    m->user_comm = comm;
    m->coll = m->p2p = m->direct = MPI_COMM_NULL;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    pthread_mutex_init(&m->cache_lock, NULL);
    pthread_mutex_init(&m->job_lock, NULL);
    pthread_cond_init(&m->job_cond, NULL);
    pthread_cond_init(&m->ended, NULL);
    if ((st = create_comms(m, comm)) != KILN_OK)
        return create_fail(m, st);
    m->timeout_ms =
        opts && opts->timeout_ms ? opts->timeout_ms : env_u64("KILN_MPI_TIMEOUT_MS", 60000);
    m->chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes
                                               : (size_t)env_u64("KILN_MPI_CHUNK_BYTES", 1u << 20);
    if (m->chunk_bytes < 64)
        m->chunk_bytes = 64;
    if ((st = create_device(m, opts)) != KILN_OK)
        return create_fail(m, st);
    {
        kiln_device_info info;
        const char *d = getenv("KILN_MPI_DIRECT");
        kiln_device_get_info(m->device, &info);
        m->direct_ok = !(d && !strcmp(d, "0")) &&
                       (info.backend == KILN_BACKEND_HOST ||
                        (info.backend == KILN_BACKEND_CUDA && kiln_mpi_cuda_aware(m)));
    }
    m->transport = KILN_MPI_TRANSPORT_STAGED;
    if ((st = create_choose_transport(m, transport)) != KILN_OK)
        return create_fail(m, st);
    if (!kmpi_thread_start(m))
        return create_fail(m, kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY,
                                         "kiln_mpi_create: could not start the progress thread"));
    if (!kmpi_jobs_start(m))
        return create_fail(m, kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY,
                                         "kiln_mpi_create: could not start the job thread"));
    *out = m;
    return KILN_OK;
}

void kiln_mpi_release(kiln_mpi *m) {
    if (!m)
        return;
    kmpi_jobs_stop(m); /* the jobs queued still run: every rank made them */
    kmpi_thread_stop(m);
    int clean = atomic_load(&m->broken) != 2;
    kmpi_nccl_close(m);
    for (unsigned i = 0; i < KMPI_FAILURES; i++)
        kiln_event_release(m->failures[i].event);
    for (int i = 0; i < 16; i++)
        kiln_elementwise_release(m->scan_cache[i]);
    kiln_queue_finish(m->stage_q);
    kiln_queue_release(m->stage_q);
    kiln_queue_release(m->queue);
    kiln_context_release(m->ctx);
    if (clean) {
        MPI_Comm_free(&m->coll);
        MPI_Comm_free(&m->p2p);
        MPI_Comm_free(&m->direct);
    }
    free_struct(m);
    /* with MPI requests never completed, finalising could hang */
    mpi_drop(clean);
}

int kiln_mpi_rank(const kiln_mpi *m) {
    return m ? m->rank : -1;
}
int kiln_mpi_size(const kiln_mpi *m) {
    return m ? m->size : 0;
}
int kiln_mpi_local_rank(const kiln_mpi *m) {
    return m ? m->local_rank : -1;
}
int kiln_mpi_local_size(const kiln_mpi *m) {
    return m ? m->local_size : 0;
}
kiln_device *kiln_mpi_device(const kiln_mpi *m) {
    return m ? m->device : NULL;
}
kiln_context *kiln_mpi_context(const kiln_mpi *m) {
    return m ? m->ctx : NULL;
}
kiln_queue *kiln_mpi_queue(const kiln_mpi *m) {
    return m ? m->queue : NULL;
}
kiln_mpi_transport kiln_mpi_get_transport(const kiln_mpi *m) {
    return m ? m->transport : KILN_MPI_TRANSPORT_AUTO;
}
uint64_t kiln_mpi_timeout_ms(const kiln_mpi *m) {
    return m ? m->timeout_ms : 0;
}

/* Open MPI's (and MVAPICH's) MPIX_Query_cuda_support, looked up in the
 * running process rather than declared by <mpi-ext.h>: the MPI the program
 * runs with, not the one kiln was built against, is what counts. */
int kiln_mpi_direct(const kiln_mpi *m) {
    return m ? m->direct_ok : 0;
}

int kiln_mpi_cuda_aware(const kiln_mpi *m) {
    if (!m)
        return 0;
    int (*query)(void) = NULL;
    *(void **)&query = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
    return query ? query() != 0 : 0;
}

kiln_status kiln_mpi_wait(kiln_mpi *m, kiln_event *event) {
    if (!m || !event)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "kiln_mpi_wait: %s is NULL", m ? "event" : "mpi");
    kiln_status st = kiln_event_wait(event);
    if (st == KILN_OK)
        return KILN_OK;
    if (st != KILN_ERROR_EVENT_FAILED)
        return kmpi_error_kiln(st, "kiln_mpi_wait");
    /* the collective's own failure, recorded when it ended; the queue may
     * have failed the event before (a failed wait list): wait for the end */
    kiln_status found = KILN_OK;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        size_t i = 0;
        while (i < m->npending && m->pending[i] != event)
            i++;
        if (i == m->npending)
            break;
        pthread_cond_wait(&m->ended, &m->lock);
    }
    for (unsigned i = 0; i < KMPI_FAILURES; i++)
        if (m->failures[i].event == event) {
            found = m->failures[i].status;
            kmpi_set_message(m->failures[i].msg);
        }
    pthread_mutex_unlock(&m->lock);
    if (found != KILN_OK)
        return found;
    return kmpi_error(KILN_ERROR_EVENT_FAILED,
                      "kiln_mpi_wait: the event failed (a command it waited for failed)");
}
