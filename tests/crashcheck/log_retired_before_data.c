/* An app-level undo log retired before the update it guards is durable:
 * the old values are logged and persisted, both fields stored, the log's
 * valid word cleared and persisted, and only then the fields flushed. A
 * crash after the log is gone leaves the fields half written with nothing
 * to roll them back. Twin: the fields persisted before the log is retired.
 * The check runs the program's recovery (a valid log rolls both back). */
#include "corpus.h"

struct root {
    uint64_t a; uint64_t pad0[7];
    uint64_t b; uint64_t pad1[7];
    uint64_t log_valid; uint64_t log_a; uint64_t log_b; uint64_t pad2[5];
};

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        r->log_a = r->a;
        r->log_b = r->b;
        cairn_persist(&r->log_a, 16);
        r->log_valid = 1;
        cairn_persist(&r->log_valid, 8);
        r->a = i;
        r->b = i;
        if (TWIN) { cairn_flush(&r->a, 8); cairn_flush(&r->b, 8); cairn_dfence(); }
        r->log_valid = 0;
        cairn_persist(&r->log_valid, 8);
        if (!TWIN) { cairn_flush(&r->a, 8); cairn_flush(&r->b, 8); cairn_dfence(); }
    }
}

static int corpus_check(struct root *r)
{
    if (r->log_valid) {
        r->a = r->log_a;
        r->b = r->log_b;
        cairn_persist(r, sizeof *r);
        r->log_valid = 0;
        cairn_persist(&r->log_valid, 8);
    }
    return corpus_same("a", r->a, "b", r->b);
}

CORPUS_MAIN
