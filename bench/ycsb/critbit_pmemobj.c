/*
 * critbit_pmemobj.c -- critbit.c ported to libpmemobj by hand, as a PMDK
 * user would: a typed root (POBJ_LAYOUT), TOID links, pmemobj_tx_zalloc
 * and pmemobj_tx_free, and an undo snapshot of exactly the link or field
 * each update changes (nothing in a node allocated by the same
 * transaction).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 130

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct cnode);
POBJ_LAYOUT_END(ycsb);

struct cnode {
    int leaf;
    int bit;                         /* inner: the critical bit */
    uint64_t key;                    /* leaf */
    PMEMoid val;                     /* leaf */
    TOID(struct cnode) child[2];     /* inner */
};

struct tree {
    TOID(struct cnode) root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "critbit";
const int ds_ordered = 1;
static struct tree *tree;
static PMEMobjpool *pop;

static int dir_of(uint64_t key, int bit)
{
    return (int)((key >> bit) & 1);
}

static struct cnode *find_leaf(uint64_t key)
{
    struct cnode *n = D_RW(tree->root);
    while (n && !n->leaf)
        n = D_RW(n->child[dir_of(key, n->bit)]);
    return n;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "critbit: %s\n", pmemobj_errormsg());
        return -1;
    }
    tree = D_RW(POBJ_ROOT(pop, struct tree));
    int r = 0;
    if (!tree->value_size) {
        TX_BEGIN(pop) {
            TX_SET_DIRECT(tree, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "critbit: %s\n", pmemobj_errormsg());
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
    struct cnode *p = find_leaf(key);
    if (p && p->key == key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        TOID(struct cnode) leaf = TX_ZNEW(struct cnode);
        struct cnode *lp = D_RW(leaf);
        lp->val = pmemobj_tx_alloc(tree->value_size, 0);
        memcpy(pmemobj_direct(lp->val), value, tree->value_size);
        lp->leaf = 1;
        lp->key = key;
        TX_ADD_FIELD_DIRECT(tree, count);
        tree->count++;
        if (!p) {
            TX_ADD_FIELD_DIRECT(tree, root);
            tree->root = leaf;
        } else {
            TOID(struct cnode) inner = TX_ZNEW(struct cnode);
            int bit = 63 - __builtin_clzll(p->key ^ key);
            TOID(struct cnode) *link = &tree->root;
            while (!D_RO(*link)->leaf && D_RO(*link)->bit > bit)
                link = &D_RW(*link)->child[dir_of(key, D_RO(*link)->bit)];
            D_RW(inner)->bit = bit;
            D_RW(inner)->child[dir_of(key, bit)] = leaf;
            D_RW(inner)->child[!dir_of(key, bit)] = *link;
            TX_ADD_DIRECT(link);
            *link = inner;
        }
    } TX_ONABORT {
        fprintf(stderr, "critbit: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    struct cnode *p = find_leaf(key);
    if (!p || p->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(p->val, 0, tree->value_size);
        memcpy(pmemobj_direct(p->val), value, tree->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    struct cnode *p = find_leaf(key);
    if (!p || p->key != key)
        return 1;
    memcpy(value_out, pmemobj_direct(p->val), tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    TOID(struct cnode) *link = &tree->root, *parent_link = NULL;
    if (TOID_IS_NULL(*link))
        return 1;
    while (!D_RO(*link)->leaf) {
        parent_link = link;
        link = &D_RW(*link)->child[dir_of(key, D_RO(*link)->bit)];
    }
    TOID(struct cnode) leaf = *link;
    if (D_RO(leaf)->key != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        if (!parent_link) {
            TX_ADD_FIELD_DIRECT(tree, root);
            tree->root = TOID_NULL(struct cnode);
        } else {
            TOID(struct cnode) inner = *parent_link;
            TX_ADD_DIRECT(parent_link);
            *parent_link = D_RO(inner)->child[!dir_of(key, D_RO(inner)->bit)];
            TX_FREE(inner);
        }
        pmemobj_tx_free(D_RO(leaf)->val);
        TX_FREE(leaf);
        TX_ADD_FIELD_DIRECT(tree, count);
        tree->count--;
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

/* Descend by start's bits to the subtree where start leaves the tree's
 * keys; the right siblings passed on the way are what follows it. */
int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct cnode *stack[MAX_DEPTH];
    int sp = 0, got = 0;
    struct cnode *p = find_leaf(start);
    if (!p)
        return 0;
    int bit = p->key == start ? -1 : 63 - __builtin_clzll(p->key ^ start);
    struct cnode *n = D_RW(tree->root);
    while (!n->leaf && n->bit > bit) {
        int dir = dir_of(start, n->bit);
        if (dir == 0)
            stack[sp++] = D_RW(n->child[1]);
        n = D_RW(n->child[dir]);
    }
    if (p->key >= start)     /* every key under n is >= start: walk it first */
        stack[sp++] = n;
    while (sp > 0 && got < count) {
        n = stack[--sp];
        while (!n->leaf) {
            stack[sp++] = D_RW(n->child[1]);
            n = D_RW(n->child[0]);
        }
        keys[got++] = n->key;
        memcpy(value_out, pmemobj_direct(n->val), tree->value_size);
    }
    return got;
}
