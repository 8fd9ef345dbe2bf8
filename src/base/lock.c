/* The thread identity of kiln__lock (base/lock.h): the address of a
 * thread-local byte, defined once so that every file sees the same one. */
#include "base/lock.h"

static _Thread_local char kiln__lock_me;

uintptr_t kiln__lock_self(void) {
    return (uintptr_t)&kiln__lock_me;
}
