#!/usr/bin/env bash
# With a ~4000-byte path the reason of a message still appears (issue 12, item 18): messages
# used to be cut at 1 KiB, before the reason; now the middle of the path gives way.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"
long_dir() { # PREFIX: makes PREFIX/nested_folder_.../ of about 3900 bytes, prints it
    "$PYTHON" - "$1" <<'PY'
import os, sys
p = sys.argv[1]
while len(os.path.abspath(p)) < 3900:
    p = os.path.join(p, "nested_folder_%03d" % (p.count("/")))
os.makedirs(p)
print(p)
PY
}
deep=$(long_dir src/cls)
[ "${#deep}" -gt 3000 ] || fail "path only ${#deep} bytes"
cp "$LD_TEST_DATA/photos/p00.jpg" "$deep/good.jpg"
printf 'not an image at all' > "$deep/zz_bad.jpg"

check "a bad file at the end of a $(( ${#TMP} + ${#deep} ))-byte path: skipped, reason shown"
run "$DATACONV" src out.h5 --resize 8
expect_rc 0
expect_err "zz_bad.jpg: not an image file (unknown signature)"
grep "zz_bad" "$TMP/err" | grep -q "\.\.\." || { show; fail "the path was not shortened"; }

check "--strict: the reason and '(stopped: strict)' survive, the CLI names the flag"
run "$DATACONV" src out2.h5 --resize 8 --strict
expect_rc 3
expect_err "zz_bad.jpg: not an image file (unknown signature) (stopped: strict)"
expect_err "strict is --strict on the command line"
[ ! -e out2.h5 ] || fail "--strict wrote out2.h5"

check "an unwritable output beside a long path names the reason"
ro=$(long_dir outputs)
chmod 555 "$ro"
if setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
    run setpriv --bounding-set -dac_override,-dac_read_search "$DATACONV" src "$ro/x.h5" --resize 8
    expect_rc 1
    expect_err "Permission denied"
else
    echo "SKIP: setpriv unavailable, unwritable-output case not run"
fi
check "the reader's log lines keep their end after a long dataset path"
dsdir=$(long_dir datasets)
run "$DATACONV" src "$dsdir/in.h5" --resize 8
expect_rc 0
run "$DATACONV" bench "$dsdir/in.h5" --batch 1 --epochs 1 -v
expect_rc 0
expect_err "per rank per epoch"

echo "long_paths: all checks passed"
