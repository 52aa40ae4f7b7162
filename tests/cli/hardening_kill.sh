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

# The photos hard-linked, 4 classes x 3 x 24 = 288 files: ~0.3 s at -j 2 on an idle 2-core
# machine. Every kill costs the run time up to it, so the input's size is this test's cost
# (480 files, as before, took ~1.7x as long for the same kill points). It has to leave every
# phase a window: the HDF5 writer writes /data in ~14 whole 1 MiB chunks (21 samples of
# 128x128x3 each), and the LMDB writer commits every 1 MiB (~21 records, ~13 commits), then
# at the end; so kills land before the first write, between writes, between commits and in
# the finish.
big=$TMP/big
for c in a b c d; do
    mkdir -p "$big/$c"
    for k in 1 2 3; do
        for p in "$LD_TEST_DATA"/photos/p*.jpg; do
            ln "$p" "$big/$c/${k}_${p##*/}" 2>/dev/null || cp "$p" "$big/$c/${k}_${p##*/}"
        done
    done
done
N=$(find "$big" -type f | wc -l)
ARGS=(--resize 128 -j 2 -q)
small=$TMP/small
mkdir -p "$small/x"
cp "$LD_TEST_DATA"/photos/p0[0-4].jpg "$small/x/"
N0=5

# count OUT: prints the number of samples of a complete dataset, or fails. One python process
# (a coprocess started once) answers every call: h5py and python-lmdb took ~0.5 s to import,
# which was most of this test's time when a python process was started per kill.
cat > "$TMP/count.py" <<'PY'
import os, sys
import h5py, lmdb

def count(p):
    if os.path.isdir(p):
        env = lmdb.open(p, readonly=True, lock=False)
        try:
            n = env.stat()["entries"]
            with env.begin() as t:
                for i, (k, v) in enumerate(t.cursor()):
                    assert k.startswith(b"%08d_" % i) and len(v) > 100, k
        finally:
            env.close()
        return n
    with h5py.File(p, "r") as f:
        n = f["data"].shape[0]
        assert len(f["label"]) == n and len(f["filename"]) == n
        f["data"][n - 1]  # the last sample is readable
    return n

for line in sys.stdin:
    try:
        print("ok", count(line.rstrip("\n")), flush=True)
    except BaseException as e:  # not a complete dataset: the caller fails
        print("bad", repr(e).replace("\n", " "), flush=True)
PY
coproc COUNTER { "$PYTHON" -u "$TMP/count.py"; }
count() {
    local reply
    echo "$1" >&"${COUNTER[1]}"
    read -r reply <&"${COUNTER[0]}" || { echo "the counting python process died" >&2; return 1; }
    [ "${reply%% *}" = ok ] || { echo "$1: ${reply#* }" >&2; return 1; }
    echo "${reply#ok }"
}

# time a full run to spread the kill points over it: the faster of two, so that one slowed by
# a burst of load on a shared machine does not put most kill points after the run's end
T=
for _ in 1 2; do
    rm -f "$TMP/full.h5"
    t0=$(date +%s.%N)
    "$DATACONV" "$big" "$TMP/full.h5" "${ARGS[@]}"
    t1=$(date +%s.%N)
    T=$(awk -v a="$t0" -v b="$t1" -v t="$T" 'BEGIN { d = b - a; if (t != "" && t < d) d = t; printf "%.3f", d }')
done
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
