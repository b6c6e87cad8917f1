/*
 * btree_pmemobj.c -- btree.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), PMEMoid links, pmemobj_tx_zalloc and
 * pmemobj_tx_free, and an undo snapshot of exactly the ranges each update
 * changes (nothing in a node allocated by the same transaction).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define ORDER 32

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct tree);
POBJ_LAYOUT_TOID(ycsb, struct node);
POBJ_LAYOUT_END(ycsb);

struct node {
    int leaf;
    int n;
    uint64_t keys[ORDER];
    PMEMoid ptrs[ORDER + 1];   /* inner: children; leaf: values, ptrs[ORDER] = next leaf */
};

struct tree {
    TOID(struct node) root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "btree";
const int ds_ordered = 1;
static struct tree *tree;
static PMEMobjpool *pop;

#define NODE(oid) ((struct node *)pmemobj_direct(oid))

static PMEMoid node_new(int leaf)
{
    PMEMoid oid = pmemobj_tx_zalloc(sizeof(struct node), TOID_TYPE_NUM(struct node));
    NODE(oid)->leaf = leaf;
    return oid;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "btree: %s\n", pmemobj_errormsg());
        return -1;
    }
    tree = D_RW(POBJ_ROOT(pop, struct tree));
    int r = 0;
    if (TOID_IS_NULL(tree->root)) {
        TX_BEGIN(pop) {
            TX_ADD_DIRECT(tree);
            tree->value_size = value_size;
            TOID_ASSIGN(tree->root, node_new(1));
        } TX_ONABORT {
            fprintf(stderr, "btree: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

/* first index whose key is >= key */
static int lower_bound(const struct node *n, uint64_t key)
{
    int lo = 0, hi = n->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (n->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the child of an inner node that holds key */
static int child_index(const struct node *n, uint64_t key)
{
    int lo = 0, hi = n->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (n->keys[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct node *find_leaf(uint64_t key)
{
    struct node *n = D_RW(tree->root);
    while (!n->leaf)
        n = NODE(n->ptrs[child_index(n, key)]);
    return n;
}

/* fresh: lf was allocated by this transaction (no snapshot needed) */
static void leaf_put(struct node *lf, int fresh, int pos, uint64_t key, PMEMoid val)
{
    if (!fresh) {
        pmemobj_tx_add_range_direct(&lf->keys[pos], (size_t)(lf->n - pos + 1) * sizeof lf->keys[0]);
        pmemobj_tx_add_range_direct(&lf->ptrs[pos], (size_t)(lf->n - pos + 1) * sizeof lf->ptrs[0]);
        TX_ADD_FIELD_DIRECT(lf, n);
    }
    memmove(&lf->keys[pos + 1], &lf->keys[pos], (size_t)(lf->n - pos) * sizeof lf->keys[0]);
    memmove(&lf->ptrs[pos + 1], &lf->ptrs[pos], (size_t)(lf->n - pos) * sizeof lf->ptrs[0]);
    lf->keys[pos] = key;
    lf->ptrs[pos] = val;
    lf->n++;
}

/* Insert into the subtree at n. Returns 0 (done), 1 (key exists) or 2: n
 * split, *up_key and *up_node go into the parent. Runs in a transaction
 * (a failed allocation aborts it). */
static int insert_rec(struct node *n, uint64_t key, PMEMoid val, uint64_t *up_key,
                      PMEMoid *up_node)
{
    if (n->leaf) {
        int pos = lower_bound(n, key);
        if (pos < n->n && n->keys[pos] == key)
            return 1;
        if (n->n < ORDER) {
            leaf_put(n, 0, pos, key, val);
            return 0;
        }
        PMEMoid roid = node_new(1);
        struct node *right = NODE(roid);
        int half = ORDER / 2;
        memcpy(right->keys, &n->keys[half], (ORDER - half) * sizeof n->keys[0]);
        memcpy(right->ptrs, &n->ptrs[half], (ORDER - half) * sizeof n->ptrs[0]);
        right->n = ORDER - half;
        right->ptrs[ORDER] = n->ptrs[ORDER];
        TX_ADD_FIELD_DIRECT(n, n);
        pmemobj_tx_add_range_direct(&n->ptrs[ORDER], sizeof n->ptrs[0]);
        n->ptrs[ORDER] = roid;
        n->n = half;
        if (pos <= half)
            leaf_put(n, 0, pos, key, val);
        else
            leaf_put(right, 1, pos - half, key, val);
        *up_key = right->keys[0];
        *up_node = roid;
        return 2;
    }
    int i = child_index(n, key);
    uint64_t k;
    PMEMoid child;
    int r = insert_rec(NODE(n->ptrs[i]), key, val, &k, &child);
    if (r != 2)
        return r;
    if (n->n < ORDER) {
        pmemobj_tx_add_range_direct(&n->keys[i], (size_t)(n->n - i + 1) * sizeof n->keys[0]);
        pmemobj_tx_add_range_direct(&n->ptrs[i + 1], (size_t)(n->n - i + 1) * sizeof n->ptrs[0]);
        TX_ADD_FIELD_DIRECT(n, n);
        memmove(&n->keys[i + 1], &n->keys[i], (size_t)(n->n - i) * sizeof n->keys[0]);
        memmove(&n->ptrs[i + 2], &n->ptrs[i + 1], (size_t)(n->n - i) * sizeof n->ptrs[0]);
        n->keys[i] = k;
        n->ptrs[i + 1] = child;
        n->n++;
        return 0;
    }
    /* full inner node: merge the new entry in order, then split around the middle key */
    uint64_t keys[ORDER + 1];
    PMEMoid ptrs[ORDER + 2];
    memcpy(keys, n->keys, (size_t)i * sizeof keys[0]);
    keys[i] = k;
    memcpy(&keys[i + 1], &n->keys[i], (size_t)(ORDER - i) * sizeof keys[0]);
    memcpy(ptrs, n->ptrs, (size_t)(i + 1) * sizeof ptrs[0]);
    ptrs[i + 1] = child;
    memcpy(&ptrs[i + 2], &n->ptrs[i + 1], (size_t)(ORDER - i) * sizeof ptrs[0]);
    PMEMoid roid = node_new(0);
    struct node *right = NODE(roid);
    int mid = (ORDER + 1) / 2;
    pmemobj_tx_add_range_direct(n->keys, (size_t)mid * sizeof keys[0]);
    pmemobj_tx_add_range_direct(n->ptrs, (size_t)(mid + 1) * sizeof ptrs[0]);
    TX_ADD_FIELD_DIRECT(n, n);
    memcpy(n->keys, keys, (size_t)mid * sizeof keys[0]);
    memcpy(n->ptrs, ptrs, (size_t)(mid + 1) * sizeof ptrs[0]);
    n->n = mid;
    right->n = ORDER - mid;
    memcpy(right->keys, &keys[mid + 1], (size_t)right->n * sizeof keys[0]);
    memcpy(right->ptrs, &ptrs[mid + 1], (size_t)(right->n + 1) * sizeof ptrs[0]);
    *up_key = keys[mid];
    *up_node = roid;
    return 2;
}

int ds_insert(uint64_t key, const void *value)
{
    volatile int r = -1;
    TX_BEGIN(pop) {
        PMEMoid val = pmemobj_tx_alloc(tree->value_size, 0);
        memcpy(pmemobj_direct(val), value, tree->value_size);
        uint64_t k;
        PMEMoid right;
        r = insert_rec(D_RW(tree->root), key, val, &k, &right);
        if (r == 2) {
            PMEMoid root = node_new(0);
            struct node *rn = NODE(root);
            rn->keys[0] = k;
            rn->ptrs[0] = tree->root.oid;
            rn->ptrs[1] = right;
            rn->n = 1;
            TX_ADD_FIELD_DIRECT(tree, root);
            TOID_ASSIGN(tree->root, root);
            r = 0;
        }
        if (r == 0) {
            TX_ADD_FIELD_DIRECT(tree, count);
            tree->count++;
        } else {
            pmemobj_tx_free(val);
        }
    } TX_ONABORT {
        fprintf(stderr, "btree: insert: %s\n", pmemobj_errormsg());
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(lf->ptrs[pos], 0, tree->value_size);
        memcpy(pmemobj_direct(lf->ptrs[pos]), value, tree->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    memcpy(value_out, pmemobj_direct(lf->ptrs[pos]), tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_free(lf->ptrs[pos]);
        pmemobj_tx_add_range_direct(&lf->keys[pos], (size_t)(lf->n - pos) * sizeof lf->keys[0]);
        pmemobj_tx_add_range_direct(&lf->ptrs[pos], (size_t)(lf->n - pos) * sizeof lf->ptrs[0]);
        TX_ADD_FIELD_DIRECT(lf, n);
        TX_ADD_FIELD_DIRECT(tree, count);
        memmove(&lf->keys[pos], &lf->keys[pos + 1],
                (size_t)(lf->n - pos - 1) * sizeof lf->keys[0]);
        memmove(&lf->ptrs[pos], &lf->ptrs[pos + 1],
                (size_t)(lf->n - pos - 1) * sizeof lf->ptrs[0]);
        lf->n--;
        tree->count--;
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct node *lf = find_leaf(start);
    int pos = lower_bound(lf, start), got = 0;
    while (lf && got < count) {
        for (; pos < lf->n && got < count; pos++) {
            keys[got++] = lf->keys[pos];
            memcpy(value_out, pmemobj_direct(lf->ptrs[pos]), tree->value_size);
        }
        lf = NODE(lf->ptrs[ORDER]);
        pos = 0;
    }
    return got;
}
