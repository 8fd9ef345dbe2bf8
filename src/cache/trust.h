/* Whether the on-disk cache may be trusted (issue 14).
 *
 * A cache entry is native code that kiln loads into the process, so whoever
 * can write an entry can run code as the user. The rules:
 *
 * - The directory is trusted only if it is a real directory (a symbolic link
 *   is refused, checked without following it), owned by the effective user
 *   and not writable by group or others. With KILN_CACHE_SHARED=1 (and an
 *   explicit KILN_CACHE_DIR) a group-writable directory of another owner is
 *   accepted too: a shared team cache, where everyone who can write it can
 *   run code in everyone who uses it. World-writable is never accepted.
 * - Everything afterwards works relative to the directory's open descriptor
 *   (openat, renameat, unlinkat), so no path component can be swapped after
 *   the check.
 * - An entry is trusted only if it is a regular file (opened with
 *   O_NOFOLLOW, checked with fstat on the open descriptor) owned by the
 *   effective user (shared cache: by anyone, but not world-writable).
 * - Directories are created 0700, entries 0600 (shared: 0640).
 *
 * An untrusted directory or entry is never read: programs are built from
 * source, kiln says once on stderr why caching is off, kiln_cache_status()
 * gives the reason, and kiln_cache_list/clear refuse to act. */
#ifndef KILN_CACHE_TRUST_H
#define KILN_CACHE_TRUST_H

#include <stddef.h>

#include "kiln.h"

/* 1 if the user asked for a shared cache: KILN_CACHE_SHARED=1 together
 * with a KILN_CACHE_DIR (read with secure_getenv). */
int kiln__cache_shared(void);

/* Opens the cache directory (kiln__cache_dir()) and checks it. create:
 * make it (and its parents) 0700 when missing; a shared cache is never
 * created. KILN_OK and *dirfd on success. Otherwise *dirfd is -1, why gets
 * the reason (may be NULL), and the result is KILN_ERROR_UNTRUSTED (refused)
 * or KILN_ERROR_IO (missing, *missing = 1; or unusable). Sets no error
 * message: callers decide whether a refusal is an error. */
kiln_status kiln__cache_dir_open(int create, int *dirfd, int *missing, char *why, size_t capacity);

/* Opens the entry `name` of the open cache directory for reading, if it is
 * trusted. Returns the descriptor, or -1: with *untrusted = 0 and errno set
 * when it cannot be opened (ENOENT: a miss), with *untrusted = 1 and the
 * reason in why ("is a symbolic link") when it is refused. */
int kiln__cache_entry_open(int dirfd, const char *name, int *untrusted, char *why, size_t capacity);

/* Says on stderr, once per process, that caching is off and why. */
void kiln__cache_warn_once(const char *why);

/* Tests only: called by kiln__cache_load after the directory has been
 * checked and before the entry is opened (dir: its path, name: the entry's
 * file name), to swap things under it. NULL removes the hook. */
typedef void (*kiln__cache_hook)(const char *dir, const char *name, void *user);
void kiln__cache_set_test_hook(kiln__cache_hook hook, void *user);
void kiln__cache_run_test_hook(const char *dir, const char *name);

#endif
