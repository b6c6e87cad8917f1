/*
 * manager.c -- the travel agency of STAMP's vacation in ordinary volatile C
 * (the legacy original): four tables, each a treap (a binary search tree
 * kept balanced by a heap order on a hash of the key), nodes from malloc,
 * plain pointers, recursive textbook insert and erase that store the link
 * of every level they pass.
 *
 * A car, flight or room node holds its seats (total = used + free) and
 * price; a customer node holds the list of reservations it made, each with
 * the price it paid.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "vacation.h"

struct resinfo {
    struct resinfo *next;
    int type;
    int price;
    long id;
};

struct node {
    struct node *left, *right;
    long key;
    uint64_t prio;
    int total, used, free, price;   /* cars, flights, rooms */
    struct resinfo *list;           /* customers */
};

#define CUSTOMERS RES_TYPES
struct manager {
    struct node *table[RES_TYPES + 1];
};

const char mgr_name[] = "vacation";
static struct manager *mgr;

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
    (void)path;
    (void)pool_size;
    mgr = calloc(1, sizeof *mgr);
    if (!mgr)
        return fprintf(stderr, "vacation: out of memory\n"), -1;
    return 0;
}

void mgr_close(void)
{
}

static struct node *find(struct node *t, long key)
{
    while (t && t->key != key)
        t = key < t->key ? t->left : t->right;
    return t;
}

static struct node *insert(struct node *t, struct node *n)
{
    if (!t)
        return n;
    if (n->key < t->key) {
        t->left = insert(t->left, n);
        if (t->left->prio > t->prio) {
            struct node *l = t->left;
            t->left = l->right;
            l->right = t;
            return l;
        }
    } else {
        t->right = insert(t->right, n);
        if (t->right->prio > t->prio) {
            struct node *r = t->right;
            t->right = r->left;
            r->left = t;
            return r;
        }
    }
    return t;
}

static struct node *merge(struct node *a, struct node *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio > b->prio) {
        a->right = merge(a->right, b);
        return a;
    }
    b->left = merge(a, b->left);
    return b;
}

/* T without the node of KEY (which the caller frees) */
static struct node *erase(struct node *t, long key)
{
    if (!t)
        return NULL;
    if (key < t->key)
        t->left = erase(t->left, key);
    else if (key > t->key)
        t->right = erase(t->right, key);
    else
        return merge(t->left, t->right);
    return t;
}

static struct node *new_node(long key)
{
    struct node *n = calloc(1, sizeof *n);
    if (!n)
        return fprintf(stderr, "vacation: out of memory\n"), NULL;
    n->key = key;
    n->prio = mix((uint64_t)key);
    return n;
}

int mgr_add_customer(long id)
{
    if (find(mgr->table[CUSTOMERS], id))
        return 1;
    struct node *c = new_node(id);
    if (!c)
        return -1;
    mgr->table[CUSTOMERS] = insert(mgr->table[CUSTOMERS], c);
    return 0;
}

/* a seat of item ID of TYPE for customer C; 1 if made */
static int reserve(struct node *c, int type, long id)
{
    struct node *r = find(mgr->table[type], id);
    if (!r || r->free <= 0)
        return 0;
    for (struct resinfo *i = c->list; i; i = i->next)
        if (i->type == type && i->id == id)
            return 0;
    struct resinfo *i = malloc(sizeof *i);
    if (!i)
        return -1;
    i->type = type;
    i->id = id;
    i->price = r->price;
    i->next = c->list;
    c->list = i;
    r->used++;
    r->free--;
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
        struct node *r = find(mgr->table[types[k]], ids[k]);
        if (r && r->free > 0 && r->price > max_price[types[k]]) {
            max_price[types[k]] = r->price;
            max_id[types[k]] = ids[k];
            found = 1;
        }
    }
    if (!found)
        return 0;
    struct node *c = find(mgr->table[CUSTOMERS], customer);
    if (!c) {
        if (!(c = new_node(customer)))
            return -1;
        mgr->table[CUSTOMERS] = insert(mgr->table[CUSTOMERS], c);
    }
    for (int t = 0; t < RES_TYPES; t++) {
        if (max_id[t] < 0)
            continue;
        int made = reserve(c, t, max_id[t]);
        if (made < 0)
            return -1;
        *reserved += made;
    }
    return 0;
}

int mgr_delete_customer(long customer, long *bill)
{
    struct node *c = find(mgr->table[CUSTOMERS], customer);
    *bill = 0;
    if (!c)
        return 1;
    struct resinfo *i = c->list;
    while (i) {
        struct resinfo *next = i->next;
        struct node *r = find(mgr->table[i->type], i->id);
        *bill += i->price;
        r->used--;
        r->free++;
        free(i);
        i = next;
    }
    mgr->table[CUSTOMERS] = erase(mgr->table[CUSTOMERS], customer);
    free(c);
    return 0;
}

int mgr_update_tables(int n, const int *types, const long *ids, const int *prices)
{
    for (int k = 0; k < n; k++) {
        struct node **table = &mgr->table[types[k]];
        struct node *r = find(*table, ids[k]);
        if (prices[k] >= 0) {
            if (!r) {
                if (!(r = new_node(ids[k])))
                    return -1;
                *table = insert(*table, r);
            }
            r->total += 100;
            r->free += 100;
            r->price = prices[k];
        } else if (r && r->free >= 100) {
            r->free -= 100;
            r->total -= 100;
            if (r->total == 0) {
                *table = erase(*table, ids[k]);
                free(r);
            }
        }
    }
    return 0;
}

/* ---- read only: the invariants and a digest (check.h) ---- */

static int walk(const struct node *t, int table, long lo, long hi, struct mgr_summary *s)
{
    if (!t)
        return 0;
    if (t->key <= lo || t->key >= hi || (t->left && t->left->prio > t->prio) ||
        (t->right && t->right->prio > t->prio)) {
        fprintf(stderr, "vacation: table %d: key %ld breaks the tree's order\n", table, t->key);
        return -1;
    }
    if (walk(t->left, table, lo, t->key, s))
        return -1;
    if (table == CUSTOMERS) {
        check_customer(s, t->key);
        for (const struct resinfo *i = t->list; i; i = i->next) {
            if (i->type < 0 || i->type >= RES_TYPES || !find(mgr->table[i->type], i->id)) {
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
