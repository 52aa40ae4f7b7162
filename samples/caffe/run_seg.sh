#!/usr/bin/env bash
# Segmentation masks in Caffe, unchanged: dataconv's HDF5 /label (N, 1, H, W) and LMDB mask
# database train a tiny fully convolutional net with stock Caffe layers, and libdata's LibData
# layer gives a batch x 1 x H x W label top, cropped and mirrored with its images.
# dataconv converts the segmentation sample (samples/seg.txt, samples/masks: 160 images, class
# indices 0 background, 1..4 the shape's class) at 48x48, --mode pad (the padding's mask is 255,
# ignored by the loss); make_seg_data.py prints the baselines; then 300 iterations of the net of
# seg_*_train.prototxt (3x3 convolutions + ReLU, dilation 1, 2, 4, 8, a 1x1 convolution to 5
# classes, SoftmaxWithLoss { ignore_label: 255 }, Accuracy { ignore_label: 255 }) each way:
#   seg_hdf5           HDF5Data (seg.h5: /data uint8 (N, 3, 48, 48), /label uint8 (N, 1, 48, 48))
#   seg_lmdb           two Data layers (seg.lmdb + seg-masks.lmdb, shuffled at conversion)
#   seg_libdata        LibData layer on seg.h5, crop_size 40 and mirror (random in TRAIN)
#   seg_libdata_lmdb   LibData layer on the LMDB pair seg.lmdb, the same transforms
# Each way must (1) lower the loss: the mean of the last 20 iterations below 0.7 x the mean of
# the first 20, (2) end below 0.7 x the loss of the best constant prediction (the entropy of
# the class frequencies over the pixels that are not 255; for the LibData ways over the random
# 40x40 crops), which masks out of step with their images could not beat, and (3) end with a
# pixel accuracy (mean of the last 20 iterations' training batches) above the share of the most
# frequent class. Every way must log its label top as batch x 1 x H x W: "Top shape: 16 1 48 48
# (36864)" (for the LibData ways 16 1 40 40 (25600)). The LibData ways also compare the layer's
# first two batches (TEST phase: file order, center crop), data and every mask value, with
# libdata's reader (caffe_first_batch), and so does stock HDF5Data on seg.h5 (with shuffle off:
# Caffe's own reading of /label against libdata's).
# With the layer, seg_align then checks that its masks get exactly their images' random crop and
# mirror in the TRAIN phase: on align.h5 (make_seg_data.py --align: pictures whose pixels are
# 50 x their masks' class indices) seg_align_train.prototxt's EuclideanLoss between data channel
# 0 and 50 x the label top must be exactly 0 at each of its 100 iterations.
#
# Usage: CAFFE_ROOT=/path/to/caffe samples/caffe/run_seg.sh [WORKDIR]
# Optional: DATACONV, LIBDATA_CAFFE_LAYER (libdata_caffe_layer.so), CAFFE_FIRST_BATCH, PYTHON
# (with numpy and h5py; default /usr/bin/python3); by default the programs are looked up in the
# build*/ directories of this checkout. Without the layer the libdata ways are skipped.
# Exit status: 0 when every way passed the three checks and showed its label top (and, with the
# layer, the alignment check passed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
: "${CAFFE_ROOT:?set CAFFE_ROOT to a Caffe build (source tree, CMake build or install directory)}"
PYTHON=${PYTHON:-/usr/bin/python3} # python3 on PATH may lack numpy / h5py
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/libdata-caffe-seg.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SIZE=48 # dataconv --resize
CROP=40 # the LibData ways' crop_size (seg_libdata_train.prototxt)
BATCH=16

. "$HERE/caffe_tools.sh"
CAFFE=$(caffe_tool caffe) || {
    echo "no caffe tool under $CAFFE_ROOT: build Caffe first (bindings/caffe/README.md)" >&2
    exit 1
}
DATACONV=${DATACONV:-$(find_built dataconv)}
if [ -z "$DATACONV" ] || [ ! -x "$DATACONV" ]; then
    echo "no dataconv: build libdata (or set DATACONV)" >&2
    exit 1
fi
LAYER=${LIBDATA_CAFFE_LAYER:-$(find_built bindings/caffe/libdata_caffe_layer.so)}
CHECK=${CAFFE_FIRST_BATCH:-$(find_built bindings/caffe/caffe_first_batch)}
ways="seg_hdf5 seg_lmdb"
if [ -n "$LAYER" ] && [ -e "$LAYER" ]; then
    ways="$ways seg_libdata seg_libdata_lmdb"
    PRELOAD=$(caffe_preload "$LAYER") # the layer, after any sanitizer runtimes it links
else
    echo "(no libdata_caffe_layer.so: the LibData ways are skipped; configure libdata with" \
         "-DLIBDATA_BUILD_CAFFE=ON)"
    PRELOAD=
fi
echo "caffe:   $CAFFE"
echo "work in: $WORK"

cd "$WORK"
rm -rf seg.h5 seg.lmdb seg-masks.lmdb seg_h5.txt ./seg_*.prototxt ./seg_*.log align align.h5
# A list without class labels: the masks are the label (HDF5 /label (N, 1, H, W); LMDB: the
# images in seg.lmdb with label 0, the masks in seg-masks.lmdb). The LMDB is shuffled at
# conversion, as convert_imageset -shuffle, since the Data layer reads it in order (the mask
# database gets the same keys, so it is in the same order); HDF5Data shuffles itself.
conv=(--list "$SRC/samples/seg.txt" --root "$SRC/samples/images" --masks "$SRC/samples/masks"
      --resize "$SIZE" --mode pad)
"$DATACONV" -q "${conv[@]}" seg.h5
"$DATACONV" -q "${conv[@]}" seg.lmdb --shuffle
[ -d seg-masks.lmdb ] || { echo "FAIL: no seg-masks.lmdb" >&2; exit 1; }
"$PYTHON" "$HERE/make_seg_data.py" seg.h5 "$CROP" | tee baselines.txt
echo "$WORK/seg.h5" >seg_h5.txt # HDF5Data's source: a list of .h5 files
cp "$HERE"/seg_*.prototxt .
# The LibData layer on the LMDB pair: the same net with the other source.
sed -e 's/source: "seg.h5"/source: "seg.lmdb"/' -e 's/^name: "seg_libdata"/name: "seg_libdata_lmdb"/' \
    seg_libdata_train.prototxt >seg_libdata_lmdb_train.prototxt
sed 's/seg_libdata_train/seg_libdata_lmdb_train/' seg_libdata_solver.prototxt \
    >seg_libdata_lmdb_solver.prototxt
# HDF5Data in file order, for caffe_first_batch (HDF5Data shuffles in TEST too when asked).
sed 's/ shuffle: true//' seg_hdf5_train.prototxt >seg_hdf5_ordered.prototxt

status=0
for way in $ways; do
    case $way in
        seg_libdata*) base=$(awk '/^baseline crop/ { print $4, $5 }' baselines.txt)
                      hw="$CROP $CROP" ;;
        *) base=$(awk '/^baseline full/ { print $5, $6 }' baselines.txt)
           hw="$SIZE $SIZE" ;;
    esac
    read -r base_loss base_acc <<<"$base"
    echo
    echo "== $way: caffe train --solver=${way}_solver.prototxt (log: $WORK/$way.log)"
    start=$(date +%s.%N)
    if ! LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 \
            "$CAFFE" train --solver="${way}_solver.prototxt" >"$way.log" 2>&1; then
        tail -n 20 "$way.log"
        echo "FAIL: $way: caffe train failed"
        status=1
        continue
    fi
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    # The data layers' tops as Caffe set them up: the lines between "Setting up data" (or
    # "label", the Data layer on the mask database) and the next layer (the loss's bottoms have
    # that shape too, so the whole log will not do).
    tops=$(awk '/Setting up (data|label)$/ { on = 1; next } /Setting up|Creating Layer/ { on = 0 }
                on && /Top shape: / { sub(/^.*\] /, ""); print }' "$way.log")
    echo "$tops"
    read -r h w <<<"$hw"
    want="Top shape: $BATCH 1 $h $w ($((BATCH * h * w)))"
    if grep -qxF "$want" <<<"$tops"; then
        echo "ok: $way: label top $BATCH x 1 x $h x $w"
    else
        echo "FAIL: $way: no label top of $BATCH x 1 x $h x $w ('$want') in the log"
        status=1
    fi
    # One batch's loss is noisy: compare the means of the first and the last 20 iterations.
    losses=$(grep -E "Iteration [0-9]+.*, loss = " "$way.log" | sed 's/.*loss = //')
    accs=$(grep -E "Train net output #[0-9]+: accuracy = " "$way.log" | sed 's/.*accuracy = //')
    n=$(echo "$losses" | grep -c . || true)
    [ "$n" -ge 40 ] || { echo "FAIL: $way: $n losses logged, expected 300"; status=1; continue; }
    first=$(echo "$losses" | head -n 20 | awk '{ s += $1 } END { printf "%.5f", s / NR }')
    last=$(echo "$losses" | tail -n 20 | awk '{ s += $1 } END { printf "%.5f", s / NR }')
    acc=$(echo "$accs" | tail -n 20 | awk '{ s += $1 } END { printf "%.4f", NR ? s / NR : 0 }')
    echo "$way: $n iterations in ${secs}s; mean loss of the first 20 $first, of the last 20" \
         "$last; constant prediction $base_loss; pixel accuracy of the last 20 $acc, most" \
         "frequent class $base_acc"
    if awk -v a="$first" -v b="$last" -v c="$base_loss" \
            'BEGIN { exit !(b < 0.7 * a && b < 0.7 * c) }'; then
        echo "ok: $way: loss fell and beat the constant prediction"
    else
        echo "FAIL: $way: the last 20 iterations' loss $last is not below 0.7 x both the first" \
             "20's $first and the constant prediction's $base_loss"
        status=1
    fi
    if awk -v a="$acc" -v b="$base_acc" 'BEGIN { exit !(a > b) }'; then
        echo "ok: $way: pixel accuracy above the most frequent class's"
    else
        echo "FAIL: $way: pixel accuracy $acc is not above the most frequent class's $base_acc"
        status=1
    fi
    net=
    case $way in
        seg_hdf5) net=seg_hdf5_ordered.prototxt ;;
        seg_libdata*) net=${way}_train.prototxt ;;
    esac
    if [ -n "$net" ] && [ -n "$CHECK" ] && [ -x "$CHECK" ]; then
        echo "-- first batches of $net vs libdata's reader:"
        LD_PRELOAD="$PRELOAD" GLOG_minloglevel=1 "$CHECK" "$net" 2 || {
            echo "FAIL: $way: the first batches of $net differ from libdata's reader"
            status=1
        }
    fi
done

if [ -n "$PRELOAD" ]; then
    echo
    echo "== seg_align: caffe train --solver=seg_align_solver.prototxt (log: $WORK/seg_align.log)"
    mkdir align
    "$PYTHON" "$HERE/make_seg_data.py" --align "$SRC/samples/seg.txt" "$SRC/samples/masks" align
    "$DATACONV" -q --list align/align.txt --root align/images --masks align/masks align.h5
    if LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 \
            "$CAFFE" train --solver=seg_align_solver.prototxt >seg_align.log 2>&1; then
        losses=$(grep -E "Iteration [0-9]+.*, loss = " seg_align.log | sed 's/.*loss = //')
        n=$(echo "$losses" | grep -c . || true)
        nonzero=$(echo "$losses" | awk '$1 != 0' | grep -c . || true)
        mean=$(grep -E "Train net output #[0-9]+: label_mean = " seg_align.log |
               sed 's/.*= //' | awk '{ s += $1 } END { printf "%.4f", NR ? s / NR : 0 }')
        echo "seg_align: $n iterations of random 40x40 crops and mirrors, $nonzero with a loss" \
             "other than 0 (data channel 0 vs 50 x label); mean class index $mean"
        if [ "$n" -ge 100 ] && [ "$nonzero" -eq 0 ] &&
                awk -v m="$mean" 'BEGIN { exit !(m > 0) }'; then
            echo "ok: seg_align: the masks got their images' crops and mirrors"
        else
            echo "FAIL: seg_align: masks and images apart (or no masks) in the TRAIN phase"
            status=1
        fi
    else
        tail -n 20 seg_align.log
        echo "FAIL: seg_align: caffe train failed"
        status=1
    fi
fi
exit $status
