#include "statics.h"
#include <stdio.h>

static void reset(struct table *t) {
    t->count = 0;
}

int table_load(struct table *t, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    reset(t);
    size_t n = fread(t->items, sizeof t->items[0], 64, f);
    t->count = n;
    fclose(f);
    return 0;
}

int table_save(struct table *t, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fwrite(t->items, sizeof t->items[0], t->count, f);
    return fclose(f);
}
