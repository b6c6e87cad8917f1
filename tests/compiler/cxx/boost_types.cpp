// Boost.Container and Boost.Intrusive types, unchanged: under cairn-c++
// --persistent-heap their nodes and buffers are in the heap (a pool) and the
// output must be exactly what the clang++ build prints.
#include <boost/container/deque.hpp>
#include <boost/container/flat_map.hpp>
#include <boost/container/list.hpp>
#include <boost/container/map.hpp>
#include <boost/container/slist.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/container/stable_vector.hpp>
#include <boost/container/string.hpp>
#include <boost/intrusive/avl_set.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <boost/intrusive/sg_set.hpp>
#include <boost/intrusive/splay_set.hpp>
#include <boost/intrusive/treap_set.hpp>
#include <cstdio>
#include <vector>

namespace bc = boost::container;
namespace bi = boost::intrusive;

struct Item : bi::set_base_hook<>, bi::avl_set_base_hook<>, bi::bs_set_base_hook<>,
              bi::list_base_hook<> {
  long key;
  explicit Item(long k) : key(k) {}
  friend bool operator<(const Item &a, const Item &b) { return a.key < b.key; }
  friend bool priority_order(const Item &a, const Item &b) { return a.key % 7 < b.key % 7; }
};

int main() {
  unsigned long h = 1469598103934665603UL;
  auto mix = [&](long v) { h = (h ^ (unsigned long)v) * 1099511628211UL; };
  bc::flat_map<long, bc::string> fm;
  bc::map<long, long> m;
  bc::stable_vector<long> sv;
  bc::deque<long> dq;
  bc::small_vector<long, 4> small;
  bc::list<long> l;
  bc::slist<long> sl;
  for (long i = 0; i < 3000; i++) {
    long k = i * 7919 % 4001;
    fm[k % 500] = bc::string(k % 37 + 1, (char)('a' + k % 26));
    m[k] = i;
    sv.push_back(k);
    dq.push_front(k);
    if (i % 100 == 0) small.push_back(k);
    l.push_back(k);
    sl.push_front(k);
    if (i % 3 == 0) { m.erase(k / 2); sv.erase(sv.begin() + (long)(sv.size() / 2)); }
  }
  l.sort(); l.unique(); sl.reverse();
  for (auto &p : fm) { mix(p.first); mix((long)p.second.size()); }
  for (auto &p : m) { mix(p.first * 3 + p.second); }
  for (long x : sv) mix(x);
  for (long x : dq) mix(x);
  for (long x : small) mix(x);
  for (long x : l) mix(x);
  for (long x : sl) mix(x);
  std::vector<Item *> items;
  for (long i = 0; i < 2000; i++) items.push_back(new Item(i * 104729 % 3001));
  bi::set<Item, bi::base_hook<bi::set_base_hook<>>> rb;
  bi::avl_set<Item, bi::base_hook<bi::avl_set_base_hook<>>> avl;
  bi::splay_set<Item, bi::base_hook<bi::bs_set_base_hook<>>> splay;
  bi::list<Item> il;
  for (Item *it : items) { rb.insert(*it); avl.insert(*it); il.push_back(*it); }
  for (Item *it : items) if (it->key % 2) splay.insert(*it);
  for (long i = 0; i < 500; i++) { auto f = splay.find(Item(i * 13 % 3001)); if (f != splay.end()) mix(f->key); }
  for (Item &it : rb) mix(it.key);
  for (auto it = avl.rbegin(); it != avl.rend(); ++it) mix(it->key);
  for (Item &it : il) mix(-it.key);
  rb.clear(); avl.clear(); splay.clear(); il.clear();
  for (Item *it : items) delete it;
  printf("flat_map %zu map %zu stable_vector %zu deque %zu small %zu list %zu slist %zu hash %lx\n",
         fm.size(), m.size(), sv.size(), dq.size(), small.size(), l.size(), sl.size(), h);
  return 0;
}
