/* Three-phase, order-preserving scan template (src/algo/scan_run.c). Defined
 * before it: KILN_LOCAL_SIZE (power of two), KILN_SEGMENTED, kiln_scan_t,
 * kiln_neutral(), kiln_scan_op(a, b) (a is the earlier item),
 * kiln_input(i, ...), kiln_seg_start(i, ...), kiln_output(i, item,
 * prev_item, ...), KILN_PASS.
 * Work-group g owns the contiguous block [base + g*chunk, base + (g+1)*chunk);
 * inside it work-item l owns the contiguous sub-range of chunk/KILN_LOCAL_SIZE
 * items.
 *  1. @NAME@_reduce: each block's total (value, "contains a segment start")
 *  2. @NAME@_spine: one work-item turns the m totals into exclusive
 *     prefixes, starting from the carry in kiln_sums[slot] when carry_in
 *     (else the neutral), and leaves the carry past them there
 *  3. @NAME@_final: each block rescans with its prefix as the carry-in (the
 *     neutral when no_carry: one block, no phases 1 and 2)
 * A range longer than a round (CPUs) runs as rounds of the three launches,
 * base moving on, so that phase 3 finds its input still in the cache;
 * the carry passes from round to round in kiln_sums[slot].
 * Every combination keeps the left operand earlier than the right one, so
 * the operator need not be commutative. Where a device can run a
 * single-pass template (src/algo/scan_variants.c), that one is used. */

/* KILN_SCAN_ADD32 (scan_variants.c: a CPU's int32 sum of x[i] into y[i])
 * under a C compiler with __builtin_shufflevector: KILN__SIMD_SCAN, and
 * KILN__SHIFT(v, s), v moved up s of its 16 lanes with zeros below. */
#if KILN_SCAN_ADD32 && KILN_CPU && !defined(__OPENCL_VERSION__) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define KILN__SIMD_SCAN 1
#define KILN__L(k, s) ((k) < (s) ? 16 : (k) - (s))
#define KILN__SHIFT(v, s)                                                     \
    __builtin_shufflevector(v, kiln_z, KILN__L(0, s), KILN__L(1, s),          \
                            KILN__L(2, s), KILN__L(3, s), KILN__L(4, s),      \
                            KILN__L(5, s), KILN__L(6, s), KILN__L(7, s),      \
                            KILN__L(8, s), KILN__L(9, s), KILN__L(10, s),     \
                            KILN__L(11, s), KILN__L(12, s), KILN__L(13, s),   \
                            KILN__L(14, s), KILN__L(15, s))
#endif
#endif

#define KILN_RANGE()                                                          \
    long kiln_l = (long)kiln_local_id(0);                                     \
    long kiln_g = (long)kiln_group_id(0);                                     \
    long kiln_per = kiln_chunk / KILN_LOCAL_SIZE;                             \
    long kiln_b = kiln_base + kiln_g * kiln_chunk + kiln_l * kiln_per;        \
    long kiln_e = kiln_b + kiln_per;                                          \
    if (kiln_e > n)                                                           \
        kiln_e = n;

#if KILN_SEGMENTED
#define KILN_FOLD_STEP(acc, f, i, v)                                          \
    if (kiln_seg_start(i, KILN_PASS)) {                                       \
        acc = v;                                                              \
        f = 1;                                                                \
    } else {                                                                  \
        acc = kiln_scan_op(acc, v);                                           \
    }
#else
#define KILN_FOLD_STEP(acc, f, i, v) acc = kiln_scan_op(acc, v);
#endif

KILN_KERNEL void @NAME@_reduce(KILN_GLOBAL kiln_scan_t *kiln_sums,
                               KILN_GLOBAL int *kiln_flags, long kiln_chunk,
                               long kiln_base, @PARAMS@)
{
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_LOCAL_SIZE];
    KILN_LOCAL int kiln_sf[KILN_LOCAL_SIZE];
    KILN_RANGE()
    kiln_scan_t kiln_acc = kiln_neutral();
    int kiln_f = 0;
    for (long i = kiln_b; i < kiln_e; i++) {
        kiln_scan_t kiln_v = kiln_input(i, KILN_PASS);
        KILN_FOLD_STEP(kiln_acc, kiln_f, i, kiln_v)
    }
#if KILN_LOCAL_SIZE > 1
    kiln_sv[kiln_l] = kiln_acc;
    kiln_sf[kiln_l] = kiln_f;
    kiln_barrier();
    for (long s = 1; s < KILN_LOCAL_SIZE; s <<= 1) {
        if ((kiln_l & (2 * s - 1)) == 0 && kiln_l + s < KILN_LOCAL_SIZE) {
            int fr = kiln_sf[kiln_l + s];
            kiln_scan_t vr = kiln_sv[kiln_l + s];
            kiln_sv[kiln_l] = fr ? vr : kiln_scan_op(kiln_sv[kiln_l], vr);
            kiln_sf[kiln_l] = kiln_sf[kiln_l] | fr;
        }
        kiln_barrier();
    }
    if (kiln_l == 0) {
        kiln_sums[kiln_g] = kiln_sv[0];
        kiln_flags[kiln_g] = kiln_sf[0];
    }
#else
    (void)kiln_sv;
    (void)kiln_sf;
    kiln_sums[kiln_g] = kiln_acc;
    kiln_flags[kiln_g] = kiln_f;
#endif
}

KILN_KERNEL void @NAME@_spine(KILN_GLOBAL kiln_scan_t *kiln_sums,
                              KILN_GLOBAL const int *kiln_flags, long kiln_m,
                              long kiln_slot, int kiln_carry_in)
{
    if (kiln_global_id(0) != 0)
        return;
    kiln_scan_t kiln_carry = kiln_carry_in ? kiln_sums[kiln_slot] : kiln_neutral();
    for (long j = 0; j < kiln_m; j++) {
        kiln_scan_t s = kiln_sums[j];
        kiln_sums[j] = kiln_carry;
        kiln_carry = kiln_flags[j] ? s : kiln_scan_op(kiln_carry, s);
    }
    kiln_sums[kiln_slot] = kiln_carry;
}

KILN_KERNEL void @NAME@_final(KILN_GLOBAL const kiln_scan_t *kiln_sums,
                              long kiln_chunk, long kiln_base,
                              int kiln_no_carry, @PARAMS@)
{
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_LOCAL_SIZE];
    KILN_LOCAL int kiln_sf[KILN_LOCAL_SIZE];
    KILN_RANGE()
    kiln_scan_t kiln_carry = kiln_no_carry ? kiln_neutral() : kiln_sums[kiln_g];
#if KILN_LOCAL_SIZE > 1
    {
        kiln_scan_t kiln_acc = kiln_neutral();
        int kiln_f = 0;
        for (long i = kiln_b; i < kiln_e; i++) {
            kiln_scan_t kiln_v = kiln_input(i, KILN_PASS);
            KILN_FOLD_STEP(kiln_acc, kiln_f, i, kiln_v)
        }
        kiln_sv[kiln_l] = kiln_acc;
        kiln_sf[kiln_l] = kiln_f;
    }
    kiln_barrier();
    /* Inclusive Hillis-Steele scan of the work-items' totals, in order. */
    for (long s = 1; s < KILN_LOCAL_SIZE; s <<= 1) {
        kiln_scan_t tv = kiln_sv[kiln_l];
        int tf = kiln_sf[kiln_l];
        if (kiln_l >= s) {
            kiln_scan_t pv = kiln_sv[kiln_l - s];
            tv = tf ? tv : kiln_scan_op(pv, tv);
            tf = tf | kiln_sf[kiln_l - s];
        }
        kiln_barrier();
        kiln_sv[kiln_l] = tv;
        kiln_sf[kiln_l] = tf;
        kiln_barrier();
    }
    if (kiln_l > 0) {
        kiln_scan_t pv = kiln_sv[kiln_l - 1];
        kiln_carry = kiln_sf[kiln_l - 1] ? pv : kiln_scan_op(kiln_carry, pv);
    }
#else
    (void)kiln_sv;
    (void)kiln_sf;
#endif
#if KILN__SIMD_SCAN
    /* A C compiler, an int sum of x[i] into y[i]: 16 items at a time, an
     * in-register prefix (four shifted adds) plus the carry; the one-item
     * loop below ran at one item a cycle and made the rescan (and so the
     * scan) compute-bound on 2 cores. */
    {
        typedef kiln_scan_t kiln_v16 __attribute__((vector_size(64)));
        const kiln_scan_t *kiln_x = KILN_VEC_IN;
        kiln_scan_t *kiln_y = KILN_VEC_OUT;
        kiln_v16 kiln_z = { 0 }, kiln_c = kiln_z + kiln_carry, kiln_v, kiln_p;
        for (; kiln_b + 16 <= kiln_e; kiln_b += 16) {
            __builtin_memcpy(&kiln_v, kiln_x + kiln_b, sizeof kiln_v);
            kiln_p = kiln_v + KILN__SHIFT(kiln_v, 1);
            kiln_p += KILN__SHIFT(kiln_p, 2);
            kiln_p += KILN__SHIFT(kiln_p, 4);
            kiln_p += KILN__SHIFT(kiln_p, 8);
            kiln_p += kiln_c;
            kiln_c = __builtin_shufflevector(kiln_p, kiln_p, 15, 15, 15, 15, 15, 15, 15, 15,
                                             15, 15, 15, 15, 15, 15, 15, 15);
#if KILN_VEC_EXCL
            kiln_p -= kiln_v;
#endif
            __builtin_memcpy(kiln_y + kiln_b, &kiln_p, sizeof kiln_p);
        }
        kiln_carry = kiln_c[0];
    }
#endif
    for (long i = kiln_b; i < kiln_e; i++) {
        kiln_scan_t kiln_v = kiln_input(i, KILN_PASS);
        kiln_scan_t kiln_prev = kiln_carry;
#if KILN_SEGMENTED
        if (kiln_seg_start(i, KILN_PASS))
            kiln_prev = kiln_neutral();
#endif
        kiln_scan_t kiln_item = kiln_scan_op(kiln_prev, kiln_v);
        kiln_output(i, kiln_item, kiln_prev, KILN_PASS);
        kiln_carry = kiln_item;
    }
}
