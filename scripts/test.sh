#!/usr/bin/env bash
# Build everything and run all tests: the normal build, then the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer in a separate build directory.
# Usage: scripts/test.sh [--no-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
root=$(pwd)
# with dataconv's MPI mode (the library stays MPI-free), so that tests/cli/mpi_*.sh run
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBDATA_BUILD_TESTS=ON -DLIBDATA_WITH_MPI=ON >/dev/null
cmake --build build -j"$jobs"
status=0
(cd build && ctest --output-on-failure -j"$jobs") || status=1
if [ "${1:-}" != --no-asan ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIBDATA_SANITIZE=address,undefined -DLIBDATA_BUILD_TESTS=ON \
        -DLIBDATA_WITH_MPI=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    # LIBDATA_PY_ASAN=1: the Python suites too, with the ASan runtime preloaded into python3
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$root/tests/lsan.supp" \
        LIBDATA_PY_ASAN=1 ctest --output-on-failure -j"$jobs") || status=1
fi
exit $status
