/* Offload's private pieces (include/kiln/offload.h), shared by its files:
 *   offload.c          the offload object (create, retain, release, stats)
 *   offload_codegen.c  the kernel source of a body, and its build
 *   offload_run.c      runs: argument resolution, copies, the launch
 *   offload_region.c   data regions: begin, end, wait, the tree's tail
 *   offload_update.c   region lookups, updates and stats
 *   offload_maps.c     host ranges: checks, overlaps, lookup in a tree
 *   offload_events.c   event lists and wait-list checks
 *   offload_stats.c    movement counters
 * Built on the public API only (buffers, async copies, markers, launches).
 * Every step on a region tree waits for the tree's last event (the "tail"),
 * which orders the work on out-of-order queues and across queues too. */
#ifndef KILN_ALGO_OFFLOAD_INTERNAL_H
#define KILN_ALGO_OFFLOAD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "algo/gen/algo.h"
#include "kiln.h"

/* One mapped host range of a region. */
typedef struct kiln__dmap {
    uintptr_t host;
    size_t bytes;
    kiln_data_kind kind;
    kiln_buffer *buf; /* retained; NULL when bytes == 0 */
    size_t off;       /* byte offset of host in buf */
    int owned;        /* this region made buf */
} kiln__dmap;

struct kiln_data_region {
    kiln_queue *queue; /* retained */
    kiln_context *context;
    kiln_data_region *parent;
    kiln_data_region *root;
    atomic_int children;
    size_t n;
    kiln__dmap *maps;
    kiln_offload_stats stats; /* under root->mu */
    /* root only */
    pthread_mutex_t mu;
    kiln_event *tail; /* last work enqueued on the tree; retained */
};

struct kiln_offload {
    atomic_int refs;
    kiln_context *context; /* retained */
    kiln_program *program;
    kiln_kernel *kernel;
    kiln__gargs args;
    unsigned dims;
    pthread_mutex_t mu;
    kiln_offload_stats stats; /* under mu */
};

/* ---- offload_codegen.c */

/* Checks the name, index names and parameters, and writes the kernel's
 * source to *source (malloc'd) and its parameters to *args. */
kiln_status kiln__offload_generate(const char *params, const char *body, unsigned dims,
                                   const kiln_offload_opts *o, char **source, kiln__gargs *args);
/* Builds source; a compile error quotes the body and the first errors. */
kiln_status kiln__offload_build(kiln_context *ctx, const char *source, const char *build_options,
                                const char *body, kiln_program **prog);

/* ---- offload_region.c: the tree's tail (callers hold root->mu) */

/* Retained tail of r's tree, or NULL. */
kiln_event *kiln__region_tail(kiln_data_region *r);
/* Makes e (retained here) the tree's tail. */
void kiln__region_set_tail(kiln_data_region *r, kiln_event *e);

/* ---- offload_maps.c */

/* "TO", "FROM", ...; "?" for an unknown kind. */
const char *kiln__map_kind_name(kiln_data_kind k);
/* "mapped host memory", "a scalar (int32)", ... for messages; buf holds
 * the text when a dtype is named. */
const char *kiln__arg_kind_text(const kiln_arg *a, char *buf, size_t cap);
int kiln__ranges_overlap(uintptr_t a, size_t na, uintptr_t b, size_t nb);
/* Checks a region's maps: kinds, NULL pointers, overlaps. */
kiln_status kiln__check_region_maps(const char *what, size_t n, const kiln_arg *maps,
                                    int present_ok);
/* Finds where [h, h+n) lives in r and its parents (innermost first).
 * Returns 1 (found, *out set), 0 (not mapped) or -1 (error set in *st):
 * a range that runs past its mapping or straddles a mapping's start. */
int kiln__find_map(kiln_data_region *r, uintptr_t h, size_t n, const char *what,
                   const kiln__dmap **out, kiln_status *st);

/* ---- offload_events.c */

typedef struct kiln__evlist {
    kiln_event **v;
    size_t n, cap;
} kiln__evlist;

/* Appends e (owned by the list). On no memory waits for e, releases it and
 * fails. */
kiln_status kiln__evlist_push(kiln__evlist *l, kiln_event *e);
/* Waits for (when wait is set: failure paths) and releases every event. */
void kiln__evlist_drain(kiln__evlist *l, int wait);
/* One event that completes when all of l has: the single event itself, or
 * a marker. Consumes l. */
kiln_status kiln__evlist_join(kiln_queue *q, kiln__evlist *l, kiln_event **out);
/* KILN_ERROR_NULL_HANDLE if wait is NULL with num_wait > 0 or holds a NULL
 * event, so that nothing is enqueued before the core would refuse it. */
/* One event for "the tree's tail and the caller's wait list": NULL when
 * both are empty, the tail itself (retained) when there is no wait list,
 * else a marker. Pass it on as `after ? 1 : 0, &after`. */
kiln_status kiln__event_after(kiln_queue *q, kiln_event *tail, size_t num_wait,
                              kiln_event *const *wait, kiln_event **out);

/* ---- offload_stats.c */

void kiln__stats_add(kiln_offload_stats *s, const kiln_offload_stats *d);
/* Copies src into the caller's struct of stats_size bytes (an older
 * caller's is a prefix; a newer one's extra members read 0). */
kiln_status kiln__stats_copy(const char *what, const kiln_offload_stats *src,
                             kiln_offload_stats *stats, size_t stats_size);

#endif
