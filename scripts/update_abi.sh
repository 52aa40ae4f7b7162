#!/usr/bin/env bash
# Record the exported symbols of libdata.so in tests/abi/libdata.symbols, the list that
# tests/cli/abi_symbols.sh (ctest -R abi) holds the library to. Run it after a deliberate
# change of the public API, and commit the list with the change:
#
#   scripts/update_abi.sh [BUILD_DIR]     (default: build; configured here when missing)
#
# It builds the libdata target, writes the list and shows the difference. A symbol that
# disappears breaks programs linked against libdata.so.MAJOR: within one major version
# (README "Versioning and ABI", docs/abi.md) symbols are only ever added.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target libdata -j2 >/dev/null
lib=$(find "$build" -maxdepth 1 -name 'libdata.so.*.*' -type f | head -n 1)
[ -n "$lib" ] || { echo "update_abi: no libdata.so.X.Y.Z in $build" >&2; exit 1; }
list=$root/tests/abi/libdata.symbols
declared=$("$root/scripts/abi_symbols.sh" declared "$root")
exported=$("$root/scripts/abi_symbols.sh" exported "$lib")
if [ "$declared" != "$exported" ]; then
    echo "update_abi: the headers' LD_API functions and the library's exports differ" >&2
    echo "(< declared in libdata/include/libdata/*.h, > exported by $lib):" >&2
    diff <(echo "$declared") <(echo "$exported") >&2 || true
    echo "Fix the headers or the sources first; the list is not changed." >&2
    exit 1
fi
old=$(mktemp)
trap 'rm -f "$old"' EXIT
[ -f "$list" ] && cp "$list" "$old"
{
    echo "# Exported symbols of libdata.so (nm -D --defined-only), one a line, sorted."
    echo "# Checked by tests/cli/abi_symbols.sh; regenerate with scripts/update_abi.sh after a"
    echo "# deliberate API change. Within a major version names are only added, never removed."
    echo "$exported"
} > "$list"
if diff -u "$old" "$list" >/dev/null; then
    echo "update_abi: $list unchanged ($(echo "$exported" | wc -l) symbols)"
else
    echo "update_abi: $list updated ($(echo "$exported" | wc -l) symbols):"
    diff "$old" "$list" | grep '^[<>] [a-z]' || true
fi
