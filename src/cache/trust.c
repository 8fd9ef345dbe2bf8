/* Whether the on-disk cache may be trusted: see trust.h for the rules. */
#include "cache/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/error.h"
#include "cache/cache_dir.h"

#define KILN__TRUST_PATH_MAX 4096

int kiln__cache_shared(void) {
    const char *dir = secure_getenv("KILN_CACHE_DIR");
    const char *shared = secure_getenv("KILN_CACHE_SHARED");
    return dir && *dir && shared && strcmp(shared, "1") == 0;
}

/* mkdir -p; the directories it makes are 0700 (a user's cache). *created:
 * whether the last component was made here. */
static int kiln__mkdir_p(const char *dir, int *created) {
    char path[KILN__TRUST_PATH_MAX];
    size_t len = strlen(dir);
    *created = 0;
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
        int made = mkdir(path, 0700) == 0;
        if (!made && errno != EEXIST)
            return -1;
        if (at == '\0') {
            *created = made;
            return 0;
        }
        *p = at;
    }
}

static void kiln__why(char *why, size_t capacity, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void kiln__why(char *why, size_t capacity, const char *fmt, ...) {
    if (!why || !capacity)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, capacity, fmt, ap);
    va_end(ap);
}

/* The directory open on fd (path: for messages) against the rules. */
static kiln_status kiln__dir_check(int fd, const char *path, int shared, char *why,
                                   size_t capacity) {
    struct stat st;
    uid_t me = geteuid();
    if (fstat(fd, &st) != 0) {
        kiln__why(why, capacity, "cannot stat the cache directory %s: %s", path, strerror(errno));
        return KILN_ERROR_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        kiln__why(why, capacity, "the cache directory %s is not a directory", path);
        return KILN_ERROR_IO;
    }
    unsigned mode = (unsigned)st.st_mode & 07777;
    if (mode & S_IWOTH) {
        kiln__why(why, capacity,
                  "the cache directory %s is writable by every user "
                  "(mode %04o): anyone could plant code in it",
                  path, mode);
        return KILN_ERROR_UNTRUSTED;
    }
    if (shared)
        return KILN_OK; /* the user accepted group members' and the owner's entries */
    if (st.st_uid != me) {
        kiln__why(why, capacity,
                  "the cache directory %s belongs to uid %lu, not to you "
                  "(uid %lu): its owner could plant code in it",
                  path, (unsigned long)st.st_uid, (unsigned long)me);
        return KILN_ERROR_UNTRUSTED;
    }
    if (mode & S_IWGRP) {
        kiln__why(why, capacity,
                  "the cache directory %s is writable by its group (mode "
                  "%04o): group members could plant code in it "
                  "(KILN_CACHE_SHARED=1 accepts that for a team cache)",
                  path, mode);
        return KILN_ERROR_UNTRUSTED;
    }
    return KILN_OK;
}

kiln_status kiln__cache_dir_open(int create, int *dirfd, int *missing, char *why, size_t capacity) {
    char path[KILN__TRUST_PATH_MAX];
    int shared = kiln__cache_shared();
    int created = 0;
    *dirfd = -1;
    *missing = 0;
    if (why && capacity)
        why[0] = '\0';
    snprintf(path, sizeof path, "%s", kiln__cache_dir());
    if (create && !shared && kiln__mkdir_p(path, &created) != 0) {
        kiln__why(why, capacity,
                  "cannot create the cache directory %s: %s (set "
                  "KILN_CACHE_DIR to a writable directory)",
                  path, strerror(errno));
        return KILN_ERROR_IO;
    }
    /* O_NOFOLLOW: the last component must not be a symbolic link;
     * O_DIRECTORY: nor anything else than a directory. */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT) {
            *missing = 1;
            kiln__why(why, capacity,
                      shared ? "the shared cache directory %s does not exist "
                               "(a shared cache is created by its team, "
                               "never by kiln)"
                             : "the cache directory %s does not exist yet",
                      path);
            return KILN_ERROR_IO;
        }
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
            kiln__why(why, capacity,
                      "the cache directory %s is a symbolic link: kiln "
                      "only trusts a real directory (point KILN_CACHE_DIR "
                      "at the target instead)",
                      path);
            return KILN_ERROR_UNTRUSTED;
        }
        kiln__why(why, capacity, "cannot open the cache directory %s: %s", path, strerror(e));
        return KILN_ERROR_IO;
    }
    kiln_status st = kiln__dir_check(fd, path, shared, why, capacity);
    if (st != KILN_OK) {
        close(fd);
        return st;
    }
    if (created)
        (void)fchmod(fd, 0700); /* whatever the umask left */
    *dirfd = fd;
    return KILN_OK;
}

int kiln__cache_entry_open(int dirfd, const char *name, int *untrusted, char *why,
                           size_t capacity) {
    *untrusted = 0;
    /* O_NONBLOCK: a FIFO planted in a shared cache must not hang us. */
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP) {
            *untrusted = 1;
            kiln__why(why, capacity, "is a symbolic link");
        }
        return -1;
    }
    struct stat st;
    memset(&st, 0, sizeof st);
    const char *bad = NULL;
    if (fstat(fd, &st) != 0)
        bad = "cannot be examined";
    else if (!S_ISREG(st.st_mode))
        bad = "is not a regular file";
    else if (st.st_mode & S_IWOTH)
        bad = "is writable by every user";
    else if (!kiln__cache_shared() && st.st_uid != geteuid())
        bad = "belongs to another user";
    if (bad) {
        *untrusted = 1;
        kiln__why(why, capacity, "%s (uid %lu)", bad, (unsigned long)st.st_uid);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

void kiln__cache_warn_once(const char *why) {
    static atomic_int said;
    const char *quiet = secure_getenv("KILN_CACHE_QUIET");
    if (quiet && *quiet && *quiet != '0')
        return; /* the status and message still say it */
    if (atomic_exchange(&said, 1) == 0)
        fprintf(stderr,
                "kiln: the program cache is off, programs are built from "
                "source: %s\n",
                why);
}

static kiln__cache_hook kiln__test_hook;
static void *kiln__test_hook_user;

void kiln__cache_set_test_hook(kiln__cache_hook hook, void *user) {
    kiln__test_hook = hook;
    kiln__test_hook_user = user;
}

void kiln__cache_run_test_hook(const char *dir, const char *name) {
    if (kiln__test_hook)
        kiln__test_hook(dir, name, kiln__test_hook_user);
}

/* --------------------------------------------------------------- public */

KILN_API kiln_status kiln_cache_status(char *why, size_t capacity) {
    char reason[1024];
    int fd, missing;
    kiln_status st = kiln__cache_dir_open(0, &fd, &missing, reason, sizeof reason);
    if (st == KILN_OK) {
        close(fd);
        snprintf(reason, sizeof reason, "%s cache in %s",
                 kiln__cache_shared() ? "shared (KILN_CACHE_SHARED=1)" : "private",
                 kiln__cache_dir());
    } else if (missing && !kiln__cache_shared()) {
        /* created on the first build, 0700: nothing to distrust yet */
        st = KILN_OK;
        snprintf(reason, sizeof reason, "private cache in %s (created on the first build)",
                 kiln__cache_dir());
    }
    if (why && capacity)
        snprintf(why, capacity, "%s", reason);
    if (st != KILN_OK)
        return kiln__error_set(st, 0, "the program cache is off: %s", reason);
    return KILN_OK;
}
