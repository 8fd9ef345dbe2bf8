/* copy_if — x[x > threshold] of float32 data on the device, then the
 * distinct values of the kept items rounded down (unique of the sorted
 * integers), each step ordered by events; the count stays on the device
 * between them and comes to the host once at the end.
 * Usage: copy_if [device] [n] [threshold]. The host repeats both steps with
 * serial loops and checks every item.
 * Build: cc copy_if.c $(pkg-config --cflags --libs kiln) */
#include <kiln.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                        \
    do {                                                                 \
        if ((call) != KILN_OK) {                                         \
            fprintf(stderr, "copy_if: %s\n", kiln_last_error_message()); \
            goto fail;                                                   \
        }                                                                \
    } while (0)

int main(int argc, char **argv) {
    const char *device = argc > 1 && argv[1][0] ? argv[1] : NULL;
    long long nn = argc > 2 ? atoll(argv[2]) : 1 << 20;
    float threshold = argc > 3 ? strtof(argv[3], NULL) : 0.5f;
    if (nn < 1) {
        fprintf(stderr, "copy_if: n must be >= 1\n");
        return 1;
    }
    size_t n = (size_t)nn, one = 1;
    float *x = malloc(n * sizeof *x), *kept = malloc(n * sizeof *x);
    int32_t *steps = malloc(n * sizeof *steps), *uniq = malloc(n * sizeof *uniq);
    int ok = 0;
    kiln_queue *q = NULL;
    kiln_array *X = NULL, *K = NULL, *S = NULL, *U = NULL, *cnt = NULL, *ucnt = NULL, *R = NULL;
    kiln_event *e1 = NULL, *e2 = NULL, *e3 = NULL;
    kiln_elementwise *floor_ew = NULL;
    if (!x || !kept || !steps || !uniq) {
        fprintf(stderr, "copy_if: out of memory\n");
        goto fail;
    }
    /* increasing data with noise: the kept items rounded down are sorted */
    for (size_t i = 0; i < n; i++)
        x[i] = (float)i / 64.0f + (float)((i * 2654435761u) % 1000) * 1e-3f;
    TRY(kiln_queue_create_default(device, KILN_QUEUE_IN_ORDER, &q));
    kiln_context *c = kiln_queue_context(q);
    TRY(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, x, &X));
    TRY(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &K));
    TRY(kiln_array_empty(c, KILN_INT32, 1, &n, &S));
    TRY(kiln_array_empty(c, KILN_INT32, 1, &n, &U));
    TRY(kiln_array_empty(c, KILN_INT64, 1, &one, &cnt));
    TRY(kiln_array_empty(c, KILN_INT64, 1, &one, &ucnt));
    /* 1. keep the items whose fractional part exceeds the threshold */
    char pred[64];
    snprintf(pred, sizeof pred, "x - floor(x) > (float)(%.9g)", threshold);
    TRY(kiln_array_copy_if_out(q, K, cnt, NULL, X, pred, 0, NULL, &e1));
    /* 2. floor of every kept item: only the first cnt[0] are meaningful;
     * the kernel reads the count on the device (no host round trip) */
    TRY(kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC(.arguments = "const float *k, const long *cnt, int *s",
                               .operation = "s[i] = i < cnt[0] ? (int)floor(k[i]) : 2147483647",
                               .flags = KILN_ELEMENTWISE_ANY_SHAPE),
        &floor_ew));
    kiln_arg fa[3] = { KILN_ARG_ARRAY(K), KILN_ARG_ARRAY(cnt), KILN_ARG_ARRAY(S) };
    TRY(kiln_elementwise_launch(q, floor_ew, n, 3, fa, 1, &e1, &e2));
    /* 3. the distinct values (items past the count hold INT_MAX: one more
     * run at the end, dropped below) */
    int64_t nkept = 0, nuniq = 0;
    TRY(kiln_array_unique_out(q, U, NULL, ucnt, &nuniq, S, 1, &e2, &e3));
    TRY(kiln_event_wait(e3));
    TRY(kiln_array_read(q, cnt, &nkept));
    TRY(kiln_array_read(q, K, kept));
    TRY(kiln_array_read(q, U, uniq));
    if (nkept < (int64_t)n)
        nuniq--; /* the INT_MAX run */
    /* the serial loops */
    size_t want = 0, wantu = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] - (float)(int)x[i] > threshold))
            continue;
        bad += kept[want] != x[i];
        int s = (int)x[i];
        if (!want || s != steps[wantu - 1]) {
            bad += wantu >= (size_t)nuniq || uniq[wantu] != s;
            steps[wantu++] = s;
        }
        want++;
    }
    /* 4. the same selection as NumPy's x[mask]: one blocking call that
     * returns an array of exactly the kept length */
    TRY(kiln_array_copy_if(q, X, pred, &R));
    ok =
        nkept == (int64_t)want && nuniq == (int64_t)wantu && bad == 0 && kiln_array_size(R) == want;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("copy_if: %zu items on %s: kept %lld (host %zu), %lld distinct "
           "floors (host %zu): %s\n",
           n, info.name, (long long)nkept, want, (long long)nuniq, wantu, ok ? "OK" : "MISMATCH");
fail:
    kiln_event_release(e1);
    kiln_event_release(e2);
    kiln_event_release(e3);
    kiln_elementwise_release(floor_ew);
    kiln_array_release(X);
    kiln_array_release(R);
    kiln_array_release(K);
    kiln_array_release(S);
    kiln_array_release(U);
    kiln_array_release(cnt);
    kiln_array_release(ucnt);
    kiln_queue_release(q);
    free(x);
    free(kept);
    free(steps);
    free(uniq);
    return ok ? 0 : 1;
}
