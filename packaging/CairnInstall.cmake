# cairn's install layout, pkg-config file, CMake package, man pages and the
# Debian package (included last by the top-level CMakeLists.txt, after every
# target exists). See docs/install.md.
#
#   PREFIX/bin/               cairn-cc  cairn-c++ (-> cairn-cc)  cairn-analyze
#                             cairn-pool  cairn-crashcheck  cairn (CLI)
#   PREFIX/LIBDIR/            libcairn.so.0.1.0  libcairn.so.0  libcairn.so  libcairn.a
#   PREFIX/LIBDIR/cairn/      CairnPass.so  CairnTypeId.so  libcairn_cc_rt.a
#                             libcairn_pheap.a  wset/*.wset  libcairn_cxx_rt.a
#                             libcairn_cxx_rt_heap.a  libcairn_pheap_cxx.a
#   PREFIX/LIBDIR/pkgconfig/  cairn.pc
#   PREFIX/LIBDIR/cmake/cairn/ cairnConfig.cmake  cairnConfigVersion.cmake
#   PREFIX/include/           cairn.h  cairn_cxx_prelude.h
#   PREFIX/share/cairn/python/ the CLI's Python package (bin/cairn runs it)
#   PREFIX/share/man/         cairn-cc(1)  cairn(1)  cairn(3)
#
# Invariant: no installed file names the build or source tree. Every file
# that points at another one does so relative to its own location
# (cairn-cc: its executable; cairn.pc: ${pcfiledir}; cairnConfig.cmake:
# CMAKE_CURRENT_LIST_DIR; bin/cairn: its script), so an install moves as a
# whole and `cmake --install build --prefix P` works for any P.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CAIRN_PKG_DIR ${CMAKE_CURRENT_LIST_DIR})
set(CAIRN_PRIVATE_LIBDIR ${CMAKE_INSTALL_LIBDIR}/cairn)

# Compiled-in paths (assert messages, debug info) name the trees by a
# stable, tree-free prefix instead.
foreach(t cairn_obj cairn-pool cairn-analyze cairn-cc CairnPass CairnTypeId
          cairn_cc_rt cairn_pheap cairn_pheap_cxx cairn_crashmodel cairn-crashcheck
          cairn-trace-scan cairn-readtrack)
  if(TARGET ${t})
    target_compile_options(${t} PRIVATE
      -ffile-prefix-map=${CMAKE_BINARY_DIR}=/usr/src/cairn/build
      -ffile-prefix-map=${CMAKE_SOURCE_DIR}=/usr/src/cairn)
  endif()
endforeach()

# --- runtime: libcairn (shared, versioned soname; and static), cairn.h, cairn-pool,
# cairn-crashcheck
install(TARGETS cairn
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP COMPONENT runtime)
install(TARGETS cairn
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_ONLY COMPONENT dev)
install(TARGETS cairn_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/include/cairn.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(TARGETS cairn-pool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS cairn-crashcheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
install(TARGETS cairn-readtrack LIBRARY DESTINATION ${CAIRN_PRIVATE_LIBDIR} COMPONENT dev)
file(RELATIVE_PATH _rt_from_bin ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${CAIRN_PRIVATE_LIBDIR})
target_compile_definitions(cairn-crashcheck PRIVATE CAIRN_READTRACK_FROM_BINDIR="${_rt_from_bin}")
install(TARGETS cairn-trace-scan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)

# --- cairn-cc and its parts (found relative to bin/cairn-cc) ---------------
if(TARGET cairn-cc)
  # The driver looks for its parts in the build tree first, then at these
  # paths relative to its own directory.
  file(RELATIVE_PATH _lib_from_bin ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
  file(RELATIVE_PATH _inc_from_bin ${CMAKE_INSTALL_FULL_BINDIR}
       ${CMAKE_INSTALL_FULL_INCLUDEDIR})
  target_compile_definitions(cairn-cc PRIVATE
    CAIRN_LIBDIR_FROM_BINDIR="${_lib_from_bin}"
    CAIRN_INCLUDEDIR_FROM_BINDIR="${_inc_from_bin}")
  install(TARGETS cairn-cc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
  install(TARGETS CairnPass CairnTypeId
    LIBRARY DESTINATION ${CAIRN_PRIVATE_LIBDIR} COMPONENT dev)
  install(TARGETS cairn_cc_rt cairn_pheap
    ARCHIVE DESTINATION ${CAIRN_PRIVATE_LIBDIR} COMPONENT dev)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/compiler/wset/
    DESTINATION ${CAIRN_PRIVATE_LIBDIR}/wset COMPONENT dev FILES_MATCHING PATTERN "*.wset")
  # cairn-c++: the same driver under a name ending in "++", libstdc++'s node
  # functions built by cairn-c++, operator new/delete for the heap, the prelude
  install(TARGETS cairn_pheap_cxx ARCHIVE DESTINATION ${CAIRN_PRIVATE_LIBDIR} COMPONENT dev)
  install(FILES ${CMAKE_BINARY_DIR}/compiler/libcairn_cxx_rt.a
                ${CMAKE_BINARY_DIR}/compiler/libcairn_cxx_rt_heap.a
    DESTINATION ${CAIRN_PRIVATE_LIBDIR} COMPONENT dev)
  install(FILES ${PROJECT_SOURCE_DIR}/compiler/rt/cxx/cairn_cxx_prelude.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  install(CODE "execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink cairn-cc
    \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/cairn-c++)" COMPONENT dev)
endif()
if(TARGET cairn-analyze)
  install(TARGETS cairn-analyze RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)
endif()

# --- the CLI: its Python package and a launcher beside the tools -----------
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/cairn
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/python COMPONENT dev
  PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
# the trace reader takes the record types (trace_types.h) and the pool
# layout from the runtime's headers, beside the package when installed
file(GLOB _cairn_runtime_headers ${PROJECT_SOURCE_DIR}/runtime/*.h)
install(FILES ${_cairn_runtime_headers}
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cairn/python/cairn COMPONENT dev)
file(RELATIVE_PATH _py_from_bin ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_DATADIR}/cairn/python)
configure_file(${CAIRN_PKG_DIR}/cairn-cli.in ${CMAKE_BINARY_DIR}/packaging/cairn @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/packaging/cairn
  DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev)

# --- pkg-config: cairn.pc, relocatable through ${pcfiledir} -----------------
set(_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH _prefix_from_pc ${CMAKE_INSTALL_PREFIX}/${_pc_dir} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" _prefix_from_pc "${_prefix_from_pc}")
configure_file(${CAIRN_PKG_DIR}/cairn.pc.in ${CMAKE_BINARY_DIR}/packaging/cairn.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/cairn.pc DESTINATION ${_pc_dir} COMPONENT dev)

# --- CMake package: find_package(cairn) -> cairn::cairn, cairn::cairn_static
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cairn)
file(RELATIVE_PATH _prefix_from_cmake ${CMAKE_INSTALL_PREFIX}/${_cmake_dir}
     ${CMAKE_INSTALL_PREFIX})
configure_file(${CAIRN_PKG_DIR}/cairnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/packaging/cairnConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/packaging/cairnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/packaging/cairnConfig.cmake
              ${CMAKE_BINARY_DIR}/packaging/cairnConfigVersion.cmake
  DESTINATION ${_cmake_dir} COMPONENT dev)

# --- man pages: man/*.md -> roff with go-md2man (packaging/manpage.py) -------
find_program(CAIRN_GO_MD2MAN go-md2man)
find_package(Python3 COMPONENTS Interpreter)
if(CAIRN_GO_MD2MAN AND Python3_Interpreter_FOUND)
  file(GLOB _man_sources ${PROJECT_SOURCE_DIR}/man/*.md)
  set(_man_pages)
  foreach(src ${_man_sources})
    get_filename_component(full ${src} NAME)
    string(REGEX REPLACE "\\.md$" "" page "${full}")      # cairn-cc.1.md -> cairn-cc.1
    string(REGEX REPLACE "^.*\\." "" section "${page}")   # 1
    set(out ${CMAKE_BINARY_DIR}/man/${page})
    file(GLOB _docs ${PROJECT_SOURCE_DIR}/docs/*.md)
    add_custom_command(OUTPUT ${out}
      COMMAND ${Python3_EXECUTABLE} ${CAIRN_PKG_DIR}/manpage.py
              --go-md2man ${CAIRN_GO_MD2MAN} --version ${PROJECT_VERSION} ${src} ${out}
      DEPENDS ${src} ${CAIRN_PKG_DIR}/manpage.py ${_docs}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      COMMENT "man page ${page}")
    list(APPEND _man_pages ${out})
    install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT dev)
  endforeach()
  add_custom_target(cairn_man ALL DEPENDS ${_man_pages})
else()
  message(WARNING "cairn: go-md2man or python3 not found; man pages are not built "
                  "(apt-get install go-md2man)")
endif()

# --- the Debian package: cpack -G DEB ----------------------------------------
set(CPACK_PACKAGE_NAME cairn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "cairn developers <cairn@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "crash-consistent persistent memory for legacy C (cairn-cc, libcairn, tools)")
set(CPACK_PACKAGE_DESCRIPTION
  "cairn keeps an ordinary C program's data structures in persistent memory and\n\
survives a crash at any instant: cairn-cc (clang 19 with cairn's undo-logging\n\
pass), libcairn, cairn-analyze, cairn-pool and the cairn command.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
# Shared-library dependencies (libllvm19, libclang-cpp19, libc6, libstdc++6, ...)
# come from dpkg-shlibdeps; these are what the tools run rather than link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "clang-19, python3 (>= 3.11), python3-tqdm")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pkgconf | pkg-config")
set(CPACK_GENERATOR DEB)
include(CPack)
