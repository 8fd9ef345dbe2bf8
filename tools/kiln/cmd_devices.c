/* kiln devices, kiln info [SELECTOR] */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "kiln.h"

/* What to install when nothing is found; the library's own message comes
 * first, this is the fallback when it has none. */
static const char kiln_install_hint[] =
    "Install a compute runtime: on Debian/Ubuntu 'apt-get install "
    "ocl-icd-libopencl1 pocl-opencl-icd' runs kiln on the CPU; for an NVIDIA "
    "GPU install the NVIDIA driver (libcuda.so.1).";

static const char *kiln_type_name(kiln_device_type type) {
    switch (type) {
    case KILN_DEVICE_CPU:
        return "CPU";
    case KILN_DEVICE_GPU:
        return "GPU";
    case KILN_DEVICE_ACCELERATOR:
        return "ACCEL";
    default:
        return "OTHER";
    }
}

static const char *kiln_backend_name(kiln_backend_kind kind) {
    switch (kind) {
    case KILN_BACKEND_OPENCL:
        return "OpenCL";
    case KILN_BACKEND_CUDA:
        return "CUDA";
    case KILN_BACKEND_HOST:
        return "host";
    }
    return "unknown";
}

/* Counts the devices; prints why there are none and returns 0 then. */
static size_t kiln_count_or_explain(void) {
    size_t count = 0;
    kiln_status st = kiln_device_count(&count);
    if (st != KILN_OK) {
        const char *msg = kiln_last_error_message();
        fprintf(stderr, "kiln: %s\n", msg && *msg ? msg : kiln_status_string(st));
        if (st != KILN_ERROR_NO_RUNTIME || !msg || !*msg)
            fprintf(stderr, "%s\n", kiln_install_hint);
        return 0;
    }
    if (count == 0)
        fprintf(stderr,
                "kiln: no devices found: no OpenCL platform is registered "
                "(/etc/OpenCL/vendors) and no CUDA device is present.\n"
                "%s\n",
                kiln_install_hint);
    return count;
}

/* ------------------------------------------------------------ kiln devices */

static const char kiln_devices_usage[] =
    "usage: kiln devices\n"
    "\n"
    "Lists every device kiln can use, one per line: its selector (ID), type,\n"
    "name, compute units, global memory and version. '*' marks the device\n"
    "used when none is named ($KILN_DEVICE, else a GPU, then an accelerator,\n"
    "then a CPU). Exits with status 1 when there is no device or no runtime,\n"
    "saying what to install.\n";

enum { KILN_NAME_MAX = 44, KILN_VERSION_MAX = 36 };

typedef struct kiln_device_row {
    char mark[2];
    char id[32];
    const char *type;
    char name[KILN_NAME_MAX + 1];
    char units[16];
    char memory[24];
    char version[KILN_VERSION_MAX + 1];
} kiln_device_row;

/* "OpenCL 3.0, driver 3.1+debian": the API version (the first two words of
 * the device version; PoCL appends a long host triple) and the driver's.
 * CUDA devices show their architecture, "CUDA sm_90, driver 13.0": the
 * device version "CUDA 9.0" is the compute capability, which reads like a
 * toolkit version in a table. */
static void kiln_short_version(const kiln_device_info *info, char *buf, size_t capacity) {
    char full[320];
    size_t n = strcspn(info->version, " ");
    if (info->version[n] == ' ')
        n += 1 + strcspn(info->version + n + 1, " ");
    if (info->backend == KILN_BACKEND_CUDA && info->compute_capability)
        snprintf(full, sizeof full, "CUDA sm_%u%s%s", info->compute_capability,
                 info->driver_version[0] ? ", driver " : "", info->driver_version);
    else if (info->driver_version[0])
        snprintf(full, sizeof full, "%.*s, driver %s", (int)n, info->version, info->driver_version);
    else
        snprintf(full, sizeof full, "%.*s", (int)n, info->version);
    kiln_cli_fit(full, KILN_VERSION_MAX, buf, capacity);
}

/* The name without trademark marks ("Intel(R) Xeon(R)" -> "Intel Xeon"),
 * which only cost table width, and with runs of spaces collapsed. */
static void kiln_table_name(const char *name, char *buf, size_t capacity) {
    static const char *const marks[] = { "(R)", "(r)", "(TM)", "(tm)" };
    char clean[256];
    size_t o = 0;
    for (const char *p = name; *p && o + 1 < sizeof clean;) {
        size_t skip = 0;
        for (size_t m = 0; m < sizeof marks / sizeof marks[0] && !skip; m++)
            if (strncmp(p, marks[m], strlen(marks[m])) == 0)
                skip = strlen(marks[m]);
        if (skip) {
            p += skip;
            continue;
        }
        if (*p == ' ' && (o == 0 || clean[o - 1] == ' ')) {
            p++;
            continue;
        }
        clean[o++] = *p++;
    }
    while (o && clean[o - 1] == ' ')
        o--;
    clean[o] = 0;
    kiln_cli_fit(clean[0] ? clean : name, KILN_NAME_MAX, buf, capacity);
}

int kiln_cmd_devices(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (kiln_cli_is_help(argv[i])) {
            fputs(kiln_devices_usage, stdout);
            return KILN_CLI_OK;
        }
        return kiln_cli_usage_error("devices", kiln_devices_usage, "unexpected argument '%s'",
                                    argv[i]);
    }
    size_t count = kiln_count_or_explain();
    if (count == 0)
        return KILN_CLI_FAILED;
    kiln_device *chosen = NULL;
    if (kiln_device_select(NULL, &chosen) != KILN_OK)
        chosen = NULL; /* a bad $KILN_DEVICE: the table is still useful */

    kiln_device_row *rows = calloc(count, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "kiln: out of memory\n");
        return KILN_CLI_FAILED;
    }
    /* Column widths start at the headings' widths. */
    size_t w_id = 2, w_type = 4, w_name = 4, w_units = 2, w_mem = 6;
    size_t shown = 0;
    int any_opencl = 0;
    for (size_t i = 0; i < count; i++) {
        kiln_device *dev = NULL;
        kiln_device_info info;
        if (kiln_device_at(i, &dev) != KILN_OK || kiln_device_get_info(dev, &info) != KILN_OK) {
            fprintf(stderr, "kiln: device %zu: %s\n", i, kiln_last_error_message());
            continue;
        }
        any_opencl |= info.backend == KILN_BACKEND_OPENCL;
        kiln_device_row *r = &rows[shown++];
        snprintf(r->mark, sizeof r->mark, "%s", dev == chosen ? "*" : " ");
        snprintf(r->id, sizeof r->id, "%s", info.id);
        r->type = kiln_type_name(info.type);
        kiln_table_name(info.name, r->name, sizeof r->name);
        snprintf(r->units, sizeof r->units, "%u", info.compute_units);
        kiln_cli_format_bytes(info.global_mem_bytes, r->memory, sizeof r->memory);
        kiln_short_version(&info, r->version, sizeof r->version);
#define KILN_WIDEN(w, s) \
    if (strlen(s) > (w)) \
    (w) = strlen(s)
        KILN_WIDEN(w_id, r->id);
        KILN_WIDEN(w_type, r->type);
        KILN_WIDEN(w_name, r->name);
        KILN_WIDEN(w_units, r->units);
        KILN_WIDEN(w_mem, r->memory);
#undef KILN_WIDEN
    }
    printf("  %-*s  %-*s  %-*s  %*s  %*s  %s\n", (int)w_id, "ID", (int)w_type, "TYPE", (int)w_name,
           "NAME", (int)w_units, "CU", (int)w_mem, "MEMORY", "VERSION");
    for (size_t i = 0; i < shown; i++) {
        const kiln_device_row *r = &rows[i];
        printf("%s %-*s  %-*s  %-*s  %*s  %*s  %s\n", r->mark, (int)w_id, r->id, (int)w_type,
               r->type, (int)w_name, r->name, (int)w_units, r->units, (int)w_mem, r->memory,
               r->version);
    }
    if (chosen)
        printf("\n* default device%s. Select another with KILN_DEVICE=<ID or "
               "part of the name>.\n",
               getenv("KILN_DEVICE") && *getenv("KILN_DEVICE") ? " (from KILN_DEVICE)" : "");
    else
        printf("\nKILN_DEVICE does not match any device: %s\n", kiln_last_error_message());
    free(rows);
    /* Devices, but none of them OpenCL (a CUDA machine without an OpenCL
     * platform registered): say so, on stderr, so that the table stays
     * clean and the missing CPU runtime is not a silent surprise. */
    if (shown && !any_opencl)
        fprintf(stderr, "kiln: note: no OpenCL platform was found (none registered in "
                        "/etc/OpenCL/vendors or $OCL_ICD_VENDORS), so only CUDA and host devices "
                        "are listed. To also run on PoCL, install an OpenCL loader and PoCL "
                        "(Debian/Ubuntu: apt-get install ocl-icd-libopencl1 pocl-opencl-icd); "
                        "NVIDIA's own OpenCL comes with its driver.\n");
    return shown ? KILN_CLI_OK : KILN_CLI_FAILED;
}

/* --------------------------------------------------------------- kiln info */

static const char kiln_info_usage[] =
    "usage: kiln info [SELECTOR]\n"
    "       kiln info --all\n"
    "\n"
    "Shows every property of one device: the default one (as chosen by\n"
    "$KILN_DEVICE, else a GPU, then an accelerator, then a CPU), or the one\n"
    "SELECTOR names: an ID from 'kiln devices' (\"opencl:0:1\", \"cuda:0\"),\n"
    "an index (\"0\") or part of the name, vendor or platform (\"pocl\",\n"
    "\"nvidia\", \"gpu\", \"cpu\"). --all shows every device.\n";

static void kiln_info_line(const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

enum { KILN_INFO_KEY_WIDTH = 22 };

static void kiln_info_line(const char *key, const char *fmt, ...) {
    va_list ap;
    printf("  %-*s", KILN_INFO_KEY_WIDTH, key);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void kiln_info_bytes(const char *key, uint64_t bytes) {
    char buf[32];
    if (bytes == 0) {
        kiln_info_line(key, "unknown");
        return;
    }
    kiln_cli_format_bytes(bytes, buf, sizeof buf);
    kiln_info_line(key, "%s (%llu bytes)", buf, (unsigned long long)bytes);
}

static void kiln_info_print(kiln_device *dev, int is_default) {
    kiln_device_info info;
    if (kiln_device_get_info(dev, &info) != KILN_OK) {
        fprintf(stderr, "kiln: %s\n", kiln_last_error_message());
        return;
    }
    printf("%s%s\n", info.id, is_default ? "  (default device)" : "");
    kiln_info_line("Name", "%s", info.name);
    kiln_info_line("Type", "%s%s", kiln_type_name(info.type),
                   info.is_subdevice ? " (sub-device)" : "");
    kiln_info_line("Backend", "%s", kiln_backend_name(info.backend));
    kiln_info_line("Vendor", "%s", info.vendor);
    kiln_info_line("Platform", "%s", info.platform);
    kiln_info_line("Version", "%s", info.version);
    kiln_info_line("Driver version", "%s", info.driver_version);
    kiln_info_line("Compute units", "%u", info.compute_units);
    if (info.clock_mhz)
        kiln_info_line("Clock", "%u MHz", info.clock_mhz);
    else
        kiln_info_line("Clock", "unknown");
    kiln_info_bytes("Global memory", info.global_mem_bytes);
    kiln_info_bytes("Max allocation", info.max_alloc_bytes);
    kiln_info_bytes("Local memory", info.local_mem_bytes);
    kiln_info_bytes("L2 cache", info.l2_cache_bytes);
    kiln_info_line("Max work-group size", "%zu", info.max_work_group_size);
    kiln_info_line("Max work-item sizes", "%zu x %zu x %zu", info.max_work_item_sizes[0],
                   info.max_work_item_sizes[1], info.max_work_item_sizes[2]);
    if (info.subgroup_size)
        kiln_info_line("Subgroup size", "%u", info.subgroup_size);
    else
        kiln_info_line("Subgroup size", "unknown");
    if (info.backend == KILN_BACKEND_CUDA)
        kiln_info_line("Compute capability", "%u.%u", info.compute_capability / 10,
                       info.compute_capability % 10);
    kiln_info_line("Double precision", "%s", info.fp64 ? "yes" : "no");
    kiln_info_line("Half precision", "%s", info.fp16 ? "yes" : "no");
    const char *ext = kiln_device_extensions(dev);
    size_t n_ext = 0;
    for (const char *p = ext ? ext : ""; *p;) {
        p += strspn(p, " ");
        if (*p) {
            n_ext++;
            p += strcspn(p, " ");
        }
    }
    char key[32];
    snprintf(key, sizeof key, "Extensions (%zu)", n_ext);
    printf("  %-*s", KILN_INFO_KEY_WIDTH, key);
    if (n_ext)
        kiln_cli_print_wrapped(stdout, ext, 2 + KILN_INFO_KEY_WIDTH, 79);
    else
        printf("none\n");
}

int kiln_cmd_info(int argc, char **argv) {
    const char *selector = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (kiln_cli_is_help(argv[i])) {
            fputs(kiln_info_usage, stdout);
            return KILN_CLI_OK;
        }
        if (strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-a") == 0) {
            all = 1;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return kiln_cli_usage_error("info", kiln_info_usage, "unknown option '%s'", argv[i]);
        if (selector)
            return kiln_cli_usage_error("info", kiln_info_usage,
                                        "one selector at most ('%s' and '%s')", selector, argv[i]);
        selector = argv[i];
    }
    if (all && selector)
        return kiln_cli_usage_error("info", kiln_info_usage, "--all takes no selector");
    size_t count = kiln_count_or_explain();
    if (count == 0)
        return KILN_CLI_FAILED;
    kiln_device *chosen = NULL;
    kiln_status st = kiln_device_select(all ? NULL : selector, &chosen);
    if (!all) {
        if (st != KILN_OK) {
            fprintf(stderr, "kiln: %s\n", kiln_last_error_message());
            return KILN_CLI_FAILED;
        }
        kiln_device *def = NULL;
        if (selector && kiln_device_select(NULL, &def) != KILN_OK)
            def = NULL;
        kiln_info_print(chosen, selector ? chosen == def : 1);
        return KILN_CLI_OK;
    }
    for (size_t i = 0; i < count; i++) {
        kiln_device *dev = NULL;
        if (kiln_device_at(i, &dev) != KILN_OK)
            continue;
        if (i)
            putchar('\n');
        kiln_info_print(dev, st == KILN_OK && dev == chosen);
    }
    return KILN_CLI_OK;
}
