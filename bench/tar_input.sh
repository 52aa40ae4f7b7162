#!/usr/bin/env bash
# Tar archives as SRC (issue 29 item 3): time and peak RSS of converting a tar of tars shaped
# like ILSVRC2012's train tar (one inner tar per class) against the extracted folder, at 1,000
# members (20 classes x 50 real-photo JPEGs) and 20,000 (the same photos hard-linked 20 times
# in the folder; real bytes in the archive), plus a .tar.gz of the 1,000 (sorted and in GNU
# tar's readdir order) and the cost of --shard K/N (each part lists the whole archive).
# Not in CI. Usage: bench/tar_input.sh [DATACONV] [WORKDIR]   (needs ~3.5 GB in WORKDIR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dataconv=${1:-$here/../build/dataconv}
work=${2:-/tmp/ld_bench_tar}
mkdir -p "$work"
/usr/bin/python3 "$here/make_photos.py" "$work/photos1000" 1000 --classes 20

# the 20,000-member folder: 20 hard links of each photo, as bench/convert_memory.sh
big=$work/photos20000
if [ ! -e "$big/.complete" ]; then
    rm -rf "$big"
    /usr/bin/python3 - "$work/photos1000" "$big" <<'PY'
import os, sys
src, big = sys.argv[1:3]
for c in sorted(d for d in os.listdir(src) if d.startswith("class")):
    os.makedirs(f"{big}/{c}")
    for k in range(20):
        for f in sorted(os.listdir(f"{src}/{c}")):
            os.link(f"{src}/{c}/{f}", f"{big}/{c}/r{k:02d}-{f}")
PY
    touch "$big/.complete"
fi

# tar_of_tars FOLDER OUT: one uncompressed inner tar per class folder, inside one outer tar
tar_of_tars() {
    [ -e "$2" ] && return
    local tmp=$2.inner
    rm -rf "$tmp"
    mkdir -p "$tmp"
    for d in "$1"/class*; do tar cf "$tmp/$(basename "$d").tar" --hard-dereference -C "$d" .; done
    tar cf "$2.part" -C "$tmp" . # (a run stopped here leaves no "$2" behind)
    mv "$2.part" "$2"
    rm -rf "$tmp"
}
tar_of_tars "$work/photos1000" "$work/train1000.tar"
tar_of_tars "$work/photos20000" "$work/train20000.tar"
[ -e "$work/flat1000.tar.gz" ] || tar czf "$work/flat1000.tar.gz" -C "$work/photos1000" .
for n in 1000 20000; do
    [ -e "$work/sorted$n.tar.gz" ] ||
        { tar czf "$work/part.tar.gz" --sort=name --hard-dereference -C "$work/photos$n" . &&
            mv "$work/part.tar.gz" "$work/sorted$n.tar.gz"; }
done

# warm SRC: pages idle for a minute get evicted (ARCHITECTURE.md); read it right before
warm() { if [ -d "$1" ]; then find "$1" -type f -exec cat {} + >/dev/null; else cat "$1" >/dev/null; fi; }
# measure LABEL SRC [FLAGS...]: elapsed seconds and peak RSS of one conversion to raw 224 HDF5
measure() {
    local label=$1 src=$2
    shift 2
    rm -f "$work"/out*.h5
    warm "$src"
    /usr/bin/time -v "$dataconv" "$src" "$work/out.h5" --resize 224x224 --quiet "$@" \
        2> "$work/time.txt"
    local rss secs
    rss=$(awk -F: '/Maximum resident/ {printf "%.1f", $2/1024}' "$work/time.txt")
    secs=$(awk -F': ' '/Elapsed/ {print $2}' "$work/time.txt")
    printf '%-44s %10s %10s\n' "$label" "$secs" "$rss"
}
printf '%-44s %10s %10s\n' "input (raw 224x224 HDF5, 2 threads)" "m:ss" "peakMiB"
for n in 1000 20000; do
    measure "folder, $n images" "$work/photos$n"
    measure "tar of tars, $n members" "$work/train$n.tar"
done
measure "tar.gz (tar --sort=name), 1000" "$work/sorted1000.tar.gz"
measure "tar.gz (readdir order), 1000" "$work/flat1000.tar.gz"
measure "folder, 1000, --shuffle" "$work/photos1000" --shuffle
measure "tar of tars, 1000, --shuffle" "$work/train1000.tar" --shuffle
measure "tar.gz (sorted), 1000, --shuffle" "$work/sorted1000.tar.gz" --shuffle
# 20,000 members: about 1.2 GB compressed, so a shuffle takes about one pass per 64 MiB
measure "tar.gz (tar --sort=name), 20000" "$work/sorted20000.tar.gz"
measure "tar.gz (sorted), 20000, --shuffle" "$work/sorted20000.tar.gz" --shuffle
# shards: each part lists the whole input, then converts its quarter
for src in photos20000 train20000.tar sorted20000.tar.gz; do
    for k in 0 3; do
        measure "$src --shard $k/4" "$work/$src" --shard "$k/4"
    done
done
# the listing alone: a part of one member costs the listing plus one image
measure "tar of tars 20000, listing (--shard 0/20000)" "$work/train20000.tar" --shard 0/20000
measure "folder 20000, listing (--shard 0/20000)" "$work/photos20000" --shard 0/20000
