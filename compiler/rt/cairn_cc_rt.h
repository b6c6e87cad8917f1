/*
 * cairn_cc_rt.h -- compiler/rt's private interface: what the pass and the
 * parts of compiler/rt (cairn_cc_rt.c, cairn_cc_libc.c, cairn_pheap.c)
 * agree on beyond cairn.h's ABI.
 */
#ifndef CAIRN_CC_RT_H
#define CAIRN_CC_RT_H

#include "cairn.h"

/* The one-word translation cache, cairn_cc__ra_cache (cairn_cc_rt.c):
 *
 *    63                  32 31                   0
 *   +----------------------+----------------------+
 *   | rel >> CAIRN_ID_SHIFT|  region slot         |   0 = empty
 *   +----------------------+----------------------+
 *
 *   va = cairn__region_lo + (slot << CAIRN_SLOT_SHIFT) + (rel & CAIRN_OFF_MASK)
 */
#define CAIRN_CC_CACHE_KEY_SHIFT 32
#define CAIRN_CC_CACHE_SLOT_MASK ((uint64_t)0xffffffff)

#ifndef __cplusplus
/* The word a pointer stored into PM at slot becomes. Strict: the checked
 * conversion (relative, or the program stops on a pointer to DRAM or into
 * another pool). Lenient -- persistent-heap mode, where the heap is
 * volatile in meaning -- a pointer outside the region stays an address.
 * NULL stays 0 either way. */
static inline uint64_t cairn_cc__stored_pointer(const void *slot, const void *target,
                                                int lenient, const char *file, int line)
{
    if (!target || (lenient && !cairn__in_region(target)))
        return (uint64_t)(uintptr_t)target;
    return cairn__va2ra_checked(slot, target, file, line);
}
#endif

#endif
