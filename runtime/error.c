/*
 * error.c -- how the runtime says what went wrong.
 *
 * Ordinary failures set errno and a one-line message (cairn_errormsg()) and
 * return NULL or -1. A violated safety rule (a pointer that would dangle
 * after a restart, a relative pointer to a pool that is not open) prints
 * what, where and why and stops the process: continuing would write a lie
 * into persistent memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static CAIRN_TLS char errbuf[1024];

void cairn__err(int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    errno = errnum;
    if (getenv("CAIRN_VERBOSE"))
        fprintf(stderr, "cairn: %s\n", errbuf);
}

const char *cairn_errormsg(void) { return errbuf[0] ? errbuf : "no error"; }

_Noreturn void cairn__violation(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cairn: safety violation: %s\n", msg);
    fflush(stderr);
    abort();
}

void cairn__describe_caller(void *ra, char *buf, size_t len)
{
    Dl_info info;
    if (ra && dladdr(ra, &info) && info.dli_sname)
        snprintf(buf, len, "%s+%#lx (%s)", info.dli_sname,
                 (unsigned long)((char *)ra - (char *)info.dli_saddr),
                 info.dli_fname ? info.dli_fname : "?");
    else if (ra && dladdr(ra, &info) && info.dli_fname)
        snprintf(buf, len, "%p in %s (build with -g or cairn-cc for file:line)", ra, info.dli_fname);
    else
        snprintf(buf, len, "%p", ra);
}
