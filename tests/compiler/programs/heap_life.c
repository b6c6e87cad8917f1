/* heap_life.c -- how a persistent heap (cairn-cc --persistent-heap) ends.
 *   heap_life MODE   MODE = exit | abort | _exit | exec | fork | fork_race
 * Builds a list in the heap, then leaves by MODE. "fork": the child changes
 * the list and allocates, the parent must not see it (the child's heap is
 * its own copy, as with malloc). "fork_race": the parent changes the heap
 * right after fork returns, while the child reads it: the child must see
 * the heap as it was at the fork (a copy made in the child, after fork
 * returned, would see the parent's change; 96 MiB of heap before the
 * watched word make that copy slow enough to lose the race). Prints what a clang build prints, plus
 * on stderr whether the heap file is still visible by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct node { struct node *next; char *name; int v; };

static int sum(const struct node *h)
{
    int s = 0;
    for (; h; h = h->next) s += h->v + (int)strlen(h->name);
    return s;
}

static void heap_file_state(void)
{
    char path[256], line[512];
    snprintf(path, sizeof path, "cairn-heap-%d.pool", (int)getpid());
    FILE *m = fopen("/proc/self/maps", "r");
    int mapped = 0, deleted = 0;
    while (m && fgets(line, sizeof line, m))
        if (strstr(line, path)) {
            mapped = 1;
            deleted |= strstr(line, "(deleted)") != NULL;
        }
    if (m) fclose(m);
    fprintf(stderr, "heap mapped=%d deleted=%d\n", mapped, deleted);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    struct node *head = NULL;
    for (int i = 0; i < 50; i++) {
        struct node *n = malloc(sizeof *n);
        n->v = i;
        n->name = malloc(12);
        snprintf(n->name, 12, "node%d", i);
        n->next = head;
        head = n;
    }
    printf("sum %d\n", sum(head));
    fflush(stdout);
    heap_file_state();
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "_exit")) _exit(3);
    if (!strcmp(mode, "exec")) {
        execl("/bin/sh", "sh", "-c", "echo exec done", (char *)NULL);
        return 1;
    }
    if (!strcmp(mode, "fork_race")) {
        enum { NBLK = 96, BLK = 1 << 20 };
        char *blk[NBLK];
        for (int i = 0; i < NBLK; i++) memset(blk[i] = malloc(BLK), i + 1, BLK);
        long *word = (long *)(blk[NBLK - 1] + BLK - 64);   /* copied last */
        *word = 1;
        int go[2];
        if (pipe(go) != 0) return 1;
        pid_t pid = fork();
        if (pid == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) != 1) _exit(2);       /* after the parent's store */
            printf("child sees %ld\n", *word);
            fflush(stdout);
            _exit(0);
        }
        *word = 2;                          /* the parent goes on at once */
        if (write(go[1], "x", 1) != 1) return 1;
        int st = 0;
        waitpid(pid, &st, 0);
        printf("parent sees %ld, child exit %d\n", *word,
               WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        for (int i = 0; i < NBLK; i++) free(blk[i]);
    }
    if (!strcmp(mode, "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 1000; i++) {       /* the child's own allocations */
                struct node *n = malloc(sizeof *n);
                n->v = 1;
                n->name = strcpy(malloc(4), "kid");
                n->next = head;
                head = n;
            }
            head->next->v += 1000;
            free(head->name);
            head->name = strcpy(malloc(20), "child's own name");
            printf("child sum %d\n", sum(head));
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        struct node *n = malloc(sizeof *n);  /* the parent's heap goes on */
        n->v = 7;
        n->name = strcpy(malloc(8), "parent");
        n->next = head;
        head = n;
        printf("parent sum %d\n", sum(head));
    }
    while (head) {
        struct node *n = head->next;
        free(head->name);
        free(head);
        head = n;
    }
    return 0;
}
