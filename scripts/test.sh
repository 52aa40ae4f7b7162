#!/usr/bin/env bash
# Build everything and run all tests of the normal build; with --asan, then the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer in a separate build directory (CI runs both:
# .ci/run). Prints ctest's summary and the ten slowest tests of each run.
# Usage: scripts/test.sh [--asan]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
root=$(pwd)
# slowest LOG: the ten slowest tests of a ctest log, seconds first
slowest() {
    echo "== the ten slowest tests ($1)"
    sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$2" | sort -rn | head -10
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# with dataconv's MPI mode (the library stays MPI-free), so that tests/cli/mpi_*.sh run
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBDATA_BUILD_TESTS=ON -DLIBDATA_WITH_MPI=ON >/dev/null
cmake --build build -j"$jobs"
status=0
(cd build && ctest --output-on-failure -j"$jobs") 2>&1 | tee "$log" || status=1
slowest "normal build" "$log"
if [ "${1:-}" = --asan ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIBDATA_SANITIZE=address,undefined -DLIBDATA_BUILD_TESTS=ON \
        -DLIBDATA_WITH_MPI=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    # LIBDATA_PY_ASAN=1: the Python suites too, with the ASan runtime preloaded into python3
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$root/tests/lsan.supp" \
        LIBDATA_PY_ASAN=1 ctest --output-on-failure -j"$jobs") 2>&1 | tee "$log" || status=1
    slowest "ASan+UBSan build" "$log"
elif [ -n "${1:-}" ]; then
    echo "usage: $0 [--asan]" >&2
    exit 2
fi
exit $status
