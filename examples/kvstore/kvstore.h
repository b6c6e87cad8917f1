/*
 * kvstore.h -- what the two builds of the demo table share: the pool
 * layout, the operation sequence and the reference replay. kvstore.c keeps
 * the table by hand (cairn_tx_add, cairn_ptr_store); kvstore_cc.c is plain
 * C made persistent by cairn-cc. Both write the same pool format.
 */
#ifndef KVSTORE_H
#define KVSTORE_H
#include <stdint.h>
#include <string.h>

#define LAYOUT   "cairn-kvstore-1"
#define NBUCKETS 1024
#define KEYSPACE 4096

struct entry {
    struct entry *next;        /* in PM: relative form (cairn_ptr_store or cairn-cc) */
    uint64_t key;
    uint64_t value;
    char     label[24];        /* a string, written with snprintf */
};

struct kv_root {
    struct entry **buckets;    /* a PM array of NBUCKETS pointers */
    uint64_t nbuckets;
    uint64_t ops_done;         /* operations committed */
    uint64_t count;            /* entries in the table */
    uint64_t value_sum;        /* sum of all values, a cheap cross-check */
};

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* operation number n: (is_delete, key, value) */
static inline void op_of(uint64_t n, int *del, uint64_t *key, uint64_t *value)
{
    uint64_t r = mix(n + 1);
    *del = (r & 7) == 0;                       /* 1 in 8 deletes */
    *key = (r >> 8) % KEYSPACE;
    *value = mix(r) >> 16;
}

/* The reference: the first n operations applied to a plain array. */
struct kv_reference {
    uint64_t val[KEYSPACE];
    char has[KEYSPACE];
    uint64_t count, sum;
};

static inline void kv_replay(uint64_t n, struct kv_reference *ref)
{
    memset(ref, 0, sizeof *ref);
    for (uint64_t i = 0; i < n; i++) {
        int del; uint64_t k, v;
        op_of(i, &del, &k, &v);
        if (del) {
            if (ref->has[k]) { ref->count--; ref->sum -= ref->val[k]; ref->has[k] = 0; }
        } else {
            if (ref->has[k]) ref->sum -= ref->val[k]; else ref->count++;
            ref->has[k] = 1; ref->val[k] = v; ref->sum += v;
        }
    }
}
#endif
