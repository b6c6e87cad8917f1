/* logstore: a log-structured store. Every put is appended to a log file;
 * at start-up replay_log() reads the log back and rebuilds the in-memory
 * index (a binary search tree) and the value cache. Test program for
 * cairn analyze; the persistent types are listed in
 * tests/analyzer/test_analyze.py. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A counted string laid over a heap buffer, as Redis' sds does: the
 * program only ever holds `buf`; the header is found by pointer arithmetic. */
struct key_hdr {                /* persistent */
    uint8_t len;
    char buf[];
};

struct index_entry {            /* persistent */
    char key[32];
    char *name;                 /* key_hdr string */
    uint64_t offset;
    uint32_t len;
    struct value_blob8 *small;
    struct value_blob32 *large;
    struct index_entry *left, *right;
};

/* Two layouts of one value type, picked by size (like Redis' sdshdr8/32). */
struct value_blob8 {            /* persistent */
    uint8_t len;
    uint8_t flags;
    char bytes[];
};
struct value_blob32 {           /* persistent (a layout variant) */
    uint32_t len;
    uint8_t flags;
    char bytes[];
};

struct logstore {               /* persistent: the root */
    struct index_entry *root;
    uint64_t tail;
    uint64_t nrecords;
    int fd;
};

struct replay_cursor {          /* iterator over the log buffer: not persistent */
    const char *p;
    const char *end;
    struct logstore *store;
};

struct rec_header {             /* on-disk header, only ever a local */
    uint8_t op;
    uint8_t klen;
    uint16_t vlen;
};

static struct logstore g_store;

static struct index_entry **find_slot(struct index_entry **at, const char *key) {
    while (*at) {
        int c = strcmp(key, (*at)->key);
        if (c == 0) break;
        at = c < 0 ? &(*at)->left : &(*at)->right;
    }
    return at;
}

static size_t key_hdr_size(void) { return sizeof(struct key_hdr); }

static char *key_new(const char *k) {
    size_t n = strlen(k);
    char *mem = malloc(key_hdr_size() + n + 1);
    struct key_hdr *h = (struct key_hdr *)mem;
    h->len = (uint8_t)n;
    memcpy(h->buf, k, n + 1);
    return h->buf;
}

static void set_value(struct index_entry *e, const char *v, uint32_t n) {
    if (n < 256) {
        struct value_blob8 *b = malloc(sizeof *b + n);
        b->len = (uint8_t)n;
        b->flags = 0;
        memcpy(b->bytes, v, n);
        e->small = b;
    } else {
        struct value_blob32 *b = malloc(sizeof(struct value_blob32) + n);
        b->len = n;
        b->flags = 0;
        memcpy(b->bytes, v, n);
        e->large = b;
    }
}

static void index_put(struct logstore *s, const char *key, const char *v, uint32_t n, uint64_t off) {
    struct index_entry **slot = find_slot(&s->root, key);
    if (!*slot) {
        *slot = calloc(1, sizeof(struct index_entry));
        strncpy((*slot)->key, key, sizeof (*slot)->key - 1);
        (*slot)->name = key_new(key);
    }
    (*slot)->offset = off;
    (*slot)->len = n;
    set_value(*slot, v, n);
}

static int cursor_next(struct replay_cursor *c, struct rec_header *h, const char **k, const char **v) {
    if (c->end - c->p < (long)sizeof *h) return 0;
    memcpy(h, c->p, sizeof *h);
    c->p += sizeof *h;
    *k = c->p;
    c->p += h->klen;
    *v = c->p;
    c->p += h->vlen;
    return c->p <= c->end;
}

int replay_log(const char *path) {
    struct replay_cursor cur;
    struct rec_header h;
    char key[33];
    const char *k, *v;
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) return -1;
    off_t size = lseek(fd, 0, SEEK_END);
    char *buf = malloc(size + 1);
    pread(fd, buf, size, 0);
    cur.p = buf;
    cur.end = buf + size;
    cur.store = &g_store;
    while (cursor_next(&cur, &h, &k, &v)) {
        memcpy(key, k, h.klen);
        key[h.klen] = 0;
        index_put(cur.store, key, v, h.vlen, (uint64_t)(k - buf));
        g_store.nrecords++;
    }
    g_store.tail = (uint64_t)size;
    g_store.fd = fd;
    free(buf);
    return 0;
}

int log_put(const char *key, const char *v) {
    struct rec_header h = {1, (uint8_t)strlen(key), (uint16_t)strlen(v)};
    char rec[600];
    memcpy(rec, &h, sizeof h);
    memcpy(rec + sizeof h, key, h.klen);
    memcpy(rec + sizeof h + h.klen, v, h.vlen);
    size_t n = sizeof h + h.klen + h.vlen;
    if (pwrite(g_store.fd, rec, n, (off_t)g_store.tail) != (ssize_t)n) return -1;
    index_put(&g_store, key, v, h.vlen, g_store.tail + sizeof h);
    g_store.tail += n;
    return 0;
}

static void dump(const struct index_entry *e) {
    if (!e) return;
    dump(e->left);
    if (e->small) write(1, e->small->bytes, e->small->len);
    else if (e->large) write(1, e->large->bytes, e->large->len);
    dump(e->right);
}

int main(int argc, char **argv) {
    if (replay_log(argc > 1 ? argv[1] : "store.log") < 0) return 1;
    for (int i = 2; i + 1 < argc; i += 2) log_put(argv[i], argv[i + 1]);
    dump(g_store.root);
    return 0;
}
