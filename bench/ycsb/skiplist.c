/*
 * skiplist.c -- a skip list in ordinary volatile C (the legacy original;
 * Pugh's algorithms, p = 1/4, at most MAX_LEVEL levels).
 *
 * A node holds its key, a pointer to its value (value_size bytes, updated
 * in place) and one forward link per level it is in; the head has all
 * MAX_LEVEL. Node levels come from a generator in ordinary memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define MAX_LEVEL 16

struct snode {
    uint64_t key;
    void *val;
    int level;
    struct snode *next[];
};

struct list {
    struct snode *head;
    int level;
    uint64_t count;
    uint64_t value_size;
};

const char ds_name[] = "skiplist";
const int ds_ordered = 1;
static struct list *list;
static uint64_t level_rng = 0x2545f4914f6cdd1dULL;

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    (void)path;
    (void)pool_size;
    list = calloc(1, sizeof *list);
    if (!list)
        return -1;
    if (!list->head) {
        list->value_size = value_size;
        list->level = 1;
        list->head = calloc(1, sizeof *list->head + MAX_LEVEL * sizeof list->head->next[0]);
        if (list->head)
            list->head->level = MAX_LEVEL;
    }
    return list->head ? 0 : -1;
}

void ds_close(void)
{
}

static int random_level(void)
{
    level_rng ^= level_rng << 13;
    level_rng ^= level_rng >> 7;
    level_rng ^= level_rng << 17;
    int level = 1;
    for (uint64_t bits = level_rng; (bits & 3) == 0 && level < MAX_LEVEL; bits >>= 2)
        level++;
    return level;
}

/* the last node before key on every level; returns the node at or after key */
static struct snode *find(uint64_t key, struct snode **update)
{
    struct snode *x = list->head;
    for (int i = list->level - 1; i >= 0; i--) {
        while (x->next[i] && x->next[i]->key < key)
            x = x->next[i];
        if (update)
            update[i] = x;
    }
    return x->next[0];
}

int ds_insert(uint64_t key, const void *value)
{
    struct snode *update[MAX_LEVEL];
    struct snode *x = find(key, update);
    if (x && x->key == key)
        return 1;
    int level = random_level();
    struct snode *n = calloc(1, sizeof *n + (size_t)level * sizeof n->next[0]);
    void *val = malloc(list->value_size);
    if (!n || !val) {
        free(n);
        free(val);
        return -1;
    }
    memcpy(val, value, list->value_size);
    n->key = key;
    n->val = val;
    n->level = level;
    if (level > list->level) {
        for (int i = list->level; i < level; i++)
            update[i] = list->head;
        list->level = level;
    }
    for (int i = 0; i < level; i++) {
        n->next[i] = update[i]->next[i];
        update[i]->next[i] = n;
    }
    list->count++;
    return 0;
}

int ds_update(uint64_t key, const void *value)
{
    struct snode *x = find(key, NULL);
    if (!x || x->key != key)
        return 1;
    memcpy(x->val, value, list->value_size);
    return 0;
}

int ds_read(uint64_t key, void *value_out)
{
    struct snode *x = find(key, NULL);
    if (!x || x->key != key)
        return 1;
    memcpy(value_out, x->val, list->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct snode *update[MAX_LEVEL];
    struct snode *x = find(key, update);
    if (!x || x->key != key)
        return 1;
    for (int i = 0; i < x->level; i++)
        update[i]->next[i] = x->next[i];
    while (list->level > 1 && !list->head->next[list->level - 1])
        list->level--;
    free(x->val);
    free(x);
    list->count--;
    return 0;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    int got = 0;
    for (struct snode *x = find(start, NULL); x && got < count; x = x->next[0]) {
        keys[got++] = x->key;
        memcpy(value_out, x->val, list->value_size);
    }
    return got;
}
