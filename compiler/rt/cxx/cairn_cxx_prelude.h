/* cairn_cxx_prelude.h -- included first in every C++ file cairn-c++
 * compiles (-include). libstdc++ declares its explicit instantiations
 * (std::string, streams, locale facets) "extern template": a program would
 * call the copies compiled into libstdc++.so, which cairn's pass never saw,
 * so their stores into PM would go unlogged and their loads of relative
 * pointers would fault. With _GLIBCXX_EXTERN_TEMPLATE at 0 every template
 * the program uses is instantiated in it and instrumented like its own code
 * (larger objects, the same behaviour). */
#if defined(__cplusplus) && __has_include(<bits/c++config.h>)
#  include <bits/c++config.h>
#  undef _GLIBCXX_EXTERN_TEMPLATE
#  define _GLIBCXX_EXTERN_TEMPLATE 0
#endif
