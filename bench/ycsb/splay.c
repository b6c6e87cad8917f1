/*
 * splay.c -- a splay tree in ordinary volatile C (the legacy original:
 * Sleator's top-down splay, no parent links).
 *
 * Every access (read, update, insert, delete) splays the key's node to the
 * root, so reads restructure the tree too. Every node holds a key and a
 * pointer to its value (value_size bytes, updated in place). A scan looks
 * up each next key by descending from the root without splaying.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

struct snode {
    struct snode *left, *right;
    uint64_t key;
    void *val;
};

struct tree {
    struct snode *root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "splay";
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

/* Top-down splay: the node with key, or the last one met on its path,
 * becomes the root of the returned tree. */
static struct snode *splay(struct snode *t, uint64_t key)
{
    struct snode header = {0}, *l = &header, *r = &header, *y;
    if (!t)
        return NULL;
    for (;;) {
        if (key < t->key) {
            if (!t->left)
                break;
            if (key < t->left->key) {
                y = t->left;
                t->left = y->right;
                y->right = t;
                t = y;
                if (!t->left)
                    break;
            }
            r->left = t;
            r = t;
            t = t->left;
        } else if (key > t->key) {
            if (!t->right)
                break;
            if (key > t->right->key) {
                y = t->right;
                t->right = y->left;
                y->left = t;
                t = y;
                if (!t->right)
                    break;
            }
            l->right = t;
            l = t;
            t = t->right;
        } else {
            break;
        }
    }
    l->right = t->left;
    r->left = t->right;
    t->left = header.right;
    t->right = header.left;
    return t;
}

int ds_insert(uint64_t key, const void *value)
{
    struct snode *root = splay(tree->root, key);
    tree->root = root;
    if (root && root->key == key)
        return 1;
    struct snode *n = calloc(1, sizeof *n);
    void *val = malloc(tree->value_size);
    if (!n || !val) {
        free(n);
        free(val);
        return -1;
    }
    memcpy(val, value, tree->value_size);
    n->key = key;
    n->val = val;
    if (root && key < root->key) {
        n->left = root->left;
        n->right = root;
        root->left = NULL;
    } else if (root) {
        n->right = root->right;
        n->left = root;
        root->right = NULL;
    }
    tree->root = n;
    tree->count++;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    tree->root = splay(tree->root, key);
    if (!tree->root || tree->root->key != key)
        return 1;
    memcpy(tree->root->val, value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    tree->root = splay(tree->root, key);
    if (!tree->root || tree->root->key != key)
        return 1;
    memcpy(value_out, tree->root->val, tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct snode *root = splay(tree->root, key);
    tree->root = root;
    if (!root || root->key != key)
        return 1;
    if (!root->left) {
        tree->root = root->right;
    } else {
        tree->root = splay(root->left, key);
        tree->root->right = root->right;
    }
    free(root->val);
    free(root);
    tree->count--;
    return 0;
}

/* the node with the smallest key >= key, found without splaying */
static struct snode *lower_bound(uint64_t key)
{
    struct snode *n = tree->root, *best = NULL;
    while (n) {
        if (n->key >= key) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
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
        memcpy(value_out, n->val, tree->value_size);
        n = n->key == UINT64_MAX ? NULL : lower_bound(n->key + 1);
    }
    return got;
}
