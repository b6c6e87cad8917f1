// cairn-elim-dominated-logs: in a function without calls, a store whose
// range a dominating store logged needs no log of its own.
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
