/* The on-disk program cache: see cache.h for the contract.
 *
 * Entry file layout (all integers little-endian, whatever the host):
 *
 *   offset  size  field
 *        0     8  magic "KILNBIN1"
 *        8     4  format version (1)
 *       12     4  header size (408)
 *       16     8  payload size in bytes
 *       24    32  SHA-256 of the payload
 *       56    64  the key, lower-case hex (guards against a renamed file)
 *      120   256  label, NUL-padded
 *      376    32  SHA-256 of bytes 0..375 (so a flipped label byte is seen)
 *      408     -  payload
 *
 * File names are "<key>.bin"; writers use "<key>.tmp.XXXXXX" in the same
 * directory and rename(2) it into place, which is atomic on POSIX file
 * systems: a reader sees the old entry, the new one, or none, never a part.
 * Two writers of the same key each rename a complete file; the last wins and
 * both are valid. No fsync: after a crash an entry may be short or zeroed,
 * which the checks on load catch and turn into a rebuild. */
#include "base/bytes.h"
#include "base/fault.h"
#include "cache/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cache/sha256.h"
#include "cache/trust.h"
#include "base/error.h"

#define KILN__CACHE_MAGIC "KILNBIN1"
#define KILN__CACHE_FORMAT 1u
#define KILN__CACHE_PATH_MAX 4096

enum {
    KILN__OFF_MAGIC = 0,
    KILN__OFF_FORMAT = 8,
    KILN__OFF_HSIZE = 12,
    KILN__OFF_PSIZE = 16,
    KILN__OFF_PSHA = 24,
    KILN__OFF_KEY = 56,
    KILN__OFF_LABEL = 120,
    KILN__LABEL_MAX = 256,
    KILN__OFF_HSHA = 376,
    KILN__HEADER_SIZE = 408,
};

/* Temp files older than this are leftovers of a crashed writer. */
#define KILN__STALE_TMP_SECONDS 3600

/* ------------------------------------------------------------ small helpers */

static int kiln__is_key_hex(const char *s) {
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[64] == '\0';
}

/* Reads (or with `writing`, writes) exactly size bytes, retrying after
 * signals; 0 on success, -1 on error or early end. */
static int kiln__io_all(int fd, void *buf, size_t size, int writing) {
    uint8_t *p = buf;
    while (size) {
        ssize_t n = writing ? write(fd, p, size) : read(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static int kiln__read_all(int fd, void *buf, size_t size) {
    return kiln__io_all(fd, buf, size, 0);
}

static int kiln__write_all(int fd, const void *buf, size_t size) {
    return kiln__io_all(fd, (void *)buf, size, 1); /* only read from */
}

/* --------------------------------------------------------------- directory */

static int kiln__entry_path(char *buf, size_t cap, const char *dir, const char *name) {
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* --------------------------------------------------------------------- key */

/* Each field goes in as an 8-byte length then its bytes, so that no two
 * different field tuples hash the same message ("ab"+"c" vs "a"+"bc"). */
static void kiln__key_field(kiln__sha256_ctx *ctx, const char *s) {
    uint8_t len[8];
    size_t n = s ? strlen(s) : 0;
    kiln__put_u64(len, (uint64_t)n);
    kiln__sha256_update(ctx, len, sizeof len);
    if (n)
        kiln__sha256_update(ctx, s, n);
}

void kiln__cache_key_make(kiln__cache_key *key, const char *backend_name,
                          const char *device_identity, const char *source, const char *options) {
    static const char hexdigits[] = "0123456789abcdef";
    kiln__sha256_ctx ctx;
    uint8_t digest[32];
    if (!key)
        return;
    kiln__sha256_init(&ctx);
    kiln__key_field(&ctx, "kiln-cache-key-v1");
    kiln__key_field(&ctx, backend_name);
    kiln__key_field(&ctx, device_identity);
    kiln__key_field(&ctx, source);
    kiln__key_field(&ctx, options);
    kiln__key_field(&ctx, KILN_VERSION_STRING);
    kiln__sha256_final(&ctx, digest);
    for (int i = 0; i < 32; i++) {
        key->hex[2 * i] = hexdigits[digest[i] >> 4];
        key->hex[2 * i + 1] = hexdigits[digest[i] & 15];
    }
    key->hex[64] = '\0';
}

/* ------------------------------------------------------------ entry checks */

/* Reads and verifies the entry open on fd. want_key: the key the file name
 * promises (NULL: not checked). payload: if not NULL, gets the malloc'd
 * payload on success. label: if not NULL (KILN__LABEL_MAX bytes), gets the
 * label once the header verifies. Returns NULL if the entry is good, else a
 * short reason. *oom is set on allocation failure (not the entry's fault). */
static const char *kiln__entry_check(int fd, const char *want_key, void **payload,
                                     size_t *payload_size, char *label, int *oom) {
    uint8_t h[KILN__HEADER_SIZE];
    uint8_t sum[32];
    struct stat st;
    *oom = 0;
    if (fstat(fd, &st) != 0)
        return "cannot stat";
    if (st.st_size == 0)
        return "empty file";
    if ((uint64_t)st.st_size < KILN__HEADER_SIZE)
        return "truncated header";
    if (kiln__read_all(fd, h, sizeof h) != 0)
        return "truncated header";
    if (memcmp(h + KILN__OFF_MAGIC, KILN__CACHE_MAGIC, 8) != 0)
        return "bad magic";
    kiln__sha256(h, KILN__OFF_HSHA, sum);
    if (memcmp(sum, h + KILN__OFF_HSHA, 32) != 0)
        return "header checksum mismatch";
    if (kiln__get_u32(h + KILN__OFF_FORMAT) != KILN__CACHE_FORMAT)
        return "unknown format version";
    if (kiln__get_u32(h + KILN__OFF_HSIZE) != KILN__HEADER_SIZE)
        return "unexpected header size";
    if (want_key && memcmp(h + KILN__OFF_KEY, want_key, 64) != 0)
        return "key does not match the file name";
    if (label) {
        memcpy(label, h + KILN__OFF_LABEL, KILN__LABEL_MAX);
        label[KILN__LABEL_MAX - 1] = '\0';
    }
    uint64_t size = kiln__get_u64(h + KILN__OFF_PSIZE);
    if (size != (uint64_t)st.st_size - KILN__HEADER_SIZE)
        return size > (uint64_t)st.st_size - KILN__HEADER_SIZE ? "truncated payload"
                                                               : "trailing bytes after the payload";
    if (size > (uint64_t)SIZE_MAX - 1)
        return "payload too large for this host";
    uint8_t *data = kiln__malloc((size_t)size + 1);
    if (!data) {
        *oom = 1;
        return "out of host memory";
    }
    if (kiln__read_all(fd, data, (size_t)size) != 0) {
        free(data);
        return "truncated payload";
    }
    kiln__sha256(data, (size_t)size, sum);
    if (memcmp(sum, h + KILN__OFF_PSHA, 32) != 0) {
        free(data);
        return "payload checksum mismatch";
    }
    if (payload) {
        *payload = data;
        *payload_size = (size_t)size;
    } else {
        free(data);
    }
    return NULL;
}

/* Removes the entry only if it is still the file open on fd: another
 * process may have renamed a fresh, good entry into place since we opened
 * ours. */
static void kiln__remove_if_same(int dirfd, const char *name, int fd) {
    struct stat a, b;
    if (fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        unlinkat(dirfd, name, 0);
}

/* Opens the checked cache directory for a load (create 0) or a store
 * (create 1). A directory that does not exist yet is a plain miss; a
 * refused one is said once on stderr and is the error message. */
static kiln_status kiln__dir_for_use(int create, int *dirfd) {
    char why[1024];
    int missing;
    kiln_status st = kiln__cache_dir_open(create, dirfd, &missing, why, sizeof why);
    if (st == KILN_OK)
        return KILN_OK;
    if (missing && !kiln__cache_shared())
        return KILN_ERROR_IO; /* nothing cached yet: no message */
    if (st == KILN_ERROR_UNTRUSTED || missing)
        kiln__cache_warn_once(why);
    return kiln__error_set(st, 0, "%s", why);
}

/* Creates "<key>.tmp.XXXXXX" in the directory, exclusively, never through
 * a link; name gets its file name. */
static int kiln__tmp_create(int dirfd, const char *hex, char *name, size_t cap) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint counter;
    for (int tries = 0; tries < 100; tries++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t r = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^
                     (uint64_t)atomic_fetch_add(&counter, 1) * 0xBF58476D1CE4E5B9ull;
        char suffix[7];
        for (int i = 0; i < 6; i++, r /= 62)
            suffix[i] = alphabet[r % 62];
        suffix[6] = '\0';
        snprintf(name, cap, "%s.tmp.%s", hex, suffix);
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* -------------------------------------------------------------- load/store */

kiln_status kiln__cache_load(const kiln__cache_key *key, void **payload, size_t *size) {
    char name[80], why[256];
    int oom, dirfd, untrusted;
    if (payload)
        *payload = NULL;
    if (size)
        *size = 0;
    if (!key || !payload || !size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln__cache_load: NULL key or output");
    if (!kiln__is_key_hex(key->hex))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "kiln__cache_load: malformed key");
    snprintf(name, sizeof name, "%s.bin", key->hex);
    kiln_status st = kiln__dir_for_use(0, &dirfd);
    if (st != KILN_OK)
        return st;
    kiln__cache_run_test_hook(kiln__cache_dir(), name);
    int fd = kiln__cache_entry_open(dirfd, name, &untrusted, why, sizeof why);
    if (fd < 0) {
        int e = errno;
        close(dirfd);
        if (untrusted) /* never read; the store after the build replaces it */
            return kiln__error_set(KILN_ERROR_UNTRUSTED, 0,
                                   "cache entry %s/%s was not loaded: it %s", kiln__cache_dir(),
                                   name, why);
        if (e == ENOENT)
            return KILN_ERROR_IO; /* a plain miss: no message */
        return kiln__error_set(KILN_ERROR_IO, e, "cannot open cache entry %s/%s: %s",
                               kiln__cache_dir(), name, strerror(e));
    }
    const char *bad = kiln__entry_check(fd, key->hex, payload, size, NULL, &oom);
    if (bad && !oom)
        kiln__remove_if_same(dirfd, name, fd);
    close(fd);
    close(dirfd);
    if (bad && oom)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "reading cache entry %s/%s: %s",
                               kiln__cache_dir(), name, bad);
    if (bad)
        return kiln__error_set(KILN_ERROR_IO, 0, "cache entry %s/%s was bad (%s) and was removed",
                               kiln__cache_dir(), name, bad);
    return KILN_OK;
}

kiln_status kiln__cache_store(const kiln__cache_key *key, const void *payload, size_t size,
                              const char *label) {
    char tmp[96], name[80];
    uint8_t h[KILN__HEADER_SIZE];
    int dirfd;
    if (!key || (!payload && size))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln__cache_store: NULL key or payload");
    if (!kiln__is_key_hex(key->hex))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "kiln__cache_store: malformed key");
    kiln_status st = kiln__dir_for_use(1, &dirfd);
    if (st != KILN_OK)
        return st;
    snprintf(name, sizeof name, "%s.bin", key->hex);

    memset(h, 0, sizeof h);
    memcpy(h + KILN__OFF_MAGIC, KILN__CACHE_MAGIC, 8);
    kiln__put_u32(h + KILN__OFF_FORMAT, KILN__CACHE_FORMAT);
    kiln__put_u32(h + KILN__OFF_HSIZE, KILN__HEADER_SIZE);
    kiln__put_u64(h + KILN__OFF_PSIZE, (uint64_t)size);
    kiln__sha256(size ? payload : "", size, h + KILN__OFF_PSHA);
    memcpy(h + KILN__OFF_KEY, key->hex, 64);
    if (label) {
        size_t n = strlen(label);
        if (n > KILN__LABEL_MAX - 1)
            n = KILN__LABEL_MAX - 1;
        memcpy(h + KILN__OFF_LABEL, label, n);
    }
    kiln__sha256(h, KILN__OFF_HSHA, h + KILN__OFF_HSHA);

    int fd = kiln__tmp_create(dirfd, key->hex, tmp, sizeof tmp);
    if (fd < 0) {
        int e = errno;
        close(dirfd);
        return kiln__error_set(KILN_ERROR_IO, e, "cannot create a temp file in %s: %s",
                               kiln__cache_dir(), strerror(e));
    }
    /* Explicit modes whatever the umask: private, or readable by the team
     * of a shared cache. */
    int werr = fchmod(fd, kiln__cache_shared() ? 0640 : 0600) != 0 ? errno : 0;
    if (!werr && (kiln__write_all(fd, h, sizeof h) != 0 ||
                  (size && kiln__write_all(fd, payload, size) != 0)))
        werr = errno ? errno : EIO;
    if (close(fd) != 0 && !werr)
        werr = errno;
    if (!werr && renameat(dirfd, tmp, dirfd, name) != 0)
        werr = errno;
    if (werr) {
        unlinkat(dirfd, tmp, 0);
        close(dirfd);
        return kiln__error_set(KILN_ERROR_IO, werr, "cannot write cache entry %s/%s: %s",
                               kiln__cache_dir(), name, strerror(werr));
    }
    close(dirfd);
    return KILN_OK;
}

/* ------------------------------------------------------------ load guard */

/* "<64 hex>.loading": present while a process hands the entry of that key
 * to its driver, and holding that process's pid. A marker whose process
 * has died means the load crashed it (a driver that aborts on a bad
 * binary): the entry is removed, so only one run ever crashes on it. Pids
 * are those of this machine: a cache shared over a network file system
 * between machines may take a live loader elsewhere for a dead one (the
 * cost is one rebuild). */
static int kiln__is_marker_name(const char *name) {
    return strlen(name) == 72 && strcmp(name + 64, ".loading") == 0;
}

static long kiln__marker_pid(int dirfd, const char *name) {
    char buf[32];
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

kiln_status kiln__cache_guard_begin(const kiln__cache_key *key, kiln__cache_guard *g) {
    char entry[80];
    int dirfd;
    memset(g, 0, sizeof *g);
    if (!key || !kiln__is_key_hex(key->hex))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln__cache_guard_begin: malformed key");
    snprintf(g->marker, sizeof g->marker, "%s.loading", key->hex);
    snprintf(entry, sizeof entry, "%s.bin", key->hex);
    struct stat st;
    if (kiln__dir_for_use(0, &dirfd) != KILN_OK)
        return KILN_OK; /* nothing to guard: the load misses anyway */
    if (fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        close(dirfd);
        return KILN_OK; /* a miss */
    }
    for (int tries = 0; tries < 2; tries++) {
        int fd = openat(dirfd, g->marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        kiln__cache_shared() ? 0640 : 0600);
        if (fd >= 0) {
            char pid[24];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            int ok = kiln__write_all(fd, pid, (size_t)n) == 0;
            close(fd);
            if (ok) {
                g->owned = 1;
            } else {
                unlinkat(dirfd, g->marker, 0);
            }
            break;
        }
        if (errno != EEXIST)
            break; /* a read-only cache: loads go unguarded */
        long pid = kiln__marker_pid(dirfd, g->marker);
        if (pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM))
            break; /* someone is loading it now: load beside them */
        if (pid <= 0) {
            /* a marker being written, or one a crash left empty: only an
             * old one counts as dead */
            if (fstatat(dirfd, g->marker, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (time(NULL) - st.st_mtime < 10)
                break;
        }
        int had = unlinkat(dirfd, entry, 0) == 0;
        unlinkat(dirfd, g->marker, 0);
        if (had) {
            close(dirfd);
            return kiln__error_set(KILN_ERROR_IO, 0,
                                   "cache entry %s/%s was removed: the last process that loaded "
                                   "it (pid %ld) died during the load",
                                   kiln__cache_dir(), entry, pid);
        }
    }
    close(dirfd);
    return KILN_OK;
}

void kiln__cache_guard_end(kiln__cache_guard *g) {
    int dirfd;
    if (!g || !g->owned)
        return;
    g->owned = 0;
    if (kiln__dir_for_use(0, &dirfd) != KILN_OK)
        return;
    unlinkat(dirfd, g->marker, 0);
    close(dirfd);
}

/* ------------------------------------------------------------- public API */

KILN_API kiln_status kiln_cache_path(char *buf, size_t capacity) {
    if (!buf)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_cache_path: buf is NULL");
    const char *dir = kiln__cache_dir();
    size_t len = strlen(dir);
    if (len + 1 > capacity) {
        if (capacity)
            buf[0] = '\0';
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_cache_path: the path needs %zu bytes, "
                               "capacity is %zu",
                               len + 1, capacity);
    }
    memcpy(buf, dir, len + 1);
    return KILN_OK;
}

/* "<64 hex>.bin" */
static int kiln__is_entry_name(const char *name) {
    size_t n = strlen(name);
    if (n != 68 || strcmp(name + 64, ".bin") != 0)
        return 0;
    for (int i = 0; i < 64; i++) {
        char c = name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    return 1;
}

/* "<64 hex>.tmp.XXXXXX" */
static int kiln__is_tmp_name(const char *name) {
    return strlen(name) == 75 && strncmp(name + 64, ".tmp.", 5) == 0;
}

/* Opens the checked cache directory for listing or clearing it. *dir is
 * NULL (and the result KILN_OK) when it does not exist yet. A refused
 * directory is an error with the reason: list and clear never act on it. */
static kiln_status kiln__dir_for_walk(const char *what, DIR **dir) {
    char why[1024];
    int dirfd, missing;
    *dir = NULL;
    kiln_status st = kiln__cache_dir_open(0, &dirfd, &missing, why, sizeof why);
    if (st != KILN_OK) {
        if (missing && !kiln__cache_shared())
            return KILN_OK; /* nothing cached yet */
        return kiln__error_set(st, 0, "%s: refused: %s", what, why);
    }
    *dir = fdopendir(dirfd);
    if (!*dir) {
        int e = errno;
        close(dirfd);
        return kiln__error_set(KILN_ERROR_IO, e, "%s: cannot read %s: %s", what, kiln__cache_dir(),
                               strerror(e));
    }
    return KILN_OK;
}

/* One entry of the listing: e->file is set; fills the rest. 0 if the entry
 * has gone meanwhile. */
static int kiln__list_entry(int dirfd, const char *name, kiln_cache_entry *e) {
    char why[256], key[65], label[KILN__LABEL_MAX] = "";
    int untrusted, oom;
    struct stat st;
    int fd = kiln__cache_entry_open(dirfd, name, &untrusted, why, sizeof why);
    if (fd < 0 && !untrusted)
        return 0;
    if (fd < 0) {
        /* not read: listed as refused, with what its metadata says */
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            e->bytes = (uint64_t)st.st_size;
            e->mtime = (int64_t)st.st_mtime;
        }
        snprintf(e->label, sizeof e->label, "(refused: it %.200s)", why);
        return 1;
    }
    if (fstat(fd, &st) == 0) {
        e->bytes = (uint64_t)st.st_size;
        e->mtime = (int64_t)st.st_mtime;
    }
    memcpy(key, name, 64);
    key[64] = '\0';
    const char *bad = kiln__entry_check(fd, key, NULL, NULL, label, &oom);
    close(fd);
    e->valid = bad == NULL;
    snprintf(e->label, sizeof e->label, "%s", bad ? (label[0] ? label : "(unreadable)") : label);
    return 1;
}

KILN_API kiln_status kiln_cache_list(kiln_cache_visit visit, void *user) {
    DIR *d;
    if (!visit)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_cache_list: visit is NULL");
    kiln_status st = kiln__dir_for_walk("kiln_cache_list", &d);
    if (st != KILN_OK || !d)
        return st;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!kiln__is_entry_name(de->d_name))
            continue;
        kiln_cache_entry e;
        memset(&e, 0, sizeof e);
        if (kiln__entry_path(e.file, sizeof e.file, kiln__cache_dir(), de->d_name) != 0)
            continue;
        if (kiln__list_entry(dirfd(d), de->d_name, &e))
            visit(&e, user);
    }
    closedir(d);
    return KILN_OK;
}

KILN_API kiln_status kiln_cache_clear(size_t *removed) {
    size_t count = 0;
    DIR *d;
    if (removed)
        *removed = 0;
    kiln_status status = kiln__dir_for_walk("kiln_cache_clear", &d);
    if (status != KILN_OK || !d)
        return status;
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int entry = kiln__is_entry_name(de->d_name);
        if (!entry && !kiln__is_tmp_name(de->d_name) && !kiln__is_marker_name(de->d_name))
            continue;
        if (!entry) {
            /* A temp file may belong to a writer running right now: leave
             * young ones alone, its rename would fail otherwise. */
            struct stat st;
            if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                now - st.st_mtime < KILN__STALE_TMP_SECONDS)
                continue;
        }
        /* unlinkat removes a link itself, never what it points at */
        if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
            count += entry;
        } else if (errno != ENOENT && status == KILN_OK) {
            status = kiln__error_set(KILN_ERROR_IO, errno, "cannot remove %s/%s: %s",
                                     kiln__cache_dir(), de->d_name, strerror(errno));
        }
    }
    closedir(d);
    if (removed)
        *removed = count;
    return status;
}
