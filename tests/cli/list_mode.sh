#!/usr/bin/env bash
# List-file mode (Caffe's "path label" format): --list/--root, and convert_imageset's
# argument order ROOT/ LISTFILE DB with its flag spellings, give the labels and order of the
# list. Checked with h5py.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
list=$LD_TEST_DATA/list.txt
# a list in its own order with labels that are not the folder order
printf 'cat/a.jpg 7\nbird/h.jpg 3\ncar/f.PNG 5\ncat/sub/deeper/d.png 1\n' > "$TMP/mine.txt"

verify() { # FILE LISTFILE CHANNELS SIZE
    "$PYTHON" - "$@" <<'PY'
import sys, h5py
path, listfile, c, s = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = [l.rsplit(" ", 1) for l in open(listfile).read().splitlines() if l.strip()]
with h5py.File(path, "r") as f:
    assert f["data"].shape == (len(rows), c, s, s), f["data"].shape
    labels = list(f["label"][:])
    assert labels == [int(r[1]) for r in rows], (labels, rows)
    names = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
    assert [n.split("/")[-1] for n in names] == [r[0].split("/")[-1] for r in rows], names
print(f"{path}: {len(rows)} samples, labels and order as listed")
PY
}

check "--list LIST --root ROOT OUT: labels and order from the list"
run "$DATACONV" --list "$TMP/mine.txt" --root "$tree" "$TMP/a.h5" --resize 32
expect_rc 0
expect_err "converted 4 of 4"
verify "$TMP/a.h5" "$TMP/mine.txt" 3 32

check "the fixture list.txt converts all 9"
run "$DATACONV" --list "$list" --root "$tree/" "$TMP/b.h5" --resize=40x40
expect_rc 0
verify "$TMP/b.h5" "$list" 3 40

check "convert_imageset order: dataconv ROOT/ LIST OUT.h5 -resize_width 32 -resize_height 32"
run "$DATACONV" "$tree/" "$TMP/mine.txt" "$TMP/c.h5" -resize_width 32 -resize_height 32
expect_rc 0
verify "$TMP/c.h5" "$TMP/mine.txt" 3 32

check "gflags spellings: -gray -check_size=false --resize_width=32 --resize_height=32 -backend hdf5"
run "$DATACONV" -gray -check_size=false --resize_width=32 --resize_height=32 -backend hdf5 \
    "$tree/" "$TMP/mine.txt" "$TMP/d.h5"
expect_rc 0
verify "$TMP/d.h5" "$TMP/mine.txt" 1 32

check "same pixels in --list mode and convert_imageset order"
"$PYTHON" -c "
import h5py, numpy as np
a = h5py.File('$TMP/a.h5', 'r')['data'][:]
c = h5py.File('$TMP/c.h5', 'r')['data'][:]
assert np.array_equal(a, c)
"

check "a missing listed file is named and skipped; exit 0"
printf 'cat/a.jpg 0\ncat/missing.jpg 1\n' > "$TMP/missing.txt"
run "$DATACONV" --list "$TMP/missing.txt" --root "$tree" "$TMP/e.h5" --resize 32
expect_rc 0
expect_err "missing.jpg"
expect_err "converted 1 of 2"
echo "list_mode: all checks passed"
