/* The kiln tool, run as a user runs it: outputs and exit statuses of every
 * command, help, usage errors, and the cache commands in a private
 * $KILN_CACHE_DIR. */
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#ifndef KILN_CLI_PATH
#error "tests/CMakeLists.txt must define KILN_CLI_PATH for test_cli"
#endif

static char tmpdir[256];
static char out[65536], err[65536];

/* Runs "kiln ARGS" with optional environment assignments in front (a shell
 * prefix like "KILN_DEVICE=x"), captures stdout and stderr, returns the exit
 * status (-1 if it did not exit normally: a crash). */
static int kiln_env(const char *env, const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s '%s' %s", env ? env : "", KILN_CLI_PATH, args);
    return kt_run_captured(cmd, tmpdir, out, sizeof out, err, sizeof err);
}

static int kiln(const char *args) {
    return kiln_env(NULL, args);
}

#define EXPECT(args, want_rc)                                                                  \
    do {                                                                                       \
        int rc_ = kiln(args);                                                                  \
        CHECK_MSG(rc_ == (want_rc),                                                            \
                  "kiln %.60s: exit %d, wanted %d; stdout: %.150s; stderr: %.150s", args, rc_, \
                  want_rc, out, err);                                                          \
    } while (0)
#define OUT_HAS(s) CHECK_MSG(strstr(out, s) != NULL, "stdout lacks \"%.40s\": %.400s", s, out)
#define ERR_HAS(s) CHECK_MSG(strstr(err, s) != NULL, "stderr lacks \"%.40s\": %.400s", s, err)

static void test_help_and_usage(void) {
    EXPECT("--help", 0);
    OUT_HAS("usage: kiln");
    OUT_HAS("devices");
    OUT_HAS("cache");
    CHECK(err[0] == '\0');
    EXPECT("-h", 0);
    OUT_HAS("usage: kiln");
    EXPECT("help", 0);
    OUT_HAS("usage: kiln");

    /* No command, an unknown command, an unknown option: usage on stderr,
     * nothing on stdout, exit 2. */
    EXPECT("", 2);
    ERR_HAS("usage: kiln");
    EXPECT("frobnicate", 2);
    ERR_HAS("unknown command 'frobnicate'");
    ERR_HAS("usage: kiln");
    CHECK(out[0] == '\0');
    EXPECT("--frobnicate", 2);
    ERR_HAS("unknown option");
    EXPECT("help frobnicate", 2);
    ERR_HAS("usage: kiln");

    static const char *const cmds[] = { "devices", "info", "version", "cache" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[128], want[128];
        snprintf(want, sizeof want, "usage: kiln %s", cmds[i]);
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        EXPECT(args, 0);
        OUT_HAS(want);
        snprintf(args, sizeof args, "%s -h", cmds[i]);
        EXPECT(args, 0);
        OUT_HAS(want);
        snprintf(args, sizeof args, "help %s", cmds[i]);
        EXPECT(args, 0);
        OUT_HAS(want);
        snprintf(args, sizeof args, "%s --no-such-option", cmds[i]);
        int rc = kiln(args);
        CHECK_MSG(rc == 2, "kiln %s: exit %d", args, rc);
        ERR_HAS("usage: kiln");
    }
    EXPECT("cache build --help", 0);
    OUT_HAS("usage: kiln cache");
    EXPECT("cache", 2);
    ERR_HAS("usage: kiln cache");
    EXPECT("cache frobnicate", 2);
    ERR_HAS("unknown action");
    EXPECT("cache path extra", 2);
    EXPECT("version extra", 2);
    EXPECT("devices extra", 2);
    EXPECT("info a b", 2);
    EXPECT("cache build", 2);
    ERR_HAS("FILE");
    EXPECT("cache build --device", 2);
    EXPECT("cache build x.cl --lang fortran", 2);

    /* The demo's help (the demo itself runs in test_demo). */
    EXPECT("demo --help", 0);
    OUT_HAS("usage: kiln demo");
    OUT_HAS("--kernels-only");
}

/* kiln demo --kernels-only (tile sweeps): the distances get kernel rows
 * only, checked against the OpenMP reference; the masks keep theirs. */
static void test_demo_kernels_only(void) {
    char args[512];
    snprintf(args, sizeof args,
             "demo --sizes 16 --points 40 --dims 3 --reps 1 --no-openmp "
             "--kernels-only --json --out '%s/demo'",
             tmpdir);
    EXPECT(args, 0);
    OUT_HAS("\"workload\": \"mask\", \"case\": \"16x16\", \"method\": "
            "\"serial C\"");
    OUT_HAS("\"workload\": \"pdist\", \"case\": \"40x3 float32\", "
            "\"method\": \"kiln kernel");
    CHECK_MSG(strstr(out, "\"workload\": \"pdist\", \"case\": \"40x3 "
                          "float32\", \"method\": \"serial") == NULL,
              "a host row in --kernels-only: %.400s", out);
    CHECK_MSG(strstr(out, "\"ok\": false") == NULL, "%.400s", out);
}

static void test_version(void) {
    EXPECT("version", 0);
    CHECK_MSG(strcmp(out, "kiln " KILN_VERSION_STRING "\n") == 0, "%.100s", out);
    EXPECT("--version", 0);
    CHECK(strcmp(out, "kiln " KILN_VERSION_STRING "\n") == 0);
}

static void test_devices(void) {
    EXPECT("devices", 0);
    OUT_HAS("ID");
    OUT_HAS("TYPE");
    OUT_HAS("NAME");
    OUT_HAS("MEMORY");
    OUT_HAS("opencl:");
    OUT_HAS("* "); /* the default device is marked */
    /* The PoCL device is listed (CI runs on PoCL), and info finds it by a
     * part of its name, as DESIGN.md promises ("pocl"). */
    EXPECT("info --all", 0);
    OUT_HAS("Portable Computing Language");
    EXPECT("info pocl", 0);
    OUT_HAS("Compute units");
    OUT_HAS("Extensions");
    EXPECT("info", 0);
    char id[64] = "";
    sscanf(out, "%63s", id);
    CHECK_MSG(strncmp(id, "opencl:", 7) == 0 || strncmp(id, "cuda:", 5) == 0 ||
                  strncmp(id, "host:", 5) == 0,
              "first word of kiln info: %s", id);
    EXPECT("devices", 0);
    OUT_HAS(id);
    /* Every table line has the same columns: the header and the rows
     * start each column at the same offset. */
    const char *hdr = out;
    const char *h_name = strstr(hdr, "NAME"), *h_mem = strstr(hdr, "MEMORY");
    const char *h_ver = strstr(hdr, "VERSION");
    CHECK(h_name && h_mem && h_ver);
    int rows = 0;
    for (const char *row = strchr(out, '\n'); h_name && h_ver && row && row[1] && row[1] != '\n';
         row = strchr(row + 1, '\n')) {
        const char *r = row + 1;
        size_t len = strcspn(r, "\n");
        rows++;
        if (len <= (size_t)(h_ver - hdr)) {
            CHECK_MSG(0, "short row: %.*s", (int)len, r);
            continue;
        }
        CHECK_MSG(r[h_name - hdr - 1] == ' ' && r[h_name - hdr] != ' ', "%.*s", (int)len, r);
        CHECK_MSG(r[h_ver - hdr - 1] == ' ' && r[h_ver - hdr] != ' ', "%.*s", (int)len, r);
        /* no trademark marks eating the name column */
        CHECK_MSG(!memmem(r, len, "(R)", 3) && !memmem(r, len, "(TM)", 4), "%.*s", (int)len, r);
        /* CUDA rows name the architecture, not "CUDA 9.0" (a capability
         * that reads like a toolkit version) */
        if (strncmp(r + 2, "cuda:", 5) == 0)
            CHECK_MSG(memmem(r, len, "CUDA sm_", 8) != NULL, "%.*s", (int)len, r);
        if (strncmp(r + 2, "opencl:", 7) == 0)
            CHECK_MSG(strncmp(r + (h_ver - hdr), "OpenCL ", 7) == 0, "%.*s", (int)len, r);
    }
    CHECK(rows >= 1);
    /* By the selector info printed, and through KILN_DEVICE. */
    char args[128];
    snprintf(args, sizeof args, "info %s", id);
    EXPECT(args, 0);
    OUT_HAS("Name");
    char env[128];
    snprintf(env, sizeof env, "KILN_DEVICE=%s", id);
    CHECK(kiln_env(env, "info") == 0);
    OUT_HAS(id);
    CHECK(kiln_env(env, "devices") == 0);
    OUT_HAS("from KILN_DEVICE");
    EXPECT("info", 0);
    OUT_HAS("(default device)");
    EXPECT("info --all", 0);
    OUT_HAS(id);
    /* An unknown selector: exit 1, the message lists what exists. */
    EXPECT("info no-such-device-xyz", 1);
    CHECK(err[0] != '\0');
    CHECK(out[0] == '\0');
    /* A bad KILN_DEVICE does not hide the table. */
    CHECK(kiln_env("KILN_DEVICE=no-such-device-xyz", "devices") == 0);
    OUT_HAS(id);
    /* No OpenCL platform registered. With no CUDA device either: exit 1 and
     * say what to install. With CUDA devices (a GPU machine): list them,
     * exit 0, and note on stderr that OpenCL was not found. */
    int rc = kiln_env("OCL_ICD_VENDORS=/nonexistent-kiln-test OCL_ICD_FILENAMES=", "devices");
    if (strstr(out, "cuda:") != NULL || strstr(out, "host:") != NULL) {
        /* (the host backend needs no OpenCL either) */
        CHECK_MSG(rc == 0, "exit %d", rc);
        CHECK_MSG(strstr(out, "opencl:") == NULL, "%.400s", out);
        ERR_HAS("no OpenCL platform");
        ERR_HAS("install");
        CHECK_MSG(strstr(out, "install") == NULL, "the note belongs on stderr: %.400s", out);
    } else {
        CHECK_MSG(rc == 1, "exit %d", rc);
        ERR_HAS("install");
        CHECK(out[0] == '\0');
    }
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The path of the first entry file in dir. */
static int find_entry(const char *dir, char *path, size_t cap) {
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    while (d && !found && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".bin") == 0) {
            snprintf(path, cap, "%s/%s", dir, de->d_name);
            found = 1;
        }
    }
    if (d)
        closedir(d);
    return found;
}

/* how 0: flips a byte in the middle of the file; 1: cuts off its end. */
static void damage(const char *path, int how) {
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (how == 1) {
        CHECK(truncate(path, st.st_size / 2) == 0);
        return;
    }
    FILE *f = fopen(path, "r+b");
    if (!f)
        return;
    fseek(f, (long)(st.st_size / 2), SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long)(st.st_size / 2), SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

static void test_cache(void) {
    char cache[512], args[1024], src[512], bad[512];
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    setenv("KILN_CACHE_DIR", cache, 1);
    EXPECT("cache path", 0);
    char want[600];
    snprintf(want, sizeof want, "%s\n", cache);
    CHECK_MSG(strcmp(out, want) == 0, "%.300s", out);
    EXPECT("cache list", 0);
    OUT_HAS("empty");
    EXPECT("cache clear", 0);
    OUT_HAS("Removed 0 entries");

    snprintf(src, sizeof src, "%s/vadd.cl", tmpdir);
    /* kiln's portable dialect: the default device may be CUDA or OpenCL */
    write_file(src,
               "KILN_KERNEL void vadd(KILN_GLOBAL const float *a, KILN_GLOBAL const float *b,\n"
               "                      KILN_GLOBAL float *c) {\n"
               "    size_t i = kiln_global_id(0);\n"
               "    c[i] = a[i] + b[i];\n"
               "}\n");
    snprintf(args, sizeof args, "cache build '%s'", src);
    EXPECT(args, 0);
    OUT_HAS("built for");
    EXPECT(args, 0); /* a second build comes from the cache */
    OUT_HAS("already in the cache");
    EXPECT("cache list", 0);
    OUT_HAS("1 entry");
    OUT_HAS("yes");
    /* A corrupted entry is seen (listed as BAD), never loaded: the next
     * build compiles again and replaces it. Then a truncated one. */
    for (int round = 0; round < 2; round++) {
        char entry[1024];
        CHECK(find_entry(cache, entry, sizeof entry));
        damage(entry, round);
        EXPECT("cache list", 0);
        OUT_HAS("BAD");
        snprintf(args, sizeof args, "cache build '%s'", src);
        EXPECT(args, 0);
        OUT_HAS("built for");
        EXPECT("cache list", 0);
        OUT_HAS("1 entry");
        CHECK(strstr(out, "BAD") == NULL);
        EXPECT(args, 0);
        OUT_HAS("already in the cache");
    }
    snprintf(args, sizeof args, "cache build '%s' --options '-DUNUSED=1'", src);
    EXPECT(args, 0);
    OUT_HAS("built for");
    snprintf(args, sizeof args, "cache build --device 0 -o -DUNUSED=2 '%s'", src);
    EXPECT(args, 0);
    OUT_HAS("built for");
    EXPECT("cache list", 0);
    OUT_HAS("3 entries");

    /* Failures: a compile error shows the log, a missing file, an unknown
     * device. Nothing is added to the cache. */
    snprintf(bad, sizeof bad, "%s/bad.cl", tmpdir);
    write_file(bad, "__kernel void broken(__global float *x) { x[0] = undeclared_name; }\n");
    snprintf(args, sizeof args, "cache build '%s'", bad);
    EXPECT(args, 1);
    ERR_HAS("undeclared_name");
    snprintf(args, sizeof args, "cache build '%s/missing.cl'", tmpdir);
    EXPECT(args, 1);
    CHECK(err[0] != '\0');
    snprintf(args, sizeof args, "cache build '%s' --device no-such-device-xyz", src);
    EXPECT(args, 1);
    EXPECT("cache list", 0);
    OUT_HAS("3 entries");

    EXPECT("cache clear", 0);
    OUT_HAS("Removed 3 entries");
    EXPECT("cache list", 0);
    OUT_HAS("empty");
    unsetenv("KILN_CACHE_DIR");
}

/* A cache directory that someone else could write is refused: path prints
 * it and why (exit 1), list and clear refuse with the reason and touch
 * nothing. Needs no root: a group-writable directory of ours, a link. */
static void test_cache_refused(void) {
    char dir[512], link[512], entry[700], env[1200];
    snprintf(dir, sizeof dir, "%s/groupcache", tmpdir);
    CHECK(mkdir(dir, 0700) == 0 && chmod(dir, 0770) == 0);
    snprintf(entry, sizeof entry, "%s/%064d.bin", dir, 0);
    write_file(entry, "planted");
    snprintf(env, sizeof env, "KILN_CACHE_DIR='%s'", dir);
    char build[700];
    snprintf(build, sizeof build, "cache build '%s/vadd.cl'", tmpdir); /* from test_cache */
    const char *const actions[] = { "cache path", "cache list", "cache clear", build };
    for (int i = 0; i < 4; i++) {
        int rc = kiln_env(env, actions[i]);
        CHECK_MSG(rc == 1, "kiln %s: exit %d; stderr %.300s", actions[i], rc, err);
        ERR_HAS("writable by its group");
        ERR_HAS(dir);
    }
    kiln_env(env, "cache path");
    CHECK_MSG(strncmp(out, dir, strlen(dir)) == 0, "%.300s", out);
    ERR_HAS("not used");
    struct stat st;
    CHECK(stat(entry, &st) == 0); /* clear removed nothing */
    /* Asked for explicitly, a shared team cache may be group-writable. */
    snprintf(env, sizeof env, "KILN_CACHE_SHARED=1 KILN_CACHE_DIR='%s'", dir);
    CHECK(kiln_env(env, "cache path") == 0);
    CHECK(kiln_env(env, "cache list") == 0);
    /* A symbolic link to a private directory is refused, even shared. */
    CHECK(chmod(dir, 0700) == 0);
    snprintf(link, sizeof link, "%s/linkcache", tmpdir);
    CHECK(symlink(dir, link) == 0);
    for (int shared = 0; shared < 2; shared++) {
        snprintf(env, sizeof env, "%sKILN_CACHE_DIR='%s'", shared ? "KILN_CACHE_SHARED=1 " : "",
                 link);
        for (int i = 0; i < 4; i++) {
            int rc = kiln_env(env, actions[i]);
            CHECK_MSG(rc == 1, "kiln %s: exit %d; stderr %.300s", actions[i], rc, err);
            ERR_HAS("symbolic link");
        }
    }
    CHECK(stat(entry, &st) == 0);
}

/* A cache directory this user cannot write: `cache build` builds, but
 * must not say it stored anything (exit 1, "NOT stored", and why). Root
 * ignores directory permissions, so as root the build runs as nobody
 * (setpriv) in a read-only directory nobody owns; as any other user, in a
 * read-only directory of its own. */
static void test_cache_readonly(void) {
    char dir[512], home[512], src[512], env[2048], args[700];
    snprintf(dir, sizeof dir, "%s/rocache", tmpdir);
    snprintf(home, sizeof home, "%s/home", tmpdir);
    snprintf(src, sizeof src, "%s/ro.cl", tmpdir);
    CHECK(mkdir(dir, 0700) == 0 && mkdir(home, 0700) == 0);
    write_file(src, "KILN_KERNEL void ro(KILN_GLOBAL int *o) { o[0] = 5; }\n");
    if (geteuid() == 0) {
        struct passwd *nobody = getpwnam("nobody");
        int have_setpriv = system("setpriv --help >/dev/null 2>&1") == 0;
        CHECK_MSG(nobody && have_setpriv, "running as root needs user nobody and setpriv "
                                          "(util-linux) to drop privileges");
        if (!nobody || !have_setpriv)
            return;
        CHECK(chown(dir, nobody->pw_uid, nobody->pw_gid) == 0);
        CHECK(chown(home, nobody->pw_uid, nobody->pw_gid) == 0);
        CHECK(chmod(tmpdir, 0711) == 0 && chmod(src, 0644) == 0);
        snprintf(env, sizeof env,
                 "KILN_CACHE_DIR='%s' HOME='%s' setpriv --reuid=%ld --regid=%ld --clear-groups",
                 dir, home, (long)nobody->pw_uid, (long)nobody->pw_gid);
    } else {
        snprintf(env, sizeof env, "KILN_CACHE_DIR='%s'", dir);
    }
    CHECK(chmod(dir, 0500) == 0);
    snprintf(args, sizeof args, "cache build '%s'", src);
    int rc = kiln_env(env, args);
    CHECK_MSG(rc == 1, "exit %d; stderr %.300s", rc, err);
    ERR_HAS("NOT stored");
    ERR_HAS("not writable");
    CHECK(strstr(out, "stored in the cache") == NULL);
    CHECK(chmod(dir, 0700) == 0 && chmod(tmpdir, 0700) == 0);
}

int main(void) {
    kt_make_tmpdir(tmpdir, sizeof tmpdir, "kiln-test-cli");
    /* The tests choose the device themselves. */
    unsetenv("KILN_DEVICE");
    KT_RUN_HOST_STEPS(test_help_and_usage, test_demo_kernels_only, test_version, test_devices,
                      test_cache, test_cache_refused, test_cache_readonly);
    kt_remove_tmpdir(tmpdir);
    return kt_report();
}
