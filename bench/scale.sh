#!/usr/bin/env bash
# How the cost of each step grows with the number of images (issue 30, item 3): generates N
# small JPEGs (bench/scale_gen.py: 64..96 px, 2-5 KB, 1,000 class folders, deterministic) and
# measures, for N = 10k and 100k (and 1.28M with --full):
#   listing   `dataconv --shard 0/P` with P = min(N/4, 99999): every part lists, sorts and
#             hashes the whole input and converts only its ~4..13 images (the listing phase)
#   convert   `dataconv TREE conv.lmdb --resize 24`: raw 3x24x24 uint8 Caffe Datum records
#   shard     the 8 parts `--shard K/8` one after the other (each lists all N), then `merge`
#   info      `dataconv info conv.lmdb`
#   open      libdata's reader open and its first shuffled batch of 256 (bench/first_batch.c),
#             warm and after data.mdb, lock.mdb and libdata.idx are dropped from the page cache
#             (fsync + POSIX_FADV_DONTNEED: no root, other files stay cached): with the record
#             index the writer saved (libdata.idx), then with it moved aside (the walk of the
#             tree, as for a database made by another tool), warm and cold again
#   epoch     `dataconv bench conv.lmdb --shuffle --batch 256`, a warm epoch
# each with wall time, time per image and peak RSS (GNU time). Prints a markdown table (the
# one in docs/benchmarks.md) and keeps the raw figures in WORK/results.tsv.
#
# Usage: bench/scale.sh [--full] [--sizes "N1 N2 ..."] [--build DIR] [--work DIR] [--keep]
#   --full     sizes 10000 100000 1281167 (default: 10000 100000)
#   --build    the build folder with dataconv and libdata.so (default: build)
#   --work     where the images and databases go (default: ${TMPDIR:-/tmp}/ld_scale)
#   --keep     keep the image trees (default: each size's tree and outputs are removed after
#              it is measured; a kept tree is reused by the next run)
# Disk: 4.5 KiB per image on ext4 (du, with the folders) plus 2 KiB per record for each of
# conv.lmdb, the 8 parts and the merged database (the parts are removed after merge): at
# 1.28M, 5.6 GB of images + up to 3 x 2.5 GB of LMDB, ~13 GB at the peak. Time on the 2-core
# machine (shared, loaded): 2-4 min for 10k + 100k, 25-35 min for --full (generating 1.28M
# images ~11 min, converting ~4 min, the 8 shards ~4.5 min).
# Runs under nice 10 (the machine may be shared); one step at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$src/build
work=${TMPDIR:-/tmp}/ld_scale
sizes="10000 100000"
keep=0
while [ $# -gt 0 ]; do
    case $1 in
        --full) sizes="10000 100000 1281167" ;;
        --sizes) sizes=$2; shift ;;
        --build) build=$(cd "$2" && pwd); shift ;;
        --work) work=$2; shift ;;
        --keep) keep=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "scale.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
dataconv=$build/dataconv
py=/usr/bin/python3
[ -x "$dataconv" ] || { echo "scale.sh: no $dataconv: build first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scale.sh: GNU time is missing (apt-get install time)" >&2; exit 2; }
renice -n 10 -p $$ > /dev/null 2>&1 || true
mkdir -p "$work"
work=$(cd "$work" && pwd)
fb=$work/first_batch
cc -O2 -std=c11 -I"$src/libdata/include" "$here/first_batch.c" -L"$build" -ldata \
    -Wl,-rpath,"$build" -o "$fb"
results=$work/results.tsv
: > "$results"
conv_opts=(--resize 24 -q)

pgpgin() { awk '/^pgpgin / {print $2}' /proc/vmstat; } # KiB read from block devices so far
# timed NAME CMD...: runs CMD under GNU time; sets T_<NAME> (wall s), M_<NAME> (peak KiB),
# C_<NAME> (CPU s, user + system: what contention on a shared machine does not inflate) and
# D_<NAME> (KiB the whole machine read from disk meanwhile: the input was not all cached)
timed() {
    local name=$1 in0 u s
    shift
    in0=$(pgpgin)
    /usr/bin/time -f '%e %M %U %S' -o "$work/time.$name" "$@" > "$work/out.$name" 2> "$work/err.$name" ||
        { cat "$work/err.$name" >&2; echo "scale.sh: failed: $*" >&2; exit 1; }
    read -r "T_$name" "M_$name" u s < "$work/time.$name"
    printf -v "C_$name" '%s' "$(echo "$u + $s" | bc)"
    printf -v "D_$name" '%s' "$(($(pgpgin) - in0))"
}
drop() { # FILE out of the page cache (written back first)
    "$py" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$1"
}
cached_kib() { fincore -b -n -o RES "$1" 2> /dev/null | awk '{print int($1 / 1024)}'; }

printf 'n\tgen_s\timages_kib\tlmdb_kib\tlist_s\tlist_kib\tconv_s\tconv_kib\tshard_s\tshard_kib\tmerge_s\tmerge_kib\tinfo_s\tinfo_kib\topen_warm_s\tfirst_warm_s\topen_cold_s\tfirst_cold_s\topen_kib\tcold_cached_kib\tepoch_rate\tepoch_kib\tlist_cpu\tconv_cpu\tshard_cpu\tmerge_cpu\tinfo_cpu\tconv_disk_kib\twalk_warm_s\twalk_cold_s\tload\n' >> "$results"
for n in $sizes; do
    tree=$work/img-$n
    out=$work/out-$n
    rm -rf "$out"
    mkdir -p "$out"
    echo "== $n images"
    timed gen "$py" "$here/scale_gen.py" "$tree" "$n" 1000 2
    got=$(find "$tree" -name 'img_*.jpg' | wc -l)
    [ "$got" = "$n" ] || { echo "scale.sh: $tree holds $got images, want $n (remove it)" >&2; exit 1; }
    images_kib=$(du -sk "$tree" | cut -f1)
    sync
    echo "   images: $T_gen s to make (or check), $((images_kib / 1024)) MiB on disk"
    # into the page cache (another process may have dropped caches meanwhile: D_conv says)
    t0=$(date +%s.%N)
    find "$tree" -name 'img_*.jpg' -exec cat {} + > /dev/null
    echo "   read once into the page cache: $(echo "$(date +%s.%N) - $t0" | bc) s"

    parts=$((n / 4 > 99999 ? 99999 : n / 4))
    for run in 1 2; do # the first warms the dentry and inode caches, the second is measured
        rm -rf "$out"/list*
        timed list "$dataconv" "$tree" "$out/list.lmdb" "${conv_opts[@]}" --shard 0/$parts
    done
    rm -rf "$out"/list*
    echo "   listing (--shard 0/$parts): $T_list s, $M_list KiB"

    timed conv "$dataconv" "$tree" "$out/conv.lmdb" "${conv_opts[@]}"
    lmdb_kib=$(du -sk "$out/conv.lmdb" | cut -f1)
    echo "   convert: $T_conv s ($C_conv s CPU), $M_conv KiB; conv.lmdb $((lmdb_kib / 1024)) MiB;" \
        "$((D_conv / 1024)) MiB read from disk meanwhile"

    shard_s=0 shard_kib=0 shard_cpu=0
    for k in 0 1 2 3 4 5 6 7; do
        timed part "$dataconv" "$tree" "$out/sh.lmdb" "${conv_opts[@]}" --shard $k/8
        shard_s=$(echo "$shard_s + $T_part" | bc)
        shard_cpu=$(echo "$shard_cpu + $C_part" | bc)
        [ "$M_part" -gt "$shard_kib" ] && shard_kib=$M_part
    done
    timed merge "$dataconv" merge "$out/sh.lmdb" -q
    merged=$("$dataconv" info "$out/sh.lmdb" | awk '/^entries:/ {print $2}')
    [ "$merged" = "$n" ] || { echo "scale.sh: merged database holds $merged records, want $n" >&2; exit 1; }
    rm -rf "$out"/sh-*-of-* "$out/sh.lmdb"
    echo "   8 parts: $shard_s s (largest RSS $shard_kib KiB); merge: $T_merge s, $M_merge KiB"

    timed info "$dataconv" info "$out/conv.lmdb"
    echo "   info: $T_info s, $M_info KiB"

    db=$out/conv.lmdb
    [ -f "$db/libdata.idx" ] || { echo "scale.sh: $db has no libdata.idx (an older build?)" >&2; exit 1; }
    drop_db() { drop "$db/data.mdb"; drop "$db/lock.mdb"; [ ! -f "$db/libdata.idx" ] || drop "$db/libdata.idx"; }
    cat "$db/data.mdb" "$db/libdata.idx" > /dev/null
    "$fb" "$db" > /dev/null
    read -r _ open_warm _ first_warm _ open_kib < <("$fb" "$db")
    drop_db
    cold_cached=$(cached_kib "$db/data.mdb")
    read -r _ open_cold _ first_cold _ _ < <("$fb" "$db")
    echo "   reader open (saved index): warm $open_warm s, cold $open_cold s ($cold_cached KiB of" \
        "data.mdb cached before); first batch warm $first_warm s, cold $first_cold s; peak RSS" \
        "$open_kib KiB"
    mv "$db/libdata.idx" "$out/libdata.idx.aside" # the walk, as for another tool's database
    cat "$db/data.mdb" > /dev/null
    "$fb" "$db" > /dev/null
    read -r _ walk_warm _ _ _ walk_kib < <("$fb" "$db")
    drop_db
    read -r _ walk_cold _ _ _ _ < <("$fb" "$db")
    mv "$out/libdata.idx.aside" "$db/libdata.idx"
    echo "   reader open (walk, libdata.idx moved aside): warm $walk_warm s, cold $walk_cold s;" \
        "peak RSS $walk_kib KiB"

    cat "$out/conv.lmdb/data.mdb" > /dev/null
    timed bench "$dataconv" bench "$out/conv.lmdb" --shuffle --batch 256 --epochs 2
    rate=$(sed -n 's/^epoch 1: .* s: \([0-9]*\) samples\/s.*/\1/p' "$work/out.bench")
    echo "   warm shuffled epoch: $rate samples/s; bench peak RSS $M_bench KiB"

    printf '%s\t' "$n" "$T_gen" "$images_kib" "$lmdb_kib" "$T_list" "$M_list" "$T_conv" "$M_conv" \
        "$shard_s" "$shard_kib" "$T_merge" "$M_merge" "$T_info" "$M_info" "$open_warm" "$first_warm" \
        "$open_cold" "$first_cold" "$open_kib" "$cold_cached" "$rate" "$M_bench" "$C_list" "$C_conv" \
        "$shard_cpu" "$C_merge" "$C_info" "$D_conv" "$walk_warm" "$walk_cold" >> "$results"
    awk '{print $1}' /proc/loadavg >> "$results"
    rm -rf "$out"
    [ "$keep" = 1 ] || rm -rf "$tree"
done

"$py" - "$results" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
f = lambda r, k: float(r[k])
us = lambda r, k: f(r, k) / int(r["n"]) * 1e6
mib = lambda r, k: f(r, k) / 1024
print()
print("| images | disk: JPEGs / LMDB | listing | convert | 8 shards + merge | info | "
      "reader open warm / cold: saved index; walk | first batch warm / cold | warm shuffled epoch |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    n = int(r["n"])
    print(f"| {n:,} | {mib(r,'images_kib'):,.0f} / {mib(r,'lmdb_kib'):,.0f} MiB "
          f"| {f(r,'list_s'):.2f} s, {us(r,'list_s'):.1f} µs/img, {mib(r,'list_kib'):.0f} MiB "
          f"| {f(r,'conv_s'):.1f} s, {us(r,'conv_s'):.0f} µs/img (CPU {us(r,'conv_cpu'):.0f}), {mib(r,'conv_kib'):.0f} MiB "
          f"| {f(r,'shard_s'):.1f} + {f(r,'merge_s'):.1f} s, {us(r,'shard_s') + us(r,'merge_s'):.0f} µs/img "
          f"(CPU {us(r,'shard_cpu') + us(r,'merge_cpu'):.0f}), "
          f"{mib(r,'shard_kib'):.0f} / {mib(r,'merge_kib'):.0f} MiB "
          f"| {f(r,'info_s'):.2f} s, {mib(r,'info_kib'):.0f} MiB "
          f"| {f(r,'open_warm_s'):.3f} / {f(r,'open_cold_s'):.3f} s; "
          f"{f(r,'walk_warm_s'):.3f} / {f(r,'walk_cold_s'):.3f} s, {mib(r,'open_kib'):.0f} MiB "
          f"| {f(r,'first_warm_s')*1e3:.1f} / {f(r,'first_cold_s')*1e3:.1f} ms "
          f"| {f(r,'epoch_rate'):,.0f} img/s, {1e6/f(r,'epoch_rate'):.1f} µs/img, {mib(r,'epoch_kib'):.0f} MiB |")
print()
for r in rows:
    print(f"{int(r['n']):,} images: {f(r,'conv_disk_kib')/1024:,.0f} MiB read from disk (any process) "
          f"during the conversion; 1-min load average after the size: {r['load']}")
if len(rows) > 1:
    a = rows[0]
    print()
    print(f"Against {int(a['n']):,} images (time per image and peak RSS, ratio):")
    for r in rows[1:]:
        parts = []
        for name, k, m in (("listing", "list_s", "list_kib"), ("convert", "conv_s", "conv_kib"),
                           ("convert CPU", "conv_cpu", "conv_kib"),
                           ("shards", "shard_s", "shard_kib"), ("shards CPU", "shard_cpu", "shard_kib"),
                           ("merge", "merge_s", "merge_kib"), ("merge CPU", "merge_cpu", "merge_kib"),
                           ("info", "info_s", "info_kib"), ("open warm", "open_warm_s", "open_kib")):
            parts.append(f"{name} {us(r,k)/us(a,k):.2f}x time/img, RSS {f(r,m)/f(a,m):.2f}x "
                         f"(+{mib(r,m)-mib(a,m):.1f} MiB)")
        parts.append(f"epoch {f(a,'epoch_rate')/f(r,'epoch_rate'):.2f}x time/img, "
                     f"RSS +{mib(r,'epoch_kib')-mib(a,'epoch_kib'):.1f} MiB")
        print(f"  {int(r['n']):,}: " + "; ".join(parts))
PY
echo "(raw figures: $results)"
