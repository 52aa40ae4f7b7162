#!/usr/bin/env bash
# Input formats (issue 29 item 1): BMP, TIFF (multi-page: the first page, said once), WebP,
# GIF (the first frame), PNM and JPEGs named .jpe/.jfif, made by ImageMagick from the fixture
# photos (tests/data/make_formats.py, once into $LD_TEST_DATA/formats), in gray, colour, alpha
# and palette variants. Every file converts; the pixels in our HDF5 (read with h5py) equal
# Pillow's decode of the same file, or OpenCV's for the 16-bit ones (max difference <= 0.5);
# gray output is libjpeg's luma of those; --encoded stores only JPEG/PNG; folder mode counts
# and (-v) names what it does not list; list mode reads a BMP and a TIFF.
source "$(dirname "$0")/lib/common.sh"
command -v convert >/dev/null ||
    fail "ImageMagick's convert is missing: scripts/deps.sh test installs imagemagick"

FMT=$LD_TEST_DATA/formats
if [ ! -f "$FMT/MANIFEST" ]; then
    part=$LD_TEST_DATA/formats.tmp-$$
    rm -rf "$part"
    "$PYTHON" "$SRC/tests/data/make_formats.py" "$LD_TEST_DATA/photos" "$part" >/dev/null
    mv -T "$part" "$FMT" 2>/dev/null || rm -rf "$part"
fi
[ -f "$FMT/MANIFEST" ] || fail "no corpus at $FMT"
n=$(wc -l < "$FMT/MANIFEST")
multi=$(awk -F'\t' '$3 > 1' "$FMT/MANIFEST" | wc -l)
tree=$TMP/tree
cp -r "$FMT/tree" "$tree"
echo "not an image" > "$tree/bmp/notes.txt"
cp "$FMT/tree/bmp/rgb24.bmp" "$tree/tiff/.hidden.bmp"

# compare H5 [--gray|--encoded]: every MANIFEST file once in /filename, pixels as the reference
compare() {
    "$PYTHON" - "$FMT" "$1" "${2:-}" <<'PY'
import io, os, sys
import cv2, h5py, numpy as np
from PIL import Image
fmt, out, mode = sys.argv[1:4]
man = [l.split("\t") for l in open(os.path.join(fmt, "MANIFEST")).read().splitlines()]
def ref(path, how):
    if how == "cv2":
        a = cv2.imread(path, cv2.IMREAD_COLOR)
        assert a is not None, path
        return a[:, :, ::-1].astype(np.int32)
    im = Image.open(path)
    im.seek(0)
    return np.asarray(im.convert("RGB")).astype(np.int32)
with h5py.File(out, "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
    assert sorted(names) == sorted(m[0] for m in man), sorted(set(names) ^ {m[0] for m in man})
    order = f.attrs["channel_order"]
    order = order.decode() if isinstance(order, bytes) else order
    worst = {}
    for i, nm in enumerate(names):
        rel, how, frames, note = next(m for m in man if m[0] == nm)
        r = ref(os.path.join(fmt, "tree", rel), how)
        if mode == "--encoded":
            o, s = f["offsets"][i], f["offsets"][i + 1]
            blob = bytes(f["encoded"][o:s])
            im = Image.open(io.BytesIO(blob))
            ext = os.path.splitext(rel)[1].lower()
            want = "JPEG" if ext in (".jpe", ".jfif") else "PNG"
            assert im.format == want, (rel, im.format, "stored encodings are JPEG/PNG only")
            ours = np.asarray(im.convert("RGB")).astype(np.int32)
        else:
            ours = f["data"][i].transpose(1, 2, 0).astype(np.int32)
            if mode == "--gray":
                if rel.startswith("jpeg/"):
                    continue  # libjpeg's gray comes from Y, not from RGB
                r = (19595 * r[:, :, 0] + 38470 * r[:, :, 1] + 7471 * r[:, :, 2] + 32768) >> 16
                r = r[:, :, None]
            elif order == "BGR":
                ours = ours[:, :, ::-1]
        assert ours.shape == r.shape, (rel, ours.shape, r.shape)
        d = float(np.abs(ours - r).max())
        worst[rel] = d
        assert d <= 0.5, "%s (%s): max difference %.1f from %s's decode" % (rel, note, d, how)
print("%s%d files, each within 0.5 of Pillow/OpenCV (largest difference %.1f)" % (
    mode + ": " if mode else "", len(worst), max(worst.values())))
PY
}

check "folder -> raw HDF5 (BGR): all $n files converted, unlisted files counted, frames said once"
run "$DATACONV" "$tree" "$TMP/raw.h5" -j 2
expect_rc 0
expect_err "converted $n of $n images"
expect_err "not listed 2: 1 not named like an image, 1 hidden (-v names them)"
expect_err "frames    $multi multi-page or animated files: the first page or frame of each"
said=$(grep -c "pages or frames: only the first is converted" "$TMP/err" || true)
[ "$said" = 1 ] || { show; fail "multi-frame note said $said times, not once"; }
if grep -q "skipped" "$TMP/err"; then show; fail "a valid file was skipped"; fi
compare "$TMP/raw.h5"

check "-v names each file not listed, with its reason"
run "$DATACONV" "$tree" "$TMP/v.h5" -j 2 -v
expect_rc 0
expect_err "not converted: $tree/bmp/notes.txt: not named like an image"
expect_err "not converted: $tree/tiff/.hidden.bmp: hidden"
expect_err "(named above)"

if ! asan_build && python_loads_libdata; then
    check "Python: ConvertSummary counts the unlisted and multi-frame files; has_feature"
    # (from $TMP: the build folder holds libdata.so, which python would try as a module)
    (cd "$TMP" && PYTHONPATH=$SRC/bindings/python "$PYTHON" - "$tree" "$TMP/py.h5" "$n" "$multi") <<'PY'
import sys
import libdata
tree, out, n, multi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = libdata.convert(tree, out)
got = (s.converted, s.unlisted, s.unlisted_name, s.unlisted_hidden, s.unlisted_special,
       s.unlisted_loose, s.first_frame_only)
assert got == (n, 2, 1, 1, 0, 0, multi), got
assert all(libdata.has_feature(f) for f in ("tiff", "webp", "gif"))
print("python: %r" % (got,))
PY
else
    echo "(Python check skipped: an ASan build, or a 32-bit libdata that $PYTHON cannot load)"
fi

check "--rgb and --gray: the same pixels; gray is libjpeg's luma of the reference's RGB"
run "$DATACONV" "$FMT/tree" "$TMP/rgb.h5" --rgb -j 2
expect_rc 0
compare "$TMP/rgb.h5"
run "$DATACONV" "$FMT/tree" "$TMP/gray.h5" --gray -j 2
expect_rc 0
compare "$TMP/gray.h5" --gray

check "--encoded: JPEGs keep their bytes, every other format is stored as PNG, pixels unchanged"
run "$DATACONV" "$FMT/tree" "$TMP/enc.h5" --encoded -j 2
expect_rc 0
compare "$TMP/enc.h5" --encoded

check "list mode: a BMP, a TIFF page, a WebP, a GIF and a PPM are images, not 'unknown signature'"
printf 'bmp/rgb24.bmp 0\ntiff/pages3.tif 1\nwebp/lossy.webp 2\ngif/anim.gif 3\npnm/rgb.ppm 4\n' \
    > "$TMP/list.txt"
run "$DATACONV" --list "$TMP/list.txt" --root "$FMT/tree" "$TMP/list.h5" --resize 32
expect_rc 0
expect_err "converted 5 of 5 images"
if grep -q "unknown signature" "$TMP/err"; then show; fail "list mode did not sniff"; fi

check "--max-pixels below the images' size: every file refused from its header, exit 3"
run "$DATACONV" "$FMT/tree" "$TMP/lim.h5" --max-pixels 1000
expect_rc 3
refused=$(grep -c "96x72 is over the 1000-pixel limit" "$TMP/err" || true)
[ "$refused" = "$n" ] || { show; fail "$refused of $n files refused for their size"; }
echo "input_formats: all checks passed ($n files)"
