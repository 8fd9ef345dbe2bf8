/* The on-disk program cache (internal interface; the public face is the
 * kiln_cache_* functions in kiln.h).
 *
 * An entry is one device binary. Its key is a SHA-256 over everything that
 * can change the binary: the final source (prelude included), the build
 * options, the backend name, the device identity string (name, driver and
 * platform versions) and kiln's version. Files live in kiln__cache_dir():
 * $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln, else
 * /tmp/kiln-cache-<euid>; only once trust.h's checks pass.
 *
 * Entry file format: a header (magic "KILNBIN1", format version, payload
 * size, SHA-256 of the payload, a human-readable label), then the payload.
 * Written to a unique temp file in the same directory and renamed into
 * place, so readers never see a partial file and two processes building the
 * same program at once both succeed. On load the size and checksum are
 * verified; a truncated or corrupted entry is reported as a miss (and
 * removed), never returned. */
#ifndef KILN_CACHE_H
#define KILN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache_dir.h" /* kiln__cache_dir */
#include "kiln.h"

typedef struct kiln__cache_key {
    char hex[65]; /* SHA-256 of the key material, lower-case hex */
} kiln__cache_key;

/* Computes the key of a program build. */
void kiln__cache_key_make(kiln__cache_key *key, const char *backend_name,
                          const char *device_identity, const char *source, const char *options);
/* KILN_OK and a malloc'd payload on a hit; KILN_ERROR_IO on a miss or a bad
 * entry (no error message is recorded for a plain miss);
 * KILN_ERROR_UNTRUSTED when the directory or the entry is refused (trust.h),
 * which is never read. */
kiln_status kiln__cache_load(const kiln__cache_key *key, void **payload, size_t *size);
/* Stores a payload atomically. label is a short description shown by
 * `kiln cache list` ("opencl pthread-... kernel vadd"). Failure to write is
 * not fatal for the caller: it returns KILN_ERROR_IO with a message. */
kiln_status kiln__cache_store(const kiln__cache_key *key, const void *payload, size_t size,
                              const char *label);
/* Guards a driver's load of a loaded entry (some drivers abort on a bad
 * binary): begin before kiln__cache_load, end once the driver has taken the
 * binary (or refused it). begin returns KILN_ERROR_IO, with a message, when
 * the last process that loaded this entry died during the load: the entry
 * has been removed and the caller rebuilds. Any other trouble (a read-only
 * cache) leaves the load unguarded and returns KILN_OK. */
typedef struct kiln__cache_guard {
    char marker[80]; /* "<key>.loading" in the cache directory */
    int owned;       /* this process made the marker: end removes it */
} kiln__cache_guard;
kiln_status kiln__cache_guard_begin(const kiln__cache_key *key, kiln__cache_guard *g);
void kiln__cache_guard_end(kiln__cache_guard *g);

/* SHA-256 (FIPS 180-4), exposed for tests with known-answer vectors. */
void kiln__sha256(const void *data, size_t size, uint8_t digest[32]);

#endif
