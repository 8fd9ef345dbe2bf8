/* Quoting a compiler log in an error message: the one place that decides
 * which lines of a log a user sees first (core's program build, the
 * generators and offload all quote through it). */
#ifndef KILN_BASE_BUILDLOG_QUOTE_H
#define KILN_BASE_BUILDLOG_QUOTE_H

#include <stddef.h>

/* Copies into out (cap bytes, always NUL-terminated) up to max_lines lines
 * of log that mention "error" (case-insensitive), joined by " | "; if none
 * does, the first non-empty line. "" for a NULL or empty log. Returns out. */
char *kiln__quote_log_errors(const char *log, unsigned max_lines, char *out, size_t cap);

#endif
