/*
 * ycsb.h -- the one interface between the YCSB driver (ycsb.c) and a data
 * structure. Every structure comes in three builds, one file each: the
 * volatile original (NAME.c, malloc and plain pointers), its cairn port
 * (NAME_cairn.c, compiled by cairn-cc) and its libpmemobj port
 * (NAME_pmemobj.c). The driver calls the structure from one thread at a
 * time (it holds a lock around every call when it runs several threads), so
 * no structure needs locks of its own.
 *
 * Keys are 64-bit integers; a value is VALUE_SIZE bytes, the same for every
 * record of a run (ds_open's argument). Return values: 0 done, 1 the key is
 * already there (insert) or missing (update, read, delete), -1 failure (a
 * message is on stderr).
 */
#ifndef CAIRN_YCSB_H
#define CAIRN_YCSB_H
#include <stddef.h>
#include <stdint.h>

/* Open the structure. A persistent build opens the pool at PATH when it
 * exists (recovering it) and creates it with POOL_SIZE bytes otherwise; the
 * volatile build ignores both. */
int ds_open(const char *path, size_t pool_size, size_t value_size);
void ds_close(void);
int ds_insert(uint64_t key, const void *value);
int ds_update(uint64_t key, const void *value);
int ds_read(uint64_t key, void *value_out);
int ds_delete(uint64_t key);
/* Ordered structures: up to COUNT records with key >= START in key order;
 * their keys go to KEYS and each value is copied to VALUE_OUT in turn.
 * Returns how many were found. Unordered structures return -1. */
int ds_scan(uint64_t start, int count, uint64_t *keys, void *value_out);

extern const char ds_name[];
extern const int ds_ordered;

#endif
