/*
 * cairn_cc_rt.c -- run-time entry points that cairn-cc's pass calls beyond
 * cairn.h's ABI. Linked into every program cairn-cc links, before libcairn.
 *
 * They build only on cairn.h's ABI (cairn__in_region, cairn__va2ra_checked,
 * cairn__ra2va): everything here is a composition of those, kept out of line
 * so the generated code stays small.
 */
#include <stdint.h>
#include <string.h>

#include "cairn.h"

/* After a byte copy or a wide (integer, vector, aggregate) store of len
 * bytes at dst inside PM: any aligned 8-byte word that holds an address of
 * the PM region is a copied pointer; store it in relative form. The range
 * was logged before the copy, so rewriting it needs no new undo record.
 * Virtual addresses outside the region cannot be told from integers, so a
 * copied pointer to DRAM is not caught here (docs/compiler.md). */
void cairn_cc__fix_words(void *dst, uint64_t len, const char *file, int line)
{
    uintptr_t p = ((uintptr_t)dst + 7) & ~(uintptr_t)7;
    uintptr_t end = (uintptr_t)dst + len;
    for (; p + 8 <= end; p += 8) {
        uint64_t v = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
        if (v != 0 && cairn__in_region((const void *)(uintptr_t)v))
            *(uint64_t *)p = cairn__va2ra_checked((const void *)p,
                                                  (const void *)(uintptr_t)v,
                                                  file, line);
    }
}

/* cmpxchg of a pointer slot in PM: compare and store in relative form,
 * return the old value as a virtual address (the pass derives success by
 * comparing it with expected). */
void *cairn_cc__cmpxchg_ptr(void **slot, void *expected, void *desired,
                            const char *file, int line)
{
    uint64_t *word = (uint64_t *)slot;
    uint64_t exp;
    if (expected == NULL)
        exp = 0;
    else if (cairn__in_region(expected))
        exp = cairn__va2ra_checked(slot, expected, file, line);
    else /* a PM slot never holds a DRAM address: the compare fails */
        return cairn__ra2va(__atomic_load_n(word, __ATOMIC_SEQ_CST));
    uint64_t des = cairn__va2ra_checked(slot, desired, file, line);
    if (__atomic_compare_exchange_n(word, &exp, des, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
        return expected;
    return cairn__ra2va(exp);
}

/* Atomic exchange of a pointer slot in PM. */
void *cairn_cc__xchg_ptr(void **slot, void *desired, const char *file, int line)
{
    uint64_t des = cairn__va2ra_checked(slot, desired, file, line);
    return cairn__ra2va(__atomic_exchange_n((uint64_t *)slot, des,
                                            __ATOMIC_SEQ_CST));
}

/* An 8-byte operand of an integer cmpxchg/exchange (how clang lowers them
 * on pointers): in relative form when the slot is PM and the value is an
 * address of the PM region, else unchanged. */
uint64_t cairn_cc__pm_word(const void *slot, uint64_t v, const char *file, int line)
{
    if (v == 0 || !cairn__in_region(slot) ||
        !cairn__in_region((const void *)(uintptr_t)v))
        return v;
    return cairn__va2ra_checked(slot, (const void *)(uintptr_t)v, file, line);
}
