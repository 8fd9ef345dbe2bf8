/* Loading: the system C compiler (found in PATH at run time), its identity,
 * the CPU's feature set and the thread count. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/host/host.h"
#include "base/fault.h"
#include "base/strbuf.h"

extern char **environ;

kiln__host_cc kiln__hcc;

uint64_t kiln__host_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The executable `name` in PATH (or name itself when it holds a slash). */
static int find_exe(const char *name, char *out, size_t cap) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return 0;
        snprintf(out, cap, "%s", name);
        return 1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len && len + strlen(name) + 2 < cap) {
            struct stat st;
            snprintf(out, cap, "%.*s/%s", (int)len, path, name);
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return 1;
        }
        path += len + (end ? 1 : 0);
        if (!end)
            break;
    }
    return 0;
}

int kiln__host_spawn(char *const argv[], int fd, const char *dir) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (dir)
        posix_spawn_file_actions_addchdir_np(&fa, dir);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = -1;
    if (rc == 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    return rc == 0 ? status : -1;
}

int kiln__host_run(char *const argv[], char **output) {
    char tmpl[] = "/tmp/kiln-host-out-XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char name[512];
    snprintf(name, sizeof name, "%s/kiln-host-out-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0) {
        memcpy(name, tmpl, sizeof tmpl);
        fd = mkstemp(name);
    }
    if (output)
        *output = NULL;
    if (fd < 0)
        return -1;
    int status = kiln__host_spawn(argv, fd, NULL);
    if (output) {
        off_t n = lseek(fd, 0, SEEK_END);
        char *text = kiln__malloc(n > 0 ? (size_t)n + 1 : 1);
        if (text) {
            ssize_t got = n > 0 ? pread(fd, text, (size_t)n, 0) : 0;
            text[got > 0 ? got : 0] = 0;
        }
        *output = text;
    }
    close(fd);
    unlink(name);
    return status;
}

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void cpu_info(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    snprintf(kiln__hcc.cpu, sizeof kiln__hcc.cpu, "CPU");
    if (!f)
        return;
    int have_name = 0, have_flags = 0;
    while (fgets(line, sizeof line, f) && !(have_name && have_flags)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        v[strcspn(v, "\n")] = 0;
        if (!have_name &&
            (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0)) {
            snprintf(kiln__hcc.cpu, sizeof kiln__hcc.cpu, "%s", v);
            have_name = 1;
        } else if (!have_flags &&
                   (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
            kiln__hcc.features = fnv(v, strlen(v));
            have_flags = 1;
        }
    }
    fclose(f);
}

static unsigned env_threads(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return n > 0 && n < 4096 ? (unsigned)n : 0;
}

kiln_status kiln__host_load(void) {
    const char *want = getenv("KILN_HOST_CC");
    const char *names[] = { "cc", "gcc", "clang" };
    int found = 0;
    memset(&kiln__hcc, 0, sizeof kiln__hcc);
    if (want && *want) {
        found = find_exe(want, kiln__hcc.path, sizeof kiln__hcc.path);
        if (!found)
            return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                                   "host backend: KILN_HOST_CC=%s is not an executable in PATH",
                                   want);
    }
    for (size_t i = 0; !found && i < sizeof names / sizeof names[0]; i++)
        found = find_exe(names[i], kiln__hcc.path, sizeof kiln__hcc.path);
    if (!found)
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                               "host backend: no C compiler found (looked for $KILN_HOST_CC, cc, "
                               "gcc and clang in PATH); install gcc and its OpenMP runtime "
                               "(Debian/Ubuntu: apt-get install gcc libgomp1)");
    char *args[] = { kiln__hcc.path, "--version", NULL };
    char *out = NULL;
    int rc = kiln__host_run(args, &out);
    if (rc != 0) {
        free(out);
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, rc,
                               "host backend: %s --version failed (exit %d); install gcc "
                               "(Debian/Ubuntu: apt-get install gcc libgomp1)",
                               kiln__hcc.path, rc);
    }
    snprintf(kiln__hcc.version, sizeof kiln__hcc.version, "%.*s",
             (int)strcspn(out ? out : "", "\n"), out ? out : "");
    free(out);
    cpu_info();
    cpu_set_t set;
    unsigned cpus = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (unsigned c = 0; c < CPU_SETSIZE && cpus < KILN__HOST_MAX_CPUS; c++)
            if (CPU_ISSET(c, &set))
                kiln__hcc.cpu_ids[cpus++] = c;
    if (!cpus) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        cpus = n > 0 ? (unsigned)n : 1;
        if (cpus > KILN__HOST_MAX_CPUS)
            cpus = KILN__HOST_MAX_CPUS;
        for (unsigned c = 0; c < cpus; c++)
            kiln__hcc.cpu_ids[c] = c;
    }
    kiln__hcc.cpus = cpus;
    /* libgomp's default spins ~300000 times when a parallel region ends:
     * on a loaded machine (CI: 2 cores shared) that made a 2^20 axpy take
     * 35 ms instead of 1 ms. Passive waiting unless the user chose; read by
     * libgomp when the first program loads it, after this. */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    const char *sn = getenv("KILN_HOST_SERIAL_NS");
    kiln__hcc.serial_ns = sn && *sn ? strtoll(sn, NULL, 10) : 40000;
    if (kiln__hcc.serial_ns < 0)
        kiln__hcc.serial_ns = 0;
    kiln__hcc.threads = env_threads("KILN_HOST_THREADS");
    if (!kiln__hcc.threads)
        kiln__hcc.threads = env_threads("OMP_NUM_THREADS");
    if (!kiln__hcc.threads)
        kiln__hcc.threads = cpus;
    return KILN_OK;
}
