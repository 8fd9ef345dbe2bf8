/* The CUDA backend table (temporary stub: every call reports that the CUDA
 * backend is not available yet; replaced by the real implementation). */
#include "backend/backend.h"
#include "core/error.h"

static kiln_status stub(void)
{
    return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                           "the CUDA backend is not implemented yet");
}
static kiln_status s_load(void) { return stub(); }
static kiln_status s_enum(kiln__bdevice **d, size_t *n) { *d = NULL; *n = 0; return KILN_OK; }
static kiln_status s_part(const kiln__bdevice *d, unsigned u, kiln__bdevice *s, size_t c, size_t *n) { return stub(); }
static kiln_status s_ctx(const kiln__bdevice *const *d, size_t n, void **c) { return stub(); }
static void s_rel(void *p) { (void)p; }
static kiln_status s_q(void *c, const kiln__bdevice *d, unsigned f, void **q) { return stub(); }
static kiln_status s_one(void *q) { return stub(); }
static kiln_status s_marker(void *q, int b, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_bc(void *c, size_t s, unsigned f, const void *h, void **b) { return stub(); }
static kiln_status s_bsub(void *p, size_t o, size_t s, void **b) { return stub(); }
static kiln_status s_bw(void *q, void *b, size_t o, size_t s, const void *src, int bl, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_br(void *q, void *b, size_t o, size_t s, void *dst, int bl, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_bcp(void *q, void *s, size_t so, void *d, size_t dof, size_t n, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_bf(void *q, void *b, const void *p, size_t ps, size_t o, size_t s, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_bm(void *q, void *b, unsigned f, size_t o, size_t s, void **h) { return stub(); }
static kiln_status s_bu(void *q, void *b, void *h, size_t nw, void *const *w, void **e) { return stub(); }
static const char *s_prelude(void) { return ""; }
static kiln_status s_pb(void *c, const kiln__bdevice *d, const char *src, const char *o, void **p, char **log) { return stub(); }
static kiln_status s_pbin(void *p, void **b, size_t *s) { return stub(); }
static kiln_status s_pl(void *c, const kiln__bdevice *d, const void *b, size_t s, const char *o, void **p) { return stub(); }
static kiln_status s_kc(void *p, const char *n, void **k) { return stub(); }
static kiln_status s_kl(void *q, void *k, unsigned dims, const size_t *g, const size_t *l, size_t na, const kiln__barg *a, size_t nw, void *const *w, void **e) { return stub(); }
static kiln_status s_ew(size_t n, void *const *e) { return stub(); }
static kiln_status s_es(void *e, kiln_event_state *s) { return stub(); }
static kiln_status s_et(void *e, kiln_event_times *t) { return stub(); }
static kiln_status s_en(void *e, kiln__notify_fn fn, void *a) { return stub(); }
static kiln_status s_uc(void *c, void **e) { return stub(); }
static kiln_status s_us(void *e, int f) { return stub(); }

const kiln__backend kiln__backend_cuda = {
    KILN__BACKEND_ABI, KILN_BACKEND_CUDA, "cuda",
    s_load, s_enum, s_part, s_ctx, s_rel, s_q, s_rel, s_one, s_one, s_marker,
    s_bc, s_bsub, s_rel, s_bw, s_br, s_bcp, s_bf, s_bm, s_bu,
    s_prelude, s_pb, s_pbin, s_pl, s_rel, s_kc, s_rel, s_kl,
    s_ew, s_es, s_et, s_en, s_uc, s_us, s_rel, s_rel,
};
