/*
 * list_pmemobj.c -- list.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), TOID links, TX_ZNEW and TX_FREE, and a
 * snapshot of exactly the link an insert or delete rewrites.
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct list);
POBJ_LAYOUT_TOID(ycsb, struct lnode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct lnode) node_t;

struct lnode {
    node_t next;
    uint64_t key;
    PMEMoid val;
};

struct list {
    node_t head;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "list";
const int ds_ordered = 1;
static struct list *list;
static PMEMobjpool *pop;

#define NODE(n) D_RW(n)

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "list: %s\n", pmemobj_errormsg());
        return -1;
    }
    list = D_RW(POBJ_ROOT(pop, struct list));
    int r = 0;
    if (!list->value_size) {
        TX_BEGIN(pop) {
            TX_SET_DIRECT(list, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "list: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

/* the link that points at the first node with a key >= key */
static node_t *seek(uint64_t key)
{
    node_t *link = &list->head;
    while (!TOID_IS_NULL(*link) && NODE(*link)->key < key)
        link = &NODE(*link)->next;
    return link;
}

int ds_insert(uint64_t key, const void *value)
{
    node_t *link = seek(key);
    if (!TOID_IS_NULL(*link) && NODE(*link)->key == key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t n = TX_ZNEW(struct lnode);
        struct lnode *np = NODE(n);
        np->val = pmemobj_tx_alloc(list->value_size, 0);
        memcpy(pmemobj_direct(np->val), value, list->value_size);
        np->key = key;
        np->next = *link;
        TX_ADD_DIRECT(link);
        *link = n;
        TX_SET_DIRECT(list, count, list->count + 1);
    } TX_ONABORT {
        fprintf(stderr, "list: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    node_t n = *seek(key);
    if (TOID_IS_NULL(n) || NODE(n)->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(NODE(n)->val, 0, list->value_size);
        memcpy(pmemobj_direct(NODE(n)->val), value, list->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    node_t n = *seek(key);
    if (TOID_IS_NULL(n) || NODE(n)->key != key)
        return 1;
    memcpy(value_out, pmemobj_direct(NODE(n)->val), list->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    node_t *link = seek(key);
    node_t n = *link;
    if (TOID_IS_NULL(n) || NODE(n)->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        TX_ADD_DIRECT(link);
        *link = NODE(n)->next;
        pmemobj_tx_free(NODE(n)->val);
        TX_FREE(n);
        TX_SET_DIRECT(list, count, list->count - 1);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    int got = 0;
    for (node_t n = *seek(start); !TOID_IS_NULL(n) && got < count; n = NODE(n)->next) {
        keys[got++] = NODE(n)->key;
        memcpy(value_out, pmemobj_direct(NODE(n)->val), list->value_size);
    }
    return got;
}
