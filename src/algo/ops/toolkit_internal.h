/* Shared pieces of the array toolkit's fixed kernels (histogram.c,
 * hash.c): an embedded template compiled with a few defines, cached per
 * context like the built-in generators (ctxcache.c). */
#ifndef KILN_ALGO_TOOLKIT_INTERNAL_H
#define KILN_ALGO_TOOLKIT_INTERNAL_H

#include "algo/gen/algo.h"

/* A new reference to the program of template `file` (kernels named
 * name + suffixes[k], k < nk <= 3) with `defines` put before it, built for
 * queue's device on first use; *v holds its kernels and *plan the
 * device's plan. Release *gen with kiln__gen_release after launching. */
kiln_status kiln__tk_kernels(kiln_queue *queue, const char *file, const char *name,
                             const char *defines, int nk, const char *const *suffixes,
                             kiln__gen **gen, kiln__variant **v, kiln__plan *plan);

/* a itself (retained) when contiguous, else a dense copy of it enqueued
 * after wait; *dep gets the copy's event (NULL if none). */
kiln_status kiln__tk_dense(kiln_queue *queue, kiln_array *a, size_t num_wait,
                           kiln_event *const *wait, kiln_array **dense, kiln_event **dep);

#endif
