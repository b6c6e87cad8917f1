/*
 * check.h -- `cairn pool check` (check.c).
 */
#ifndef CAIRN_CHECK_H
#define CAIRN_CHECK_H

#include "base.h"

#pragma GCC visibility push(hidden)

/* ---- check.c ---- */
struct cairn_check_report {
    int errors;
    uint64_t objects, object_bytes, run_chunks, large_chunks, free_chunks;
    uint64_t open_lanes, pending_records;
    bool state_damaged;               /* the state copies prove damage: nothing else checked */
};
typedef void (*cairn_check_emit)(void *ctx, const char *severity, const char *msg);
/* Read-only: the file is mapped privately, recovery is simulated in the
 * copy. Returns 0 if consistent, 1 if errors were found, -1 if the file
 * cannot be read as a pool (message through emit). */
int cairn__check_file(const char *path, bool full, cairn_check_emit emit, void *ctx,
                      struct cairn_check_report *rep);
/* The same check on an image already mapped MAP_PRIVATE and writable
 * (size: its bytes): the simulated recovery writes into the mapping, so the
 * caller restores the pages it dirtied (cairn-crashcheck drops them with
 * madvise MADV_DONTNEED). name: what messages call the image.
 * cache (may be NULL): lane scans kept from earlier checks of the same
 * mapping, to reuse for a lane whose area is unchanged. base names the
 * image's contents apart from the lanes in touched (bit l: lane l may
 * differ); a lane's kept scan is reused when base is the one it was kept
 * under, its bit is clear, and the scan read nothing outside the lane. A
 * caller that keeps base fixed passes as touched every lane written since
 * its previous check with this cache (cairn-crashcheck does). */
struct cairn_lane_cache;
struct cairn_lane_cache *cairn__lane_cache_new(void);
void cairn__lane_cache_free(struct cairn_lane_cache *cache);
int cairn__check_image(const char *name, char *image, uint64_t size, bool full,
                       struct cairn_lane_cache *cache, uint64_t base, uint64_t touched,
                       cairn_check_emit emit, void *ectx, struct cairn_check_report *rep);

#pragma GCC visibility pop

#endif
