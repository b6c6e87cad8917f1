// Every standard container, std::string, std::function and smart pointers;
// under cairn-c++ --persistent-heap every node lives in the heap (a pool)
// and the output must be exactly what the clang++ build prints.
#include <map>
#include <set>
#include <string>
#include <vector>
#include <list>
#include <forward_list>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <functional>
#include <memory>
#include <queue>
#include <stack>
#include <sstream>
#include <algorithm>
#include <cstdio>
int main() {
  std::map<int, std::string> m; std::multimap<int,int> mm; std::set<std::string> st; std::multiset<int> ms;
  std::unordered_map<std::string,int> u; std::unordered_set<int> us; std::unordered_multimap<int,int> umm;
  std::list<int> l; std::forward_list<int> fl; std::vector<std::string> v; std::deque<int> dq;
  std::priority_queue<int> pq; std::stack<int> sk;
  for (int i = 0; i < 2000; i++) {
    std::string s = std::to_string(i * 7919 % 2003);
    m[i] = s; mm.insert({i % 13, i}); st.insert(s); ms.insert(i % 17);
    u[s] = i; us.insert(i); umm.insert({i % 7, i});
    l.push_back(i); fl.push_front(i); v.push_back(s + "x"); dq.push_front(i); pq.push(i * 31 % 97); sk.push(i);
  }
  for (int i = 0; i < 2000; i += 3) { m.erase(i); st.erase(std::to_string(i)); u.erase(std::to_string(i)); us.erase(i); }
  l.sort([](int a, int b){ return a % 10 < b % 10; }); l.reverse(); l.unique(); fl.sort(); fl.reverse();
  std::list<int> l2(l.begin(), l.end()); l.splice(l.begin(), l2); std::sort(v.begin(), v.end());
  std::function<long(long)> f = [&](long x) { return x + (long)m.size(); };
  auto sp = std::make_shared<std::vector<int>>(10, 3); std::unique_ptr<std::string> up(new std::string("hello"));
  std::ostringstream os; long s = 0;
  for (auto &p : m) s += p.first + (long)p.second.size(); for (auto &p : u) s += p.second; for (int x : l) s = s * 3 + x;
  for (int x : fl) s ^= x; for (auto &x : v) s += x[0]; for (int x : dq) s -= x; while (!pq.empty()) { s += pq.top(); pq.pop(); }
  s += (long)mm.count(3) + (long)ms.count(5) + (long)umm.count(2) + (long)st.size() + (long)us.size() + f(5) + (*sp)[3] + (long)up->size() + (long)sk.size();
  os << s << " " << *up;
  printf("%s\n", os.str().c_str());
}
