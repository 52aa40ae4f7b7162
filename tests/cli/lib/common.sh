# Shared set-up of the CLI test scripts (sourced; not a test itself): environment checks, a
# temporary folder removed on exit, and small assertion helpers.
# shellcheck shell=bash
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
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
# photo_folder DIR CLASSES COPIES: a class folder per letter of CLASSES (e.g. "abcd"), each
# holding COPIES hard links (copies where links fail) of every fixture photo: a real-photo
# input as large as a test needs, made in a moment without using disk space.
photo_folder() {
    "$PYTHON" - "$LD_TEST_DATA/photos" "$1" "$2" "$3" <<'PY'
import glob, os, shutil, sys
src, out, classes, copies = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
photos = sorted(glob.glob(f"{src}/p*.jpg"))
for c in classes:
    os.makedirs(f"{out}/{c}", exist_ok=True)
    for k in range(copies):
        for p in photos:
            dst = f"{out}/{c}/{k:03d}_{os.path.basename(p)}"
            try:
                os.link(p, dst)
            except OSError:
                shutil.copyfile(p, dst)
PY
}
