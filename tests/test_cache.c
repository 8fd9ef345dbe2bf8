/* The on-disk program cache: SHA-256 known answers, keys, round trips,
 * corruption detection, concurrent writers, the public kiln_cache_* calls.
 * Runs in a private temp directory set through $KILN_CACHE_DIR. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

static char tmpdir[256];

static void hex(const uint8_t d[32], char out[65]) {
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int sha_is(const void *data, size_t n, const char *want) {
    uint8_t d[32];
    char h[65];
    kiln__sha256(data, n, d);
    hex(d, h);
    if (strcmp(h, want) != 0) {
        fprintf(stderr, "sha256 got %s want %s\n", h, want);
        return 0;
    }
    return 1;
}

static void test_sha256(void) {
    CHECK(sha_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    CHECK(sha_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(strlen(m448) == 56);
    CHECK(sha_is(m448, 56, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    CHECK(sha_is(m896, 112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
    char *million = malloc(1000000);
    CHECK(million != NULL);
    if (!million)
        return;
    memset(million, 'a', 1000000);
    CHECK(sha_is(million, 1000000,
                 "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* Streaming in uneven pieces (1, 63, 64, 65, 997 bytes...) gives the
     * same digest as one call: exercises the partial-block path. */
    static const size_t pieces[] = { 1, 63, 64, 65, 997, 55, 56, 57, 4096 };
    kiln__sha256_ctx ctx;
    kiln__sha256_init(&ctx);
    size_t done = 0, k = 0;
    while (done < 1000000) {
        size_t n = pieces[k++ % (sizeof pieces / sizeof pieces[0])];
        if (n > 1000000 - done)
            n = 1000000 - done;
        kiln__sha256_update(&ctx, million + done, n);
        done += n;
    }
    uint8_t d[32];
    char h[65];
    kiln__sha256_final(&ctx, d);
    hex(d, h);
    CHECK(strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
    /* Lengths around the padding boundary agree between one-shot and
     * byte-at-a-time. */
    for (size_t n = 50; n < 140; n++) {
        uint8_t a[32], b[32];
        kiln__sha256(million, n, a);
        kiln__sha256_init(&ctx);
        for (size_t i = 0; i < n; i++)
            kiln__sha256_update(&ctx, million + i, 1);
        kiln__sha256_final(&ctx, b);
        CHECK_MSG(memcmp(a, b, 32) == 0, "length %zu", n);
    }
    free(million);
}

static int keys_differ(const kiln__cache_key *a, const kiln__cache_key *b) {
    return strcmp(a->hex, b->hex) != 0;
}

static void test_keys(void) {
    kiln__cache_key base, same, k;
    kiln__cache_key_make(&base, "opencl", "pthread-cpu|PoCL 5|3.0", "kernel void f(){}", "-DN=4");
    kiln__cache_key_make(&same, "opencl", "pthread-cpu|PoCL 5|3.0", "kernel void f(){}", "-DN=4");
    CHECK(strlen(base.hex) == 64);
    CHECK(strcmp(base.hex, same.hex) == 0);
    kiln__cache_key_make(&k, "cuda", "pthread-cpu|PoCL 5|3.0", "kernel void f(){}", "-DN=4");
    CHECK(keys_differ(&base, &k));
    kiln__cache_key_make(&k, "opencl", "pthread-cpu|PoCL 6|3.0", "kernel void f(){}", "-DN=4");
    CHECK(keys_differ(&base, &k));
    kiln__cache_key_make(&k, "opencl", "pthread-cpu|PoCL 5|3.0", "kernel void g(){}", "-DN=4");
    CHECK(keys_differ(&base, &k));
    kiln__cache_key_make(&k, "opencl", "pthread-cpu|PoCL 5|3.0", "kernel void f(){}", "-DN=5");
    CHECK(keys_differ(&base, &k));
    kiln__cache_key_make(&k, "opencl", "pthread-cpu|PoCL 5|3.0", "kernel void f(){}", "");
    CHECK(keys_differ(&base, &k));
    /* Field boundaries cannot be moved: "ab"+"c" differs from "a"+"bc". */
    kiln__cache_key a, b;
    kiln__cache_key_make(&a, "opencl", "dev", "ab", "c");
    kiln__cache_key_make(&b, "opencl", "dev", "a", "bc");
    CHECK(keys_differ(&a, &b));
    kiln__cache_key_make(&a, "opencl", "devsrc", "", "");
    kiln__cache_key_make(&b, "opencl", "dev", "src", "");
    CHECK(keys_differ(&a, &b));
    /* NULL fields are accepted (as empty). */
    kiln__cache_key_make(&k, NULL, NULL, NULL, NULL);
    CHECK(strlen(k.hex) == 64);
}

static void entry_file(const kiln__cache_key *key, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s.bin", kiln__cache_dir(), key->hex);
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static uint8_t *random_bytes(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (uint8_t)kt_rand_u64();
    return p;
}

static void test_round_trip(void) {
    static const size_t sizes[] = { 0, 1, 63, 64, 65, 4097, 300001 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        char src[64];
        snprintf(src, sizeof src, "source %zu", n);
        kiln__cache_key key;
        kiln__cache_key_make(&key, "opencl", "dev", src, "");
        uint8_t *data = random_bytes(n);
        CHECK_OK(kiln__cache_store(&key, data, n, "opencl test round trip"));
        void *got = NULL;
        size_t got_n = 12345;
        if (CHECK_OK(kiln__cache_load(&key, &got, &got_n))) {
            CHECK_MSG(got_n == n, "size %zu got %zu", n, got_n);
            CHECK_MSG(n == 0 || memcmp(got, data, n) == 0, "payload of %zu bytes", n);
        }
        free(got);
        /* Overwriting an entry with a new payload is seen by the next load. */
        if (n) {
            data[0] ^= 0xff;
            CHECK_OK(kiln__cache_store(&key, data, n, "again"));
            got = NULL;
            if (CHECK_OK(kiln__cache_load(&key, &got, &got_n)))
                CHECK(got_n == n && memcmp(got, data, n) == 0);
            free(got);
        }
        free(data);
    }
    /* A miss: KILN_ERROR_IO, outputs cleared, and no message recorded. */
    kiln__cache_key missing;
    kiln__cache_key_make(&missing, "opencl", "dev", "never stored", "");
    kiln__error_set(KILN_ERROR_INTERNAL, 0, "sentinel");
    void *p = (void *)&missing;
    size_t n = 99;
    CHECK_STATUS(kiln__cache_load(&missing, &p, &n), KILN_ERROR_IO);
    CHECK(p == NULL && n == 0);
    CHECK(strcmp(kiln_last_error_message(), "sentinel") == 0);
    /* Bad arguments. */
    CHECK_STATUS(kiln__cache_load(NULL, &p, &n), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln__cache_load(&missing, NULL, &n), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln__cache_store(NULL, "x", 1, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln__cache_store(&missing, NULL, 1, NULL), KILN_ERROR_NULL_HANDLE);
    kiln__cache_key bad;
    memset(bad.hex, 'z', 64);
    bad.hex[64] = '\0';
    CHECK_STATUS(kiln__cache_store(&bad, "x", 1, NULL), KILN_ERROR_INVALID_ARGUMENT);
    /* A label longer than the header's field is cut, not refused. */
    char longlabel[600];
    memset(longlabel, 'L', sizeof longlabel - 1);
    longlabel[sizeof longlabel - 1] = '\0';
    CHECK_OK(kiln__cache_store(&missing, "abc", 3, longlabel));
    p = NULL;
    if (CHECK_OK(kiln__cache_load(&missing, &p, &n)))
        CHECK(n == 3 && memcmp(p, "abc", 3) == 0);
    free(p);
}

/* Stores a 5000-byte entry, lets damage() spoil the file, and checks that
 * the load is a miss, returns nothing and removes the file; then that a new
 * store repairs it. */
typedef void (*damage_fn)(const char *path);

static void flip_at(const char *path, long offset) {
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    if (fd < 0)
        return;
    if (pread(fd, &b, 1, offset) == 1) {
        b ^= 0x01;
        if (pwrite(fd, &b, 1, offset) != 1)
            fprintf(stderr, "pwrite failed\n");
    }
    close(fd);
}

static void damage_truncate(const char *path) {
    if (truncate(path, file_size(path) - 1000) != 0)
        perror("truncate");
}
static void damage_truncate_header(const char *path) {
    if (truncate(path, 100) != 0)
        perror("truncate");
}
static void damage_zero_length(const char *path) {
    if (truncate(path, 0) != 0)
        perror("truncate");
}
static void damage_payload_byte(const char *path) {
    flip_at(path, file_size(path) - 17);
}
static void damage_first_payload_byte(const char *path) {
    flip_at(path, 408);
}
static void damage_magic(const char *path) {
    flip_at(path, 2);
}
static void damage_size_field(const char *path) {
    flip_at(path, 16);
}
static void damage_label(const char *path) {
    flip_at(path, 130);
}
static void damage_key_field(const char *path) {
    flip_at(path, 60);
}
static void damage_trailing(const char *path) {
    FILE *f = fopen(path, "ab");
    if (f) {
        fputs("extra", f);
        fclose(f);
    }
}

static void check_damage(const char *what, damage_fn damage) {
    kiln__cache_key key;
    kiln__cache_key_make(&key, "opencl", "dev", what, "-O2");
    uint8_t *data = random_bytes(5000);
    char path[1024];
    entry_file(&key, path, sizeof path);
    CHECK_OK(kiln__cache_store(&key, data, 5000, what));
    CHECK_MSG(file_exists(path), "%s: entry written", what);
    damage(path);
    void *got = NULL;
    size_t n = 0;
    kiln_status st = kiln__cache_load(&key, &got, &n);
    CHECK_MSG(st == KILN_ERROR_IO, "%s: load is a miss (got %s)", what, kiln_status_name(st));
    CHECK_MSG(got == NULL && n == 0, "%s: nothing returned", what);
    CHECK_MSG(!file_exists(path), "%s: bad file removed", what);
    CHECK_MSG(strstr(kiln_last_error_message(), "removed") != NULL,
              "%s: message says the entry was removed: %s", what, kiln_last_error_message());
    free(got);
    /* The next build stores a good entry again. */
    CHECK_OK(kiln__cache_store(&key, data, 5000, what));
    got = NULL;
    if (CHECK_OK(kiln__cache_load(&key, &got, &n)))
        CHECK(n == 5000 && memcmp(got, data, 5000) == 0);
    KT_FREE(got, data);
}

static void test_corruption(void) {
    check_damage("truncated payload", damage_truncate);
    check_damage("truncated header", damage_truncate_header);
    check_damage("zero-length file", damage_zero_length);
    check_damage("flipped payload byte", damage_payload_byte);
    check_damage("flipped first payload byte", damage_first_payload_byte);
    check_damage("flipped magic byte", damage_magic);
    check_damage("flipped size byte", damage_size_field);
    check_damage("flipped label byte", damage_label);
    check_damage("flipped key byte", damage_key_field);
    check_damage("trailing bytes", damage_trailing);
    /* An entry renamed to another key's name is refused. */
    kiln__cache_key a, b;
    kiln__cache_key_make(&a, "opencl", "dev", "A", "");
    kiln__cache_key_make(&b, "opencl", "dev", "B", "");
    CHECK_OK(kiln__cache_store(&a, "payload A", 9, "A"));
    char pa[1024], pb[1024];
    entry_file(&a, pa, sizeof pa);
    entry_file(&b, pb, sizeof pb);
    CHECK(rename(pa, pb) == 0);
    void *got = NULL;
    size_t n;
    CHECK_STATUS(kiln__cache_load(&b, &got, &n), KILN_ERROR_IO);
    CHECK(got == NULL && !file_exists(pb));
}

/* Several processes store the same key at once, many times over, while
 * others load it: every store succeeds, every load is either a miss or the
 * exact payload, and the final entry loads. */
static void test_concurrent(void) {
    enum { WRITERS = 4, ROUNDS = 40, SIZE = 20000 };
    kiln__cache_key key;
    kiln__cache_key_make(&key, "opencl", "dev", "raced", "");
    uint8_t *data = random_bytes(SIZE);
    pid_t pids[WRITERS + 1];
    for (int w = 0; w <= WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                if (w < WRITERS) {
                    if (kiln__cache_store(&key, data, SIZE, "raced") != KILN_OK)
                        bad++;
                } else { /* the reader */
                    void *got = NULL;
                    size_t n = 0;
                    if (kiln__cache_load(&key, &got, &n) == KILN_OK &&
                        (n != SIZE || memcmp(got, data, SIZE) != 0))
                        bad++;
                    free(got);
                }
            }
            _exit(bad ? 1 : 0);
        }
    }
    for (int w = 0; w <= WRITERS; w++) {
        int status = -1;
        CHECK(pids[w] > 0 && waitpid(pids[w], &status, 0) == pids[w]);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d: status %d", w,
                  status);
    }
    void *got = NULL;
    size_t n = 0;
    if (CHECK_OK(kiln__cache_load(&key, &got, &n)))
        CHECK(n == SIZE && memcmp(got, data, SIZE) == 0);
    KT_FREE(got, data);
    /* No temp file is left behind. */
    size_t tmps = 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '\\.tmp\\.' ", kiln__cache_dir());
    FILE *f = popen(cmd, "r");
    if (f) {
        if (fscanf(f, "%zu", &tmps) != 1)
            tmps = 0;
        pclose(f);
    }
    CHECK_MSG(tmps == 0, "%zu temp files left", tmps);
}

static void test_directory(void) {
    char buf[1024];
    char want[600];
    /* $KILN_CACHE_DIR wins, trailing slashes dropped, created on store. */
    snprintf(want, sizeof want, "%s/nested/deeper", tmpdir);
    snprintf(buf, sizeof buf, "%s/nested/deeper//", tmpdir);
    setenv("KILN_CACHE_DIR", buf, 1);
    CHECK_OK(kiln_cache_path(buf, sizeof buf));
    CHECK_MSG(strcmp(buf, want) == 0, "%.200s vs %.200s", buf, want);
    CHECK(!file_exists(want));
    kiln__cache_key key;
    kiln__cache_key_make(&key, "opencl", "dev", "mkdir -p", "");
    CHECK_OK(kiln__cache_store(&key, "x", 1, "x"));
    CHECK(file_exists(want));
    /* Then $XDG_CACHE_HOME/kiln, then $HOME/.cache/kiln. */
    char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("KILN_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    CHECK_OK(kiln_cache_path(buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "/xdg/cache/kiln") == 0, "%.200s", buf);
    setenv("KILN_CACHE_DIR", "", 1); /* empty counts as unset */
    CHECK_OK(kiln_cache_path(buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "/xdg/cache/kiln") == 0, "%.200s", buf);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    CHECK_OK(kiln_cache_path(buf, sizeof buf));
    CHECK_MSG(strcmp(buf, "/home/someone/.cache/kiln") == 0, "%.200s", buf);
    if (old_xdg)
        setenv("XDG_CACHE_HOME", old_xdg, 1);
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    KT_FREE(old_xdg, old_home);
    /* kiln_cache_path: capacity and NULL. */
    setenv("KILN_CACHE_DIR", "/a/b", 1);
    char small[5];
    CHECK_OK(kiln_cache_path(small, sizeof small));
    CHECK(strcmp(small, "/a/b") == 0);
    CHECK_STATUS(kiln_cache_path(small, 4), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_cache_path(NULL, 10), KILN_ERROR_NULL_HANDLE);
    /* An unusable directory (a path through a regular file) is an IO error
     * with a message, never a crash. */
    char file[600];
    snprintf(file, sizeof file, "%s/plainfile", tmpdir);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    snprintf(buf, sizeof buf, "%s/sub", file);
    setenv("KILN_CACHE_DIR", buf, 1);
    CHECK_STATUS(kiln__cache_store(&key, "x", 1, "x"), KILN_ERROR_IO);
    CHECK(strstr(kiln_last_error_message(), "cache directory") != NULL);
    void *got = NULL;
    size_t n;
    CHECK_STATUS(kiln__cache_load(&key, &got, &n), KILN_ERROR_IO);
    CHECK(got == NULL);
}

struct listing {
    int count, valid;
    int saw_label;
};

static void visit(const kiln_cache_entry *e, void *user) {
    struct listing *l = user;
    l->count++;
    l->valid += e->valid;
    if (strncmp(e->label, "opencl list ", 12) == 0)
        l->saw_label++;
    CHECK(e->bytes > 0 && e->mtime > 0 && e->file[0] == '/');
}

static void test_list_clear(void) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/listing", tmpdir);
    setenv("KILN_CACHE_DIR", dir, 1);
    struct listing l = { 0, 0, 0 };
    CHECK_OK(kiln_cache_list(visit, &l)); /* the directory does not exist yet */
    CHECK(l.count == 0);
    size_t removed = 99;
    CHECK_OK(kiln_cache_clear(&removed));
    CHECK(removed == 0);
    CHECK_STATUS(kiln_cache_list(NULL, NULL), KILN_ERROR_NULL_HANDLE);

    kiln__cache_key keys[3];
    for (int i = 0; i < 3; i++) {
        char src[32], label[64];
        snprintf(src, sizeof src, "kernel %d", i);
        snprintf(label, sizeof label, "opencl list kernel%d", i);
        kiln__cache_key_make(&keys[i], "opencl", "dev", src, "");
        CHECK_OK(kiln__cache_store(&keys[i], src, strlen(src), label));
    }
    /* Files that are not entries are neither listed nor removed. */
    char other[700];
    snprintf(other, sizeof other, "%s/README", dir);
    FILE *f = fopen(other, "w");
    if (f) {
        fputs("not an entry\n", f);
        fclose(f);
    }
    l = (struct listing){ 0, 0, 0 };
    CHECK_OK(kiln_cache_list(visit, &l));
    CHECK_MSG(l.count == 3 && l.valid == 3 && l.saw_label == 3, "count %d valid %d labels %d",
              l.count, l.valid, l.saw_label);
    /* A damaged entry is listed as not valid. */
    char path[1024];
    entry_file(&keys[1], path, sizeof path);
    damage_payload_byte(path);
    l = (struct listing){ 0, 0, 0 };
    CHECK_OK(kiln_cache_list(visit, &l));
    CHECK_MSG(l.count == 3 && l.valid == 2, "count %d valid %d", l.count, l.valid);
    CHECK_OK(kiln_cache_clear(&removed));
    CHECK_MSG(removed == 3, "removed %zu", removed);
    l = (struct listing){ 0, 0, 0 };
    CHECK_OK(kiln_cache_list(visit, &l));
    CHECK(l.count == 0);
    CHECK(file_exists(other));
    CHECK_OK(kiln_cache_clear(NULL));
}

int main(void) {
    kt_make_tmpdir(tmpdir, sizeof tmpdir, "kiln-test-cache");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/main", tmpdir);
    setenv("KILN_CACHE_DIR", dir, 1);

    KT_RUN_HOST_STEPS(test_sha256, test_keys, test_round_trip, test_corruption, test_concurrent,
                      test_directory, test_list_clear);

    kt_remove_tmpdir(tmpdir);
    return kt_report();
}
