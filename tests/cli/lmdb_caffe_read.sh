#!/usr/bin/env bash
# LMDBs made as Caffe's convert_imageset makes them (tests/python/lmdb_make_caffe_db.py, no
# libdata.json) and ours made without --resize: `dataconv bench` reads them through the C
# reader with the shape from the first record (Datum fields or image header), refuses records
# of another size naming --crop/--resize, and reads them with --crop; `dataconv info` says what
# the reader gives (BGR) and where the shape comes from; empty databases and folders of images.
source "$(dirname "$0")/lib/common.sh"

mk() { "$PYTHON" "$SRC/tests/python/lmdb_make_caffe_db.py" "$@"; }
P=$LD_TEST_DATA/photos
# landscape photos (375 x 500) and one portrait (500 x 375): p00 is portrait
same=("$P/p01.jpg" "$P/p02.jpg" "$P/p03.jpg" "$P/p04.jpg")
mixed=("$P/p01.jpg" "$P/p00.jpg" "$P/p02.jpg")

check "convert_imageset --encoded (JPEG file bytes, no shape in the Datum): bench reads it"
mk "$TMP/jpg" cis-jpg "${same[@]}"
run "$DATACONV" bench "$TMP/jpg" --epochs 1 --batch 2
expect_rc 0
expect_out "4 samples, batch 2 x 3x375x500 uint8"

check "convert_imageset --encoded --encode_type=png, keys without %08d_: bench reads it"
mk "$TMP/png" cis-png,keys=plain "${same[@]}"
run "$DATACONV" bench "$TMP/png" --epochs 1 --batch 2
expect_rc 0
expect_out "4 samples, batch 2 x 3x375x500 uint8"

check "convert_imageset --encoded --gray --resize: one channel"
mk "$TMP/gray" cis-jpg,gray,resize=40x30 "${same[@]}"
run "$DATACONV" bench "$TMP/gray" --epochs 1 --batch 2
expect_rc 0
expect_out "batch 2 x 1x30x40 uint8"

check "convert_imageset raw: bench reads it"
mk "$TMP/raw" cis-raw,resize=40x30 "${same[@]}"
run "$DATACONV" bench "$TMP/raw" --epochs 1 --batch 2
expect_rc 0
expect_out "batch 2 x 3x30x40 uint8"

check "sizes that differ: refused with what to do, read with --crop"
mk "$TMP/mixed" cis-jpg "${mixed[@]}"
run "$DATACONV" bench "$TMP/mixed" --epochs 1 --batch 2
expect_rc 1
expect_err "sample 1 decodes to 375x500, not the dataset's 500x375"
expect_err "the images differ in size"
expect_err "in dataconv bench that is --crop WxH (crop_w)"
expect_err "convert with resize_w and resize_h"
run "$DATACONV" bench "$TMP/mixed" --epochs 1 --batch 2 --crop 300x200
expect_rc 0
expect_out "batch 2 x 3x200x300 uint8"
run "$DATACONV" bench "$TMP/mixed" --epochs 1 --batch 2 --crop 300x200 --random-crop
expect_rc 0

check "ours, --encoded without --resize (height/width 0 in libdata.json): --crop reads it"
mkdir -p "$TMP/tree/a" "$TMP/tree/b"
cp "$P/p01.jpg" "$P/p00.jpg" "$TMP/tree/a/"
cp "$P/p02.jpg" "$TMP/tree/b/"
run "$DATACONV" "$TMP/tree" "$TMP/ours.lmdb" --encoded -q
expect_rc 0
grep -q '"height": 0' "$TMP/ours.lmdb/libdata.json" || fail "libdata.json has a height"
run "$DATACONV" bench "$TMP/ours.lmdb" --epochs 1 --batch 3 --crop 64
expect_rc 0
expect_out "3 samples, batch 3 x 3x64x64 uint8"
run "$DATACONV" bench "$TMP/ours.lmdb" --epochs 1 --batch 3
expect_rc 1
expect_err "--crop"

check "ours, raw, libdata.json removed: read as any other LMDB"
run "$DATACONV" "$TMP/tree" "$TMP/raw.lmdb" --resize 20x10 -q
expect_rc 0
rm "$TMP/raw.lmdb/libdata.json"
run "$DATACONV" bench "$TMP/raw.lmdb" --epochs 1 --batch 3
expect_rc 0
expect_out "3 samples, batch 3 x 3x10x20 uint8"

check "info on convert_imageset --encoded: BGR (what the reader gives), shape from the header"
run "$DATACONV" info "$TMP/jpg"
expect_rc 0
expect_out "shape: 3 x 375 x 500 (CHW, from the first record's image header)"
expect_out "channel order: BGR after decoding"
expect_out "sizes: all 4 records have the first one's shape"
if grep -qi "rgb\|decoded)" "$TMP/out"; then cat "$TMP/out" >&2; fail "info says RGB/decoded"; fi

check "info on ours --encoded: shape from the Datum fields, sizes that vary, what to do"
run "$DATACONV" info "$TMP/ours.lmdb"
expect_rc 0
expect_out "shape: 3 x 500 x 375 (CHW, from the first record's Datum fields)"
expect_out "sizes: vary (375..500 x 375..500 in the first 3 records)"
expect_out "--crop WxH"
expect_out "channel order: BGR after decoding"

check "info on ours --encoded --resize: every record's shape from libdata.json"
run "$DATACONV" "$TMP/tree" "$TMP/ours32.lmdb" --encoded --resize 32 -q
expect_rc 0
run "$DATACONV" info "$TMP/ours32.lmdb"
expect_rc 0
expect_out "shape: 3 x 32 x 32 (CHW, every record's, from libdata.json)"

check "info on ours --encoded --rgb: RGB for libdata's reader, BGR for Caffe"
run "$DATACONV" "$TMP/tree" "$TMP/rgb.lmdb" --encoded --resize 32 --rgb -q
expect_rc 0
run "$DATACONV" info "$TMP/rgb.lmdb"
expect_rc 0
expect_out "channel order: RGB after decoding by libdata's reader"
expect_out "Caffe's Data layer decodes to BGR"

check "info on a gray encoded database: GRAY"
run "$DATACONV" info "$TMP/gray"
expect_rc 0
expect_out "shape: 1 x 30 x 40"
expect_out "channel order: GRAY"

check "info on an empty LMDB: exit 0, 0 samples (as for an empty HDF5 file); bench refuses it"
"$PYTHON" -c 'import lmdb, sys; lmdb.open(sys.argv[1]).close()' "$TMP/empty"
run "$DATACONV" info "$TMP/empty"
expect_rc 0
expect_out "entries: 0 (an empty database: 0 samples)"
run "$DATACONV" bench "$TMP/empty"
expect_rc 1
expect_err "holds no sample"
"$PYTHON" -c 'import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "w") as f:
    f["data"] = np.zeros((0, 3, 8, 8), np.uint8); f["label"] = np.zeros((0,), np.int32)' \
    "$TMP/empty.h5"
run "$DATACONV" info "$TMP/empty.h5"
expect_rc 0
expect_out "samples: 0"

check "info and bench on a folder of images: say so and how to convert it, exit 1"
run "$DATACONV" info "$TMP/tree"
expect_rc 1
expect_err "a folder of images, not a dataset"
expect_err "to make a dataset of a folder of images: dataconv $TMP/tree out.h5"
if grep -q "cannot open LMDB" "$TMP/err"; then show; fail "info still says cannot open LMDB"; fi
run "$DATACONV" bench "$TMP/tree"
expect_rc 1
expect_err "a folder of images, not a dataset"
expect_err "to make a dataset of a folder of images: dataconv $TMP/tree out.h5"
# any image name folder mode lists counts (codec's one list): a class folder of BMP files
mkdir -p "$TMP/bmps/cat"
cp "$(find "$TMP/tree" -name '*.jpg' | head -1)" "$TMP/bmps/cat/a.BMP"
run "$DATACONV" info "$TMP/bmps"
expect_rc 1
expect_err "a folder of images, not a dataset"
mkdir "$TMP/nothing"
run "$DATACONV" info "$TMP/nothing"
expect_rc 1
expect_err "holds no images"
echo "lmdb_caffe_read: all checks passed"
