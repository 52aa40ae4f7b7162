#!/usr/bin/env bash
# COCO input's memory (src_coco.c): peak RSS of ld__source_open_coco on a generated COCO-like
# instances file of ~400 MB (100,000 images, ~800,000 annotations with long segmentation
# polygons, as train2017's ~450 MB file), against Python's json.load of the same file when the
# machine has the memory for it. The file is written by a streaming generator (nothing held),
# in an order that makes the parser work: annotations first, then images in random order.
# A small driver (compiled here against the build's static library) opens the file and reads
# every box. Not in CI.
# Usage: bench/coco_memory.sh [BUILD_DIR] [WORKDIR]   (needs ~0.5 GB in WORKDIR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
work=${2:-/tmp/ld_bench_coco}
mkdir -p "$work"
json=$work/instances.json
# the same images and boxes without segmentation (~95 MB): peak RSS must not follow file size
small=$work/instances_noseg.json

gen() { # OUT [noseg]
    [ -e "$1" ] && return
    /usr/bin/python3 - "$1.part" "${2:-}" <<'PY'
import json, random, sys
noseg = sys.argv[2] == "noseg"
rng = random.Random(2017)
n_images, per_image = 100_000, 8  # ~800k annotations (0..16 per image)
# a pool of polygons (18-36 points, COCO's two decimals), reused: generating each one is slow
pool = []
for _ in range(2000):
    k = rng.randint(18, 36)
    pool.append("[[" + ",".join("%.2f" % rng.uniform(0, 640) for _ in range(2 * k)) + "]]")
cats = [{"supercategory": "thing", "id": i, "name": "class%02d" % i}
        for i in rng.sample(range(1, 91), 80)]
with open(sys.argv[1], "w") as f:
    f.write('{"info": {"description": "generated", "year": 2017}, "licenses": [], "annotations": [')
    aid, first = 0, True
    for img in range(1, n_images + 1):
        for _ in range(rng.randint(0, 2 * per_image)):
            aid += 1
            seg = rng.choice(pool)  # drawn either way: both files get the same boxes
            x, y = rng.uniform(0, 500), rng.uniform(0, 400)
            w, h = rng.uniform(1, 140), rng.uniform(1, 80)
            f.write('%s{"segmentation": %s, "area": %.4f, "iscrowd": %d, "image_id": %d, '
                    '"bbox": [%.2f, %.2f, %.2f, %.2f], "category_id": %d, "id": %d}'
                    % ("" if first else ",", "[]" if noseg else seg, w * h, rng.random() < 0.01, img,
                       x, y, w, h, rng.choice(cats)["id"], aid))
            first = False
    f.write('], "images": [')
    ids = list(range(1, n_images + 1))
    rng.shuffle(ids)
    for k, img in enumerate(ids):
        f.write('%s{"license": 1, "file_name": "%012d.jpg", "coco_url": "http://images.cocodataset.org/train2017/%012d.jpg", "height": 480, "width": 640, "date_captured": "2013-11-14 17:02:52", "id": %d}'
                % ("" if k == 0 else ",", img, img, img))
    f.write('], "categories": ' + json.dumps(cats) + "}")
print("annotations:", aid)
PY
    mv "$1.part" "$1"
}
gen "$json"
gen "$small" noseg

cmake --build "$build" --target libdata_static -j2 >/dev/null
cat >"$work/drv.c" <<'C'
#include <stdio.h>
#include "source/source.h"
int main(int argc, char **argv)
{
    ld_source *s = NULL;
    ld_err e;
    if (argc < 2 || ld__source_open_coco(argv[1], "/root", 0, NULL, NULL, NULL, &s, &e)) {
        fprintf(stderr, "%s\n", argc < 2 ? "usage: drv FILE" : e.msg);
        return 1;
    }
    size_t n = ld__source_count(s), m = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < ld__source_box_count(s, i); k++) {
            ld_box b;
            ld__source_box(s, i, k, &b);
            sum += b.x2 - b.x1;
            m++;
        }
    printf("%zu images, %zu boxes, %zu classes (sum of widths %.0f)\n", n, m,
           ld__source_box_class_count(s), sum);
    ld__source_free(s);
    return 0;
}
C
cc -O2 -std=c11 -D_GNU_SOURCE -I"$src/libdata/src" -I"$src/libdata/include" "$work/drv.c" \
    "$build/libdata.a" $(pkg-config --libs yajl libxml-2.0 libarchive libpng libtiff-4 libwebpdemux \
    libwebp hdf5-serial 2>/dev/null) -ljpeg -lgif -llmdb -lz -lm -lpthread -o "$work/drv"

rss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
wall() { sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1"; }
for f in "$small" "$json"; do
    /usr/bin/time -v "$work/drv" "$f" 2>"$work/drv.time"
    echo "libdata ld__source_open_coco, $(du -m "$f" | cut -f1) MB $(basename "$f"):" \
        "peak RSS $(( $(rss "$work/drv.time") / 1024 )) MiB, $(wall "$work/drv.time")"
done

avail=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
if [ "$avail" -ge 12000 ]; then
    /usr/bin/time -v /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d["images"]), "images,", len(d["annotations"]), "annotations")' "$json" 2>"$work/py.time"
    echo "python3 json.load: peak RSS $(( $(rss "$work/py.time") / 1024 )) MiB, $(wall "$work/py.time")"
else
    echo "python3 json.load: not run (MemAvailable ${avail} MiB < 12000 MiB)"
fi
