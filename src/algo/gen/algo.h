/* Shared internals of the generators and everything above them
 * (src/algo/gen/): scratch buffers and wait lists; the array object is in
 * algo/array/array.h, the generators' machinery in algo/gen/generator.h
 * (both included). They use only the public API of kiln.h, plus base/. */
#ifndef KILN_ALGO_ALGO_H
#define KILN_ALGO_ALGO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "algo/array/array.h"
#include "algo/gen/generator.h"
#include "base/strbuf.h"
#include "kiln.h"

/* Event helper: releases *e and sets it NULL. */
void kiln__event_drop(kiln_event **e);
/* The end of a call that made event e: e into *event, or released when
 * the caller passed no event; KILN_OK. */
kiln_status kiln__event_give(kiln_event **event, kiln_event *e);

/* ---- per-context scratch buffers (ctxcache.c) */

/* Scratch buffers: one per slot and context, grown on demand. get() hands
 * out the slot's buffer (or a private one while another call holds it) and
 * in dep an event the new work must wait for (NULL: none); put() gives it
 * back with the event of the last command that uses it. */
enum {
    KILN__SCRATCH_PARTIALS = 0,
    KILN__SCRATCH_SCAN_STATUS,
    KILN__SCRATCH_SCAN_VALS,
    KILN__SCRATCH_SCAN_SUMS,
    KILN__SCRATCH_SCAN_FLAGS,
    KILN__SCRATCH_SORT_KEYS,     /* a sort's ping-pong keys (sort.c) */
    KILN__SCRATCH_SORT_VALS,     /* its ping-pong values */
    KILN__SCRATCH_SORT_STATUS,   /* the onesweep counts and status words */
    KILN__SCRATCH_SORT_ARGKEYS,  /* argsort's sorted keys, not returned */
    KILN__SCRATCH_UNIQUE_STARTS, /* a unique's run starts (select_ops.c) */
    KILN__SCRATCH_COUNTERS,      /* the counters of fused reductions (a
                                    column's in array_axis.c, word 0 a whole
                                    reduction's in reduce.c): zeroed whole
                                    when fresh (a later call may use more
                                    of it), every launch leaves them zero */
    KILN__SCRATCH_SLOTS
};
typedef struct kiln__scratch {
    kiln_buffer *buf;
    kiln_event *dep;
    int slot, cached;
    int fresh;     /* buf is new (its contents are not what the slot's last
                      user left) */
    size_t size;   /* buf's bytes (at least those asked for) */
    unsigned uses; /* 1, 2, ... hand-outs of this buffer since it was new
                      (fresh), below 2^30: the warp scan's epochs */
} kiln__scratch;
kiln_status kiln__scratch_get(kiln_queue *queue, int slot, size_t bytes, kiln__scratch *out);
void kiln__scratch_put(kiln_queue *queue, kiln__scratch *s, kiln_event *last);
/* Wait list = the caller's events plus dep_a and dep_b (each may be NULL:
 * a scratch buffer's last user). *list is wait itself or a malloc'd copy
 * (free it when *list != wait). */
kiln_status kiln__wait_plus(size_t num_wait, kiln_event *const *wait, kiln_event *dep_a,
                            kiln_event *dep_b, kiln_event *const **list, size_t *n);

#endif
