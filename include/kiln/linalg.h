/* kiln complex arrays, BLAS and FFT (docs/linalg.md).
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * Complex arrays (KILN_COMPLEX64, KILN_COMPLEX128) are (re, im) pairs,
 * interleaved as in NumPy. They work with the array calls of kiln/array.h:
 * creation, views, copies, host transfers, fill (value: two floats / two
 * doubles), kiln_array_binary (ADD, SUB, MUL, DIV; EQ and NE into an output
 * of any dtype), kiln_array_binary_scalar (a real scalar), kiln_array_unary
 * (NEG, EXP; ABS into the real dtype of the parts), kiln_array_reduce (SUM,
 * PROD: complex; NORM1, NORM2, NORM_INF: the parts' real dtype; MIN, MAX,
 * ARGMIN, ARGMAX: KILN_ERROR_UNSUPPORTED, complex numbers have no order)
 * and kiln_array_dot (sum a*b, no conjugation; kiln_array_vdot conjugates).
 * Other ops on complex arrays are KILN_ERROR_UNSUPPORTED.
 *
 * BLAS and FFT run in the field's libraries, loaded at run time (dlopen):
 * cuBLAS and cuFFT on CUDA devices, CLBlast and clFFT on OpenCL GPUs,
 * OpenBLAS and FFTW on the host memory of OpenCL CPU devices (PoCL), where
 * they are several times faster than the OpenCL libraries (docs/linalg.md
 * has the measurements). They are enqueued on kiln's queue, after the wait
 * list, and return at once with an event, like every kiln call. A missing
 * library is KILN_ERROR_NOT_FOUND (or UNSUPPORTED) with a message naming the
 * Debian package to install.
 */
#ifndef KILN_LINALG_H
#define KILN_LINALG_H

/* ------------------------------------------------------------ complex */

/* A view of the real (or imaginary) parts of a complex array: a strided
 * array of the parts' dtype (FLOAT32 for COMPLEX64, FLOAT64 for
 * COMPLEX128) over the same buffer. Writing it writes the complex array.
 * kiln_array_real of a real array is a view of all of it; kiln_array_imag
 * of a real array is KILN_ERROR_MISMATCH (NumPy gives read-only zeros). */
KILN_API kiln_status kiln_array_real(kiln_array *array, kiln_array **view);
KILN_API kiln_status kiln_array_imag(kiln_array *array, kiln_array **view);
/* out = conj(a) (same shape and complex dtype; out may be a). A real a is
 * copied (its conjugate is itself). */
KILN_API kiln_status kiln_array_conj(kiln_queue *queue, kiln_array *out,
                                     kiln_array *a, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event);
/* out = a converted between real and complex dtypes (same shape): a real
 * a gives (a, 0); a complex a into a real out keeps the real part (NumPy's
 * astype, which drops the imaginary part); complex to complex changes the
 * precision. Both real: KILN_ERROR_INVALID_ARGUMENT (kiln's real astype
 * does that). */
KILN_API kiln_status kiln_array_complex_cast(kiln_queue *queue,
                                             kiln_array *out, kiln_array *a,
                                             size_t num_wait,
                                             kiln_event *const *wait,
                                             kiln_event **event);
/* sum conj(a[i])*b[i] (NumPy's vdot) of two complex arrays of one shape
 * and dtype, into host_result (one complex element). For real arrays it is
 * kiln_array_dot. Blocks until the result is there. */
KILN_API kiln_status kiln_array_vdot(kiln_queue *queue, kiln_array *a,
                                     kiln_array *b, void *host_result);
/* The same without blocking, as kiln_array_dot_async. */
KILN_API kiln_status kiln_array_vdot_async(kiln_queue *queue, kiln_array *a,
                                           kiln_array *b, kiln_array *result,
                                           void *host_result,
                                           size_t num_wait,
                                           kiln_event *const *wait,
                                           kiln_event **event);

#endif /* KILN_LINALG_H */
