#!/usr/bin/env bash
# Build libdata + dataconv and run the main job on the bundled samples: convert samples/images
# to raw and JPEG-q70 HDF5 and to a Caffe LMDB, describe them, and stream shuffled batches.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLIBDATA_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
rm -rf build/demo && mkdir -p build/demo
set -x
build/dataconv samples/images build/demo/samples.h5 --resize 64
build/dataconv samples/images build/demo/samples_q70.h5 --quality 70 --resize 64 --mode crop
build/dataconv samples/images build/demo/samples.lmdb --resize 64 --shuffle --seed 1
build/dataconv info build/demo/samples.h5
build/dataconv info build/demo/samples.lmdb
build/dataconv bench build/demo/samples_q70.h5 --batch 32 --shuffle --epochs 2
