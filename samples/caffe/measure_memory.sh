#!/usr/bin/env bash
# Peak memory (max RSS) of Caffe reading one dataset each way, for docs/caffe.md.
# Dataset: samples/images listed 10 times (1600 images) at 256x256 = 315 MB of raw pixels.
# Each run is `caffe time` on a net holding only the data layer (batch 64, crop 227 where the
# layer can crop) and a Silence layer, 50 iterations = 2 epochs, so the numbers are the data
# path's: the baseline is the same net with an Input layer of the batch's shape.
# Then the LibData (HDF5) and Data nets again with data_param { prefetch: 1 }.
#
# Usage: CAFFE_ROOT=/path/to/caffe samples/caffe/measure_memory.sh [WORKDIR]
# (DATACONV and LIBDATA_CAFFE_LAYER as for run_all.sh.)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
: "${CAFFE_ROOT:?set CAFFE_ROOT to a Caffe build: its source tree (Makefile) or build/install directory (CMake)}"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/libdata-caffe-mem.XXXXXX")}
mkdir -p "$WORK"
cd "$WORK"
. "$HERE/caffe_tools.sh"
CAFFE=$(caffe_tool caffe) || { echo "no caffe tool under $CAFFE_ROOT" >&2; exit 1; }
DATACONV=${DATACONV:-$(find_built dataconv)}
LAYER=${LIBDATA_CAFFE_LAYER:-$(find_built bindings/caffe/libdata_caffe_layer.so)}
PRELOAD=$(caffe_preload "$LAYER") # the layer, after any sanitizer runtimes it links

if [ ! -e big.h5 ]; then
    for _ in $(seq 10); do cat "$SRC/samples/train.txt" "$SRC/samples/val.txt"; done >big.txt
    img=$SRC/samples/images/
    "$DATACONV" -q "$img" big.txt big.h5 --resize 256
    "$DATACONV" -q "$img" big.txt big_split.h5 --resize 256 --split 64M
    "$DATACONV" -q "$img" big.txt big.lmdb --resize 256
fi

tail='layer { name: "sink" type: "Silence" bottom: "data" bottom: "label" }'
crop='transform_param { crop_size: 227 mirror: true mean_value: 128 scale: 0.00390625 }'
cat >input.prototxt <<NET
layer { name: "data" type: "Input" top: "data" top: "label"
  input_param { shape { dim: 64 dim: 3 dim: 227 dim: 227 } shape { dim: 64 } } }
$tail
NET
for src in big.h5 big.lmdb; do
    cat >"libdata_${src#big.}.prototxt" <<NET
layer { name: "data" type: "LibData" top: "data" top: "label"
  data_param { source: "$src" batch_size: 64 } $crop }
$tail
NET
done
cat >data_lmdb.prototxt <<NET
layer { name: "data" type: "Data" top: "data" top: "label"
  data_param { source: "big.lmdb" backend: LMDB batch_size: 64 } $crop }
$tail
NET
# The same with data_param { prefetch: 1 } (libdata's ring then holds 2 batches, Caffe's queue 1)
for net in libdata_h5 data_lmdb; do
    sed 's/batch_size: 64/batch_size: 64 prefetch: 1/' "$net.prototxt" >"${net}_prefetch1.prototxt"
done
ls big.h5 >big_one.txt
for list in big_one big_split; do
    cat >"hdf5_$list.prototxt" <<NET
layer { name: "data" type: "HDF5Data" top: "data" top: "label"
  hdf5_data_param { source: "$list.txt" batch_size: 64 shuffle: true } }
$tail
NET
done

# peak PID: the largest RssAnon (heap, blobs, batch buffers) and RssFile (mapped files: LMDB's
# map, reclaimable page cache) seen while PID runs, in MiB, sampled every 20 ms.
peak() {
    local pid=$1 anon=0 file=0 a f
    while [ -r "/proc/$pid/status" ]; do
        a=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        f=$(awk '/^RssFile:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
        [ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
        sleep 0.02
    done
    echo "$((anon / 1024)) $((file / 1024))"
}

printf '%-20s %14s %14s %12s %9s\n' net "peak anon MiB" "peak file MiB" "max RSS MiB" seconds
for net in input libdata_h5 libdata_lmdb data_lmdb hdf5_big_split hdf5_big_one \
           libdata_h5_prefetch1 data_lmdb_prefetch1; do
    # The page cache holds the files (warmed by the conversion): reading costs no disk time.
    # (LD_PRELOAD is set by env for caffe only, not for /usr/bin/time.)
    /usr/bin/time -f "%M %e" -o "$net.time" env LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 \
        "$CAFFE" time -model "$net.prototxt" -iterations 50 >"$net.log" 2>&1 &
    tpid=$!
    cpid=
    for _ in $(seq 100); do
        cpid=$(pgrep -P "$tpid" | head -n 1 || true)
        [ -n "$cpid" ] && break
        sleep 0.01
    done
    read -r anon file < <(peak "${cpid:-$tpid}")
    wait "$tpid" || { tail -n 5 "$net.log"; echo "FAIL: $net"; continue; }
    read -r kib secs <"$net.time"
    printf '%-20s %14d %14d %12d %9s\n' "$net" "$anon" "$file" $((kib / 1024)) "$secs"
done
