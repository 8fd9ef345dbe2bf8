/* kiln over MPI (and NCCL): one device per rank, collectives that return
 * kiln events, 1-D block-distributed arrays. docs/distributed.md.
 *
 * An optional component: the library kiln_mpi (libkiln_mpi.so, CMake
 * target kiln::kiln_mpi), built where CMake finds MPI. libkiln itself never
 * depends on MPI. Include this header after, or instead of, kiln.h; it
 * includes <mpi.h>.
 *
 * MPI. kiln_mpi_create uses an MPI that is already initialised (by the
 * program, or mpi4py) and needs MPI_THREAD_MULTIPLE there: kiln's own
 * progress thread ("kiln-mpi") makes the MPI calls of its collectives
 * while the program's threads may make theirs. A lower thread level is
 * KILN_ERROR_UNSUPPORTED, naming the level it found. If nobody has
 * initialised MPI, kiln_mpi_create does (MPI_Init_thread, asking for
 * MPI_THREAD_MULTIPLE), and the release of the last kiln_mpi finalises it;
 * kiln never finalises an MPI it did not initialise.
 *
 * Collectives. Every collective takes a queue (of the kiln_mpi's context;
 * NULL: kiln_mpi_queue) and a wait list, enqueues its copies at once and
 * returns an event: nothing blocks, and the program never calls MPI to
 * make them progress (the progress thread does). Work enqueued on an
 * in-order queue after a collective that writes an array sees the result.
 * Arrays are dense (contiguous) and of the kiln_mpi's context. Every rank
 * of the communicator makes the same collectives in the same order (as
 * with MPI); kiln checks that the ranks agree (which call, dtype, element
 * count, operation, root) before any data moves, and a disagreement fails
 * the collective on every rank with KILN_ERROR_MISMATCH and a message
 * naming both ranks' values.
 *
 * Transport: "staged" (device -> page-locked host memory -> MPI -> device,
 * in chunks, so that the copies of one chunk overlap the transfer of
 * another; Debian's Open MPI is not CUDA-aware), or "nccl" on CUDA devices
 * where libnccl.so.2 loads ($KILN_NCCL_LIBRARY names another file;
 * KILN_MPI_TRANSPORT=staged turns it off).
 *
 * Failures. A collective's event fails when the collective does; the
 * reason (KILN_ERROR_TIMEOUT, KILN_ERROR_MISMATCH, ...) and its message are
 * what kiln_mpi_wait returns and kiln_mpi_last_error_message says.
 * Deadline: a collective that has not completed timeout_ms after it
 * started (default 60000 ms, $KILN_MPI_TIMEOUT_MS) fails with
 * KILN_ERROR_TIMEOUT; the communicator is then broken (every later
 * collective fails at once with KILN_ERROR_WRONG_STATE): MPI cannot cancel
 * a collective, so the ranks can no longer be trusted to agree. */
#ifndef KILN_MPI_H
#define KILN_MPI_H

#include <mpi.h>

#include "kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_mpi kiln_mpi;

typedef enum kiln_mpi_transport {
    KILN_MPI_TRANSPORT_AUTO = 0,   /* NCCL on CUDA devices where it loads, else staged */
    KILN_MPI_TRANSPORT_STAGED = 1, /* through page-locked host memory and MPI */
    KILN_MPI_TRANSPORT_NCCL = 2,   /* NCCL (CUDA devices); KILN_ERROR_NO_RUNTIME without it */
} kiln_mpi_transport;

/* A descriptor (docs/api.md rule 7): make it with KILN_MPI_OPTS(...). */
typedef struct kiln_mpi_opts {
    size_t struct_size;           /* sizeof (set by KILN_MPI_OPTS) */
    const char *selector;         /* the device: NULL = $KILN_DEVICE, else the
                                     default. A comma-separated list gives node-
                                     local rank r its entry r % count. */
    int no_fission;               /* 1: CPU devices are not split between the
                                     ranks of a node */
    uint64_t timeout_ms;          /* each collective's deadline; 0 =
                                     $KILN_MPI_TIMEOUT_MS, else 60000 */
    kiln_mpi_transport transport; /* 0 = $KILN_MPI_TRANSPORT (auto|staged|nccl), else auto */
    size_t chunk_bytes;           /* staging chunk; 0 = $KILN_MPI_CHUNK_BYTES, else 1 MiB */
} kiln_mpi_opts;
#define KILN_MPI_OPTS(...) ((kiln_mpi_opts){ .struct_size = sizeof(kiln_mpi_opts), __VA_ARGS__ })

/* A kiln communicator over comm (duplicated: kiln's messages never meet
 * the program's), with this rank's device, a context and an in-order
 * queue on it, and the progress thread. Collective over comm (every rank
 * calls it). The device: the selected one (opts->selector, $KILN_DEVICE,
 * the default); if it is a GPU, node-local rank r (MPI_Comm_split_type,
 * MPI_COMM_TYPE_SHARED) gets the r-th GPU of the same backend counting
 * from it (modulo their number); if it is a CPU device that can be
 * partitioned (PoCL) and several ranks share the node, the device is
 * split into as many sub-devices of equal compute units as fit
 * (kiln_device_partition) and rank r takes sub-device r modulo their
 * number. opts may be NULL. Blocks. */
KILN_API kiln_status kiln_mpi_create(MPI_Comm comm, const kiln_mpi_opts *opts, kiln_mpi **mpi);
/* Collective: every rank releases its kiln_mpi. Waits for this rank's
 * collectives still in flight (each at most until its deadline), stops
 * the progress thread, frees the duplicated communicators, and finalises
 * MPI if kiln_mpi_create initialised it and this was the last kiln_mpi.
 * NULL is a no-op. */
KILN_API void kiln_mpi_release(kiln_mpi *mpi);

KILN_API int kiln_mpi_rank(const kiln_mpi *mpi);       /* -1 for NULL */
KILN_API int kiln_mpi_size(const kiln_mpi *mpi);       /* 0 for NULL */
KILN_API int kiln_mpi_local_rank(const kiln_mpi *mpi); /* rank on this node */
KILN_API int kiln_mpi_local_size(const kiln_mpi *mpi); /* ranks on this node */
/* Borrowed (valid while mpi is). */
KILN_API kiln_device *kiln_mpi_device(const kiln_mpi *mpi);
KILN_API kiln_context *kiln_mpi_context(const kiln_mpi *mpi);
KILN_API kiln_queue *kiln_mpi_queue(const kiln_mpi *mpi);
KILN_API kiln_mpi_transport kiln_mpi_get_transport(const kiln_mpi *mpi);
/* 1 if the MPI this process runs with says it takes CUDA device memory
 * (MPIX_Query_cuda_support, looked up at run time; 0 where the MPI has no
 * such query or says no, as Debian's Open MPI). Where it is 1 on a CUDA
 * device, all-reduce and broadcast hand MPI the device memory
 * (kiln_mpi_direct); untested there: no CUDA-aware MPI has been at hand. */
KILN_API int kiln_mpi_cuda_aware(const kiln_mpi *mpi);
/* 1 when all-reduce and broadcast hand MPI the arrays' own memory instead
 * of staging them through pinned host memory: on the host backend (its
 * memory is host memory) and on CUDA devices where MPI is CUDA-aware,
 * unless $KILN_MPI_DIRECT is 0. The other collectives stage. */
KILN_API int kiln_mpi_direct(const kiln_mpi *mpi);
/* The deadline of each collective, in milliseconds. */
KILN_API uint64_t kiln_mpi_timeout_ms(const kiln_mpi *mpi);

/* The calling thread's last kiln_mpi failure ("" if none): which call, which
 * values, which ranks. */
KILN_API const char *kiln_mpi_last_error_message(void);
/* Blocks until event (one a kiln_mpi call returned) ends. KILN_OK if it
 * completed; if it failed, the failure's own status (KILN_ERROR_TIMEOUT,
 * KILN_ERROR_MISMATCH, ...) with its message in
 * kiln_mpi_last_error_message (KILN_ERROR_EVENT_FAILED when the failure
 * came from the wait list or a device command). */
KILN_API kiln_status kiln_mpi_wait(kiln_mpi *mpi, kiln_event *event);

typedef enum kiln_mpi_op {
    KILN_MPI_SUM = 1, /* every numeric dtype but float16 (complex: SUM only) */
    KILN_MPI_MIN = 2, /* integers, float32, float64 */
    KILN_MPI_MAX = 3,
} kiln_mpi_op;

/* Collectives on dense arrays (see the top). Every rank passes arrays of
 * the same dtype and element count (all-gather: recv has size() times
 * send's elements; reduce-scatter: send has size() times recv's). */
/* array = op over the ranks' arrays, on every rank (in place). */
KILN_API kiln_status kiln_mpi_allreduce(kiln_mpi *mpi, kiln_queue *queue, kiln_array *array,
                                        kiln_mpi_op op, size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event);
/* Every rank's array = root's array. */
KILN_API kiln_status kiln_mpi_broadcast(kiln_mpi *mpi, kiln_queue *queue, kiln_array *array,
                                        int root, size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event);
/* recv = the ranks' send arrays one after another, in rank order. */
KILN_API kiln_status kiln_mpi_allgather(kiln_mpi *mpi, kiln_queue *queue, kiln_array *send,
                                        kiln_array *recv, size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event);
/* recv on root = the ranks' send arrays one after another, in rank order
 * (recv: size() times send's elements; other ranks pass NULL). Staged
 * through the host on every transport (NCCL has no gather). */
KILN_API kiln_status kiln_mpi_gather(kiln_mpi *mpi, kiln_queue *queue, kiln_array *send,
                                     kiln_array *recv, int root, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event);
/* recv on rank r = block r (recv's size) of root's send (size() times
 * recv's elements; other ranks pass NULL). Staged, as kiln_mpi_gather. */
KILN_API kiln_status kiln_mpi_scatter(kiln_mpi *mpi, kiln_queue *queue, kiln_array *send,
                                      kiln_array *recv, int root, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);
/* recv on rank r = block r (recv's size) of op over the ranks' send arrays. */
KILN_API kiln_status kiln_mpi_reduce_scatter(kiln_mpi *mpi, kiln_queue *queue, kiln_array *send,
                                             kiln_array *recv, kiln_mpi_op op, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event);
/* Block j (send's size / size() elements) of send goes to rank j, which
 * puts it in its block r of recv (r the sender): MPI_Alltoall. send and
 * recv of one dtype and size, a multiple of size(). On NCCL grouped sends
 * and receives, so recv must not overlap send there (KILN_ERROR_UNSUPPORTED). */
KILN_API kiln_status kiln_mpi_alltoall(kiln_mpi *mpi, kiln_queue *queue, kiln_array *send,
                                       kiln_array *recv, size_t num_wait, kiln_event *const *wait,
                                       kiln_event **event);
/* Point to point: array goes to rank dest, which receives it with a
 * kiln_mpi_recv of the same tag (0 <= tag < 2^20), dtype and element count
 * (checked on both sides: a mismatch fails both with both values). The
 * send's event completes when the data has left (the array may be reused
 * once the send's copy out of it is done: work ordered after the call on
 * an in-order queue may overwrite it). Sends and receives do not wait for
 * the collectives queued before them. */
KILN_API kiln_status kiln_mpi_send(kiln_mpi *mpi, kiln_queue *queue, kiln_array *array, int dest,
                                   int tag, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event);
KILN_API kiln_status kiln_mpi_recv(kiln_mpi *mpi, kiln_queue *queue, kiln_array *array, int source,
                                   int tag, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event);

/* --------------------------------------------------- distributed arrays
 *
 * A 1-D array of n elements in blocks: rank r holds elements [start_r,
 * start_r + count_r), count_r = n / P + (r < n % P), in a local kiln_array
 * of its own (kiln_mpi_darray_local) on its device, on which every local
 * kiln operation (elementwise, generators, reductions) works. */
typedef struct kiln_mpi_darray kiln_mpi_darray;

/* An uninitialised distributed array (collective: every rank, same n and
 * dtype; not checked until the first collective on it). Blocks only to
 * allocate. */
KILN_API kiln_status kiln_mpi_darray_empty(kiln_mpi *mpi, kiln_dtype dtype, size_t n,
                                           kiln_mpi_darray **darray);
/* A distributed array made by scattering n elements of host data held by
 * root (other ranks pass NULL); host must stay valid until *event ends. */
KILN_API kiln_status kiln_mpi_darray_scatter(kiln_mpi *mpi, kiln_queue *queue, kiln_dtype dtype,
                                             size_t n, const void *host, int root, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event,
                                             kiln_mpi_darray **darray);
/* Gathers the whole array into host memory of root (n elements; other
 * ranks pass NULL), written once *event has completed. */
KILN_API kiln_status kiln_mpi_darray_gather(kiln_mpi *mpi, kiln_queue *queue,
                                            kiln_mpi_darray *darray, void *host, int root,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
KILN_API void kiln_mpi_darray_release(kiln_mpi_darray *darray); /* NULL: no-op */
/* This rank's block (borrowed), its first global index and element count,
 * the global size. */
KILN_API kiln_array *kiln_mpi_darray_local(const kiln_mpi_darray *darray);
KILN_API size_t kiln_mpi_darray_start(const kiln_mpi_darray *darray);
KILN_API size_t kiln_mpi_darray_count(const kiln_mpi_darray *darray);
KILN_API size_t kiln_mpi_darray_size(const kiln_mpi_darray *darray);
/* out = a OP b on each rank's block (kiln_array_binary_out): the three share
 * n (dtypes as kiln_array_binary_out allows). Local: no communication. */
KILN_API kiln_status kiln_mpi_darray_binary(kiln_mpi *mpi, kiln_queue *queue, kiln_binary_op op,
                                            kiln_mpi_darray *out, kiln_mpi_darray *a,
                                            kiln_mpi_darray *b, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
/* 2-D row blocks: a rows x cols array (C order), rank r owning rows
 * [start_r, start_r + count_r) by the same block rule over rows, stored in
 * a local 2-D array of (count_r + 2 * halo) x cols whose rows [halo, halo +
 * count_r) are its own; the halo rows above and below get copies of the
 * neighbouring ranks' edge rows from kiln_mpi_darray_halo_exchange (rank
 * 0's upper and the last rank's lower halo are left as they are). Every
 * rank must own at least halo rows (else KILN_ERROR_INVALID_ARGUMENT).
 * kiln_mpi_darray_start / _count / _size count rows; gather takes the
 * owned rows. The 1-D operations (binary, fills, cumsum, sum) take 1-D
 * arrays only (KILN_ERROR_UNSUPPORTED). */
KILN_API kiln_status kiln_mpi_darray_rows_empty(kiln_mpi *mpi, kiln_dtype dtype, size_t rows,
                                                size_t cols, size_t halo, kiln_mpi_darray **darray);
/* From root's host data (rows x cols, C order; NULL elsewhere). */
KILN_API kiln_status kiln_mpi_darray_rows_scatter(kiln_mpi *mpi, kiln_queue *queue,
                                                  kiln_dtype dtype, size_t rows, size_t cols,
                                                  size_t halo, const void *host, int root,
                                                  size_t num_wait, kiln_event *const *wait,
                                                  kiln_event **event, kiln_mpi_darray **darray);
/* Each rank's first halo own rows go to the rank above (its lower halo),
 * its last halo own rows to the rank below (its upper halo): four
 * kiln_mpi_send / _recv at once. *event ends when all have. */
KILN_API kiln_status kiln_mpi_darray_halo_exchange(kiln_mpi *mpi, kiln_queue *queue,
                                                   kiln_mpi_darray *darray, size_t num_wait,
                                                   kiln_event *const *wait, kiln_event **event);
/* Columns (1 for 1-D) and halo rows (0 for 1-D). */
KILN_API size_t kiln_mpi_darray_cols(const kiln_mpi_darray *darray);
KILN_API size_t kiln_mpi_darray_halo(const kiln_mpi_darray *darray);
/* Random fills equal, bit for bit, to kiln_rng_uniform / kiln_rng_normal
 * of the whole n elements on one device from the same generator state
 * (each rank reads the words of its own elements: the counters are global
 * indices). rng must be in the same state on every rank (same
 * descriptor, same offset); afterwards its offset has advanced past the
 * whole array on every rank, as a one-device fill's would. Not to be
 * called on one generator from two threads at once. */
KILN_API kiln_status kiln_mpi_darray_uniform(kiln_mpi *mpi, kiln_queue *queue, kiln_rng *rng,
                                             kiln_mpi_darray *darray, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_mpi_darray_normal(kiln_mpi *mpi, kiln_queue *queue, kiln_rng *rng,
                                            kiln_mpi_darray *darray, double mean, double stddev,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
/* The global inclusive (exclusive != 0: exclusive) prefix sum of a into
 * out (same n and dtype; out may be a): a local scan, an exclusive scan of
 * the ranks' totals (MPI_Exscan), and a fix-up of the local block.
 * Integer and float dtypes but float16. */
KILN_API kiln_status kiln_mpi_darray_cumsum(kiln_mpi *mpi, kiln_queue *queue, kiln_mpi_darray *out,
                                            kiln_mpi_darray *a, int exclusive, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
/* The global sort (ascending, kiln's total order: docs of kiln/sort.h) of
 * a 1-D array of integers, float32 or float64, in place: afterwards the
 * blocks hold what one device's kiln_array_sort_out of the whole array would.
 * A sample sort: local sort, splitters from all-gathered samples, an
 * all-to-all of the pieces, a sort of each bucket, an all-to-all back to
 * the block layout. Collective. The _async form returns at once: the sort
 * runs on kiln_mpi's job thread after the wait list and the queue's
 * earlier work (its MPI calls each bounded by the deadline), and *event
 * (a command on queue, which later work on queue waits for) ends with it;
 * kiln_mpi_wait gives its status. The sort, redistribution and user
 * reductions run one after another in call order (every rank must call
 * them in the same order). darray may be released before *event ends.
 * The plain form is the _async form and kiln_mpi_wait. */
KILN_API kiln_status kiln_mpi_darray_sort(kiln_mpi *mpi, kiln_queue *queue,
                                          kiln_mpi_darray *darray);
KILN_API kiln_status kiln_mpi_darray_sort_async(kiln_mpi *mpi, kiln_queue *queue,
                                                kiln_mpi_darray *darray, size_t num_wait,
                                                kiln_event *const *wait, kiln_event **event);
/* The global histogram (kiln_array_histogram of the whole array: bins
 * equal bins over [lo, hi]) into *hist, a new INT64 array of bins counts
 * on every rank: a local histogram, then an all-reduce. Every rank passes
 * the same bins, lo and hi (bins is checked). */
KILN_API kiln_status kiln_mpi_darray_histogram(kiln_mpi *mpi, kiln_queue *queue,
                                               kiln_mpi_darray *darray, size_t bins, double lo,
                                               double hi, size_t num_wait, kiln_event *const *wait,
                                               kiln_event **event, kiln_array **hist);
/* ------------------------------------------- layouts and redistribution
 *
 * A layout: rows elements in 1-D blocks (cols = 0), or a rows x cols
 * array in row blocks of halo halo rows (cols > 0), the blocks (by the
 * block rule above, over ranks rather than size()) on ranks [0, ranks)
 * (0 = every rank); the other ranks hold empty blocks (count 0, start at
 * the end). kiln_mpi_darray_empty is the layout { n, 0, 0, 0 },
 * kiln_mpi_darray_rows_empty { rows, cols, halo, 0 }. Local operations,
 * gather, scatter-made arrays, halo exchange, cumsum, sum, histogram and
 * the fills take any rank count; the sort wants every rank. */
typedef struct kiln_mpi_layout {
    size_t struct_size; /* sizeof (set by KILN_MPI_LAYOUT) */
    size_t rows;        /* 1-D: the elements; row blocks: the rows */
    size_t cols;        /* 0: 1-D blocks; else row blocks of cols columns */
    size_t halo;        /* row blocks only */
    int ranks;          /* 0 = every rank; else 1 <= ranks <= size() */
} kiln_mpi_layout;
#define KILN_MPI_LAYOUT(...) \
    ((kiln_mpi_layout){ .struct_size = sizeof(kiln_mpi_layout), __VA_ARGS__ })
/* An uninitialised distributed array of that layout (collective, as
 * kiln_mpi_darray_empty). */
KILN_API kiln_status kiln_mpi_darray_create(kiln_mpi *mpi, kiln_dtype dtype,
                                            const kiln_mpi_layout *layout,
                                            kiln_mpi_darray **darray);
/* How many ranks hold its blocks. */
KILN_API int kiln_mpi_darray_ranks(const kiln_mpi_darray *darray);
/* dst's owned elements = src's, the same global array (C order) in dst's
 * layout: 1-D blocks <-> row blocks, another column count, halo or rank
 * count. Same dtype and element count (checked on every rank, and the
 * ranks' layouts agree: a mismatch names both ranks' values). dst's halo
 * rows are left as they are (kiln_mpi_darray_halo_exchange fills them).
 * Each rank reads its src block to the host, one MPI_Ialltoallv moves the
 * overlaps, each writes its dst block. Collective; blocks. The _async
 * form runs it as kiln_mpi_darray_sort_async runs the sort. */
KILN_API kiln_status kiln_mpi_darray_redistribute(kiln_mpi *mpi, kiln_queue *queue,
                                                  kiln_mpi_darray *src, kiln_mpi_darray *dst);
KILN_API kiln_status kiln_mpi_darray_redistribute_async(kiln_mpi *mpi, kiln_queue *queue,
                                                        kiln_mpi_darray *src, kiln_mpi_darray *dst,
                                                        size_t num_wait, kiln_event *const *wait,
                                                        kiln_event **event);

/* --------------------------------------------- user-defined reductions
 *
 * A kiln_reduction (kiln/array.h) across the ranks: desc as for
 * kiln_reduction_create but without initial (it would be folded in once
 * per rank: KILN_ERROR_UNSUPPORTED). Each rank runs it over its own [0, n)
 * (n may differ; n = 0 contributes the neutral element), the ranks'
 * partials (out_size bytes; scalar type names know their size) are
 * all-gathered and combined on each rank's device by the same reduce, in
 * rank order, so an associative reduce gives one answer on every rank. */
typedef struct kiln_mpi_reduction kiln_mpi_reduction;
/* Compiles both parts (blocks). Not collective. */
KILN_API kiln_status kiln_mpi_reduction_create(kiln_mpi *mpi, const kiln_reduction_desc *desc,
                                               kiln_mpi_reduction **reduction);
KILN_API void kiln_mpi_reduction_release(kiln_mpi_reduction *reduction); /* NULL: no-op */
/* The reduction over every rank's [0, n) with its own args into
 * host_result (out_size bytes) on every rank. Collective; blocks. A rank
 * whose local part fails fails with its status; the others with
 * KILN_ERROR_EVENT_FAILED naming it. */
KILN_API kiln_status kiln_mpi_reduction_allreduce(kiln_mpi *mpi, kiln_queue *queue,
                                                  kiln_mpi_reduction *reduction, size_t n,
                                                  size_t num_args, const kiln_arg *args,
                                                  void *host_result);
/* The same as a job (kiln_mpi_darray_sort_async): args are copied and
 * the arrays and buffers among them held until *event ends; host_result
 * (and any KILN_ARG_MAP host memory) must stay valid until then and is
 * written when it ends. reduction may be released before. */
KILN_API kiln_status kiln_mpi_reduction_allreduce_async(kiln_mpi *mpi, kiln_queue *queue,
                                                        kiln_mpi_reduction *reduction, size_t n,
                                                        size_t num_args, const kiln_arg *args,
                                                        void *host_result, size_t num_wait,
                                                        kiln_event *const *wait,
                                                        kiln_event **event);

/* The sum of all n elements into result, a 1-element device array of a's
 * dtype, on every rank (a local reduction, then an all-reduce). */
KILN_API kiln_status kiln_mpi_darray_sum(kiln_mpi *mpi, kiln_queue *queue, kiln_mpi_darray *a,
                                         kiln_array *result, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event);

#ifdef __cplusplus
}
#endif

#endif /* KILN_MPI_H */
