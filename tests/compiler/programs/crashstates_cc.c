/*
 * crashstates_cc.c -- power loss at every fence of a plain-C program whose
 * undo logging and pointer conversions are all cairn-cc's.
 *
 * The workload is legacy C: plain stores, a loop over an array, struct
 * pointers, snprintf/strcpy/memcpy into objects in the pool, a list with
 * its tail freed. Nothing in it calls cairn_tx_add or cairn_ptr_store.
 * tests/unit/crashsim.h makes the crash states the fences leave open
 * (flushed and evicted lines, whole or torn to 8-byte words) and runs
 * this program's checker on each: after recovery the root must hold the
 * last committed state or the one a commit in progress makes, the full
 * check must find no error and no leak, and the heap must hold exactly the
 * root and the list's nodes.
 *
 *   crashstates_cc run POOL [STEPS]   create, run the steps under simulation
 *   crashstates_cc mutant POOL [STEPS]  the same, but the counter step stores
 *                                     through inline asm, which the pass cannot
 *                                     see: unlogged, so crash states must fail
 *   crashstates_cc check STATE COMMITTED INFLIGHT BASE_OBJECTS   (internal)
 *
 * Built with: cairn-cc --cairn-static -I runtime -I tests/unit (the seam is
 * an internal symbol of libcairn).
 */
#include <cairn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "crashsim.h"

struct node { struct node *next; long value; char name[24]; };
struct croot {
    long counter;
    long pad[7];
    long arr[64];
    struct node *head;
    long nlist;
};

static int steps = 15, mutant;
#define MAXLIST 3
enum { K_COUNTER, K_ARRAY, K_PUSH, K_SWAP, K_ABORT, NKINDS };
static int kind_of(int i) { return (i - 1) % NKINDS; }

/* ---- the model: what each committed step leaves ---- */
struct model { long counter, arr[64], nlist; long value[MAXLIST + 1]; char name[MAXLIST + 1][24]; };

static void model_step(struct model *m, int i)
{
    switch (kind_of(i)) {
    case K_COUNTER: m->counter = i; break;
    case K_ARRAY: for (int j = 0; j < 64; j++) m->arr[j] = (long)i * 1000 + j; break;
    case K_PUSH:
        memmove(m->value + 1, m->value, sizeof m->value - sizeof m->value[0]);
        memmove(m->name + 1, m->name, sizeof m->name - sizeof m->name[0]);
        m->value[0] = i;
        snprintf(m->name[0], sizeof m->name[0], "node %d", i);
        if (++m->nlist > MAXLIST) m->nlist--;
        break;
    case K_SWAP:
        if (m->nlist >= 2) {
            long v = m->value[0]; m->value[0] = m->value[1]; m->value[1] = v;
            char t[24];
            memcpy(t, m->name[0], 24); memcpy(m->name[0], m->name[1], 24); memcpy(m->name[1], t, 24);
        }
        break;
    default: break;                    /* aborted */
    }
}

/* ---- the workload: plain C ---- */
static void step(cairn_pool *p, struct croot *r, int i)
{
    switch (kind_of(i)) {
    case K_COUNTER:
        CAIRN_TX(p) {
            if (mutant) __asm__ volatile("movq %1, %0" : "=m"(r->counter) : "r"((long)i));
            else r->counter = i;
        }
        break;
    case K_ARRAY:
        CAIRN_TX(p) { for (int j = 0; j < 64; j++) r->arr[j] = (long)i * 1000 + j; }
        break;
    case K_PUSH:
        CAIRN_TX(p) {
            struct node *n = cairn_alloc(p, sizeof *n);
            n->value = i;
            snprintf(n->name, sizeof n->name, "node %d", i);
            n->next = r->head;
            r->head = n;
            if (++r->nlist > MAXLIST) {
                struct node *prev = n, *last = n->next;
                while (last->next) { prev = last; last = last->next; }
                prev->next = NULL;
                cairn_free(last);
                r->nlist--;
            }
        }
        break;
    case K_SWAP:
        CAIRN_TX(p) {
            struct node *a = r->head, *b = a ? a->next : NULL;
            if (b) {
                long v = a->value; a->value = b->value; b->value = v;
                char t[24];
                strcpy(t, a->name);
                memcpy(a->name, b->name, sizeof a->name);
                strcpy(b->name, t);
            }
        }
        break;
    case K_ABORT:
        CAIRN_TX(p) {
            r->counter = -1;
            for (int j = 0; j < 64; j++) r->arr[j] = -1;
            if (r->head) { r->head->value = -1; strcpy(r->head->name, "aborted"); }
            cairn_tx_abort();
        }
        break;
    }
}

/* ---- the checker ---- */
static int matches(const struct croot *r, const struct model *m)
{
    if (r->counter != m->counter || memcmp(r->arr, m->arr, sizeof m->arr) || r->nlist != m->nlist)
        return 0;
    const struct node *x = r->head;
    for (long k = 0; k < m->nlist; k++, x = x->next)
        if (!x || x->value != m->value[k] || strcmp(x->name, m->name[k])) return 0;
    return x == NULL;
}

static int check(const char *img, int committed, int inflight, unsigned long long base_objects)
{
    cairn_pool *p = cairn_pool_open(img, "crashstates_cc");
    if (!p) { fprintf(stderr, "open: %s\n", cairn_errormsg()); return 1; }
    struct cairn_recovery rec;
    cairn_pool_recovery(p, &rec);
    struct croot *r = CAIRN_ROOT(p, struct croot);
    if (!r) { fprintf(stderr, "root: %s\n", cairn_errormsg()); return 1; }
    struct model m;
    memset(&m, 0, sizeof m);
    for (int i = 1; i <= committed; i++) model_step(&m, i);
    int ok = matches(r, &m);
    if (!ok && inflight) {
        model_step(&m, inflight);
        ok = matches(r, &m);
    }
    long nlist = r->nlist;
    if (!ok) fprintf(stderr, "neither step %d nor the step in flight (%d): counter %ld nlist %ld\n",
                     committed, inflight, r->counter, nlist);
    cairn_pool_close(p);
    if (!ok) return 1;
    unsigned long long objects;
    if (crashsim_check_file(img, &objects)) return 1;
    if (objects != base_objects + (unsigned long long)nlist) {
        fprintf(stderr, "heap holds %llu objects, want %llu\n", objects,
                base_objects + (unsigned long long)nlist);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "check"))
        return check(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "run") && strcmp(argv[1], "mutant"))) {
        fprintf(stderr, "usage: crashstates_cc run|mutant POOL [STEPS]\n");
        return 2;
    }
    mutant = !strcmp(argv[1], "mutant");
    if (argc == 4) steps = atoi(argv[3]);
    const char *path = argv[2];
    char img[4200], objs[32];
    snprintf(img, sizeof img, "%s.state", path);
    remove(path);
    cairn_pool *p = cairn_pool_create(path, "crashstates_cc", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    if (!CAIRN_ROOT(p, struct croot)) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
    cairn_pool_close(p);
    unsigned long long objects;
    if (crashsim_check_file(path, &objects)) return 1;
    snprintf(objs, sizeof objs, "%llu", objects);

    p = cairn_pool_open(path, "crashstates_cc");
    struct croot *r = CAIRN_ROOT(p, struct croot);
    crashsim_begin(p, img, objs);
    for (int i = 1; i <= steps; i++) {
        crashsim_inflight = kind_of(i) == K_ABORT ? 0 : i;
        step(p, r, i);
        crashsim_committed = i;
        crashsim_inflight = 0;
    }
    crashsim_end();
    cairn_pool_close(p);
    remove(path);
    printf("%d steps, %ld fences, %ld crash states, at most %ld lines in play, %ld failed\n",
           steps, crashsim_fences, crashsim_states, crashsim_max_lines, crashsim_failures);
    return crashsim_failures ? 1 : 0;
}
