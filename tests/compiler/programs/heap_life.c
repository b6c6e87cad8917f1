/* heap_life.c -- how a persistent heap (cairn-cc --persistent-heap) ends.
 *   heap_life MODE   MODE = exit | abort | _exit | exec | fork
 * Builds a list in the heap, then leaves by MODE. "fork": the child changes
 * the list and allocates, the parent must not see it (the child's heap is
 * its own copy, as with malloc). Prints what a clang build prints, plus
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
