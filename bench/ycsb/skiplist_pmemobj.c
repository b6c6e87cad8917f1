/*
 * skiplist_pmemobj.c -- skiplist.c ported to libpmemobj by hand, as a PMDK
 * user would: a typed root (POBJ_LAYOUT), TOID links, pmemobj_tx_zalloc and
 * TX_FREE, and a snapshot of exactly the forward links an insert or delete
 * rewrites.
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_LEVEL 16

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct list);
POBJ_LAYOUT_TOID(ycsb, struct snode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct snode) node_t;

struct snode {
    uint64_t key;
    PMEMoid val;
    int level;
    node_t next[];
};

struct list {
    node_t head;
    int level;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "skiplist";
const int ds_ordered = 1;
static struct list *list;
static PMEMobjpool *pop;
static uint64_t level_rng = 0x2545f4914f6cdd1dULL;

#define NODE(n) D_RW(n)

static node_t node_new(int level)
{
    node_t n = TX_ZALLOC(struct snode, sizeof(struct snode) + (size_t)level * sizeof(node_t));
    NODE(n)->level = level;
    return n;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "skiplist: %s\n", pmemobj_errormsg());
        return -1;
    }
    list = D_RW(POBJ_ROOT(pop, struct list));
    int r = 0;
    if (TOID_IS_NULL(list->head)) {
        TX_BEGIN(pop) {
            TX_ADD_DIRECT(list);
            list->value_size = value_size;
            list->level = 1;
            list->head = node_new(MAX_LEVEL);
        } TX_ONABORT {
            fprintf(stderr, "skiplist: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

static int random_level(void)
{
    level_rng ^= level_rng << 13;
    level_rng ^= level_rng >> 7;
    level_rng ^= level_rng << 17;
    int level = 1;
    for (uint64_t bits = level_rng; (bits & 3) == 0 && level < MAX_LEVEL; bits >>= 2)
        level++;
    return level;
}

/* the last node before key on every level; returns the node at or after key */
static struct snode *find(uint64_t key, struct snode **update)
{
    struct snode *x = NODE(list->head);
    for (int i = list->level - 1; i >= 0; i--) {
        struct snode *nx;
        while ((nx = NODE(x->next[i])) && nx->key < key)
            x = nx;
        if (update)
            update[i] = x;
    }
    return NODE(x->next[0]);
}

int ds_insert(uint64_t key, const void *value)
{
    struct snode *update[MAX_LEVEL];
    struct snode *x = find(key, update);
    if (x && x->key == key)
        return 1;
    int level = random_level();
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t n = node_new(level);
        struct snode *np = NODE(n);
        np->val = pmemobj_tx_alloc(list->value_size, 0);
        memcpy(pmemobj_direct(np->val), value, list->value_size);
        np->key = key;
        if (level > list->level) {
            for (int i = list->level; i < level; i++)
                update[i] = NODE(list->head);
            TX_SET_DIRECT(list, level, level);
        }
        for (int i = 0; i < level; i++) {
            np->next[i] = update[i]->next[i];
            TX_ADD_DIRECT(&update[i]->next[i]);
            update[i]->next[i] = n;
        }
        TX_SET_DIRECT(list, count, list->count + 1);
    } TX_ONABORT {
        fprintf(stderr, "skiplist: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    struct snode *x = find(key, NULL);
    if (!x || x->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(x->val, 0, list->value_size);
        memcpy(pmemobj_direct(x->val), value, list->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    struct snode *x = find(key, NULL);
    if (!x || x->key != key)
        return 1;
    memcpy(value_out, pmemobj_direct(x->val), list->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct snode *update[MAX_LEVEL];
    struct snode *x = find(key, update);
    if (!x || x->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        for (int i = 0; i < x->level; i++) {
            TX_ADD_DIRECT(&update[i]->next[i]);
            update[i]->next[i] = x->next[i];
        }
        int level = list->level;
        while (level > 1 && TOID_IS_NULL(NODE(list->head)->next[level - 1]))
            level--;
        if (level != list->level)
            TX_SET_DIRECT(list, level, level);
        pmemobj_tx_free(x->val);
        pmemobj_tx_free(pmemobj_oid(x));
        TX_SET_DIRECT(list, count, list->count - 1);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    int got = 0;
    for (struct snode *x = find(start, NULL); x && got < count; x = NODE(x->next[0])) {
        keys[got++] = x->key;
        memcpy(value_out, pmemobj_direct(x->val), list->value_size);
    }
    return got;
}
