/*
 * btree.c -- a B+tree in ordinary volatile C (the legacy original).
 *
 * Nodes hold up to ORDER sorted keys. An inner node has n keys and n + 1
 * children; child i holds the keys in [keys[i-1], keys[i]). A leaf holds n
 * keys and n value pointers, and links to the next leaf for scans. Values
 * are separate blocks of value_size bytes, updated in place. Deletion
 * removes the key from its leaf and never merges nodes (an emptied leaf
 * stays in the chain).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define ORDER 32

struct node {
    int leaf;
    int n;
    uint64_t keys[ORDER];
    void *ptrs[ORDER + 1];     /* inner: children; leaf: values, ptrs[ORDER] = next leaf */
};

struct tree {
    struct node *root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "btree";
const int ds_ordered = 1;
static struct tree *tree;

static struct node *node_new(int leaf)
{
    struct node *n = calloc(1, sizeof *n);
    if (n)
        n->leaf = leaf;
    return n;
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    tree = calloc(1, sizeof *tree);
    if (!tree)
        return -1;
    if (!tree->root) {
        tree->value_size = value_size;
        tree->root = node_new(1);
    }
    return tree->root ? 0 : -1;
}

void ds_close(void)
{
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
    struct node *n = tree->root;
    while (!n->leaf)
        n = n->ptrs[child_index(n, key)];
    return n;
}

static void leaf_put(struct node *lf, int pos, uint64_t key, void *val)
{
    memmove(&lf->keys[pos + 1], &lf->keys[pos], (size_t)(lf->n - pos) * sizeof lf->keys[0]);
    memmove(&lf->ptrs[pos + 1], &lf->ptrs[pos], (size_t)(lf->n - pos) * sizeof lf->ptrs[0]);
    lf->keys[pos] = key;
    lf->ptrs[pos] = val;
    lf->n++;
}

/* Insert into the subtree at n. Returns 0 (done), 1 (key exists), -1 (no
 * memory) or 2: n split, *up_key and *up_node go into the parent. */
static int insert_rec(struct node *n, uint64_t key, void *val, uint64_t *up_key,
                      struct node **up_node)
{
    if (n->leaf) {
        int pos = lower_bound(n, key);
        if (pos < n->n && n->keys[pos] == key)
            return 1;
        if (n->n < ORDER) {
            leaf_put(n, pos, key, val);
            return 0;
        }
        struct node *right = node_new(1);
        if (!right)
            return -1;
        int half = ORDER / 2;
        memcpy(right->keys, &n->keys[half], (ORDER - half) * sizeof n->keys[0]);
        memcpy(right->ptrs, &n->ptrs[half], (ORDER - half) * sizeof n->ptrs[0]);
        right->n = ORDER - half;
        right->ptrs[ORDER] = n->ptrs[ORDER];
        n->ptrs[ORDER] = right;
        n->n = half;
        if (pos <= half)
            leaf_put(n, pos, key, val);
        else
            leaf_put(right, pos - half, key, val);
        *up_key = right->keys[0];
        *up_node = right;
        return 2;
    }
    int i = child_index(n, key);
    uint64_t k;
    struct node *child;
    int r = insert_rec(n->ptrs[i], key, val, &k, &child);
    if (r != 2)
        return r;
    if (n->n < ORDER) {
        memmove(&n->keys[i + 1], &n->keys[i], (size_t)(n->n - i) * sizeof n->keys[0]);
        memmove(&n->ptrs[i + 2], &n->ptrs[i + 1], (size_t)(n->n - i) * sizeof n->ptrs[0]);
        n->keys[i] = k;
        n->ptrs[i + 1] = child;
        n->n++;
        return 0;
    }
    /* full inner node: merge the new entry in order, then split around the middle key */
    uint64_t keys[ORDER + 1];
    void *ptrs[ORDER + 2];
    memcpy(keys, n->keys, (size_t)i * sizeof keys[0]);
    keys[i] = k;
    memcpy(&keys[i + 1], &n->keys[i], (size_t)(ORDER - i) * sizeof keys[0]);
    memcpy(ptrs, n->ptrs, (size_t)(i + 1) * sizeof ptrs[0]);
    ptrs[i + 1] = child;
    memcpy(&ptrs[i + 2], &n->ptrs[i + 1], (size_t)(ORDER - i) * sizeof ptrs[0]);
    struct node *right = node_new(0);
    if (!right)
        return -1;
    int mid = (ORDER + 1) / 2;
    memcpy(n->keys, keys, (size_t)mid * sizeof keys[0]);
    memcpy(n->ptrs, ptrs, (size_t)(mid + 1) * sizeof ptrs[0]);
    n->n = mid;
    right->n = ORDER - mid;
    memcpy(right->keys, &keys[mid + 1], (size_t)right->n * sizeof keys[0]);
    memcpy(right->ptrs, &ptrs[mid + 1], (size_t)(right->n + 1) * sizeof ptrs[0]);
    *up_key = keys[mid];
    *up_node = right;
    return 2;
}

int ds_insert(uint64_t key, const void *value)
{
    void *val = malloc(tree->value_size);
    if (!val)
        return -1;
    memcpy(val, value, tree->value_size);
    uint64_t k;
    struct node *right;
    int r = insert_rec(tree->root, key, val, &k, &right);
    if (r == 2) {
        struct node *root = node_new(0);
        if (!root)
            return -1;
        root->keys[0] = k;
        root->ptrs[0] = tree->root;
        root->ptrs[1] = right;
        root->n = 1;
        tree->root = root;
        r = 0;
    }
    if (r == 0)
        tree->count++;
    else
        free(val);
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    memcpy(lf->ptrs[pos], value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    memcpy(value_out, lf->ptrs[pos], tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct node *lf = find_leaf(key);
    int pos = lower_bound(lf, key);
    if (pos == lf->n || lf->keys[pos] != key)
        return 1;
    free(lf->ptrs[pos]);
    memmove(&lf->keys[pos], &lf->keys[pos + 1], (size_t)(lf->n - pos - 1) * sizeof lf->keys[0]);
    memmove(&lf->ptrs[pos], &lf->ptrs[pos + 1], (size_t)(lf->n - pos - 1) * sizeof lf->ptrs[0]);
    lf->n--;
    tree->count--;
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct node *lf = find_leaf(start);
    int pos = lower_bound(lf, start), got = 0;
    while (lf && got < count) {
        for (; pos < lf->n && got < count; pos++) {
            keys[got++] = lf->keys[pos];
            memcpy(value_out, lf->ptrs[pos], tree->value_size);
        }
        lf = lf->ptrs[ORDER];
        pos = 0;
    }
    return got;
}
