#!/usr/bin/env bash
# Train the tiny net of samples/caffe for 100 iterations three ways, on datasets that dataconv
# makes from samples/images:
#   1. libdata's layer (type "LibData", LD_PRELOAD'ed)   train.h5 + val.lmdb
#   2. Caffe's stock Data layer, backend LMDB             train.lmdb + val.lmdb
#   3. Caffe's stock HDF5Data layer                       train_split.txt + val_split.txt
# then check that each net's first test batches equal libdata's reader (caffe_first_batch).
#
# Usage: CAFFE_ROOT=/path/to/caffe samples/caffe/run_all.sh [WORKDIR]
# CAFFE_ROOT: a Caffe source tree built with its Makefile (tools in build/tools), or a CMake build
# or install directory (tools/ or bin/), as given to -DCAFFE_ROOT.
# Optional: DATACONV, LIBDATA_CAFFE_LAYER (libdata_caffe_layer.so), CAFFE_FIRST_BATCH; by default
# they are looked up in the build*/ directories of this checkout. Caffe is not built here: build
# it yourself (bindings/caffe/README.md) and configure libdata with -DLIBDATA_BUILD_CAFFE=ON.
# Exit status: 0 when the loss fell in all three runs and every first-batch check matched.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
: "${CAFFE_ROOT:?set CAFFE_ROOT to a Caffe build: its source tree (Makefile) or build/install directory (CMake)}"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/libdata-caffe.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

. "$HERE/caffe_tools.sh"
CAFFE=$(caffe_tool caffe) || {
    echo "no caffe tool under $CAFFE_ROOT (build/tools/caffe, tools/caffe or bin/caffe):" \
         "build Caffe first (bindings/caffe/README.md)" >&2
    exit 1
}
DATACONV=${DATACONV:-$(find_built dataconv)}
LAYER=${LIBDATA_CAFFE_LAYER:-$(find_built bindings/caffe/libdata_caffe_layer.so)}
CHECK=${CAFFE_FIRST_BATCH:-$(find_built bindings/caffe/caffe_first_batch)}
for f in "$DATACONV" "$LAYER" "$CHECK"; do
    [ -n "$f" ] && [ -e "$f" ] || {
        echo "missing dataconv, libdata_caffe_layer.so or caffe_first_batch: build libdata" \
             "with -DLIBDATA_BUILD_CAFFE=ON -DCAFFE_ROOT=$CAFFE_ROOT" >&2
        exit 1
    }
done
PRELOAD=$(caffe_preload "$LAYER") # the layer, after any sanitizer runtimes it links
echo "caffe:   $CAFFE"
echo "layer:   $LAYER"
echo "work in: $WORK"

cd "$WORK"
img=$SRC/samples/images
# The list files are sorted by class. Caffe's stock layers read files in stored order (HDF5Data
# only shuffles within a file and the order of files), so their training sets are shuffled at
# conversion, as convert_imageset -shuffle does; libdata's layer reshuffles every epoch itself.
for set in train val; do
    rm -rf "$set.h5" "$set.lmdb" "${set}_split.txt" "${set}_split"-*.h5
    shuffle=
    [ "$set" = train ] && shuffle=--shuffle
    "$DATACONV" -q "$img/" "$SRC/samples/$set.txt" "$set.h5" --resize 32
    "$DATACONV" -q "$img/" "$SRC/samples/$set.txt" "$set.lmdb" --resize 32 $shuffle
    "$DATACONV" -q "$img/" "$SRC/samples/$set.txt" "${set}_split.h5" --resize 32 --split 100K \
        $shuffle
done
cp "$HERE"/*.prototxt .

status=0
for way in libdata data_lmdb hdf5; do
    echo
    echo "== $way: caffe train --solver=${way}_solver.prototxt (log: $WORK/$way.log)"
    # The layer library is preloaded for every way: the stock layers do not need it, and it
    # shows that loading it changes nothing for them.
    if ! /usr/bin/time -f "max RSS %M KiB" env LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 \
            "$CAFFE" train --solver="${way}_solver.prototxt" >"$way.log" 2>&1; then
        tail -n 20 "$way.log"
        echo "FAIL: $way: caffe train failed"
        status=1
        continue
    fi
    grep -E "Iteration [0-9]+ .*loss = |Test net output|max RSS" "$way.log" | sed 's/^.*\] //'
    # One batch's loss is noisy: compare the mean of the first three displays with the last three.
    losses=$(grep -E "Iteration [0-9]+ .*loss = " "$way.log" | sed 's/.*loss = //')
    first=$(echo "$losses" | head -n 3 | awk '{ s += $1 } END { printf "%.4f", s / NR }')
    last=$(echo "$losses" | tail -n 3 | awk '{ s += $1 } END { printf "%.4f", s / NR }')
    if awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }'; then
        echo "ok: $way: mean loss of the first 3 displays $first -> last 3 $last"
    else
        echo "FAIL: $way: loss did not fall (first 3 displays $first -> last 3 $last)"
        status=1
    fi
    echo "-- first test batches of ${way}_train_val.prototxt vs libdata's reader:"
    if ! LD_PRELOAD="$PRELOAD" "$CHECK" "${way}_train_val.prototxt" 2; then
        echo "FAIL: $way: the Caffe layer's batches differ from libdata's reader"
        status=1
    fi
done
# mean_file: Caffe's compute_image_mean on our LMDB; the LibData layer and the stock Data layer
# must both equal the reader (full-size mean cropped with the image, as Caffe's transformer).
if MEAN_TOOL=$(caffe_tool compute_image_mean); then
    echo
    echo "== mean_file: compute_image_mean train.lmdb, then LibData and Data layers vs the reader"
    GLOG_logtostderr=1 "$MEAN_TOOL" -backend lmdb train.lmdb mean.binaryproto >mean.log 2>&1 ||
        { cat mean.log; echo "FAIL: compute_image_mean"; exit 1; }
    # dataconv mean writes the same file, from the LMDB or from the HDF5 file of the same images.
    for src in train.lmdb train.h5; do
        if "$DATACONV" mean "$src" dataconv_mean.binaryproto >mean.log 2>&1 &&
                cmp -s mean.binaryproto dataconv_mean.binaryproto; then
            echo "ok: dataconv mean $src = compute_image_mean train.lmdb (byte for byte)"
        else
            cat mean.log
            echo "FAIL: dataconv mean $src differs from compute_image_mean train.lmdb"
            status=1
        fi
    done
    for type in LibData Data; do
        backend=
        [ "$type" = Data ] && backend="backend: LMDB"
        cat >"mean_$type.prototxt" <<NET
layer { name: "data" type: "$type" top: "data" top: "label" include { phase: TEST }
  data_param { source: "train.lmdb" batch_size: 16 $backend }
  transform_param { crop_size: 28 mean_file: "mean.binaryproto" scale: 0.00390625 } }
NET
        LD_PRELOAD="$PRELOAD" "$CHECK" "mean_$type.prototxt" 2 || status=1
    done
else
    echo "(no compute_image_mean under $CAFFE_ROOT: mean_file check skipped)"
fi
exit $status
