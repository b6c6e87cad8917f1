/*
 * manager_pmemobj.c -- manager.c ported to libpmemobj by hand, as a PMDK
 * user would: a typed root (POBJ_LAYOUT), TOID links, TX_ZNEW and TX_FREE,
 * the read-only queries outside any transaction, and an undo snapshot of
 * exactly the fields an update changes (a link only when its value really
 * changes; nothing in objects the same transaction allocated).
 */
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "vacation.h"

POBJ_LAYOUT_BEGIN(vacation);
POBJ_LAYOUT_ROOT(vacation, struct manager);
POBJ_LAYOUT_TOID(vacation, struct node);
POBJ_LAYOUT_TOID(vacation, struct resinfo);
POBJ_LAYOUT_END(vacation);

typedef TOID(struct node) node_t;
typedef TOID(struct resinfo) info_t;

struct resinfo {
    info_t next;
    int type;
    int price;
    long id;
};

struct node {
    node_t left, right;
    long key;
    uint64_t prio;
    int total, used, free, price;   /* cars, flights, rooms */
    info_t list;                    /* customers */
};

#define CUSTOMERS RES_TYPES
struct manager {
    node_t table[RES_TYPES + 1];
};

const char mgr_name[] = "vacation";
static struct manager *mgr;
static PMEMobjpool *pop;

#define N(x) D_RW(x)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

int mgr_open(const char *path, size_t pool_size)
{
    pop = pmemobj_open(path, POBJ_LAYOUT_NAME(vacation));
    if (!pop)
        pop = pmemobj_create(path, POBJ_LAYOUT_NAME(vacation), pool_size, 0666);
    if (!pop)
        return fprintf(stderr, "vacation: %s\n", pmemobj_errormsg()), -1;
    mgr = D_RW(POBJ_ROOT(pop, struct manager));
    return 0;
}

void mgr_close(void)
{
    pmemobj_close(pop);
}

/* in a transaction: *LINK = V, snapshotted only when it changes */
static void set_link(node_t *link, node_t v)
{
    if (!TOID_EQUALS(*link, v)) {
        pmemobj_tx_add_range_direct(link, sizeof *link);
        *link = v;
    }
}

static node_t find(node_t t, long key)
{
    while (!TOID_IS_NULL(t) && N(t)->key != key)
        t = key < N(t)->key ? N(t)->left : N(t)->right;
    return t;
}

static node_t insert(node_t t, node_t n)
{
    if (TOID_IS_NULL(t))
        return n;
    struct node *tp = N(t);
    if (N(n)->key < tp->key) {
        set_link(&tp->left, insert(tp->left, n));
        node_t l = tp->left;
        if (N(l)->prio > tp->prio) {
            set_link(&tp->left, N(l)->right);
            set_link(&N(l)->right, t);
            return l;
        }
    } else {
        set_link(&tp->right, insert(tp->right, n));
        node_t r = tp->right;
        if (N(r)->prio > tp->prio) {
            set_link(&tp->right, N(r)->left);
            set_link(&N(r)->left, t);
            return r;
        }
    }
    return t;
}

static node_t merge(node_t a, node_t b)
{
    if (TOID_IS_NULL(a))
        return b;
    if (TOID_IS_NULL(b))
        return a;
    if (N(a)->prio > N(b)->prio) {
        set_link(&N(a)->right, merge(N(a)->right, b));
        return a;
    }
    set_link(&N(b)->left, merge(a, N(b)->left));
    return b;
}

/* T without the node of KEY (which the caller frees) */
static node_t erase(node_t t, long key)
{
    if (TOID_IS_NULL(t))
        return t;
    if (key < N(t)->key)
        set_link(&N(t)->left, erase(N(t)->left, key));
    else if (key > N(t)->key)
        set_link(&N(t)->right, erase(N(t)->right, key));
    else
        return merge(N(t)->left, N(t)->right);
    return t;
}

/* in a transaction */
static node_t new_node(long key)
{
    node_t n = TX_ZNEW(struct node);
    N(n)->key = key;
    N(n)->prio = mix((uint64_t)key);
    return n;
}

int mgr_add_customer(long id)
{
    if (!TOID_IS_NULL(find(mgr->table[CUSTOMERS], id)))
        return 1;
    volatile int rc = 0;
    TX_BEGIN(pop) {
        node_t c = new_node(id);
        set_link(&mgr->table[CUSTOMERS], insert(mgr->table[CUSTOMERS], c));
    } TX_ONABORT {
        fprintf(stderr, "vacation: add customer: %s\n", pmemobj_errormsg());
        rc = -1;
    } TX_END
    return rc;
}

/* in a transaction: a seat of item ID of TYPE for customer C; 1 if made */
static int reserve(node_t c, int type, long id)
{
    node_t r = find(mgr->table[type], id);
    if (TOID_IS_NULL(r) || N(r)->free <= 0)
        return 0;
    for (info_t i = N(c)->list; !TOID_IS_NULL(i); i = D_RO(i)->next)
        if (D_RO(i)->type == type && D_RO(i)->id == id)
            return 0;
    info_t i = TX_NEW(struct resinfo);
    D_RW(i)->type = type;
    D_RW(i)->id = id;
    D_RW(i)->price = N(r)->price;
    D_RW(i)->next = N(c)->list;
    TX_ADD_FIELD(c, list);
    N(c)->list = i;
    pmemobj_tx_add_range_direct(&N(r)->used, 2 * sizeof(int));   /* used, free */
    N(r)->used++;
    N(r)->free--;
    return 1;
}

int mgr_make_reservation(long customer, int n, const int *types, const long *ids,
                         int *reserved)
{
    int max_price[RES_TYPES] = {-1, -1, -1};
    long max_id[RES_TYPES] = {-1, -1, -1};
    int found = 0;
    *reserved = 0;
    for (int k = 0; k < n; k++) {
        node_t r = find(mgr->table[types[k]], ids[k]);
        if (!TOID_IS_NULL(r) && N(r)->free > 0 && N(r)->price > max_price[types[k]]) {
            max_price[types[k]] = N(r)->price;
            max_id[types[k]] = ids[k];
            found = 1;
        }
    }
    if (!found)
        return 0;
    volatile int rc = 0, made = 0;
    TX_BEGIN(pop) {
        node_t c = find(mgr->table[CUSTOMERS], customer);
        if (TOID_IS_NULL(c)) {
            c = new_node(customer);
            set_link(&mgr->table[CUSTOMERS], insert(mgr->table[CUSTOMERS], c));
        }
        for (int t = 0; t < RES_TYPES; t++)
            if (max_id[t] >= 0)
                made += reserve(c, t, max_id[t]);
    } TX_ONABORT {
        fprintf(stderr, "vacation: make reservation: %s\n", pmemobj_errormsg());
        rc = -1;
    } TX_END
    *reserved = made;
    return rc;
}

int mgr_delete_customer(long customer, long *bill)
{
    node_t c = find(mgr->table[CUSTOMERS], customer);
    *bill = 0;
    if (TOID_IS_NULL(c))
        return 1;
    volatile int rc = 0;
    volatile long sum = 0;
    TX_BEGIN(pop) {
        info_t i = N(c)->list;
        while (!TOID_IS_NULL(i)) {
            info_t next = D_RO(i)->next;
            node_t r = find(mgr->table[D_RO(i)->type], D_RO(i)->id);
            sum += D_RO(i)->price;
            pmemobj_tx_add_range_direct(&N(r)->used, 2 * sizeof(int));
            N(r)->used--;
            N(r)->free++;
            TX_FREE(i);
            i = next;
        }
        set_link(&mgr->table[CUSTOMERS], erase(mgr->table[CUSTOMERS], customer));
        TX_FREE(c);
    } TX_ONABORT {
        fprintf(stderr, "vacation: delete customer: %s\n", pmemobj_errormsg());
        rc = -1;
    } TX_END
    *bill = sum;
    return rc;
}

int mgr_update_tables(int n, const int *types, const long *ids, const int *prices)
{
    volatile int rc = 0;
    TX_BEGIN(pop) {
        for (int k = 0; k < n; k++) {
            node_t *table = &mgr->table[types[k]];
            node_t r = find(*table, ids[k]);
            if (prices[k] >= 0) {
                if (TOID_IS_NULL(r)) {
                    r = new_node(ids[k]);
                    set_link(table, insert(*table, r));
                } else {   /* total, used, free, price */
                    pmemobj_tx_add_range_direct(&N(r)->total, 4 * sizeof(int));
                }
                N(r)->total += 100;
                N(r)->free += 100;
                N(r)->price = prices[k];
            } else if (!TOID_IS_NULL(r) && N(r)->free >= 100) {
                pmemobj_tx_add_range_direct(&N(r)->total, 3 * sizeof(int));
                N(r)->free -= 100;
                N(r)->total -= 100;
                if (N(r)->total == 0) {
                    set_link(table, erase(*table, ids[k]));
                    TX_FREE(r);
                }
            }
        }
    } TX_ONABORT {
        fprintf(stderr, "vacation: update tables: %s\n", pmemobj_errormsg());
        rc = -1;
    } TX_END
    return rc;
}

/* ---- read only: the invariants and a digest (check.h) ---- */

static int walk(node_t tn, int table, long lo, long hi, struct mgr_summary *s)
{
    if (TOID_IS_NULL(tn))
        return 0;
    const struct node *t = D_RO(tn);
    if (t->key <= lo || t->key >= hi ||
        (!TOID_IS_NULL(t->left) && D_RO(t->left)->prio > t->prio) ||
        (!TOID_IS_NULL(t->right) && D_RO(t->right)->prio > t->prio)) {
        fprintf(stderr, "vacation: table %d: key %ld breaks the tree's order\n", table, t->key);
        return -1;
    }
    if (walk(t->left, table, lo, t->key, s))
        return -1;
    if (table == CUSTOMERS) {
        check_customer(s, t->key);
        for (info_t in = t->list; !TOID_IS_NULL(in); in = D_RO(in)->next) {
            const struct resinfo *i = D_RO(in);
            if (i->type < 0 || i->type >= RES_TYPES ||
                TOID_IS_NULL(find(mgr->table[i->type], i->id))) {
                fprintf(stderr, "vacation: customer %ld holds a reservation of a missing "
                        "item %d/%ld\n", t->key, i->type, i->id);
                return -1;
            }
            check_reservation(s, i->type, i->id, i->price);
        }
    } else if (check_item(s, table, t->key, t->total, t->used, t->free, t->price)) {
        return -1;
    }
    return walk(t->right, table, t->key, hi, s);
}

int mgr_check(struct mgr_summary *out)
{
    check_begin(out);
    for (int t = 0; t <= CUSTOMERS; t++)
        if (walk(mgr->table[t], t, -1, 1L << 62, out))
            return -1;
    return check_end(out);
}
