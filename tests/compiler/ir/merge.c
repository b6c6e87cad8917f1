// cairn-merge-logs: stores to one object in a block with no call between
// them share one log and one region test.
// RUN: -O2 | O2
// RUN: -O2 -fno-cairn-merge-logs | NOMERGE
#include <stdio.h>

struct point { long x, y, z; };

// O2-LABEL: define {{.*}}@set3(
// O2: call void @cairn__log_store(ptr %0, i64 24,
// O2-NOT: call void @cairn__log_store
// O2: ret void
// NOMERGE-LABEL: define {{.*}}@set3(
// NOMERGE: call void @cairn__log_store(ptr {{.*}}, i64 8,
// NOMERGE: call void @cairn__log_store(ptr {{.*}}, i64 8,
// NOMERGE: call void @cairn__log_store(ptr {{.*}}, i64 8,
void set3(struct point *p, long x, long y, long z) { p->x = x; p->y = y; p->z = z; }

// A call may end the transaction: the log is repeated after it.
// O2-LABEL: define {{.*}}@split(
// O2: call void @cairn__log_store(ptr %0, i64 8,
// O2: call {{.*}}@puts
// O2: call void @cairn__log_store(ptr {{.*}}, i64 8,
void split(struct point *p) { p->x = 1; puts("x"); p->y = 2; }
