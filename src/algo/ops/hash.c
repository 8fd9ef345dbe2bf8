/* The device hash table (kernels/algo_hashtable.cl) and the hash functions'
 * source (kernels/algo_hash.cl, also put before every generated kernel). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "algo/ops/ops_internal.h"
#include "algo/ops/toolkit_internal.h"
#include "base/embedded.h"
#include "base/check.h"
#include "base/error.h"

struct kiln_hash_table {
    atomic_int refs;
    kiln_context *context; /* retained */
    kiln_dtype key_dtype, value_dtype;
    size_t capacity, slots;
    kiln_buffer *keys, *vals; /* slots each */
    kiln_buffer *state;       /* 4 uint: see the template */
};

const char *kiln_hash_kernel_source(void) {
    return kiln__embedded_file("algo_hash.cl");
}

enum { K_INSERT, K_LOOKUP, K_ERASE };

/* Work-items for n keys (the kernels loop): CPUs a few per core, GPUs up
 * to 2048 per compute unit. */
static size_t ht_global(const kiln__plan *plan, size_t n) {
    size_t cap = plan->cpu ? (size_t)plan->cu * 4 * plan->local : (size_t)plan->cu * 2048;
    return n < cap ? n : cap;
}

/* The table's kernels, for its value dtype. */
static kiln_status ht_kernels(kiln_queue *q, const kiln_hash_table *t, kiln__gen **gen,
                              kiln__variant **v, kiln__plan *plan) {
    static const char *const suffix[3] = { "_insert", "_lookup", "_erase" };
    const char *defs;
    switch (t->value_dtype) {
    case KILN_FLOAT32:
        defs = "#define KILN_HT_V float\n#define KILN_HT_ADD(p, v) "
               "kiln_atomic_add_float((p), (v))\n";
        break;
    case KILN_INT32:
        defs = "#define KILN_HT_V int\n#define KILN_HT_ADD(p, v) "
               "kiln_atomic_add_int((p), (v))\n";
        break;
    default:
        defs = "#define KILN_HT_V uint\n#define KILN_HT_ADD(p, v) "
               "kiln_atomic_add_uint((p), (v))\n";
        break;
    }
    return kiln__tk_kernels(q, "algo_hashtable.cl", "kiln_hash_table", defs, 3, suffix, gen, v,
                            plan);
}

static void ht_free(kiln_hash_table *t) {
    kiln_buffer_release(t->keys);
    kiln_buffer_release(t->vals);
    kiln_buffer_release(t->state);
    if (t->context)
        kiln_context_release(t->context);
    free(t);
}

kiln_status kiln_hash_table_clear(kiln_queue *queue, kiln_hash_table *t) {
    static const char what[] = "kiln_hash_table_clear";
    if (!queue || !t)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue and table are required", what);
    if (kiln_queue_context(queue) != t->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: the queue belongs to another context",
                               what);
    uint32_t ones = 0xFFFFFFFFu, zero = 0;
    kiln_event *e[3] = { 0 };
    kiln_status st = kiln_buffer_fill(queue, t->keys, &ones, 4, 0, t->slots * 4, 0, NULL, &e[0]);
    if (st == KILN_OK)
        st = kiln_buffer_fill(queue, t->vals, &zero, 4, 0, t->slots * 4, 0, NULL, &e[1]);
    if (st == KILN_OK)
        st = kiln_buffer_fill(queue, t->state, &zero, 4, 0, 16, 0, NULL, &e[2]);
    for (int k = 0; k < 3; k++) {
        if (st == KILN_OK && e[k])
            st = kiln_event_wait(e[k]);
        kiln_event_release(e[k]);
    }
    return st;
}

kiln_status kiln_hash_table_create(kiln_queue *queue, size_t capacity, kiln_dtype key_dtype,
                                   kiln_dtype value_dtype, kiln_hash_table **table) {
    static const char what[] = "kiln_hash_table_create";
    if (!queue || !table)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue and table are required", what);
    *table = NULL;
    if (!capacity || capacity > ((size_t)1 << 30))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: capacity %zu; give 1 to 2^30",
                               what, capacity);
    if (key_dtype != KILN_INT32 && key_dtype != KILN_UINT32)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: keys of dtype %s; int32 and uint32 are "
                               "supported",
                               what, kiln_dtype_name(key_dtype));
    if (value_dtype != KILN_INT32 && value_dtype != KILN_UINT32 && value_dtype != KILN_FLOAT32)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: values of dtype %s; int32, uint32 and "
                               "float32 are supported",
                               what, kiln_dtype_name(value_dtype));
    kiln_hash_table *t = kiln__calloc(1, sizeof *t);
    if (!t)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    atomic_init(&t->refs, 1);
    t->key_dtype = key_dtype;
    t->value_dtype = value_dtype;
    t->capacity = capacity;
    t->slots = 2;
    while (t->slots < 2 * capacity) /* a load of 0.5 at most */
        t->slots *= 2;
    kiln_context *ctx = kiln_queue_context(queue);
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln_context_retain(ctx));
    if (ck.st == KILN_OK)
        t->context = ctx;
    KILN__CHECK_CALL(&ck, kiln_buffer_create(ctx, t->slots * 4, 0, NULL, &t->keys));
    KILN__CHECK_CALL(&ck, kiln_buffer_create(ctx, t->slots * 4, 0, NULL, &t->vals));
    KILN__CHECK_CALL(&ck, kiln_buffer_create(ctx, 16, 0, NULL, &t->state));
    kiln_status st = KILN__CHECK_CALL(&ck, kiln_hash_table_clear(queue, t));
    if (st != KILN_OK) {
        ht_free(t);
        return kiln__error_prefix(st, "%s", what);
    }
    *table = t;
    return KILN_OK;
}

kiln_status kiln_hash_table_retain(kiln_hash_table *t) {
    return kiln__ref_retain(t ? &t->refs : NULL, "kiln_hash_table_retain", "table");
}

void kiln_hash_table_release(kiln_hash_table *t) {
    if (t && kiln__ref_release(&t->refs))
        ht_free(t);
}

/* An argument array: the table's context, 1-D contiguous, dtype d, n
 * elements (n = SIZE_MAX: any). */
static kiln_status check_arg(const kiln_hash_table *t, const kiln_array *a, const char *name,
                             kiln_dtype d, size_t n, const char *what) {
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, name);
    if (a->context != t->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s belongs to another context", what,
                               name);
    if (a->dtype != d)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s has dtype %s, the table wants %s",
                               what, name, kiln_dtype_name(a->dtype), kiln_dtype_name(d));
    if (a->ndim != 1 || !kiln__array_contiguous(a))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s must be a 1-D contiguous array",
                               what, name);
    if (n != SIZE_MAX && a->size != n)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s has %zu elements, keys %zu", what,
                               name, a->size, n);
    return KILN_OK;
}

static kiln_status check_call(kiln_queue *q, const kiln_hash_table *t, const char *what) {
    if (!q || !t)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue and table are required", what);
    if (kiln_queue_context(q) != t->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: the queue belongs to another context",
                               what);
    return KILN_OK;
}

/* The flags of the last insert or add (state[1]: full, state[2]: a
 * reserved key) as the call's status. */
static kiln_status ht_flags(const kiln_hash_table *t, const uint32_t *state, const char *what) {
    if (state[2])
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a key is 0xFFFFFFFF or 0xFFFFFFFE (-1 or "
                               "-2 as int32), which mark empty and erased "
                               "slots; no key of this call was stored",
                               what);
    if (state[1])
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: the table is full (capacity %zu keys, "
                               "erased ones included, in %zu slots); some "
                               "keys were left out",
                               what, t->capacity, t->slots);
    return KILN_OK;
}

/* The arguments the insert and lookup kernels begin with: the keys, the
 * values, their count, the table's arrays and its slot mask. */
static void kv_args(kiln_arg *a, const kiln_array *keys, const kiln_array *vals,
                    const kiln_hash_table *t) {
    a[0] = KILN_ARG_BUF(keys->buffer);
    a[1] = KILN_ARG_I64((int64_t)keys->offset);
    a[2] = KILN_ARG_BUF(vals->buffer);
    a[3] = KILN_ARG_I64((int64_t)vals->offset);
    a[4] = KILN_ARG_I64((int64_t)keys->size);
    a[5] = KILN_ARG_BUF(t->keys);
    a[6] = KILN_ARG_BUF(t->vals);
    a[7] = KILN_ARG_U32((uint32_t)(t->slots - 1));
}

/* Enqueues insert (mode 0) or add (1: values, 2: ones) after the wait
 * list: the flags are cleared, the keys checked, then stored; *event is
 * the store's (NULL for no keys: nothing is enqueued). */
static kiln_status ht_enqueue(kiln_queue *q, kiln_hash_table *t, kiln_array *keys,
                              kiln_array *values, int mode, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event, const char *what) {
    *event = NULL;
    kiln_status st = check_call(q, t, what);
    if (st == KILN_OK)
        st = check_arg(t, keys, "keys", t->key_dtype, SIZE_MAX, what);
    if (st == KILN_OK && mode != 2)
        st = check_arg(t, values, "values", t->value_dtype, keys->size, what);
    if (st != KILN_OK || !keys->size)
        return st;
    size_t n = keys->size;
    kiln__gen *gen = NULL;
    kiln__variant *v = NULL;
    kiln__plan plan;
    st = ht_kernels(q, t, &gen, &v, &plan);
    if (st == KILN_OK) {
        kiln_array *vals = mode == 2 ? keys : values; /* mode 2: unused */
        kiln_arg args[11];
        kv_args(args, keys, vals, t);
        args[8] = KILN_ARG_U32((uint32_t)t->capacity);
        args[9] = KILN_ARG_BUF(t->state);
        args[10] = KILN_ARG_I32(-1);
        /* the flags are this call's only: cleared first */
        const uint32_t zero = 0;
        kiln_event *cleared = NULL, *checked = NULL;
        st = kiln_buffer_fill(q, t->state, &zero, 4, 4, 8, num_wait, wait, &cleared);
        /* check first: no key is stored if one is reserved (issue 41) */
        if (st == KILN_OK)
            st = kiln__launch(q, v->k[K_INSERT], ht_global(&plan, n), v->local, args, 11, NULL, 1,
                              &cleared, &checked);
        args[10] = KILN_ARG_I32(mode);
        if (st == KILN_OK)
            st = kiln__launch(q, v->k[K_INSERT], ht_global(&plan, n), v->local, args, 11, NULL, 1,
                              &checked, event);
        if (st != KILN_OK) {
            kiln_event *both[2] = { cleared, checked };
            kiln_event_wait_all(checked ? 2 : cleared ? 1 : 0, both);
        }
        kiln_event_release(cleared);
        kiln_event_release(checked);
    }
    kiln__gen_release(gen);
    return st;
}

/* The blocking form: enqueues, waits, reads the flags. */
static kiln_status ht_insert(kiln_queue *q, kiln_hash_table *t, kiln_array *keys,
                             kiln_array *values, int mode, const char *what) {
    kiln_event *e = NULL;
    uint32_t state[4] = { 0 };
    kiln_status st = ht_enqueue(q, t, keys, values, mode, 0, NULL, &e, what);
    if (st != KILN_OK || !e)
        return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
    st = kiln_event_wait(e);
    kiln_event_release(e);
    if (st == KILN_OK)
        st = kiln_buffer_read(q, t->state, 0, 16, state);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return ht_flags(t, state, what);
}

/* The non-blocking form: the flags are read after the store, and a
 * continuation fails the call's event when one is set. */
typedef struct ht_async {
    kiln_hash_table *table;
    uint32_t state[4];
    const char *what;
} ht_async;

static kiln_status ht_async_check(kiln_event_state state, void *user) {
    ht_async *a = user;
    kiln_status st = state == KILN_EVENT_COMPLETE ? ht_flags(a->table, a->state, a->what)
                                                  : KILN_ERROR_EVENT_FAILED;
    kiln_hash_table_release(a->table);
    free(a);
    return st;
}

static kiln_status ht_insert_async(kiln_queue *q, kiln_hash_table *t, kiln_array *keys,
                                   kiln_array *values, int mode, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event, const char *what) {
    if (event)
        *event = NULL;
    kiln_event *e = NULL;
    kiln_status st = ht_enqueue(q, t, keys, values, mode, num_wait, wait, &e, what);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    if (!e) /* no keys: the event follows the wait list */
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    ht_async *a = calloc(1, sizeof *a);
    kiln_event *r = NULL;
    if (!a)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK) {
        a->table = t;
        a->what = what;
        st = kiln_buffer_read_async(q, t->state, 0, 16, a->state, 1, &e, &r);
    }
    kiln_event *next = NULL;
    if (st == KILN_OK) {
        kiln_hash_table_retain(t);
        st = kiln_event_then(r, ht_async_check, a, &next);
        if (st != KILN_OK)
            kiln_hash_table_release(t);
    }
    if (st != KILN_OK) {
        /* a read already enqueued writes into a: wait for it */
        if (r)
            kiln_event_wait(r);
        else
            kiln_event_wait(e);
        free(a);
    }
    kiln_event_release(e);
    kiln_event_release(r);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return kiln__event_give(event, next);
}

kiln_status kiln_hash_table_insert(kiln_queue *queue, kiln_hash_table *table, kiln_array *keys,
                                   kiln_array *values) {
    return ht_insert(queue, table, keys, values, 0, "kiln_hash_table_insert");
}

kiln_status kiln_hash_table_add(kiln_queue *queue, kiln_hash_table *table, kiln_array *keys,
                                kiln_array *values) {
    return ht_insert(queue, table, keys, values, values ? 1 : 2, "kiln_hash_table_add");
}

kiln_status kiln_hash_table_insert_async(kiln_queue *queue, kiln_hash_table *table,
                                         kiln_array *keys, kiln_array *values, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event) {
    return ht_insert_async(queue, table, keys, values, 0, num_wait, wait, event,
                           "kiln_hash_table_insert_async");
}

kiln_status kiln_hash_table_add_async(kiln_queue *queue, kiln_hash_table *table, kiln_array *keys,
                                      kiln_array *values, size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event) {
    return ht_insert_async(queue, table, keys, values, values ? 1 : 2, num_wait, wait, event,
                           "kiln_hash_table_add_async");
}

/* One launch of kernel k over n keys (for none, the event follows the
 * wait list). */
static kiln_status ht_run(kiln_queue *queue, const kiln_hash_table *t, int k, size_t n,
                          const kiln_arg *args, size_t num_args, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event) {
    if (!n)
        return event ? kiln_queue_marker(queue, num_wait, wait, event) : KILN_OK;
    kiln__gen *gen = NULL;
    kiln__variant *v = NULL;
    kiln__plan plan;
    kiln_status st = ht_kernels(queue, t, &gen, &v, &plan);
    if (st == KILN_OK)
        st = kiln__launch(queue, v->k[k], ht_global(&plan, n), v->local, args, num_args, NULL,
                          num_wait, wait, event);
    kiln__gen_release(gen);
    return st;
}

kiln_status kiln_hash_table_lookup(kiln_queue *queue, kiln_hash_table *t, kiln_array *keys,
                                   kiln_array *values, kiln_arg missing, kiln_array *found,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_hash_table_lookup";
    if (event)
        *event = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, check_call(queue, t, what));
    KILN__CHECK_CALL(&ck, check_arg(t, keys, "keys", t->key_dtype, SIZE_MAX, what));
    KILN__CHECK_CALL(&ck, check_arg(t, values, "values", t->value_dtype, keys->size, what));
    if (found)
        KILN__CHECK_CALL(&ck, check_arg(t, found, "found", KILN_UINT8, keys->size, what));
    kiln_arg miss = { .kind = KILN_ARG_SCALAR, .dtype = t ? t->value_dtype : (kiln_dtype)0 };
    KILN__CHECK_CALL(&ck, kiln__scalar_to_element(missing, miss.dtype, &miss.value, what));
    kiln_status st = ck.st;
    if (st != KILN_OK)
        return st;
    size_t n = keys->size;
    kiln_array *f = found ? found : keys; /* unused without found */
    kiln_arg args[12];
    kv_args(args, keys, values, t);
    args[8] = miss;
    args[9] = KILN_ARG_BUF(f->buffer);
    args[10] = KILN_ARG_I64((int64_t)f->offset);
    args[11] = KILN_ARG_I32(found != NULL);
    return ht_run(queue, t, K_LOOKUP, n, args, 12, num_wait, wait, event);
}

kiln_status kiln_hash_table_erase(kiln_queue *queue, kiln_hash_table *t, kiln_array *keys,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_hash_table_erase";
    if (event)
        *event = NULL;
    kiln_status st = check_call(queue, t, what);
    if (st == KILN_OK)
        st = check_arg(t, keys, "keys", t->key_dtype, SIZE_MAX, what);
    if (st != KILN_OK)
        return st;
    size_t n = keys->size;
    kiln_arg args[6] = { KILN_ARG_BUF(keys->buffer),
                         KILN_ARG_I64((int64_t)keys->offset),
                         KILN_ARG_I64((int64_t)n),
                         KILN_ARG_BUF(t->keys),
                         KILN_ARG_U32((uint32_t)(t->slots - 1)),
                         KILN_ARG_BUF(t->state) };
    return ht_run(queue, t, K_ERASE, n, args, 6, num_wait, wait, event);
}

kiln_status kiln_hash_table_count(kiln_queue *queue, kiln_hash_table *t, size_t *count) {
    static const char what[] = "kiln_hash_table_count";
    kiln_status st = check_call(queue, t, what);
    if (st == KILN_OK && !count)
        st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: count is NULL", what);
    uint32_t state[4];
    if (st == KILN_OK)
        st = kiln_buffer_read(queue, t->state, 0, 16, state);
    if (st == KILN_OK)
        *count = (size_t)state[0] - state[3];
    return st;
}
