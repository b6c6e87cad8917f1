/*
 * check.h -- mgr_check's accounting, the same for every build of the
 * manager: each build walks its own tables in key order and feeds every
 * node here; this checks the invariants that need no tree (used + free ==
 * total on every item; the seats used on each table == the reservations
 * customers hold on it) and folds everything into one FNV-1a digest.
 */
#ifndef CAIRN_VACATION_CHECK_H
#define CAIRN_VACATION_CHECK_H
#include <stdio.h>

#include "vacation.h"

static long check_held[RES_TYPES];   /* reservations customers hold, per table */

static uint64_t check_fnv(uint64_t h, long v)
{
    for (int b = 0; b < 8; b++)
        h = (h ^ (((uint64_t)v >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
    return h;
}

static void check_begin(struct mgr_summary *s)
{
    *s = (struct mgr_summary){.digest = 0xcbf29ce484222325ULL};
    for (int t = 0; t < RES_TYPES; t++)
        check_held[t] = 0;
}

/* an item of TABLE: -1 when its seats do not add up */
static int check_item(struct mgr_summary *s, int table, long key, int total, int used,
                      int free_, int price)
{
    if (used < 0 || free_ < 0 || used + free_ != total) {
        fprintf(stderr, "vacation: item %d/%ld: used %d + free %d != total %d\n",
                table, key, used, free_, total);
        return -1;
    }
    s->items[table]++;
    s->seats_used[table] += used;
    s->digest = check_fnv(check_fnv(check_fnv(check_fnv(s->digest, key), total), used),
                          price);
    return 0;
}

static void check_customer(struct mgr_summary *s, long key)
{
    s->customers++;
    s->digest = check_fnv(s->digest, key);
}

/* a reservation the last customer holds (of an item the walk found) */
static void check_reservation(struct mgr_summary *s, int type, long id, int price)
{
    s->reservations++;
    check_held[type]++;
    s->digest = check_fnv(check_fnv(check_fnv(s->digest, type), id), price);
}

static int check_end(const struct mgr_summary *s)
{
    for (int t = 0; t < RES_TYPES; t++) {
        if (s->seats_used[t] != check_held[t]) {
            fprintf(stderr, "vacation: table %d: %ld seats used, %ld reservations held\n",
                    t, s->seats_used[t], check_held[t]);
            return -1;
        }
    }
    return 0;
}

#endif
