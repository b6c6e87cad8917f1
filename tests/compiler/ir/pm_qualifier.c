// A `cairn_pm` pointer is PM by declaration: the log needs no region test,
// and runtime calls get it cast to a plain pointer.
// RUN: -O2 | O2
// RUN: -O2 -fcairn-fold-translation | FOLD
struct node { struct node cairn_pm *next; long v; };

// O2-LABEL: define {{.*}}@set(
// O2-NOT: cairn__region_lo
// O2: [[P:%.*]] = addrspacecast ptr addrspace(7) %{{.*}} to ptr
// O2: call void @cairn__log_store(ptr [[P]], i64 8,
// O2: store i64
void set(struct node cairn_pm *n, long v) { n->v = v; }

// O2-LABEL: define {{.*}}@link(
// O2-NOT: icmp ult
// O2: load atomic i64, ptr @cairn_cc__ra_cache monotonic
// O2: call i64 @cairn__va2ra_checked(
// O2: store i64
void link(struct node cairn_pm *n, struct node cairn_pm *m) { n->next = m; }

// O2-LABEL: define {{.*}}@next(
// O2: [[P:%.*]] = load ptr addrspace(7)
// O2: call preserve_mostcc ptr @cairn_cc__ra2va_miss(
// O2: phi ptr addrspace(7) [ [[P]], %{{[0-9]+}} ]
// FOLD-LABEL: define {{.*}}@next(
// FOLD: [[P:%.*]] = load ptr addrspace(7)
// FOLD: call preserve_mostcc ptr @cairn_cc__ra2va_miss(
// FOLD: getelementptr i8, ptr addrspace(7) [[P]], i64
struct node cairn_pm *next(struct node cairn_pm *n) { return n->next; }
