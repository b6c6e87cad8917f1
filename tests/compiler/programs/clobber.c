/* cairn_tx_clobber in a program built by cairn-cc: a row rewritten whole
 * inside a transaction (NVL-C's clobber clause, seed 004 section 3) takes no
 * undo record for the stores the compiler logs into it, and is durable at
 * commit like logged data.
 *
 *   clobber run POOL clobber|plain    one transaction rewriting a 64 KiB row;
 *                                     prints the undo records it took
 *   clobber check POOL                reopen; prints the row's checksum */
#include <cairn.h>
#include <stdio.h>
#include <string.h>

#define ROW 8192   /* doubles: 64 KiB */
struct root { double row[ROW]; long gen; };

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    cairn_pool *pool = !strcmp(argv[1], "run") ? cairn_pool_create(argv[2], "clob", 16 << 20)
                                               : cairn_pool_open(argv[2], "clob");
    if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    struct root *r = CAIRN_ROOT(pool, struct root);
    if (!strcmp(argv[1], "run")) {
        int clob = argc > 3 && !strcmp(argv[3], "clobber");
        struct cairn_stats before, after;
        cairn_stats_get(&before);
        CAIRN_TX(pool) {
            if (clob) cairn_tx_clobber(r->row, sizeof r->row);
            for (int i = 0; i < ROW; i++)
                r->row[i] = i * 0.5 + 1;      /* every store logged by cairn-cc */
            r->gen++;
        }
        cairn_stats_get(&after);
        printf("records %llu bytes %llu\n",
               (unsigned long long)(after.log_entries - before.log_entries),
               (unsigned long long)(after.log_bytes - before.log_bytes));
    } else {
        double s = 0;
        for (int i = 0; i < ROW; i++) s += r->row[i];
        printf("gen %ld sum %.1f\n", r->gen, s);
    }
    return cairn_pool_close(pool) ? 1 : 0;
}
