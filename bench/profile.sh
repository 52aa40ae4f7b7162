#!/usr/bin/env bash
# Where the time goes, by perf: the profiles the README's speed section quotes. Runs perf record
# on four jobs over bench/run's data and prints each one's share per library and its hottest
# symbols (and, for the conversion, the system calls):
#   dataconv -j1, photos -> raw 224 HDF5 and raw 224 LMDB (photos warm), with the calling
#   thread's share of the samples and (with strace) the wall time of the writes and the sync
#   dataconv bench, warm raw file, shuffled and sequential batches of 256
#   dataconv bench, random resized crop (a) on the photos' own JPEG bytes
# Usage: bench/profile.sh [BUILD] [WORK]
#   BUILD  the build with dataconv (default build-bench, what bench/run makes)
#   WORK   bench/run's work folder (default /tmp/ld_bench_suite; run bench/run once first)
# Needs perf (linux-perf) and root or kernel.perf_event_paranoid <= 1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build-bench}
work=${2:-/tmp/ld_bench_suite}
d=$build/dataconv
command -v perf >/dev/null || { echo "profile.sh: no perf: apt-get install linux-perf" >&2; exit 2; }
for f in "$d" "$work/photos2000" "$work/raw9000.h5" "$work/rrc_original.h5"; do
    [ -e "$f" ] || { echo "profile.sh: no $f: run bench/run first (or give BUILD WORK)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

report() { # the share per library, then the symbols above 2 %
    perf report -i "$tmp/perf.data" --no-children --sort dso -g none --percent-limit 1 2>/dev/null |
        grep '%' | sed 's/^/  /'
    echo "  hottest symbols:"
    perf report -i "$tmp/perf.data" --no-children --sort dso,sym -g none --percent-limit 2 \
        2>/dev/null | grep '%' | sed 's/^/    /'
}
profile() { # NAME CMD...
    local name=$1
    shift
    perf record -q -g -o "$tmp/perf.data" -- "$@" >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; exit 1; }
    echo "== $name"
    report
}

cat "$work"/photos2000/*/* >/dev/null
for out in conv.h5 conv.lmdb; do
    rm -rf "${tmp:?}/$out"
    profile "dataconv -j1: $work/photos2000 -> raw 224 ${out#conv.}" \
        "$d" "$work/photos2000" "$tmp/$out" --resize 224 -j1 -q
    echo "  system calls (share of all samples, children included):"
    perf report -i "$tmp/perf.data" --children --sort sym -g none 2>/dev/null |
        grep -E '\[k\] (__x64_sys_|ksys_)' | awk '$1 + 0 >= 0.5 {print "    " $1, $NF}'
    # the calling thread is the one whose thread id is the process id
    perf script -i "$tmp/perf.data" -F pid,tid 2>/dev/null | tr '/' ' ' |
        awk '{n++; if ($1 == $2) c++} END {printf "  calling thread: %.1f %% of %d samples\n", 100 * c / n, n}'
    if command -v strace >/dev/null; then
        rm -rf "${tmp:?}/$out"
        strace -f -w -c -o "$tmp/strace.txt" -e trace=write,writev,pwrite64,pwritev,fsync,fdatasync \
            "$d" "$work/photos2000" "$tmp/$out" --resize 224 -j1 -q
        echo "  writes and syncs, wall seconds (strace -f -w -c):"
        awk '$NF ~ /^(write|writev|pwrite64|pwritev|fsync|fdatasync)$/ {
                 printf "    %-10s %6s calls %9.3f s\n", $NF, $4, $2 }' "$tmp/strace.txt"
    fi
done
cat "$work/raw9000.h5" >/dev/null
for order in shuffle seq; do
    profile "dataconv bench $work/raw9000.h5, $order, batches of 256 (page cache warm)" \
        "$d" bench "$work/raw9000.h5" --order "$order" --batch 256 --epochs 12 -q
done
profile "random resized crop (a), box decoder, 1 thread: $work/rrc_original.h5" \
    "$d" bench "$work/rrc_original.h5" --rrc-w 224 --rrc-h 224 --mirror --epochs 3 -j1 -q
