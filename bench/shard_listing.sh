#!/usr/bin/env bash
# What a shard pays for listing the whole input: every part lists (and hashes, for its run_id)
# all L names before it converts its own L/N. Makes a tree of FILES hard links to one small
# JPEG (default 200,000 in 1,000 class folders), then times `dataconv --shard 0/N` with N so
# large (FILES/4, at most 99,999) that the part holds a few images: the time is the listing,
# sort and run_id of all names.
#   bench/shard_listing.sh BUILD_DIR [FILES] [WORKDIR]
set -euo pipefail
build=${1:?usage: shard_listing.sh BUILD_DIR [FILES] [WORKDIR]}
files=${2:-200000}
work=${3:-$(mktemp -d /tmp/shard-listing.XXXXXX)}
photo=$build/testdata/photos/p00.jpg
[ -f "$photo" ] || { echo "no $photo: run ctest -R make_fixtures first" >&2; exit 1; }
classes=1000
per=$(((files + classes - 1) / classes))
if [ ! -d "$work/tree/c0999" ]; then
    /usr/bin/python3 - "$photo" "$work/tree" "$classes" "$per" <<'PY'
import os, sys
photo, root, classes, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(root, exist_ok=True)
data = open(photo, "rb").read()
for c in range(classes):
    d = f"{root}/c{c:04d}"
    os.makedirs(d, exist_ok=True)
    if c % 25 == 0:  # a file has at most 65,000 links (ext4): one source per 25 classes
        src = f"{root}/.src{c:04d}.jpg"
        open(src, "wb").write(data)
    for i in range(per):
        os.link(src, f"{d}/img_{c:04d}_{i:06d}.jpg")
PY
fi
n=$(find "$work/tree" -name 'img_*.jpg' | wc -l)
sync
cat "$work/tree"/c0000/* >/dev/null
parts=$((n / 4 > 99999 ? 99999 : n / 4))
for run in 1 2 3; do # warm the dentry cache first, then two measured runs
    rm -f "$work"/out-*.h5
    /usr/bin/time -f "%e s elapsed, %M KiB peak RSS" "$build/dataconv" "$work/tree" "$work/out.h5" \
        --resize 32 --quality 80 --shard 0/$parts -q 2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
    [ "$run" -gt 1 ] && echo "listing $n files (--shard 0/$parts: $((n / parts)) images converted): $(tail -1 "$work/time.txt")"
done
echo "(tree kept in $work; remove it when done)"
