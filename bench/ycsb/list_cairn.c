/*
 * list_cairn.c -- list.c made persistent for cairn-cc: the pool, its
 * root, cairn_alloc/cairn_free and a transaction around each update.
 *
 * Nodes are kept in ascending key order; every operation walks from the
 * head, so each costs time in proportion to the list's length (the bench
 * command loads fewer records into it). A node holds its key and a pointer
 * to its value (value_size bytes, updated in place).
 */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

struct lnode {
    struct lnode *next;
    uint64_t key;
    void *val;
};

struct list {
    struct lnode *head;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "list";
const int ds_ordered = 1;
static struct list *list;
static cairn_pool *pool;

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pool = cairn_pool_open(path, "ycsb");
    if (!pool)
        pool = cairn_pool_create(path, "ycsb", pool_size);
    list = pool ? CAIRN_ROOT(pool, struct list) : NULL;
    if (!list)
        return fprintf(stderr, "list: %s\n", cairn_errormsg()), -1;
    if (!list->value_size) CAIRN_TX(pool)
        list->value_size = value_size;
    return 0;
}

void ds_close(void)
{
    cairn_pool_close(pool);
}

/* the link that points at the first node with a key >= key */
static struct lnode **seek(uint64_t key)
{
    struct lnode **link = &list->head;
    while (*link && (*link)->key < key)
        link = &(*link)->next;
    return link;
}

int ds_insert(uint64_t key, const void *value)
{
    CAIRN_TX(pool) {
        struct lnode **link = seek(key);
        if (*link && (*link)->key == key)
            return 1;
        struct lnode *n = cairn_alloc(pool, sizeof *n);
        void *val = cairn_alloc(pool, list->value_size);
        if (!n || !val) {
            cairn_free(n);
            cairn_free(val);
            return -1;
        }
        memcpy(val, value, list->value_size);
        n->key = key;
        n->val = val;
        n->next = *link;
        *link = n;
        list->count++;
        return 0;
    }
    return -1;   /* the transaction could not begin */
}

int ds_update(uint64_t key, const void *value)
{
    CAIRN_TX(pool) {
        struct lnode *n = *seek(key);
        if (!n || n->key != key)
            return 1;
        memcpy(n->val, value, list->value_size);
        return 0;
    }
    return -1;   /* the transaction could not begin */
}

int ds_read(uint64_t key, void *value_out)
{
    struct lnode *n = *seek(key);
    if (!n || n->key != key)
        return 1;
    memcpy(value_out, n->val, list->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    CAIRN_TX(pool) {
        struct lnode **link = seek(key);
        struct lnode *n = *link;
        if (!n || n->key != key)
            return 1;
        *link = n->next;
        cairn_free(n->val);
        cairn_free(n);
        list->count--;
        return 0;
    }
    return -1;   /* the transaction could not begin */
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    int got = 0;
    for (struct lnode *n = *seek(start); n && got < count; n = n->next) {
        keys[got++] = n->key;
        memcpy(value_out, n->val, list->value_size);
    }
    return got;
}
