#!/usr/bin/env bash
# Label vectors (issue 28): list lines "path v1 ... vK" and CSV lists with a header become
# HDF5 /label (N, K) and an LMDB label database of float_data Datums; they survive shards,
# merges and the reader (Python batches of (n, K)). Checked against the list itself with h5py,
# python3-lmdb and python3-protobuf (tests/python/lmdb_caffe_pb.py), not with libdata.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
# 14 samples, three values each (two negative, fractions, an exponent), paths with a space
"$PYTHON" - "$tree" "$TMP" <<'PY'
import os, shutil, sys
tree, tmp = sys.argv[1], sys.argv[2]
os.makedirs(f"{tmp}/img/with space", exist_ok=True)
src = sorted(f"{c}/{n}" for c in os.listdir(tree) for n in os.listdir(f"{tree}/{c}")
             if n.lower().endswith((".jpg", ".jpeg", ".png")))
with open(f"{tmp}/v.txt", "w") as txt, open(f"{tmp}/v.csv", "w") as csv:
    csv.write('path,yaw,"pitch, deg",roll\n')
    for i in range(14):
        rel = f"with space/{i:02d} {os.path.basename(src[i % len(src)])}"
        shutil.copyfile(f"{tree}/{src[i % len(src)]}", f"{tmp}/img/{rel}")
        vals = (i / 4, -i, 1.5e-3 * i)
        txt.write(f"{rel} {vals[0]!r} {vals[1]} {vals[2]!r}\n")
        csv.write(f'"{rel}",{vals[0]!r},{vals[1]},{vals[2]!r}\n')
PY

# verify OUT: the values of the list, in its order, with h5py or python3-lmdb + protobuf
verify() { # OUT LIST [merged]
    "$PYTHON" - "$1" "$2" "$SRC/tests/python" <<'PY'
import sys
import numpy as np
out, listfile = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
rows = []
for line in open(listfile).read().splitlines()[(1 if listfile.endswith(".csv") else 0):]:
    if listfile.endswith(".csv"):
        path, rest = line[1:].split('"', 1)
        rows.append((path, [float(v) for v in rest.strip(",").split(",")]))
    else:
        parts = line.rsplit(" ", 3)
        rows.append((parts[0], [float(v) for v in parts[1:]]))
want = np.array([v for _, v in rows], np.float32)
if out.endswith(".h5"):
    import h5py
    with h5py.File(out, "r") as f:
        got = f["label"][:]
        assert f["label"].dtype == np.float32 and got.shape == (len(rows), 3), f["label"]
        names = [n.decode() for n in f["filename"][:]]
        if listfile.endswith(".csv"):
            assert list(f.attrs["label_names"]) == ["yaw", "pitch, deg", "roll"], f.attrs["label_names"]
else:
    import json, lmdb
    from lmdb_caffe_pb import Datum
    side = json.load(open(f"{out}/libdata.json"))
    labels = out[:-5] + "-labels.lmdb"
    assert side["label_count"] == 3 and side["label_db"] == labels.split("/")[-1], side
    got, names = [], []
    ei = lmdb.open(out, readonly=True, lock=False)
    el = lmdb.open(labels, readonly=True, lock=False)
    assert ei.stat()["entries"] == el.stat()["entries"] == len(rows)
    with ei.begin() as ti, el.begin() as tl:
        for (ki, vi), (kl, vl) in zip(ti.cursor(), tl.cursor()):
            assert ki == kl, (ki, kl)
            img, lab = Datum(), Datum()
            img.ParseFromString(vi)
            lab.ParseFromString(vl)
            assert img.label == 0 and len(img.data) == 3 * 16 * 16
            assert (lab.channels, lab.height, lab.width, lab.data) == (3, 1, 1, b""), lab
            got.append(list(lab.float_data))
            names.append(ki.decode().split("_", 1)[1])
    got = np.array(got, np.float32)
assert names == [p for p, _ in rows], names
assert np.array_equal(got, want), (got, want)
print(f"{out}: {len(rows)} label vectors of 3, as listed")
PY
}

# read OUT with the reader (shuffled, Python) and compare with the list
read_back() { # OUT LIST
    python_loads_libdata || return 0
    asan_build && return 0
    # (from $TMP: a libdata.so in the current folder would shadow the package)
    (cd "$TMP" && PYTHONPATH="$SRC/bindings/python" "$PYTHON" - "$1" "$2") <<'PY'
import sys
import numpy as np
import libdata
out, listfile = sys.argv[1], sys.argv[2]
want = np.array([[float(v) for v in l.rsplit(" ", 3)[1:]] for l in open(listfile)], np.float32)
seen = 0
with libdata.Reader(out, batch_size=4, shuffle=True, seed=3, label_dtype="float32") as r:
    for data, labels in r:
        assert labels.shape == (len(data), 3), labels.shape
        assert np.array_equal(labels, want[r.indices]), (labels, want[r.indices])
        seen += len(data)
assert seen == len(want)
# int32 output of fractions is refused, naming the sample
try:
    with libdata.Reader(out, batch_size=4) as r:
        next(iter(r))
    raise SystemExit("int32 labels of 0.25 were not refused")
except libdata.LibdataError as e:
    assert "label_dtype float32" in str(e), e
print(f"{out}: reader batches hold the listed vectors")
PY
}

for fmt in h5 lmdb; do
    check "$fmt: a text list of 'path v1 v2 v3' lines (paths with spaces)"
    run "$DATACONV" --list "$TMP/v.txt" --root "$TMP/img" "$TMP/t.$fmt" --resize 16
    expect_rc 0
    expect_err "converted 14 of 14"
    verify "$TMP/t.$fmt" "$TMP/v.txt"
    read_back "$TMP/t.$fmt" "$TMP/v.txt"
    run "$DATACONV" info "$TMP/t.$fmt"
    expect_out "^label vectors: 3 values per sample, float32"
    expect_out "labels float32 x 3"

    check "$fmt: a CSV list with a header keeps the label names"
    run "$DATACONV" --list "$TMP/v.csv" --root "$TMP/img" "$TMP/c.$fmt" --resize 16
    expect_rc 0
    verify "$TMP/c.$fmt" "$TMP/v.csv"
    run "$DATACONV" info "$TMP/c.$fmt"
    expect_out "^label names: yaw, pitch, deg, roll"

    check "$fmt: --shard 0/3, 1/3, 2/3 then merge equals the single run"
    for k in 0 1 2; do
        run "$DATACONV" --list "$TMP/v.txt" --root "$TMP/img" "$TMP/s.$fmt" --resize 16 --shard "$k/3"
        expect_rc 0
    done
    # the parts given by a pattern that also matches the LMDB parts' label databases
    run "$DATACONV" merge "$TMP/m.$fmt" "$TMP"/s-0000*.$fmt
    expect_rc 0
    verify "$TMP/m.$fmt" "$TMP/v.txt"
    read_back "$TMP/m.$fmt" "$TMP/v.txt"
done

check "a resumed part with another label count is refused, naming the record"
sed 's/ [^ ]*$//' "$TMP/v.txt" > "$TMP/two.txt" # the same paths with two values
run "$DATACONV" --list "$TMP/two.txt" --root "$TMP/img" "$TMP/s.h5" --resize 16 --shard 1/3
expect_rc 1
expect_err "s-00001-of-00003.h5"
expect_err "made with label float32 x 3 (this run: float32 x 2)"

check "a line with another number of values is refused, naming file:line"
printf 'a.jpg 1 2\nb.jpg 3\n' > "$TMP/bad.txt"
run "$DATACONV" --list "$TMP/bad.txt" --root "$TMP/img" "$TMP/bad.h5" --resize 16
expect_rc 3
expect_err "bad.txt:2"
[ ! -e "$TMP/bad.h5" ] || fail "a refused list left an output"

check "--label-type int32 keeps multi-label 0/1 vectors as int32 (N, K)"
sed -E 's/( [^ ]+){3}$//' "$TMP/v.txt" | head -2 | sed -e '1s/$/ 0 1 1/' -e '2s/$/ 1 0 0/' \
    > "$TMP/m.txt"
run "$DATACONV" --list "$TMP/m.txt" --root "$TMP/img" "$TMP/i.h5" --resize 16 --label-type int32
expect_rc 0
"$PYTHON" -c "
import h5py, numpy as np
l = h5py.File('$TMP/i.h5', 'r')['label']
assert l.dtype == np.int32 and l[:].tolist() == [[0, 1, 1], [1, 0, 0]], (l.dtype, l[:])
"

check "an unlabelled list (paths only): label 0, no classes"
sed -E 's/( [^ ]+){3}$//' "$TMP/v.txt" > "$TMP/u.txt"
run "$DATACONV" --list "$TMP/u.txt" --root "$TMP/img" "$TMP/u.h5" --resize 16
expect_rc 0
expect_err "converted 14 of 14"
"$PYTHON" -c "
import h5py
f = h5py.File('$TMP/u.h5', 'r')
assert f['label'].shape == (14,) and not f['label'][:].any() and f.attrs['num_classes'] == 0
"
check "an LMDB whose label database is missing is refused, saying what to do"
mv "$TMP/t-labels.lmdb" "$TMP/gone.lmdb"
run "$DATACONV" bench "$TMP/t.lmdb" --epochs 1
expect_rc 1
expect_err "t-labels.lmdb, which is missing"
expect_err "keep the two databases together"
echo "label_vectors: all checks passed"
