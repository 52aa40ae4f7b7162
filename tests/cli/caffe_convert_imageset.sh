#!/usr/bin/env bash
# Caffe integration, Caffe's own LMDBs (needs CAFFE_ROOT and the LibData layer built): databases
# made by Caffe's convert_imageset exactly as its users make them (raw, -gray, -encoded JPEG,
# -encoded -encode_type png: no libdata.json; the encoded Datums carry no channels/height/width)
#   1. the LibData layer's first test batches equal libdata's reader, and so do Caffe's stock
#      Data layer's (Caffe decodes with OpenCV): the reader returns Caffe's own pixels and labels;
#   2. the samples/caffe net trains 100 iterations on them through the LibData layer, and the
#      loss falls (mean of the first 3 displays > mean of the last 3);
#   3. `dataconv mean` writes the same mean.binaryproto as Caffe's compute_image_mean;
#   4. an -encoded database of images of different sizes (no -resize_*) reads with a crop_size,
#      and without one the layer stops with a message that says to crop or resize;
#   5. dataconv takes each as input (issue 29): -> HDF5 -> LMDB keeps labels, names and pixels
#      (raw) or the encoded bytes (md5), --quality 70 re-encodes, and Caffe's stock Data layer
#      reads dataconv's LMDB copy.
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
CONVERT=$(caffe_tool convert_imageset) || fail "no convert_imageset under CAFFE_ROOT=$CAFFE_ROOT"
MEAN_TOOL=$(caffe_tool compute_image_mean) ||
    fail "no compute_image_mean under CAFFE_ROOT=$CAFFE_ROOT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-convert-imageset.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export GLOG_logtostderr=1

for kind in raw gray jpg png; do
    case $kind in
        raw) flags=() ;;
        gray) flags=(-gray) ;;
        jpg) flags=(-encoded) ;;
        png) flags=(-encoded -encode_type png) ;;
    esac
    dir=$TMP/$kind
    mkdir "$dir"
    cd "$dir"
    echo
    echo "== $kind: convert_imageset -resize_height 32 -resize_width 32 ${flags[*]}"
    for set in train val; do
        shuffle=()
        [ "$set" = train ] && shuffle=(-shuffle)
        "$CONVERT" -resize_height 32 -resize_width 32 "${shuffle[@]}" "${flags[@]}" \
            "$SRC/samples/images/" "$SRC/samples/$set.txt" "$set.lmdb" >convert.log 2>&1 ||
            { cat convert.log; fail "$kind: convert_imageset $set failed"; }
    done
    [ ! -e train.lmdb/libdata.json ] || fail "$kind: convert_imageset wrote a libdata.json?"

    echo "-- check: first test batches, LibData and stock Data layers vs libdata's reader"
    for type in LibData Data; do
        backend=
        [ "$type" = Data ] && backend="backend: LMDB"
        cat >"first_$type.prototxt" <<NET
layer { name: "data" type: "$type" top: "data" top: "label" include { phase: TEST }
  data_param { source: "val.lmdb" batch_size: 16 $backend }
  transform_param { crop_size: 28 mean_value: 128 scale: 0.00390625 } }
NET
        LD_PRELOAD="$PRELOAD" "$CHECK" "first_$type.prototxt" 2 >first.out 2>first.err ||
            { cat first.err first.out; fail "$kind: $type layer vs libdata's reader"; }
        cat first.out
        [ "$(grep -c 'EQUAL$' first.out)" -eq 2 ] || fail "$kind: $type: 2 EQUAL batches expected"
    done

    echo "-- check: caffe train, LibData layer on train.lmdb, test on val.lmdb"
    sed -e 's/"train\.h5"/"train.lmdb"/' "$SRC/samples/caffe/libdata_train_val.prototxt" \
        >train_val.prototxt
    grep -q '"train.lmdb"' train_val.prototxt || fail "samples/caffe net changed: no train.h5"
    sed -e 's/"libdata_train_val\.prototxt"/"train_val.prototxt"/' \
        "$SRC/samples/caffe/libdata_solver.prototxt" >solver.prototxt
    LD_PRELOAD="$PRELOAD" "$CAFFE" train --solver=solver.prototxt >train.log 2>&1 ||
        { tail -n 30 train.log; fail "$kind: caffe train failed"; }
    grep -q "LibData layer 'data' (TRAIN" train.log || fail "$kind: no LibData layer in the log"
    losses=$(grep -E "Iteration [0-9]+ .*loss = " train.log | sed 's/.*loss = //')
    [ "$(echo "$losses" | wc -l)" -ge 6 ] || { cat train.log; fail "$kind: too few loss lines"; }
    grep -E "Iteration [0-9]+ .*loss = |Test net output #0" train.log | sed 's/^.*\] //'
    first=$(echo "$losses" | head -n 3 | awk '{ s += $1 } END { printf "%.4f", s / NR }')
    last=$(echo "$losses" | tail -n 3 | awk '{ s += $1 } END { printf "%.4f", s / NR }')
    awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' ||
        fail "$kind: loss did not fall (first 3 displays $first -> last 3 $last)"
    echo "ok: $kind: mean loss of the first 3 displays $first -> last 3 $last"

    echo "-- check: dataconv mean = compute_image_mean"
    "$MEAN_TOOL" -backend lmdb train.lmdb caffe_mean.binaryproto >mean.log 2>&1 ||
        { cat mean.log; fail "$kind: compute_image_mean failed"; }
    "$DATACONV" mean train.lmdb libdata_mean.binaryproto >mean.log 2>&1 ||
        { cat mean.log; fail "$kind: dataconv mean failed"; }
    cmp caffe_mean.binaryproto libdata_mean.binaryproto ||
        fail "$kind: dataconv mean differs from compute_image_mean"
    echo "ok: $kind: same mean.binaryproto"

    echo "-- check: dataconv takes Caffe's LMDB as input (issue 29): -> HDF5 -> LMDB, q70"
    for cmd in "train.lmdb back.h5" "back.h5 back.lmdb" "train.lmdb q70.h5 --quality 70"; do
        # shellcheck disable=SC2086 # the words of each command
        "$DATACONV" -q $cmd >dc.log 2>&1 || { cat dc.log; fail "$kind: dataconv $cmd failed"; }
    done
    SRC=$SRC "${PYTHON:-/usr/bin/python3}" - "$kind" <<'PY' || fail "$kind: dataconv's copies of Caffe's LMDB differ"
import hashlib, io, os, sys
import h5py, lmdb, numpy as np
from PIL import Image
sys.path.insert(0, os.environ["SRC"] + "/tests/python")
from lmdb_caffe_pb import Datum  # python3-protobuf, not libdata
kind = sys.argv[1]
def records(path):
    with lmdb.open(path, readonly=True, lock=False) as env, env.begin() as t:
        for key, val in t.cursor():
            if key.startswith(b"__"):
                continue
            d = Datum()
            d.ParseFromString(val)
            yield key, d
caffe = list(records("train.lmdb"))
ours = list(records("back.lmdb"))
h, q = h5py.File("back.h5", "r"), h5py.File("q70.h5", "r")
assert len(caffe) == len(ours) == len(h["label"]) == len(q["label"]), len(caffe)
md5 = lambda b: hashlib.md5(bytes(b)).hexdigest()
for i, ((k, d), (k2, d2)) in enumerate(zip(caffe, ours)):
    name = k.decode().split("_", 1)[1]
    assert h["filename"][i].decode() == name and k2.decode().endswith(name), (k, k2)
    assert h["label"][i] == d.label == d2.label == q["label"][i], (k, d.label, d2.label)
    if kind in ("raw", "gray"):  # pixels equal: Caffe -> HDF5 -> LMDB
        px = np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width)
        assert np.array_equal(h["data"][i], px), k
        assert d2.data == d.data and not d2.encoded, k
    else:  # the encoded bytes copied unchanged, both ways
        o = h["offsets"]
        assert md5(h["encoded"][o[i]:o[i + 1]]) == md5(d.data) == md5(d2.data), k
        assert d2.encoded, k
    o = q["offsets"]
    im = Image.open(io.BytesIO(bytes(q["encoded"][o[i]:o[i + 1]])))
    assert im.format == "JPEG" and im.size == (32, 32), (k, im.format, im.size)
print(f"ok: {kind}: {len(caffe)} records: labels and names equal; "
      + ("pixels equal (HDF5), Datums equal (LMDB)" if kind in ("raw", "gray")
         else "encoded bytes identical (md5) in HDF5 and LMDB")
      + "; --quality 70 gives 32x32 JPEGs")
PY
    cat >back_Data.prototxt <<NET
layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TEST }
  data_param { source: "back.lmdb" batch_size: 16 backend: LMDB }
  transform_param { crop_size: 28 mean_value: 128 scale: 0.00390625 } }
NET
    LD_PRELOAD="$PRELOAD" "$CHECK" back_Data.prototxt 2 >back.out 2>back.err ||
        { cat back.err back.out; fail "$kind: stock Data layer on dataconv's copy"; }
    [ "$(grep -c 'EQUAL$' back.out)" -eq 2 ] || fail "$kind: Data on back.lmdb: 2 EQUAL batches"
    echo "ok: $kind: Caffe's stock Data layer reads dataconv's copy (2 batches equal the reader)"
done

# -encoded without -resize_*: the original files, of different sizes (64x64 .. 640x120). The
# layer needs a crop no larger than the smallest image, and says so when it has none.
echo
echo "== sizes: convert_imageset -encoded (no resize)"
cd "$TMP"
"$CONVERT" -encoded "$SRC/samples/images/" "$SRC/samples/val.txt" sizes.lmdb >convert.log 2>&1 ||
    { cat convert.log; fail "sizes: convert_imageset failed"; }
# The first file of val.txt is a grayscale JPEG, kept as it is: the first record gives the
# database 1 channel. Caffe's Data layer then stops at the first colour image unless
# force_color; LibData stops too (never turns colour images gray) and takes force_color.
for crop in 0 28; do
    for force in "" force_color; do
        for type in LibData Data; do
            backend=
            [ "$type" = Data ] && backend="backend: LMDB"
            cat >"sizes_${type}_$crop$force.prototxt" <<NET
layer { name: "data" type: "$type" top: "data" top: "label" include { phase: TEST }
  data_param { source: "sizes.lmdb" batch_size: 16 $backend }
  transform_param { crop_size: $crop mean_value: 128 scale: 0.00390625 ${force:+$force: true} } }
NET
        done
    done
done
echo "-- check: no crop_size: a Caffe fatal error that says to crop or resize"
set +e
LD_PRELOAD="$PRELOAD" "$CHECK" sizes_LibData_0force_color.prototxt 2 >sizes.out 2>sizes.err
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "sizes: read images of different sizes without a crop"
grep -q "LibData layer 'data'.*sizes.lmdb.*crop" sizes.err ||
    { cat sizes.err; fail "sizes: the fatal message does not name the file and the crop"; }
grep "^F" sizes.err | sed 's/^.*\] //'
echo "-- check: crop_size 28, gray first record, no force_color: stops at the first colour image"
set +e
LD_PRELOAD="$PRELOAD" "$CHECK" sizes_LibData_28.prototxt 2 >sizes.out 2>sizes.err
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "sizes: colour images read through a gray first record without force_color"
grep -q "is a colour image but the first sample.*force_color" sizes.err ||
    { cat sizes.err; fail "sizes: the fatal message does not say to use force_color"; }
grep "^F" sizes.err | sed 's/^.*\] //'
echo "-- check: crop_size 28 + force_color: LibData and stock Data layers equal libdata's reader"
for type in LibData Data; do
    LD_PRELOAD="$PRELOAD" "$CHECK" "sizes_${type}_28force_color.prototxt" 2 >sizes.out 2>sizes.err ||
        { cat sizes.err sizes.out; fail "sizes: $type layer, crop_size 28, force_color vs reader"; }
    cat sizes.out
    [ "$(grep -c 'EQUAL$' sizes.out)" -eq 2 ] || fail "sizes: $type: 2 EQUAL batches expected"
done
echo
echo "ok: convert_imageset's raw, gray, encoded JPEG and PNG LMDBs read and train through LibData"
