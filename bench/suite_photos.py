#!/usr/bin/python3
"""The benchmark's input: a folder of real-photo JPEGs (about 500x375, q90) in class folders.

    suite_photos.py OUTDIR N [--classes K]

Built reproducibly from photographs that Debian packages ship, never from noise:
  - python3-skimage's colour sample photos (the test fixtures' source, tests/data/make_fixtures.py),
  - mate-backgrounds' nature photos (/usr/share/backgrounds/mate/nature/*.jpg),
  - plasma-workspace-wallpapers' photographic wallpapers (PLASMA_PHOTOS below; the package's
    illustrations and renders are left out).
Each output is a random crop (scale 1..1.6x of the covering size) of one source, mirrored at
random, every 5th in portrait (375x500), so the decoder sees real photo statistics at the size
of a typical classification dataset. A fixed seed: the same packages and N give the same
files. The wallpapers are shrunk once to 1200 pixels wide first (they are up to 5120 wide;
cropping 500x375 out of them unshrunk would give flat, blurry patches).
"""
import argparse
import glob
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "data"))
import make_fixtures  # noqa: E402

MATE = "/usr/share/backgrounds/mate/nature"
PLASMA = "/usr/share/wallpapers"
PLASMA_PHOTOS = ["BytheWater", "ColdRipple", "ColorfulCups", "DarkestHour", "EveningGlow",
                 "FallenLeaf", "Grey", "Kite", "OneStandsOut", "Path", "summer_1am"]
PACKAGES = ["python3-skimage", "mate-backgrounds", "plasma-workspace-wallpapers"]


def _shrunk(path, width=1200):
    im = Image.open(path)
    im.draft("RGB", (width, width))  # JPEG: decode reduced, much faster for 5K wallpapers
    im = im.convert("RGB")
    if im.width > width:
        im = im.resize((width, round(im.height * width / im.width)), Image.LANCZOS)
    return im


def source_photos():
    """(name, PIL image) of every source photograph, in a fixed order."""
    out = [(f"skimage/{i}", im) for i, im in enumerate(make_fixtures.source_photos())]
    for p in sorted(glob.glob(os.path.join(MATE, "*.jpg"))):
        out.append(("mate/" + os.path.basename(p), _shrunk(p)))
    for name in PLASMA_PHOTOS:
        imgs = glob.glob(os.path.join(PLASMA, name, "contents", "images", "*.jpg"))
        if imgs:  # the largest landscape rendition
            best = max(imgs, key=lambda p: os.path.getsize(p))
            out.append(("plasma/" + name, _shrunk(best)))
    return out


def make(outdir, n, classes=4):
    """Make N photos in OUTDIR/class*/; reuse a complete earlier set. Returns OUTDIR."""
    stamp = os.path.join(outdir, f".complete-{n}-{classes}")
    if os.path.exists(stamp):
        return outdir
    src = source_photos()
    rng = np.random.default_rng(42)
    for i in range(n):
        d = os.path.join(outdir, f"class{i % classes}")
        os.makedirs(d, exist_ok=True)
        w, h = (500, 375) if i % 5 else (375, 500)
        im = make_fixtures.crop_variant(src[i % len(src)][1], w, h, rng)
        im.save(os.path.join(d, f"img{i:06d}.jpg"), quality=90)
    with open(os.path.join(outdir, "sources.txt"), "w") as f:
        f.write("\n".join(name for name, _ in src) + "\n")
    open(stamp, "w").close()
    return outdir


def replicate(src_dir, n_src, outdir, n):
    """A folder of N images made of hard links to the N_SRC photos of SRC_DIR (cycled, new
    names), for memory-vs-size runs larger than the photo set. Returns OUTDIR."""
    stamp = os.path.join(outdir, f".complete-{n}")
    if os.path.exists(stamp):
        return outdir
    files = sorted(glob.glob(os.path.join(src_dir, "class*", "*.jpg")))[:n_src]
    for i in range(n):
        f = files[i % len(files)]
        d = os.path.join(outdir, os.path.basename(os.path.dirname(f)))
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, f"r{i // len(files)}-{os.path.basename(f)}")
        if not os.path.exists(dst):
            os.link(f, dst)
    open(stamp, "w").close()
    return outdir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("n", type=int)
    ap.add_argument("--classes", type=int, default=4)
    a = ap.parse_args()
    make(a.outdir, a.n, a.classes)


if __name__ == "__main__":
    main()
