#!/usr/bin/env bash
# The saved record index (libdata/src/store/lmdb/lmdb_index.h): our LMDB writer leaves
# libdata.idx beside data.mdb (conversions, shard parts, merge, label and mask databases), and the
# reader's open reads it instead of walking the tree, only when it was made for the snapshot it
# opens. Checked without libdata (python-lmdb and zlib read the file: every record's offset and
# size against the value python-lmdb gives for the i-th key, the header against mdb_env_info /
# mdb_stat, the CRC), then through libdata: `info` says which index was used, and the records
# read with the saved index equal those read by the walk (the whole dataset converted to HDF5
# and compared with h5py; shuffled bench checksums). A database written by another program
# after the conversion (python-lmdb put), and a damaged, truncated, foreign or other-version
# index, are walked: exit 0, the same records, `info` saying why.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP" || exit 1

# idx_check DB: the index of DB describes DB exactly (prints its record count)
idx_check() {
    "$PYTHON" - "$1" <<'PY'
import os, struct, sys, zlib
import lmdb
d = sys.argv[1]
b = open(f"{d}/libdata.idx", "rb").read()
assert b[:8] == b"LDLMDBIX", b[:8]
(ver, hs, n, txn, last_pg, fsize, psize, maxlen, flags, depth, branch, leaf, over,
 zero) = struct.unpack("<IIQQQQIIIIQQQQ", b[8:96])
assert (ver, hs, zero) == (1, 96, 0), (ver, hs, zero)
assert len(b) == 100 + 12 * n, (len(b), n)
assert zlib.crc32(b[:-4]) == struct.unpack("<I", b[-4:])[0], "CRC"
env = lmdb.open(d, readonly=True, lock=False)
info, st = env.info(), env.stat()
assert n == st["entries"] and n > 0, (n, st)
assert txn == info["last_txnid"] and last_pg == info["last_pgno"], (txn, last_pg, info)
assert (psize, depth, branch, leaf, over) == (st["psize"], st["depth"], st["branch_pages"],
                                              st["leaf_pages"], st["overflow_pages"]), st
assert fsize == os.path.getsize(f"{d}/data.mdb")
off = struct.unpack(f"<{n}Q", b[96:96 + 8 * n])
ln = struct.unpack(f"<{n}I", b[96 + 8 * n:96 + 12 * n])
data = open(f"{d}/data.mdb", "rb").read()
with env.begin() as t:
    for i, (k, v) in enumerate(t.cursor()):
        assert data[off[i]:off[i] + ln[i]] == v, f"record {i} ({k!r}): not where the index says"
        assert k.startswith(b"%08d_" % i)
assert i == n - 1 and maxlen == max(ln) and flags == 1, (i, n, maxlen, flags)
print(n)
PY
}
# how DB: the index line of `dataconv info DB`
how() { "$DATACONV" info "$1" | sed -n 's/^index: //p'; }
# to_h5 DB OUT: every record of DB, in order, read by libdata into OUT (an HDF5 file)
to_h5() { "$DATACONV" "$1" "$2" -q || fail "dataconv $1 $2"; }
# same_h5 A B: the same datasets, byte for byte (h5py)
same_h5() {
    "$PYTHON" - "$1" "$2" <<'PY' || fail "$1 and $2 differ"
import sys
import h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for k in a:
    if isinstance(a[k], h5py.Dataset):
        assert np.array_equal(a[k][()], b[k][()]), k
PY
}
# sums DB: the checksums of a sequential and a shuffled epoch of `dataconv bench`
sums() {
    for o in "" --shuffle; do
        "$DATACONV" bench "$1" --batch 7 $o --seed 3 | grep -o 'checksum [0-9]*' ||
            fail "bench $1 $o"
    done
}

photo_folder "$TMP/in" abc 2 # 3 classes x 2 copies of the fixture photos
"$DATACONV" "$TMP/in" a.lmdb --resize 32 -q || fail "conversion failed"

check "the writer saves the index: every record where python-lmdb finds it, header and CRC"
n=$(idx_check a.lmdb) || fail "a.lmdb/libdata.idx does not describe a.lmdb"
echo "  $n records"
[ "$(how a.lmdb)" = "lmdb, saved record index (pread)" ] || fail "info says: $(how a.lmdb)"

check "the records read with the saved index equal those read by the walk"
cp -r a.lmdb walk.lmdb
rm walk.lmdb/libdata.idx
[ "$(how walk.lmdb)" = "lmdb, record index (pread)" ] ||
    fail "no index, info says: $(how walk.lmdb)"
to_h5 a.lmdb idx.h5
to_h5 walk.lmdb walk.h5
same_h5 idx.h5 walk.h5
ref_sums=$(sums walk.lmdb)
[ "$(sums a.lmdb)" = "$ref_sums" ] || fail "bench checksums differ: $(sums a.lmdb) vs $ref_sums"

# damaged DB WHY: DB's index is not used, info says WHY, the records are the walk's
damaged() {
    local h
    h=$(how "$1")
    echo "  $h"
    [[ "$h" == "lmdb, record index (pread; libdata.idx not used: "*"$2"* ]] ||
        fail "$1: info says: $h"
    to_h5 "$1" "$1.h5"
    same_h5 "$1.h5" walk.h5
    [ "$(sums "$1")" = "$ref_sums" ] || fail "$1: bench checksums differ"
}
# edit_idx DB PYTHON: rewrite DB's index with the python statements PYTHON applied to b (a
# bytearray of the file); the CRC is then made valid again unless PYTHON sets crc = False
edit_idx() {
    "$PYTHON" - "$1/libdata.idx" "$2" <<'PY'
import struct, sys, zlib
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
crc = True
exec(sys.argv[2])
if crc:
    b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[:-4])))
open(p, "wb").write(b)
PY
}
variant() { rm -rf "$1"; cp -r a.lmdb "$1"; }

check "a truncated, a flipped, a foreign or a newer index: walked, same records, info says why"
variant trunc.lmdb
truncate -s -5 trunc.lmdb/libdata.idx
damaged trunc.lmdb "bytes, $((100 + 12 * n)) expected"
variant empty.lmdb
: > empty.lmdb/libdata.idx
damaged empty.lmdb "cannot read its header"
variant flip.lmdb
edit_idx flip.lmdb "b[96 + 8 * 3] ^= 0x10; crc = False"
damaged flip.lmdb "CRC"
variant version.lmdb
edit_idx version.lmdb "b[8:12] = struct.pack('<I', 2)"
damaged version.lmdb "version 2, this build reads version 1"
variant magic.lmdb
head -c $((100 + 12 * n)) /dev/urandom > magic.lmdb/libdata.idx
damaged magic.lmdb "magic"
variant outside.lmdb # a valid CRC, a record past the end of data.mdb
edit_idx outside.lmdb "b[96 + 8 * 5:96 + 8 * 6] = struct.pack('<Q', 1 << 40)"
damaged outside.lmdb "record 5 lies outside data.mdb"
variant swapped.lmdb # a valid CRC, records 0 and 1 swapped: the tree says otherwise
edit_idx swapped.lmdb "o = 96; b[o:o + 16] = b[o + 8:o + 16] + b[o:o + 8]
l = 96 + 8 * $n; b[l:l + 8] = b[l + 4:l + 8] + b[l:l + 4]"
damaged swapped.lmdb "do not lie where the database's tree has them"
variant other.lmdb # another database's index
"$DATACONV" "$TMP/in" other_src.lmdb --resize 20 -q || fail "conversion failed"
cp other_src.lmdb/libdata.idx other.lmdb/
damaged other.lmdb "made for"

check "written by python-lmdb after the conversion: walked, the new record read"
variant put.lmdb
"$PYTHON" - put.lmdb <<'PY'
import sys
import lmdb
env = lmdb.open(sys.argv[1], map_size=1 << 26)
with env.begin(write=True) as t:
    k0, v0 = next(iter(t.cursor()))
    # record 0's pixels with label 7 (a later label field wins, proto2), as a last record,
    # and record 1 replaced the same way with label 9: the same count, a new transaction
    t.put(b"99999999_new", v0 + b"\x28\x07")
    t.put(next(k for i, (k, _) in enumerate(t.cursor()) if i == 1), v0 + b"\x28\x09")
PY
h=$(how put.lmdb)
echo "  $h"
[[ "$h" == *"made for $n records, the database holds $((n + 1))"* ]] ||
    fail "put.lmdb: info says: $h"
to_h5 put.lmdb put.h5
"$PYTHON" - put.h5 walk.h5 <<'PY' || fail "put.lmdb was not read as python-lmdb left it"
import sys
import h5py, numpy as np
p, w = (h5py.File(x, "r") for x in sys.argv[1:3])
n = len(w["label"])
assert len(p["label"]) == n + 1, (len(p["label"]), n)
assert np.array_equal(p["data"][:1], w["data"][:1])
assert np.array_equal(p["data"][2:n], w["data"][2:])
assert np.array_equal(p["data"][1], w["data"][0]) and np.array_equal(p["data"][n], w["data"][0])
assert p["label"][1] == 9 and p["label"][n] == 7, (p["label"][1], p["label"][n])
PY
variant replace.lmdb # the same count, a later transaction
"$PYTHON" - replace.lmdb <<'PY'
import sys
import lmdb
env = lmdb.open(sys.argv[1], map_size=1 << 26)
with env.begin(write=True) as t:
    k0, v0 = next(iter(t.cursor()))
    t.put(k0, v0 + b"\x28\x05")
PY
h=$(how replace.lmdb)
echo "  $h"
[[ "$h" == *"made for transaction"*"written since"* ]] || fail "replace.lmdb: info says: $h"
to_h5 replace.lmdb replace.h5
"$PYTHON" -c "
import sys, h5py, numpy as np
p, w = h5py.File('replace.h5', 'r'), h5py.File('walk.h5', 'r')
assert np.array_equal(p['data'][()], w['data'][()])
assert p['label'][0] == 5 and np.array_equal(p['label'][1:], w['label'][1:])
" || fail "replace.lmdb was not read as python-lmdb left it"

check "shard parts and their merge have a valid index, and read as one conversion"
for k in 0 1 2; do
    "$DATACONV" "$TMP/in" s.lmdb --resize 32 -q --shard $k/3 || fail "shard $k/3"
done
for p in s-0000[0-2]-of-00003.lmdb; do
    echo "  $p: $(idx_check "$p") records, $(how "$p")"
    [ "$(how "$p")" = "lmdb, saved record index (pread)" ] || fail "$p: $(how "$p")"
done
"$DATACONV" merge s.lmdb -q || fail "merge failed"
[ "$(idx_check s.lmdb)" = "$n" ] || fail "s.lmdb: the merged index"
[ "$(how s.lmdb)" = "lmdb, saved record index (pread)" ] || fail "s.lmdb: $(how s.lmdb)"
to_h5 s.lmdb merged.h5
rm s.lmdb/libdata.idx
to_h5 s.lmdb merged_walk.h5
same_h5 merged.h5 merged_walk.h5

check "a conversion over an existing database replaces its index too; no temporaries left"
"$DATACONV" "$TMP/in" a.lmdb --resize 24 -q || fail "second conversion failed"
idx_check a.lmdb > /dev/null || fail "a.lmdb: the index after replacing"
ls -d a.lmdb.* 2> /dev/null && fail "temporaries left beside a.lmdb"

check "label vectors: the label database has its index"
find in -name '*.jpg' | sort | head -12 |
    awk '{ print substr($0, 4), NR % 3, (NR * 7) % 5 }' > v.txt
"$DATACONV" --list v.txt --root in lv.lmdb --resize 16 -q || fail "label vector conversion"
for p in lv.lmdb lv-labels.lmdb; do
    [ "$(idx_check "$p")" = 12 ] || fail "$p: no valid index"
done
[ "$(how lv-labels.lmdb)" = "lmdb, saved record index (pread)" ] || fail "$(how lv-labels.lmdb)"

check "segmentation masks: the mask database has its index"
"$PYTHON" "$SRC/tests/cli/lib/masks_check.py" make "$TMP/m" "$LD_TEST_DATA/photos" > /dev/null ||
    fail "mask fixtures"
"$DATACONV" --list m/list.txt --root m/img --masks m/masks seg.lmdb --resize 24 -q ||
    fail "mask conversion"
m=$(idx_check seg-masks.lmdb) || fail "seg-masks.lmdb: no valid index"
[ "$(idx_check seg.lmdb)" = "$m" ] || fail "seg.lmdb: no valid index"
[ "$(how seg-masks.lmdb)" = "lmdb, saved record index (pread)" ] || fail "$(how seg-masks.lmdb)"
echo "lmdb_saved_index: all checks passed"
