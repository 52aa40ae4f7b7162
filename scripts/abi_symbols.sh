#!/usr/bin/env bash
# The ABI of libdata, as plain sorted lists (one name a line), for tests/cli/abi_symbols.sh and
# scripts/update_abi.sh:
#   scripts/abi_symbols.sh exported LIBDATA.so   the symbols the shared library exports
#                                                (nm -D --defined-only: code, data, weak)
#   scripts/abi_symbols.sh declared [SRC]        the functions the public headers declare LD_API
set -euo pipefail
case "${1:-}" in
    exported)
        lib=${2:?usage: $0 exported LIBDATA.so}
        # Columns: address, type, name (name@@VERSION when versioned). Lower-case types are
        # local; U is undefined (--defined-only drops it).
        nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWGS]$/ { sub(/@.*/, "", $3); print $3 }' |
            LC_ALL=C sort -u ;;
    declared)
        src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
        # Declarations may span lines: join each header, cut at ';' or '{', keep the name
        # before the first '(' of each LD_API declaration.
        for h in "$src"/libdata/include/libdata/*.h; do
            grep -v '^[[:space:]]*#' "$h" | tr '\n' ' ' | grep -oE 'LD_API[^;{(]*\(' || true
        done | sed -E 's/[[:space:]]*\($//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)$/\1/' |
            LC_ALL=C sort -u ;;
    *)
        echo "usage: $0 exported LIBDATA.so | declared [SOURCE_DIR]" >&2
        exit 2 ;;
esac
