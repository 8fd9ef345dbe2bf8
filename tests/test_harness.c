/* The harness's exit codes, which ctest reads: each case runs in a child
 * process (its own counters) and the parent checks how it ended.
 *   checks that pass                    0
 *   no check at all                     1  (a test that checks nothing fails)
 *   a failed check                      1
 *   KT_SKIP                             77 (SKIP_RETURN_CODE)
 *   KT_SKIP after a failed check        1  (a skip never hides a failure)
 *   device loop, no requested device    77
 *   device loop, one of two exists      0  (the missing one is left out)
 * The parent touches no kiln state before forking. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static int g_calls;

static void count_call(kiln_queue *queue, void *user) {
    (void)user;
    CHECK(queue != NULL);
    g_calls++;
}

static int case_pass(void) {
    CHECK(1 + 1 == 2);
    return kt_report();
}

static int case_nothing(void) {
    return kt_report();
}

static int case_fail(void) {
    CHECK(1 + 1 == 3);
    CHECK(1 + 1 == 2);
    return kt_report();
}

static int case_skip(void) {
    CHECK(1 + 1 == 2);
    KT_SKIP("testing the skip (%d)", 77);
}

static int case_skip_after_failure(void) {
    CHECK_STATUS(KILN_ERROR_BUILD, KILN_OK);
    KT_SKIP("a skip after a failure");
}

static int case_no_device(void) {
    setenv("KILN_TEST_DEVICES", "no-such-device-xyz,cuda:999", 1);
    kt_for_each_device(count_call, NULL);
    CHECK(g_calls == 0);
    return kt_report();
}

static int case_one_device_missing(void) {
    setenv("KILN_TEST_DEVICES", "no-such-device-xyz,0", 1);
    kt_for_each_device(count_call, NULL);
    CHECK(g_calls == 1);
    return kt_report();
}

/* Runs fn in a child, its output silenced (its "N passed, N failed" line
 * would count in scripts/gpu-test.sh's totals); returns its exit status,
 * or -1 if it did not exit. */
static int in_child(int (*fn)(void)) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(99);
        exit(fn());
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int main(void) {
    static const struct {
        const char *name;
        int (*fn)(void);
        int want;
    } cases[] = {
        { "checks that pass", case_pass, 0 },
        { "no check", case_nothing, 1 },
        { "a failed check", case_fail, 1 },
        { "KT_SKIP", case_skip, 77 },
        { "KT_SKIP after a failed check", case_skip_after_failure, 1 },
        { "device loop, no requested device", case_no_device, 77 },
        { "device loop, one of two missing", case_one_device_missing, 0 },
    };
    int got[sizeof cases / sizeof cases[0]];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("-- case: %s\n", cases[i].name);
        got[i] = in_child(cases[i].fn);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(got[i] == cases[i].want, "%s: exit %d, wanted %d", cases[i].name, got[i],
                  cases[i].want);
    return kt_report();
}
