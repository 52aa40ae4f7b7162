#!/usr/bin/env bash
# Reading a merged file (issue 13 item 5) against the same data as one file: `dataconv bench`
# sequential and shuffled, one file vs merged from P parts for each P in PARTS, side by side in
# one run (rounds interleaved, the best of ROUNDS kept: wall-clock rate and CPU time per
# sample, "vs one" = one file's cost / this file's), plus peak RSS (/usr/bin/time -v) and
# how the reader read each (its `how`, from bench -v). Warm page cache: every file is read
# once before timing. The parts are made by dataconv (one conversion per part of the list)
# and merged by tests/python/vds_build.py (h5py VirtualLayout, the on-disk contract).
#
#   bench/vds_bench.sh [WORKDIR]     env: DATACONV (default build/dataconv), LD_TEST_DATA
#   (fixture photos, default build/testdata), SAMPLES (4096), SIZE (128: 3x128x128 uint8),
#   PARTS ("8 64 256"), ROUNDS (3), EPOCHS (2), THREADS (2), QUALITY (0 = raw; N = JPEG)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DATACONV=${DATACONV:-$SRC/build/dataconv}
LD_TEST_DATA=${LD_TEST_DATA:-$SRC/build/testdata}
PYTHON=${PYTHON:-/usr/bin/python3}
SAMPLES=${SAMPLES:-4096} SIZE=${SIZE:-128} PARTS=${PARTS:-"8 64 256"}
ROUNDS=${ROUNDS:-3} EPOCHS=${EPOCHS:-2} THREADS=${THREADS:-2} QUALITY=${QUALITY:-0}
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/vds-bench.XXXXXX")}
mkdir -p "$WORK"
cd "$WORK"
opts=(--resize "$SIZE")
[ "$QUALITY" != 0 ] && opts+=(--quality "$QUALITY")

"$PYTHON" - "$LD_TEST_DATA" "$SAMPLES" <<'PY'
import glob, os, sys
photos = sorted(glob.glob(os.path.join(sys.argv[1], "photos", "p*.jpg")))
n = int(sys.argv[2])
with open("all.txt", "w") as f:
    for i in range(n):
        f.write(f"{os.path.relpath(photos[i % len(photos)], sys.argv[1])} {i % 10}\n")
PY
t0=$(date +%s.%N)
[ -f one.h5 ] || "$DATACONV" --list all.txt --root "$LD_TEST_DATA" one.h5 -q "${opts[@]}"
t1=$(date +%s.%N)
echo "one file: $SAMPLES samples, ${opts[*]}, $(du -h one.h5 | cut -f1), converted in $(echo "$t1 - $t0" | bc) s"
files=(one.h5)
for p in $PARTS; do
    if [ ! -f "m$p.h5" ]; then
        mkdir -p "p$p"
        (cd "p$p" && DATACONV="$DATACONV" "$PYTHON" "$SRC/tests/python/vds_build.py" parts \
            ../all.txt "$LD_TEST_DATA" s "$p" "${opts[@]}" >/dev/null)
        "$PYTHON" "$SRC/tests/python/vds_build.py" merge "m$p.h5" "p$p"/s-*-of-*.h5
    fi
    files+=("m$p.h5")
done
for f in "${files[@]}"; do # warm the page cache, and say how each is read
    how=$("$DATACONV" bench "$f" -v --batch 64 2>&1 | sed -n 's/.* samples (\(.*\)), .*per rank.*/\1/p')
    echo "$f: $how"
done

rate() { # FILE ORDER -> samples/s of the whole run, and peak RSS (KiB) from /usr/bin/time
    local extra=()
    [ "$2" = shuffled ] && extra=(--shuffle)
    /usr/bin/time -v "$DATACONV" bench "$1" --batch 64 --epochs "$EPOCHS" -j "$THREADS" \
        "${extra[@]}" >out.txt 2>time.txt
    local r k u s
    r=$(sed -n 's/^total: .* s: \([0-9.]*\) samples\/s.*/\1/p' out.txt)
    k=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
    u=$(sed -n 's/.*User time (seconds): //p' time.txt)
    s=$(sed -n 's/.*System time (seconds): //p' time.txt)
    echo "$r $k $(echo "scale=3; ($u + $s) * 1000000 / ($SAMPLES * $EPOCHS)" | bc)"
}
declare -A best rss cpu
for round in $(seq "$ROUNDS"); do
    for order in sequential shuffled; do
        for f in "${files[@]}"; do
            read -r r k c < <(rate "$f" "$order")
            key="$f/$order"
            if [ -z "${best[$key]:-}" ] || [ "$(echo "$r > ${best[$key]}" | bc)" = 1 ]; then
                best[$key]=$r
            fi
            if [ -z "${cpu[$key]:-}" ] || [ "$(echo "$c < ${cpu[$key]}" | bc)" = 1 ]; then
                cpu[$key]=$c
            fi
            rss[$key]=$k
        done
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc)); best of $ROUNDS rounds, $EPOCHS epochs, batch 64, $THREADS threads"
# CPU time (user + system, all threads, open included) per sample is the steadier figure on a
# shared machine: other processes lengthen the wall time, not the work done.
printf "%-10s %-11s %12s %8s %14s %8s %13s\n" file order "samples/s" "vs one" "CPU us/sample" \
    "vs one" "peak RSS KiB"
for order in sequential shuffled; do
    for f in "${files[@]}"; do
        key="$f/$order"
        pct=$(echo "scale=1; 100 * ${best[$key]} / ${best[one.h5/$order]}" | bc)
        cpct=$(echo "scale=1; 100 * ${cpu[one.h5/$order]} / ${cpu[$key]}" | bc)
        printf "%-10s %-11s %12.0f %7s%% %14s %7s%% %13s\n" "$f" "$order" "${best[$key]}" "$pct" \
            "${cpu[$key]}" "$cpct" "${rss[$key]}"
    done
done
echo "(files kept in $WORK)"
