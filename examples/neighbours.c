/* neighbours — the "allocate" pattern (kiln_allocate, like PyOpenCL's
 * ListOfListsBuilder): for each of N random points in the unit square, the
 * list of the other points within radius R, of a length not known in
 * advance. The operation emits each neighbour's index with KILN_EMIT; kiln
 * counts, scans and fills, giving one flat array plus offsets. The lists
 * are checked against a serial C loop (same float arithmetic, so the same
 * decisions).
 *
 * usage: neighbours [SELECTOR [N [R]]]     (device also from $KILN_DEVICE) */
#include <kiln.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                           \
    do {                                                                    \
        if ((call) != KILN_OK) {                                            \
            fprintf(stderr, "neighbours: %s\n", kiln_last_error_message()); \
            return 1;                                                       \
        }                                                                   \
    } while (0)

/* Within the radius: the same float expression on the host and device. */
#define NEAR_EXPR(dx, dy, r2) ((dx) * (dx) + (dy) * (dy) <= (r2))

int main(int argc, char **argv) {
    const char *selector = argc > 1 && argv[1][0] ? argv[1] : NULL;
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 4000;
    float r = argc > 3 ? strtof(argv[3], NULL) : 0.02f;
    if (n < 1 || !(r > 0)) {
        fprintf(stderr, "neighbours: N must be >= 1 and R > 0\n");
        return 1;
    }
    float *xy = malloc(2 * (size_t)n * sizeof *xy);
    uint64_t s = 88172645463325252ull;
    for (long i = 0; i < 2 * n; i++) { /* xorshift64: the same points anywhere */
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        xy[i] = (float)(s >> 40) / 16777216.0f;
    }

    kiln_queue *q;
    kiln_device_info info;
    TRY(kiln_queue_create_default(selector, 0, &q));
    TRY(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *pts, *items, *offsets;
    size_t shape[2] = { (size_t)n, 2 };
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 2, shape, xy, &pts));

    kiln_allocate *nb;
    TRY(kiln_allocate_create(
        ctx,
        &KILN_ALLOCATE_DESC(.arguments = "const float *p, long m, float r2", .item_type = "int",
                            .operation =
                                "for (long j = 0; j < m; j++) {\n"
                                "    float dx = p[2*j] - p[2*i], dy = p[2*j+1] - p[2*i+1];\n"
                                "    if (j != i && dx*dx + dy*dy <= r2)\n"
                                "        KILN_EMIT((int)j);\n"
                                "}",
                            .name = "neighbours"),
        &nb));
    kiln_arg args[3] = { KILN_ARG_ARRAY(pts), KILN_ARG_I64(n), KILN_ARG_F32(r * r) };
    TRY(kiln_allocate_run(q, nb, (size_t)n, 3, args, &items, &offsets));

    size_t total = kiln_array_size(items);
    int64_t *off = malloc(((size_t)n + 1) * sizeof *off);
    int *lst = malloc((total ? total : 1) * sizeof *lst);
    TRY(kiln_array_read(q, offsets, off));
    if (total)
        TRY(kiln_array_read(q, items, lst));

    /* the serial reference, list by list */
    long bad = 0, longest = 0;
    float r2 = r * r;
    for (long i = 0; i < n; i++) {
        int64_t k = off[i];
        for (long j = 0; j < n; j++) {
            float dx = xy[2 * j] - xy[2 * i], dy = xy[2 * j + 1] - xy[2 * i + 1];
            if (j == i || !NEAR_EXPR(dx, dy, r2))
                continue;
            if (k >= off[i + 1] || lst[k] != j) {
                if (bad++ < 5)
                    fprintf(stderr, "point %ld: neighbour %ld missing or out of order\n", i, j);
            }
            k++;
        }
        if (k != off[i + 1] && bad++ < 5)
            fprintf(stderr, "point %ld: %lld neighbours listed, %lld expected\n", i,
                    (long long)(off[i + 1] - off[i]), (long long)(k - off[i]));
        if (off[i + 1] - off[i] > longest)
            longest = (long)(off[i + 1] - off[i]);
    }
    printf("neighbours: %ld points, radius %g on %s (%s)\n", n, (double)r, info.name, info.id);
    printf("  %zu pairs, %.2f per point on average, at most %ld\n", total,
           (double)total / (double)n, longest);
    printf("  check: %s\n", bad ? "MISMATCH" : "OK, the lists of the serial loop");

    free(xy);
    free(off);
    free(lst);
    kiln_array_release(items);
    kiln_array_release(offsets);
    kiln_array_release(pts);
    kiln_allocate_release(nb);
    kiln_queue_release(q);
    return bad ? 1 : 0;
}
