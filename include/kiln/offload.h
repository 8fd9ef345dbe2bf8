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
 * Map kinds (kiln_data_kind, in kiln.h):
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
 *     (kiln_data_region_wait, or any later blocking call on the region).
 *  2. kiln_offload_run / run_async with the region: pointer arguments inside
 *     mapped ranges resolve to the device copy (buffer + offset, so a row
 *     slice of a mapped matrix works). kiln_data_region_lookup gives the
 *     buffer and offset to a user's own kernels; kiln_data_region_update
 *     copies a range either way (OpenMP's `target update`).
 *  3. kiln_data_region_end (Blocks) copies FROM/TOFROM ranges back and frees
 *     the device memory; kiln_data_region_end_async returns an event
 *     instead. Nested regions must end before their parent.
 * Work on one region tree (begin, runs, updates, end) is ordered: each step
 * waits for the previous one, on in-order and out-of-order queues alike, and
 * whichever threads make the calls. A region is not shared like the other
 * objects (no retain): it belongs to its tree, and no call may use it once
 * kiln_data_region_end has been called on it.
 *
 * Arguments are kiln_arg (kiln.h), the one value type: KILN_TO / KILN_FROM /
 * KILN_TOFROM / KILN_ALLOC / KILN_PRESENT below build mapped host memory
 * (kind KILN_ARG_MAP), and scalars are KILN_ARG_I32(x), KILN_ARG_F64(x), ...
 *
 * Errors (the status table of docs/api.md; in every case nothing is
 * enqueued and output pointers are NULL):
 *   NULL queue/offload/region/range/args, a NULL host pointer with non-zero
 *   bytes, a NULL wait list with num_wait > 0 or a NULL event in it:
 *     KILN_ERROR_NULL_HANDLE
 *   overlapping ranges in one region or one run (mapping the same host
 *   memory twice, which OpenMP also refuses), a range that straddles the
 *   start of an enclosing mapping, a PRESENT range no enclosing region
 *   maps, an unknown map kind, a region map that is not KILN_ARG_MAP, a
 *   struct_size that is not the macro's: KILN_ERROR_INVALID_ARGUMENT
 *   a range running past the end of the mapping it starts in, a range
 *   larger than LONG_MAX / 2: KILN_ERROR_OUT_OF_RANGE
 *   arguments that do not match the declared parameters (count, kind,
 *   dtype, bytes not a multiple of the element size): KILN_ERROR_KERNEL_ARGS
 *   a queue of another context than the offload or region:
 *     KILN_ERROR_MISMATCH
 *   ending a region whose nested regions are still open:
 *     KILN_ERROR_WRONG_STATE
 */
#ifndef KILN_OFFLOAD_H
#define KILN_OFFLOAD_H

/* Mapped host memory [p, p + n) with map kind k, as a kiln_arg. n may be 0
 * (nothing is mapped or moved). With KILN_DATA_PRESENT, n 0 means "from p to
 * the end of its mapping". */
#define KILN_MAP(p, n, k) \
    ((kiln_arg){ .kind = KILN_ARG_MAP, .bytes = (n), .map = (k), .value.host = (void *)(p) })
#define KILN_TO(p, n) KILN_MAP(p, n, KILN_DATA_TO)
#define KILN_FROM(p, n) KILN_MAP(p, n, KILN_DATA_FROM)
#define KILN_TOFROM(p, n) KILN_MAP(p, n, KILN_DATA_TOFROM)
#define KILN_ALLOC(p, n) KILN_MAP(p, n, KILN_DATA_ALLOC)
#define KILN_PRESENT(p) KILN_MAP(p, 0, KILN_DATA_PRESENT)

/* Data movement counters (cumulative): what was enqueued, in copies and
 * bytes, so that a program can check that data stays on the device. An info
 * struct (docs/api.md rule 7): new members are only added at the end. */
typedef struct kiln_offload_stats {
    uint64_t copies_to, bytes_to;          /* host -> device */
    uint64_t copies_from, bytes_from;      /* device -> host */
    uint64_t allocations, bytes_allocated; /* device buffers created */
    uint64_t launches;                     /* kernels launched */
} kiln_offload_stats;

/* ------------------------------------------------------------ data regions */

typedef struct kiln_data_region kiln_data_region;

/* Begins a data region on queue's context (see the life cycle above).
 * maps: num_maps KILN_ARG_MAP entries (KILN_TO, ...; any other kind is
 * KILN_ERROR_INVALID_ARGUMENT). parent: an enclosing region (NULL for none);
 * ranges inside the parent's mappings reuse its device memory, and
 * KILN_DATA_PRESENT entries must lie in one. Entries with bytes 0 map
 * nothing. Does not block: the copies in are enqueued after the tree's
 * earlier work; *region is set to NULL on failure. */
KILN_API kiln_status kiln_data_region_begin(kiln_queue *queue, kiln_data_region *parent,
                                            size_t num_maps, const kiln_arg *maps,
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
/* The same without blocking: the copies back also wait for wait[0..num_wait)
 * (events of any context); *event (may be NULL) completes when they have
 * ended, and the host memory must stay valid until then. The region is gone
 * on return, even on an error, except KILN_ERROR_WRONG_STATE and a NULL
 * wait list or event in it (KILN_ERROR_NULL_HANDLE): then nothing happened.
 * NULL region: KILN_OK, and *event is NULL. */
KILN_API kiln_status kiln_data_region_end_async(kiln_data_region *region, size_t num_wait,
                                                kiln_event *const *wait, kiln_event **event);
/* The device copy of host: *buffer (borrowed; valid until the mapping's
 * region ends) and the byte offset of host in it; *bytes_left (may be NULL)
 * gets the bytes mapped from host on. Searches the region and its parents.
 * KILN_ERROR_INVALID_ARGUMENT if host is not mapped. Work enqueued on the
 * buffer by the caller is not ordered with the region's own work: wait for
 * the region (kiln_data_region_wait) or use the events of its calls. */
KILN_API kiln_status kiln_data_region_lookup(kiln_data_region *region, const void *host,
                                             kiln_buffer **buffer, size_t *offset,
                                             size_t *bytes_left);
/* OpenMP's `target update`: copies [host, host + bytes) between the host and
 * its device copy, kind KILN_DATA_TO or KILN_DATA_FROM (another kind is
 * KILN_ERROR_INVALID_ARGUMENT). Does not block: the copy waits for the
 * tree's earlier work and for wait[0..num_wait); *event (may be NULL)
 * completes when it has ended, and later work on the tree waits for it.
 * bytes 0 copies nothing (the event still follows the wait list). */
KILN_API kiln_status kiln_data_region_update(kiln_data_region *region, void *host, size_t bytes,
                                             kiln_data_kind kind, size_t num_wait,
                                             kiln_event *const *wait, kiln_event **event);
/* Movement caused by this region: its begin, end and updates, and the runs
 * given this region. stats_size is sizeof *stats as the caller was compiled
 * (the macro passes it; rule 7 of docs/api.md). */
KILN_API kiln_status kiln_data_region_get_stats(kiln_data_region *region, kiln_offload_stats *stats,
                                                size_t stats_size);
#define kiln_data_region_get_stats(region, stats) \
    kiln_data_region_get_stats((region), (stats), sizeof *(stats))

/* ---------------------------------------------------------------- offloads */

typedef struct kiln_offload kiln_offload;

/* A descriptor (docs/api.md rule 7): make it with KILN_OFFLOAD_OPTS(...),
 * which sets struct_size; every other member may be left out (0 / NULL). */
typedef struct kiln_offload_opts {
    size_t struct_size; /* sizeof(kiln_offload_opts): set by the macro */
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

/* kiln_offload_opts o = KILN_OFFLOAD_OPTS(.index_names = "j"); */
#define KILN_OFFLOAD_OPTS(...) \
    ((kiln_offload_opts){ .struct_size = sizeof(kiln_offload_opts), __VA_ARGS__ })

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
 * the body's lines under the file name "offload body". opts may be NULL
 * (the defaults); a struct_size of 0 or too small for the first version of
 * kiln_offload_opts is KILN_ERROR_INVALID_ARGUMENT. *offload is set to NULL
 * on failure. */
KILN_API kiln_status kiln_offload_create(kiln_context *context, const char *params,
                                         const char *body, unsigned dims,
                                         const kiln_offload_opts *opts, kiln_offload **offload);
/* Offloads are reference counted; create gives one reference. */
KILN_API kiln_status kiln_offload_retain(kiln_offload *offload);
/* NULL is a no-op. Runs in flight are unaffected. */
KILN_API void kiln_offload_release(kiln_offload *offload);

/* Runs the offload over range[0..dims) on queue: num_args kiln_arg, one per
 * declared parameter, in order.
 * Pointer parameters take mapped host memory (KILN_TO, ..., KILN_PRESENT):
 *  - inside a mapping of region (or its parents): the device copy is used;
 *    an explicit TO / FROM / TOFROM also copies that range in before / out
 *    after the launch, ALLOC and PRESENT move nothing;
 *  - otherwise: a device buffer is made for the run, TO/TOFROM copied in,
 *    FROM/TOFROM copied out after the launch, and freed; PRESENT is an error.
 * Scalar parameters take KILN_ARG_* of the declared dtype. Another kind
 * (a buffer, an array, local memory), a wrong count, another dtype, or
 * bytes that are not a multiple of the element size is
 * KILN_ERROR_KERNEL_ARGS naming the parameter. A range with a 0 is a no-op
 * (arguments are still checked; no data moves). region may be NULL.
 * Blocks until the run has ended if it copies anything between host and
 * device (so host memory may be reused on return); otherwise returns once
 * the launch is enqueued, ordered after earlier work on region. */
KILN_API kiln_status kiln_offload_run(kiln_queue *queue, kiln_offload *offload,
                                      kiln_data_region *region, const size_t *range,
                                      size_t num_args, const kiln_arg *args);
/* The same, never blocking: the run also waits for wait[0..num_wait);
 * *event (may be NULL) completes when the launch and the copies out have
 * ended; host memory of the copied ranges must stay valid and untouched
 * until then. */
KILN_API kiln_status kiln_offload_run_async(kiln_queue *queue, kiln_offload *offload,
                                            kiln_data_region *region, const size_t *range,
                                            size_t num_args, const kiln_arg *args, size_t num_wait,
                                            kiln_event *const *wait, kiln_event **event);
/* Movement caused by this offload's runs, over all regions. stats_size as
 * for kiln_data_region_get_stats (the macro passes it). */
KILN_API kiln_status kiln_offload_get_stats(kiln_offload *offload, kiln_offload_stats *stats,
                                            size_t stats_size);
#define kiln_offload_get_stats(offload, stats) \
    kiln_offload_get_stats((offload), (stats), sizeof *(stats))

#endif /* KILN_OFFLOAD_H */
