#!/usr/bin/env bash
# Detection boxes (issue 28): the reader moves each sample's boxes with its image under crop +
# mirror and random resized crop (checked against NumPy on the stored boxes, the crop found from
# the pixels, the RRC box from Reader.crop_box), for another tool's file (h5py) as libdata's
# layout is (/boxes (M, 4), /box_label, /box_flags, /box_offsets (N + 1)); torch gets
# torchvision's detection targets (tests/cli/lib/boxes_check.py).
source "$(dirname "$0")/lib/common.sh"
chk=$SRC/tests/cli/lib/boxes_check.py
python_loads_libdata || { echo "skip: python cannot load this libdata build"; exit 0; }
py() { (cd "$TMP" && PYTHONPATH="$SRC/bindings/python" "$PYTHON" "$chk" "$@"); }

check "an h5py detection file: the reader's boxes under crop + mirror and random resized crop"
py h5 "$TMP/det.h5"
py reader "$TMP/det.h5"
run "$DATACONV" info "$TMP/det.h5"
expect_rc 0
expect_out "labels int32, boxes"

check "a damaged /box_offsets is refused at open, naming it"
"$PYTHON" - "$TMP/det.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    off = f["box_offsets"][:]
    off[3] = off[-1] + 5
    f["box_offsets"][...] = off
PY
run "$DATACONV" bench "$TMP/det.h5"
expect_rc 1
expect_err "box_offsets entry 3"
echo "boxes: all checks passed"
