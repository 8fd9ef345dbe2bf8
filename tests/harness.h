/* The test harness: checks that record and go on, a device loop, and random
 * inputs. Each test program ends with `return kt_report();`, which prints
 * "N passed, N failed" and returns the exit code ctest reads: 0 passed,
 * 1 failed (a failed check, or no check at all), 77 skipped.
 *
 * A test that cannot run here says so with KT_SKIP("why"): it prints the
 * reason and exits 77, which tests/CMakeLists.txt declares as the skip code
 * (SKIP_RETURN_CODE), so ctest reports "Skipped", never "Passed".
 *
 * Conformance tests call kt_for_each_device(fn, user): fn runs once per
 * device named by $KILN_TEST_DEVICES (comma-separated selectors, e.g.
 * "cuda:0,nvidia" or "all"); unset means the default device, which must
 * exist. A requested device that does not exist is left out with a note;
 * if none of them exists, kt_report() reports a skip. */
#ifndef KILN_TEST_HARNESS_H
#define KILN_TEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "kiln.h"

void kt_record(int ok, const char *file, int line, const char *what, const char *detail);

#define CHECK(cond) kt_record(!!(cond), __FILE__, __LINE__, #cond, NULL)
/* The message is formatted in the harness (a function, not a buffer at
 * every call site: GCC 13 at -O2 warns about truncation there). */
void kt_recordf(int ok, const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define CHECK_MSG(cond, ...) kt_recordf(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
/* Checks that expr returns `want`; on a mismatch prints both codes and
 * kiln_last_error_message(). Evaluates to 1 if it matched. */
#define CHECK_STATUS(expr, want) kt_check_status((expr), (want), __FILE__, __LINE__, #expr)
#define CHECK_OK(expr) CHECK_STATUS(expr, KILN_OK)

int kt_check_status(kiln_status got, kiln_status want, const char *file, int line,
                    const char *what);

/* Prints the summary line and returns the exit code: 1 if a check failed or
 * no check ran at all (a test that checked nothing proves nothing), 77 if
 * the device loop found none of the requested devices, 0 otherwise. */
int kt_report(void);

/* Skips the whole test: prints "SKIPPED: <why>" and exits 77; exits 1
 * instead if a check has already failed (a failure is never hidden by a
 * skip). The one way a test says that it cannot run here. */
#define KT_SKIP(...) kt_skip(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void kt_skip(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs fn for each test device with a fresh in-order profiling queue on it
 * (released afterwards). Prints "== device: <id> <name>". A selector that
 * names no device (KILN_ERROR_NO_DEVICE / NO_RUNTIME) is left out with a
 * note; when that leaves none, kt_report() returns 77. Any other failure to
 * open a device is a failed check. */
typedef void (*kt_device_fn)(kiln_queue *queue, void *user);
void kt_for_each_device(kt_device_fn fn, void *user);
/* kt_for_each_device running the n steps, in order, on each device's
 * queue: KT_FOR_EACH_DEVICE_STEPS(t_sizes, t_fill, t_errors) for a test
 * that is a list of checks taking the queue. */
typedef void (*kt_step_fn)(kiln_queue *queue);
void kt_for_each_device_steps(size_t n, const kt_step_fn *steps);
/* Runs the n steps in order on queue: KT_STEPS(q, t_topk, t_errors) inside
 * a device function that does more than run steps. */
void kt_run_steps(kiln_queue *queue, size_t n, const kt_step_fn *steps);
#define KT_STEPS(queue, ...)                                                        \
    kt_run_steps(queue, sizeof((kt_step_fn[]){ __VA_ARGS__ }) / sizeof(kt_step_fn), \
                 (kt_step_fn[]){ __VA_ARGS__ })
/* kt_for_each_device(fns[i], NULL) for each of the n device functions in
 * turn (each gets a fresh queue on each device):
 * KT_FOR_EACH_DEVICE_FNS(test_a, test_b). */
void kt_for_each_device_fns(size_t n, const kt_device_fn *fns);
#define KT_FOR_EACH_DEVICE_FNS(...)                                                        \
    kt_for_each_device_fns(sizeof((kt_device_fn[]){ __VA_ARGS__ }) / sizeof(kt_device_fn), \
                           (kt_device_fn[]){ __VA_ARGS__ })
#define KT_FOR_EACH_DEVICE_STEPS(...)                                                    \
    kt_for_each_device_steps(sizeof((kt_step_fn[]){ __VA_ARGS__ }) / sizeof(kt_step_fn), \
                             (kt_step_fn[]){ __VA_ARGS__ })

/* Runs the n host steps (checks that take no queue) in order:
 * KT_RUN_HOST_STEPS(test_keys, test_round_trip). */
typedef void (*kt_host_step_fn)(void);
void kt_run_host_steps(size_t n, const kt_host_step_fn *steps);
#define KT_RUN_HOST_STEPS(...)                                                              \
    kt_run_host_steps(sizeof((kt_host_step_fn[]){ __VA_ARGS__ }) / sizeof(kt_host_step_fn), \
                      (kt_host_step_fn[]){ __VA_ARGS__ })

/* A fresh context on dev and a queue (flags) on it, a recorded check for
 * each: 1 if both were made; 0 with *ctx and *q NULL (nothing held) if
 * not. */
#define KT_OPEN_QUEUE(dev, flags, ctx, q) kt_open_queue_at(__FILE__, __LINE__, dev, flags, ctx, q)
int kt_open_queue_at(const char *file, int line, kiln_device *dev, unsigned flags,
                     kiln_context **ctx, kiln_queue **q);
/* Builds src (options opts, may be NULL) on ctx into *prog, then creates
 * its kernels: the arguments after prog are pairs of a kernel name and a
 * kiln_kernel ** to fill, KT_BUILD(ctx, src, NULL, &p, "inc", &inc,
 * "twice", &twice). A recorded check for each step (the kernels are not
 * created when the build fails); 1 if every step succeeded. */
#define KT_BUILD(ctx, src, opts, prog, ...) \
    kt_build_at(__FILE__, __LINE__, ctx, src, opts, prog, __VA_ARGS__, (const char *)NULL)
int kt_build_at(const char *file, int line, kiln_context *ctx, const char *src,
                const kiln_program_opts *opts, kiln_program **prog, ...);

/* The event tests' fixture: a queue with two kernels on (KILN_GLOBAL int
 * *x, int n), inc (x[i] += 1) and twice (x[i] *= 2), for i < n.
 * kt_inc_twice_open opens it on q (retained) or, when q is NULL, on a
 * fresh context and queue of dev: 1 if it was opened and both kernels
 * were built (recorded checks). kt_inc_twice_close releases what it holds
 * (also after a failed open). */
typedef struct kt_inc_twice {
    kiln_context *ctx;
    kiln_queue *q;
    kiln_program *prog;
    kiln_kernel *inc;   /* x[i] += 1 */
    kiln_kernel *twice; /* x[i] *= 2 */
} kt_inc_twice;
int kt_inc_twice_open(kt_inc_twice *f, kiln_queue *q, kiln_device *dev);
void kt_inc_twice_close(kt_inc_twice *f);

/* 1 if the event has completed (not queued, running or failed): for
 * checks that a gated command did not run early. */
int kt_event_done(kiln_event *e);
/* MurmurHash3's finalisers (fmix32, fmix64): the hashes kiln's hash
 * tables use, for reference tables on the host. */
uint32_t kt_fmix32(uint32_t h);
uint64_t kt_fmix64(uint64_t k);

/* 1 if out[g] is the sum of in[g*lsz .. g*lsz+lsz) for each of the groups
 * (the reference of the work-group sum kernels). */
int kt_group_sums_ok(const int *in, const int *out, size_t groups, size_t lsz);
/* Fills name (cap bytes) with cap-1 copies of c and a NUL: a name longer
 * than any kiln takes. */
void kt_long_name(char *name, size_t cap, char c);

/* Deterministic pseudo-random numbers (xorshift64*), seeded by $KILN_TEST_SEED
 * or a fixed default; the seed is printed so a failure can be replayed. */
uint64_t kt_rand_u64(void);
double kt_rand_unit(void); /* [0, 1) */

/* Awkward sizes every algorithm test should cover: 0, 1, primes, 2^k±1, and
 * several work-groups' worth. Returns the count, fills sizes (capacity 64). */
size_t kt_awkward_sizes(size_t *sizes, size_t max_size);

/* The ten numeric dtypes every algorithm test covers (no float16), and
 * element access through a double (exact for every value of up to 32 bits
 * and for float64; 64-bit integers beyond 2^53 round). */
extern const kiln_dtype kt_dtypes[10];
#define KT_NDTYPES 10
double kt_get(kiln_dtype d, const void *p, size_t i);
void kt_set(kiln_dtype d, void *p, size_t i, double v);

/* Releases the n arrays (NULL ones are skipped). */
void kt_release_arrays(size_t n, kiln_array *const *arrays);
/* kt_release(h): the kiln release function of h's handle type, called on
 * h (NULL is a no-op for every one of them). KT_RELEASE(e, b, k, p)
 * releases the handles named, in that order (up to 16). */
// clang-format off
#define kt_release(h)                                                                              \
    _Generic((h),                                                                                  \
        kiln_allocate *: kiln_allocate_release,                                                    \
        kiln_array *: kiln_array_release,                                                          \
        kiln_buffer *: kiln_buffer_release,                                                        \
        kiln_context *: kiln_context_release,                                                      \
        kiln_elementwise *: kiln_elementwise_release,                                              \
        kiln_event *: kiln_event_release,                                                          \
        kiln_future *: kiln_future_release,                                                        \
        kiln_graph *: kiln_graph_release,                                                          \
        kiln_graph_exec *: kiln_graph_exec_release,                                                \
        kiln_hash_table *: kiln_hash_table_release,                                                \
        kiln_kernel *: kiln_kernel_release,                                                        \
        kiln_offload *: kiln_offload_release,                                                      \
        kiln_program *: kiln_program_release,                                                      \
        kiln_queue *: kiln_queue_release,                                                          \
        kiln_reduction *: kiln_reduction_release,                                                  \
        kiln_rng *: kiln_rng_release,                                                              \
        kiln_scan *: kiln_scan_release,                                                            \
        kiln_select *: kiln_select_release)(h)
// clang-format on
#define KT_NARGS_(...) \
    KT_NARGS_N_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define KT_NARGS_N_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define KT_CAT_(a, b) KT_CAT2_(a, b)
#define KT_CAT2_(a, b) a##b
#define KT_REL1_(h) kt_release(h)
#define KT_REL2_(h, ...) kt_release(h), KT_REL1_(__VA_ARGS__)
#define KT_REL3_(h, ...) kt_release(h), KT_REL2_(__VA_ARGS__)
#define KT_REL4_(h, ...) kt_release(h), KT_REL3_(__VA_ARGS__)
#define KT_REL5_(h, ...) kt_release(h), KT_REL4_(__VA_ARGS__)
#define KT_REL6_(h, ...) kt_release(h), KT_REL5_(__VA_ARGS__)
#define KT_REL7_(h, ...) kt_release(h), KT_REL6_(__VA_ARGS__)
#define KT_REL8_(h, ...) kt_release(h), KT_REL7_(__VA_ARGS__)
#define KT_REL9_(h, ...) kt_release(h), KT_REL8_(__VA_ARGS__)
#define KT_REL10_(h, ...) kt_release(h), KT_REL9_(__VA_ARGS__)
#define KT_REL11_(h, ...) kt_release(h), KT_REL10_(__VA_ARGS__)
#define KT_REL12_(h, ...) kt_release(h), KT_REL11_(__VA_ARGS__)
#define KT_REL13_(h, ...) kt_release(h), KT_REL12_(__VA_ARGS__)
#define KT_REL14_(h, ...) kt_release(h), KT_REL13_(__VA_ARGS__)
#define KT_REL15_(h, ...) kt_release(h), KT_REL14_(__VA_ARGS__)
#define KT_REL16_(h, ...) kt_release(h), KT_REL15_(__VA_ARGS__)
#define KT_RELEASE(...) ((void)(KT_CAT_(KT_REL, KT_CAT_(KT_NARGS_(__VA_ARGS__), _))(__VA_ARGS__)))
/* Frees the n host blocks (free(NULL) is a no-op); KT_FREE(a, b, c) frees
 * the blocks named, in that order. */
void kt_free_all(size_t n, void *const *blocks);
#define KT_FREE(...) \
    kt_free_all(sizeof((void *[]){ __VA_ARGS__ }) / sizeof(void *), (void *[]){ __VA_ARGS__ })
/* A strided view holding a's elements (rank >= 2): a transposed copy of
 * a, transposed back. Takes over a (released); a of rank < 2 comes back
 * as it is. */
kiln_array *kt_strided_same(kiln_queue *q, kiln_array *a);
/* The scalar kiln_arg of dtype d holding the element at p (for tests that
 * loop over dtypes; user code writes KILN_ARG_F32(x) and friends). */
kiln_arg kt_arg(kiln_dtype d, const void *p);
/* v as a weak scalar of dtype d's kind (bool, int, uint64, float: never
 * above d's, so kiln converts it to d): kiln_array_binary_scalar_out's
 * operand for a test that loops over dtypes. */
kiln_arg kt_scalar(kiln_dtype d, double v);

/* A fresh directory /tmp/<prefix>-XXXXXX, its path in buf (cap bytes);
 * exits 1 when it cannot be made (perror "mkdtemp"). */
void kt_make_tmpdir(char *buf, size_t cap, const char *prefix);
/* Removes the directory dir and all in it (rm -rf); a note on stderr if
 * that fails. */
void kt_remove_tmpdir(const char *dir);
/* Runs the shell command cmd with its stdout and stderr sent to dir/out
 * and dir/err, then reads those back into out and err (outcap and errcap
 * bytes, NUL-terminated). Returns the exit status, or -1 if the command
 * did not exit normally (a crash; noted on stderr). */
int kt_run_captured(const char *cmd, const char *dir, char *out, size_t outcap, char *err,
                    size_t errcap);
/* Forks n child processes (flushing stdout and stderr first). Child c runs
 * before(c, arg) if before is not NULL, waits until all n are started,
 * then exits with fn(c, arg): the children run fn together. Waits for all
 * of them; returns how many did not exit with 0 (each noted on stdout), n
 * if the start pipe cannot be made; *signalled (if not NULL) grows by the
 * number killed by a signal. */
int kt_run_children(int n, void (*before)(int c, void *arg), int (*fn)(int c, void *arg), void *arg,
                    int *signalled);
/* Reads a whole (small) file into buf, NUL-terminated; "" if unreadable. */
void kt_slurp(const char *path, char *buf, size_t cap);
/* Writes head (if not NULL) then size bytes of data to dir/name, a
 * recorded check for each step (the tests' KT_*_DIR dumps). */
void kt_save(const char *dir, const char *name, const char *head, const void *data, size_t size);

#endif
