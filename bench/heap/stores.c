/* stores.c -- a store loop into the malloc heap, outside any transaction:
 * under cairn-cc --persistent-heap every store into the heap calls
 * cairn__log_store (bench/heap/run.py). Prints a checksum so that every
 * build can be compared. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000;
    long *a = calloc(4096, sizeof *a);
    if (!a) return 1;
    for (long i = 0; i < n; i++) a[(i * 7) & 4095] += i;
    long s = 0;
    for (int i = 0; i < 4096; i++) s += a[i];
    printf("%ld\n", s);
    free(a);
    return 0;
}
