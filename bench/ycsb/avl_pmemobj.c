/*
 * avl_pmemobj.c -- avl.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), TOID links, TX_ZNEW and TX_FREE, and
 * TX_SET only for a link or height that really changes (the original
 * stores them at every level of the recursion; a snapshot each would be
 * wasted).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 96

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct avlnode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct avlnode) node_t;

struct avlnode {
    node_t left, right;
    int height;
    uint64_t key;
    PMEMoid val;
};

struct tree {
    node_t root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "avl";
const int ds_ordered = 1;
static struct tree *tree;
static TOID(struct tree) root_oid;
static PMEMobjpool *pop;

#define NIL TOID_NULL(struct avlnode)
#define NODE(n) D_RW(n)
/* store a link only when it changes */
#define SET_LINK(n, field, v) do { node_t v_ = (v); \
    if (!TOID_EQUALS(NODE(n)->field, v_)) TX_SET(n, field, v_); } while (0)

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "avl: %s\n", pmemobj_errormsg());
        return -1;
    }
    root_oid = POBJ_ROOT(pop, struct tree);
    tree = D_RW(root_oid);
    int r = 0;
    if (!tree->value_size) {
        TX_BEGIN(pop) {
            TX_SET(root_oid, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "avl: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

static int height(node_t n)
{
    return TOID_IS_NULL(n) ? 0 : NODE(n)->height;
}

static void fix_height(node_t n)
{
    int l = height(NODE(n)->left), r = height(NODE(n)->right);
    int h = (l > r ? l : r) + 1;
    if (NODE(n)->height != h)
        TX_SET(n, height, h);
}

static node_t rotate_right(node_t y)
{
    node_t x = NODE(y)->left;
    TX_SET(y, left, NODE(x)->right);
    TX_SET(x, right, y);
    fix_height(y);
    fix_height(x);
    return x;
}

static node_t rotate_left(node_t x)
{
    node_t y = NODE(x)->right;
    TX_SET(x, right, NODE(y)->left);
    TX_SET(y, left, x);
    fix_height(x);
    fix_height(y);
    return y;
}

static node_t balance(node_t n)
{
    fix_height(n);
    int bf = height(NODE(n)->left) - height(NODE(n)->right);
    if (bf > 1) {
        node_t l = NODE(n)->left;
        if (height(NODE(l)->left) < height(NODE(l)->right))
            SET_LINK(n, left, rotate_left(l));
        return rotate_right(n);
    }
    if (bf < -1) {
        node_t r = NODE(n)->right;
        if (height(NODE(r)->right) < height(NODE(r)->left))
            SET_LINK(n, right, rotate_right(r));
        return rotate_left(n);
    }
    return n;
}

/* in a transaction; *r: 0 inserted, 1 the key was there */
static node_t insert_rec(node_t n, uint64_t key, const void *value, int *r)
{
    if (TOID_IS_NULL(n)) {
        n = TX_ZNEW(struct avlnode);
        struct avlnode *np = NODE(n);
        np->val = pmemobj_tx_alloc(tree->value_size, 0);
        memcpy(pmemobj_direct(np->val), value, tree->value_size);
        np->key = key;
        np->height = 1;
        return n;
    }
    if (key == NODE(n)->key) {
        *r = 1;
        return n;
    }
    if (key < NODE(n)->key) {
        node_t l = insert_rec(NODE(n)->left, key, value, r);
        if (*r)
            return n;
        SET_LINK(n, left, l);
    } else {
        node_t rt = insert_rec(NODE(n)->right, key, value, r);
        if (*r)
            return n;
        SET_LINK(n, right, rt);
    }
    return balance(n);
}

int ds_insert(uint64_t key, const void *value)
{
    volatile int r = 0;
    TX_BEGIN(pop) {
        int res = 0;
        node_t root = insert_rec(tree->root, key, value, &res);
        if (res == 0) {
            SET_LINK(root_oid, root, root);
            TX_SET(root_oid, count, tree->count + 1);
        }
        r = res;
    } TX_ONABORT {
        fprintf(stderr, "avl: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

static node_t find(uint64_t key)
{
    node_t n = tree->root;
    while (!TOID_IS_NULL(n) && NODE(n)->key != key)
        n = key < NODE(n)->key ? NODE(n)->left : NODE(n)->right;
    return n;
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

static node_t remove_min(node_t n, node_t *min)
{
    if (TOID_IS_NULL(NODE(n)->left)) {
        *min = n;
        return NODE(n)->right;
    }
    SET_LINK(n, left, remove_min(NODE(n)->left, min));
    return balance(n);
}

static node_t delete_rec(node_t n, uint64_t key)
{
    if (TOID_IS_NULL(n))
        return NIL;
    if (key < NODE(n)->key) {
        SET_LINK(n, left, delete_rec(NODE(n)->left, key));
    } else if (key > NODE(n)->key) {
        SET_LINK(n, right, delete_rec(NODE(n)->right, key));
    } else {
        node_t l = NODE(n)->left, r = NODE(n)->right, m;
        pmemobj_tx_free(NODE(n)->val);
        TX_FREE(n);
        if (TOID_IS_NULL(r))
            return l;
        r = remove_min(r, &m);
        SET_LINK(m, left, l);
        SET_LINK(m, right, r);
        return balance(m);
    }
    return balance(n);
}

int ds_delete(uint64_t key)
{
    if (TOID_IS_NULL(find(key)))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        SET_LINK(root_oid, root, delete_rec(tree->root, key));
        TX_SET(root_oid, count, tree->count - 1);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    node_t stack[MAX_DEPTH], n = tree->root;
    int sp = 0, got = 0;
    while (!TOID_IS_NULL(n)) {
        if (NODE(n)->key >= start) {
            stack[sp++] = n;
            n = NODE(n)->left;
        } else {
            n = NODE(n)->right;
        }
    }
    while (sp > 0 && got < count) {
        n = stack[--sp];
        keys[got++] = NODE(n)->key;
        memcpy(value_out, pmemobj_direct(NODE(n)->val), tree->value_size);
        for (n = NODE(n)->right; !TOID_IS_NULL(n); n = NODE(n)->left)
            stack[sp++] = n;
    }
    return got;
}
