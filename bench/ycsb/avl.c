/*
 * avl.c -- an AVL tree in ordinary volatile C (the legacy original:
 * recursive insert and delete, a height in every node, no parent links).
 *
 * Every node holds a key and a pointer to its value (value_size bytes,
 * updated in place). Each level of an insert or delete stores the child
 * the recursion returns and recomputes its height, as textbook code does;
 * a scan walks in order from the first key >= start with an explicit
 * stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 96

struct avlnode {
    struct avlnode *left, *right;
    int height;
    uint64_t key;
    void *val;
};

struct tree {
    struct avlnode *root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "avl";
const int ds_ordered = 1;
static struct tree *tree;

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

static int height(const struct avlnode *n)
{
    return n ? n->height : 0;
}

static void fix_height(struct avlnode *n)
{
    int l = height(n->left), r = height(n->right);
    n->height = (l > r ? l : r) + 1;
}

static struct avlnode *rotate_right(struct avlnode *y)
{
    struct avlnode *x = y->left;
    y->left = x->right;
    x->right = y;
    fix_height(y);
    fix_height(x);
    return x;
}

static struct avlnode *rotate_left(struct avlnode *x)
{
    struct avlnode *y = x->right;
    x->right = y->left;
    y->left = x;
    fix_height(x);
    fix_height(y);
    return y;
}

static struct avlnode *balance(struct avlnode *n)
{
    fix_height(n);
    int bf = height(n->left) - height(n->right);
    if (bf > 1) {
        if (height(n->left->left) < height(n->left->right))
            n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (bf < -1) {
        if (height(n->right->right) < height(n->right->left))
            n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

/* *r: 0 inserted, 1 the key was there, -1 no memory */
static struct avlnode *insert_rec(struct avlnode *n, uint64_t key, const void *value, int *r)
{
    if (!n) {
        n = calloc(1, sizeof *n);
        void *val = malloc(tree->value_size);
        if (!n || !val) {
            free(n);
            free(val);
            *r = -1;
            return NULL;
        }
        memcpy(val, value, tree->value_size);
        n->key = key;
        n->val = val;
        n->height = 1;
        return n;
    }
    if (key == n->key) {
        *r = 1;
        return n;
    }
    if (key < n->key) {
        struct avlnode *l = insert_rec(n->left, key, value, r);
        if (*r)
            return n;
        n->left = l;
    } else {
        struct avlnode *rt = insert_rec(n->right, key, value, r);
        if (*r)
            return n;
        n->right = rt;
    }
    return balance(n);
}

int ds_insert(uint64_t key, const void *value)
{
    int r = 0;
    struct avlnode *root = insert_rec(tree->root, key, value, &r);
    if (r == 0) {
        tree->root = root;
        tree->count++;
    }
    return r;
}

static struct avlnode *find(uint64_t key)
{
    struct avlnode *n = tree->root;
    while (n && n->key != key)
        n = key < n->key ? n->left : n->right;
    return n;
}

int ds_update(uint64_t key, const void *value)
{
    struct avlnode *n = find(key);
    if (!n)
        return 1;
    memcpy(n->val, value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct avlnode *n = find(key);
    if (!n)
        return 1;
    memcpy(value_out, n->val, tree->value_size);
    return 0;
}

static struct avlnode *remove_min(struct avlnode *n, struct avlnode **min)
{
    if (!n->left) {
        *min = n;
        return n->right;
    }
    n->left = remove_min(n->left, min);
    return balance(n);
}

static struct avlnode *delete_rec(struct avlnode *n, uint64_t key, int *found)
{
    if (!n)
        return NULL;
    if (key < n->key) {
        n->left = delete_rec(n->left, key, found);
    } else if (key > n->key) {
        n->right = delete_rec(n->right, key, found);
    } else {
        struct avlnode *l = n->left, *r = n->right, *m;
        *found = 1;
        free(n->val);
        free(n);
        if (!r)
            return l;
        r = remove_min(r, &m);
        m->left = l;
        m->right = r;
        return balance(m);
    }
    return *found ? balance(n) : n;
}

int ds_delete(uint64_t key)
{
    int found = 0;
    tree->root = delete_rec(tree->root, key, &found);
    if (!found)
        return 1;
    tree->count--;
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct avlnode *stack[MAX_DEPTH], *n = tree->root;
    int sp = 0, got = 0;
    while (n) {
        if (n->key >= start) {
            stack[sp++] = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    while (sp > 0 && got < count) {
        n = stack[--sp];
        keys[got++] = n->key;
        memcpy(value_out, n->val, tree->value_size);
        for (n = n->right; n; n = n->left)
            stack[sp++] = n;
    }
    return got;
}
