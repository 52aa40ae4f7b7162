#!/usr/bin/env bash
# scripts/check_format.sh (run by .ci/run): passes on a file formatted as .clang-format says,
# fails on one that is not (naming it and the --fix command), and --fix repairs it.
set -euo pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-format.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cp "$SRC/.clang-format" "$TMP/"   # clang-format looks for it beside the file, then upwards
cat > "$TMP/good.c" <<'C'
#include <stdio.h>

static int twice(int x)
{
    if (x < 0) return -1;
    switch (x) {
    case 0: return 0;
    default: break;
    }
    return 2 * x;
}

int main(void)
{
    printf("%d\n", twice(21));
    return 0;
}
C
sed -e 's/^    //' -e 's/static int twice(int x)/static int twice( int x )/' "$TMP/good.c" > "$TMP/bad.c"

echo "check: a formatted file passes"
"$SRC/scripts/check_format.sh" "$TMP/good.c" > "$TMP/out" 2>&1 || { cat "$TMP/out"; fail "good.c rejected"; }

echo "check: a misformatted file fails, named, with the fix command"
set +e
"$SRC/scripts/check_format.sh" "$TMP/good.c" "$TMP/bad.c" > "$TMP/out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$TMP/out"; fail "expected exit 1, got $rc"; }
grep -q "^  $TMP/bad.c$" "$TMP/out" || { cat "$TMP/out"; fail "bad.c not named"; }
grep -q "good.c" "$TMP/out" && { cat "$TMP/out"; fail "good.c named as differing"; }
grep -q "1 of 2 files differ.*scripts/check_format.sh --fix $TMP/bad.c" "$TMP/out" ||
    { cat "$TMP/out"; fail "no summary with the --fix command"; }

echo "check: --fix makes it pass, and gives the formatted text"
"$SRC/scripts/check_format.sh" --fix "$TMP/bad.c" > /dev/null
"$SRC/scripts/check_format.sh" "$TMP/bad.c" > /dev/null || fail "still differs after --fix"
cmp -s "$TMP/good.c" "$TMP/bad.c" || { diff "$TMP/good.c" "$TMP/bad.c"; fail "--fix result"; }
echo ok
