/*
 * icount.c -- instructions a program runs between two marks, for `cairn cc
 * bench --icount` (this machine's hypervisor exposes no performance counters,
 * and valgrind cannot reserve cairn's persistent region).
 *
 *   icount PROGRAM ARGS...
 *
 * Runs PROGRAM under ptrace; from its first SIGSTOP to its second it single-
 * steps and counts, then lets it run on (and counts the next pair the same
 * way). Prints "instructions N" on stderr for each pair. Single-stepping costs
 * tens of microseconds per instruction: keep the marked region small.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROGRAM ARGS...\n", argv[0]);
        return 2;
    }
    pid_t c = fork();
    if (c < 0) { perror("fork"); return 2; }
    if (c == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int st, stepping = 0;
    long n = 0;
    waitpid(c, &st, 0);                         /* stopped at exec */
    ptrace(PTRACE_CONT, c, 0, 0);
    for (;;) {
        if (waitpid(c, &st, 0) < 0) { perror("waitpid"); return 2; }
        if (WIFEXITED(st)) return WEXITSTATUS(st);
        if (WIFSIGNALED(st)) { fprintf(stderr, "icount: killed by signal %d\n", WTERMSIG(st)); return 2; }
        int sig = WSTOPSIG(st);
        if (sig == SIGSTOP) {                   /* a mark: begin or end counting */
            if (stepping) { fprintf(stderr, "instructions %ld\n", n); n = 0; }
            stepping = !stepping;
            ptrace(stepping ? PTRACE_SINGLESTEP : PTRACE_CONT, c, 0, 0);
        } else if (sig == SIGTRAP && stepping) {
            n++;
            ptrace(PTRACE_SINGLESTEP, c, 0, 0);
        } else {
            ptrace(stepping ? PTRACE_SINGLESTEP : PTRACE_CONT, c, 0, sig == SIGTRAP ? 0 : sig);
        }
    }
}
