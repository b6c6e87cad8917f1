/*
 * base.h -- what every runtime file uses: the public header, thread-local
 * storage, errors (error.c) and the hash (checksum.c).
 *
 * Everything the runtime's private headers declare is private to libcairn:
 * hidden, so calls between the runtime's files are direct (no PLT) and can
 * be inlined. The ABI that cairn-cc's generated code and the tools use is
 * in cairn.h.
 */
#ifndef CAIRN_BASE_H
#define CAIRN_BASE_H

#include "cairn.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <emmintrin.h>

#pragma GCC visibility push(hidden)

/* Thread-local state on the hot paths uses the initial-exec TLS model: no
 * __tls_get_addr call per access in libcairn.so (it measured 10-23 % of a
 * transaction). The cost: libcairn.so cannot be dlopen'ed late into a
 * process that has run out of static TLS space, which programs linked
 * with -lcairn never do. */
#define CAIRN_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- errors ---- */
void cairn__err(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void cairn__violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cairn__describe_caller(void *ra, char *buf, size_t len);

/* ---- checksum.c ---- */
uint64_t cairn__hash(const void *data, size_t len, uint64_t seed);

#pragma GCC visibility pop

#endif
