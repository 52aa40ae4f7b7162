#!/usr/bin/env bash
# CI extras beyond scripts/test.sh (issue 7), meant to be called from .ci/run after it:
#  1. ThreadSanitizer: a -DLIBDATA_SANITIZE=thread build of dataconv running threaded
#     conversions and reader benches (Criterion cannot run under TSan, see below).
#  2. libFuzzer: every tests/fuzz/fuzz_*.c built with clang (ASan + UBSan) and run for
#     FUZZ_SECONDS (default 15) each from a copy of its committed corpus. A crash, leak or
#     timeout in libdata's code fails; one whose innermost frame is inside libhdf5 or liblmdb
#     (bugs of those libraries on malformed files: HDF5 1.10.8's global heap, LMDB trusting its
#     pages) is reported, its input kept under $OUT/upstream/, and fuzzing goes on.
#  3. valgrind memcheck on the README's main job (dataconv samples/images x.h5 --resize 64)
#     and on reading the result back (dataconv bench): no errors, no leaks.
# Prints the counts (fuzz executions per target, TSan tests, valgrind errors). Needs ~6-8 min
# on 2 cores. Env: FUZZ_SECONDS, JOBS, BUILD_TSAN, BUILD_FUZZ, BUILD (a normal build with
# dataconv; made if missing), OUT (artifacts; default build-ci-extra), SKIP="tsan fuzz valgrind".
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build}
BUILD_TSAN=${BUILD_TSAN:-build-tsan}
BUILD_FUZZ=${BUILD_FUZZ:-build-fuzz}
OUT=${OUT:-build-ci-extra}
SKIP=${SKIP:-}
PY=/usr/bin/python3
mkdir -p "$OUT"
status=0
summary=()
t_start=$(date +%s)

need=()
command -v clang >/dev/null || need+=(clang)
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
    need+=(libclang-rt-14-dev)
command -v valgrind >/dev/null || need+=(valgrind)
command -v gdb >/dev/null || need+=(gdb)
if [ ${#need[@]} -gt 0 ]; then
    echo "ci_extra: installing ${need[*]}"
    apt-get install -y -q -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
fi

skip() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- 1. ThreadSanitizer ---------------------------------------------------------------------
# Criterion's test runner cannot start under TSan ("Could not initialize inheritable arena:
# Resource temporarily unavailable", Snaipe/Criterion#274, open), so test_reader/test_convert
# cannot be the TSan run. Instead a TSan build of dataconv exercises the same threaded code:
# the converter's worker pool + ordered sink (-j 2 and -j 3, HDF5 raw/JPEG/encoded, LMDB) and
# the reader's workers + batch ring (`dataconv bench`: sequential, shuffled, block-shuffled,
# 2-4 threads, decode of encoded samples, crops/mirror/f32/mean/scale, several epochs, a tiny
# prefetch). Any race report fails (halt_on_error).
if ! skip tsan; then
    echo "== ThreadSanitizer: threaded conversion and reading (TSan build of dataconv)"
    cmake -S . -B "$BUILD_TSAN" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBDATA_SANITIZE=thread \
          -DLIBDATA_BUILD_TESTS=OFF >/dev/null
    cmake --build "$BUILD_TSAN" -j"$JOBS" --target dataconv >/dev/null
    td=$BUILD_TSAN/testdata
    [ -d "$td/tree" ] || "$PY" tests/data/make_fixtures.py "$td" >/dev/null
    dc=$BUILD_TSAN/dataconv
    w=$OUT/tsan
    rm -rf "$w"
    mkdir -p "$w"
    src=$w/src # the class tree plus the 24 photos twice as two more classes: 57 images
    cp -r "$td/tree" "$src"
    for k in 1 2; do
        mkdir -p "$src/photos$k"
        cp "$td"/photos/p*.jpg "$src/photos$k/"
    done
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 exitcode=66"
    runs=(
        "$dc $src $w/raw.h5 --resize 32 -j 2 -q"
        "$dc $src $w/q.h5 --resize 40 --quality 80 -j 3 -q"
        "$dc $src $w/enc.h5 --max-side 64 --encoded -j 2 -q --shuffle"
        "$dc $src $w/raw.lmdb --resize 32 -j 2 -q"
        "$dc $src $w/enc.lmdb --resize 32 --encoded -j 3 -q"
        "$dc bench $w/raw.h5 -q -j 2 --batch 3 --epochs 3 --shuffle"
        "$dc bench $w/raw.h5 -q -j 4 --batch 2 --epochs 2 --block-shuffle --prefetch 1"
        "$dc bench $w/raw.h5 -q -j 3 --batch 4 --crop 24 --random-crop --mirror --dtype f32 --mean-values 100,110,120 --scale 0.01"
        "$dc bench $w/q.h5 -q -j 3 --batch 4 --epochs 2 --shuffle"
        "$dc bench $w/enc.h5 -q -j 2 --batch 2 --crop 16 --random-crop --epochs 2"
        "$dc bench $w/raw.lmdb -q -j 3 --batch 4 --epochs 2 --shuffle --layout nhwc"
        "$dc bench $w/enc.lmdb -q -j 4 --batch 3 --shuffle --dtype f32"
    )
    ok=0
    for cmd in "${runs[@]}"; do
        # shellcheck disable=SC2086
        if $cmd >"$w/log" 2>&1; then
            ok=$((ok + 1))
        else
            status=1
            echo "   TSan FAILED: $cmd"
            grep -E "WARNING: ThreadSanitizer|SUMMARY|#[0-9] " "$w/log" | head -20
        fi
    done
    unset TSAN_OPTIONS
    summary+=("tsan: $ok of ${#runs[@]} threaded conversion/reader runs clean (no race, no deadlock)")
fi

# ---- 2. libFuzzer ---------------------------------------------------------------------------
# first frame of a sanitizer/libFuzzer report that is not runtime or libc: "upstream" when in
# libhdf5/liblmdb or in the image libraries the TIFF/WebP/GIF decoders call (libtiff and the
# codecs it links, libwebp, giflib)
classify() {
    grep -E '^ +#[0-9]+ 0x' "$1" |
        grep -Ev '__sanitizer|__asan|__ubsan|__interceptor|fuzzer::|libc\.so|/nptl/|abort|raise|__assert|LLVMFuzzerTestOneInput|sanitizer_common|memcpy|memmove|memset|strlen| in malloc | in calloc | in realloc | in free ' |
        head -1 | awk '/libhdf5|liblmdb|libtiff|libwebp|libgif|libjbig|libLerc|libdeflate|libzstd|liblzma/ {print "upstream"; exit} {print "libdata"}'
}
if ! skip fuzz; then
    echo "== libFuzzer: ${FUZZ_SECONDS}s per target"
    CC=clang cmake -S . -B "$BUILD_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLIBDATA_BUILD_FUZZERS=ON -DLIBDATA_BUILD_TESTS=OFF -DLIBDATA_BUILD_CLI=OFF \
        -DLIBDATA_SANITIZE=address,undefined >/dev/null
    cmake --build "$BUILD_FUZZ" -j"$JOBS" --target fuzzers >/dev/null
    mkdir -p "$OUT/upstream" "$OUT/crashes"
    for bin in "$BUILD_FUZZ"/tests/fuzz/fuzz_*; do
        name=$(basename "$bin")
        t=${name#fuzz_}
        work=$OUT/corpus-$t
        rm -rf "$work"
        mkdir -p "$work"
        cp tests/fuzz/corpus/"$t"/* "$work/" 2>/dev/null || true
        execs=0 upstream=0 rounds=0 verdict=ok
        deadline=$(($(date +%s) + FUZZ_SECONDS))
        while :; do
            left=$((deadline - $(date +%s)))
            [ "$left" -ge 2 ] || break
            rounds=$((rounds + 1))
            log=$OUT/fuzz-$t-$rounds.log
            set +e
            ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
                "$bin" -max_total_time="$left" -timeout=5 -rss_limit_mb=2048 \
                -print_final_stats=1 -artifact_prefix="$OUT/crashes/$t-" "$work" >"$log" 2>&1
            rc=$?
            set -e
            n=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | grep -Eo '[0-9]+$' ||
                grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#' || echo 0)
            execs=$((execs + ${n:-0}))
            [ "$rc" -ne 0 ] || break
            art=$(grep -Eo "Test unit written to [^ ]+" "$log" | tail -1 | awk '{print $NF}')
            if [ "$(classify "$log")" = upstream ]; then
                upstream=$((upstream + 1))
                [ -n "$art" ] && mv "$art" "$OUT/upstream/" 2>/dev/null || true
                echo "   $t: crash/timeout inside an upstream library (HDF5, LMDB, libtiff, libwebp, giflib; kept in $OUT/upstream):" \
                     "$(grep -E 'ERROR|SUMMARY' "$log" | head -1)"
                [ "$upstream" -lt 6 ] || break
            else
                verdict="FAILED ($(grep -E 'ERROR|SUMMARY' "$log" | head -1); input $art; log $log)"
                status=1
                break
            fi
        done
        summary+=("fuzz $t: $execs executions in ${FUZZ_SECONDS}s, $upstream upstream crash(es), $verdict")
    done
fi

# ---- 3. valgrind ----------------------------------------------------------------------------
if ! skip valgrind; then
    echo "== valgrind memcheck: README main job"
    if [ ! -x "$BUILD/dataconv" ]; then
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
        cmake --build "$BUILD" -j"$JOBS" --target dataconv >/dev/null
    fi
    VG=(valgrind -q --error-exitcode=1 --leak-check=full
        --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible)
    x=$OUT/x.h5
    rm -f "$x"
    for job in "convert:$BUILD/dataconv samples/images $x --resize 64" "bench:$BUILD/dataconv bench $x -q"; do
        label=${job%%:*}
        # shellcheck disable=SC2086
        if "${VG[@]}" ${job#*:} >"$OUT/valgrind-$label.log" 2>&1; then
            summary+=("valgrind $label (${job#*:}): 0 errors, 0 leaks")
        else
            status=1
            summary+=("valgrind $label: FAILED (see $OUT/valgrind-$label.log)")
            tail -20 "$OUT/valgrind-$label.log"
        fi
    done
fi

echo "== ci_extra summary ($(($(date +%s) - t_start)) s)"
printf '  %s\n' "${summary[@]}"
exit $status
