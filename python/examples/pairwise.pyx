# cython: language_level=3, boundscheck=False, wraparound=False
"""The seeds' pairwise distances offloaded from Cython through kiln's C API
(`cimport kiln`), with to/from data maps and the whole device part in a
`nogil` block. Build: see python/tests/test_cython.py (include
kiln.get_include(), link -lkiln from kiln.get_library_dir())."""
import numpy as np

cimport kiln
from kiln cimport kiln_arg, kiln_status, kiln_queue, kiln_offload, KILN_OK

cdef const char *PARAMS = b"const double *X, double *D, int M, int N"
cdef const char *BODY = (
    b"double d = 0.0;"
    b"for (int k = 0; k < N; k++) { double t = X[i * N + k] - X[j * N + k]; d += t * t; }"
    b"D[i * M + j] = sqrt(d);")


def pairwise(double[:, ::1] X not None, device=None):
    """D[i, j] = |X[i] - X[j]| for the rows of X, on a kiln device."""
    cdef int M = <int>X.shape[0], N = <int>X.shape[1]
    D = np.zeros((M, M))
    if M == 0:
        return D
    cdef double[:, ::1] Dv = D
    cdef bytes sel = device.encode() if device else b""
    cdef const char *csel = sel
    cdef kiln_queue *q = NULL
    cdef kiln_offload *off = NULL
    cdef kiln_status st
    cdef size_t rng[2]
    cdef kiln_arg args[4]
    cdef kiln.kiln_offload_opts opts = kiln.kiln_offload_opts_make(b"i,j")
    with nogil:
        st = kiln.kiln_queue_create_default(csel, 0, &q)
        if st == KILN_OK:
            st = kiln.kiln_offload_create(kiln.kiln_queue_context(q), PARAMS, BODY, 2, &opts, &off)
        if st == KILN_OK:
            rng[0] = M
            rng[1] = M
            args[0] = kiln.KILN_TO(&X[0, 0], <size_t>M * N * sizeof(double))
            args[1] = kiln.KILN_FROM(&Dv[0, 0], <size_t>M * M * sizeof(double))
            args[2] = kiln.KILN_ARG_I32(M)
            args[3] = kiln.KILN_ARG_I32(N)
            st = kiln.kiln_offload_run(q, off, NULL, rng, 4, args)
        if st == KILN_OK:
            st = kiln.kiln_queue_finish(q)
        kiln.kiln_offload_release(off)
        kiln.kiln_queue_release(q)
    if st != KILN_OK:
        raise RuntimeError(kiln.kiln_last_error_message().decode())
    return D
