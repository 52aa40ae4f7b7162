#!/usr/bin/env bash
# Datasets as input (issue 29, item 4): SRC may be an HDF5 file (ours, or h5py-style /data +
# /label), a merged file, a --split list or an LMDB (ours, or convert_imageset-style raw or
# --encoded), read through the stores. Datasets are made from real photos with dataconv and
# with other tools (h5py; python3-lmdb with Datums encoded by hand), converted, and checked
# without libdata (tests/python/dataset_input_check.py): labels, names and class names carried,
# pixels equal on raw paths, encoded bytes identical where nothing asks for a change, the
# `source` record naming the input; bad inputs give a clear error, never a crash.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"
chk() { "$PYTHON" "$SRC/tests/python/dataset_input_check.py" "$@"; }
dc() { run "$DATACONV" "$@"; expect_rc 0; }

# 12 real photos in 3 classes (photo_folder links; one copy of 4 photos per class)
mkdir -p tree/a tree/b tree/c
for k in 0 1 2 3; do
    ln "$LD_TEST_DATA/photos/p0$k.jpg" "tree/a/p0$k.jpg"
    ln "$LD_TEST_DATA/photos/p0$((k + 4)).jpg" "tree/b/p0$((k + 4)).jpg"
    ln "$LD_TEST_DATA/photos/p1$k.jpg" "tree/c/p1$k.jpg"
done
photos=("$LD_TEST_DATA"/photos/p0[0-8].jpg)

check "raw HDF5 -> LMDB -> HDF5: pixels, labels, names, classes equal; source names the input"
dc tree raw.h5 --resize 40x30
dc raw.h5 raw.lmdb
chk same raw.h5 raw.lmdb
dc raw.lmdb raw2.h5
chk same raw.h5 raw2.h5
[ "$(chk source raw.lmdb)" = raw.h5 ] || fail "raw.lmdb: source is not raw.h5"
[ "$(chk source raw2.h5)" = raw.lmdb ] || fail "raw2.h5: source is not raw.lmdb"

check "encoded HDF5 (original file bytes) -> LMDB -> HDF5: bytes identical (md5)"
dc tree enc.h5 --encoded
dc enc.h5 enc.lmdb
chk same enc.h5 enc.lmdb
dc enc.lmdb enc2.h5
chk same enc.h5 enc2.h5
"$PYTHON" - <<'PY'
import hashlib, h5py
f = h5py.File("enc2.h5", "r")
off, enc = f["offsets"][:], f["encoded"][:]
for i, name in enumerate(f["filename"][:]):
    got = hashlib.md5(enc[off[i]:off[i + 1]].tobytes()).hexdigest()
    want = hashlib.md5(open("tree/" + name.decode(), "rb").read()).hexdigest()
    assert got == want, (name, got, want)
assert f.attrs["encoding"] == "original", f.attrs["encoding"]
print("enc2.h5: every sample is its photo file, byte for byte")
PY

check "HDF5 -> HDF5 --quality 70 --resize 32x32: JPEGs 32x32 at q70, labels and names kept"
dc enc.h5 q70.h5 --quality 70 --resize 32x32
chk resized enc.h5 q70.h5 32 32 70
check "q70 HDF5 -> LMDB: bytes kept, and so are the recorded quality and resize"
dc q70.h5 q70.lmdb
chk same q70.h5 q70.lmdb
run "$DATACONV" info q70.lmdb
expect_rc 0
expect_out "settings: resize squash 32x32, JPEG quality 70"
expect_out "source: q70.h5"

check "raw dataset -> encoded (--encoded): a lossless PNG of each sample's pixels"
dc raw.h5 png.h5 --encoded
"$PYTHON" - <<'PY'
import h5py, io, numpy as np
from PIL import Image
a, b = h5py.File("raw.h5", "r"), h5py.File("png.h5", "r")
off, enc = b["offsets"][:], b["encoded"][:]
for i in range(a["data"].shape[0]):
    im = np.asarray(Image.open(io.BytesIO(enc[off[i]:off[i + 1]].tobytes())).convert("RGB"))
    assert (im[:, :, ::-1].transpose(2, 0, 1) == a["data"][i]).all(), i
print("png.h5: each PNG decodes to raw.h5's pixels")
PY

check "gray raw dataset stays gray: -> LMDB equal; --encoded: gray PNGs of the same pixels"
dc tree gray.h5 --resize 40x30 --gray
dc gray.h5 gray.lmdb
chk same gray.h5 gray.lmdb
dc gray.lmdb grayp.h5 --encoded
"$PYTHON" - <<'PY'
import h5py, io, numpy as np
from PIL import Image
a, b = h5py.File("gray.h5", "r"), h5py.File("grayp.h5", "r")
assert a["data"].shape[1] == 1 and int(b.attrs["channels"]) == 1
off, enc = b["offsets"][:], b["encoded"][:]
for i in range(a["data"].shape[0]):
    im = Image.open(io.BytesIO(enc[off[i]:off[i + 1]].tobytes()))
    assert im.format == "PNG" and im.mode == "L", (im.format, im.mode)
    assert (np.asarray(im) == a["data"][i, 0]).all(), i
print("grayp.h5: gray PNGs of gray.h5's pixels")
PY

check "h5py-style /data + /label (no libdata attributes): pixels and labels carried"
chk make-h5py h5py.h5 "${photos[@]}"
dc h5py.h5 h5py_out.h5
chk same h5py.h5 h5py_out.h5
dc h5py.h5 h5py_out.lmdb
chk same h5py.h5 h5py_out.lmdb
chk make-h5py h5py_float.h5 float "${photos[@]}"
dc h5py_float.h5 h5py_float_out.h5
chk same h5py_float.h5 h5py_float_out.h5

check "convert_imageset-style LMDB, raw (BGR CHW Datums) -> HDF5: pixels, labels, key names"
chk make-caffe caffe_raw raw "${photos[@]}"
dc caffe_raw caffe_raw.h5
chk same caffe_raw caffe_raw.h5
"$PYTHON" -c "
import h5py; f = h5py.File('caffe_raw.h5', 'r')
assert [x.decode() for x in f['filename'][:3]] == ['p00.jpg', 'p01.jpg', 'p02.jpg'], f['filename'][:3]"

check "convert_imageset --encoded-style LMDB -> HDF5 and -> LMDB: JPEG bytes identical"
chk make-caffe caffe_enc enc "${photos[@]}"
dc caffe_enc caffe_enc.h5
chk same caffe_enc caffe_enc.h5
dc caffe_enc caffe_enc2.lmdb
chk same caffe_enc caffe_enc2.lmdb

check "--raw: an encoded dataset (convert_imageset-style LMDB) to raw pixels, decoded once"
dc caffe_enc caffe_dec.h5 --raw --resize 48x36
"$PYTHON" - <<'PY'
import io, lmdb, os, sys
import h5py, numpy as np
from PIL import Image
sys.path.insert(0, os.environ["SRC"] + "/tests/python")
from lmdb_caffe_pb import Datum  # python3-protobuf, not libdata
f = h5py.File("caffe_dec.h5", "r")
assert "data" in f and f["data"].shape[1:] == (3, 36, 48) and f.attrs["storage"] == "raw"
worst = 0.0
with lmdb.open("caffe_enc", readonly=True, lock=False) as env, env.begin() as t:
    for i, (key, val) in enumerate((k, v) for k, v in t.cursor() if not k.startswith(b"__")):
        d = Datum()
        d.ParseFromString(val)
        assert f["label"][i] == d.label, (key, f["label"][i], d.label)
        im = Image.open(io.BytesIO(d.data)).convert("RGB").resize((48, 36), Image.LANCZOS)
        want = np.asarray(im)[:, :, ::-1].transpose(2, 0, 1).astype(float)  # BGR CHW
        mse = ((f["data"][i].astype(float) - want) ** 2).mean()
        worst = max(worst, mse)
psnr = 10 * np.log10(255 ** 2 / max(worst, 1e-9))
assert psnr >= 28, psnr  # Pillow's decode + LANCZOS, as tests/python/check_convert.py
print(f"caffe_dec.h5: {len(f['label'])} raw samples, labels equal, PSNR vs Pillow >= {psnr:.1f} dB")
PY
run "$DATACONV" caffe_enc x.h5 --raw --quality 80
expect_rc 1
expect_err "raw asks for raw pixels, and quality, encoded or encode_png"

check "merged (VDS) file as input"
dc tree parts.h5 --encoded --shard 0/2
dc tree parts.h5 --encoded --shard 1/2
dc merge merged.h5 parts-00000-of-00002.h5 parts-00001-of-00002.h5
dc merged.h5 merged.lmdb
chk same merged.h5 merged.lmdb
chk same enc.h5 merged.lmdb

check "--split list as input"
dc tree split.h5 --resize 40x30 --split 20000
[ "$(wc -l <split.txt)" -ge 2 ] || fail "split.txt lists fewer than 2 files"
dc split.txt split.lmdb
chk same split.txt split.lmdb
chk same raw.h5 split.lmdb

check "--shard K/N of a dataset input, then merge: the single run's records"
dc enc.lmdb sh.h5 --shard 0/2
dc enc.lmdb sh.h5 --shard 1/2
dc merge sh.h5
chk same enc.h5 sh.h5
dc raw.h5 shr.lmdb --shard 0/3
dc raw.h5 shr.lmdb --shard 1/3
dc raw.h5 shr.lmdb --shard 2/3
dc merge shr.lmdb
chk same raw.h5 shr.lmdb

check "--shuffle: the same records (by name) in another order"
dc raw.h5 shuf.h5 --shuffle --seed 7
chk same raw.h5 shuf.h5 shuffled
dc enc.lmdb shuf.lmdb --shuffle --seed 7
chk same enc.h5 shuf.lmdb shuffled

check "label vectors (CSV list, named values): HDF5 -> LMDB (label database) -> HDF5"
{
    echo 'path,yaw,pitch'
    i=0
    for f in tree/*/*.jpg; do echo "\"${f#tree/}\",$i.25,-$i"; i=$((i + 1)); done
} >vec.csv
dc tree vec.h5 --list vec.csv --resize 24x20
dc vec.h5 vec.lmdb
dc vec.lmdb vec2.h5
chk same vec.h5 vec2.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
a, b = h5py.File("vec.h5", "r"), h5py.File("vec2.h5", "r")
assert b["label"].shape == a["label"].shape and b["label"].dtype == a["label"].dtype
assert np.array_equal(a["label"][:], b["label"][:])
assert list(b.attrs["label_names"]) == ["yaw", "pitch"], b.attrs["label_names"]
print("vec2.h5: /label", b["label"].shape, "and its names carried")
PY

check "detection boxes (COCO sample -> HDF5) carried: boxes, box classes, ids equal"
dc --coco "$SRC/samples/shapes_coco.json" --root "$SRC/samples/images/" det.h5 --resize 64 --mode pad
dc det.h5 det2.h5
"$PYTHON" - <<'PY'
import h5py, numpy as np
a, b = h5py.File("det.h5", "r"), h5py.File("det2.h5", "r")
for k in ("data", "boxes", "box_label", "box_flags", "box_offsets", "filename"):
    assert np.array_equal(a[k][:], b[k][:]), k
for k in ("box_classes", "box_class_ids"):
    assert list(a.attrs[k]) == list(b.attrs[k]), k
print("det2.h5: %d boxes of %d images equal" % (b["boxes"].shape[0], b["data"].shape[0]))
PY

check "masks: refused with what to do"
chk make-h5py masks.h5 masks "${photos[@]}"
run "$DATACONV" masks.h5 m.h5
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "masks input: exit $rc"
expect_err "segmentation masks"
expect_err "masks"
[ ! -e m.h5 ] || fail "a refused input wrote m.h5"

check "bad inputs: truncated HDF5, corrupt LMDB, a path-label list as SRC: errors, no crash"
head -c 3000 raw.h5 >trunc.h5
run "$DATACONV" trunc.h5 t.lmdb
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "truncated HDF5: exit $rc"
expect_err "trunc.h5"
mkdir bad.lmdb
head -c 8192 enc.lmdb/data.mdb >bad.lmdb/data.mdb
run "$DATACONV" bad.lmdb t.h5
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "corrupt LMDB: exit $rc"
expect_err "bad.lmdb"
cp enc.lmdb/data.mdb bad2.mdb.tmp
"$PYTHON" - <<'PY'
# the last 40% of the file's bytes overwritten: values past the tree are garbage
import os
n = os.path.getsize("bad2.mdb.tmp")
with open("bad2.mdb.tmp", "r+b") as f:
    f.seek(n * 6 // 10)
    f.write(b"\xa5" * (n - n * 6 // 10))
PY
mkdir bad2.lmdb && mv bad2.mdb.tmp bad2.lmdb/data.mdb
run "$DATACONV" bad2.lmdb t2.h5
[ "$rc" -lt 128 ] || fail "damaged LMDB values: crashed (exit $rc)"
expect_err "skipped bad2.lmdb: key"
run "$DATACONV" bad2.lmdb t2s.h5 --strict
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "damaged LMDB values, --strict: exit $rc"
expect_err "stopped: strict"
printf 'a/p00.jpg 0\n' >paths.txt
run "$DATACONV" paths.txt t3.h5
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "path-label list as SRC: exit $rc"
expect_err "list_file"

echo "dataset_input: all checks passed"
