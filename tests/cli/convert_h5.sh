#!/usr/bin/env bash
# Folder mode to HDF5, read back with h5py (independent of our code): sample count, labels in
# sorted class order, class names, shape, BGR channel order; --quality 70 --resize 224 stores
# JPEGs that Pillow decodes at 224x224; the summary on a non-TTY, and --quiet.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree

check "raw: dataconv tree out.h5 --resize 64 -> exit 0 and a summary"
run "$DATACONV" "$tree" "$TMP/raw.h5" --resize 64
expect_rc 0
expect_err "converted 9 of 9 images to $TMP/raw.h5"
expect_err "bytes"
expect_err "images/s"
check "no progress bar on a non-TTY (no carriage return in stderr)"
if grep -q $'\r' "$TMP/err"; then show; fail "progress bar drawn on a non-TTY"; fi

check "h5py: 9 samples (9,3,64,64) uint8, labels 0,0,1,1,1,2,2,2,2, classes bird,car,cat, BGR"
"$PYTHON" - "$TMP/raw.h5" "$tree" <<'PY'
import sys, h5py, numpy as np
from PIL import Image
path, tree = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    d, lab = f["data"], f["label"][:]
    assert d.shape == (9, 3, 64, 64), d.shape
    assert d.dtype == np.uint8, d.dtype
    assert list(lab) == [0, 0, 1, 1, 1, 2, 2, 2, 2], list(lab)
    a = f.attrs
    names = [n.decode() if isinstance(n, bytes) else n for n in a["class_names"]]
    assert names == ["bird", "car", "cat"], names
    order = a["channel_order"]
    order = order.decode() if isinstance(order, bytes) else order
    assert order == "BGR", order
    files = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
    assert files[0].endswith("h.jpg") and files[-1].endswith("d.png"), files
    # channel order: plane 0 is blue. Compare channel means with Pillow's resize of the source.
    for i in (0, 4, 8):
        src = Image.open(f"{tree}/{files[i]}" if not files[i].startswith("/") else files[i])
        ref = np.asarray(src.convert("RGB").resize((64, 64), Image.BILINEAR)).astype(float)
        got = d[i].astype(float)
        for c_out, c_ref in ((0, 2), (1, 1), (2, 0)):
            diff = abs(got[c_out].mean() - ref[..., c_ref].mean())
            assert diff < 4, (files[i], c_out, got[c_out].mean(), ref[..., c_ref].mean())
print("h5py raw ok")
PY

check "--quality 70 --resize 224: encoded JPEGs, each decodes to 224x224"
run "$DATACONV" "$tree" "$TMP/q70.h5" --quality 70 --resize 224 -j 2
expect_rc 0
expect_err "converted 9 of 9"
"$PYTHON" - "$TMP/q70.h5" <<'PY'
import io, sys, h5py, numpy as np
from PIL import Image
with h5py.File(sys.argv[1], "r") as f:
    st = f.attrs["storage"]
    st = st.decode() if isinstance(st, bytes) else st
    assert st == "encoded", st
    enc, off, lab = f["encoded"][:], f["offsets"][:], f["label"][:]
    assert len(off) == 10 and off[0] == 0 and off[-1] == len(enc), (len(off), off[-1], len(enc))
    assert list(lab) == [0, 0, 1, 1, 1, 2, 2, 2, 2], list(lab)
    assert int(f.attrs["quality"]) == 70
    for i in range(9):
        im = Image.open(io.BytesIO(enc[off[i]:off[i + 1]].tobytes()))
        assert im.format == "JPEG" and im.size == (224, 224), (i, im.format, im.size)
        im.load()
print("h5py encoded ok")
PY
rawsize=$(stat -c %s "$TMP/raw.h5")
check "the q70 file is smaller than raw 224x224 would be (9*3*224*224 = 1354752 bytes)"
[ "$(stat -c %s "$TMP/q70.h5")" -lt 1354752 ] || fail "q70 file is not compressed"

check "--quiet: nothing on stderr, exit 0, file written"
run "$DATACONV" "$tree" "$TMP/quiet.h5" --resize 32 --quiet
expect_rc 0
[ ! -s "$TMP/err" ] || { show; fail "--quiet printed something"; }
[ -s "$TMP/quiet.h5" ] || fail "--quiet run wrote no file"

check "--gray --rgb --mode crop --resize 48x32: shape (9,1,32,48)"
run "$DATACONV" "$tree" "$TMP/gray.h5" --gray --mode crop --resize 48x32
expect_rc 0
"$PYTHON" -c "
import h5py, sys
with h5py.File('$TMP/gray.h5', 'r') as f:
    assert f['data'].shape == (9, 1, 32, 48), f['data'].shape
"
check "raw storage of differently sized images without --resize: exit 1 and advice"
run "$DATACONV" "$tree" "$TMP/mixed.h5"
expect_rc 1
expect_err "resize"
[ ! -e "$TMP/mixed.h5" ] || fail "failed run left $TMP/mixed.h5"
echo "convert_h5: all checks passed (raw.h5 $rawsize bytes)"
