/* Several processes and one disk cache (issue 13): N processes building
 * the same programs into one cache at once, and writers killed (SIGKILL)
 * in the middle of writing entries, never leave an entry that loads wrong.
 * Every entry either loads with exactly the bytes that were stored under
 * its key, or is refused (and removed) and rebuilt.
 *
 * The parent forks before it touches any device (a process that has
 * started the OpenCL runtime's threads must not fork and carry on). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

enum { PROCS = 4, PROGRAMS = 3, KILLS = 12, KEYS = 64 };

static char salt[32];

static void source_of(int k, char *buf, size_t cap) {
    snprintf(buf, cap,
             "/* %s */ KILN_KERNEL void f%d(KILN_GLOBAL int *x) {\n"
             "  long i = kiln_global_id(0); x[i] = (int)i * %d + %d; }\n",
             salt, k, k + 2, k);
}

/* In a child: builds the programs (from the compiler or from the cache,
 * whichever the race gives), runs each and checks it; with want_cached,
 * every program must come from the cache. Exit 0 when all is right. */
static int child_build(int c, void *arg) {
    (void)c;
    int want_cached = *(const int *)arg;
    kiln_queue *q = NULL;
    if (kiln_queue_create_default(NULL, 0, &q) != KILN_OK)
        return 2;
    kiln_context *ctx = kiln_queue_context(q);
    int bad = 0;
    for (int k = 0; k < PROGRAMS && !bad; k++) {
        char src[512], name[8];
        source_of(k, src, sizeof src);
        snprintf(name, sizeof name, "f%d", k);
        kiln_program *p = NULL;
        kiln_kernel *kern = NULL;
        kiln_buffer *b = NULL;
        int out[61];
        size_t n = 61;
        if (kiln_program_create(ctx, src, NULL, &p) != KILN_OK ||
            kiln_kernel_create(p, name, &kern) != KILN_OK ||
            kiln_buffer_create(ctx, sizeof out, 0, NULL, &b) != KILN_OK) {
            fprintf(stderr, "child: %s\nbuild log: %s\n", kiln_last_error_message(),
                    kiln_last_build_log());
            bad = 1;
        } else {
            kiln_arg a[] = { KILN_ARG_BUF(b) };
            if (kiln_kernel_launch(q, kern, 1, &n, NULL, 1, a, 0, NULL, NULL) != KILN_OK ||
                kiln_buffer_read(q, b, 0, sizeof out, out) != KILN_OK)
                bad = 1;
            for (int i = 0; i < 61 && !bad; i++)
                if (out[i] != i * (k + 2) + k)
                    bad = 1;
            if (want_cached && !kiln_program_from_cache(p, kiln_queue_device(q)))
                bad = 3;
        }
        KT_RELEASE(b, kern, p);
    }
    kiln_queue_release(q);
    return bad;
}

/* ---- writers killed mid-write: entries written through kiln__cache_store */

static size_t payload_size(int i) {
    return ((size_t)1 << 16) + (size_t)i * 4099;
}

static void payload_fill(int i, unsigned char *p) {
    size_t n = payload_size(i);
    for (size_t j = 0; j < n; j++)
        p[j] = (unsigned char)(i * 131 + j * 7 + (j >> 9));
}

static void key_of(int i, kiln__cache_key *key) {
    char src[64];
    snprintf(src, sizeof src, "%s entry %d", salt, i);
    kiln__cache_key_make(key, "multiproc", "test-device", src, "");
}

static int writer(int seed) {
    unsigned char *p = malloc(payload_size(KEYS));
    if (!p)
        return 2;
    srand((unsigned)seed);
    for (;;) { /* until killed: rewrite random entries */
        int i = rand() % KEYS;
        kiln__cache_key key;
        key_of(i, &key);
        payload_fill(i, p);
        kiln__cache_store(&key, p, payload_size(i), "multiproc");
    }
}

static void test_killed_writers(void) {
    unsigned seed = (unsigned)(kt_rand_u64() & 0xffff);
    for (int round = 0; round < KILLS; round++) {
        pid_t pid[2];
        fflush(stdout);
        for (int w = 0; w < 2; w++) {
            pid[w] = fork();
            if (pid[w] == 0)
                _exit(writer((int)seed + round * 2 + w));
        }
        /* Long enough for some entries to be written whole even under a
         * sanitizer, short enough to land inside a write most times. */
        struct timespec t = { 0, (long)(30 + kt_rand_u64() % 270) * 1000000L };
        nanosleep(&t, NULL);
        for (int w = 0; w < 2; w++) {
            kill(pid[w], SIGKILL);
            waitpid(pid[w], NULL, 0);
        }
    }
    unsigned char *want = malloc(payload_size(KEYS));
    int loaded = 0, refused = 0, wrong = 0;
    for (int i = 0; i < KEYS; i++) {
        kiln__cache_key key;
        key_of(i, &key);
        void *got = NULL;
        size_t size = 0;
        kiln_status st = kiln__cache_load(&key, &got, &size);
        if (st == KILN_OK) {
            payload_fill(i, want);
            if (size != payload_size(i) || memcmp(got, want, size) != 0)
                wrong++;
            loaded++;
        } else {
            refused++;
        }
        free(got);
    }
    free(want);
    printf("  killed writers (%d rounds): %d entries load right, %d absent or refused, "
           "%d wrong\n",
           KILLS, loaded, refused, wrong);
    CHECK(wrong == 0);
    CHECK(loaded > 0);
    /* Every file the listing calls valid loads: nothing half-written is
     * taken for an entry (killed writers leave only temp files). */
    size_t removed = 0;
    CHECK_OK(kiln_cache_clear(&removed));
    CHECK(removed >= (size_t)loaded);
}

int main(void) {
    char dir[512];
    const char *base = getenv("KILN_CACHE_DIR");
    snprintf(dir, sizeof dir, "%s/multiproc", base && *base ? base : "/tmp/kiln-test-multiproc");
    mkdir(base && *base ? base : "/tmp/kiln-test-multiproc", 0700);
    mkdir(dir, 0700);
    setenv("KILN_CACHE_DIR", dir, 1);
    /* New sources every run, so that the first builds really race. */
    snprintf(salt, sizeof salt, "run %ld.%d", (long)time(NULL), (int)getpid());

    int cold = 0, warm = 1;
    int failed = kt_run_children(PROCS, NULL, child_build, &cold, NULL);
    printf("  %d processes built %d programs into one cache at once: %d failed\n", PROCS, PROGRAMS,
           failed);
    CHECK(failed == 0);
    failed = kt_run_children(2, NULL, child_build, &warm, NULL);
    CHECK_MSG(failed == 0, "afterwards every program loads from the cache and runs right");

    test_killed_writers();
    return kt_report();
}
