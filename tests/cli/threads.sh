#!/usr/bin/env bash
# The output is byte-identical for any -j: raw and JPEG-encoded HDF5, and LMDB data.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
mkdir "$TMP/j1" "$TMP/j2" "$TMP/j3"
# Same relative output name in each folder: the command line is stored in the file.
for opts in "--resize 64" "--quality 70 --resize 96" \
    "--shuffle --seed 7 --mode pad --resize 50x70"; do
    check "-j 1, -j 2 and -j 3 give identical files: $opts"
    for j in 1 2 3; do
        (cd "$TMP/j$j" && run "$DATACONV" "$tree" out.h5 $opts -j "$j" && expect_rc 0)
    done
    cmp "$TMP/j1/out.h5" "$TMP/j2/out.h5" || fail "-j 1 and -j 2 differ ($opts)"
    cmp "$TMP/j1/out.h5" "$TMP/j3/out.h5" || fail "-j 1 and -j 3 differ ($opts)"
done
check "the same conversion twice gives the same file (no time stamps)"
(cd "$TMP/j2" && run "$DATACONV" "$tree" out.h5 --resize 64 -j 2 && expect_rc 0 && mv out.h5 a.h5)
sleep 1.1
(cd "$TMP/j2" && run "$DATACONV" "$tree" out.h5 --resize 64 -j 2 && expect_rc 0)
cmp "$TMP/j2/a.h5" "$TMP/j2/out.h5" || fail "two identical runs differ"
echo "threads: all checks passed"
