/* kiln offload: loop bodies run on the device with explicit data maps, and
 * data regions that keep data on the device between offloads.
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * This is OpenMP's `target data` / `target ... map(to/from/tofrom/alloc)`
 * written as C calls: host memory is named by a pointer and a byte count,
 * kiln keeps the device copy, and a loop body written as C statements over
 * indices runs on it. The body is compiled once (through the program caches)
 * in kiln's portable dialect, so it runs on OpenCL and CUDA devices alike.
 *
 * Map kinds (kiln_data_kind):
 *   KILN_DATA_TO      host -> device when the mapping starts
 *   KILN_DATA_FROM    device -> host when the mapping ends
 *   KILN_DATA_TOFROM  both
 *   KILN_DATA_ALLOC   device memory only; nothing moves
 *   KILN_DATA_PRESENT (offload arguments and nested regions) the range must
 *                     already be mapped by an enclosing region; nothing moves
 *
 * One rule, unlike OpenMP's reference counts: an explicit TO / FROM / TOFROM
 * always moves its bytes, even when the range is already on the device (in
 * an enclosing region); the device copy is then reused, not reallocated.
 * ALLOC and PRESENT never move anything. So inside a region that maps X TO,
 * pass X as KILN_PRESENT(X) to use the device copy as it is, and a row of an
 * ALLOC-mapped matrix as KILN_FROM(row, bytes) to copy just that row back.
 *
 * Life cycle of a data region:
 *  1. kiln_data_region_begin allocates a device buffer per mapped range (or
 *     reuses the enclosing region's buffer where the range lies inside one)
 *     and enqueues the TO/TOFROM copies. It returns at once: the host memory
 *     of TO ranges must stay untouched until the copies are done
 *     (kiln_data_region_wait), as with any *_async transfer.
 *  2. kiln_offload_run / run_async with the region: pointer arguments inside
 *     mapped ranges resolve to the device copy (buffer + offset, so a row
 *     slice of a mapped matrix works). kiln_data_region_lookup gives the
 *     buffer and offset to a user's own kernels; kiln_data_region_update
 *     copies a range either way (OpenMP's `target update`).
 *  3. kiln_data_region_end (Blocks) copies FROM/TOFROM ranges back and frees
 *     the device memory; kiln_data_region_end_async returns an event
 *     instead. Nested regions must end before their parent.
 * Work on one region tree (begin, runs, updates, end) is ordered: each step
 * waits for the previous one, on in-order and out-of-order queues alike.
 *
 * Errors: overlapping ranges in one region or one run (mapping the same host
 * memory twice, which OpenMP also refuses), or a range that straddles the
 * edge of an enclosing region's mapping: KILN_ERROR_INVALID_ARGUMENT. A NULL
 * host pointer with non-zero bytes: KILN_ERROR_NULL_HANDLE. A pointer
 * argument that lies in no enclosing mapping and has no map kind:
 * KILN_ERROR_INVALID_ARGUMENT. A range running past the end of the mapping
 * it starts in: KILN_ERROR_OUT_OF_RANGE. A queue of another context:
 * KILN_ERROR_MISMATCH. In every case nothing is enqueued.
 */
#ifndef KILN_OFFLOAD_H
#define KILN_OFFLOAD_H

/* kiln_data_kind is in kiln.h (kiln_arg names it). */

/* One mapped host range [host, host + bytes), or, as an offload argument,
 * a scalar passed by value (scalar.kind == KILN_ARG_SCALAR; host, bytes and
 * kind are then ignored). bytes may be 0 (nothing is mapped or moved). With
 * KILN_DATA_PRESENT, bytes 0 means "from host to the end of its mapping".
 * Build them with the macros below. */
typedef struct kiln_data_map {
    void *host;
    size_t bytes;
    kiln_data_kind kind;
    kiln_arg scalar;
} kiln_data_map;

#define KILN_DATA_MAP(p, n, k)                                                 \
    ((kiln_data_map){.host = (void *)(p), .bytes = (n), .kind = (k)})
#define KILN_TO(p, n) KILN_DATA_MAP(p, n, KILN_DATA_TO)
#define KILN_FROM(p, n) KILN_DATA_MAP(p, n, KILN_DATA_FROM)
#define KILN_TOFROM(p, n) KILN_DATA_MAP(p, n, KILN_DATA_TOFROM)
#define KILN_ALLOC(p, n) KILN_DATA_MAP(p, n, KILN_DATA_ALLOC)
#define KILN_PRESENT(p) KILN_DATA_MAP(p, 0, KILN_DATA_PRESENT)
/* Scalars by value; the dtype must be the declared parameter's. */
#define KILN_SCALAR(arg) ((kiln_data_map){.scalar = (arg)})
#define KILN_SCALAR_I32(x) KILN_SCALAR(KILN_ARG_I32(x))
#define KILN_SCALAR_U32(x) KILN_SCALAR(KILN_ARG_U32(x))
#define KILN_SCALAR_I64(x) KILN_SCALAR(KILN_ARG_I64(x))
#define KILN_SCALAR_U64(x) KILN_SCALAR(KILN_ARG_U64(x))
#define KILN_SCALAR_F32(x) KILN_SCALAR(KILN_ARG_F32(x))
#define KILN_SCALAR_F64(x) KILN_SCALAR(KILN_ARG_F64(x))

/* Data movement counters (cumulative): what was enqueued, in copies and
 * bytes, so that a program can check that data stays on the device. */
typedef struct kiln_offload_stats {
    uint64_t copies_to, bytes_to;     /* host -> device */
    uint64_t copies_from, bytes_from; /* device -> host */
    uint64_t allocations, bytes_allocated; /* device buffers created */
    uint64_t launches;                /* kernels launched */
} kiln_offload_stats;

/* ------------------------------------------------------------ data regions */

typedef struct kiln_data_region kiln_data_region;

/* Begins a data region on queue's context (see the life cycle above).
 * parent: an enclosing region (NULL for none); ranges inside the parent's
 * mappings reuse its device memory, and KILN_DATA_PRESENT entries must lie
 * in one. Entries with bytes 0 map nothing. Returns at once. */
KILN_API kiln_status kiln_data_region_begin(kiln_queue *queue,
                                            kiln_data_region *parent,
                                            size_t num_maps,
                                            const kiln_data_map *maps,
                                            kiln_data_region **region);
/* Blocks until everything enqueued so far on the region's tree (copies in,
 * runs, updates) has ended. KILN_ERROR_EVENT_FAILED if one failed. */
KILN_API kiln_status kiln_data_region_wait(kiln_data_region *region);
/* Ends the region: copies FROM/TOFROM ranges back, frees the device memory
 * and the region. Blocks until the copies (and all earlier work on the
 * region) have ended. The region is gone even if an error is returned,
 * except KILN_ERROR_WRONG_STATE (a nested region is still open). NULL is a
 * no-op (KILN_OK). */
KILN_API kiln_status kiln_data_region_end(kiln_data_region *region);
/* The same without blocking: *event (may be NULL) completes when the copies
 * back have ended; the host memory must stay valid until then. */
KILN_API kiln_status kiln_data_region_end_async(kiln_data_region *region,
                                                kiln_event **event);
/* The device copy of host: *buffer (borrowed; valid until the mapping's
 * region ends) and the byte offset of host in it; *bytes_left (may be NULL)
 * gets the bytes mapped from host on. Searches the region and its parents.
 * KILN_ERROR_INVALID_ARGUMENT if host is not mapped. */
KILN_API kiln_status kiln_data_region_lookup(kiln_data_region *region,
                                             const void *host,
                                             kiln_buffer **buffer,
                                             size_t *offset,
                                             size_t *bytes_left);
/* OpenMP's `target update`: copies [host, host + bytes) between the host and
 * its device copy, kind KILN_DATA_TO or KILN_DATA_FROM. Returns at once;
 * *event (may be NULL) completes when the copy has ended. */
KILN_API kiln_status kiln_data_region_update(kiln_data_region *region,
                                             void *host, size_t bytes,
                                             kiln_data_kind kind,
                                             kiln_event **event);
/* Movement caused by this region: its begin, end and updates, and the runs
 * given this region. */
KILN_API kiln_status kiln_data_region_get_stats(kiln_data_region *region,
                                                kiln_offload_stats *stats);

/* ---------------------------------------------------------------- offloads */

typedef struct kiln_offload kiln_offload;

typedef struct kiln_offload_opts {
    /* Names of the loop indices, outermost first, comma separated:
     * "i" / "i,j" / "i,j,k" by default. The last index varies fastest
     * between neighbouring work-items (make it the contiguous one). */
    const char *index_names;
    /* Code put before the kernel: helper functions marked KILN_FUNC (the
     * seed's @cython.device functions), #defines, struct types. */
    const char *preamble;
    const char *name;          /* kernel name; NULL = "kiln_offload" */
    const char *build_options; /* as kiln_program_opts; NULL = "" */
} kiln_offload_opts;

/* Makes an offload: a loop nest of dims (1..3) indices running body once per
 * index tuple, each index a long in [0, range[d]).
 *   params  C declarations, e.g. "const double *X, double *D, int M, int N":
 *           pointers are mapped host memory (element type a kiln dtype name
 *           or a struct type from the preamble), the rest scalars of a kiln
 *           dtype. Index names and names starting with kiln_ are reserved.
 *   body    C statements in the portable dialect, e.g.
 *           "double d = 0; for (int k = 0; k < N; k++) { double t = X[i*N+k]
 *            - X[j*N+k]; d += t*t; } D[i*M+j] = sqrt(d);"
 * Compiles through the program caches before returning (Blocks). A body that
 * does not compile is KILN_ERROR_BUILD: the message quotes the body and the
 * compiler's first error, and kiln_last_build_log() has the full log, with
 * the body's lines under the file name "offload body". opts may be NULL. */
KILN_API kiln_status kiln_offload_create(kiln_context *context,
                                         const char *params, const char *body,
                                         unsigned dims,
                                         const kiln_offload_opts *opts,
                                         kiln_offload **offload);
/* NULL is a no-op. Runs in flight are unaffected. */
KILN_API void kiln_offload_release(kiln_offload *offload);

/* Runs the offload over range[0..dims) on queue: one argument per declared
 * parameter, in order. Pointer arguments are kiln_data_map entries:
 *  - inside a mapping of region (or its parents): the device copy is used;
 *    an explicit TO / FROM / TOFROM also copies that range in before / out
 *    after the launch, ALLOC and PRESENT move nothing;
 *  - otherwise: a device buffer is made for the run, TO/TOFROM copied in,
 *    FROM/TOFROM copied out after the launch, and freed; PRESENT is an error.
 * Scalar arguments are KILN_SCALAR_* of the declared dtype; a wrong count,
 * a scalar for a pointer (or the reverse), another dtype, or bytes that are
 * not a multiple of the element size is KILN_ERROR_KERNEL_ARGS. A range with
 * a 0 is a no-op (arguments are still checked; no data moves).
 * region may be NULL. Blocks until the run has ended if it copies anything
 * between host and device (so host memory may be reused on return);
 * otherwise returns once the launch is enqueued, ordered after earlier work
 * on region. */
KILN_API kiln_status kiln_offload_run(kiln_queue *queue,
                                      kiln_offload *offload,
                                      kiln_data_region *region,
                                      const size_t *range, size_t num_args,
                                      const kiln_data_map *args);
/* The same, never blocking: *event (may be NULL) completes when the launch
 * and the copies out have ended; host memory of the copied ranges must stay
 * valid and untouched until then. The run also waits for wait[]. */
KILN_API kiln_status kiln_offload_run_async(
    kiln_queue *queue, kiln_offload *offload, kiln_data_region *region,
    const size_t *range, size_t num_args, const kiln_data_map *args,
    size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Movement caused by this offload's runs, over all regions. */
KILN_API kiln_status kiln_offload_get_stats(kiln_offload *offload,
                                            kiln_offload_stats *stats);

#endif /* KILN_OFFLOAD_H */
