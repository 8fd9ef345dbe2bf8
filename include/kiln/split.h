/* Work split across the devices of a context (docs/api.md §17).
 *
 * Included by kiln.h (inside its extern "C" block); do not include alone.
 *
 * One launch over [0, n) cut into contiguous parts, one per queue (queues
 * of one context, on its devices: OpenCL sub-devices of a CPU, several
 * GPUs of one platform), sized by weights: part k gets about
 * n * weights[k] / sum(weights) items, rounded to multiples of 256 items
 * (so a random fill's counter blocks line up: a split fill is bit for bit
 * the unsplit one). weights NULL: by compute units; kiln_split_weigh
 * measures them. Arrays are 1-D views of each part; scalars go to every
 * part. The event completes when all parts have. */
#ifndef KILN_SPLIT_H
#define KILN_SPLIT_H

/* An elementwise launch split across queues. Only for operations that
 * touch each array at [i] and do not use i otherwise (a part's i counts
 * from its own start): not for KILN_ELEMENTWISE_ANY_SHAPE gathers. Arrays
 * must be 1-D of n elements. num_queues 1..64. */
KILN_API kiln_status kiln_elementwise_launch_split(size_t num_queues, kiln_queue *const *queues,
                                                   const double *weights,
                                                   kiln_elementwise *elementwise, size_t n,
                                                   size_t num_args, const kiln_arg *args,
                                                   size_t num_wait, kiln_event *const *wait,
                                                   kiln_event **event);
/* kiln_rng_uniform split across queues: the same numbers as one fill (each
 * part draws at the generator's offset plus its start), the offset then
 * advanced once for the whole array. array: 1-D float32 or float64. */
KILN_API kiln_status kiln_rng_uniform_split(size_t num_queues, kiln_queue *const *queues,
                                            const double *weights, kiln_rng *rng, kiln_array *array,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
/* Weights for the queues: the speed of each, measured by running the
 * elementwise operation over n items (the arrays' size) on each queue
 * alone (twice; the second timed), as items per second. weights gets num_queues entries.
 * Blocks. */
KILN_API kiln_status kiln_split_weigh(size_t num_queues, kiln_queue *const *queues,
                                      kiln_elementwise *elementwise, size_t n, size_t num_args,
                                      const kiln_arg *args, double *weights);

/* Copies size bytes from src (at src_offset, on src_queue's context) to
 * dst (at dst_offset, on dst_queue's context) without blocking, after the
 * wait list (events of either context). One context: kiln_buffer_copy on
 * dst_queue (the driver moves the bytes between its devices). Two
 * contexts, of one backend or two: staged through page-locked memory of
 * dst's context (kiln_array_copy_between_async's path: the source is read
 * into the staging buffer's mapping, and the copy into dst is enqueued on
 * dst_queue at once, behind a gate that opens once the read has ended).
 * Between two contexts of a backend that copies device to device
 * (kiln_buffer_copy_peer: CUDA's cuMemcpyPeerAsync) that copy is used
 * instead. *event is of dst's context. */
KILN_API kiln_status kiln_buffer_copy_between(kiln_queue *dst_queue, kiln_buffer *dst,
                                              size_t dst_offset, kiln_queue *src_queue,
                                              kiln_buffer *src, size_t src_offset, size_t size,
                                              size_t num_wait, kiln_event *const *wait,
                                              kiln_event **event);

#endif
