#!/usr/bin/env bash
# dataconv info prints names (the dataset path, class names, LMDB keys in messages) escaped:
# a newline, tab or other control character, a backslash and bytes that are not UTF-8 appear as
# \n \t \xNN \\ \xNN, so each item stays on its own line and the output is valid UTF-8.
source "$(dirname "$0")/lib/common.sh"
export LC_ALL=C
nl=$'\n'
src="$TMP/in"
mkdir -p "$src/new${nl}line" "$src/$(printf 'caf\xe9')" "$src/ok"
cp "$LD_TEST_DATA/photos/p00.jpg" "$src/new${nl}line/"
cp "$LD_TEST_DATA/photos/p01.jpg" "$src/$(printf 'caf\xe9')/"
cp "$LD_TEST_DATA/photos/p02.jpg" "$src/ok/"

utf8_lines() { # every line of $TMP/out is valid UTF-8 and has no control character but \n
    "$PYTHON" -c 'import sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
assert not any(c < 32 and c != 10 or c == 127 for c in b), b' "$TMP/out" ||
        { cat -A "$TMP/out" >&2; fail "info output is not clean UTF-8 text"; }
}

check "HDF5: a path and a class name with a newline, a Latin-1 class name: escaped"
run "$DATACONV" "$src" "$TMP/a${nl}b.h5" --resize 16 -q
expect_rc 0
run "$DATACONV" info "$TMP/a${nl}b.h5"
expect_rc 0
expect_out "^file: $TMP/a\\\\nb.h5$"
expect_out '^classes: 3: caf\\xe9, new\\nline, ok$'
utf8_lines

check "LMDB: the path and the class names escaped as for HDF5 (not the sidecar's JSON)"
run "$DATACONV" "$src" "$TMP/c${nl}d.lmdb" --resize 16 -q
expect_rc 0
run "$DATACONV" info "$TMP/c${nl}d.lmdb"
expect_rc 0
expect_out "^path: $TMP/c\\\\nd.lmdb$"
expect_out '^classes: 3: caf\\xe9, new\\nline, ok$'
utf8_lines

check "LMDB: a malformed record's key (a file name with a newline) escaped"
"$PYTHON" - "$TMP/bad.lmdb" "$SRC/tests/python" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import lmdb
from lmdb_caffe_pb import Datum
good = Datum(channels=1, height=1, width=1, data=b"x", label=0, encoded=False).SerializeToString()
with lmdb.open(sys.argv[1], map_size=1 << 20).begin(write=True) as t:
    t.put(b"00000000_a.jpg", good)
    t.put(b"00000001_bad\nname\x01.jpg", b"\x08\x03\x10\x80")
PY
run "$DATACONV" info "$TMP/bad.lmdb"
expect_rc 0
expect_out "^malformed: 1 records, first: .*key '00000001_bad\\\\nname\\\\x01.jpg'"
utf8_lines
echo "info_names: all checks passed"
