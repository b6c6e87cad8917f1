/*
 * stepcount.c -- cairn-stepcount: count the persistence instructions a
 * program really executes, by single-stepping it with ptrace.
 *
 *   cairn-stepcount -o OUT.jsonl [-a ADDRS] -- PROGRAM ARGS...
 *
 * The program runs natively (real CPUID, so the library under test picks
 * the same flush instruction it picks when nobody watches) until it raises
 * SIGUSR1; from there to SIGUSR2 every instruction is single-stepped and
 * decoded, and one JSON line per such region is written to OUT:
 *
 *   {"region":0,"instructions":N,"sfence":N,"mfence":N,"clwb":N,
 *    "clflushopt":N,"clflush":N,"nt_stores":N,"nt_bytes":N,"movdir64b":N}
 *
 * With -a, every flush and non-temporal store executed in a region is also
 * written to ADDRS as "REGION KIND ADDRESS" (the address the instruction
 * used, from its ModRM operand and the registers), so that what the CPU
 * flushed can be compared with what a trace says was flushed
 * (tests/crashcheck/test_reports_vs_cpu.py).
 *
 * Why this way: PMDK flushes with inline clwb/clflushopt and sfence inside
 * libpmem, so LD_PRELOAD sees nothing, PMDK keeps no flush statistics, and
 * valgrind emulates its own CPUID (PMDK would choose other instructions
 * under it). Single-stepping costs a few microseconds per instruction, so
 * regions should be a few hundred operations long.
 *
 * x86-64 Linux only. The decoder knows the encodings that can write back or
 * order stores: 0F AE /7 (clflush; 66: clflushopt), 66 0F AE /6 (clwb),
 * 0F AE F8..FF (sfence), 0F AE F0..F7 (mfence), non-temporal stores
 * (movnti 0F C3, movntq/movntdq 0F E7, movntps/pd 0F 2B, and their VEX and
 * EVEX forms) and movdir64b (66 0F 38 F8).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

enum klass { K_OTHER, K_SFENCE, K_MFENCE, K_CLWB, K_CLFLUSHOPT, K_CLFLUSH,
             K_NT, K_MOVDIR64B, K_COUNT };
static const char *klass_name[K_COUNT] = {
    "other", "sfence", "mfence", "clwb", "clflushopt", "clflush", "nt_stores", "movdir64b"};

struct decoded {
    uint8_t klass, bytes;
    /* the memory operand: ModRM (and SIB) fields, REX.B/X, displacement,
     * instruction length (for RIP-relative addresses) */
    uint8_t mod, rm, base, index, scale, has_sib, rex_b, rex_x, len;
    int32_t disp;
};

/* ModRM operand at c[m] (c[m] is the ModRM byte): fills the operand fields
 * and the instruction length, given the bytes before the ModRM */
static void decode_operand(struct decoded *d, const uint8_t *c, int m)
{
    uint8_t modrm = c[m];
    d->mod = modrm >> 6;
    d->rm = modrm & 7;
    int k = m + 1;
    if (d->mod != 3 && d->rm == 4) {
        uint8_t sib = c[k++];
        d->has_sib = 1;
        d->scale = (uint8_t)(1u << (sib >> 6));
        d->index = (sib >> 3) & 7;
        d->base = sib & 7;
    }
    if (d->mod == 1) {
        d->disp = (int8_t)c[k];
        k += 1;
    } else if (d->mod == 2 || (d->mod == 0 && (d->rm == 5 || (d->has_sib && d->base == 5)))) {
        int32_t v;
        memcpy(&v, c + k, 4);
        d->disp = v;
        k += 4;
    }
    d->len = (uint8_t)k;
}

/* Decode the instruction at code[0..15]: what persistence work it does. */
static struct decoded decode(const uint8_t *c)
{
    struct decoded d = {0};
    int i = 0, has66 = 0, rexw = 0;
    for (;; i++) {                                   /* legacy prefixes */
        uint8_t b = c[i];
        if (b == 0x66) has66 = 1;
        else if (b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e || b == 0x36 ||
                 b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65 || b == 0x67) ;
        else break;
        if (i > 12)
            return d;
    }
    if ((c[i] & 0xf0) == 0x40) {                     /* REX */
        rexw = c[i] & 8;
        d.rex_b = c[i] & 1;
        d.rex_x = (c[i] >> 1) & 1;
        i++;
    }
    uint8_t b = c[i];
    if (b == 0x0f) {                                 /* legacy 0F map */
        uint8_t op = c[i + 1];
        if (op == 0x38) {
            if (c[i + 2] == 0xf8 && has66 && (c[i + 3] >> 6) != 3) {
                d.klass = K_MOVDIR64B;
                d.bytes = 64;
            }
            return d;
        }
        uint8_t modrm = c[i + 2], mod = modrm >> 6, reg = (modrm >> 3) & 7;
        if (op == 0xae) {
            if (mod == 3) {
                if (reg == 7) d.klass = K_SFENCE;
                else if (reg == 6) d.klass = K_MFENCE;
            } else if (reg == 7) {
                d.klass = has66 ? K_CLFLUSHOPT : K_CLFLUSH;
            } else if (reg == 6 && has66) {
                d.klass = K_CLWB;
            }
        } else if (op == 0xe7 && mod != 3) {
            d.klass = K_NT;
            d.bytes = (uint8_t)(has66 ? 16 : 8);
        } else if (op == 0x2b && mod != 3) {
            d.klass = K_NT;
            d.bytes = 16;
        } else if (op == 0xc3 && mod != 3 && !has66) {
            d.klass = K_NT;
            d.bytes = (uint8_t)(rexw ? 8 : 4);
        }
        if (d.klass != K_OTHER && mod != 3) decode_operand(&d, c, i + 2);
        return d;
    }
    int map, len, op, modrm;
    if (b == 0xc5) {                                 /* VEX, 2 bytes */
        map = 1; len = 16 << ((c[i + 1] >> 2) & 1); op = c[i + 2]; modrm = c[i + 3];
    } else if (b == 0xc4) {                          /* VEX, 3 bytes */
        map = c[i + 1] & 0x1f; len = 16 << ((c[i + 2] >> 2) & 1);
        op = c[i + 3]; modrm = c[i + 4];
    } else if (b == 0x62) {                          /* EVEX */
        map = c[i + 1] & 3; len = 16 << ((c[i + 3] >> 5) & 3);
        op = c[i + 4]; modrm = c[i + 5];
    } else {
        return d;
    }
    if (map == 1 && (op == 0xe7 || op == 0x2b) && (modrm >> 6) != 3) {
        d.klass = K_NT;                              /* its address is not decoded (-a) */
        d.bytes = (uint8_t)(len > 64 ? 64 : len);
    }
    return d;
}

/* Decoded instructions by address: code does not change under us. */
#define CACHE_BITS 20
static struct { uint64_t rip; struct decoded d; } cache[1u << CACHE_BITS];

static struct decoded classify(pid_t pid, uint64_t rip)
{
    uint64_t h = (rip * 0x9e3779b97f4a7c15ULL) >> (64 - CACHE_BITS);
    for (;; h = (h + 1) & ((1u << CACHE_BITS) - 1)) {
        if (cache[h].rip == rip)
            return cache[h].d;
        if (!cache[h].rip)
            break;
    }
    uint8_t code[24] = {0};
    for (int k = 0; k < 3; k++) {                    /* PEEKTEXT: any alignment */
        errno = 0;
        long w = ptrace(PTRACE_PEEKTEXT, pid, (void *)(rip + 8 * k), NULL);
        if (errno)
            break;
        memcpy(code + 8 * k, &w, 8);
    }
    struct decoded d = decode(code);
    cache[h].rip = rip;
    cache[h].d = d;
    return d;
}

static uint64_t reg(const struct user_regs_struct *r, unsigned n)
{
    const unsigned long long v[16] = { r->rax, r->rcx, r->rdx, r->rbx, r->rsp, r->rbp, r->rsi,
                                       r->rdi, r->r8, r->r9, r->r10, r->r11, r->r12, r->r13,
                                       r->r14, r->r15 };
    return v[n & 15];
}

/* The address a decoded flush or legacy non-temporal store used (0: unknown) */
static uint64_t operand_address(const struct decoded *d, const struct user_regs_struct *r)
{
    if (!d->len) return 0;
    if (d->mod == 0 && d->rm == 5 && !d->has_sib) return r->rip + d->len + (int64_t)d->disp;
    uint64_t a = (uint64_t)(int64_t)d->disp;
    if (d->has_sib) {
        if (!(d->mod == 0 && d->base == 5)) a += reg(r, d->base | (unsigned)(d->rex_b << 3));
        unsigned idx = d->index | (unsigned)(d->rex_x << 3);
        if (idx != 4) a += reg(r, idx) * d->scale;
    } else {
        a += reg(r, d->rm | (unsigned)(d->rex_b << 3));
    }
    return a;
}

int main(int argc, char **argv)
{
    const char *out_path = NULL, *addr_path = NULL;
    int a = 1;
    for (; a < argc; a++) {
        if (!strcmp(argv[a], "-o") && a + 1 < argc) out_path = argv[++a];
        else if (!strcmp(argv[a], "-a") && a + 1 < argc) addr_path = argv[++a];
        else if (!strcmp(argv[a], "--")) { a++; break; }
        else break;
    }
    if (a >= argc || !out_path) {
        fprintf(stderr, "usage: cairn-stepcount -o OUT.jsonl [-a ADDRS] -- PROGRAM ARGS...\n");
        return 2;
    }
    FILE *out = fopen(out_path, "w");
    if (!out) {
        perror(out_path);
        return 1;
    }
    FILE *addrs = addr_path ? fopen(addr_path, "w") : NULL;
    if (addr_path && !addrs) {
        perror(addr_path);
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execvp(argv[a], argv + a);
        perror(argv[a]);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
        fprintf(stderr, "cairn-stepcount: %s did not start under ptrace\n", argv[a]);
        return 1;
    }
    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);

    int stepping = 0, region = 0, sig = 0;
    uint64_t counts[K_COUNT] = {0}, nt_bytes = 0, insns = 0;
    struct decoded pending = {0};
    for (;;) {
        if (stepping) {
            struct user_regs_struct regs;
            ptrace(PTRACE_GETREGS, pid, NULL, &regs);
            pending = classify(pid, regs.rip);
            if (addrs && pending.klass != K_OTHER && pending.klass != K_SFENCE &&
                pending.klass != K_MFENCE)
                fprintf(addrs, "%d %s %#llx\n", region, klass_name[pending.klass],
                        (unsigned long long)operand_address(&pending, &regs));
            ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig);
        } else {
            ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
        }
        sig = 0;
        if (waitpid(pid, &status, 0) < 0)
            break;
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        int s = WSTOPSIG(status);
        if (stepping) {                              /* the pending one ran */
            insns++;
            counts[pending.klass]++;
            if (pending.klass == K_NT || pending.klass == K_MOVDIR64B)
                nt_bytes += pending.bytes;
        }
        if (s == SIGUSR1 && !stepping) {
            stepping = 1;
            insns = nt_bytes = 0;
            memset(counts, 0, sizeof counts);
        } else if (s == SIGUSR2 && stepping) {
            stepping = 0;
            fprintf(out, "{\"region\":%d,\"instructions\":%llu", region++,
                    (unsigned long long)insns);
            for (int k = 1; k < K_COUNT; k++)
                fprintf(out, ",\"%s\":%llu", klass_name[k], (unsigned long long)counts[k]);
            fprintf(out, ",\"nt_bytes\":%llu}\n", (unsigned long long)nt_bytes);
            fflush(out);
        } else if (s != SIGTRAP && s != SIGUSR1 && s != SIGUSR2) {
            sig = s;                                 /* not ours: deliver it */
        }
    }
    fclose(out);
    if (addrs) fclose(addrs);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    fprintf(stderr, "cairn-stepcount: %s died of signal %d\n", argv[a],
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 1;
}
