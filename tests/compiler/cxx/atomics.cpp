// std::atomic on PM, a static initializer and thread_local in the heap.
// The two threads' transactions modify the same atomics, so each holds
// tx_lock: isolation is the program's (docs/runtime.md, "Threads"). The
// undo log copies a word's old value with plain loads, and rolling back one
// thread's transaction would put back a value the other may have changed
// and committed since; ThreadSanitizer reports the copy racing with the
// other thread's atomic write when the lock is left out.
#include <cairn.h>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
struct Node { long v; Node *next; };
struct Root { std::atomic<long> count; std::atomic<Node *> head; };
static std::map<std::string, int> table = {{"one", 1}, {"two", 2}, {"three", 3}};
thread_local std::vector<int> scratch;
static std::mutex tx_lock;
int main(int argc, char **argv) {
  cairn_pool *pool = argv[1][0] == 'c' ? cairn_pool_create(argv[2], "atom", 16 << 20) : cairn_pool_open(argv[2], "atom");
  if (!pool) { fprintf(stderr, "%s\n", cairn_errormsg()); return 1; }
  Root *r = CAIRN_ROOT(pool, Root);
  if (argv[1][0] == 'c') {
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; t++)
      ts.emplace_back([&] {
        for (int i = 0; i < 500; i++) {
          scratch.push_back(i);
          std::lock_guard<std::mutex> hold(tx_lock);
          CAIRN_TX(pool) {
            Node *n = (Node *)cairn_alloc(pool, sizeof(Node));
            n->v = i;
            Node *old = r->head.load();
            do { n->next = old; } while (!r->head.compare_exchange_weak(old, n));
            r->count.fetch_add(1);
          }
        }
      });
    for (auto &t : ts) t.join();
    try { CAIRN_TX(pool) { r->count.fetch_add(1000); r->head.store(nullptr); throw 1; } } catch (int) {}
  }
  long n = 0, sum = 0;
  for (Node *p = r->head.load(); p; p = p->next) { n++; sum += p->v; }
  printf("count %ld nodes %ld sum %ld table %zu scratch %zu\n", r->count.load(), n, sum, table.size(), scratch.size());
  return cairn_pool_close(pool);
}
