#!/usr/bin/env bash
# The Python bindings (bindings/python, ctypes) against the library this build made: the pytest
# suites tests/python/test_py_*.py (convert, reader, torch adapter; cross-checked with h5py,
# python-lmdb, protobuf) and the read_batches.py example.
set -euo pipefail
: "${LIBDATA_LIBRARY:?set LIBDATA_LIBRARY to the built libdata.so}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

# A 32-bit build (scripts/ci_32bit.sh) cannot be loaded by this machine's 64-bit python3, and
# Debian has no co-installable 32-bit python: say so instead of failing.
lib_bits=$(od -An -j4 -N1 -tu1 "$LIBDATA_LIBRARY" | tr -d ' ')
py_bits=$("$PYTHON" -c 'import struct; print(struct.calcsize("P") * 8)')
if [ "$lib_bits" = 1 ] && [ "$py_bits" = 64 ]; then
    echo "skipped: $LIBDATA_LIBRARY is a 32-bit library; $PYTHON is 64-bit and cannot load it"
    echo "         (a 32-bit python3 runs these suites: PYTHON=/path/to/python3-32bit)"
    exit 77
fi

# An ASan-instrumented library cannot be dlopen()ed by an uninstrumented python3 (the ASan
# runtime must come first in the process). Say so instead of failing. LIBDATA_PY_ASAN=1 (set by
# scripts/test.sh for its ASan build) runs the suites anyway with the runtimes preloaded (leak
# checks off: python itself "leaks"). DATACONV is then the ASan build's own dataconv, so the
# tests that make their datasets with it run too. Left out: the RSS-growth test (ASan's
# quarantine holds freed memory) and the tests that start a second python (not the point).
# (Captured, not piped into grep -q: with pipefail, grep's early exit fails the pipeline.)
deps=$(ldd "$LIBDATA_LIBRARY" 2>&1 || true)
select=()
case "$deps" in
*libasan*)
    if [ "${LIBDATA_PY_ASAN:-0}" != 1 ]; then
        echo "skipped: python cannot load an ASan-instrumented library ($LIBDATA_LIBRARY)"
        echo "         (LIBDATA_PY_ASAN=1 runs the suites with the ASan runtime preloaded)"
        exit 77
    fi
    LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
    case "$deps" in *libubsan*) LD_PRELOAD="$LD_PRELOAD $(gcc -print-file-name=libubsan.so)";;
    esac
    export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0
    select=(-k "not memory_growth and not package_folder and not bad_environment and not importing")
    echo "note: running under ASan with LD_PRELOAD=$LD_PRELOAD" ;;
*libtsan*)
    echo "skipped: python cannot load a TSan-instrumented library ($LIBDATA_LIBRARY)"
    exit 77 ;;
esac

export LIBDATA_LIBRARY LD_TEST_DATA
export PYTHONPATH="$SRC/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/libdata-py.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "check: pytest tests/python/test_py_*.py"
cd "$TMP"
# faulthandler_timeout: a test that hangs prints every thread's Python stack after 240 s, so
# that ctest's timeout (900 s) leaves more than "72 dots" to go on (once, in an ASan run).
"$PYTHON" -m pytest -q -p no:cacheprovider -o faulthandler_timeout=240 --basetemp="$TMP/pytest" \
    "${select[@]}" "$SRC"/tests/python/test_py_*.py

echo "check: samples/examples/read_batches.py on the fixture tree"
"$PYTHON" "$SRC/samples/examples/read_batches.py" "$LD_TEST_DATA/tree" "$TMP/tree.h5" \
    > "$TMP/out"
grep -q "samples" "$TMP/out" || { cat "$TMP/out" >&2; echo "FAIL: read_batches.py" >&2; exit 1; }
echo "ok"
