#!/usr/bin/env bash
# The ABI promise (docs/abi.md) checked on the built library:
#  - every symbol of tests/abi/libdata.symbols is still exported (a removal breaks programs
#    linked against libdata.so.MAJOR), and nothing is exported that the list lacks (a new
#    symbol is recorded deliberately, with scripts/update_abi.sh);
#  - the exports are exactly the LD_API functions of the public headers (no internal ld__*
#    leaks out, no declared function is missing);
#  - the soname is libdata.so.MAJOR, and CMake's project version is the header's.
set -euo pipefail
: "${LIBDATA_LIBRARY:?set LIBDATA_LIBRARY to the built libdata.so}"
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
list=$SRC/tests/abi/libdata.symbols
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

exported=$("$SRC/scripts/abi_symbols.sh" exported "$LIBDATA_LIBRARY")
recorded=$(grep -v '^#' "$list" | grep . | LC_ALL=C sort -u)
[ -n "$exported" ] || { echo "FAIL: nm -D found no symbols in $LIBDATA_LIBRARY" >&2; exit 1; }

echo "check: recorded symbols are all still exported"
gone=$(LC_ALL=C comm -23 <(echo "$recorded") <(echo "$exported"))
if [ -n "$gone" ]; then
    fail "symbols of tests/abi/libdata.symbols no longer exported by $LIBDATA_LIBRARY:
$(echo "$gone" | sed 's/^/    /')
  Programs linked against libdata.so.$(sed -n 's/^#define LD_VERSION_MAJOR //p' \
    "$SRC/libdata/include/libdata/libdata.h") would fail to load. Restore them (a renamed
  function keeps its old name as an alias until the next major version), or, for a new major
  version, bump VERSION in CMakeLists.txt and libdata.h and run scripts/update_abi.sh."
fi

echo "check: every exported symbol is recorded"
new=$(LC_ALL=C comm -13 <(echo "$recorded") <(echo "$exported"))
if [ -n "$new" ]; then
    fail "exported by $LIBDATA_LIBRARY but not in tests/abi/libdata.symbols:
$(echo "$new" | sed 's/^/    /')
  If they are new public API, record them: scripts/update_abi.sh BUILD_DIR, and commit
  tests/abi/libdata.symbols with the change (and raise the minor version). If not, give
  them internal linkage (static) or an ld__ name without LD_API."
fi

echo "check: exports are exactly the public headers' LD_API functions"
declared=$("$SRC/scripts/abi_symbols.sh" declared "$SRC")
if [ "$declared" != "$exported" ]; then
    fail "headers and library differ (< declared LD_API in libdata/include/libdata/*.h,
  > exported):
$(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | sed 's/^/    /')"
fi

echo "check: soname libdata.so.MAJOR; CMake project version == LD_VERSION_STRING"
header=$SRC/libdata/include/libdata/libdata.h
major=$(sed -n 's/^#define LD_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
hstring=$(sed -n 's/^#define LD_VERSION_STRING "\(.*\)"$/\1/p' "$header")
cversion=$(sed -n 's/^project(libdata VERSION \([0-9.]*\) .*/\1/p' "$SRC/CMakeLists.txt")
soname=$(readelf -d "$LIBDATA_LIBRARY" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libdata.so.$major" ] ||
    fail "soname is '$soname', expected libdata.so.$major (LD_VERSION_MAJOR)"
[ "$hstring" = "$cversion" ] ||
    fail "CMakeLists.txt says version $cversion, libdata.h says $hstring: make them equal"
[ "$hstring" = "$(sed -n 's/^#define LD_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' "$header" |
    paste -sd.)" ] || fail "LD_VERSION_STRING $hstring differs from LD_VERSION_MAJOR.MINOR.PATCH"

[ $status -eq 0 ] && echo "ok: $(echo "$exported" | wc -l) symbols, soname $soname, version $hstring"
exit $status
