/*
 * vacation.h -- the interface between the vacation client (client.c) and
 * the travel agency's manager, after STAMP's vacation as WHISPER ran it:
 * cars, flights and rooms tables (id -> total, used, free, price) and a
 * customers table (id -> the reservations the customer holds), each an
 * ordinary C tree. Every function below is one client transaction; the
 * manager comes in three builds (manager.c, the volatile original;
 * manager_cairn.patch applied to it and compiled by cairn-cc;
 * manager_pmemobj.c), linked with the same client.
 *
 * Return values: 0 done, 1 nothing to do (a missing customer), -1 failure
 * (a message is on stderr).
 */
#ifndef CAIRN_VACATION_H
#define CAIRN_VACATION_H
#include <stddef.h>
#include <stdint.h>

enum { RES_CAR, RES_FLIGHT, RES_ROOM, RES_TYPES };

/* A persistent build opens the pool at PATH when it exists and creates it
 * with POOL_SIZE bytes otherwise; the volatile build ignores both. */
int mgr_open(const char *path, size_t pool_size);
void mgr_close(void);
/* Adds customer ID (1 when it exists already). */
int mgr_add_customer(long id);
/* STAMP's MAKE_RESERVATION: queries the price of N (type, id) items and
 * reserves, for customer CUSTOMER (added when missing), the most expensive
 * item of each type found with a seat free. *RESERVED: how many it made. */
int mgr_make_reservation(long customer, int n, const int *types, const long *ids,
                         int *reserved);
/* STAMP's DELETE_CUSTOMER: the customer's bill (*BILL), every reservation
 * released, the customer removed; 1 when there is no such customer. */
int mgr_delete_customer(long customer, long *bill);
/* STAMP's UPDATE_TABLES: for each of N items, PRICES[i] >= 0 adds 100
 * seats at that price (creating the item), < 0 removes 100 free seats
 * (removing the item when none is left; nothing when fewer are free). */
int mgr_update_tables(int n, const int *types, const long *ids, const int *prices);

struct mgr_summary {
    long items[RES_TYPES];       /* items in each table */
    long seats_used[RES_TYPES];  /* sum of used seats per table */
    long customers;
    long reservations;           /* reservations customers hold */
    uint64_t digest;             /* FNV-1a over every table in key order */
};
/* Walks every table and checks the invariants (tree order, used + free ==
 * total, each table's used seats == the reservations customers hold on it).
 * 0 consistent, -1 not (what broke is on stderr). */
int mgr_check(struct mgr_summary *out);

extern const char mgr_name[];

#endif
