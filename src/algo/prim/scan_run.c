/* The launches of the scan's templates over a bound range: the
 * single-pass ones (tile status words in the context's scratch buffers,
 * zeroed, then one launch) and the three-phase one. */
#include <stdint.h>
#include <stdlib.h>

#include "algo/gen/knobs.h"
#include "algo/prim/scan.h"

/* The single-pass scans (warp and OpenCL): zero the tile status words (and
 * the tile counter after them), then one launch of one group per tile.
 * Both live in the context's scratch buffers. A scan of one tile touches
 * neither (the kernels take tile 0 and publish nothing): one launch, and
 * an event only if the caller asks for one (issue 16: a small scan's
 * round trip was twice a raw launch's, the fill and two events). */
kiln_status kiln__scan_run_onepass(kiln_queue *queue, const kiln_scan *s, const kiln__variant *v,
                                   const kiln__bound *b, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    size_t local = v->local;
    size_t tile = local * (size_t)v->items;
    size_t tiles = (b->n + tile - 1) / tile;
    size_t stride = (s->scan_size + 15) / 16 * 16;
    /* status words: 64-bit or 16-byte with the value in them, else ints
     * with the values in a second buffer */
    int packed = kiln__scan_packed(v->tmpl, s->scan_size);
    size_t sbytes = (tiles + 1) * (packed == 2 ? 16 : packed ? 8 : sizeof(int));
    kiln__scratch ss = { 0 }, sv = { 0 };
    kiln_event *e0 = NULL, *e1 = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    kiln_status st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_STATUS, sbytes, &ss);
    if (st == KILN_OK && !packed)
        st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_VALS, 2 * tiles * stride, &sv);
    int one = tiles == 1;
    /* The warp scan's epochs (its comment): words written by earlier
     * launches on this buffer read as "no status", so it is zeroed only
     * when new (all of it: a later, longer scan reads further). */
    int epoch = v->tmpl == KILN__SCAN_WARP && kiln__knobs_get()->scan_epoch;
    /* (a new buffer is zeroed by the first epoch user, one tile or not:
     * the next one relies on it) */
    int fill = epoch ? ss.fresh : !one;
    int untouched = one && !fill;
    /* the fill, or else the launch, waits for both slots' last users */
    if (st == KILN_OK && !untouched)
        st = kiln__wait_plus(num_wait, wait, ss.dep, sv.dep, &wl, &nwl);
    if (st == KILN_OK && fill) {
        static const int zero = 0;
        st = kiln_buffer_fill(queue, ss.buf, &zero, sizeof zero, 0,
                              epoch ? ss.size / sizeof zero * sizeof zero : sbytes, nwl, wl, &e0);
    }
    if (st == KILN_OK) {
        kiln_arg pre[5] = { KILN_ARG_BUF(ss.buf), KILN_ARG_BUF(packed ? ss.buf : sv.buf),
                            KILN_ARG_I64((int64_t)stride), KILN_ARG_I64((int64_t)tiles),
                            KILN_ARG_I32(epoch ? (int32_t)ss.uses : 0) };
        if (untouched)
            st = kiln__launch(queue, v->k[0], local, local, pre, 5, b, num_wait, wait,
                              event ? &e1 : NULL);
        else if (fill)
            st = kiln__launch(queue, v->k[0], tiles * local, local, pre, 5, b, 1, &e0, &e1);
        else
            st = kiln__launch(queue, v->k[0], tiles * local, local, pre, 5, b, nwl, wl, &e1);
    }
    if (wl != wait)
        free((void *)wl);
    /* one tile: the buffers were not used, their last users still count */
    kiln__scratch_put(queue, &ss, untouched ? NULL : e1 ? e1 : e0);
    kiln__scratch_put(queue, &sv, untouched ? NULL : e1 ? e1 : e0);
    if (st == KILN_OK && event) {
        *event = e1;
        e1 = NULL;
    }
    kiln__event_drop(&e0);
    kiln__event_drop(&e1);
    return st;
}

/* The three-phase scan: each work-item owns a contiguous range; block
 * totals, a scan of the totals (one work-item), a rescan of each block
 * with its carry-in. One block: the rescan alone, with no carry. On CPUs
 * a long range runs in rounds of the three launches over KILN__SCAN_ROUND
 * bytes of items each, so that the rescan reads its input from the cache
 * the totals' pass left it in, not from memory again (int32 at 2^24 with
 * the vector rescan, 2 cores: 5.8-6.1 ms in one round, 3.6-4.8 in rounds
 * of 4 MiB; 2 MiB and 8 MiB no better). */
#define KILN__SCAN_ROUND ((size_t)4 << 20)

kiln_status kiln__scan_run_threephase(kiln_queue *queue, const kiln_scan *s, const kiln__variant *v,
                                      const kiln__plan *plan, const kiln__bound *b, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event) {
    size_t n = b->n, local = v->local;
    size_t span = n; /* the items of one round */
    if (plan->cpu && s->scan_size && s->scan_size <= KILN__SCAN_ROUND &&
        n / 2 > KILN__SCAN_ROUND / s->scan_size)
        span = KILN__SCAN_ROUND / s->scan_size;
    size_t groups;
    if (plan->cpu) {
        groups = kiln__cpu_groups(plan, span, 8192);
    } else {
        groups = (n + local * 8 - 1) / (local * 8);
        if (groups > (size_t)plan->cu * 4)
            groups = (size_t)plan->cu * 4;
    }
    if (!groups)
        groups = 1;
    size_t chunk = (span + groups - 1) / groups;
    size_t unit = 64 * local;
    chunk = (chunk + unit - 1) / unit * unit;
    groups = (span + chunk - 1) / chunk;
    size_t step = groups * chunk; /* items per round */
    int one = n <= chunk;
    kiln__scratch ssum = { 0 }, sflag = { 0 };
    kiln_event *e1 = NULL, *e2 = NULL, *e3 = NULL;
    kiln_event *const *wl = wait;
    size_t nwl = num_wait;
    /* the totals, then the carry between rounds */
    kiln_status st =
        kiln__scratch_get(queue, KILN__SCRATCH_SCAN_SUMS, (groups + 1) * s->scan_size, &ssum);
    if (st == KILN_OK && !one)
        st = kiln__scratch_get(queue, KILN__SCRATCH_SCAN_FLAGS, groups * sizeof(int), &sflag);
    if (st == KILN_OK && !one)
        st = kiln__wait_plus(num_wait, wait, ssum.dep, sflag.dep, &wl, &nwl);
    kiln_buffer *sums = ssum.buf, *flags = sflag.buf;
    if (st == KILN_OK && one) {
        /* (the sums are not read: any buffer would do) */
        kiln_arg pre[4] = { KILN_ARG_BUF(sums), KILN_ARG_I64((int64_t)chunk), KILN_ARG_I64(0),
                            KILN_ARG_I32(1) };
        st = kiln__launch(queue, v->k[2], local, local, pre, 4, b, num_wait, wait,
                          event ? &e3 : NULL);
    }
    for (size_t base = 0; st == KILN_OK && !one && base < n; base += step) {
        size_t g = (n - base + chunk - 1) / chunk;
        if (g > groups)
            g = groups;
        kiln__event_drop(&e1);
        kiln__event_drop(&e2);
        kiln_arg pre1[4] = { KILN_ARG_BUF(sums), KILN_ARG_BUF(flags), KILN_ARG_I64((int64_t)chunk),
                             KILN_ARG_I64((int64_t)base) };
        if (base == 0)
            st = kiln__launch(queue, v->k[0], g * local, local, pre1, 4, b, nwl, wl, &e1);
        else
            st = kiln__launch(queue, v->k[0], g * local, local, pre1, 4, b, 1, &e3, &e1);
        kiln__event_drop(&e3);
        if (st == KILN_OK) {
            kiln_arg pre[5] = { KILN_ARG_BUF(sums), KILN_ARG_BUF(flags), KILN_ARG_I64((int64_t)g),
                                KILN_ARG_I64((int64_t)groups), KILN_ARG_I32(base > 0) };
            st = kiln__launch(queue, v->k[1], 1, 1, pre, 5, NULL, 1, &e1, &e2);
        }
        if (st == KILN_OK) {
            kiln_arg pre[4] = { KILN_ARG_BUF(sums), KILN_ARG_I64((int64_t)chunk),
                                KILN_ARG_I64((int64_t)base), KILN_ARG_I32(0) };
            st = kiln__launch(queue, v->k[2], g * local, local, pre, 4, b, 1, &e2, &e3);
        }
    }
    if (wl != wait)
        free((void *)wl);
    /* one block: the buffers were not used, their last users still count */
    kiln_event *last = one ? NULL : e3 ? e3 : e2 ? e2 : e1;
    kiln__scratch_put(queue, &ssum, last);
    kiln__scratch_put(queue, &sflag, last);
    if (st == KILN_OK && event) {
        *event = e3;
        e3 = NULL;
    }
    kiln__event_drop(&e1);
    kiln__event_drop(&e2);
    kiln__event_drop(&e3);
    return st;
}
