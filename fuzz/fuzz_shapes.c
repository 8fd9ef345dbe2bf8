/* Shape and stride validation (issue 41, item 14): kiln_array_empty,
 * kiln_array_from_buffer (any strides, negative and 0, any offset),
 * kiln_array_view (any slices), kiln_array_reshape, kiln_array_permute and
 * kiln_shape_broadcast, on arrays of a context of the first device
 * (created once; no kernel runs). Invariants, each checked against a
 * reference computed here in 128-bit integers: an array that is accepted
 * has every element inside its buffer; a view's elements lie inside its
 * parent's buffer and its shape is no larger; a reshape is accepted only
 * for the same size; a broadcast gives NumPy's shape or MISMATCH exactly
 * when NumPy would refuse; every refusal carries a message. */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_util.h"
#include "kiln.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} rd;
static uint64_t take(rd *r, unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++) {
        v = v << 8 | (r->n ? *r->p : 0);
        if (r->n) {
            r->p++;
            r->n--;
        }
    }
    return v;
}

static kiln_context *ctx;

static void said_why(kiln_status st) {
    if (st != KILN_OK && !kiln_last_error_message()[0])
        abort();
}

/* Every element of info inside [0, bytes) of its buffer. */
static int inside(const kiln_array_info *info, size_t bytes) {
    if (!info->size)
        return 1;
    __int128 lo = (__int128)info->offset, hi = lo;
    for (unsigned d = 0; d < info->ndim; d++) {
        __int128 span = (__int128)(info->shape[d] - 1) * info->strides[d];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    size_t item = kiln_dtype_size(info->dtype);
    return lo >= 0 && (hi + 1) * (__int128)item <= (__int128)bytes;
}

static void check_broadcast(rd *r) {
    unsigned na = (unsigned)take(r, 1) % 10, nb = (unsigned)take(r, 1) % 10, nd = 0;
    size_t a[10], b[10], out[KILN_ARRAY_MAX_DIMS + 2];
    for (unsigned i = 0; i < na; i++)
        a[i] = (size_t)take(r, 1) % 4;
    for (unsigned i = 0; i < nb; i++)
        b[i] = (size_t)take(r, 1) % 4;
    kiln_status st = kiln_shape_broadcast(na, a, nb, b, &nd, out);
    said_why(st);
    int want_ok = na <= KILN_ARRAY_MAX_DIMS && nb <= KILN_ARRAY_MAX_DIMS;
    unsigned n = na > nb ? na : nb;
    for (unsigned i = 0; want_ok && i < n; i++) {
        size_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            want_ok = 0;
    }
    if (want_ok != (st == KILN_OK))
        abort();
    for (unsigned i = 0; st == KILN_OK && i < n; i++) {
        size_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (nd != n || out[n - 1 - i] != (x == 1 ? y : x))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ctx) {
        kiln_device *dev = NULL;
        if (kiln_device_select("host", &dev) != KILN_OK &&
            kiln_device_select("cpu", &dev) != KILN_OK)
            return 0;
        if (kiln_context_create(&dev, 1, &ctx) != KILN_OK)
            abort();
    }
    rd r = { data, size };
    check_broadcast(&r);
    /* an array over a buffer */
    unsigned nd = (unsigned)take(&r, 1) % 10;
    size_t shape[10];
    ptrdiff_t strides[10];
    for (unsigned d = 0; d < nd; d++) {
        uint64_t s = take(&r, 1);
        shape[d] = s < 250 ? s % 9 : (size_t)take(&r, 8); /* huge ones too */
        strides[d] = (ptrdiff_t)(int8_t)take(&r, 1);
        if (strides[d] == -128)
            strides[d] = (ptrdiff_t)take(&r, 8);
    }
    static const kiln_dtype dts[] = { KILN_INT8,    KILN_INT16,      KILN_FLOAT32,
                                      KILN_FLOAT64, KILN_COMPLEX128, (kiln_dtype)999 };
    kiln_dtype dt = dts[take(&r, 1) % 6];
    size_t bytes = 1 + (size_t)take(&r, 2) % 4096, offset = (size_t)take(&r, 2) % 5000;
    kiln_buffer *buf = NULL;
    if (kiln_buffer_create(ctx, bytes, 0, NULL, &buf) != KILN_OK)
        return 0;
    kiln_array *a = NULL, *v = NULL, *w = NULL;
    kiln_status st = kiln_array_from_buffer(buf, offset, dt, nd, shape, strides, &a);
    said_why(st);
    kiln_array_info info;
    if (st == KILN_OK) {
        if (kiln_array_get_info(a, &info) != KILN_OK || !inside(&info, bytes))
            abort();
        /* a view of it by arbitrary slices */
        kiln_slice sl[KILN_ARRAY_MAX_DIMS];
        for (unsigned d = 0; d < info.ndim; d++) {
            sl[d].start = (ptrdiff_t)(int8_t)take(&r, 1);
            sl[d].stop = (ptrdiff_t)(int8_t)take(&r, 1);
            sl[d].step = (ptrdiff_t)(int8_t)take(&r, 1);
            if (sl[d].step == -128)
                sl[d].step = (ptrdiff_t)take(&r, 8);
            if (sl[d].start == -128)
                sl[d].start = (ptrdiff_t)take(&r, 8);
        }
        st = kiln_array_view(a, sl, &v);
        said_why(st);
        kiln_array_info vi;
        if (st == KILN_OK) {
            if (kiln_array_get_info(v, &vi) != KILN_OK || !inside(&vi, bytes) ||
                vi.ndim != info.ndim)
                abort();
            for (unsigned d = 0; d < vi.ndim; d++)
                if (vi.shape[d] > info.shape[d])
                    abort();
        }
        /* a permutation */
        int axes[KILN_ARRAY_MAX_DIMS];
        for (unsigned d = 0; d < info.ndim; d++)
            axes[d] = (int)(int8_t)take(&r, 1) % 12;
        st = kiln_array_permute(a, axes, &w);
        said_why(st);
        if (st == KILN_OK) {
            if (kiln_array_get_info(w, &vi) != KILN_OK || !inside(&vi, bytes) ||
                vi.size != info.size)
                abort();
        }
    }
    kiln_array_release(w);
    kiln_array_release(v);
    kiln_array_release(a);
    kiln_buffer_release(buf);
    /* a dense array and a reshape of it: a valid shape of more than 1 MiB
     * is left out (it would be allocated); one whose size overflows must
     * be refused (and allocates nothing) */
    a = v = NULL;
    unsigned __int128 elems = 1, cap = (unsigned __int128)1 << 64;
    for (unsigned d = 0; d < nd; d++) {
        elems *= shape[d];
        if (elems > cap)
            elems = cap; /* saturated: past PTRDIFF_MAX either way */
    }
    int zero = 0;
    for (unsigned d = 0; d < nd; d++)
        zero |= shape[d] == 0;
    if (!zero && elems > (1u << 20) && elems <= (unsigned __int128)PTRDIFF_MAX)
        return 0;
    st = kiln_array_empty(ctx, KILN_INT8, nd, shape, &a);
    said_why(st);
    if (st == KILN_OK &&
        (nd > KILN_ARRAY_MAX_DIMS || (!zero && elems > (unsigned __int128)PTRDIFF_MAX)))
        abort(); /* an overflowing shape or too many dimensions accepted */
    if (st == KILN_OK) {
        unsigned nn = (unsigned)take(&r, 1) % 10;
        size_t ns[10];
        unsigned __int128 want = 1, have = 1;
        for (unsigned d = 0; d < nn; d++) {
            ns[d] = (size_t)take(&r, 1) % 9;
            want *= ns[d];
        }
        for (unsigned d = 0; d < nd; d++)
            have *= shape[d];
        st = kiln_array_reshape(a, nn, ns, &v);
        said_why(st);
        if (st == KILN_OK && (want != have || nn > KILN_ARRAY_MAX_DIMS))
            abort();
        if (st != KILN_OK && want == have && nn <= KILN_ARRAY_MAX_DIMS)
            abort(); /* a contiguous array of the same size always reshapes */
    }
    kiln_array_release(v);
    kiln_array_release(a);
    return 0;
}
