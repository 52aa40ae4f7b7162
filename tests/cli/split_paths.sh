#!/usr/bin/env bash
# How a --split list names its files (issue 12, item 10): absolute paths by default (Caffe's
# HDF5Data opens the lines relative to its own working folder, so only absolute paths work
# from anywhere); --split-paths relative writes names relative to the list's folder, which
# libdata's reader and `info` resolve against the list's folder, so the set can be moved.
# `info` on a list with a missing part names that part.
source "$(dirname "$0")/lib/common.sh"
mkdir -p "$TMP/work/out" "$TMP/elsewhere"
cd "$TMP/work"

check "default: absolute paths, readable from another folder"
run "$DATACONV" "$LD_TEST_DATA/tree" out/abs.h5 --resize 16 --split 2K -q
expect_rc 0
n=$(wc -l < out/abs.txt)
[ "$n" -ge 2 ] || fail "expected several parts, got $n"
while read -r line; do
    case $line in
        "$TMP"/work/out/abs-0*.h5) [ -f "$line" ] || fail "listed part $line missing" ;;
        *) fail "not an absolute path to the part: $line" ;;
    esac
done < out/abs.txt
(cd "$TMP/elsewhere" && "$DATACONV" info "$TMP/work/out/abs.txt" > "$TMP/info.txt")
grep -q "total: $n files, 9 samples" "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "info"; }

check "--split-paths relative: bare names; moved, read from another folder by bench and info"
run "$DATACONV" "$LD_TEST_DATA/tree" out/rel.h5 --resize 16 --split 2K -q --split-paths relative
expect_rc 0
grep -vq '^rel-0[0-9]*\.h5$' out/rel.txt && { cat out/rel.txt; fail "relative list has paths"; }
mv out "$TMP/moved"
cd "$TMP/elsewhere"
run "$DATACONV" info "$TMP/moved/rel.txt"
expect_rc 0
expect_out "9 samples"
run "$DATACONV" bench "$TMP/moved/rel.txt" --epochs 1 --batch 4
expect_rc 0
expect_out "9 samples"
check "a relative list given by a relative path (../moved/rel.txt)"
run "$DATACONV" info ../moved/rel.txt
expect_rc 0
expect_out "9 samples"
check "a same-named file in the current folder does not shadow the list's folder"
# another dataset (4 samples, not the part's 5) under the part's name, here
"$DATACONV" "$LD_TEST_DATA/tree/cat" rel-00000.h5 --flat --resize 16 -q
[ "$(awk '/^samples:/ {print $2}' <("$DATACONV" info rel-00000.h5))" = 4 ] || fail "decoy"
[ "$(awk '/samples$/ {print $2; exit}' <("$DATACONV" info "$TMP/moved/rel.txt"))" != 4 ] ||
    fail "decoy has the part's sample count: the check below could not fail"
run "$DATACONV" bench "$TMP/moved/rel.txt" --epochs 1 --batch 4
expect_rc 0
expect_out "9 samples"
rm rel-00000.h5

check "info on a list whose part is missing names the part"
rm "$TMP/moved/rel-00001.h5"
run "$DATACONV" info "$TMP/moved/rel.txt"
expect_rc 1
expect_err "line 2: part $TMP/moved/rel-00001.h5: No such file or directory"
rm "$TMP/moved/rel-00000.h5"
run "$DATACONV" info "$TMP/moved/rel.txt"
expect_rc 1
expect_err "line 1: part $TMP/moved/rel-00000.h5: No such file or directory"

check "--split-paths takes absolute or relative only"
run "$DATACONV" "$LD_TEST_DATA/tree" x.h5 --split 2K --split-paths sideways
expect_rc 2
expect_err "expected absolute or relative"
echo "split_paths: all checks passed"
