/* Histogram edges (issue 41, item 14): kiln_array_histogram's (bins, lo,
 * hi) and kiln_array_histogram_edges' explicit edges (NaN, infinities,
 * decreasing, repeated, subnormal, huge), over data with the same kinds of
 * values, on the first device (a CPU here). Invariants: bad edges are
 * refused with a message, never a crash or a hang; an accepted histogram
 * counts exactly what NumPy's rule counts (bin k holds edges[k] <= x <
 * edges[k+1], the last bin closed; values outside and NaN are not
 * counted), checked against a serial count here for explicit edges, and
 * its total is at most n for linspace edges. Input: bins (1 byte), then
 * doubles: lo, hi, then up to 16 edges, then up to 64 data values. */
#include <math.h>

#include "fuzz_util.h"
#include "kiln.h"

static kiln_queue *q;

static double take_d(const uint8_t **p, size_t *n) {
    double d = 0;
    if (*n >= 8) {
        memcpy(&d, *p, 8);
        *p += 8;
        *n -= 8;
    } else if (*n) {
        d = (double)(int8_t) * *p; /* short tails: small integers */
        (*p)++;
        (*n)--;
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The queue, and the histogram kernels built once, before libFuzzer's
 * per-input timeout runs (a cold build on a loaded machine can take
 * longer than it). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    if (kiln_queue_create_default("host", 0, &q) != KILN_OK &&
        kiln_queue_create_default("cpu", 0, &q) != KILN_OK)
        q = NULL;
    static const uint8_t warm[] = { 3, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0 };
    if (q)
        LLVMFuzzerTestOneInput(warm, sizeof warm);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3 || !q)
        return 0;
    kiln_context *ctx = kiln_queue_context(q);
    size_t bins = data[0] % 20, ne = 2 + data[1] % 15, nx = data[2] % 65;
    const uint8_t *p = data + 3;
    size_t n = size - 3;
    double lo = take_d(&p, &n), hi = take_d(&p, &n), edges[17], x[64];
    for (size_t k = 0; k < ne; k++)
        edges[k] = take_d(&p, &n);
    for (size_t k = 0; k < nx; k++)
        x[k] = take_d(&p, &n);
    kiln_array *a = NULL, *e = NULL, *h = NULL;
    kiln_event *ev = NULL;
    if (kiln_array_from_host(ctx, KILN_FLOAT64, 1, &nx, x, &a) != KILN_OK ||
        kiln_array_from_host(ctx, KILN_FLOAT64, 1, &ne, edges, &e) != KILN_OK)
        abort();
    /* explicit edges */
    kiln_status st = kiln_array_histogram_edges(q, a, e, NULL, 0, NULL, &ev, &h);
    if (st != KILN_OK && !kiln_last_error_message()[0])
        abort();
    int good = 1;
    for (size_t k = 0; k < ne; k++)
        if (!isfinite(edges[k]) || (k && edges[k] < edges[k - 1]))
            good = 0;
    if (good != (st == KILN_OK))
        abort(); /* docs: edges must be finite and non-decreasing */
    if (st == KILN_OK) {
        int64_t got[16];
        if (kiln_event_wait(ev) != KILN_OK || kiln_array_read(q, h, got) != KILN_OK)
            abort();
        /* NumPy's rule: x goes to bin (number of edges <= x) - 1, the last
         * edge itself to the last bin; outside [edges[0], edges[ne-1]] and
         * NaN nowhere */
        int64_t want[16] = { 0 };
        for (size_t i = 0; i < nx; i++) {
            if (!(x[i] >= edges[0] && x[i] <= edges[ne - 1]))
                continue;
            size_t le = 0;
            while (le < ne && edges[le] <= x[i])
                le++;
            want[x[i] == edges[ne - 1] ? ne - 2 : le - 1]++;
        }
        for (size_t b = 0; b + 1 < ne; b++)
            if (got[b] != want[b])
                abort();
    }
    kiln_event_release(ev);
    kiln_array_release(h);
    ev = NULL;
    h = NULL;
    /* linspace edges */
    st = kiln_array_histogram(q, a, bins, lo, hi, NULL, 0, NULL, &ev, &h);
    if (st != KILN_OK && !kiln_last_error_message()[0])
        abort();
    if (st == KILN_OK) {
        int64_t got[20], total = 0;
        if (kiln_event_wait(ev) != KILN_OK || kiln_array_read(q, h, got) != KILN_OK)
            abort();
        for (size_t b = 0; b < bins; b++) {
            if (got[b] < 0)
                abort();
            total += got[b];
        }
        if (total > (int64_t)nx)
            abort();
    }
    kiln_event_release(ev);
    kiln_array_release(h);
    kiln_array_release(a);
    kiln_array_release(e);
    return 0;
}
