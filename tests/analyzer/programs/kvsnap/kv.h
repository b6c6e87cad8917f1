/* kvsnap: a hash-table key-value store that saves a snapshot file and loads
 * it back at start-up. Test program for cairn analyze; the persistent types
 * are listed in tests/analyzer/test_analyze.py. */
#ifndef KV_H
#define KV_H
#include <stddef.h>
#include <stdint.h>

struct kv_entry {            /* persistent */
    char *key;
    char *value;
    size_t vlen;
    struct kv_entry *next;
};

struct kv_table {            /* persistent */
    struct kv_entry **buckets;
    size_t nbuckets;
    size_t count;
};

typedef struct kv_store {    /* persistent: the root */
    struct kv_table *table;
    uint64_t version;
    char path[256];
} kv_store;

struct kv_iter {             /* iterator: not persistent */
    struct kv_table *table;
    size_t bucket;
    struct kv_entry *cur;
};

struct snap_header {         /* file format only, read into a local */
    uint32_t magic;
    uint32_t count;
    uint64_t version;
};

struct kv_stats {            /* volatile counters */
    unsigned long puts, gets;
};
extern struct kv_stats kv_stats;

kv_store *kv_open(const char *path);
int kv_put(struct kv_table *t, char *key, char *value, size_t vlen);
struct kv_entry *kv_get(struct kv_table *t, const char *key);
int kv_load_snapshot(kv_store *s, const char *path);
int kv_save_snapshot(kv_store *s, const char *path);
void kv_iter_init(struct kv_iter *it, struct kv_table *t);
struct kv_entry *kv_iter_next(struct kv_iter *it);
#endif
