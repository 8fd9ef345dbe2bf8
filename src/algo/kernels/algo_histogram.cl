/* Histograms (src/algo/histogram.c). Defined before it:
 *   KILN_HIST_T     input element type; KILN_HIST_X(v) its value as E
 *   KILN_HIST_E     edge type (float, double; long for bincount)
 *   KILN_HIST_MODE  0: explicit edges (binary search), 1: equal bins (a
 *                   guess from lo and scale, corrected against the edges,
 *                   as NumPy does), 2: bin = the value (bincount)
 *   KILN_HIST_PRIV  bins counted per work-group in local memory (then one
 *                   global atomic per bin and group); KILN_HIST_NB bins
 *   KILN_HIST_W     weight type when weighted (global atomics), with
 *                   KILN_HIST_ADD(p, v); the counts are ulong otherwise.
 * Bin b holds edges[b] <= x < edges[b+1], the last bin also x == edges[nb];
 * values outside and NaN are left out. */
#ifdef KILN_HIST_W
typedef KILN_HIST_W kiln_hist_c;
typedef KILN_HIST_W kiln_hist_wt;
#else
typedef ulong kiln_hist_c;
typedef uchar kiln_hist_wt; /* no weights: an unused buffer */
#endif

#if KILN_LOCAL_SIZE == 1
#define KILN_HIST_LOCAL_INC(p) (*(p) += 1u) /* a group of one: no race */
#elif defined(KILN_BACKEND_CUDA)
#define KILN_HIST_LOCAL_INC(p) atomicAdd((p), 1u)
#else
#define KILN_HIST_LOCAL_INC(p) atomic_inc((volatile __local uint *)(p))
#endif

#ifdef KILN_HIST_ADD_DOUBLE
#ifdef KILN_BACKEND_CUDA
KILN_FUNC void kiln_hist_add_double(double *p, double v) { atomicAdd(p, v); }
#else
KILN_FUNC void kiln_hist_add_double(__global double *p, double v)
{
    volatile __global ulong *u = (volatile __global ulong *)p;
    ulong old = *u;
    for (;;) {
        ulong seen = atom_cmpxchg(u, old, as_ulong(as_double(old) + v));
        if (seen == old)
            break;
        old = seen;
    }
}
#endif
#endif

/* first, last: edges[0] and edges[nb], kept in registers by the caller */
KILN_FUNC long kiln_hist_bin(KILN_HIST_E x, KILN_GLOBAL const KILN_HIST_E *edges,
                             long nb, KILN_HIST_E lo, KILN_HIST_E scale,
                             KILN_HIST_E first, KILN_HIST_E last)
{
#if KILN_HIST_MODE == 2
    (void)edges;
    (void)lo;
    (void)scale;
    (void)first;
    (void)last;
    return x >= 0 && x < nb ? (long)x : -1;
#else
    if (!(x >= first && x <= last))
        return -1; /* outside, or NaN */
#if KILN_HIST_MODE == 1
    long b = (long)((x - lo) * scale);
    b = b < 0 ? 0 : b >= nb ? nb - 1 : b;
    if (x < edges[b])
        b--;
    else if (b < nb - 1 && x >= edges[b + 1])
        b++;
    return b;
#else
    (void)lo;
    (void)scale;
    long l = 0, h = nb; /* edges[l] <= x, and x < edges[h] or h == nb */
    while (h - l > 1) {
        long m = (l + h) / 2;
        if (edges[m] <= x)
            l = m;
        else
            h = m;
    }
    return l;
#endif
#endif
}

KILN_KERNEL void @NAME@_hist(KILN_GLOBAL const KILN_HIST_T *x, long x_o,
                             long n, KILN_GLOBAL const KILN_HIST_E *edges,
                             long nb, KILN_HIST_E lo, KILN_HIST_E scale,
                             KILN_GLOBAL kiln_hist_c *hist,
                             KILN_GLOBAL const kiln_hist_wt *w, long w_o,
                             long chunk)
{
#if KILN_CPU
    /* one contiguous chunk per work-group (of one work-item) */
    long i = (long)kiln_group_id(0) * chunk;
    long e = i + chunk < n ? i + chunk : n;
    long step = 1;
#else
    (void)chunk;
    long i = (long)kiln_global_id(0);
    long e = n;
    long step = (long)kiln_global_size(0);
#endif
#if KILN_HIST_MODE == 2
    KILN_HIST_E first = 0, last = 0;
#else
    KILN_HIST_E first = edges[0], last = edges[nb];
#endif
#if KILN_HIST_PRIV
    KILN_LOCAL uint bins[KILN_HIST_NB];
    (void)w;
    (void)w_o;
    for (long b = (long)kiln_local_id(0); b < KILN_HIST_NB;
         b += KILN_LOCAL_SIZE)
        bins[b] = 0;
    kiln_barrier();
    for (; i < e; i += step) {
        long b = kiln_hist_bin(KILN_HIST_X(x[x_o + i]), edges, nb, lo, scale,
                               first, last);
        if (b >= 0)
            KILN_HIST_LOCAL_INC(&bins[b]);
    }
    kiln_barrier();
    for (long b = (long)kiln_local_id(0); b < KILN_HIST_NB;
         b += KILN_LOCAL_SIZE)
        if (bins[b])
            kiln_atomic_add_ulong(&hist[b], (ulong)bins[b]);
#else
    for (; i < e; i += step) {
        long b = kiln_hist_bin(KILN_HIST_X(x[x_o + i]), edges, nb, lo, scale,
                               first, last);
        if (b >= 0) {
#ifdef KILN_HIST_W
            KILN_HIST_ADD(&hist[b], w[w_o + i]);
#else
            (void)w;
            (void)w_o;
            kiln_atomic_add_ulong(&hist[b], (ulong)1);
#endif
        }
    }
#endif
}
