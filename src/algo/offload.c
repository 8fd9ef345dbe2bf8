/* Offload regions with explicit data maps (include/kiln/offload.h).
 *
 * Built on the public API (buffers, async copies, markers, kernel launch)
 * plus the generators' shared helpers in algo.h (argument declarations,
 * string building). A data region keeps one device buffer per mapped host
 * range; pointers are resolved to (buffer, byte offset) and the generated
 * kernel adds the offset itself, so row slices need no aligned sub-buffers.
 * Every step on a region tree waits for the tree's last event (the "tail"),
 * which orders the work on out-of-order queues and across queues too. */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/offload_hook.h"
#include "base/error.h"

/* ------------------------------------------------------------------ helpers */

void (*kiln__offload_source_hook)(const char *source);

typedef struct dmap {
    uintptr_t host;
    size_t bytes;
    kiln_data_kind kind;
    kiln_buffer *buf; /* retained; NULL when bytes == 0 */
    size_t off;       /* byte offset of host in buf */
    int owned;        /* this region made buf */
} dmap;

struct kiln_data_region {
    kiln_queue *queue; /* retained */
    kiln_context *context;
    kiln_data_region *parent;
    kiln_data_region *root;
    atomic_int children;
    size_t n;
    dmap *maps;
    kiln_offload_stats stats; /* under root->mu */
    /* root only */
    pthread_mutex_t mu;
    kiln_event *tail; /* last work enqueued on the tree; retained */
};

struct kiln_offload {
    kiln_context *context; /* retained */
    kiln_program *program;
    kiln_kernel *kernel;
    kiln__gargs args;
    unsigned dims;
    pthread_mutex_t mu;
    kiln_offload_stats stats;
};

typedef struct evlist {
    kiln_event **v;
    size_t n, cap;
} evlist;

static kiln_status ev_push(evlist *l, kiln_event *e) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        kiln_event **p = realloc(l->v, cap * sizeof *p);
        if (!p) {
            kiln_event_wait(e);
            kiln_event_release(e);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "offload: event list");
        }
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = e;
    return KILN_OK;
}

/* Waits for (on failure paths) and releases every event in the list. */
static void ev_drain(evlist *l, int wait) {
    if (wait && l->n)
        kiln_events_wait(l->n, l->v);
    for (size_t k = 0; k < l->n; k++)
        kiln_event_release(l->v[k]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* One event that completes when all of l has: the single event itself, or a
 * marker. Consumes l (its events are released). */
static kiln_status ev_join(kiln_queue *q, evlist *l, kiln_event **out) {
    *out = NULL;
    if (l->n == 1) {
        *out = l->v[0];
        free(l->v);
        memset(l, 0, sizeof *l);
        return KILN_OK;
    }
    kiln_status st = kiln_queue_marker(q, l->n, l->v, out);
    ev_drain(l, st != KILN_OK);
    return st;
}

static void stats_add(kiln_offload_stats *s, const kiln_offload_stats *d) {
    s->copies_to += d->copies_to;
    s->bytes_to += d->bytes_to;
    s->copies_from += d->copies_from;
    s->bytes_from += d->bytes_from;
    s->allocations += d->allocations;
    s->bytes_allocated += d->bytes_allocated;
    s->launches += d->launches;
}

static const char *kind_name(kiln_data_kind k) {
    switch (k) {
    case KILN_DATA_PRESENT: return "PRESENT";
    case KILN_DATA_TO: return "TO";
    case KILN_DATA_FROM: return "FROM";
    case KILN_DATA_TOFROM: return "TOFROM";
    case KILN_DATA_ALLOC: return "ALLOC";
    }
    return "?";
}

static int overlaps(uintptr_t a, size_t na, uintptr_t b, size_t nb) {
    return na && nb && a < b + nb && b < a + na;
}

/* Finds where [h, h+n) lives in r and its parents (innermost first).
 * Returns 1 (found, *out set), 0 (not mapped) or -1 (error set in *st):
 * a range that runs past its mapping or straddles a mapping's start. */
static int find_map(kiln_data_region *r, uintptr_t h, size_t n,
                    const char *what, const dmap **out, kiln_status *st) {
    for (; r; r = r->parent)
        for (size_t k = 0; k < r->n; k++) {
            const dmap *m = &r->maps[k];
            if (!m->bytes)
                continue;
            if (h >= m->host && h < m->host + m->bytes) {
                if (n > m->host + m->bytes - h) {
                    *st = kiln__error_set(
                        KILN_ERROR_OUT_OF_RANGE, 0,
                        "%s: [%p, +%zu bytes) runs %zu bytes past the end of "
                        "the mapping [%p, +%zu bytes) it starts in",
                        what, (void *)h, n, n - (m->host + m->bytes - h),
                        (void *)m->host, m->bytes);
                    return -1;
                }
                *out = m;
                return 1;
            }
            if (overlaps(h, n, m->host, m->bytes)) {
                *st = kiln__error_set(
                    KILN_ERROR_INVALID_ARGUMENT, 0,
                    "%s: [%p, +%zu bytes) overlaps the mapped range [%p, +%zu "
                    "bytes) without lying inside it (map the whole range, or "
                    "only part of it, not both)",
                    what, (void *)h, n, (void *)m->host, m->bytes);
                return -1;
            }
        }
    return 0;
}

/* Retained tail of r's tree, or NULL; the caller holds root->mu. */
static kiln_event *tail_of(kiln_data_region *r) {
    kiln_event *t = r->root->tail;
    if (t)
        kiln_event_retain(t);
    return t;
}

/* Makes e (retained here) the tree's tail; the caller holds root->mu. */
static void tail_set(kiln_data_region *r, kiln_event *e) {
    kiln_event_retain(e);
    kiln_event_release(r->root->tail);
    r->root->tail = e;
}

static void region_free(kiln_data_region *r) {
    for (size_t k = 0; k < r->n; k++)
        kiln_buffer_release(r->maps[k].buf);
    free(r->maps);
    if (r->parent)
        atomic_fetch_sub(&r->parent->children, 1);
    if (r->root == r) {
        kiln_event_release(r->tail);
        pthread_mutex_destroy(&r->mu);
    }
    kiln_queue_release(r->queue);
    free(r);
}

/* Checks kinds, NULL pointers and overlaps of a list of maps. */
static kiln_status check_maps(const char *what, size_t n,
                              const kiln_data_map *maps, int present_ok) {
    for (size_t k = 0; k < n; k++) {
        const kiln_data_map *m = &maps[k];
        if ((unsigned)m->kind > KILN_DATA_ALLOC)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: map %zu has kind %d; want KILN_DATA_TO, "
                                   "FROM, TOFROM or ALLOC",
                                   what, k, (int)m->kind);
        if (m->kind == KILN_DATA_PRESENT && !present_ok)
            return kiln__error_set(
                KILN_ERROR_INVALID_ARGUMENT, 0,
                "%s: map %zu is PRESENT (no kind) but there is no enclosing "
                "region to find it in",
                what, k);
        if (!m->host && m->bytes)
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                   "%s: map %zu has a NULL host pointer and "
                                   "%zu bytes",
                                   what, k, m->bytes);
        for (size_t l = 0; l < k; l++)
            if (overlaps((uintptr_t)m->host, m->bytes,
                         (uintptr_t)maps[l].host, maps[l].bytes))
                return kiln__error_set(
                    KILN_ERROR_INVALID_ARGUMENT, 0,
                    "%s: maps %zu [%p, +%zu bytes) and %zu [%p, +%zu bytes) "
                    "overlap: the same host memory may be mapped only once "
                    "in a region (as in OpenMP)",
                    what, l, maps[l].host, maps[l].bytes, k, m->host,
                    m->bytes);
    }
    return KILN_OK;
}

/* ------------------------------------------------------------- data regions */

kiln_status kiln_data_region_begin(kiln_queue *queue,
                                   kiln_data_region *parent, size_t num_maps,
                                   const kiln_data_map *maps,
                                   kiln_data_region **region) {
    static const char *what = "kiln_data_region_begin";
    if (region)
        *region = NULL;
    if (!queue || !region || (num_maps && !maps))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL",
                               what,
                               !queue ? "queue" : !region ? "region" : "maps");
    kiln_context *ctx = kiln_queue_context(queue);
    if (parent && parent->context != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue belongs to another context than "
                               "the parent region",
                               what);
    kiln_status st = check_maps(what, num_maps, maps, parent != NULL);
    if (st != KILN_OK)
        return st;

    kiln_data_region *r = calloc(1, sizeof *r);
    dmap *dm = num_maps ? calloc(num_maps, sizeof *dm) : NULL;
    if (!r || (num_maps && !dm)) {
        free(r);
        free(dm);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    kiln_queue_retain(queue);
    r->queue = queue;
    r->context = ctx;
    r->parent = parent;
    r->root = parent ? parent->root : r;
    r->maps = dm;
    r->n = num_maps;
    atomic_init(&r->children, 0);
    if (!parent && pthread_mutex_init(&r->mu, NULL) != 0) {
        kiln_queue_release(queue);
        free(dm);
        free(r);
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "%s: mutex", what);
    }
    if (parent)
        atomic_fetch_add(&parent->children, 1);

    /* Resolve or allocate every range before enqueueing anything. */
    for (size_t k = 0; k < num_maps; k++) {
        dmap *m = &dm[k];
        m->host = (uintptr_t)maps[k].host;
        m->bytes = maps[k].bytes;
        m->kind = maps[k].kind;
        if (!m->bytes)
            continue;
        const dmap *pm = NULL;
        int found = parent ? find_map(parent, m->host, m->bytes, what, &pm,
                                      &st)
                           : 0;
        if (found < 0)
            goto fail;
        if (found) {
            kiln_buffer_retain(pm->buf);
            m->buf = pm->buf;
            m->off = pm->off + (m->host - pm->host);
            continue;
        }
        if (m->kind == KILN_DATA_PRESENT) {
            st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                 "%s: map %zu [%p, +%zu bytes) is PRESENT but "
                                 "no enclosing region maps it",
                                 what, k, (void *)m->host, m->bytes);
            goto fail;
        }
        st = kiln_buffer_create(ctx, m->bytes, KILN_BUFFER_READ_WRITE, NULL,
                                &m->buf);
        if (st != KILN_OK) {
            kiln__error_prefix(st, "%s: map %zu (%zu bytes)", what, k,
                               m->bytes);
            goto fail;
        }
        m->owned = 1;
        r->stats.allocations++;
        r->stats.bytes_allocated += m->bytes;
    }

    /* Copies in, ordered after the tree's earlier work. */
    kiln_data_region *root = r->root;
    if (parent)
        pthread_mutex_lock(&root->mu);
    kiln_event *tail = tail_of(r);
    evlist evs = {0};
    for (size_t k = 0; k < num_maps && st == KILN_OK; k++) {
        dmap *m = &dm[k];
        if (!m->bytes || !(m->kind & KILN_DATA_TO))
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_write_async(queue, m->buf, m->off, m->bytes,
                                     (const void *)m->host, tail ? 1 : 0,
                                     &tail, &e);
        if (st == KILN_OK) {
            st = ev_push(&evs, e);
            r->stats.copies_to++;
            r->stats.bytes_to += m->bytes;
        }
    }
    kiln_event *fin = NULL;
    if (st == KILN_OK && evs.n)
        st = ev_join(queue, &evs, &fin);
    if (st == KILN_OK && fin)
        tail_set(r, fin);
    kiln_event_release(fin);
    kiln_event_release(tail);
    if (parent)
        pthread_mutex_unlock(&root->mu);
    if (st != KILN_OK) {
        ev_drain(&evs, 1);
        goto fail;
    }
    *region = r;
    return KILN_OK;
fail:
    region_free(r);
    return st;
}

kiln_status kiln_data_region_wait(kiln_data_region *region) {
    if (!region)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_data_region_wait: region is NULL");
    pthread_mutex_lock(&region->root->mu);
    kiln_event *t = tail_of(region);
    pthread_mutex_unlock(&region->root->mu);
    if (!t)
        return KILN_OK;
    kiln_status st = kiln_event_wait(t);
    kiln_event_release(t);
    return st;
}

static kiln_status region_end(kiln_data_region *r, kiln_event **event,
                              int block) {
    static const char *what = "kiln_data_region_end";
    if (event)
        *event = NULL;
    if (!r)
        return KILN_OK;
    if (atomic_load(&r->children) > 0)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: %d nested region(s) are still open; end "
                               "them first",
                               what, atomic_load(&r->children));
    kiln_data_region *root = r->root;
    pthread_mutex_lock(&root->mu);
    kiln_event *tail = tail_of(r);
    evlist evs = {0};
    kiln_status st = KILN_OK;
    for (size_t k = 0; k < r->n && st == KILN_OK; k++) {
        dmap *m = &r->maps[k];
        if (!m->bytes || !(m->kind & KILN_DATA_FROM))
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_read_async(r->queue, m->buf, m->off, m->bytes,
                                    (void *)m->host, tail ? 1 : 0, &tail, &e);
        if (st == KILN_OK)
            st = ev_push(&evs, e);
    }
    kiln_event *fin = NULL;
    if (st == KILN_OK) {
        if (evs.n)
            st = ev_join(r->queue, &evs, &fin);
        else if (tail) {
            fin = tail;
            kiln_event_retain(fin);
        } else {
            st = kiln_queue_marker(r->queue, 0, NULL, &fin);
        }
    }
    if (st == KILN_OK && r != root)
        tail_set(r, fin);
    pthread_mutex_unlock(&root->mu);
    kiln_event_release(tail);
    if (st != KILN_OK) {
        ev_drain(&evs, 1);
        region_free(r);
        return st;
    }
    region_free(r);
    if (block) {
        st = kiln_event_wait(fin);
        kiln_event_release(fin);
        return st;
    }
    if (event)
        *event = fin;
    else
        kiln_event_release(fin);
    return KILN_OK;
}

kiln_status kiln_data_region_end(kiln_data_region *region) {
    return region_end(region, NULL, 1);
}

kiln_status kiln_data_region_end_async(kiln_data_region *region,
                                       kiln_event **event) {
    return region_end(region, event, 0);
}

kiln_status kiln_data_region_lookup(kiln_data_region *region,
                                    const void *host, kiln_buffer **buffer,
                                    size_t *offset, size_t *bytes_left) {
    static const char *what = "kiln_data_region_lookup";
    if (buffer)
        *buffer = NULL;
    if (!region || !host || !buffer || !offset)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL",
                               what,
                               !region ? "region"
                               : !host ? "host"
                               : !buffer ? "buffer"
                                         : "offset");
    const dmap *m = NULL;
    kiln_status st = KILN_OK;
    int found = find_map(region, (uintptr_t)host, 0, what, &m, &st);
    if (found < 0)
        return st;
    if (!found)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: %p is not mapped in the region or its "
                               "parents",
                               what, host);
    *buffer = m->buf;
    *offset = m->off + ((uintptr_t)host - m->host);
    if (bytes_left)
        *bytes_left = m->bytes - ((uintptr_t)host - m->host);
    return KILN_OK;
}

kiln_status kiln_data_region_update(kiln_data_region *region, void *host,
                                    size_t bytes, kiln_data_kind kind,
                                    kiln_event **event) {
    static const char *what = "kiln_data_region_update";
    if (event)
        *event = NULL;
    if (!region || (!host && bytes))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL",
                               what, !region ? "region" : "host");
    if (kind != KILN_DATA_TO && kind != KILN_DATA_FROM)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: kind is %s; want KILN_DATA_TO or "
                               "KILN_DATA_FROM",
                               what, kind_name(kind));
    const dmap *m = NULL;
    kiln_status st = KILN_OK;
    if (bytes) {
        int found = find_map(region, (uintptr_t)host, bytes, what, &m, &st);
        if (found < 0)
            return st;
        if (!found)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: [%p, +%zu bytes) is not mapped in the "
                                   "region or its parents",
                                   what, host, bytes);
    }
    pthread_mutex_lock(&region->root->mu);
    kiln_event *tail = tail_of(region), *e = NULL;
    if (!bytes) {
        st = tail ? (kiln_event_retain(tail), e = tail, KILN_OK)
                  : kiln_queue_marker(region->queue, 0, NULL, &e);
    } else {
        size_t off = m->off + ((uintptr_t)host - m->host);
        if (kind == KILN_DATA_TO) {
            st = kiln_buffer_write_async(region->queue, m->buf, off, bytes,
                                         host, tail ? 1 : 0, &tail, &e);
            region->stats.copies_to += st == KILN_OK;
            region->stats.bytes_to += st == KILN_OK ? bytes : 0;
        } else {
            st = kiln_buffer_read_async(region->queue, m->buf, off, bytes,
                                        host, tail ? 1 : 0, &tail, &e);
            region->stats.copies_from += st == KILN_OK;
            region->stats.bytes_from += st == KILN_OK ? bytes : 0;
        }
        if (st == KILN_OK)
            tail_set(region, e);
    }
    pthread_mutex_unlock(&region->root->mu);
    kiln_event_release(tail);
    if (st != KILN_OK)
        return st;
    if (event)
        *event = e;
    else
        kiln_event_release(e);
    return KILN_OK;
}

kiln_status kiln_data_region_get_stats(kiln_data_region *region,
                                       kiln_offload_stats *stats) {
    if (!region || !stats)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_data_region_get_stats: %s is NULL",
                               region ? "stats" : "region");
    pthread_mutex_lock(&region->root->mu);
    *stats = region->stats;
    pthread_mutex_unlock(&region->root->mu);
    return KILN_OK;
}

/* ----------------------------------------------------------------- offloads */

static int is_ident(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* Splits "i, j" into dims identifiers. */
static kiln_status parse_indices(const char *names, unsigned dims,
                                 char out[3][64]) {
    static const char *defaults[3] = {"i", "j", "k"};
    if (!names) {
        for (unsigned d = 0; d < dims; d++)
            strcpy(out[d], defaults[d]);
        return KILN_OK;
    }
    unsigned d = 0;
    const char *s = names;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        const char *b = s;
        while (*s && *s != ',' && !isspace((unsigned char)*s))
            s++;
        size_t len = (size_t)(s - b);
        while (isspace((unsigned char)*s))
            s++;
        if (d == dims || len == 0 || len >= 64)
            goto bad;
        memcpy(out[d], b, len);
        out[d][len] = 0;
        if (!is_ident(out[d]) || !strncmp(out[d], "kiln_", 5))
            goto bad;
        for (unsigned e = 0; e < d; e++)
            if (!strcmp(out[e], out[d]))
                goto bad;
        d++;
        if (!*s)
            break;
        if (*s != ',')
            goto bad;
        s++;
    }
    if (d == dims)
        return KILN_OK;
bad:
    return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                           "kiln_offload_create: index_names \"%s\" must be "
                           "%u distinct identifiers separated by commas "
                           "(not starting with kiln_)",
                           names, dims);
}

/* Builds the program; on a compile error, quotes the body and the
 * compiler's first error lines. */
static kiln_status build(kiln_context *ctx, const char *source,
                         const char *build_options, const char *body,
                         kiln_program **prog) {
    kiln_program_opts po = {KILN_LANG_AUTO, build_options, 0};
    kiln_status st = kiln_program_create(ctx, source, &po, prog);
    if (st != KILN_ERROR_BUILD)
        return st;
    const char *log = kiln_last_build_log();
    char first[1024] = "";
    size_t used = 0;
    int lines = 0;
    for (const char *l = log ? log : ""; *l && lines < 3;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        const char *er = strstr(l, "error");
        if (er && (size_t)(er - l) < len && used + len + 4 < sizeof first) {
            memcpy(first + used, l, len);
            used += len;
            memcpy(first + used, " | ", 4);
            used += 3;
            lines++;
        }
        if (!e)
            break;
        l = e + 1;
    }
    if (!used && log)
        snprintf(first, sizeof first, "%.600s", log);
    return kiln__error_set(KILN_ERROR_BUILD, kiln_last_error_native(),
                           "kiln_offload_create: the body `%.400s` failed to "
                           "build: %s(full log: kiln_last_build_log())",
                           body, first);
}

kiln_status kiln_offload_create(kiln_context *context, const char *params,
                                const char *body, unsigned dims,
                                const kiln_offload_opts *opts,
                                kiln_offload **offload) {
    static const char *what = "kiln_offload_create";
    if (offload)
        *offload = NULL;
    if (!context || !params || !body || !offload)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL",
                               what,
                               !context ? "context"
                               : !params ? "params"
                               : !body ? "body"
                                       : "offload");
    if (dims < 1 || dims > 3)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: dims is %u; want 1, 2 or 3", what, dims);
    kiln_offload_opts o = opts ? *opts : (kiln_offload_opts){0};
    const char *name = o.name ? o.name : "kiln_offload";
    if (!is_ident(name) || strlen(name) > 128)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: name \"%s\" is not an identifier", what,
                               name);
    char idx[3][64];
    kiln_status st = parse_indices(o.index_names, dims, idx);
    if (st != KILN_OK)
        return st;
    if (!strchr(params, '*'))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: params \"%s\" declare no pointer; an "
                               "offload needs at least one mapped array",
                               what, params);
    kiln__gargs args;
    st = kiln__gargs_parse(params, what, &args);
    if (st != KILN_OK)
        return st;
    for (size_t k = 0; k < args.n; k++) {
        int clash = !strncmp(args.v[k].name, "kiln_", 5);
        for (unsigned d = 0; d < dims; d++)
            clash |= !strcmp(args.v[k].name, idx[d]);
        if (clash) {
            st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                 "%s: parameter '%s' clashes with an index "
                                 "name or kiln's reserved kiln_ prefix",
                                 what, args.v[k].name);
            kiln__gargs_free(&args);
            return st;
        }
    }

    /* The kernel: the last index is dimension 0 (neighbouring work-items),
     * and each pointer arrives as buffer + byte offset. */
    kiln__sb sb = {0};
    if (o.preamble)
        kiln__gen_user(&sb, "offload preamble", o.preamble);
    kiln__sb_addf(&sb,
                  "KILN_KERNEL void %s(long kiln_r0, long kiln_r1, long "
                  "kiln_r2",
                  name);
    for (size_t k = 0; k < args.n; k++) {
        const kiln__garg *g = &args.v[k];
        if (g->is_ptr)
            kiln__sb_addf(&sb, ", KILN_GLOBAL %s%s *kiln_p_%s, long kiln_o_%s",
                          g->is_const ? "const " : "", g->type, g->name,
                          g->name);
        else
            kiln__sb_addf(&sb, ", %s %s", g->type, g->name);
    }
    kiln__sb_add(&sb, ") {\n");
    for (unsigned d = 0; d < dims; d++)
        kiln__sb_addf(&sb, "    long %s = (long)kiln_global_id(%u);\n",
                      idx[d], dims - 1 - d);
    kiln__sb_addf(&sb, "    if (%s >= kiln_r0", idx[0]);
    if (dims > 1)
        kiln__sb_addf(&sb, " || %s >= kiln_r1", idx[1]);
    if (dims > 2)
        kiln__sb_addf(&sb, " || %s >= kiln_r2", idx[2]);
    kiln__sb_add(&sb, ") return;\n    (void)kiln_r1; (void)kiln_r2;\n");
    for (size_t k = 0; k < args.n; k++) {
        const kiln__garg *g = &args.v[k];
        if (!g->is_ptr)
            continue;
        const char *c = g->is_const ? "const " : "";
        kiln__sb_addf(&sb,
                      "    KILN_GLOBAL %s%s *%s = (KILN_GLOBAL %s%s *)"
                      "((KILN_GLOBAL %schar *)kiln_p_%s + kiln_o_%s);\n",
                      c, g->type, g->name, c, g->type, c, g->name, g->name);
    }
    kiln__sb_add(&sb, "    {\n");
    kiln__gen_user(&sb, "offload body", body);
    kiln__sb_add(&sb, "    }\n}\n");
    if (sb.oom) {
        kiln__sb_free(&sb);
        kiln__gargs_free(&args);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }

    kiln_offload *off = calloc(1, sizeof *off);
    if (!off || pthread_mutex_init(&off->mu, NULL) != 0) {
        free(off);
        kiln__sb_free(&sb);
        kiln__gargs_free(&args);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    off->args = args;
    off->dims = dims;
    if (kiln__offload_source_hook)
        kiln__offload_source_hook(sb.p);
    st = build(context, sb.p, o.build_options, body, &off->program);
    kiln__sb_free(&sb);
    if (st == KILN_OK)
        st = kiln_kernel_create(off->program, name, &off->kernel);
    if (st != KILN_OK) {
        kiln_program_release(off->program);
        kiln__gargs_free(&off->args);
        pthread_mutex_destroy(&off->mu);
        free(off);
        return st;
    }
    kiln_context_retain(context);
    off->context = context;
    *offload = off;
    return KILN_OK;
}

void kiln_offload_release(kiln_offload *off) {
    if (!off)
        return;
    kiln_kernel_release(off->kernel);
    kiln_program_release(off->program);
    kiln_context_release(off->context);
    kiln__gargs_free(&off->args);
    pthread_mutex_destroy(&off->mu);
    free(off);
}

kiln_status kiln_offload_get_stats(kiln_offload *off,
                                   kiln_offload_stats *stats) {
    if (!off || !stats)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_offload_get_stats: %s is NULL",
                               off ? "stats" : "offload");
    pthread_mutex_lock(&off->mu);
    *stats = off->stats;
    pthread_mutex_unlock(&off->mu);
    return KILN_OK;
}

/* One resolved pointer argument. */
typedef struct rarg {
    uintptr_t host;
    size_t bytes;
    kiln_buffer *buf; /* retained once allocated/resolved */
    size_t off;
    int owned, in, out;
    int held; /* buf is retained by this run */
} rarg;

/* Work-group shape for GPUs: 256 items, the fastest index widest. */
static void pick_local(const kiln_device_info *info, unsigned dims,
                       size_t *local) {
    static const size_t shape[3][3] = {{256, 1, 1}, {32, 8, 1}, {32, 4, 2}};
    for (unsigned d = 0; d < 3; d++) {
        local[d] = shape[dims - 1][d];
        if (info->max_work_item_sizes[d] && local[d] > info->max_work_item_sizes[d])
            local[d] = info->max_work_item_sizes[d];
    }
    while (info->max_work_group_size &&
           local[0] * local[1] * local[2] > info->max_work_group_size) {
        unsigned big = 0;
        for (unsigned d = 1; d < 3; d++)
            if (local[d] > local[big])
                big = d;
        local[big] /= 2;
    }
}

static kiln_status run_impl(kiln_queue *queue, kiln_offload *off,
                            kiln_data_region *region, const size_t *range,
                            size_t num_args, const kiln_data_map *args,
                            size_t num_wait, kiln_event *const *wait,
                            kiln_event **event, int block) {
    const char *what = block ? "kiln_offload_run" : "kiln_offload_run_async";
    if (event)
        *event = NULL;
    if (!queue || !off || !range || (num_args && !args) ||
        (num_wait && !wait))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL",
                               what,
                               !queue ? "queue"
                               : !off ? "offload"
                               : !range ? "range"
                               : (num_args && !args) ? "args"
                                                     : "wait");
    kiln_context *ctx = kiln_queue_context(queue);
    if (ctx != off->context || (region && region->context != ctx))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue's context differs from the "
                               "%s's",
                               what,
                               ctx != off->context ? "offload" : "region");
    const kiln__gargs *pa = &off->args;
    if (num_args != pa->n)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s: the offload declares %zu parameters; got "
                               "%zu arguments",
                               what, pa->n, num_args);
    size_t total = 1;
    for (unsigned d = 0; d < off->dims; d++) {
        if (range[d] > (size_t)LONG_MAX / 2)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: range[%u] = %zu is too large", what,
                                   d, range[d]);
        total = range[d] ? total * range[d] : 0;
    }

    rarg *ra = calloc(pa->n ? pa->n : 1, sizeof *ra);
    kiln_arg *ka = calloc(3 + 2 * pa->n, sizeof *ka);
    kiln_event **deps = calloc(num_wait + 1, sizeof *deps);
    if (!ra || !ka || !deps) {
        free(ra);
        free(ka);
        free(deps);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    kiln_status st = KILN_OK;
    kiln_offload_stats delta = {0};
    evlist ins = {0}, outs = {0};
    kiln_event *launch = NULL, *fin = NULL, *tailref = NULL;
    int locked = 0;
    size_t nk = 0, ndeps = 0;

    /* 1. Check and resolve every argument; nothing is allocated yet. */
    for (size_t k = 0; k < pa->n && st == KILN_OK; k++) {
        const kiln__garg *g = &pa->v[k];
        const kiln_data_map *a = &args[k];
        int is_scalar = a->scalar.kind == KILN_ARG_SCALAR;
        if (!g->is_ptr) {
            if (!is_scalar)
                st = kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                     "%s: parameter %zu '%s' is a scalar of "
                                     "type %s; pass KILN_SCALAR_*(value)",
                                     what, k, g->name, g->type);
            else if (a->scalar.dtype != g->dtype)
                st = kiln__error_set(
                    KILN_ERROR_KERNEL_ARGS, 0,
                    "%s: parameter %zu '%s' is declared %s but the scalar "
                    "passed is %s",
                    what, k, g->name, g->type,
                    kiln_dtype_name(a->scalar.dtype));
            continue;
        }
        if (is_scalar || a->scalar.kind != 0) {
            st = kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                 "%s: parameter %zu '%s' is a pointer (%s *); "
                                 "pass a host range with a map kind "
                                 "(KILN_TO, KILN_FROM, ..., KILN_PRESENT)",
                                 what, k, g->name, g->type);
            continue;
        }
        if ((unsigned)a->kind > KILN_DATA_ALLOC) {
            st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                 "%s: argument %zu '%s' has map kind %d", what,
                                 k, g->name, (int)a->kind);
            continue;
        }
        if (!a->host && a->bytes) {
            st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                 "%s: argument %zu '%s' has a NULL host "
                                 "pointer and %zu bytes",
                                 what, k, g->name, a->bytes);
            continue;
        }
        size_t es = kiln_dtype_size(g->dtype);
        if (es && a->bytes % es) {
            st = kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                                 "%s: argument %zu '%s' maps %zu bytes, not "
                                 "a multiple of sizeof(%s) = %zu",
                                 what, k, g->name, a->bytes, g->type, es);
            continue;
        }
        rarg *r = &ra[k];
        r->host = (uintptr_t)a->host;
        r->bytes = a->bytes;
        const dmap *m = NULL;
        int found = region && a->host
                        ? find_map(region, r->host, r->bytes, what, &m, &st)
                        : 0;
        if (found < 0) {
            kiln__error_prefix(st, "argument %zu '%s'", k, g->name);
            continue;
        }
        if (found) {
            r->buf = m->buf;
            r->off = m->off + (r->host - m->host);
            r->in = r->bytes && (a->kind & KILN_DATA_TO);
            r->out = r->bytes && (a->kind & KILN_DATA_FROM);
            continue;
        }
        if (a->kind == KILN_DATA_PRESENT) {
            st = kiln__error_set(
                KILN_ERROR_INVALID_ARGUMENT, 0,
                "%s: argument %zu '%s' (%p) is not mapped in %s and has no "
                "map kind; map it in the region or pass KILN_TO/FROM/TOFROM/"
                "ALLOC(ptr, bytes)",
                what, k, g->name, a->host,
                region ? "the data region" : "a data region (none given)");
            continue;
        }
        r->owned = 1;
        r->in = r->bytes && (a->kind & KILN_DATA_TO);
        r->out = r->bytes && (a->kind & KILN_DATA_FROM);
        for (size_t l = 0; l < k; l++)
            if (ra[l].owned && overlaps(r->host, r->bytes, ra[l].host,
                                        ra[l].bytes))
                st = kiln__error_set(
                    KILN_ERROR_INVALID_ARGUMENT, 0,
                    "%s: arguments %zu '%s' and %zu '%s' map overlapping "
                    "host memory; map it once in a data region and pass "
                    "KILN_PRESENT pointers to share it",
                    what, l, pa->v[l].name, k, g->name);
    }
    if (st != KILN_OK)
        goto done;

    /* 2. A range with a 0: nothing runs and no data moves. */
    for (size_t w = 0; w < num_wait; w++)
        deps[ndeps++] = wait[w];
    if (total == 0) {
        if (event)
            st = kiln_queue_marker(queue, ndeps, deps, event);
        goto done;
    }

    /* 3. Device buffers for unmapped ranges. */
    for (size_t k = 0; k < pa->n && st == KILN_OK; k++) {
        rarg *r = &ra[k];
        if (!pa->v[k].is_ptr)
            continue;
        if (!r->owned) {
            kiln_buffer_retain(r->buf);
            r->held = 1;
            continue;
        }
        size_t bytes = r->bytes ? r->bytes : 16; /* kernels need a buffer */
        kiln_buffer *b = NULL;
        st = kiln_buffer_create(ctx, bytes, KILN_BUFFER_READ_WRITE, NULL, &b);
        if (st != KILN_OK) {
            kiln__error_prefix(st, "%s: argument %zu '%s' (%zu bytes)", what,
                               k, pa->v[k].name, bytes);
            break;
        }
        r->buf = b;
        r->held = 1;
        delta.allocations++;
        delta.bytes_allocated += bytes;
    }
    if (st != KILN_OK)
        goto done;

    /* 4. Enqueue: copies in, launch, copies out, ordered after the region's
     * earlier work and the caller's wait list. */
    if (region) {
        pthread_mutex_lock(&region->root->mu);
        locked = 1;
        tailref = tail_of(region);
        if (tailref)
            deps[ndeps++] = tailref;
    }
    for (size_t k = 0; k < pa->n && st == KILN_OK; k++) {
        rarg *r = &ra[k];
        if (!pa->v[k].is_ptr || !r->in)
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_write_async(queue, r->buf, r->off, r->bytes,
                                     (const void *)r->host, ndeps, deps, &e);
        if (st == KILN_OK) {
            st = ev_push(&ins, e);
            delta.copies_to++;
            delta.bytes_to += r->bytes;
        }
    }
    if (st != KILN_OK)
        goto done;
    ka[nk++] = KILN_ARG_I64((int64_t)range[0]);
    ka[nk++] = KILN_ARG_I64((int64_t)(off->dims > 1 ? range[1] : 1));
    ka[nk++] = KILN_ARG_I64((int64_t)(off->dims > 2 ? range[2] : 1));
    for (size_t k = 0; k < pa->n; k++) {
        if (pa->v[k].is_ptr) {
            ka[nk++] = KILN_ARG_BUF(ra[k].buf);
            ka[nk++] = KILN_ARG_I64((int64_t)ra[k].off);
        } else {
            ka[nk++] = args[k].scalar;
        }
    }
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
    for (unsigned d = 0; d < off->dims; d++)
        global[d] = range[off->dims - 1 - d];
    kiln_device_info info;
    st = kiln_device_get_info(kiln_queue_device(queue), &info);
    if (st != KILN_OK)
        goto done;
    int gpu = info.type != KILN_DEVICE_CPU;
    if (gpu) {
        /* Round up to whole work-groups; the kernel bounds-checks. */
        pick_local(&info, off->dims, local);
        for (unsigned d = 0; d < off->dims; d++)
            global[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    }
    {
        /* The launch waits for the copies in, or, with none, for deps. */
        size_t nw = ins.n ? ins.n : ndeps;
        kiln_event *const *w = ins.n ? ins.v : deps;
        st = kiln_kernel_launch(queue, off->kernel, off->dims, global,
                                gpu ? local : NULL, nk, ka, nw, w, &launch);
    }
    if (st != KILN_OK) {
        kiln__error_prefix(st, "%s", what);
        goto done;
    }
    delta.launches++;
    for (size_t k = 0; k < pa->n && st == KILN_OK; k++) {
        rarg *r = &ra[k];
        if (!pa->v[k].is_ptr || !r->out)
            continue;
        kiln_event *e = NULL;
        st = kiln_buffer_read_async(queue, r->buf, r->off, r->bytes,
                                    (void *)r->host, 1, &launch, &e);
        if (st == KILN_OK) {
            st = ev_push(&outs, e);
            delta.copies_from++;
            delta.bytes_from += r->bytes;
        }
    }
    if (st != KILN_OK)
        goto done;
    if (outs.n) {
        st = ev_join(queue, &outs, &fin);
        if (st != KILN_OK)
            goto done;
    } else {
        fin = launch;
        kiln_event_retain(fin);
    }
    if (region)
        tail_set(region, fin);

done:
    if (region) {
        if (!locked)
            pthread_mutex_lock(&region->root->mu);
        stats_add(&region->stats, &delta);
        pthread_mutex_unlock(&region->root->mu);
    }
    kiln_event_release(tailref);
    pthread_mutex_lock(&off->mu);
    stats_add(&off->stats, &delta);
    pthread_mutex_unlock(&off->mu);
    int moved = delta.copies_to || delta.copies_from;
    if (st != KILN_OK) {
        /* Host memory may be reused once we return: let what was enqueued
         * end first. */
        ev_drain(&ins, 1);
        ev_drain(&outs, 1);
        if (launch)
            kiln_event_wait(launch);
        kiln_event_release(launch);
        kiln_event_release(fin);
        fin = NULL;
    } else {
        ev_drain(&ins, 0);
        kiln_event_release(launch);
    }
    for (size_t k = 0; k < pa->n; k++)
        if (ra[k].held)
            kiln_buffer_release(ra[k].buf); /* in-flight work holds its own */
    free(ra);
    free(ka);
    free(deps);
    if (st != KILN_OK || !fin)
        return st;
    if (block && moved) {
        st = kiln_event_wait(fin);
        kiln_event_release(fin);
        return st;
    }
    if (event)
        *event = fin;
    else
        kiln_event_release(fin);
    return st;
}

kiln_status kiln_offload_run(kiln_queue *queue, kiln_offload *offload,
                             kiln_data_region *region, const size_t *range,
                             size_t num_args, const kiln_data_map *args) {
    return run_impl(queue, offload, region, range, num_args, args, 0, NULL,
                    NULL, 1);
}

kiln_status kiln_offload_run_async(kiln_queue *queue, kiln_offload *offload,
                                   kiln_data_region *region,
                                   const size_t *range, size_t num_args,
                                   const kiln_data_map *args, size_t num_wait,
                                   kiln_event *const *wait,
                                   kiln_event **event) {
    return run_impl(queue, offload, region, range, num_args, args, num_wait,
                    wait, event, 0);
}
