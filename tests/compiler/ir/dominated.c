// cairn-elim-dominated-logs: a store whose range a dominating store logged
// needs no log of its own, when no call that may end the transaction lies
// on any path between them (a call to an unknown function may commit).
// RUN: -O2 | O2
// RUN: -O2 -fno-cairn-elim-dominated-logs | NOELIM
struct acct { long balance; long count; };

// O2-LABEL: define {{.*}}@deposit(
// O2: call void @cairn__log_store(ptr %0, i64 16,
// O2-NOT: call void @cairn__log_store
// O2: ret void
// NOELIM-LABEL: define {{.*}}@deposit(
// NOELIM: call void @cairn__log_store(ptr %0, i64 16,
// NOELIM: call void @cairn__log_store(ptr %0, i64 8,
void deposit(struct acct *a, long v, int fee)
{
    a->balance += v;
    a->count++;
    if (fee)
        a->balance -= 1;   /* same bytes, dominated by the first store */
}

void audit(struct acct *a);

// The call is on a path between the first store and the last (it may end
// the transaction): the last store keeps its log. The store before the call
// covers the one right after the first: eliminated.
// O2-LABEL: define {{.*}}@withdraw(
// O2: call void @cairn__log_store(ptr %0, i64 16,
// O2-NOT: call void @cairn__log_store
// O2: call void @audit(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: ret void
// NOELIM-LABEL: define {{.*}}@withdraw(
// NOELIM: call void @cairn__log_store(ptr %0, i64 16,
// NOELIM: call void @cairn__log_store(ptr %0, i64 8,
// NOELIM: call void @audit(
// NOELIM: call void @cairn__log_store(ptr %0, i64 8,
void withdraw(struct acct *a, long v, int slow)
{
    a->balance -= v;
    a->count++;
    if (v > 100)
        a->balance -= 2;   /* no call since the first store: no log */
    if (slow)
        audit(a);
    a->balance -= 1;       /* a call on one path before it: logged */
}

// cairn-known-callees: a call that cannot run cairn's runtime (so cannot
// end the transaction) is no barrier. `note` writes a global, so it is not
// argmemonly, but it calls nothing; `relay` calls only `note` (the fixed
// point); `spin` is recursive and calls nothing else. `tell` calls an
// unknown function, and a weak definition may be replaced at link time:
// both stay barriers.
// RUN: -O2 -fno-cairn-known-callees | NOKNOWN
static long audits;
static __attribute__((noinline)) void note(void) { audits++; }
static __attribute__((noinline)) void relay(void) { note(); note(); }
static __attribute__((noinline)) long spin(long n) { audits += n; return n ? spin(n - 1) : 0; }
static __attribute__((noinline)) void tell(struct acct *a) { audit(a); }
__attribute__((weak, noinline)) void hook(void) { audits++; }

// O2-LABEL: define {{.*}}@known(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2-NOT: call void @cairn__log_store
// O2: ret void
// NOKNOWN-LABEL: define {{.*}}@known(
// NOKNOWN: call void @cairn__log_store(ptr %0, i64 8,
// NOKNOWN: call {{.*}}@relay(
// NOKNOWN: call void @cairn__log_store(ptr %0, i64 8,
// NOKNOWN: call {{.*}}@spin(
// NOKNOWN: call void @cairn__log_store(ptr %0, i64 8,
void known(struct acct *a, long v)
{
    a->balance += v;
    relay();
    a->balance -= 1;
    spin(v & 3);
    a->balance -= 2;
}

// O2-LABEL: define {{.*}}@unknown(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: call {{.*}}@tell(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: call {{.*}}@hook(
// O2: call void @cairn__log_store(ptr %0, i64 8,
void unknown(struct acct *a, long v)
{
    a->balance += v;
    tell(a);
    a->balance -= 1;
    hook();
    a->balance -= 2;
}
