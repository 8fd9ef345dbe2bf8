/* The device registry: every backend's devices in one stable list, and
 * selection by string. Loaded once, lazily, under a pthread_once. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/registry.h"
#include "base/fault.h"
#include "base/strbuf.h"
#include "core/internal.h"

static pthread_once_t kiln__reg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t kiln__reg_lock = PTHREAD_MUTEX_INITIALIZER;
static kiln_status kiln__reg_status;
/* Why backends were skipped, kept for later error messages. */
static char kiln__reg_why[4096];
static kiln_device **kiln__reg_devices; /* grows when devices are partitioned */
static size_t kiln__reg_count, kiln__reg_cap;

/* Joined over the registry's backends (those that fill the field in):
 * their install hints ("hint; hint"), or with selector_forms their
 * selector forms ("B:N, B:P:D, ..."), for messages. */
static void kiln__backends_join(char *out, size_t cap, int selector_forms) {
    size_t num_backends = 0, len = 0;
    const kiln__backend *const *backends = kiln__backend_registry(&num_backends);
    out[0] = 0;
    for (size_t i = 0; i < num_backends && len + 1 < cap; i++) {
        const char *s = selector_forms ? backends[i]->selector_prefix : backends[i]->install_hint;
        if (!s || !*s)
            continue;
        int w = selector_forms
                    ? snprintf(out + len, cap - len, "%s%s:N, %s:P:D", len ? ", " : "", s, s)
                    : snprintf(out + len, cap - len, "%s%s", len ? "; " : "", s);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static void kiln__install_hint(char *out, size_t cap) {
    kiln__backends_join(out, cap, 0);
}

static void kiln__why_append(const char *fmt, const char *a, const char *b) {
    size_t len = strlen(kiln__reg_why);
    if (len + 1 >= sizeof kiln__reg_why)
        return;
    snprintf(kiln__reg_why + len, sizeof kiln__reg_why - len, fmt, a, b);
}

/* Appends a device (copied) to the registry; called with the lock held or
 * during the once-initialisation. */
static kiln_device *kiln__reg_add(const kiln__backend *backend, const kiln__bdevice *bdev) {
    if (kiln__reg_count == kiln__reg_cap) {
        size_t cap = kiln__reg_cap ? kiln__reg_cap * 2 : 8;
        kiln_device **grown = kiln__realloc(kiln__reg_devices, cap * sizeof *grown);
        if (!grown)
            return NULL;
        kiln__reg_devices = grown;
        kiln__reg_cap = cap;
    }
    kiln_device *dev = kiln__calloc(1, sizeof *dev);
    if (!dev)
        return NULL;
    dev->b = *bdev;
    if (!dev->b.extensions)
        dev->b.extensions = kiln__strdup("");
    dev->backend = backend;
    dev->index = kiln__reg_count;
    kiln__reg_devices[kiln__reg_count++] = dev;
    return dev;
}

static void kiln__reg_load(void) {
    int loaded = 0;
    kiln__reg_why[0] = 0;
    size_t num_backends = 0;
    const kiln__backend *const *backends = kiln__backend_registry(&num_backends);
    for (size_t i = 0; i < num_backends; i++) {
        const kiln__backend *be = backends[i];
        if (be->abi != KILN__BACKEND_ABI) {
            kiln__why_append("%s backend: wrong ABI version%s; ", be->name, "");
            continue;
        }
        if (!be->selector_prefix || !*be->selector_prefix || !be->load || !be->enumerate) {
            kiln__why_append("%s backend: its table lacks a selector prefix, load or "
                             "enumerate%s; ",
                             be->name, "");
            continue;
        }
        kiln__error_set(KILN_OK, 0, "%s", "");
        if (be->load() != KILN_OK) {
            kiln__why_append("%s: %s; ", be->name, kiln_last_error_message());
            continue;
        }
        kiln__bdevice *devs = NULL;
        size_t n = 0;
        if (be->enumerate(&devs, &n) != KILN_OK) {
            kiln__why_append("%s: %s; ", be->name, kiln_last_error_message());
            free(devs);
            continue;
        }
        loaded = 1;
        if (n == 0)
            kiln__why_append("%s: loaded, but it reports no device%s; ", be->name, "");
        for (size_t d = 0; d < n; d++)
            if (!kiln__reg_add(be, &devs[d]))
                free(devs[d].extensions);
        free(devs);
    }
    kiln__reg_status = loaded ? KILN_OK : KILN_ERROR_NO_RUNTIME;
    kiln__error_set(KILN_OK, 0, "%s", ""); /* a skipped backend is no failure of the caller */
}

kiln_status kiln__registry_init(void) {
    pthread_once(&kiln__reg_once, kiln__reg_load);
    if (kiln__reg_status != KILN_OK) {
        char hint[1024];
        kiln__install_hint(hint, sizeof hint);
        return kiln__error_set(kiln__reg_status, 0, "no compute runtime could be loaded (%s); %s",
                               kiln__reg_why, hint);
    }
    return KILN_OK;
}

kiln_status kiln_device_count(size_t *count) {
    if (!count)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_device_count: count is NULL");
    *count = 0;
    kiln_status st = kiln__registry_init();
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&kiln__reg_lock);
    *count = kiln__reg_count;
    pthread_mutex_unlock(&kiln__reg_lock);
    return KILN_OK;
}

/* The start of the calls that find a device: *device cleared (a NULL
 * device is KILN_ERROR_NULL_HANDLE), then the registry initialised. */
static kiln_status device_lookup_begin(const char *fn, kiln_device **device) {
    if (!device)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: device is NULL", fn);
    *device = NULL;
    return kiln__registry_init();
}

kiln_status kiln_device_at(size_t index, kiln_device **device) {
    kiln_status st = device_lookup_begin("kiln_device_at", device);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&kiln__reg_lock);
    size_t count = kiln__reg_count;
    if (index < count)
        *device = kiln__reg_devices[index];
    pthread_mutex_unlock(&kiln__reg_lock);
    if (!*device)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_device_at: index %zu, but there are %zu devices", index,
                               count);
    return KILN_OK;
}

/* Case-insensitive substring search. */
static int kiln__contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    if (n == 0)
        return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Parses a whole non-negative decimal number; 1 on success. */
static int kiln__parse_index(const char *s, size_t *out) {
    if (!*s)
        return 0;
    size_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || v > (SIZE_MAX - 9) / 10)
            return 0;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return 1;
}

/* If sel starts with the backend's selector prefix and a colon, what
 * follows them; NULL otherwise. */
static const char *kiln__after_prefix(const char *sel, const kiln__backend *be) {
    const char *prefix = be->selector_prefix;
    if (!prefix || !*prefix)
        return NULL;
    for (; *prefix; sel++, prefix++)
        if (tolower((unsigned char)*sel) != tolower((unsigned char)*prefix))
            return NULL;
    return *sel == ':' ? sel + 1 : NULL;
}

/* "B:N" (the N-th top-level device of backend be) or "B:P:D" (platform P,
 * device D), rest being what follows "B:"; with the registry lock held. */
static kiln_device *kiln__select_in_backend_locked(const kiln__backend *be, const char *rest) {
    size_t a, b;
    const char *colon = strchr(rest, ':');
    int by_platform = colon != NULL;
    if (by_platform) {
        char p[32];
        size_t len = (size_t)(colon - rest);
        if (len >= sizeof p)
            return NULL;
        memcpy(p, rest, len);
        p[len] = 0;
        if (!kiln__parse_index(p, &a) || !kiln__parse_index(colon + 1, &b))
            return NULL;
    } else if (!kiln__parse_index(rest, &a)) {
        return NULL;
    }
    for (size_t i = 0, n = 0; i < kiln__reg_count; i++) {
        kiln_device *d = kiln__reg_devices[i];
        if (d->backend != be || d->b.info.is_subdevice)
            continue;
        if (by_platform ? d->b.platform_index == a && d->b.device_index == b : n++ == a)
            return d;
    }
    return NULL;
}

/* Finds the device a selector names, with the registry lock held. */
static kiln_device *kiln__select_locked(const char *sel) {
    size_t a;
    if (kiln__parse_index(sel, &a))
        return a < kiln__reg_count ? kiln__reg_devices[a] : NULL;
    size_t num_backends = 0;
    const kiln__backend *const *backends = kiln__backend_registry(&num_backends);
    for (size_t i = 0; i < num_backends; i++) {
        const char *rest = kiln__after_prefix(sel, backends[i]);
        if (rest)
            return kiln__select_in_backend_locked(backends[i], rest);
        /* the prefix alone ("host", "cuda"): that backend's first device */
        if (backends[i]->selector_prefix && strcasecmp(sel, backends[i]->selector_prefix) == 0) {
            kiln_device *first = kiln__select_in_backend_locked(backends[i], "0");
            if (first)
                return first;
        }
    }
    /* A type word or a substring; sub-devices only by index. */
    int type = 0;
    if (strcasecmp(sel, "cpu") == 0)
        type = KILN_DEVICE_CPU;
    else if (strcasecmp(sel, "gpu") == 0)
        type = KILN_DEVICE_GPU;
    else if (strcasecmp(sel, "accelerator") == 0)
        type = KILN_DEVICE_ACCELERATOR;
    for (size_t i = 0; i < kiln__reg_count; i++) {
        kiln_device *d = kiln__reg_devices[i];
        if (d->b.info.is_subdevice)
            continue;
        if ((type && (int)d->b.info.type == type) || kiln__contains_ci(d->b.info.name, sel) ||
            kiln__contains_ci(d->b.info.vendor, sel) ||
            kiln__contains_ci(d->b.info.platform, sel) ||
            kiln__contains_ci(d->b.info.version, sel) || kiln__contains_ci(d->b.identity, sel) ||
            kiln__contains_ci(d->b.info.id, sel))
            return d;
    }
    return NULL;
}

/* A GPU, then an accelerator, then a CPU; within a type the backend of the
 * highest priority (backend.h), then registry order. */
static kiln_device *kiln__select_default_locked(void) {
    static const kiln_device_type order[] = { KILN_DEVICE_GPU, KILN_DEVICE_ACCELERATOR,
                                              KILN_DEVICE_CPU };
    for (size_t t = 0; t < sizeof order / sizeof order[0]; t++) {
        kiln_device *best = NULL;
        for (size_t i = 0; i < kiln__reg_count; i++) {
            kiln_device *d = kiln__reg_devices[i];
            if (!d->b.info.is_subdevice && d->b.info.type == order[t] &&
                (!best || d->backend->priority > best->backend->priority))
                best = d;
        }
        if (best)
            return best;
    }
    for (size_t i = 0; i < kiln__reg_count; i++)
        if (!kiln__reg_devices[i]->b.info.is_subdevice)
            return kiln__reg_devices[i];
    return NULL;
}

static void kiln__selector_forms(char *out, size_t cap) {
    kiln__backends_join(out, cap, 1);
}

kiln_status kiln_device_select(const char *selector, kiln_device **device) {
    kiln_status st = device_lookup_begin("kiln_device_select", device);
    if (st != KILN_OK)
        return st;
    const char *source = "selector";
    if (!selector || !*selector) {
        const char *env = getenv("KILN_DEVICE");
        if (env && *env) {
            selector = env;
            source = "$KILN_DEVICE";
        } else {
            selector = NULL;
        }
    }
    pthread_mutex_lock(&kiln__reg_lock);
    kiln_device *found = selector ? kiln__select_locked(selector) : kiln__select_default_locked();
    if (found) {
        pthread_mutex_unlock(&kiln__reg_lock);
        *device = found;
        return KILN_OK;
    }
    /* Say what exists. */
    char list[3072];
    size_t len = 0;
    list[0] = 0;
    for (size_t i = 0; i < kiln__reg_count && len + 1 < sizeof list; i++) {
        const kiln_device *d = kiln__reg_devices[i];
        int w = snprintf(list + len, sizeof list - len, "%s  %zu: %s \"%s\" (%s)", i ? "\n" : "", i,
                         d->b.info.id, d->b.info.name, d->b.info.platform);
        if (w < 0)
            break;
        len += (size_t)w;
        if (len >= sizeof list)
            len = sizeof list - 1;
    }
    size_t count = kiln__reg_count;
    pthread_mutex_unlock(&kiln__reg_lock);
    if (count == 0) {
        char hint[1024];
        kiln__install_hint(hint, sizeof hint);
        return kiln__error_set(KILN_ERROR_NO_DEVICE, 0, "no compute device found (%s); %s",
                               kiln__reg_why, hint);
    }
    if (!selector)
        return kiln__error_set(KILN_ERROR_NO_DEVICE, 0, "no usable device; devices:\n%s", list);
    char forms[256];
    kiln__selector_forms(forms, sizeof forms);
    return kiln__error_set(KILN_ERROR_NO_DEVICE, 0,
                           "no device matches %s \"%s\"; use an index, %s, cpu, gpu, "
                           "accelerator or a part of a name; devices:\n%s",
                           source, selector, forms, list);
}

kiln_status(kiln_device_get_info)(const kiln_device *device, kiln_device_info *info,
                                  size_t info_size) {
    if (!device || !info)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_device_get_info: %s is NULL",
                               device ? "info" : "device");
    if (info_size < offsetof(kiln_device_info, backend_name))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_device_get_info: info_size is %zu, less than any version "
                               "of kiln_device_info (call it through the kiln_device_get_info "
                               "macro)",
                               info_size);
    /* An older caller's struct is a prefix of ours; a newer one's extra
     * fields read 0 ("unknown"). */
    size_t n = info_size < sizeof *info ? info_size : sizeof *info;
    memcpy(info, &device->b.info, n);
    memset((char *)info + n, 0, info_size - n);
    return KILN_OK;
}

const char *kiln_device_extensions(const kiln_device *device) {
    if (!device || !device->b.extensions)
        return "";
    return device->b.extensions;
}

/* The sub-devices a backend made (n of them in subs, capacity at most),
 * added to the registry as devices of their own. */
static kiln_status kiln__partition_register(const char *fn, kiln_device *device,
                                            kiln__bdevice *subs, size_t n, size_t capacity,
                                            kiln_device **subdevices, size_t *count) {
    kiln_status st = KILN_OK;
    if (n > capacity) {
        for (size_t j = capacity; j < n; j++)
            free(subs[j].extensions);
        n = capacity;
    }
    pthread_mutex_lock(&kiln__reg_lock);
    for (size_t i = 0; i < n; i++) {
        subs[i].info.is_subdevice = 1;
        kiln_device *d = kiln__reg_add(device->backend, &subs[i]);
        if (!d) {
            for (size_t j = i; j < n; j++)
                free(subs[j].extensions);
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
            break;
        }
        subdevices[i] = d;
        *count = i + 1;
    }
    pthread_mutex_unlock(&kiln__reg_lock);
    return st;
}

kiln_status kiln_device_partition(kiln_device *device, unsigned units_each,
                                  kiln_device **subdevices, size_t capacity, size_t *count) {
    if (!device || !count)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_device_partition: %s is NULL",
                               device ? "count" : "device");
    *count = 0;
    if (capacity > 0 && !subdevices)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_device_partition: subdevices is NULL but capacity is %zu",
                               capacity);
    if (units_each == 0 || capacity == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_device_partition: units_each (%u) and capacity (%zu) "
                               "must be > 0",
                               units_each, capacity);
    if (!device->backend->partition)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "kiln_device_partition: the %s backend cannot partition devices",
                               device->backend->name);
    kiln__bdevice *subs = kiln__calloc(capacity, sizeof *subs);
    if (!subs)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_device_partition: out of memory");
    size_t n = 0;
    kiln_status st = device->backend->partition(&device->b, units_each, subs, capacity, &n);
    if (st != KILN_OK) {
        free(subs);
        return kiln__error_prefix(st, "kiln_device_partition(%s)", device->b.info.id);
    }
    st = kiln__partition_register("kiln_device_partition", device, subs, n, capacity, subdevices,
                                  count);
    free(subs);
    return st;
}

kiln_status kiln_device_split(kiln_device *device, const kiln_split_desc *desc, kiln_device **parts,
                              size_t capacity, size_t *count) {
    static const char fn[] = "kiln_device_split";
    const char *missing = KILN__FIRST_NULL3(device, desc, count);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    *count = 0;
    if (desc->struct_size < sizeof(kiln_split_desc))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: desc->struct_size is %zu; make the descriptor with "
                               "KILN_SPLIT_DESC(...)",
                               fn, desc->struct_size);
    if (capacity == 0 || !parts)
        return kiln__error_set(capacity ? KILN_ERROR_NULL_HANDLE : KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: parts is %s and capacity %zu (room for the parts is needed)",
                               fn, parts ? "given" : "NULL", capacity);
    if ((desc->units_each != 0) == (desc->num_counts != 0))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: give either units_each (%u) or counts (%zu of them), not %s",
                               fn, desc->units_each, desc->num_counts,
                               desc->units_each ? "both" : "neither");
    if (desc->units_each)
        return kiln_device_partition(device, desc->units_each, parts, capacity, count);
    if (!desc->counts)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: counts is NULL but num_counts is %zu", fn, desc->num_counts);
    unsigned total = 0;
    for (size_t i = 0; i < desc->num_counts; i++) {
        if (desc->counts[i] == 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: counts[%zu] is 0", fn, i);
        total += desc->counts[i];
        if (total > device->b.info.compute_units)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: the counts add up to more than the %u compute units of %s",
                                   fn, device->b.info.compute_units, device->b.info.id);
    }
    if (desc->num_counts > capacity)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: %zu parts asked for, room for %zu",
                               fn, desc->num_counts, capacity);
    if (!device->backend->partition_counts)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s(%s): the %s backend cannot split a device by counts", fn,
                               device->b.info.id, device->backend->name);
    kiln__bdevice *subs = kiln__calloc(desc->num_counts, sizeof *subs);
    if (!subs)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    size_t n = 0;
    kiln_status st = device->backend->partition_counts(&device->b, desc->counts, desc->num_counts,
                                                       subs, desc->num_counts, &n);
    if (st != KILN_OK) {
        free(subs);
        return kiln__error_prefix(st, "%s(%s)", fn, device->b.info.id);
    }
    st = kiln__partition_register(fn, device, subs, n, capacity, parts, count);
    free(subs);
    return st;
}
