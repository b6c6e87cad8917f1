// Objects with virtual functions: in the persistent heap they work (the heap
// is remade at each start, so a vtable pointer stays valid); in a real pool
// cairn::make refuses them at compile time (-DMAKE) and a vtable pointer
// stored into a pool by placement new stops the program (-DPLACE).
#include <cairn.h>
#include <cstdio>
#include <new>
#include <memory>
#include <vector>
struct Shape { virtual ~Shape() {} virtual double area() const = 0; };
struct Sq : Shape { double s; explicit Sq(double x) : s(x) {} double area() const override { return s * s; } };
struct Ci : Shape { double r; explicit Ci(double x) : r(x) {} double area() const override { return 3 * r * r; } };
int main(int argc, char **argv) {
#ifdef MAKE
  cairn_pool *p = cairn_pool_create(argv[1], "poly", 16 << 20);
  cairn::make<Sq>(p, 2.0);
#elif defined(PLACE)
  cairn_pool *p = cairn_pool_create(argv[1], "poly", 16 << 20);
  void *mem = cairn_alloc(p, sizeof(Sq));
  Shape *s = new (mem) Sq(3.0);
  printf("%g\n", s->area());
#else
  (void)argc; (void)argv;
  std::vector<std::unique_ptr<Shape>> v;
  for (int i = 0; i < 10; i++) v.emplace_back(i % 2 ? (Shape *)new Sq(i) : new Ci(i));
  double t = 0; for (auto &s : v) t += s->area();
  printf("%g %d\n", t, cairn_is_pm(v[3].get()));
#endif
}
