"""Deterministic small JPEGs in class folders, for bench/scale.sh: image i of N goes to class
i % CLASSES (folder cNNNN), named img_NNNNNNN.jpg; 64..96 px per side (from i), a gradient
of two colours plus noise, JPEG quality 85: 2-5 KB each. The same N and CLASSES always make
the same bytes. Images already present (by name) are kept, so a larger N extends a smaller
tree: the 10k tree is the first 10k images of the 100k one.

Usage: /usr/bin/python3 bench/scale_gen.py OUT_DIR N [CLASSES] [PROCS]"""
import io
import os
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image

TILE = 256  # noise pool: one 256x256x3 tile, images take windows of it at offsets from i
_noise = None


def _pool():
    global _noise
    if _noise is None:
        rng = np.random.default_rng(20261205)
        _noise = rng.integers(-40, 41, (TILE, TILE, 3), dtype=np.int16)
    return _noise


def image_bytes(i):
    """JPEG bytes of image i (a pure function of i)."""
    h = 64 + (i * 7) % 33
    w = 64 + (i * 13) % 33
    c0 = np.array([(i * 37) % 256, (i * 91) % 256, (i * 53) % 256], dtype=np.int16)
    c1 = np.array([(i * 17) % 256, (i * 29) % 256, (i * 71) % 256], dtype=np.int16)
    gy = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
    gx = np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :, None]
    t = (gy + gx) * 0.5 if i % 2 else gy * (1 - gx) + gx * 0.5
    img = c0 + (c1 - c0) * t
    oy, ox = (i * 31) % (TILE - h), (i * 57) % (TILE - w)
    img = img + _pool()[oy : oy + h, ox : ox + w]
    out = io.BytesIO()
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def make_range(args):
    root, classes, lo, hi = args
    made = 0
    for i in range(lo, hi):
        p = f"{root}/c{i % classes:04d}/img_{i:07d}.jpg"
        if os.path.exists(p):
            continue
        with open(p, "wb") as f:
            f.write(image_bytes(i))
        made += 1
    return made


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    classes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    procs = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    for c in range(classes):
        os.makedirs(f"{root}/c{c:04d}", exist_ok=True)
    step = 5000
    jobs = [(root, classes, lo, min(lo + step, n)) for lo in range(0, n, step)]
    with Pool(procs) as p:
        made = sum(p.imap_unordered(make_range, jobs))
    print(f"scale_gen: {n} images in {classes} classes under {root} ({made} new)")


if __name__ == "__main__":
    main()
