#!/usr/bin/env bash
# Warm epochs after a cold one: shuffled reading of a raw dataset that fits in memory, when the
# page cache was filled by a sequential read of the file (cat) against when the reader's own
# first, cold epoch filled it (block order, its read-ahead advice). bench/run's warm rows are
# the first case (it reads each file once before measuring); a training run that starts
# with the file not cached is the second.
#
# Usage: bench/warm_after_cold.sh FILE [DATACONV] [ROUNDS]
#   FILE      a raw HDF5 or LMDB dataset that fits in free memory (e.g. bench/run's
#             /tmp/ld_bench_suite/raw16000.h5, 2.4 GB)
#   DATACONV  default build/dataconv; ROUNDS (default 3) alternate the two cases
# Prints the shuffled samples/s of 3 warm epochs per case and round, the medians and their
# ratio; with PAGE_FOLIOS=BUILD/bench/page_folios (root), how the cache holds the file after
# each fill. Evicts only FILE's pages (posix_fadvise DONTNEED), so it needs no root, and runs
# ~10 s per round for a 2.4 GB file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
file=${1:?usage: bench/warm_after_cold.sh FILE [DATACONV] [ROUNDS]}
dataconv=${2:-$here/../build/dataconv}
rounds=${3:-3}
[ -x "$dataconv" ] || { echo "warm_after_cold: no $dataconv: build first (cmake --build build)" >&2; exit 2; }
py=/usr/bin/python3

evict() { # the file's pages out of the cache (suite_common.drop: written back, then DONTNEED)
    "$py" -c 'import os, sys
sys.path.insert(0, sys.argv[1])
import suite_common as sc
for p in sc._files([sys.argv[2]]):
    sc.drop(p)' "$here" "$file"
}
folios() {
    if [ -n "${PAGE_FOLIOS:-}" ]; then
        local f=$file
        [ -d "$f" ] && f=$f/data.mdb
        "$PAGE_FOLIOS" "$f" | sed 's/^/    /'
    fi
}
epoch_rates() { # shuffled warm epochs: samples/s of each, one per line
    "$dataconv" bench "$file" --shuffle --batch 256 --epochs 3 |
        sed -n 's/^epoch [0-9]*: .* s: \([0-9]*\) samples\/s.*/\1/p'
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

after_cat=() after_reader=()
for r in $(seq 1 "$rounds"); do
    evict
    if [ -d "$file" ]; then cat "$file"/*; else cat "$file"; fi >/dev/null
    echo "round $r: filled by cat"
    folios
    mapfile -t got < <(epoch_rates)
    echo "  warm shuffled epochs: ${got[*]} samples/s"
    after_cat+=("${got[@]}")

    evict
    echo "round $r: filled by the reader's cold epoch (block order)"
    "$dataconv" bench "$file" --order block --batch 256 --epochs 1 |
        sed -n 's/^epoch 0: .* s: \([0-9]*\) samples\/s.*/  cold epoch: \1 samples\/s/p'
    folios
    mapfile -t got < <(epoch_rates)
    echo "  warm shuffled epochs: ${got[*]} samples/s"
    after_reader+=("${got[@]}")
done
a=$(printf '%s\n' "${after_cat[@]}" | median)
b=$(printf '%s\n' "${after_reader[@]}" | median)
echo "median warm shuffled epoch: after cat $a samples/s, after the reader's cold epoch $b" \
    "samples/s: $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}') of it"
