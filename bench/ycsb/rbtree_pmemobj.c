/*
 * rbtree_pmemobj.c -- rbtree.c ported to libpmemobj by hand, as a PMDK
 * user would (as PMDK's own rbtree_map example does): a typed root
 * (POBJ_LAYOUT), TOID links, TX_ZNEW and TX_FREE, and TX_SET for every
 * field a rotation or recoloring changes, so only changed fields are
 * snapshotted.
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct rbnode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct rbnode) node_t;

struct rbnode {
    node_t left, right, parent;
    int red;
    uint64_t key;
    PMEMoid val;
};

struct tree {
    node_t root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "rbtree";
const int ds_ordered = 1;
static struct tree *tree;
static TOID(struct tree) root_oid;
static PMEMobjpool *pop;

#define NIL TOID_NULL(struct rbnode)
#define NODE(n) D_RW(n)

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "rbtree: %s\n", pmemobj_errormsg());
        return -1;
    }
    root_oid = POBJ_ROOT(pop, struct tree);
    tree = D_RW(root_oid);
    int r = 0;
    if (!tree->value_size) {
        TX_BEGIN(pop) {
            TX_SET(root_oid, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "rbtree: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

static node_t find(uint64_t key)
{
    node_t n = tree->root;
    while (!TOID_IS_NULL(n) && NODE(n)->key != key)
        n = key < NODE(n)->key ? NODE(n)->left : NODE(n)->right;
    return n;
}

static int is_red(node_t n)
{
    return !TOID_IS_NULL(n) && NODE(n)->red;
}

static void replace_child(node_t parent, node_t old, node_t new)
{
    if (TOID_IS_NULL(parent))
        TX_SET(root_oid, root, new);
    else if (TOID_EQUALS(NODE(parent)->left, old))
        TX_SET(parent, left, new);
    else
        TX_SET(parent, right, new);
}

static void rotate_left(node_t x)
{
    node_t y = NODE(x)->right;
    TX_SET(x, right, NODE(y)->left);
    if (!TOID_IS_NULL(NODE(y)->left))
        TX_SET(NODE(y)->left, parent, x);
    TX_SET(y, parent, NODE(x)->parent);
    replace_child(NODE(x)->parent, x, y);
    TX_SET(y, left, x);
    TX_SET(x, parent, y);
}

static void rotate_right(node_t x)
{
    node_t y = NODE(x)->left;
    TX_SET(x, left, NODE(y)->right);
    if (!TOID_IS_NULL(NODE(y)->right))
        TX_SET(NODE(y)->right, parent, x);
    TX_SET(y, parent, NODE(x)->parent);
    replace_child(NODE(x)->parent, x, y);
    TX_SET(y, right, x);
    TX_SET(x, parent, y);
}

static void insert_fixup(node_t z)
{
    node_t p;
    while (p = NODE(z)->parent, is_red(p)) {
        node_t g = NODE(p)->parent;
        if (TOID_EQUALS(p, NODE(g)->left)) {
            node_t u = NODE(g)->right;
            if (is_red(u)) {
                TX_SET(p, red, 0);
                TX_SET(u, red, 0);
                TX_SET(g, red, 1);
                z = g;
                continue;
            }
            if (TOID_EQUALS(z, NODE(p)->right)) {
                rotate_left(p);
                z = p;
                p = NODE(z)->parent;
            }
            TX_SET(p, red, 0);
            TX_SET(g, red, 1);
            rotate_right(g);
        } else {
            node_t u = NODE(g)->left;
            if (is_red(u)) {
                TX_SET(p, red, 0);
                TX_SET(u, red, 0);
                TX_SET(g, red, 1);
                z = g;
                continue;
            }
            if (TOID_EQUALS(z, NODE(p)->left)) {
                rotate_right(p);
                z = p;
                p = NODE(z)->parent;
            }
            TX_SET(p, red, 0);
            TX_SET(g, red, 1);
            rotate_left(g);
        }
    }
    if (NODE(tree->root)->red)
        TX_SET(tree->root, red, 0);
}

int ds_insert(uint64_t key, const void *value)
{
    node_t *link = &tree->root, parent = NIL;
    while (!TOID_IS_NULL(*link)) {
        parent = *link;
        if (key == NODE(parent)->key)
            return 1;
        link = key < NODE(parent)->key ? &D_RW(parent)->left : &D_RW(parent)->right;
    }
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t n = TX_ZNEW(struct rbnode);
        struct rbnode *np = D_RW(n);
        np->val = pmemobj_tx_alloc(tree->value_size, 0);
        memcpy(pmemobj_direct(np->val), value, tree->value_size);
        np->key = key;
        np->parent = parent;
        np->red = 1;
        TX_ADD_DIRECT(link);
        *link = n;
        insert_fixup(n);
        TX_SET(root_oid, count, tree->count + 1);
    } TX_ONABORT {
        fprintf(stderr, "rbtree: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    node_t n = find(key);
    if (TOID_IS_NULL(n))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(NODE(n)->val, 0, tree->value_size);
        memcpy(pmemobj_direct(NODE(n)->val), value, tree->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    node_t n = find(key);
    if (TOID_IS_NULL(n))
        return 1;
    memcpy(value_out, pmemobj_direct(NODE(n)->val), tree->value_size);
    return 0;
}

static void transplant(node_t u, node_t v)
{
    replace_child(NODE(u)->parent, u, v);
    if (!TOID_IS_NULL(v))
        TX_SET(v, parent, NODE(u)->parent);
}

static void delete_fixup(node_t x, node_t xp)
{
    while (!TOID_EQUALS(x, tree->root) && !is_red(x)) {
        if (TOID_EQUALS(x, NODE(xp)->left)) {
            node_t w = NODE(xp)->right;
            if (NODE(w)->red) {
                TX_SET(w, red, 0);
                TX_SET(xp, red, 1);
                rotate_left(xp);
                w = NODE(xp)->right;
            }
            if (!is_red(NODE(w)->left) && !is_red(NODE(w)->right)) {
                TX_SET(w, red, 1);
                x = xp;
                xp = NODE(x)->parent;
            } else {
                if (!is_red(NODE(w)->right)) {
                    TX_SET(NODE(w)->left, red, 0);
                    TX_SET(w, red, 1);
                    rotate_right(w);
                    w = NODE(xp)->right;
                }
                TX_SET(w, red, NODE(xp)->red);
                TX_SET(xp, red, 0);
                TX_SET(NODE(w)->right, red, 0);
                rotate_left(xp);
                x = tree->root;
            }
        } else {
            node_t w = NODE(xp)->left;
            if (NODE(w)->red) {
                TX_SET(w, red, 0);
                TX_SET(xp, red, 1);
                rotate_right(xp);
                w = NODE(xp)->left;
            }
            if (!is_red(NODE(w)->left) && !is_red(NODE(w)->right)) {
                TX_SET(w, red, 1);
                x = xp;
                xp = NODE(x)->parent;
            } else {
                if (!is_red(NODE(w)->left)) {
                    TX_SET(NODE(w)->right, red, 0);
                    TX_SET(w, red, 1);
                    rotate_left(w);
                    w = NODE(xp)->left;
                }
                TX_SET(w, red, NODE(xp)->red);
                TX_SET(xp, red, 0);
                TX_SET(NODE(w)->left, red, 0);
                rotate_right(xp);
                x = tree->root;
            }
        }
    }
    if (!TOID_IS_NULL(x) && NODE(x)->red)
        TX_SET(x, red, 0);
}

int ds_delete(uint64_t key)
{
    node_t z = find(key);
    if (TOID_IS_NULL(z))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t x, xp, y = z;
        int y_red = NODE(y)->red;
        if (TOID_IS_NULL(NODE(z)->left)) {
            x = NODE(z)->right;
            xp = NODE(z)->parent;
            transplant(z, NODE(z)->right);
        } else if (TOID_IS_NULL(NODE(z)->right)) {
            x = NODE(z)->left;
            xp = NODE(z)->parent;
            transplant(z, NODE(z)->left);
        } else {
            y = NODE(z)->right;
            while (!TOID_IS_NULL(NODE(y)->left))
                y = NODE(y)->left;
            y_red = NODE(y)->red;
            x = NODE(y)->right;
            if (TOID_EQUALS(NODE(y)->parent, z)) {
                xp = y;
            } else {
                xp = NODE(y)->parent;
                transplant(y, NODE(y)->right);
                TX_SET(y, right, NODE(z)->right);
                TX_SET(NODE(y)->right, parent, y);
            }
            transplant(z, y);
            TX_SET(y, left, NODE(z)->left);
            TX_SET(NODE(y)->left, parent, y);
            TX_SET(y, red, NODE(z)->red);
        }
        if (!y_red)
            delete_fixup(x, xp);
        pmemobj_tx_free(NODE(z)->val);
        TX_FREE(z);
        TX_SET(root_oid, count, tree->count - 1);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    node_t n = tree->root, first = NIL;
    while (!TOID_IS_NULL(n)) {
        if (NODE(n)->key >= start) {
            first = n;
            n = NODE(n)->left;
        } else {
            n = NODE(n)->right;
        }
    }
    int got = 0;
    for (n = first; !TOID_IS_NULL(n) && got < count; got++) {
        keys[got] = NODE(n)->key;
        memcpy(value_out, pmemobj_direct(NODE(n)->val), tree->value_size);
        if (!TOID_IS_NULL(NODE(n)->right)) {
            n = NODE(n)->right;
            while (!TOID_IS_NULL(NODE(n)->left))
                n = NODE(n)->left;
        } else {
            while (!TOID_IS_NULL(NODE(n)->parent) &&
                   TOID_EQUALS(n, NODE(NODE(n)->parent)->right))
                n = NODE(n)->parent;
            n = NODE(n)->parent;
        }
    }
    return got;
}
