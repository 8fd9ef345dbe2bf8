/* Three-phase, order-preserving scan template (src/algo/scan_run.c). Defined
 * before it: KILN_LOCAL_SIZE (power of two), KILN_SEGMENTED, kiln_scan_t,
 * kiln_neutral(), kiln_scan_op(a, b) (a is the earlier item),
 * kiln_input(i, ...), kiln_seg_start(i, ...), kiln_output(i, item,
 * prev_item, ...), KILN_PASS.
 * Work-group g owns the contiguous block [g*chunk, (g+1)*chunk); inside it
 * work-item l owns the contiguous sub-range of chunk/KILN_LOCAL_SIZE items.
 *  1. @NAME@_reduce: each block's total (value, "contains a segment start")
 *  2. @NAME@_spine: one work-item turns the totals into exclusive prefixes
 *  3. @NAME@_final: each block rescans with its prefix as the carry-in
 * Every combination keeps the left operand earlier than the right one, so
 * the operator need not be commutative. Where a device can run a
 * single-pass template (src/algo/scan_variants.c), that one is used. */

#define KILN_RANGE()                                                          \
    long kiln_l = (long)kiln_local_id(0);                                     \
    long kiln_g = (long)kiln_group_id(0);                                     \
    long kiln_per = kiln_chunk / KILN_LOCAL_SIZE;                             \
    long kiln_b = kiln_g * kiln_chunk + kiln_l * kiln_per;                    \
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
                               @PARAMS@)
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
                              KILN_GLOBAL const int *kiln_flags, long kiln_m)
{
    if (kiln_global_id(0) != 0)
        return;
    kiln_scan_t kiln_carry = kiln_neutral();
    for (long j = 0; j < kiln_m; j++) {
        kiln_scan_t s = kiln_sums[j];
        kiln_sums[j] = kiln_carry;
        kiln_carry = kiln_flags[j] ? s : kiln_scan_op(kiln_carry, s);
    }
}

KILN_KERNEL void @NAME@_final(KILN_GLOBAL const kiln_scan_t *kiln_sums,
                              long kiln_chunk, @PARAMS@)
{
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_LOCAL_SIZE];
    KILN_LOCAL int kiln_sf[KILN_LOCAL_SIZE];
    KILN_RANGE()
    kiln_scan_t kiln_carry = kiln_sums[kiln_g];
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
