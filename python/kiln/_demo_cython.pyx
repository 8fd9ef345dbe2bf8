# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The demo's Cython columns (``python -m kiln.demo`` compiles this file on
first use when Cython and a C compiler are there).

Two ways a Cython user writes the seeds' loops:
- ``mask_openmp`` / ``dist_openmp``: the loops as the Cython/OpenMP seed
  writes them (``prange`` in a ``nogil`` block, compiled with -fopenmp);
- ``Offload``: the same loop bodies offloaded through kiln's C API
  (``cimport kiln``), with to/from data maps, the whole device part in a
  ``nogil`` block: the offload proposal's own example.
"""
from cython.parallel cimport prange
from libc.math cimport sqrtf

cimport kiln
from kiln cimport kiln_arg, kiln_offload, kiln_queue, kiln_status, KILN_OK

cdef const char *MASK_PARAMS = (
    b"const float *vx, const float *vy, unsigned char *mask, int nv, int width, "
    b"float x0, float step")
cdef const char *MASK_BODY = (
    b"float x = x0 + step * (float)j, y = x0 + step * (float)i; int inside = 0;"
    b"for (int k = 0, m = nv - 1; k < nv; m = k++) {"
    b"  if (((vy[k] > y) != (vy[m] > y)) &&"
    b"      (x < (vx[m] - vx[k]) * (y - vy[k]) / (vy[m] - vy[k]) + vx[k])) inside = !inside; }"
    b"mask[i * width + j] = (unsigned char)inside;")
cdef const char *DIST_PARAMS = b"const float *p, float *d, int npts, int dim"
cdef const char *DIST_BODY = (
    b"float s = 0.0f;"
    b"for (int k = 0; k < dim; k++) { float t = p[i * dim + k] - p[j * dim + k]; s += t * t; }"
    b"d[i * npts + j] = sqrt(s);")


def mask_openmp(const float[::1] vx, const float[::1] vy, unsigned char[:, ::1] mask,
                float x0, float step):
    """The even-odd rule per pixel, rows in parallel (OpenMP)."""
    cdef Py_ssize_t size = mask.shape[0], nv = vx.shape[0], i, j, k, m
    cdef float x, y
    cdef int inside
    with nogil:
        for i in prange(size, schedule="static"):
            y = x0 + step * <float>i
            for j in range(size):
                x = x0 + step * <float>j
                inside = 0
                m = nv - 1
                for k in range(nv):
                    if ((vy[k] > y) != (vy[m] > y)) and \
                            (x < (vx[m] - vx[k]) * (y - vy[k]) / (vy[m] - vy[k]) + vx[k]):
                        inside = not inside
                    m = k
                mask[i, j] = <unsigned char>inside


def dist_openmp(const float[:, ::1] p, float[:, ::1] d):
    """d[i, j] = |p[i] - p[j]|, rows in parallel (OpenMP)."""
    cdef Py_ssize_t n = p.shape[0], dim = p.shape[1], i, j, k
    cdef float s, t
    with nogil:
        for i in prange(n, schedule="static"):
            for j in range(n):
                s = 0.0
                for k in range(dim):
                    t = p[i, k] - p[j, k]
                    s = s + t * t
                d[i, j] = sqrtf(s)


cdef _raise(const char *what):
    raise RuntimeError(what.decode() + ": " + kiln.kiln_last_error_message().decode())


cdef class Offload:
    """The two loop bodies as kiln offload regions on one queue, built once."""
    cdef kiln_queue *q
    cdef kiln_offload *mask_off
    cdef kiln_offload *dist_off

    def __cinit__(self, device=None):
        cdef bytes sel = device.encode() if device else b""
        cdef const char *csel = sel
        cdef kiln_status st
        cdef kiln.kiln_offload_opts opts = kiln.kiln_offload_opts_make(b"i,j")
        with nogil:
            st = kiln.kiln_queue_create_default(csel, 0, &self.q)
            if st == KILN_OK:
                st = kiln.kiln_offload_create(kiln.kiln_queue_context(self.q), MASK_PARAMS,
                                              MASK_BODY, 2, &opts, &self.mask_off)
            if st == KILN_OK:
                st = kiln.kiln_offload_create(kiln.kiln_queue_context(self.q), DIST_PARAMS,
                                              DIST_BODY, 2, &opts, &self.dist_off)
        if st != KILN_OK:
            _raise(b"kiln offload setup")

    def __dealloc__(self):
        kiln.kiln_offload_release(self.mask_off)
        kiln.kiln_offload_release(self.dist_off)
        kiln.kiln_queue_release(self.q)

    def mask(self, const float[::1] vx, const float[::1] vy, unsigned char[:, ::1] mask,
             float x0, float step):
        cdef size_t size = mask.shape[0], nv = vx.shape[0]
        cdef size_t rng[2]
        cdef kiln_arg args[7]
        cdef kiln_status st
        if size == 0:
            return
        with nogil:
            rng[0] = size
            rng[1] = size
            args[0] = kiln.KILN_TO(&vx[0], nv * sizeof(float))
            args[1] = kiln.KILN_TO(&vy[0], nv * sizeof(float))
            args[2] = kiln.KILN_FROM(&mask[0, 0], size * size)
            args[3] = kiln.KILN_ARG_I32(<int>nv)
            args[4] = kiln.KILN_ARG_I32(<int>size)
            args[5] = kiln.KILN_ARG_F32(x0)
            args[6] = kiln.KILN_ARG_F32(step)
            st = kiln.kiln_offload_run(self.q, self.mask_off, NULL, rng, 7, args)
            if st == KILN_OK:
                st = kiln.kiln_queue_finish(self.q)
        if st != KILN_OK:
            _raise(b"the mask's offload")

    def dist(self, const float[:, ::1] p, float[:, ::1] d):
        cdef size_t n = p.shape[0], dim = p.shape[1]
        cdef size_t rng[2]
        cdef kiln_arg args[4]
        cdef kiln_status st
        if n == 0:
            return
        with nogil:
            rng[0] = n
            rng[1] = n
            args[0] = kiln.KILN_TO(&p[0, 0], n * dim * sizeof(float))
            args[1] = kiln.KILN_FROM(&d[0, 0], n * n * sizeof(float))
            args[2] = kiln.KILN_ARG_I32(<int>n)
            args[3] = kiln.KILN_ARG_I32(<int>dim)
            st = kiln.kiln_offload_run(self.q, self.dist_off, NULL, rng, 4, args)
            if st == KILN_OK:
                st = kiln.kiln_queue_finish(self.q)
        if st != KILN_OK:
            _raise(b"the distances' offload")
