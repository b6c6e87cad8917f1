// cairn-miss-preserves-regs: the translation cache's miss, the cold side of
// every translated load, is called with preserve_most on x86-64 (compiler/rt
// saves the registers the C convention would let it clobber), so the hot
// side keeps its values in registers across it.
// RUN: -O2 | O2
// RUN: -O2 -fno-cairn-miss-preserves-regs | OFF
struct node { struct node *next; long key; };

// O2-LABEL: define {{.*}}@walk(
// O2: call preserve_mostcc ptr @cairn_cc__ra2va_miss(
// O2: declare preserve_mostcc ptr @cairn_cc__ra2va_miss(
// OFF-LABEL: define {{.*}}@walk(
// OFF: call ptr @cairn_cc__ra2va_miss(
// OFF: declare ptr @cairn_cc__ra2va_miss(
long walk(struct node *n, long key)
{
    while (n && n->key != key)
        n = n->next;
    return n ? n->key : -1;
}
