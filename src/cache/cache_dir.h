/* Where the on-disk cache lives: the one piece that both the entry format
 * (cache.c) and the trust checks (trust.c) need, kept below both so that
 * neither calls the other for it (issue 43 item 5: cache.c and trust.c no
 * longer form an import circle; cache.c uses trust.c, not the reverse). */
#ifndef KILN_CACHE_CACHE_DIR_H
#define KILN_CACHE_CACHE_DIR_H

/* The cache directory's path (created on first store): $KILN_CACHE_DIR,
 * else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln, else
 * /tmp/kiln-cache-<euid>; trailing slashes dropped. Per thread, resolved
 * on every call. Never NULL. */
const char *kiln__cache_dir(void);

#endif
