/* Processes racing on one PoCL cache (issue 41, item 0). PoCL serialises a
 * program's binary from the files of its own cache directory; when several
 * processes build the same program into one POCL_CACHE_DIR at once (as
 * under `ctest -j`, PoCL's default cache being shared by all of a user's
 * processes), a binary can come out without its program.bc or kernel
 * files. kiln must never store such a binary (it would crash PoCL in every
 * later process that loads it), must refuse one planted in its cache, and
 * must remove an entry whose load crashed a process once.
 *
 * Each round: RACERS processes, each with its own fresh KILN_CACHE_DIR and
 * one shared, fresh POCL_CACHE_DIR, build the same PROGRAMS at once; then,
 * for each racer, a fresh process with a fresh PoCL cache loads every
 * program from that racer's kiln cache. A loader killed by a signal means
 * a poisoned entry. The parent forks before it touches any device.
 *
 * Then, in the parent: a planted PoCL binary with program.bc cut out but a
 * valid kiln checksum is refused and rebuilt, never handed to PoCL; every
 * prefix of a good binary is refused by the check; and an entry whose
 * last loader died during the load (its marker left behind) is removed
 * and rebuilt, while a live loader's marker is loaded beside. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILN_TEST_OPENCL_BACKEND 1
#include "harness.h"
#include "testing/kiln_test_internal.h"

enum { RACERS = 3, PROGRAMS = 3, KERNELS = 6, N = 97 };
static int rounds = 2; /* KT_RACE_ROUNDS */

static char base[512], salt[64];

static void source_of(int p, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "/* %s program %d */\n", salt, p);
    for (int k = 0; k < KERNELS && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "KILN_KERNEL void p%dk%d(KILN_GLOBAL int *x) {\n"
                                "  long i = kiln_global_id(0);\n"
                                "  int v = (int)i * %d + %d;\n"
                                "  for (int j = 0; j < (int)(i %% 5); j++) v += j * %d;\n"
                                "  x[i] = v; }\n",
                                p, k, p + k + 2, k, p + 1);
}

static int expect(int p, int k, int i) {
    int v = i * (p + k + 2) + k;
    for (int j = 0; j < i % 5; j++)
        v += j * (p + 1);
    return v;
}

/* Builds and runs every program; with want_cached each must come from the
 * kiln cache. 0 when all is right. */
static int build_all(int want_cached) {
    kiln_queue *q = NULL;
    if (kiln_queue_create_default(NULL, 0, &q) != KILN_OK)
        return 2;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_buffer *b = NULL;
    int bad = kiln_buffer_create(ctx, N * sizeof(int), 0, NULL, &b) != KILN_OK;
    for (int p = 0; p < PROGRAMS && !bad; p++) {
        char src[4096];
        source_of(p, src, sizeof src);
        kiln_program *prog = NULL;
        if (kiln_program_create(ctx, src, NULL, &prog) != KILN_OK) {
            fprintf(stderr, "  build: %s\n", kiln_last_error_message());
            bad = 1;
            break;
        }
        if (want_cached && !kiln_program_from_cache(prog, kiln_queue_device(q)))
            bad = 3;
        for (int k = 0; k < KERNELS && !bad; k++) {
            char name[16];
            int out[N];
            size_t n = N;
            kiln_kernel *kern = NULL;
            snprintf(name, sizeof name, "p%dk%d", p, k);
            kiln_arg a[] = { KILN_ARG_BUF(b) };
            if (kiln_kernel_create(prog, name, &kern) != KILN_OK ||
                kiln_kernel_launch(q, kern, 1, &n, NULL, 1, a, 0, NULL, NULL) != KILN_OK ||
                kiln_buffer_read(q, b, 0, sizeof out, out) != KILN_OK)
                bad = 1;
            for (int i = 0; i < N && !bad; i++)
                if (out[i] != expect(p, k, i))
                    bad = 1;
            kiln_kernel_release(kern);
        }
        kiln_program_release(prog);
    }
    KT_RELEASE(b, q);
    return bad;
}

static void dir_of(char *buf, size_t cap, const char *what, int round, int i) {
    snprintf(buf, cap, "%s/%s-%d-%d", base, what, round, i);
    mkdir(buf, 0700);
}

/* Starts n children together, child i with its own kiln cache and the
 * PoCL cache pocl (or its own with pocl NULL); returns how many did not
 * exit 0, and how many of those died by a signal. */
/* What the children of one run share: the round, the PoCL cache (NULL:
 * one of its own for each) and whether every program must be cached. */
typedef struct racers {
    int round;
    const char *pocl;
    int want_cached;
} racers;

/* In child c before the start: its own kiln cache, its PoCL cache. */
static void racer_dirs(int c, void *arg) {
    const racers *r = arg;
    char kdir[600], pdir[600];
    dir_of(kdir, sizeof kdir, "kiln", r->round, c);
    if (!r->pocl) {
        snprintf(pdir, sizeof pdir, "%s/pocl-load-%d-%d-%ld", base, r->round, c, (long)getpid());
        mkdir(pdir, 0700);
    }
    setenv("KILN_CACHE_DIR", kdir, 1);
    setenv("POCL_CACHE_DIR", r->pocl ? r->pocl : pdir, 1);
}

static int racer_build(int c, void *arg) {
    (void)c;
    return build_all(((const racers *)arg)->want_cached);
}

static int run_children(int n, int round, const char *pocl, int want_cached, int *signalled) {
    racers r = { round, pocl, want_cached };
    return kt_run_children(n, racer_dirs, racer_build, &r, signalled);
}

static void test_racers(void) {
    int racer_fail = 0, loader_fail = 0, loader_crash = 0, rounds_poisoned = 0;
    for (int round = 0; round < rounds; round++) {
        char pocl[600];
        int sig = 0;
        snprintf(salt, sizeof salt, "run %ld.%d round %d", (long)time(NULL), (int)getpid(), round);
        dir_of(pocl, sizeof pocl, "pocl-shared", round, 0);
        racer_fail += run_children(RACERS, round, pocl, 0, &sig);
        int crashes = 0;
        /* Every entry a racer stored must load in a fresh process, from
         * kiln's cache, without PoCL's cache to fall back on. A racer
         * that stored nothing (a refused binary) rebuilds instead. */
        loader_fail += run_children(RACERS, round, NULL, 0, &crashes);
        loader_crash += crashes;
        rounds_poisoned += crashes > 0;
    }
    printf("  %d rounds of %d processes on one PoCL cache: %d racer failures, %d loader "
           "failures (%d crashed), %d rounds left a poisoned cache\n",
           rounds, RACERS, racer_fail, loader_fail, loader_crash, rounds_poisoned);
    CHECK(racer_fail == 0);
    CHECK(loader_fail == 0);
    CHECK(loader_crash == 0);
}

/* ------------------------------------------------- planted and guarded */

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint32_t get_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

enum { KILN_OCL_HEADER = 24 };

/* The key of the one entry in the (fresh) cache directory. */
static void visit_one(const kiln_cache_entry *e, void *user) {
    const char *slash = strrchr(e->file, '/');
    snprintf((char *)user, 65, "%.64s", slash ? slash + 1 : e->file);
}

/* Builds program 0 on a fresh context; returns 1 if it ran right, and
 * whether it came from the disk cache. */
static int build_fresh(int *from_disk) {
    kiln_queue *q = NULL;
    *from_disk = -1;
    if (!CHECK_OK(kiln_queue_create_default(NULL, 0, &q)))
        return 0;
    kiln_context *ctx = kiln_queue_context(q);
    char src[4096];
    source_of(0, src, sizeof src);
    kiln_program *prog = NULL;
    kiln_kernel *kern = NULL;
    kiln_buffer *b = NULL;
    int out[N], ok = 0;
    size_t n = N;
    if (CHECK_OK(kiln_program_create(ctx, src, NULL, &prog)) &&
        CHECK_OK(kiln_kernel_create(prog, "p0k1", &kern)) &&
        CHECK_OK(kiln_buffer_create(ctx, sizeof out, 0, NULL, &b))) {
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        *from_disk = kiln_program_from_cache(prog, kiln_queue_device(q));
        ok = CHECK_OK(kiln_kernel_launch(q, kern, 1, &n, NULL, 1, a, 0, NULL, NULL)) &&
             CHECK_OK(kiln_buffer_read(q, b, 0, sizeof out, out));
        for (int i = 0; i < N && ok; i++)
            ok = out[i] == expect(0, 1, i);
    }
    KT_RELEASE(b, kern, prog, q);
    return ok;
}

static void write_marker(const char *dir, const char *hex, long pid) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s.loading", dir, hex);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", pid);
        fclose(f);
    }
}

static int marker_exists(const char *dir, const char *hex) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s.loading", dir, hex);
    return access(path, F_OK) == 0;
}

static void test_planted_and_guarded(void) {
    char kdir[600], pdir[600], hex[65] = "";
    snprintf(kdir, sizeof kdir, "%s/planted", base);
    snprintf(pdir, sizeof pdir, "%s/pocl-planted", base);
    mkdir(kdir, 0700);
    mkdir(pdir, 0700);
    setenv("KILN_CACHE_DIR", kdir, 1);
    setenv("POCL_CACHE_DIR", pdir, 1);
    snprintf(salt, sizeof salt, "planted %ld.%d", (long)time(NULL), (int)getpid());
    int from_disk;
    CHECK(build_fresh(&from_disk) && from_disk == 0);
    CHECK_OK(kiln_cache_list(visit_one, hex));
    kiln__cache_key key;
    snprintf(key.hex, sizeof key.hex, "%s", hex);
    unsigned char *payload = NULL;
    size_t size = 0;
    if (!CHECK_OK(kiln__cache_load(&key, (void **)&payload, &size)))
        return;
    const unsigned char *native = payload + KILN_OCL_HEADER;
    size_t n = size - KILN_OCL_HEADER;
    if (!kiln__ocl_is_pocl_binary(native, n)) {
        printf("  the device's binaries are not PoCL's: planted-binary checks left out\n");
        free(payload);
        return;
    }
    CHECK(kiln__ocl_pocl_binary_check(native, n) == NULL);
    /* Every cut of a good binary is refused: each byte of the header and
     * of the first file's lengths, and 300 cuts spread over the rest. */
    int cuts = 0, refused = 0;
    for (size_t len = 0; len < n; len += len < 200 ? 1 : n / 300 + 1, cuts++)
        refused += kiln__ocl_pocl_binary_check(native, len) != NULL;
    CHECK_MSG(refused == cuts, "%d of %d cut binaries refused", refused, cuts);

    /* The race's binary (PoCL 3.1): the root entry of a program.bc that
     * was missing while PoCL serialised, counted with size 0. The first
     * root entry follows the header (77 bytes, 8 more for program-scope
     * variables from format 10). */
    uint32_t version = get_le32(native + 16);
    size_t root_at = 77 + (version >= 10 && (native[24] & 2) ? 8 : 0);
    uint64_t root_n = get_le32(native + root_at) | (uint64_t)get_le32(native + root_at + 4) << 32;
    size_t cut_n = n - (size_t)root_n;
    unsigned char *cut = malloc(KILN_OCL_HEADER + cut_n);
    CHECK(cut != NULL && root_at + 8 + root_n <= n);
    if (cut && root_at + 8 + root_n <= n) {
        unsigned char *cn = cut + KILN_OCL_HEADER;
        memcpy(cn, native, root_at);
        put_le(cn + root_at, 0, 8);
        memcpy(cn + root_at + 8, native + root_at + 8 + root_n, n - root_at - 8 - (size_t)root_n);
        CHECK(kiln__ocl_pocl_binary_check(cn, cut_n) != NULL);
        memcpy(cut, "kilnOCL2", 8);
        put_le(cut + 8, cut_n, 8);
        put_le(cut + 16, fnv1a64(cn, cut_n), 8);
        CHECK_OK(kiln__cache_store(&key, cut, KILN_OCL_HEADER + cut_n, "planted"));
        /* Refused before PoCL sees it (PoCL would abort), rebuilt, and the
         * rebuilt binary stored whole in its place. */
        CHECK(build_fresh(&from_disk) && from_disk == 0);
        void *again = NULL;
        size_t again_n = 0;
        if (CHECK_OK(kiln__cache_load(&key, &again, &again_n)))
            CHECK(kiln__ocl_pocl_binary_check((unsigned char *)again + KILN_OCL_HEADER,
                                              again_n - KILN_OCL_HEADER) == NULL);
        free(again);
        CHECK(build_fresh(&from_disk) && from_disk == 1);
    }
    KT_FREE(cut, payload);

    /* A loader that died during the load: its entry goes, the program is
     * rebuilt and stored again. */
    fflush(stdout);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    write_marker(kdir, hex, (long)dead);
    CHECK(build_fresh(&from_disk) && from_disk == 0);
    CHECK(!marker_exists(kdir, hex));
    CHECK(build_fresh(&from_disk) && from_disk == 1);
    CHECK(!marker_exists(kdir, hex));
    /* A live loader's marker (our parent's): loaded beside it, left alone. */
    write_marker(kdir, hex, (long)getppid());
    CHECK(build_fresh(&from_disk) && from_disk == 1);
    CHECK(marker_exists(kdir, hex));
    char path[700];
    snprintf(path, sizeof path, "%s/%s.loading", kdir, hex);
    unlink(path);
}

int main(void) {
    const char *b = getenv("KILN_CACHE_DIR");
    snprintf(base, sizeof base, "%s/pocl-race-%ld", b && *b ? b : "/tmp/kiln-test-pocl-race",
             (long)getpid());
    mkdir(b && *b ? b : "/tmp/kiln-test-pocl-race", 0700);
    mkdir(base, 0700);
    const char *r = getenv("KT_RACE_ROUNDS");
    if (r && atoi(r) > 0)
        rounds = atoi(r);
    test_racers();
    test_planted_and_guarded();
    return kt_report();
}
