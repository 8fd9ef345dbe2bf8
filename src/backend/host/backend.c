/* The host backend's table: what src/core calls. The functions live in
 * probe.c (the compiler), device.c, queue.c, memory.c, program.c and
 * event.c. */
#include "backend/host/host.h"

const kiln__backend kiln__backend_host = {
    .abi = KILN__BACKEND_ABI,
    .kind = KILN_BACKEND_HOST,
    .name = "host",
    .selector_prefix = "host",
    .priority = 15, /* above OpenCL's 10: the default CPU device (GPUs still come first:
                       the default is chosen by device type, then priority) */
    .languages = 0,
    .prelude_file = "prelude_host.h",
    .install_hint = "to run kernels on the CPU without OpenCL, install a C compiler with OpenMP "
                    "(Debian/Ubuntu: apt-get install gcc libgomp1)",

    .load = kiln__host_load,
    .enumerate = kiln__host_enumerate,
    .partition = kiln__host_partition,

    .context_create = kiln__host_context_create,
    .context_release = kiln__host_context_release,
    .queue_create = kiln__host_queue_create,
    .queue_release = kiln__host_queue_release,
    .queue_finish = kiln__host_queue_finish,
    .queue_flush = kiln__host_queue_flush,
    .queue_marker = kiln__host_queue_marker,

    .buffer_create = kiln__host_buffer_create,
    .buffer_create_sub = kiln__host_buffer_create_sub,
    .buffer_release = kiln__host_buffer_release,
    .buffer_write = kiln__host_buffer_write,
    .buffer_read = kiln__host_buffer_read,
    .buffer_copy = kiln__host_buffer_copy,
    .buffer_fill = kiln__host_buffer_fill,
    .buffer_map = kiln__host_buffer_map,
    .buffer_unmap = kiln__host_buffer_unmap,

    .program_build = kiln__host_program_build,
    .program_binary = kiln__host_program_binary,
    .program_load = kiln__host_program_load,
    .program_release = kiln__host_program_release,
    .kernel_create = kiln__host_kernel_create,
    .kernel_release = kiln__host_kernel_release,
    .kernel_occupancy = NULL,
    .kernel_launch = kiln__host_kernel_launch,

    .event_wait = kiln__host_event_wait,
    .event_state = kiln__host_event_state,
    .event_times = kiln__host_event_times,
    .event_notify = kiln__host_event_notify,
    .user_event_create = kiln__host_user_event_create,
    .user_event_set = kiln__host_user_event_set,
    .event_retain = kiln__host_event_retain,
    .event_release = kiln__host_event_release,
    .interop = NULL,
    .partition_counts = kiln__host_partition_counts,
};
