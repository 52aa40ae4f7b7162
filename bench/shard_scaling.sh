#!/usr/bin/env bash
# Scaling of sharded conversion on one machine: the same conversion (COPIES x 24 fixture photos
# per class, 2 classes, --resize 224 --quality 90) by one process with one thread, then by two
# processes with one thread each (--shard 0/2 and 1/2 at once); REPEATS times, side by side.
# Prints wall times, images/s, parts/s and the speed-up. Other load on the machine shows up
# directly: the load average is printed with each line.
#   bench/shard_scaling.sh BUILD_DIR [COPIES] [REPEATS]
set -euo pipefail
build=${1:?usage: shard_scaling.sh BUILD_DIR [COPIES] [REPEATS]}
copies=${2:-40}
repeats=${3:-3}
work=$(mktemp -d /tmp/shard-scaling.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$build/testdata/photos" "$work/big" "$copies" <<'PY'
import glob, os, sys
photos = sorted(glob.glob(sys.argv[1] + "/p*.jpg"))
for c in "ab":
    os.makedirs(f"{sys.argv[2]}/{c}")
    for k in range(int(sys.argv[3])):
        for p in photos:
            os.link(p, f"{sys.argv[2]}/{c}/{k:03d}_{os.path.basename(p)}")
PY
n=$(find "$work/big" -name '*.jpg' | wc -l)
cat "$work"/big/*/* >/dev/null
d=$build/dataconv
opts=(--resize 224 --quality 90 -j 1 -q)
now() { date +%s.%N; }
for ((r = 0; r < repeats; r++)); do
    rm -f "$work"/*.h5
    s=$(now); "$d" "$work/big" "$work/one.h5" "${opts[@]}"; t1=$(echo "$(now) - $s" | bc)
    rm -f "$work"/*.h5
    s=$(now)
    "$d" "$work/big" "$work/two.h5" "${opts[@]}" --shard 0/2 &
    "$d" "$work/big" "$work/two.h5" "${opts[@]}" --shard 1/2
    wait
    t2=$(echo "$(now) - $s" | bc)
    printf '%d images: 1 process %.2f s (%.0f images/s); 2 processes %.2f s (%.0f images/s, %.2f parts/s): x%.2f (load %s)\n' \
        "$n" "$t1" "$(echo "$n / $t1" | bc -l)" "$t2" "$(echo "$n / $t2" | bc -l)" \
        "$(echo "2 / $t2" | bc -l)" "$(echo "$t1 / $t2" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
done
