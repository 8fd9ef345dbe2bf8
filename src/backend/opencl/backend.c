/* The OpenCL backend's table: what src/core calls. The functions live in
 * probe.c (loading), device.c, queue.c, memory.c, program.c and event.c. */
#include "backend/opencl/ocl.h"

const kiln__backend kiln__backend_opencl = {
    .abi = KILN__BACKEND_ABI,
    .kind = KILN_BACKEND_OPENCL,
    .name = "opencl",
    .selector_prefix = "opencl",
    .priority = 10,
    .languages = 1u << KILN_LANG_OPENCL_C,
    .prelude_file = "prelude_opencl.h",
    .install_hint = "to run on the CPU install an OpenCL ICD loader and PoCL "
                    "(Debian/Ubuntu: apt-get install ocl-icd-libopencl1 "
                    "pocl-opencl-icd); for a GPU, its vendor's OpenCL driver",

    .load = kiln__ocl_load,
    .enumerate = kiln__ocl_enumerate,
    .partition = kiln__ocl_partition,

    .context_create = kiln__ocl_context_create,
    .context_release = kiln__ocl_context_release,
    .queue_create = kiln__ocl_queue_create,
    .queue_release = kiln__ocl_queue_release,
    .queue_finish = kiln__ocl_queue_finish,
    .queue_flush = kiln__ocl_queue_flush,
    .queue_marker = kiln__ocl_queue_marker,

    .buffer_create = kiln__ocl_buffer_create,
    .buffer_create_sub = kiln__ocl_buffer_create_sub,
    .buffer_release = kiln__ocl_buffer_release,
    .buffer_write = kiln__ocl_buffer_write,
    .buffer_read = kiln__ocl_buffer_read,
    .buffer_copy = kiln__ocl_buffer_copy,
    .buffer_fill = kiln__ocl_buffer_fill,
    .buffer_map = kiln__ocl_buffer_map,
    .buffer_unmap = kiln__ocl_buffer_unmap,

    .program_build = kiln__ocl_program_build,
    .program_binary = kiln__ocl_program_binary,
    .program_load = kiln__ocl_program_load,
    .program_release = kiln__ocl_program_release,
    .kernel_create = kiln__ocl_kernel_create,
    .kernel_release = kiln__ocl_kernel_release,
    .kernel_launch = kiln__ocl_kernel_launch,

    .event_wait = kiln__ocl_event_wait,
    .event_state = kiln__ocl_event_state,
    .event_times = kiln__ocl_event_times,
    .event_notify = kiln__ocl_event_notify,
    .user_event_create = kiln__ocl_user_event_create,
    .user_event_set = kiln__ocl_user_event_set,
    .event_retain = kiln__ocl_event_retain,
    .event_release = kiln__ocl_event_release,
    .interop = &kiln__ocl_interop,
    .graph = &kiln__ocl_graph_table,
    .partition_counts = kiln__ocl_partition_counts,
};
