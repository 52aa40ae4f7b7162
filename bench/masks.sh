#!/usr/bin/env bash
# Segmentation masks (issue 28): the cost of carrying a mask with every image, side by side in
# one run. N real-photo JPEGs (bench/make_photos.py, ~500x375) each get a palette PNG mask of
# their size (4 classes from the brightness, a 255 band); then
#   convert: the same list --resize 224 --mode pad, without and with --masks, at -j1 and -j2:
#            pairs/s with masks over images/s without (goal >= 0.6 per core);
#   read:    dataconv bench (shuffled, batch 64, 3 epochs, crop 192 + mirror: the masks get the
#            crop and the flip too) of the two files: bytes/s of image + mask batches over
#            bytes/s of image-only batches (goal >= 0.8), and samples/s.
# Not in CI. Usage: bench/masks.sh [DATACONV] [N] [WORKDIR]   (N default 2000; ~0.6 GB)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dataconv=${1:-$here/../build/dataconv}
n=${2:-2000}
work=${3:-/tmp/ld_bench_masks}
mkdir -p "$work"
/usr/bin/python3 "$here/make_photos.py" "$work/photos" "$n" --classes 1
/usr/bin/python3 - "$work" <<'PY'
import os, sys
import numpy as np
from PIL import Image
work = sys.argv[1]
rels = []
for c in sorted(os.listdir(f"{work}/photos")):
    if c.startswith("."):
        continue
    os.makedirs(f"{work}/masks/{c}", exist_ok=True)
    for f in sorted(os.listdir(f"{work}/photos/{c}")):
        rels.append(f"{c}/{f}")
        out = f"{work}/masks/{c}/{os.path.splitext(f)[0]}.png"
        if os.path.exists(out):
            continue
        g = np.asarray(Image.open(f"{work}/photos/{c}/{f}").convert("L"))
        m = (g // 64).astype(np.uint8)
        m[:, : m.shape[1] // 10] = 255
        p = Image.fromarray(m, "P")
        p.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0] + [0] * 756)
        p.save(out)
with open(f"{work}/list.txt", "w") as f:
    f.writelines(r + "\n" for r in rels)
PY

# seconds of one conversion (the best of 3), output kept
convert() { # OUT -jN [--masks DIR]
    local best=
    for _ in 1 2 3; do
        local t0 t1
        t0=$(date +%s.%N)
        "$dataconv" -q --list "$work/list.txt" --root "$work/photos" "$work/$1" --resize 224 \
            --mode pad "${@:2}"
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 ${best:-1e9}" | awk '{ d = $2 - $1; print (d < $3 ? d : $3) }')
    done
    echo "$best"
}
echo "== convert $n photos to 224x224 (pad), best of 3"
printf "%-4s %12s %14s %8s\n" "-j" "images/s" "pairs/s" "ratio"
for j in 1 2; do
    a=$(convert img.h5 -j "$j")
    b=$(convert seg.h5 -j "$j" --masks "$work/masks")
    awk -v j="$j" -v a="$a" -v b="$b" -v n="$n" \
        'BEGIN { printf "%-4s %12.0f %14.0f %8.2f\n", j, n / a, n / b, a / b }'
done

# samples/s of an epoch read (the best of 3 epochs)
rate() { # FILE
    "$dataconv" bench "$work/$1" --batch 64 --shuffle --epochs 3 --crop 192 --mirror -j 2 2>&1 |
        awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "samples/s,") r = $(i - 1);
                        if (r > best) best = r } END { print best }'
}
echo "== read (shuffled, batch 64, crop 192 + mirror, 2 threads), best epoch of 3"
ri=$(rate img.h5)
rs=$(rate seg.h5)
awk -v ri="$ri" -v rs="$rs" 'BEGIN {
    bi = ri * 3 * 192 * 192; bs = rs * 4 * 192 * 192
    printf "images only:    %8.0f samples/s  %7.1f MB/s\n", ri, bi / 1e6
    printf "image + mask:   %8.0f samples/s  %7.1f MB/s\n", rs, bs / 1e6
    printf "ratio: %.2f samples/s, %.2f bytes/s (goal >= 0.8)\n", rs / ri, bs / bi }'
