/* The examples, run as a user runs them: each exits 0 and says OK on the
 * default device, and fails cleanly (exit 1, a message) on a bad device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#ifndef KILN_EXAMPLES_DIR
#error "tests/CMakeLists.txt must define KILN_EXAMPLES_DIR for test_examples"
#endif

static char tmpdir[256];
static char out[16384], err[16384];

/* Runs "ENV examples/NAME ARGS"; returns the exit status, -1 on a crash. */
static int run(const char *env, const char *name, const char *args) {
    char cmd[2048], path[512];
    snprintf(cmd, sizeof cmd, "%s '%s/%s' %s >'%s/out' 2>'%s/err'", env,
             KILN_EXAMPLES_DIR, name, args, tmpdir, tmpdir);
    int status = system(cmd);
    snprintf(path, sizeof path, "%s/out", tmpdir);
    kt_slurp(path, out, sizeof out);
    snprintf(path, sizeof path, "%s/err", tmpdir);
    kt_slurp(path, err, sizeof err);
    if (status == -1 || !WIFEXITED(status)) {
        fprintf(stderr, "%s %s: did not exit normally\n%s\n", name, args, err);
        return -1;
    }
    return WEXITSTATUS(status);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-examples-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = run("", "vadd", "");
    CHECK_MSG(rc == 0, "vadd: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "vadd: 1048576 elements on ") && strstr(out, ": OK\n"),
              "%.300s", out);
    /* The device from the command line and from KILN_DEVICE. */
    rc = run("", "vadd", "0");
    CHECK_MSG(rc == 0, "vadd 0: exit %d; %.300s", rc, err);
    rc = run("KILN_DEVICE=0", "vadd", "");
    CHECK_MSG(rc == 0, "KILN_DEVICE=0 vadd: exit %d; %.300s", rc, err);
    rc = run("KILN_DEVICE=no-such-device-xyz", "vadd", "");
    CHECK_MSG(rc == 1, "vadd on a missing device: exit %d", rc);
    CHECK_MSG(strstr(err, "no-such-device-xyz") != NULL, "%.300s", err);
    CHECK(strstr(out, "OK") == NULL);

    rc = run("", "polygon_mask", "");
    CHECK_MSG(rc == 0, "polygon_mask: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "OK, identical to the serial loop"), "%.400s", out);
    long inside1 = -1, inside2 = -1;
    const char *p = strstr(out, "), ");
    if (p)
        inside1 = strtol(p + 3, NULL, 10);
    rc = run("", "polygon_mask", "12345");
    CHECK_MSG(rc == 0, "polygon_mask 12345: exit %d; %.200s %.200s", rc, out, err);
    CHECK(strstr(out, "seed 12345") != NULL);
    p = strstr(out, "), ");
    if (p)
        inside2 = strtol(p + 3, NULL, 10);
    /* A polygon covers some but not all of the image, and another seed
     * gives another polygon. */
    CHECK_MSG(inside1 > 0 && inside1 < 1024 * 1024 && inside2 > 0 &&
                  inside1 != inside2,
              "inside %ld and %ld", inside1, inside2);
    rc = run("", "polygon_mask", "1 no-such-device-xyz");
    CHECK_MSG(rc == 1, "polygon_mask on a missing device: exit %d", rc);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return kt_report();
}
