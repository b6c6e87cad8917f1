/* readtrack_probe.c -- known accesses to a file for libcairn-readtrack.so
 * (test_dead_lines.py): on page 1 of FILE (every byte 0x55), line 64 is
 * written with a new value and read back, line 65 written with the value
 * it holds, line 66 incremented in place (a read-modify-write), line 67
 * read. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int fd = argc == 2 ? open(argv[1], O_RDWR) : -1;
    if (fd < 0) {
        fprintf(stderr, "usage: readtrack_probe FILE (8 KiB, every byte 0x55)\n");
        return 2;
    }
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return 2;
    volatile uint64_t *line = (volatile uint64_t *)(m + 4096);
    line[0] = 0x1111111111111111ull;                 /* line 64: a new value */
    uint64_t back = line[0];                         /* its own write, read back */
    line[8] = 0x5555555555555555ull;                 /* line 65: the value it held */
    __asm__ volatile("addq $1, %0" : "+m"(line[16])); /* line 66: read-modify-write */
    uint64_t seen = line[24];                        /* line 67: a read */
    return back == 0x1111111111111111ull && seen == 0x5555555555555555ull ? 0 : 1;
}
