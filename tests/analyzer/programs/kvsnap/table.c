#include "kv.h"
#include <stdlib.h>
#include <string.h>

struct kv_stats kv_stats;

static size_t hash(const char *s) {
    size_t h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

struct kv_table *kv_table_new(size_t n) {
    struct kv_table *t = malloc(sizeof *t);
    t->buckets = calloc(n, sizeof(struct kv_entry *));
    t->nbuckets = n;
    t->count = 0;
    return t;
}

void kv_iter_init(struct kv_iter *it, struct kv_table *t) {
    it->table = t;
    it->bucket = 0;
    it->cur = NULL;
}

struct kv_entry *kv_iter_next(struct kv_iter *it) {
    if (it->cur) it->cur = it->cur->next;
    while (!it->cur && it->bucket < it->table->nbuckets)
        it->cur = it->table->buckets[it->bucket++];
    return it->cur;
}

static void kv_grow(struct kv_table *t) {
    struct kv_entry **nb = calloc(t->nbuckets * 2, sizeof *nb);
    struct kv_iter it;
    struct kv_entry *e, *next = NULL;
    kv_iter_init(&it, t);
    for (e = kv_iter_next(&it); e; e = next) {
        next = kv_iter_next(&it);
        size_t b = hash(e->key) % (t->nbuckets * 2);
        e->next = nb[b];
        nb[b] = e;
    }
    free(t->buckets);
    t->buckets = nb;
    t->nbuckets *= 2;
}

struct kv_entry *kv_get(struct kv_table *t, const char *key) {
    kv_stats.gets++;
    for (struct kv_entry *e = t->buckets[hash(key) % t->nbuckets]; e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

int kv_put(struct kv_table *t, char *key, char *value, size_t vlen) {
    kv_stats.puts++;
    struct kv_entry *e = kv_get(t, key);
    if (e) {
        free(e->value);
        e->value = value;
        e->vlen = vlen;
        free(key);
        return 0;
    }
    if (t->count >= t->nbuckets) kv_grow(t);
    e = malloc(sizeof(struct kv_entry));
    if (!e) return -1;
    size_t b = hash(key) % t->nbuckets;
    e->key = key;
    e->value = value;
    e->vlen = vlen;
    e->next = t->buckets[b];
    t->buckets[b] = e;
    t->count++;
    return 0;
}
