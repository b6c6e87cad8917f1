// Exceptions and transactions: an exception that leaves a CAIRN_TX block or
// a cairn::transaction scope aborts the transaction (nothing of it stays,
// in memory or after a reopen); a caught exception inside the block does
// not; nested levels abort as a whole (flat nesting).
#include <cairn.h>

#include <cstdio>
#include <map>
#include <stdexcept>

struct Thrower {
  long v;
  explicit Thrower(long x) : v(x) {
    if (x == 13)
      throw std::runtime_error("unlucky");
  }
};

using Map = std::map<long, Thrower, std::less<long>, cairn::allocator<std::pair<const long, Thrower>>>;

struct Root {
  long a, b, c;
  Map *map;
};

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  cairn_pool *pool = argv[1][0] == 'c' ? cairn_pool_create(argv[2], "txx", 16 << 20)
                                       : cairn_pool_open(argv[2], "txx");
  if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
  Root *r = CAIRN_ROOT(pool, Root);
  if (argv[1][0] == 'c') {
    CAIRN_TX(pool) {
      r->a = 1;
      r->map = cairn::make<Map>(pool, cairn::allocator<char>(pool));
      r->map->emplace(1, 1);
    }
    try {                                       // thrown out of the block: aborted
      CAIRN_TX(pool) {
        r->a = 2;
        r->map->emplace(2, 2);
        throw std::runtime_error("out");
      }
    } catch (const std::exception &) {}
    printf("after throw out of CAIRN_TX: a=%ld map=%zu active=%d\n", r->a, r->map->size(),
           cairn_tx_active());
    CAIRN_TX(pool) {                            // caught inside: committed
      r->b = 5;
      try { r->map->emplace(13, 13); } catch (const std::exception &) {}
      r->map->emplace(3, 3);
    }
    printf("caught inside: b=%ld map=%zu\n", r->b, r->map->size());
    try {                                       // nested: the whole transaction aborts
      CAIRN_TX(pool) {
        r->c = 7;
        CAIRN_TX(pool) {
          r->c = 8;
          throw std::logic_error("inner");
        }
      }
    } catch (const std::exception &) {}
    printf("nested throw: c=%ld active=%d\n", r->c, cairn_tx_active());
    try {                                       // the scope object
      cairn::transaction tx(pool);
      r->b = 6;
      r->map->emplace(4, 4);
      tx.commit();
      cairn::transaction tx2(pool);
      r->b = 99;
      throw 42;
    } catch (int) {}
    printf("cairn::transaction: b=%ld map=%zu active=%d\n", r->b, r->map->size(),
           cairn_tx_active());
  } else {
    long sum = 0;
    for (auto &p : *r->map) sum += p.first * 10 + p.second.v;
    printf("reopened: a=%ld b=%ld c=%ld map=%zu sum=%ld\n", r->a, r->b, r->c,
           r->map->size(), sum);
  }
  return cairn_pool_close(pool) == 0 ? 0 : 1;
}
