/* The onesweep pass's decoupled look-back, one text for its CUDA C and
 * OpenCL C forms (src/algo/sort.c puts it before either template).
 * Defined before it: the backend prelude (KILN_FUNC, KILN_GLOBAL,
 * KILN_BACKEND_CUDA, kiln_sleep_ns) and the capability defines
 * (KILN_HAS_SLEEP).
 *
 * A status word is flag << 30 | count: flag 1 the tile's aggregate of its
 * digit, 2 the inclusive prefix over it and every earlier tile, 0 not yet
 * published (the words are zeroed before the sort). */

#define KILN_OS_COUNT 0x3fffffffu
#if !KILN_HAS_SLEEP
#define KILN_OS_SLEEP() ((void)0)
#elif defined(KILN_BACKEND_CUDA)
#define KILN_OS_SLEEP() __nanosleep(32)
#else
#define KILN_OS_SLEEP() kiln_sleep_ns(32)
#endif

/* Decoupled look-back for digit t of this tile, whose aggregate cnt is
 * published: the count of digit t in the tiles before it; publishes this
 * tile's inclusive prefix. */
KILN_FUNC uint kiln_os_lookback(KILN_GLOBAL uint *status, uint tile, int t,
                                uint cnt)
{
    uint excl = 0;
    if (tile == 0)
        return 0;
    for (long j = (long)tile - 1;;) {
        uint w = *(volatile KILN_GLOBAL uint *)(status + j * 256 + t);
        uint flag = w >> 30;
        if (flag == 0) {
            KILN_OS_SLEEP();
            continue;
        }
        excl += w & KILN_OS_COUNT;
        if (flag == 2)
            break;
        j--;
    }
    *(volatile KILN_GLOBAL uint *)(status + (long)tile * 256 + t) =
        (2u << 30) | (excl + cnt);
    return excl;
}
