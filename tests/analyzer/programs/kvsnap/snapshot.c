#include "kv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC 0x4b56534eu

struct kv_table *kv_table_new(size_t n);

kv_store *kv_open(const char *path) {
    kv_store *s = calloc(1, sizeof(kv_store));
    s->table = kv_table_new(16);
    strncpy(s->path, path, sizeof s->path - 1);
    return s;
}

static char *read_blob(FILE *f, size_t *len) {
    uint32_t n;
    if (fread(&n, sizeof n, 1, f) != 1) return NULL;
    char *p = malloc(n + 1);
    if (fread(p, 1, n, f) != n) { free(p); return NULL; }
    p[n] = 0;
    *len = n;
    return p;
}

int kv_load_snapshot(kv_store *s, const char *path) {
    struct snap_header h;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    if (fread(&h, sizeof h, 1, f) != 1 || h.magic != SNAP_MAGIC) { fclose(f); return -1; }
    for (uint32_t i = 0; i < h.count; i++) {
        size_t klen, vlen;
        char *k = read_blob(f, &klen);
        char *v = read_blob(f, &vlen);
        if (!k || !v) break;
        kv_put(s->table, k, v, vlen);
    }
    s->version = h.version;
    fclose(f);
    return 0;
}

static void write_blob(FILE *f, const char *p, size_t n) {
    uint32_t len = (uint32_t)n;
    fwrite(&len, sizeof len, 1, f);
    fwrite(p, 1, n, f);
}

int kv_save_snapshot(kv_store *s, const char *path) {
    struct snap_header h;
    struct kv_iter it;
    struct kv_entry *e;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    h.magic = SNAP_MAGIC;
    h.count = (uint32_t)s->table->count;
    h.version = s->version;
    fwrite(&h, sizeof h, 1, f);
    kv_iter_init(&it, s->table);
    while ((e = kv_iter_next(&it))) {
        write_blob(f, e->key, strlen(e->key));
        write_blob(f, e->value, e->vlen);
    }
    fprintf(stderr, "saved %lu entries\n", (unsigned long)s->table->count);
    return fclose(f);
}

int main(int argc, char **argv) {
    kv_store *s = kv_open(argc > 1 ? argv[1] : "kv.snap");
    kv_load_snapshot(s, s->path);
    if (argc > 3) kv_put(s->table, strdup(argv[2]), strdup(argv[3]), strlen(argv[3]));
    s->version++;
    return kv_save_snapshot(s, s->path);
}
