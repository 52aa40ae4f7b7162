#!/usr/bin/env bash
# Build libdata + dataconv and run the main job on the bundled samples:
# convert samples/images to a 64x64 raw HDF5 file and a JPEG-q70 HDF5 file, and describe them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLIBDATA_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p build/demo
set -x
build/dataconv samples/images build/demo/samples.h5 --resize 64
build/dataconv samples/images build/demo/samples_q70.h5 --quality 70 --resize 64 --mode crop
build/dataconv info build/demo/samples.h5
