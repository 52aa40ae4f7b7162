#!/usr/bin/env bash
# convert_imageset parity: `dataconv ROOT/ LISTFILE DB` writes LMDB by default (as
# convert_imageset does), with its flag spellings; read back with python3-lmdb and a Datum
# decoder that is not ours (protoc --decode_raw field numbers, parsed here by hand).
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
list=$LD_TEST_DATA/list.txt
export PYTHONPATH=$TMP${PYTHONPATH:+:$PYTHONPATH}
# A minimal proto2 wire-format reader: field number -> value (varint or bytes).
cat > "$TMP/datum_raw.py" <<'PY'
def varint(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7F) << s; s += 7
        if x < 0x80:
            return v, i

def datum(b):
    i, out = 0, {}
    while i < len(b):
        key, i = varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            out[field], i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            out[field] = b[i:i + n]; i += n
        elif wt == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
    return out
PY

check "dataconv -resize_width=32 -resize_height=32 -shuffle ROOT/ LIST train_lmdb -> LMDB dir"
run "$DATACONV" -resize_width=32 -resize_height=32 -shuffle "$tree/" "$list" "$TMP/train_lmdb"
expect_rc 0
expect_err "(lmdb)"
[ -f "$TMP/train_lmdb/data.mdb" ] || fail "no LMDB at $TMP/train_lmdb"

check "python3-lmdb: 9 records, keys %08d_path in order, Datum 3x32x32, labels from the list"
"$PYTHON" - "$TMP/train_lmdb" "$list" <<'PY'
import sys, lmdb
db, listfile = sys.argv[1], sys.argv[2]
want = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(listfile).read().splitlines()}

from datum_raw import datum

env = lmdb.open(db, readonly=True, lock=False)
with env.begin() as txn:
    keys = []
    for k, v in txn.cursor():
        k = k.decode()
        keys.append(k)
        idx, path = k.split("_", 1)
        d = datum(v)
        assert (d[1], d[2], d[3]) == (3, 32, 32), (k, d.get(1), d.get(2), d.get(3))
        assert len(d[4]) == 3 * 32 * 32, (k, len(d[4]))
        assert d.get(5, 0) == want[path], (k, d.get(5), want[path])
        assert d.get(7, 1) == 0, f"{k}: encoded must be written explicitly as false"
    assert len(keys) == 9, keys
    assert [int(k.split("_", 1)[0]) for k in keys] == list(range(9)), keys
    assert sorted(k.split("_", 1)[1] for k in keys) == sorted(want), keys
print("lmdb ok:", keys[:3], "...")
PY

check "--shuffle is reproducible: the same key order twice"
run "$DATACONV" -resize_width=32 -resize_height=32 -shuffle "$tree/" "$list" "$TMP/again_lmdb"
expect_rc 0
"$PYTHON" -c "
import lmdb
k = [list(lmdb.open(p, readonly=True, lock=False).begin().cursor().iternext(values=False))
     for p in ('$TMP/train_lmdb', '$TMP/again_lmdb')]
assert k[0] == k[1], k
"
if command -v mdb_stat >/dev/null; then
    check "mdb_stat counts 9 entries"
    mdb_stat "$TMP/train_lmdb" | grep "Entries: 9" >/dev/null ||
        fail "mdb_stat: $(mdb_stat "$TMP/train_lmdb")"
fi

check "-encoded -encode_type=png: encoded records"
run "$DATACONV" -encoded -encode_type=png -resize_width=32 -resize_height=32 "$tree/" "$list" \
    "$TMP/enc_lmdb"
expect_rc 0
"$PYTHON" -c "
import lmdb
from datum_raw import datum
with lmdb.open('$TMP/enc_lmdb', readonly=True, lock=False).begin() as t:
    n = 0
    for k, v in t.cursor():
        d = datum(v)
        assert d.get(7) == 1 and d[4][:8] == b'\x89PNG\r\n\x1a\n', (k, d.get(7), d[4][:8])
        n += 1
    assert n == 9, n
"
check "a name ending in .h5 keeps HDF5 in convert_imageset order"
run "$DATACONV" "$tree/" "$list" "$TMP/x.h5" --resize 32
expect_rc 0
expect_err "(hdf5)"
echo "lmdb_order: all checks passed"
