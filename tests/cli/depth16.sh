#!/usr/bin/env bash
# Full bit depth (issue 29 item 2): --depth 16 keeps 16-bit PNG, TIFF and PNM samples as uint16
# in raw HDF5. The inputs are made by ImageMagick from the fixture photos with real 16-bit
# content (-evaluate in its 16-bit pipeline: ~90 % of the values are not multiples of 257):
# gray, RGB and RGBA PNG, gray and RGB TIFF, PGM and PPM, plus a PGM of maxval 4095, an 8-bit
# PNG and a JPEG (widened). Checked with h5py against Pillow's 16-bit reading (gray: mode I/I;16)
# and OpenCV's IMREAD_UNCHANGED (colour, which Pillow reduces to 8 bits); the resize against
# Pillow's LANCZOS on 32-bit float planes; the reader (uint16, float32 + mean/scale, crop and
# mirror), torch, shards + merge, mean; the default depth 8 says once how many 16-bit inputs it
# reduced; LMDB and re-encoded output are refused with what to do.
source "$(dirname "$0")/lib/common.sh"
command -v convert >/dev/null ||
    fail "ImageMagick's convert is missing: scripts/deps.sh test installs imagemagick"

tree=$TMP/tree
mkdir -p "$tree/a" "$tree/b"
P=$LD_TEST_DATA/photos
im() { convert "$1" -resize 80x60! -evaluate multiply 0.93 "${@:2}"; }
im "$P/p00.jpg" -depth 16 "$tree/a/rgb16.png"
im "$P/p01.jpg" -colorspace Gray -depth 16 "$tree/a/gray16.png"
im "$P/p02.jpg" -alpha set -channel A -evaluate set 60% +channel -depth 16 "$tree/a/rgba16.png"
im "$P/p03.jpg" -depth 16 -compress Zip "$tree/a/rgb16.tif"
im "$P/p04.jpg" -colorspace Gray -depth 16 "$tree/b/gray16.tif"
im "$P/p00.jpg" -depth 16 "$tree/b/rgb16.ppm"
im "$P/p01.jpg" -colorspace Gray -depth 16 "$tree/b/gray16.pgm"
im "$P/p02.jpg" -depth 8 "$tree/b/rgb8.png"
im "$P/p03.jpg" -quality 95 "$tree/b/photo.jpg"
"$PYTHON" - "$tree/b/max4095.pgm" <<'PY'
import sys, numpy as np
v = (np.arange(60 * 80).reshape(60, 80) * 7919) % 4096
open(sys.argv[1], "wb").write(b"P5\n80 60\n4095\n" + v.astype(">u2").tobytes())
PY
# ref16.py: the reference decode of a file (ref, gray_ref) and libdata's gray weights (luma)
cat > "$TMP/ref16.py" <<'PY'
import cv2, numpy as np
from PIL import Image

def ref(path):
    """HWC uint16 RGB (or HW gray) as the file holds it, on 0..65535: 8-bit files as v * 257,
    a maxval 4095 PGM scaled to 65535 (rounded)."""
    if path.endswith("max4095.pgm"):
        raw = np.frombuffer(open(path, "rb").read()[-60 * 80 * 2:], ">u2").reshape(60, 80)
        return ((raw.astype(np.uint64) * 65535 + 2047) // 4095).astype(np.uint16)
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a.ndim == 2:  # gray: Pillow's 16-bit reading, which must agree with OpenCV's
        if a.dtype == np.uint16:
            assert np.array_equal(np.asarray(Image.open(path)).astype(np.int64), a), path
        return (a.astype(np.uint16) * (257 if a.dtype == np.uint8 else 1)).astype(np.uint16)
    a = a[:, :, 2::-1]  # BGR(A) -> RGB, alpha dropped
    return a.astype(np.uint16) * 257 if a.dtype == np.uint8 else a

def luma(rgb):  # libdata's gray: 19595 R + 38470 G + 7471 B, rounded
    r, g, b = (rgb[..., k].astype(np.uint64) for k in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint16)

def gray_ref(path):
    """Gray output: 16-bit files' luma on 16 bits; 8-bit files are decoded to 8-bit gray (a
    JPEG: libjpeg's Y, as OpenCV's IMREAD_GRAYSCALE; others: the luma of 8-bit RGB), then
    widened."""
    r = ref(path)
    if r.ndim == 2:
        return r
    if path.endswith(".jpg"):
        return cv2.imread(path, cv2.IMREAD_GRAYSCALE).astype(np.uint16) * 257
    if cv2.imread(path, cv2.IMREAD_UNCHANGED).dtype == np.uint8:
        return luma(r // 257) * 257
    return luma(r)
PY
# same.py H5 [gray]: every file's pixels in H5 /data (uint16) equal ref16's exactly
cat > "$TMP/same.py" <<'PY'
import os, sys
import h5py, numpy as np
from ref16 import ref, gray_ref
out, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "rgb"
with h5py.File(out, "r") as f:
    d = f["data"]
    assert d.dtype == np.uint16, d.dtype
    names = [n.decode() for n in f["filename"][:]]
    for i, n in enumerate(names):
        path = os.path.join(os.environ["TREE"], n)
        if mode == "gray":
            want, got = gray_ref(path), d[i, 0]
        else:
            r = ref(path)
            want, got = (np.stack([r] * 3, -1) if r.ndim == 2 else r), d[i].transpose(1, 2, 0)
        if not np.array_equal(got, want):
            diff = np.abs(got.astype(int) - want.astype(int))
            raise SystemExit(f"{out}: {n}: {int((diff > 0).sum())} samples differ, max {diff.max()}")
    print(f"  {len(names)} images equal the reference 16-bit decode ({mode})")
PY
export TREE=$tree PYTHONPATH=$TMP

check "--depth 16: every sample kept (16-bit PNG, TIFF, PNM as stored; 8-bit widened v*257)"
run "$DATACONV" "$tree" "$TMP/d16.h5" --depth 16 --rgb
expect_rc 0
expect_err "converted 10 of 10"
"$PYTHON" "$TMP/same.py" "$TMP/d16.h5"
run "$DATACONV" "$tree" "$TMP/g16.h5" --depth 16 --gray
expect_rc 0
"$PYTHON" "$TMP/same.py" "$TMP/g16.h5" gray
run "$DATACONV" info "$TMP/d16.h5"
expect_out "raw 16-bit pixels"
expect_out "reader: HDF5, 10 samples, raw uint16, 3 x 60 x 80"

check "--depth 16 --resize: the same Lanczos as 8 bits, on 16-bit samples"
run "$DATACONV" "$tree" "$TMP/r16.h5" --depth 16 --rgb --resize 40x30
expect_rc 0
run "$DATACONV" "$tree" "$TMP/r8.h5" --rgb --resize 40x30
expect_rc 0
"$PYTHON" - "$TMP/r16.h5" "$TMP/r8.h5" <<'PY'
import os, sys
import h5py, numpy as np
from PIL import Image
from ref16 import ref
f16, f8 = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
worst, worst8 = 99.0, 0.0
for i, n in enumerate(x.decode() for x in f16["filename"][:]):
    r = ref(os.path.join(os.environ["TREE"], n)).astype(np.float32)
    r = np.stack([r] * 3, -1) if r.ndim == 2 else r
    # Pillow's LANCZOS (the same antialiased Lanczos-3) on each plane as 32-bit float
    want = np.stack([np.asarray(Image.fromarray(r[:, :, k], "F").resize((40, 30), Image.LANCZOS))
                     for k in range(3)])
    got = f16["data"][i].astype(np.float64)
    rmse = float(np.sqrt(((got - np.clip(want, 0, 65535)) ** 2).mean()))
    worst = min(worst, 20 * np.log10(65535 / max(rmse, 1e-9)))
    worst8 = max(worst8, float(np.abs(got / 257 - f8["data"][i]).max()))
print(f"  PSNR vs Pillow's float LANCZOS >= {worst:.1f} dB (16-bit peak); "
      f"max |16-bit / 257 - 8-bit| = {worst8:.2f}")
assert worst >= 50, worst     # the same filter (8 bits: >= 28 dB, tests/python/check_convert.py)
assert worst8 <= 1.6, worst8  # the 8-bit path rounds its intermediate to 8 bits
PY

check "the default depth 8 reduces 16-bit inputs and says how many, once"
run "$DATACONV" "$tree" "$TMP/d8.h5" --rgb
expect_rc 0
expect_err "8 images had 16-bit samples, stored as 8 bits (--depth 16 keeps them)"
"$PYTHON" - "$TMP/d8.h5" "$TMP/d16.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r")["data"][:], h5py.File(sys.argv[2], "r")["data"][:]
assert a.dtype == np.uint8
assert np.abs(a.astype(int) - (b >> 8)).max() <= 1  # the high byte (PNM, maxval 4095: scaled)
PY

check "a 16-bit dataset as input: --depth 16 keeps every value; depth 8 takes the high byte"
run "$DATACONV" "$TMP/d16.h5" "$TMP/again16.h5" --depth 16 --rgb
expect_rc 0
run "$DATACONV" "$TMP/d16.h5" "$TMP/again8.h5" --rgb
expect_rc 0
expect_err "10 images had 16-bit samples, stored as 8 bits"
"$PYTHON" - "$TMP/d16.h5" "$TMP/again16.h5" "$TMP/again8.h5" "$TMP/d8.h5" <<'PY'
import sys, h5py, numpy as np
d16, a16, a8, d8 = (h5py.File(p, "r") for p in sys.argv[1:])
assert a16["data"].dtype == np.uint16 and np.array_equal(a16["data"][:], d16["data"][:])
assert a8["data"].dtype == np.uint8 and np.array_equal(a8["data"][:], d16["data"][:] >> 8)
assert np.abs(a8["data"][:].astype(int) - d8["data"][:]).max() <= 1  # (maxval 4095: rounding)
print("  d16.h5 -> HDF5: uint16 equal; 8-bit: the high byte")
PY

check "refused: LMDB and re-encoded output hold 8-bit samples"
run "$DATACONV" "$tree" "$TMP/x.lmdb" --depth 16
expect_rc 1
expect_err "depth 16 keeps 16-bit samples in raw HDF5 only"
run "$DATACONV" "$tree" "$TMP/x.h5" --depth 16 --quality 90
expect_rc 1
expect_err "depth 16 keeps 16-bit samples in raw HDF5 only"
run "$DATACONV" "$tree" "$TMP/x.h5" --depth 12
expect_rc 1
expect_err "depth 12: stored samples have 8 or 16 bits"

check "shards and merge keep uint16; mean reads it"
for k in 0 1; do
    run "$DATACONV" "$tree" "$TMP/sh.h5" --depth 16 --rgb --shard $k/2
    expect_rc 0
done
run "$DATACONV" merge "$TMP/merged.h5" "$TMP"/sh-0000?-of-00002.h5
expect_rc 0
"$PYTHON" - "$TMP/merged.h5" "$TMP/d16.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert a["data"].is_virtual and a["data"].dtype == np.uint16
assert np.array_equal(a["data"][:], b["data"][:])
PY
run "$DATACONV" mean "$TMP/d16.h5" "$TMP/mean.binaryproto"
expect_rc 0
"$PYTHON" - "$TMP/d16.h5" "$TMP/mean.binaryproto" <<'PY'
import os, sys, h5py, numpy as np
sys.path.insert(0, os.environ["SRC"] + "/tests/python")
from lmdb_caffe_pb import BlobProto  # python3-protobuf, not libdata
m = BlobProto()
m.ParseFromString(open(sys.argv[2], "rb").read())
want = h5py.File(sys.argv[1], "r")["data"][:].astype(np.float64).mean(0).ravel()
assert np.allclose(np.array(m.data), want, rtol=1e-5), np.abs(np.array(m.data) - want).max()
print(f"  mean of {len(m.data)} values equals NumPy's (max {max(m.data):.1f})")
PY

check "the reader: uint16 and float32 batches, crop + mirror, 16-bit values refused in uint8; torch"
libpy - "$TMP/d16.h5" "$TMP/merged.h5" <<'PY'
import sys, h5py, numpy as np
import libdata
d = h5py.File(sys.argv[1], "r")["data"][:]
for path in sys.argv[1:]:
    st = libdata.stat(path)
    assert st.dtype == np.uint16, st.dtype
    with libdata.Reader(path, batch_size=4, dtype="uint16") as r:
        got = np.concatenate([x for x, _ in r])
    assert got.dtype == np.uint16 and np.array_equal(got, d), path
    with libdata.Reader(path, batch_size=3, dtype="float32", mean=[1000.0], scale=0.5,
                        crop=(64, 48), random_crop=True, mirror=True, shuffle=True,
                        seed=4) as r:
        for x, _ in r:
            for j, i in enumerate(r.indices):
                want = (d[i].astype(np.float32) - 1000.0) * 0.5
                hits = [(y0, x0, f) for f in (0, 1) for y0 in range(13) for x0 in range(17)
                        if np.array_equal((want[..., ::-1] if f else want)
                                          [:, y0:y0 + 48, x0:x0 + 64], x[j])]
                assert len(hits) >= 1, (path, i)
try:
    with libdata.Reader(sys.argv[1], batch_size=2) as r:
        next(iter(r))
    raise SystemExit("a 16-bit value in uint8 output was not refused")
except libdata.LibdataError as e:
    assert "which uint8 output cannot hold" in str(e) and "or uint16" in str(e), e
print("  uint16 batches equal h5py; float32 + mean/scale + crop/mirror equal NumPy's")
try:
    import torch
except ImportError:
    print("  skip torch: not installed"); sys.exit(0)
from libdata.torch import Dataset
from torch.utils.data import DataLoader
for x, _ in DataLoader(Dataset(sys.argv[1], batch_size=5, dtype="uint16"), batch_size=None):
    assert x.dtype == torch.int32 and np.array_equal(x.numpy(), d[:5].astype(np.int32))
    break
print("  torch: int32 tensors equal the uint16 samples")
PY
echo "depth16: all checks passed"
