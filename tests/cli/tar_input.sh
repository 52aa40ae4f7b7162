#!/usr/bin/env bash
# Tar archives as SRC (issue 29 item 3), made here from the fixture photos with tar and
# Python's tarfile:
#  - a tar of class folders, a tar of tars (ILSVRC2012's shape: one inner tar per class), a
#    .tar.gz made by GNU tar (readdir order, not sorted), .tar.xz: the SAME dataset as the
#    extracted folder (/data, /label, /filename, class names; read with h5py), sorted and with
#    --shuffle; LMDB output record by record (python-lmdb);
#  - --shard 0/2 + 1/2 + merge equals the unsharded dataset;
#  - bad members ('../x.jpg', an absolute name, a symlink, a hard link, a FIFO, a truncated
#    JPEG) and a truncated archive are named and skipped, the rest converts; --strict stops;
#  - an archive that is no tar, and an output that is the input archive, are refused.
source "$(dirname "$0")/lib/common.sh"
"$DATACONV" --version >/dev/null
if ! "$PYTHON" -c 'import h5py, lmdb' 2>/dev/null; then
    echo "h5py or python3-lmdb missing"
    exit 77
fi

cd "$TMP"
# 3 classes x 5 photos (different photos per class), as extracted from the archives
"$PYTHON" - "$LD_TEST_DATA/photos" tree <<'PY'
import os, shutil, sys
src, out = sys.argv[1:3]
photos = sorted(p for p in os.listdir(src) if p.endswith(".jpg"))
for c, cls in enumerate(["n01440764", "n01443537", "n01484850"]):
    os.makedirs(f"{out}/{cls}")
    for k in range(5):
        shutil.copyfile(f"{src}/{photos[(c * 5 + k) % len(photos)]}", f"{out}/{cls}/{cls}_{k}.JPEG")
PY
conv() { "$DATACONV" "$@" -q 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "dataconv $*"; }; }
# same A B: the two HDF5 datasets hold the same samples, labels, names and classes
same() {
    "$PYTHON" - "$1" "$2" <<'PY' || fail "$1 differs from $2"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for k in ("data", "label", "filename"):
    assert a[k].shape == b[k].shape and np.array_equal(a[k][()], b[k][()]), k
assert list(a.attrs["class_names"]) == list(b.attrs["class_names"]), "class_names"
assert len(a["label"]) > 0
PY
}
opts=(--resize 64x64)
conv tree folder.h5 "${opts[@]}"
conv tree folder_shuf.h5 "${opts[@]}" --shuffle --seed 5

check "a tar of class folders converts to the folder's dataset"
tar cf classes.tar -C tree .
conv classes.tar classes.h5 "${opts[@]}"
same folder.h5 classes.h5
"$PYTHON" - classes.h5 <<'PY' || fail "filename, source attribute"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
name = f["filename"][0]
name = name.decode() if isinstance(name, bytes) else name
assert name == "n01440764/n01440764_0.JPEG", name
src = f.attrs["source"]
assert (src.decode() if isinstance(src, bytes) else src) == "classes.tar", src
PY

check "a tar of tars (ILSVRC2012 train) converts to the folder's dataset"
for c in tree/*/; do c=$(basename "$c"); tar cf "$c.tar" -C "tree/$c" .; done
# inner tars in reverse order in the outer one: order comes from the names
tar cf train.tar n01484850.tar n01443537.tar n01440764.tar
conv train.tar train.h5 "${opts[@]}"
same folder.h5 train.h5

check ".tar.gz in readdir order and .tar.xz give the same dataset; --shuffle too"
tar czf classes.tar.gz -C tree .
conv classes.tar.gz gz.h5 "${opts[@]}"
same folder.h5 gz.h5
"$PYTHON" - <<'PY'
import random, tarfile, os
names = sorted(os.path.join(d, f) for d, _, fs in os.walk("tree") for f in fs)
random.Random(3).shuffle(names)
with tarfile.open("shuffled.tar.xz", "w:xz") as t:
    for n in names:
        t.add(n, arcname=os.path.relpath(n, "tree"))
PY
conv shuffled.tar.xz xz.h5 "${opts[@]}"
same folder.h5 xz.h5
conv train.tar train_shuf.h5 "${opts[@]}" --shuffle --seed 5
same folder_shuf.h5 train_shuf.h5
conv shuffled.tar.xz xz_shuf.h5 "${opts[@]}" --shuffle --seed 5
same folder_shuf.h5 xz_shuf.h5

check "--shard 0/2 + 1/2 + merge equals the whole"
conv train.tar part.h5 "${opts[@]}" --shard 0/2
conv classes.tar.gz part.h5 "${opts[@]}" --shard 1/2
conv merge merged.h5 part-00000-of-00002.h5 part-00001-of-00002.h5
same folder.h5 merged.h5

check "LMDB output: the folder's records"
conv tree folder.lmdb "${opts[@]}"
conv train.tar train.lmdb "${opts[@]}"
"$PYTHON" - folder.lmdb train.lmdb <<'PY' || fail "LMDB records differ"
import sys, lmdb
def records(p):
    with lmdb.open(p, readonly=True, lock=False) as env, env.begin() as t:
        return list(t.cursor())
a, b = records(sys.argv[1]), records(sys.argv[2])
assert len(a) == 15 and a == b, (len(a), len(b))
PY

check "bad members are named and skipped, the rest converts"
"$PYTHON" - "$LD_TEST_DATA/photos/p00.jpg" <<'PY'
import io, sys, tarfile
good = open(sys.argv[1], "rb").read()
def add(t, name, data=b"", **kw):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    for k, v in kw.items():
        setattr(ti, k, v)
    t.addfile(ti, io.BytesIO(data) if data else None)
with tarfile.open("bad.tar", "w") as t:
    add(t, "cat/good.jpg", good)
    add(t, "../escape.jpg", good)
    add(t, "/abs/root.jpg", good)
    add(t, "cat/sym.jpg", type=tarfile.SYMTYPE, linkname="good.jpg")
    add(t, "cat/hard.jpg", type=tarfile.LNKTYPE, linkname="cat/good.jpg")
    add(t, "cat/fifo.jpg", type=tarfile.FIFOTYPE)
    add(t, "cat/truncated.jpg", good[: len(good) // 3])
    add(t, "dog/good.jpg", good)
    add(t, "dog/last.jpg", good)
data = open("bad.tar", "rb").read()
# cut inside dog/last.jpg's data: its header is there, its bytes are not
open("cut.tar", "wb").write(data[: data.rindex(good[:64]) + 1000])
PY
run "$DATACONV" bad.tar bad.h5 "${opts[@]}" -v
expect_rc 0
expect_err "not converted: bad.tar/../escape.jpg: name leaves the archive"
expect_err "not converted: bad.tar//abs/root.jpg: name leaves the archive"
expect_err "not converted: bad.tar/cat/sym.jpg: a link"
expect_err "not converted: bad.tar/cat/hard.jpg: a link"
expect_err "not converted: bad.tar/cat/fifo.jpg: not a regular file"
expect_err "skipped bad.tar/cat/truncated.jpg: JPEG"
expect_err "converted 3 of 4 images"
expect_err "2 named outside the archive"
[ ! -e escape.jpg ] && [ ! -e ../escape.jpg ] && [ ! -e /abs/root.jpg ] || fail "extracted"
run "$DATACONV" cut.tar cut.h5 "${opts[@]}"
expect_rc 0
expect_err "cut.tar: corrupt or truncated archive"
expect_err "skipped cut.tar/dog/last.jpg: archive truncated"
expect_err "converted 2 of 4 images"
gzip -c cut.tar > cut.tgz
run "$DATACONV" cut.tgz cutz.h5 "${opts[@]}"
expect_rc 0
expect_err "skipped cut.tgz/dog/last.jpg: corrupt or truncated archive member"
expect_err "converted 2 of 4 images"
run "$DATACONV" cut.tgz cut_strict.h5 "${opts[@]}" --strict
expect_rc 3
expect_err "cut.tgz: corrupt or truncated archive.*(stopped: strict)"
[ ! -e cut_strict.h5 ] || fail "strict run wrote its output"

check "not a tar; output is the input archive; a folder named like an archive stays a folder"
echo "not a tar archive, just text, long enough to look at" > notes.tar
run "$DATACONV" notes.tar notes.h5
expect_rc 3
expect_err "notes.tar: not a tar archive"
run "$DATACONV" info classes.tar
expect_rc 1
expect_err "to make a dataset of a tar archive of images: dataconv classes.tar out.h5"
cp classes.tar victim.tar
cksum victim.tar > before
run "$DATACONV" victim.tar victim.tar "${opts[@]}"
expect_rc 1
expect_err "is the input archive"
cksum victim.tar | cmp -s - before || fail "the input archive was replaced"
cp -r tree tree.tar
run "$DATACONV" tree.tar dir_named.h5 "${opts[@]}"
expect_rc 0
same folder.h5 dir_named.h5
echo "tar_input: ok"
