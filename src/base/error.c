/* Per-thread error detail: the message, the driver's code, the build log. */
#include "base/error.h"
#include "base/strbuf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KILN__MESSAGE_MAX 4096

static _Thread_local char kiln__message[KILN__MESSAGE_MAX];
static _Thread_local long kiln__native;
/* The build log can be long; it is heap-allocated and freed at thread exit
 * by the destructor below (a _Thread_local pointer alone would leak). */
static _Thread_local char *kiln__build_log;

#include <pthread.h>
static pthread_key_t kiln__log_key;
static pthread_once_t kiln__log_once = PTHREAD_ONCE_INIT;
static void kiln__log_free(void *p) {
    free(p);
}
static void kiln__log_key_init(void) {
    pthread_key_create(&kiln__log_key, kiln__log_free);
}

kiln_status kiln__error_set(kiln_status status, long native, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kiln__message, sizeof kiln__message, fmt, ap);
    va_end(ap);
    kiln__native = native;
    return status;
}

kiln_status kiln__error_prefix(kiln_status status, const char *fmt, ...) {
    char prefix[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Build "prefix: old" by hand: snprintf into the same size would warn
     * about truncation, which is what we want here. */
    char old[KILN__MESSAGE_MAX];
    memcpy(old, kiln__message, sizeof old);
    size_t plen = strlen(prefix), olen = strnlen(old, sizeof old - 1);
    /* A message that already names the call keeps one prefix, not two
     * ("kiln_x: kiln_x: ..."; issue 41). */
    if (plen && olen >= plen && !memcmp(old, prefix, plen) && (old[plen] == ':' || !old[plen]))
        return status;
    if (plen > sizeof kiln__message - 3)
        plen = sizeof kiln__message - 3;
    memcpy(kiln__message, prefix, plen);
    memcpy(kiln__message + plen, ": ", 2);
    size_t room = sizeof kiln__message - plen - 3;
    if (olen > room)
        olen = room;
    assert(plen + 2 + olen < sizeof kiln__message && "a prefixed message inside its buffer");
    memcpy(kiln__message + plen + 2, old, olen);
    kiln__message[plen + 2 + olen] = 0;
    return status;
}

void kiln__error_save(kiln__error_saved *saved) {
    _Static_assert(sizeof saved->message == KILN__MESSAGE_MAX, "message sizes");
    saved->native = kiln__native;
    memcpy(saved->message, kiln__message, sizeof saved->message);
}

void kiln__error_restore(const kiln__error_saved *saved) {
    kiln__native = saved->native;
    memcpy(kiln__message, saved->message, sizeof kiln__message);
}

void kiln__error_set_build_log(const char *log) {
    pthread_once(&kiln__log_once, kiln__log_key_init);
    free(kiln__build_log);
    kiln__build_log = log ? kiln__strdup(log) : NULL;
    pthread_setspecific(kiln__log_key, kiln__build_log);
}

const char *kiln_last_error_message(void) {
    return kiln__message;
}
long kiln_last_error_native(void) {
    return kiln__native;
}
const char *kiln_last_build_log(void) {
    return kiln__build_log ? kiln__build_log : "";
}

const char *kiln_status_name(kiln_status status) {
    switch (status) {
#define KILN__NAME_CASE(name, num, msg) \
    case KILN_##name:                   \
        return "KILN_" #name;
        KILN_STATUS_LIST(KILN__NAME_CASE)
#undef KILN__NAME_CASE
    }
    return "KILN_UNKNOWN_STATUS";
}

const char *kiln_status_string(kiln_status status) {
    switch (status) {
#define KILN__MSG_CASE(name, num, msg) \
    case KILN_##name:                  \
        return msg;
        KILN_STATUS_LIST(KILN__MSG_CASE)
#undef KILN__MSG_CASE
    }
    return "unknown status code";
}
