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
#include "cache/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cache/sha256.h"
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

/* mkdir -p with mode 0700 for the directories it creates (a user's cache). */
static int kiln__mkdir_p(const char *dir) {
    char path[KILN__CACHE_PATH_MAX];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    /* each parent (cut at its '/'), then the whole path (at the NUL) */
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char at = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        if (at == '\0')
            break;
        *p = at;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- directory */

const char *kiln__cache_dir(void) {
    /* Resolved on every call so that a change of $KILN_CACHE_DIR (tests do
     * it) takes effect; per thread so that callers on other threads do not
     * see the buffer change under them. */
    static _Thread_local char dir[KILN__CACHE_PATH_MAX];
    const char *env = getenv("KILN_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else if (xdg && *xdg) {
        snprintf(dir, sizeof dir, "%s/kiln", xdg);
    } else {
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
        }
        if (home)
            snprintf(dir, sizeof dir, "%s/.cache/kiln", home);
        else /* no home at all (a bare container): still somewhere usable */
            snprintf(dir, sizeof dir, "/tmp/kiln-cache-%lu",
                     (unsigned long)getuid());
    }
    /* Trailing slashes would only make the paths we print untidy. */
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = '\0';
    return dir;
}

static int kiln__entry_path(char *buf, size_t cap, const char *dir,
                            const char *name) {
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
                          const char *device_identity, const char *source,
                          const char *options) {
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
static const char *kiln__entry_check(int fd, const char *want_key,
                                     void **payload, size_t *payload_size,
                                     char *label, int *oom) {
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
        return size > (uint64_t)st.st_size - KILN__HEADER_SIZE
                   ? "truncated payload"
                   : "trailing bytes after the payload";
    if (size > (uint64_t)SIZE_MAX - 1)
        return "payload too large for this host";
    uint8_t *data = malloc((size_t)size + 1);
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

/* Removes path only if it is still the file open on fd: another process
 * may have renamed a fresh, good entry into place since we opened ours. */
static void kiln__remove_if_same(const char *path, int fd) {
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        unlink(path);
}

/* -------------------------------------------------------------- load/store */

kiln_status kiln__cache_load(const kiln__cache_key *key, void **payload,
                             size_t *size) {
    char path[KILN__CACHE_PATH_MAX];
    char name[80];
    int oom;
    if (payload)
        *payload = NULL;
    if (size)
        *size = 0;
    if (!key || !payload || !size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln__cache_load: NULL key or output");
    if (!kiln__is_key_hex(key->hex))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln__cache_load: malformed key");
    snprintf(name, sizeof name, "%s.bin", key->hex);
    if (kiln__entry_path(path, sizeof path, kiln__cache_dir(), name) != 0)
        return kiln__error_set(KILN_ERROR_IO, 0, "cache path too long");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return KILN_ERROR_IO; /* a plain miss: no message */
        return kiln__error_set(KILN_ERROR_IO, errno,
                               "cannot open cache entry %s: %s", path,
                               strerror(errno));
    }
    const char *why = kiln__entry_check(fd, key->hex, payload, size, NULL, &oom);
    if (why) {
        if (oom) {
            close(fd);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "reading cache entry %s: %s", path, why);
        }
        kiln__remove_if_same(path, fd);
        close(fd);
        return kiln__error_set(KILN_ERROR_IO, 0,
                               "cache entry %s was bad (%s) and was removed",
                               path, why);
    }
    close(fd);
    return KILN_OK;
}

kiln_status kiln__cache_store(const kiln__cache_key *key, const void *payload,
                              size_t size, const char *label) {
    char dir[KILN__CACHE_PATH_MAX];
    char tmp[KILN__CACHE_PATH_MAX];
    char path[KILN__CACHE_PATH_MAX];
    char name[96];
    uint8_t h[KILN__HEADER_SIZE];
    if (!key || (!payload && size))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln__cache_store: NULL key or payload");
    if (!kiln__is_key_hex(key->hex))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln__cache_store: malformed key");
    snprintf(dir, sizeof dir, "%s", kiln__cache_dir());
    if (kiln__mkdir_p(dir) != 0)
        return kiln__error_set(KILN_ERROR_IO, errno,
                               "cannot create the cache directory %s: %s "
                               "(set KILN_CACHE_DIR to a writable directory)",
                               dir, strerror(errno));
    snprintf(name, sizeof name, "%s.bin", key->hex);
    if (kiln__entry_path(path, sizeof path, dir, name) != 0)
        return kiln__error_set(KILN_ERROR_IO, 0, "cache path too long");
    snprintf(name, sizeof name, "%s.tmp.XXXXXX", key->hex);
    if (kiln__entry_path(tmp, sizeof tmp, dir, name) != 0)
        return kiln__error_set(KILN_ERROR_IO, 0, "cache path too long");

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

    int fd = mkstemp(tmp);
    if (fd < 0)
        return kiln__error_set(KILN_ERROR_IO, errno,
                               "cannot create a temp file in %s: %s", dir,
                               strerror(errno));
    /* mkstemp makes the file 0600; an entry is no secret but stays private
     * like the 0700 directory. */
    int werr = 0;
    if (kiln__write_all(fd, h, sizeof h) != 0 ||
        (size && kiln__write_all(fd, payload, size) != 0))
        werr = errno ? errno : EIO;
    if (close(fd) != 0 && !werr)
        werr = errno;
    if (werr) {
        unlink(tmp);
        return kiln__error_set(KILN_ERROR_IO, werr,
                               "cannot write cache entry %s: %s", tmp,
                               strerror(werr));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return kiln__error_set(KILN_ERROR_IO, e,
                               "cannot rename %s to %s: %s", tmp, path,
                               strerror(e));
    }
    return KILN_OK;
}

/* ------------------------------------------------------------- public API */

KILN_API kiln_status kiln_cache_path(char *buf, size_t capacity) {
    if (!buf)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_cache_path: buf is NULL");
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

KILN_API kiln_status kiln_cache_list(kiln_cache_visit visit, void *user) {
    char dir[KILN__CACHE_PATH_MAX];
    if (!visit)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_cache_list: visit is NULL");
    snprintf(dir, sizeof dir, "%s", kiln__cache_dir());
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return KILN_OK; /* nothing cached yet */
        return kiln__error_set(KILN_ERROR_IO, errno,
                               "cannot read the cache directory %s: %s", dir,
                               strerror(errno));
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!kiln__is_entry_name(de->d_name))
            continue;
        kiln_cache_entry e;
        memset(&e, 0, sizeof e);
        if (kiln__entry_path(e.file, sizeof e.file, dir, de->d_name) != 0)
            continue;
        int fd = open(e.file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* removed meanwhile */
        struct stat st;
        if (fstat(fd, &st) == 0) {
            e.bytes = (uint64_t)st.st_size;
            e.mtime = (int64_t)st.st_mtime;
        }
        char key[65];
        memcpy(key, de->d_name, 64);
        key[64] = '\0';
        char label[KILN__LABEL_MAX] = "";
        int oom;
        const char *why =
            kiln__entry_check(fd, key, NULL, NULL, label, &oom);
        close(fd);
        e.valid = why == NULL;
        snprintf(e.label, sizeof e.label, "%s",
                 why ? (label[0] ? label : "(unreadable)") : label);
        visit(&e, user);
    }
    closedir(d);
    return KILN_OK;
}

KILN_API kiln_status kiln_cache_clear(size_t *removed) {
    char dir[KILN__CACHE_PATH_MAX];
    char path[KILN__CACHE_PATH_MAX];
    size_t count = 0;
    kiln_status status = KILN_OK;
    if (removed)
        *removed = 0;
    snprintf(dir, sizeof dir, "%s", kiln__cache_dir());
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return KILN_OK;
        return kiln__error_set(KILN_ERROR_IO, errno,
                               "cannot read the cache directory %s: %s", dir,
                               strerror(errno));
    }
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int entry = kiln__is_entry_name(de->d_name);
        if (!entry && !kiln__is_tmp_name(de->d_name))
            continue;
        if (kiln__entry_path(path, sizeof path, dir, de->d_name) != 0)
            continue;
        if (!entry) {
            /* A temp file may belong to a writer running right now: leave
             * young ones alone, its rename would fail otherwise. */
            struct stat st;
            if (stat(path, &st) != 0 ||
                now - st.st_mtime < KILN__STALE_TMP_SECONDS)
                continue;
        }
        if (unlink(path) == 0) {
            count += entry;
        } else if (errno != ENOENT && status == KILN_OK) {
            status = kiln__error_set(KILN_ERROR_IO, errno, "cannot remove %s: %s",
                                     path, strerror(errno));
        }
    }
    closedir(d);
    if (removed)
        *removed = count;
    return status;
}
