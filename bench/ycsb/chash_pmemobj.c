/*
 * chash_pmemobj.c -- chash.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), TOID links, pmemobj_tx_alloc and
 * pmemobj_tx_free, and an undo snapshot of exactly the fields each update
 * changes (nothing in an object allocated by the same transaction).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define FIRST_BUCKETS 1024

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct table);
POBJ_LAYOUT_TOID(ycsb, struct entry);
POBJ_LAYOUT_TOID(ycsb, struct buckets);
POBJ_LAYOUT_END(ycsb);

struct entry {
    TOID(struct entry) next;
    uint64_t key;
    unsigned char value[];
};

struct buckets {
    uint64_t n;
    TOID(struct entry) head[];
};

struct table {
    uint64_t nbuckets;         /* a power of two */
    uint64_t count;
    uint64_t value_size;
    TOID(struct buckets) buckets;
};

const char ds_name[] = "chash";
const int ds_ordered = 0;
static struct table *table;
static PMEMobjpool *pop;

static uint64_t hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return key;
}

static TOID(struct entry) *link_of(uint64_t key)
{
    TOID(struct entry) *link = &D_RW(table->buckets)->head[hash(key) & (table->nbuckets - 1)];
    while (!TOID_IS_NULL(*link) && D_RO(*link)->key != key)
        link = &D_RW(*link)->next;
    return link;
}

/* in a transaction */
static void grow(void)
{
    uint64_t n = table->nbuckets * 2;
    TOID(struct buckets) fresh = TX_ZALLOC(struct buckets, sizeof(struct buckets) + n * sizeof(TOID(struct entry)));
    D_RW(fresh)->n = n;
    TOID(struct entry) *buckets = D_RW(fresh)->head;
    for (uint64_t i = 0; i < table->nbuckets; i++) {
        TOID(struct entry) e = D_RO(table->buckets)->head[i];
        while (!TOID_IS_NULL(e)) {
            struct entry *ep = D_RW(e);
            TOID(struct entry) next = ep->next;
            TOID(struct entry) *head = &buckets[hash(ep->key) & (n - 1)];
            TX_ADD_FIELD_DIRECT(ep, next);
            ep->next = *head;
            *head = e;
            e = next;
        }
    }
    TX_FREE(table->buckets);
    TX_ADD_FIELD_DIRECT(table, buckets);
    TX_ADD_FIELD_DIRECT(table, nbuckets);
    table->buckets = fresh;
    table->nbuckets = n;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "chash: %s\n", pmemobj_errormsg());
        return -1;
    }
    table = D_RW(POBJ_ROOT(pop, struct table));
    int r = 0;
    if (TOID_IS_NULL(table->buckets)) {
        TX_BEGIN(pop) {
            TX_ADD_DIRECT(table);
            table->value_size = value_size;
            table->nbuckets = FIRST_BUCKETS;
            table->buckets = TX_ZALLOC(struct buckets, sizeof(struct buckets) +
                                       FIRST_BUCKETS * sizeof(TOID(struct entry)));
            D_RW(table->buckets)->n = FIRST_BUCKETS;
        } TX_ONABORT {
            fprintf(stderr, "chash: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

int ds_insert(uint64_t key, const void *value)
{
    TOID(struct entry) *link = link_of(key);
    if (!TOID_IS_NULL(*link))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        TOID(struct entry) e = TX_ALLOC(struct entry, sizeof(struct entry) + table->value_size);
        struct entry *ep = D_RW(e);
        ep->key = key;
        ep->next = TOID_NULL(struct entry);
        memcpy(ep->value, value, table->value_size);
        TX_ADD_DIRECT(link);
        *link = e;
        TX_ADD_FIELD_DIRECT(table, count);
        if (++table->count > table->nbuckets)
            grow();
    } TX_ONABORT {
        fprintf(stderr, "chash: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    TOID(struct entry) e = *link_of(key);
    if (TOID_IS_NULL(e))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        TX_MEMCPY(D_RW(e)->value, value, table->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    TOID(struct entry) e = *link_of(key);
    if (TOID_IS_NULL(e))
        return 1;
    memcpy(value_out, D_RO(e)->value, table->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    TOID(struct entry) *link = link_of(key);
    TOID(struct entry) e = *link;
    if (TOID_IS_NULL(e))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        TX_ADD_DIRECT(link);
        *link = D_RO(e)->next;
        TX_FREE(e);
        TX_ADD_FIELD_DIRECT(table, count);
        table->count--;
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    (void)start;
    (void)count;
    (void)keys;
    (void)value_out;
    return -1;
}
