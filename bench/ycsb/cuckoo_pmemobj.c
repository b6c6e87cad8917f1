/*
 * cuckoo_pmemobj.c -- cuckoo.c ported to libpmemobj by hand, as a PMDK user
 * would: a typed root (POBJ_LAYOUT), PMEMoid links, pmemobj_tx_zalloc and
 * pmemobj_tx_free, and an undo snapshot of exactly the slots each update
 * changes (nothing in a table allocated by the same transaction).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ycsb.h"

#define SLOTS 4
#define MAX_KICKS 128
#define FIRST_BUCKETS 1024

POBJ_LAYOUT_BEGIN(ycsb);
POBJ_LAYOUT_ROOT(ycsb, struct table);
POBJ_LAYOUT_TOID(ycsb, struct slot);
POBJ_LAYOUT_END(ycsb);

struct slot {
    uint64_t key;
    PMEMoid val;               /* OID_NULL: the slot is empty */
};

struct table {
    uint64_t nbuckets;         /* a power of two */
    uint64_t count;
    uint64_t value_size;
    TOID(struct slot) slots;   /* nbuckets * SLOTS */
};

const char ds_name[] = "cuckoo";
const int ds_ordered = 0;
static struct table *table;
static struct slot *slots;     /* D_RW(table->slots), kept current */
static PMEMobjpool *pop;
static uint64_t kick_rng = 88172645463325252ULL;

static uint64_t djb2(uint64_t key)
{
    uint64_t h = 5381;
    for (int i = 0; i < 8; i++)
        h = h * 33 + ((key >> (8 * i)) & 0xff);
    return h;
}

static uint64_t jenkins(uint64_t key)
{
    uint32_t h = 0;
    for (int i = 0; i < 8; i++) {
        h += (key >> (8 * i)) & 0xff;
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static struct slot *bucket(uint64_t (*hash)(uint64_t), uint64_t key)
{
    return &slots[(hash(key) & (table->nbuckets - 1)) * SLOTS];
}

static struct slot *find(uint64_t key)
{
    struct slot *b1 = bucket(djb2, key), *b2 = bucket(jenkins, key);
    for (int i = 0; i < SLOTS; i++) {
        if (!OID_IS_NULL(b1[i].val) && b1[i].key == key)
            return &b1[i];
        if (!OID_IS_NULL(b2[i].val) && b2[i].key == key)
            return &b2[i];
    }
    return NULL;
}

/* Place (key, val), evicting residents as needed; in a transaction. FRESH:
 * the table was allocated by this transaction (no snapshots). Returns 0,
 * or 1 when MAX_KICKS evictions found no room: *key and *val are then the
 * record left without a slot. */
static int place(uint64_t *key, PMEMoid *val, int fresh)
{
    for (int kick = 0; kick < MAX_KICKS; kick++) {
        struct slot *b1 = bucket(djb2, *key), *b2 = bucket(jenkins, *key);
        for (int i = 0; i < SLOTS; i++) {
            struct slot *s = OID_IS_NULL(b1[i].val) ? &b1[i]
                           : OID_IS_NULL(b2[i].val) ? &b2[i] : NULL;
            if (s) {
                if (!fresh)
                    TX_ADD_DIRECT(s);
                s->key = *key;
                s->val = *val;
                return 0;
            }
        }
        kick_rng ^= kick_rng << 13;
        kick_rng ^= kick_rng >> 7;
        kick_rng ^= kick_rng << 17;
        struct slot *victim = &(kick & 1 ? b2 : b1)[kick_rng % SLOTS];
        uint64_t vkey = victim->key;
        PMEMoid vval = victim->val;
        if (!fresh)
            TX_ADD_DIRECT(victim);
        victim->key = *key;
        victim->val = *val;
        *key = vkey;
        *val = vval;
    }
    return 1;
}

/* Move every record into a table of nbuckets buckets (doubling again if
 * the records do not fit); in a transaction. */
static void rehash(uint64_t nbuckets)
{
    TOID(struct slot) old = table->slots;
    struct slot *old_slots = slots;
    uint64_t old_n = table->nbuckets;
    TOID(struct slot) fresh = TX_ZALLOC(struct slot, nbuckets * SLOTS * sizeof(struct slot));
    TX_ADD_FIELD_DIRECT(table, slots);
    TX_ADD_FIELD_DIRECT(table, nbuckets);
    table->slots = fresh;
    table->nbuckets = nbuckets;
    slots = D_RW(fresh);
    for (uint64_t i = 0; i < old_n * SLOTS; i++) {
        uint64_t key = old_slots[i].key;
        PMEMoid val = old_slots[i].val;
        if (!OID_IS_NULL(val) && place(&key, &val, 1)) {
            table->slots = old;
            table->nbuckets = old_n;
            slots = old_slots;
            TX_FREE(fresh);
            rehash(nbuckets * 2);
            return;
        }
    }
    TX_FREE(old);
}

int ds_open(const char *path, size_t pool_size, size_t value_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(ycsb));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(ycsb), pool_size, 0666);
    if (!pop) {
        fprintf(stderr, "cuckoo: %s\n", pmemobj_errormsg());
        return -1;
    }
    table = D_RW(POBJ_ROOT(pop, struct table));
    int r = 0;
    if (TOID_IS_NULL(table->slots)) {
        TX_BEGIN(pop) {
            TX_ADD_DIRECT(table);
            table->value_size = value_size;
            table->nbuckets = FIRST_BUCKETS;
            table->slots = TX_ZALLOC(struct slot, FIRST_BUCKETS * SLOTS * sizeof(struct slot));
        } TX_ONABORT {
            fprintf(stderr, "cuckoo: %s\n", pmemobj_errormsg());
            r = -1;
        } TX_END
    }
    slots = D_RW(table->slots);
    return r;
}

void ds_close(void)
{
    pmemobj_close(pop);
}

int ds_insert(uint64_t key, const void *value)
{
    if (find(key))
        return 1;
    volatile int r = 0;
    struct slot *volatile old_slots = slots;
    TX_BEGIN(pop) {
        PMEMoid val = pmemobj_tx_alloc(table->value_size, 0);
        memcpy(pmemobj_direct(val), value, table->value_size);
        while (place(&key, &val, 0))
            rehash(table->nbuckets * 2);
        TX_ADD_FIELD_DIRECT(table, count);
        table->count++;
    } TX_ONABORT {
        fprintf(stderr, "cuckoo: insert: %s\n", pmemobj_errormsg());
        slots = old_slots;     /* the table's own fields were rolled back */
        r = -1;
    } TX_END
    return r;
}

int ds_update(uint64_t key, const void *value)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range(s->val, 0, table->value_size);
        memcpy(pmemobj_direct(s->val), value, table->value_size);
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_read(uint64_t key, void *value_out)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    memcpy(value_out, pmemobj_direct(s->val), table->value_size);
    return 0;
}

int ds_delete(uint64_t key)
{
    struct slot *s = find(key);
    if (!s)
        return 1;
    volatile int r = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_free(s->val);
        TX_ADD_FIELD_DIRECT(s, val);
        TX_ADD_FIELD_DIRECT(table, count);
        s->val = OID_NULL;
        table->count--;
    } TX_ONABORT {
        r = -1;
    } TX_END
    return r;
}

int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out)
{
    (void)start;
    (void)count;
    (void)keys;
    (void)value_out;
    return -1;
}
