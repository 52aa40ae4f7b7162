#!/usr/bin/env bash
# dataconv merge (issue 13, item 2): the merge of `dataconv SRC OUT --shard K/N` parts equals
# a single-process conversion of the same SRC with the same options, sample by sample, read
# with h5py and python-lmdb (tests/python/merge_check.py):
#  - HDF5, N in 1, 3, 4, 8; raw and --quality storage; folder and list input; with and without
#    --shuffle (a bad file in SRC: parts list more samples than they hold);
#  - LMDB, N in 1, 3, 4, 8; raw and --quality; with and without --shuffle: keys and values
#    record by record, and the sidecar;
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

# merge_case DIR EXT INPUT... -- OPTS...: a single run DIR/full.EXT, and for each N its parts
# DIR/nN/out-*.EXT merged into DIR/nN/out.EXT, given four ways (reversed list, quoted pattern,
# found beside OUT, one part).
merge_case() {
    local dir=$1 ext=$2 kind
    shift 2
    local input=()
    while [ "$1" != -- ]; do input+=("$1"); shift; done
    shift
    kind=h5; [ "$ext" = lmdb ] && kind=lmdb
    mkdir -p "$dir"
    conv "${input[@]}" "$dir/full.$ext" "$@"
    for n in 1 3 4 8; do
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
for store in raw q70; do
    opts=(--resize 32x24)
    [ $store = q70 ] && opts+=(--quality 70)
    for shuf in sorted shuffled; do
        sopts=()
        [ $shuf = shuffled ] && sopts=(--shuffle --seed 7)
        merge_case "$TMP/h5/folder-$store-$shuf" h5 "$TMP/src" -- "${opts[@]}" "${sopts[@]}"
        merge_case "$TMP/h5/list-$store-$shuf" h5 --list "$TMP/list.txt" --root "$TMP/src" -- \
            "${opts[@]}" "${sopts[@]}"
    done
done
# encoded with every image at its own size (no --resize): /shape and height/width 0
merge_case "$TMP/h5/folder-original" h5 "$TMP/src" -- --encoded

check "LMDB: raw and --quality, shuffled or not, N = 1, 3, 4, 8"
for store in raw q70; do
    opts=(--resize 32x24)
    [ $store = q70 ] && opts+=(--quality 70)
    merge_case "$TMP/lmdb/$store-sorted" lmdb "$TMP/src" -- "${opts[@]}"
    merge_case "$TMP/lmdb/$store-shuffled" lmdb "$TMP/src" -- "${opts[@]}" --shuffle --seed 3
done

check "the merged datasets equal the single runs (h5py, python-lmdb)"
"$PYTHON" "$SRC/tests/python/merge_check.py" "$pairs" > "$TMP/checked" || fail "merge_check.py"
[ "$(grep -c '^equal' "$TMP/checked")" -eq "$(wc -l < "$pairs")" ] || fail "not every pair checked"
grep -q "(24 samples)" "$TMP/checked" || fail "expected 24 samples (the bad file skipped)"

check "the merged file names its parts relative to its folder: the folder can be moved"
d=$TMP/h5/folder-q70-shuffled/n4
"$PYTHON" -c "import h5py,sys; print(list(h5py.File(sys.argv[1]).attrs['parts']))" "$d/out.h5" \
    > "$TMP/parts"
grep -q "\['out-00000-of-00004.h5', 'out-00001-of-00004.h5', 'out-00002-of-00004.h5', 'out-00003-of-00004.h5'\]" \
    "$TMP/parts" || { cat "$TMP/parts"; fail "parts attribute"; }
mkdir -p "$TMP/elsewhere" "$TMP/third"
mv "$TMP/h5/folder-q70-shuffled" "$TMP/elsewhere/moved"
(cd "$TMP/third" && echo "h5 ../elsewhere/moved/full.h5 ../elsewhere/moved/n4/out.h5" > pairs &&
    "$PYTHON" "$SRC/tests/python/merge_check.py" pairs) || fail "moved folder not read equal"

check "parts in a sub-folder: relative mappings; the whole folder moved"
m=$TMP/sub
mkdir -p "$m/parts"
cp "$TMP/h5/list-raw-sorted/full.h5" "$m/"
for k in 0 1 2; do conv --list "$TMP/list.txt" --root "$TMP/src" "$m/parts/t.h5" --resize 32x24 --shard $k/3; done
run "$DATACONV" merge "$m/all.h5" "$m"/parts/t-*.h5
expect_rc 0
mv "$m" "$TMP/sub2"
(cd "$TMP/third" && echo "h5 $TMP/sub2/full.h5 $TMP/sub2/all.h5" > pairs2 &&
    "$PYTHON" "$SRC/tests/python/merge_check.py" pairs2) || fail "sub-folder parts after a move"
"$PYTHON" -c "import h5py,sys; print(list(h5py.File(sys.argv[1]).attrs['parts']))" \
    "$TMP/sub2/all.h5" | grep -q "'parts/t-00000-of-00003.h5'" || fail "sub-folder part names"

check "parts outside the merged file's folder: absolute mappings"
mkdir -p "$TMP/abs"
run "$DATACONV" merge "$TMP/abs/all.h5" "$TMP/sub2"/parts/t-*.h5
expect_rc 0
real=$(cd "$TMP/sub2/parts" && pwd -P)
"$PYTHON" -c "import h5py,sys; print(list(h5py.File(sys.argv[1]).attrs['parts']))" \
    "$TMP/abs/all.h5" | grep -q "'$real/t-00000-of-00003.h5'" || fail "absolute part names"
(cd "$TMP/third" && echo "h5 $TMP/sub2/full.h5 $TMP/abs/all.h5" > pairs3 &&
    "$PYTHON" "$SRC/tests/python/merge_check.py" pairs3) || fail "absolute mappings"

check "more parts than samples (N = 30 > 25 listed): empty parts are listed, not mapped"
mkdir -p "$TMP/many"
conv "$TMP/src" "$TMP/many/full.h5" --resize 16 --quality 70
conv "$TMP/src" "$TMP/many/full.lmdb" --resize 16
for k in $(seq 0 29); do
    conv "$TMP/src" "$TMP/many/p.h5" --resize 16 --quality 70 --shard $k/30
    conv "$TMP/src" "$TMP/many/p.lmdb" --resize 16 --shard $k/30
done
run "$DATACONV" merge "$TMP/many/p.h5"
expect_rc 0
run "$DATACONV" merge "$TMP/many/p.lmdb"
expect_rc 0
printf 'h5 %s %s\nlmdb %s %s\n' "$TMP/many/full.h5" "$TMP/many/p.h5" "$TMP/many/full.lmdb" \
    "$TMP/many/p.lmdb" > "$TMP/pairs5"
"$PYTHON" "$SRC/tests/python/merge_check.py" "$TMP/pairs5" || fail "empty parts"
"$PYTHON" -c "
import h5py, sys
f = h5py.File(sys.argv[1])
assert len(f.attrs['parts']) == 30, f.attrs['parts']
assert len(f['label'].virtual_sources()) == 24, len(f['label'].virtual_sources())
" "$TMP/many/p.h5" || fail "30 parts listed, 24 non-empty ones mapped"

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
printf 'lmdb %s %s\nh5 %s %s\n' "$TMP/noext/full" "$TMP/noext/db" "$TMP/noext/fullh" \
    "$TMP/noext/plain" > "$TMP/pairs4"
"$PYTHON" "$SRC/tests/python/merge_check.py" "$TMP/pairs4" || fail "outputs without extension"

check "libdata reads the merged file: info names the parts"
run "$DATACONV" info "$TMP/sub2/all.h5"
expect_rc 0
expect_out "samples: 24"
expect_out "parts/t-00002-of-00003.h5"
echo "ok"
