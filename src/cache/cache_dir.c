/* The cache directory's path (cache_dir.h). */
#include "cache/cache_dir.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* A path of the cache (the directory, an entry in it) fits in this. */
#define KILN__CACHE_DIR_MAX 4096

const char *kiln__cache_dir(void) {
    /* Resolved on every call so that a change of $KILN_CACHE_DIR (tests do
     * it) takes effect; per thread so that callers on other threads do not
     * see the buffer change under them. */
    static _Thread_local char dir[KILN__CACHE_DIR_MAX];
    /* secure_getenv: a setuid program is not steered by its caller's
     * environment (it gets its owner's home instead). */
    const char *env = secure_getenv("KILN_CACHE_DIR");
    const char *xdg = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else if (xdg && *xdg) {
        snprintf(dir, sizeof dir, "%s/kiln", xdg);
    } else {
        if (!home || !*home) {
            struct passwd *pw = getpwuid(geteuid());
            home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
        }
        if (home)
            snprintf(dir, sizeof dir, "%s/.cache/kiln", home);
        else /* no home at all (a bare container): still somewhere usable;
              * someone may have made it first, which the trust check sees */
            snprintf(dir, sizeof dir, "/tmp/kiln-cache-%lu", (unsigned long)geteuid());
    }
    /* Trailing slashes would only make the paths we print untidy. */
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = '\0';
    return dir;
}
