/* miss_regs.c -- the translation cache's miss (compiler/rt) is called by
 * cairn-cc's code with LLVM's preserve_most convention on x86-64: it must
 * give back every general register but r11 and rax (the result). Calls it
 * directly with a known value in each of them and checks them after, and
 * that it translated.  miss_regs POOL */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>

struct node { long v; };
struct root { struct node *p; };

void *cairn_cc__ra2va_miss(uint64_t rel);

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    remove(argv[1]);
    cairn_pool *p = cairn_pool_create(argv[1], "miss_regs", 8 << 20);
    if (!p) { fprintf(stderr, "%s\n", cairn_errormsg()); return 2; }
    struct root *r = CAIRN_ROOT(p, struct root);
    struct node *n = NULL;
    CAIRN_TX(p) {
        n = cairn_alloc(p, sizeof *n);
        n->v = 42;
        r->p = n;
    }
    uint64_t rel = *(volatile uint64_t *)&r->p;   /* the stored word, as is */
    const uint64_t rel0 = rel;
    int bad = 0;
#if defined(__x86_64__)
    uint64_t got[10];
    void *va;
    /* every register the C convention leaves to the callee gets a known
     * value; the call runs below the red zone on a 16-byte aligned stack */
    __asm__ volatile(
        "movq %%rsp, %%r12\n\t"
        "subq $128, %%rsp\n\t"
        "andq $-16, %%rsp\n\t"
        "movq $0x1c1c, %%rcx\n\t"
        "movq $0x2d2d, %%rdx\n\t"
        "movq $0x3e3e, %%rsi\n\t"
        "movq $0x4848, %%r8\n\t"
        "movq $0x5959, %%r9\n\t"
        "movq $0x6a6a, %%r10\n\t"
        "movq $0x7b7b, %%r13\n\t"
        "movq $0x8c8c, %%r14\n\t"
        "movq $0x9d9d, %%r15\n\t"
        "call cairn_cc__ra2va_miss\n\t"
        "movq %%r12, %%rsp\n\t"
        "movq %%rcx, 0(%[g])\n\t"
        "movq %%rdx, 8(%[g])\n\t"
        "movq %%rsi, 16(%[g])\n\t"
        "movq %%r8, 24(%[g])\n\t"
        "movq %%r9, 32(%[g])\n\t"
        "movq %%r10, 40(%[g])\n\t"
        "movq %%r13, 48(%[g])\n\t"
        "movq %%r14, 56(%[g])\n\t"
        "movq %%r15, 64(%[g])\n\t"
        "movq %%rdi, 72(%[g])\n\t"
        : "=a"(va), "+D"(rel)
        : [g] "b"(got)
        : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
          "r15", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
          "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
          "xmm14", "xmm15");
    static const uint64_t want[9] = {0x1c1c, 0x2d2d, 0x3e3e, 0x4848, 0x5959,
                                     0x6a6a, 0x7b7b, 0x8c8c, 0x9d9d};
    static const char *const names[10] = {"rcx", "rdx", "rsi", "r8", "r9", "r10",
                                           "r13", "r14", "r15", "rdi"};
    for (int i = 0; i < 10; i++) {     /* rbx held got: the stores prove it kept */
        uint64_t w = i < 9 ? want[i] : rel0;
        if (got[i] != w) {
            printf("%s changed: %#llx, was %#llx\n", names[i],
                   (unsigned long long)got[i], (unsigned long long)w);
            bad++;
        }
    }
#else
    void *va = cairn_cc__ra2va_miss(rel);
#endif
    if (va != (void *)n || ((struct node *)va)->v != 42) {
        printf("translated to %p, want %p\n", va, (void *)n);
        bad++;
    }
    cairn_pool_close(p);
    remove(argv[1]);
    printf("relative %s, registers kept: %s\n", (int64_t)rel0 < 0 ? "yes" : "no",
           bad ? "no" : "yes");
    return bad != 0;
}
