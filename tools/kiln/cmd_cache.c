/* kiln cache path|list|clear|build */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "kiln.h"

static const char kiln_cache_usage[] =
    "usage: kiln cache path\n"
    "       kiln cache list\n"
    "       kiln cache clear\n"
    "       kiln cache build FILE [--device SELECTOR] [--options \"OPTIONS\"]\n"
    "                             [--lang auto|opencl|cuda]\n"
    "\n"
    "kiln keeps every program it compiles in an on-disk cache, keyed by the\n"
    "source, build options, device, driver and kiln version, so that later\n"
    "runs skip the compiler. The cache lives in $KILN_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/kiln, else ~/.cache/kiln.\n"
    "\n"
    "kiln only uses a cache nobody else can write: a real directory (not a\n"
    "symbolic link) owned by you and not writable by group or others, with\n"
    "entries owned by you. Otherwise programs are built from source, and\n"
    "path says why (exit status 1), list, clear and build refuse. A shared\n"
    "team cache (group-writable) needs KILN_CACHE_SHARED=1 with KILN_CACHE_DIR:\n"
    "everyone who can write it can run code as everyone who uses it.\n"
    "\n"
    "  path    print the cache directory, and why it is not used if so\n"
    "  list    list the entries: key, size, date, whether the checksum\n"
    "          verifies, and what was built\n"
    "  clear   remove every entry\n"
    "  build   compile FILE ahead of time for a device (default: as\n"
    "          $KILN_DEVICE, else the preferred device) and store it, so the\n"
    "          first run of a program that builds the same source with the\n"
    "          same options loads it from the cache\n"
    "\n"
    "Options of build:\n"
    "  -d, --device SELECTOR   the device (\"opencl:0:0\", \"pocl\", \"cuda:0\")\n"
    "  -o, --options OPTIONS   build options, as the program passes them\n"
    "  --lang LANG             auto (kiln's dialect, the default), opencl, cuda\n";

/* --------------------------------------------------------------- list */

typedef struct kiln_cache_rows {
    kiln_cache_entry *items;
    size_t count, capacity;
    int oom;
} kiln_cache_rows;

static void kiln_cache_collect(const kiln_cache_entry *entry, void *user) {
    kiln_cache_rows *rows = user;
    if (rows->count == rows->capacity) {
        size_t cap = rows->capacity ? rows->capacity * 2 : 16;
        kiln_cache_entry *p = realloc(rows->items, cap * sizeof *p);
        if (!p) {
            rows->oom = 1;
            return;
        }
        rows->items = p;
        rows->capacity = cap;
    }
    rows->items[rows->count++] = *entry;
}

/* Oldest first, like ls -tr: the newest build is at the bottom. */
static int kiln_cache_by_time(const void *a, const void *b) {
    const kiln_cache_entry *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? -1 : 1;
    return strcmp(x->file, y->file);
}

static int kiln_cache_list_cmd(void) {
    char dir[1024];
    kiln_cache_rows rows = { NULL, 0, 0, 0 };
    if (kiln_cache_path(dir, sizeof dir) != KILN_OK ||
        kiln_cache_list(kiln_cache_collect, &rows) != KILN_OK) {
        fprintf(stderr, "kiln cache: %s\n", kiln_last_error_message());
        free(rows.items);
        return KILN_CLI_FAILED;
    }
    if (rows.oom) {
        fprintf(stderr, "kiln cache: out of memory\n");
        free(rows.items);
        return KILN_CLI_FAILED;
    }
    if (rows.count == 0) {
        printf("The cache is empty (%s).\n", dir);
        free(rows.items);
        return KILN_CLI_OK;
    }
    qsort(rows.items, rows.count, sizeof rows.items[0], kiln_cache_by_time);
    uint64_t total = 0;
    size_t bad = 0;
    printf("%-12s  %9s  %-16s  %-5s  %s\n", "KEY", "SIZE", "BUILT", "OK", "CONTENT");
    for (size_t i = 0; i < rows.count; i++) {
        const kiln_cache_entry *e = &rows.items[i];
        const char *base = strrchr(e->file, '/');
        base = base ? base + 1 : e->file;
        char size[24], when[32] = "?";
        kiln_cli_format_bytes(e->bytes, size, sizeof size);
        time_t t = (time_t)e->mtime;
        struct tm tm;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        printf("%.12s  %9s  %-16s  %-5s  %s\n", base, size, when, e->valid ? "yes" : "BAD",
               e->label[0] ? e->label : "-");
        total += e->bytes;
        bad += !e->valid;
    }
    char sum[24];
    kiln_cli_format_bytes(total, sum, sizeof sum);
    printf("\n%zu entr%s, %s in %s\n", rows.count, rows.count == 1 ? "y" : "ies", sum, dir);
    if (bad)
        printf("%zu entr%s failed the checksum; it will be rebuilt on next "
               "use (or run 'kiln cache clear').\n",
               bad, bad == 1 ? "y" : "ies");
    free(rows.items);
    return KILN_CLI_OK;
}

/* -------------------------------------------------------------- build */

static double kiln_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Whether a valid entry was written at or after `since`: what `cache
 * build` checks before it says "stored". */
static void kiln_cache_note_new(const kiln_cache_entry *entry, void *user) {
    const time_t *since = user;
    if (entry->valid && entry->mtime >= (int64_t)since[0])
        ((time_t *)user)[1] = 1;
}

static int stored_since(time_t since) {
    time_t state[2] = { since, 0 };
    return kiln_cache_list(kiln_cache_note_new, state) == KILN_OK && state[1];
}

static int kiln_cache_build_cmd(int argc, char **argv) {
    const char *file = NULL, *selector = NULL, *options = NULL, *lang = "auto";
    for (int i = 2; i < argc; i++) {
        int r;
        if (kiln_cli_is_help(argv[i])) {
            fputs(kiln_cache_usage, stdout);
            return KILN_CLI_OK;
        }
        if ((r = kiln_cli_option_value(argc, argv, &i, "--device", "-d", &selector)) ||
            (r = kiln_cli_option_value(argc, argv, &i, "--options", "-o", &options)) ||
            (r = kiln_cli_option_value(argc, argv, &i, "--lang", NULL, &lang))) {
            if (r < 0)
                return kiln_cli_usage_error("cache build", kiln_cache_usage, "missing value");
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return kiln_cli_usage_error("cache build", kiln_cache_usage, "unknown option '%s'",
                                        argv[i]);
        if (file)
            return kiln_cli_usage_error("cache build", kiln_cache_usage,
                                        "one FILE at a time ('%s' and '%s')", file, argv[i]);
        file = argv[i];
    }
    if (!file)
        return kiln_cli_usage_error("cache build", kiln_cache_usage, "which FILE to build?");
    kiln_program_opts opts = KILN_PROGRAM_OPTS(.build_options = options);
    if (strcmp(lang, "opencl") == 0)
        opts.language = KILN_LANG_OPENCL_C;
    else if (strcmp(lang, "cuda") == 0)
        opts.language = KILN_LANG_CUDA_C;
    else if (strcmp(lang, "auto") != 0)
        return kiln_cli_usage_error("cache build", kiln_cache_usage,
                                    "--lang is auto, opencl or cuda, not '%s'", lang);

    char why[1024];
    if (kiln_cache_status(why, sizeof why) != KILN_OK) {
        fprintf(stderr, "kiln cache build: the cache is not used: %s\n", why);
        return KILN_CLI_FAILED;
    }
    kiln_device *dev = NULL;
    kiln_device_info info;
    kiln_context *ctx = NULL;
    kiln_program *prog = NULL;
    if (kiln_device_select(selector, &dev) != KILN_OK ||
        kiln_device_get_info(dev, &info) != KILN_OK ||
        kiln_context_create(&dev, 1, &ctx) != KILN_OK) {
        fprintf(stderr, "kiln cache build: %s\n", kiln_last_error_message());
        return KILN_CLI_FAILED;
    }
    double t0 = kiln_now_ms();
    time_t started = time(NULL);
    kiln_status st = kiln_program_create_from_file(ctx, file, &opts, &prog);
    double ms = kiln_now_ms() - t0;
    if (st != KILN_OK) {
        fprintf(stderr, "kiln cache build: %s: %s\n", file, kiln_last_error_message());
        if (st == KILN_ERROR_BUILD && *kiln_last_build_log())
            fprintf(stderr, "build log:\n%s\n", kiln_last_build_log());
        kiln_context_release(ctx);
        return KILN_CLI_FAILED;
    }
    int rc = KILN_CLI_OK;
    if (kiln_program_from_cache(prog, dev)) {
        printf("%s: already in the cache for %s (%s), loaded in %.1f ms\n", file, info.id,
               info.name, ms);
    } else if (stored_since(started)) {
        printf("%s: built for %s (%s) in %.1f ms and stored in the cache\n", file, info.id,
               info.name, ms);
    } else {
        /* The library stores quietly and carries on without the cache; a
         * tool whose one job is to store must not claim it did. */
        char dir[512] = "";
        kiln_cache_path(dir, sizeof dir);
        fprintf(stderr,
                "kiln cache build: %s: built for %s (%s) in %.1f ms, but NOT "
                "stored: no entry appeared in the cache directory %s%s\n",
                file, info.id, info.name, ms, dir,
                access(dir, W_OK) != 0 ? " (it is not writable by this user)" : "");
        rc = KILN_CLI_FAILED;
    }
    kiln_program_release(prog);
    kiln_context_release(ctx);
    return rc;
}

/* --------------------------------------------------------------- main */

int kiln_cmd_cache(int argc, char **argv) {
    if (argc < 2)
        return kiln_cli_usage_error("cache", kiln_cache_usage,
                                    "which action: path, list, clear or build?");
    const char *action = argv[1];
    if (kiln_cli_is_help(action)) {
        fputs(kiln_cache_usage, stdout);
        return KILN_CLI_OK;
    }
    if (strcmp(action, "build") == 0)
        return kiln_cache_build_cmd(argc, argv);
    for (int i = 2; i < argc; i++) {
        if (kiln_cli_is_help(argv[i])) {
            fputs(kiln_cache_usage, stdout);
            return KILN_CLI_OK;
        }
        return kiln_cli_usage_error("cache", kiln_cache_usage, "unexpected argument '%s'", argv[i]);
    }
    if (strcmp(action, "path") == 0) {
        char dir[4096];
        if (kiln_cache_path(dir, sizeof dir) != KILN_OK) {
            fprintf(stderr, "kiln cache: %s\n", kiln_last_error_message());
            return KILN_CLI_FAILED;
        }
        printf("%s\n", dir);
        char why[1024];
        if (kiln_cache_status(why, sizeof why) != KILN_OK) {
            fprintf(stderr, "kiln cache: the cache is not used: %s\n", why);
            return KILN_CLI_FAILED;
        }
        return KILN_CLI_OK;
    }
    if (strcmp(action, "list") == 0)
        return kiln_cache_list_cmd();
    if (strcmp(action, "clear") == 0) {
        char dir[4096];
        size_t removed = 0;
        if (kiln_cache_path(dir, sizeof dir) != KILN_OK || kiln_cache_clear(&removed) != KILN_OK) {
            fprintf(stderr, "kiln cache: %s\n", kiln_last_error_message());
            return KILN_CLI_FAILED;
        }
        printf("Removed %zu entr%s from %s\n", removed, removed == 1 ? "y" : "ies", dir);
        return KILN_CLI_OK;
    }
    return kiln_cli_usage_error("cache", kiln_cache_usage, "unknown action '%s'", action);
}
