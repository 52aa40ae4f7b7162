"""Reference images for the resize tests (tests/unit/test_resize.c, bench/resize_quality.py).

Writes OUTDIR/resize/:
  index.txt                 one line per source image: "<name> <w> <h> <c>"
  <name>.src.px             the decoded source pixels (decoded here with PIL, so the C test does
                            not depend on our codec module)
  <name>.<mode>.pil.px      Pillow LANCZOS result (the reference)
  <name>.<mode>.cv.px       OpenCV INTER_LINEAR result (what Caffe's convert_imageset uses)
  <name>.<mode>.area.px     OpenCV INTER_AREA result
with <mode> = squash (224x224) or crop (cover 224x224, center crop).

A .px file is a 16-byte header "LDPX" + little-endian uint32 width, height, channels, then the
HWC uint8 pixels.

Same geometry for every method: CROP takes the fractional source rectangle that libdata's
planner computes (geometry.c); Pillow gets it as `box=`, OpenCV gets the identical mapping
through warpAffine (cv2.resize cannot take a fractional crop; with INTER_LINEAR both use the
same pixel-center convention, so this is cv2.resize's result on that rectangle). INTER_AREA
has no warp form: it resizes to the rounded cover size and crops at the rounded offset.
"""
import os
import struct

import numpy as np
from PIL import Image

SKIMAGE = "/usr/lib/python3/dist-packages/skimage/data"
EXTRA_COLOR = ["astronaut.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
               "rocket.jpg", "hubble_deep_field.jpg", "ihc.png", "retina.jpg"]
EXTRA_GRAY = ["camera.png", "moon.png", "text.png", "page.png"]
SIZE = 224


def write_px(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    h, w = arr.shape[:2]
    c = 1 if arr.ndim == 2 else arr.shape[2]
    with open(path, "wb") as f:
        f.write(b"LDPX" + struct.pack("<III", w, h, c))
        f.write(arr.tobytes())


def crop_box(sw, sh, w=SIZE, h=SIZE):
    """libdata's CROP plan: (x0, y0, x1, y1) in source pixels (geometry.c)."""
    if w * sh >= h * sw:
        ch = h * sw / w
        return 0.0, (sh - ch) / 2.0, float(sw), (sh - ch) / 2.0 + ch
    cw = w * sh / h
    return (sw - cw) / 2.0, 0.0, (sw - cw) / 2.0 + cw, float(sh)


def cv_linear_box(cv2, arr, box, w=SIZE, h=SIZE):
    """cv2.resize(INTER_LINEAR) applied to a fractional source rectangle, via warpAffine."""
    x0, y0, x1, y1 = box
    sx, sy = (x1 - x0) / w, (y1 - y0) / h
    # dst pixel center (u + 0.5) maps to source x0 + (u + 0.5) * sx, i.e. pixel index - 0.5
    m = np.array([[sx, 0, x0 + 0.5 * sx - 0.5], [0, sy, y0 + 0.5 * sy - 0.5]], np.float64)
    return cv2.warpAffine(arr, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def cv_area_crop(cv2, arr, w=SIZE, h=SIZE):
    sh, sw = arr.shape[:2]
    s = max(w / sw, h / sh)
    cw, ch = max(w, round(sw * s)), max(h, round(sh * s))
    big = cv2.resize(arr, (cw, ch), interpolation=cv2.INTER_AREA)
    x, y = (cw - w) // 2, (ch - h) // 2
    return big[y:y + h, x:x + w]


def sources(photos):
    for p in photos:
        yield os.path.splitext(os.path.basename(p))[0], Image.open(p).convert("RGB")
    for name in EXTRA_COLOR:
        path = os.path.join(SKIMAGE, name)
        if os.path.exists(path):
            yield "sk_" + os.path.splitext(name)[0], Image.open(path).convert("RGB")
    for name in EXTRA_GRAY:
        path = os.path.join(SKIMAGE, name)
        if os.path.exists(path):
            yield "skg_" + os.path.splitext(name)[0], Image.open(path).convert("L")


def make(outdir, photos):
    import cv2

    d = os.path.join(outdir, "resize")
    os.makedirs(d, exist_ok=True)
    lines = []
    for name, im in sources(photos):
        arr = np.asarray(im)
        c = 1 if arr.ndim == 2 else arr.shape[2]
        write_px(os.path.join(d, f"{name}.src.px"), arr)
        lines.append(f"{name} {im.width} {im.height} {c}")
        full = (0.0, 0.0, float(im.width), float(im.height))
        box = crop_box(im.width, im.height)
        for mode, b in (("squash", full), ("crop", box)):
            pil = np.asarray(im.resize((SIZE, SIZE), Image.LANCZOS, box=b))
            write_px(os.path.join(d, f"{name}.{mode}.pil.px"), pil)
            if mode == "squash":
                cv = cv2.resize(arr, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
                area = cv2.resize(arr, (SIZE, SIZE), interpolation=cv2.INTER_AREA)
            else:
                cv = cv_linear_box(cv2, arr, b)
                area = cv_area_crop(cv2, arr)
            write_px(os.path.join(d, f"{name}.{mode}.cv.px"), cv)
            write_px(os.path.join(d, f"{name}.{mode}.area.px"), area)
    with open(os.path.join(d, "index.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
