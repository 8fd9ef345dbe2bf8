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

/* Reads a whole (small) file into buf, NUL-terminated; "" if unreadable. */
void kt_slurp(const char *path, char *buf, size_t cap);
/* Writes head (if not NULL) then size bytes of data to dir/name, a
 * recorded check for each step (the tests' KT_*_DIR dumps). */
void kt_save(const char *dir, const char *name, const char *head, const void *data, size_t size);

#endif
