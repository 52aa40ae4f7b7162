#!/usr/bin/env bash
# Shortcut and alias flags are parsed as the table parameter they name (one parser, params.c):
# the generated flags (--resize-w, --format) follow the same rules as their convert_imageset
# spellings, and the choice aliases (stretch, fit, h5, seq, block, u8, f32, i32) give the same
# data as the table's names. Data compared with h5py; the format of OUT checked on disk.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
list=$LD_TEST_DATA/list.txt

check "--resize-w alone (the table's flag) is refused like --resize_width alone"
for flag in --resize-w --resize_h --resize-width; do
    run "$DATACONV" "$tree" "$TMP/one.h5" "$flag" 32
    expect_rc 2
    expect_err "must be given together"
    [ ! -e "$TMP/one.h5" ] || fail "$flag alone wrote output"
done
run "$DATACONV" "$tree" "$TMP/w.h5" --resize-w 24 --resize-h 16 -q
expect_rc 0

same_data() { # A.h5 B.h5: identical pixel arrays
    "$PYTHON" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    assert a["data"].shape == b["data"].shape, (a["data"].shape, b["data"].shape)
    assert np.array_equal(a["data"][:], b["data"][:]), "pixels differ"
    print(f"{sys.argv[1]} == {sys.argv[2]}: {a['data'].shape}")
PY
}

check "--mode fit == --resize-mode pad, --mode stretch == squash, and they differ from each other"
run "$DATACONV" "$tree" "$TMP/fit.h5" --resize 20x12 --mode fit -q
expect_rc 0
run "$DATACONV" "$tree" "$TMP/pad.h5" --resize 20x12 --resize-mode pad -q
expect_rc 0
same_data "$TMP/fit.h5" "$TMP/pad.h5"
run "$DATACONV" "$tree" "$TMP/stretch.h5" --resize 20x12 -mode=STRETCH -q
expect_rc 0
run "$DATACONV" "$tree" "$TMP/squash.h5" --resize 20x12 -q
expect_rc 0
same_data "$TMP/stretch.h5" "$TMP/squash.h5"
if same_data "$TMP/fit.h5" "$TMP/squash.h5" 2>/dev/null; then fail "pad and squash gave the same pixels"; fi

check "--format h5 / --backend hdf5 write HDF5 whatever OUT's name; --format auto keeps the default"
run "$DATACONV" "$tree" "$TMP/x.lmdb" --resize 16 --format h5 -q
expect_rc 0
[ -f "$TMP/x.lmdb" ] || fail "--format h5 did not write an HDF5 file"
run "$DATACONV" "$tree/" "$list" "$TMP/y_db" --resize 16 -backend hdf5 -q
expect_rc 0
[ -f "$TMP/y_db" ] || fail "-backend hdf5 in convert_imageset order did not write HDF5"
run "$DATACONV" "$tree/" "$list" "$TMP/z_db" --resize 16 --format lmdb --format auto -q
expect_rc 0
[ -d "$TMP/z_db" ] || fail "--format auto in convert_imageset order did not keep LMDB"
run "$DATACONV" "$tree" "$TMP/l.h5" --format leveldb
expect_rc 2
expect_err "LevelDB is not supported"

check "bench: --order seq, --dtype u8|f32, --label-dtype float, --memory: the table's values"
run "$DATACONV" "$tree" "$TMP/b.h5" --resize 16 -q
expect_rc 0
for args in "--order SEQ" "--order block --window 2" "--dtype u8" "--dtype f32" \
    "--label-dtype float" "--memory 64M" "--memory-budget 64M" "-j2" "-j 1"; do
    # shellcheck disable=SC2086
    run "$DATACONV" bench "$TMP/b.h5" --batch 4 $args -q
    expect_rc 0
    expect_out "^total: 9 samples"
done
run "$DATACONV" bench "$TMP/b.h5" --dtype u8 -v --batch 4
expect_out " uint8;"
run "$DATACONV" bench "$TMP/b.h5" --dtype f32 -v --batch 4
expect_out " float32;"
run "$DATACONV" bench "$TMP/b.h5" --dtype i32
expect_rc 2
expect_err "expected uint8, float32 or uint16"
run "$DATACONV" bench "$TMP/b.h5" --memory 5Q
expect_rc 2
expect_err "expected a size in bytes"
check "--max-pixels WxH whose product exceeds int64: out of range, not a wrapped count"
run "$DATACONV" "$tree" "$TMP/mp.h5" --max-pixels 4000000000x4000000000
expect_rc 2
expect_err "max-pixels 9223372036854775807: out of range"
echo "option_aliases: all checks passed"
