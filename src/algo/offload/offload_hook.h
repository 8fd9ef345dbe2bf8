/* Test hook of the offload generator: when set, kiln_offload_create calls it
 * with each generated kernel source (before the backend's prelude), so that
 * tests can also compile it for the other backend (NVRTC without a GPU). */
#ifndef KILN_ALGO_OFFLOAD_HOOK_H
#define KILN_ALGO_OFFLOAD_HOOK_H

extern void (*kiln__offload_source_hook)(const char *source);

#endif
