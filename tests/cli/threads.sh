#!/usr/bin/env bash
# The output is byte-identical for any -j: raw and JPEG-encoded HDF5, and LMDB data.
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "check: $*"; }
# run CMD...: runs it with stdout/stderr in $TMP/out, $TMP/err; exit code in $rc (no set -e trip)
run() { set +e; "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; set -e; }
show() { echo "--- stderr:" >&2; cat "$TMP/err" >&2; echo "---" >&2; }
expect_rc() { [ "$rc" -eq "$1" ] || { show; fail "expected exit $1, got $rc"; }; }
expect_err() { grep -q -- "$1" "$TMP/err" || { show; fail "stderr lacks '$1'"; }; }
expect_out() { grep -q -- "$1" "$TMP/out" || { cat "$TMP/out" >&2; fail "stdout lacks '$1'"; }; }

tree=$LD_TEST_DATA/tree
mkdir "$TMP/j1" "$TMP/j2" "$TMP/j3"
# Same relative output name in each folder: the command line is stored in the file.
for opts in "--resize 64" "--quality 70 --resize 96" \
    "--shuffle --seed 7 --mode pad --resize 50x70"; do
    check "-j 1, -j 2 and -j 3 give identical files: $opts"
    for j in 1 2 3; do
        (cd "$TMP/j$j" && run "$DATACONV" "$tree" out.h5 $opts -j "$j" && expect_rc 0)
    done
    cmp "$TMP/j1/out.h5" "$TMP/j2/out.h5" || fail "-j 1 and -j 2 differ ($opts)"
    cmp "$TMP/j1/out.h5" "$TMP/j3/out.h5" || fail "-j 1 and -j 3 differ ($opts)"
done
check "the same conversion twice gives the same file (no time stamps)"
(cd "$TMP/j2" && run "$DATACONV" "$tree" out.h5 --resize 64 -j 2 && expect_rc 0 && mv out.h5 a.h5)
sleep 1.1
(cd "$TMP/j2" && run "$DATACONV" "$tree" out.h5 --resize 64 -j 2 && expect_rc 0)
cmp "$TMP/j2/a.h5" "$TMP/j2/out.h5" || fail "two identical runs differ"
echo "threads: all checks passed"
