#!/usr/bin/python3
"""Make the demo dataset in samples/: procedurally drawn pictures, ours to commit.

Usage: /usr/bin/python3 samples/make_samples.py [OUTDIR]     (default: the samples/ folder)

Four classes that a small CNN tells apart easily, drawn with random colours, sizes,
positions, rotations, backgrounds and (in the JPEGs) noise:

    circle/    a filled disc (sometimes an ellipse)
    square/    a filled square, rotated
    stripes/   parallel bands at a random angle
    triangle/  a filled triangle

40 images per class, a mix of JPEG (baseline and progressive, a few grayscale) and PNG (RGB,
grayscale, palette), in odd sizes and aspect ratios (97x203, 640x120, 256x256, ...), so the
demo exercises what real folders contain. Also writes Caffe-style list files (paths relative
to images/, label = class index in sorted name order): train.txt (4 of 5 images) and
val.txt (every 5th); and shapes.csv, a regression sample: each circle, square and triangle's
centre (x, y) and radius as fractions of the picture (label vectors of 3 values); and a
segmentation sample: masks/<class>/<name>.png, a palette PNG per picture whose indices are 0
(background) and the shape's class + 1 (1 circle, 2 square, 3 stripes, 4 triangle), drawn with
the same geometry as the picture, and seg.txt listing every picture (paths only: the masks
are the label); and shapes_coco.json, a detection sample in COCO's instances format: each
circle, square and triangle's bounding box (from its mask), category ids 1, 2, 4 as in the
masks.

Deterministic: a fixed seed, so running it again gives the same pictures (byte-identical
files for a given Pillow version).
"""
import json
import math
import os
import sys

import numpy as np
from PIL import Image, ImageDraw

CLASSES = ["circle", "square", "stripes", "triangle"]  # label = index (sorted order)
PER_CLASS = 40
SIZES = [(256, 256), (97, 203), (640, 120), (200, 150), (150, 200), (320, 240), (128, 128),
         (64, 64), (300, 180), (180, 300), (224, 224), (401, 299)]
SEED = 20261202


def random_color(rng, avoid=None):
    """An RGB colour, at least some distance from `avoid` so the shape stays visible."""
    while True:
        c = tuple(int(v) for v in rng.integers(0, 256, 3))
        if avoid is None or sum(abs(a - b) for a, b in zip(c, avoid)) > 200:
            return c


def background(rng, w, h):
    """Solid colour or a linear gradient between two colours."""
    c0 = np.array(random_color(rng), dtype=np.float32)
    if rng.random() < 0.5:
        img = np.broadcast_to(c0, (h, w, 3)).copy()
    else:
        c1 = np.array(random_color(rng), dtype=np.float32)
        a = rng.uniform(0, 2 * math.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = (xx * math.cos(a) + yy * math.sin(a))
        t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
        img = c0 * (1 - t[..., None]) + c1 * t[..., None]
    return Image.fromarray(img.astype(np.uint8), "RGB"), tuple(int(v) for v in c0)


def rotated(points, cx, cy, angle):
    ca, sa = math.cos(angle), math.sin(angle)
    return [(cx + x * ca - y * sa, cy + x * sa + y * ca) for x, y in points]


# VOC's colour map for the first indices (index 0 black), for viewing the masks
MASK_PALETTE = [0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0, 0, 0, 128] + [0] * (251 * 3)


class Both:
    """Draws every shape on the picture and, in its class index, on the mask (no random draw
    of its own: the pictures stay what they were before the masks existed)."""

    def __init__(self, im, mask, index):
        self.d, self.m, self.index = ImageDraw.Draw(im), ImageDraw.Draw(mask), index

    def ellipse(self, box, fill):
        self.d.ellipse(box, fill=fill)
        self.m.ellipse(box, fill=self.index)

    def polygon(self, pts, fill):
        self.d.polygon(pts, fill=fill)
        self.m.polygon(pts, fill=self.index)


def draw_shape(rng, cls, im, bg, mask):
    """Draw the class's shape (on the mask too); return its centre and radius as fractions of
    the picture's width, height and shorter side (None for stripes, which have no centre)."""
    w, h = im.size
    d = Both(im, mask, CLASSES.index(cls) + 1)
    fg = random_color(rng, bg)
    side = min(w, h)
    r = rng.uniform(0.2, 0.42) * side  # "radius" of the shape
    cx = rng.uniform(r, w - r)
    cy = rng.uniform(r, h - r)
    ang = rng.uniform(0, 2 * math.pi)
    if cls == "circle":
        ry = r * rng.uniform(0.8, 1.0)
        d.ellipse([cx - r, cy - ry, cx + r, cy + ry], fill=fg)
    elif cls == "square":
        s = r / math.sqrt(2) * 1.2
        d.polygon(rotated([(-s, -s), (s, -s), (s, s), (-s, s)], cx, cy, ang), fill=fg)
    elif cls == "triangle":
        pts = [(r * math.cos(a), r * math.sin(a)) for a in (0, 2 * math.pi / 3, 4 * math.pi / 3)]
        d.polygon(rotated(pts, cx, cy, ang), fill=fg)
    else:  # stripes over the whole picture
        period = rng.uniform(0.08, 0.25) * side
        diag = math.hypot(w, h)
        k = -diag
        while k < diag:
            band = [(k, -diag), (k + period / 2, -diag), (k + period / 2, diag), (k, diag)]
            d.polygon(rotated(band, w / 2, h / 2, ang), fill=fg)
            k += period
        return None
    return (cx / w, cy / h, r / side)


def add_noise(rng, im):
    sigma = rng.uniform(2, 12)
    a = np.asarray(im).astype(np.float32)
    a += rng.normal(0, sigma, a.shape).astype(np.float32)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), im.mode)


def save(rng, im, base, i):
    """Pick a container and pixel format; return the file name written."""
    kind = i % 8
    if kind in (0, 3):
        name, im2, kw = base + ".png", im, {"optimize": True}
    elif kind == 5:
        name, im2, kw = base + ".png", im.convert("L"), {"optimize": True}
    elif kind == 6:
        name, im2, kw = base + ".png", im.convert("P", palette=Image.ADAPTIVE, colors=32), {}
    elif kind == 7:
        name, im2, kw = base + ".jpg", im, {"quality": 85, "progressive": True}
    elif kind == 4:
        name, im2, kw = base + ".jpg", im.convert("L"), {"quality": 85}
    else:
        name, im2, kw = base + ".jpg", im, {"quality": int(rng.integers(75, 95))}
    return name, im2, kw


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else here
    rng = np.random.default_rng(SEED)
    lines = []  # (relative path, label)
    coco = {"images": [], "annotations": [],
            "categories": [{"id": CLASSES.index(c) + 1, "name": c}
                           for c in CLASSES if c != "stripes"]}
    shapes = []  # (relative path, (centre x, centre y, radius)) of the shapes with a centre
    for label, cls in enumerate(CLASSES):
        d = os.path.join(outdir, "images", cls)
        os.makedirs(d, exist_ok=True)
        for i in range(PER_CLASS):
            w, h = SIZES[(i + label * 5) % len(SIZES)]
            im, bg = background(rng, w, h)
            mask = Image.new("P", (w, h), 0)
            mask.putpalette(MASK_PALETTE)
            geometry = draw_shape(rng, cls, im, bg, mask)
            os.makedirs(os.path.join(outdir, "masks", cls), exist_ok=True)
            mask.save(os.path.join(outdir, "masks", cls, f"{cls}_{i:03d}.png"), optimize=True)
            name, im2, kw = save(rng, im, f"{cls}_{i:03d}", i)
            if name.endswith(".jpg"):
                # noise only in the JPEGs: it is what photos have, and noisy PNGs are big
                im2 = add_noise(rng, im2)
            im2.save(os.path.join(d, name), **kw)
            lines.append((f"{cls}/{name}", label))
            image_id = len(lines)
            coco["images"].append({"id": image_id, "file_name": f"{cls}/{name}", "width": w,
                                   "height": h})
            if geometry:  # the shape's bounding box, from its mask: x, y, width, height
                ys, xs = np.nonzero(np.asarray(mask))
                x0, y0 = int(xs.min()), int(ys.min())
                coco["annotations"].append(
                    {"id": len(coco["annotations"]) + 1, "image_id": image_id,
                     "category_id": label + 1, "iscrowd": 0,
                     "bbox": [x0, y0, int(xs.max()) + 1 - x0, int(ys.max()) + 1 - y0],
                     "area": int(len(xs))})
            if geometry:
                shapes.append((f"{cls}/{name}", geometry))
    train = [l for k, l in enumerate(lines) if k % 5 != 4]
    val = [l for k, l in enumerate(lines) if k % 5 == 4]
    for fname, part in (("train.txt", train), ("val.txt", val)):
        with open(os.path.join(outdir, fname), "w") as f:
            f.writelines(f"{p} {lab}\n" for p, lab in part)
    # a regression sample: where the shape is and how large (label vectors, K = 3)
    with open(os.path.join(outdir, "shapes.csv"), "w") as f:
        f.write("path,center_x,center_y,radius\n")
        f.writelines(f"{p},{x:.4f},{y:.4f},{r:.4f}\n" for p, (x, y, r) in shapes)
    with open(os.path.join(outdir, "shapes_coco.json"), "w") as f:
        json.dump(coco, f, indent=None, separators=(",", ":"))
        f.write("\n")
    # a segmentation sample: every picture, no labels (its mask is its label)
    with open(os.path.join(outdir, "seg.txt"), "w") as f:
        f.writelines(f"{p}\n" for p, _ in lines)
    print(f"{len(lines)} images in {os.path.join(outdir, 'images')}, their masks in "
          f"{os.path.join(outdir, 'masks')}; train.txt {len(train)}, val.txt {len(val)}, "
          f"shapes.csv {len(shapes)}, seg.txt {len(lines)}")


if __name__ == "__main__":
    main()
