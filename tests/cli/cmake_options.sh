#!/usr/bin/env bash
# Configuration variants (issue 12 items 9 and 16), configure + generate only:
#  - -DLIBDATA_BUILD_CLI=OFF with the tests on generates (tests that run dataconv are left
#    out, the others stay);
#  - without Criterion, a plain `cmake -S . -B build` (the README's) configures with the tests
#    off and says so; asking for them then fails naming libcriterion-dev. "Without Criterion"
#    is simulated by a find_library() wrapper included before the project that finds nothing
#    for CRITERION_LIBRARY.
set -euo pipefail
: "${SRC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake -S "$SRC" -B "$tmp/nocli" -DLIBDATA_BUILD_CLI=OFF -DLIBDATA_BUILD_TESTS=ON \
    > "$tmp/nocli.log" 2>&1 || { cat "$tmp/nocli.log" >&2; echo "FAIL: -DLIBDATA_BUILD_CLI=OFF" >&2; exit 1; }
grep -q "CLI tests that run dataconv are not added" "$tmp/nocli.log"
(cd "$tmp/nocli" && ctest -N) > "$tmp/nocli.tests"
grep -q "cli_python_bindings" "$tmp/nocli.tests"
grep -q "test_reader" "$tmp/nocli.tests"
if grep -q "cli_convert_h5" "$tmp/nocli.tests"; then
    echo "FAIL: a dataconv test was added without dataconv" >&2; exit 1
fi
echo "ok: -DLIBDATA_BUILD_CLI=OFF configures ($(grep -c 'Test *#' "$tmp/nocli.tests") tests)"


cat > "$tmp/no_criterion.cmake" <<'CMK'
function(find_library var)
  if("${var}" STREQUAL "CRITERION_LIBRARY")
    set(CRITERION_LIBRARY CRITERION_LIBRARY-NOTFOUND CACHE FILEPATH "" FORCE)
  else()
    _find_library(${ARGV})
  endif()
endfunction()
CMK
cmake -S "$SRC" -B "$tmp/plain" -DCMAKE_PROJECT_INCLUDE_BEFORE="$tmp/no_criterion.cmake" \
    > "$tmp/plain.log" 2>&1 || { cat "$tmp/plain.log" >&2; echo "FAIL: plain configure without Criterion" >&2; exit 1; }
grep -q "LIBDATA_BUILD_TESTS:BOOL=OFF" "$tmp/plain/CMakeCache.txt"
grep -q "Tests are off" "$tmp/plain.log"
# asking for them then: the same build folder configured again with -DLIBDATA_BUILD_TESTS=ON
# (the wrapper stays in its cache), which spares a third configure from scratch
if cmake -S "$SRC" -B "$tmp/plain" -DLIBDATA_BUILD_TESTS=ON > "$tmp/asked.log" 2>&1; then
    echo "FAIL: -DLIBDATA_BUILD_TESTS=ON without Criterion configured" >&2; exit 1
fi
grep -q "libcriterion-dev" "$tmp/asked.log" || { cat "$tmp/asked.log" >&2; exit 1; }
echo "ok: without Criterion the default configure has the tests off; asking for them says what to install"

# With Criterion (as here), a plain top-level configure has them on.
cmake -S "$SRC" -B "$tmp/with" > "$tmp/with.log" 2>&1
grep -q "LIBDATA_BUILD_TESTS:BOOL=ON" "$tmp/with/CMakeCache.txt"
echo "cmake_options: ok"
