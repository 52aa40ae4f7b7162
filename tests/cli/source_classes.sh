#!/usr/bin/env bash
# Folder mode: what becomes a class (issue 12, items 19 and 6).
#  - images directly in SRC are skipped with a warning (they used to form a class "." with
#    label 0 that shifted every other label); --flat takes a folder without classes;
#  - a sub-folder that is a dataset (an LMDB with data.mdb, a run's temporary) is skipped with a
#    warning instead of becoming an empty class;
#  - an unreadable class folder: a warning that the class keeps its label, or with --strict an
#    error (exit 1, nothing written). Run with CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH dropped
#    (setpriv) so that permissions apply to root too.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"
cp -r "$LD_TEST_DATA/tree" clean
"$DATACONV" clean clean.h5 --resize 8 -q

# classes and labels of an HDF5 output, one line: "names | label per filename"
labels() {
    "$PYTHON" - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]]
    rows = sorted(zip((x.decode() for x in f["filename"][:]), f["label"][:].tolist()))
print(",".join(names), "|", " ".join(f"{p}={l}" for p, l in rows))
PY
}
want=$(labels clean.h5)

check "loose images at the top of SRC: skipped with one warning, labels as without them"
cp -r clean loose
cp "$LD_TEST_DATA"/photos/p0*.jpg loose/
run "$DATACONV" loose loose.h5 --resize 8
expect_rc 0
expect_err "directly in the input folder"
expect_err "use flat for a folder"
[ "$(grep -c 'directly in the input folder' "$TMP/err")" = 1 ] || { show; fail "one warning expected"; }
got=$(labels loose.h5)
[ "$got" = "$want" ] || fail "labels changed by loose files: $got, want $want"

check "an LMDB and a conversion's temporary inside SRC are skipped, not empty classes"
cp -r clean withdb
"$DATACONV" clean withdb/aaa.lmdb --resize 8 -q
mkdir withdb/zz.lmdb.tmp-12345-55aa && touch withdb/zz.lmdb.tmp-12345-55aa/data.mdb
run "$DATACONV" withdb withdb.h5 --resize 8
expect_rc 0
expect_err "withdb/aaa.lmdb: a dataset"
expect_err "withdb/zz.lmdb.tmp-12345-55aa: a dataset"
got=$(labels withdb.h5)
[ "$got" = "$want" ] || fail "labels changed by a database in SRC: $got, want $want"

check "--flat: every image below SRC, label 0, one class named after the folder"
mkdir -p flat/sub
cp "$LD_TEST_DATA"/photos/p0*.jpg flat/
cp "$LD_TEST_DATA"/photos/p1*.jpg flat/sub/
n=$(find flat -name '*.jpg' | wc -l)
run "$DATACONV" flat flat.h5 --resize 8 --flat
expect_rc 0
"$PYTHON" - flat.h5 "$n" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert f["label"].shape[0] == int(sys.argv[2]), f["label"].shape
    assert set(f["label"][:].tolist()) == {0}
    assert [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]] == ["flat"]
    assert any(x.decode().startswith("sub/") for x in f["filename"][:])
PY
check "without --flat a folder of loose images only says what to do"
mkdir only && cp "$LD_TEST_DATA"/photos/p0*.jpg only/
run "$DATACONV" only only.h5 --resize 8
expect_rc 3
expect_err "flat for a folder without class folders"
expect_err "flat is --flat on the command line"
expect_err "no images found"

check "unreadable class folder: warning, class kept with its label; --strict: exit 1"
if ! setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
    echo "SKIP: setpriv cannot drop CAP_DAC_OVERRIDE here: unreadable folders not tested"
    echo "source_classes: all other checks passed"
    exit 0
fi
nocap() { setpriv --bounding-set -dac_override,-dac_read_search "$@"; }
cp -r clean locked
chmod 000 locked/car
run nocap "$DATACONV" locked locked.h5 --resize 8
chmod 755 locked/car
expect_rc 0
expect_err "locked/car: cannot read class folder: Permission denied; class 'car' keeps its label 1"
"$PYTHON" - locked.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]]
    assert names == ["bird", "car", "cat"], names
    by = dict(zip((x.decode() for x in f["filename"][:]), f["label"][:].tolist()))
    assert by["bird/h.jpg"] == 0 and by["cat/a.jpg"] == 2, by
    assert not any(k.startswith("car/") for k in by), by
PY
chmod 000 locked/car
run nocap "$DATACONV" locked strict.h5 --resize 8 --strict
chmod 755 locked/car
expect_rc 1
expect_err "locked/car: cannot read class folder: Permission denied (stopped: strict)"
expect_err "strict is --strict on the command line"
[ ! -e strict.h5 ] && [ -z "$(compgen -G 'strict.h5*')" ] || fail "--strict left output"
check "an unreadable nested folder under --strict stops too"
chmod 000 locked/cat/sub
run nocap "$DATACONV" locked strict.h5 --resize 8 --strict
chmod 755 locked/cat/sub
expect_rc 1
expect_err "locked/cat/sub: cannot read folder: Permission denied (stopped: strict)"
expect_err "strict is --strict on the command line"
echo "source_classes: all checks passed"
