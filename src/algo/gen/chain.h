/* A chain of commands on one queue (issue 43, item 3): each command waits
 * for the one before, the first for the caller's wait list. The status is
 * sticky: the first failure wins and every step after it is a no-op that
 * returns it, so a sequence of steps needs no `if (st == KILN_OK)` before
 * each. Everything the chain holds (its last event, temporaries, arrays,
 * the context's scratch slots) is released by kiln__chain_end on every
 * path; queued work keeps what it uses alive.
 *
 *     kiln__chain c = KILN__CHAIN_INIT(queue, num_wait, wait);
 *     kiln__chain_tmp(&c, bytes, &t);
 *     kiln__chain_launch(&c, k, global, local, args, nargs);
 *     kiln__chain_copy(&c, t, out, bytes);
 *     return kiln__chain_end(&c, KILN_OK, event);
 *
 * A command the helpers do not cover is enqueued with the chain's wait
 * list (kiln__chain_nw, kiln__chain_w) and its result handed to
 * kiln__chain_add; any other failure to kiln__chain_fail. Used by the sort
 * (prim/sort.c, ops/sort_ops.c) and the index operations
 * (ops/array_index.c). */
#ifndef KILN_ALGO_GEN_CHAIN_H
#define KILN_ALGO_GEN_CHAIN_H

#include "algo/gen/algo.h"
#include "kiln.h"

/* the limits of the helpers it replaced: the sort's 12 buffers, 4 count
 * arrays and 4 scratch slots, sort_ops's 8 array temporaries */
enum { KILN__CHAIN_TMP = 12, KILN__CHAIN_ARRAYS = 12, KILN__CHAIN_SCRATCH = 4 };

typedef struct kiln__chain {
    kiln_queue *q;
    kiln_status st; /* sticky: KILN_OK or the first failure */
    size_t nw;      /* the caller's wait list, until the first command */
    kiln_event *const *w;
    kiln_event *last; /* the last command's event (held) */
    kiln_buffer *tmp[KILN__CHAIN_TMP];
    int ntmp;
    kiln_array *arrays[KILN__CHAIN_ARRAYS];
    int narrays;
    kiln__scratch scratch[KILN__CHAIN_SCRATCH]; /* the context's slots in use */
    int nscratch;
} kiln__chain;

#define KILN__CHAIN_INIT(queue, num_wait, wait) \
    { .q = (queue), .nw = (num_wait), .w = (wait) }

/* The wait list of the chain's next command. */
size_t kiln__chain_nw(const kiln__chain *c);
kiln_event *const *kiln__chain_w(const kiln__chain *c);

/* The result of a command enqueued with the chain's wait list: on KILN_OK
 * e (NULL: nothing was enqueued) becomes the chain's last event; on a
 * failure e is released and st becomes the chain's status. Returns the
 * chain's status. */
kiln_status kiln__chain_add(kiln__chain *c, kiln_status st, kiln_event *e);
/* A failure outside a command (KILN_OK changes nothing). Returns the
 * chain's status. */
kiln_status kiln__chain_fail(kiln__chain *c, kiln_status st);
/* Unless the chain has failed: runs call (a kiln_status expression) and
 * keeps its status. The value is the chain's status. */
#define KILN__CHAIN_DO(c, call) ((c)->st == KILN_OK ? kiln__chain_fail((c), (call)) : (c)->st)

/* Steps; each is a no-op returning the chain's status once it failed. */
kiln_status kiln__chain_launch(kiln__chain *c, kiln_kernel *k, size_t global, size_t local,
                               const kiln_arg *args, size_t nargs);
kiln_status kiln__chain_copy(kiln__chain *c, kiln_buffer *src, kiln_buffer *dst, size_t bytes);
/* bytes (a multiple of 4) of b set to zero. */
kiln_status kiln__chain_zero(kiln__chain *c, kiln_buffer *b, size_t bytes);
kiln_status kiln__chain_array_copy(kiln__chain *c, kiln_array *dst, kiln_array *src);
/* A pooled buffer of bytes, released by kiln__chain_end. */
kiln_status kiln__chain_tmp(kiln__chain *c, size_t bytes, kiln_buffer **b);
/* A new dense array, released by kiln__chain_end. */
kiln_status kiln__chain_array(kiln__chain *c, kiln_dtype dtype, unsigned ndim, const size_t *shape,
                              kiln_array **out);
/* The context's scratch buffer of slot (KILN__SCRATCH_*), of at least
 * bytes; the chain's next command waits for its last user. Given back by
 * kiln__chain_scratch_put (those taken after the first `from` of them) or
 * kiln__chain_end, with the chain's last event. */
kiln_status kiln__chain_scratch(kiln__chain *c, int slot, size_t bytes, kiln_buffer **b);
void kiln__chain_scratch_put(kiln__chain *c, int from);

/* Ends the chain: st (a failure outside it) joins its status; releases
 * everything it holds; on success hands its last event to *event (a marker
 * of the caller's wait list when nothing was enqueued; event may be NULL).
 * Returns the chain's status. */
kiln_status kiln__chain_end(kiln__chain *c, kiln_status st, kiln_event **event);

#endif
