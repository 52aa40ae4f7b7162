#!/usr/bin/env bash
# A merged file (issue 13 item 5: virtual datasets over sharded parts, built here by
# tests/python/vds_build.py with dataconv + h5py): `info` lists its parts with their sample
# ranges (bounded for many parts) and flags bad ones; `bench` reads it on the direct path
# (pread from the parts) with a bounded number of open part files, and refuses a missing,
# shortened or foreign part naming it. The pixel-by-pixel checks against h5py are in
# tests/python/test_py_vds.py.
source "$(dirname "$0")/lib/common.sh"
build="$SRC/tests/python/vds_build.py"

cd "$TMP"
"$PYTHON" - "$LD_TEST_DATA" <<'PY'
import glob, os, sys
photos = sorted(glob.glob(os.path.join(sys.argv[1], "photos", "p*.jpg")))
with open("all.txt", "w") as f:
    for r in range(4):
        for i, p in enumerate(photos):
            f.write(f"{os.path.relpath(p, sys.argv[1])} {(i + r) % 5}\n")
PY
n=$(wc -l < all.txt)
mkdir -p sub
(cd sub && DATACONV="$DATACONV" "$PYTHON" "$build" parts ../all.txt "$LD_TEST_DATA" p 32 --resize 16 >/dev/null)
"$PYTHON" "$build" merge m.h5 sub/p-000*-of-00032.h5

check "info: a merged file's parts, the first and last three, with their sample ranges"
run "$DATACONV" info m.h5
expect_rc 0
expect_out "^samples: $n$"
expect_out "^merged: 32 parts (32 with samples), shard_count 32, listing_total $n, run_id "
expect_out "^  1: sub/p-00000-of-00032.h5: samples 0..2 (3)$"
expect_out "^  3: sub/p-00002-of-00032.h5: samples 6..8 (3)$"
expect_out "^  \.\.\. 26 more$"
expect_out "^  32: sub/p-00031-of-00032.h5: samples 93..95 (3)$"
expect_out "/data: ($n, 3, 16, 16) uint8, virtual: 32 sources (the parts above)"
if grep -q "PROBLEMS\|source 1:" "$TMP/out"; then cat "$TMP/out"; fail "listed per source or flagged"; fi
[ "$(wc -l < "$TMP/out")" -lt 30 ] || { cat "$TMP/out"; fail "info output grows with the parts"; }

check "bench reads it on the direct path, from another folder"
mkdir -p elsewhere
cd elsewhere
run "$DATACONV" bench ../m.h5 -v --shuffle --batch 10
cd ..
expect_rc 0
expect_err "$n samples (hdf5 raw uint8 virtual, 32 parts, direct pread)"
sum=$(grep -o "checksum [0-9]*" "$TMP/out")

merge_usage=$("$DATACONV" merge --help 2>&1 || true)
if [[ "$merge_usage" == "Usage: dataconv merge"* ]]; then
    check "the same parts merged by 'dataconv merge': direct path, the same bytes"
    run "$DATACONV" merge m2.h5 sub/p-000*-of-00032.h5
    expect_rc 0
    run "$DATACONV" bench m2.h5 -v --shuffle --batch 10
    expect_rc 0
    expect_err "$n samples (hdf5 raw uint8 virtual, 32 parts, direct pread)"
    [ "$(grep -o "checksum [0-9]*" "$TMP/out")" = "$sum" ] || { cat "$TMP/out"; fail "other bytes"; }
else
    echo "note: this dataconv has no 'merge' command: only vds_build.py's merged files are read"
fi

check "parts outside the merged file's folder: absolute mappings, read and described the same"
mkdir -p other
"$PYTHON" "$build" merge other/abs.h5 sub/p-000*-of-00032.h5
run "$DATACONV" info other/abs.h5
expect_rc 0
expect_out "^  1: $TMP/sub/p-00000-of-00032.h5: samples 0..2 (3)$"
run "$DATACONV" bench other/abs.h5 -v --shuffle --batch 10
expect_rc 0
expect_err "$n samples (hdf5 raw uint8 virtual, 32 parts, direct pread)"
[ "$(grep -o "checksum [0-9]*" "$TMP/out")" = "$sum" ] || { cat "$TMP/out"; fail "other bytes"; }

check "32 parts under 'ulimit -n 24': at most 12 part files open at once, same bytes"
# All 32 parts open at once do not fit in 24 descriptors (HDF5's own VDS reading keeps every
# source it touched open, and reads the ones it cannot open as fill values, silently); the
# store closes the least recently used part beyond half of the limit.
run bash -c 'ulimit -n 24 && exec "$0" "$@"' "$DATACONV" bench m.h5 --shuffle --batch 10 -j 2
expect_rc 0
[ "$(grep -o "checksum [0-9]*" "$TMP/out")" = "$sum" ] || { cat "$TMP/out"; fail "other bytes"; }

check "a part gone: info flags it once, the reader refuses naming it"
mv sub/p-00007-of-00032.h5 sub/gone.h5
run "$DATACONV" info m.h5
expect_out "^  8: sub/p-00007-of-00032.h5: samples 21..23 (3): MISSING (looked for as sub/p-00007-of-00032.h5)$"
expect_out "^PROBLEMS (1):"
expect_out "part 8 of 32, sub/p-00007-of-00032.h5: MISSING"
run "$DATACONV" bench m.h5
expect_rc 1
expect_err "source file 'sub/p-00007-of-00032.h5' (source 8 of 32; looked for as sub/p-00007-of-00032.h5) does not exist"
mv sub/gone.h5 sub/p-00007-of-00032.h5

check "a part with fewer samples than its mapping: flagged and refused"
cp sub/p-00020-of-00032.h5 keep.h5
"$PYTHON" -c "
import h5py
with h5py.File('sub/p-00020-of-00032.h5', 'a') as f:
    for n in ('data', 'label', 'filename'):
        f[n].resize(2, axis=0)
"
run "$DATACONV" info m.h5
expect_out "^  21: sub/p-00020-of-00032.h5: samples 60..62 (3): HOLDS 2 SAMPLES, the merged file maps 3$"
run "$DATACONV" bench m.h5
expect_rc 1
expect_err "maps 3 rows of part .*sub/p-00020-of-00032.h5 (rows 60..62), but that part's 'data' holds 2 rows"
mv keep.h5 sub/p-00020-of-00032.h5

check "a part from another run: flagged and refused"
"$PYTHON" -c "
import h5py
with h5py.File('sub/p-00031-of-00032.h5', 'a') as f:
    f.attrs['run_id'] = '00000000deadbeef'
"
run "$DATACONV" info m.h5
expect_out "^  32: sub/p-00031-of-00032.h5: samples 93..95 (3): FROM ANOTHER RUN (run_id 00000000deadbeef)$"
run "$DATACONV" bench m.h5
expect_rc 1
expect_err "sub/p-00031-of-00032.h5 comes from another run (its run_id 00000000deadbeef"

check "two parts of equal size swapped after the merge: flagged and refused (issue 26 item 4)"
mv sub/p-00005-of-00032.h5 swap.h5
mv sub/p-00006-of-00032.h5 sub/p-00005-of-00032.h5
mv swap.h5 sub/p-00006-of-00032.h5
run "$DATACONV" info m.h5
expect_out "^  6: sub/p-00005-of-00032.h5: samples 15..17 (3): IS SHARD 6 OF 32 (swapped or renamed after the merge)$"
expect_out "^  7: sub/p-00006-of-00032.h5: samples 18..20 (3): IS SHARD 5 OF 32"
run "$DATACONV" bench m.h5
expect_rc 1
expect_err "mapping 7 of 32 reads .*sub/p-00006-of-00032.h5, which is shard 5 of 32, after shard 6 of 32: the part files were swapped or renamed"
mv sub/p-00005-of-00032.h5 swap.h5
mv sub/p-00006-of-00032.h5 sub/p-00005-of-00032.h5
mv swap.h5 sub/p-00006-of-00032.h5

check "empty parts (5 samples in 8 parts) are listed without a mapping and read fine"
head -5 all.txt > five.txt
mkdir -p e
(cd e && DATACONV="$DATACONV" "$PYTHON" "$build" parts ../five.txt "$LD_TEST_DATA" q 8 --resize 16 >/dev/null)
"$PYTHON" "$build" merge e.h5 e/q-000*-of-00008.h5
run "$DATACONV" info e.h5
expect_rc 0
expect_out "^merged: 8 parts (5 with samples)"
expect_out "^  1: e/q-00000-of-00008.h5: no samples$"
expect_out "^  2: e/q-00001-of-00008.h5: samples 0..0 (1)$"
if grep -q "PROBLEMS" "$TMP/out"; then cat "$TMP/out"; fail "empty parts flagged"; fi
run "$DATACONV" bench e.h5 -v --batch 2
expect_rc 0
expect_err ": 5 samples (hdf5 raw uint8 virtual, 5 parts, direct pread)"
echo "ok"
