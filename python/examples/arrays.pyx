# cython: language_level=3, boundscheck=False, wraparound=False
"""kiln arrays from Cython (`cimport kiln`): c = sort(a + b) on a device,
the device part in a `nogil` block."""
import numpy as np

cimport kiln
from kiln cimport KILN_OK, kiln_array, kiln_queue, kiln_status


def add_sorted(float[::1] a not None, float[::1] b not None):
    cdef size_t n = a.shape[0]
    if b.shape[0] != n or n == 0:
        raise ValueError("a and b: one non-zero length")
    out = np.empty(n, np.float32)
    cdef float[::1] o = out
    cdef kiln_queue *q = NULL
    cdef kiln_array *da = NULL
    cdef kiln_array *db = NULL
    cdef kiln_array *dc = NULL
    cdef kiln_array *ds = NULL
    cdef kiln_status st
    cdef kiln.kiln_sort_desc desc = kiln.kiln_sort_desc_make(0)
    with nogil:
        st = kiln.kiln_queue_create_default(NULL, 0, &q)
        if st == KILN_OK:
            st = kiln.kiln_array_from_host(kiln.kiln_queue_context(q), kiln.KILN_FLOAT32, 1, &n, &a[0], &da)
        if st == KILN_OK:
            st = kiln.kiln_array_from_host(kiln.kiln_queue_context(q), kiln.KILN_FLOAT32, 1, &n, &b[0], &db)
        if st == KILN_OK:
            st = kiln.kiln_array_empty(kiln.kiln_queue_context(q), kiln.KILN_FLOAT32, 1, &n, &dc)
        if st == KILN_OK:
            st = kiln.kiln_array_empty(kiln.kiln_queue_context(q), kiln.KILN_FLOAT32, 1, &n, &ds)
        if st == KILN_OK:
            st = kiln.kiln_array_binary_out(q, kiln.KILN_OP_ADD, dc, da, db, 0, NULL, NULL)
        if st == KILN_OK:
            st = kiln.kiln_array_sort_out(q, ds, NULL, dc, NULL, &desc, 0, NULL, NULL)
        if st == KILN_OK:
            st = kiln.kiln_array_read(q, ds, &o[0])
        kiln.kiln_array_release(da)
        kiln.kiln_array_release(db)
        kiln.kiln_array_release(dc)
        kiln.kiln_array_release(ds)
        kiln.kiln_queue_release(q)
    if st != KILN_OK:
        raise RuntimeError(kiln.kiln_last_error_message().decode())
    return out
