/* The disk cache trusts only what nobody else can write (issue 14).
 *
 * A "planted" entry is made first: the binary of a kernel that writes 666,
 * stored under the key of an honest kernel that writes 3*i+1, and shown to
 * be loaded (and to run) when it sits in a trusted place. Then each hostile
 * place is set up with it: a group-writable, world-writable or symlinked
 * directory, an entry swapped for a link between listing and loading, the
 * directory swapped after its check; as root (CI) also a directory and an
 * entry owned by another uid, and a squatted /tmp fallback directory. Each
 * time the planted entry must not be loaded and the honest kernel must
 * build from source and give 3*i+1. Without root the chown cases skip
 * (exit 77) after the others have run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

#define N 64
#define OTHER_UID 65534 /* nobody */

static char tmpdir[256];
static char stage[512]; /* trusted directory holding the planted entry */
static char honest_key[65];

static const char honest_src[] = "KILN_KERNEL void mark(KILN_GLOBAL int *out) {\n"
                                 "    size_t i = kiln_global_id(0);\n"
                                 "    out[i] = (int)i * 3 + 1;\n"
                                 "}\n";
static const char planted_src[] = "KILN_KERNEL void mark(KILN_GLOBAL int *out) {\n"
                                  "    size_t i = kiln_global_id(0);\n"
                                  "    out[i] = 666;\n"
                                  "}\n";

enum { RAN_BADLY = 0, RAN_HONEST = 1, RAN_PLANTED = 2 };

/* Builds source in a fresh context (so no memory cache) on the default
 * device and runs it. RAN_HONEST if out[i] = 3i+1 everywhere, RAN_PLANTED if
 * 666 everywhere. *from_disk: whether the binary came from the disk cache. */
static int run_kernel(const char *source, int *from_disk) {
    kiln_queue *q = NULL;
    kiln_program *prog = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *buf = NULL;
    int out[N], result = RAN_BADLY;
    *from_disk = -1;
    if (!CHECK_OK(kiln_queue_create_default(NULL, KILN_QUEUE_IN_ORDER, &q)))
        return RAN_BADLY;
    kiln_context *ctx = kiln_queue_context(q);
    size_t global = N;
    if (CHECK_OK(kiln_program_create(ctx, source, NULL, &prog)) &&
        CHECK_OK(kiln_kernel_create(prog, "mark", &k)) &&
        CHECK_OK(kiln_buffer_create(ctx, sizeof out, KILN_BUFFER_READ_WRITE, NULL, &buf))) {
        kiln_arg args[] = { KILN_ARG_BUF(buf) };
        if (CHECK_OK(kiln_kernel_launch(q, k, 1, &global, NULL, 1, args, 0, NULL, NULL)) &&
            CHECK_OK(kiln_buffer_read(q, buf, 0, sizeof out, out))) {
            int honest = 1, planted = 1;
            for (int i = 0; i < N; i++) {
                honest &= out[i] == 3 * i + 1;
                planted &= out[i] == 666;
            }
            result = honest ? RAN_HONEST : planted ? RAN_PLANTED : RAN_BADLY;
        }
        *from_disk = kiln_program_from_cache(prog, kiln_queue_device(q));
    }
    KT_RELEASE(buf, k, prog, q);
    return result;
}

/* The honest kernel gives the honest result, built from source. */
#define CHECK_BUILT_HONESTLY(what)                                                       \
    do {                                                                                 \
        int disk_;                                                                       \
        int r_ = run_kernel(honest_src, &disk_);                                         \
        CHECK_MSG(r_ == RAN_HONEST && disk_ == 0,                                        \
                  "%s: result %d (1 honest, 2 planted), from disk %d", what, r_, disk_); \
    } while (0)

static void use_dir(const char *dir, int shared) {
    setenv("KILN_CACHE_DIR", dir, 1);
    if (shared)
        setenv("KILN_CACHE_SHARED", "1", 1);
    else
        unsetenv("KILN_CACHE_SHARED");
}

static void make_dir(const char *path, mode_t mode) {
    CHECK_MSG(mkdir(path, 0700) == 0 && chmod(path, mode) == 0, "mkdir %s: %s", path,
              strerror(errno));
}

/* The one "<key>.bin" in dir, into key (65 bytes). */
static int only_key(const char *dir, char *key) {
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strlen(de->d_name) == 68 && strcmp(de->d_name + 64, ".bin") == 0) {
            memcpy(key, de->d_name, 64);
            key[64] = '\0';
            found++;
        }
    if (d)
        closedir(d);
    return found == 1;
}

static void entry_path(const char *dir, const char *key, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s.bin", dir, key);
}

/* Copies the planted entry into dir (owned by uid unless it is -1). */
static void plant_into(const char *dir, int uid) {
    char from[700], to[700], cmd[1600];
    entry_path(stage, honest_key, from, sizeof from);
    entry_path(dir, honest_key, to, sizeof to);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    CHECK(system(cmd) == 0);
    if (uid >= 0)
        CHECK(chown(to, (uid_t)uid, (gid_t)-1) == 0);
}

/* Makes the planted entry in stage and shows that a trusted cache would
 * load it: the tests below are only meaningful if it does. */
static int make_planted_entry(void) {
    char honest_dir[512], planted_dir[512], planted_key[65];
    int disk;
    snprintf(honest_dir, sizeof honest_dir, "%s/honest", tmpdir);
    snprintf(planted_dir, sizeof planted_dir, "%s/planted", tmpdir);
    snprintf(stage, sizeof stage, "%s/stage", tmpdir);
    use_dir(honest_dir, 0);
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST);
    use_dir(planted_dir, 0);
    CHECK(run_kernel(planted_src, &disk) == RAN_PLANTED);
    int keys = only_key(honest_dir, honest_key) && only_key(planted_dir, planted_key);
    CHECK(keys);
    if (!keys)
        return 0;
    kiln__cache_key key;
    void *payload = NULL;
    size_t size = 0;
    memcpy(key.hex, planted_key, sizeof key.hex);
    if (!CHECK_OK(kiln__cache_load(&key, &payload, &size)))
        return 0;
    memcpy(key.hex, honest_key, sizeof key.hex);
    use_dir(stage, 0);
    CHECK_OK(kiln__cache_store(&key, payload, size, "planted"));
    free(payload);
    int r = run_kernel(honest_src, &disk);
    CHECK_MSG(r == RAN_PLANTED && disk == 1,
              "a trusted cache loads the planted entry: result %d, disk %d", r, disk);
    return r == RAN_PLANTED && disk == 1;
}

static void check_refused(const char *what, const char *reason) {
    char why[1024] = "";
    kiln_status st = kiln_cache_status(why, sizeof why);
    CHECK_MSG(st == KILN_ERROR_UNTRUSTED && strstr(why, reason), "%s: status %d, why: %.300s", what,
              (int)st, why);
    CHECK(strstr(kiln_last_error_message(), reason) != NULL);
    size_t removed = 7;
    CHECK_STATUS(kiln_cache_clear(&removed), KILN_ERROR_UNTRUSTED);
    CHECK(removed == 0 && strstr(kiln_last_error_message(), reason) != NULL);
}

static void count_visit(const kiln_cache_entry *e, void *user) {
    (void)e;
    ++*(int *)user;
}

/* ------------------------------------------------------ cases without root */

static void test_group_and_world_writable(void) {
    char dir[512], path[700];
    int count = 0;
    snprintf(dir, sizeof dir, "%s/group", tmpdir);
    make_dir(dir, 0770);
    plant_into(dir, -1);
    use_dir(dir, 0);
    check_refused("group-writable", "writable by its group");
    CHECK_STATUS(kiln_cache_list(count_visit, &count), KILN_ERROR_UNTRUSTED);
    CHECK(count == 0);
    CHECK_BUILT_HONESTLY("group-writable directory");
    /* nothing was written into it: the planted entry is still there */
    entry_path(dir, honest_key, path, sizeof path);
    struct stat st;
    CHECK(lstat(path, &st) == 0);
    /* Shared on purpose: accepted, and then a member's entry is loaded
     * (the documented price of a team cache). */
    use_dir(dir, 1);
    CHECK_OK(kiln_cache_status(NULL, 0));
    int disk;
    CHECK(run_kernel(honest_src, &disk) == RAN_PLANTED && disk == 1);
    /* World-writable is refused, shared or not, sticky or not. */
    for (int shared = 0; shared < 2; shared++)
        for (int sticky = 0; sticky < 2; sticky++) {
            CHECK(chmod(dir, sticky ? 01777 : 0777) == 0);
            use_dir(dir, shared);
            check_refused("world-writable", "writable by every user");
            CHECK_BUILT_HONESTLY("world-writable directory");
        }
}

static void test_symlinked_dir(void) {
    char dir[512], link[512];
    snprintf(dir, sizeof dir, "%s/real", tmpdir);
    snprintf(link, sizeof link, "%s/link", tmpdir);
    make_dir(dir, 0700);
    plant_into(dir, -1);
    CHECK(symlink(dir, link) == 0);
    for (int shared = 0; shared < 2; shared++) {
        use_dir(link, shared);
        check_refused("symlinked directory", "symbolic link");
        CHECK_BUILT_HONESTLY("symlinked directory");
    }
}

struct listing {
    int count, valid, refused_link, refused_owner;
};

static void list_visit(const kiln_cache_entry *e, void *user) {
    struct listing *l = user;
    l->count++;
    l->valid += e->valid;
    l->refused_link += strstr(e->label, "symbolic link") != NULL;
    l->refused_owner += strstr(e->label, "another user") != NULL;
}

/* The hook swaps the entry for a link to the planted one. */
static void swap_entry_for_link(const char *dir, const char *name, void *user) {
    char path[700], target[700];
    (void)user;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    entry_path(stage, honest_key, target, sizeof target);
    CHECK(unlink(path) == 0 && symlink(target, path) == 0);
}

static void test_entry_swapped_for_link(void) {
    char dir[512], path[700];
    int disk;
    snprintf(dir, sizeof dir, "%s/swap-entry", tmpdir);
    use_dir(dir, 0);
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST && disk == 0);
    struct listing l = { 0, 0, 0, 0 };
    CHECK_OK(kiln_cache_list(list_visit, &l));
    CHECK(l.count == 1 && l.valid == 1);
    /* listed as valid, then swapped under the load */
    kiln__cache_set_test_hook(swap_entry_for_link, NULL);
    CHECK_BUILT_HONESTLY("entry swapped for a link");
    kiln__cache_set_test_hook(NULL, NULL);
    /* the store after the build put a real entry back in place of the link */
    struct stat st;
    entry_path(dir, honest_key, path, sizeof path);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST && disk == 1);
    /* A link in place is listed as refused, never read; clear removes the
     * link, not its target. */
    char target[700];
    entry_path(stage, honest_key, target, sizeof target);
    CHECK(unlink(path) == 0 && symlink(target, path) == 0);
    l = (struct listing){ 0, 0, 0, 0 };
    CHECK_OK(kiln_cache_list(list_visit, &l));
    CHECK_MSG(l.count == 1 && l.valid == 0 && l.refused_link == 1, "count %d valid %d link %d",
              l.count, l.valid, l.refused_link);
    size_t removed = 0;
    CHECK_OK(kiln_cache_clear(&removed));
    CHECK(removed == 1 && lstat(path, &st) != 0 && stat(target, &st) == 0);
}

/* The hook moves the checked directory away and puts a link to the planted
 * entry's directory in its place: the load must still read through the
 * descriptor it checked. */
static void swap_dir(const char *dir, const char *name, void *user) {
    char moved[600];
    (void)name;
    snprintf(moved, sizeof moved, "%s.moved", dir);
    CHECK(rename(dir, moved) == 0 && symlink(stage, dir) == 0);
    *(int *)user = 1;
}

static void test_dir_swapped_after_check(void) {
    char dir[512], moved[600];
    int disk, swapped = 0;
    snprintf(dir, sizeof dir, "%s/swap-dir", tmpdir);
    snprintf(moved, sizeof moved, "%s.moved", dir);
    use_dir(dir, 0);
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST && disk == 0);
    kiln__cache_set_test_hook(swap_dir, &swapped);
    int r = run_kernel(honest_src, &disk);
    kiln__cache_set_test_hook(NULL, NULL);
    CHECK_MSG(swapped && r == RAN_HONEST && disk == 1, "swapped %d, result %d, from disk %d",
              swapped, r, disk);
}

/* New directories are 0700 and entries 0600 whatever the umask; a shared
 * cache's entries are 0640 and it is never created by kiln. */
static void test_modes_and_status(void) {
    char dir[512], path[700], why[1024];
    struct stat st;
    snprintf(dir, sizeof dir, "%s/fresh/a/b", tmpdir);
    use_dir(dir, 0);
    CHECK_OK(kiln_cache_status(why, sizeof why));
    CHECK_MSG(strstr(why, dir) && strstr(why, "created on the first build"), "%.300s", why);
    char small[8];
    CHECK_OK(kiln_cache_status(small, sizeof small));
    CHECK(strlen(small) == 7);
    mode_t old = umask(0);
    int disk;
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST);
    umask(old);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
    entry_path(dir, honest_key, path, sizeof path);
    CHECK_MSG(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600, "mode %o", st.st_mode);
    CHECK_OK(kiln_cache_status(why, sizeof why));
    CHECK(strstr(why, "private") != NULL);

    snprintf(dir, sizeof dir, "%s/team", tmpdir);
    use_dir(dir, 1);
    CHECK_STATUS(kiln_cache_status(why, sizeof why), KILN_ERROR_IO);
    CHECK(strstr(why, "does not exist") != NULL);
    CHECK_BUILT_HONESTLY("missing shared directory");
    CHECK(stat(dir, &st) != 0); /* not created */
    make_dir(dir, 02770);
    CHECK_OK(kiln_cache_status(why, sizeof why));
    CHECK(strstr(why, "shared") != NULL);
    CHECK(run_kernel(honest_src, &disk) == RAN_HONEST && disk == 0);
    entry_path(dir, honest_key, path, sizeof path);
    CHECK_MSG(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640, "mode %o", st.st_mode);

    /* Not a directory: unusable, said as such. */
    snprintf(dir, sizeof dir, "%s/plainfile", tmpdir);
    FILE *f = fopen(dir, "w");
    if (f)
        fclose(f);
    use_dir(dir, 0);
    CHECK_STATUS(kiln_cache_status(why, sizeof why), KILN_ERROR_IO);
    CHECK_BUILT_HONESTLY("cache path is a file");
}

/* ----------------------------------------------------------- cases as root */

static void test_other_owner(void) {
    char dir[512], path[700];
    /* An entry of another user in our own directory. */
    snprintf(dir, sizeof dir, "%s/foreign-entry", tmpdir);
    make_dir(dir, 0700);
    plant_into(dir, OTHER_UID);
    use_dir(dir, 0);
    CHECK_OK(kiln_cache_status(NULL, 0));
    struct listing l = { 0, 0, 0, 0 };
    CHECK_OK(kiln_cache_list(list_visit, &l));
    CHECK(l.count == 1 && l.valid == 0 && l.refused_owner == 1);
    CHECK_BUILT_HONESTLY("entry owned by another user");
    struct stat st;
    entry_path(dir, honest_key, path, sizeof path);
    CHECK(stat(path, &st) == 0 && st.st_uid == geteuid()); /* replaced */

    /* A directory of another user (made before us: mkdir's EEXIST), with
     * the planted entry in it; private to its owner or group-writable. */
    static const mode_t modes[] = { 0755, 0700, 0775 };
    for (int i = 0; i < 3; i++) {
        snprintf(dir, sizeof dir, "%s/squatted-%d", tmpdir, i);
        make_dir(dir, modes[i]);
        plant_into(dir, OTHER_UID);
        CHECK(chown(dir, OTHER_UID, (gid_t)-1) == 0);
        use_dir(dir, 0);
        check_refused("directory of another user", "belongs to uid 65534");
        CHECK_BUILT_HONESTLY("directory of another user");
        entry_path(dir, honest_key, path, sizeof path);
        CHECK(stat(path, &st) == 0 && st.st_uid == OTHER_UID); /* untouched */
    }
    /* The group-writable one is a team cache when asked for. */
    use_dir(dir, 1);
    CHECK_OK(kiln_cache_status(NULL, 0));
}

/* The fallback /tmp/kiln-cache-<euid> (no $HOME, no passwd entry), made
 * first by another user. The euid differs from the uid here, so the name
 * also shows which one kiln uses. Runs in a child that drops its euid. */
static void test_squatted_fallback(void) {
    uid_t uid = 0;
    char dir[128];
    struct stat st;
    for (uid_t u = 60000 + (uid_t)(getpid() % 4000); u < 65000; u++) {
        snprintf(dir, sizeof dir, "/tmp/kiln-cache-%lu", (unsigned long)u);
        if (!getpwuid(u) && lstat(dir, &st) != 0) {
            uid = u;
            break;
        }
    }
    CHECK(uid != 0);
    if (uid == 0)
        return;
    make_dir(dir, 0755);
    plant_into(dir, OTHER_UID);
    CHECK(chown(dir, OTHER_UID, (gid_t)-1) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("KILN_CACHE_DIR");
        unsetenv("XDG_CACHE_HOME");
        unsetenv("HOME");
        int fails = 0;
        char path[512];
        if (seteuid(uid) != 0)
            _exit(100);
        fails += kiln_cache_path(path, sizeof path) != KILN_OK || strcmp(path, dir) != 0;
        fails += kiln_cache_status(NULL, 0) != KILN_ERROR_UNTRUSTED;
        kiln__cache_key key;
        void *payload = NULL;
        size_t size = 0;
        memcpy(key.hex, honest_key, sizeof key.hex);
        fails += kiln__cache_load(&key, &payload, &size) != KILN_ERROR_UNTRUSTED || payload;
        fails += kiln__cache_store(&key, "x", 1, "x") != KILN_ERROR_UNTRUSTED;
        if (fails)
            fprintf(stderr, "child: %d failed, path %s, last error %s\n", fails, path,
                    kiln_last_error_message());
        _exit(fails);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    /* the same directory through KILN_CACHE_DIR, with a program run */
    use_dir(dir, 0);
    CHECK_BUILT_HONESTLY("squatted fallback directory");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    kt_make_tmpdir(tmpdir, sizeof tmpdir, "kiln-test-cache-trust");
    int root = geteuid() == 0;
    if (make_planted_entry()) {
        test_group_and_world_writable();
        test_symlinked_dir();
        test_entry_swapped_for_link();
        test_dir_swapped_after_check();
        test_modes_and_status();
        if (root) {
            test_other_owner();
            test_squatted_fallback();
        }
    }
    kt_remove_tmpdir(tmpdir);
    if (!root)
        KT_SKIP("not root: the cases with another owner (chown) did not run");
    return kt_report();
}
