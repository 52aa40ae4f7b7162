#!/usr/bin/env bash
# Peak RSS of a conversion must not grow with the number of images.
# Usage: bench/convert_memory.sh [DATACONV] [WORKDIR]
# Builds 2,000 real-photo JPEGs, then a 20,000-image folder of hard links to them, converts
# both (raw 224 and JPEG q70 to HDF5, raw 224 to LMDB) and prints the peak RSS of each run
# (/usr/bin/time -v), then the growth from 2,000 to 20,000 images per storage. Exits 1 when a
# growth is over LIMIT_PCT (default 10, the target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dataconv=${1:-$here/../build/dataconv}
work=${2:-/tmp/ld_bench}
/usr/bin/python3 "$here/make_photos.py" "$work/photos2000" 2000
big=$work/photos20000
if [ ! -e "$big/.complete" ]; then
    rm -rf "$big"
    for k in $(seq 0 9); do
        for d in "$work"/photos2000/class*; do
            mkdir -p "$big/$(basename "$d")"
            for f in "$d"/*.jpg; do ln "$f" "$big/$(basename "$d")/r$k-$(basename "$f")"; done
        done
    done
    touch "$big/.complete"
fi
limit=${LIMIT_PCT:-10}
declare -A peak
printf '%-8s %-14s %10s %10s\n' images storage seconds peakMiB
# storage kinds: "<name>:<output file>:<extra flags>"
kinds=("raw:mem.h5:" "jpeg q70:mem.h5:--quality 70" "raw lmdb:mem.lmdb:")
for n in 2000 20000; do
    for kind in "${kinds[@]}"; do
        IFS=: read -r name file extra <<< "$kind"
        out=$work/$file
        rm -rf "$out"
        # shellcheck disable=SC2086 # extra flags split on purpose
        /usr/bin/time -v "$dataconv" "$work/photos$n" "$out" --resize 224 --quiet $extra \
            2> "$work/time.txt"
        rss=$(awk -F: '/Maximum resident/ {print $2/1024}' "$work/time.txt")
        secs=$(awk -F': ' '/Elapsed/ {print $2}' "$work/time.txt")
        printf '%-8s %-14s %10s %10.1f\n' "$n" "$name" "$secs" "$rss"
        peak[$n.$name]=$rss
        rm -rf "$out"
    done
done
status=0
for kind in "${kinds[@]}"; do
    name=${kind%%:*}
    if ! awk -v a="${peak[2000.$name]}" -v b="${peak[20000.$name]}" -v lim="$limit" -v name="$name" \
        'BEGIN { g = (b - a) / a * 100;
                 printf "growth %-9s %5.1f -> %5.1f MiB: %+5.1f %% (limit %s %%)\n", name, a, b, g, lim;
                 exit (g > lim) }'; then
        status=1
    fi
done
exit $status
