#!/usr/bin/env bash
# dataconv's sources compile without a warning at every optimization level (issue 12, item
# 20: gcc 12 -O3 saw a -Wmaybe-uninitialized in cli/options.c that -O2 builds never show).
# The CLI includes public headers only, so it compiles on its own.
# One compiler run per level for all of cli/*.c, to assembly (-S): the warnings are the
# compiler's, so assembling the output into objects, as this did once per file and level,
# added nothing to the check.
set -euo pipefail
: "${SRC:?set SRC to the source tree}"
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "SKIP: no C compiler ($cc)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for opt in -O1 -O2 -O3 -Os; do
    # (every file is compiled, also after one fails; the messages name file and line)
    if ! (cd "$tmp" && "$cc" -std=c11 -D_GNU_SOURCE "$opt" -Wall -Wextra -Werror \
        -I"$SRC/libdata/include" -S "$SRC"/cli/*.c) 2> "$tmp/err"; then
        echo "FAIL: $cc $opt: $(sed -n 's|^'"$SRC"'/cli/\([^:]*\.c\):.*|\1|p' "$tmp/err" | sort -u | tr '\n' ' ')" >&2
        cat "$tmp/err" >&2
        status=1
    fi
done
[ "$status" = 0 ] && echo "cli_warnings: cli/*.c clean at -O1 -O2 -O3 -Os with $("$cc" --version | head -1)"
exit $status
