/* sort_pairs — a leaderboard: a million players' float scores sorted
 * largest first with their int32 player ids riding along (a stable
 * key-value radix sort, so tied scores keep id order), then the top 5
 * with kiln_array_topk_out and where a score of 0.5 would rank with
 * kiln_array_searchsorted_out. Checked on the host. Device: argv[1] or
 * $KILN_DEVICE; argv[2]: the number of players (default 2^20).
 * Build: cc sort_pairs.c $(pkg-config --cflags --libs kiln) */
#include <kiln.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                           \
    do {                                                                    \
        if ((call) != KILN_OK) {                                            \
            fprintf(stderr, "sort_pairs: %s\n", kiln_last_error_message()); \
            return 1;                                                       \
        }                                                                   \
    } while (0)

int main(int argc, char **argv) {
    size_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t)1 << 20;
    if (n < 5) {
        fprintf(stderr, "sort_pairs: players must be >= 5\n");
        return 1;
    }
    float *score = malloc(n * sizeof *score), *sorted = malloc(n * sizeof *sorted);
    int32_t *id = malloc(n * sizeof *id), *order = malloc(n * sizeof *order);
    if (!score || !sorted || !id || !order)
        return 1;
    srand(7);
    for (size_t i = 0; i < n; i++) { /* scores in steps of 1/1024: many ties */
        score[i] = (float)(rand() % 1024) / 1024.0f;
        id[i] = (int32_t)i;
    }
    kiln_queue *q;
    TRY(kiln_queue_create_default(argc > 1 && argv[1][0] ? argv[1] : NULL, KILN_QUEUE_IN_ORDER,
                                  &q));
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *S, *I, *SO, *IO, *top, *top_id, *asc, *pos, *probe;
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &n, score, &S));
    TRY(kiln_array_from_host(ctx, KILN_INT32, 1, &n, id, &I));
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &SO));
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &n, &IO));
    /* the whole board, largest first */
    kiln_sort_desc desc = KILN_SORT_DESC(.descending = 1);
    TRY(kiln_array_sort_out(q, SO, IO, S, I, &desc, 0, NULL, NULL));
    /* the top 5 alone, with their positions (= ids here) */
    size_t five = 5, one = 1;
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &five, &top));
    TRY(kiln_array_empty(ctx, KILN_INT64, 1, &five, &top_id));
    TRY(kiln_array_topk_out(q, top, top_id, S, 5, 1, 0, NULL, NULL));
    /* rank of a score of 0.5 among the scores in ascending order */
    float half = 0.5f;
    int64_t below = -1;
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &asc));
    TRY(kiln_array_sort_out(q, asc, NULL, S, NULL, NULL, 0, NULL, NULL));
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &one, &half, &probe));
    TRY(kiln_array_empty(ctx, KILN_INT64, 1, &one, &pos));
    TRY(kiln_array_searchsorted_out(q, pos, asc, probe, 0, 0, NULL, NULL));
    float top_score[5];
    int64_t top_ids[5];
    TRY(kiln_array_read(q, SO, sorted)); /* blocks; runs after the sorts */
    TRY(kiln_array_read(q, IO, order));
    TRY(kiln_array_read(q, top, top_score));
    TRY(kiln_array_read(q, top_id, top_ids));
    TRY(kiln_array_read(q, pos, &below));
    /* checks: descending, ties in id order, each id's own score, topk =
     * the board's first 5, the count below 0.5 */
    size_t bad = 0, under = 0;
    for (size_t i = 0; i < n; i++) {
        bad += score[order[i]] != sorted[i];
        if (i)
            bad += sorted[i] > sorted[i - 1] ||
                   (sorted[i] == sorted[i - 1] && order[i] < order[i - 1]);
        under += score[i] < 0.5f;
    }
    for (int k = 0; k < 5; k++)
        bad += top_score[k] != sorted[k] || top_ids[k] != order[k];
    bad += (size_t)below != under;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("sort_pairs: %zu players on %s; best %.4f (player %d); %lld below 0.5: %s\n", n,
           info.name, sorted[0], order[0], (long long)below, bad ? "MISMATCH" : "OK");
    kiln_array_release(S);
    kiln_array_release(I);
    kiln_array_release(SO);
    kiln_array_release(IO);
    kiln_array_release(top);
    kiln_array_release(top_id);
    kiln_array_release(asc);
    kiln_array_release(pos);
    kiln_array_release(probe);
    kiln_queue_release(q);
    free(score);
    free(sorted);
    free(id);
    free(order);
    return bad ? 1 : 0;
}
