/* Command graphs: record once, replay many times (docs/api.md §16).
 *
 * Between kiln_graph_record_begin(queue) and kiln_graph_record_end(queue,
 * &graph), the commands enqueued on queue are recorded instead of run:
 * kernel launches, copies, fills, non-blocking reads and writes, markers
 * and barriers, and therefore every generator and algorithm call built on
 * them (elementwise, reductions into device arrays, scans, sorts, fills,
 * random numbers...). A queue of the same context whose command waits on
 * an event of a recorded command joins the recording (fork); the recording
 * queue waiting on an event of the joined queue's commands joins them back
 * (join). kiln_graph_record_end stops every queue of the recording.
 *
 * kiln_graph_instantiate makes an executable graph; kiln_graph_exec_launch
 * replays it on any queue of the graph's context, as often as wanted, with
 * the same results bit for bit as the calls made directly. Between
 * launches, kiln_graph_exec_set_arg changes one argument of a kernel node
 * (a scalar, or a buffer) and kiln_graph_exec_replace_buffer puts another
 * buffer in place of one the recording used, in every node (the way to
 * give a recorded generator call new arrays): no re-recording.
 *
 * Refused while recording (KILN_ERROR_WRONG_STATE, and the recording is
 * spoiled: kiln_graph_record_end returns that status and message):
 * blocking calls on a recording queue (kiln_buffer_read/write, map, unmap,
 * kiln_queue_finish, and so every blocking convenience form such as
 * kiln_array_reduce's); waits, callbacks, continuations and futures on an
 * event of a recorded command (it never runs: kiln_event_wait,
 * kiln_event_on_complete, kiln_event_then, kiln_future_complete_after...);
 * an event from outside the recording in a recorded command's wait list
 * (pass it to kiln_graph_exec_launch instead); handing a recording queue
 * out to native code (kiln_opencl_queue_native, kiln_cuda_queue_native: so
 * CLBlast, clFFT, cuBLAS and cuFFT calls), and host libraries (OpenBLAS,
 * FFTW: they run as host tasks on events). docs/api.md lists them.
 *
 * Memory: every buffer and kernel a recorded command uses is held by the
 * graph, and every executable graph holds its graph; scratch buffers that
 * algorithms take from the context's pool while recording therefore stay
 * out of the pool until the last executable graph and graph are released
 * and the launches enqueued before that have ended. Bytes of a recorded
 * non-blocking write are copied at record time (a replay writes those
 * bytes); a recorded read writes into the host pointer given when it was
 * recorded, at every replay. Launches of one graph (of all its
 * executable graphs) share its buffers, scratch included: on an in-order
 * queue they follow each other; launches that can overlap (two queues, an
 * out-of-order queue without a wait list between them) need one recording
 * each, or buffers of their own (kiln_graph_exec_replace_buffer), or they
 * race on them. An algorithm being recorded takes scratch of its own, not
 * the context's shared scratch cache. */
#ifndef KILN_GRAPH_H
#define KILN_GRAPH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_graph kiln_graph;           /* the recorded commands */
typedef struct kiln_graph_exec kiln_graph_exec; /* a graph made ready to launch */

typedef enum kiln_graph_node_kind {
    KILN_GRAPH_NODE_KERNEL = 1, /* a kernel launch (generators' kernels too) */
    KILN_GRAPH_NODE_COPY = 2,
    KILN_GRAPH_NODE_FILL = 3,
    KILN_GRAPH_NODE_WRITE = 4, /* host to device, bytes copied at record time */
    KILN_GRAPH_NODE_READ = 5,  /* device to the recorded host pointer */
    KILN_GRAPH_NODE_MARKER = 6 /* a marker or barrier: only dependencies */
} kiln_graph_node_kind;

/* How an executable graph runs. */
typedef enum kiln_graph_impl {
    KILN_GRAPH_IMPL_REPLAY = 1, /* kiln replays the nodes through the driver
                                   (every backend) */
    KILN_GRAPH_IMPL_NATIVE = 2  /* the driver's own graph: a CUDA graph
                                   (cuGraphLaunch), on the device the
                                   recording ran on; launches on another
                                   device of the context replay */
} kiln_graph_impl;

/* Starts recording on queue into a new graph. KILN_ERROR_WRONG_STATE if
 * the queue records already. */
KILN_API kiln_status kiln_graph_record_begin(kiln_queue *queue);
/* Ends the recording begun on queue (on the queues that joined it too) and
 * hands back the graph. If a call was refused while recording, returns
 * that call's status and message and no graph (the queues stop recording
 * either way). KILN_ERROR_WRONG_STATE on a queue that is not recording, or
 * that joined a recording begun on another queue. */
KILN_API kiln_status kiln_graph_record_end(kiln_queue *queue, kiln_graph **graph);
/* 1 while queue records (begun on it, or joined), else 0. */
KILN_API int kiln_graph_recording(const kiln_queue *queue);
/* The index of the last node recorded on queue (for
 * kiln_graph_exec_set_arg): KILN_ERROR_WRONG_STATE when the queue is not
 * recording or has recorded nothing yet. */
KILN_API kiln_status kiln_graph_last_node(kiln_queue *queue, size_t *node);

KILN_API kiln_status kiln_graph_retain(kiln_graph *graph);
KILN_API void kiln_graph_release(kiln_graph *graph);
/* Nodes in record order (0 for NULL). */
KILN_API size_t kiln_graph_num_nodes(const kiln_graph *graph);
/* The kind of a node: KILN_ERROR_OUT_OF_RANGE past the last node. */
KILN_API kiln_status kiln_graph_get_node_kind(const kiln_graph *graph, size_t node,
                                              kiln_graph_node_kind *kind);

/* Makes an executable graph (its own copy of the nodes' arguments, which
 * kiln_graph_exec_set_arg and _replace_buffer change). */
KILN_API kiln_status kiln_graph_instantiate(kiln_graph *graph, kiln_graph_exec **exec);
KILN_API kiln_status kiln_graph_exec_retain(kiln_graph_exec *exec);
/* The last release waits (off the caller's thread) for launches that have
 * not ended before freeing what they use. */
KILN_API void kiln_graph_exec_release(kiln_graph_exec *exec);
KILN_API kiln_graph_impl kiln_graph_exec_impl(const kiln_graph_exec *exec);
/* Replays every node on queue (a queue of the graph's context) after the
 * wait list; event completes when all have ended. Nodes follow their
 * recorded dependencies: on an in-order queue one after another in record
 * order, on an out-of-order queue each after the nodes it waited for, so
 * forked branches may overlap. Never blocks (but a driver that refuses a
 * node part way through makes the call wait for the nodes already
 * enqueued before returning the failure). */
KILN_API kiln_status kiln_graph_exec_launch(kiln_queue *queue, kiln_graph_exec *exec,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event);
/* Argument index of kernel node node becomes *arg (checked as
 * kiln_kernel_launch checks it) for the launches that follow; launches
 * already enqueued keep theirs. KILN_ERROR_INVALID_ARGUMENT for a node
 * that is not a kernel launch. */
KILN_API kiln_status kiln_graph_exec_set_arg(kiln_graph_exec *exec, size_t node, size_t index,
                                             const kiln_arg *arg);
/* In the launches that follow, every use of recorded (a buffer the
 * recording used, or the top-level buffer of views it used: those become
 * views of replacement at the same offsets) uses replacement instead.
 * replacement must belong to the graph's context and be at least as large
 * (KILN_ERROR_MISMATCH, KILN_ERROR_OUT_OF_RANGE); a buffer the graph does
 * not use is KILN_ERROR_INVALID_ARGUMENT. Replacing with recorded itself
 * undoes it. */
KILN_API kiln_status kiln_graph_exec_replace_buffer(kiln_graph_exec *exec, kiln_buffer *recorded,
                                                    kiln_buffer *replacement);

#ifdef __cplusplus
}
#endif

#endif
