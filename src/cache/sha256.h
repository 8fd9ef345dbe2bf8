/* Streaming SHA-256 (FIPS 180-4), private to the cache. The one-shot
 * kiln__sha256() is declared in cache.h. */
#ifndef KILN_CACHE_SHA256_H
#define KILN_CACHE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct kiln__sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;    /* message length so far */
    uint8_t block[64]; /* pending partial block */
    size_t used;       /* bytes in block */
} kiln__sha256_ctx;

void kiln__sha256_init(kiln__sha256_ctx *ctx);
void kiln__sha256_update(kiln__sha256_ctx *ctx, const void *data, size_t size);
void kiln__sha256_final(kiln__sha256_ctx *ctx, uint8_t digest[32]);

#endif
