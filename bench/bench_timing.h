/* Timing shared by the benchmarks: a host clock, a double comparator for
 * qsort, and one timed enqueue measured with device events (a marker just
 * before the operation to the end of its last command). */
#ifndef KILN_BENCH_TIMING_H
#define KILN_BENCH_TIMING_H

#include <string.h>
#include <time.h>

#include "kiln.h"

static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Whether name is one of the comma-separated ops in list (KILN_BENCH_OPS):
 * a whole name, so that "argsort_int32" does not also pick "sort_int32" */
static inline int bench_op_listed(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Enqueues enqueue(arg, &event) on q behind a marker and waits for it.
 * Returns the device time in seconds (the host wall time when the device
 * gives no profiling times: then *events_ok becomes 0 for good); *wall
 * gets the host time from enqueue to completion. A failure is in *status. */
static inline double bench_time_enqueue(kiln_queue *q,
                                        kiln_status (*enqueue)(void *arg, kiln_event **e),
                                        void *arg, int *events_ok, double *wall,
                                        kiln_status *status) {
    kiln_event *m = NULL, *e = NULL;
    double t0 = bench_now();
    kiln_status st = kiln_queue_marker(q, 0, NULL, &m);
    if (st == KILN_OK)
        st = enqueue(arg, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    *wall = bench_now() - t0;
    *status = st;
    double dev = *wall;
    kiln_event_times tm, te;
    if (st == KILN_OK && *events_ok && kiln_event_get_times(m, &tm) == KILN_OK &&
        kiln_event_get_times(e, &te) == KILN_OK && te.ended > tm.started)
        dev = (double)(te.ended - tm.started) * 1e-9;
    else
        *events_ok = 0;
    kiln_event_release(m);
    kiln_event_release(e);
    return dev;
}

/* A scalar of a's dtype with every bit set: garbage for kiln_array_fill
 * before a run (NaN, -1 or the largest unsigned value). */
static inline kiln_arg bench_garbage(const kiln_array *a) {
    kiln_arg v = { .kind = KILN_ARG_SCALAR, .dtype = kiln_array_dtype(a) };
    memset(&v.value, 0xff, sizeof v.value);
    return v;
}

#endif
