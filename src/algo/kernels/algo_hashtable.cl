/* The device hash table (src/algo/hash.c): open addressing, linear probing
 * on kiln_hash_fmix32 (algo_hash.cl, put before this), mask + 1 slots.
 * Defined before it: KILN_HT_V (value type), KILN_HT_ADD(p, v) (an atomic
 * add of a value). Slot keys: KILN_HT_EMPTY, KILN_HT_ERASED or a key.
 * state[0]: keys stored (counted after a claim; a claim past cap is
 * given back as an erased slot, so at most cap);
 * state[1]: set to 1 when a key found no slot (full); state[2]: set to 1 on
 * a reserved key; state[3]: keys erased. Every probe visits at most mask + 1
 * slots: no loop runs unbounded. */
#define KILN_HT_EMPTY 0xFFFFFFFFu
#define KILN_HT_ERASED 0xFFFFFFFEu

/* One key: mode 0: insert (the value replaces), 1: add v, 2: add 1. */
KILN_FUNC void kiln_ht_insert1(uint k, KILN_HT_V v,
                               KILN_GLOBAL uint *slot_keys,
                               KILN_GLOBAL KILN_HT_V *slot_vals, uint mask,
                               uint cap, KILN_GLOBAL uint *state, int mode)
{
    if (k >= KILN_HT_ERASED) {
        state[2] = 1;
        return;
    }
    uint h = kiln_hash_fmix32(k) & mask;
    for (uint p = 0; p <= mask; p++, h = (h + 1) & mask) {
        uint cur = slot_keys[h];
        if (cur == KILN_HT_EMPTY) {
            /* Claim the slot first, count the key after: reserving room
             * first made every work-item that saw the same new key empty
             * reserve, and with the table near its capacity the losers
             * reported it full although their key was being stored. */
            cur = (uint)kiln_atomic_cas_int((KILN_GLOBAL int *)&slot_keys[h],
                                            (int)KILN_HT_EMPTY, (int)k);
            if (cur == KILN_HT_EMPTY) {
                /* ours: a new key, under the load limit or given back */
                if (kiln_atomic_add_uint(&state[0], 1u) >= cap) {
                    kiln_atomic_add_uint(&state[0], 0xFFFFFFFFu);
                    kiln_atomic_cas_int((KILN_GLOBAL int *)&slot_keys[h],
                                        (int)k, (int)KILN_HT_ERASED);
                    state[1] = 1;
                    return;
                }
                cur = k;
            }
        }
        if (cur == k) {
            if (mode == 0)
                slot_vals[h] = v;
            else
                KILN_HT_ADD(&slot_vals[h], mode == 1 ? v : (KILN_HT_V)1);
            return;
        }
    }
    state[1] = 1; /* every slot probed: full */
}

/* The kernels loop over their keys (grid-stride): few work-items on CPUs.
 * mode -1 only checks the keys (state[2] = 1 on a reserved one); the
 * insert after it stores nothing once state[2] is set, so a call with a
 * reserved key changes nothing. */
KILN_KERNEL void @NAME@_insert(KILN_GLOBAL const uint *keys, long keys_o,
                               KILN_GLOBAL const KILN_HT_V *vals, long vals_o,
                               long n, KILN_GLOBAL uint *slot_keys,
                               KILN_GLOBAL KILN_HT_V *slot_vals, uint mask,
                               uint cap, KILN_GLOBAL uint *state, int mode)
{
    if (mode < 0) {
        for (long i = (long)kiln_global_id(0); i < n;
             i += (long)kiln_global_size(0))
            if (keys[keys_o + i] >= KILN_HT_ERASED)
                state[2] = 1;
        return;
    }
    if (state[2])
        return;
    for (long i = (long)kiln_global_id(0); i < n;
         i += (long)kiln_global_size(0))
        kiln_ht_insert1(keys[keys_o + i],
                        mode == 2 ? (KILN_HT_V)1 : vals[vals_o + i], slot_keys,
                        slot_vals, mask, cap, state, mode);
}

/* values[i] = the value of keys[i] or missing; found[i] = 1 or 0 (found
 * may be unused: has_found 0). */
KILN_KERNEL void @NAME@_lookup(KILN_GLOBAL const uint *keys, long keys_o,
                               KILN_GLOBAL KILN_HT_V *vals, long vals_o,
                               long n, KILN_GLOBAL const uint *slot_keys,
                               KILN_GLOBAL const KILN_HT_V *slot_vals,
                               uint mask, KILN_HT_V missing,
                               KILN_GLOBAL uchar *found, long found_o,
                               int has_found)
{
    for (long i = (long)kiln_global_id(0); i < n;
         i += (long)kiln_global_size(0)) {
        uint k = keys[keys_o + i];
        KILN_HT_V v = missing;
        uchar f = 0;
        if (k < KILN_HT_ERASED) {
            uint h = kiln_hash_fmix32(k) & mask;
            for (uint p = 0; p <= mask; p++, h = (h + 1) & mask) {
                uint cur = slot_keys[h];
                if (cur == k) {
                    v = slot_vals[h];
                    f = 1;
                    break;
                }
                if (cur == KILN_HT_EMPTY)
                    break;
            }
        }
        vals[vals_o + i] = v;
        if (has_found)
            found[found_o + i] = f;
    }
}

KILN_KERNEL void @NAME@_erase(KILN_GLOBAL const uint *keys, long keys_o,
                              long n, KILN_GLOBAL uint *slot_keys, uint mask,
                              KILN_GLOBAL uint *state)
{
    for (long i = (long)kiln_global_id(0); i < n;
         i += (long)kiln_global_size(0)) {
        uint k = keys[keys_o + i];
        uint h = kiln_hash_fmix32(k) & mask;
        for (uint p = 0; k < KILN_HT_ERASED && p <= mask;
             p++, h = (h + 1) & mask) {
            uint cur = slot_keys[h];
            if (cur == KILN_HT_EMPTY)
                break;
            if (cur == k) {
                /* one of the callers erasing the same key counts it */
                if ((uint)kiln_atomic_cas_int(
                        (KILN_GLOBAL int *)&slot_keys[h], (int)k,
                        (int)KILN_HT_ERASED) == k)
                    kiln_atomic_add_uint(&state[3], 1u);
                break;
            }
        }
    }
}
