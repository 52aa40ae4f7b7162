#!/usr/bin/env bash
# Crash safety: SIGKILL a conversion at >= 20 points spread over the whole run (start-up,
# decoding, writing, finishing), for HDF5 and for LMDB output, with and without a previous
# output under the same name. After each kill the output name must hold nothing, the
# previous complete dataset (byte-identical, and h5py / python-lmdb read its N), or, when the
# kill came after the final rename, the new complete dataset. (ulimit -f: hardening_fsize.sh)
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-hard.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "check: $*"; }
POINTS_H5=${KILL_POINTS_H5:-20}
POINTS_LMDB=${KILL_POINTS_LMDB:-12}

# A folder that takes a few seconds: the photos hard-linked (4 classes x 5 x 24 = 480 files).
big=$TMP/big
for c in a b c d; do
    mkdir -p "$big/$c"
    for k in 1 2 3 4 5; do
        for p in "$LD_TEST_DATA"/photos/p*.jpg; do
            ln "$p" "$big/$c/${k}_$(basename "$p")" 2>/dev/null || cp "$p" "$big/$c/${k}_$(basename "$p")"
        done
    done
done
N=$(find "$big" -type f | wc -l)
ARGS=(--resize 128 -j 2 -q)
small=$TMP/small
mkdir -p "$small/x"
cp "$LD_TEST_DATA"/photos/p0[0-4].jpg "$small/x/"
N0=5

# count OUT: prints the number of samples of a complete dataset, or fails
count() {
    "$PYTHON" - "$1" <<'PY'
import os, sys
p = sys.argv[1]
if os.path.isdir(p):
    import lmdb
    env = lmdb.open(p, readonly=True, lock=False)
    n = env.stat()["entries"]
    with env.begin() as t:
        for i, (k, v) in enumerate(t.cursor()):
            assert k.startswith(b"%08d_" % i) and len(v) > 100, k
    print(n)
else:
    import h5py
    with h5py.File(p, "r") as f:
        n = f["data"].shape[0]
        assert len(f["label"]) == n and len(f["filename"]) == n
        f["data"][n - 1]  # the last sample is readable
    print(n)
PY
}

# time one full run to spread the kill points over it
t0=$(date +%s.%N)
"$DATACONV" "$big" "$TMP/full.h5" "${ARGS[@]}"
t1=$(date +%s.%N)
T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
[ "$(count "$TMP/full.h5")" -eq "$N" ] || fail "the reference run did not write $N samples"
echo "one run: $N images in ${T}s"

tried=0 killed_h5=0 killed_lmdb=0 nothing=0 previous=0 complete=0
# kill_run EXT POINTS: kills spread from 2% to 100% of the measured run time (the last ones
# hit the finish); a run that ended before its kill does not count, and extra kills at
# 5..75% are added until POINTS kills have landed mid-run (the machine's speed varies).
kill_run() {
    local ext=$1 points=$2 landed=0
    "$DATACONV" "$small" "$TMP/prev.$ext" -q --resize 128
    for ((i = 0; landed < points && i < 2 * points + 10; i++)); do
        local out=$TMP/out.$ext with_prev=$((i % 2))
        rm -rf "$out" "$out".tmp-* "$out"-*
        [ "$with_prev" = 1 ] && cp -a "$TMP/prev.$ext" "$out"
        # points from 2% to 100% of the measured run time (the last ones hit the finish)
        local at
        if [ "$i" -lt "$points" ]; then
            at=$(awk -v t="$T" -v i="$i" -v n="$points" 'BEGIN { printf "%.3f", t * (2 + 98 * i / (n - 1)) / 100 }')
        else
            at=$(awk -v t="$T" -v i="$i" 'BEGIN { printf "%.3f", t * (5 + (i * 37) % 70) / 100 }')
        fi
        set +e
        "$DATACONV" "$big" "$out" "${ARGS[@]}" 2>"$TMP/err" &
        local pid=$!
        sleep "$at"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        local rc=$?
        set -e
        tried=$((tried + 1))
        if [ "$rc" -eq 137 ]; then
            landed=$((landed + 1))
            if [ "$ext" = h5 ]; then killed_h5=$((killed_h5 + 1)); else killed_lmdb=$((killed_lmdb + 1)); fi
        fi
        local state
        if [ ! -e "$out" ]; then
            [ "$with_prev" = 0 ] || fail "kill at ${at}s (exit $rc): the previous $out is gone"
            state=nothing
            nothing=$((nothing + 1))
        else
            local n
            n=$(count "$out") || fail "kill at ${at}s (exit $rc): $out is not a complete dataset"
            if [ "$n" -eq "$N" ]; then
                state="new complete ($n)"
                complete=$((complete + 1))
            elif [ "$with_prev" = 1 ] && [ "$n" -eq "$N0" ]; then
                diff -r "$TMP/prev.$ext" "$out" >/dev/null ||
                    [ "$ext" = lmdb ] || fail "kill at ${at}s: the previous $out was modified"
                state="previous ($n)"
                previous=$((previous + 1))
            else
                fail "kill at ${at}s (exit $rc): $out holds $n samples (want 0, $N0 or $N)"
            fi
        fi
        local left
        left=$(compgen -G "$out.tmp-*" | wc -l || true)
        echo "  $ext kill $((i + 1)) at ${at}s (exit $rc): $state; temporaries left: $left"
    done
}

check "HDF5: SIGKILL at $POINTS_H5 points -> nothing, the previous file, or the new complete one"
kill_run h5 "$POINTS_H5"
check "LMDB: SIGKILL at $POINTS_LMDB points -> the same for the database directory"
kill_run lmdb "$POINTS_LMDB"
echo "kill points tried: $tried, of which SIGKILL landed mid-run: HDF5 $killed_h5, LMDB" \
     "$killed_lmdb (results: nothing $nothing, previous intact $previous, new complete" \
     "$complete); none lost or partial"
[ "$killed_h5" -ge "$POINTS_H5" ] && [ "$killed_lmdb" -ge "$POINTS_LMDB" ] ||
    fail "too few kills landed mid-run: HDF5 $killed_h5 (want $POINTS_H5), LMDB $killed_lmdb"

echo "hardening_kill: all checks passed"
