/* C identifiers: the one check for the names users give kernels,
 * generators, loop indices and arguments. */
#ifndef KILN_BASE_IDENT_H
#define KILN_BASE_IDENT_H

#include <stddef.h>

/* 1 if s is a C identifier ([A-Za-z_][A-Za-z0-9_]*) of at most max_len
 * characters; 0 for NULL, "", or anything else. */
int kiln__is_ident(const char *s, size_t max_len);

#endif
