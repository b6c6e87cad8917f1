/*
 * list.c -- a sorted singly linked list in ordinary volatile C (the
 * legacy original).
 *
 * Nodes are kept in ascending key order; every operation walks from the
 * head, so each costs time in proportion to the list's length (the bench
 * command loads fewer records into it). A node holds its key and a pointer
 * to its value (value_size bytes, updated in place).
 */
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

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    list = calloc(1, sizeof *list);
    if (!list)
        return -1;
    if (!list->value_size)
        list->value_size = value_size;
    return 0;
}

void ds_close(void)
{
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
    struct lnode **link = seek(key);
    if (*link && (*link)->key == key)
        return 1;
    struct lnode *n = calloc(1, sizeof *n);
    void *val = malloc(list->value_size);
    if (!n || !val) {
        free(n);
        free(val);
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

int ds_update(uint64_t key, const void *value)
{
    struct lnode *n = *seek(key);
    if (!n || n->key != key)
        return 1;
    memcpy(n->val, value, list->value_size);
    return 0;
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
    struct lnode **link = seek(key);
    struct lnode *n = *link;
    if (!n || n->key != key)
        return 1;
    *link = n->next;
    free(n->val);
    free(n);
    list->count--;
    return 0;
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
