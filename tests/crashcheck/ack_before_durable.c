/* An app-level undo log whose commit orders its steps with ofence but
 * returns without a dfence: the caller then persists its acknowledgment
 * of the commit, and one fence makes both durable with no order between
 * them, so a crash may keep the acknowledgment and lose the commit (the
 * log still valid: recovery rolls the value back under it). Twin: the
 * commit ends with a dfence. The check runs the program's recovery (roll
 * back a valid log) and requires the acknowledged value never to be ahead
 * of the recovered one. */
#include "corpus.h"

struct root {
    uint64_t value; uint64_t pad0[7];
    uint64_t log_valid; uint64_t log_old; uint64_t pad1[6];
    uint64_t acked; uint64_t pad2[7];
};

static void commit(struct root *r, uint64_t v)
{
    r->log_old = r->value;
    r->log_valid = 1;
    cairn_flush(&r->log_valid, 16);
    cairn_ofence();                  /* the undo record before the store */
    r->value = v;
    cairn_flush(&r->value, 8);
    cairn_ofence();                  /* the new value before the log is retired */
    r->log_valid = 0;
    cairn_flush(&r->log_valid, 8);
    if (TWIN) cairn_dfence();        /* committed: durable before returning */
}

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t i = 1; i <= 3; i++) {
        commit(r, i);
        r->acked = i;                /* tell the client */
        cairn_persist(&r->acked, 8);
    }
}

static int corpus_check(struct root *r)
{
    if (r->log_valid) {              /* recovery: roll the unfinished update back */
        r->value = r->log_old;
        cairn_persist(&r->value, 8);
        r->log_valid = 0;
        cairn_persist(&r->log_valid, 8);
    }
    if (r->acked > r->value) {
        printf("acknowledged %llu but recovered value %llu\n", (unsigned long long)r->acked,
               (unsigned long long)r->value);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
