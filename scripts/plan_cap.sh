#!/usr/bin/env bash
# Does `dataconv plan`'s largest batch really fit? (issue 17, "Done means" 2nd bullet.)
# For one net of tests/data/plan/nets: asks dataconv plan for the largest batch that fits RAM,
# runs `caffe train` at that batch under a cap of RAM (it must finish), then at the smallest
# batch that dataconv plan predicts to need more than RAM x (1 + MARGIN/100) under the same cap
# (it must be stopped by the cap: the prediction is not merely cautious). The cap is
# two things: a memory cgroup limited to RAM, and the process's peak RSS (the kernel's VmHWM,
# polled every 10 ms; the process is killed when it passes RAM). Prints one line per run.
#
#   CAFFE_ROOT=/work/caffe scripts/plan_cap.sh WORKDIR NET VARIANT RAM [MARGIN]
#     WORKDIR  scripts/plan_measure.sh's folder (its datasets; runs go to WORKDIR/cap/)
#     NET      lenet | caffenet | vgg | resnet;  VARIANT: data | hdf5 | libdata
#     RAM      the cap, e.g. 400M (K/M/G);  MARGIN: percent, default 3 (the measured error of
#              the estimate is -2.1 % .. +4.7 %; dataconv plan keeps 5 % of RAM as headroom)
#   DATACONV (default build/dataconv), LIBDATA_CAFFE_LAYER (for VARIANT libdata).
#
# Why both: dataconv plan predicts peak RSS (what /usr/bin/time -v measures). A cgroup charges
# less than RSS: the pages of shared libraries already in the page cache (~40 MB of Caffe's
# 58 MB baseline) are charged to whoever loaded them first, so a cgroup cap of RAM alone
# admits runs whose RSS is above RAM. The VmHWM watchdog caps RSS exactly (the kernel's own
# high-water mark, so a peak between two polls is still seen). `ulimit -v` would cap address
# space instead: Caffe reserves far more than it touches (OpenBLAS buffers, thread stacks,
# LMDB maps), so it would refuse runs that fit.
# cgroup v2 (a child group with memory.max, memory.swap.max 0) or v1 (memory.limit_in_bytes,
# memory.memsw.limit_in_bytes when swap accounting is on). Needs root (or a delegated group).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 4 ] || { sed -n '2,20p' "$0"; exit 2; }
WORK=$1 NET=$2 V=$3 RAM=$4 MARGIN=${5:-3}
: "${CAFFE_ROOT:?set CAFFE_ROOT to a Caffe 1.0 build}"
DATACONV=${DATACONV:-$SRC/build/dataconv}
CAFFE=$CAFFE_ROOT/build/tools/caffe
[ -x "$CAFFE" ] || { echo "no $CAFFE" >&2; exit 1; }
PRELOAD=""
if [ "$V" = libdata ]; then
    PRELOAD=${LIBDATA_CAFFE_LAYER:-$SRC/build-caffe/bindings/caffe/libdata_caffe_layer.so}
fi
bytes=$(python3 -c 'import sys
s = sys.argv[1]; m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
print(int(float(s[:-1]) * m[s[-1].upper()]) if s[-1].upper() in m else int(s))' "$RAM")

cd "$WORK"
mkdir -p cap
dir=$SRC/tests/data/plan/nets/$NET
write_run() { # write_run BATCH -> prints the solver path
    local b=$1 stem=cap/${NET}_${V}_b$1
    sed "s/TRAIN_BATCH/$b/" "$dir/${V}_train_val.prototxt" >"$stem.prototxt"
    sed "s|^net: .*|net: \"$stem.prototxt\"|" "$dir/${V}_solver.prototxt" >"${stem}_solver.prototxt"
    echo "${stem}_solver.prototxt"
}

# The cgroup.
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    cg=/sys/fs/cgroup/plan_cap.$$
    mkdir "$cg"
    echo "$bytes" >"$cg/memory.max"
    [ -e "$cg/memory.swap.max" ] && echo 0 >"$cg/memory.swap.max"
    peak_file=$cg/memory.peak
else
    cg=/sys/fs/cgroup/memory/plan_cap.$$
    mkdir "$cg"
    echo "$bytes" >"$cg/memory.limit_in_bytes"
    if [ -e "$cg/memory.memsw.limit_in_bytes" ]; then
        echo "$bytes" >"$cg/memory.memsw.limit_in_bytes" || true
    fi
    peak_file=$cg/memory.max_usage_in_bytes
fi
cleanup() { rmdir "$cg" 2>/dev/null || true; }
trap cleanup EXIT

run_capped() { # run_capped BATCH -> "status killed peak_cgroup_kib peak_rss_kib"
    local s log=cap/${NET}_${V}_b$1.log pid hwm=0 killed=0 st
    s=$(write_run "$1")
    if [ -w "$peak_file" ]; then echo 0 >"$peak_file" 2>/dev/null || true; fi
    # shellcheck disable=SC2016 # $$ and $1 are the inner shell's
    env GLOG_logtostderr=1 OPENBLAS_NUM_THREADS=1 ${PRELOAD:+LD_PRELOAD=$PRELOAD} \
        sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
        "$CAFFE" train --solver="$s" >"$log" 2>&1 &
    pid=$!
    # The RSS cap: the kernel's high-water mark (VmHWM) of the process, polled; over the cap
    # the process is killed, as an OOM killer would.
    while kill -0 "$pid" 2>/dev/null; do
        h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        if [ -n "$h" ]; then
            hwm=$h
            if [ $((h * 1024)) -gt "$bytes" ] && [ "$killed" = 0 ]; then
                kill -KILL "$pid" 2>/dev/null || true
                killed=1
            fi
        fi
        sleep 0.01
    done
    set +e
    wait "$pid"
    st=$?
    set -e
    echo "$st $killed $(($(cat "$peak_file") / 1024)) $hwm"
}

s=$(write_run 1)
plan=$("$DATACONV" plan --solver "$s" --ram "$RAM" 2>&1 || true)
best=$(echo "$plan" | sed -n 's/^Largest batch that fits in .*: \([0-9]*\)$/\1/p')
if [ -z "$best" ] || [ "$best" -le 0 ]; then echo "$plan"; echo "no batch fits $RAM" >&2; exit 1; fi
# The smallest batch predicted above RAM x (1 + MARGIN %): one more than the largest that fits
# that figure (dataconv plan fits to --ram less its 5 % headroom, so ask for RAM_OVER / 0.95).
ram_over=$(python3 -c "print(int($bytes * (1 + $MARGIN / 100) / 0.95) + 1)")
over_fit=$("$DATACONV" plan --solver "$s" --ram "$ram_over" 2>/dev/null |
           sed -n 's/^Largest batch that fits in .*: \([0-9]*\)$/\1/p' || true)
over=$((over_fit + 1))
pred_best=$("$DATACONV" plan --solver "$(write_run "$best")" --ram "$RAM" | sed -n 's/.*peak RSS: \([0-9]*\) bytes.*/\1/p')
pred_over=$("$DATACONV" plan --solver "$(write_run "$over")" --ram "$RAM" 2>/dev/null | sed -n 's/.*peak RSS: \([0-9]*\) bytes.*/\1/p' || true)
echo "net $NET ($V), cap $RAM = $bytes bytes ($(basename "$cg")), largest batch predicted: $best"
ok=1
read -r st killed cgk rss < <(run_capped "$best")
echo "  batch $best: predicted $((pred_best / 1024)) KiB; exit $st (killed over the cap: $killed), peak RSS $rss KiB, cgroup peak $cgk KiB"
[ "$st" -eq 0 ] || { echo "  FAIL: the predicted largest batch did not run under the cap"; ok=0; }
read -r st killed cgk rss < <(run_capped "$over")
echo "  batch $over (predicted above the cap + $MARGIN %): predicted $((pred_over / 1024)) KiB; exit $st (killed over the cap: $killed), peak RSS $rss KiB, cgroup peak $cgk KiB"
[ "$st" -ne 0 ] || { echo "  FAIL: batch $over ran under the cap: the prediction is too cautious"; ok=0; }
[ "$ok" = 1 ] && echo "  ok" || exit 1
