#!/usr/bin/env bash
# dataconv info: describes HDF5 (raw, encoded), --split lists and LMDB; errors exit 1 naming
# the path.
source "$(dirname "$0")/lib/common.sh"

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
