#!/usr/bin/env bash
# dataconv info: describes HDF5 (raw, encoded), --split lists and LMDB; errors exit 1 naming
# the path.
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
run "$DATACONV" "$tree" "$TMP/raw.h5" --resize 64 -q
expect_rc 0

check "info on a raw HDF5 file: exit 0, sample count, shape and classes on stdout"
run "$DATACONV" info "$TMP/raw.h5"
expect_rc 0
expect_out "9"
expect_out "64"
expect_out "bird"
expect_out "cat"
[ ! -s "$TMP/err" ] || { show; fail "info printed to stderr"; }

check "info on an encoded file mentions the encoding"
run "$DATACONV" "$tree" "$TMP/q.h5" --resize 64 --quality 80 -q
expect_rc 0
run "$DATACONV" info "$TMP/q.h5"
expect_rc 0
grep -qi "jpeg\|encoded" "$TMP/out" ||
    fail "info does not say the file is encoded: $(cat "$TMP/out")"

check "info on an LMDB database"
run "$DATACONV" "$tree" "$TMP/db.lmdb" --resize 32 -q
expect_rc 0
run "$DATACONV" info "$TMP/db.lmdb"
expect_rc 0
expect_out "9"
grep -qi "lmdb" "$TMP/out" || fail "info does not say LMDB: $(cat "$TMP/out")"

check "info on a missing file: exit 1, the path named"
run "$DATACONV" info "$TMP/nope.h5"
expect_rc 1
expect_err "$TMP/nope.h5"

check "info on something that is not a dataset (a JPEG): exit 1"
run "$DATACONV" info "$LD_TEST_DATA/photos/p00.jpg"
expect_rc 1
expect_err "p00.jpg"
echo "info: all checks passed"
