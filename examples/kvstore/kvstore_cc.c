/*
 * kvstore_cc -- the same chained hash table as kvstore.c, written as plain
 * legacy C: ordinary pointers, ordinary stores, snprintf into a struct
 * field, no cairn_tx_add and no cairn_ptr_store anywhere. Built with
 * cairn-cc, which logs every store that may reach the pool and keeps the
 * pointers stored there in relative form. Only the pool, the root,
 * allocation and the transaction boundaries are cairn's.
 *
 *   kvstore run    POOL [OPS]   apply OPS pseudo-random puts/deletes (0 = forever);
 *                               after each commit, stores N (operations committed)
 *                               into the 8-byte file $KV_PROGRESS if set, else
 *                               prints "committed N" 
 *   kvstore verify POOL         check the table and that it equals a replay of
 *                               the first N operations, N being the count the
 *                               pool says committed; prints what it saw
 *
 * Every operation's effect depends only on its sequence number, so the
 * verifier can replay N operations in DRAM and demand the pool match
 * exactly: a torn, lost or doubled operation cannot hide.
 */
#include <cairn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvstore.h"

static struct entry *bucket_head(struct kv_root *root, uint64_t b)
{
    struct entry **buckets = root->buckets;
    return buckets[b];
}

static void apply_op(cairn_pool *pool, struct kv_root *root, uint64_t n)
{
    int del;
    uint64_t key, value;
    op_of(n, &del, &key, &value);
    struct entry **buckets = root->buckets;
    struct entry **link = &buckets[key % NBUCKETS];
    struct entry *e = *link;
    while (e && e->key != key) {
        link = &e->next;
        e = *link;
    }
    if (del) {
        if (e) {
            *link = e->next;
            root->count--;
            root->value_sum -= e->value;
            cairn_free(e);
        }
    } else if (e) {
        root->value_sum += value - e->value;
        e->value = value;
        snprintf(e->label, sizeof e->label, "v%" PRIu64, value % 100000);
    } else {
        e = cairn_alloc(pool, sizeof *e);
        if (!e) {
            fprintf(stderr, "kvstore: %s\n", cairn_errormsg());
            cairn_tx_abort();
            return;
        }
        e->key = key;
        e->value = value;
        snprintf(e->label, sizeof e->label, "v%" PRIu64, value % 100000);
        e->next = *link;
        *link = e;
        root->count++;
        root->value_sum += value;
    }
    root->ops_done = n + 1;
}

static struct kv_root *open_root(cairn_pool *pool)
{
    struct kv_root *root = CAIRN_ROOT(pool, struct kv_root);
    if (!root) return NULL;
    if (!root->buckets) {
        CAIRN_TX(pool) {
            struct entry **b = cairn_alloc(pool, NBUCKETS * sizeof *b);
            if (!b) { cairn_tx_abort(); break; }
            root->buckets = b;
            root->nbuckets = NBUCKETS;
        }
        if (!root->buckets) return NULL;
    }
    return root;
}

static int run(const char *path, uint64_t ops)
{
    cairn_pool *pool = cairn_pool_open(path, LAYOUT);
    if (!pool && errno == ENOENT) pool = cairn_pool_create(path, LAYOUT, (size_t)64 << 20);
    if (!pool) { fprintf(stderr, "kvstore: %s\n", cairn_errormsg()); return 1; }
    struct kv_root *root = open_root(pool);
    if (!root) { fprintf(stderr, "kvstore: %s\n", cairn_errormsg()); return 1; }
    uint64_t start = root->ops_done;
    /* progress goes to a shared 8-byte file (a store, not a system call, so
     * the process spends its time inside transactions where kills matter) */
    volatile uint64_t *progress = NULL;
    const char *pf = getenv("KV_PROGRESS");
    if (pf) {
        int fd = open(pf, O_RDWR | O_CREAT, 0644);
        if (fd < 0 || ftruncate(fd, 8)) { perror(pf); return 1; }
        progress = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (progress == MAP_FAILED) { perror(pf); return 1; }
        close(fd);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (uint64_t i = 0; ops == 0 || i < ops; i++) {
        uint64_t n = root->ops_done;
        CAIRN_TX(pool) apply_op(pool, root, n);
        if (root->ops_done == n) { fprintf(stderr, "kvstore: operation %" PRIu64 " failed\n", n); return 1; }
        if (progress) *progress = root->ops_done;
        else printf("committed %" PRIu64 "\n", root->ops_done);
    }
    printf("ran operations %" PRIu64 "..%" PRIu64 "\n", start, root->ops_done);
    return cairn_pool_close(pool) ? 1 : 0;
}

/* the reference: the same operations on a plain array */
static int verify(const char *path)
{
    cairn_pool *pool = cairn_pool_open(path, LAYOUT);
    if (!pool) { fprintf(stderr, "kvstore: %s\n", cairn_errormsg()); return 1; }
    struct kv_root *root = CAIRN_ROOT(pool, struct kv_root);
    if (!root) { fprintf(stderr, "kvstore: %s\n", cairn_errormsg()); return 1; }
    static struct kv_reference ref;
    static char seen[KEYSPACE];
    memset(seen, 0, sizeof seen);
    uint64_t n = root->ops_done;
    kv_replay(n, &ref);
    uint64_t *ref_val = ref.val, ref_count = ref.count, ref_sum = ref.sum;
    char *ref_has = ref.has;
    int bad = 0;
    uint64_t count = 0, sum = 0;
    if (n > 0 || root->buckets) {
        for (uint64_t b = 0; b < NBUCKETS && !bad; b++) {
            for (struct entry *e = bucket_head(root, b); e; e = e->next) {
                char want[24];
                if (e->key >= KEYSPACE || e->key % NBUCKETS != b || seen[e->key]) {
                    printf("BAD: entry key %" PRIu64 " in bucket %" PRIu64 " (duplicate or misplaced)\n", e->key, b);
                    bad = 1; break;
                }
                seen[e->key] = 1;
                snprintf(want, sizeof want, "v%" PRIu64, e->value % 100000);
                if (!ref_has[e->key] || ref_val[e->key] != e->value || strcmp(want, e->label)) {
                    printf("BAD: key %" PRIu64 " holds %" PRIu64 " \"%s\", replay says %s%" PRIu64 "\n",
                           e->key, e->value, e->label, ref_has[e->key] ? "" : "absent ",
                           ref_has[e->key] ? ref_val[e->key] : 0);
                    bad = 1; break;
                }
                count++;
                sum += e->value;
            }
        }
    }
    if (!bad && (count != ref_count || count != root->count || sum != ref_sum || sum != root->value_sum)) {
        printf("BAD: %" PRIu64 " entries (root says %" PRIu64 ", replay %" PRIu64 "), sum %" PRIu64
               " (root %" PRIu64 ", replay %" PRIu64 ")\n", count, root->count, ref_count, sum,
               root->value_sum, ref_sum);
        bad = 1;
    }
    struct cairn_recovery rec;
    cairn_pool_recovery(pool, &rec);
    printf("%s: %" PRIu64 " operations committed, %" PRIu64 " entries, sum %" PRIu64 ": %s"
           " (open: %s, %" PRIu64 " undo records in %" PRIu64 " torn transactions rolled back)\n",
           path, n, count, sum, bad ? "INCONSISTENT" : "consistent with a replay",
           rec.recovered ? "recovered after a crash" : "clean", rec.records_rolled_back,
           rec.transactions_rolled_back);
    cairn_pool_close(pool);
    return bad ? 3 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "run"))
        return run(argv[2], argc > 3 ? strtoull(argv[3], NULL, 10) : 0);
    if (argc == 3 && !strcmp(argv[1], "verify"))
        return verify(argv[2]);
    fprintf(stderr, "usage: kvstore run POOL [OPS] | kvstore verify POOL\n");
    return 2;
}
