/* Recovery that is not idempotent: an app-level redo log whose replay
 * adds the logged amount to the balance instead of assigning the logged
 * result. A crash after the balance was updated but before the log was
 * retired, or during recovery itself, applies the deposit twice. Twin:
 * the log holds the new balance and replay assigns it.
 * The check runs the program's recovery as a crash would leave it: once
 * cut short before the log is retired (a crash during recovery), then
 * again in full. Deposits are 1, 2, 4: a correct balance is 2^k - 1. */
#include "corpus.h"

struct root {
    uint64_t balance; uint64_t pad0[7];
    uint64_t log_valid; uint64_t log_amount; uint64_t log_new; uint64_t pad1[5];
};

static void apply_log(struct root *r)
{
    if (TWIN) r->balance = r->log_new;
    else r->balance += r->log_amount;
    cairn_persist(&r->balance, 8);
}

static void retire_log(struct root *r)
{
    r->log_valid = 0;
    cairn_persist(&r->log_valid, 8);
}

static void corpus_run(cairn_pool *pool, struct root *r)
{
    (void)pool;
    for (uint64_t amount = 1; amount <= 4; amount <<= 1) {
        r->log_amount = amount;
        r->log_new = r->balance + amount;
        cairn_persist(&r->log_amount, 16);
        r->log_valid = 1;
        cairn_persist(&r->log_valid, 8);
        apply_log(r);
        retire_log(r);
    }
}

static int corpus_check(struct root *r)
{
    if (r->log_valid) {
        apply_log(r);          /* recovery, crashed before it retired the log */
        apply_log(r);          /* recovery again, in full */
        retire_log(r);
    }
    if (r->balance & (r->balance + 1)) {
        printf("balance %llu is no sum of the first deposits 1, 2, 4\n",
               (unsigned long long)r->balance);
        return 1;
    }
    return 0;
}

CORPUS_MAIN
