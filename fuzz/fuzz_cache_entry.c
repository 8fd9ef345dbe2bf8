/* The cache entry reader (src/cache/cache.c): whatever lies in the cache
 * directory under an entry's name is read by kiln__cache_load and listed
 * by kiln_cache_list. Three shapes of input, by the first byte:
 *   0: the file, as is;
 *   1: a well-formed entry of the rest, then damaged: pairs (u16 offset,
 *      byte) XOR-ed into it, the last pair's offset giving a truncation;
 *   2: the rest as header + payload with both checksums made right (so
 *      that the size, format and key checks behind them are reached).
 * The entry must either load with the exact payload it holds or be refused
 * (and removed); nothing else. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "testing/kiln_test_internal.h"

/* The on-disk header (docs/architecture.md, "The program cache"). */
enum { OFF_PSIZE = 16, OFF_PSHA = 24, OFF_HSHA = 376, HEADER = 408 };

static char dir[64];
static char path[256];
static kiln__cache_key key;

static void setup(void) {
    if (dir[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/kiln-fuzz-cache-%d", (int)getpid());
    mkdir(dir, 0700);
    setenv("KILN_CACHE_DIR", dir, 1);
    setenv("KILN_CACHE_QUIET", "1", 1);
    kiln__cache_key_make(&key, "fuzz", "fuzz-device", "source", "");
    snprintf(path, sizeof path, "%s/%s.bin", dir, key.hex);
}

static void write_file(const uint8_t *p, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        abort();
    if (n && write(fd, p, n) != (ssize_t)n)
        abort();
    close(fd);
}

static uint8_t *read_file(size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)len + 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len)
        abort();
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void visit(const kiln_cache_entry *e, void *user) {
    (void)e;
    (*(int *)user)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    if (size < 1)
        return 0;
    uint8_t mode = data[0] % 3;
    data++, size--;
    uint8_t *file = NULL;
    size_t n = 0;
    if (mode == 0) {
        write_file(data, size);
    } else if (mode == 1) {
        size_t payload = size / 2; /* first half: payload; second: damage */
        if (kiln__cache_store(&key, data, payload, "fuzz") != KILN_OK)
            abort();
        file = read_file(&n);
        const uint8_t *d = data + payload;
        size_t nd = size - payload;
        size_t cut = n;
        for (size_t k = 0; k + 3 <= nd; k += 3) {
            size_t off = (size_t)d[k] | (size_t)d[k + 1] << 8;
            if (off < n)
                file[off] ^= d[k + 2];
            cut = off;
        }
        write_file(file, cut < n ? cut : n);
    } else {
        if (size < HEADER)
            return 0;
        file = malloc(size);
        memcpy(file, data, size);
        kiln__sha256(file + HEADER, size - HEADER, file + OFF_PSHA);
        kiln__sha256(file, OFF_HSHA, file + OFF_HSHA);
        write_file(file, size);
    }
    int listed = 0;
    kiln_cache_list(visit, &listed);
    void *payload = NULL;
    size_t got = 0;
    if (kiln__cache_load(&key, &payload, &got) == KILN_OK) {
        /* Loaded: the payload is the file's bytes after the header. */
        size_t fn = 0;
        uint8_t *now = read_file(&fn);
        if (fn != HEADER + got || memcmp(now + HEADER, payload, got) != 0)
            abort();
        free(now);
        free(payload);
    } else if (payload) {
        abort(); /* refused, yet a payload handed out */
    }
    free(file);
    unlink(path);
    return 0;
}
