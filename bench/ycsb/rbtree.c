/*
 * rbtree.c -- a red-black tree in ordinary volatile C (the legacy
 * original; Cormen et al.'s algorithms with parent pointers and NULL
 * leaves).
 *
 * Every node holds a key and a pointer to its value (value_size bytes,
 * updated in place). Insert and delete rebalance by recoloring and
 * rotations; a scan finds the first key >= start and follows successors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

struct rbnode {
    struct rbnode *left, *right, *parent;
    int red;
    uint64_t key;
    void *val;
};

struct tree {
    struct rbnode *root;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "rbtree";
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

static struct rbnode *find(uint64_t key)
{
    struct rbnode *n = tree->root;
    while (n && n->key != key)
        n = key < n->key ? n->left : n->right;
    return n;
}

static void replace_child(struct rbnode *parent, struct rbnode *old, struct rbnode *new)
{
    if (!parent)
        tree->root = new;
    else if (parent->left == old)
        parent->left = new;
    else
        parent->right = new;
}

static void rotate_left(struct rbnode *x)
{
    struct rbnode *y = x->right;
    x->right = y->left;
    if (y->left)
        y->left->parent = x;
    y->parent = x->parent;
    replace_child(x->parent, x, y);
    y->left = x;
    x->parent = y;
}

static void rotate_right(struct rbnode *x)
{
    struct rbnode *y = x->left;
    x->left = y->right;
    if (y->right)
        y->right->parent = x;
    y->parent = x->parent;
    replace_child(x->parent, x, y);
    y->right = x;
    x->parent = y;
}

static int is_red(const struct rbnode *n)
{
    return n && n->red;
}

static void insert_fixup(struct rbnode *z)
{
    struct rbnode *p;
    while ((p = z->parent) && p->red) {
        struct rbnode *g = p->parent;
        if (p == g->left) {
            struct rbnode *u = g->right;
            if (is_red(u)) {
                p->red = 0;
                u->red = 0;
                g->red = 1;
                z = g;
                continue;
            }
            if (z == p->right) {
                rotate_left(p);
                z = p;
                p = z->parent;
            }
            p->red = 0;
            g->red = 1;
            rotate_right(g);
        } else {
            struct rbnode *u = g->left;
            if (is_red(u)) {
                p->red = 0;
                u->red = 0;
                g->red = 1;
                z = g;
                continue;
            }
            if (z == p->left) {
                rotate_right(p);
                z = p;
                p = z->parent;
            }
            p->red = 0;
            g->red = 1;
            rotate_left(g);
        }
    }
    if (tree->root->red)
        tree->root->red = 0;
}

int ds_insert(uint64_t key, const void *value)
{
    struct rbnode **link = &tree->root, *parent = NULL;
    while (*link) {
        parent = *link;
        if (key == parent->key)
            return 1;
        link = key < parent->key ? &parent->left : &parent->right;
    }
    struct rbnode *n = calloc(1, sizeof *n);
    void *val = malloc(tree->value_size);
    if (!n || !val) {
        free(n);
        free(val);
        return -1;
    }
    memcpy(val, value, tree->value_size);
    n->key = key;
    n->val = val;
    n->parent = parent;
    n->red = 1;
    *link = n;
    insert_fixup(n);
    tree->count++;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    struct rbnode *n = find(key);
    if (!n)
        return 1;
    memcpy(n->val, value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct rbnode *n = find(key);
    if (!n)
        return 1;
    memcpy(value_out, n->val, tree->value_size);
    return 0;
}

static void transplant(struct rbnode *u, struct rbnode *v)
{
    replace_child(u->parent, u, v);
    if (v)
        v->parent = u->parent;
}

static void delete_fixup(struct rbnode *x, struct rbnode *xp)
{
    while (x != tree->root && !is_red(x)) {
        if (x == xp->left) {
            struct rbnode *w = xp->right;
            if (w->red) {
                w->red = 0;
                xp->red = 1;
                rotate_left(xp);
                w = xp->right;
            }
            if (!is_red(w->left) && !is_red(w->right)) {
                w->red = 1;
                x = xp;
                xp = x->parent;
            } else {
                if (!is_red(w->right)) {
                    w->left->red = 0;
                    w->red = 1;
                    rotate_right(w);
                    w = xp->right;
                }
                w->red = xp->red;
                xp->red = 0;
                w->right->red = 0;
                rotate_left(xp);
                x = tree->root;
            }
        } else {
            struct rbnode *w = xp->left;
            if (w->red) {
                w->red = 0;
                xp->red = 1;
                rotate_right(xp);
                w = xp->left;
            }
            if (!is_red(w->left) && !is_red(w->right)) {
                w->red = 1;
                x = xp;
                xp = x->parent;
            } else {
                if (!is_red(w->left)) {
                    w->right->red = 0;
                    w->red = 1;
                    rotate_left(w);
                    w = xp->left;
                }
                w->red = xp->red;
                xp->red = 0;
                w->left->red = 0;
                rotate_right(xp);
                x = tree->root;
            }
        }
    }
    if (x)
        x->red = 0;
}

int ds_delete(uint64_t key)
{
    struct rbnode *z = find(key);
    if (!z)
        return 1;
    struct rbnode *x, *xp, *y = z;
    int y_red = y->red;
    if (!z->left) {
        x = z->right;
        xp = z->parent;
        transplant(z, z->right);
    } else if (!z->right) {
        x = z->left;
        xp = z->parent;
        transplant(z, z->left);
    } else {
        y = z->right;
        while (y->left)
            y = y->left;
        y_red = y->red;
        x = y->right;
        if (y->parent == z) {
            xp = y;
        } else {
            xp = y->parent;
            transplant(y, y->right);
            y->right = z->right;
            y->right->parent = y;
        }
        transplant(z, y);
        y->left = z->left;
        y->left->parent = y;
        y->red = z->red;
    }
    if (!y_red)
        delete_fixup(x, xp);
    free(z->val);
    free(z);
    tree->count--;
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct rbnode *n = tree->root, *first = NULL;
    while (n) {
        if (n->key >= start) {
            first = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    int got = 0;
    for (n = first; n && got < count; got++) {
        keys[got] = n->key;
        memcpy(value_out, n->val, tree->value_size);
        if (n->right) {
            n = n->right;
            while (n->left)
                n = n->left;
        } else {
            while (n->parent && n == n->parent->right)
                n = n->parent;
            n = n->parent;
        }
    }
    return got;
}
