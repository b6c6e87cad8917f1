/*
 * scapegoat.c -- a scapegoat tree in ordinary volatile C (the legacy
 * original; Galperin and Rivest, alpha = 2/3).
 *
 * Nodes hold no balance data. An insert deeper than log_{3/2}(n) climbs its
 * path to the first ancestor whose child holds more than 2/3 of its
 * subtree (the scapegoat) and rebuilds that subtree perfectly balanced; a
 * delete that leaves fewer than 2/3 of the most nodes the tree has held
 * since its last rebuild rebuilds the whole tree. Rebuilding relinks the
 * existing nodes through a scratch array in ordinary memory. Every node
 * holds a key and a pointer to its value (value_size bytes, updated in
 * place).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_DEPTH 160

struct gnode {
    struct gnode *left, *right;
    uint64_t key;
    void *val;
};

struct tree {
    struct gnode *root;
    uint64_t count, max_count;
    uint64_t value_size;
};

const char ds_name[] = "scapegoat";
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

static uint64_t size_of(const struct gnode *n)
{
    return n ? 1 + size_of(n->left) + size_of(n->right) : 0;
}

static int depth_limit(uint64_t n)
{
    return (int)floor(log((double)n) / log(1.5));
}

static uint64_t flatten(struct gnode *n, struct gnode **out, uint64_t at)
{
    if (!n)
        return at;
    at = flatten(n->left, out, at);
    out[at++] = n;
    return flatten(n->right, out, at);
}

static struct gnode *build(struct gnode **nodes, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return NULL;
    uint64_t mid = lo + (hi - lo) / 2;
    struct gnode *n = nodes[mid];
    n->left = build(nodes, lo, mid);
    n->right = build(nodes, mid + 1, hi);
    return n;
}

/* the subtree at n rebuilt balanced; NULL without memory (n unchanged) */
static struct gnode *rebuild(struct gnode *n, uint64_t size)
{
    struct gnode **nodes = malloc(size * sizeof *nodes);
    if (!nodes)
        return NULL;
    flatten(n, nodes, 0);
    n = build(nodes, 0, size);
    free(nodes);
    return n;
}

int ds_insert(uint64_t key, const void *value)
{
    struct gnode *path[MAX_DEPTH], **link = &tree->root;
    int depth = 0;
    while (*link) {
        if ((*link)->key == key)
            return 1;
        path[depth++] = *link;
        link = key < (*link)->key ? &(*link)->left : &(*link)->right;
    }
    struct gnode *n = calloc(1, sizeof *n);
    void *val = malloc(tree->value_size);
    if (!n || !val) {
        free(n);
        free(val);
        return -1;
    }
    memcpy(val, value, tree->value_size);
    n->key = key;
    n->val = val;
    *link = n;
    tree->count++;
    if (tree->count > tree->max_count)
        tree->max_count = tree->count;
    if (depth <= depth_limit(tree->count) && depth < MAX_DEPTH - 1)
        return 0;
    uint64_t child_size = 1;
    struct gnode *child = n;
    for (int i = depth - 1; i >= 0; i--) {
        struct gnode *p = path[i];
        uint64_t total = child_size + 1 + size_of(p->left == child ? p->right : p->left);
        if (3 * child_size > 2 * total) {
            struct gnode *top = rebuild(p, total);
            if (!top)
                return 0;
            if (i == 0)
                tree->root = top;
            else if (path[i - 1]->left == p)
                path[i - 1]->left = top;
            else
                path[i - 1]->right = top;
            return 0;
        }
        child_size = total;
        child = p;
    }
    return 0;
}

static struct gnode *find(uint64_t key)
{
    struct gnode *n = tree->root;
    while (n && n->key != key)
        n = key < n->key ? n->left : n->right;
    return n;
}

int ds_update(uint64_t key, const void *value)
{
    struct gnode *n = find(key);
    if (!n)
        return 1;
    memcpy(n->val, value, tree->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct gnode *n = find(key);
    if (!n)
        return 1;
    memcpy(value_out, n->val, tree->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct gnode **link = &tree->root;
    while (*link && (*link)->key != key)
        link = key < (*link)->key ? &(*link)->left : &(*link)->right;
    struct gnode *n = *link;
    if (!n)
        return 1;
    if (!n->left) {
        *link = n->right;
    } else if (!n->right) {
        *link = n->left;
    } else {
        struct gnode **succ_link = &n->right;
        while ((*succ_link)->left)
            succ_link = &(*succ_link)->left;
        struct gnode *succ = *succ_link;
        *succ_link = succ->right;
        succ->left = n->left;
        succ->right = n->right;
        *link = succ;
    }
    free(n->val);
    free(n);
    tree->count--;
    if (3 * tree->count < 2 * tree->max_count) {
        struct gnode *top = tree->count ? rebuild(tree->root, tree->count) : NULL;
        if (top || !tree->count) {
            tree->root = top;
            tree->max_count = tree->count;
        }
    }
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    struct gnode *stack[MAX_DEPTH], *n = tree->root;
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
