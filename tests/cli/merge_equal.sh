#!/usr/bin/env bash
# dataconv merge (issue 13, item 2): the merge of `dataconv SRC OUT --shard K/N` parts equals
# a single-process conversion of the same SRC with the same options, sample by sample, read
# with h5py and python-lmdb (tests/python/merge_check.py):
#  - HDF5, N in 1, 3, 4, 8; raw and --quality storage; folder and list input; with and without
#    --shuffle (a bad file in SRC: parts list more samples than they hold);
#  - LMDB, N in 1, 3, 4, 8; raw and --quality; with and without --shuffle: keys and values
#    record by record, and the sidecar;
#    (every storage x input x N is merged; sorted and shuffled share the N values, see
#    ns_for; MERGE_EQUAL_ALL=1 runs every N with both orders too)
#  - parts given in any order, as a quoted pattern, or found beside OUT;
#  - the folder of parts + merged file moved elsewhere and read from a third folder; parts in
#    a sub-folder (relative mappings) and in an unrelated folder (absolute mappings).
source "$(dirname "$0")/lib/common.sh"
# (h5py and python-lmdb read the files themselves: no libdata in python, so this runs under
# AddressSanitizer builds too)

photo_folder "$TMP/src" abc 1
# 3 classes x 8 photos, and a file that is not an image: every run skips it (a warning)
for c in a b c; do find "$TMP/src/$c" -name '*.jpg' | sort | tail -n +9 | xargs rm -f; done
head -c 2000 "$LD_TEST_DATA/photos/p00.jpg" > "$TMP/src/b/000_zz_truncated.jpg"
# the list input: another order than the folder's, labels of our own
( cd "$TMP/src" && find . -name '*.jpg' | sed 's|^\./||' | sort -r |
    awk '{ print $0, (NR % 5) }' ) > "$TMP/list.txt"

pairs=$TMP/pairs
: > "$pairs"
conv() { "$DATACONV" "$@" -q 2>/dev/null || { "$DATACONV" "$@" -q; fail "dataconv $*"; }; }

# ns_for BITS...: the N values of a case. A merge sees only the parts: how the listing was
# ordered (sorted, or shuffled) changes which samples each part holds and which part lists
# the bad file, not what the merge does with them; the storage (and for HDF5 the input kind:
# labels, names, attributes) changes the datasets it maps. So every storage x input case gets
# every N, split between its sorted and its shuffled run: the case's bits (storage, input,
# order; 0/1) with an even sum get N = 1 and 4, odd ones N = 3 and 8. Each order meets every
# N with each storage and each input kind. (Both orders with every N, as before, repeated the
# same merges: 120 more dataconv runs, a third of this test's.)
ns_for() {
    local sum=0 b
    for b in "$@"; do sum=$((sum + b)); done
    if [ -n "${MERGE_EQUAL_ALL:-}" ]; then echo "1 3 4 8"
    elif [ $((sum % 2)) = 0 ]; then echo "1 4"
    else echo "3 8"; fi
}

# NS="N..." merge_case DIR EXT INPUT... -- OPTS...: a single run DIR/full.EXT, and for each N
# of NS (default 1 3 4 8) its parts DIR/nN/out-*.EXT merged into DIR/nN/out.EXT, given four
# ways (reversed list, quoted pattern, found beside OUT, one part).
merge_case() {
    local dir=$1 ext=$2 kind
    shift 2
    local input=()
    while [ "$1" != -- ]; do input+=("$1"); shift; done
    shift
    kind=h5; [ "$ext" = lmdb ] && kind=lmdb
    mkdir -p "$dir"
    conv "${input[@]}" "$dir/full.$ext" "$@"
    echo "  ${dir#"$TMP"/}: N = ${NS:-1 3 4 8}"
    for n in ${NS:-1 3 4 8}; do
        mkdir -p "$dir/n$n"
        for ((k = 0; k < n; k++)); do conv "${input[@]}" "$dir/n$n/out.$ext" "$@" --shard "$k/$n"; done
        case $n in
        1) run "$DATACONV" merge "$dir/n$n/out.$ext" "$dir/n$n/out-00000-of-00001.$ext" ;;
        3) run "$DATACONV" merge "$dir/n$n/out.$ext" $(ls -r "$dir"/n$n/out-*-of-00003.$ext -d) ;;
        4) run "$DATACONV" merge "$dir/n$n/out.$ext" "$dir/n$n/out-*-of-00004.$ext" ;;
        8) run "$DATACONV" merge "$dir/n$n/out.$ext" ;;
        esac
        expect_rc 0
        expect_err "merged $n parts"
        echo "$kind $dir/full.$ext $dir/n$n/out.$ext" >> "$pairs"
    done
}

check "HDF5: raw and --quality, folder and list input, shuffled or not, N = 1, 3, 4, 8"
for s in 0 1; do
    store=raw opts=(--resize 32x24)
    [ $s = 1 ] && store=q70 opts+=(--quality 70)
    for h in 0 1; do
        shuf=sorted sopts=()
        [ $h = 1 ] && shuf=shuffled sopts=(--shuffle --seed 7)
        NS=$(ns_for $s 0 $h) merge_case "$TMP/h5/folder-$store-$shuf" h5 "$TMP/src" -- \
            "${opts[@]}" "${sopts[@]}"
        NS=$(ns_for $s 1 $h) merge_case "$TMP/h5/list-$store-$shuf" h5 --list "$TMP/list.txt" \
            --root "$TMP/src" -- "${opts[@]}" "${sopts[@]}"
    done
done
# encoded with every image at its own size (no --resize): /shape and height/width 0
merge_case "$TMP/h5/folder-original" h5 "$TMP/src" -- --encoded

check "LMDB: raw and --quality, shuffled or not, N = 1, 3, 4, 8"
for s in 0 1; do
    store=raw opts=(--resize 32x24)
    [ $s = 1 ] && store=q70 opts+=(--quality 70)
    NS=$(ns_for $s 0) merge_case "$TMP/lmdb/$store-sorted" lmdb "$TMP/src" -- "${opts[@]}"
    NS=$(ns_for $s 1) merge_case "$TMP/lmdb/$store-shuffled" lmdb "$TMP/src" -- "${opts[@]}" \
        --shuffle --seed 3
done

check "the merged datasets equal the single runs (h5py, python-lmdb)"
"$PYTHON" "$SRC/tests/python/merge_check.py" "$pairs" > "$TMP/checked" || fail "merge_check.py"
[ "$(grep -c '^equal' "$TMP/checked")" -eq "$(wc -l < "$pairs")" ] || fail "not every pair checked"
grep -q "(24 samples)" "$TMP/checked" || fail "expected 24 samples (the bad file skipped)"

# The checks with h5py / python-lmdb of the cases below run at the end, in one python process
# (the last check): each python start with h5py took ~0.5 s, ten times. The files they read
# are not changed after their case.
check "the merged file names its parts relative to its folder: the folder can be moved"
mkdir -p "$TMP/elsewhere" "$TMP/third"
mv "$TMP/h5/folder-q70-shuffled" "$TMP/elsewhere/moved"
# (read from $TMP/third: ../elsewhere/moved/n4/out.h5 names its parts out-0000K-of-00004.h5,
# and reads equal to ../elsewhere/moved/full.h5)

check "parts in a sub-folder: relative mappings; the whole folder moved"
m=$TMP/sub
mkdir -p "$m/parts"
cp "$TMP/h5/list-raw-sorted/full.h5" "$m/"
for k in 0 1 2; do conv --list "$TMP/list.txt" --root "$TMP/src" "$m/parts/t.h5" --resize 32x24 --shard $k/3; done
run "$DATACONV" merge "$m/all.h5" "$m"/parts/t-*.h5
expect_rc 0
mv "$m" "$TMP/sub2"
# (the last check: $TMP/sub2/all.h5 names parts/t-00000-of-00003.h5 and reads equal to full.h5)

check "parts outside the merged file's folder: absolute mappings"
mkdir -p "$TMP/abs"
run "$DATACONV" merge "$TMP/abs/all.h5" "$TMP/sub2"/parts/t-*.h5
expect_rc 0
real=$(cd "$TMP/sub2/parts" && pwd -P)
# (the last check: $TMP/abs/all.h5 names $real/t-00000-of-00003.h5 and reads equal to full.h5)

# A small input of its own: 5 listed files (4 photos and the bad file, last) in 8 parts. It was
# the 25 files of src in 30 parts, 62 conversions; the same kinds of parts are here: 3 that
# list nothing (empty ranges [floor(5K/8), floor(5(K+1)/8))) and one that lists only the bad
# file, so holds none.
check "more parts than samples (N = 8 > 5 listed): empty parts are listed, not mapped"
mkdir -p "$TMP/few/a" "$TMP/few/b" "$TMP/many"
good=("$TMP"/src/a/*.jpg)
ln "${good[@]:0:3}" "$TMP/few/a/"
ln "$TMP/src/b/000_p00.jpg" "$TMP/src/b/000_zz_truncated.jpg" "$TMP/few/b/"
conv "$TMP/few" "$TMP/many/full.h5" --resize 16 --quality 70
conv "$TMP/few" "$TMP/many/full.lmdb" --resize 16
for k in $(seq 0 7); do
    conv "$TMP/few" "$TMP/many/p.h5" --resize 16 --quality 70 --shard $k/8
    conv "$TMP/few" "$TMP/many/p.lmdb" --resize 16 --shard $k/8
done
run "$DATACONV" merge "$TMP/many/p.h5"
expect_rc 0
run "$DATACONV" merge "$TMP/many/p.lmdb"
expect_rc 0
# (the last check: both equal the single runs; p.h5 lists 8 parts and maps the 4 non-empty ones)

check "outputs without .h5/.lmdb: parts 'NAME-KKKKK-of-NNNNN' found beside NAME (HDF5 file, LMDB directory)"
mkdir -p "$TMP/noext"
conv "$TMP/src" "$TMP/noext/full" --resize 16 --format lmdb
conv "$TMP/src" "$TMP/noext/fullh" --resize 16
for k in 0 1 2; do
    conv "$TMP/src" "$TMP/noext/db/" --resize 16 --format lmdb --shard $k/3
    conv "$TMP/src" "$TMP/noext/plain" --resize 16 --shard $k/3
done
run "$DATACONV" merge "$TMP/noext/db"
expect_rc 0
run "$DATACONV" merge "$TMP/noext/plain"
expect_rc 0
# (the last check: noext/db equals noext/full, noext/plain equals noext/fullh)

check "h5py / python-lmdb: the merged files of the cases above (from a third folder)"
(cd "$TMP/third" && "$PYTHON" - "$SRC/tests/python" "$TMP" "$real" <<'PY') || fail "see the last 'case:' line"
import sys
import h5py
sys.path.insert(0, sys.argv[1])
import merge_check as mc
tmp, real = sys.argv[2], sys.argv[3]

def case(what):
    print("case:", what, flush=True)

def equal(kind, single, merged):
    n = (mc.check_h5 if kind == "h5" else mc.check_lmdb)(single, merged)
    print(f"  equal: {merged} == {single} ({n} samples)", flush=True)

def parts(path):
    return [p.decode() if isinstance(p, bytes) else str(p) for p in h5py.File(path, "r").attrs["parts"]]

case("the merged file names its parts relative to its folder: the folder can be moved")
names = parts("../elsewhere/moved/n4/out.h5")
assert names == [f"out-0000{k}-of-00004.h5" for k in range(4)], names
equal("h5", "../elsewhere/moved/full.h5", "../elsewhere/moved/n4/out.h5")
case("parts in a sub-folder: relative mappings; the whole folder moved")
equal("h5", f"{tmp}/sub2/full.h5", f"{tmp}/sub2/all.h5")
assert "parts/t-00000-of-00003.h5" in parts(f"{tmp}/sub2/all.h5"), parts(f"{tmp}/sub2/all.h5")
case("parts outside the merged file's folder: absolute mappings")
assert f"{real}/t-00000-of-00003.h5" in parts(f"{tmp}/abs/all.h5"), parts(f"{tmp}/abs/all.h5")
equal("h5", f"{tmp}/sub2/full.h5", f"{tmp}/abs/all.h5")
case("more parts than samples: empty parts are listed, not mapped (8 listed, 4 non-empty mapped)")
equal("h5", f"{tmp}/many/full.h5", f"{tmp}/many/p.h5")
equal("lmdb", f"{tmp}/many/full.lmdb", f"{tmp}/many/p.lmdb")
with h5py.File(f"{tmp}/many/p.h5", "r") as f:
    assert len(f.attrs["parts"]) == 8, f.attrs["parts"]
    assert len(f["label"].virtual_sources()) == 4, len(f["label"].virtual_sources())
case("outputs without .h5/.lmdb")
equal("lmdb", f"{tmp}/noext/full", f"{tmp}/noext/db")
equal("h5", f"{tmp}/noext/fullh", f"{tmp}/noext/plain")
PY

check "libdata reads the merged file: info names the parts"
run "$DATACONV" info "$TMP/sub2/all.h5"
expect_rc 0
expect_out "samples: 24"
expect_out "parts/t-00002-of-00003.h5"
echo "ok"
