/* The array object (src/algo/array/): the struct every layer of src/algo
 * reads, and what an array over foreign memory keeps alive. Uses only
 * kiln.h. */
#ifndef KILN_ALGO_ARRAY_ARRAY_H
#define KILN_ALGO_ARRAY_ARRAY_H

#include <stdatomic.h>
#include <stddef.h>

#include "kiln.h"

/* What an array over foreign memory keeps alive (a DLPack tensor:
 * array_dlpack.c): shared by the array and its views; release(arg) runs
 * when the last of them is released. */
typedef struct kiln__array_owner {
    atomic_int refs;
    void (*release)(void *arg);
    void *arg;
} kiln__array_owner;

struct kiln_array {
    atomic_int refs;
    kiln__array_owner *owner; /* NULL, or shared with the views */
    kiln_context *context;    /* retained */
    kiln_buffer *buffer;      /* retained */
    kiln_dtype dtype;
    unsigned ndim;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS];
    size_t offset;
    size_t size;
};

int kiln__array_contiguous(const kiln_array *a);
int kiln__array_inside(const kiln_array *a);

#endif
