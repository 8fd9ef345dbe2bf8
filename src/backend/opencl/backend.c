/* The OpenCL backend table (temporary stubs while the real files land). */
#include "backend/backend.h"
#include "core/error.h"

static kiln_status st(void) { return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "OpenCL backend: not implemented yet"); }
static kiln_status load(void) { return st(); }
static kiln_status enumerate(kiln__bdevice **d, size_t *c) { *d = NULL; *c = 0; return st(); }
static kiln_status partition(const kiln__bdevice *d, unsigned u, kiln__bdevice *s, size_t cap, size_t *c) { return st(); }
static kiln_status context_create(const kiln__bdevice *const *d, size_t n, void **c) { return st(); }
static void rel(void *p) { (void)p; }
static kiln_status queue_create(void *c, const kiln__bdevice *d, unsigned f, void **q) { return st(); }
static kiln_status q1(void *q) { return st(); }
static kiln_status queue_marker(void *q, int b, size_t n, void *const *w, void **e) { return st(); }
static kiln_status buffer_create(void *c, size_t s, unsigned f, const void *h, void **b) { return st(); }
static kiln_status buffer_create_sub(void *p, size_t o, size_t s, void **b) { return st(); }
static kiln_status buffer_write(void *q, void *b, size_t o, size_t s, const void *src, int bl, size_t n, void *const *w, void **e) { return st(); }
static kiln_status buffer_read(void *q, void *b, size_t o, size_t s, void *dst, int bl, size_t n, void *const *w, void **e) { return st(); }
static kiln_status buffer_copy(void *q, void *s, size_t so, void *d, size_t dof, size_t sz, size_t n, void *const *w, void **e) { return st(); }
static kiln_status buffer_fill(void *q, void *b, const void *p, size_t ps, size_t o, size_t s, size_t n, void *const *w, void **e) { return st(); }
static kiln_status buffer_map(void *q, void *b, unsigned f, size_t o, size_t s, void **h) { return st(); }
static kiln_status buffer_unmap(void *q, void *b, void *h, size_t n, void *const *w, void **e) { return st(); }
static const char *prelude(void) { return "#line 1\n"; }
static kiln_status program_build(void *c, const kiln__bdevice *d, const char *s, const char *o, void **p, char **l) { return st(); }
static kiln_status program_binary(void *p, void **b, size_t *s) { return st(); }
static kiln_status program_load(void *c, const kiln__bdevice *d, const void *b, size_t s, const char *o, void **p) { return st(); }
static kiln_status kernel_create(void *p, const char *n, void **k) { return st(); }
static kiln_status kernel_launch(void *q, void *k, unsigned d, const size_t *g, const size_t *l, size_t na, const kiln__barg *a, size_t n, void *const *w, void **e) { return st(); }
static kiln_status event_wait(size_t n, void *const *e) { return st(); }
static kiln_status event_state(void *e, kiln_event_state *s) { return st(); }
static kiln_status event_times(void *e, kiln_event_times *t) { return st(); }
static kiln_status event_notify(void *e, kiln__notify_fn fn, void *a) { return st(); }
static kiln_status user_event_create(void *c, void **e) { return st(); }
static kiln_status user_event_set(void *e, int f) { return st(); }

const kiln__backend kiln__backend_opencl = {
    KILN__BACKEND_ABI, KILN_BACKEND_OPENCL, "opencl",
    load, enumerate, partition,
    context_create, rel, queue_create, rel, q1, q1, queue_marker,
    buffer_create, buffer_create_sub, rel, buffer_write, buffer_read,
    buffer_copy, buffer_fill, buffer_map, buffer_unmap,
    prelude, program_build, program_binary, program_load, rel,
    kernel_create, rel, kernel_launch,
    event_wait, event_state, event_times, event_notify, user_event_create,
    user_event_set, rel, rel,
};
