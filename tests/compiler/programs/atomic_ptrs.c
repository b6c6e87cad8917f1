/* Pointers stored into PM by the generic and C11 atomics (__atomic_store,
 * __atomic_exchange, __atomic_compare_exchange, __c11_atomic_*), which at
 * -O0 pass the pointer through a temporary as an integer: each slot must
 * hold the relative form and read back as the address stored.
 *   atomic_ptrs POOL        prints bad=0 */
#include <cairn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
struct node { struct node *next; _Atomic(struct node *) anext; long v; };
static int rel(const void *f) { uint64_t w; memcpy(&w, f, 8); return (int)(w >> 63); }
int main(int argc, char **argv) {
  if (argc < 2) return 2;
  remove(argv[1]);
  cairn_pool *p = cairn_pool_create(argv[1], "ap", 8 << 20);
  struct node *r = CAIRN_ROOT(p, struct node);
  struct node *q = NULL, *old = NULL, *e = NULL;
  int bad = 0;
  CAIRN_TX(p) { q = cairn_alloc(p, sizeof *q); __atomic_store(&r->next, &q, __ATOMIC_SEQ_CST); }
  bad += !rel(&r->next) || r->next != q;
  CAIRN_TX(p) { __atomic_exchange(&q->next, &q, &old, __ATOMIC_SEQ_CST); }
  bad += !rel(&q->next) || q->next != q;
  CAIRN_TX(p) { __atomic_compare_exchange(&r->next, &q, &r, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
  bad += !rel(&r->next) || r->next != r;
  CAIRN_TX(p) { __c11_atomic_store(&r->anext, q, __ATOMIC_SEQ_CST); }
  bad += !rel(&r->anext) || __c11_atomic_load(&r->anext, __ATOMIC_SEQ_CST) != q;
  CAIRN_TX(p) { old = __c11_atomic_exchange(&r->anext, r, __ATOMIC_SEQ_CST); }
  bad += !rel(&r->anext) || old != q;
  e = r;
  CAIRN_TX(p) { __c11_atomic_compare_exchange_strong(&r->anext, &e, q, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
  bad += !rel(&r->anext) || __c11_atomic_load(&r->anext, __ATOMIC_SEQ_CST) != q;
  printf("bad=%d\n", bad);
  cairn_pool_close(p);
  return bad != 0;
}
