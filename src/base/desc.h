/* Descriptors that can grow (docs/api.md rule 7): structs the caller fills,
 * starting with `size_t struct_size`, read through one function so that
 * every descriptor of every layer follows the same rule. */
#ifndef KILN_BASE_DESC_H
#define KILN_BASE_DESC_H

#include <stddef.h>

#include "kiln.h"

/* Copies a caller's descriptor into copy (size bytes, zeroed first): at most
 * struct_size bytes, so members added in a later version read as 0 and a
 * newer caller's extra members are ignored. A struct_size under v1_size
 * (the first version's size) is KILN_ERROR_INVALID_ARGUMENT; the message
 * names what (the function) and macro (the descriptor's macro). */
kiln_status kiln__desc_read(const void *desc, size_t v1_size, size_t size, void *copy,
                            const char *what, const char *macro);

#endif
