/* kiln complex arrays, BLAS and FFT (docs/linalg.md).
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * Complex arrays (KILN_COMPLEX64, KILN_COMPLEX128) are (re, im) pairs,
 * interleaved as in NumPy. They work with the array calls of kiln/array.h:
 * creation, views, copies, host transfers, fill (value: two floats / two
 * doubles), kiln_array_binary_out (ADD, SUB, MUL, DIV, POW; EQ and NE into an
 * output of any dtype), kiln_array_binary_scalar_out (a real scalar),
 * kiln_array_unary_out (NEG, POSITIVE, SQUARE, SQRT, EXP, LOG, SIN .. LOG10,
 * ROUND, SIGN; ABS into the real dtype of the parts; ISNAN, ISINF, ISFINITE
 * into bool), kiln_array_reduce (SUM,
 * PROD: complex; NORM1, NORM2, NORM_INF: the parts' real dtype; MIN, MAX,
 * ARGMIN, ARGMAX: KILN_ERROR_UNSUPPORTED, complex numbers have no order)
 * and kiln_array_dot (sum a*b, no conjugation; kiln_array_vdot conjugates).
 * Ops that the array API standard does not allow on complex (LT, MIN,
 * FLOOR ...) are KILN_ERROR_INVALID_ARGUMENT; other calls on complex
 * arrays are KILN_ERROR_UNSUPPORTED.
 *
 * BLAS and FFT run in the field's libraries, loaded at run time (dlopen):
 * cuBLAS and cuFFT on CUDA devices, CLBlast and clFFT on OpenCL GPUs,
 * OpenBLAS and FFTW on the host memory of OpenCL CPU devices (PoCL), where
 * they are several times faster than the OpenCL libraries (docs/linalg.md
 * has the measurements). They are enqueued on kiln's queue, after the wait
 * list, and return at once with an event, like every kiln call. A missing
 * library is KILN_ERROR_NO_RUNTIME with a message naming the Debian package
 * to install.
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
KILN_API kiln_status kiln_array_conj_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                         size_t num_wait, kiln_event *const *wait,
                                         kiln_event **event);
/* out = a converted between real and complex dtypes (same shape): a real
 * a gives (a, 0); a complex a into a real out keeps the real part (NumPy's
 * astype, which drops the imaginary part); complex to complex changes the
 * precision. Both real: KILN_ERROR_INVALID_ARGUMENT (kiln's real astype
 * does that). */
KILN_API kiln_status kiln_array_complex_cast_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                                 size_t num_wait, kiln_event *const *wait,
                                                 kiln_event **event);
/* sum conj(a[i])*b[i] (NumPy's vdot) of two complex arrays of one shape
 * and dtype, into host_result (one complex element). For real arrays it is
 * kiln_array_dot. Blocks until the result is there. */
KILN_API kiln_status kiln_array_vdot(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                     void *host_result);
/* The same without blocking, as kiln_array_dot_async. */
KILN_API kiln_status kiln_array_vdot_async(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                           kiln_array *result, void *host_result, size_t num_wait,
                                           kiln_event *const *wait, kiln_event **event);

/* ---------------------------------------------------------------- BLAS
 *
 * Arrays are row-major as everywhere in kiln. A matrix operand is a 2-D
 * array (or one of 3 to 8 dimensions: a batch of matrices, every
 * dimension before the last two) whose rows or columns are
 * contiguous: dense arrays, row slices, and transposed views
 * (kiln_array_swapaxes) go to the library as they are; other strided views
 * are copied to a dense temporary first. Vectors are 1-D arrays of any
 * positive stride (a negative one is KILN_ERROR_UNSUPPORTED: copy first).
 * dtypes: FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 everywhere, FLOAT16 for
 * matmul/gemm where the library has it (cuBLAS; CLBlast on devices with
 * fp16); else KILN_ERROR_UNSUPPORTED. All operands of one call have one
 * dtype and belong to queue's context (KILN_ERROR_MISMATCH otherwise, as
 * for shapes that do not fit). Outputs must not overlap inputs. */

/* Scalar factors (alpha, beta) are kiln_arg scalars (KILN_ARG_F64(2),
 * KILN_ARG_C128(1, 0.5), ...), converted to the operands' dtype as
 * kiln_array_fill does: a complex one for a real dtype is
 * KILN_ERROR_INVALID_ARGUMENT; for FLOAT16 they are computed in float. */

typedef enum kiln_blas_op {
    KILN_BLAS_N = 0, /* the matrix as it is */
    KILN_BLAS_T = 1, /* its transpose */
    KILN_BLAS_C = 2, /* its conjugate transpose (T for real dtypes) */
} kiln_blas_op;

/* c = a @ b (NumPy's matmul): a (m, k), b (k, n), c (m, n); arrays of 3
 * to 8 dimensions are batches: a (B..., m, k) or (m, k) used for every
 * item, b likewise, c (B..., m, n) (the same batch dimensions: they are
 * not broadcast). Returns at once. */
KILN_API kiln_status kiln_linalg_matmul_out(kiln_queue *queue, kiln_array *c, kiln_array *a,
                                            kiln_array *b, size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
/* The same into a new array (docs/api.md rule 21): a's dtype, shape (B...,
 * m, n) with the batch dimensions of the operand that has them. */
KILN_API kiln_status kiln_linalg_matmul(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                        size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event, kiln_array **result);
/* As kiln_array_conj_out into a new array of a's shape and dtype. */
KILN_API kiln_status kiln_array_conj(kiln_queue *queue, kiln_array *a, size_t num_wait,
                                     kiln_event *const *wait, kiln_event **event,
                                     kiln_array **result);
/* c = alpha * op_a(a) @ op_b(b) + beta * c, shapes and batches as for
 * kiln_linalg_matmul_out after the ops. beta = 0 does not read c (NaN there is not
 * kept). */
KILN_API kiln_status kiln_blas_gemm(kiln_queue *queue, kiln_blas_op op_a, kiln_blas_op op_b,
                                    kiln_arg alpha, kiln_array *a, kiln_array *b, kiln_arg beta,
                                    kiln_array *c, size_t num_wait, kiln_event *const *wait,
                                    kiln_event **event);
/* y = alpha * op(a) @ x + beta * y: a 2-D, x and y 1-D. */
KILN_API kiln_status kiln_blas_gemv(kiln_queue *queue, kiln_blas_op op, kiln_arg alpha,
                                    kiln_array *a, kiln_array *x, kiln_arg beta, kiln_array *y,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Level 1, on 1-D arrays of one size: y = alpha*x + y; x = alpha*x;
 * result[0] = sum x*y (conj != 0: sum conj(x)*y); result[0] = |x|_2 (a
 * real dtype: FLOAT32 for COMPLEX64, FLOAT64 for COMPLEX128). result is a
 * device array (read it after *event). */
KILN_API kiln_status kiln_blas_axpy(kiln_queue *queue, kiln_arg alpha, kiln_array *x, kiln_array *y,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_blas_scal(kiln_queue *queue, kiln_arg alpha, kiln_array *x,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);
KILN_API kiln_status kiln_blas_dot(kiln_queue *queue, int conj, kiln_array *x, kiln_array *y,
                                   kiln_array *result, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event);
KILN_API kiln_status kiln_blas_nrm2(kiln_queue *queue, kiln_array *x, kiln_array *result,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* The library kiln's BLAS calls use on queue's device: "cuBLAS",
 * "CLBlast", "OpenBLAS" (NULL for a NULL queue). $KILN_BLAS=clblast makes
 * OpenCL CPU devices use CLBlast instead of OpenBLAS. */
KILN_API const char *kiln_blas_library(kiln_queue *queue);

/* ----------------------------------------------------------------- FFT
 *
 * Discrete Fourier transforms over the last `axes` (1, 2 or 3) dimensions
 * of an array; a leading dimension not transformed is a batch (in shape
 * (4096, 4096) with axes 1: 4096 transforms of 4096 points). Forward is
 * exp(-2 pi i jk/n), as in NumPy. Any length (FFTW and cuFFT; clFFT only
 * lengths whose prime factors are 2, 3, 5, 7, 11 and 13, else
 * KILN_ERROR_UNSUPPORTED). Plans are made on first use of a shape and kept
 * per context. Strided or offset arrays go through a dense temporary.
 * Single precision (COMPLEX64/FLOAT32) or double (COMPLEX128/FLOAT64).
 * A transformed length of 0 is KILN_ERROR_INVALID_ARGUMENT (NumPy raises);
 * a batch of 0 transforms does nothing. */

/* NumPy's `norm`: which direction is scaled, by 1/n (n: the product of the
 * transformed lengths) */
typedef enum kiln_fft_norm {
    KILN_FFT_NORM_BACKWARD = 0, /* the inverse (NumPy's default) */
    KILN_FFT_NORM_ORTHO = 1,    /* both, by 1/sqrt(n) */
    KILN_FFT_NORM_FORWARD = 2,  /* the forward one */
} kiln_fft_norm;

/* Complex to complex: out = fft(in) (inverse = 0) or ifft(in) (inverse =
 * 1); in and out of one complex dtype and shape; out may be in. */
KILN_API kiln_status kiln_fft_c2c_out(kiln_queue *queue, kiln_array *out, kiln_array *in,
                                      unsigned axes, int inverse, kiln_fft_norm norm,
                                      size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* Real to complex (NumPy's rfftn): in real (..., n) gives out complex
 * (..., n/2 + 1), the other transformed lengths unchanged. */
KILN_API kiln_status kiln_fft_r2c_out(kiln_queue *queue, kiln_array *out, kiln_array *in,
                                      unsigned axes, kiln_fft_norm norm, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);
/* Complex to real (NumPy's irfftn): in complex (..., n/2 + 1) gives out
 * real (..., n), n taken from out's last dimension. in is not changed. */
KILN_API kiln_status kiln_fft_c2r_out(kiln_queue *queue, kiln_array *out, kiln_array *in,
                                      unsigned axes, kiln_fft_norm norm, size_t num_wait,
                                      kiln_event *const *wait, kiln_event **event);
/* The library kiln's FFTs use on queue's device: "cuFFT", "clFFT", "FFTW"
 * (NULL for a NULL queue). $KILN_FFT=clfft makes OpenCL CPU devices use
 * clFFT instead of FFTW. */
KILN_API const char *kiln_fft_library(kiln_queue *queue);

#endif /* KILN_LINALG_H */
