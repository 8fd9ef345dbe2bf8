/* Per-thread error detail, shared by the core and the backends. */
#ifndef KILN_BASE_ERROR_H
#define KILN_BASE_ERROR_H

#include "kiln.h"

/* Records the detail of a failure on this thread and returns status, so that
 * a failing path can be written `return kiln__error_set(...)`. native is the
 * driver's own code (0 if none). The message is printf-formatted and cut at
 * 4 KiB. */
kiln_status kiln__error_set(kiln_status status, long native, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Puts "prefix: " before the current message (for context added by callers
 * up the stack) and returns status. */
kiln_status kiln__error_prefix(kiln_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* This thread's message and native code, kept across a probe whose
 * failure is an answer, not an error (a successful call must leave the
 * caller's last error as it was). */
typedef struct kiln__error_saved {
    long native;
    char message[4096];
} kiln__error_saved;
void kiln__error_save(kiln__error_saved *saved);
void kiln__error_restore(const kiln__error_saved *saved);
/* Stores a copy of a compiler log as this thread's last build log. */
void kiln__error_set_build_log(const char *log);

/* The name of the first NULL of the pointers given (the text of the
 * argument), NULL when none is: the "fn: <name> is NULL" checks of several
 * arguments at once. */
#define KILN__FIRST_NULL2(a, b) (!(a) ? #a : !(b) ? #b : NULL)
#define KILN__FIRST_NULL3(a, b, c) (!(a) ? #a : KILN__FIRST_NULL2(b, c))
#define KILN__FIRST_NULL4(a, b, c, d) (!(a) ? #a : KILN__FIRST_NULL3(b, c, d))

#endif
