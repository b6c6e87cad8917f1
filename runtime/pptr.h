/*
 * pptr.h -- persistent pointers (pptr.c): what the rest of the runtime
 * calls.
 */
#ifndef CAIRN_PPTR_H
#define CAIRN_PPTR_H

#include "base.h"

#pragma GCC visibility push(hidden)

/* ---- pptr.c ---- */
void cairn__install_segv_handler(void);
void cairn__ra_caches_clear(void);    /* a pool is closing: empty every cache */

#pragma GCC visibility pop

#endif
