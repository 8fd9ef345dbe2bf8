/* Helpers shared by the kiln tool's commands. */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

int kiln_cli_is_help(const char *arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int kiln_cli_option_value(int argc, char **argv, int *i, const char *long_name,
                          const char *short_name, const char **value) {
    const char *arg = argv[*i];
    size_t n = strlen(long_name);
    if (strncmp(arg, long_name, n) == 0 && arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (strcmp(arg, long_name) != 0 && !(short_name && strcmp(arg, short_name) == 0))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "kiln: option %s needs a value\n", arg);
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

int kiln_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "kiln %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return KILN_CLI_USAGE;
}

void kiln_cli_format_bytes(uint64_t bytes, char *buf, size_t capacity) {
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, capacity, "%llu B", (unsigned long long)bytes);
    else if (v < 10.0 && v != (double)(uint64_t)v)
        snprintf(buf, capacity, "%.1f %s", v, units[u]);
    else
        snprintf(buf, capacity, "%.0f %s", v, units[u]);
}

void kiln_cli_fit(const char *s, size_t width, char *buf, size_t capacity) {
    size_t n = strlen(s);
    if (n <= width || width < 4) {
        snprintf(buf, capacity, "%s", s);
        return;
    }
    snprintf(buf, capacity, "%.*s...", (int)(width - 3), s);
}

void kiln_cli_print_wrapped(FILE *out, const char *text, size_t indent, size_t width) {
    size_t col = indent;
    int first = 1;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " \t\n");
        if (!first && col + 1 + n > width) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            first = 1;
        }
        if (!first) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, n, out);
        col += n;
        first = 0;
        p += n;
    }
    fputc('\n', out);
}
