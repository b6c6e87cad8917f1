/*
 * critbit.c -- a crit-bit tree in ordinary volatile C (the legacy
 * original; the structure of PMDK's ctree example).
 *
 * An inner node holds the highest bit at which the keys below it differ
 * and two children (bit 0, bit 1); bits shrink going down, so an in-order
 * walk visits keys in ascending order. A leaf holds a key and a pointer to
 * its value (value_size bytes, updated in place). An insert adds one leaf
 * and one inner node; a delete removes a leaf and its parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 130

struct cnode {
    int leaf;
    int bit;                   /* inner: the critical bit */
    uint64_t key;              /* leaf */
    void *val;                 /* leaf */
    struct cnode *child[2];    /* inner */
};

struct tree {
    struct cnode *root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "critbit";
const int ds_ordered = 1;
static struct tree *tree;

static int dir_of(uint64_t key, int bit)
{
    return (int)((key >> bit) & 1);
}

static struct cnode *find_leaf(uint64_t key)
{
    struct cnode *n = tree->root;
    while (n && !n->leaf)
        n = n->child[dir_of(key, n->bit)];
    return n;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    tree = calloc(1, sizeof *tree);
    if (!tree)
        return -1;
    if (!tree->value_size)
        tree->value_size = value_size;
    return 0;
}

void ds_close(void)
{
}

int ds_insert(uint64_t key, const void *value)
{
    struct cnode *p = find_leaf(key);
    if (p && p->key == key)
        return 1;
    struct cnode *leaf = calloc(1, sizeof *leaf);
    void *val = malloc(tree->value_size);
    if (!leaf || !val) {
        free(leaf);
        free(val);
        return -1;
    }
    memcpy(val, value, tree->value_size);
    leaf->leaf = 1;
    leaf->key = key;
    leaf->val = val;
    if (!p) {
        tree->root = leaf;
        tree->count++;
        return 0;
    }
    struct cnode *inner = calloc(1, sizeof *inner);
    if (!inner) {
        free(leaf);
        free(val);
        return -1;
    }
    int bit = 63 - __builtin_clzll(p->key ^ key);
    struct cnode **link = &tree->root;
    while (!(*link)->leaf && (*link)->bit > bit)
        link = &(*link)->child[dir_of(key, (*link)->bit)];
    inner->bit = bit;
    inner->child[dir_of(key, bit)] = leaf;
    inner->child[!dir_of(key, bit)] = *link;
    *link = inner;
    tree->count++;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    struct cnode *p = find_leaf(key);
    if (!p || p->key != key)
        return 1;
    memcpy(p->val, value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct cnode *p = find_leaf(key);
    if (!p || p->key != key)
        return 1;
    memcpy(value_out, p->val, tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct cnode **link = &tree->root, **parent_link = NULL;
    if (!*link)
        return 1;
    while (!(*link)->leaf) {
        parent_link = link;
        link = &(*link)->child[dir_of(key, (*link)->bit)];
    }
    struct cnode *leaf = *link;
    if (leaf->key != key)
        return 1;
    if (!parent_link) {
        tree->root = NULL;
    } else {
        struct cnode *inner = *parent_link;
        *parent_link = inner->child[!dir_of(key, inner->bit)];
        free(inner);
    }
    free(leaf->val);
    free(leaf);
    tree->count--;
    return 0;
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
    struct cnode *n = tree->root;
    while (!n->leaf && n->bit > bit) {
        int dir = dir_of(start, n->bit);
        if (dir == 0)
            stack[sp++] = n->child[1];
        n = n->child[dir];
    }
    if (p->key >= start)     /* every key under n is >= start: walk it first */
        stack[sp++] = n;
    while (sp > 0 && got < count) {
        n = stack[--sp];
        while (!n->leaf) {
            stack[sp++] = n->child[1];
            n = n->child[0];
        }
        keys[got++] = n->key;
        memcpy(value_out, n->val, tree->value_size);
    }
    return got;
}
