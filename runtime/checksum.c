/*
 * checksum.c -- the one checksum of the pool format: a 64-bit multiply-xor
 * hash over 8-byte words (tail bytes folded in), seeded. Fast enough to
 * checksum every undo record (several GB/s); not cryptographic, and it
 * need not be: it tells a torn or stale record from a whole one.
 */
#include "base.h"

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h ^= w * 0x9e3779b97f4a7c15ULL;
    h = (h << 29) | (h >> 35);
    return h * 0xbf58476d1ce4e5b9ULL;
}

uint64_t cairn__hash(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * 0x94d049bb133111ebULL);
    uint64_t h2 = ~seed;
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {             /* two lanes for speed */
        uint64_t a, b;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        h = mix(h, a);
        h2 = mix(h2, b);
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t a;
        memcpy(&a, p + i, 8);
        h = mix(h, a);
    }
    if (i < len) {
        uint64_t t = 0;
        memcpy(&t, p + i, len - i);
        h = mix(h, t ^ ((uint64_t)(len - i) << 56));
    }
    h = mix(h, h2);
    h ^= h >> 31;
    return h;
}
