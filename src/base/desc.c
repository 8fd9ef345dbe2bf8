#include "base/desc.h"

#include <assert.h>
#include <string.h>

#include "base/error.h"

kiln_status kiln__desc_read(const void *desc, size_t v1_size, size_t size, void *copy,
                            const char *what, const char *macro) {
    memset(copy, 0, size);
    size_t given = *(const size_t *)desc;
    if (given < v1_size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the descriptor's struct_size is %zu (at "
                               "least %zu expected): make it with %s(...)",
                               what, given, v1_size, macro);
    assert(v1_size <= size && "a descriptor's first version is no larger than the current one");
    memcpy(copy, desc, given < size ? given : size);
    return KILN_OK;
}
