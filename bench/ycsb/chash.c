/*
 * chash.c -- a chained hash table in ordinary volatile C (the legacy
 * original).
 *
 * Buckets are singly linked lists of entries; an entry holds its key and
 * its value inline (value_size bytes after the header), so an update
 * copies the new value over the old one in place. When the table holds as
 * many entries as buckets it doubles, relinking every entry into the new
 * bucket array at once. Not ordered: no scans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define FIRST_BUCKETS 1024

struct entry {
    struct entry *next;
    uint64_t key;
    unsigned char value[];
};

struct table {
    uint64_t nbuckets;         /* a power of two */
    uint64_t count;
    uint64_t value_size;
    struct entry **buckets;
};

const char ds_name[] = "chash";
const int ds_ordered = 0;
static struct table *table;

static uint64_t hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return key;
}

static struct entry **link_of(uint64_t key)
{
    struct entry **link = &table->buckets[hash(key) & (table->nbuckets - 1)];
    while (*link && (*link)->key != key)
        link = &(*link)->next;
    return link;
}

static int grow(void)
{
    uint64_t n = table->nbuckets * 2;
    struct entry **buckets = calloc(n, sizeof *buckets);
    if (!buckets)
        return -1;
    for (uint64_t i = 0; i < table->nbuckets; i++) {
        struct entry *e = table->buckets[i];
        while (e) {
            struct entry *next = e->next;
            struct entry **head = &buckets[hash(e->key) & (n - 1)];
            e->next = *head;
            *head = e;
            e = next;
        }
    }
    free(table->buckets);
    table->buckets = buckets;
    table->nbuckets = n;
    return 0;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    table = calloc(1, sizeof *table);
    if (!table)
        return -1;
    if (!table->buckets) {
        table->value_size = value_size;
        table->nbuckets = FIRST_BUCKETS;
        table->buckets = calloc(FIRST_BUCKETS, sizeof *table->buckets);
    }
    return table->buckets ? 0 : -1;
}

void ds_close(void)
{
}

int ds_insert(uint64_t key, const void *value)
{
    struct entry **link = link_of(key);
    if (*link)
        return 1;
    struct entry *e = malloc(sizeof *e + table->value_size);
    if (!e)
        return -1;
    e->key = key;
    e->next = NULL;
    memcpy(e->value, value, table->value_size);
    *link = e;
    if (++table->count > table->nbuckets && grow())
        return -1;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    struct entry *e = *link_of(key);
    if (!e)
        return 1;
    memcpy(e->value, value, table->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct entry *e = *link_of(key);
    if (!e)
        return 1;
    memcpy(value_out, e->value, table->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct entry **link = link_of(key);
    struct entry *e = *link;
    if (!e)
        return 1;
    *link = e->next;
    free(e);
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
