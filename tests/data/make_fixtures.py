#!/usr/bin/python3
"""Build the test fixtures from photographs that Debian packages ship.

Usage: make_fixtures.py OUTDIR

The photographs come from python3-skimage's data folder (installed by the test set-up);
nothing third-party is committed. Each tests/data/fixtures_*.py module contributes a
make(outdir, photos) function; this script makes the shared photo set first, then calls
them in name order. Output is deterministic (fixed seeds, fixed JPEG settings).

Layout of OUTDIR:
  photos/        24 real-photo JPEGs, 500x375 (and a few other sizes), q90, named pNN.jpg
  tree/          a class tree: tree/<class>/... with nested folders, mixed-case extensions,
                 JPEG and PNG, hidden files that must be ignored
  list.txt       "relative/path label" lines for tree/ (Caffe convert_imageset format)
"""
import glob
import importlib.util
import os
import sys

import numpy as np
from PIL import Image

SKIMAGE = "/usr/lib/python3/dist-packages/skimage/data"
COLOR = ["astronaut.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
         "motorcycle_right.png", "rocket.jpg", "hubble_deep_field.jpg", "ihc.png", "retina.jpg"]


def source_photos():
    out = []
    for name in COLOR:
        path = os.path.join(SKIMAGE, name)
        if not os.path.exists(path):
            sys.exit(f"missing {path}: install python3-skimage (apt-get install python3-skimage)")
        out.append(Image.open(path).convert("RGB"))
    return out


def crop_variant(im, w, h, rng):
    """A w x h view of a photo: scale so it covers w x h, crop at a random spot, maybe mirror."""
    s = max(w / im.width, h / im.height) * rng.uniform(1.0, 1.6)
    big = im.resize((max(w, round(im.width * s)), max(h, round(im.height * s))), Image.LANCZOS)
    x = rng.integers(0, big.width - w + 1)
    y = rng.integers(0, big.height - h + 1)
    out = big.crop((x, y, x + w, y + h))
    if rng.integers(2):
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    return out


def make_photos(outdir, n=24):
    rng = np.random.default_rng(1234)
    src = source_photos()
    d = os.path.join(outdir, "photos")
    os.makedirs(d, exist_ok=True)
    paths = []
    for i in range(n):
        w, h = (500, 375) if i % 6 else (375, 500)  # some portrait
        im = crop_variant(src[i % len(src)], w, h, rng)
        p = os.path.join(d, f"p{i:02d}.jpg")
        im.save(p, quality=90)
        paths.append(p)
    return paths


def make_tree(outdir, photos):
    """tree/{bird,car,cat}/..., nested folders, mixed-case extensions, PNGs, hidden files."""
    t = os.path.join(outdir, "tree")
    layout = {
        "cat": ["a.jpg", "b.JPG", "sub/c.jpeg", "sub/deeper/d.png"],
        "car": ["e.Jpeg", "f.PNG", "g.jpg"],
        "bird": ["h.jpg", "i.png"],
    }
    k = 0
    lines = []
    classes = sorted(layout)
    for label, cls in enumerate(classes):
        for rel in layout[cls]:
            p = os.path.join(t, cls, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            im = Image.open(photos[k % len(photos)])
            if rel.lower().endswith(".png"):
                im.save(p, format="PNG")
            else:
                im.save(p, format="JPEG", quality=90)
            lines.append(f"{cls}/{rel} {label}")
            k += 1
    # Ignored: hidden files and folders, non-image extensions.
    os.makedirs(os.path.join(t, "cat", ".hidden"), exist_ok=True)
    Image.open(photos[0]).save(os.path.join(t, "cat", ".hidden", "x.jpg"))
    Image.open(photos[0]).save(os.path.join(t, "cat", ".dot.jpg"))
    with open(os.path.join(t, "car", "notes.txt"), "w") as f:
        f.write("not an image\n")
    with open(os.path.join(outdir, "list.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    photos = make_photos(outdir)
    make_tree(outdir, photos)
    here = os.path.dirname(os.path.abspath(__file__))
    for mod_path in sorted(glob.glob(os.path.join(here, "fixtures_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(mod_path)[:-3], mod_path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.make(outdir, photos)
    print(f"fixtures ready in {outdir}")


if __name__ == "__main__":
    main()
