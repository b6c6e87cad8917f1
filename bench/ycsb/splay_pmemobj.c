/*
 * splay_pmemobj.c -- splay.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), TOID links, TX_ZNEW and TX_FREE, and a
 * snapshot of a link only when it really changes. Every access splays, so
 * reads run in a transaction too.
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct snode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct snode) node_t;

struct snode {
    node_t left, right;
    uint64_t key;
    PMEMoid val;
};

struct tree {
    node_t root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "splay";
const int ds_ordered = 1;
static struct tree *tree;
static TOID(struct tree) root_oid;
static PMEMobjpool *pop;

#define NIL TOID_NULL(struct snode)
#define NODE(n) D_RW(n)
/* p->field = v in a transaction, snapshotting the link only when it
 * changes and only when p is in the pool (not the splay's stack header) */
#define SET_LINK(p, field, v, header) do { node_t v_ = (v); \
    if (!TOID_EQUALS((p)->field, v_)) { \
        if ((p) != (header)) pmemobj_tx_add_range_direct(&(p)->field, sizeof(node_t)); \
        (p)->field = v_; } } while (0)

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "splay: %s\n", pmemobj_errormsg());
        return -1;
    }
    root_oid = POBJ_ROOT(pop, struct tree);
    tree = D_RW(root_oid);
    int r = 0;
    if (!tree->value_size) {
        TX_BEGIN(pop) {
            TX_SET(root_oid, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "splay: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

/* Top-down splay, in a transaction: the node with key, or the last one
 * met on its path, becomes the root of the returned tree. */
static node_t splay(node_t t, uint64_t key)
{
    struct snode header = {NIL, NIL, 0, OID_NULL}, *h = &header, *l = h, *r = h;
    if (TOID_IS_NULL(t))
        return t;
    struct snode *tp = NODE(t);
    for (;;) {
        if (key < tp->key) {
            if (TOID_IS_NULL(tp->left))
                break;
            if (key < NODE(tp->left)->key) {
                node_t y = tp->left;
                SET_LINK(tp, left, NODE(y)->right, h);
                SET_LINK(NODE(y), right, t, h);
                t = y;
                tp = NODE(t);
                if (TOID_IS_NULL(tp->left))
                    break;
            }
            SET_LINK(r, left, t, h);
            r = tp;
            t = tp->left;
        } else if (key > tp->key) {
            if (TOID_IS_NULL(tp->right))
                break;
            if (key > NODE(tp->right)->key) {
                node_t y = tp->right;
                SET_LINK(tp, right, NODE(y)->left, h);
                SET_LINK(NODE(y), left, t, h);
                t = y;
                tp = NODE(t);
                if (TOID_IS_NULL(tp->right))
                    break;
            }
            SET_LINK(l, right, t, h);
            l = tp;
            t = tp->right;
        } else {
            break;
        }
        tp = NODE(t);
    }
    SET_LINK(l, right, tp->left, h);
    SET_LINK(r, left, tp->right, h);
    SET_LINK(tp, left, header.right, h);
    SET_LINK(tp, right, header.left, h);
    return t;
}

int ds_insert(uint64_t key, const void *value)
{
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t root = splay(tree->root, key);
        SET_LINK(tree, root, root, NULL);
        if (!TOID_IS_NULL(root) && NODE(root)->key == key) {
            r = 1;
        } else {
            node_t n = TX_ZNEW(struct snode);
            struct snode *np = NODE(n);
            np->val = pmemobj_tx_alloc(tree->value_size, 0);
            memcpy(pmemobj_direct(np->val), value, tree->value_size);
            np->key = key;
            if (!TOID_IS_NULL(root) && key < NODE(root)->key) {
                np->left = NODE(root)->left;
                np->right = root;
                TX_SET(root, left, NIL);
            } else if (!TOID_IS_NULL(root)) {
                np->right = NODE(root)->right;
                np->left = root;
                TX_SET(root, right, NIL);
            }
            TX_SET(root_oid, root, n);
            TX_SET(root_oid, count, tree->count + 1);
        }
    } TX_ONABORT {
        fprintf(stderr, "splay: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    volatile int r = 0;
    TX_BEGIN(pop) {
        SET_LINK(tree, root, splay(tree->root, key), NULL);
        if (TOID_IS_NULL(tree->root) || NODE(tree->root)->key != key) {
            r = 1;
        } else {
            pmemobj_tx_add_range(NODE(tree->root)->val, 0, tree->value_size);
            memcpy(pmemobj_direct(NODE(tree->root)->val), value, tree->value_size);
        }
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    volatile int r = 0;
    TX_BEGIN(pop) {
        SET_LINK(tree, root, splay(tree->root, key), NULL);
        if (TOID_IS_NULL(tree->root) || NODE(tree->root)->key != key)
            r = 1;
        else
            memcpy(value_out, pmemobj_direct(NODE(tree->root)->val), tree->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_delete(uint64_t key)
{
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t root = splay(tree->root, key);
        SET_LINK(tree, root, root, NULL);
        if (TOID_IS_NULL(root) || NODE(root)->key != key) {
            r = 1;
        } else {
            if (TOID_IS_NULL(NODE(root)->left)) {
                TX_SET(root_oid, root, NODE(root)->right);
            } else {
                TX_SET(root_oid, root, splay(NODE(root)->left, key));
                TX_SET(tree->root, right, NODE(root)->right);
            }
            pmemobj_tx_free(NODE(root)->val);
            TX_FREE(root);
            TX_SET(root_oid, count, tree->count - 1);
        }
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

/* the node with the smallest key >= key, found without splaying */
static struct snode *lower_bound(uint64_t key)
{
    struct snode *n = NODE(tree->root), *best = NULL;
    while (n) {
        if (n->key >= key) {
            best = n;
            n = NODE(n->left);
        } else {
            n = NODE(n->right);
        }
    }
    return best;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    int got = 0;
    struct snode *n = lower_bound(start);
    while (n && got < count) {
        keys[got++] = n->key;
        memcpy(value_out, pmemobj_direct(n->val), tree->value_size);
        n = n->key == UINT64_MAX ? NULL : lower_bound(n->key + 1);
    }
    return got;
}
