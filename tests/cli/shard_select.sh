#!/usr/bin/env bash
# Shards (--shard K/N): part K of N takes the contiguous range [floor(K*L/N), floor((K+1)*L/N))
# of the whole (sorted or shuffled) listing; the parts in order hold exactly a single run's
# samples (checked with h5py / python-lmdb by tests/python/shard_parts_check.py, which also
# checks the shard attributes and the one run_id), for raw, encoded and LMDB output, folder and
# list input, with and without --shuffle, N in {1, 3, 4, 8, 16} (16 > the 12 listed files:
# empty parts). Part names OUT-0000K-of-0000N.h5; --shard with bad K/N, with --split.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree # 9 images in 3 classes (and files that are not images)
list=$LD_TEST_DATA/list.txt
checker=$SRC/tests/python/shard_parts_check.py

parts_of() { # OUT N: the part names, in order
    local stem=${1%.*} ext=${1##*.} k
    for ((k = 0; k < $2; k++)); do printf '%s-%05d-of-%05d.%s\n' "$stem" "$k" "$2" "$ext"; done
}

# The h5py / python-lmdb checks (shard_parts_check.py's, and this script's own) run at the end
# in one python process, in the order of the cases: one python start with h5py took ~0.5 s,
# which was half of this test's time at 11 starts. $TMP/cases: a line per case, NAME KIND
# SINGLE PARTS... separated by tabs.
: > "$TMP/cases"
case_() { # NAME KIND(h5|lmdb) N -- conversion arguments (SRC ... with OUT last-but-options)
    local name=$1 kind=$2 n=$3
    shift 4
    local single=$TMP/$name-single.$kind out=$TMP/$name.$kind
    check "$name: $n parts equal a single run ($*)"
    run "$DATACONV" "$@" "$single" -q
    expect_rc 0
    for ((k = 0; k < n; k++)); do
        run "$DATACONV" "$@" "$out" --shard "$k/$n"
        expect_rc 0
        expect_err "$(parts_of "$out" "$n" | sed -n "$((k + 1))p")"
    done
    mapfile -t parts < <(parts_of "$out" "$n")
    for p in "${parts[@]}"; do [ -e "$p" ] || fail "$name: $p was not written"; done
    [ ! -e "$out" ] || fail "$name: $out written besides the parts"
    { printf '%s\t' "$name" "$kind" "$single" "${parts[@]}" && echo; } >> "$TMP/cases"
}

case_ raw3 h5 3 -- "$tree" --resize 24
case_ raw4-shuffled h5 4 -- "$tree" --resize 24 --shuffle --seed 7
case_ enc8 h5 8 -- "$tree" --resize 24 --quality 80 --shuffle --seed 1
case_ enc16-empty-parts h5 16 -- "$tree" --resize 20 --quality 60
case_ original1 h5 1 -- "$tree" --encoded
case_ list3 h5 3 -- --list "$list" --root "$tree" --resize 24 --shuffle --seed 5
case_ lmdb4 lmdb 4 -- "$tree" --resize 24 --shuffle --seed 2
case_ lmdb3-list lmdb 3 -- --list "$list" --root "$tree" --resize 16

check "different settings give a different run_id; the same command the same (checked below)"
"$DATACONV" "$tree" "$TMP/r.h5" --resize 24 --shard 0/3 -q
"$DATACONV" "$tree" "$TMP/r2.h5" --resize 24 --shard 0/3 -q
"$DATACONV" "$tree" "$TMP/r3.h5" --resize 24 --shard 0/3 --rgb -q
"$DATACONV" "$tree" "$TMP/r4.h5" --resize 24 --shard 0/3 --quality 80 -q
"$DATACONV" "$tree" "$TMP/r5.h5" --resize 24 --shard 0/3 --quality 80 --restart-markers -q

check "h5py / python-lmdb: the parts of each case equal its single run (shard_parts_check.py)"
"$PYTHON" - "$(dirname "$checker")" "$TMP" <<'PY' || fail "see the last 'case:' line above"
import sys
import h5py
sys.path.insert(0, sys.argv[1])
import shard_parts_check as spc
tmp = sys.argv[2]

def case(what):
    print("case:", what, flush=True)

for line in open(f"{tmp}/cases"):
    name, kind, single, *parts = line.rstrip("\n").rstrip("\t").split("\t")
    case(f"{name}: {len(parts)} parts equal a single run")
    (spc.h5 if kind == "h5" else spc.lmdb_)(single, parts)

case("part 1 of 4 of the 9 listed files covers [floor(9/4), floor(18/4)) = [2, 4)")
with h5py.File(f"{tmp}/raw4-shuffled-single.h5") as s, \
        h5py.File(f"{tmp}/raw4-shuffled-00001-of-00004.h5") as p:
    first, n = int(p.attrs["shard_first"]), int(p.attrs["shard_listed"])
    assert int(p.attrs["listing_total"]) == 9, p.attrs["listing_total"]
    assert (first, n) == (2, 2), (first, n)

case("an empty part (16 parts of 9 listed files) is written with 0 samples")
with h5py.File(f"{tmp}/enc16-empty-parts-00000-of-00016.h5") as f:
    assert int(f.attrs["shard_listed"]) == 0 and f["label"].shape == (0,), f["label"].shape
    assert f["offsets"][:].tolist() == [0]

case("different settings give a different run_id; the same command the same")
ids = [h5py.File(f"{tmp}/{p}-00000-of-00003.h5")["/"].attrs["run_id"]
       for p in ("r", "r2", "r3", "raw3", "r4", "r5")]
ids = [i.decode() if isinstance(i, bytes) else i for i in ids]
assert ids[0] == ids[1] == ids[3], ids   # same settings, same input (output name aside)
assert ids[2] != ids[0], ids             # --rgb changes the samples
assert ids[5] != ids[4], ids             # --restart-markers changes the stored bytes
PY

check "part names: .hdf5 and an LMDB directory without .lmdb keep their form"
run "$DATACONV" "$tree" "$TMP/x.HDF5" --resize 16 --shard 1/2
expect_rc 0
[ -f "$TMP/x-00001-of-00002.HDF5" ] || fail "x-00001-of-00002.HDF5 missing"
run "$DATACONV" "$tree" "$TMP/plain" --resize 16 --format lmdb --shard 0/2
expect_rc 0
[ -f "$TMP/plain-00000-of-00002/data.mdb" ] || fail "plain-00000-of-00002/data.mdb missing"

check "bad K/N are usage errors that say what is expected"
for bad in 3/3:"is not in 0..2" 0/0:"must be 1..99999" 1/100000:"must be 1..99999" \
    x/2:"expected K/N" 1:"expected K/N" -1/2:"expected K/N" /4:"expected K/N" 2/:"expected K/N" \
    auto/0:"auto/N with N = 1..99999"; do
    run "$DATACONV" "$tree" "$TMP/bad.h5" --resize 16 --shard "${bad%%:*}"
    expect_rc 2
    expect_err "${bad#*:}"
done
check "library bounds: shard_index >= shard_count is refused by the library too"
run "$DATACONV" "$tree" "$TMP/bad.h5" --resize 16 --shard-count 2 --shard-index 5
expect_rc 1
expect_err "shard_index 5 is not below shard_count 2"
run "$DATACONV" "$tree" "$TMP/bad.h5" --resize 16 --shard-index 1
expect_rc 1
expect_err "shard_index 1 without shard_count"
check "--shard with --split is refused"
run "$DATACONV" "$tree" "$TMP/bad.h5" --resize 16 --shard 0/2 --split 1M
expect_rc 1
expect_err "split_bytes cannot be combined with shards"
[ -z "$(compgen -G "$TMP/bad*")" ] || fail "something was written for a refused run"
echo "shard_select: all checks passed"
