/* jmp_sig.c -- longjmp out of a transaction and signal handlers that store
 * to PM, in a program built by cairn-cc (docs/compiler.md, "setjmp/longjmp,
 * signals"). Usage: jmp_sig POOL MODE
 *   jmp-abort   longjmp out of a CAIRN_TX block; the transaction stays open;
 *               cairn_tx_abort() after setjmp rolls it back; the next one commits
 *   jmp-nested  longjmp out of a nested block into the outer block: the
 *               outer block's end stops the process
 *   jmp-stale   longjmp out of a block in a callee, then a new block in the
 *               caller: stops the process
 *   jmp-begin   longjmp out of a cairn_tx_begin in a callee, then another
 *               callee at the same depth begins one: stops (the setjmp is
 *               watched), naming the setjmp's line
 *   bjmp-begin  jmp-begin with __builtin_setjmp / __builtin_longjmp
 *   jmp-deeper  the same with CAIRN_TX blocks: the frame test cannot see it
 *               (the new block's frame is as deep), the setjmp watch does
 *   jmp-inside  setjmp and longjmp inside one transaction: nothing is left,
 *               the transaction commits
 *   jmp-exit    longjmp out, never aborted: reported at exit, rolled back
 *   sig-tx      a handler's store lands in the interrupted transaction:
 *               rolled back with it on abort, durable with it on commit
 *   sig-out     a handler's store outside any transaction is reported
 *   check       print the values (after the modes that stop) */
#include <cairn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct root { long x, y, h; };

static cairn_pool *pool;
static struct root *R;
static jmp_buf jb;

static void show(const char *when)
{
    printf("%s: x=%ld y=%ld h=%ld open=%d\n", when, R->x, R->y, R->h, cairn_tx_active());
}

static void on_usr1(int sig)
{
    (void)sig;
    R->h = 42;                        /* a store to PM in a signal handler */
}

__attribute__((noinline)) static void update_and_jump(long v)
{
    CAIRN_TX(pool) {
        R->x = v;
        longjmp(jb, 1);
    }
}

__attribute__((noinline)) static void begin_and_jump(long v)
{
    cairn_tx_begin(pool);
    R->x = v;
    longjmp(jb, 1);
}

static void *bjb[5];                  /* __builtin_setjmp's buffer */

__attribute__((noinline)) static void begin_and_bjump(long v)
{
    cairn_tx_begin(pool);
    R->x = v;
    __builtin_longjmp(bjb, 1);
}

__attribute__((noinline)) static void begin_and_commit(long v)
{
    cairn_tx_begin(pool);
    R->y = v;
    cairn_tx_commit();
}

__attribute__((noinline)) static void block(long v)
{
    CAIRN_TX(pool) { R->y = v; }
}

/* block() from a frame surely deeper than update_and_jump's, whatever the
 * two functions' frame sizes: the frame test then cannot see the left block */
__attribute__((noinline)) static void deeper_block(long v)
{
    volatile char pad[1024];
    pad[0] = (char)v;
    block(v);
    (void)pad[0];
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    const char *mode = argv[2];
    pool = strcmp(mode, "check") ? cairn_pool_create(argv[1], "jmp_sig", 8 << 20)
                                 : cairn_pool_open(argv[1], "jmp_sig");
    if (!pool) { fprintf(stderr, "pool: %s\n", cairn_errormsg()); return 1; }
    R = CAIRN_ROOT(pool, struct root);
    signal(SIGUSR1, on_usr1);

    if (!strcmp(mode, "jmp-abort")) {
        if (!setjmp(jb))
            update_and_jump(1);
        show("after longjmp");        /* x=1, still open */
        cairn_tx_abort();
        show("after abort");          /* x=0, closed */
        CAIRN_TX(pool) { R->x = 2; }
        show("after commit");
    } else if (!strcmp(mode, "jmp-nested")) {
        CAIRN_TX(pool) {
            R->x = 1;
            if (!setjmp(jb)) {
                CAIRN_TX(pool) {
                    R->y = 1;
                    longjmp(jb, 1);
                }
            }
            show("back in the outer block");
        }                             /* ends at depth 2: stops */
        puts("not reached");
    } else if (!strcmp(mode, "jmp-stale")) {
        if (!setjmp(jb))
            update_and_jump(1);
        CAIRN_TX(pool) { R->y = 1; }  /* stops: the outer block is gone */
        puts("not reached");
    } else if (!strcmp(mode, "jmp-begin")) {
        if (!setjmp(jb))              /* JMP-BEGIN-SETJMP */
            begin_and_jump(1);
        begin_and_commit(1);          /* stops: it would nest into the left one */
        puts("not reached");
    } else if (!strcmp(mode, "bjmp-begin")) {
        if (!__builtin_setjmp(bjb))   /* BUILTIN-SETJMP-BEGIN */
            begin_and_bjump(1);
        begin_and_commit(1);          /* stops */
        puts("not reached");
    } else if (!strcmp(mode, "jmp-deeper")) {
        if (!setjmp(jb))
            update_and_jump(1);
        deeper_block(1);              /* stops */
        puts("not reached");
    } else if (!strcmp(mode, "jmp-inside")) {
        CAIRN_TX(pool) {
            R->x = 5;
            if (!setjmp(jb))
                longjmp(jb, 1);       /* lands at the same depth */
            R->y = 6;
        }
        show("after commit");
    } else if (!strcmp(mode, "jmp-exit")) {
        if (!setjmp(jb))
            update_and_jump(1);
        show("after longjmp");
    } else if (!strcmp(mode, "sig-tx")) {
        CAIRN_TX(pool) {
            R->x = 1;
            raise(SIGUSR1);           /* the handler runs here, inside the tx */
            show("in tx after handler");
            cairn_tx_abort();
        }
        show("after abort");          /* h rolled back with x */
        CAIRN_TX(pool) {
            R->x = 3;
            raise(SIGUSR1);
        }
        show("after commit");
    } else if (!strcmp(mode, "sig-out")) {
        raise(SIGUSR1);
        show("after handler");
    } else if (!strcmp(mode, "check")) {
        show("reopened");
    } else {
        return 2;
    }
    fflush(stdout);
    return cairn_pool_close(pool) == 0 ? 0 : 3;
}
