/* The examples, run as a user runs them: each exits 0 and says OK on the
 * default device, and fails cleanly (exit 1, a message) on a bad device.
 * Every program in examples/ must have its checks here: tests/CMakeLists.txt
 * passes the built examples' names (KILN_EXAMPLES), and an example this file
 * does not know fails the test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#if !defined(KILN_EXAMPLES_DIR) || !defined(KILN_EXAMPLES)
#error "tests/CMakeLists.txt must define KILN_EXAMPLES_DIR and KILN_EXAMPLES for test_examples"
#endif

/* The examples this file checks; keep in step with the functions below. */
static const char *const checked[] = { "vadd",           "polygon_mask", "offload_pairwise",
                                       "monte_carlo_pi", "pipeline",     "copy_if",
                                       "neighbours",     "sort_pairs" };

static char tmpdir[256];
static char out[16384], err[16384];

/* Runs "ENV examples/NAME ARGS"; returns the exit status, -1 on a crash. */
static int run(const char *env, const char *name, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s '%s/%s' %s", env, KILN_EXAMPLES_DIR, name, args);
    return kt_run_captured(cmd, tmpdir, out, sizeof out, err, sizeof err);
}

/* name with args that name a device that does not exist: exit 1, the
 * device named on stderr, and with no_ok no "OK" on stdout. */
static void check_missing_device(const char *name, const char *args, int no_ok) {
    int rc = run("", name, args);
    CHECK_MSG(rc == 1 && strstr(err, "no-such-device-xyz"), "missing device: exit %d; %.300s", rc,
              err);
    if (no_ok)
        CHECK(strstr(out, "OK") == NULL);
}

/* Every example that was built has checks in this file. */
static void check_all_examples_covered(void) {
    char list[] = KILN_EXAMPLES;
    char *save = NULL;
    int n = 0;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save), n++) {
        int known = 0;
        for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++)
            known |= strcmp(name, checked[i]) == 0;
        CHECK_MSG(known, "examples/%s.c is built but tests/test_examples.c never runs it", name);
    }
    CHECK_MSG(n >= (int)(sizeof checked / sizeof checked[0]), "only %d examples built", n);
}

static void check_vadd(void) {
    int rc = run("", "vadd", "");
    CHECK_MSG(rc == 0, "vadd: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "vadd: 1048576 elements on ") && strstr(out, ": OK\n"), "%.300s", out);
    /* The device from the command line and from KILN_DEVICE. */
    rc = run("", "vadd", "0");
    CHECK_MSG(rc == 0, "vadd 0: exit %d; %.300s", rc, err);
    rc = run("KILN_DEVICE=0", "vadd", "");
    CHECK_MSG(rc == 0, "KILN_DEVICE=0 vadd: exit %d; %.300s", rc, err);
    rc = run("KILN_DEVICE=no-such-device-xyz", "vadd", "");
    CHECK_MSG(rc == 1, "vadd on a missing device: exit %d", rc);
    CHECK_MSG(strstr(err, "no-such-device-xyz") != NULL, "%.300s", err);
    CHECK(strstr(out, "OK") == NULL);
}

static void check_polygon_mask(void) {
    int rc = run("", "polygon_mask", "");
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
    CHECK_MSG(inside1 > 0 && inside1 < 1024 * 1024 && inside2 > 0 && inside1 != inside2,
              "inside %ld and %ld", inside1, inside2);
    rc = run("", "polygon_mask", "1 no-such-device-xyz");
    CHECK_MSG(rc == 1, "polygon_mask on a missing device: exit %d", rc);
}

/* offload_pairwise [device] [M] [N]: M row offloads inside one data region
 * that maps X to the device once; the example compares every distance with
 * its own serial loop. Small sizes keep it quick under the sanitizers. */
static void check_offload_pairwise(void) {
    kiln_device *dev = NULL;
    kiln_device_info info;
    if (!CHECK_OK(kiln_device_select(NULL, &dev)) || !CHECK_OK(kiln_device_get_info(dev, &info)))
        return;
    int rc = run("", "offload_pairwise", "'' 37 5");
    if (!info.fp64) { /* the example needs double precision, and says so */
        CHECK_MSG(rc == 1, "offload_pairwise without fp64: exit %d", rc);
        CHECK_MSG(strstr(err, "no double precision") != NULL, "%.300s", err);
        return;
    }
    CHECK_MSG(rc == 0, "offload_pairwise: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "offload_pairwise: M=37 N=5 on ") != NULL, "%.400s", out);
    /* X went to the device once for the whole region; each of the 37 rows
     * came back once. */
    CHECK_MSG(strstr(out, "X copied to the device 1 time(s); 37 row copies back") != NULL, "%.400s",
              out);
    const char *e = strstr(out, "max |error| ");
    double worst = e ? strtod(e + strlen("max |error| "), NULL) : -1;
    CHECK_MSG(e && worst >= 0 && worst <= 1e-12 && strstr(e, ": OK\n"), "%.400s", out);
    /* One row (M = 1): the distance of a row to itself is 0. */
    rc = run("", "offload_pairwise", "'' 1 3");
    CHECK_MSG(rc == 0 && strstr(out, "1 row copies back") && strstr(out, ": OK\n"),
              "M=1: exit %d; %.200s %.200s", rc, out, err);
    /* Bad sizes and a missing device fail cleanly, with a message. */
    rc = run("", "offload_pairwise", "'' 0 5");
    CHECK_MSG(rc == 1 && strstr(err, "M and N must be >= 1"), "M=0: exit %d; %.200s", rc, err);
    CHECK(strstr(out, "OK") == NULL);
    check_missing_device("offload_pairwise", "no-such-device-xyz 4 4", 0);
}

/* monte_carlo_pi [device] [points] [seed]: the device's count of hits is
 * the host's (same generator); pi within 4/sqrt(points) (~5 sd); another
 * seed gives another count; bad input fails cleanly. */
static void check_monte_carlo_pi(void) {
    int rc = run("", "monte_carlo_pi", "'' 100000 7");
    CHECK_MSG(rc == 0, "monte_carlo_pi: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "100000 points, seed 7 on ") && strstr(out, ": OK\n"), "%.400s", out);
    const char *p = strstr(out, "pi ~ ");
    double pi = p ? strtod(p + 5, NULL) : 0;
    CHECK_MSG(p && pi > 3.14159265 - 4 / sqrt(100000.0) && pi < 3.14159265 + 4 / sqrt(100000.0),
              "pi %f", pi);
    p = strstr(out, "), ");
    long hits7 = p ? strtol(p + 3, NULL, 10) : -1;
    rc = run("", "monte_carlo_pi", "'' 100000 8");
    p = strstr(out, "), ");
    long hits8 = p ? strtol(p + 3, NULL, 10) : -1;
    CHECK_MSG(rc == 0 && strstr(out, ": OK\n") && hits7 > 0 && hits8 > 0 && hits7 != hits8,
              "seeds 7 and 8: %ld and %ld hits; %.300s", hits7, hits8, out);
    rc = run("", "monte_carlo_pi", "'' 1");
    CHECK_MSG(rc == 0 && strstr(out, ": OK\n"), "one point: exit %d; %.300s", rc, out);
    rc = run("", "monte_carlo_pi", "'' 0");
    CHECK_MSG(rc == 1 && strstr(err, "points must be >= 1"), "0 points: exit %d", rc);
    check_missing_device("monte_carlo_pi", "no-such-device-xyz 10", 1);
}

/* pipeline [n] [d] [budget MiB] [slots] [--bits] [--trace FILE]: a budget of 4 MiB
 * makes three blocks of 344 rows of the 1000 points; the example checks sampled rows
 * against a serial count itself. */
static void check_pipeline(void) {
    char args[512];
    snprintf(args, sizeof args, "1000 8 4 3 --trace '%s/pipe.json'", tmpdir);
    int rc = run("", "pipeline", args);
    CHECK_MSG(rc == 0 && strstr(out, "pipeline: OK\n") && strstr(out, "3 blocks of 344 rows"),
              "pipeline: exit %d; %.400s %.300s", rc, out, err);
    CHECK_MSG(strstr(out, "RESULT pipeline ") && strstr(out, "RESULT slowest_part "), "%.400s",
              out);
    char path[512], trace[16384];
    snprintf(path, sizeof path, "%s/pipe.json", tmpdir);
    kt_slurp(path, trace, sizeof trace);
    CHECK_MSG(strstr(trace, "\"name\":\"dist2\"") && strstr(trace, "kiln_buffer_read_async"),
              "the pipeline's trace: %.300s", trace);
    /* --bits: one bit a pair comes back (4099 points: a row's last word
     * half full; five blocks through a 1 MiB budget) */
    rc = run("", "pipeline", "4099 5 1 2 --bits");
    CHECK_MSG(rc == 0 && strstr(out, "pipeline: OK\n") && strstr(out, "bits (one a pair)") &&
                  strstr(out, "5 blocks of"),
              "pipeline --bits: exit %d; %.400s %.300s", rc, out, err);
    rc = run("", "pipeline", "1");
    CHECK_MSG(rc == 2 && strstr(err, "usage"), "one point: exit %d; %.200s", rc, err);
    rc = run("", "pipeline", "100000 8 1");
    CHECK_MSG(rc == 2 && strstr(err, "cannot hold"), "budget too small: exit %d; %.200s", rc, err);
}

/* copy_if [device] [n] [threshold]: the kept items and the distinct floors
 * match the example's serial loops; none kept, all kept, one item; bad
 * input fails cleanly. */
static void check_copy_if(void) {
    int rc = run("", "copy_if", "'' 100003 0.5");
    CHECK_MSG(rc == 0 && strstr(out, "copy_if: 100003 items on ") && strstr(out, ": OK\n"),
              "copy_if: exit %d; %.300s %.300s", rc, out, err);
    const char *p = strstr(out, "kept ");
    long kept = p ? strtol(p + 5, NULL, 10) : -1;
    CHECK_MSG(kept > 100003 / 4 && kept < 100003 * 3 / 4, "kept %ld", kept);
    rc = run("", "copy_if", "'' 5000 2");
    CHECK_MSG(rc == 0 && strstr(out, "kept 0 ") && strstr(out, ": OK\n"), "none: %.300s", out);
    rc = run("", "copy_if", "'' 5000 -1");
    CHECK_MSG(rc == 0 && strstr(out, "kept 5000 ") && strstr(out, ": OK\n"), "all: %.300s", out);
    rc = run("", "copy_if", "'' 1");
    CHECK_MSG(rc == 0 && strstr(out, ": OK\n"), "one item: exit %d; %.300s", rc, out);
    rc = run("", "copy_if", "'' 0");
    CHECK_MSG(rc == 1 && strstr(err, "n must be >= 1"), "n = 0: exit %d", rc);
    check_missing_device("copy_if", "no-such-device-xyz 10", 1);
}

/* neighbours [device] [N] [R]: the lists match the serial loop (the
 * example checks them itself and says OK); bad input fails cleanly. */
static void check_neighbours(void) {
    int rc = run("", "neighbours", "'' 3000 0.03");
    CHECK_MSG(rc == 0, "neighbours: exit %d; %.200s %.200s", rc, out, err);
    CHECK_MSG(strstr(out, "neighbours: 3000 points") && strstr(out, "check: OK"), "%.400s", out);
    const char *p = strstr(out, "points, radius");
    p = p ? strchr(p, '\n') : NULL;
    long pairs = p ? strtol(p + 1, NULL, 10) : -1;
    /* about N * (N-1) * pi R^2 pairs in the unit square (edges lose some) */
    CHECK_MSG(pairs > 20000 && pairs < 27000, "pairs %ld", pairs);
    rc = run("", "neighbours", "'' 1 0.5");
    CHECK_MSG(rc == 0 && strstr(out, "0 pairs") && strstr(out, "check: OK"),
              "one point: exit %d; %.300s", rc, out);
    rc = run("", "neighbours", "'' 0");
    CHECK_MSG(rc == 1 && strstr(err, "N must be >= 1"), "N=0: exit %d", rc);
    check_missing_device("neighbours", "no-such-device-xyz 10", 1);
}

/* sort_pairs [device] [players]: the example checks its own sorts, topk
 * and searchsorted against the host data. */
static void check_sort_pairs(void) {
    int rc = run("", "sort_pairs", "");
    CHECK_MSG(rc == 0 && strstr(out, "1048576 players on ") && strstr(out, ": OK\n"),
              "sort_pairs: exit %d; %.300s %.300s", rc, out, err);
    rc = run("", "sort_pairs", "'' 4099");
    CHECK_MSG(rc == 0 && strstr(out, "4099 players") && strstr(out, ": OK\n"),
              "4099 players: exit %d; %.300s", rc, out);
    rc = run("", "sort_pairs", "'' 4");
    CHECK_MSG(rc == 1 && strstr(err, "players must be >= 5"), "4 players: exit %d", rc);
    check_missing_device("sort_pairs", "no-such-device-xyz", 1);
}

int main(void) {
    kt_make_tmpdir(tmpdir, sizeof tmpdir, "kiln-test-examples");
    KT_RUN_HOST_STEPS(check_all_examples_covered, check_vadd, check_polygon_mask,
                      check_offload_pairwise, check_monte_carlo_pi, check_pipeline, check_copy_if,
                      check_neighbours, check_sort_pairs);

    kt_remove_tmpdir(tmpdir);
    return kt_report();
}
