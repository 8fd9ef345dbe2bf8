/* Data attached to a context (kiln_context_attach): per-context state of
 * libraries built on kiln, such as src/algo's cache of built-in kernels and
 * scratch buffers. It goes when the last handle on the context does (see
 * the two counts in context.c), so it may hold the context's buffers and
 * programs without keeping the context alive. */
#include <stdlib.h>

#include "base/fault.h"
#include "core/internal.h"

typedef struct kiln__attachment {
    struct kiln__attachment *next;
    const void *key;
    void *data;
    void (*destroy)(void *data);
} kiln__attachment;

kiln_status kiln_context_attach(kiln_context *context, const void *key,
                                void *(*make)(kiln_context *context, void *arg), void *arg,
                                void (*destroy)(void *data), void **data) {
    if (!data)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_context_attach: data is NULL");
    *data = NULL;
    const char *missing = KILN__FIRST_NULL3(context, key, make);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_context_attach: %s is NULL",
                               missing);
    pthread_mutex_lock(&context->lock);
    kiln__attachment *a = context->attached;
    while (a && a->key != key)
        a = a->next;
    if (!a) {
        a = kiln__calloc(1, sizeof *a);
        void *made = a ? make(context, arg) : NULL;
        if (!made) {
            free(a);
            pthread_mutex_unlock(&context->lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kiln_context_attach: make returned NULL "
                                   "(or out of memory)");
        }
        a->key = key;
        a->data = made;
        a->destroy = destroy;
        a->next = context->attached;
        context->attached = a;
    }
    *data = a->data;
    pthread_mutex_unlock(&context->lock);
    return KILN_OK;
}

void kiln__context_drop_attachments(kiln_context *context) {
    pthread_mutex_lock(&context->lock);
    kiln__attachment *a = context->attached;
    context->attached = NULL;
    pthread_mutex_unlock(&context->lock);
    /* Outside the lock: destroy releases kiln objects of this context. */
    while (a) {
        kiln__attachment *next = a->next;
        if (a->destroy)
            a->destroy(a->data);
        free(a);
        a = next;
    }
}
