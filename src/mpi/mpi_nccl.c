/* NCCL, loaded at run time (libnccl.so.2 on the loader's path, or the file
 * $KILN_NCCL_LIBRARY names), for kiln_mpi communicators whose every rank
 * has a CUDA device. The NCCL communicator is made once (rank 0's unique
 * id broadcast over MPI) with a queue of its own. A collective is ordered
 * on the host: the progress thread launches the NCCL call on that queue
 * once the ranks' headers agree and the caller's wait list has ended, so
 * no CUDA stream ever waits on the device for a kiln user event (a module
 * load behind such a stream hangs the process, and kiln_cuda_queue_native
 * refuses a queue holding such commands); the caller's queue waits for
 * the op's gate, which the thread sets when the NCCL queue's marker ends.
 * A mismatch or a deadline passed aborts the NCCL communicator
 * (ncclCommAbort), which ends NCCL kernels that would wait for ever.
 *
 * The NCCL declarations below are the few kiln uses, from NCCL's
 * documented C API (nccl.h is not needed to build). Built only where the
 * CUDA headers are (kiln/cuda.h includes cuda.h); elsewhere NCCL is
 * reported missing. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#if KILN_MPI_HAVE_CUDA
#include "kiln/cuda.h"

typedef struct kmpi_ncclComm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;
typedef int ncclResult_t; /* ncclSuccess = 0 */
enum {
    nccl_int8 = 0,
    nccl_uint8 = 1,
    nccl_int32 = 2,
    nccl_uint32 = 3,
    nccl_int64 = 4,
    nccl_uint64 = 5,
    nccl_float16 = 6,
    nccl_float32 = 7,
    nccl_float64 = 8
};
enum { nccl_sum = 0, nccl_prod = 1, nccl_max = 2, nccl_min = 3 };

struct kmpi_nccl {
    void *lib;
    ncclComm_t comm;
    CUcontext cuctx;
    CUresult (*cuCtxSetCurrent)(CUcontext);
    void *libcuda;
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*CommAbort)(ncclComm_t);
    const char *(*GetErrorString)(ncclResult_t);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*AllGather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
    ncclResult_t (*ReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*Send)(const void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*Recv)(void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
    kiln_queue *queue; /* native: NCCL's calls and the markers behind them */
    CUstream stream;
    pthread_mutex_t lock;
    int aborted;
};

kiln_status kmpi_nccl_open(kiln_mpi *m, int required) {
    const char *path = getenv("KILN_NCCL_LIBRARY");
    if (!path || !*path)
        path = "libnccl.so.2";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return kmpi_error(KILN_ERROR_NO_RUNTIME,
                          "kiln_mpi_create: NCCL could not be loaded from %s (%s): install NCCL "
                          "(pip's nvidia-nccl-cu12 keeps it under site-packages/nvidia/nccl/lib) "
                          "and put it on the loader's path or name it in KILN_NCCL_LIBRARY",
                          path, dlerror());
    kmpi_nccl *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(lib);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "kiln_mpi_create: out of memory");
    }
    n->lib = lib;
    pthread_mutex_init(&n->lock, NULL);
    int ok = 1;
#define SYM(field, name) ok &= (*(void **)&n->field = dlsym(lib, name)) != NULL
    SYM(GetUniqueId, "ncclGetUniqueId");
    SYM(CommInitRank, "ncclCommInitRank");
    SYM(CommDestroy, "ncclCommDestroy");
    SYM(CommAbort, "ncclCommAbort");
    SYM(GetErrorString, "ncclGetErrorString");
    SYM(AllReduce, "ncclAllReduce");
    SYM(Broadcast, "ncclBroadcast");
    SYM(AllGather, "ncclAllGather");
    SYM(ReduceScatter, "ncclReduceScatter");
    SYM(Send, "ncclSend");
    SYM(Recv, "ncclRecv");
    SYM(GroupStart, "ncclGroupStart");
    SYM(GroupEnd, "ncclGroupEnd");
#undef SYM
    n->libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (n->libcuda)
        *(void **)&n->cuCtxSetCurrent = dlsym(n->libcuda, "cuCtxSetCurrent");
    m->nccl = n;
    if (!ok || !n->cuCtxSetCurrent) {
        kmpi_nccl_close(m);
        return kmpi_error(KILN_ERROR_NO_RUNTIME,
                          "kiln_mpi_create: %s lacks NCCL's functions (ncclSend needs NCCL 2.7)",
                          path);
    }
    (void)required;
    return KILN_OK;
}

/* The NCCL communicator: made by kiln_mpi_create once every rank has
 * agreed to use NCCL, before the progress thread starts (the unique id
 * travels by a blocking MPI_Bcast). */
kiln_status kmpi_nccl_connect(kiln_mpi *m) {
    kmpi_nccl *n = m->nccl;
    if (n->comm)
        return KILN_OK;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    kiln_cuda_context_native(m->ctx, &n->cuctx);
    n->cuCtxSetCurrent(n->cuctx);
    if (m->rank == 0 && n->GetUniqueId(&id) != 0)
        return kmpi_error(KILN_ERROR_DRIVER, "kiln_mpi: ncclGetUniqueId failed");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, m->coll);
    ncclResult_t r = n->CommInitRank(&n->comm, m->size, id, m->rank);
    if (r != 0) {
        n->comm = NULL;
        return kmpi_error(KILN_ERROR_DRIVER, "kiln_mpi: ncclCommInitRank failed: %s (%d)",
                          n->GetErrorString(r), r);
    }
    kiln_status st = kiln_queue_create(m->ctx, m->device, KILN_QUEUE_IN_ORDER, &n->queue);
    if (st == KILN_OK)
        st = kiln_cuda_queue_native(n->queue, &n->stream);
    if (st != KILN_OK)
        return kmpi_error_kiln(st, "kiln_mpi_create (the NCCL queue)");
    return KILN_OK;
}

void kmpi_nccl_close(kiln_mpi *m) {
    kmpi_nccl *n = m ? m->nccl : NULL;
    if (!n)
        return;
    if (n->queue) {
        /* aborted: kernels waiting for a peer have been ended */
        kiln_queue_finish(n->queue);
        kiln_queue_release(n->queue);
    }
    if (n->comm) {
        if (n->cuCtxSetCurrent)
            n->cuCtxSetCurrent(n->cuctx);
        if (n->aborted)
            ; /* ncclCommAbort freed it */
        else
            n->CommDestroy(n->comm);
    }
    if (n->libcuda)
        dlclose(n->libcuda);
    dlclose(n->lib);
    pthread_mutex_destroy(&n->lock);
    free(n);
    m->nccl = NULL;
}

void kmpi_nccl_abort(kiln_mpi *m) {
    kmpi_nccl *n = m->nccl;
    if (!n)
        return;
    pthread_mutex_lock(&n->lock);
    if (n->comm && !n->aborted) {
        n->cuCtxSetCurrent(n->cuctx);
        n->CommAbort(n->comm);
        n->aborted = 1;
    }
    pthread_mutex_unlock(&n->lock);
}

static int nccl_dtype(kiln_dtype dt, size_t *mult) {
    *mult = 1;
    switch (dt) {
    case KILN_INT8:
        return nccl_int8;
    case KILN_UINT8:
        return nccl_uint8;
    case KILN_INT32:
        return nccl_int32;
    case KILN_UINT32:
        return nccl_uint32;
    case KILN_INT64:
        return nccl_int64;
    case KILN_UINT64:
        return nccl_uint64;
    case KILN_FLOAT16:
        return nccl_float16;
    case KILN_FLOAT32:
        return nccl_float32;
    case KILN_FLOAT64:
        return nccl_float64;
    case KILN_COMPLEX64: /* (re, im) pairs: a sum is two float sums */
        *mult = 2;
        return nccl_float32;
    case KILN_COMPLEX128:
        *mult = 2;
        return nccl_float64;
    default:
        return -1;
    }
}

int kmpi_nccl_has_dtype(kiln_dtype dt) {
    size_t mult;
    return nccl_dtype(dt, &mult) >= 0;
}

kiln_status kmpi_nccl_launch(kmpi_op *op, kiln_event **watch) {
    kiln_mpi *m = op->m;
    kmpi_nccl *n = m->nccl;
    kmpi_kind kind = (kmpi_kind)op->hdr[0];
    *watch = NULL;
    if (!n || !n->comm || !n->queue)
        return kmpi_error(KILN_ERROR_WRONG_STATE, "%s: no NCCL communicator", op->call);
    size_t mult = 1;
    int ndt = nccl_dtype(op->nccl_dt, &mult);
    if (ndt < 0)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s (NCCL): NCCL has no type for %s", op->call,
                          kiln_dtype_name(op->nccl_dt));
    int nop = op->op == KILN_MPI_MIN ? nccl_min : op->op == KILN_MPI_MAX ? nccl_max : nccl_sum;
    kiln_status st = KILN_OK;
    CUdeviceptr sp = 0, rp = 0;
    if ((st = kiln_cuda_buffer_native(op->nccl_send, &sp)) != KILN_OK ||
        (op->nccl_recv && (st = kiln_cuda_buffer_native(op->nccl_recv, &rp)) != KILN_OK))
        return kmpi_error_kiln(st, op->call);
    const void *sb = (const void *)(uintptr_t)(sp + op->nccl_send_off);
    void *rb = op->nccl_recv ? (void *)(uintptr_t)(rp + op->nccl_recv_off) : (void *)(uintptr_t)sb;
    size_t c = op->count * mult;
    CUstream s = n->stream;
    ncclResult_t r = 0;
    pthread_mutex_lock(&n->lock);
    if (n->aborted) {
        pthread_mutex_unlock(&n->lock);
        return kmpi_error(KILN_ERROR_WRONG_STATE, "%s: the NCCL communicator was aborted",
                          op->call);
    }
    n->cuCtxSetCurrent(n->cuctx);
    switch (kind) {
    case KMPI_ALLREDUCE:
        r = n->AllReduce(sb, rb, c, ndt, nop, n->comm, s);
        break;
    case KMPI_BCAST:
        r = n->Broadcast(sb, rb, c, ndt, op->root, n->comm, s);
        break;
    case KMPI_ALLGATHER:
        r = n->AllGather(sb, rb, c, ndt, n->comm, s);
        break;
    case KMPI_REDSCAT:
        r = n->ReduceScatter(sb, rb, c, ndt, nop, n->comm, s);
        break;
    case KMPI_SEND:
        r = n->Send(sb, c, ndt, op->peer, n->comm, s);
        break;
    case KMPI_RECV:
        r = n->Recv(rb, c, ndt, op->peer, n->comm, s);
        break;
    case KMPI_ALLTOALL: {
        /* block p of send to rank p, rank p's block into block p of recv */
        size_t bytes = op->count * kiln_dtype_size(op->nccl_dt);
        r = n->GroupStart();
        for (int p = 0; r == 0 && p < m->size; p++) {
            r = n->Send((const char *)sb + (size_t)p * bytes, c, ndt, p, n->comm, s);
            if (r == 0)
                r = n->Recv((char *)rb + (size_t)p * bytes, c, ndt, p, n->comm, s);
        }
        ncclResult_t e = n->GroupEnd();
        r = r ? r : e;
        break;
    }
    default:
        pthread_mutex_unlock(&n->lock);
        return kmpi_error(KILN_ERROR_INTERNAL, "%s (NCCL): kind %d", op->call, (int)kind);
    }
    pthread_mutex_unlock(&n->lock);
    if (r != 0)
        return kmpi_error(KILN_ERROR_DRIVER, "%s (NCCL): %s failed: %s (%d)", op->call,
                          kmpi_kind_name(kind), n->GetErrorString(r), r);
    st = kiln_queue_marker(n->queue, 0, NULL, watch);
    if (st == KILN_OK)
        st = kiln_queue_flush(n->queue);
    return st == KILN_OK ? st : kmpi_error_kiln(st, op->call);
}

#else /* no CUDA headers at build time */

struct kmpi_nccl {
    int unused;
};

kiln_status kmpi_nccl_open(kiln_mpi *m, int required) {
    (void)m;
    (void)required;
    return kmpi_error(KILN_ERROR_NO_RUNTIME,
                      "kiln_mpi_create: this kiln_mpi was built without the CUDA headers, "
                      "so without NCCL");
}
void kmpi_nccl_close(kiln_mpi *m) {
    (void)m;
}
kiln_status kmpi_nccl_connect(kiln_mpi *m) {
    (void)m;
    return KILN_ERROR_NO_RUNTIME;
}
void kmpi_nccl_abort(kiln_mpi *m) {
    (void)m;
}
int kmpi_nccl_has_dtype(kiln_dtype dt) {
    (void)dt;
    return 0;
}
kiln_status kmpi_nccl_launch(kmpi_op *op, kiln_event **watch) {
    (void)op;
    *watch = NULL;
    return kmpi_error(KILN_ERROR_NO_RUNTIME, "kiln_mpi: built without NCCL");
}
#endif
