// cairn-local-region: the PM region's bounds are read once at entry and
// again after a call that may run other code (the first pool open may set
// them); region tests in between reload nothing.
// RUN: -O2 | O2
// RUN: -O2 -fno-cairn-local-region | OFF
struct node { long a; long b; long c; struct node *next; };
void other(void);

// O2-LABEL: define {{.*}}@three(
// O2: load i64, ptr @cairn__region_lo
// O2: load i64, ptr @cairn__region_hi
// O2-NOT: @cairn__region_lo
// O2: call void @other()
// O2-NEXT: load i64, ptr @cairn__region_lo
// O2-NOT: @cairn__region_lo
// O2: ret void
// OFF-LABEL: define {{.*}}@three(
// OFF: load i64, ptr @cairn__region_lo
// OFF: load i64, ptr @cairn__region_lo
// OFF: call void @other()
// OFF: load i64, ptr @cairn__region_lo
void three(struct node *x, struct node *y, struct node *z)
{
    x->a = 1;
    y->b = 2;
    other();
    z->c = 3;
}
