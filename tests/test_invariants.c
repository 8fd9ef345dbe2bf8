/* Invariants at the seams (issue 43): kiln asserts what its parts promise
 * each other (reference counts, state transitions, lock ownership, copy
 * bounds). Each case here breaks one on purpose through the internal door,
 * in a child process, and the child must stop at that assert (SIGABRT, the
 * assert's own words on stderr) instead of carrying on into corrupted
 * memory. A build without asserts (NDEBUG, Release) skips.
 *
 * The parent forks before it touches any device: each child opens its own. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

static kiln_queue *open_queue(void) {
    kiln_queue *q = NULL;
    if (kiln_queue_create_default(NULL, 0, &q) != KILN_OK) {
        fprintf(stderr, "no device: %s\n", kiln_last_error_message());
        _exit(3);
    }
    return q;
}

/* Reference count: a retain of a buffer whose count already reached 0. */
static void break_refcount(void) {
    kiln_queue *q = open_queue();
    kiln_buffer *b = NULL;
    if (kiln_buffer_create(kiln_queue_context(q), 64, 0, NULL, &b) != KILN_OK)
        _exit(3);
    atomic_store(&b->refs, 0); /* as after its last release */
    kiln_buffer_retain(b);
}

/* State transition: a pool block given back while its buffer still owns
 * it (as a double release would), then again by the buffer's release. */
static void break_pool_block(void) {
    kiln_queue *q = open_queue();
    kiln_buffer *b = NULL;
    if (kiln_buffer_create(kiln_queue_context(q), 4096, KILN_BUFFER_POOLED, NULL, &b) != KILN_OK ||
        !b->block)
        _exit(3);
    kiln__pool_put(kiln_queue_context(q), b->block, 1);
    kiln_buffer_release(b);
}

/* Lock ownership: the pool's lock held by this thread when an allocation
 * needs it (a self-deadlock without the assert). */
static void break_lock_twice(void) {
    kiln_queue *q = open_queue();
    kiln__lock_acquire(&kiln_queue_context(q)->pool.lock);
    kiln_buffer *b = NULL;
    kiln_buffer_create(kiln_queue_context(q), 4096, KILN_BUFFER_POOLED, NULL, &b);
}

/* Lock ownership: released by a thread that never took it. */
static void break_lock_release(void) {
    kiln__lock l;
    kiln__lock_init(&l);
    kiln__lock_release(&l);
}

/* Array view: an array whose elements reach past its buffer, handed to a
 * kernel. */
static void break_array_view(void) {
    kiln_queue *q = open_queue();
    kiln_array *a = NULL;
    size_t n = 100;
    if (kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &a) != KILN_OK)
        _exit(3);
    a->offset = 50; /* elements 50..149 of a 100-element buffer */
    kiln_array *r = NULL;
    kiln_array_unary(q, KILN_OP_NEG, a, 0, NULL, NULL, &r);
}

/* Copy bounds: a string builder whose length says more than its storage. */
static void break_copy_bounds(void) {
    kiln__sb sb = { 0 };
    kiln__sb_add(&sb, "seam");
    sb.len = sb.cap + 10;
    kiln__sb_add(&sb, "more");
}

typedef struct {
    const char *kind;
    void (*breaks)(void);
    const char *want; /* the assert's words */
} invariant_case;

static const invariant_case cases[] = {
    { "reference count", break_refcount, "retained after its last release" },
    { "pool block state", break_pool_block, "a pool block given back twice" },
    { "lock taken twice", break_lock_twice, "a lock taken twice by one thread" },
    { "lock released by a stranger", break_lock_release, "does not hold it" },
    { "array view bounds", break_array_view, "lies inside its buffer" },
    { "copy bounds", break_copy_bounds, "fits its storage" },
};

/* Runs c in a child with stderr captured; checks it died of SIGABRT at the
 * assert that names what was broken. */
static void expect_assert(const invariant_case *c) {
    int err[2];
    fflush(stdout);
    if (pipe(err) != 0) {
        CHECK_MSG(0, "pipe failed");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(err[0]);
        dup2(err[1], 2);
        c->breaks();
        _exit(0); /* reached only when nothing asserted */
    }
    close(err[1]);
    char text[8192];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof text - 1 && (r = read(err[0], text + len, sizeof text - 1 - len)) > 0)
        len += (size_t)r;
    text[len] = 0;
    close(err[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    CHECK_MSG(aborted && strstr(text, c->want), "%s: %s %d, stderr: %.400s", c->kind,
              WIFSIGNALED(status) ? "signal" : "exit",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), text);
    printf("  %-28s %s\n", c->kind, aborted ? "stopped at its assert" : "NOT stopped");
}

int main(void) {
#ifdef NDEBUG
    KT_SKIP("built with NDEBUG: kiln's asserts are compiled out");
#endif
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_assert(&cases[i]);
    return kt_report();
}
