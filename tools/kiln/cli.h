/* Small helpers shared by the kiln tool's commands (option parsing, number
 * formatting, text wrapping). The tool uses only the public API. */
#ifndef KILN_TOOL_CLI_H
#define KILN_TOOL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of the tool. */
enum {
    KILN_CLI_OK = 0,
    KILN_CLI_FAILED = 1, /* the command ran and failed (no device, build error) */
    KILN_CLI_USAGE = 2,  /* unknown command or option, missing argument */
};

/* 1 if arg is "-h" or "--help". */
int kiln_cli_is_help(const char *arg);

/* Matches argv[*i] against an option that takes a value, written
 * "--long VALUE", "--long=VALUE" or "-s VALUE" (short_name may be NULL).
 * Returns 1 and sets *value (advancing *i past a separate value), 0 if
 * argv[*i] is another option, -1 if the value is missing (a message has
 * been printed to stderr). */
int kiln_cli_option_value(int argc, char **argv, int *i, const char *long_name,
                          const char *short_name, const char **value);

/* Prints "kiln CMD: MESSAGE" and the usage to stderr; returns
 * KILN_CLI_USAGE. */
int kiln_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "1.5 GiB", "512 MiB", "64 KiB", "100 B". */
void kiln_cli_format_bytes(uint64_t bytes, char *buf, size_t capacity);

/* Copies s into buf, cut to width characters with "..." at the end when it
 * is longer. */
void kiln_cli_fit(const char *s, size_t width, char *buf, size_t capacity);

/* Prints the space-separated words of text, wrapped at width columns; every
 * line but the first is indented by indent spaces (the first line is
 * assumed to start at column indent). */
void kiln_cli_print_wrapped(FILE *out, const char *text, size_t indent, size_t width);

#endif
