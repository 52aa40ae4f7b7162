#!/usr/bin/env bash
# dataconv mean INPUT OUT.binaryproto: Caffe's BlobProto mean (checked with numpy and a
# hand-written proto2 decoder) and the per-channel means on stdout, for HDF5 and LMDB.
source "$(dirname "$0")/lib/common.sh"

run "$DATACONV" "$SRC/samples/images" "$TMP/s.h5" --resize 32 -q
expect_rc 0
run "$DATACONV" "$SRC/samples/images" "$TMP/s.lmdb" --resize 32 -q
expect_rc 0

for input in s.h5 s.lmdb; do
    check "mean of $input: binaryproto 1x3x32x32 equal to numpy's mean, mean_value on stdout"
    run "$DATACONV" mean "$TMP/$input" "$TMP/$input.binaryproto"
    expect_rc 0
    expect_out "^mean_value: [0-9.]* [0-9.]* [0-9.]*$"
    expect_err "wrote the per-pixel mean"
    "$PYTHON" - "$TMP/s.h5" "$TMP/$input.binaryproto" "$TMP/out" <<'PY'
import struct, sys, h5py, numpy as np
h5, proto, out = sys.argv[1:]
ref = h5py.File(h5, "r")["data"][:].astype(np.float64).mean(axis=0)

def varint(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7F) << s; s += 7
        if x < 0x80:
            return v, i

b, i, f, data = open(proto, "rb").read(), 0, {}, []
while i < len(b):
    key, i = varint(b, i)
    field, wt = key >> 3, key & 7
    if wt == 0:
        f[field], i = varint(b, i)
    elif wt == 2:
        n, i = varint(b, i)
        if field == 5:
            data += struct.unpack(f"<{n // 4}f", b[i:i + n])
        i += n
    elif wt == 5:
        if field == 5:
            data.append(struct.unpack("<f", b[i:i + 4])[0])
        i += 4
    else:
        raise ValueError(f"wire type {wt}")
assert (f.get(1), f.get(2), f.get(3), f.get(4)) == (1, 3, 32, 32), f
got = np.array(data).reshape(3, 32, 32)
assert np.allclose(got, ref, atol=1e-3), abs(got - ref).max()
mv = [float(x) for x in open(out).read().split(":")[1].split()]
assert np.allclose(mv, ref.mean(axis=(1, 2)), atol=1e-3), (mv, ref.mean(axis=(1, 2)))
print("mean matches numpy; mean_value", mv)
PY
done

check "mean without OUT prints the channel means only"
run "$DATACONV" mean "$TMP/s.h5"
expect_rc 0
expect_out "^mean_value:"

check "errors: missing INPUT -> 2, nonexistent input -> 1 naming it"
run "$DATACONV" mean
expect_rc 2
expect_err "missing INPUT"
run "$DATACONV" mean "$TMP/nope.h5" "$TMP/m.binaryproto"
expect_rc 1
expect_err "nope.h5"
[ ! -e "$TMP/m.binaryproto" ] || fail "a failed mean wrote its output"
echo "mean: all checks passed"
