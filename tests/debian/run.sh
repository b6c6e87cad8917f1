#!/usr/bin/env bash
# Real programs under cairn-cc --persistent-heap: fetch Debian source
# packages, build their C code with CC="cairn-cc --persistent-heap" and run
# the packages' own test suites. Every malloc of the library and of its
# tests then lives in a pool, so every pointer they keep in the heap is
# stored relative and converted back on load.
#
#   tests/debian/run.sh [PACKAGE...]     default: zlib jansson expat
#
#   package  source (Debian 12)     suite run
#   zlib     zlib 1.2.13.dfsg-1     make test: example, minigzip, 64-bit pair
#   jansson  jansson 2.14-2         CMake + ctest: API tests, valid/invalid JSON
#   expat    expat 2.5.0-1+deb12u2  CMake, tests/runtests (the C suite)
#
# Sources come from deb.debian.org through apt-get source with a private
# apt configuration (deb-src lines, package lists and downloads under the
# cache), so the machine's own apt setup is neither needed nor touched.
# The cache is $CAIRN_DEBIAN_CACHE, default $CAIRN_BUILD/debian; downloads
# are kept there, packages are unpacked afresh for every run. Logs:
# CACHE/logs/PACKAGE.log. Environment: CAIRN_BUILD (default ./build),
# CAIRN_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# CAIRN_DEBIAN_SUITE (default: this system's codename, else bookworm).
#
# Prints one line per package: PASS/FAIL, tests passed, seconds. Exits 1
# when any package fails, including when its source cannot be fetched.
# A heap file left in /dev/shm by the suites is a failure too.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${CAIRN_BUILD:-$root/build}" && pwd) || { echo "no build directory"; exit 2; }
cc="$build/compiler/cairn-cc"
[ -x "$cc" ] || { echo "debian: $cc is not built"; exit 2; }
cache=${CAIRN_DEBIAN_CACHE:-$build/debian}
mirror=${CAIRN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${CAIRN_DEBIAN_SUITE:-$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-bookworm}")}
[ -n "$suite" ] || suite=bookworm
export CAIRN_PMEM_FORCE=${CAIRN_PMEM_FORCE:-1}
jobs=2
mkdir -p "$cache"/{apt/lists/partial,apt/archives/partial,src,work,logs}

apt_private() {
    echo "deb-src $mirror $suite main" >"$cache/apt/sources.list"
    apt-get -q -o Dir::Etc::SourceList="$cache/apt/sources.list" \
        -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$cache/apt/lists" \
        -o Dir::Cache="$cache/apt" -o Dir::Cache::archives="$cache/apt/archives" \
        -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" "$@"
}

# fetch PACKAGE: the newest .dsc of PACKAGE in the cache, downloading it
# (and the package lists, once) when missing.
fetch() {
    local pkg=$1 dsc
    dsc=$(ls "$cache/src/${pkg}"_*.dsc 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dsc" ]; then
        if ! ls "$cache/apt/lists/"*Sources* >/dev/null 2>&1; then
            apt_private update >"$cache/logs/apt-update.log" 2>&1
            ls "$cache/apt/lists/"*Sources* >/dev/null 2>&1 || {
                echo "debian: apt-get update of deb-src $mirror $suite failed:" >&2
                tail -n 5 "$cache/logs/apt-update.log" >&2
                return 1
            }
        fi
        (cd "$cache/src" && apt_private source --download-only "$pkg") \
            >"$cache/logs/$pkg-fetch.log" 2>&1 || {
            echo "debian: apt-get source $pkg failed:" >&2
            tail -n 5 "$cache/logs/$pkg-fetch.log" >&2
            return 1
        }
        dsc=$(ls "$cache/src/${pkg}"_*.dsc 2>/dev/null | sort -V | tail -n 1)
    fi
    [ -n "$dsc" ] && echo "$dsc"
}

# unpack DSC DIR: the Debian source tree, patches applied, in DIR (afresh)
unpack() {
    rm -rf "$2"
    dpkg-source -x "$1" "$2" >/dev/null
}

# Each build_PKG runs in the unpacked tree, output to the log, and prints
# "PASSED TOTAL" on its last line when the suite ran to its end.
build_zlib() {
    CC="$cc --persistent-heap" CFLAGS="-O2 -g" ./configure --static || return 1
    make -j$jobs test || return 1
    local ok
    ok=$(grep -c "zlib .*test OK" "$log")
    echo "$ok 2"
}

build_jansson() {
    mkdir -p b && cd b || return 1
    cmake .. -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="--persistent-heap -O2 -g" \
        -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF || return 1
    make -j$jobs || return 1
    ctest -j$jobs --output-on-failure
    sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests failed out of \([0-9]*\)$/\1 \2/p' "$log" |
        tail -n 1 | awk '{ print $2 - $1, $2 }'
}

build_expat() {
    cd expat && mkdir -p b && cd b || return 1
    # runtestspp (the same suite compiled as C++) is not built: its link
    # by clang++ would lack cairn's runtime. Tools, examples, docs off.
    cmake .. -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="--persistent-heap -O2 -g" \
        -DEXPAT_BUILD_TOOLS=OFF -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_DOCS=OFF \
        -DEXPAT_BUILD_FUZZERS=OFF -DEXPAT_BUILD_TESTS=ON || return 1
    # Debian's security patches test "#if XML_DTD == 1"; Debian builds with
    # autotools (XML_DTD 1), CMake's config header defines it empty.
    sed -i 's/^#define XML_DTD$/#define XML_DTD 1/' expat_config.h
    make -j$jobs runtests || return 1
    ./tests/runtests
    sed -n 's/^100%: Checks: \([0-9]*\), Failed: 0$/\1 \1/p' "$log" | tail -n 1
}

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(zlib jansson expat)
heaps_before=$(ls /dev/shm/cairn-heap-*.pool 2>/dev/null | sort)
status=0
for pkg in "${pkgs[@]}"; do
    if ! declare -F "build_$pkg" >/dev/null; then
        echo "$pkg: FAIL (no recipe; known: zlib jansson expat)"
        status=1
        continue
    fi
    dsc=$(fetch "$pkg") || {
        echo "$pkg: FAIL (source not fetched from $mirror $suite)"
        status=1
        continue
    }
    ver=$(basename "$dsc" .dsc)
    ver=${ver#*_}
    dir="$cache/work/$pkg"
    log="$cache/logs/$pkg.log"
    start=$(date +%s)
    if ! unpack "$dsc" "$dir" >"$log" 2>&1; then
        echo "$pkg $ver: FAIL (dpkg-source -x failed, see $log)"
        status=1
        continue
    fi
    (cd "$dir" && "build_$pkg") >>"$log" 2>&1 </dev/null
    result=$(tail -n 1 "$log")
    secs=$(( $(date +%s) - start ))
    read -r passed total <<<"$result"
    if [[ "$passed" =~ ^[0-9]+$ && "$total" =~ ^[0-9]+$ && $total -gt 0 && $passed -eq $total ]]; then
        echo "$pkg $ver: PASS ($passed/$total tests, ${secs}s)"
    else
        echo "$pkg $ver: FAIL (${passed:-?}/${total:-?} tests, ${secs}s; see $log)"
        tail -n 15 "$log" | sed 's/^/    /'
        status=1
    fi
done
left=$(comm -13 <(echo "$heaps_before") <(ls /dev/shm/cairn-heap-*.pool 2>/dev/null | sort))
if [ -n "$left" ]; then
    echo "FAIL: persistent-heap files left in /dev/shm:"
    echo "$left" | sed 's/^/    /'
    status=1
fi
exit $status
