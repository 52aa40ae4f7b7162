# Assertion helpers of the CLI test scripts (sourced; not a test itself), without the
# environment checks of common.sh: for the scripts that run neither dataconv nor the fixtures.
# shellcheck shell=bash
set -euo pipefail
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
