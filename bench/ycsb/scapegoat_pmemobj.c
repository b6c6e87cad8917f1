/*
 * scapegoat_pmemobj.c -- scapegoat.c ported to libpmemobj by hand, as a
 * PMDK user would: a typed root (POBJ_LAYOUT), TOID links, TX_ZNEW and
 * TX_FREE, and a snapshot of a link only when it really changes (a
 * rebuild relinks many nodes; most keep a link or two).
 */
#include <errno.h>
#include <libpmemobj.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 160

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct gnode);
POBJ_LAYOUT_END(ycsb);

typedef TOID(struct gnode) node_t;

struct gnode {
    node_t left, right;
    uint64_t key;
    PMEMoid val;
};

struct tree {
    node_t root;
    uint64_t count, max_count;
    uint64_t value_size;
};

const char ds_name[] = "scapegoat";
const int ds_ordered = 1;
static struct tree *tree;
static PMEMobjpool *pop;

#define NIL TOID_NULL(struct gnode)
#define NODE(n) D_RW(n)
/* *slot = v in a transaction, snapshotting the slot only when it changes */
static void set_link(node_t *slot, node_t v)
{
    if (!TOID_EQUALS(*slot, v)) {
        TX_ADD_DIRECT(slot);
        *slot = v;
    }
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "scapegoat: %s\n", pmemobj_errormsg());
        return -1;
    }
    tree = D_RW(POBJ_ROOT(pop, struct tree));
    int r = 0;
    if (!tree->value_size) {
        TX_BEGIN(pop) {
            TX_SET_DIRECT(tree, value_size, value_size);
        } TX_ONABORT {
            fprintf(stderr, "scapegoat: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

static uint64_t size_of(node_t n)
{
    return TOID_IS_NULL(n) ? 0 : 1 + size_of(NODE(n)->left) + size_of(NODE(n)->right);
}

static int depth_limit(uint64_t n)
{
    return (int)floor(log((double)n) / log(1.5));
}

static uint64_t flatten(node_t n, node_t *out, uint64_t at)
{
    if (TOID_IS_NULL(n))
        return at;
    at = flatten(NODE(n)->left, out, at);
    out[at++] = n;
    return flatten(NODE(n)->right, out, at);
}

static node_t build(node_t *nodes, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return NIL;
    uint64_t mid = lo + (hi - lo) / 2;
    node_t n = nodes[mid];
    set_link(&NODE(n)->left, build(nodes, lo, mid));
    set_link(&NODE(n)->right, build(nodes, mid + 1, hi));
    return n;
}

/* in a transaction: the subtree at n rebuilt balanced */
static node_t rebuild(node_t n, uint64_t size)
{
    node_t *nodes = malloc(size * sizeof *nodes);
    if (!nodes)
        pmemobj_tx_abort(ENOMEM);
    flatten(n, nodes, 0);
    n = build(nodes, 0, size);
    free(nodes);
    return n;
}

int ds_insert(uint64_t key, const void *value)
{
    node_t path[MAX_DEPTH], *link = &tree->root;
    int depth = 0;
    while (!TOID_IS_NULL(*link)) {
        if (NODE(*link)->key == key)
            return 1;
        path[depth++] = *link;
        link = key < NODE(*link)->key ? &NODE(*link)->left : &NODE(*link)->right;
    }
    volatile int r = 0;
    TX_BEGIN(pop) {
        node_t n = TX_ZNEW(struct gnode);
        struct gnode *np = NODE(n);
        np->val = pmemobj_tx_alloc(tree->value_size, 0);
        memcpy(pmemobj_direct(np->val), value, tree->value_size);
        np->key = key;
        TX_ADD_DIRECT(link);
        *link = n;
        TX_ADD_FIELD_DIRECT(tree, count);
        tree->count++;
        if (tree->count > tree->max_count)
            TX_SET_DIRECT(tree, max_count, tree->count);
        if (depth > depth_limit(tree->count) || depth >= MAX_DEPTH - 1) {
            uint64_t child_size = 1;
            node_t child = n;
            for (int i = depth - 1; i >= 0; i--) {
                node_t p = path[i];
                node_t sib = TOID_EQUALS(NODE(p)->left, child) ? NODE(p)->right : NODE(p)->left;
                uint64_t total = child_size + 1 + size_of(sib);
                if (3 * child_size > 2 * total) {
                    node_t top = rebuild(p, total);
                    if (i == 0)
                        set_link(&tree->root, top);
                    else if (TOID_EQUALS(NODE(path[i - 1])->left, p))
                        set_link(&NODE(path[i - 1])->left, top);
                    else
                        set_link(&NODE(path[i - 1])->right, top);
                    break;
                }
                child_size = total;
                child = p;
            }
        }
    } TX_ONABORT {
        fprintf(stderr, "scapegoat: insert: %s\n", pmemobj_errormsg());
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

int ds_delete(uint64_t key)
{
    node_t *link = &tree->root;
    while (!TOID_IS_NULL(*link) && NODE(*link)->key != key)
        link = key < NODE(*link)->key ? &NODE(*link)->left : &NODE(*link)->right;
    node_t n = *link;
    if (TOID_IS_NULL(n))
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        struct gnode *np = NODE(n);
        if (TOID_IS_NULL(np->left)) {
            set_link(link, np->right);
        } else if (TOID_IS_NULL(np->right)) {
            set_link(link, np->left);
        } else {
            node_t *succ_link = &np->right;
            while (!TOID_IS_NULL(NODE(*succ_link)->left))
                succ_link = &NODE(*succ_link)->left;
            node_t succ = *succ_link;
            set_link(succ_link, NODE(succ)->right);
            set_link(&NODE(succ)->left, np->left);
            set_link(&NODE(succ)->right, np->right);
            set_link(link, succ);
        }
        pmemobj_tx_free(np->val);
        TX_FREE(n);
        TX_SET_DIRECT(tree, count, tree->count - 1);
        if (3 * tree->count < 2 * tree->max_count) {
            set_link(&tree->root, tree->count ? rebuild(tree->root, tree->count) : NIL);
            TX_SET_DIRECT(tree, max_count, tree->count);
        }
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
