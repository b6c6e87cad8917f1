/*
 * cuckoo.c -- a cuckoo hash table in ordinary volatile C (the legacy
 * original).
 *
 * Two hash functions over the key's eight bytes, DJB2 and Jenkins'
 * one-at-a-time (Breeze's hash table), each pick a bucket of SLOTS slots.
 * An insert that finds both buckets full evicts a resident to its other
 * bucket, up to MAX_KICKS times; then the table doubles and every record
 * is placed again. Values are separate blocks of value_size bytes, updated
 * in place. Not ordered: no scans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define SLOTS 4
#define MAX_KICKS 128
#define FIRST_BUCKETS 1024

struct slot {
    uint64_t key;
    void *val;                 /* NULL: the slot is empty */
};

struct table {
    uint64_t nbuckets;         /* a power of two */
    uint64_t count;
    uint64_t value_size;
    struct slot *slots;        /* nbuckets * SLOTS */
};

const char ds_name[] = "cuckoo";
const int ds_ordered = 0;
static struct table *table;
static uint64_t kick_rng = 88172645463325252ULL;

static uint64_t djb2(uint64_t key)
{
    uint64_t h = 5381;
    for (int i = 0; i < 8; i++)
        h = h * 33 + ((key >> (8 * i)) & 0xff);
    return h;
}

static uint64_t jenkins(uint64_t key)
{
    uint32_t h = 0;
    for (int i = 0; i < 8; i++) {
        h += (key >> (8 * i)) & 0xff;
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static struct slot *bucket(uint64_t (*hash)(uint64_t), uint64_t key)
{
    return &table->slots[(hash(key) & (table->nbuckets - 1)) * SLOTS];
}

static struct slot *find(uint64_t key)
{
    struct slot *b1 = bucket(djb2, key), *b2 = bucket(jenkins, key);
    for (int i = 0; i < SLOTS; i++) {
        if (b1[i].val && b1[i].key == key)
            return &b1[i];
        if (b2[i].val && b2[i].key == key)
            return &b2[i];
    }
    return NULL;
}

/* Place (key, val), evicting residents as needed. Returns 0, or 1 when
 * MAX_KICKS evictions found no room: *key and *val are then the record
 * left without a slot. */
static int place(uint64_t *key, void **val)
{
    for (int kick = 0; kick < MAX_KICKS; kick++) {
        struct slot *b1 = bucket(djb2, *key), *b2 = bucket(jenkins, *key);
        for (int i = 0; i < SLOTS; i++) {
            struct slot *s = !b1[i].val ? &b1[i] : !b2[i].val ? &b2[i] : NULL;
            if (s) {
                s->key = *key;
                s->val = *val;
                return 0;
            }
        }
        kick_rng ^= kick_rng << 13;
        kick_rng ^= kick_rng >> 7;
        kick_rng ^= kick_rng << 17;
        struct slot *victim = &(kick & 1 ? b2 : b1)[kick_rng % SLOTS];
        uint64_t vkey = victim->key;
        void *vval = victim->val;
        victim->key = *key;
        victim->val = *val;
        *key = vkey;
        *val = vval;
    }
    return 1;
}

/* Move every record into a table of nbuckets buckets (doubling again if
 * the records do not fit). Returns 0, or -1 without memory. */
static int rehash(uint64_t nbuckets)
{
    struct slot *old = table->slots;
    uint64_t old_n = table->nbuckets;
    struct slot *slots = calloc(nbuckets * SLOTS, sizeof *slots);
    if (!slots)
        return -1;
    table->slots = slots;
    table->nbuckets = nbuckets;
    for (uint64_t i = 0; i < old_n * SLOTS; i++) {
        uint64_t key = old[i].key;
        void *val = old[i].val;
        if (val && place(&key, &val)) {
            table->slots = old;
            table->nbuckets = old_n;
            free(slots);
            return rehash(nbuckets * 2);
        }
    }
    free(old);
    return 0;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    table = calloc(1, sizeof *table);
    if (!table)
        return -1;
    if (!table->slots) {
        table->value_size = value_size;
        table->nbuckets = FIRST_BUCKETS;
        table->slots = calloc(FIRST_BUCKETS * SLOTS, sizeof *table->slots);
    }
    return table->slots ? 0 : -1;
}

void ds_close(void)
{
}

int ds_insert(uint64_t key, const void *value)
{
    if (find(key))
        return 1;
    void *val = malloc(table->value_size);
    if (!val)
        return -1;
    memcpy(val, value, table->value_size);
    while (place(&key, &val))
        if (rehash(table->nbuckets * 2))
            return -1;
    table->count++;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    memcpy(s->val, value, table->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    memcpy(value_out, s->val, table->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    free(s->val);
    s->val = NULL;
    table->count--;
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    (void)start;
    (void)count;
    (void)keys;
    (void)value_out;
    return -1;
}
