/* Every rank from 0 to KILN_ARRAY_MAX_DIMS (8) in every array operation
 * family, against serial C references on random shapes (sizes 0 and 1
 * included) and random strided views (slices with negative steps and
 * permuted axes, which do not merge into 3 dimensions and so take the
 * generators' N-d index math): construction and info, views, permute,
 * reshape, element-wise with broadcasting, copies, reductions over sets of
 * axes (negative axes, keepdims, axes=None), concatenate and stack, sort
 * and argsort along an axis (through swapaxes views), take and put,
 * matmul batches, FFT batches, DLPack export and import. Then bad input:
 * rank 9, shapes whose element count or byte size overflows (issue 41,
 * item 2), bad axes and permutations: the documented status, a message
 * that names the call, nothing returned. Seeded by $KILN_TEST_SEED. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kiln/dlpack.h"
#include "testing/kiln_test_internal.h"

#define MD KILN_ARRAY_MAX_DIMS

typedef struct shp {
    unsigned nd;
    size_t sh[MD];
} shp;

static size_t rnd(size_t n) {
    return n ? (size_t)(kt_rand_u64() % n) : 0;
}

static size_t count(unsigned nd, const size_t *sh) {
    size_t n = 1;
    for (unsigned d = 0; d < nd; d++)
        n *= sh[d];
    return n;
}

/* A random shape of nd dimensions of at most ~cap elements: sizes 1..4
 * (smaller at high rank), one of them 0 now and then (zero != 0). */
static shp rand_shape(unsigned nd, int zero, size_t cap) {
    shp s = { .nd = nd };
    for (unsigned d = 0; d < nd; d++)
        s.sh[d] = 1 + rnd(nd > 5 ? 3 : 4);
    while (count(nd, s.sh) > cap) {
        unsigned d = (unsigned)rnd(nd);
        if (s.sh[d] > 1)
            s.sh[d]--;
    }
    if (zero && nd && rnd(8) == 0)
        s.sh[rnd(nd)] = 0;
    return s;
}

static void unravel(size_t i, unsigned nd, const size_t *sh, size_t *idx) {
    for (unsigned d = nd; d-- > 0;) {
        idx[d] = sh[d] ? i % sh[d] : 0;
        i = sh[d] ? i / sh[d] : 0;
    }
}

/* A host model of a strided view: element idx is base[off + sum idx*st]. */
typedef struct hview {
    unsigned nd;
    size_t sh[MD];
    ptrdiff_t st[MD];
    ptrdiff_t off;
} hview;

static ptrdiff_t hv_at(const hview *v, const size_t *idx) {
    ptrdiff_t o = v->off;
    for (unsigned d = 0; d < v->nd; d++)
        o += (ptrdiff_t)idx[d] * v->st[d];
    return o;
}

static hview hv_dense(unsigned nd, const size_t *sh) {
    hview v = { .nd = nd };
    ptrdiff_t s = 1;
    for (unsigned d = nd; d-- > 0;) {
        v.sh[d] = sh[d];
        v.st[d] = s;
        s *= (ptrdiff_t)sh[d];
    }
    return v;
}

/* The view's elements in C order from base. */
static void hv_gather(const hview *v, const double *base, double *out) {
    size_t n = count(v->nd, v->sh), idx[MD];
    for (size_t i = 0; i < n; i++) {
        unravel(i, v->nd, v->sh, idx);
        out[i] = base[hv_at(v, idx)];
    }
}

static double *rand_data(size_t n) {
    double *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (double)(int)rnd(2001) / 8 - 125; /* exact, distinct enough */
    return p;
}

static int same(const double *a, const double *b, size_t n, double tol) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i]))) && !(a[i] != a[i] && b[i] != b[i]))
            return 0;
    return 1;
}

static kiln_array *make(kiln_queue *q, unsigned nd, const size_t *sh, const double *host) {
    kiln_array *a = NULL;
    if (!CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT64, nd, sh, host, &a)))
        return NULL;
    return a;
}

static int read_all(kiln_queue *q, kiln_array *a, double *out) {
    return CHECK_OK(kiln_array_read(q, a, out));
}

/* A random strided view of a dense array of shape s (data base): slices
 * with steps 1, 2, -1 or -2 from random starts, then the axes permuted.
 * *hv gets its model. */
static kiln_array *rand_view(kiln_array *a, const shp *s, hview *hv) {
    kiln_slice sl[MD];
    hview h = hv_dense(s->nd, s->sh);
    for (unsigned d = 0; d < s->nd; d++) {
        ptrdiff_t n = (ptrdiff_t)s->sh[d];
        static const ptrdiff_t steps[4] = { 1, 2, -1, -2 };
        ptrdiff_t step = steps[rnd(4)], start = n ? (ptrdiff_t)rnd((size_t)n) : 0;
        if (rnd(3) == 0)
            start = step > 0 ? 0 : n - 1; /* whole dimension often */
        if (n == 0)
            start = 0;
        sl[d] = KILN_SLICE(start, step > 0 ? PTRDIFF_MAX : PTRDIFF_MIN, step);
        size_t len = n == 0     ? 0
                     : step > 0 ? (size_t)((n - start + step - 1) / step)
                                : (size_t)(start / (-step) + 1);
        if (len)
            h.off += start * h.st[d];
        h.sh[d] = len;
        h.st[d] *= step;
    }
    kiln_array *v = NULL, *p = NULL;
    if (!CHECK_OK(kiln_array_view(a, sl, &v)))
        return NULL;
    int perm[MD];
    for (unsigned d = 0; d < s->nd; d++)
        perm[d] = (int)d;
    for (unsigned d = s->nd; d > 1; d--) {
        unsigned j = (unsigned)rnd(d);
        int t = perm[d - 1];
        perm[d - 1] = perm[j];
        perm[j] = t;
    }
    int neg[MD];
    for (unsigned d = 0; d < s->nd; d++) /* some axes given as negatives */
        neg[d] = rnd(2) ? perm[d] - (int)s->nd : perm[d];
    CHECK_OK(kiln_array_permute(v, neg, &p));
    kiln_array_release(v);
    hv->nd = s->nd;
    hv->off = h.off;
    for (unsigned d = 0; d < s->nd; d++) {
        hv->sh[d] = h.sh[perm[d]];
        hv->st[d] = h.st[perm[d]];
    }
    return p;
}

/* ------------------------------------------------------------ families */

static void t_construct(kiln_queue *q) {
    for (unsigned nd = 0; nd <= MD; nd++) {
        shp s = rand_shape(nd, 1, 600);
        size_t n = count(nd, s.sh);
        double *h = rand_data(n), *back = calloc(n + 1, sizeof *back);
        kiln_array *a = make(q, nd, s.sh, h);
        if (a) {
            kiln_array_info info;
            CHECK_OK(kiln_array_get_info(a, &info));
            int ok = info.ndim == nd && info.size == n && info.contiguous;
            for (unsigned d = 0; d < MD; d++)
                ok &= info.shape[d] == (d < nd ? s.sh[d] : 1);
            CHECK_MSG(ok, "info of a %u-D array", nd);
            CHECK_MSG(read_all(q, a, back) && same(back, h, n, 0), "read back %u-D", nd);
            /* zeros / full at this rank */
            kiln_array *z = NULL;
            double seven = 7;
            if (CHECK_OK(kiln_array_full(q, KILN_FLOAT64, nd, s.sh, KILN_ARG_F64(seven), 0, NULL,
                                         NULL, &z))) {
                int all = read_all(q, z, back);
                for (size_t i = 0; all && i < n; i++)
                    all = back[i] == 7;
                CHECK_MSG(all, "full %u-D", nd);
            }
            kiln_array_release(z);
        }
        kiln_array_release(a);
        KT_FREE(h, back);
    }
}

/* views, permute, copies and unary/binary operators over them */
static void t_views(kiln_queue *q) {
    for (int rep = 0; rep < 2; rep++)
        for (unsigned nd = 0; nd <= MD; nd++) {
            shp s = rand_shape(nd, rep == 1, 700);
            size_t n = count(nd, s.sh);
            double *h = rand_data(n);
            kiln_array *a = make(q, nd, s.sh, h);
            hview hv;
            kiln_array *v = a ? rand_view(a, &s, &hv) : NULL;
            if (!v) {
                kiln_array_release(a);
                free(h);
                continue;
            }
            size_t m = count(nd, hv.sh);
            double *want = calloc(m + 1, sizeof *want), *got = calloc(m + 1, sizeof *got);
            hv_gather(&hv, h, want);
            kiln_array_info info;
            CHECK_OK(kiln_array_get_info(v, &info));
            CHECK_MSG(info.size == m && info.ndim == nd, "view info %u-D", nd);
            /* read (gathered by the copy kernel), copy into dense, neg */
            CHECK_MSG(read_all(q, v, got) && same(got, want, m, 0), "view read %u-D", nd);
            kiln_array *d = NULL, *e = NULL;
            if (CHECK_OK(kiln_array_empty(kiln_queue_context(q), KILN_FLOAT64, nd, hv.sh, &d))) {
                memset(got, 0, m * sizeof *got);
                CHECK_OK(kiln_array_copy_out(q, d, v, 0, NULL, NULL));
                CHECK_MSG(read_all(q, d, got) && same(got, want, m, 0), "copy of a %u-D view", nd);
                CHECK_OK(kiln_array_unary_out(q, KILN_OP_NEG, d, v, 0, NULL, NULL));
                int ok = read_all(q, d, got);
                for (size_t i = 0; ok && i < m; i++)
                    ok = got[i] == -want[i];
                CHECK_MSG(ok, "neg of a %u-D view", nd);
                /* out strided too: v2 = v * 2 written into a permuted copy */
                CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_MUL, v, v, KILN_ARG_F64(2), 0,
                                                      NULL, NULL));
                ok = read_all(q, v, got);
                for (size_t i = 0; ok && i < m; i++)
                    ok = got[i] == 2 * want[i];
                CHECK_MSG(ok, "in-place scalar mul of a %u-D view", nd);
                /* the whole base: doubled where the view is, else as it was */
                double *base = calloc(n + 1, sizeof *base), *wb = calloc(n + 1, sizeof *wb);
                memcpy(wb, h, n * sizeof *wb);
                size_t idx[MD];
                for (size_t i = 0; i < m; i++) {
                    unravel(i, nd, hv.sh, idx);
                    wb[hv_at(&hv, idx)] = 2 * want[i];
                }
                CHECK_MSG(read_all(q, a, base) && same(base, wb, n, 0),
                          "a strided %u-D store leaves the rest", nd);
                KT_FREE(base, wb);
            }
            /* the view made dense then reshaped flat and back */
            if (d && CHECK_OK(kiln_array_copy_out(q, d, v, 0, NULL, NULL))) {
                size_t flat = m;
                if (CHECK_OK(kiln_array_reshape(d, 1, &flat, &e))) {
                    kiln_array *back = NULL;
                    size_t rev[MD];
                    for (unsigned k = 0; k < nd; k++)
                        rev[k] = hv.sh[nd - 1 - k];
                    if (CHECK_OK(kiln_array_reshape(e, nd, rev, &back))) {
                        CHECK_MSG(read_all(q, back, got), "reshape read");
                        int ok = 1;
                        for (size_t i = 0; ok && i < m; i++)
                            ok = got[i] == 2 * want[i];
                        CHECK_MSG(ok, "reshape %u-D -> 1-D -> reversed", nd);
                    }
                    kiln_array_release(back);
                }
            }
            /* NULL axes: the reversed transpose */
            kiln_array *t = NULL;
            if (CHECK_OK(kiln_array_permute(a, NULL, &t))) {
                CHECK_OK(kiln_array_get_info(t, &info));
                int ok = info.ndim == nd;
                for (unsigned k = 0; k < nd; k++)
                    ok &= info.shape[k] == s.sh[nd - 1 - k];
                CHECK_MSG(ok, "transpose of %u-D", nd);
            }
            KT_RELEASE(t, e, d, v, a);
            KT_FREE(h, want, got);
        }
}

/* a - b with NumPy broadcasting, a or b a strided view at times */
static void t_broadcast(kiln_queue *q) {
    for (int rep = 0; rep < 2; rep++)
        for (unsigned nd = 0; nd <= MD; nd++) {
            shp o = rand_shape(nd, rep == 1, 700);
            shp sa = { .nd = nd - (unsigned)rnd(nd + 1) },
                sb = { .nd = nd - (unsigned)rnd(nd + 1) };
            for (unsigned d = 0; d < sa.nd; d++)
                sa.sh[d] = rnd(3) ? o.sh[nd - sa.nd + d] : 1;
            for (unsigned d = 0; d < sb.nd; d++)
                sb.sh[d] = rnd(3) ? o.sh[nd - sb.nd + d] : 1;
            size_t na = count(sa.nd, sa.sh), nb = count(sb.nd, sb.sh), no = count(nd, o.sh);
            double *ha = rand_data(na), *hb = rand_data(nb), *got = calloc(no + 1, sizeof *got);
            kiln_array *a = make(q, sa.nd, sa.sh, ha), *b = make(q, sb.nd, sb.sh, hb), *out = NULL;
            /* b through a reversed double-transpose: same values, a view */
            kiln_array *bt = NULL, *btt = NULL;
            if (b && rep == 1 && CHECK_OK(kiln_array_permute(b, NULL, &bt)))
                CHECK_OK(kiln_array_permute(bt, NULL, &btt));
            if (a && b &&
                CHECK_OK(kiln_array_empty(kiln_queue_context(q), KILN_FLOAT64, nd, o.sh, &out)) &&
                CHECK_OK(
                    kiln_array_binary_out(q, KILN_OP_SUB, out, a, btt ? btt : b, 0, NULL, NULL)) &&
                read_all(q, out, got)) {
                int ok = 1;
                size_t idx[MD];
                for (size_t i = 0; ok && i < no; i++) {
                    unravel(i, nd, o.sh, idx);
                    size_t ia = 0, ib = 0;
                    for (unsigned d = 0; d < sa.nd; d++)
                        ia = ia * sa.sh[d] + (sa.sh[d] == 1 ? 0 : idx[nd - sa.nd + d]);
                    for (unsigned d = 0; d < sb.nd; d++)
                        ib = ib * sb.sh[d] + (sb.sh[d] == 1 ? 0 : idx[nd - sb.nd + d]);
                    ok = got[i] == ha[ia] - hb[ib];
                }
                CHECK_MSG(ok, "broadcast sub at rank %u (a %u-D, b %u-D)", nd, sa.nd, sb.nd);
            }
            KT_RELEASE(a, b, bt, btt, out);
            KT_FREE(ha, hb, got);
        }
}

/* reductions over random sets of axes */
static void t_reduce(kiln_queue *q) {
    static const kiln_reduce_op ops[] = { KILN_REDUCE_SUM, KILN_REDUCE_MAX, KILN_REDUCE_MEAN,
                                          KILN_REDUCE_ARGMAX };
    for (int rep = 0; rep < 3; rep++)
        for (unsigned nd = 0; nd <= MD; nd++)
            for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
                kiln_reduce_op op = ops[oi];
                int arg = op == KILN_REDUCE_ARGMAX;
                if (arg && nd == 0)
                    continue;
                shp s = rand_shape(nd, rep == 2, 700);
                size_t n = count(nd, s.sh);
                double *h = rand_data(n);
                kiln_array *a = make(q, nd, s.sh, h), *src = a;
                hview hv = hv_dense(nd, s.sh);
                if (a && rep == 1)
                    src = rand_view(a, &s, &hv);
                if (!src) {
                    kiln_array_release(a);
                    free(h);
                    continue;
                }
                size_t m = count(nd, hv.sh);
                double *x = calloc(m + 1, sizeof *x);
                hv_gather(&hv, h, x);
                /* the axes: a random subset (one for argmax), some negative;
                 * now and then NULL (all) */
                int axes[MD];
                unsigned char red[MD] = { 0 };
                size_t na = 0;
                int all = !arg && rnd(5) == 0;
                for (unsigned d = 0; d < nd; d++)
                    if (all || (!arg && rnd(2)))
                        red[d] = 1;
                if (arg)
                    red[rnd(nd)] = 1;
                for (unsigned d = nd; d-- > 0;) /* in any order */
                    if (red[d])
                        axes[na++] = rnd(2) ? (int)d - (int)nd : (int)d;
                int keep = (int)rnd(2);
                size_t osh[MD], outer = 1, len = 1;
                unsigned ond = 0;
                for (unsigned d = 0; d < nd; d++) {
                    if (!red[d])
                        osh[ond++] = hv.sh[d], outer *= hv.sh[d];
                    else {
                        len *= hv.sh[d];
                        if (keep)
                            osh[ond++] = 1;
                    }
                }
                kiln_array *out = NULL;
                kiln_status st = kiln_array_reduce_axes(q, op, src, na, all ? NULL : axes, keep, 0,
                                                        NULL, NULL, &out);
                if ((op == KILN_REDUCE_MAX || arg) && len == 0 && outer > 0) {
                    CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT && !out,
                              "empty max over axes at rank %u: %d", nd, (int)st);
                } else if (CHECK_OK(st)) {
                    kiln_array_info info;
                    CHECK_OK(kiln_array_get_info(out, &info));
                    int ok = info.ndim == ond && info.size == outer;
                    for (unsigned d = 0; d < ond; d++)
                        ok &= info.shape[d] == osh[d];
                    CHECK_MSG(ok, "reduce_axes shape at rank %u (%u axes, keepdims %d)", nd,
                              (unsigned)na, keep);
                    /* the reference: each element folded into its output */
                    double *want = calloc(outer + 1, sizeof *want);
                    double *cnt = calloc(outer + 1, sizeof *cnt);
                    double *got = calloc(outer + 1, sizeof *got);
                    for (size_t o = 0; o < outer; o++)
                        want[o] = op == KILN_REDUCE_MAX || arg ? -HUGE_VAL : 0;
                    size_t idx[MD];
                    for (size_t i = 0; i < m; i++) {
                        unravel(i, nd, hv.sh, idx);
                        size_t o = 0, k = 0;
                        for (unsigned d = 0; d < nd; d++)
                            if (!red[d])
                                o = o * hv.sh[d] + idx[d];
                            else
                                k = idx[d];
                        if (op == KILN_REDUCE_MAX)
                            want[o] = x[i] > want[o] ? x[i] : want[o];
                        else if (arg) {
                            if (x[i] > want[o]) {
                                want[o] = x[i];
                                cnt[o] = (double)k;
                            }
                        } else {
                            want[o] += x[i];
                            cnt[o] += 1;
                        }
                    }
                    if (arg)
                        for (size_t o = 0; o < outer; o++)
                            want[o] = cnt[o];
                    if (op == KILN_REDUCE_MEAN)
                        for (size_t o = 0; o < outer; o++)
                            want[o] = cnt[o] ? want[o] / cnt[o] : NAN;
                    if (arg) {
                        int64_t *gi = calloc(outer + 1, sizeof *gi);
                        ok = CHECK_OK(kiln_array_read(q, out, gi));
                        for (size_t o = 0; ok && o < outer; o++)
                            ok = (double)gi[o] == want[o];
                        free(gi);
                    } else {
                        ok = read_all(q, out, got) && same(got, want, outer, 1e-12);
                    }
                    CHECK_MSG(ok, "reduce op %d over %zu axes at rank %u (%s)", (int)op, na, nd,
                              src == a ? "dense" : "strided view");
                    KT_FREE(want, cnt, got);
                }
                kiln_array_release(out);
                if (src != a)
                    kiln_array_release(src);
                kiln_array_release(a);
                KT_FREE(h, x);
            }
    /* the single-axis call at rank 8, a negative axis */
    size_t sh[MD] = { 2, 1, 3, 2, 1, 2, 3, 2 };
    size_t n = count(MD, sh);
    double *h = rand_data(n), got[144], want[144] = { 0 };
    kiln_array *a = make(q, MD, sh, h), *out = NULL;
    if (a && CHECK_OK(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, a, -3, 0, 0, NULL, NULL, &out)) &&
        read_all(q, out, got)) {
        for (size_t i = 0; i < n; i++) {
            size_t idx[MD], o = 0;
            unravel(i, MD, sh, idx);
            for (unsigned d = 0; d < MD; d++)
                if (d != 5)
                    o = o * sh[d] + idx[d];
            want[o] += h[i];
        }
        CHECK_MSG(same(got, want, n / 2, 0), "kiln_array_reduce_axis axis -3 of 8-D");
    }
    KT_RELEASE(out, a);
    free(h);
}

static void t_join(kiln_queue *q) {
    for (unsigned nd = 1; nd <= MD; nd++) {
        shp s = rand_shape(nd, 1, 300);
        int ax = (int)rnd(nd);
        int axarg = rnd(2) ? ax - (int)nd : ax;
        kiln_array *in[3] = { 0 };
        double *h[3];
        size_t len[3], tot = 0;
        shp si[3];
        for (int k = 0; k < 3; k++) {
            si[k] = s;
            si[k].sh[ax] = len[k] = rnd(4);
            tot += len[k];
            h[k] = rand_data(count(nd, si[k].sh));
            in[k] = make(q, nd, si[k].sh, h[k]);
        }
        kiln_array *out = NULL;
        shp so = s;
        so.sh[ax] = tot;
        size_t no = count(nd, so.sh);
        double *got = calloc(no + 1, sizeof *got);
        if (in[0] && in[1] && in[2] &&
            CHECK_OK(kiln_array_concatenate(q, 3, in, axarg, 0, NULL, NULL, &out)) &&
            read_all(q, out, got)) {
            int ok = 1;
            size_t idx[MD];
            for (size_t i = 0; ok && i < no; i++) {
                unravel(i, nd, so.sh, idx);
                int k = 0;
                size_t j = idx[ax];
                while (j >= len[k])
                    j -= len[k++];
                idx[ax] = j;
                size_t f = 0;
                for (unsigned d = 0; d < nd; d++)
                    f = f * si[k].sh[d] + idx[d];
                ok = got[i] == h[k][f];
            }
            CHECK_MSG(ok, "concatenate 3 %u-D arrays along axis %d", nd, axarg);
        }
        kiln_array_release(out);
        out = NULL;
        free(got);
        for (int k = 0; k < 3; k++) {
            kiln_array_release(in[k]);
            free(h[k]);
        }
    }
    /* stack: ranks 0..7 into 1..8 */
    for (unsigned nd = 0; nd < MD; nd++) {
        shp s = rand_shape(nd, 1, 300);
        size_t n = count(nd, s.sh);
        int ax = (int)rnd(nd + 1);
        double *h0 = rand_data(n), *h1 = rand_data(n), *got = calloc(2 * n + 1, sizeof *got);
        kiln_array *in[2] = { make(q, nd, s.sh, h0), make(q, nd, s.sh, h1) }, *out = NULL;
        if (in[0] && in[1] && CHECK_OK(kiln_array_stack(q, 2, in, ax, 0, NULL, NULL, &out)) &&
            read_all(q, out, got)) {
            size_t osh[MD], idx[MD];
            for (unsigned d = 0, j = 0; d <= nd; d++)
                osh[d] = (int)d == ax ? 2 : s.sh[j++];
            int ok = 1;
            for (size_t i = 0; ok && i < 2 * n; i++) {
                unravel(i, nd + 1, osh, idx);
                size_t f = 0;
                for (unsigned d = 0; d <= nd; d++)
                    if ((int)d != ax)
                        f = f * osh[d] + idx[d];
                ok = got[i] == (idx[ax] ? h1 : h0)[f];
            }
            CHECK_MSG(ok, "stack 2 %u-D arrays at axis %d", nd, ax);
        }
        KT_RELEASE(out, in[0], in[1]);
        KT_FREE(h0, h1, got);
    }
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sort and argsort along any axis: swapaxes views of in and out */
static void t_sort(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (unsigned nd = 1; nd <= MD; nd++) {
        shp s = rand_shape(nd, 1, 500);
        size_t n = count(nd, s.sh);
        unsigned ax = (unsigned)rnd(nd);
        double *h = rand_data(n), *got = calloc(n + 1, sizeof *got);
        int64_t *gi = calloc(n + 1, sizeof *gi);
        kiln_array *a = make(q, nd, s.sh, h), *o = NULL, *oi = NULL;
        kiln_array *av = NULL, *ov = NULL, *oiv = NULL;
        if (a && CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, nd, s.sh, &o)) &&
            CHECK_OK(kiln_array_empty(c, KILN_INT64, nd, s.sh, &oi)) &&
            CHECK_OK(kiln_array_swapaxes(a, ax, nd - 1, &av)) &&
            CHECK_OK(kiln_array_swapaxes(o, ax, nd - 1, &ov)) &&
            CHECK_OK(kiln_array_swapaxes(oi, ax, nd - 1, &oiv)) &&
            CHECK_OK(kiln_array_sort_out(q, ov, NULL, av, NULL, NULL, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_argsort_out(q, oiv, av, NULL, 0, NULL, NULL)) &&
            read_all(q, o, got) && CHECK_OK(kiln_array_read(q, oi, gi))) {
            /* each line along ax sorted on the host */
            size_t L = s.sh[ax], inner = 1;
            for (unsigned d = ax + 1; d < nd; d++)
                inner *= s.sh[d];
            size_t lines = L ? n / L : 0;
            double *line = calloc(L + 1, sizeof *line);
            int ok = 1, okix = 1;
            for (size_t r = 0; r < lines; r++) {
                size_t base = (r / inner) * L * inner + r % inner;
                for (size_t k = 0; k < L; k++)
                    line[k] = h[base + k * inner];
                qsort(line, L, sizeof *line, cmp_d);
                for (size_t k = 0; k < L; k++) {
                    ok &= got[base + k * inner] == line[k];
                    int64_t j = gi[base + k * inner];
                    okix &= j >= 0 && (size_t)j < L && h[base + (size_t)j * inner] == line[k];
                }
            }
            CHECK_MSG(ok, "sort of %u-D along axis %u", nd, ax);
            CHECK_MSG(okix, "argsort of %u-D along axis %u", nd, ax);
            free(line);
        }
        KT_RELEASE(av, ov, oiv, a, o, oi);
        KT_FREE(h, got, gi);
    }
}

static size_t wrap_ix(int64_t j, size_t n) {
    int64_t r = j % (int64_t)n;
    return (size_t)(r < 0 ? r + (int64_t)n : r);
}

static void t_take_put(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (unsigned nd = 0; nd <= MD; nd++) {
        shp s = rand_shape(nd, 0, 400), si = rand_shape((unsigned)rnd(MD + 1), 1, 200);
        size_t n = count(nd, s.sh), ni = count(si.nd, si.sh);
        double *h = rand_data(n), *got = calloc(ni + n + 1, sizeof *got);
        int64_t *ix = calloc(ni + 1, sizeof *ix);
        for (size_t k = 0; k < ni; k++)
            ix[k] = (int64_t)rnd(4 * n) - 2 * (int64_t)n;
        kiln_array *a = make(q, nd, s.sh, h), *idx = NULL, *out = NULL;
        if (a && CHECK_OK(kiln_array_from_host(c, KILN_INT64, si.nd, si.sh, ix, &idx)) &&
            CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, si.nd, si.sh, &out)) &&
            CHECK_OK(kiln_array_take_out(q, out, a, idx, KILN_INDEX_WRAP, 0, NULL, NULL)) &&
            read_all(q, out, got)) {
            int ok = 1;
            for (size_t k = 0; ok && k < ni; k++)
                ok = got[k] == h[wrap_ix(ix[k], n)];
            CHECK_MSG(ok, "take from %u-D with %u-D indices", nd, si.nd);
        }
        /* put: the last value of a repeated index wins */
        double *vals = rand_data(ni), *want = calloc(n + 1, sizeof *want);
        memcpy(want, h, n * sizeof *want);
        for (size_t k = 0; k < ni; k++)
            want[wrap_ix(ix[k], n)] = vals[k];
        kiln_array *v = NULL;
        if (a && idx && CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, si.nd, si.sh, vals, &v)) &&
            CHECK_OK(kiln_array_put(q, a, idx, v, KILN_INDEX_WRAP, KILN_PUT_ASSIGN_LAST, 0, NULL,
                                    NULL)) &&
            read_all(q, a, got))
            CHECK_MSG(same(got, want, n, 0), "put into %u-D with %u-D indices", nd, si.nd);
        KT_RELEASE(v, a, idx, out);
        KT_FREE(h, got, ix, vals, want);
    }
}

static void t_matmul(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (unsigned nd = 2; nd <= MD; nd++) {
        shp b = rand_shape(nd - 2, 0, 12);
        size_t B = count(b.nd, b.sh), m = 1 + rnd(3), k = 1 + rnd(3), n = 1 + rnd(3);
        int a2 = rnd(3) == 0; /* a one matrix for all */
        size_t sha[MD], shb[MD], shc[MD];
        memcpy(sha, b.sh, sizeof b.sh);
        memcpy(shb, b.sh, sizeof b.sh);
        memcpy(shc, b.sh, sizeof b.sh);
        sha[nd - 2] = m, sha[nd - 1] = k;
        shb[nd - 2] = k, shb[nd - 1] = n;
        shc[nd - 2] = m, shc[nd - 1] = n;
        unsigned nda = a2 ? 2 : nd;
        size_t *pa = a2 ? sha + nd - 2 : sha;
        double *ha = rand_data((a2 ? 1 : B) * m * k), *hb = rand_data(B * k * n);
        double *got = calloc(B * m * n + 1, sizeof *got);
        kiln_array *A = make(q, nda, pa, ha), *Bm = make(q, nd, shb, hb), *C = NULL;
        if (A && Bm && CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, nd, shc, &C))) {
            kiln_status st = kiln_linalg_matmul_out(q, C, A, Bm, 0, NULL, NULL);
            if (st == KILN_ERROR_UNSUPPORTED || st == KILN_ERROR_NO_RUNTIME) {
                printf("note: no BLAS here (%s): matmul batches not run\n",
                       kiln_last_error_message());
            } else if (CHECK_OK(st) && read_all(q, C, got)) {
                int ok = 1;
                for (size_t t = 0; t < B; t++)
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < n; j++) {
                            double s = 0;
                            for (size_t l = 0; l < k; l++)
                                s += ha[(a2 ? 0 : t) * m * k + i * k + l] *
                                     hb[t * k * n + l * n + j];
                            ok &= fabs(got[t * m * n + i * n + j] - s) <= 1e-9 * (1 + fabs(s));
                        }
                CHECK_MSG(ok, "matmul of %u-D batches (a %u-D)", nd, nda);
            }
        }
        KT_RELEASE(A, Bm, C);
        KT_FREE(ha, hb, got);
    }
}

/* complex FFT over the last `axes` dimensions, the rest a batch */
static void t_fft(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (unsigned nd = 1; nd <= MD; nd++) {
        shp s = rand_shape(nd, 0, 96);
        unsigned axes = 1 + (unsigned)rnd(nd < 3 ? nd : 3);
        size_t n = count(nd, s.sh), tl = 1;
        for (unsigned d = nd - axes; d < nd; d++)
            tl *= s.sh[d];
        double complex *h = malloc(n * sizeof *h), *got = malloc(n * sizeof *got);
        for (size_t i = 0; i < n; i++)
            h[i] = (double)rnd(17) - 8 + I * ((double)rnd(17) - 8);
        kiln_array *in = NULL, *out = NULL;
        if (CHECK_OK(kiln_array_from_host(c, KILN_COMPLEX128, nd, s.sh, h, &in)) &&
            CHECK_OK(kiln_array_empty(c, KILN_COMPLEX128, nd, s.sh, &out))) {
            kiln_status st =
                kiln_fft_c2c_out(q, out, in, axes, 0, KILN_FFT_NORM_BACKWARD, 0, NULL, NULL);
            if (st == KILN_ERROR_UNSUPPORTED || st == KILN_ERROR_NO_RUNTIME) {
                printf("note: no FFT here (%s): FFT batches not run\n", kiln_last_error_message());
            } else if (CHECK_OK(st) && CHECK_OK(kiln_array_read(q, out, got))) {
                int ok = 1;
                size_t idx[MD], jdx[MD];
                for (size_t i = 0; i < n; i++) {
                    unravel(i, nd, s.sh, idx);
                    double complex sum = 0;
                    size_t batch0 = i - i % tl;
                    for (size_t j = 0; j < tl; j++) {
                        unravel(batch0 + j, nd, s.sh, jdx);
                        double ph = 0;
                        for (unsigned d = nd - axes; d < nd; d++)
                            ph += (double)(idx[d] * jdx[d] % s.sh[d]) / (double)s.sh[d];
                        sum += h[batch0 + j] * cexp(-2 * M_PI * I * ph);
                    }
                    ok &= cabs(got[i] - sum) <= 1e-9 * (1 + cabs(sum));
                }
                CHECK_MSG(ok, "fft over the last %u axes of %u-D", axes, nd);
            }
        }
        KT_RELEASE(in, out);
        KT_FREE(h, got);
    }
}

static void t_dlpack(kiln_queue *q) {
    for (unsigned nd = 0; nd <= MD; nd++) {
        shp s = rand_shape(nd, 0, 500);
        size_t n = count(nd, s.sh);
        double *h = rand_data(n);
        kiln_array *a = make(q, nd, s.sh, h);
        hview hv;
        kiln_array *v = a ? rand_view(a, &s, &hv) : NULL;
        DLManagedTensor *t = NULL;
        if (v && CHECK_OK(kiln_array_to_dlpack(q, v, &t))) {
            size_t m = count(nd, hv.sh);
            double *want = calloc(m + 1, sizeof *want), *got = calloc(m + 1, sizeof *got);
            hv_gather(&hv, h, want);
            DLTensor *dt = &t->dl_tensor;
            int ok = dt->ndim == (int32_t)nd;
            for (unsigned d = 0; ok && d < nd; d++)
                ok = dt->shape[d] == (int64_t)hv.sh[d] &&
                     (hv.sh[d] < 2 || dt->strides[d] == hv.st[d]);
            CHECK_MSG(ok, "DLPack export of a %u-D view: ndim, shape, strides", nd);
            if (ok && dt->device.device_type == kDLCPU && m) {
                const double *e0 = (const double *)((const char *)dt->data + dt->byte_offset);
                size_t idx[MD];
                for (size_t i = 0; i < m; i++) {
                    unravel(i, nd, hv.sh, idx);
                    ptrdiff_t o = 0;
                    for (unsigned d = 0; d < nd; d++)
                        o += (ptrdiff_t)idx[d] * (ptrdiff_t)dt->strides[d];
                    ok &= e0[o] == want[i];
                }
                CHECK_MSG(ok, "DLPack export of a %u-D view: the data", nd);
            }
            /* and back: a host tensor is copied into a new array */
            kiln_array *b = NULL;
            if (CHECK_OK(kiln_array_from_dlpack(kiln_queue_context(q), t, &b))) {
                kiln_array_info info;
                CHECK_OK(kiln_array_get_info(b, &info));
                CHECK_MSG(info.ndim == nd && info.size == m, "DLPack import %u-D", nd);
                CHECK_MSG(read_all(q, b, got) && same(got, want, m, 0), "DLPack round trip %u-D",
                          nd);
                kiln_array_release(b);
            } else if (t->deleter) {
                t->deleter(t);
            }
            KT_FREE(want, got);
        }
        KT_RELEASE(v, a);
        free(h);
    }
}

/* where (three operands broadcast), astype, mask_fill and cumsum over
 * strided views of every rank */
static void t_misc(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    for (unsigned nd = 0; nd <= MD; nd++) {
        shp s = rand_shape(nd, 1, 500);
        size_t n = count(nd, s.sh);
        double *h = rand_data(n), *h2 = rand_data(n);
        kiln_array *a = make(q, nd, s.sh, h), *b = make(q, nd, s.sh, h2);
        hview hv;
        kiln_array *v = a ? rand_view(a, &s, &hv) : NULL;
        if (!v || !b) {
            KT_RELEASE(v, a, b);
            KT_FREE(h, h2);
            continue;
        }
        size_t m = count(nd, hv.sh);
        double *x = calloc(m + 1, sizeof *x), *got = calloc(m + 1, sizeof *got);
        int32_t *gi = calloc(m + 1, sizeof *gi);
        hv_gather(&hv, h, x);
        /* cond: x > 0 as a view (the comparison written into int32);
         * where(cond, x, -1 broadcast from a 0-d array) */
        kiln_array *cond = NULL, *mone = make(q, 0, NULL, (double[1]){ -1 }), *out = NULL;
        kiln_array *xi = NULL, *cs = NULL;
        int ok = CHECK_OK(kiln_array_empty(c, KILN_INT32, nd, hv.sh, &cond)) && mone &&
                 CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_GT, cond, v, KILN_ARG_F64(0), 0,
                                                       NULL, NULL)) &&
                 CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, nd, hv.sh, &out)) &&
                 CHECK_OK(kiln_array_where_out(q, out, cond, v, mone, 0, NULL, NULL)) &&
                 read_all(q, out, got);
        for (size_t i = 0; ok && i < m; i++)
            ok = got[i] == (x[i] > 0 ? x[i] : -1);
        CHECK_MSG(ok, "where over a %u-D view with a 0-d operand", nd);
        /* clip of the view */
        ok = CHECK_OK(kiln_array_clip_out(q, out, v, KILN_ARG_F64(-10), KILN_ARG_F64(10), 0, NULL,
                                          NULL)) &&
             read_all(q, out, got);
        for (size_t i = 0; ok && i < m; i++)
            ok = got[i] == (x[i] < -10 ? -10 : x[i] > 10 ? 10 : x[i]);
        CHECK_MSG(ok, "clip of a %u-D view", nd);
        /* astype of the view into int32 */
        ok = CHECK_OK(kiln_array_empty(c, KILN_INT32, nd, hv.sh, &xi)) &&
             CHECK_OK(kiln_array_astype_out(q, xi, v, 0, NULL, NULL)) &&
             CHECK_OK(kiln_array_read(q, xi, gi));
        for (size_t i = 0; ok && i < m; i++)
            ok = gi[i] == (int32_t)x[i];
        CHECK_MSG(ok, "astype of a %u-D view", nd);
        /* cumsum of the view (C order) */
        ok = CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, nd, hv.sh, &cs)) &&
             CHECK_OK(kiln_array_cumsum_out(q, cs, v, 0, 0, NULL, NULL)) && read_all(q, cs, got);
        double run = 0;
        for (size_t i = 0; ok && i < m; i++) {
            run += x[i];
            ok = got[i] == run;
        }
        CHECK_MSG(ok, "cumsum of a %u-D view", nd);
        /* the whole reduction and copy_if (any-shape layout) of the view */
        double sum = 0, want_sum = 0;
        size_t kept = 0;
        for (size_t i = 0; i < m; i++) {
            want_sum += x[i];
            kept += x[i] > 0;
        }
        CHECK_MSG(CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, v, &sum)) && sum == want_sum,
                  "sum of a %u-D view: %g, want %g", nd, sum, want_sum);
        kiln_array *sel = NULL;
        size_t mm = m ? m : 1;
        int64_t hc = -1;
        kiln_event *ev = NULL;
        ok = CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 1, &mm, &sel)) &&
             CHECK_OK(kiln_array_copy_if_out(q, sel, NULL, &hc, v, "x > 0", 0, NULL, &ev)) &&
             CHECK_OK(kiln_event_wait(ev)) && hc == (int64_t)kept && read_all(q, sel, got);
        for (size_t i = 0, j = 0; ok && i < m; i++)
            if (x[i] > 0)
                ok = got[j++] == x[i];
        CHECK_MSG(ok, "copy_if of a %u-D view (%lld kept, want %zu)", nd, (long long)hc, kept);
        KT_RELEASE(ev, sel);
        /* mask_fill of the view where cond: then the view reads where() */
        double z = -1;
        ok = CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_LE, cond, v, KILN_ARG_F64(0), 0, NULL,
                                                   NULL)) &&
             CHECK_OK(kiln_array_mask_fill(q, v, cond, KILN_ARG_F64(z), 0, NULL, NULL)) &&
             read_all(q, v, got);
        for (size_t i = 0; ok && i < m; i++)
            ok = got[i] == (x[i] > 0 ? x[i] : -1);
        CHECK_MSG(ok, "mask_fill of a %u-D view", nd);
        KT_RELEASE(cond, mone, out, xi, cs, v, a, b);
        KT_FREE(h, h2, x, got, gi);
    }
}

/* ------------------------------------------------------------ bad input */

static void expect_fail(kiln_status st, kiln_status want, const char *call, const char *what) {
    const char *msg = kiln_last_error_message();
    CHECK_MSG(st == want && strstr(msg, call) != NULL, "%s: status %d (want %d), message '%s'",
              what, (int)st, (int)want, msg);
}

static void t_bad(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    size_t big1[2] = { (size_t)1 << 62, 8 };
    size_t big2[3] = { (size_t)1 << 22, (size_t)1 << 22, (size_t)1 << 22 };
    size_t big3[3] = { (size_t)1 << 30, (size_t)1 << 30, (size_t)1 << 30 };
    size_t big4[2] = { (size_t)1 << 61, 1 }; /* 2^61 float64: 2^64 bytes */
    double v = 0, host[4] = { 0 };
    struct {
        unsigned nd;
        const size_t *sh;
        const char *text;
    } bad[] = { { 9, nine, "rank 9" },
                { 2, big1, "(2^62, 8)" },
                { 3, big2, "(2^22, 2^22, 2^22) float64" },
                { 3, big3, "(2^30, 2^30, 2^30)" },
                { 2, big4, "2^61 float64 (bytes overflow)" } };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kiln_array *a = (kiln_array *)host;
        expect_fail(kiln_array_empty(c, KILN_FLOAT64, bad[k].nd, bad[k].sh, &a),
                    KILN_ERROR_INVALID_ARGUMENT, "kiln_array_empty", bad[k].text);
        CHECK(a == NULL);
        if (bad[k].nd < 9)
            CHECK_MSG(strstr(kiln_last_error_message(), "overflow") != NULL, "%s",
                      kiln_last_error_message());
        expect_fail(kiln_array_zeros(q, KILN_FLOAT64, bad[k].nd, bad[k].sh, 0, NULL, NULL, &a),
                    KILN_ERROR_INVALID_ARGUMENT, "kiln_array_zeros", bad[k].text);
        expect_fail(kiln_array_full(q, KILN_FLOAT64, bad[k].nd, bad[k].sh, KILN_ARG_F64(v), 0, NULL,
                                    NULL, &a),
                    KILN_ERROR_INVALID_ARGUMENT, "kiln_array_full", bad[k].text);
        expect_fail(kiln_array_from_host(c, KILN_FLOAT64, bad[k].nd, bad[k].sh, host, &a),
                    KILN_ERROR_INVALID_ARGUMENT, "kiln_array_from_host", bad[k].text);
        CHECK(a == NULL);
    }
    /* DLPack import of an overflowing shape */
    int64_t dl_big[2] = { (int64_t)1 << 62, 8 };
    DLManagedTensor mt;
    memset(&mt, 0, sizeof mt);
    mt.dl_tensor.data = host;
    mt.dl_tensor.device = (DLDevice){ kDLCPU, 0 };
    mt.dl_tensor.ndim = 2;
    mt.dl_tensor.dtype = (DLDataType){ kDLFloat, 64, 1 };
    mt.dl_tensor.shape = dl_big;
    kiln_array *imp = (kiln_array *)host;
    expect_fail(kiln_array_from_dlpack(c, &mt, &imp), KILN_ERROR_INVALID_ARGUMENT,
                "kiln_array_from_dlpack", "DLPack (2^62, 8) float64");
    CHECK(imp == NULL);
    /* uint8 (2^62, 8): 2^65 elements wrap to 0 in a plain product */
    kiln_array *a = NULL;
    expect_fail(kiln_array_empty(c, KILN_UINT8, 2, big1, &a), KILN_ERROR_INVALID_ARGUMENT,
                "kiln_array_empty", "uint8 (2^62, 8)");
    /* a 0 makes any shape empty, not an overflow */
    size_t zero_big[3] = { 0, (size_t)1 << 62, 8 };
    if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 3, zero_big, &a)))
        CHECK(kiln_array_size(a) == 0);
    kiln_array_release(a);
    a = NULL;
    /* reshape, from_buffer, views */
    size_t sh8[MD] = { 2, 1, 2, 1, 1, 2, 1, 1 };
    kiln_array *x = make(q, MD, sh8, (double[8]){ 0 }), *y = (kiln_array *)host;
    if (!x)
        return;
    expect_fail(kiln_array_reshape(x, 9, nine, &y), KILN_ERROR_INVALID_ARGUMENT,
                "kiln_array_reshape", "reshape to rank 9");
    CHECK(y == NULL);
    expect_fail(kiln_array_reshape(x, 3, big2, &y), KILN_ERROR_INVALID_ARGUMENT,
                "kiln_array_reshape", "reshape to (2^22, 2^22, 2^22)");
    expect_fail(kiln_array_from_buffer(kiln_array_buffer(x), 0, KILN_FLOAT64, 2, big1, NULL, &y),
                KILN_ERROR_INVALID_ARGUMENT, "kiln_array_from_buffer", "from_buffer (2^62, 8)");
    kiln_slice huge[MD];
    for (unsigned d = 0; d < MD; d++)
        huge[d] = KILN_SLICE_ALL;
    /* a huge step over a short dimension leaves one element, whose stride
     * is never used: NumPy takes it (a[0:2:2**62]), and so does kiln; the
     * overflowing product itself is refused where it would be used
     * (tests/test_prop_shapes.c) */
    huge[0] = KILN_SLICE(0, 2, PTRDIFF_MAX / 2);
    y = NULL;
    kiln_array_info vi;
    if (CHECK_OK(kiln_array_view(x, huge, &y)) && CHECK_OK(kiln_array_get_info(y, &vi)))
        CHECK(vi.ndim == MD && vi.shape[0] == 1);
    kiln_array_release(y);
    y = (kiln_array *)host;
    /* axes */
    kiln_array *o = (kiln_array *)host;
    expect_fail(
        kiln_array_reduce_axes(q, KILN_REDUCE_SUM, x, 1, (int[]){ 8 }, 0, 0, NULL, NULL, &o),
        KILN_ERROR_OUT_OF_RANGE, "kiln_array_reduce_axes", "axis 8 of 8-D");
    CHECK(o == NULL);
    expect_fail(
        kiln_array_reduce_axes(q, KILN_REDUCE_SUM, x, 1, (int[]){ -9 }, 0, 0, NULL, NULL, &o),
        KILN_ERROR_OUT_OF_RANGE, "kiln_array_reduce_axes", "axis -9 of 8-D");
    expect_fail(
        kiln_array_reduce_axes(q, KILN_REDUCE_SUM, x, 2, (int[]){ 1, -7 }, 0, 0, NULL, NULL, &o),
        KILN_ERROR_INVALID_ARGUMENT, "kiln_array_reduce_axes", "axis 1 given twice");
    expect_fail(
        kiln_array_reduce_axes(q, KILN_REDUCE_ARGMAX, x, 2, (int[]){ 0, 1 }, 0, 0, NULL, NULL, &o),
        KILN_ERROR_INVALID_ARGUMENT, "kiln_array_reduce_axes", "argmax over 2 axes");
    expect_fail(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, x, -9, 0, 0, NULL, NULL, &o),
                KILN_ERROR_OUT_OF_RANGE, "kiln_array_reduce_axis", "reduce_axis -9");
    expect_fail(kiln_array_var_axes(q, x, 1, (int[]){ 0 }, -1, 0, 0, 0, NULL, NULL, &o),
                KILN_ERROR_INVALID_ARGUMENT, "kiln_array_var_axes", "ddof -1");
    expect_fail(kiln_array_permute(x, (int[]){ 0, 1, 2, 3, 4, 5, 6, 8 }, &y),
                KILN_ERROR_OUT_OF_RANGE, "kiln_array_permute", "permute with axis 8");
    expect_fail(kiln_array_permute(x, (int[]){ 0, 1, 2, 3, 4, 5, 6, -8 }, &y),
                KILN_ERROR_INVALID_ARGUMENT, "kiln_array_permute", "permute repeating axis 0");
    CHECK(y == NULL);
    kiln_array *two[2] = { x, x };
    expect_fail(kiln_array_stack(q, 2, two, 0, 0, NULL, NULL, &o), KILN_ERROR_INVALID_ARGUMENT,
                "kiln_array_stack", "stacking 8-D arrays (9-D)");
    expect_fail(kiln_array_concatenate(q, 2, two, 8, 0, NULL, NULL, &o), KILN_ERROR_OUT_OF_RANGE,
                "kiln_array_concatenate", "concatenate along axis 8");
    kiln_array *s0 = make(q, 0, NULL, (double[1]){ 3 });
    if (s0) {
        kiln_array *ss[2] = { s0, s0 };
        expect_fail(kiln_array_concatenate(q, 2, ss, 0, 0, NULL, NULL, &o), KILN_ERROR_OUT_OF_RANGE,
                    "kiln_array_concatenate", "concatenate of 0-d arrays");
        expect_fail(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, s0, 0, 0, 0, NULL, NULL, &o),
                    KILN_ERROR_OUT_OF_RANGE, "kiln_array_reduce_axis", "axis 0 of a 0-d array");
        /* but the reduction over no axes, or all (none), of a 0-d array */
        double r = 0;
        if (CHECK_OK(
                kiln_array_reduce_axes(q, KILN_REDUCE_SUM, s0, 0, NULL, 0, 0, NULL, NULL, &o)) &&
            read_all(q, o, &r))
            CHECK(r == 3 && kiln_array_size(o) == 1);
        kiln_array_release(o);
    }
    KT_RELEASE(s0, x);
}

/* Generated sources with the N-d index math (kiln_d7: the 8-D variant). */
static int nd_sources;
static void source_hook(const char *source, unsigned languages) {
    (void)languages;
    if (strstr(source, "long kiln_d7"))
        nd_sources++;
}

/* After the other steps: the strided views of 4..8 dimensions that do not
 * merge took the 8-D variant (built, or loaded from the cache: the hook
 * sees both). */
static void t_nd_sources(kiln_queue *q) {
    (void)q;
    CHECK_MSG(nd_sources > 0, "%d generated sources with 8-D index math", nd_sources);
}

int main(void) {
    kiln__gen_source_hook = source_hook;
    KT_FOR_EACH_DEVICE_STEPS(t_construct, t_views, t_broadcast, t_reduce, t_join, t_sort,
                             t_take_put, t_matmul, t_fft, t_dlpack, t_misc, t_bad, t_nd_sources);
    return kt_report();
}
