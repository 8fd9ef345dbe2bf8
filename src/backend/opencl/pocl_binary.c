/* A structural check of PoCL's program binaries, run before kiln stores
 * one in its cache and before it hands one back to PoCL.
 *
 * PoCL serialises a program from the files of its own cache directory
 * (program.bc and one directory of files per kernel). Processes building
 * the same program into one POCL_CACHE_DIR at once can make it serialise
 * while another process rewrites those files: the binary then carries an
 * empty program.bc or empty files, and PoCL aborts (an assert, not an
 * error code) in every later process that loads it. So kiln checks what
 * PoCL itself would assert on, without risking the process.
 *
 * The layout, all integers little-endian (PoCL's lib/CL/pocl_binary.c,
 * format versions 9, PoCL 3.1, to 12; PoCL's own oldest readable is 9):
 *   header   "poclbin\0", u64 device id, u32 version, u32 kernel count,
 *            u64 flags, u32 root entry count, 41-byte build hash, and from
 *            version 10 a u64 if flags bit 1 (program-scope variables)
 *   root     per entry: u64 size, then files filling exactly that size;
 *            program.bc is one (PoCL 3.1 counts an entry it found no file
 *            for with size 0, and asserts on it when loading)
 *   file     u32 path length, path (never empty), u32 content length,
 *            content
 *   kernel   u64 record size (from its own start), u64 size of its files,
 *            u32 arginfo size, ..., then its files, which end the record;
 *            the kernels end the binary. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/opencl/ocl.h"
#include "base/bytes.h"

enum {
    POCL_FIXED_HEADER = 8 + 8 + 4 + 4 + 8 + 4 + 41,
    POCL_FIRST_VERSION = 9,
    POCL_SCOPE_VARS_VERSION = 10,
    POCL_FLAG_SCOPE_VARS = 1 << 1
};

int kiln__ocl_is_pocl_binary(const void *binary, size_t size) {
    return size >= 8 && memcmp(binary, "poclbin\0", 8) == 0;
}

/* One serialised file at b[*at..end): a non-empty path and content that
 * fit. Advances *at; *program_bc is set if it is a non-empty program.bc. */
static const char *check_file(const unsigned char *b, size_t *at, size_t end, int *program_bc) {
    if (end - *at < 4)
        return "a file's path length is cut off";
    uint32_t path = kiln__get_u32(b + *at);
    *at += 4;
    if (path == 0)
        return "a file has an empty path";
    if (path > end - *at)
        return "a file's path is cut off";
    int is_bc = path == 11 && memcmp(b + *at, "/program.bc", 11) == 0;
    *at += path;
    if (end - *at < 4)
        return "a file's content length is cut off";
    uint32_t len = kiln__get_u32(b + *at);
    *at += 4;
    if (len > end - *at)
        return "a file's content is cut off";
    *at += len;
    if (is_bc && len == 0)
        return "its program.bc is empty";
    if (is_bc)
        *program_bc = 1;
    return NULL;
}

/* Files filling exactly b[at..end). */
static const char *check_files(const unsigned char *b, size_t at, size_t end, int *program_bc) {
    const char *bad = NULL;
    while (at < end && !bad)
        bad = check_file(b, &at, end, program_bc);
    return bad;
}

const char *kiln__ocl_pocl_binary_check(const void *binary, size_t size) {
    const unsigned char *b = binary;
    if (!kiln__ocl_is_pocl_binary(binary, size))
        return "it is not a PoCL binary";
    if (size < POCL_FIXED_HEADER)
        return "its header is cut off";
    uint32_t version = kiln__get_u32(b + 16), kernels = kiln__get_u32(b + 20);
    uint64_t flags = kiln__get_u64(b + 24);
    uint32_t roots = kiln__get_u32(b + 32);
    if (version < POCL_FIRST_VERSION)
        return "its format is older than PoCL 3.1's (version 9)";
    if (kernels == 0)
        return "it has no kernels";
    size_t at = POCL_FIXED_HEADER;
    if (version >= POCL_SCOPE_VARS_VERSION && (flags & POCL_FLAG_SCOPE_VARS))
        at += 8;
    if (at > size)
        return "its header is cut off";
    int program_bc = 0;
    const char *bad;
    for (uint32_t r = 0; r < roots; r++) {
        if (size - at < 8)
            return "a root entry's size is cut off";
        uint64_t n = kiln__get_u64(b + at);
        at += 8;
        if (n == 0)
            return "a root entry is empty (its file was missing)";
        if (n > size - at)
            return "a root entry is cut off";
        if ((bad = check_files(b, at, at + (size_t)n, &program_bc)) != NULL)
            return bad;
        at += (size_t)n;
    }
    if (!program_bc)
        return "it has no program.bc";
    for (uint32_t k = 0; k < kernels; k++) {
        if (size - at < 20)
            return "a kernel's record is cut off";
        uint64_t record = kiln__get_u64(b + at), files = kiln__get_u64(b + at + 8);
        if (record < 20 || record > size - at || files > record - 20)
            return "a kernel's record sizes do not fit the binary";
        size_t end = at + (size_t)record;
        int unused = 0;
        if ((bad = check_files(b, end - (size_t)files, end, &unused)) != NULL)
            return bad;
        at = end;
    }
    if (at != size)
        return "it has bytes after its last kernel";
    return NULL;
}
