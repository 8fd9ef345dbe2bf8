/* The chain of commands with a sticky status (chain.h). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "algo/gen/chain.h"
#include "base/error.h"

size_t kiln__chain_nw(const kiln__chain *c) {
    assert((c->nw == 0 || c->w) && "a chain's wait list has its events");
    return c->last ? 1 : c->nw;
}

kiln_event *const *kiln__chain_w(const kiln__chain *c) {
    return c->last ? &c->last : c->w;
}

kiln_status kiln__chain_add(kiln__chain *c, kiln_status st, kiln_event *e) {
    if (st != KILN_OK || c->st != KILN_OK) {
        if (e)
            kiln_event_release(e);
        return kiln__chain_fail(c, st);
    }
    if (e) {
        assert(e != c->last && "a chain's step returned the event it waited on");
        kiln__event_drop(&c->last);
        c->last = e;
    }
    return KILN_OK;
}

kiln_status kiln__chain_fail(kiln__chain *c, kiln_status st) {
    if (c->st == KILN_OK)
        c->st = st;
    return c->st;
}

kiln_status kiln__chain_launch(kiln__chain *c, kiln_kernel *k, size_t global, size_t local,
                               const kiln_arg *args, size_t nargs) {
    if (c->st != KILN_OK)
        return c->st;
    kiln_event *e = NULL;
    kiln_status st = kiln__launch(c->q, k, global, local, args, nargs, NULL, kiln__chain_nw(c),
                                  kiln__chain_w(c), &e);
    return kiln__chain_add(c, st, e);
}

kiln_status kiln__chain_copy(kiln__chain *c, kiln_buffer *src, kiln_buffer *dst, size_t bytes) {
    if (c->st != KILN_OK)
        return c->st;
    kiln_event *e = NULL;
    kiln_status st =
        kiln_buffer_copy(c->q, src, 0, dst, 0, bytes, kiln__chain_nw(c), kiln__chain_w(c), &e);
    return kiln__chain_add(c, st, e);
}

kiln_status kiln__chain_zero(kiln__chain *c, kiln_buffer *b, size_t bytes) {
    static const uint32_t zero = 0;
    if (c->st != KILN_OK)
        return c->st;
    kiln_event *e = NULL;
    kiln_status st = kiln_buffer_fill(c->q, b, &zero, sizeof zero, 0, bytes, kiln__chain_nw(c),
                                      kiln__chain_w(c), &e);
    return kiln__chain_add(c, st, e);
}

kiln_status kiln__chain_array_copy(kiln__chain *c, kiln_array *dst, kiln_array *src) {
    if (c->st != KILN_OK)
        return c->st;
    kiln_event *e = NULL;
    kiln_status st = kiln_array_copy_out(c->q, dst, src, kiln__chain_nw(c), kiln__chain_w(c), &e);
    return kiln__chain_add(c, st, e);
}

kiln_status kiln__chain_tmp(kiln__chain *c, size_t bytes, kiln_buffer **b) {
    *b = NULL;
    if (c->st != KILN_OK)
        return c->st;
    if (c->ntmp == KILN__CHAIN_TMP)
        return kiln__chain_fail(c, kiln__error_set(KILN_ERROR_INTERNAL, 0, "chain: temporaries"));
    kiln_status st = kiln_buffer_create(kiln_queue_context(c->q), bytes ? bytes : 1,
                                        KILN_BUFFER_POOLED, NULL, b);
    if (st == KILN_OK)
        c->tmp[c->ntmp++] = *b;
    return kiln__chain_fail(c, st);
}

kiln_status kiln__chain_array(kiln__chain *c, kiln_dtype dtype, unsigned ndim, const size_t *shape,
                              kiln_array **out) {
    *out = NULL;
    if (c->st != KILN_OK)
        return c->st;
    if (c->narrays == KILN__CHAIN_ARRAYS)
        return kiln__chain_fail(c, kiln__error_set(KILN_ERROR_INTERNAL, 0, "chain: arrays"));
    kiln_status st = kiln_array_empty(kiln_queue_context(c->q), dtype, ndim, shape, out);
    if (st == KILN_OK)
        c->arrays[c->narrays++] = *out;
    return kiln__chain_fail(c, st);
}

kiln_status kiln__chain_scratch(kiln__chain *c, int slot, size_t bytes, kiln_buffer **b) {
    *b = NULL;
    if (c->st != KILN_OK)
        return c->st;
    if (c->nscratch == KILN__CHAIN_SCRATCH)
        return kiln__chain_fail(c, kiln__error_set(KILN_ERROR_INTERNAL, 0, "chain: scratch"));
    kiln__scratch *s = &c->scratch[c->nscratch];
    kiln_status st = kiln__scratch_get(c->q, slot, bytes ? bytes : 1, s);
    if (st != KILN_OK)
        return kiln__chain_fail(c, st);
    c->nscratch++;
    *b = s->buf;
    if (!s->dep)
        return KILN_OK;
    /* a marker joins the slot's last user into the chain */
    kiln_event *const *wl = NULL;
    size_t nwl = 0;
    st = kiln__wait_plus(kiln__chain_nw(c), kiln__chain_w(c), s->dep, NULL, &wl, &nwl);
    kiln_event *e = NULL;
    if (st == KILN_OK)
        st = kiln_queue_marker(c->q, nwl, wl, &e);
    if (wl != kiln__chain_w(c))
        free((void *)wl);
    return kiln__chain_add(c, st, e);
}

void kiln__chain_scratch_put(kiln__chain *c, int from) {
    assert(from >= 0 && "scratch slots are given back down to a slot the chain has");
    while (c->nscratch > from) {
        c->nscratch--;
        kiln__scratch_put(c->q, &c->scratch[c->nscratch], c->last);
    }
}

kiln_status kiln__chain_end(kiln__chain *c, kiln_status st, kiln_event **event) {
    assert(c->ntmp >= 0 && c->ntmp <= KILN__CHAIN_TMP && c->narrays >= 0 &&
           c->narrays <= KILN__CHAIN_ARRAYS && c->nscratch >= 0 &&
           c->nscratch <= KILN__CHAIN_SCRATCH && "a chain's resources fit its tables");
    kiln__chain_fail(c, st);
    kiln__chain_scratch_put(c, 0);
    for (int j = 0; j < c->ntmp; j++)
        kiln_buffer_release(c->tmp[j]);
    c->ntmp = 0;
    for (int j = 0; j < c->narrays; j++)
        kiln_array_release(c->arrays[j]);
    c->narrays = 0;
    if (c->st == KILN_OK && event && !c->last)
        c->st = kiln_queue_marker(c->q, c->nw, c->w, event);
    else if (c->st == KILN_OK && event) {
        *event = c->last;
        c->last = NULL;
    }
    kiln__event_drop(&c->last);
    return c->st;
}
