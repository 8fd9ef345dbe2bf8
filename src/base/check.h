/* A checker of arguments with a sticky status (issue 43, item 3): the
 * first failed check wins and every check after it is a no-op, so a
 * function's argument checks read as a list instead of a ladder of
 * `if (st == KILN_OK)`:
 *
 *     kiln__check ck = KILN__CHECK_INIT;
 *     KILN__CHECK_CALL(&ck, check_array(queue, keys, what, "keys"));
 *     KILN__CHECK(&ck, keys_out->dtype == keys->dtype, KILN_ERROR_MISMATCH,
 *                 "%s: keys_out is %s but keys %s", what, ...);
 *     if (ck.st != KILN_OK)
 *         return ck.st;
 *
 * Both are macros so that a later check's condition and message arguments
 * are not evaluated once an earlier one failed (a NULL found by one check
 * is never dereferenced by the next). The message is set through
 * kiln__error_set, as a plain `return kiln__error_set(...)` would. The
 * chain of enqueued commands (src/algo/gen/chain.h) keeps its status the
 * same way. */
#ifndef KILN_BASE_CHECK_H
#define KILN_BASE_CHECK_H

#include "base/error.h"
#include "kiln.h"

typedef struct kiln__check {
    kiln_status st; /* KILN_OK, or the first failure */
} kiln__check;

#define KILN__CHECK_INIT \
    { KILN_OK }

/* Unless ck has failed already: fails it with status and the message when
 * cond is false. The value is ck's status. */
#define KILN__CHECK(ck, cond, status, ...)                                                   \
    ((ck)->st == KILN_OK && !(cond) ? ((ck)->st = kiln__error_set((status), 0, __VA_ARGS__)) \
                                    : (ck)->st)

/* Unless ck has failed already: runs call (a kiln_status expression) and
 * keeps its status. The value is ck's status. */
#define KILN__CHECK_CALL(ck, call) ((ck)->st == KILN_OK ? ((ck)->st = (call)) : (ck)->st)

#endif
